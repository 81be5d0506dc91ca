// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// An application process for channel_close_test.cc, to be stopped or
// killed while it holds a channel:
//
//   channel_close_helper SOCKET connect PEER SERVICE
//   channel_close_helper SOCKET listen SERVICE
//   channel_close_helper SOCKET serve SERVICE
//   channel_close_helper SOCKET echo SERVICE
//   channel_close_helper SOCKET plan
//
// It connects (retrying while the daemons' session comes up) or accepts one
// channel, prints "HELPER connected ID" / "HELPER listening" and
// "HELPER accepted ID", and then sleeps with the channel open until killed.
// serve accepts every channel (an "accepted ID" line each) and keeps them;
// echo does too and sends every message back, until the channel ends
// ("HELPER ended ID STATUS"); then it lets the channel go. plan asks the
// daemon for a rail plan of one device ("HELPER planned DEVICE") and holds
// it while it lives, another process of the host.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "rdmad/client.h"

namespace {

void Say(const std::string& line) {
  std::printf("HELPER %s\n", line.c_str());
  std::fflush(stdout);
}

int Fail(const rdmad::Status& status) {
  Say("error " + status.ToString());
  return 1;
}

// Sends every message back until the channel ends, then lets it go (its
// QP and memory with it, as an application should).
void Echo(std::unique_ptr<rdmad::Channel> channel) {
  for (;;) {
    auto message = channel->Recv(std::chrono::seconds(1));
    if (message.status().code() == rdmad::StatusCode::kDeadlineExceeded) continue;
    rdmad::Status status = message.status();
    if (status.ok()) status = channel->Send(message->data(), message->size());
    if (!status.ok()) {
      Say("ended " + std::to_string(channel->info().id) + " " + status.ToString());
      return;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 2 ? argv[2] : "";
  bool listens = mode == "listen" || mode == "serve" || mode == "echo";
  if (!((mode == "connect" && argc == 5) || (listens && argc == 4) ||
        (mode == "plan" && argc == 3))) {
    std::fprintf(stderr,
                 "usage: %s SOCKET connect PEER SERVICE | SOCKET listen|serve|echo SERVICE | "
                 "SOCKET plan\n",
                 argv[0]);
    return 2;
  }
  rdmad::ClientOptions options;
  options.socket_path = argv[1];
  auto client = rdmad::Client::Open(options);
  if (!client.ok()) return Fail(client.status());
  if (mode == "plan") {
    auto plan = client.value()->PlanRails(rdmad::RailRequest{});
    if (!plan.ok()) return Fail(plan.status());
    if (plan->rails.empty()) return Fail(rdmad::Status::NotFound("a plan without rails"));
    Say("planned " + plan->rails.front().device);
    for (;;) pause();
  }
  std::unique_ptr<rdmad::Channel> channel;
  std::unique_ptr<rdmad::Listener> listener;
  std::vector<std::unique_ptr<rdmad::Channel>> served;
  if (mode == "connect") {
    rdmad::StatusOr<std::unique_ptr<rdmad::Channel>> made = rdmad::Status::Unavailable("not tried");
    for (int i = 0; i < 100; ++i) {
      made = client.value()->Connect(argv[3], argv[4]);
      if (made.status().code() != rdmad::StatusCode::kUnavailable) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!made.ok()) return Fail(made.status());
    channel = std::move(made).value();
    Say("connected " + std::to_string(channel->info().id));
  } else {
    auto made = client.value()->Listen(argv[3]);
    if (!made.ok()) return Fail(made.status());
    listener = std::move(made).value();
    Say("listening");
    while (mode == "serve" || mode == "echo") {
      auto next = listener->Accept(std::chrono::seconds(1));
      if (next.status().code() == rdmad::StatusCode::kDeadlineExceeded) continue;
      if (!next.ok()) return Fail(next.status());
      Say("accepted " + std::to_string(next.value()->info().id));
      if (mode == "echo") {
        std::thread(Echo, std::move(next).value()).detach();
      } else {
        served.push_back(std::move(next).value());
      }
    }
    auto accepted = listener->Accept(std::chrono::seconds(30));
    if (!accepted.ok()) return Fail(accepted.status());
    channel = std::move(accepted).value();
    Say("accepted " + std::to_string(channel->info().id));
  }
  for (;;) pause();
}

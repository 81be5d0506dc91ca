// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmad_many_channels: N channels between two daemons, all open at once
// (tests/bench/lab_bench.sh, docs/benchmarks.md "Many channels").
//
//   rdmad_many_channels accept  --socket S [--service NAME] --channels N
//   rdmad_many_channels connect PEER --socket S [--service NAME] --channels N
//                               [--threads T] [--batch B] [--hold-s S]
//
// accept listens on NAME through the daemon at S, accepts N channels,
// answers one message on each (as received), then waits for the initiator
// to close them. connect opens one channel (retried while the peer session
// comes up; not timed), then the other N - 1 from T threads at once (timed:
// the connect rate), each thread B at a time (B > 1: Client::ConnectMany,
// else Client::Connect), keeps every one open, sends a message on each and
// receives every answer (timed: the exchange). Both print one JSON line
// when done: what they timed, their RSS, their heap in use (mallinfo2)
// and their pinned memory (VmPin: what the process registered with the
// RDMA device), in KiB, and the transports of the channels. connect keeps
// its channels open S seconds more after printing (for the daemons'
// memory to be read meanwhile). Exit status 1 on the first failure, with
// the reason on stderr.

#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rdmad/client.h"

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
constexpr milliseconds kPatience{120000};

struct Options {
  std::string role, peer, socket, service = "bench.many";
  size_t channels = 0, threads = 16, batch = 1;
  double hold_s = 0;
};

int Fail(const std::string& what, const rdmad::Status& status) {
  std::fprintf(stderr, "rdmad_many_channels: %s: %s\n", what.c_str(), status.ToString().c_str());
  return 1;
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// A field of /proc/self/status in KiB ("VmRSS", "VmPin"); 0 if absent.
long StatusKib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  }
  return 0;
}

// Each channel holds a few descriptors (queue pair, completion channel,
// event fd): lift the soft limit to the hard one.
void RaiseFileLimit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

std::string Transports(const std::vector<std::unique_ptr<rdmad::Channel>>& channels) {
  std::map<std::string, size_t> count;
  for (const auto& c : channels) ++count[rdmad::ChannelTransportName(c->info().transport)];
  std::string out = "{";
  for (const auto& [name, n] : count) {
    if (out.size() > 1) out += ", ";
    out += "\"" + name + "\": " + std::to_string(n);
  }
  return out + "}";
}

void PrintMemory(size_t channels, const std::string& transports) {
  long rss = StatusKib("VmRSS"), pinned = StatusKib("VmPin");
  size_t heap = mallinfo2().uordblks;  // bytes malloc has handed out, all arenas
  std::printf(
      "\"channels\": %zu, \"transports\": %s, \"rss_kib\": %ld, \"pinned_kib\": %ld, "
      "\"pinned_per_channel_kib\": %.1f, \"heap_kib\": %zu}\n",
      channels, transports.c_str(), rss, pinned, double(pinned) / double(channels), heap >> 10);
  std::fflush(stdout);
}

int Accept(rdmad::Client& client, const Options& o) {
  auto listener = client.Listen(o.service);
  if (!listener.ok()) return Fail("listen on " + o.service, listener.status());
  std::fprintf(stderr, "rdmad_many_channels: listening on %s\n", o.service.c_str());
  std::vector<std::unique_ptr<rdmad::Channel>> channels;
  auto t0 = Clock::now();
  while (channels.size() < o.channels) {
    auto c = (*listener)->Accept(kPatience);
    if (!c.ok()) return Fail("accept channel " + std::to_string(channels.size() + 1), c.status());
    channels.push_back(std::move(c).value());
  }
  double accept_s = Seconds(Clock::now() - t0);
  // The initiator sends on every channel before it reads an answer.
  for (size_t i = 0; i < channels.size(); ++i) {
    auto m = channels[i]->Recv(kPatience);
    if (!m.ok()) return Fail("receive on channel " + std::to_string(i + 1), m.status());
    if (auto s = channels[i]->Send(m->data(), m->size()); !s.ok()) {
      return Fail("answer on channel " + std::to_string(i + 1), s);
    }
  }
  std::printf("{\"role\": \"accept\", \"accept_s\": %.3f, ", accept_s);
  PrintMemory(channels.size(), Transports(channels));
  for (size_t i = 0; i < channels.size(); ++i) {
    auto m = channels[i]->Recv(kPatience);  // the initiator's close
    if (m.ok() || m.status().code() != rdmad::StatusCode::kUnavailable) {
      return Fail("channel " + std::to_string(i + 1) + " did not close",
                  m.ok() ? rdmad::Status::Internal("a message") : m.status());
    }
  }
  return 0;
}

int Connect(rdmad::Client& client, const Options& o) {
  std::vector<std::unique_ptr<rdmad::Channel>> channels(o.channels);
  auto deadline = Clock::now() + kPatience;
  for (;;) {  // the first: while the peer session comes up
    auto c = client.Connect(o.peer, o.service);
    if (c.ok()) {
      channels[0] = std::move(c).value();
      break;
    }
    if (c.status().code() != rdmad::StatusCode::kUnavailable &&
        c.status().code() != rdmad::StatusCode::kNotFound) {
      return Fail("connect channel 1", c.status());
    }
    if (Clock::now() > deadline) return Fail("connect channel 1", c.status());
    std::this_thread::sleep_for(milliseconds(100));
  }
  std::atomic<size_t> next{1};
  std::vector<rdmad::Status> failed(o.threads);
  std::vector<std::thread> threads;
  auto t0 = Clock::now();
  for (size_t t = 0; t < o.threads; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i; (i = next.fetch_add(o.batch)) < o.channels;) {
        size_t n = std::min(o.batch, o.channels - i);
        std::vector<std::unique_ptr<rdmad::Channel>> made;
        rdmad::Status status;
        if (o.batch == 1) {
          auto c = client.Connect(o.peer, o.service);
          if (c.ok()) made.push_back(std::move(c).value());
          status = c.status();
        } else {
          auto cs = client.ConnectMany(o.peer, o.service, n);
          if (cs.ok()) made = std::move(cs).value();
          status = cs.status();
        }
        if (!status.ok()) {
          failed[t] = rdmad::Status(status.code(),
                                    "channel " + std::to_string(i + 1) + ": " + status.message());
          return;
        }
        for (size_t j = 0; j < n; ++j) channels[i + j] = std::move(made[j]);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  double connect_s = Seconds(Clock::now() - t0);
  for (const rdmad::Status& s : failed) {
    if (!s.ok()) return Fail("connect", s);
  }
  auto t1 = Clock::now();
  for (size_t i = 0; i < channels.size(); ++i) {
    uint64_t v = i;
    if (auto s = channels[i]->Send(&v, sizeof(v)); !s.ok()) {
      return Fail("send on channel " + std::to_string(i + 1), s);
    }
  }
  for (size_t i = 0; i < channels.size(); ++i) {
    auto m = channels[i]->Recv(kPatience);
    if (!m.ok()) return Fail("answer on channel " + std::to_string(i + 1), m.status());
    uint64_t v = 0;
    if (m->size() == sizeof(v)) std::memcpy(&v, m->data(), sizeof(v));
    if (m->size() != sizeof(v) || v != i) {
      return Fail("answer on channel " + std::to_string(i + 1),
                  rdmad::Status(rdmad::StatusCode::kDataLoss, "not what was sent"));
    }
  }
  double exchange_s = Seconds(Clock::now() - t1);
  size_t timed = o.channels - 1;
  std::printf(
      "{\"role\": \"connect\", \"threads\": %zu, \"batch\": %zu, \"connect_s\": %.3f, "
      "\"per_second\": %.2f, \"exchange_s\": %.3f, ",
      o.threads, o.batch, connect_s, connect_s > 0 ? double(timed) / connect_s : 0.0, exchange_s);
  PrintMemory(channels.size(), Transports(channels));
  std::this_thread::sleep_for(std::chrono::duration<double>(o.hold_s));
  for (auto& c : channels) c->Close();
  return 0;
}

bool ParseArgs(int argc, char** argv, Options* o) {
  if (argc < 2) return false;
  o->role = argv[1];
  int i = 2;
  if (o->role == "connect") {
    if (argc < 3) return false;
    o->peer = argv[i++];
  } else if (o->role != "accept") {
    return false;
  }
  for (; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--socket") {
      o->socket = value;
    } else if (flag == "--service") {
      o->service = value;
    } else if (flag == "--channels") {
      o->channels = std::strtoul(value.c_str(), nullptr, 10);
    } else if (flag == "--threads") {
      o->threads = std::strtoul(value.c_str(), nullptr, 10);
    } else if (flag == "--batch" && o->role == "connect") {
      o->batch = std::strtoul(value.c_str(), nullptr, 10);
    } else if (flag == "--hold-s" && o->role == "connect") {
      o->hold_s = std::strtod(value.c_str(), nullptr);
    } else {
      return false;
    }
  }
  return i == argc && o->channels >= 2 && o->threads >= 1 && o->batch >= 1 && o->hold_s >= 0 &&
         o->hold_s < 3600;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: rdmad_many_channels accept --socket S [--service NAME] --channels N\n"
                 "       rdmad_many_channels connect PEER --socket S [--service NAME] "
                 "--channels N [--threads T] [--batch B] [--hold-s S]\n"
                 "(N >= 2)\n");
    return 64;
  }
  RaiseFileLimit();
  rdmad::ClientOptions options;
  options.socket_path = o.socket;
  auto client = rdmad::Client::Open(options);
  if (!client.ok()) return Fail("open " + o.socket, client.status());
  return o.role == "accept" ? Accept(**client, o) : Connect(**client, o);
}

// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/echo_client.h"

#include <cstdio>
#include <memory>
#include <thread>

namespace rdmactl {
namespace {

using Clock = std::chrono::steady_clock;
using rdmad::Status;
using rdmad::StatusCode;

constexpr std::chrono::milliseconds kRetryPause{100};

rdmad::StatusOr<std::unique_ptr<rdmad::Channel>> ConnectWithRetry(rdmad::Client& client,
                                                                  const std::string& peer,
                                                                  const EchoOpenOptions& options) {
  rdmad::ConnectOptions connect;
  connect.force_tcp = options.force_tcp;
  auto deadline = Clock::now() + options.session_wait;
  for (;;) {
    auto channel = client.Connect(peer, rdmad::echo::kService, connect);
    if (channel.ok() || channel.status().code() != StatusCode::kUnavailable ||
        Clock::now() + kRetryPause > deadline) {
      return channel;
    }
    std::this_thread::sleep_for(kRetryPause);
  }
}

// The first differing byte of two equally long messages.
size_t FirstDifference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  size_t i = 0;
  while (i < a.size() && a[i] == b[i]) ++i;
  return i;
}

Status Mismatch(uint64_t seq, const std::vector<uint8_t>& sent, const std::vector<uint8_t>& got) {
  std::string what = "reply to seq " + std::to_string(seq);
  if (got.size() != sent.size()) {
    return Status(StatusCode::kDataLoss, what + " has " + std::to_string(got.size()) +
                                             " bytes, the request " + std::to_string(sent.size()));
  }
  size_t at = FirstDifference(sent, got);
  char detail[64];
  std::snprintf(detail, sizeof(detail), " (0x%02x, sent 0x%02x)", got[at], sent[at]);
  return Status(StatusCode::kDataLoss,
                what + " differs from the request at byte " + std::to_string(at) + detail);
}

// An intact reply to an earlier request that timed out.
bool IsLate(uint64_t seq, const std::vector<uint8_t>& sent, const std::vector<uint8_t>& got) {
  if (sent.size() < 8 || got.size() != sent.size()) return false;
  uint64_t earlier = rdmad::echo::PayloadSequence(got);
  return earlier < seq && got == rdmad::echo::PatternPayload(earlier, got.size());
}

}  // namespace

rdmad::StatusOr<EchoChannel> OpenEcho(rdmad::Client& client, const std::string& peer,
                                      const rdmad::echo::Header& header,
                                      const EchoOpenOptions& options) {
  auto channel = ConnectWithRetry(client, peer, options);
  if (!channel.ok()) return channel.status();
  auto ack = rdmad::echo::Handshake(**channel, header, options.ack_timeout);
  if (!ack.ok()) {
    (*channel)->Close();
    return ack.status();
  }
  return EchoChannel{std::move(channel).value(), std::move(ack).value()};
}

std::string EchoOpenError(const std::string& peer, const Status& status) {
  const std::string& m = status.message();
  switch (status.code()) {
    case StatusCode::kNotFound:
      if (m.rfind("unknown peer", 0) == 0) return m;
      return "no such service: " + m + " (is echo.enabled false on " + peer + "?)";
    case StatusCode::kPermissionDenied: return peer + "'s echo service refused the channel: " + m;
    case StatusCode::kUnavailable: return peer + " is unavailable: " + m;
    default:
      return "cannot open a channel to " + peer + "'s " + rdmad::echo::kService + ": " +
             status.ToString();
  }
}

rdmad::StatusOr<double> EchoRoundTrip(rdmad::Channel& channel, uint64_t seq, size_t size,
                                      std::chrono::milliseconds timeout) {
  std::vector<uint8_t> request = rdmad::echo::PatternPayload(seq, size);
  auto start = Clock::now();
  auto deadline = start + timeout;
  RDMAD_RETURN_IF_ERROR(channel.Send(request.data(), request.size()));
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() < 0) left = std::chrono::milliseconds(0);
    auto reply = channel.Recv(left);
    auto end = Clock::now();
    if (!reply.ok()) {
      if (reply.status().code() != StatusCode::kDeadlineExceeded) return reply.status();
      return Status::DeadlineExceeded("no reply to seq " + std::to_string(seq) + " within " +
                                      std::to_string(timeout.count()) + " ms");
    }
    if (*reply == request) return std::chrono::duration<double, std::micro>(end - start).count();
    if (!IsLate(seq, request, *reply)) return Mismatch(seq, request, *reply);
  }
}

}  // namespace rdmactl

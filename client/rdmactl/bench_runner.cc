// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/bench_runner.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "client/rdmactl/bench_clock.h"
#include "client/rdmactl/echo_client.h"
#include "common/echo_protocol.h"

namespace rdmactl {
namespace {

using rdmad::Status;
using rdmad::StatusCode;
using rdmad::StatusOr;

constexpr uint64_t kOneSidedWarmup = 4;
constexpr size_t kAckBytes = size_t(1) << 20;
constexpr uint64_t kMaxAckEvery = 256;
constexpr uint64_t kWindowAcks = 8;
// Between sends, the counts are looked for this many times per count (a
// look that finds none is work perftest's sender does not do).
constexpr uint64_t kLooksPerAck = 4;

double Seconds(BenchClock::duration d) { return std::chrono::duration<double>(d).count(); }

Status WrongSize(const char* what, size_t got, size_t want) {
  return Status(StatusCode::kDataLoss, std::string(what) + " of " + std::to_string(got) +
                                           " bytes, expected " + std::to_string(want));
}

// result, with DEADLINE_EXCEEDED restated as naming what was awaited.
template <typename T>
StatusOr<T> Named(StatusOr<T> result, std::chrono::milliseconds timeout, const char* what) {
  if (result.ok() || result.status().code() != StatusCode::kDeadlineExceeded) return result;
  return Status::DeadlineExceeded(std::string("no ") + what + " from the echo service within " +
                                  std::to_string(timeout.count()) + " ms");
}

// A reply, or DEADLINE_EXCEEDED naming what was awaited.
StatusOr<std::vector<uint8_t>> Await(rdmad::Channel& channel, std::chrono::milliseconds timeout,
                                     const char* what) {
  return Named(channel.Recv(timeout), timeout, what);
}

// A reply's size: received into replies (registered), or by Recv (null).
StatusOr<size_t> AwaitReply(rdmad::Channel& channel, const rdmad::MemoryRegion* replies) {
  if (replies != nullptr) {
    return Named(channel.RecvInto(*replies, 0, replies->size(), kReplyTimeout), kReplyTimeout,
                 "reply");
  }
  auto reply = Await(channel, kReplyTimeout, "reply");
  if (!reply.ok()) return reply.status();
  return reply->size();
}

// SINK's counts: reads the ones waiting (or, with block, at least one).
class SinkAcks {
 public:
  explicit SinkAcks(rdmad::Channel& channel) : channel_(channel) {}
  uint64_t acked() const { return acked_; }

  // Returns true when a new count arrived.
  StatusOr<bool> Poll(bool block) {
    auto message = block ? Await(channel_, kReplyTimeout, "count")
                         : channel_.Recv(std::chrono::milliseconds(0));
    if (!message.ok()) {
      if (!block && message.status().code() == StatusCode::kDeadlineExceeded) return false;
      return message.status();
    }
    auto count = rdmad::echo::DecodeCount(message->data(), message->size());
    if (!count.ok()) return Status(StatusCode::kDataLoss, "SINK: " + count.status().message());
    if (*count < acked_) return Status(StatusCode::kDataLoss, "SINK: the count went backwards");
    acked_ = *count;
    return true;
  }

 private:
  rdmad::Channel& channel_;
  uint64_t acked_ = 0;
};

}  // namespace

uint64_t SinkAckEvery(size_t size) {
  uint64_t n = size == 0 ? kMaxAckEvery : (kAckBytes + size - 1) / size;
  return std::clamp<uint64_t>(n, 1, kMaxAckEvery);
}

uint64_t SinkWindow(uint64_t ack_every) { return kWindowAcks * ack_every; }

Status WarmUpLatency(rdmad::Channel& channel, size_t size, uint64_t round_trips) {
  for (uint64_t seq = 1; seq <= round_trips; ++seq) {
    auto rtt = EchoRoundTrip(channel, seq, size, kReplyTimeout);
    if (!rtt.ok()) return rtt.status();
  }
  return Status::Ok();
}

StatusOr<ChannelResult> RunLatency(rdmad::Channel& channel, size_t size, const BenchLimit& limit,
                                   BenchClock::time_point start,
                                   const rdmad::MemoryRegion* replies) {
  std::vector<uint8_t> request = rdmad::echo::PatternPayload(0, size);
  ChannelResult r;
  // One read of the tick clock (bench_clock.h) per round trip, from the
  // end of the one before, as perftest's ib_send_lat stamps its
  // iterations: a second read would be timed.
  const TickClock& clock = TickClock::Calibrated();
  const double before_us =
      std::chrono::duration<double, std::micro>(BenchClock::now() - start).count();
  const uint64_t first = clock.Now();
  uint64_t now = first;
  auto seconds = [&] { return (before_us + clock.Micros(first, now)) / 1e6; };
  while (!limit.Done(r.iters, seconds())) {
    const uint64_t sent = now;
    RDMAD_RETURN_IF_ERROR(channel.Send(request.data(), request.size()));
    auto got = AwaitReply(channel, replies);
    now = clock.Now();
    if (!got.ok()) return got.status();
    if (*got != size) return WrongSize("a reply", *got, size);
    r.latency_us.Add(clock.Micros(sent, now) / 2);
    ++r.iters;
  }
  r.seconds = seconds();
  return r;
}

StatusOr<ChannelResult> RunSink(rdmad::Channel& channel, const rdmad::MemoryRegion& region,
                                size_t size, uint64_t ack_every, const BenchLimit& limit,
                                BenchClock::time_point start) {
  BenchLimit rounded = limit;
  if (rounded.iters > 0) rounded.iters = (limit.iters + ack_every - 1) / ack_every * ack_every;
  const uint64_t window = SinkWindow(ack_every);
  const uint64_t look_every = std::max<uint64_t>(ack_every / kLooksPerAck, 1);
  SinkAcks acks(channel);
  TimelineRecorder timeline;
  uint64_t sent = 0;
  auto since_start = [&] { return Seconds(BenchClock::now() - start); };
  auto record = [&] { timeline.Add(since_start(), acks.acked() * size, acks.acked()); };
  if (rounded.iters > 0) timeline.Reserve(rounded.iters / ack_every + 1);
  // Sends until the limit, then on to a whole number of counts.
  while (!rounded.DoneBy(sent, since_start) || sent % ack_every != 0) {
    while (sent - acks.acked() >= window) {
      RDMAD_RETURN_IF_ERROR(acks.Poll(/*block=*/true).status());
      record();
    }
    RDMAD_RETURN_IF_ERROR(channel.Send(region, 0, size));
    ++sent;
    if (sent % look_every != 0) continue;
    for (;;) {
      auto got = acks.Poll(/*block=*/false);
      if (!got.ok()) return got.status();
      if (!*got) break;
      record();
    }
  }
  while (acks.acked() < sent) {
    RDMAD_RETURN_IF_ERROR(acks.Poll(/*block=*/true).status());
    record();
  }
  if (acks.acked() != sent) {
    return Status(StatusCode::kDataLoss, "SINK counted " + std::to_string(acks.acked()) +
                                             " messages, " + std::to_string(sent) + " were sent");
  }
  ChannelResult r;
  r.timeline = timeline.Finish();
  r.iters = sent;
  r.seconds = r.timeline.empty() ? 0 : r.timeline.back().t;
  return r;
}

Status WarmUpOneSided(rdmad::Channel& channel, bool write, const rdmad::MemoryRegion& local,
                      const rdmad::RegionDescriptor& remote, size_t size) {
  for (uint64_t i = 0; i < kOneSidedWarmup; ++i) {
    RDMAD_RETURN_IF_ERROR(write ? channel.Write(local, 0, remote, 0, size)
                                : channel.Read(local, 0, remote, 0, size));
  }
  return Status::Ok();
}

StatusOr<OneSidedRing> PrepareOneSided(rdmad::Channel& channel, bool write,
                                       const rdmad::MemoryRegion& local,
                                       const rdmad::RegionDescriptor& remote, size_t size,
                                       uint32_t depth) {
  const std::vector<rdmad::TransferOp> op{
      {write ? rdmad::TransferOp::Kind::kWrite : rdmad::TransferOp::Kind::kRead, &local, 0, remote,
       0, size}};
  OneSidedRing ring;
  for (uint32_t i = 0; i < depth; ++i) {
    auto prepared = channel.Prepare(op);
    if (!prepared.ok()) return prepared.status();
    ring.push_back(std::move(prepared).value());
  }
  return ring;
}

StatusOr<ChannelResult> RunOneSidedRing(OneSidedRing& ring, size_t size, const BenchLimit& limit,
                                        BenchClock::time_point start) {
  if (ring.empty()) return Status::InvalidArgument("RunOneSidedRing: an empty ring");
  const size_t depth = ring.size();
  TimelineRecorder timeline;
  ChannelResult r;
  double elapsed = 0;
  auto since_start = [&] { return Seconds(BenchClock::now() - start); };
  uint64_t submitted = 0;
  if (limit.iters > 0) timeline.Reserve(limit.iters + 1);
  auto complete = [&](rdmad::PreparedTransfer& t) -> Status {
    RDMAD_RETURN_IF_ERROR(t.Wait());
    ++r.iters;
    elapsed = since_start();
    timeline.Add(elapsed, r.iters * size, r.iters);
    return Status::Ok();
  };
  while (!limit.DoneBy(submitted, since_start)) {
    rdmad::PreparedTransfer& next = *ring[submitted % depth];
    if (submitted >= depth) RDMAD_RETURN_IF_ERROR(complete(next));
    RDMAD_RETURN_IF_ERROR(next.Post());
    ++submitted;
  }
  for (uint64_t i = submitted > depth ? submitted - depth : 0; i < submitted; ++i) {
    RDMAD_RETURN_IF_ERROR(complete(*ring[i % depth]));
  }
  r.timeline = timeline.Finish();
  r.seconds = elapsed;
  return r;
}

StatusOr<ChannelResult> RunOneSided(rdmad::Channel& channel, bool write,
                                    const rdmad::MemoryRegion& local,
                                    const rdmad::RegionDescriptor& remote, size_t size,
                                    const BenchLimit& limit, BenchClock::time_point start) {
  TimelineRecorder timeline;
  ChannelResult r;
  double elapsed = 0;
  if (limit.iters > 0) timeline.Reserve(limit.iters);
  while (!limit.Done(r.iters, elapsed)) {
    RDMAD_RETURN_IF_ERROR(write ? channel.Write(local, 0, remote, 0, size)
                                : channel.Read(local, 0, remote, 0, size));
    ++r.iters;
    elapsed = Seconds(BenchClock::now() - start);
    timeline.Add(elapsed, r.iters * size, r.iters);
  }
  r.timeline = timeline.Finish();
  r.seconds = elapsed;
  return r;
}

namespace {

// The batch: block i from local slot i to remote slot (i x stride) mod
// 2 x blocks, a stride coprime with the slot count so no two collide.
std::vector<rdmad::TransferOp> KvOps(const rdmad::MemoryRegion& local,
                                     const rdmad::RegionDescriptor& remote, size_t size,
                                     uint32_t blocks) {
  uint64_t slots = uint64_t(blocks) * 2;
  uint64_t stride = slots * 5 / 8 + 1;
  while (std::gcd(stride, slots) != 1) ++stride;
  std::vector<rdmad::TransferOp> ops(blocks);
  for (uint32_t i = 0; i < blocks; ++i) {
    ops[i] = {rdmad::TransferOp::Kind::kWrite, &local, size_t(i) * size, remote,
              (i * stride % slots) * size,     size};
  }
  return ops;
}

// One post of the batch, until the server's echo of its notification.
Status KvBatch(rdmad::Channel& channel, rdmad::PreparedTransfer& batch, uint64_t seq) {
  std::vector<uint8_t> note = rdmad::echo::EncodeCount(seq);
  RDMAD_RETURN_IF_ERROR(
      batch.Post(std::string_view(reinterpret_cast<const char*>(note.data()), note.size())));
  auto echoed = Await(channel, kReplyTimeout, "notification echo");
  if (!echoed.ok()) return echoed.status();
  if (*echoed != note) {
    return Status(StatusCode::kDataLoss, "kv: the echo of notification " + std::to_string(seq) +
                                             " is not that notification");
  }
  // The peer had every byte before the notification: the batch is done.
  return batch.Wait(kReplyTimeout);
}

}  // namespace

Status WarmUpKv(rdmad::Channel& channel, const rdmad::MemoryRegion& local,
                const rdmad::RegionDescriptor& remote, size_t size, uint32_t blocks) {
  auto batch = channel.Prepare(KvOps(local, remote, size, blocks));
  if (!batch.ok()) return batch.status();
  return KvBatch(channel, **batch, 0);
}

StatusOr<ChannelResult> RunKv(rdmad::Channel& channel, const rdmad::MemoryRegion& local,
                              const rdmad::RegionDescriptor& remote, size_t size, uint32_t blocks,
                              const BenchLimit& limit, BenchClock::time_point start) {
  // As an engine moving a layer's blocks again and again: prepared once.
  auto batch = channel.Prepare(KvOps(local, remote, size, blocks));
  if (!batch.ok()) return batch.status();
  TimelineRecorder timeline;
  ChannelResult r;
  double elapsed = 0;
  uint64_t bytes = uint64_t(size) * blocks;
  while (!limit.Done(r.iters, elapsed)) {
    BenchClock::time_point t0 = BenchClock::now();
    RDMAD_RETURN_IF_ERROR(KvBatch(channel, **batch, r.iters + 1));
    BenchClock::time_point t1 = BenchClock::now();
    r.latency_us.Add(std::chrono::duration<double, std::micro>(t1 - t0).count());
    ++r.iters;
    elapsed = Seconds(t1 - start);
    timeline.Add(elapsed, r.iters * bytes, r.iters * blocks);
  }
  r.timeline = timeline.Finish();
  r.seconds = elapsed;
  return r;
}

}  // namespace rdmactl

// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// KV-cache transfer between a "prefill" and a "decode" process, the way
// disaggregated inference engines move it: the prefill side exposes its KV
// cache as one registered region and says when a round of blocks is ready;
// the decode side pulls scattered blocks in batches of one-sided reads,
// checks them, and tells the prefill side it is done with the round (a
// notification fenced behind its reads), so the prefill side may reuse the
// memory. Over RDMA when both hosts have a path, else over TCP: the same
// code.
//
//   kv_transfer prefill [--socket S] [--service NAME] [--blocks N]
//                       [--block-size BYTES] [--rounds R]
//   kv_transfer decode PEER [--socket S] [--service NAME] [--batch K]
//
// decode prints one line per round and ends with "KV OK over RDMA|TCP";
// either side exits 1 with the reason on the first failure.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "rdmad/client.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::seconds kPatience{30};

struct Options {
  std::string role, peer, socket, service = "kv";
  size_t blocks = 1024, block_size = 16384, batch = 256;
  int rounds = 3;
};

int Fail(const std::string& what, const rdmad::Status& status) {
  std::fprintf(stderr, "kv_transfer: %s: %s\n", what.c_str(), status.ToString().c_str());
  return 1;
}

// The bytes of block b in round r: what prefill writes and decode checks.
uint8_t Byte(int round, size_t block, size_t i) {
  return static_cast<uint8_t>((round * 131 + block * 31 + i * 7) ^ (i >> 8));
}

// What decode needs: the region's descriptor, then the number of blocks,
// their size and the rounds (8 bytes each, little endian).
std::vector<uint8_t> Layout(const rdmad::RegionDescriptor& desc, const Options& o) {
  std::vector<uint8_t> out = desc.Serialize();
  for (uint64_t v : {uint64_t(o.blocks), uint64_t(o.block_size), uint64_t(o.rounds)}) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  return out;
}

int Prefill(rdmad::Client& client, const Options& o) {
  auto listener = client.Listen(o.service);
  if (!listener.ok()) return Fail("listen on " + o.service, listener.status());
  std::printf("prefill: listening on %s\n", o.service.c_str());
  std::fflush(stdout);
  auto channel = (*listener)->Accept();
  if (!channel.ok()) return Fail("accept", channel.status());
  std::vector<uint8_t> cache(o.blocks * o.block_size);
  auto region = (*channel)->RegisterMemory(cache.data(), cache.size());
  if (!region.ok()) return Fail("register the KV cache", region.status());
  std::vector<uint8_t> layout = Layout((*region)->descriptor(), o);
  if (auto s = (*channel)->Send(layout.data(), layout.size()); !s.ok()) return Fail("send", s);
  for (int r = 0; r < o.rounds; ++r) {
    for (size_t b = 0; b < o.blocks; ++b) {
      for (size_t i = 0; i < o.block_size; ++i) cache[b * o.block_size + i] = Byte(r, b, i);
    }
    std::string ready = "ready " + std::to_string(r);
    auto told = (*channel)->Submit({}, ready);  // nothing to move: a notification alone
    if (!told.ok()) return Fail("notify " + ready, told.status());
    auto done = (*channel)->RecvNotification(kPatience);
    if (!done.ok()) return Fail("wait for decode", done.status());
    std::string expected = "done " + std::to_string(r);
    if (std::string(done->begin(), done->end()) != expected) {
      return Fail("decode said", rdmad::Status::Internal(std::string(done->begin(), done->end())));
    }
  }
  // The cache stays registered until decode has let go.
  auto bye = (*channel)->Recv(kPatience);
  (void)bye;
  std::printf("prefill: %d rounds served\n", o.rounds);
  return 0;
}

int Decode(rdmad::Client& client, const Options& o) {
  auto channel = client.Connect(o.peer, o.service);
  if (!channel.ok()) return Fail("connect to " + o.peer, channel.status());
  auto layout = (*channel)->Recv(kPatience);
  if (!layout.ok()) return Fail("layout", layout.status());
  if (layout->size() != 24 + 24) return Fail("layout", rdmad::Status::Internal("malformed"));
  auto desc = rdmad::RegionDescriptor::Parse(layout->data(), 24);
  if (!desc.ok()) return Fail("layout", desc.status());
  uint64_t blocks = 0, block_size = 0, rounds = 0;
  for (int i = 7; i >= 0; --i) {
    blocks = (blocks << 8) | (*layout)[24 + i];
    block_size = (block_size << 8) | (*layout)[32 + i];
    rounds = (rounds << 8) | (*layout)[40 + i];
  }
  if (blocks == 0 || block_size == 0 || blocks * block_size > desc->length) {
    return Fail("layout", rdmad::Status::Internal("blocks do not fit the region"));
  }
  std::vector<uint8_t> local(blocks * block_size);
  auto region = (*channel)->RegisterMemory(local.data(), local.size());
  if (!region.ok()) return Fail("register", region.status());
  for (int r = 0; uint64_t(r) < rounds; ++r) {
    auto ready = (*channel)->RecvNotification(kPatience);
    if (!ready.ok()) return Fail("wait for prefill", ready.status());
    auto t0 = Clock::now();
    // Scattered: block b lands in slot (b * 7919) mod blocks of the local buffer.
    for (uint64_t first = 0; first < blocks; first += o.batch) {
      std::vector<rdmad::TransferOp> ops;
      for (uint64_t b = first; b < std::min<uint64_t>(blocks, first + o.batch); ++b) {
        uint64_t slot = (b * 7919) % blocks;
        ops.push_back({rdmad::TransferOp::Kind::kRead, region->get(), size_t(slot * block_size),
                       *desc, b * block_size, size_t(block_size)});
      }
      auto transfer = (*channel)->Submit(ops);
      if (!transfer.ok()) return Fail("submit", transfer.status());
      if (auto s = (*transfer)->Wait(kPatience); !s.ok()) {
        return Fail("read op " + std::to_string((*transfer)->failed_op()), s);
      }
    }
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    for (uint64_t b = 0; b < blocks; ++b) {
      const uint8_t* got = local.data() + ((b * 7919) % blocks) * block_size;
      for (uint64_t i = 0; i < block_size; ++i) {
        if (got[i] != Byte(r, b, i)) {
          return Fail(
              "round " + std::to_string(r),
              rdmad::Status(rdmad::StatusCode::kDataLoss, "block " + std::to_string(b) + " byte " +
                                                              std::to_string(i) + " differs"));
        }
      }
    }
    std::printf("decode: round %d: %llu blocks of %llu bytes (%.1f MiB) in %.1f ms, all checked\n",
                r, static_cast<unsigned long long>(blocks),
                static_cast<unsigned long long>(block_size),
                double(blocks * block_size) / (1 << 20), ms);
    std::fflush(stdout);
    auto done = (*channel)->Submit({}, "done " + std::to_string(r));
    if (!done.ok()) return Fail("notify done", done.status());
  }
  const char* bye = "bye";
  (void)(*channel)->Send(bye, 3);
  std::printf("KV OK over %s\n", rdmad::ChannelTransportName((*channel)->info().transport));
  return 0;
}

bool Parse(int argc, char** argv, Options* o) {
  if (argc < 2) return false;
  o->role = argv[1];
  int i = 2;
  if (o->role == "decode") {
    if (argc < 3) return false;
    o->peer = argv[i++];
  } else if (o->role != "prefill") {
    return false;
  }
  for (; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    std::string value = argv[i + 1];
    if (flag == "--socket") {
      o->socket = value;
    } else if (flag == "--service") {
      o->service = value;
    } else if (flag == "--blocks") {
      o->blocks = std::strtoul(value.c_str(), nullptr, 10);
    } else if (flag == "--block-size") {
      o->block_size = std::strtoul(value.c_str(), nullptr, 10);
    } else if (flag == "--rounds") {
      o->rounds = std::atoi(value.c_str());
    } else if (flag == "--batch") {
      o->batch = std::strtoul(value.c_str(), nullptr, 10);
    } else {
      return false;
    }
  }
  return i == argc && o->blocks > 0 && o->block_size > 0 && o->rounds > 0 && o->batch > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!Parse(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: kv_transfer prefill [--socket S] [--service NAME] [--blocks N] "
                 "[--block-size BYTES] [--rounds R]\n"
                 "       kv_transfer decode PEER [--socket S] [--service NAME] [--batch K]\n");
    return 2;
  }
  rdmad::ClientOptions options;
  options.socket_path = o.socket;
  auto client = rdmad::Client::Open(options);
  if (!client.ok()) return Fail("open rdmad", client.status());
  return o.role == "prefill" ? Prefill(**client, o) : Decode(**client, o);
}

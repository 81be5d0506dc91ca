// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Test support for the RDMA channel's device tests (DeviceLabRdma*): the
// lab's plan, deterministic payloads, and a fixture that connects two
// channel ends in this one process on the same device (rxe loops back),
// endpoints exchanged in memory, the acceptor reaching RTR first as through
// the daemons. Device and GID index come from LAB_DEV (default: the first
// device) and LAB_GID_INDEX (default 1). Without a device the fixture skips.
//
// Thread safety: as GoogleTest fixtures; one test at a time.

#ifndef RDMAD_CLIENT_SRC_RDMA_LAB_CHANNEL_FIXTURE_H_
#define RDMAD_CLIENT_SRC_RDMA_LAB_CHANNEL_FIXTURE_H_

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "client/src/rdma/rdma_channel.h"
#include "gtest/gtest.h"
#include "rdmad/log.h"

namespace rdmad::internal::lab {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

inline std::string Env(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

inline std::string FirstDevice() {
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator("/sys/class/infiniband", ec)) {
    names.push_back(e.path().filename());
  }
  std::sort(names.begin(), names.end());
  return names.empty() ? "" : names[0];
}

// The client library's log at `level` for a scope: a wait that would
// report at debug level sleeps with a deadline instead of in one read.
class ScopedClientLogLevel {
 public:
  explicit ScopedClientLogLevel(LogLevel level) : before_(ClientLogLevel()) {
    SetClientLogLevel(level);
  }
  ~ScopedClientLogLevel() { SetClientLogLevel(before_); }

 private:
  LogLevel before_;
};

inline RdmaPlan LabPlan() {
  RdmaPlan plan;
  plan.device = Env("LAB_DEV", FirstDevice());
  plan.port = 1;
  plan.gid_index = static_cast<uint32_t>(std::atoi(Env("LAB_GID_INDEX", "1").c_str()));
  plan.path_mtu_cap = 4096;
  QpAttributes& qp = plan.qp;
  qp.type = "RC";
  qp.timeout = 14;
  qp.retry_cnt = 6;
  qp.rnr_retry = 7;
  qp.min_rnr_timer = 12;
  qp.hop_limit = 64;
  qp.max_inline = 48;
  qp.send_depth = 64;
  qp.recv_depth = 32;
  qp.qps_per_channel = 1;
  plan.slot_size = 4096;
  plan.spin_us = 50;
  plan.relaxed_ordering = 2;
  return plan;
}

// Deterministic bytes and a word-wise checksum (fast enough under TCG).
inline std::vector<uint8_t> Pattern(size_t size, uint64_t seed) {
  std::vector<uint8_t> out(size);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < size; i += 8) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    std::memcpy(out.data() + i, &x, std::min<size_t>(8, size - i));
  }
  return out;
}

// What the descriptors this process holds point to, sorted.
inline std::vector<std::string> FdTargets() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    std::error_code link_ec;
    out.push_back(std::filesystem::read_symlink(e.path(), link_ec).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline uint64_t Checksum(const uint8_t* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
  }
  for (; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

class DeviceLabRdmaChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (FirstDevice().empty()) GTEST_SKIP() << "no RDMA device on this host";
    plan_ = LabPlan();
  }

  // Creates both ends and connects them: acceptor RTR, then initiator RTR +
  // RTS, then acceptor RTS. remote_for_initiator can corrupt the acceptor's
  // endpoint on its way.
  void Connect(const RdmaPlan& plan, const std::function<void(RdmaEndpoint&)>& corrupt = nullptr) {
    ConnectInto(plan, &a_, &b_, corrupt);
  }

  // As Connect, into *a (initiator) and *b (acceptor), each end on its
  // group's shared CQ if one is given (completion_group.h).
  void ConnectInto(const RdmaPlan& plan, std::unique_ptr<Channel>* a, std::unique_ptr<Channel>* b,
                   const std::function<void(RdmaEndpoint&)>& corrupt = nullptr,
                   const std::shared_ptr<CompletionGroup>& initiator_group = nullptr,
                   const std::shared_ptr<CompletionGroup>& acceptor_group = nullptr) {
    auto initiator = PendingRdmaChannel::Create(plan, initiator_group);
    ASSERT_TRUE(initiator.ok()) << initiator.status().ToString();
    auto acceptor = PendingRdmaChannel::Create(plan, acceptor_group);
    ASSERT_TRUE(acceptor.ok()) << acceptor.status().ToString();
    Status s = (*acceptor)->ReadyToReceive((*initiator)->local(), RailRole::kAcceptor);
    ASSERT_TRUE(s.ok()) << s.ToString();
    RdmaEndpoint acceptor_ep = (*acceptor)->local();
    if (corrupt) corrupt(acceptor_ep);
    s = (*initiator)->ReadyToReceive(acceptor_ep);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ChannelInfo info;
    info.service = "test";
    auto made_a = (*initiator)->ReadyToSend(info);
    ASSERT_TRUE(made_a.ok()) << made_a.status().ToString();
    auto made_b = (*acceptor)->ReadyToSend(info);
    ASSERT_TRUE(made_b.ok()) << made_b.status().ToString();
    *a = std::move(made_a).value();
    *b = std::move(made_b).value();
  }

  // Sends one message from `from` (on a thread) and receives it on `to`.
  void Transfer(Channel& from, Channel& to, size_t size, uint64_t seed) {
    std::vector<uint8_t> data = Pattern(size, seed);
    uint64_t sum = Checksum(data.data(), data.size());
    auto start = Clock::now();
    auto sent = std::async(std::launch::async, [&] { return from.Send(data.data(), data.size()); });
    auto got = to.Recv(60s);
    double secs = std::chrono::duration<double>(Clock::now() - start).count();
    Status s = sent.get();
    ASSERT_TRUE(s.ok()) << size << " B: " << s.ToString();
    ASSERT_TRUE(got.ok()) << size << " B: " << got.status().ToString();
    ASSERT_EQ(got->size(), size);
    EXPECT_EQ(Checksum(got->data(), got->size()), sum) << size << " B";
    EXPECT_TRUE(std::equal(got->begin(), got->end(), data.begin())) << size << " B";
    if (size >= (1u << 20)) {
      std::cout << "[ rdma     ] " << size << " B in " << secs * 1e3 << " ms: " << size / secs / 1e6
                << " MB/s\n";
    }
  }

  RdmaPlan plan_;
  std::unique_ptr<Channel> a_, b_;  // initiator, acceptor
};

}  // namespace rdmad::internal::lab

#endif  // RDMAD_CLIENT_SRC_RDMA_LAB_CHANNEL_FIXTURE_H_

// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// A channel's receive ring and staging area start small and grow with the
// traffic (resources.h, wire.h), on the lab's device: what a new channel
// pins, what makes each grow, that grown memory carries messages intact,
// and that a channel without the memlock to grow keeps working small.

#include <fcntl.h>
#include <linux/capability.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <iterator>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "client/src/rdma/channel_impl.h"
#include "client/src/rdma/lab_channel_fixture.h"
#include "client/src/rdma/resources.h"
#include "gtest/gtest.h"
#include "rdmad/log.h"

extern char** environ;

namespace rdmad::internal {
namespace {

using namespace lab;

constexpr char kMemlockChild[] = "RDMAD_TEST_MEMLOCK_CHILD";

size_t FirstBytes(const RdmaPlan& plan) {
  return size_t(ChannelResources::kInitialRingSlots) * plan.slot_size;
}

RdmaChannel& Rdma(const std::unique_ptr<Channel>& channel) {
  return dynamic_cast<RdmaChannel&>(*channel);
}

// Message i of a stream: its sequence number, then bytes that depend on it.
std::vector<uint8_t> Message(int i, size_t size) {
  std::vector<uint8_t> msg = Pattern(size, uint64_t(i) + 1);
  std::memcpy(msg.data(), &i, std::min(size, sizeof(i)));
  return msg;
}

// Sends `count` messages of `size` bytes from `from` (on a thread) and
// receives them on `to`, each whole and in order.
void Stream(Channel& from, Channel& to, int count, size_t size) {
  auto sender = std::async(std::launch::async, [&]() -> Status {
    for (int i = 0; i < count; ++i) {
      std::vector<uint8_t> msg = Message(i, size);
      RDMAD_RETURN_IF_ERROR(from.Send(msg.data(), msg.size()));
    }
    return Status::Ok();
  });
  for (int i = 0; i < count; ++i) {
    auto got = to.Recv(60s);
    ASSERT_TRUE(got.ok()) << "message " << i << ": " << got.status().ToString();
    ASSERT_EQ(*got, Message(i, size)) << "message " << i << " of " << size << " B";
  }
  Status s = sender.get();
  ASSERT_TRUE(s.ok()) << s.ToString();
}

TEST_F(DeviceLabRdmaChannelTest, ANewChannelPinsOnlyTheFirstSlotsAndAnnouncesTheFullRing) {
  auto pending = PendingRdmaChannel::Create(plan_);
  ASSERT_TRUE(pending.ok()) << pending.status().ToString();
  EXPECT_EQ((*pending)->registered_bytes(), FirstBytes(plan_));
  EXPECT_EQ((*pending)->local().credits, ChannelResources::kInitialRingSlots);
  EXPECT_EQ((*pending)->local().ring_slots, plan_.qp.recv_depth);
}

TEST_F(DeviceLabRdmaChannelTest, TheRingGrowsOnlyWhenThePeerStreams) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  const size_t first = FirstBytes(plan_);
  // Requests and answers: neither side ever owes half its ring.
  for (int i = 0; i < 20; ++i) {
    ASSERT_NO_FATAL_FAILURE(Transfer(*a_, *b_, 8, 2 * i));
    ASSERT_NO_FATAL_FAILURE(Transfer(*b_, *a_, 40, 2 * i + 1));
  }
  EXPECT_EQ(Rdma(a_).registered_bytes(), first);
  EXPECT_EQ(Rdma(b_).registered_bytes(), first);
  // a streams: b's ring fills before b answers, and grows to recv_depth.
  // a's own ring only takes b's CREDIT messages, which a's messages
  // answer, and its sends are inline: a stays as it was.
  ASSERT_NO_FATAL_FAILURE(Stream(*a_, *b_, 500, 8));
  const size_t grown =
      (plan_.qp.recv_depth - ChannelResources::kInitialRingSlots) * size_t(plan_.slot_size);
  EXPECT_EQ(Rdma(b_).registered_bytes(), first + grown);
  EXPECT_EQ(Rdma(a_).registered_bytes(), first);
  // The grown ring carries both ways, staged and inline alike.
  ASSERT_NO_FATAL_FAILURE(Stream(*a_, *b_, 300, 3000));
  ASSERT_NO_FATAL_FAILURE(Stream(*b_, *a_, 300, 8));
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    ASSERT_NO_FATAL_FAILURE(Transfer(*a_, *b_, 8192, seed));
    ASSERT_NO_FATAL_FAILURE(Transfer(*b_, *a_, 70000, seed + 10));
  }
}

TEST_F(DeviceLabRdmaChannelTest, TheFirstStagedSendTakesOneChunkAndGrowthTheRest) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  const size_t first = FirstBytes(plan_);
  ASSERT_GT(plan_.qp.max_inline, 0u);
  // Inline messages need no staging chunk.
  ASSERT_NO_FATAL_FAILURE(Transfer(*a_, *b_, plan_.qp.max_inline, 1));
  EXPECT_EQ(Rdma(a_).registered_bytes(), first);
  // The first staged message: one chunk, from the slab.
  ASSERT_NO_FATAL_FAILURE(Transfer(*a_, *b_, 1000, 2));
  EXPECT_EQ(Rdma(a_).registered_bytes(), first + plan_.slot_size);
  Rdma(a_).GrowStagingForTesting();
  // clamp(64 KiB / slot, 2, send_depth) chunks in all.
  const size_t chunks = std::min<size_t>((64u << 10) / plan_.slot_size, plan_.qp.send_depth);
  ASSERT_EQ(Rdma(a_).registered_bytes(), first + chunks * plan_.slot_size);
  Rdma(a_).GrowStagingForTesting();  // full: no change
  ASSERT_EQ(Rdma(a_).registered_bytes(), first + chunks * plan_.slot_size);
  // Every size a staging chunk takes, a chunk's worth at a time and split in two.
  for (size_t size :
       {size_t(65), size_t(1000), size_t(plan_.slot_size), size_t(plan_.slot_size) * 2}) {
    ASSERT_NO_FATAL_FAILURE(Stream(*a_, *b_, 200, size));
  }
  EXPECT_GT(Rdma(b_).registered_bytes(), first);  // b's ring grew under the streams
}

// What the memlock test's child runs, in a process of its own: without
// CAP_IPC_LOCK and with RLIMIT_MEMLOCK at 64 KiB, two channel ends fit
// their first slots (16 KiB each) and a first staging chunk (4 KiB), but
// neither can grow further; streams in both directions still arrive whole.
TEST_F(DeviceLabRdmaChannelTest, MemlockChildKeepsItsSmallRing) {
  if (Env(kMemlockChild).empty()) GTEST_SKIP() << "AChannelThatCannotGrowKeepsWorkingSmall runs it";
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct caps[2] = {};
  ASSERT_EQ(syscall(SYS_capget, &header, caps), 0);
  caps[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
  caps[CAP_IPC_LOCK / 32].permitted &= ~(1u << (CAP_IPC_LOCK % 32));
  ASSERT_EQ(syscall(SYS_capset, &header, caps), 0) << std::strerror(errno);
  rlimit limit{64u << 10, 64u << 10};
  ASSERT_EQ(setrlimit(RLIMIT_MEMLOCK, &limit), 0) << std::strerror(errno);
  std::mutex mu;
  std::vector<std::string> warnings;
  SetClientLogSink([&](LogLevel level, std::string_view message) {
    std::lock_guard lock(mu);
    if (level == LogLevel::kWarn) warnings.emplace_back(message);
  });

  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  const size_t first = FirstBytes(plan_);
  ASSERT_NO_FATAL_FAILURE(Stream(*a_, *b_, 400, 8));
  ASSERT_NO_FATAL_FAILURE(Stream(*b_, *a_, 400, 8));
  ASSERT_NO_FATAL_FAILURE(Stream(*a_, *b_, 200, 1000));
  EXPECT_EQ(Rdma(a_).registered_bytes(), first + plan_.slot_size);  // its first chunk
  EXPECT_EQ(Rdma(b_).registered_bytes(), first);
  Rdma(a_).GrowStagingForTesting();  // refused too: the chunk it has still serves
  EXPECT_EQ(Rdma(a_).registered_bytes(), first + plan_.slot_size);
  ASSERT_NO_FATAL_FAILURE(Stream(*a_, *b_, 100, 3000));
  ASSERT_NO_FATAL_FAILURE(Transfer(*b_, *a_, 5000, 7));
  a_.reset();
  b_.reset();
  SetClientLogSink(nullptr);
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  const std::string ring =
      "keeps its receive ring of " + std::to_string(ChannelResources::kInitialRingSlots) + " slots";
  const std::string staging = "keeps its staging area of 1 chunks";
  EXPECT_NE(all.find(ring), std::string::npos) << all;
  EXPECT_NE(all.find(staging), std::string::npos) << all;
  std::cout << all;
}

TEST_F(DeviceLabRdmaChannelTest, AChannelThatCannotGrowKeepsWorkingSmall) {
  char log_path[] = "/tmp/rdmad-memlock-child-XXXXXX";
  int fd = mkstemp(log_path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::string filter = "--gtest_filter=DeviceLabRdmaChannelTest.MemlockChildKeepsItsSmallRing";
  std::string self = std::filesystem::read_symlink("/proc/self/exe");
  std::vector<char*> argv = {self.data(), filter.data(), nullptr};
  std::vector<std::string> env_strings = {std::string(kMemlockChild) + "=1",
                                          "RDMAD_CLIENT_LOG_LEVEL=warn"};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).substr(0, 23) != "RDMAD_CLIENT_LOG_LEVEL=")
      env_strings.emplace_back(*e);
  }
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path, O_WRONLY | O_TRUNC, 0);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ASSERT_EQ(rc, 0) << std::strerror(rc);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  std::ifstream in(log_path);
  std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  unlink(log_path);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  EXPECT_NE(output.find("[       OK ] DeviceLabRdmaChannelTest.MemlockChildKeepsItsSmallRing"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("keeps its receive ring of " +
                        std::to_string(ChannelResources::kInitialRingSlots) + " slots"),
            std::string::npos)
      << output;
  if (size_t at = output.find("RDMA channel"); at != std::string::npos) {
    std::cout << "[ rdma     ] the child: " << output.substr(at, output.find('\n', at) - at)
              << "\n";
  }
}

}  // namespace
}  // namespace rdmad::internal

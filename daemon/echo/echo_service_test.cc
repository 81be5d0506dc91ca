// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// EchoService's accept loop against a fake Listener that hands out the
// server sides of TCP channel pairs: the channel cap and Reject, and Stop
// with channels open.

#include "daemon/echo/echo_service.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "client/src/tcp/tcp_test_util.h"
#include "common/echo_protocol.h"
#include "gtest/gtest.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Channel requests are server-side channels queued by the test.
class FakeListener final : public Listener {
 public:
  const std::string& service() const override { return service_; }

  StatusOr<std::unique_ptr<Channel>> Accept(milliseconds timeout) override {
    auto next = Next(timeout);
    if (!next) return Status::DeadlineExceeded("no request");
    return next;
  }

  Status Reject(const std::string& reason, milliseconds timeout) override {
    auto next = Next(timeout);
    if (!next) return Status::DeadlineExceeded("no request");
    next->Close();
    std::lock_guard lock(mu_);
    rejected_.push_back(reason);
    cv_.notify_all();
    return Status::Ok();
  }

  // The echo service waits in Accept; it has no use for the fd.
  StatusOr<int> RequestFd() override { return Status::Unimplemented("not in the fake"); }

  void Close() override {
    std::lock_guard lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }

  void Offer(std::unique_ptr<Channel> channel) {
    std::lock_guard lock(mu_);
    pending_.push_back(std::move(channel));
    cv_.notify_all();
  }

  // Waits until n requests were rejected; returns them.
  std::vector<std::string> WaitRejected(size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, seconds(5), [&] { return rejected_.size() >= n; });
    return rejected_;
  }

 private:
  std::unique_ptr<Channel> Next(milliseconds timeout) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout, [this] { return !pending_.empty() || closed_; })) {
      return nullptr;
    }
    if (closed_) return nullptr;
    auto next = std::move(pending_.front());
    pending_.pop_front();
    return next;
  }

  const std::string service_ = echo::kService;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Channel>> pending_;
  std::vector<std::string> rejected_;
  bool closed_ = false;
};

// Only Listen matters; it hands out the one FakeListener.
class FakeClient final : public Client {
 public:
  explicit FakeClient(std::unique_ptr<Listener> listener) : listener_(std::move(listener)) {}
  const std::string& socket_path() const override { return path_; }
  StatusOr<DaemonStatus> GetStatus() override { return Status::Unimplemented(""); }
  StatusOr<std::unique_ptr<EventStream>> WatchEvents(const std::vector<EventKind>&) override {
    return Status::Unimplemented("");
  }
  StatusOr<std::vector<Device>> ListDevices() override { return Status::Unimplemented(""); }
  StatusOr<Device> GetDevice(const std::string&) override { return Status::Unimplemented(""); }
  StatusOr<PortCounters> GetPortCounters(const std::string&, uint32_t) override {
    return Status::Unimplemented("");
  }
  StatusOr<Path> ResolvePath(const std::string&, uint32_t) override {
    return Status::Unimplemented("");
  }
  StatusOr<std::vector<PeerInfo>> ListPeers() override { return Status::Unimplemented(""); }
  StatusOr<HostTopology> GetTopology() override { return Status::Unimplemented(""); }
  StatusOr<RailPlan> PlanRails(const RailRequest&) override { return Status::Unimplemented(""); }
  StatusOr<std::unique_ptr<Listener>> Listen(const std::string& service) override {
    if (!listener_) return Status::AlreadyExists("listened already");
    return std::move(listener_);
  }
  StatusOr<std::vector<ChannelSummary>> ListChannels() override {
    return Status::Unimplemented("");
  }
  Status CloseChannel(uint64_t, const std::string&) override { return Status::Unimplemented(""); }
  StatusOr<std::unique_ptr<Channel>> Connect(const std::string&, const std::string&,
                                             const ConnectOptions&) override {
    return Status::Unimplemented("");
  }
  StatusOr<std::vector<std::unique_ptr<Channel>>> ConnectMany(const std::string&,
                                                              const std::string&, size_t,
                                                              const ConnectOptions&) override {
    return Status::Unimplemented("");
  }
  Status Prewarm(const std::string&, const std::string&, int) override {
    return Status::Unimplemented("");
  }
  StatusOr<std::vector<PoolSummary>> ListPools() override { return Status::Unimplemented(""); }
  StatusOr<ClusterView> ListMembers(const std::string&) override {
    return Status::Unimplemented("");
  }

 private:
  const std::string path_ = "fake.sock";
  std::unique_ptr<Listener> listener_;
};

class EchoServiceTest : public ::testing::Test {
 protected:
  void StartService(size_t max_channels) {
    auto listener = std::make_unique<FakeListener>();
    listener_ = listener.get();
    EchoServiceOptions options;
    options.max_channels = max_channels;
    options.accept_poll = milliseconds(20);
    auto service = EchoService::Start(std::make_unique<FakeClient>(std::move(listener)), options);
    ASSERT_TRUE(service.ok()) << service.status().ToString();
    service_ = std::move(service).value();
  }

  // A new client channel whose server side is offered to the service.
  std::unique_ptr<Channel> Request() {
    auto pair = internal::MakeTcpPair("127.0.0.1");
    EXPECT_TRUE(pair.ok()) << pair.status().ToString();
    if (!pair.ok()) return nullptr;
    listener_->Offer(std::move(pair->second));
    return std::move(pair->first);
  }

  static Status EchoHandshake(Channel& c) {
    return echo::Handshake(c, {echo::kVersion, echo::Mode::kEcho, 0}, seconds(5)).status();
  }

  bool WaitActive(size_t n) {
    auto deadline = std::chrono::steady_clock::now() + seconds(5);
    while (service_->active_channels() != n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    return service_->active_channels() == n;
  }

  FakeListener* listener_ = nullptr;  // owned by service_
  std::unique_ptr<EchoService> service_;
};

TEST_F(EchoServiceTest, RejectsBeyondItsCapAndAcceptsAgainWhenOneEnds) {
  StartService(2);
  auto first = Request();
  auto second = Request();
  ASSERT_TRUE(first && second);
  ASSERT_TRUE(EchoHandshake(*first).ok());
  ASSERT_TRUE(EchoHandshake(*second).ok());
  ASSERT_TRUE(WaitActive(2));

  auto third = Request();
  ASSERT_TRUE(third);
  std::vector<std::string> rejected = listener_->WaitRejected(1);
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0], "the echo service is at its limit of 2 channels");

  first->Close();
  ASSERT_TRUE(WaitActive(1));
  // The loop may still be in a Reject call that began at the cap.
  std::this_thread::sleep_for(milliseconds(100));
  auto fourth = Request();
  ASSERT_TRUE(fourth);
  EXPECT_TRUE(EchoHandshake(*fourth).ok());
  service_->Stop();
}

TEST_F(EchoServiceTest, StopClosesOpenChannelsPromptly) {
  StartService(64);
  auto a = Request();
  auto b = Request();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(EchoHandshake(*a).ok());
  ASSERT_TRUE(EchoHandshake(*b).ok());
  ASSERT_TRUE(WaitActive(2));
  auto start = std::chrono::steady_clock::now();
  service_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(1));
  EXPECT_EQ(a->Recv(seconds(5)).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(b->Recv(seconds(5)).status().code(), StatusCode::kUnavailable);
  service_->Stop();  // a second Stop is a no-op
}

}  // namespace
}  // namespace rdmad

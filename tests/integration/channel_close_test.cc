// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The channel lifecycle between two real rdmad processes (DaemonPair): a
// close, an application process that dies, a peer daemon killed mid
// handshake or while a channel is up, and the HoldChannel lifeline itself.
// Off the lab the channels fall back to TCP, whose own EOF also reaches
// the peer; so each test also checks what only the daemons can know (their
// tables' states and reasons), and PeerDaemonLostFailsTheChannel stops the
// peer application so that nothing but the daemon's word can wake the
// blocked Recv.

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <future>
#include <thread>

#include "gtest/gtest.h"
#include "rdmad/client.h"
#include "tests/integration/daemon_pair.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;
using testing::DaemonNode;
using testing::Process;

// HoldChannel called raw (gRPC's generic API, the request encoded by hand:
// field 1, varint), for what the client library never does. The stream's
// events and how it ended.
struct RawHold {
  int events = 0;
  std::string first;  // the first event's bytes
  grpc::Status status;
};

RawHold HoldRaw(const std::string& socket, uint64_t channel_id) {
  std::string request = "\x28";  // HoldChannelRequest.channel_ids (field 5)
  for (uint64_t v = channel_id;; v >>= 7) {
    request.push_back(char((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)));
    if (v < 0x80) break;
  }
  class Reactor : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
   public:
    void OnReadDone(bool ok) override {
      if (!ok) return;
      if (result.events++ == 0) {
        std::vector<grpc::Slice> slices;
        (void)in.Dump(&slices);
        for (auto& s : slices) {
          result.first.append(reinterpret_cast<const char*>(s.begin()), s.size());
        }
      }
      StartRead(&in);
    }
    void OnDone(const grpc::Status& s) override {
      result.status = s;
      done.set_value();
    }
    RawHold result;
    grpc::ByteBuffer out, in;
    std::promise<void> done;
  } reactor;
  grpc::Slice slice(request);
  reactor.out = grpc::ByteBuffer(&slice, 1);
  auto channel = grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(5));
  stub.PrepareBidiStreamingCall(&context, "/rdmad.v1.Rdmad/HoldChannel", grpc::StubOptions(),
                                &reactor);
  reactor.StartWrite(&reactor.out, grpc::WriteOptions().set_last_message());
  reactor.StartRead(&reactor.in);
  reactor.StartCall();
  reactor.done.get_future().wait();
  return reactor.result;
}

class ChannelCloseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A's channels wait 2 s for a lost peer daemon (the default is 10 s).
    Status started = pair_.Start("peer_channel_grace_s = 2\n");
    ASSERT_TRUE(started.ok()) << started.ToString();
  }

  // The row of channel id in node's table once it is in state (else the
  // last row seen, or an empty one).
  ChannelSummary WaitForState(DaemonNode& node, uint64_t id, const std::string& state,
                              milliseconds timeout = milliseconds(3000)) {
    ChannelSummary seen;
    for (auto end = Clock::now() + timeout; Clock::now() < end;) {
      auto rows = node.client->ListChannels();
      for (const ChannelSummary& row : rows.ok() ? rows.value() : std::vector<ChannelSummary>{}) {
        if (row.id == id) seen = row;
      }
      if (seen.state == state) break;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return seen;
  }

  // Waits for "HELPER WORD ..." in a helper's output; the rest of the line.
  static std::string WaitForHelper(Process& helper, const std::string& word) {
    std::string key = "HELPER " + word;
    for (auto end = Clock::now() + seconds(20); Clock::now() < end;) {
      std::string log = helper.log();
      size_t at = log.find(key);
      if (at != std::string::npos && log.find('\n', at) != std::string::npos) {
        size_t from = at + key.size();
        return log.substr(from, log.find('\n', at) - from);
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
    ADD_FAILURE() << "no \"" << key << "\" from the helper:\n" << helper.log();
    return "";
  }

  std::unique_ptr<Process> Helper(const std::vector<std::string>& args) {
    return std::make_unique<Process>(CHANNEL_CLOSE_HELPER, args,
                                     std::map<std::string, std::string>{}, dir_.File("helper.log"));
  }

  // How a blocked Recv on channel ended, when, and the channel (kept open,
  // so that its own close cannot race with the peer's).
  struct Woken {
    Status status;
    Clock::time_point at;
    std::unique_ptr<Channel> channel;
  };
  static Woken Blocked(StatusOr<std::unique_ptr<Channel>> channel) {
    if (!channel.ok()) return {channel.status(), Clock::now(), nullptr};
    Status s = channel.value()->Recv(seconds(10)).status();
    return {s, Clock::now(), std::move(channel).value()};
  }

  testing::DaemonPair pair_;
  testing::TempDir dir_;
};

// (a) A Close() on one side wakes the other side's blocked Recv with
// "closed by peer", and both daemons mark the channel closed.
TEST_F(ChannelCloseTest, CloseWakesThePeersBlockedRecv) {
  auto listener = pair_.b().client->Listen("svc");
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  std::promise<void> accepted;
  auto recv = std::async(std::launch::async, [&] {
    auto channel = listener.value()->Accept(seconds(20));
    accepted.set_value();
    return Blocked(std::move(channel));
  });
  auto channel = pair_.ConnectAB("svc");
  ASSERT_TRUE(channel.ok()) << channel.status().ToString() << "\n" << pair_.Logs();
  accepted.get_future().wait();
  std::this_thread::sleep_for(milliseconds(300));  // B blocks in Recv
  uint64_t id = channel.value()->info().id;
  auto t0 = Clock::now();
  channel.value()->Close();
  auto [status, woke, other] = recv.get();  // B keeps its channel: its daemon hears A
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.ToString();
  EXPECT_NE(status.message().find("closed by peer"), std::string::npos) << status.ToString();
  EXPECT_LT(woke - t0, seconds(1));

  ChannelSummary a = WaitForState(pair_.a(), id, "closed");
  EXPECT_EQ(a.state, "closed") << pair_.Logs();
  EXPECT_EQ(a.reason, "closed by the application");
  ChannelSummary b = WaitForState(pair_.b(), id, "closed");
  EXPECT_EQ(b.state, "closed") << pair_.Logs();
  EXPECT_NE(b.reason.find("closed by peer "), std::string::npos) << b.reason;
  EXPECT_NE(b.reason.find(": closed by the application"), std::string::npos) << b.reason;
  // A lifeline opened now hears the end at once: closed = true.
  RawHold late = HoldRaw(pair_.b().socket, id);
  EXPECT_TRUE(late.status.ok()) << late.status.error_message();
  EXPECT_EQ(late.events, 1);
  EXPECT_EQ(late.first.substr(0, 2), std::string("\x08\x01", 2));
}

// (b) An application process that dies holding a channel: the peer's
// blocked Recv returns, and the daemons record why.
TEST_F(ChannelCloseTest, AnApplicationThatDiesClosesItsChannels) {
  auto listener = pair_.b().client->Listen("svc");
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  std::promise<uint64_t> accepted;
  auto recv = std::async(std::launch::async, [&] {
    auto channel = listener.value()->Accept(seconds(20));
    accepted.set_value(channel.ok() ? channel.value()->info().id : 0);
    return Blocked(std::move(channel));
  });
  auto helper = Helper({pair_.a().socket, "connect", "B", "svc"});
  std::string id_text = WaitForHelper(*helper, "connected ");
  uint64_t id = accepted.get_future().get();
  ASSERT_NE(id, 0u) << helper->log();
  EXPECT_EQ(std::to_string(id), id_text);
  std::this_thread::sleep_for(milliseconds(300));
  auto t0 = Clock::now();
  helper->Signal(SIGKILL);
  auto [status, woke, other] = recv.get();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.ToString();
  EXPECT_LT(woke - t0, seconds(1));

  ChannelSummary a = WaitForState(pair_.a(), id, "closed");
  EXPECT_EQ(a.state, "closed") << pair_.Logs();
  EXPECT_EQ(a.reason, "the application went away");
  ChannelSummary b = WaitForState(pair_.b(), id, "closed");
  EXPECT_EQ(b.state, "closed") << pair_.Logs();
  EXPECT_NE(b.reason.find(": the application went away"), std::string::npos) << b.reason;
}

// (c) The peer daemon killed while the listener has not answered yet:
// Connect is UNAVAILABLE well before the open timeout; A serves on.
TEST_F(ChannelCloseTest, APeerDaemonKilledMidHandshakeIsUnavailable) {
  auto listener = pair_.b().client->Listen("svc");  // never accepts
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  for (auto end = Clock::now() + seconds(10); Clock::now() < end;) {
    auto peers = pair_.a().client->ListPeers();
    if (peers.ok() && !peers->empty() && peers->at(0).state == PeerState::kUp) break;
    std::this_thread::sleep_for(milliseconds(50));
  }
  auto connect = std::async(std::launch::async,
                            [&] { return pair_.a().client->Connect("B", "svc").status(); });
  bool opening = false;
  for (auto end = Clock::now() + seconds(10); !opening && Clock::now() < end;) {
    auto rows = pair_.b().client->ListChannels();
    for (const auto& row : rows.ok() ? rows.value() : std::vector<ChannelSummary>{}) {
      opening = opening || row.state == "opening";
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_TRUE(opening) << pair_.Logs();
  auto t0 = Clock::now();
  pair_.b().process->Signal(SIGKILL);
  ASSERT_EQ(connect.wait_for(seconds(5)), std::future_status::ready) << pair_.Logs();
  Status status = connect.get();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.ToString();
  EXPECT_EQ(status.message().rfind("peer daemon B", 0), 0u) << status.ToString();
  EXPECT_LT(Clock::now() - t0, seconds(5));
  auto daemon = pair_.a().client->GetStatus();
  EXPECT_TRUE(daemon.ok()) << daemon.status().ToString();
  auto rows = pair_.a().client->ListChannels();
  ASSERT_TRUE(rows.ok());
  ASSERT_FALSE(rows->empty());
  EXPECT_EQ(rows->back().state, "failed");
}

// The peer daemon lost while a channel is up, the peer application stopped
// (its socket open, silent): only A's daemon can wake A's Recv, once the
// peer daemon has not come back within daemon.peer_channel_grace_s.
TEST_F(ChannelCloseTest, PeerDaemonLostFailsTheChannelAfterTheGrace) {
  auto helper = Helper({pair_.b().socket, "listen", "svc"});
  WaitForHelper(*helper, "listening");
  auto channel = pair_.ConnectAB("svc");
  ASSERT_TRUE(channel.ok()) << channel.status().ToString() << "\n" << pair_.Logs();
  WaitForHelper(*helper, "accepted ");
  helper->Signal(SIGSTOP);
  auto recv = std::async(std::launch::async, [&] {
    Status s = channel.value()->Recv(seconds(10)).status();
    return std::make_pair(s, Clock::now());
  });
  std::this_thread::sleep_for(milliseconds(300));
  auto t0 = Clock::now();
  pair_.b().process->Signal(SIGKILL);
  auto [status, woke] = recv.get();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.ToString();
  EXPECT_EQ(status.message().rfind("peer daemon B lost: ", 0), 0u) << status.ToString();
  EXPECT_NE(status.message().find("(not back within 2000 ms)"), std::string::npos)
      << status.ToString();
  EXPECT_GE(woke - t0, milliseconds(1900));
  EXPECT_LT(woke - t0, seconds(4));
  EXPECT_EQ(WaitForState(pair_.a(), channel.value()->info().id, "failed").state, "failed");
  helper->Signal(SIGCONT);
}

// (d) A lifeline for a channel nobody planned.
TEST_F(ChannelCloseTest, HoldingAnUnknownChannelIsNotFound) {
  RawHold hold = HoldRaw(pair_.a().socket, 0x1234);
  EXPECT_EQ(hold.status.error_code(), grpc::StatusCode::NOT_FOUND) << hold.status.error_message();
  EXPECT_EQ(hold.events, 0);
  EXPECT_TRUE(pair_.a().client->GetStatus().ok());
}

// Every ChannelInfo field a TCP channel has, on both roles.
TEST_F(ChannelCloseTest, TcpChannelInfoIsFilledOnBothRoles) {
  if (std::getenv("LAB_IP") != nullptr) GTEST_SKIP() << "TCP off the lab";
  auto listener = pair_.b().client->Listen("svc");
  ASSERT_TRUE(listener.ok());
  auto accepted =
      std::async(std::launch::async, [&] { return listener.value()->Accept(seconds(20)); });
  auto channel = pair_.ConnectAB("svc");
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  auto other = accepted.get();
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  const ChannelInfo& a = channel.value()->info();
  const ChannelInfo& b = other.value()->info();
  for (const ChannelInfo* info : {&a, &b}) {
    EXPECT_NE(info->id, 0u);
    EXPECT_FALSE(info->peer.empty());
    EXPECT_EQ(info->service, "svc");
    EXPECT_EQ(info->transport, ChannelTransport::kTcp);
    EXPECT_FALSE(info->transport_reason.empty());
    EXPECT_GT(info->handshake_ms, 0);
    EXPECT_FALSE(info->tcp_local.empty());
    EXPECT_FALSE(info->tcp_peer.empty());
  }
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.peer, "B");
  EXPECT_EQ(a.tcp_local, b.tcp_peer);
  EXPECT_EQ(a.tcp_peer, b.tcp_local);
}

}  // namespace
}  // namespace rdmad

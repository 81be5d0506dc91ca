// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmad's built-in echo service between two real daemons on loopback: A
// (where rdmactl and the test's apps run) and B (whose rdmad.echo answers).
// Without RDMA devices on the host every channel is TCP. rdmactl connect
// and ping (text and --json), echo.enabled = false, a malformed header
// from an app, REGION mode through the client library, and a clean stop
// with channels open.

#include <signal.h>

#include <cstdio>
#include <thread>

#include "common/echo_protocol.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rdmad/client.h"
#include "tests/integration/daemon_pair.h"

namespace rdmad {
namespace {

using Json = nlohmann::ordered_json;
using std::chrono::milliseconds;
using std::chrono::seconds;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class EchoTest : public ::testing::Test {
 protected:
  // Starts both daemons; B gets extra config text. The echo services start
  // after the peers are loaded: wait for them too.
  void StartBoth(const std::string& b_extra = "") {
    Status started = pair_.Start("", b_extra);
    ASSERT_TRUE(started.ok()) << started.ToString();
    const std::string listening = "echo service: listening on rdmad.echo";
    ASSERT_TRUE(testing::DaemonPair::WaitForLog(a_, listening)) << Logs();
    if (b_extra.empty()) {
      ASSERT_TRUE(testing::DaemonPair::WaitForLog(b_, listening)) << Logs();
    }
    client_ = a_.client.get();
  }

  std::string BAddress() const { return pair_.BAddress(); }

  // rdmactl against daemon A; exit code, stdout and stderr in *out.
  int Rdmactl(std::vector<std::string> args, std::string* out) {
    args.insert(args.begin(), {"--socket", a_.socket});
    return testing::RunCommand(RDMACTL_BINARY, args, out);
  }

  // A channel from A's app to B's echo service, retried while A's session
  // to B comes up.
  StatusOr<std::unique_ptr<Channel>> ConnectToEcho() { return pair_.ConnectAB(echo::kService); }

  std::string Logs() const { return pair_.Logs(); }

  testing::DaemonPair pair_;
  testing::DaemonNode& a_ = pair_.a();
  testing::DaemonNode& b_ = pair_.b();
  Client* client_ = nullptr;
};

TEST_F(EchoTest, ConnectReportsTcpAndWhy) {
  StartBoth();
  std::string out;
  ASSERT_EQ(Rdmactl({"connect", BAddress()}, &out), 0) << out << Logs();
  EXPECT_TRUE(Contains(out, "connected to " + BAddress() + " (rdmad.echo): TCP, channel 0x"))
      << out;
  EXPECT_FALSE(Contains(out, "  why         -\n")) << out;  // a reason is given
  EXPECT_TRUE(Contains(out, "  local       127.0.0.1:")) << out;
  EXPECT_TRUE(Contains(out, "  peer        127.0.0.1:")) << out;
  EXPECT_TRUE(Contains(out, "  handshake   ")) << out;
  EXPECT_TRUE(Contains(out, "  round trip  ")) << out;

  ASSERT_EQ(Rdmactl({"--json", "connect", "B", "--tcp"}, &out), 0) << out;
  Json json = Json::parse(out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded()) << out;
  EXPECT_EQ(json["channel"]["transport"], "TCP");
  EXPECT_EQ(json["channel"]["service"], "rdmad.echo");
  EXPECT_EQ(json["channel"]["peer"], "B");
  EXPECT_FALSE(json["channel"]["transport_reason"].get<std::string>().empty()) << out;
  EXPECT_GT(json["round_trip_us"].get<double>(), 0);
  EXPECT_EQ(json["size"], 64);
}

TEST_F(EchoTest, PingCountsAndPercentiles) {
  StartBoth();
  std::string out;
  ASSERT_EQ(Rdmactl({"ping", "B", "-c", "20", "-s", "4096", "-i", "0"}, &out), 0) << out << Logs();
  EXPECT_TRUE(Contains(out, "PING B (rdmad.echo): 4096 bytes over TCP (")) << out;
  EXPECT_TRUE(Contains(out, "4096 bytes from B (TCP): seq=20 time=")) << out;
  EXPECT_TRUE(Contains(out, "20 sent, 20 received, 0 lost (0%)")) << out;
  EXPECT_TRUE(Contains(out, "rtt min/avg/p50/p99/max = ")) << out;

  ASSERT_EQ(Rdmactl({"--json", "ping", BAddress(), "-c", "20", "-s", "4096", "-i", "0"}, &out), 0)
      << out;
  Json json = Json::parse(out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded()) << out;
  EXPECT_EQ(json["sent"], 20);
  EXPECT_EQ(json["received"], 20);
  EXPECT_EQ(json["lost"], 0);
  EXPECT_EQ(json["size"], 4096);
  EXPECT_EQ(json["samples_us"].size(), 20u);
  const Json& rtt = json["rtt_us"];
  EXPECT_GT(rtt["min"].get<double>(), 0) << out;
  EXPECT_LE(rtt["min"].get<double>(), rtt["p50"].get<double>()) << out;
  EXPECT_LE(rtt["p50"].get<double>(), rtt["p99"].get<double>()) << out;
  EXPECT_LE(rtt["p99"].get<double>(), rtt["max"].get<double>()) << out;
  EXPECT_EQ(json["channel"]["transport"], "TCP");
}

TEST_F(EchoTest, BenchKvTimesBatchesToTheirNotification) {
  StartBoth();
  std::string out;
  ASSERT_EQ(Rdmactl({"--json", "bench", "B", "--test", "kv", "--blocks", "16", "--size", "4K",
                     "--iters", "5"},
                    &out),
            0)
      << out << Logs();
  Json json = Json::parse(out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded()) << out;
  EXPECT_EQ(json["test"], "kv");
  EXPECT_EQ(json["blocks"], 16);
  ASSERT_EQ(json["results"].size(), 1u) << out;
  const Json& r = json["results"][0];
  EXPECT_EQ(r["size"], 4096);
  EXPECT_EQ(r["iters"], 5);
  EXPECT_EQ(r["bytes"], 5 * 16 * 4096);
  EXPECT_GT(r["bw_avg_mbps"].get<double>(), 0) << out;
  EXPECT_GT(r["batch_us"]["min"].get<double>(), 0) << out;
  EXPECT_LE(r["batch_us"]["min"].get<double>(), r["batch_us"]["max"].get<double>()) << out;

  ASSERT_EQ(Rdmactl({"bench", "B", "--test", "kv", "--blocks", "4", "--iters", "2"}, &out), 0)
      << out;
  EXPECT_TRUE(Contains(out, "4 writes per batch")) << out;
  EXPECT_TRUE(Contains(out, "#batches")) << out;
}

TEST_F(EchoTest, DisabledEchoIsNoSuchService) {
  StartBoth("[echo]\nenabled = false\n");
  EXPECT_TRUE(testing::DaemonPair::WaitForLog(b_, "echo service off: echo.enabled = false"));
  std::string out;
  EXPECT_EQ(Rdmactl({"connect", "B"}, &out), 1) << out;
  EXPECT_TRUE(Contains(out, "rdmactl connect: no such service: no service rdmad.echo on ")) << out;
  EXPECT_TRUE(Contains(out, "is echo.enabled false on B?")) << out;
  EXPECT_EQ(Rdmactl({"ping", "nobody"}, &out), 1) << out;
  EXPECT_TRUE(Contains(out, "rdmactl ping: unknown peer nobody")) << out;
}

TEST_F(EchoTest, MalformedHeaderGetsAnErrorAckAndTheServiceGoesOn) {
  StartBoth();
  auto channel = ConnectToEcho();
  ASSERT_TRUE(channel.ok()) << channel.status().ToString() << "\n" << Logs();
  std::string junk = "not a header";
  ASSERT_TRUE((*channel)->Send(junk.data(), junk.size()).ok());
  auto reply = (*channel)->Recv(seconds(10));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  auto ack = echo::DecodeAck(reply->data(), reply->size());
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  EXPECT_EQ(ack->status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(ack->status.message(), "bad magic")) << ack->status.message();
  EXPECT_EQ((*channel)->Recv(seconds(10)).status().code(), StatusCode::kUnavailable);

  std::string out;
  EXPECT_EQ(Rdmactl({"ping", "B", "-c", "3", "-i", "0"}, &out), 0) << out << Logs();
  EXPECT_TRUE(b_.process->running());
}

TEST_F(EchoTest, RegionIsWrittenAndReadBack) {
  StartBoth();
  auto channel = ConnectToEcho();
  ASSERT_TRUE(channel.ok()) << channel.status().ToString() << "\n" << Logs();
  Channel& c = **channel;
  constexpr size_t kBytes = 1 << 20;
  auto ack = echo::Handshake(c, {echo::kVersion, echo::Mode::kRegion, kBytes}, seconds(10));
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  auto remote = RegionDescriptor::Parse(ack->data(), ack->size());
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  EXPECT_EQ(remote->length, kBytes);
  std::vector<uint8_t> local = echo::PatternPayload(42, kBytes);
  const std::vector<uint8_t> want = local;
  auto mine = c.RegisterMemory(local.data(), local.size());
  ASSERT_TRUE(mine.ok()) << mine.status().ToString();
  ASSERT_TRUE(c.Write(**mine, 0, *remote, 0, kBytes).ok());
  std::fill(local.begin(), local.end(), 0);
  ASSERT_TRUE(c.Read(**mine, 0, *remote, 0, kBytes).ok());
  EXPECT_EQ(local, want);

  auto big = ConnectToEcho();
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  auto refused = echo::Handshake(
      **big, {echo::kVersion, echo::Mode::kRegion, echo::kMaxRegionBytes + 1}, seconds(10));
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(refused.status().message(), "cap of 1073741824 bytes"))
      << refused.status().message();
}

TEST_F(EchoTest, StopsCleanlyWithChannelsOpen) {
  StartBoth();
  auto idle = ConnectToEcho();
  ASSERT_TRUE(idle.ok()) << idle.status().ToString() << "\n" << Logs();
  ASSERT_TRUE(echo::Handshake(**idle, {echo::kVersion, echo::Mode::kEcho, 0}, seconds(10)).ok());
  b_.process->Signal(SIGTERM);
  auto code = b_.process->WaitExit(seconds(5));
  ASSERT_TRUE(code.has_value()) << "rdmad still running 5 s after SIGTERM\n" << b_.process->log();
  EXPECT_EQ(*code, 0) << b_.process->log();
  EXPECT_TRUE(Contains(b_.process->log(), "echo service stopped (open channels closed: 1)"))
      << b_.process->log();
  EXPECT_EQ((*idle)->Recv(seconds(5)).status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace rdmad

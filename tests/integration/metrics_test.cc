// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The daemon's /metrics (metrics.enabled) between two real daemons on
// loopback: a scrape over HTTP shows the peer session, a channel the test
// opened to B's echo service (and the Connect's duration), a Connect to a
// service nobody serves as a handshake failure, and the process's own
// figures, and Debian's
// promtool accepts the output; a real Prometheus server scrapes A and a
// query over its HTTP API sees the channel; a port already taken stops the
// daemon with the address named; without metrics.enabled nothing listens.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "common/echo_protocol.h"
#include "gtest/gtest.h"
#include "tests/integration/daemon_pair.h"
#include "tests/integration/http_get.h"

namespace rdmad {
namespace {

using std::chrono::seconds;

class MetricsTest : public ::testing::Test {
 protected:
  Status StartWithMetrics(int port) {
    port_ = port;
    return pair_.Start("[metrics]\nenabled = true\nport = " + std::to_string(port) + "\n");
  }
  std::string Logs() const { return pair_.Logs(); }

  testing::DaemonPair pair_;
  testing::TempDir dir_;
  int port_ = 0;
};

TEST_F(MetricsTest, AScrapeShowsPeersChannelsAndTheProcessAndPromtoolAcceptsIt) {
  ASSERT_TRUE(StartWithMetrics(testing::FreeLoopbackPort()).ok()) << Logs();
  ASSERT_TRUE(testing::DaemonPair::WaitForLog(
      pair_.a(), "serving Prometheus metrics on http://127.0.0.1:" + std::to_string(port_)))
      << Logs();
  auto channel = pair_.ConnectAB(echo::kService);
  ASSERT_TRUE(channel.ok()) << channel.status().ToString() << Logs();
  auto nobody = pair_.a().client->Connect(pair_.BAddress(), "no.such.service");
  ASSERT_EQ(nobody.status().code(), StatusCode::kNotFound) << nobody.status().ToString();

  std::string text = HttpGet(port_, "/metrics");
  ASSERT_FALSE(text.empty()) << "nothing answered on " << port_ << Logs();
  EXPECT_TRUE(Contains(text, "rdmad_build_info{version=\"")) << text;
  EXPECT_TRUE(Contains(text, "rdmad_peer_up{peer=\"B\"} 1\n")) << text;
  EXPECT_TRUE(Contains(text, "rdmad_peer_sessions{state=\"up\"} 1\n")) << text;
  EXPECT_TRUE(
      Contains(text, "rdmad_channels{peer=\"B\",state=\"established\",transport=\"tcp\"} 1\n"))
      << text;
  EXPECT_TRUE(Contains(text, "\nprocess_open_fds ")) << text;
  EXPECT_TRUE(Contains(text, "rdmad_connect_duration_seconds_bucket{le=\"+Inf\"} 1\n")) << text;
  EXPECT_TRUE(
      Contains(text, "rdmad_handshake_failures_total{reason=\"NOT_FOUND\",side=\"initiator\"} 1\n"))
      << text;
  EXPECT_TRUE(Contains(text, "# TYPE process_cpu_seconds_total counter")) << text;
  EXPECT_FALSE(Contains(text, std::to_string((*channel)->info().id))) << "a channel id as a label";

  // Debian's promtool lints the exposition.
  std::string file = dir_.File("metrics.txt");
  std::ofstream(file) << text;
  std::string out;
  int rc = testing::RunCommand("/bin/sh", {"-c", "promtool check metrics < " + file}, &out);
  EXPECT_EQ(rc, 0) << out;

  (*channel)->Close();
  for (int i = 0; i < 50; ++i) {
    text = HttpGet(port_, "/metrics");
    if (!Contains(text, "state=\"established\"")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_FALSE(Contains(text, "state=\"established\"")) << "the closed channel is still counted\n"
                                                        << text;
}

TEST_F(MetricsTest, ARealPrometheusScrapesTheDaemonAndAQuerySeesTheChannel) {
  ASSERT_TRUE(StartWithMetrics(testing::FreeLoopbackPort()).ok()) << Logs();
  ASSERT_TRUE(testing::DaemonPair::WaitForLog(pair_.a(), "serving Prometheus metrics")) << Logs();
  auto channel = pair_.ConnectAB(echo::kService);
  ASSERT_TRUE(channel.ok()) << channel.status().ToString() << Logs();

  int web = testing::FreeLoopbackPort();
  std::string config = dir_.File("prometheus.yml");
  std::ofstream(config) << "global:\n  scrape_interval: 1s\n"
                        << "scrape_configs:\n  - job_name: rdmad\n    static_configs:\n"
                        << "      - targets: ['127.0.0.1:" << port_ << "']\n";
  testing::Process prometheus(
      "/usr/bin/prometheus",
      {"--config.file=" + config, "--storage.tsdb.path=" + dir_.File("tsdb"),
       "--web.listen-address=127.0.0.1:" + std::to_string(web), "--log.level=warn"},
      std::map<std::string, std::string>{}, dir_.File("prometheus.log"));
  const std::string query =
      "/api/v1/query?query=rdmad_channels%7Bstate%3D%22established%22%2Cpeer%3D%22B%22%7D";
  std::string answer;
  for (int i = 0; i < 300; ++i) {
    answer = HttpGet(web, query);
    if (Contains(answer, "\"value\":[") && Contains(answer, ",\"1\"]")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(Contains(answer, "\"job\":\"rdmad\"")) << answer << "\n" << prometheus.log();
  EXPECT_TRUE(Contains(answer, ",\"1\"]")) << "Prometheus never saw the channel: " << answer << "\n"
                                           << prometheus.log();
  answer = HttpGet(web, "/api/v1/query?query=up%7Bjob%3D%22rdmad%22%7D");
  EXPECT_TRUE(Contains(answer, ",\"1\"]")) << "the target is not up: " << answer;
}

TEST_F(MetricsTest, APortAlreadyTakenStopsTheDaemonNamingIt) {
  int taken = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(taken, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(taken, 1), 0);
  socklen_t len = sizeof(addr);
  getsockname(taken, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  Status started = StartWithMetrics(port);
  close(taken);
  ASSERT_FALSE(started.ok()) << "the daemon started on a port another process holds";
  EXPECT_TRUE(Contains(started.message() + Logs(),
                       "metrics: cannot listen on 127.0.0.1:" + std::to_string(port)))
      << started.ToString() << Logs();
}

TEST_F(MetricsTest, OffByDefault) {
  ASSERT_TRUE(pair_.Start().ok()) << Logs();
  auto channel = pair_.ConnectAB(echo::kService);
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  EXPECT_FALSE(Contains(Logs(), "serving Prometheus metrics")) << Logs();
}

}  // namespace
}  // namespace rdmad

// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Lab, two VMs with two rails each (tests/lab/channels/rails.sh, run with
// --rails 2): an application on node a opens a channel to one on node b
// through the daemons, which plan rxe1 as a further rail beside rxe0; the
// ends pair their rxe1s. A large Write and Read are striped: the bytes
// land whole, both rails carry some (the channel's count, the netdevs'
// counters and the daemon's table agree). Then a's rail-1 link goes down
// and the next Write still completes whole, without an error: the rail is
// taken out, its piece done again on rxe0. The link comes back up: so does
// the rail (a new QP pair, agreed on over rxe0), and Writes are striped
// again.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rdmad/client.h"
#include "tests/integration/two_host_support.h"

namespace rdmad {
namespace {

using lab::Env;
using lab::Pattern;
using std::chrono::seconds;

constexpr char kService[] = "lab.rails";
constexpr size_t kBytes = 8u << 20;

uint64_t TxBytes(const std::string& netdev) {
  std::ifstream in("/sys/class/net/" + netdev + "/statistics/tx_bytes");
  uint64_t v = 0;
  in >> v;
  return v;
}

class TwoHostRailsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!lab::TwoVmsTwoRails()) {
      GTEST_SKIP() << "lab, two VMs with two rails only (tests/lab/channels/rails.sh)";
    }
    auto client = Client::Open();
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
  }
  void TearDown() override {
    if (Env("LAB_NODE") == "a" && !Env("LAB_NETDEV1").empty())
      lab::SetLink(Env("LAB_NETDEV1") + " up");
  }

  void ServeOnB();
  void DriveFromA();
  ChannelSummary Row(uint64_t id) {
    auto rows = client_->ListChannels();
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    for (const ChannelSummary& r : rows.ok() ? *rows : std::vector<ChannelSummary>{}) {
      if (r.id == id) return r;
    }
    return {};
  }

  std::unique_ptr<Client> client_;
};

void TwoHostRailsTest::ServeOnB() {
  auto listener = client_->Listen(kService);
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  auto accepted = listener.value()->Accept(seconds(120));
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  Channel& c = *accepted.value();
  ASSERT_EQ(c.rails().size(), 2u) << "b's channel has no second rail";
  EXPECT_EQ(c.rails()[1].local_device, Env("LAB_DEV1"));
  std::vector<uint8_t> region_bytes(kBytes, 0);
  auto region = c.RegisterMemory(region_bytes.data(), region_bytes.size());
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  RegionDescriptor d = region.value()->descriptor();
  EXPECT_EQ(d.rail_keys.size(), 1u) << "the region is not registered on rxe1";
  std::vector<uint8_t> desc = d.Serialize();
  ASSERT_TRUE(c.Send(desc.data(), desc.size()).ok());
  auto end = c.Recv(seconds(300));
  EXPECT_FALSE(end.ok());
}

void TwoHostRailsTest::DriveFromA() {
  auto channel = lab::ConnectOnceListening(*client_, Env("LAB_PEER_IP"), kService);
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  Channel& c = *channel.value();
  ASSERT_EQ(c.info().transport, ChannelTransport::kRdma) << c.info().transport_reason;
  std::vector<ChannelRail> rails = c.rails();
  ASSERT_EQ(rails.size(), 2u);
  EXPECT_EQ(rails[0].local_device, Env("LAB_DEV"));
  EXPECT_EQ(rails[1].local_device, Env("LAB_DEV1"));
  EXPECT_EQ(rails[1].peer_device, Env("LAB_DEV1"));
  auto desc_bytes = c.Recv(seconds(60));
  ASSERT_TRUE(desc_bytes.ok()) << desc_bytes.status().ToString();
  auto remote = RegionDescriptor::Parse(desc_bytes->data(), desc_bytes->size());
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();

  std::vector<uint8_t> out = Pattern(kBytes, 7), in(kBytes, 0);
  auto out_region = c.RegisterMemory(out.data(), out.size());
  auto in_region = c.RegisterMemory(in.data(), in.size());
  ASSERT_TRUE(out_region.ok() && in_region.ok());
  const std::string net0 = Env("LAB_NETDEV"), net1 = Env("LAB_NETDEV1");
  uint64_t tx0 = TxBytes(net0), tx1 = TxBytes(net1);
  ASSERT_TRUE(c.Write(*out_region.value(), 0, *remote, 0, kBytes).ok());
  uint64_t sent0 = TxBytes(net0) - tx0, sent1 = TxBytes(net1) - tx1;
  rails = c.rails();
  std::cout << "[ rails    ] striped Write of " << kBytes << " B: " << rails[0].bytes_written
            << " B on " << rails[0].local_device << " (" << sent0 << " B out of " << net0 << "), "
            << rails[1].bytes_written << " B on " << rails[1].local_device << " (" << sent1
            << " B out of " << net1 << ")\n";
  EXPECT_EQ(rails[0].bytes_written + rails[1].bytes_written, kBytes);
  EXPECT_GE(rails[1].bytes_written, kBytes / 4);
  EXPECT_GE(rails[0].bytes_written, kBytes / 4);
  // The wires agree: each carried at least its rail's share.
  EXPECT_GE(sent0, rails[0].bytes_written);
  EXPECT_GE(sent1, rails[1].bytes_written);
  ASSERT_TRUE(c.Read(*in_region.value(), 0, *remote, 0, kBytes).ok());
  EXPECT_TRUE(in == out) << "the striped Write did not land whole";
  EXPECT_GT(c.rails()[1].bytes_read, 0u);

  // The daemon's table shows the rails with the bytes the library reported.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(c.Write(*out_region.value(), 0, *remote, 0, 256 << 10).ok());  // reports
  ChannelSummary row;
  for (int i = 0; i < 50; ++i) {
    row = Row(c.info().id);
    if (row.rails.size() == 2 && row.rails[1].bytes_read > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(row.rails.size(), 2u);
  EXPECT_EQ(row.rails[1].local_device, Env("LAB_DEV1"));
  EXPECT_EQ(row.rails[1].peer_device, Env("LAB_DEV1"));
  EXPECT_GT(row.rails[1].bytes_written, 0u);
  EXPECT_GT(row.rails[1].bytes_read, 0u);

  // The daemon's rail-changed events, from here on.
  auto watch = client_->WatchEvents({EventKind::kRailChanged});
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  std::mutex events_mu;
  std::vector<std::string> events;
  std::thread watcher([&] {
    Event e;
    while ((*watch)->Next(&e)) {
      std::lock_guard lock(events_mu);
      events.push_back(e.message);
    }
  });
  auto seen = [&](const std::string& what) {
    for (int i = 0; i < 50; ++i) {
      {
        std::lock_guard lock(events_mu);
        for (const std::string& m : events) {
          if (m.find(what) != std::string::npos) return true;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  };
  const std::string rail1 = "rail " + Env("LAB_DEV1") + " -> " + Env("LAB_DEV1");

  // Rail 1's link goes down on a: the next Write completes whole anyway.
  std::vector<uint8_t> again = Pattern(kBytes, 8);
  auto again_region = c.RegisterMemory(again.data(), again.size());
  ASSERT_TRUE(again_region.ok());
  lab::SetLink(net1 + " down");
  auto t0 = std::chrono::steady_clock::now();
  Status written = c.Write(*again_region.value(), 0, *remote, 0, kBytes);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(written.ok()) << written.ToString();
  rails = c.rails();
  std::cout << "[ rails    ] " << net1 << " down: the Write completed in " << ms << " ms; rail "
            << rails[1].local_device << " up=" << rails[1].up << " (" << rails[1].reason << ")\n";
  EXPECT_FALSE(rails[1].up);
  EXPECT_FALSE(rails[1].reason.empty());
  EXPECT_TRUE(seen(rail1 + " out: ")) << "no rail-changed event for the rail out";
  ASSERT_TRUE(c.Read(*in_region.value(), 0, *remote, 0, kBytes).ok());
  EXPECT_TRUE(in == again) << "the Write over a failed rail did not land whole";
  EXPECT_TRUE(c.status().ok()) << c.status().ToString();

  // The link comes back: so does the rail, offered to b and answered, and
  // the next Write is striped over both again.
  lab::SetLink(net1 + " up");
  auto back_from = std::chrono::steady_clock::now();
  bool back = false;
  for (int i = 0; i < 100 && !back; ++i) {
    ASSERT_TRUE(c.Write(*out_region.value(), 0, *remote, 0, 256 << 10).ok());
    back = c.rails()[1].up;
    if (!back) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  double back_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - back_from)
          .count();
  std::cout << "[ rails    ] " << net1 << " up: rail " << rails[1].local_device << " back after "
            << back_ms << " ms\n";
  ASSERT_TRUE(back) << "rail 1 did not come back: " << c.rails()[1].reason;
  EXPECT_TRUE(seen(rail1 + " is back")) << "no rail-changed event for the rail back";
  (*watch)->Cancel();
  watcher.join();
  uint64_t before = c.rails()[1].bytes_written;
  std::vector<uint8_t> third = Pattern(kBytes, 9);
  auto third_region = c.RegisterMemory(third.data(), third.size());
  ASSERT_TRUE(third_region.ok());
  ASSERT_TRUE(c.Write(*third_region.value(), 0, *remote, 0, kBytes).ok());
  EXPECT_GE(c.rails()[1].bytes_written - before, kBytes / 4) << "the rail is back but idle";
  ASSERT_TRUE(c.Read(*in_region.value(), 0, *remote, 0, kBytes).ok());
  EXPECT_TRUE(in == third) << "the Write after the rail came back did not land whole";
  c.Close();
}

TEST_F(TwoHostRailsTest, StripesOverBothRailsAndSurvivesALinkDown) {
  if (Env("LAB_NODE") == "b") {
    ServeOnB();
  } else {
    DriveFromA();
  }
}

}  // namespace
}  // namespace rdmad

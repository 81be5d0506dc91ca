// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The broker and a channel's rails: the plan carries them, the record
// shows the pairs both endpoints name, and the owner reports their bytes.

#include "daemon/broker/broker_test_fixture.h"

namespace rdmad::testing {
namespace {

internal::RdmaEndpoint RdmaEnd(const std::string& device, uint8_t last_octet) {
  internal::RdmaEndpoint e;
  e.device = device;
  e.qpn = 0x11;
  e.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, last_octet};
  e.gid_index = 1;
  e.gid_type = "RoCE v2";
  e.active_mtu = 1024;
  e.qp.type = "RC";
  e.qp.hop_limit = 64;
  e.qp.send_depth = 16;
  e.qp.recv_depth = 16;
  e.qp.qps_per_channel = 1;
  e.ring_address = 0x1000;
  e.ring_slots = 16;
  e.slot_size = 4096;
  e.credits = 16;
  return e;
}

internal::RailEndpoint RailEnd(const std::string& device, uint8_t last_octet, uint32_t pair) {
  internal::RailEndpoint r;
  r.device = device;
  r.qpn = 0x22;
  r.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, last_octet};
  r.gid_type = "RoCE v2";
  r.active_mtu = 1024;
  r.device_tag = 9;
  r.pair = pair;
  return r;
}

TEST(BrokerRailsTest, ThePlanCarriesTheRailsAndTheRecordThePairs) {
  Fixture f;
  PathDecision path;
  path.device = "rxe0";
  path.port = 1;
  path.gid_index = 1;
  f.path = path;
  RailPathDecision further;
  further.device = "rxe1";
  f.rails.weight = 25;
  f.rails.further = {further};
  auto planned = f.broker.PlanChannel(kApp, "B", "svc", false);
  ASSERT_TRUE(planned.ok()) << planned.status().ToString();
  ASSERT_TRUE(planned->plan.path.has_value());
  EXPECT_EQ(f.rails_pid, kApp.pid);  // ordered by the caller's rail plan
  EXPECT_EQ(planned->plan.rails.weight, 25u);
  ASSERT_EQ(planned->plan.rails.further.size(), 1u);
  EXPECT_EQ(planned->plan.rails.further[0].device, "rxe1");

  // The initiator offers two further rails; the acceptor pairs one of its
  // own with the second.
  ChannelEndpoint mine;
  mine.rdma = RdmaEnd("rxe0", 1);
  mine.rdma->rails = {RailEnd("rxe1", 129, 0), RailEnd("rxe2", 200, 0)};
  f.link->open_answer = [](const OpenChannelCall&) -> StatusOr<ChannelEndpoint> {
    ChannelEndpoint theirs;
    theirs.rdma = RdmaEnd("mlx5_0", 2);
    theirs.rdma->rails = {RailEnd("mlx5_1", 201, 1)};
    return theirs;
  };
  uint64_t id = planned->channel_ids[0];
  auto reply = f.broker.Connect(kApp, id, mine);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ChannelRecord r = f.Record(id);
  ASSERT_EQ(r.rails.size(), 2u);
  EXPECT_EQ(r.rails[0].device, "rxe0");
  EXPECT_EQ(r.rails[0].peer_device, "mlx5_0");
  EXPECT_EQ(r.rails[1].device, "rxe2");
  EXPECT_EQ(r.rails[1].peer_device, "mlx5_1");

  // The owner reports; the record keeps the devices and takes the rest.
  std::vector<ChannelRailRecord> report(2);
  report[0].device = "forged";
  report[0].bytes_written = 1 << 20;
  report[1].bytes_read = 4096;
  report[1].up = false;
  report[1].reason = std::string(5000, 'x');
  ASSERT_TRUE(f.broker.ReportRails(kApp, id, report).ok());
  r = f.Record(id);
  EXPECT_EQ(r.rails[0].device, "rxe0");
  EXPECT_EQ(r.rails[0].bytes_written, 1u << 20);
  EXPECT_EQ(r.rails[1].bytes_read, 4096u);
  EXPECT_FALSE(r.rails[1].up);
  EXPECT_EQ(r.rails[1].reason.size(), internal::kMaxReasonLength);

  // A rail going out or coming back is a change (for the event bus); the
  // same state again is none.
  std::vector<std::string> changes;
  ASSERT_TRUE(f.broker.ReportRails(kApp, id, report, &changes).ok());
  EXPECT_TRUE(changes.empty());
  report[1].up = true;
  ASSERT_TRUE(f.broker.ReportRails(kApp, id, report, &changes).ok());
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_NE(changes[0].find("rail rxe2 -> mlx5_1 is back"), std::string::npos) << changes[0];
  report[1].up = false;
  report[1].reason = "port 1 is DOWN";
  changes.clear();
  ASSERT_TRUE(f.broker.ReportRails(kApp, id, report, &changes).ok());
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_NE(changes[0].find("rail rxe2 -> mlx5_1 out: port 1 is DOWN"), std::string::npos)
      << changes[0];

  // Another number of rails, another uid, another channel: refused.
  report.pop_back();
  EXPECT_EQ(f.broker.ReportRails(kApp, id, report).code(), StatusCode::kInvalidArgument);
  report.resize(2);
  EXPECT_EQ(f.broker.ReportRails(Caller::User(1001, 99), id, report).code(), StatusCode::kNotFound);
  EXPECT_EQ(f.broker.ReportRails(kApp, id + 1, report).code(), StatusCode::kNotFound);
}

TEST(BrokerRailsTest, ATcpChannelHasNoRails) {
  Fixture f;
  uint64_t id = f.Established();
  EXPECT_TRUE(f.Record(id).rails.empty());
  EXPECT_EQ(f.broker.ReportRails(kApp, id, {ChannelRailRecord{}}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(f.broker.ReportRails(kApp, id, {}).ok());
}

}  // namespace
}  // namespace rdmad::testing

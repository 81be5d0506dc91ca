// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The daemon fills every field of the API's Device, Port, Gid, Path and
// QpAttributes: a field the proto gains and ToProto does not set fails
// here (the client's side is client/rdmactl/json_fields_test.cc).

#include "daemon/rpc/proto_convert.h"

#include <google/protobuf/descriptor.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

namespace pb = google::protobuf;

// The fields of m (and of the messages in it) left at their defaults.
void Unset(const pb::Message& m, const std::string& prefix, std::vector<std::string>* out) {
  const pb::Reflection* r = m.GetReflection();
  const pb::Descriptor* d = m.GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* fd = d->field(i);
    std::string name = prefix + fd->name();
    if (fd->is_repeated()) {
      if (r->FieldSize(m, fd) == 0) out->push_back(name);
      for (int k = 0; k < r->FieldSize(m, fd) && fd->cpp_type() == fd->CPPTYPE_MESSAGE; ++k) {
        Unset(r->GetRepeatedMessage(m, fd, k), name + "[" + std::to_string(k) + "].", out);
      }
    } else if (fd->cpp_type() == fd->CPPTYPE_MESSAGE) {
      if (!r->HasField(m, fd))
        out->push_back(name);
      else
        Unset(r->GetMessage(m, fd), name + ".", out);
    } else if (!r->HasField(m, fd)) {  // proto3 scalars: set when not the default
      out->push_back(name);
    }
  }
}

DeviceInfo FullDevice() {
  GidEntry g{3, "fe80:0000:0000:0000:5054:00ff:fe12:3456", GidType::kRoceV2, "eth1", "192.0.2.1"};
  PortInfo p;
  p.port = 1;
  p.state = 4;
  p.state_name = "ACTIVE";
  p.phys_state = 5;
  p.phys_state_name = "LinkUp";
  p.link_layer = LinkLayer::kEthernet;
  p.transport = Transport::kRoceV2;
  p.rate_gbps = 100;
  p.rate = "100 Gb/sec (4X EDR)";
  p.max_mtu = 4096;
  p.active_mtu = 1024;
  p.lid = 7;
  p.sm_lid = 1;
  p.netdev = "eth1";
  p.netdev_mtu = 1500;
  p.gids = {g};
  DeviceInfo d;
  d.name = "mlx5_0";
  d.node_guid = "0c42:a103:0065:e8f4";
  d.vendor_id = 0x15b3;
  d.vendor_part_id = 4123;
  d.vendor = "Mellanox/NVIDIA";
  d.driver = "mlx5_core";
  d.fw_ver = "20.31.1014";
  d.hw_rev = "0";
  d.node_type = NodeType::kCa;
  d.numa_node = 1;
  d.pci_address = "0000:3b:00.0";
  d.parent_netdev = "eth1";
  d.max_qp = 1000;
  d.max_mr = 1000;
  d.max_cq = 1000;
  d.relaxed_ordering = true;
  d.dmabuf = true;
  d.ports = {p};
  return d;
}

TEST(ProtoConvertTest, EveryFieldOfTheApisDeviceIsFilled) {
  v1::Device out;
  ToProto(FullDevice(), &out);
  std::vector<std::string> unset;
  Unset(out, "Device.", &unset);
  EXPECT_TRUE(unset.empty()) << "not filled by ToProto: " << ::testing::PrintToString(unset);
  EXPECT_EQ(out.ports(0).gids(0).type(), "RoCE v2");
  EXPECT_EQ(out.ports(0).transport(), "RoCE v2");
  EXPECT_EQ(out.node_type(), "CA");
}

TEST(ProtoConvertTest, EveryFieldOfTheApisPathIsFilled) {
  PathDecision p;
  p.device = "mlx5_0";
  p.port = 1;
  p.transport = Transport::kRoceV2;
  p.gid_index = 3;
  p.gid = "fe80:0000:0000:0000:5054:00ff:fe12:3456";
  p.gid_type = GidType::kRoceV2;
  p.source_ip = "192.0.2.1";
  p.netdev = "eth1";
  p.lid = 7;
  p.mtu = MtuDecision{1024, 1024, 4096, 4096, "1024: local active MTU 1024"};
  p.qp.traffic_class = 106;
  p.qp.service_level = 3;
  p.reasons = {"device mlx5_0: the only one"};
  v1::Path out;
  ToProto(p, &out);
  std::vector<std::string> unset;
  Unset(out, "Path.", &unset);
  EXPECT_TRUE(unset.empty()) << "not filled by ToProto: " << ::testing::PrintToString(unset);
}

}  // namespace
}  // namespace rdmad

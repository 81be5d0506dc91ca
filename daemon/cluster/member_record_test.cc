// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/cluster/member_record.h"

#include <gtest/gtest.h>

namespace rdmad {
namespace {

MemberRecord Sample() {
  MemberRecord r;
  r.name = "node-a";
  r.peer_address = "192.0.2.1:7581";
  r.version = "0.1.0";
  r.protocol = 1;
  r.ports = {{"rxe0", 1, "RoCE v2", "ACTIVE", 1024}};
  r.services = {"kv", "rdmad.echo"};
  return r;
}

TEST(MemberRecordTest, RoundTrips) {
  auto decoded = DecodeMemberRecord(EncodeMemberRecord(Sample()));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, Sample());
  EXPECT_EQ(MemberKey("/rdmad/v1/", "node-a"), "/rdmad/v1/members/node-a");
}

TEST(MemberRecordTest, GarbageIsRefusedWithWhatIsWrong) {
  auto message = [](std::string_view text) {
    auto r = DecodeMemberRecord(text);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << text;
    return r.status().message();
  };
  EXPECT_EQ(message("not json"), "member record: not a JSON object");
  EXPECT_EQ(message("[1, 2]"), "member record: not a JSON object");
  EXPECT_EQ(message(R"({"name": "a"})"), "member record: no \"peer_address\"");
  EXPECT_EQ(message(R"({"name": 5, "peer_address": "x:1", "version": "", "protocol": 1})"),
            "member record: \"name\" has the wrong type");
  std::string good = EncodeMemberRecord(Sample());
  std::string bad_name = good;
  bad_name.replace(bad_name.find("node-a"), 6, "no de");
  EXPECT_EQ(message(bad_name), "member record: a bad name");
  std::string huge = R"({"name": ")" + std::string(kMaxMemberRecordBytes, 'a') + "\"}";
  EXPECT_NE(message(huge).find("more than"), std::string::npos);
  std::string bad_service = good;
  bad_service.replace(bad_service.find("\"kv\""), 4, "17");
  EXPECT_EQ(message(bad_service), "member record node-a: a bad service name");
}

// A writer of the etcd prefix cannot make a member shadow an address.
TEST(MemberRecordTest, ANameThatIsAnAddressIsRefused) {
  for (const char* address : {"192.0.2.7", "10.0.0.1", "127.1", "0x7f000001"}) {
    MemberRecord r = Sample();
    r.name = address;
    auto decoded = DecodeMemberRecord(EncodeMemberRecord(r));
    EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument) << address;
    EXPECT_NE(decoded.status().message().find("is an IP address"), std::string::npos)
        << decoded.status().message();
  }
  MemberRecord dotted = Sample();
  dotted.name = "node-1.example.net";  // a DNS name with digits and dots is fine
  EXPECT_TRUE(DecodeMemberRecord(EncodeMemberRecord(dotted)).ok());
}

}  // namespace
}  // namespace rdmad

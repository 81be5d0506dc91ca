// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// One definition per datum: each public record's field list (rdmad/fields.h)
// against the local API's message of the same name. A field the proto gains
// and a list lacks fails here; so does one the list names that the proto
// does not have. Then every field's trip, message -> record (the library's
// ReadRecord) -> rdmactl's JSON, is checked against protobuf's own JSON
// printing of the same message.

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/json_util.h>

#include <set>
#include <string>

#include "client/rdmactl/json.h"
#include "client/src/record_reader.h"
#include "gtest/gtest.h"
#include "rdmad/v1/rdmad.pb.h"

namespace rdmactl {
namespace {

namespace pb = google::protobuf;

template <class Record>
const pb::Descriptor* MessageOf() {
  return pb::DescriptorPool::generated_pool()->FindMessageTypeByName(
      std::string("rdmad.v1.") + rdmad::RecordFields<Record>::kName);
}

template <class Record>
void ExpectListMatchesMessage() {
  SCOPED_TRACE(rdmad::RecordFields<Record>::kName);
  const pb::Descriptor* d = MessageOf<Record>();
  ASSERT_NE(d, nullptr) << "no message of that name in rdmad.proto";
  std::set<std::string> listed;
  Record record;
  rdmad::ForEachField(record, [&](const char* name, const auto& value) {
    using T = std::remove_cvref_t<decltype(value)>;
    EXPECT_TRUE(listed.insert(name).second) << name << " listed twice";
    const pb::FieldDescriptor* fd = d->FindFieldByName(name);
    if (fd == nullptr) {
      ADD_FAILURE() << "the list names " << name << ", which the message lacks";
    } else {
      EXPECT_TRUE(rdmad::internal::FieldFits<T>(*fd)) << name << ": another type in the message";
    }
  });
  for (int i = 0; i < d->field_count(); ++i) {
    EXPECT_TRUE(listed.count(d->field(i)->name()))
        << d->full_name() << "." << d->field(i)->name() << " is missing from its field list";
  }
}

TEST(RecordFieldsTest, EveryListNamesEveryFieldOfItsMessageAndNothingElse) {
  ExpectListMatchesMessage<rdmad::Gid>();
  ExpectListMatchesMessage<rdmad::Port>();
  ExpectListMatchesMessage<rdmad::Device>();
  ExpectListMatchesMessage<rdmad::QpAttributes>();
  ExpectListMatchesMessage<rdmad::Path>();
  ExpectListMatchesMessage<rdmad::DaemonStatus>();
  ExpectListMatchesMessage<rdmad::PoolSummary>();
  ExpectListMatchesMessage<rdmad::ClusterMemberPort>();
  ExpectListMatchesMessage<rdmad::ClusterMember>();
  ExpectListMatchesMessage<rdmad::ClusterView>();
  ExpectListMatchesMessage<rdmad::PeerInfo>();
  ExpectListMatchesMessage<rdmad::Event>();
  ExpectListMatchesMessage<rdmad::ChannelSummary>();
  ExpectListMatchesMessage<rdmad::ChannelTraffic>();
  ExpectListMatchesMessage<rdmad::TopologyPlace>();
  ExpectListMatchesMessage<rdmad::TopologyNic>();
  ExpectListMatchesMessage<rdmad::TopologyGpu>();
  ExpectListMatchesMessage<rdmad::HostTopology>();
  ExpectListMatchesMessage<rdmad::PlannedRail>();
  ExpectListMatchesMessage<rdmad::RailPlan>();
  ExpectListMatchesMessage<rdmad::RailAssignment>();
}

// Every field of m set to a value of its own (repeated fields: two).
void Fill(pb::Message* m, int* next) {
  const pb::Reflection* r = m->GetReflection();
  const pb::Descriptor* d = m->GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* fd = d->field(i);
    for (int k = 0; k < (fd->is_repeated() ? 2 : 1); ++k) {
      int v = ++*next;
      switch (fd->cpp_type()) {
        case pb::FieldDescriptor::CPPTYPE_STRING: {
          std::string s = "value-" + std::to_string(v);
          fd->is_repeated() ? r->AddString(m, fd, s) : r->SetString(m, fd, s);
          break;
        }
        case pb::FieldDescriptor::CPPTYPE_UINT32:
          fd->is_repeated() ? r->AddUInt32(m, fd, v) : r->SetUInt32(m, fd, v);
          break;
        case pb::FieldDescriptor::CPPTYPE_INT32:
          fd->is_repeated() ? r->AddInt32(m, fd, -v) : r->SetInt32(m, fd, -v);
          break;
        case pb::FieldDescriptor::CPPTYPE_UINT64:
          fd->is_repeated() ? r->AddUInt64(m, fd, v) : r->SetUInt64(m, fd, v);
          break;
        case pb::FieldDescriptor::CPPTYPE_INT64:
          fd->is_repeated() ? r->AddInt64(m, fd, -v) : r->SetInt64(m, fd, -v);
          break;
        case pb::FieldDescriptor::CPPTYPE_DOUBLE:
          fd->is_repeated() ? r->AddDouble(m, fd, v + 0.5) : r->SetDouble(m, fd, v + 0.5);
          break;
        case pb::FieldDescriptor::CPPTYPE_BOOL:
          fd->is_repeated() ? r->AddBool(m, fd, true) : r->SetBool(m, fd, true);
          break;
        case pb::FieldDescriptor::CPPTYPE_ENUM: {  // its last value
          int last = fd->enum_type()->value(fd->enum_type()->value_count() - 1)->number();
          fd->is_repeated() ? r->AddEnumValue(m, fd, last) : r->SetEnumValue(m, fd, last);
          break;
        }
        case pb::FieldDescriptor::CPPTYPE_MESSAGE:
          Fill(fd->is_repeated() ? r->AddMessage(m, fd) : r->MutableMessage(m, fd), next);
          break;
        default: ADD_FAILURE() << fd->full_name() << ": a type this test does not fill";
      }
    }
  }
}

// Integers as text: protobuf's JSON prints 64-bit ones as strings.
void Normalize(nlohmann::json& j) {
  if (j.is_number_integer()) {
    j = j.dump();
  } else if (j.is_structured()) {
    for (auto& e : j) Normalize(e);
  }
}

template <class Record, class Message>
void ExpectEveryFieldArrives() {
  SCOPED_TRACE(rdmad::RecordFields<Record>::kName);
  Message message;
  int next = 0;
  Fill(&message, &next);
  Record record;
  rdmad::internal::ReadRecord(message, &record);
  std::string proto_json;
  pb::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  ASSERT_TRUE(pb::util::MessageToJsonString(message, &proto_json, options).ok());
  // Compared as unordered objects: the same keys with the same values.
  nlohmann::json ours = nlohmann::json::parse(RecordJson(record).dump());
  nlohmann::json theirs = nlohmann::json::parse(proto_json);
  Normalize(ours);
  Normalize(theirs);
  // An enum is shown by its name for people (ApiName), not protobuf's:
  // compared as numbers here, then left out of the JSON comparison.
  rdmad::ForEachField(record, [&](const char* name, const auto& value) {
    using T = std::remove_cvref_t<decltype(value)>;
    if constexpr (std::is_enum_v<T>) {
      const pb::FieldDescriptor* fd = message.GetDescriptor()->FindFieldByName(name);
      EXPECT_EQ(int(value), message.GetReflection()->GetEnumValue(message, fd)) << name;
      EXPECT_EQ(ours[name], std::string(ApiName(value))) << name;
      ours.erase(name);
      theirs.erase(name);
    }
  });
  EXPECT_EQ(ours, theirs) << "ours:   " << ours.dump() << "\nproto's: " << theirs.dump();
}

TEST(RecordFieldsTest, EveryFieldGoesFromTheMessageToTheJsonUnchanged) {
  ExpectEveryFieldArrives<rdmad::Gid, rdmad::v1::Gid>();
  ExpectEveryFieldArrives<rdmad::Port, rdmad::v1::Port>();
  ExpectEveryFieldArrives<rdmad::Device, rdmad::v1::Device>();
  ExpectEveryFieldArrives<rdmad::QpAttributes, rdmad::v1::QpAttributes>();
  ExpectEveryFieldArrives<rdmad::Path, rdmad::v1::Path>();
  ExpectEveryFieldArrives<rdmad::PoolSummary, rdmad::v1::PoolRow>();
  ExpectEveryFieldArrives<rdmad::ClusterView, rdmad::v1::ListMembersResponse>();
  ExpectEveryFieldArrives<rdmad::PeerInfo, rdmad::v1::Peer>();
  ExpectEveryFieldArrives<rdmad::Event, rdmad::v1::Event>();
  ExpectEveryFieldArrives<rdmad::ChannelSummary, rdmad::v1::ChannelEntry>();
  ExpectEveryFieldArrives<rdmad::HostTopology, rdmad::v1::GetTopologyResponse>();
  ExpectEveryFieldArrives<rdmad::RailPlan, rdmad::v1::RailPlan>();
}

TEST(RecordFieldsTest, AnUnsetOptionalFieldReadsAsNoneAndShowsAsNull) {
  rdmad::v1::ChannelEntry message;
  message.set_id(7);
  message.set_owner_pid(42);
  rdmad::ChannelSummary c = rdmad::internal::ReadAs<rdmad::ChannelSummary>(message);
  EXPECT_EQ(c.id, 7u);
  EXPECT_EQ(c.owner_pid, 42u);
  EXPECT_FALSE(c.owner_uid.has_value());
  EXPECT_TRUE(RecordJson(c)["owner_uid"].is_null());
  message.set_owner_uid(0);  // root: set, though its value is the default
  c = rdmad::internal::ReadAs<rdmad::ChannelSummary>(message);
  ASSERT_TRUE(c.owner_uid.has_value());
  EXPECT_EQ(*c.owner_uid, 0u);
  EXPECT_EQ(RecordJson(c)["owner_uid"], 0);
}

TEST(RecordFieldsTest, TheStatusIsReadWhole) {
  rdmad::v1::GetStatusResponse message;
  int next = 0;
  Fill(&message, &next);
  rdmad::DaemonStatus s;
  rdmad::internal::ReadRecord(message, &s);
  EXPECT_EQ(s.version, message.version());
  EXPECT_EQ(s.pid, message.pid());
  EXPECT_EQ(s.config_generation, message.config_generation());
  EXPECT_EQ(s.connections_accepted, message.connections_accepted());
  EXPECT_EQ(s.cluster_members, message.cluster_members());
  EXPECT_EQ(s.cluster_error, message.cluster_error());
}

TEST(RecordFieldsTest, AMemberOfAnotherTypeThanItsFieldIsNeverRead) {
  // What keeps ReadRecord from asking reflection for the wrong type (which
  // would abort) when a list and a message disagree.
  const pb::Descriptor* port = rdmad::v1::Port::descriptor();
  EXPECT_FALSE(rdmad::internal::FieldFits<std::string>(*port->FindFieldByName("port")));
  EXPECT_FALSE(rdmad::internal::FieldFits<std::vector<uint32_t>>(*port->FindFieldByName("port")));
  EXPECT_FALSE(rdmad::internal::FieldFits<rdmad::Gid>(*port->FindFieldByName("gids")));
  EXPECT_TRUE(rdmad::internal::FieldFits<std::vector<rdmad::Gid>>(*port->FindFieldByName("gids")));
  EXPECT_TRUE(rdmad::internal::FieldFits<double>(*port->FindFieldByName("rate_gbps")));
  // An optional member only for a field that says whether it is set.
  EXPECT_FALSE(
      rdmad::internal::FieldFits<std::optional<double>>(*port->FindFieldByName("rate_gbps")));
  const pb::Descriptor* entry = rdmad::v1::ChannelEntry::descriptor();
  EXPECT_FALSE(rdmad::internal::FieldFits<uint32_t>(*entry->FindFieldByName("owner_uid")));
  EXPECT_TRUE(
      rdmad::internal::FieldFits<std::optional<uint32_t>>(*entry->FindFieldByName("owner_uid")));
}

}  // namespace
}  // namespace rdmactl

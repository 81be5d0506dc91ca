// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "rdmad/channel.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

TEST(ChannelTransportNameTest, NamesBoth) {
  EXPECT_STREQ(ChannelTransportName(ChannelTransport::kRdma), "RDMA");
  EXPECT_STREQ(ChannelTransportName(ChannelTransport::kTcp), "TCP");
}

TEST(RegionDescriptorTest, RoundTrips) {
  RegionDescriptor d;
  d.address = 0x00007f1234567890ull;
  d.length = 16ull << 30;
  d.rkey = 0xdeadbeef;
  std::vector<uint8_t> bytes = d.Serialize();
  ASSERT_EQ(bytes.size(), 24u);
  auto parsed = RegionDescriptor::Parse(bytes.data(), bytes.size());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->address, d.address);
  EXPECT_EQ(parsed->length, d.length);
  EXPECT_EQ(parsed->rkey, d.rkey);
  EXPECT_EQ(parsed->reserved, 0u);
}

TEST(RegionDescriptorTest, RailKeysRoundTrip) {
  RegionDescriptor d{0x2000, 1 << 20, 9, 0, {{0x1234, 0xabcd}, {0x5678, 0x42}}};
  std::vector<uint8_t> bytes = d.Serialize();
  ASSERT_EQ(bytes.size(), 40u);
  EXPECT_EQ(bytes[24], 0x34);  // the first key's tag, little endian
  EXPECT_EQ(bytes[28], 0xcd);
  auto parsed = RegionDescriptor::Parse(bytes.data(), bytes.size());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->rail_keys, d.rail_keys);
  EXPECT_EQ(parsed->rkey, 9u);
}

TEST(RegionDescriptorTest, IsLittleEndian) {
  RegionDescriptor d;
  d.address = 0x0807060504030201ull;
  d.length = 0x100;
  d.rkey = 0x44332211;
  std::vector<uint8_t> bytes = d.Serialize();
  const std::vector<uint8_t> want = {1, 2, 3, 4, 5,    6,    7,    8,    0, 1, 0, 0,
                                     0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0};
  EXPECT_EQ(bytes, want);
}

TEST(RegionDescriptorTest, RejectsMalformedInput) {
  std::vector<uint8_t> good = RegionDescriptor{0x1000, 4096, 7, 0, {}}.Serialize();
  for (size_t size : {size_t{0}, size_t{1}, size_t{23}, size_t{25}, size_t{36}, size_t{88}}) {
    std::vector<uint8_t> bytes(size, 0);
    auto parsed = RegionDescriptor::Parse(bytes.data(), bytes.size());
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << size << " bytes";
    EXPECT_NE(parsed.status().message().find("expected 24 bytes and 8 per rail key"),
              std::string::npos)
        << parsed.status().message();
  }
  // A rail key for tag 0, or two for one device, are no descriptor.
  std::vector<uint8_t> tag0 = good;
  tag0.resize(32, 0);
  EXPECT_EQ(RegionDescriptor::Parse(tag0.data(), tag0.size()).status().code(),
            StatusCode::kInvalidArgument);
  RegionDescriptor twice{0x1000, 4096, 7, 0, {{5, 1}, {5, 2}}};
  std::vector<uint8_t> twice_bytes = twice.Serialize();
  EXPECT_EQ(RegionDescriptor::Parse(twice_bytes.data(), twice_bytes.size()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(RegionDescriptor::Parse(nullptr, 24).status().code(), StatusCode::kInvalidArgument);

  std::vector<uint8_t> reserved = good;
  reserved[22] = 1;
  EXPECT_EQ(RegionDescriptor::Parse(reserved.data(), reserved.size()).status().code(),
            StatusCode::kInvalidArgument);

  std::vector<uint8_t> wraps = RegionDescriptor{~0ull - 10, 100, 7, 0, {}}.Serialize();
  auto parsed = RegionDescriptor::Parse(wraps.data(), wraps.size());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("overflows"), std::string::npos);
}

// Channel::Prepare's default (PooledChannel and TCP use it): each Post is a
// Submit; a Post while the last is in flight, or with a notification too
// long, starts nothing.
class HeldTransfer final : public Transfer {
 public:
  explicit HeldTransfer(const bool* done) : done_(done) {}
  Status Wait(std::chrono::milliseconds) override {
    return *done_ ? Status::Ok() : Status::DeadlineExceeded("held");
  }
  bool Poll(Status* status) override {
    if (*done_ && status != nullptr) *status = Status::Ok();
    return *done_;
  }
  int failed_op() const override { return -1; }

 private:
  const bool* done_;
};

class SubmitCountingChannel final : public Channel {
 public:
  const ChannelInfo& info() const override { return info_; }
  Status Send(const void*, size_t) override { return Status::Unimplemented("x"); }
  Status Send(const MemoryRegion&, size_t, size_t) override { return Status::Unimplemented("x"); }
  StatusOr<std::vector<uint8_t>> Recv(std::chrono::milliseconds) override {
    return Status::Unimplemented("x");
  }
  StatusOr<std::unique_ptr<MemoryRegion>> RegisterMemory(void*, size_t, MemoryAccess) override {
    return Status::Unimplemented("x");
  }
  StatusOr<std::unique_ptr<MemoryRegion>> RegisterDmabuf(int, uint64_t, size_t) override {
    return Status::Unimplemented("x");
  }
  StatusOr<RegionDescriptor> Expose(const MemoryRegion&, MemoryAccess) override {
    return Status::Unimplemented("x");
  }
  Status Revoke(const RegionDescriptor&) override { return Status::Unimplemented("x"); }
  Status Write(const MemoryRegion&, size_t, const RegionDescriptor&, uint64_t, size_t) override {
    return Status::Unimplemented("x");
  }
  Status Read(const MemoryRegion&, size_t, const RegionDescriptor&, uint64_t, size_t) override {
    return Status::Unimplemented("x");
  }
  using Channel::Submit;
  StatusOr<std::unique_ptr<Transfer>> Submit(const std::vector<TransferOp>& ops,
                                             std::string_view notification) override {
    if (!refusal.ok()) return refusal;
    submitted_ops += ops.size();
    notes.emplace_back(notification);
    done = false;
    return std::unique_ptr<Transfer>(new HeldTransfer(&done));
  }
  Status status() const override { return Status::Ok(); }
  void Close() override {}

  bool done = false;
  Status refusal;
  size_t submitted_ops = 0;
  std::vector<std::string> notes;

 private:
  ChannelInfo info_;
};

class FixedRegion final : public MemoryRegion {
 public:
  uint8_t* data() const override { return nullptr; }
  size_t size() const override { return 4096; }
  RegionDescriptor descriptor() const override { return {}; }
  MemoryAccess access() const override { return MemoryAccess::kReadWrite; }
};

TEST(PrepareByDefaultTest, PostsSubmitOnlyWhenTheLastIsDone) {
  SubmitCountingChannel channel;
  FixedRegion region;
  RegionDescriptor remote;
  remote.length = 4096;
  std::vector<TransferOp> ops(2, TransferOp{TransferOp::Kind::kWrite, &region, 0, remote, 0, 64});
  ops[1].len = 5000;
  EXPECT_EQ(channel.Prepare(ops).status().code(), StatusCode::kOutOfRange);
  ops[1].len = 64;
  auto prepared = channel.Prepare(ops);
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  EXPECT_EQ((*prepared)->Wait(std::chrono::milliseconds(0)).code(),
            StatusCode::kFailedPrecondition);
  ASSERT_TRUE((*prepared)->Post("one").ok());
  EXPECT_EQ((*prepared)->Post("two").code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE((*prepared)->Poll());
  channel.done = true;
  EXPECT_EQ((*prepared)->Post(std::string(kMaxNotificationBytes + 1, 'x')).code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE((*prepared)->Wait(std::chrono::milliseconds(0)).ok());
  ASSERT_TRUE((*prepared)->Post().ok());
  EXPECT_EQ(channel.submitted_ops, 4u);
  EXPECT_EQ(channel.notes, (std::vector<std::string>{"one", ""}));
  channel.done = true;
  channel.refusal = Status::Unavailable("gone");
  EXPECT_EQ((*prepared)->Post().code(), StatusCode::kUnavailable);
  EXPECT_EQ((*prepared)->Wait(std::chrono::milliseconds(0)).code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace rdmad

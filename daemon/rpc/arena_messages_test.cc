// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/arena_messages.h"

#include <gtest/gtest.h>

#include "rdmad/v1/rdmad.pb.h"

namespace rdmad {
namespace {

using ConnectMessages = ArenaMessages<v1::ConnectRequest, v1::ConnectResponse>;

TEST(ArenaMessagesTest, RequestAndReplyShareOneArenaPerCall) {
  ConnectMessages allocator;
  auto* first = allocator.AllocateMessages();
  auto* second = allocator.AllocateMessages();
  ASSERT_NE(first->request()->GetArena(), nullptr);
  EXPECT_EQ(first->request()->GetArena(), first->response()->GetArena());
  EXPECT_NE(first->request()->GetArena(), second->request()->GetArena());
  first->Release();
  second->Release();
}

// A batch's worth of endpoints outgrows the holder's first block: the
// messages stay whole, and what the reply gains lands on the same arena.
TEST(ArenaMessagesTest, ABatchOfEndpointsParsesIntoTheArena) {
  v1::ConnectRequest sent;
  for (int i = 0; i < 64; ++i) {
    v1::ChannelOpening* c = sent.add_channels();
    c->set_channel_id(1000 + i);
    v1::RdmaEndpoint* rdma = c->mutable_endpoint()->mutable_rdma();
    rdma->set_device("rxe0");
    rdma->set_qpn(0x11 + i);
    rdma->set_gid(std::string(16, char(i)));
    rdma->set_gid_type("RoCE v2");
  }
  ConnectMessages allocator;
  auto* holder = allocator.AllocateMessages();
  ASSERT_TRUE(holder->request()->ParseFromString(sent.SerializeAsString()));
  const v1::ConnectRequest& got = *holder->request();
  ASSERT_EQ(got.channels_size(), 64);
  EXPECT_EQ(got.channels(63).channel_id(), 1063u);
  EXPECT_EQ(got.channels(63).endpoint().rdma().gid(), std::string(16, char(63)));
  EXPECT_EQ(got.channels(5).endpoint().GetArena(), got.GetArena());
  v1::ConnectedChannel* reply = holder->response()->add_channels();
  reply->mutable_peer()->mutable_rdma()->set_device("rxe1");
  EXPECT_EQ(reply->GetArena(), got.GetArena());
  holder->Release();
}

}  // namespace
}  // namespace rdmad

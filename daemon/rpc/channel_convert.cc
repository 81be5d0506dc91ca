// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/channel_convert.h"

#include "daemon/rpc/proto_convert.h"

namespace rdmad {

void ToProto(const ChannelPlan& plan, v1::ChannelPlan* out) {
  if (plan.path) ToProto(*plan.path, out->mutable_path());
  out->set_tcp_reason(plan.tcp_reason);
  out->set_tcp_bind_host(plan.tcp_bind_host);
}

void ToProto(const OpenChannelCall& call, v1::OpenChannelRequest* out) {
  out->set_channel_id(call.channel_id);
  out->set_service(call.service);
  out->set_initiator_host(call.initiator_host);
  out->set_initiator_instance(call.initiator_instance);
  ToProto(call.initiator, out->mutable_initiator());
}

StatusOr<OpenChannelCall> FromProto(const v1::OpenChannelRequest& in) {
  StatusOr<ChannelEndpoint> initiator = FromProto(in.initiator());
  if (!initiator.ok()) return initiator.status();
  OpenChannelCall call;
  call.channel_id = in.channel_id();
  call.service = in.service();
  call.initiator_host = in.initiator_host();
  call.initiator_instance = in.initiator_instance();
  call.initiator = std::move(initiator).value();
  return call;
}

}  // namespace rdmad

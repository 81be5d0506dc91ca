// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Channel endpoints and plans to and from rdmad.v1 (Endpoint, ChannelPlan)
// and the peer API's OpenChannelRequest. FromProto checks what the core
// types cannot hold (a GID that is not 16 bytes, a token that is not 32, a
// TCP port above 65535, no transport set) and answers INVALID_ARGUMENT
// naming the field; the rest is ValidateChannelEndpoint's job.
//
// Thread safety: stateless functions.

#ifndef RDMAD_DAEMON_SERVER_CHANNEL_CONVERT_H_
#define RDMAD_DAEMON_SERVER_CHANNEL_CONVERT_H_

#include "daemon/core/channel_endpoint.h"
#include "rdmad/status.h"
#include "rdmad/v1/peer.pb.h"
#include "rdmad/v1/rdmad.pb.h"

namespace rdmad {

void ToProto(const ChannelEndpoint& endpoint, v1::Endpoint* out);
StatusOr<ChannelEndpoint> FromProto(const v1::Endpoint& in);

void ToProto(const ChannelPlan& plan, v1::ChannelPlan* out);

void ToProto(const OpenChannelCall& call, v1::OpenChannelRequest* out);
StatusOr<OpenChannelCall> FromProto(const v1::OpenChannelRequest& in);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_SERVER_CHANNEL_CONVERT_H_

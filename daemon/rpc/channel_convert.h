// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Channel plans to rdmad.v1.ChannelPlan and the peer API's
// OpenChannelRequest to and from the core's OpenChannelCall. Endpoints
// convert with the client library's own functions (endpoint_convert.h),
// brought in here: one conversion for both. FromProto checks what the core
// types cannot hold and answers INVALID_ARGUMENT naming the field; the rest
// is ValidateChannelEndpoint's job.
//
// Thread safety: stateless functions.

#ifndef RDMAD_DAEMON_RPC_CHANNEL_CONVERT_H_
#define RDMAD_DAEMON_RPC_CHANNEL_CONVERT_H_

#include <chrono>
#include <string_view>

#include "common/endpoint_convert.h"
#include "daemon/broker/broker.h"
#include "daemon/peers/channel_endpoint.h"
#include "rdmad/status.h"
#include "rdmad/v1/peer.pb.h"
#include "rdmad/v1/rdmad.pb.h"

namespace rdmad {

using internal::FromProto;  // v1::Endpoint -> ChannelEndpoint
using internal::ToProto;    // ChannelEndpoint -> v1::Endpoint

void ToProto(const ChannelPlan& plan, v1::ChannelPlan* out);

// A row of ListChannels (its age as of now).
void ToProto(const ChannelRecord& record, std::chrono::system_clock::time_point now,
             v1::ChannelEntry* out);

void ToProto(const OpenChannelCall& call, v1::OpenChannelRequest* out);
StatusOr<OpenChannelCall> FromProto(const v1::OpenChannelRequest& in);

// A batch's channels (ConnectRequest.channels, IncomingChannel.channels,
// OpenChannelRequest.channels). INVALID_ARGUMENT naming the field for
// none, a malformed endpoint or more than kMaxChannelBatch of them.
void ToProto(const ChannelOpening& opening, v1::ChannelOpening* out);
StatusOr<std::vector<ChannelOpening>> FromProto(
    const google::protobuf::RepeatedPtrField<v1::ChannelOpening>& in);

// A batch's endpoints (AcceptRequest.endpoints,
// OpenChannelResponse.acceptors). INVALID_ARGUMENT naming field[i] for a
// malformed one, or field for none or more than kMaxChannelBatch.
StatusOr<ChannelEndpoints> EndpointsFromProto(
    const google::protobuf::RepeatedPtrField<v1::Endpoint>& in, std::string_view field);

// A channel's lease as the bytes the application keeps (a serialized
// v1::ChannelLease, sealed by the broker's LeaseSealer), and back:
// NOT_FOUND for bytes this daemon did not seal (forged or edited),
// INVALID_ARGUMENT for sealed bytes that do not parse.
std::string SerializeLease(const ChannelLease& lease, const LeaseSealer& sealer);
StatusOr<ChannelLease> ParseLease(const std::string& bytes, const LeaseSealer& sealer);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_CHANNEL_CONVERT_H_

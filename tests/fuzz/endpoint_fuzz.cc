// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Fuzz target: one rdmad.v1.Endpoint, the message every channel request
// carries (Accept, Connect, a peer's OpenChannel and its reply). The bytes
// are parsed as the message, converted (FromProto: what the core types
// cannot hold) and validated both ways the daemon does (an initiator's and
// a listening side's: ValidateChannelEndpoint, ValidateRdmaEndpoint with
// its QP attributes); what passes must convert back to the same message.

#include "common/endpoint.h"
#include "daemon/peers/channel_endpoint.h"
#include "daemon/rpc/channel_convert.h"
#include "tests/fuzz/fuzz_support.h"

using namespace rdmad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInit();
  v1::Endpoint in;
  if (!in.ParseFromArray(data, static_cast<int>(size))) return 0;
  StatusOr<ChannelEndpoint> endpoint = FromProto(in);
  fuzz::CheckStatus(endpoint.status());
  if (!endpoint.ok()) return 0;
  const ChannelEndpoint& e = endpoint.value();
  FUZZ_CHECK(e.rdma.has_value() != e.tcp.has_value());

  Status initiator = ValidateChannelEndpoint(e, /*listening=*/false);
  Status listening = ValidateChannelEndpoint(e, /*listening=*/true);
  fuzz::CheckStatus(initiator);
  fuzz::CheckStatus(listening);
  FUZZ_CHECK(initiator.ok() || initiator.code() == StatusCode::kInvalidArgument);
  FUZZ_CHECK(listening.ok() || listening.code() == StatusCode::kInvalidArgument);
  FUZZ_CHECK(!listening.ok() || initiator.ok());  // listening is the stricter
  if (e.rdma) {
    Status rdma = internal::ValidateRdmaEndpoint(*e.rdma);
    FUZZ_CHECK(rdma.ok() == initiator.ok());
    if (rdma.ok()) {
      FUZZ_CHECK(e.rdma->qpn <= 0xFFFFFF && e.rdma->psn <= 0xFFFFFF);
      FUZZ_CHECK(e.rdma->credits <= e.rdma->ring_slots);
      uint32_t mtu = internal::NegotiatedMtu(e.rdma->active_mtu, 4096, e.rdma->active_mtu);
      FUZZ_CHECK(mtu == e.rdma->active_mtu);
    }
  }
  (void)EndpointTransport(e);

  // What the daemon relays is what it was given (for the fields it knows).
  v1::Endpoint out;
  ToProto(e, &out);
  StatusOr<ChannelEndpoint> again = FromProto(out);
  FUZZ_CHECK(again.ok());
  v1::Endpoint out2;
  ToProto(again.value(), &out2);
  FUZZ_CHECK(out.SerializeAsString() == out2.SerializeAsString());
  return 0;
}

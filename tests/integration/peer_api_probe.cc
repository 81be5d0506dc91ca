// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Raw peer-API calls to a daemon's peer port, as an attacker would make
// them (for isolation_test.cc, which runs it as another uid or as the
// daemons' own; fork, setuid, then exec: no gRPC in the forked child):
//
//   peer_api_probe HOST:PORT hello HOST_NAME INSTANCE
//   peer_api_probe HOST:PORT open SERVICE INITIATOR_HOST INSTANCE
//   peer_api_probe HOST:PORT close CHANNEL-ID INSTANCE
//   peer_api_probe HOST:PORT reclaim CHANNEL-ID PREVIOUS INSTANCE
//
// With RDMAD_PEER_KEY_FILE set, each call carries a proof of that key
// (PeerKey::Sign, as a daemon's calls do); with RDMAD_PEER_REPLAY=1 as
// well, hello is sent twice with the same proof and both lines printed.
//
// hello says Hello as HOST_NAME with instance INSTANCE ("-": a fresh one);
// open sends OpenChannel with a random channel id and a TCP endpoint; the
// others as named. Each prints one line, "PROBE CODE message" (CODE as
// gRPC names it); hello's OK adds the daemon's "instance=ID". Exit status
// 0 once it printed, 2 on a usage error.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "daemon/peers/peer_key.h"
#include "daemon/rpc/peer_link_grpc.h"
#include "rdmad/v1/peer.grpc.pb.h"

namespace {

namespace v1 = rdmad::v1;

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "OTHER";
  }
}

int Print(const grpc::Status& status, const std::string& seen = "") {
  std::printf("PROBE %s %s\n", CodeName(status.error_code()),
              status.ok() ? seen.c_str() : status.error_message().c_str());
  return 0;
}

std::string Instance(const std::string& arg) {
  if (arg != "-") return arg;
  std::random_device rd;
  std::string id;
  for (int i = 0; i < 32; ++i) id += "0123456789abcdef"[rd() % 16];
  return id;
}

// The proof for method by node, "" without RDMAD_PEER_KEY_FILE.
std::string Proof(const char* method, const std::string& node) {
  const char* path = std::getenv("RDMAD_PEER_KEY_FILE");
  if (path == nullptr) return "";
  auto key = rdmad::PeerKey::Load(path);
  if (!key.ok()) {
    std::printf("PROBE KEY %s\n", key.status().message().c_str());
    std::exit(0);
  }
  return key->Sign(method, node);
}

void Bound(grpc::ClientContext* ctx, const std::string& proof = "") {
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  if (!proof.empty()) ctx->AddMetadata(rdmad::kPeerAuthMetadata, proof);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: peer_api_probe HOST:PORT CALL [ARG...]\n");
    return 2;
  }
  const std::string call = argv[2];
  auto stub =
      v1::RdmadPeer::NewStub(grpc::CreateChannel(argv[1], grpc::InsecureChannelCredentials()));
  const std::string node = argc > 3 ? argv[3] : "probe";
  const char* method = call == "hello"   ? "Hello"
                       : call == "open"  ? "OpenChannel"
                       : call == "close" ? "CloseChannel"
                                         : "ReclaimChannel";
  const std::string proof = Proof(method, call == "open" && argc > 4 ? argv[4] : node);
  grpc::ClientContext ctx;
  Bound(&ctx, proof);
  if (call == "hello" && argc == 5) {
    v1::HelloRequest req;
    v1::HelloInfo* self = req.mutable_self();
    self->mutable_protocol()->set_major(1);
    self->set_host_name(argv[3]);
    self->set_daemon_version("probe");
    self->set_instance_id(Instance(argv[4]));
    v1::HelloResponse out;
    grpc::Status s = stub->Hello(&ctx, req, &out);
    Print(s, "instance=" + out.self().instance_id());
    if (const char* replay = std::getenv("RDMAD_PEER_REPLAY"); replay && *replay == '1') {
      grpc::ClientContext again;
      Bound(&again, proof);
      Print(stub->Hello(&again, req, &out), "instance=" + out.self().instance_id());
    }
    return 0;
  }
  if (call == "open" && argc == 6) {
    v1::OpenChannelRequest req;
    req.set_service(argv[3]);
    req.set_initiator_host(argv[4]);
    req.set_initiator_instance(Instance(argv[5]));
    v1::ChannelOpening* channel = req.add_channels();
    channel->set_channel_id(std::random_device()() | 1);
    v1::TcpEndpoint* tcp = channel->mutable_endpoint()->mutable_tcp();
    tcp->set_host("127.0.0.1");
    tcp->set_port(9);
    tcp->set_token(std::string(32, '\x5a'));
    v1::OpenChannelResponse out;
    return Print(stub->OpenChannel(&ctx, req, &out));
  }
  if (call == "close" && argc == 5) {
    v1::CloseChannelRequest req;
    req.set_channel_id(std::strtoull(argv[3], nullptr, 0));
    req.set_reason("by a probe");
    req.set_initiator_instance(argv[4]);
    v1::CloseChannelResponse out;
    return Print(stub->CloseChannel(&ctx, req, &out));
  }
  if (call == "reclaim" && argc == 6) {
    v1::ReclaimChannelRequest req;
    req.set_channel_id(std::strtoull(argv[3], nullptr, 0));
    req.set_previous_instance(argv[4]);
    req.set_instance(argv[5]);
    v1::ReclaimChannelResponse out;
    return Print(stub->ReclaimChannel(&ctx, req, &out));
  }
  std::fprintf(stderr, "peer_api_probe: unknown call or arguments: %s\n", call.c_str());
  return 2;
}

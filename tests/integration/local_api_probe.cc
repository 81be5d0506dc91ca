// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// One raw local-API call, for isolation_test.cc, which runs it as another
// uid (fork, setuid, then exec: no gRPC in the forked child):
//
//   local_api_probe SOCKET list-channels
//   local_api_probe SOCKET list-pools
//   local_api_probe SOCKET plan PEER SERVICE
//   local_api_probe SOCKET connect CHANNEL-ID
//   local_api_probe SOCKET hold CHANNEL-ID
//   local_api_probe SOCKET release CHANNEL-ID
//   local_api_probe SOCKET report-rails CHANNEL-ID
//   local_api_probe SOCKET report-traffic CHANNEL-ID
//   local_api_probe SOCKET accept REQUEST-ID
//   local_api_probe SOCKET reject REQUEST-ID
//   local_api_probe SOCKET prewarm CLIENT-ID
//   local_api_probe SOCKET report CLIENT-ID
//   local_api_probe SOCKET flood-plan PEER SERVICE SECONDS
//   local_api_probe SOCKET forge-hold CHANNEL-ID
//   local_api_probe SOCKET hold-lease CHANNEL-ID LEASE-HEX
//   local_api_probe SOCKET hog N SECONDS
//
// forge-hold re-attaches CHANNEL-ID with a lease it wrote itself (a
// well-formed rdmad.v1.ChannelLease naming the caller's uid); hold-lease
// with the lease given (hex), as an attacker who edited one would.
// It prints one line, "PROBE CODE message" (CODE as gRPC names it), and
// for the lists and plan what it saw: "PROBE OK ids=ID,ID" (channel ids,
// or pool client ids) and "PROBE OK id=ID". report-traffic claims 1 TiB
// sent and a Connect of 1 s on CHANNEL-ID and prints "PROBE OK skipped=N". A hold that is granted
// stays open: after 2 s it is DEADLINE_EXCEEDED. flood-plan plans channels as fast as it can and
// prints "PROBE FLOOD ok=N exhausted=N other=N refusal=MESSAGE" (the first RESOURCE_EXHAUSTED). hog
// opens N plain connections to the socket, and after 1 s counts those the daemon closed, makes one
// call of its own (ListChannels, on a connection of its own), holds the rest SECONDS more and
// prints "PROBE HOG open=N closed=N call=CODE". Exit status 0 once it printed, 2 on a usage error.

#include <grpcpp/grpcpp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "rdmad/v1/peer.pb.h"
#include "rdmad/v1/rdmad.grpc.pb.h"

namespace {

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    default: return "OTHER";
  }
}

int Print(const grpc::Status& status, const std::string& seen = "") {
  std::printf("PROBE %s %s\n", CodeName(status.error_code()),
              status.ok() ? seen.c_str() : status.error_message().c_str());
  return 0;
}

rdmad::v1::Endpoint TcpEndpoint() {
  rdmad::v1::Endpoint e;
  e.mutable_tcp()->set_host("127.0.0.1");
  e.mutable_tcp()->set_port(9);
  e.mutable_tcp()->set_token(std::string(32, '\x5a'));
  return e;
}

std::string FromHex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

// HoldChannel(id, lease): the stream's end, or DEADLINE_EXCEEDED while held.
int HoldWithLease(rdmad::v1::Rdmad::Stub* stub, grpc::ClientContext* ctx, uint64_t id,
                  const std::string& lease) {
  rdmad::v1::HoldChannelRequest req;
  req.add_channel_ids(id);
  req.add_leases(lease);
  auto reader = stub->HoldChannel(ctx, req);
  rdmad::v1::ChannelEvent event;
  while (reader->Read(&event)) {
  }
  return Print(reader->Finish());
}

void Bound(grpc::ClientContext* ctx) {
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: local_api_probe SOCKET CALL [ARG...]\n");
    return 2;
  }
  const std::string call = argv[2];
  const std::string arg = argc > 3 ? argv[3] : "";
  const uint64_t id = std::strtoull(arg.c_str(), nullptr, 0);
  auto stub = rdmad::v1::Rdmad::NewStub(
      grpc::CreateChannel(std::string("unix:") + argv[1], grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  Bound(&ctx);
  namespace v1 = rdmad::v1;
  if (call == "list-channels") {
    v1::ListChannelsResponse out;
    grpc::Status s = stub->ListChannels(&ctx, v1::ListChannelsRequest(), &out);
    std::string ids = "ids=";
    for (const v1::ChannelEntry& e : out.channels()) ids += std::to_string(e.id()) + ",";
    return Print(s, ids);
  }
  if (call == "plan-rails" || call == "rail-plans") {
    // plan-rails GPU: plans this process's rails near GPU, then lists the
    // plans it sees; rail-plans: only lists them. "plans=PID:PLACE,..."
    // and "load=DEVICE:N,..." for the devices with live plans.
    if (call == "plan-rails") {
      grpc::ClientContext plan_ctx;
      Bound(&plan_ctx);
      v1::PlanRailsRequest req;
      req.set_gpu(arg);
      v1::RailPlan out;
      grpc::Status s = stub->PlanRails(&plan_ctx, req, &out);
      if (!s.ok()) return Print(s);
    }
    v1::GetTopologyResponse out;
    grpc::Status s = stub->GetTopology(&ctx, v1::GetTopologyRequest(), &out);
    std::string text = "plans=";
    for (const v1::RailAssignment& a : out.plans()) {
      text += std::to_string(a.pid()) + ":" + a.place() + ",";
    }
    text += " load=";
    for (const v1::TopologyNic& n : out.nics()) {
      if (n.plans() > 0) text += n.name() + ":" + std::to_string(n.plans()) + ",";
    }
    return Print(s, text);
  }
  if (call == "list-pools") {
    v1::ListPoolsResponse out;
    grpc::Status s = stub->ListPools(&ctx, v1::ListPoolsRequest(), &out);
    std::string ids = "ids=";
    for (const v1::PoolRow& r : out.pools()) ids += std::to_string(r.client_id()) + ",";
    return Print(s, ids);
  }
  if (call == "plan" && argc == 5) {
    v1::PlanChannelRequest req;
    req.set_peer(argv[3]);
    req.set_service(argv[4]);
    v1::PlanChannelResponse out;
    grpc::Status s = stub->PlanChannel(&ctx, req, &out);
    return Print(s, "id=" + std::to_string(out.channel_ids().empty() ? 0 : out.channel_ids(0)));
  }
  if (call == "connect") {
    v1::ConnectRequest req;
    v1::ChannelOpening* c = req.add_channels();
    c->set_channel_id(id);
    *c->mutable_endpoint() = TcpEndpoint();
    v1::ConnectResponse out;
    return Print(stub->Connect(&ctx, req, &out));
  }
  if (call == "hold") {
    v1::HoldChannelRequest req;
    req.add_channel_ids(id);
    auto reader = stub->HoldChannel(&ctx, req);
    v1::ChannelEvent event;
    while (reader->Read(&event)) {
    }
    return Print(reader->Finish());
  }
  if (call == "release") {
    v1::ReleaseChannelRequest req;
    req.set_channel_id(id);
    req.set_reason("by a probe");
    v1::ReleaseChannelResponse out;
    return Print(stub->ReleaseChannel(&ctx, req, &out));
  }
  if (call == "report-rails") {
    v1::ReportChannelRequest req;
    req.set_channel_id(id);
    v1::ReportChannelResponse out;
    return Print(stub->ReportChannel(&ctx, req, &out));
  }
  if (call == "report-traffic") {
    v1::ReportTrafficRequest req;
    v1::ChannelTraffic* t = req.add_channels();
    t->set_channel_id(id);
    t->set_messages_sent(1);
    t->set_bytes_sent(uint64_t(1) << 40);
    v1::ConnectTiming* c = req.add_connects();
    c->set_channel_id(id);
    c->set_duration_ns(1000000000);
    v1::ReportTrafficResponse out;
    grpc::Status s = stub->ReportTraffic(&ctx, req, &out);
    if (!s.ok()) return Print(s);
    std::printf("PROBE OK skipped=%u\n", out.skipped());
    return 0;
  }
  if (call == "accept") {
    v1::AcceptRequest req;
    req.set_request_id(id);
    *req.add_endpoints() = TcpEndpoint();
    v1::AcceptResponse out;
    return Print(stub->Accept(&ctx, req, &out));
  }
  if (call == "reject") {
    v1::RejectRequest req;
    req.set_request_id(id);
    req.set_reason("by a probe");
    v1::RejectResponse out;
    return Print(stub->Reject(&ctx, req, &out));
  }
  if (call == "prewarm") {
    v1::PrewarmRequest req;
    req.set_client_id(id);
    req.set_peer("B");
    req.set_service("svc");
    req.set_channels(1);
    v1::PrewarmResponse out;
    return Print(stub->Prewarm(&ctx, req, &out));
  }
  if (call == "report") {
    v1::ReportPoolRequest req;
    req.set_client_id(id);
    req.set_peer("B");
    req.set_service("svc");
    req.set_warm(1);
    v1::ReportPoolResponse out;
    return Print(stub->ReportPool(&ctx, req, &out));
  }
  if (call == "forge-hold") {
    v1::ChannelLease lease;
    lease.set_channel_id(id);
    lease.set_peer("B");
    lease.set_service("svc");
    lease.set_initiator(true);
    lease.set_transport("TCP");
    lease.set_peer_instance(std::string(32, 'b'));
    lease.set_self_instance(std::string(32, 'a'));
    lease.set_owner_uid(getuid());
    return HoldWithLease(stub.get(), &ctx, id, lease.SerializeAsString());
  }
  if (call == "hold-lease" && argc == 5) {
    return HoldWithLease(stub.get(), &ctx, id, FromHex(argv[4]));
  }
  if (call == "hog" && argc == 5) {  // N SECONDS
    std::vector<int> fds;
    for (int i = 0; i < std::atoi(argv[3]); ++i) {
      int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", argv[1]);
      if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
        fds.push_back(fd);
      } else if (fd >= 0) {
        close(fd);
      }
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
    int closed = 0;
    for (int fd : fds) {
      char byte;
      closed += recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;  // EOF: the daemon closed it
    }
    v1::ListChannelsResponse out;
    grpc::Status s = stub->ListChannels(&ctx, v1::ListChannelsRequest(), &out);
    std::printf("PROBE HOG open=%d closed=%d call=%s\n", int(fds.size()) - closed, closed,
                CodeName(s.error_code()));
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(std::atoi(argv[4])));
    for (int fd : fds) close(fd);
    return 0;
  }
  if (call == "flood-plan" && argc == 6) {  // PEER SERVICE SECONDS
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(std::atoi(argv[5]));
    int ok = 0, exhausted = 0, other = 0;
    std::string first_refusal;
    while (std::chrono::steady_clock::now() < end) {
      grpc::ClientContext plan_ctx;
      Bound(&plan_ctx);
      v1::PlanChannelRequest req;
      req.set_peer(argv[3]);
      req.set_service(argv[4]);
      req.set_force_tcp(true);
      v1::PlanChannelResponse out;
      grpc::Status s = stub->PlanChannel(&plan_ctx, req, &out);
      if (s.ok()) {
        ++ok;
      } else if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
        if (exhausted++ == 0) first_refusal = s.error_message();
      } else {
        ++other;
      }
    }
    std::printf("PROBE FLOOD ok=%d exhausted=%d other=%d refusal=%s\n", ok, exhausted, other,
                first_refusal.c_str());
    return 0;
  }
  std::fprintf(stderr, "local_api_probe: unknown call %s\n", call.c_str());
  return 2;
}

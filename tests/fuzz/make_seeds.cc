// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Writes the fuzz targets' seed corpora: a handful of valid requests (and
// scripts of them) per target, built with the real messages so that they
// follow the .proto files. The output is checked in under
// tests/fuzz/corpus/<target>/seed-*; regenerate after a change to the
// messages or the ops tables:
//
//   build/tests/fuzz/fuzz_make_seeds tests/fuzz/corpus
//
// (Regression inputs, regress-*, are added by hand: docs/testing.md.)

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

#include "client/src/rdma/wire.h"
#include "client/src/tcp/tcp_frame.h"
#include "common/echo_protocol.h"
#include "rdmad/channel.h"
#include "rdmad/v1/peer.pb.h"
#include "rdmad/v1/rdmad.pb.h"
#include "tests/fuzz/channel_world.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/local_query_fuzz.h"
#include "tests/fuzz/peer_session_fuzz.h"

using namespace rdmad;
using fuzz::AppendRecord;
using fuzz::ChannelOp;

namespace {

std::string g_root;

void Write(const std::string& target, const std::string& name, const std::string& data) {
  std::string dir = g_root + "/" + target;
  mkdir(dir.c_str(), 0755);
  std::ofstream out(dir + "/seed-" + name, std::ios::binary | std::ios::trunc);
  out << data;
  if (!out) {
    std::fprintf(stderr, "cannot write %s/seed-%s\n", dir.c_str(), name.c_str());
    std::exit(1);
  }
}

v1::Endpoint RdmaEndpoint(uint32_t qpn) {
  v1::Endpoint e;
  v1::RdmaEndpoint* r = e.mutable_rdma();
  r->set_device("rxe0");
  r->set_port(1);
  r->set_qpn(qpn);
  r->set_psn(0x123456);
  std::string gid(16, '\0');
  gid[10] = gid[11] = '\xff';
  gid[12] = char(192);
  gid[13] = 0;
  gid[14] = 2;
  gid[15] = 1;
  r->set_gid(gid);
  r->set_gid_index(1);
  r->set_gid_type("RoCE v2");
  r->set_active_mtu(1024);
  v1::QpAttributes* qp = r->mutable_qp();
  qp->set_type("RC");
  qp->set_timeout(14);
  qp->set_retry_cnt(7);
  qp->set_rnr_retry(7);
  qp->set_min_rnr_timer(12);
  qp->set_hop_limit(64);
  qp->set_max_inline(64);
  qp->set_send_depth(128);
  qp->set_recv_depth(128);
  qp->set_qps_per_channel(1);
  r->set_ring_address(0x7f0000001000);
  r->set_ring_rkey(0x1234);
  r->set_ring_slots(64);
  r->set_slot_size(65536);
  r->set_credits(64);
  return e;
}

v1::Endpoint IbEndpoint() {
  v1::Endpoint e = RdmaEndpoint(0x99);
  e.mutable_rdma()->set_device("mlx5_0");
  e.mutable_rdma()->set_gid_type("IB");
  e.mutable_rdma()->set_lid(7);
  e.mutable_rdma()->set_gid_index(0);
  e.mutable_rdma()->set_active_mtu(4096);
  return e;
}

v1::Endpoint TcpEndpoint(bool listening) {
  v1::Endpoint e;
  v1::TcpEndpoint* t = e.mutable_tcp();
  std::string token(32, '\0');
  if (listening) {
    t->set_host("192.0.2.1");
    t->set_port(40000);
    for (int i = 0; i < 32; ++i) token[i] = char(i + 1);
  }
  t->set_token(token);
  if (!listening) e.set_transport_reason("TCP requested by the application");
  return e;
}

std::string Raw(std::initializer_list<uint8_t> bytes) {
  return std::string(bytes.begin(), bytes.end());
}

// --- endpoint ---

void EndpointSeeds() {
  Write("endpoint", "rdma", RdmaEndpoint(0x11).SerializeAsString());
  Write("endpoint", "ib", IbEndpoint().SerializeAsString());
  Write("endpoint", "tcp-listening", TcpEndpoint(true).SerializeAsString());
  Write("endpoint", "tcp-initiator", TcpEndpoint(false).SerializeAsString());
  v1::Endpoint bad = RdmaEndpoint(0x1000000);
  bad.mutable_rdma()->mutable_qp()->set_timeout(40);
  Write("endpoint", "rdma-bad-qpn", bad.SerializeAsString());
}

// --- the channel targets ---

struct ScriptWriter {
  std::function<uint8_t(ChannelOp)> byte;  // the op's byte in the target's table
  std::string out;
  ScriptWriter& Add(ChannelOp op, const google::protobuf::MessageLite& m) {
    return Add(op, m.SerializeAsString());
  }
  ScriptWriter& Add(ChannelOp op, const std::string& raw = "") {
    uint8_t b = byte(op);
    if (b == 0xFF) {
      std::fprintf(stderr, "op %d is not in the target's table\n", int(op));
      std::exit(1);
    }
    AppendRecord(&out, b, raw);
    return *this;
  }
};

v1::ListenRequest Listen(const std::string& service) {
  v1::ListenRequest r;
  r.set_service(service);
  return r;
}
v1::PlanChannelRequest Plan(const std::string& peer, const std::string& service, bool tcp) {
  v1::PlanChannelRequest r;
  r.set_peer(peer);
  r.set_service(service);
  r.set_force_tcp(tcp);
  return r;
}
v1::ConnectRequest Connect(uint64_t id, const v1::Endpoint& e) {
  v1::ConnectRequest r;
  v1::ChannelOpening* c = r.add_channels();
  c->set_channel_id(id);
  *c->mutable_endpoint() = e;
  return r;
}
v1::HoldChannelRequest Hold(uint64_t id) {
  v1::HoldChannelRequest r;
  r.add_channel_ids(id);
  return r;
}
v1::ReleaseChannelRequest Release(uint64_t id, const std::string& reason) {
  v1::ReleaseChannelRequest r;
  r.set_channel_id(id);
  r.set_reason(reason);
  return r;
}
v1::AcceptRequest Accept(uint64_t request, const v1::Endpoint& e) {
  v1::AcceptRequest r;
  r.set_request_id(request);
  *r.add_endpoints() = e;
  return r;
}
v1::RejectRequest Reject(uint64_t request, const std::string& reason) {
  v1::RejectRequest r;
  r.set_request_id(request);
  r.set_reason(reason);
  return r;
}
v1::OpenChannelResponse PeerReply(const v1::Endpoint& e) {
  v1::OpenChannelResponse r;
  *r.add_acceptors() = e;
  return r;
}
v1::OpenChannelRequest Open(uint64_t id, const std::string& service, const v1::Endpoint& e) {
  v1::OpenChannelRequest r;
  r.set_service(service);
  r.set_initiator_host("hostB");
  r.set_initiator_instance(fuzz::kPeerInstance);
  v1::ChannelOpening* c = r.add_channels();
  c->set_channel_id(id);
  *c->mutable_endpoint() = e;
  return r;
}
v1::CloseChannelRequest Close(uint64_t id, const std::string& reason) {
  v1::CloseChannelRequest r;
  r.set_channel_id(id);
  r.set_reason(reason);
  r.set_initiator_instance(fuzz::kPeerInstance);
  return r;
}
v1::PeerEvent ClosedEvent(uint64_t id) {
  v1::PeerEvent e;
  e.set_sequence(3);
  e.mutable_channel_closed()->set_channel_id(id);
  e.mutable_channel_closed()->set_reason("closed by the application");
  return e;
}

void LocalChannelSeeds() {
  auto ops = [](ChannelOp op) { return fuzz::OpByte(fuzz::kLocalChannelOps, op); };
  {
    ScriptWriter s{ops, ""};
    s.Add(ChannelOp::kQueuePeerReply, PeerReply(TcpEndpoint(true)))
        .Add(ChannelOp::kPlanChannel, Plan("B", "svc", true))
        .Add(ChannelOp::kConnect, Connect(1, TcpEndpoint(false)))
        .Add(ChannelOp::kHoldChannel, Hold(1))
        .Add(ChannelOp::kListChannels)
        .Add(ChannelOp::kReleaseChannel, Release(1, "done"))
        .Add(ChannelOp::kUnhold, Hold(1))
        .Add(ChannelOp::kListChannels);
    Write("local_channel", "tcp-to-peer", s.out);
  }
  {
    ScriptWriter s{ops, ""};
    s.Add(ChannelOp::kListen, Listen("svc"))
        .Add(ChannelOp::kQueueAccept, Accept(0, RdmaEndpoint(0x22)))
        .Add(ChannelOp::kPlanChannel, Plan("self", "svc", false))
        .Add(ChannelOp::kConnect, Connect(1, RdmaEndpoint(0x21)))
        .Add(ChannelOp::kHoldChannel, Hold(1))
        .Add(ChannelOp::kHoldChannel, Hold(1))
        .Add(ChannelOp::kSweep, Raw({40}))
        .Add(ChannelOp::kUnhold, Hold(1))
        .Add(ChannelOp::kUnlisten, Listen("svc"))
        .Add(ChannelOp::kListChannels);
    Write("local_channel", "rdma-to-self", s.out);
  }
  {
    ScriptWriter s{ops, ""};
    s.Add(ChannelOp::kQueueMeanwhile, Raw({uint8_t(fuzz::Meanwhile::kPeerLost)}))
        .Add(ChannelOp::kQueuePeerReply, PeerReply(RdmaEndpoint(0x33)))
        .Add(ChannelOp::kPlanChannel, Plan("192.0.2.9", "svc", false))
        .Add(ChannelOp::kConnect, Connect(1, RdmaEndpoint(0x34)))
        .Add(ChannelOp::kHoldChannel, Hold(1))
        .Add(ChannelOp::kQueuePeerError, Raw({6}) + "rejected: busy")
        .Add(ChannelOp::kPlanChannel, Plan("B", "svc", false))
        .Add(ChannelOp::kConnect, Connect(2, RdmaEndpoint(0x35)))
        .Add(ChannelOp::kPlanChannel, Plan("down", "svc", false))
        .Add(ChannelOp::kConnect, Connect(3, TcpEndpoint(false)))
        .Add(ChannelOp::kListChannels);
    Write("local_channel", "races", s.out);
  }
  {
    ScriptWriter s{ops, ""};
    s.Add(ChannelOp::kPlanChannel, Plan("[2001:db8::9]:7581", "svc.v2", false))
        .Add(ChannelOp::kSweep, Raw({13}))
        .Add(ChannelOp::kConnect, Connect(1, TcpEndpoint(false)))
        .Add(ChannelOp::kAccept, Accept(1, TcpEndpoint(true)))
        .Add(ChannelOp::kReject, Reject(1, "no"))
        .Add(ChannelOp::kPlanChannel, Plan("nobody", "svc", false))
        .Add(ChannelOp::kPlanChannel, Plan("B", "bad name!", false))
        .Add(ChannelOp::kShutdown)
        .Add(ChannelOp::kPlanChannel, Plan("B", "svc", false))
        .Add(ChannelOp::kSweep, Raw({0x10, 0x0e}))
        .Add(ChannelOp::kListChannels);
    Write("local_channel", "expiry-and-errors", s.out);
  }
}

void PeerChannelSeeds() {
  auto ops = [](ChannelOp op) { return fuzz::OpByte(fuzz::kPeerChannelOps, op); };
  {
    ScriptWriter s{ops, ""};
    s.Add(ChannelOp::kListen, Listen("svc"))
        .Add(ChannelOp::kQueueAccept, Accept(0, TcpEndpoint(true)))
        .Add(ChannelOp::kOpenChannel, Open(77, "svc", TcpEndpoint(false)))
        .Add(ChannelOp::kHoldChannel, Hold(77))
        .Add(ChannelOp::kCloseChannel, Close(77, "closed by the application"))
        .Add(ChannelOp::kListChannels)
        .Add(ChannelOp::kUnhold, Hold(77));
    Write("peer_channel", "tcp-accepted-closed", s.out);
  }
  {
    ScriptWriter s{ops, ""};
    s.Add(ChannelOp::kListen, Listen("svc"))
        .Add(ChannelOp::kQueueAccept, Accept(0, RdmaEndpoint(0x44)))
        .Add(ChannelOp::kOpenChannel, Open(78, "svc", RdmaEndpoint(0x45)))
        .Add(ChannelOp::kHoldChannel, Hold(1))
        .Add(ChannelOp::kPeerEvent, ClosedEvent(1))
        .Add(ChannelOp::kOpenChannel, Open(78, "svc", RdmaEndpoint(0x46)))
        .Add(ChannelOp::kReleaseChannel, Release(1, ""))
        .Add(ChannelOp::kListChannels);
    Write("peer_channel", "rdma-accepted-event", s.out);
  }
  {
    ScriptWriter s{ops, ""};
    s.Add(ChannelOp::kListen, Listen("svc"))
        .Add(ChannelOp::kQueueReject, Reject(0, "busy"))
        .Add(ChannelOp::kOpenChannel, Open(79, "svc", RdmaEndpoint(0x47)))
        .Add(ChannelOp::kOpenChannel, Open(80, "other", TcpEndpoint(false)))
        .Add(ChannelOp::kOpenChannel, Open(0, "svc", TcpEndpoint(false)))
        .Add(ChannelOp::kQueueAccept, Accept(0, TcpEndpoint(false)))  // not listening
        .Add(ChannelOp::kOpenChannel, Open(81, "svc", TcpEndpoint(false)))
        .Add(ChannelOp::kCloseChannel, Close(81, ""))
        .Add(ChannelOp::kListChannels);
    Write("peer_channel", "rejects-and-errors", s.out);
  }
  {
    ScriptWriter s{ops, ""};
    s.Add(ChannelOp::kListen, Listen("svc"))
        .Add(ChannelOp::kQueueMeanwhile, Raw({uint8_t(fuzz::Meanwhile::kPeerClose)}))
        .Add(ChannelOp::kQueueAccept, Accept(0, TcpEndpoint(true)))
        .Add(ChannelOp::kOpenChannel, Open(82, "svc", TcpEndpoint(false)))
        .Add(ChannelOp::kQueueMeanwhile, Raw({uint8_t(fuzz::Meanwhile::kUnlisten)}))
        .Add(ChannelOp::kOpenChannel, Open(83, "svc", TcpEndpoint(false)))
        .Add(ChannelOp::kListen, Listen("svc"))
        .Add(ChannelOp::kQueueAccept, Accept(0, TcpEndpoint(true)))
        .Add(ChannelOp::kOpenChannel, Open(84, "svc", TcpEndpoint(false)))
        .Add(ChannelOp::kPeerLost, Raw({0}))
        .Add(ChannelOp::kSweep, Raw({100}))
        .Add(ChannelOp::kListChannels);
    Write("peer_channel", "races", s.out);
  }
}

// --- peer_session ---

v1::HelloInfo Hello(uint32_t major, const std::string& instance) {
  v1::HelloInfo h;
  h.mutable_protocol()->set_major(major);
  h.set_host_name("hostB");
  h.set_daemon_version("0.1.0");
  h.set_instance_id(instance);
  h.mutable_capabilities()->add_transports("RoCE v2");
  v1::PeerPort* p = h.mutable_capabilities()->add_ports();
  p->set_device("rxe0");
  p->set_port(1);
  p->set_active_mtu(1024);
  p->set_transport("RoCE v2");
  return h;
}

v1::SessionRequest Session(uint32_t major, uint32_t interval) {
  v1::SessionRequest r;
  r.mutable_protocol()->set_major(major);
  r.set_host_name("hostB");
  r.set_instance_id(fuzz::kPeerInstance);
  r.set_heartbeat_interval_ms(interval);
  return r;
}

void PeerSessionSeeds() {
  using fuzz::SessionOp;
  auto add = [](std::string* out, SessionOp op, const std::string& payload) {
    AppendRecord(out, uint8_t(op), payload);
  };
  {
    std::string s;
    v1::HelloRequest hello;
    *hello.mutable_self() = Hello(1, fuzz::kPeerInstance);
    add(&s, SessionOp::kHello, hello.SerializeAsString());
    add(&s, SessionOp::kSession, Session(1, 100).SerializeAsString());
    add(&s, SessionOp::kWriteDone, Raw({0, 1}));
    add(&s, SessionOp::kTick, Raw({0xe8, 0x03}));
    add(&s, SessionOp::kWriteDone, Raw({0, 1}));
    add(&s, SessionOp::kSend, ClosedEvent(0).SerializeAsString());
    add(&s, SessionOp::kWriteDone, Raw({0, 1}));
    add(&s, SessionOp::kCancel, Raw({0}));
    add(&s, SessionOp::kDone, Raw({0}));
    Write("peer_session", "session", s);
  }
  {
    std::string s;
    v1::HelloResponse reply;
    *reply.mutable_self() = Hello(1, "cccccccccccccccccccccccccccccccc");
    add(&s, SessionOp::kHelloReply, reply.SerializeAsString());
    v1::PeerEvent beat;
    beat.set_sequence(1);
    beat.mutable_heartbeat()->set_unix_time_ms(1700000000000);
    add(&s, SessionOp::kEvent, beat.SerializeAsString());
    add(&s, SessionOp::kEvent, ClosedEvent(9).SerializeAsString());
    *reply.mutable_self() = Hello(2, "cccccccccccccccccccccccccccccccc");
    add(&s, SessionOp::kHelloReply, reply.SerializeAsString());
    Write("peer_session", "replies", s);
  }
  {
    std::string s;
    add(&s, SessionOp::kSession, Session(2, 1000).SerializeAsString());
    add(&s, SessionOp::kSession, Session(1, 50).SerializeAsString());
    v1::HelloRequest hello;
    *hello.mutable_self() = Hello(1, "NOT-HEX");
    add(&s, SessionOp::kHello, hello.SerializeAsString());
    add(&s, SessionOp::kSession, Session(1, 60000).SerializeAsString());
    add(&s, SessionOp::kClose, "");
    add(&s, SessionOp::kSession, Session(1, 1000).SerializeAsString());
    Write("peer_session", "refusals", s);
  }
}

// --- local_query ---

void LocalQuerySeeds() {
  using fuzz::QueryOp;
  auto add = [](std::string* out, QueryOp op, const std::string& payload) {
    AppendRecord(out, uint8_t(op), payload);
  };
  {
    std::string s;
    v1::GetDeviceRequest device;
    device.set_name("rxe0");
    add(&s, QueryOp::kGetDevice, device.SerializeAsString());
    v1::GetPortCountersRequest counters;
    counters.set_device("rxe0");
    counters.set_port(1);
    add(&s, QueryOp::kGetPortCounters, counters.SerializeAsString());
    v1::ResolvePathRequest path;
    path.set_peer_address("192.0.2.7");
    path.set_peer_active_mtu(4096);
    add(&s, QueryOp::kResolvePath, path.SerializeAsString());
    path.set_peer_address("2001:db8::7");
    path.set_peer_active_mtu(0);
    add(&s, QueryOp::kResolvePath, path.SerializeAsString());
    Write("local_query", "queries", s);
  }
  {
    std::string s;
    add(&s, QueryOp::kSetConfig,
        "[mtu]\ncap = 1024\n[gid]\nindex = 2\nfamily = \"ipv6\"\n[devices]\n"
        "include = [\"rxe\", \"=mlx5_0:1\"]\n");
    add(&s, QueryOp::kSetSource, "192.0.2.1");
    v1::ResolvePathRequest path;
    path.set_peer_address("192.0.2.7");
    add(&s, QueryOp::kResolvePath, path.SerializeAsString());
    path.set_peer_address("fe80::1%veth0");
    add(&s, QueryOp::kResolvePath, path.SerializeAsString());
    add(&s, QueryOp::kSetConfig, "[gid]\nsubnet = \"192.0.2.0/24\"\nroce_version = \"v1\"\n");
    add(&s, QueryOp::kSetSource, "");
    path.set_peer_address("10.0.0.1");
    add(&s, QueryOp::kResolvePath, path.SerializeAsString());
    Write("local_query", "config-and-paths", s);
  }
}

// --- config ---

void ConfigSeeds() {
  Write("config", "daemon-and-peers",
        "[daemon]\nlog_level = \"debug\"\nsocket_mode = 0o660\nallowed_uids = [0, 1000]\n"
        "[[peers]]\nname = \"b\"\naddress = \"192.0.2.2\"\n"
        "[[peers]]\nname = \"c\"\naddress = \"[2001:db8::3]:7581\"\n"
        "[[pool]]\npeer = \"b\"\nservice = \"ollama\"\nchannels = 4\n");
  Write("config", "policy",
        "[devices]\ninclude = [\"mlx5\", \"=rxe0:1\"]\nexclude = [\"mlx5_1\"]\n"
        "[gid]\nindex = \"auto\"\nfamily = \"ipv4\"\nsubnet = \"10.0.0.0/8\"\n"
        "overlay_netdevs = [\"docker*\"]\n[mtu]\ncap = 2048\n"
        "[qp]\ntimeout = 18\nhop_limit = 1\nrelaxed_ordering = 0\n[echo]\nenabled = false\n");
  Write("config", "env",
        "[qp]\nretry_cnt = 3\n#!env\nRDMAD_QP_TIMEOUT=20\nRDMA_DEVICE=^mlx5_0:1,=mlx5_1,bnxt\n"
        "RDMA_MTU=1500\nRDMAD_DAEMON_SOCKET_MODE=0660\nRDMAD_GID_INDEX=auto\n");
  Write("config", "errors", "[qp]\ntimeout = 99\ntypo = 1\n[nope]\n");
  Write("config", "tls", "[daemon]\npeer_address = \"0.0.0.0\"\ntls_cert = \"/x.pem\"\n");
}

// --- grpc_api ---

void GrpcApiSeeds() {
  // The method index: Rdmad's methods, then RdmadPeer's, in .proto order.
  auto index = [](const std::string& service, const std::string& method) -> uint8_t {
    int i = 0;
    for (const auto* file :
         {v1::GetStatusRequest::descriptor()->file(), v1::HelloRequest::descriptor()->file()}) {
      for (int s = 0; s < file->service_count(); ++s) {
        for (int m = 0; m < file->service(s)->method_count(); ++m, ++i) {
          if (file->service(s)->name() == service &&
              file->service(s)->method(m)->name() == method) {
            return uint8_t(i);
          }
        }
      }
    }
    std::fprintf(stderr, "no method %s/%s\n", service.c_str(), method.c_str());
    std::exit(1);
  };
  auto local = [&](std::string* out, const std::string& m, const std::string& payload) {
    AppendRecord(out, index("Rdmad", m), payload);
  };
  auto peer = [&](std::string* out, const std::string& m, const std::string& payload) {
    AppendRecord(out, index("RdmadPeer", m), payload);
  };
  {
    std::string s;
    local(&s, "GetStatus", "");
    local(&s, "ListDevices", "");
    v1::GetDeviceRequest device;
    device.set_name("rxe0");
    local(&s, "GetDevice", device.SerializeAsString());
    v1::ResolvePathRequest path;
    path.set_peer_address("192.0.2.7");
    local(&s, "ResolvePath", path.SerializeAsString());
    v1::GetPortCountersRequest counters;
    counters.set_device("rxe0");
    counters.set_port(1);
    local(&s, "GetPortCounters", counters.SerializeAsString());
    local(&s, "ListPeers", "");
    local(&s, "ListChannels", "");
    Write("grpc_api", "queries", s);
  }
  {
    std::string s;
    local(&s, "Listen", Listen("svc").SerializeAsString());
    local(&s, "PlanChannel", Plan("self", "svc", true).SerializeAsString());
    v1::WatchEventsRequest watch;
    watch.add_kinds(v1::CONFIG_RELOADED);
    watch.add_kinds(v1::GID_REMOVED);
    local(&s, "WatchEvents", watch.SerializeAsString());
    local(&s, "HoldChannel", Hold(5).SerializeAsString());
    local(&s, "ReleaseChannel", Release(5, "bye").SerializeAsString());
    local(&s, "Connect", Connect(5, TcpEndpoint(false)).SerializeAsString());
    local(&s, "Accept", Accept(1, TcpEndpoint(true)).SerializeAsString());
    local(&s, "Reject", Reject(1, "no").SerializeAsString());
    Write("grpc_api", "channels", s);
  }
  {
    std::string s;
    v1::WatchPoolRequest watch;
    watch.set_pid(4242);
    local(&s, "WatchPool", watch.SerializeAsString());
    v1::PrewarmRequest prewarm;
    prewarm.set_client_id(1);
    prewarm.set_peer("192.0.2.7");
    prewarm.set_service("svc");
    prewarm.set_channels(4);
    local(&s, "Prewarm", prewarm.SerializeAsString());
    v1::ReportPoolRequest report;
    report.set_client_id(1);
    report.set_peer("192.0.2.7");
    report.set_service("svc");
    report.set_warm(3);
    report.set_in_use(1);
    local(&s, "ReportPool", report.SerializeAsString());
    local(&s, "ListPools", "");
    Write("grpc_api", "pool", s);
  }
  {
    std::string s;
    v1::HelloRequest hello;
    *hello.mutable_self() = Hello(1, fuzz::kPeerInstance);
    peer(&s, "Hello", hello.SerializeAsString());
    peer(&s, "Session", Session(1, 100).SerializeAsString());
    peer(&s, "OpenChannel", Open(77, "svc", RdmaEndpoint(0x55)).SerializeAsString());
    peer(&s, "CloseChannel", Close(77, "bye").SerializeAsString());
    Write("grpc_api", "peer", s);
  }
  {
    std::string s;
    local(&s, "Connect", "\x12\x05garbage-that-is-not-a-message");
    peer(&s, "OpenChannel", std::string("\x0a\xff\xff\xff\xff\x0f", 6));
    Write("grpc_api", "garbage", s);
  }
}

// --- data_path ---

std::string Bytes(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

void DataPathSeeds() {
  Write("data_path", "echo-header",
        Bytes(echo::EncodeHeader({echo::kVersion, echo::Mode::kEcho, 0})));
  Write("data_path", "sink-header",
        Bytes(echo::EncodeHeader({echo::kVersion, echo::Mode::kSink, 16})));
  Write("data_path", "region-header",
        Bytes(echo::EncodeHeader({echo::kVersion, echo::Mode::kRegion, 1 << 20})));
  Write("data_path", "ack", Bytes(echo::EncodeAck({Status::Ok(), {'o', 'k'}})));
  Write("data_path", "ack-error",
        Bytes(echo::EncodeAck({Status::InvalidArgument("bad mode"), {}})));
  Write("data_path", "count", Bytes(echo::EncodeCount(42)));
  Write("data_path", "region",
        Bytes(RegionDescriptor{0x7f0000001000, 4096, 0x1234, 0, {}}.Serialize()));
  Write("data_path", "region-rails",
        Bytes(RegionDescriptor{0x7f0000001000, 4096, 0x1234, 0, {{7, 0x99}}}.Serialize()));
  internal::FrameHeader frame;
  frame.type = internal::FrameType::kWrite;
  frame.payload_len = 4096;
  frame.region_id = 1;
  frame.offset = 64;
  internal::RawFrameHeader raw = internal::EncodeFrameHeader(frame);
  Write("data_path", "tcp-frame", std::string(raw.begin(), raw.end()));
  uint32_t imm = internal::EncodeImm({internal::MessageType::kData, true, false, 7});
  Write("data_path", "imm", std::string(reinterpret_cast<const char*>(&imm), 4));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR (tests/fuzz/corpus)\n", argv[0]);
    return 2;
  }
  g_root = argv[1];
  mkdir(g_root.c_str(), 0755);
  EndpointSeeds();
  LocalChannelSeeds();
  PeerChannelSeeds();
  PeerSessionSeeds();
  LocalQuerySeeds();
  ConfigSeeds();
  GrpcApiSeeds();
  DataPathSeeds();
  return 0;
}

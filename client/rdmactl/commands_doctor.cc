// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl doctor [PEER]: checks this host and, given a peer, the path to
// it (doctor_checks.h), and says for each check ok, warn or fail with the
// fix. Exit status 0, 1 or 2 for ok, a warning, a failure.

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "client/rdmactl/command.h"
#include "client/rdmactl/doctor_checks.h"
#include "client/rdmactl/doctor_host.h"
#include "client/rdmactl/echo_client.h"
#include "common/echo_protocol.h"

namespace rdmactl {
namespace {

struct DoctorArgs {
  std::string peer;
  size_t channels = 16;
};

// The QP attributes the daemon plans: from a path to one of this host's
// own RoCE addresses, or the config's defaults (qp.*) when there is none.
uint64_t BytesPerChannel(rdmad::Client& client, const std::vector<rdmad::Device>& devices) {
  for (const rdmad::Device& d : devices) {
    for (const rdmad::Port& p : d.ports) {
      for (const rdmad::Gid& g : p.gids) {
        if (g.ip.empty()) continue;
        auto path = client.ResolvePath(g.ip);
        if (path.ok() && path->qp.slot_size != 0) {
          return PinnedPerChannel(path->qp.send_depth, path->qp.recv_depth, path->qp.slot_size);
        }
      }
    }
  }
  return DefaultPinnedPerChannel();
}

// The test channel: a 4 KiB region at the peer's echo service, one RDMA
// Write of a pattern into it and a Read back.
void TestChannel(rdmad::Client& client, PeerFacts* p) {
  constexpr size_t kBytes = 4096;
  auto echo = OpenEcho(client, p->peer, {rdmad::echo::kVersion, rdmad::echo::Mode::kRegion, kBytes},
                       EchoOpenOptions{});
  if (!echo.ok()) {
    p->channel = rdmad::Status(echo.status().code(), EchoOpenError(p->peer, echo.status()));
    return;
  }
  rdmad::Channel& c = *echo->channel;
  p->channel = rdmad::Status::Ok();
  const rdmad::ChannelInfo& info = c.info();
  p->transport = info.transport == rdmad::ChannelTransport::kRdma ? "RDMA" : "TCP";
  p->transport_reason = info.transport_reason;
  if (info.transport == rdmad::ChannelTransport::kRdma && p->path.ok()) {
    // Both ends' MTUs as the handshake exchanged them.
    p->path->local_active_mtu = info.local_active_mtu;
    p->path->peer_active_mtu = info.peer_active_mtu;
  }
  if (info.transport == rdmad::ChannelTransport::kRdma) {
    p->transport_reason = info.local_device + " GID index " + std::to_string(info.local_gid_index) +
                          " (" + info.gid_type + ") to " + info.peer_device + ", MTU " +
                          std::to_string(info.mtu);
  }
  auto remote = rdmad::RegionDescriptor::Parse(echo->ack.data(), echo->ack.size());
  if (!remote.ok()) {
    p->write = remote.status();
    c.Close();
    return;
  }
  std::vector<uint8_t> out = rdmad::echo::PatternPayload(7, kBytes), back(kBytes, 0);
  auto src = c.RegisterMemory(out.data(), out.size());
  auto dst = c.RegisterMemory(back.data(), back.size());
  if (!src.ok() || !dst.ok()) {
    p->write = src.ok() ? dst.status() : src.status();
    c.Close();
    return;
  }
  auto start = std::chrono::steady_clock::now();
  p->write = c.Write(**src, 0, *remote, 0, kBytes);
  if (p->write.ok()) p->write = c.Read(**dst, 0, *remote, 0, kBytes);
  p->write_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  if (p->write.ok() && back != out) {
    p->write = rdmad::Status(rdmad::StatusCode::kDataLoss,
                             "the bytes read back differ from those written");
  }
  c.Close();
}

PeerFacts ExaminePeer(rdmad::Client& client, const std::string& peer) {
  PeerFacts p;
  p.peer = peer;
  auto peers = client.ListPeers();
  if (peers.ok()) {
    for (const rdmad::PeerInfo& i : *peers) {
      std::string host = i.address.substr(0, i.address.rfind(':'));
      if (i.name == peer || i.address == peer || host == peer) p.info = i;
    }
  }
  if (!p.info || p.info->state != rdmad::PeerState::kUp) return p;
  auto ip = PeerIp(client, peer);
  p.path = ip.ok() ? client.ResolvePath(*ip) : rdmad::StatusOr<rdmad::Path>(ip.status());
  TestChannel(client, &p);
  return p;
}

int Doctor(Context& ctx, const DoctorArgs& a) {
  std::string socket =
      ctx.globals.socket.empty() ? rdmad::Client::DefaultSocketPath() : ctx.globals.socket;
  rdmad::ClientOptions options = ClientOptionsFor(ctx.globals);
  options.socket_path = socket;
  auto client = rdmad::Client::Open(options);
  std::unique_ptr<DaemonFacts> daemon;
  if (client.ok()) {
    auto status = (*client)->GetStatus();
    auto devices = (*client)->ListDevices();
    if (status.ok() && devices.ok()) {
      daemon = std::make_unique<DaemonFacts>();
      daemon->status = std::move(status).value();
      daemon->devices = std::move(devices).value();
      daemon->bytes_per_channel = BytesPerChannel(**client, daemon->devices);
    }
  }
  HostFacts host = ReadHostFacts(socket, daemon ? daemon->status.config_file : "");
  host.socket_reached = daemon != nullptr;
  if (!client.ok()) host.socket_error = client.status().message();
  std::vector<CheckResult> checks = CheckHost(host, daemon.get(), a.channels);
  if (!a.peer.empty() && daemon) {
    for (CheckResult& c : CheckPeer(ExaminePeer(**client, a.peer))) checks.push_back(std::move(c));
  }
  if (ctx.globals.json) {
    PrintJson(ctx, ChecksJson(checks));
  } else {
    std::fputs(RenderChecks(checks).c_str(), ctx.out);
  }
  return DoctorExitCode(checks);
}

}  // namespace

void DeclareDoctor(CLI::App& verb, Context& ctx) {
  auto a = std::make_shared<DoctorArgs>();
  verb.add_option("PEER", a->peer,
                  "also check the path to this peer (its name or address) and a test channel "
                  "with a small RDMA Write to its echo service");
  verb.add_option("--channels", a->channels, "channels the locked-memory limit should hold (16)")
      ->check(CLI::Range(size_t(1), size_t(1) << 20));
  RunsWith(verb, ctx, [&ctx, a] { return Doctor(ctx, *a); });
}

}  // namespace rdmactl

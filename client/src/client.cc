// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "rdmad/client.h"

#include <grpcpp/grpcpp.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "client/src/channel_client.h"
#include "client/src/pool_follower.h"
#include "client/src/record_reader.h"
#include "common/endpoint.h"
#include "common/grpc_runtime.h"
#include "rdmad/v1/rdmad.grpc.pb.h"

namespace rdmad {
namespace {

// The calling thread's allowed CPUs as a list ("0-7,16"); "" when unknown.
std::string ThreadCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return "";
  std::string list;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    list += (list.empty() ? "" : ",") + std::to_string(cpu);
    if (last > cpu) list += "-" + std::to_string(last);
    cpu = last;
  }
  return list;
}

using internal::ReadAs;

constexpr char kDefaultSocket[] = "/run/rdmad/rdmad.sock";

Status FromGrpc(const grpc::Status& status, std::string_view what) {
  if (status.ok()) return Status::Ok();
  return Status(StatusCodeFromInt(status.error_code()),
                std::string(what) + ": " + status.error_message());
}

// Checks the socket file before gRPC hides the reason behind UNAVAILABLE.
Status CheckSocket(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return Status::Unavailable("cannot reach rdmad at " + path + ": " + std::strerror(errno));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return Status::Unavailable("cannot reach rdmad at " + path + ": not a socket");
  }
  if (access(path.c_str(), R_OK | W_OK) != 0) {
    return Status::PermissionDenied("cannot use rdmad's socket " + path + ": " +
                                    std::strerror(errno) +
                                    " (is this user in the socket's group?)");
  }
  return Status::Ok();
}

class GrpcEventStream final : public EventStream {
 public:
  explicit GrpcEventStream(v1::Rdmad::Stub* stub, const v1::WatchEventsRequest& req)
      : reader_(stub->WatchEvents(&context_, req)) {}

  // Waits until the daemon has subscribed this stream.
  void WaitSubscribed() { reader_->WaitForInitialMetadata(); }

  bool Next(Event* event) override {
    v1::Event in;
    if (!reader_->Read(&in)) return false;
    *event = ReadAs<Event>(in);
    return true;
  }
  Status Finish() override { return FromGrpc(reader_->Finish(), "WatchEvents"); }
  void Cancel() override { context_.TryCancel(); }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::Event>> reader_;
};

class GrpcClient final : public Client {
 public:
  GrpcClient(std::string path, std::shared_ptr<grpc::Channel> channel, const ClientOptions& options)
      : path_(std::move(path)),
        channel_(std::move(channel)),
        stub_(v1::Rdmad::NewStub(channel_)),  // shared by the channels' calls (Rpc)
        options_(options),
        reporter_(internal::TrafficReporter::Make(channel_, options.traffic_report_interval)) {
    if (options_.follow_pool) Follower();
  }

  const std::string& socket_path() const override { return path_; }

  StatusOr<DaemonStatus> GetStatus() override {
    v1::GetStatusResponse response;
    RDMAD_RETURN_IF_ERROR(
        Call(&v1::Rdmad::Stub::GetStatus, "GetStatus", v1::GetStatusRequest(), &response));
    return ReadAs<DaemonStatus>(response);
  }

  StatusOr<std::vector<Device>> ListDevices() override {
    v1::ListDevicesResponse response;
    RDMAD_RETURN_IF_ERROR(
        Call(&v1::Rdmad::Stub::ListDevices, "ListDevices", v1::ListDevicesRequest(), &response));
    std::vector<Device> out;
    for (const auto& d : response.devices()) out.push_back(ReadAs<Device>(d));
    return out;
  }

  StatusOr<Device> GetDevice(const std::string& name) override {
    v1::GetDeviceRequest request;
    request.set_name(name);
    v1::Device response;
    RDMAD_RETURN_IF_ERROR(Call(&v1::Rdmad::Stub::GetDevice, "GetDevice", request, &response));
    return ReadAs<Device>(response);
  }

  StatusOr<PortCounters> GetPortCounters(const std::string& device, uint32_t port) override {
    v1::GetPortCountersRequest request;
    request.set_device(device);
    request.set_port(port);
    v1::GetPortCountersResponse response;
    RDMAD_RETURN_IF_ERROR(
        Call(&v1::Rdmad::Stub::GetPortCounters, "GetPortCounters", request, &response));
    return PortCounters(response.counters().begin(), response.counters().end());
  }

  StatusOr<std::vector<ChannelSummary>> ListChannels() override {
    v1::ListChannelsResponse response;
    RDMAD_RETURN_IF_ERROR(
        Call(&v1::Rdmad::Stub::ListChannels, "ListChannels", v1::ListChannelsRequest(), &response));
    std::vector<ChannelSummary> out;
    for (const v1::ChannelEntry& e : response.channels()) {
      out.push_back(ReadAs<ChannelSummary>(e));
    }
    return out;
  }

  Status CloseChannel(uint64_t id, const std::string& reason) override {
    v1::ReleaseChannelRequest request;
    request.set_channel_id(id);
    request.set_reason(reason);
    v1::ReleaseChannelResponse response;
    return Call(&v1::Rdmad::Stub::ReleaseChannel, "ReleaseChannel", request, &response);
  }

  StatusOr<std::unique_ptr<Listener>> Listen(const std::string& service) override {
    return internal::ListenOn(Rpc(), service);
  }

  StatusOr<std::unique_ptr<Channel>> Connect(const std::string& peer, const std::string& service,
                                             const ConnectOptions& options) override {
    auto started = std::chrono::steady_clock::now();
    internal::PoolFollower* follower = FollowerIfAny();
    if (follower != nullptr && !options.force_tcp) {
      std::unique_ptr<Channel> warm = follower->pool().Acquire(peer, service);
      if (warm) return Timed(std::move(warm), true, started);
    }
    auto cold = internal::ConnectTo(Rpc(), peer, service, options);
    if (!cold.ok()) return cold;
    return Timed(std::move(cold).value(), false, started);
  }

  StatusOr<std::vector<std::unique_ptr<Channel>>> ConnectMany(
      const std::string& peer, const std::string& service, size_t count,
      const ConnectOptions& options) override {
    if (count == 0) return Status::InvalidArgument("ConnectMany: count must be at least 1");
    std::vector<std::unique_ptr<Channel>> channels;
    while (channels.size() < count) {
      size_t n = std::min(count - channels.size(), internal::kMaxChannelBatch);
      auto started = std::chrono::steady_clock::now();
      auto batch = internal::ConnectBatch(Rpc(), peer, service, n, options);
      if (!batch.ok()) return batch.status();  // the channels made so far close
      if (reporter_) {                         // one timing per batch, as its first channel's
        reporter_->Connected(batch->front()->info().id, false,
                             std::chrono::steady_clock::now() - started);
      }
      for (auto& channel : batch.value()) channels.push_back(std::move(channel));
    }
    return channels;
  }

  Status Prewarm(const std::string& peer, const std::string& service, int channels) override {
    return Follower()->Prewarm(peer, service, channels, options_.call_timeout);
  }

  StatusOr<std::vector<PoolSummary>> ListPools() override {
    v1::ListPoolsResponse response;
    RDMAD_RETURN_IF_ERROR(
        Call(&v1::Rdmad::Stub::ListPools, "ListPools", v1::ListPoolsRequest(), &response));
    std::vector<PoolSummary> out;
    for (const v1::PoolRow& r : response.pools()) internal::ReadRecord(r, &out.emplace_back());
    return out;
  }

  StatusOr<ClusterView> ListMembers(const std::string& service) override {
    v1::ListMembersRequest request;
    request.set_service(service);
    v1::ListMembersResponse response;
    RDMAD_RETURN_IF_ERROR(Call(&v1::Rdmad::Stub::ListMembers, "ListMembers", request, &response));
    return ReadAs<ClusterView>(response);
  }

  StatusOr<Path> ResolvePath(const std::string& peer_address, uint32_t peer_active_mtu) override {
    v1::ResolvePathRequest request;
    request.set_peer_address(peer_address);
    request.set_peer_active_mtu(peer_active_mtu);
    v1::Path response;
    RDMAD_RETURN_IF_ERROR(Call(&v1::Rdmad::Stub::ResolvePath, "ResolvePath", request, &response));
    return ReadAs<Path>(response);
  }

  StatusOr<std::vector<PeerInfo>> ListPeers() override {
    v1::ListPeersResponse response;
    RDMAD_RETURN_IF_ERROR(
        Call(&v1::Rdmad::Stub::ListPeers, "ListPeers", v1::ListPeersRequest(), &response));
    std::vector<PeerInfo> out;
    for (const auto& p : response.peers()) out.push_back(ReadAs<PeerInfo>(p));
    return out;
  }

  StatusOr<HostTopology> GetTopology() override {
    v1::GetTopologyResponse response;
    RDMAD_RETURN_IF_ERROR(
        Call(&v1::Rdmad::Stub::GetTopology, "GetTopology", v1::GetTopologyRequest(), &response));
    return ReadAs<HostTopology>(response);
  }

  StatusOr<RailPlan> PlanRails(const RailRequest& rails) override {
    v1::PlanRailsRequest request;
    request.set_gpu(rails.gpu);
    request.set_cpus(rails.gpu.empty() && rails.cpus.empty() ? ThreadCpus() : rails.cpus);
    request.set_rails(rails.rails);
    request.set_explain_only(rails.explain_only);
    v1::RailPlan response;
    RDMAD_RETURN_IF_ERROR(Call(&v1::Rdmad::Stub::PlanRails, "PlanRails", request, &response));
    return ReadAs<RailPlan>(response);
  }

  StatusOr<std::unique_ptr<EventStream>> WatchEvents(const std::vector<EventKind>& kinds) override {
    v1::WatchEventsRequest request;
    for (EventKind kind : kinds) request.add_kinds(static_cast<v1::EventKind>(kind));
    auto stream = std::make_unique<GrpcEventStream>(stub_.get(), request);
    stream->WaitSubscribed();
    return std::unique_ptr<EventStream>(std::move(stream));
  }

 private:
  std::string path_;
  std::shared_ptr<grpc::Channel> channel_;
  std::shared_ptr<v1::Rdmad::Stub> stub_;
  // One unary call with the configured deadline.
  template <typename Request, typename Response>
  Status Call(grpc::Status (v1::Rdmad::Stub::*method)(grpc::ClientContext*, const Request&,
                                                      Response*),
              std::string_view what, const Request& request, Response* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + options_.call_timeout);
    return FromGrpc((stub_.get()->*method)(&context, request, response), what);
  }

  internal::DaemonRpc Rpc() const {
    return {channel_, stub_, options_.reattach_timeout, reporter_};
  }
  // A Connect's channel, its time told to rdmad (cold or from the pool).
  std::unique_ptr<Channel> Timed(std::unique_ptr<Channel> channel, bool pooled,
                                 std::chrono::steady_clock::time_point started) {
    if (reporter_) {
      reporter_->Connected(channel->info().id, pooled, std::chrono::steady_clock::now() - started);
    }
    return channel;
  }

  // The pool follower, started on first use.
  internal::PoolFollower* Follower() {
    std::lock_guard lock(follower_mu_);
    if (!follower_) {
      internal::DaemonRpc rpc = Rpc();
      follower_ = std::make_unique<internal::PoolFollower>(
          rpc.channel, [rpc](const std::string& peer, const std::string& service) {
            return internal::ConnectTo(rpc, peer, service, ConnectOptions{});
          });
    }
    return follower_.get();
  }
  internal::PoolFollower* FollowerIfAny() {
    std::lock_guard lock(follower_mu_);
    return follower_.get();
  }

  ClientOptions options_;
  std::shared_ptr<internal::TrafficReporter> reporter_;  // null: not reporting
  std::mutex follower_mu_;
  std::unique_ptr<internal::PoolFollower> follower_;  // guarded by follower_mu_ (set once)
};

}  // namespace

std::string_view EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kConfigReloaded: return "config-reloaded";
    case EventKind::kConfigReloadFailed: return "config-reload-failed";
    case EventKind::kDaemonStopping: return "daemon-stopping";
    case EventKind::kDeviceAdded: return "device-added";
    case EventKind::kDeviceRemoved: return "device-removed";
    case EventKind::kPortStateChanged: return "port-state-changed";
    case EventKind::kGidAdded: return "gid-added";
    case EventKind::kGidRemoved: return "gid-removed";
    case EventKind::kRailChanged: return "rail-changed";
    case EventKind::kUnspecified: break;
  }
  return "unspecified";
}

std::string_view PeerStateName(PeerState state) {
  switch (state) {
    case PeerState::kConnecting: return "connecting";
    case PeerState::kUp: return "up";
    case PeerState::kDown: return "down";
    case PeerState::kVersionMismatch: return "version-mismatch";
    case PeerState::kCircuitOpen: return "circuit-open";
    case PeerState::kIdle: return "idle";
    case PeerState::kUnspecified: break;
  }
  return "unspecified";
}

std::string Client::DefaultSocketPath() {
  const char* env = std::getenv("RDMAD_SOCKET");
  return (env && *env) ? env : kDefaultSocket;
}

StatusOr<std::unique_ptr<Client>> Client::Open(const ClientOptions& options) {
  if (options.log_level) SetClientLogLevel(*options.log_level);
  if (options.log_sink) SetClientLogSink(options.log_sink);
  UseReleaseMutexChecks();  // gRPC's locks, without debug-build lock-order checks
  std::string path = options.socket_path.empty() ? DefaultSocketPath() : options.socket_path;
  RDMAD_RETURN_IF_ERROR(CheckSocket(path));
  // Reconnects fast: after a restart of rdmad, channels re-attach within
  // about a second of the new daemon listening.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  auto channel =
      grpc::CreateCustomChannel("unix:" + path, grpc::InsecureChannelCredentials(), args);
  auto deadline = std::chrono::system_clock::now() + options.connect_timeout;
  if (!channel->WaitForConnected(deadline)) {
    return Status::Unavailable("cannot reach rdmad at " + path + ": no answer within " +
                               std::to_string(options.connect_timeout.count()) + " ms");
  }
  return std::unique_ptr<Client>(new GrpcClient(path, std::move(channel), options));
}

}  // namespace rdmad

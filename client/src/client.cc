// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "rdmad/client.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "rdmad/v1/rdmad.grpc.pb.h"

namespace rdmad {
namespace {

constexpr char kDefaultSocket[] = "/run/rdmad/rdmad.sock";

Status FromGrpc(const grpc::Status& status, std::string_view what) {
  if (status.ok()) return Status::Ok();
  return Status(static_cast<StatusCode>(status.error_code()),
                std::string(what) + ": " + status.error_message());
}

DaemonStatus FromProto(const v1::GetStatusResponse& r) {
  DaemonStatus s;
  s.version = r.version();
  s.pid = r.pid();
  s.uptime_seconds = r.uptime_seconds();
  s.config_file = r.config_file();
  s.config_generation = r.config_generation();
  s.socket_path = r.socket_path();
  s.device_count = r.device_count();
  s.port_count = r.port_count();
  s.active_port_count = r.active_port_count();
  s.peer_count = r.peer_count();
  s.service_count = r.service_count();
  s.channel_count = r.channel_count();
  s.connections_accepted = r.connections_accepted();
  s.event_subscribers = r.event_subscribers();
  return s;
}

EventKind FromProto(v1::EventKind kind) {
  switch (kind) {
    case v1::CONFIG_RELOADED: return EventKind::kConfigReloaded;
    case v1::CONFIG_RELOAD_FAILED: return EventKind::kConfigReloadFailed;
    case v1::DAEMON_STOPPING: return EventKind::kDaemonStopping;
    default: return EventKind::kUnspecified;
  }
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
    event->sequence = in.sequence();
    event->unix_time_ms = in.unix_time_ms();
    event->kind = FromProto(in.kind());
    event->message = in.message();
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
  GrpcClient(std::string path, std::shared_ptr<grpc::Channel> channel,
             const ClientOptions& options)
      : path_(std::move(path)),
        channel_(std::move(channel)),
        stub_(v1::Rdmad::NewStub(channel_)),
        options_(options) {}

  const std::string& socket_path() const override { return path_; }

  StatusOr<DaemonStatus> GetStatus() override {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + options_.call_timeout);
    v1::GetStatusResponse response;
    grpc::Status status = stub_->GetStatus(&context, v1::GetStatusRequest(), &response);
    if (!status.ok()) return FromGrpc(status, "GetStatus");
    return FromProto(response);
  }

  StatusOr<std::unique_ptr<EventStream>> WatchEvents(
      const std::vector<EventKind>& kinds) override {
    v1::WatchEventsRequest request;
    for (EventKind kind : kinds) request.add_kinds(static_cast<v1::EventKind>(kind));
    auto stream = std::make_unique<GrpcEventStream>(stub_.get(), request);
    stream->WaitSubscribed();
    return std::unique_ptr<EventStream>(std::move(stream));
  }

 private:
  std::string path_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Rdmad::Stub> stub_;
  ClientOptions options_;
};

}  // namespace

std::string_view EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kConfigReloaded: return "config-reloaded";
    case EventKind::kConfigReloadFailed: return "config-reload-failed";
    case EventKind::kDaemonStopping: return "daemon-stopping";
    case EventKind::kUnspecified: break;
  }
  return "unspecified";
}

std::string Client::DefaultSocketPath() {
  const char* env = std::getenv("RDMAD_SOCKET");
  return (env && *env) ? env : kDefaultSocket;
}

StatusOr<std::unique_ptr<Client>> Client::Connect(const ClientOptions& options) {
  std::string path = options.socket_path.empty() ? DefaultSocketPath() : options.socket_path;
  RDMAD_RETURN_IF_ERROR(CheckSocket(path));
  auto channel = grpc::CreateChannel("unix:" + path, grpc::InsecureChannelCredentials());
  auto deadline = std::chrono::system_clock::now() + options.connect_timeout;
  if (!channel->WaitForConnected(deadline)) {
    return Status::Unavailable("cannot reach rdmad at " + path + ": no answer within " +
                               std::to_string(options.connect_timeout.count()) + " ms");
  }
  return std::unique_ptr<Client>(new GrpcClient(path, std::move(channel), options));
}

}  // namespace rdmad

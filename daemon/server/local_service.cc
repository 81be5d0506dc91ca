// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/server/local_service.h"

#include <set>

#include "daemon/core/event_streamer.h"
#include "daemon/server/grpc_status.h"
#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

v1::EventKind ToProto(DaemonEventKind kind) {
  switch (kind) {
    case DaemonEventKind::kConfigReloaded: return v1::CONFIG_RELOADED;
    case DaemonEventKind::kConfigReloadFailed: return v1::CONFIG_RELOAD_FAILED;
    case DaemonEventKind::kDaemonStopping: return v1::DAEMON_STOPPING;
  }
  return v1::EVENT_KIND_UNSPECIFIED;
}

StatusOr<std::set<DaemonEventKind>> KindsFromRequest(const v1::WatchEventsRequest& req) {
  std::set<DaemonEventKind> kinds;
  for (int kind : req.kinds()) {
    switch (kind) {
      case v1::CONFIG_RELOADED: kinds.insert(DaemonEventKind::kConfigReloaded); break;
      case v1::CONFIG_RELOAD_FAILED: kinds.insert(DaemonEventKind::kConfigReloadFailed); break;
      case v1::DAEMON_STOPPING: kinds.insert(DaemonEventKind::kDaemonStopping); break;
      default:
        return Status::InvalidArgument("kinds: unknown event kind " + std::to_string(kind));
    }
  }
  return kinds;
}

// Writes one WatchEvents stream; deletes itself when gRPC is done with it.
class EventStreamReactor final : public grpc::ServerWriteReactor<v1::Event>,
                                 public StreamWriter {
 public:
  explicit EventStreamReactor(EventBus* bus) : streamer_(bus, this) {}

  void Start(std::set<DaemonEventKind> kinds) { streamer_.Start(std::move(kinds)); }

  // StreamWriter:
  void Begin() override { StartSendInitialMetadata(); }
  void Write(const DaemonEvent& event) override {
    out_.set_sequence(event.sequence);
    out_.set_unix_time_ms(event.unix_time_ms);
    out_.set_kind(ToProto(event.kind));
    out_.set_message(event.message);
    StartWrite(&out_);
  }
  void Finish(const Status& status) override {
    grpc::ServerWriteReactor<v1::Event>::Finish(ToGrpcStatus(status));
  }

  // grpc::ServerWriteReactor:
  void OnSendInitialMetadataDone(bool ok) override { streamer_.OnWriteDone(ok); }
  void OnWriteDone(bool ok) override { streamer_.OnWriteDone(ok); }
  void OnCancel() override { streamer_.Cancel(); }
  void OnDone() override {
    streamer_.Detach();
    delete this;
  }

 private:
  v1::Event out_;  // the one write in flight
  EventStreamer streamer_;
};

}  // namespace

grpc::ServerUnaryReactor* LocalService::GetStatus(grpc::CallbackServerContext* context,
                                                  const v1::GetStatusRequest*,
                                                  v1::GetStatusResponse* response) {
  DaemonStatusSnapshot s = core_->GetStatus();
  response->set_version(s.version);
  response->set_pid(s.pid);
  response->set_uptime_seconds(s.uptime_seconds);
  response->set_config_file(s.config_file);
  response->set_config_generation(s.config_generation);
  response->set_socket_path(s.socket_path);
  response->set_device_count(s.device_count);
  response->set_port_count(s.port_count);
  response->set_active_port_count(s.active_port_count);
  response->set_peer_count(s.peer_count);
  response->set_service_count(s.service_count);
  response->set_channel_count(s.channel_count);
  response->set_connections_accepted(s.connections_accepted);
  response->set_event_subscribers(s.event_subscribers);
  auto* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerWriteReactor<v1::Event>* LocalService::WatchEvents(
    grpc::CallbackServerContext* context, const v1::WatchEventsRequest* request) {
  auto kinds = KindsFromRequest(*request);
  auto* reactor = new EventStreamReactor(&core_->events());
  if (!kinds.ok()) {
    reactor->Finish(kinds.status());
    return reactor;
  }
  reactor->Start(std::move(kinds).value());
  return reactor;
}

}  // namespace rdmad

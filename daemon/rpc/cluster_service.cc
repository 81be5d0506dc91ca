// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The local API's cluster call (LocalService, declared in local_service.h):
// ListMembers validates, asks the daemon for its view of the members and
// fills the reply.

#include "daemon/broker/service_registry.h"
#include "daemon/rpc/grpc_status.h"
#include "daemon/rpc/local_service.h"

namespace rdmad {
namespace {

void ToProto(const MemberRecord& m, bool self, v1::Member* out) {
  out->set_name(m.name);
  out->set_peer_address(m.peer_address);
  out->set_version(m.version);
  out->set_protocol(m.protocol);
  out->set_self(self);
  for (const MemberPort& p : m.ports) {
    v1::MemberPort* port = out->add_ports();
    port->set_device(p.device);
    port->set_port(p.port);
    port->set_transport(p.transport);
    port->set_state(p.state);
    port->set_active_mtu(p.active_mtu);
  }
  for (const std::string& s : m.services) out->add_services(s);
}

bool Hosts(const MemberRecord& m, const std::string& service) {
  return service.empty() ||
         std::find(m.services.begin(), m.services.end(), service) != m.services.end();
}

}  // namespace

grpc::ServerUnaryReactor* LocalService::ListMembers(grpc::CallbackServerContext* context,
                                                    const v1::ListMembersRequest* request,
                                                    v1::ListMembersResponse* response) {
  const std::string& service = request->service();
  if (!service.empty()) {
    Status valid = ServiceRegistry::ValidateServiceName(service);
    if (!valid.ok()) return Reply(context, valid);
  }
  StatusOr<ClusterView> view = core_->ClusterMembers();
  if (!view.ok()) return Reply(context, view.status());
  if (Hosts(view->self, service)) ToProto(view->self, true, response->add_members());
  for (const MemberRecord& m : view->members) {
    if (Hosts(m, service)) ToProto(m, false, response->add_members());
  }
  const ClusterHealth& h = view->health;
  response->set_endpoints(h.endpoints);
  response->set_reachable(h.reachable);
  response->set_last_error(h.last_error);
  response->set_unreachable_seconds(h.unreachable_s);
  response->set_revision(h.revision);
  response->set_registered(h.registered);
  return Reply(context, Status::Ok());
}

}  // namespace rdmad

// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmad.Client and rdmad.Listener: queries of the local rdmad as dicts,
// listen, accept, reject, connect and connect_many.

#include <string>

#include "python/src/bindings.h"
#include "python/src/records.h"
#include "rdmad/client.h"
#include "rdmad/daemon_status.h"
#include "rdmad/peers.h"

namespace rdmad::python {
namespace {

using std::chrono::milliseconds;

ConnectOptions MakeConnectOptions(bool force_tcp, double timeout) {
  ConnectOptions options;
  options.force_tcp = force_tcp;
  options.timeout = Timeout(timeout);
  return options;
}

// rdmactl --json status's names (docs/operations.md), without its device
// summaries (Client.devices()); python/tests checks the two agree.
py::dict StatusDict(const DaemonStatus& s) {
  py::dict d;
  d["version"] = s.version;
  d["pid"] = s.pid;
  d["uptime_seconds"] = s.uptime_seconds;
  d["config_file"] = s.config_file;
  d["config_generation"] = s.config_generation;
  d["socket_path"] = s.socket_path;
  d["device_count"] = s.device_count;
  d["ports"] = s.port_count;
  d["active_ports"] = s.active_port_count;
  d["peers"] = s.peer_count;
  d["services"] = s.service_count;
  d["channels"] = s.channel_count;
  d["connections_accepted"] = s.connections_accepted;
  d["event_subscribers"] = s.event_subscribers;
  d["cluster"] = s.cluster;
  d["cluster_error"] = s.cluster_error;
  d["cluster_members"] = s.cluster_members;
  d["config_loaded_unix_ms"] = s.config_loaded_unix_ms;
  d["config_reload_error"] = s.config_reload_error;
  return d;
}

}  // namespace

void BindClient(py::module_& m) {
  py::class_<Listener>(m, "Listener",
                       "A service this application listens on; close() (or the end of a with "
                       "block) unregisters it.")
      .def_property_readonly("service", &Listener::service)
      .def(
          "accept",
          [](Listener& l, std::optional<double> timeout) {
            milliseconds t = Timeout(timeout);
            return Value(
                Interruptible("accept", t, [&](milliseconds slice) { return l.Accept(slice); }));
          },
          py::arg("timeout") = py::none(),
          "The next channel a peer opens to this service; DeadlineExceeded after timeout "
          "seconds, Cancelled once closed.")
      .def(
          "reject",
          [](Listener& l, const std::string& reason, std::optional<double> timeout) {
            milliseconds t = Timeout(timeout);
            Check(Interruptible("reject", t,
                                [&](milliseconds slice) { return l.Reject(reason, slice); }));
          },
          py::arg("reason"), py::arg("timeout") = py::none(),
          "Refuses the next channel request; the initiator gets PermissionDenied.")
      .def(
          "request_fd", [](Listener& l) { return Value(l.RequestFd()); },
          "An fd readable while accept(timeout=0) would not wait for a request "
          "(rdmad.aio.accept awaits it).")
      .def(
          "close",
          [](Listener& l) {
            py::gil_scoped_release nogil;
            l.Close();
          },
          "Unregisters the service; a waiting accept raises Cancelled.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](Listener& l, py::args) {
        py::gil_scoped_release nogil;
        l.Close();
      });

  py::class_<PyClient> client(m, "Client",
                              "A handle on the local rdmad; close() (or the end of a with block) "
                              "lets it go. Its channels and listeners live on.");
  client
      .def_static(
          "open",
          [](std::optional<std::string> socket, double connect_timeout, double call_timeout) {
            ClientOptions options;
            if (socket) options.socket_path = *socket;
            options.connect_timeout = Timeout(connect_timeout);
            options.call_timeout = Timeout(call_timeout);
            return PyClient(Value(Abandonable([options] { return Client::Open(options); })));
          },
          py::arg("socket") = py::none(), py::arg("connect_timeout") = 2.0,
          py::arg("call_timeout") = 5.0,
          "Connects to rdmad's socket (default: the daemon's default socket).")
      .def_static("default_socket", &Client::DefaultSocketPath)
      .def_property_readonly(
          "socket", [](const PyClient& c) { return c.get()->socket_path(); },
          "The daemon socket this client talks to.")
      .def(
          "status",
          [](const PyClient& c) {
            return StatusDict(Value(c.Run([](Client& client) { return client.GetStatus(); })));
          },
          "The daemon's status, named as rdmactl --json status names it: version, uptime, "
          "config, counts of devices, ports, peers, services, channels, the cluster's state.")
      .def(
          "peers",
          [](const PyClient& c) {
            return ListOf(Value(c.Run([](Client& client) { return client.ListPeers(); })),
                          RecordObject<PeerInfo>);
          },
          "The peer daemons and their state.")
      .def(
          "channels",
          [](const PyClient& c) {
            return ListOf(Value(c.Run([](Client& client) { return client.ListChannels(); })),
                          RecordObject<ChannelSummary>);
          },
          "The daemon's channel table.")
      .def(
          "listen",
          [](const PyClient& c, const std::string& service) {
            return Value(c.Run([&](Client& client) { return client.Listen(service); }));
          },
          py::arg("service"), "Registers a service name; accept() its channels.")
      .def(
          "connect",
          [](const PyClient& c, const std::string& peer, const std::string& service, bool force_tcp,
             double timeout) {
            ConnectOptions options = MakeConnectOptions(force_tcp, timeout);
            std::shared_ptr<Client> client = c.get();
            return Value(Abandonable([client, peer, service, options] {
              return client->Connect(peer, service, options);
            }));
          },
          py::arg("peer"), py::arg("service"), py::arg("force_tcp") = false,
          py::arg("timeout") = 15.0,
          "Opens a channel to service on peer (a peer daemon's name), over RDMA when "
          "both sides have a path, else TCP.")
      .def(
          "connect_many",
          [](const PyClient& c, const std::string& peer, const std::string& service, size_t count,
             bool force_tcp, double timeout) {
            ConnectOptions options = MakeConnectOptions(force_tcp, timeout);
            std::shared_ptr<Client> client = c.get();
            auto channels = Value(Abandonable([client, peer, service, count, options] {
              return client->ConnectMany(peer, service, count, options);
            }));
            py::list out;
            for (std::unique_ptr<Channel>& channel : channels)
              out.append(py::cast(std::move(channel)));
            return out;
          },
          py::arg("peer"), py::arg("service"), py::arg("count"), py::arg("force_tcp") = false,
          py::arg("timeout") = 15.0,
          "count channels to service on peer at once (one per worker, a KV-cache fan-out), "
          "set up in batches of up to 64; all or nothing. timeout bounds each batch.")
      .def(
          "close_channel",
          [](const PyClient& c, const py::object& id, const std::string& reason) {
            // An int, or the text rdmactl prints ("0x" and 16 hex digits) or takes.
            uint64_t channel = py::isinstance<py::str>(id)
                                   ? Value(ParseChannelId(id.cast<std::string>()))
                                   : id.cast<uint64_t>();
            Check(c.Run([&](Client& client) { return client.CloseChannel(channel, reason); }));
          },
          py::arg("id"), py::arg("reason") = "",
          "Closes one of this user's channels by its id in channels() (rdmactl close): an int, "
          "or text as rdmactl shows it; NotFound for an unknown id or another user's.")
      .def("close", &PyClient::Close,
           "Lets the client go (calls then raise FailedPrecondition); its channels, "
           "listeners and event streams live on.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyClient& c, py::args) { c.Close(); });
  BindQueries(m, client);
}

}  // namespace rdmad::python

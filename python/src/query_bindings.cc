// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmad.Client's device and path queries (devices, gids, counters, route,
// pools, prewarm) as dicts, and its events iterator (rdmad.Events): what
// rdmactl devices, gids, counters, route, pools and events show.

#include <string>
#include <vector>

#include "python/src/bindings.h"
#include "python/src/records.h"
#include "rdmad/client.h"
#include "rdmad/devices.h"

namespace rdmad::python {
namespace {

// An event stream and the client it reads through. Each Next runs on a
// thread of its own (Start), so that the iteration can wait
// interruptibly; one a signal interrupted stays pending for the next
// iteration, so the stream never has two readers.
struct PyEvents {
  std::shared_ptr<Client> client;
  std::shared_ptr<EventStream> stream;
  std::optional<std::future<std::optional<Event>>> pending;

  PyEvents(std::shared_ptr<Client> c, std::unique_ptr<EventStream> s)
      : client(std::move(c)), stream(std::move(s)) {}
  PyEvents(PyEvents&&) = default;
  ~PyEvents() {
    if (pending && stream) stream->Cancel();  // its thread ends; it holds the stream
  }
};

}  // namespace

void BindQueries(py::module_& m, py::class_<PyClient>& client) {
  py::class_<PyEvents>(m, "Events",
                       "The daemon's events from now on: iterate for dicts; close() ends it.")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__",
           [](PyEvents& e) {
             if (!e.pending) {
               e.pending = Start([stream = e.stream, client = e.client]() -> std::optional<Event> {
                 Event event;
                 if (stream->Next(&event)) return event;
                 return std::nullopt;
               });
             }
             std::optional<Event> event = WaitInterruptibly(*e.pending);
             e.pending.reset();
             if (event) return RecordObject(*event);
             Check(e.stream->Finish());
             throw py::stop_iteration();
           })
      .def(
          "close",
          [](PyEvents& e) {
            py::gil_scoped_release nogil;
            e.stream->Cancel();
          },
          "Ends the stream; a blocked iteration raises Cancelled.");

  client
      .def(
          "devices",
          [](const PyClient& c) {
            return ListOf(Value(c.Run([&](Client& client) { return client.ListDevices(); })),
                          RecordObject<Device>);
          },
          "The RDMA devices with their ports and GIDs (rdmactl devices, gids).")
      .def(
          "gids",
          [](const PyClient& c, const std::string& device) {
            std::vector<Device> devices =
                Value(c.Run([&](Client& client) { return client.ListDevices(); }));
            py::list out;
            for (const Device& v : devices) {
              if (!device.empty() && v.name != device) continue;
              for (const Port& p : v.ports) {
                for (const Gid& g : p.gids) {
                  py::object row = RecordObject(g);
                  row["device"] = v.name;
                  row["port"] = p.port;
                  out.append(row);
                }
              }
            }
            return out;
          },
          py::arg("device") = "",
          "Every GID of every port, one dict each with its device and port (rdmactl gids); "
          "with device, that device's.")
      .def(
          "counters",
          [](const PyClient& c, const std::string& device, uint32_t port) {
            return Value(
                c.Run([&](Client& client) { return client.GetPortCounters(device, port); }));
          },
          py::arg("device"), py::arg("port"),
          "A port's counters by name (rdmactl counters); NotFound for an unknown device.")
      .def(
          "route",
          [](const PyClient& c, const std::string& peer_address) {
            return RecordObject(
                Value(c.Run([&](Client& client) { return client.ResolvePath(peer_address); })));
          },
          py::arg("peer_address"),
          "The path the policy picks to an IP address: device, port, GID and why "
          "(rdmactl route); FailedPrecondition when there is no RDMA path.")
      .def(
          "topology",
          [](const PyClient& c) {
            return RecordObject(Value(c.Run([&](Client& client) { return client.GetTopology(); })));
          },
          "The host's PCIe topology (rdmactl topo): nics with their path to each GPU and "
          "NIC, gpus, the live rail plans.")
      .def(
          "plan_rails",
          [](const PyClient& c, const std::string& gpu, const std::string& cpus, uint32_t rails,
             bool explain_only) {
            RailRequest request{
                .gpu = gpu, .cpus = cpus, .rails = rails, .explain_only = explain_only};
            return RecordObject(
                Value(c.Run([&](Client& client) { return client.PlanRails(request); })));
          },
          py::arg("gpu") = "", py::arg("cpus") = "", py::arg("rails") = 1,
          py::arg("explain_only") = false,
          "The rails (RDMA devices) this process should use near a GPU (index or PCI "
          "address) or its CPUs (default: this thread's affinity), balanced host-wide; "
          "lasts while the process lives (docs/topology.md). NotFound for an unknown GPU.")
      .def(
          "pools",
          [](const PyClient& c) {
            return ListOf(Value(c.Run([&](Client& client) { return client.ListPools(); })),
                          RecordObject<PoolSummary>);
          },
          "The daemon's pool table (rdmactl pools).")
      .def(
          "members",
          [](const PyClient& c, const std::string& service) {
            return RecordObject(
                Value(c.Run([&](Client& client) { return client.ListMembers(service); })));
          },
          py::arg("service") = "",
          "The cluster's members in etcd (rdmactl cluster), this node first; with service, "
          "those hosting it (rdmactl services). FailedPrecondition without cluster.endpoints.")
      .def(
          "prewarm",
          [](const PyClient& c, const std::string& peer, const std::string& service, int channels) {
            Check(c.Run([&](Client& client) { return client.Prewarm(peer, service, channels); }));
          },
          py::arg("peer"), py::arg("service"), py::arg("channels"),
          "Keeps that many channels to (peer, service) warm in this process for connect.")
      .def(
          "events",
          [](const PyClient& c) {
            std::shared_ptr<Client> client = c.get();
            auto stream = Value(NoGil([&] { return client->WatchEvents(); }));
            return PyEvents(std::move(client), std::move(stream));
          },
          "An iterator over the daemon's events from now on.");
}

}  // namespace rdmad::python

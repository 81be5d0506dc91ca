// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmad._rdmad: the C++ client library (rdmad/client.h, rdmad/channel.h)
// for Python. The Python package (python/rdmad/) re-exports it with the
// exception classes; see docs/python.md.
//
// Every call that may block (opening a client, connecting, accepting,
// sending, receiving, one-sided operations) runs without the GIL, so two
// Python threads on two channels make progress at once. A failing call
// raises the rdmad.Error subclass of its status code with the library's
// message. Buffers passed to send and register stay referenced (a Python
// buffer view) for as long as the library may read or write them. A
// region keeps its channel alive, and a channel its client or listener.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rdmad/channel.h"
#include "rdmad/client.h"
#include "rdmad/daemon_status.h"
#include "rdmad/peers.h"

namespace py = pybind11;

namespace rdmad::python {
namespace {

using std::chrono::milliseconds;

// Raises the rdmad.Error subclass for status (rdmad/errors.py).
[[noreturn]] void Raise(const Status& status) {
  py::object cls = py::module_::import("rdmad.errors").attr("error_class")(int(status.code()));
  py::object error = cls(status.message(), int(status.code()));
  PyErr_SetObject(cls.ptr(), error.ptr());
  throw py::error_already_set();
}

void Check(const Status& status) {
  if (!status.ok()) Raise(status);
}

template <typename T>
T Value(StatusOr<T> result) {
  if (!result.ok()) Raise(result.status());
  return std::move(result).value();
}

// Runs f without the GIL and returns its value (a Status or StatusOr).
template <typename F>
auto NoGil(F&& f) {
  py::gil_scoped_release nogil;
  return f();
}

// Seconds as Python gives them (None: wait for ever).
milliseconds Timeout(std::optional<double> seconds) {
  if (!seconds) return kForever;
  if (*seconds < 0) throw py::value_error("timeout: seconds >= 0 or None");
  return milliseconds(int64_t(*seconds * 1000 + 0.5));
}

// A C-contiguous view of a bytes-like object, held while the library uses it.
py::buffer_info View(const py::buffer& buffer, bool writable) {
  py::buffer_info info = buffer.request(writable);
  ssize_t stride = info.itemsize;
  for (ssize_t i = info.ndim - 1; i >= 0; --i) {
    if (info.shape[size_t(i)] > 1 && info.strides[size_t(i)] != stride) {
      throw py::value_error("the buffer is not C-contiguous");
    }
    stride *= info.shape[size_t(i)];
  }
  return info;
}

size_t Bytes(const py::buffer_info& info) { return size_t(info.size) * size_t(info.itemsize); }

py::dict InfoDict(const ChannelInfo& i) {
  py::dict d;
  d["id"] = i.id;
  d["peer"] = i.peer;
  d["service"] = i.service;
  d["transport"] = ChannelTransportName(i.transport);
  d["transport_reason"] = i.transport_reason;
  d["local_device"] = i.local_device;
  d["peer_device"] = i.peer_device;
  d["gid_type"] = i.gid_type;
  d["local_gid_index"] = i.local_gid_index;
  d["mtu"] = i.mtu;
  d["send_depth"] = i.send_depth;
  d["recv_depth"] = i.recv_depth;
  d["handshake_ms"] = i.handshake_ms;
  d["tcp_local"] = i.tcp_local;
  d["tcp_peer"] = i.tcp_peer;
  return d;
}

// A registered region and the Python object whose memory it is (none for
// register_ptr: the caller keeps that memory alive).
class Region {
 public:
  Region(std::unique_ptr<MemoryRegion> region, std::optional<py::buffer_info> view)
      : region_(std::move(region)), view_(std::move(view)) {}
  const MemoryRegion& get() const {
    if (!region_) throw py::value_error("the region was closed");
    return *region_;
  }
  void Close() {
    region_.reset();
    view_.reset();
  }

 private:
  std::unique_ptr<MemoryRegion> region_;
  std::optional<py::buffer_info> view_;
};

MemoryAccess Access(bool read_only) {
  return read_only ? MemoryAccess::kRemoteRead : MemoryAccess::kReadWrite;
}

void BindDescriptor(py::module_& m) {
  py::class_<RegionDescriptor>(m, "RegionDescriptor",
                               "What a peer needs to write into or read from a region.")
      .def(py::init<>())
      .def_readwrite("address", &RegionDescriptor::address)
      .def_readwrite("length", &RegionDescriptor::length)
      .def_readwrite("rkey", &RegionDescriptor::rkey)
      .def(
          "serialize",
          [](const RegionDescriptor& d) {
            std::vector<uint8_t> b = d.Serialize();
            return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
          },
          "The descriptor as bytes, to send to the peer.")
      .def_static(
          "parse",
          [](const py::buffer& bytes) {
            py::buffer_info v = View(bytes, false);
            return Value(RegionDescriptor::Parse(v.ptr, Bytes(v)));
          },
          "The descriptor a peer serialized.")
      .def("__repr__", [](const RegionDescriptor& d) {
        return "RegionDescriptor(address=" + std::to_string(d.address) +
               ", length=" + std::to_string(d.length) + ", rkey=" + std::to_string(d.rkey) + ")";
      });
  py::class_<Region>(m, "MemoryRegion", "Memory registered for a channel's device.")
      .def_property_readonly("size", [](const Region& r) { return r.get().size(); })
      .def_property_readonly("descriptor", [](const Region& r) { return r.get().descriptor(); })
      .def_property_readonly(
          "read_only",
          [](const Region& r) { return r.get().access() == MemoryAccess::kRemoteRead; })
      .def("close", &Region::Close, "Deregisters it (also when garbage collected).")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](Region& r, py::args) { r.Close(); });
}

void BindChannel(py::module_& m) {
  py::class_<Channel>(m, "Channel",
                      "A reliable message channel to a peer's application, over RDMA or TCP.")
      .def_property_readonly(
          "info", [](const Channel& c) { return InfoDict(c.info()); },
          "How the channel was set up: transport and why, devices, GID, MTU, depths.")
      .def_property_readonly(
          "transport", [](const Channel& c) { return ChannelTransportName(c.info().transport); })
      .def(
          "send",
          [](Channel& c, const py::buffer& data) {
            py::buffer_info v = View(data, false);
            Check(NoGil([&] { return c.Send(v.ptr, Bytes(v)); }));
          },
          py::arg("data"),
          "Sends one message (any bytes-like object); returns when it may be reused.")
      .def(
          "recv",
          [](Channel& c, std::optional<double> timeout) {
            milliseconds t = Timeout(timeout);
            std::vector<uint8_t> v = Value(NoGil([&] { return c.Recv(t); }));
            return py::bytes(reinterpret_cast<const char*>(v.data()), v.size());
          },
          py::arg("timeout") = py::none(),
          "The next whole message as bytes; DeadlineExceeded after timeout seconds.")
      .def(
          "register",
          [](Channel& c, const py::buffer& memory, bool read_only) {
            py::buffer_info v = View(memory, true);
            auto region = Value(c.RegisterMemory(v.ptr, Bytes(v), Access(read_only)));
            return Region(std::move(region), std::move(v));
          },
          py::arg("memory"), py::arg("read_only") = false, py::keep_alive<0, 1>(),
          "Registers a writable bytes-like object (bytearray, memoryview, numpy array). "
          "read_only: the peer may read it but not write it.")
      .def(
          "register_ptr",
          [](Channel& c, uintptr_t address, size_t length, bool read_only) {
            auto region = Value(
                c.RegisterMemory(reinterpret_cast<void*>(address), length, Access(read_only)));
            return Region(std::move(region), std::nullopt);
          },
          py::arg("address"), py::arg("length"), py::arg("read_only") = false,
          py::keep_alive<0, 1>(),
          "Registers memory by address (e.g. a tensor's data_ptr()); the caller keeps it alive.")
      .def(
          "write",
          [](Channel& c, const Region& local, size_t local_offset, const RegionDescriptor& remote,
             uint64_t remote_offset, size_t length) {
            const MemoryRegion& region = local.get();
            Check(NoGil(
                [&] { return c.Write(region, local_offset, remote, remote_offset, length); }));
          },
          py::arg("local"), py::arg("local_offset"), py::arg("remote"), py::arg("remote_offset"),
          py::arg("length"), "Copies length bytes from local into the peer's region.")
      .def(
          "read",
          [](Channel& c, const Region& local, size_t local_offset, const RegionDescriptor& remote,
             uint64_t remote_offset, size_t length) {
            const MemoryRegion& region = local.get();
            Check(
                NoGil([&] { return c.Read(region, local_offset, remote, remote_offset, length); }));
          },
          py::arg("local"), py::arg("local_offset"), py::arg("remote"), py::arg("remote_offset"),
          py::arg("length"), "Copies length bytes from the peer's region into local.")
      .def(
          "status", [](const Channel& c) { Check(c.status()); },
          "Raises why the channel is no longer usable; returns None while it is.")
      .def(
          "close",
          [](Channel& c) {
            py::gil_scoped_release nogil;
            c.Close();
          },
          "Closes both directions; blocked calls raise Cancelled.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](Channel& c, py::args) {
        py::gil_scoped_release nogil;
        c.Close();
      });
}

py::dict PeerDict(const PeerInfo& p) {
  py::dict d;
  d["name"] = p.name;
  d["address"] = p.address;
  d["state"] = std::string(PeerStateName(p.state));
  d["rtt_ms"] = p.rtt_ms;
  d["last_error"] = p.last_error;
  d["remote_host"] = p.remote_host;
  d["remote_version"] = p.remote_version;
  d["remote_transports"] = p.remote_transports;
  d["configured"] = p.configured;
  d["channels"] = p.channels;
  return d;
}

py::dict ChannelDict(const ChannelSummary& c) {
  py::dict d;
  d["id"] = c.id;
  d["peer"] = c.peer;
  d["service"] = c.service;
  d["role"] = c.role;
  d["transport"] = c.transport;
  d["state"] = c.state;
  d["reason"] = c.reason;
  d["age_seconds"] = c.age_seconds;
  return d;
}

py::dict StatusDict(const DaemonStatus& s) {
  py::dict d;
  d["version"] = s.version;
  d["pid"] = s.pid;
  d["uptime_seconds"] = s.uptime_seconds;
  d["config_file"] = s.config_file;
  d["socket_path"] = s.socket_path;
  d["device_count"] = s.device_count;
  d["active_port_count"] = s.active_port_count;
  d["peer_count"] = s.peer_count;
  d["service_count"] = s.service_count;
  d["channel_count"] = s.channel_count;
  return d;
}

void BindClient(py::module_& m) {
  py::class_<Listener>(m, "Listener", "A service this application listens on.")
      .def_property_readonly("service", &Listener::service)
      .def(
          "accept",
          [](Listener& l, std::optional<double> timeout) {
            milliseconds t = Timeout(timeout);
            return Value(NoGil([&] { return l.Accept(t); }));
          },
          py::arg("timeout") = py::none(), py::keep_alive<0, 1>(),
          "The next channel a peer opens to this service; DeadlineExceeded after timeout seconds.")
      .def(
          "reject",
          [](Listener& l, const std::string& reason, std::optional<double> timeout) {
            milliseconds t = Timeout(timeout);
            Check(NoGil([&] { return l.Reject(reason, t); }));
          },
          py::arg("reason"), py::arg("timeout") = py::none(),
          "Refuses the next channel request; the initiator gets PermissionDenied.");

  py::class_<Client>(m, "Client", "A handle on the local rdmad.")
      .def_static(
          "open",
          [](std::optional<std::string> socket, double connect_timeout, double call_timeout) {
            ClientOptions options;
            if (socket) options.socket_path = *socket;
            options.connect_timeout = Timeout(connect_timeout);
            options.call_timeout = Timeout(call_timeout);
            return Value(NoGil([&] { return Client::Open(options); }));
          },
          py::arg("socket") = py::none(), py::arg("connect_timeout") = 2.0,
          py::arg("call_timeout") = 5.0,
          "Connects to rdmad's socket (default: the daemon's default socket).")
      .def_static("default_socket", &Client::DefaultSocketPath)
      .def(
          "status",
          [](Client& c) { return StatusDict(Value(NoGil([&] { return c.GetStatus(); }))); },
          "The daemon's status: version, uptime, counts of devices, peers, channels.")
      .def(
          "peers",
          [](Client& c) {
            py::list out;
            for (const PeerInfo& p : Value(NoGil([&] { return c.ListPeers(); }))) {
              out.append(PeerDict(p));
            }
            return out;
          },
          "The peer daemons and their state.")
      .def(
          "channels",
          [](Client& c) {
            py::list out;
            for (const ChannelSummary& s : Value(NoGil([&] { return c.ListChannels(); }))) {
              out.append(ChannelDict(s));
            }
            return out;
          },
          "The daemon's channel table.")
      .def(
          "listen",
          [](Client& c, const std::string& service) {
            return Value(NoGil([&] { return c.Listen(service); }));
          },
          py::arg("service"), py::keep_alive<0, 1>(),
          "Registers a service name; accept() its channels.")
      .def(
          "connect",
          [](Client& c, const std::string& peer, const std::string& service, bool force_tcp,
             double timeout) {
            ConnectOptions options;
            options.force_tcp = force_tcp;
            options.timeout = Timeout(timeout);
            return Value(NoGil([&] { return c.Connect(peer, service, options); }));
          },
          py::arg("peer"), py::arg("service"), py::arg("force_tcp") = false,
          py::arg("timeout") = 15.0, py::keep_alive<0, 1>(),
          "Opens a channel to service on peer (a peer daemon's name), over RDMA when "
          "both sides have a path, else TCP.");
}

}  // namespace

}  // namespace rdmad::python

PYBIND11_MODULE(_rdmad, m) {
  m.doc() = "rdmad's client library: channels over RDMA or TCP, brokered by the local rdmad.";
  rdmad::python::BindDescriptor(m);
  rdmad::python::BindChannel(m);
  rdmad::python::BindClient(m);
}

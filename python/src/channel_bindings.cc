// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmad.Channel: messages, registered memory, one-sided Write and Read,
// close; the batched transfers are in transfer_bindings.cc.

#include <string>
#include <vector>

#include "python/src/bindings.h"
#include "python/src/records.h"

namespace rdmad::python {
namespace {

using std::chrono::milliseconds;

MemoryAccess Access(bool read_only, bool local) {
  if (local && read_only) throw py::value_error("register: local and read_only exclude each other");
  if (local) return MemoryAccess::kLocal;
  return read_only ? MemoryAccess::kRemoteRead : MemoryAccess::kReadWrite;
}

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

}  // namespace

void BindChannel(py::module_& m) {
  py::class_<Channel> channel(
      m, "Channel", "A reliable message channel to a peer's application, over RDMA or TCP.");
  channel
      .def_property_readonly(
          "info", [](const Channel& c) { return InfoDict(c.info()); },
          "How the channel was set up: transport and why, devices, GID, MTU, depths.")
      .def_property_readonly(
          "transport", [](const Channel& c) { return ChannelTransportName(c.info().transport); })
      .def(
          "register",
          [](Channel& c, const py::object& memory, bool read_only, bool local) {
            Check(c.status());  // a closed channel registers nothing
            MemoryAccess access = Access(read_only, local);
            Memory m = Memory::Of(memory, !read_only);
            auto region = Value(c.RegisterMemory(m.data(), m.size(), access));
            return Region(std::move(region), std::move(m));
          },
          py::arg("memory"), py::arg("read_only") = false, py::kw_only(), py::arg("local") = false,
          py::keep_alive<0, 1>(),
          "Registers a bytes-like object (bytearray, memoryview, numpy array) or a contiguous CPU "
          "torch tensor. read_only: the "
          "peer may read it but not write it; then an immutable object (bytes) will do, which "
          "this side cannot read or receive into either. local: no peer reaches it through its "
          "own descriptor; expose() shows it to one channel.")
      .def(
          "register_ptr",
          [](Channel& c, uintptr_t address, size_t length, bool read_only, bool local) {
            Check(c.status());
            MemoryAccess access = Access(read_only, local);
            auto region = Value(c.RegisterMemory(reinterpret_cast<void*>(address), length, access));
            return Region(std::move(region), std::nullopt);
          },
          py::arg("address"), py::arg("length"), py::arg("read_only") = false, py::kw_only(),
          py::arg("local") = false, py::keep_alive<0, 1>(),
          "Registers memory by address (e.g. a tensor's data_ptr()); the caller keeps it alive.")
      .def(
          "expose",
          [](Channel& c, const Region& region, bool writable) {
            const MemoryRegion& shown = region.get();
            MemoryAccess access = writable ? MemoryAccess::kReadWrite : MemoryAccess::kRemoteRead;
            return Value(NoGil([&] { return c.Expose(shown, access); }));
          },
          py::arg("region"), py::arg("writable") = false,
          "A descriptor that opens region to this channel's peer alone (read-only unless "
          "writable), until revoke() or the channel's end.")
      .def(
          "revoke",
          [](Channel& c, const RegionDescriptor& d) { Check(NoGil([&] { return c.Revoke(d); })); },
          py::arg("descriptor"),
          "Ends an expose(): the peer's accesses with that descriptor fail from now on.")
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
            const MemoryRegion& region = local.target();
            Check(
                NoGil([&] { return c.Read(region, local_offset, remote, remote_offset, length); }));
          },
          py::arg("local"), py::arg("local_offset"), py::arg("remote"), py::arg("remote_offset"),
          py::arg("length"), "Copies length bytes from the peer's region into local.")
      .def(
          "rails", [](const Channel& c) { return ListOf(c.rails(), RecordObject<ChannelRail>); },
          "An RDMA channel's rails, the first the one messages take: devices, bytes written "
          "and read, up and why not (docs/topology.md); [] for TCP.")
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
      .def("__exit__",
           [](Channel& c, py::args) {
             py::gil_scoped_release nogil;
             c.Close();
           })
      .def(
          "recv_into",
          [](Channel& c, const py::object& memory, size_t offset, std::optional<size_t> max_len,
             std::optional<double> timeout) {
            py::object region = RegionOf(c, memory, /*writable=*/true);
            const MemoryRegion& r = region.cast<const Region&>().target();
            size_t room = max_len ? *max_len : (offset <= r.size() ? r.size() - offset : 0);
            milliseconds t = Timeout(timeout);
            return Value(Interruptible("recv_into", t, [&](milliseconds slice) {
              return c.RecvInto(r, offset, room, slice);
            }));
          },
          py::arg("region"), py::arg("offset") = 0, py::arg("max_len") = py::none(),
          py::arg("timeout") = py::none(),
          "Receives the next message into a registered region (no copy on RDMA), or into a "
          "bytes-like object or CPU tensor (registered for the call), and returns its size; "
          "OutOfRange when it is longer than max_len (the rest is dropped).")
      .def(
          "completion_fd", [](Channel& c) { return Value(c.CompletionFd()); },
          "A file descriptor that becomes readable when the channel may have news (a message, "
          "a notification, a transfer done, its end), once arm() returned True.")
      .def("arm", &Channel::Arm,
           "True when nothing is waiting and the completion fd will become readable when "
           "something happens; False when something already waits.");
  BindTransfers(m, channel);
  BindFastCalls(channel);
}

}  // namespace rdmad::python

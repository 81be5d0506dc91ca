// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Batched one-sided transfers (Channel.submit -> rdmad.Transfer) and
// notifications (Channel.recv_notification), as rdmad/channel.h's Submit,
// Transfer and RecvNotification. A Transfer keeps its channel and the
// regions of its ops alive until it is collected.

#include <string>
#include <string_view>
#include <vector>

#include "python/src/bindings.h"

namespace rdmad::python {
namespace {

using std::chrono::milliseconds;

// One op of a batch, holding its local memory's Python object.
struct Op {
  TransferOp::Kind kind = TransferOp::Kind::kWrite;
  // A rdmad.MemoryRegion, or memory (a bytes-like object, a CPU tensor)
  // registered on the channel when the batch is submitted.
  py::object local;
  size_t local_offset = 0;
  RegionDescriptor remote;
  uint64_t remote_offset = 0;
  size_t length = 0;
};

// A batch in flight and what it needs alive: its ops (their regions) and
// the regions registered for it (ops whose local memory was no region).
class PyTransfer {
 public:
  PyTransfer(std::unique_ptr<Transfer> transfer, py::list ops, py::list registered)
      : transfer_(std::move(transfer)), ops_(std::move(ops)), registered_(std::move(registered)) {}
  Transfer& get() { return *transfer_; }

 private:
  std::unique_ptr<Transfer> transfer_;
  py::list ops_;
  py::list registered_;
};

Op MakeOp(TransferOp::Kind kind, py::object local, size_t local_offset,
          const RegionDescriptor& remote, uint64_t remote_offset, size_t length) {
  if (py::isinstance<Region>(local)) {
    if (kind == TransferOp::Kind::kRead) local.cast<const Region&>().target();  // immutable?
  } else {
    Memory::Of(local, kind == TransferOp::Kind::kRead);  // checked now, registered at submit
  }
  return Op{kind, std::move(local), local_offset, remote, remote_offset, length};
}

// Op.write or Op.read: makes an op of kind.
auto OpOf(TransferOp::Kind kind) {
  return [kind](py::object local, size_t local_offset, const RegionDescriptor& remote,
                uint64_t remote_offset, size_t length) {
    return MakeOp(kind, std::move(local), local_offset, remote, remote_offset, length);
  };
}

}  // namespace

void BindTransfers(py::module_& m, py::class_<Channel>& channel) {
  py::class_<Op>(m, "Op", "One one-sided operation of a batch: Op.write(...) or Op.read(...).")
      .def_static("write", OpOf(TransferOp::Kind::kWrite), py::arg("local"),
                  py::arg("local_offset"), py::arg("remote"), py::arg("remote_offset"),
                  py::arg("length"),
                  "length bytes from local[local_offset] into the peer's region.")
      .def_static("read", OpOf(TransferOp::Kind::kRead), py::arg("local"), py::arg("local_offset"),
                  py::arg("remote"), py::arg("remote_offset"), py::arg("length"),
                  "length bytes from the peer's region into local[local_offset].")
      .def_property_readonly("is_write",
                             [](const Op& op) { return op.kind == TransferOp::Kind::kWrite; })
      .def_readonly("length", &Op::length);

  py::class_<PyTransfer>(m, "Transfer", "A batch of one-sided operations in flight.")
      .def(
          "wait",
          [](PyTransfer& t, std::optional<double> timeout) {
            milliseconds limit = Timeout(timeout);
            Check(Interruptible("wait", limit,
                                [&](milliseconds slice) { return t.get().Wait(slice); }));
          },
          py::arg("timeout") = py::none(),
          "Returns once every op is done; raises the first failure (failed_op names the op), "
          "or DeadlineExceeded after timeout seconds (the batch goes on).")
      .def(
          "poll",
          [](PyTransfer& t) {
            Status status;
            if (!t.get().Poll(&status)) return false;
            Check(status);
            return true;
          },
          "Without blocking: False while in flight, True once done; raises its failure.")
      .def_property_readonly(
          "failed_op", [](PyTransfer& t) { return t.get().failed_op(); },
          "The index of the op that failed, -1 if none did.");

  channel
      .def(
          "submit",
          [](Channel& c, const py::list& ops, const py::bytes& notification) {
            std::vector<TransferOp> batch;
            batch.reserve(ops.size());
            py::list registered;  // for memory given as no region; kept with the transfer
            for (const py::handle& item : ops) {
              const Op& op = item.cast<const Op&>();
              py::object region =
                  RegionOf(c, op.local, /*writable=*/op.kind == TransferOp::Kind::kRead);
              if (!region.is(op.local)) registered.append(region);
              batch.push_back(TransferOp{op.kind, &region.cast<const Region&>().get(),
                                         op.local_offset, op.remote, op.remote_offset, op.length});
            }
            std::string note = notification;
            auto transfer = Value(NoGil([&] { return c.Submit(batch, note); }));
            return PyTransfer(std::move(transfer), ops, std::move(registered));
          },
          py::arg("ops"), py::arg("notification") = py::bytes(), py::keep_alive<0, 1>(),
          "Starts a batch of Op.write/Op.read in order and returns its Transfer. With a "
          "notification (bytes, at most 256), the peer's recv_notification gets it once every "
          "byte of the batch is in place.")
      .def(
          "recv_notification",
          [](Channel& c, std::optional<double> timeout) {
            milliseconds limit = Timeout(timeout);
            std::vector<uint8_t> v =
                Value(Interruptible("recv_notification", limit,
                                    [&](milliseconds slice) { return c.RecvNotification(slice); }));
            return py::bytes(reinterpret_cast<const char*>(v.data()), v.size());
          },
          py::arg("timeout") = py::none(),
          "The peer's next notification (bytes), apart from messages.");
}

}  // namespace rdmad::python

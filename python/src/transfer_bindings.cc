// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Batched one-sided transfers (Channel.submit -> rdmad.Transfer,
// Channel.prepare -> rdmad.PreparedTransfer) and
// notifications (Channel.recv_notification), as rdmad/channel.h's Submit,
// Prepare, Transfer and RecvNotification. A Transfer (or PreparedTransfer)
// keeps its channel and the regions of its ops alive until it is collected.

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

// A batch (in flight, or prepared: T is Transfer or PreparedTransfer) and
// what it needs alive: its ops (their regions) and the regions registered
// for it (ops whose local memory was no region).
template <typename T>
class Held {
 public:
  Held(std::unique_ptr<T> transfer, py::list ops, py::list registered)
      : transfer_(std::move(transfer)), ops_(std::move(ops)), registered_(std::move(registered)) {}
  T& get() { return *transfer_; }

 private:
  std::unique_ptr<T> transfer_;
  py::list ops_;
  py::list registered_;
};
using PyTransfer = Held<Transfer>;
using PyPrepared = Held<PreparedTransfer>;

// ops (rdmad.Op) as the channel's TransferOps; memory given as no region
// is registered on c, and its region appended to registered.
std::vector<TransferOp> BatchOf(Channel& c, const py::list& ops, py::list& registered) {
  std::vector<TransferOp> batch;
  batch.reserve(ops.size());
  for (const py::handle& item : ops) {
    const Op& op = item.cast<const Op&>();
    py::object region = RegionOf(c, op.local, /*writable=*/op.kind == TransferOp::Kind::kRead);
    if (!region.is(op.local)) registered.append(region);
    batch.push_back(TransferOp{op.kind, &region.cast<const Region&>().get(), op.local_offset,
                               op.remote, op.remote_offset, op.length});
  }
  return batch;
}

// wait, poll and failed_op, for Transfer and PreparedTransfer alike.
template <typename T>
void BindWaiting(py::class_<Held<T>>& cls) {
  cls.def(
         "wait",
         [](Held<T>& t, std::optional<double> timeout) {
           milliseconds limit = Timeout(timeout);
           Check(Interruptible("wait", limit,
                               [&](milliseconds slice) { return t.get().Wait(slice); }));
         },
         py::arg("timeout") = py::none(),
         "Returns once every op is done; raises the first failure (failed_op names the op), "
         "or DeadlineExceeded after timeout seconds (the batch goes on).")
      .def(
          "poll",
          [](Held<T>& t) {
            Status status;
            if (!t.get().Poll(&status)) return false;
            Check(status);
            return true;
          },
          "Without blocking: False while in flight, True once done; raises its failure.")
      .def_property_readonly(
          "failed_op", [](Held<T>& t) { return t.get().failed_op(); },
          "The index of the op that failed, -1 if none did.");
}

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

  py::class_<PyTransfer> transfer(m, "Transfer", "A batch of one-sided operations in flight.");
  BindWaiting(transfer);
  py::class_<PyPrepared> prepared(
      m, "PreparedTransfer",
      "A batch of one-sided operations checked once (Channel.prepare), started with post as "
      "often as wanted; between posts, the Transfer of the last one.");
  BindWaiting(prepared);
  prepared.def(
      "post",
      [](PyPrepared& p, const py::bytes& notification) {
        std::string note = notification;
        Check(NoGil([&] { return p.get().Post(note); }));
      },
      py::arg("notification") = py::bytes(),
      "Starts the ops again, in order, with a notification as submit's. Raises "
      "FailedPrecondition while the last post is in flight (nothing starts).");

  channel
      .def(
          "submit",
          [](Channel& c, const py::list& ops, const py::bytes& notification) {
            py::list registered;  // for memory given as no region; kept with the transfer
            std::vector<TransferOp> batch = BatchOf(c, ops, registered);
            std::string note = notification;
            auto transfer = Value(NoGil([&] { return c.Submit(batch, note); }));
            return PyTransfer(std::move(transfer), ops, std::move(registered));
          },
          py::arg("ops"), py::arg("notification") = py::bytes(), py::keep_alive<0, 1>(),
          "Starts a batch of Op.write/Op.read in order and returns its Transfer. With a "
          "notification (bytes, at most 256), the peer's recv_notification gets it once every "
          "byte of the batch is in place.")
      .def(
          "prepare",
          [](Channel& c, const py::list& ops) {
            py::list registered;
            std::vector<TransferOp> batch = BatchOf(c, ops, registered);
            auto p = Value(NoGil([&] { return c.Prepare(batch); }));
            return PyPrepared(std::move(p), ops, std::move(registered));
          },
          py::arg("ops"), py::keep_alive<0, 1>(),
          "Checks a batch of Op.write/Op.read once and returns it as a PreparedTransfer, to "
          "start with post (NIXL's prep/post): on RDMA each post then builds nothing again.")
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

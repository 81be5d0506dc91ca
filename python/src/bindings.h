// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// What the bindings of rdmad._rdmad share (python/src/*_bindings.cc): the
// status-to-exception mapping, timeouts, buffer views, registered regions.
//
// Thread safety: called with the GIL held, except the function NoGil runs.

#ifndef RDMAD_PYTHON_SRC_BINDINGS_H_
#define RDMAD_PYTHON_SRC_BINDINGS_H_

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rdmad/channel.h"
#include "rdmad/client.h"
#include "rdmad/status.h"

namespace rdmad::python {

namespace py = pybind11;

// Sets the rdmad.Error subclass for status (rdmad/errors.py) as Python's
// pending exception, without a C++ throw (the METH_FASTCALL methods
// return nullptr then: pybind11 2.10's error_already_set formats the
// traceback when it is made, tens of microseconds an error).
void SetError(const Status& status);
// SetError, then throws error_already_set (pybind11's methods).
[[noreturn]] void Raise(const Status& status);

inline void Check(const Status& status) {
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

// How long a blocking call runs without the GIL before Python's signal
// handlers get a turn (Ctrl-C during a recv raises KeyboardInterrupt within
// this, not when the timeout ends).
inline constexpr std::chrono::milliseconds kSignalSlice{100};

inline const Status& StatusOf(const Status& status) { return status; }
template <typename T>
const Status& StatusOf(const StatusOr<T>& result) {
  return result.status();
}

// A blocking call with a timeout (kForever: none) made interruptible:
// call(slice) runs without the GIL for slices of at most kSignalSlice
// until it returns anything but DEADLINE_EXCEEDED or the timeout is spent
// (then DEADLINE_EXCEEDED "what: nothing within N ms"); between slices
// the pending signals are handled, and an exception one raises
// (KeyboardInterrupt) propagates. call must be safe to repeat after a
// DEADLINE_EXCEEDED (a wait, not an action).
template <typename F>
auto Interruptible(const char* what, std::chrono::milliseconds timeout, F&& call) {
  using std::chrono::milliseconds;
  using Clock = std::chrono::steady_clock;
  const bool forever = timeout < milliseconds::zero();
  const Clock::time_point deadline = Clock::now() + (forever ? milliseconds::zero() : timeout);
  for (;;) {
    milliseconds slice = kSignalSlice;
    if (!forever) {
      slice = std::clamp(std::chrono::ceil<milliseconds>(deadline - Clock::now()),
                         milliseconds::zero(), kSignalSlice);
    }
    auto result = NoGil([&] { return call(slice); });
    if (StatusOf(result).code() != StatusCode::kDeadlineExceeded) return result;
    if (!forever && Clock::now() >= deadline) {
      return decltype(result)(Status::DeadlineExceeded(std::string(what) + ": nothing within " +
                                                       std::to_string(timeout.count()) + " ms"));
    }
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
}

// Waits for done in kSignalSlice steps without the GIL, handling the
// pending signals between them; an exception a handler raises propagates
// (done stays valid: the caller may wait on it again later).
template <typename R>
R WaitInterruptibly(std::future<R>& done) {
  for (;;) {
    bool ready;
    {
      py::gil_scoped_release nogil;
      ready = done.wait_for(kSignalSlice) == std::future_status::ready;
    }
    if (ready) return done.get();
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
}

// Starts call() (owning everything it uses: capture by value) on a thread
// of its own; its result through the future.
template <typename F>
auto Start(F call) -> std::future<decltype(call())> {
  auto promise = std::make_shared<std::promise<decltype(call())>>();
  auto done = promise->get_future();
  std::thread([promise, call = std::move(call)]() mutable { promise->set_value(call()); }).detach();
  return done;
}

// A blocking call with no timeout to slice (a handshake) made
// interruptible: call() runs on a thread of its own while the caller waits
// as WaitInterruptibly does. When a handler raises, the exception
// propagates at once; the call finishes on its thread and its result (a
// channel, a client) is dropped there.
template <typename F>
auto Abandonable(F call) -> decltype(call()) {
  auto done = Start(std::move(call));
  return WaitInterruptibly(done);
}

// rows as a list of to_dict(row).
template <typename T, typename F>
py::list ListOf(const std::vector<T>& rows, F to_dict) {
  py::list out;
  for (const T& row : rows) out.append(to_dict(row));
  return out;
}

// Seconds as Python gives them (None: wait for ever); ValueError if < 0.
std::chrono::milliseconds Timeout(std::optional<double> seconds);

// A C-contiguous view of a bytes-like object, held while the library uses
// it; ValueError for a strided one.
py::buffer_info View(const py::buffer& buffer, bool writable);
inline size_t Bytes(const py::buffer_info& info) {
  return size_t(info.size) * size_t(info.itemsize);
}

// Whether object is a torch tensor (found without importing torch).
bool IsTorchTensor(const py::handle& object);

// Memory a caller hands in: a C-contiguous bytes-like object, or a
// contiguous CPU torch tensor, taken by its data_ptr() and size (torch has
// no buffer protocol). Holds the object while the library uses the memory.
// ValueError for a strided buffer, a tensor that is not contiguous (with
// the hint to call .contiguous()) or one on a GPU; TypeError for anything
// else.
class Memory {
 public:
  static Memory Of(const py::handle& object, bool writable);
  void* data() const { return data_; }
  size_t size() const { return size_; }
  bool readonly() const { return readonly_; }

 private:
  Memory() = default;
  std::optional<py::buffer_info> view_;  // a bytes-like object's
  py::object owner_;                     // a tensor
  void* data_ = nullptr;
  size_t size_ = 0;
  bool readonly_ = false;
};

// A registered region and the Python object whose memory it is (none for
// register_ptr: the caller keeps that memory alive). The memory of an
// immutable object (bytes), registered read_only, is never written here:
// it cannot be the target of a read or a receive.
class Region {
 public:
  Region(std::unique_ptr<MemoryRegion> region, std::optional<Memory> memory)
      : region_(std::move(region)),
        memory_(std::move(memory)),
        writable_(!memory_ || !memory_->readonly()) {}
  // ValueError once closed.
  const MemoryRegion& get() const {
    if (!region_) throw py::value_error("the region was closed");
    return *region_;
  }
  // get() for a call that writes into the region; ValueError when its
  // object is immutable.
  const MemoryRegion& target() const {
    const MemoryRegion& region = get();
    if (!writable_) {
      throw py::value_error(
          "the region's memory is immutable (registered read-only from a bytes-like object "
          "that cannot be written): it cannot receive a read or a message");
    }
    return region;
  }
  void Close() {
    region_.reset();
    memory_.reset();
  }

 private:
  std::unique_ptr<MemoryRegion> region_;
  std::optional<Memory> memory_;
  bool writable_;
};

// object as a region of channel: a rdmad.MemoryRegion as it is, or memory
// (Memory::Of) registered kLocal for as long as the returned Region lives
// (a one-off use: recv_into, an Op of one batch).
py::object RegionOf(Channel& channel, const py::handle& object, bool writable);

// rdmad.Client: the library's Client until close(). A call holds its own
// reference, so close() in one thread lets a call in another finish;
// channels and listeners do not need the Client (only its event streams).
class PyClient {
 public:
  explicit PyClient(std::unique_ptr<Client> client) : client_(std::move(client)) {}
  // The client; rdmad.FailedPrecondition once closed.
  std::shared_ptr<Client> get() const {
    if (!client_) Raise(Status::FailedPrecondition("the client was closed"));
    return client_;
  }
  // f(client) without the GIL (a Status or StatusOr).
  template <typename F>
  auto Run(F&& f) const {
    std::shared_ptr<Client> client = get();
    return NoGil([&] { return f(*client); });
  }
  // Drops this reference (the client ends once its calls return).
  void Close() {
    std::shared_ptr<Client> client = std::move(client_);
    py::gil_scoped_release nogil;
    client.reset();
  }

 private:
  std::shared_ptr<Client> client_;
};

void BindDescriptor(py::module_& m);
void BindChannel(py::module_& m);
// Channel.send and recv as METH_FASTCALL methods (fast_calls.cc).
void BindFastCalls(py::class_<Channel>& channel);
// Channel's batched transfers and notifications (transfer_bindings.cc).
void BindTransfers(py::module_& m, py::class_<Channel>& channel);
void BindClient(py::module_& m);
// Client's device, path and pool queries and its events (query_bindings.cc).
void BindQueries(py::module_& m, py::class_<PyClient>& client);

}  // namespace rdmad::python

#endif  // RDMAD_PYTHON_SRC_BINDINGS_H_

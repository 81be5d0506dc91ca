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

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "rdmad/channel.h"
#include "rdmad/client.h"
#include "rdmad/status.h"

namespace rdmad::python {

namespace py = pybind11;

// Raises the rdmad.Error subclass for status (rdmad/errors.py).
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

// A registered region and the Python object whose memory it is (none for
// register_ptr: the caller keeps that memory alive).
class Region {
 public:
  Region(std::unique_ptr<MemoryRegion> region, std::optional<py::buffer_info> view)
      : region_(std::move(region)), view_(std::move(view)) {}
  // ValueError once closed.
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

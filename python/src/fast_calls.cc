// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Channel.send and Channel.recv, the two calls of a message round trip, as
// CPython METH_FASTCALL methods (and try_recv, rdmad.aio's probe). pybind11's general dispatcher
// (overloads, keyword matching, argument casters) costs about 2,000 instructions a call and a
// send's buffer_info about 1,000 more, which a 2-byte round trip notices (docs/benchmarks.md, "The
// Python rows"). The contract is that of every other method: the GIL released while the library
// works, an rdmad.Error subclass for a failure (set without a C++ throw), ValueError for a buffer
// that is not C-contiguous or a negative timeout.

#include <string>
#include <vector>

#include "python/src/bindings.h"

namespace rdmad::python {
namespace {

// body(), with a C++ exception turned into the Python error (nullptr).
template <typename F>
PyObject* Guard(F&& body) {
  try {
    return body();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (py::builtin_exception& e) {
    e.set_error();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

// Sets status as the pending exception: nullptr, the error return.
PyObject* Fail(const Status& status) {
  SetError(status);
  return nullptr;
}

PyObject* Bytes(const std::vector<uint8_t>& message) {
  return PyBytes_FromStringAndSize(reinterpret_cast<const char*>(message.data()),
                                   Py_ssize_t(message.size()));
}

// The one argument name (positional, or by keyword); nullptr if absent.
PyObject* OneArg(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, const char* fn,
                 const char* name) {
  Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  if (nargs + nkw > 1 ||
      (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), name) != 0)) {
    throw py::type_error(std::string(fn) + "() takes one argument, " + name);
  }
  return nargs + nkw == 1 ? args[0] : nullptr;
}

// send and try_send: the one argument as a C-contiguous buffer, the call
// without the GIL; its status.
template <typename Call>
Status WithBuffer(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                  const char* fn, Call call) {
  PyObject* data = OneArg(args, nargs, kwnames, fn, "data");
  if (data == nullptr) throw py::type_error(std::string(fn) + "() takes one argument, data");
  Channel& channel = py::cast<Channel&>(py::handle(self));
  if (!PyObject_CheckBuffer(data) && IsTorchTensor(data)) {  // no buffer protocol
    Memory memory = Memory::Of(data, /*writable=*/false);
    py::gil_scoped_release nogil;
    return call(channel, memory.data(), memory.size());
  }
  Py_buffer view;
  if (PyObject_GetBuffer(data, &view, PyBUF_C_CONTIGUOUS) != 0) {
    bool buffer = PyObject_CheckBuffer(data) != 0;
    PyErr_Clear();
    if (buffer) throw py::value_error("the buffer is not C-contiguous");
    throw py::type_error(std::string(fn) + "() takes a bytes-like object or a CPU tensor");
  }
  Status sent;
  {
    py::gil_scoped_release nogil;
    sent = call(channel, view.buf, size_t(view.len));
  }
  PyBuffer_Release(&view);
  return sent;
}

PyObject* Send(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return Guard([&]() -> PyObject* {
    Status sent =
        WithBuffer(self, args, nargs, kwnames, "send",
                   [](Channel& c, const void* buf, size_t len) { return c.Send(buf, len); });
    if (!sent.ok()) return Fail(sent);
    Py_RETURN_NONE;
  });
}

PyObject* TrySend(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return Guard([&]() -> PyObject* {
    Status sent =
        WithBuffer(self, args, nargs, kwnames, "try_send",
                   [](Channel& c, const void* buf, size_t len) { return c.TrySend(buf, len); });
    if (sent.code() == StatusCode::kDeadlineExceeded) Py_RETURN_FALSE;
    if (!sent.ok()) return Fail(sent);
    Py_RETURN_TRUE;
  });
}

PyObject* Recv(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return Guard([&]() -> PyObject* {
    PyObject* timeout = OneArg(args, nargs, kwnames, "recv", "timeout");
    std::optional<double> seconds;
    if (timeout != nullptr && timeout != Py_None) {
      seconds = PyFloat_AsDouble(timeout);
      if (*seconds == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    }
    std::chrono::milliseconds limit = Timeout(seconds);
    Channel& channel = py::cast<Channel&>(py::handle(self));
    auto message = Interruptible(
        "recv", limit, [&](std::chrono::milliseconds slice) { return channel.Recv(slice); });
    if (!message.ok()) return Fail(message.status());
    return Bytes(*message);
  });
}

PyObject* TryRecv(PyObject* self, PyObject* /*unused*/) {
  return Guard([&]() -> PyObject* {
    Channel& channel = py::cast<Channel&>(py::handle(self));
    StatusOr<std::vector<uint8_t>> message =
        NoGil([&] { return channel.Recv(std::chrono::milliseconds(0)); });
    if (message.status().code() == StatusCode::kDeadlineExceeded) Py_RETURN_NONE;
    if (!message.ok()) return Fail(message.status());
    return Bytes(*message);
  });
}

PyMethodDef kSend = {"send", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Send)),
                     METH_FASTCALL | METH_KEYWORDS,
                     "send($self, /, data)\n--\n\n"
                     "Sends one message (any bytes-like object); returns when it may be reused."};
PyMethodDef kRecv = {"recv", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Recv)),
                     METH_FASTCALL | METH_KEYWORDS,
                     "recv($self, /, timeout=None)\n--\n\n"
                     "The next whole message as bytes; DeadlineExceeded after timeout seconds."};

PyMethodDef kTrySend = {
    "try_send", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(TrySend)),
    METH_FASTCALL | METH_KEYWORDS,
    "try_send($self, /, data)\n--\n\n"
    "Sends one message if that needs no waiting (True), else sends nothing (False); "
    "OutOfRange for one that always waits (a rendezvous on RDMA): send() it."};
PyMethodDef kTryRecv = {"try_recv", TryRecv, METH_NOARGS,
                        "try_recv($self, /)\n--\n\n"
                        "The next whole message as bytes if one is there, else None; never "
                        "waits (rdmad.aio's probe: no exception for 'nothing yet')."};

}  // namespace

void BindFastCalls(py::class_<Channel>& channel) {
  auto* type = reinterpret_cast<PyTypeObject*>(channel.ptr());
  for (PyMethodDef* def : {&kSend, &kRecv, &kTrySend, &kTryRecv}) {
    py::object method = py::reinterpret_steal<py::object>(PyDescr_NewMethod(type, def));
    if (!method) throw py::error_already_set();
    channel.attr(def->ml_name) = method;
  }
}

}  // namespace rdmad::python

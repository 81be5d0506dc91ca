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
// region keeps its channel alive, and a connected channel its client.
#include "python/src/bindings.h"

namespace rdmad::python {

using std::chrono::milliseconds;

// Raises the rdmad.Error subclass for status (rdmad/errors.py).
void SetError(const Status& status) {
  // rdmad.errors.error_class, looked up once (the module lives as long as
  // the interpreter holds this extension).
  static PyObject* error_class = [] {
    py::object f = py::module_::import("rdmad.errors").attr("error_class");
    return f.release().ptr();
  }();
  py::object cls = py::reinterpret_borrow<py::object>(error_class)(int(status.code()));
  py::object error = cls(status.message(), int(status.code()));
  PyErr_SetObject(cls.ptr(), error.ptr());
}

[[noreturn]] void Raise(const Status& status) {
  SetError(status);
  throw py::error_already_set();
}

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

bool IsTorchTensor(const py::handle& object) {
  py::object module = py::getattr(py::type::handle_of(object), "__module__", py::none());
  if (!py::isinstance<py::str>(module)) return false;
  std::string name = module.cast<std::string>();
  return (name == "torch" || name.rfind("torch.", 0) == 0) && py::hasattr(object, "data_ptr");
}

Memory Memory::Of(const py::handle& object, bool writable) {
  Memory m;
  if (IsTorchTensor(object)) {
    py::object device = object.attr("device");
    if (device.attr("type").cast<std::string>() != "cpu") {
      throw py::value_error("a tensor on " + py::str(device).cast<std::string>() +
                            ": rdmad takes CPU tensors (tensor.cpu())");
    }
    if (!object.attr("is_contiguous")().cast<bool>()) {
      throw py::value_error("the tensor is not contiguous: pass tensor.contiguous()");
    }
    m.owner_ = py::reinterpret_borrow<py::object>(object);
    m.data_ = reinterpret_cast<void*>(object.attr("data_ptr")().cast<uintptr_t>());
    m.size_ = object.attr("numel")().cast<size_t>() * object.attr("element_size")().cast<size_t>();
    return m;
  }
  if (!PyObject_CheckBuffer(object.ptr())) {
    throw py::type_error("a bytes-like object or a CPU torch tensor, not " +
                         std::string(py::str(py::type::handle_of(object).attr("__name__"))));
  }
  m.view_ = View(py::reinterpret_borrow<py::buffer>(object), writable);
  m.data_ = m.view_->ptr;
  m.size_ = Bytes(*m.view_);
  m.readonly_ = m.view_->readonly;
  return m;
}

py::object RegionOf(Channel& channel, const py::handle& object, bool writable) {
  if (py::isinstance<Region>(object)) return py::reinterpret_borrow<py::object>(object);
  Memory memory = Memory::Of(object, writable);
  auto region = Value(channel.RegisterMemory(memory.data(), memory.size(), MemoryAccess::kLocal));
  return py::cast(Region(std::move(region), std::move(memory)));
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

}  // namespace rdmad::python

PYBIND11_MODULE(_rdmad, m) {
  m.doc() = "rdmad's client library: channels over RDMA or TCP, brokered by the local rdmad.";
  rdmad::python::BindDescriptor(m);
  rdmad::python::BindChannel(m);
  rdmad::python::BindClient(m);
}

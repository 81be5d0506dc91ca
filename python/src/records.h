// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The public records (rdmad/fields.h) as rdmad._records.Record objects:
// dicts of every field under its API name, readable as attributes, shown
// with their kind. One conversion for every record, from its field list.
//
// Thread safety: with the GIL held.

#ifndef RDMAD_PYTHON_SRC_RECORDS_H_
#define RDMAD_PYTHON_SRC_RECORDS_H_

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <type_traits>

#include "rdmad/fields.h"

namespace rdmad::python {

namespace py = pybind11;

// rdmad._records.Record, imported once (and kept: the module outlives us).
inline py::handle RecordClass() {
  static py::handle cls =
      py::object(py::module_::import("rdmad._records").attr("Record")).release();
  return cls;
}

template <class T>
py::object ToPython(const T& value);

template <class Record>
py::object RecordObject(const Record& record) {
  py::dict fields;
  ForEachField(record, [&](const char* name, const auto& v) { fields[name] = ToPython(v); });
  return RecordClass()(RecordFields<Record>::kName, fields);
}

template <class T>
py::object ToPython(const T& value) {
  if constexpr (kHasFields<T>) {
    return RecordObject(value);
  } else if constexpr (std::is_enum_v<T>) {
    return py::str(std::string(ApiName(value)));
  } else if constexpr (kIsFieldList<T>) {
    py::list list;
    for (const auto& e : value) list.append(ToPython(e));
    return list;
  } else if constexpr (kIsOptionalField<T>) {
    return value ? ToPython(*value) : py::none();
  } else {
    return py::cast(value);
  }
}

}  // namespace rdmad::python

#endif  // RDMAD_PYTHON_SRC_RECORDS_H_

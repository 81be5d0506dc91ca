// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ReadRecord: a public record (rdmad/fields.h) from the local API's message
// of the same name, field by field through protobuf reflection, so that no
// field is named twice. A field the message lacks, or holds with another
// type, is left at its default (never a crash): fields_test.cc fails on
// either.
//
// Thread safety: pure functions.

#ifndef RDMAD_CLIENT_SRC_RECORD_READER_H_
#define RDMAD_CLIENT_SRC_RECORD_READER_H_

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "rdmad/fields.h"

namespace rdmad::internal {

// The protobuf C++ type a member of type T holds (a vector: its element's).
template <class T>
constexpr google::protobuf::FieldDescriptor::CppType CppTypeOf() {
  using FD = google::protobuf::FieldDescriptor;
  if constexpr (kIsFieldList<T>) {
    return CppTypeOf<typename FieldList<T>::Element>();
  } else if constexpr (kIsOptionalField<T>) {
    return CppTypeOf<typename OptionalField<T>::Value>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    return FD::CPPTYPE_STRING;
  } else if constexpr (std::is_same_v<T, bool>) {
    return FD::CPPTYPE_BOOL;
  } else if constexpr (std::is_same_v<T, double>) {
    return FD::CPPTYPE_DOUBLE;
  } else if constexpr (std::is_same_v<T, uint32_t>) {
    return FD::CPPTYPE_UINT32;
  } else if constexpr (std::is_same_v<T, int32_t>) {
    return FD::CPPTYPE_INT32;
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return FD::CPPTYPE_UINT64;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return FD::CPPTYPE_INT64;
  } else if constexpr (std::is_enum_v<T>) {
    return FD::CPPTYPE_ENUM;
  } else {
    static_assert(kHasFields<T>, "a member type the field lists do not know");
    return FD::CPPTYPE_MESSAGE;
  }
}

// Whether the message field fd can fill a member of type T (a
// std::optional: only a field that tracks whether it is set).
template <class T>
bool FieldFits(const google::protobuf::FieldDescriptor& fd) {
  if (fd.cpp_type() != CppTypeOf<T>() || fd.is_repeated() != kIsFieldList<T>) return false;
  if (fd.is_repeated() || fd.message_type() != nullptr) return !kIsOptionalField<T>;
  return fd.has_presence() == kIsOptionalField<T>;
}

template <class Record>
void ReadRecord(const google::protobuf::Message& message, Record* out);

template <class T>
T ReadOne(const google::protobuf::Message& m, const google::protobuf::FieldDescriptor* fd,
          int index) {
  const google::protobuf::Reflection* r = m.GetReflection();
  bool rep = index >= 0;
  if constexpr (std::is_same_v<T, std::string>) {
    return rep ? r->GetRepeatedString(m, fd, index) : r->GetString(m, fd);
  } else if constexpr (std::is_same_v<T, bool>) {
    return rep ? r->GetRepeatedBool(m, fd, index) : r->GetBool(m, fd);
  } else if constexpr (std::is_same_v<T, double>) {
    return rep ? r->GetRepeatedDouble(m, fd, index) : r->GetDouble(m, fd);
  } else if constexpr (std::is_same_v<T, uint32_t>) {
    return rep ? r->GetRepeatedUInt32(m, fd, index) : r->GetUInt32(m, fd);
  } else if constexpr (std::is_same_v<T, int32_t>) {
    return rep ? r->GetRepeatedInt32(m, fd, index) : r->GetInt32(m, fd);
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return rep ? r->GetRepeatedUInt64(m, fd, index) : r->GetUInt64(m, fd);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return rep ? r->GetRepeatedInt64(m, fd, index) : r->GetInt64(m, fd);
  } else if constexpr (std::is_enum_v<T>) {
    int v = rep ? r->GetRepeatedEnumValue(m, fd, index) : r->GetEnumValue(m, fd);
    return v >= 0 && v <= ApiEnum<T>::kMax ? static_cast<T>(v) : static_cast<T>(0);
  } else {
    T out;
    ReadRecord(rep ? r->GetRepeatedMessage(m, fd, index) : r->GetMessage(m, fd), &out);
    return out;
  }
}

template <class Record>
void ReadRecord(const google::protobuf::Message& message, Record* out) {
  const google::protobuf::Descriptor* d = message.GetDescriptor();
  ForEachField(*out, [&](const char* name, auto& value) {
    using T = std::remove_reference_t<decltype(value)>;
    const google::protobuf::FieldDescriptor* fd = d->FindFieldByName(name);
    if (fd == nullptr || !FieldFits<T>(*fd)) return;
    if constexpr (kIsFieldList<T>) {
      using E = typename FieldList<T>::Element;
      int n = message.GetReflection()->FieldSize(message, fd);
      value.clear();
      value.reserve(size_t(n));
      for (int i = 0; i < n; ++i) value.push_back(ReadOne<E>(message, fd, i));
    } else if constexpr (kIsOptionalField<T>) {
      using V = typename OptionalField<T>::Value;
      value.reset();
      if (message.GetReflection()->HasField(message, fd)) value = ReadOne<V>(message, fd, -1);
    } else {
      value = ReadOne<T>(message, fd, -1);
    }
  });
}

// The record Record read from message: ReadAs<Device>(d).
template <class Record>
Record ReadAs(const google::protobuf::Message& message) {
  Record out;
  ReadRecord(message, &out);
  return out;
}

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RECORD_READER_H_

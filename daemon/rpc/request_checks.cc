// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/request_checks.h"

namespace rdmad {

Status CheckName(std::string_view field, std::string_view value, size_t max) {
  if (!value.empty() && value.size() <= max) return Status::Ok();
  return Status::InvalidArgument(std::string(field) + ": 1.." + std::to_string(max) +
                                 " bytes required (got " + std::to_string(value.size()) + ")");
}

std::string Quote(std::string_view text) {
  if (text.size() <= kMaxQuoted) return "\"" + std::string(text) + "\"";
  return "\"" + std::string(text.substr(0, kMaxQuoted)) + "...\" (" + std::to_string(text.size()) +
         " bytes)";
}

Status CheckKnownFields(const google::protobuf::Message& request) {
  if (request.GetReflection()->GetUnknownFields(request).empty()) return Status::Ok();
  return Status::InvalidArgument(request.GetDescriptor()->name() +
                                 " carries fields rdmad " RDMAD_VERSION
                                 " does not know: the client library is of another release; "
                                 "rebuild it against this rdmad (docs/wire.md, \"Versions\")");
}

}  // namespace rdmad

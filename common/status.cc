// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "rdmad/status.h"

#include <cerrno>
#include <cstring>

namespace rdmad {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kCancelled: return "CANCELLED";
    case StatusCode::kUnknown: return "UNKNOWN";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kAlreadyExists: return "ALREADY_EXISTS";
    case StatusCode::kPermissionDenied: return "PERMISSION_DENIED";
    case StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case StatusCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case StatusCode::kAborted: return "ABORTED";
    case StatusCode::kOutOfRange: return "OUT_OF_RANGE";
    case StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case StatusCode::kInternal: return "INTERNAL";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
    case StatusCode::kDataLoss: return "DATA_LOSS";
    case StatusCode::kUnauthenticated: return "UNAUTHENTICATED";
  }
  return "UNKNOWN";
}

StatusCode StatusCodeFromInt(int code) {
  if (code < 0 || code > static_cast<int>(StatusCode::kUnauthenticated)) {
    return StatusCode::kUnknown;
  }
  return static_cast<StatusCode>(code);
}

Status Status::FromErrno(int err, std::string_view what) {
  char buf[256];
  const char* text = strerror_r(err, buf, sizeof(buf));  // GNU variant
  std::string msg = std::string(what) + ": " + text;
  switch (err) {
    case EACCES:
    case EPERM: return PermissionDenied(std::move(msg));
    case ENOENT: return NotFound(std::move(msg));
    case EEXIST: return AlreadyExists(std::move(msg));
    case EINVAL: return InvalidArgument(std::move(msg));
    case EAGAIN:
    case ECONNREFUSED:
    case ECONNRESET: return Unavailable(std::move(msg));
    case ENOMEM:
    case EMFILE:
    case ENFILE: return ResourceExhausted(std::move(msg));
    default: return Internal(std::move(msg));
  }
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(StatusCodeName(state_->code));
  out += ": ";
  out += state_->message;
  return out;
}

const std::string& Status::EmptyMessage() {
  static const std::string* const empty = new std::string();
  return *empty;
}

}  // namespace rdmad

// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Status and StatusOr: the one error style used through rdmad's core code and
// its client library. Codes follow the canonical gRPC codes so the RPC edge
// maps them one to one; nothing here depends on gRPC.
//
// Thread safety: a const Status or StatusOr may be read from many threads;
// mutation needs external synchronisation, as for any value type.

#ifndef RDMAD_STATUS_H_
#define RDMAD_STATUS_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "rdmad/export.h"

namespace rdmad {

enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// Returns "OK", "INVALID_ARGUMENT", ... as gRPC spells them.
RDMAD_EXPORT std::string_view StatusCodeName(StatusCode code);

// The code for a number received from elsewhere (a gRPC status, a wire
// field): the named codes map to themselves, anything else to kUnknown.
RDMAD_EXPORT StatusCode StatusCodeFromInt(int code);

// A result: OK, or a code and a message. [[nodiscard]]: a call's Status is
// handled or deliberately dropped with IgnoreError(), never lost by accident.
class [[nodiscard]] RDMAD_EXPORT Status {
 public:
  Status() noexcept = default;  // OK
  // An error; with code kOk, OK (and the message is not kept).
  Status(StatusCode code, std::string message)
      : state_(code == StatusCode::kOk ? nullptr : new State{code, std::move(message)}) {}
  Status(const Status& other) : state_(other.state_ ? new State(*other.state_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) state_.reset(other.state_ ? new State(*other.state_) : nullptr);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status Ok() { return Status(); }
  static Status Cancelled(std::string msg) { return {StatusCode::kCancelled, std::move(msg)}; }
  static Status InvalidArgument(std::string msg) {
    return {StatusCode::kInvalidArgument, std::move(msg)};
  }
  static Status DeadlineExceeded(std::string msg) {
    return {StatusCode::kDeadlineExceeded, std::move(msg)};
  }
  static Status NotFound(std::string msg) { return {StatusCode::kNotFound, std::move(msg)}; }
  static Status AlreadyExists(std::string msg) {
    return {StatusCode::kAlreadyExists, std::move(msg)};
  }
  static Status PermissionDenied(std::string msg) {
    return {StatusCode::kPermissionDenied, std::move(msg)};
  }
  static Status ResourceExhausted(std::string msg) {
    return {StatusCode::kResourceExhausted, std::move(msg)};
  }
  static Status FailedPrecondition(std::string msg) {
    return {StatusCode::kFailedPrecondition, std::move(msg)};
  }
  static Status Aborted(std::string msg) { return {StatusCode::kAborted, std::move(msg)}; }
  static Status OutOfRange(std::string msg) { return {StatusCode::kOutOfRange, std::move(msg)}; }
  static Status Unimplemented(std::string msg) {
    return {StatusCode::kUnimplemented, std::move(msg)};
  }
  static Status Internal(std::string msg) { return {StatusCode::kInternal, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {StatusCode::kUnavailable, std::move(msg)}; }
  static Status Unauthenticated(std::string msg) {
    return {StatusCode::kUnauthenticated, std::move(msg)};
  }
  // An error from a failed system call: message is "what: strerror(err)".
  static Status FromErrno(int err, std::string_view what);

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  const std::string& message() const { return state_ ? state_->message : EmptyMessage(); }

  // "OK" or "INVALID_ARGUMENT: message".
  std::string ToString() const;

  // Drops the status on purpose (best-effort calls whose failure changes
  // nothing for the caller).
  void IgnoreError() const {}

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }

 private:
  // OK is no state at all: making, testing, moving and dropping an OK
  // Status (every call on the data path returns one) is a pointer's work.
  struct State {
    StatusCode code;
    std::string message;
  };
  static const std::string& EmptyMessage();
  std::unique_ptr<State> state_;
};

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT: implicit
    if (status_.ok()) status_ = Status::Internal("StatusOr built from OK status");
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // Precondition: ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace rdmad

// Evaluates expr (a Status); returns it from the enclosing function if not OK.
#define RDMAD_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::rdmad::Status rdmad_status_ = (expr);        \
    if (!rdmad_status_.ok()) return rdmad_status_; \
  } while (0)

#endif  // RDMAD_STATUS_H_

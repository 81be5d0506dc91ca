// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/circuit_breaker.h"

namespace rdmad {

bool CircuitBreaker::OnFailure(Time now) {
  if (consecutive_++ == 0) first_failure_ = now;
  bool opens = state_ == State::kHalfOpen ||
               (state_ == State::kClosed && options_.failures > 0 &&
                consecutive_ >= options_.failures && now - first_failure_ >= options_.min_span);
  if (!opens) return false;
  state_ = State::kOpen;
  open_until_ = now + options_.open_for;
  return true;
}

bool CircuitBreaker::OnSuccess() {
  bool was_open = state_ != State::kClosed;
  state_ = State::kClosed;
  consecutive_ = 0;
  return was_open;
}

bool CircuitBreaker::Allow(Time now) {
  if (state_ != State::kOpen) return true;
  if (now < open_until_) return false;
  state_ = State::kHalfOpen;
  return true;
}

std::string_view CircuitStateName(CircuitBreaker::State state) {
  switch (state) {
    case CircuitBreaker::State::kClosed: return "closed";
    case CircuitBreaker::State::kOpen: return "open";
    case CircuitBreaker::State::kHalfOpen: return "half-open";
  }
  return "unknown";
}

}  // namespace rdmad

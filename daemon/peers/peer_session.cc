// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/peer_session.h"

#include <algorithm>
#include <ctime>
#include <vector>

#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kHelloGrace{1000};  // the link enforces the timeout
constexpr SteadyTime kNever = SteadyTime::max();

double Millis(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out.empty() ? "none (TCP only)" : out;
}

// "2026-01-02T03:04:05Z".
std::string FormatUtc(std::chrono::system_clock::time_point t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::string_view PeerSessionStateName(PeerSessionState state) {
  switch (state) {
    case PeerSessionState::kConnecting: return "connecting";
    case PeerSessionState::kUp: return "up";
    case PeerSessionState::kDown: return "down";
    case PeerSessionState::kVersionMismatch: return "version-mismatch";
    case PeerSessionState::kCircuitOpen: return "circuit-open";
    case PeerSessionState::kIdle: return "idle";
  }
  return "unknown";
}

const char* PeerOriginName(PeerOrigin origin) {
  switch (origin) {
    case PeerOrigin::kConfigured: return "configured";
    case PeerOrigin::kDiscovered: return "discovered";
    case PeerOrigin::kOnDemand: return "on demand";
  }
  return "unknown";
}

// One attempt's Session stream, heard on the transport's thread: each
// event and the end are stamped and posted to the session's worker.
class PeerSession::StreamObserver final : public PeerStreamObserver {
 public:
  StreamObserver(std::weak_ptr<PeerSession> session, uint64_t attempt,
                 std::shared_ptr<const PeerSessionEnv> env)
      : session_(std::move(session)), attempt_(attempt), env_(std::move(env)) {}

  void OnStreamEvent(const PeerEvent& event) override {
    SteadyTime t = env_->options.clock->Now();
    env_->worker->Post([weak = session_, attempt = attempt_, event, t] {
      if (auto self = weak.lock()) self->OnEvent(attempt, event, t);
    });
  }
  void OnStreamEnd(const Status& status) override {
    SteadyTime t = env_->options.clock->Now();
    env_->worker->Post([weak = session_, attempt = attempt_, status, t] {
      if (auto self = weak.lock()) self->OnEnd(attempt, status, t);
    });
  }

 private:
  const std::weak_ptr<PeerSession> session_;
  const uint64_t attempt_;
  const std::shared_ptr<const PeerSessionEnv> env_;
};

PeerSession::PeerSession(std::string name, std::string address, PeerOrigin origin,
                         std::shared_ptr<const PeerSessionEnv> env)
    : name_(std::move(name)),
      address_(std::move(address)),
      origin_(origin),
      env_(std::move(env)),
      state_since_(env_->options.clock->Now()),
      next_attempt_(state_since_),
      backoff_(env_->options.backoff, *env_->options.clock),
      breaker_(env_->options.breaker) {}

PeerSession::~PeerSession() { Teardown(); }

PeerSnapshot PeerSession::snapshot() const {
  PeerSnapshot s;
  s.name = name_;
  s.address = address_;
  s.configured = configured();
  s.origin = origin_;
  std::lock_guard lock(mu_);
  s.state = state_;
  s.rtt_ms = rtt_ms_;
  s.clock_offset_ms = clock_offset_ms_;
  s.last_error = last_error_;
  s.remote = remote_;
  s.state_seconds = std::max(0.0, Millis(env_->options.clock->Now() - state_since_) / 1000);
  s.failures = failures_;
  s.dialling = dialling_;
  if (state_ == PeerSessionState::kCircuitOpen) s.circuit_open_until = open_until_wall_;
  return s;
}

StatusOr<std::shared_ptr<PeerLink>> PeerSession::link() const {
  std::lock_guard lock(mu_);
  if (state_ == PeerSessionState::kUp && link_) return link_;
  if (state_ == PeerSessionState::kCircuitOpen) {
    std::string circuit = probing_ ? std::string("circuit half-open (probing)")
                                   : "circuit open until " + FormatUtc(open_until_wall_);
    return Status::Unavailable("peer " + name_ + ": " + circuit + " after " +
                               std::to_string(failures_) + " failures: " + last_error_);
  }
  std::string why = last_error_.empty() ? std::string("not connected yet") : last_error_;
  return Status::FailedPrecondition("peer " + name_ + " is " +
                                    std::string(PeerSessionStateName(state_)) + ": " + why);
}

bool PeerSession::AwaitDial(std::chrono::steady_clock::time_point until) const {
  std::unique_lock lock(mu_);
  return dial_cv_.wait_until(lock, until, [this] {
    return stopped_ || (state_ != PeerSessionState::kConnecting && !dialling_);
  });
}

void PeerSession::SetUser(SessionUser* user) { user_.store(user); }

SteadyTime PeerSession::Poll(SteadyTime now) {
  const PeerSessionOptions& o = env_->options;
  switch (phase_) {
    case Phase::kStopped: return kNever;
    case Phase::kIdle:
      if (now >= next_attempt_) StartAttempt(now);
      break;
    case Phase::kHello:
      if (now >= hello_sent_ + o.hello_timeout + kHelloGrace) {
        Fail("Hello: no answer within " + std::to_string(o.hello_timeout.count()) + " ms", now);
      }
      break;
    case Phase::kOpening:
    case Phase::kUp:
      if (now >= last_event_ + o.stale_after) {
        Fail("no heartbeat from the peer for " + std::to_string(o.stale_after.count()) + " ms",
             now);
      } else if (hello_in_flight_ && now >= hello_sent_ + o.hello_timeout + kHelloGrace) {
        Fail("Hello: no answer within " + std::to_string(o.hello_timeout.count()) + " ms", now);
      } else if (phase_ == Phase::kUp && !hello_in_flight_ && now >= next_probe_) {
        SendHello(now);
      }
      break;
  }
  switch (phase_) {
    case Phase::kStopped: return kNever;
    case Phase::kIdle: return next_attempt_;
    case Phase::kHello: return hello_sent_ + o.hello_timeout + kHelloGrace;
    case Phase::kOpening:
    case Phase::kUp: {
      SteadyTime next = last_event_ + o.stale_after;
      if (hello_in_flight_) next = std::min(next, hello_sent_ + o.hello_timeout + kHelloGrace);
      if (phase_ == Phase::kUp && !hello_in_flight_) next = std::min(next, next_probe_);
      return next;
    }
  }
  return kNever;
}

void PeerSession::StartAttempt(SteadyTime now) {
  if (!breaker_.Allow(now)) {  // not due yet (Poll keeps to next_attempt_)
    next_attempt_ = breaker_.open_until();
    return;
  }
  if (breaker_.state() == CircuitBreaker::State::kHalfOpen) {
    spdlog::info(
        "peer {} ({}): circuit half-open after {} s; probing once", name_, address_,
        std::chrono::duration_cast<std::chrono::seconds>(breaker_.options().open_for).count());
    std::lock_guard lock(mu_);
    probing_ = true;
  }
  ++attempt_;
  SetDialling(true);
  if (!link_) {
    auto link = env_->connector->Connect(address_);
    if (!link.ok()) {
      Fail(link.status().message(), now);
      return;
    }
    std::lock_guard lock(mu_);
    link_ = std::move(link).value();
  }
  spdlog::debug("peer {}: connecting to {} (attempt {})", name_, address_, failures_ + 1);
  phase_ = Phase::kHello;
  SendHello(now);
}

void PeerSession::SendHello(SteadyTime now) {
  hello_in_flight_ = true;
  hello_sent_ = now;
  std::weak_ptr<PeerSession> weak = weak_from_this();
  uint64_t attempt = attempt_;
  std::shared_ptr<const PeerSessionEnv> env = env_;
  link_->Hello(env_->hello->LocalHello(), env_->options.hello_timeout,
               [weak, attempt, env](StatusOr<PeerHello> result) {
                 SteadyTime at = env->options.clock->Now();
                 env->worker->Post([weak, attempt, result = std::move(result), at]() mutable {
                   if (auto self = weak.lock()) self->OnHello(attempt, std::move(result), at);
                 });
               });
}

void PeerSession::OnHello(uint64_t attempt, StatusOr<PeerHello> result, SteadyTime at) {
  if (attempt != attempt_ || !hello_in_flight_) return;  // an older attempt's answer
  hello_in_flight_ = false;
  if (!result.ok()) {
    Fail("Hello: " + result.status().message(), at);
    return;
  }
  double rtt = Millis(at - hello_sent_);
  PeerHello me = env_->hello->LocalHello();
  Status version = CheckProtocol(me.protocol, result->protocol, name_);
  {
    std::lock_guard lock(mu_);
    rtt_ms_ = rtt;
    remote_ = *result;
  }
  // A cluster member's record says which node is at its address; the
  // daemon there must be that node (its answer's host name is proven by
  // its certificate or the peer key, peer_link_grpc.cc). A record that
  // points elsewhere is not used (it may be corrected: tried again).
  if (origin_ == PeerOrigin::kDiscovered && result->host_name != name_) {
    Fail("the daemon at " + address_ + " is " + result->host_name + ", not the cluster member " +
             name_ + " its record names; not using it",
         at);
    return;
  }
  if (!version.ok()) {
    spdlog::error("{}; not using it (a different major version cannot talk)", version.message());
    Teardown();
    phase_ = Phase::kStopped;
    SetDialling(false);
    SetState(PeerSessionState::kVersionMismatch, version.message(), at);
    return;
  }
  if (phase_ != Phase::kHello) {  // a probe while up
    next_probe_ = at + env_->options.rtt_interval;
    spdlog::trace("peer {}: RTT {:.3f} ms", name_, rtt);
    return;
  }
  phase_ = Phase::kOpening;
  last_event_ = at;
  SessionOpen open{me.protocol, me.host_name, me.instance_id,
                   int(env_->options.heartbeat_interval.count())};
  stream_ =
      link_->OpenSession(open, std::make_shared<StreamObserver>(weak_from_this(), attempt, env_));
}

void PeerSession::OnEvent(uint64_t attempt, const PeerEvent& event, SteadyTime at) {
  if (attempt != attempt_ || (phase_ != Phase::kOpening && phase_ != Phase::kUp)) return;
  last_event_ = at;
  if (phase_ == Phase::kOpening) {
    phase_ = Phase::kUp;
    backoff_.Reset();
    if (breaker_.OnSuccess()) {
      spdlog::info("peer {} ({}): circuit closed: the half-open probe succeeded", name_, address_);
    }
    next_probe_ = at + env_->options.rtt_interval;
    PeerSnapshot s = snapshot();
    spdlog::info(
        "peer {} ({}) is up: host {}, rdmad {}, protocol {}, RTT {:.3f} ms, "
        "RDMA transports: {}",
        name_, address_, s.remote->host_name, s.remote->daemon_version,
        FormatProtocol(s.remote->protocol), s.rtt_ms, Join(s.remote->transports));
    {
      std::lock_guard lock(mu_);
      failures_ = 0;
      probing_ = false;
      dialling_ = false;
    }
    SetState(PeerSessionState::kUp, "", at);
  }
  if (event.kind == PeerEvent::Kind::kHeartbeat && event.unix_time_ms != 0) {
    double mine =
        std::chrono::duration<double, std::milli>(env_->options.clock->WallNow().time_since_epoch())
            .count();
    std::lock_guard lock(mu_);
    clock_offset_ms_ = double(event.unix_time_ms) + rtt_ms_ / 2 - mine;
  }
  if (event.kind == PeerEvent::Kind::kHeartbeat || event.kind == PeerEvent::Kind::kUnknown) {
    return;
  }
  if (SessionUser* user = user_.load(); user != nullptr) user->OnSessionEvent(snapshot(), event);
}

void PeerSession::OnEnd(uint64_t attempt, const Status& status, SteadyTime at) {
  if (attempt != attempt_ || (phase_ != Phase::kOpening && phase_ != Phase::kUp)) return;
  Fail(status.ok() ? std::string("the peer closed the session")
                   : "session stream: " + status.message(),
       at);
}

void PeerSession::Fail(const std::string& error, SteadyTime now) {
  ++attempt_;  // whatever is still in flight is now stale
  Teardown();
  hello_in_flight_ = false;
  phase_ = Phase::kIdle;
  bool probe = breaker_.state() == CircuitBreaker::State::kHalfOpen;
  bool opened = breaker_.OnFailure(now);
  milliseconds delay = opened
                           ? std::chrono::duration_cast<milliseconds>(breaker_.open_until() - now)
                           : backoff_.Next();
  next_attempt_ = now + delay;
  auto until_wall = env_->options.clock->WallNow() + delay;
  PeerSessionState before;
  std::string before_error;
  int failures;
  {
    std::lock_guard lock(mu_);
    before = state_;
    before_error = last_error_;
    failures = ++failures_;
    probing_ = false;
    dialling_ = false;
    if (opened) open_until_wall_ = until_wall;
  }
  if (opened) {
    std::string until = FormatUtc(until_wall);
    if (probe) {
      spdlog::warn("peer {} ({}): circuit open again until {}: the half-open probe failed: {}",
                   name_, address_, until, error);
    } else {
      spdlog::warn(
          "peer {} ({}): circuit open until {} after {} failures in a row, the last: "
          "{}; not dialling it until then",
          name_, address_, until, failures, error);
    }
    SetState(PeerSessionState::kCircuitOpen, error, now);
    return;
  }
  if (before != PeerSessionState::kDown) {
    spdlog::warn("peer {} ({}) is down: {}; retrying in {} ms", name_, address_, error,
                 delay.count());
  } else if (error != before_error) {
    spdlog::info("peer {} ({}) still down: {}; retrying in {} ms", name_, address_, error,
                 delay.count());
  } else {
    spdlog::debug("peer {} ({}) still down: {}; retrying in {} ms", name_, address_, error,
                  delay.count());
  }
  SetState(PeerSessionState::kDown, error, now);
}

void PeerSession::Teardown() {
  stream_.reset();  // cancels and waits for its end callback (stale by now)
  std::shared_ptr<PeerLink> link;
  {
    std::lock_guard lock(mu_);
    link = std::move(link_);
  }
  link.reset();  // a fresh link next attempt: no transport backoff carried over
}

bool PeerSession::Revive(SteadyTime now, const std::string& why) {
  if (phase_ != Phase::kIdle || next_attempt_ <= now) return false;
  const bool was_open = breaker_.Reset();
  backoff_.Reset();
  next_attempt_ = now;
  std::string error;
  bool circuit_open;
  {
    std::lock_guard lock(mu_);
    failures_ = 0;
    probing_ = false;
    dialling_ = true;  // the worker's next Poll dials
    error = last_error_;
    circuit_open = state_ == PeerSessionState::kCircuitOpen;
  }
  spdlog::info("peer {} ({}) is back ({}): dialling it now{}", name_, address_, why,
               was_open ? ", circuit closed" : "");
  if (circuit_open) SetState(PeerSessionState::kDown, error, now);
  return true;
}

void PeerSession::DialSoon() {
  std::lock_guard lock(mu_);
  if (state_ == PeerSessionState::kDown || state_ == PeerSessionState::kCircuitOpen) {
    dialling_ = true;
  }
}

void PeerSession::Shutdown() {
  ++attempt_;
  Teardown();
  phase_ = Phase::kStopped;
  {
    std::lock_guard lock(mu_);
    dialling_ = false;
    stopped_ = true;
  }
  dial_cv_.notify_all();
}

void PeerSession::SetState(PeerSessionState state, const std::string& error, SteadyTime now) {
  bool changed;
  {
    std::lock_guard lock(mu_);
    changed = state_ != state || last_error_ != error;
    if (state_ != state) state_since_ = now;
    state_ = state;
    last_error_ = error;
  }
  dial_cv_.notify_all();
  if (changed) NotifyState();
}

void PeerSession::SetDialling(bool dialling) {
  {
    std::lock_guard lock(mu_);
    dialling_ = dialling;
  }
  dial_cv_.notify_all();
}

void PeerSession::NotifyState() {
  if (SessionUser* user = user_.load(); user != nullptr) user->OnSessionState(snapshot());
}

}  // namespace rdmad

// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/echo/echo_service.h"

#include "common/echo_protocol.h"
#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

// After an accept error other than a timeout, the loop waits this many
// polls before it tries again.
constexpr int kErrorBackoffPolls = 5;

}  // namespace

StatusOr<std::unique_ptr<EchoService>> EchoService::Start(std::unique_ptr<Client> client,
                                                          const EchoServiceOptions& options) {
  auto listener = client->Listen(echo::kService);
  if (!listener.ok()) return listener.status();
  std::unique_ptr<EchoService> service(
      new EchoService(std::move(client), std::move(listener).value(), options));
  spdlog::info("echo service: listening on {} through {} (at most {} channels at once)",
               echo::kService, service->client_->socket_path(), options.max_channels);
  return service;
}

EchoService::EchoService(std::unique_ptr<Client> client, std::unique_ptr<Listener> listener,
                         const EchoServiceOptions& options)
    : options_(options), client_(std::move(client)), listener_(std::move(listener)) {
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

EchoService::~EchoService() { Stop(); }

bool EchoService::stopping() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

size_t EchoService::active_channels() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const Session& s : sessions_) n += s.done ? 0 : 1;
  return n;
}

void EchoService::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !accept_thread_.joinable()) return;
    stopping_ = true;
    cv_.notify_all();
  }
  if (accept_thread_.joinable()) accept_thread_.join();
  std::list<Session> sessions;
  size_t open = 0;
  {
    std::lock_guard lock(mu_);
    for (const Session& s : sessions_) open += s.done ? 0 : 1;
    sessions.splice(sessions.end(), sessions_);  // nodes (and &s) stay put
  }
  for (Session& s : sessions) s.channel->Close();  // wakes Recv and Send
  for (Session& s : sessions) s.thread.join();
  listener_.reset();  // ends the Listen stream: the daemon drops rdmad.echo
  client_.reset();
  spdlog::info("echo service stopped (open channels closed: {})", open);
}

void EchoService::AcceptLoop() {
  while (!stopping()) {
    Reap();
    if (active_channels() >= options_.max_channels) {
      RejectOne();
    } else {
      AcceptOne();
    }
  }
}

void EchoService::AcceptOne() {
  auto channel = listener_->Accept(options_.accept_poll);
  if (channel.ok()) {
    StartSession(std::move(channel).value());
    return;
  }
  if (channel.status().code() == StatusCode::kDeadlineExceeded || stopping()) return;
  spdlog::warn("echo service: accepting a channel failed: {}", channel.status().ToString());
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, options_.accept_poll * kErrorBackoffPolls, [this] { return stopping_; });
}

// At the limit: refuses the next request (if one comes within a poll).
void EchoService::RejectOne() {
  std::string reason =
      "the echo service is at its limit of " + std::to_string(options_.max_channels) + " channels";
  Status st = listener_->Reject(reason, options_.accept_poll);
  if (st.ok()) {
    spdlog::warn("echo service: rejected a channel: {}", reason);
  } else if (st.code() != StatusCode::kDeadlineExceeded && !stopping()) {
    spdlog::warn("echo service: rejecting a channel failed: {}", st.ToString());
  }
}

void EchoService::StartSession(std::unique_ptr<Channel> channel) {
  const ChannelInfo& info = channel->info();
  spdlog::info("echo: channel {:#018x} from {} over {} ({})", info.id, info.peer,
               ChannelTransportName(info.transport), info.transport_reason);
  std::lock_guard lock(mu_);
  Session& s = sessions_.emplace_back();
  s.channel = std::move(channel);
  s.thread = std::thread([this, &s] {
    EchoSessionResult r = ServeEchoChannel(*s.channel, options_.session);
    spdlog::info("echo: channel {:#018x} from {} ended after {} messages ({} bytes): {}",
                 s.channel->info().id, s.channel->info().peer, r.messages, r.bytes,
                 r.status.ToString());
    std::lock_guard lock(mu_);
    s.done = true;
  });
}

// Joins the threads of finished channels.
void EchoService::Reap() {
  std::list<Session> finished;
  {
    std::lock_guard lock(mu_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      auto next = std::next(it);
      if (it->done) finished.splice(finished.end(), sessions_, it);
      it = next;
    }
  }
  for (Session& s : finished) s.thread.join();
}

StatusOr<std::unique_ptr<BuiltinService>> MakeEchoService(const std::string& socket_path) {
  ClientOptions options;
  options.socket_path = socket_path;
  // The client library in the daemon's own process logs into the daemon's
  // log, at the daemon's level.
  auto daemon_level = spdlog::level::to_string_view(spdlog::get_level());
  options.log_level = ParseLogLevel(std::string_view(daemon_level.data(), daemon_level.size()))
                          .value_or(LogLevel::kError);  // "critical": errors at least
  options.log_sink = [](LogLevel level, std::string_view message) {
    constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::trace, spdlog::level::debug,
                                                     spdlog::level::info,  spdlog::level::warn,
                                                     spdlog::level::err,   spdlog::level::off};
    spdlog::log(kLevels[static_cast<int>(level)], "{}", message);
  };
  auto client = Client::Open(options);
  if (!client.ok()) return client.status();
  auto service = EchoService::Start(std::move(client).value(), EchoServiceOptions{});
  if (!service.ok()) return service.status();
  return std::unique_ptr<BuiltinService>(std::move(service).value());
}

}  // namespace rdmad

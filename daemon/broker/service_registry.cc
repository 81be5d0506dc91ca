// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/service_registry.h"

#include <spdlog/spdlog.h>

#include <cctype>
#include <string>

#include "common/endpoint.h"

namespace rdmad {

ServiceRegistration::~ServiceRegistration() {
  registry_->Unregister(service_, token_);
  if (registry_->observer_ != nullptr) registry_->observer_->OnServicesChanged();
}

Status ServiceRegistry::ValidateServiceName(const std::string& service) {
  if (service.empty() || service.size() > 64) {
    return Status::InvalidArgument("service name must be 1..64 characters");
  }
  for (unsigned char c : service) {
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-') continue;
    return Status::InvalidArgument("service name \"" + service +
                                   "\" may only hold letters, digits, '.', '_' and '-'");
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<ServiceRegistration>> ServiceRegistry::Register(
    const std::string& service, std::shared_ptr<ServiceSink> sink, const Caller& caller) {
  auto registration = Add(service, std::move(sink), caller);
  if (registration.ok() && observer_ != nullptr) observer_->OnServicesChanged();
  return registration;
}

StatusOr<std::unique_ptr<ServiceRegistration>> ServiceRegistry::Add(
    const std::string& service, std::shared_ptr<ServiceSink> sink, const Caller& caller) {
  RDMAD_RETURN_IF_ERROR(ValidateServiceName(service));
  Owner owner = caller.owner();
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return Status::Unavailable(*stopping_);
  if (services_.count(service) != 0) {
    return Status::AlreadyExists("service " + service + " already has a listener on " + host_name_);
  }
  size_t client = 0, uid = 0;
  for (const auto& [name, entry] : services_) {
    if (!caller.Is(entry.owner.uid)) continue;
    ++uid;
    if (entry.owner.pid == owner.pid) ++client;
  }
  if (!caller.self && max_per_client_ > 0 && client >= max_per_client_) {
    CountRefusal(refusals_, "limits.max_listeners_per_client");
    return Status::ResourceExhausted(
        fmt::format("client {} has {} listeners, its limit (limits.max_listeners_per_client = {})",
                    caller.name, client, max_per_client_));
  }
  if (!caller.self && max_per_uid_ > 0 && uid >= max_per_uid_) {
    CountRefusal(refusals_, "limits.max_listeners_per_uid");
    return Status::ResourceExhausted(
        fmt::format("uid {} has {} listeners, its limit (limits.max_listeners_per_uid = {})",
                    caller.uid, uid, max_per_uid_));
  }
  uint64_t token = next_token_++;
  services_[service] = Entry{token, std::move(sink), owner};
  spdlog::info("service {}: listener registered (pid {}, uid {})", service, owner.pid, owner.uid);
  return std::unique_ptr<ServiceRegistration>(new ServiceRegistration(this, service, token));
}

void ServiceRegistry::SetLimits(size_t per_client, size_t per_uid) {
  std::lock_guard<std::mutex> lock(mu_);
  max_per_client_ = per_client;
  max_per_uid_ = per_uid;
}

void ServiceRegistry::Unregister(const std::string& service, uint64_t token) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = services_.find(service);
  if (it == services_.end() || it->second.token != token) return;
  services_.erase(it);
  for (auto& [id, pending] : pending_) {
    if (pending.service == service && !pending.answer) {
      pending.answer = Status::Aborted("the listener of service " + service + " went away");
    }
  }
  answered_.notify_all();
  spdlog::info("service {}: listener gone; registration removed", service);
}

StatusOr<ChannelEndpoints> ServiceRegistry::Offer(
    IncomingChannelRequest request, const std::function<void(const Owner&)>& offered) {
  std::shared_ptr<ServiceSink> sink;
  Owner owner;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = services_.find(request.service);
    if (it == services_.end()) {
      return Status::NotFound("no service " + request.service + " on " + host_name_);
    }
    sink = it->second.sink;
    owner = it->second.owner;
    request.request_id = next_request_++;
    std::vector<uint64_t> ids;
    for (const ChannelOpening& c : request.channels) ids.push_back(c.channel_id);
    pending_[request.request_id] =
        Pending{request.service, std::move(ids), it->second.owner, std::nullopt};
  }
  const uint64_t first = request.channels.front().channel_id;
  if (request.channels.size() == 1) {
    spdlog::info("service {}: channel {:#018x} from {} offered as request {}", request.service,
                 first, request.peer, request.request_id);
  } else {
    spdlog::info("service {}: {} channels from {} ({:#018x} ...) offered as request {}",
                 request.service, request.channels.size(), request.peer, first, request.request_id);
  }
  if (offered) offered(owner);
  sink->OnIncoming(request);
  std::unique_lock<std::mutex> lock(mu_);
  auto until = std::chrono::steady_clock::now() + request.deadline;
  Pending& pending = pending_[request.request_id];
  answered_.wait_until(lock, until, [&] { return pending.answer.has_value(); });
  StatusOr<ChannelEndpoints> answer =
      pending.answer ? std::move(*pending.answer)
                     : StatusOr<ChannelEndpoints>(Status::DeadlineExceeded(
                           "the listener of service " + request.service + " did not answer in " +
                           std::to_string(request.deadline.count()) + " ms"));
  pending_.erase(request.request_id);
  return answer;
}

Status ServiceRegistry::Answer(const Caller& caller, uint64_t request_id,
                               StatusOr<ChannelEndpoints> answer) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_.find(request_id);
  if (it == pending_.end() || it->second.answer || !caller.Is(it->second.owner.uid)) {
    return Status::NotFound("no pending channel request " + std::to_string(request_id));
  }
  size_t expected = it->second.channel_ids.size();
  if (answer.ok() && answer.value().size() != expected) {
    return Status::InvalidArgument(
        fmt::format("endpoints: request {} is for {} channel{}, the answer has {} endpoint{}",
                    request_id, expected, expected == 1 ? "" : "s", answer.value().size(),
                    answer.value().size() == 1 ? "" : "s"));
  }
  it->second.answer = std::move(answer);
  answered_.notify_all();
  return Status::Ok();
}

Status ServiceRegistry::Accept(const Caller& caller, uint64_t request_id,
                               ChannelEndpoints endpoints) {
  for (size_t i = 0; i < endpoints.size(); ++i) {
    Status valid = ValidateChannelEndpoint(endpoints[i]);
    if (!valid.ok() && i == 0) return valid;
    if (!valid.ok()) {
      return Status::InvalidArgument("more_endpoints[" + std::to_string(i - 1) +
                                     "]: " + valid.message());
    }
  }
  return Answer(caller, request_id, std::move(endpoints));
}

Status ServiceRegistry::Reject(const Caller& caller, uint64_t request_id,
                               const std::string& reason) {
  if (reason.size() > internal::kMaxReasonLength) {
    return Status::InvalidArgument("Reject: a reason of " + std::to_string(reason.size()) +
                                   " bytes (at most " + std::to_string(internal::kMaxReasonLength) +
                                   ")");
  }
  return Answer(caller, request_id, Status::PermissionDenied("rejected: " + reason));
}

Status ServiceRegistry::Fail(const Caller& caller, uint64_t request_id, const Status& why) {
  return Answer(caller, request_id, why);
}

void ServiceRegistry::NotifyClosed(const std::string& service, uint64_t channel_id,
                                   const std::string& reason) {
  std::shared_ptr<ServiceSink> sink;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = services_.find(service);
    if (it == services_.end()) return;
    sink = it->second.sink;
  }
  sink->OnChannelClosed(channel_id, reason);
}

size_t ServiceRegistry::service_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return services_.size();
}

std::vector<std::string> ServiceRegistry::ServiceNames() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, entry] : services_) names.push_back(name);
  return names;
}

StatusOr<std::vector<uint64_t>> ServiceRegistry::ChannelsOf(const Caller& caller,
                                                            uint64_t request_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_.find(request_id);
  if (it == pending_.end() || !caller.Is(it->second.owner.uid))
    return Status::NotFound("no channel request " + std::to_string(request_id));
  return it->second.channel_ids;
}

void ServiceRegistry::Shutdown(const std::string& why) {
  std::vector<std::shared_ptr<ServiceSink>> sinks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = why;  // no new registrations: they belong to the next rdmad
    for (const auto& [service, entry] : services_) sinks.push_back(entry.sink);
  }
  for (auto& sink : sinks) sink->OnDaemonStopping(why);
}

}  // namespace rdmad

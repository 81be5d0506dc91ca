// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ServiceRegistry holds the services applications listen on (the local
// API's Listen streams) and hands them incoming channel requests. One
// listener per name: a second Register is ALREADY_EXISTS. The registration
// lives as long as the returned ServiceRegistration; destroying it removes
// the name and fails the requests still waiting with ABORTED.
//
// Offer() queues a request to the service's listener (through its sink,
// with a fresh request id) and blocks until the listener answers with
// Answer() (Accept: its endpoints, validated; Reject: PERMISSION_DENIED
// "rejected: REASON") or the deadline passes (DEADLINE_EXCEEDED). A name
// nobody listens on is NOT_FOUND "no service S on HOST". A request may be
// a batch of channels (IncomingChannelRequest.channels): one offer, one answer
// with an endpoint for each.
//
// A registration and its requests belong to the listener's uid (Owner):
// Accept, Reject and ChannelOf from another uid are NOT_FOUND, as for a
// request that does not exist (docs/security.md).
//
// Thread safety: every method may be called from any thread. Sink callbacks
// run on the thread calling Offer()/CloseChannel(), outside the registry's
// lock; they must not block.

#ifndef RDMAD_DAEMON_BROKER_SERVICE_REGISTRY_H_
#define RDMAD_DAEMON_BROKER_SERVICE_REGISTRY_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "daemon/clients/caller.h"
#include "daemon/clients/quota_refusals.h"
#include "daemon/peers/channel_endpoint.h"
#include "rdmad/status.h"

namespace rdmad {

// A channel request as the listener sees it.
struct IncomingChannelRequest {
  uint64_t request_id = 0;
  std::string peer;  // the initiator's host name
  std::string service;
  ChannelPlan plan;  // this side's plan
  std::chrono::milliseconds deadline{0};
  // One channel or a batch, each with the initiator's endpoint.
  std::vector<ChannelOpening> channels;
};

// Where a listener's events go (a gRPC server stream in the daemon).
class ServiceSink {
 public:
  virtual ~ServiceSink() = default;
  virtual void OnIncoming(const IncomingChannelRequest& request) = 0;
  virtual void OnChannelClosed(uint64_t channel_id, const std::string& reason) = 0;
  // The daemon is stopping: the listener registers again with the next one.
  virtual void OnDaemonStopping(const std::string& why) {}
};

class ServiceRegistry;

// One registered service; the destructor unregisters it.
class ServiceRegistration {
 public:
  ~ServiceRegistration();
  const std::string& service() const { return service_; }

 private:
  friend class ServiceRegistry;
  ServiceRegistration(ServiceRegistry* registry, std::string service, uint64_t token)
      : registry_(registry), service_(std::move(service)), token_(token) {}
  ServiceRegistry* registry_;
  std::string service_;
  uint64_t token_;
};

// Hears that a service was registered or went; not under the registry's
// lock.
class ServicesObserver {
 public:
  virtual ~ServicesObserver() = default;
  virtual void OnServicesChanged() = 0;
};

class ServiceRegistry {
 public:
  // refusals (may be null, outlives this): counts the listener quotas'
  // refusals.
  explicit ServiceRegistry(std::string host_name, QuotaRefusals* refusals = nullptr)
      : host_name_(std::move(host_name)), refusals_(refusals) {}

  // A listener of caller's. INVALID_ARGUMENT for a malformed name (1..64
  // of [A-Za-z0-9._-]), ALREADY_EXISTS when another listener has it,
  // RESOURCE_EXHAUSTED when caller's process or uid has as many listeners
  // as SetLimits allows (the daemon itself has no limit).
  StatusOr<std::unique_ptr<ServiceRegistration>> Register(const std::string& service,
                                                          std::shared_ptr<ServiceSink> sink,
                                                          const Caller& caller);
  // Listeners per process and per uid from now on (0: no bound).
  void SetLimits(size_t per_client, size_t per_uid);

  // Hands request (request_id is filled in) to the listener and waits for
  // its answer up to request.deadline: one endpoint per channel, first
  // first. offered (if given) learns the listener's owner first, before
  // the listener can answer: a step inside this one call, so a callback.
  StatusOr<ChannelEndpoints> Offer(IncomingChannelRequest request,
                                   const std::function<void(const Owner&)>& offered = nullptr);

  // The listener's answer: the endpoints, one per channel of the request
  // (Accept), or a reason (Reject). NOT_FOUND for an unknown or expired
  // request id, or another uid's; INVALID_ARGUMENT for a malformed
  // endpoint or the wrong number of them (the request stays open for a
  // corrected answer).
  Status Accept(const Caller& caller, uint64_t request_id, ChannelEndpoints endpoints);
  Status Reject(const Caller& caller, uint64_t request_id, const std::string& reason);
  // The daemon answers for the listener with why (a limit of its own).
  Status Fail(const Caller& caller, uint64_t request_id, const Status& why);
  // The channels a pending request is for, first first; NOT_FOUND as for
  // Accept.
  StatusOr<std::vector<uint64_t>> ChannelsOf(const Caller& caller, uint64_t request_id) const;

  // Tells the listener of service that a channel was closed.
  void NotifyClosed(const std::string& service, uint64_t channel_id, const std::string& reason);

  size_t service_count() const;
  // The registered service names, sorted.
  std::vector<std::string> ServiceNames() const;
  // Hears every service registered or gone (the cluster's member record);
  // not owned, outlives the registry. Set once, before services come.
  void SetObserver(ServicesObserver* observer) { observer_ = observer; }
  // The daemon is stopping: every listener hears it (OnDaemonStopping), and
  // Register answers UNAVAILABLE from now on.
  void Shutdown(const std::string& why);

  // Checks a service name (also used by the initiator's side).
  static Status ValidateServiceName(const std::string& service);

 private:
  friend class ServiceRegistration;
  // Register's work, under the lock.
  StatusOr<std::unique_ptr<ServiceRegistration>> Add(const std::string& service,
                                                     std::shared_ptr<ServiceSink> sink,
                                                     const Caller& caller);
  struct Pending {
    std::string service;
    std::vector<uint64_t> channel_ids;
    Owner owner;  // the listener's
    std::optional<StatusOr<ChannelEndpoints>> answer;
  };
  struct Entry {
    uint64_t token = 0;
    std::shared_ptr<ServiceSink> sink;
    Owner owner;
  };
  void Unregister(const std::string& service, uint64_t token);
  Status Answer(const Caller& caller, uint64_t request_id, StatusOr<ChannelEndpoints> answer);

  const std::string host_name_;
  QuotaRefusals* const refusals_;
  ServicesObserver* observer_ = nullptr;  // set before use
  mutable std::mutex mu_;
  std::condition_variable answered_;
  std::map<std::string, Entry> services_;  // guarded by mu_
  std::map<uint64_t, Pending> pending_;    // guarded by mu_
  std::optional<std::string> stopping_;    // Shutdown's why; guarded by mu_
  uint64_t next_token_ = 1;                // guarded by mu_
  uint64_t next_request_ = 1;              // guarded by mu_
  size_t max_per_client_ = 0;              // guarded by mu_
  size_t max_per_uid_ = 0;                 // guarded by mu_
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_SERVICE_REGISTRY_H_

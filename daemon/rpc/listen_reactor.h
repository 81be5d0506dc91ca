// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ListenReactor serves one Listen stream: it registers the service with the
// broker's ServiceRegistry, writes `registered`, then the registry's
// IncomingChannel and ChannelClosed events in order (one write at a time,
// the rest queued). The registration is removed when the stream ends (the
// application went away, or the daemon stops).
//
// Every event matters (a request to answer, a channel that ended), so none
// is dropped: a listener that lets kMaxQueued events pile up is not
// reading, and its stream ends with RESOURCE_EXHAUSTED "the client is not
// reading" - its registration goes (requests waiting on it fail ABORTED)
// and the queue with it. The stream holds one of its client's open streams
// (limits.max_streams_per_client) until it is done.
//
// Thread safety: the registry calls the sink from any thread; gRPC calls
// the reactor's callbacks. A shared ListenSink stands between them so that
// an event arriving after the reactor is gone is dropped.

#ifndef RDMAD_DAEMON_RPC_LISTEN_REACTOR_H_
#define RDMAD_DAEMON_RPC_LISTEN_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>

#include "daemon/broker/service_registry.h"
#include "daemon/clients/client_limiter.h"
#include "daemon/events/bounded_stream.h"
#include "rdmad/v1/rdmad.pb.h"

namespace rdmad {

class ListenReactor;

class ListenSink final : public ServiceSink {
 public:
  explicit ListenSink(ListenReactor* reactor) : reactor_(reactor) {}
  void OnIncoming(const IncomingChannelRequest& request) override;
  void OnChannelClosed(uint64_t channel_id, const std::string& reason) override;
  // Ends the stream with UNAVAILABLE: the client library registers again.
  void OnDaemonStopping(const std::string& why) override;
  void Detach();

 private:
  std::mutex mu_;
  ListenReactor* reactor_;  // guarded by mu_; null once the reactor is done
};

class ListenReactor final : public grpc::ServerWriteReactor<v1::ListenEvent>,
                            public BoundedStream<v1::ListenEvent>::Writer {
 public:
  // Events queued behind the one being written, at most.
  static constexpr size_t kMaxQueued = 1024;

  // Registers service; on error the stream finishes with it at once.
  // The registration belongs to caller (its requests too).
  ListenReactor(ServiceRegistry* registry, const std::string& service, const Caller& caller,
                ClientLimiter::Lease lease);

  void Enqueue(v1::ListenEvent event);
  // The daemon is stopping: ends the stream with UNAVAILABLE and why.
  void Stopping(const std::string& why);

  // grpc::ServerWriteReactor:
  void OnWriteDone(bool ok) override { stream_.OnWriteDone(ok); }
  void OnCancel() override;
  void OnDone() override;

  // BoundedStream writer:
  void Write(const v1::ListenEvent& event) override { StartWrite(&event); }
  void Finish(const Status& status) override;

 private:
  const std::string service_;
  ClientLimiter::Lease lease_;  // one of the client's open streams
  BoundedStream<v1::ListenEvent> stream_;
  std::shared_ptr<ListenSink> sink_;
  std::mutex mu_;
  std::unique_ptr<ServiceRegistration> registration_;  // guarded by mu_
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_LISTEN_REACTOR_H_

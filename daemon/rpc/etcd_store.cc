// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/etcd_store.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "daemon/rpc/grpc_status.h"
#include "daemon/rpc/pem_file.h"
#include "etcd/kv.grpc.pb.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using Channel = std::shared_ptr<grpc::Channel>;

constexpr int kDefaultPort = 2379;
constexpr int kMaxMessage = 64 << 20;  // a Range of many members
constexpr milliseconds kFirstReconnect{200};
constexpr milliseconds kMaxReconnect{1000};

bool Unreachable(const Status& status) {
  return status.code() == StatusCode::kUnavailable ||
         status.code() == StatusCode::kDeadlineExceeded;
}

// HOST[:PORT] (IPv6 in brackets, or bare without a port) as a gRPC target.
StatusOr<std::string> Target(const std::string& endpoint) {
  std::string host = endpoint;
  std::string port = std::to_string(kDefaultPort);
  if (!endpoint.empty() && endpoint.front() == '[') {
    size_t close = endpoint.find(']');
    if (close == std::string::npos) return Status::InvalidArgument("etcd endpoint " + endpoint);
    host = endpoint.substr(0, close + 1);
    if (close + 1 < endpoint.size()) {
      if (endpoint[close + 1] != ':') return Status::InvalidArgument("etcd endpoint " + endpoint);
      port = endpoint.substr(close + 2);
    }
  } else if (std::count(endpoint.begin(), endpoint.end(), ':') > 1) {
    host = "[" + endpoint + "]";  // a bare IPv6 address
  } else if (size_t colon = endpoint.find(':'); colon != std::string::npos) {
    host = endpoint.substr(0, colon);
    port = endpoint.substr(colon + 1);
  }
  if (host.empty() || port.empty() || port.find_first_not_of("0123456789") != std::string::npos) {
    return Status::InvalidArgument("etcd endpoint \"" + endpoint + "\": expected HOST[:PORT]");
  }
  return host + ":" + port;
}

// The events of one watch response.
std::vector<StoreEvent> EventsOf(const etcdserverpb::WatchResponse& response) {
  std::vector<StoreEvent> out;
  for (const auto& e : response.events()) {
    StoreEvent event;
    event.kind = e.type() == etcdserverpb::Event::DELETE ? StoreEvent::Kind::kDelete
                                                         : StoreEvent::Kind::kPut;
    event.key = e.kv().key();
    if (event.kind == StoreEvent::Kind::kPut) event.value = e.kv().value();
    event.revision = e.kv().mod_revision();
    out.push_back(std::move(event));
  }
  return out;
}

// A Watch stream and the thread that reads it.
class EtcdWatch final : public StoreWatch {
 public:
  explicit EtcdWatch(const std::shared_ptr<grpc::Channel>& channel)
      : stub_(etcdserverpb::Watch::NewStub(channel)) {}

  ~EtcdWatch() override {
    Cancel();
    if (reader_.joinable()) reader_.join();
  }

  // Asks for the watch and waits up to timeout for etcd to set it up.
  Status Start(const std::string& prefix, int64_t from_revision, milliseconds timeout) {
    stream_ = stub_->Watch(&context_);
    etcdserverpb::WatchRequest request;
    auto* create = request.mutable_create_request();
    create->set_key(prefix);
    create->set_range_end(PrefixRangeEnd(prefix));
    create->set_start_revision(from_revision);
    create->set_progress_notify(true);
    if (!stream_->Write(request)) {
      context_.TryCancel();
      return FromGrpcStatus(stream_->Finish(), "etcd Watch: ");
    }
    reader_ = std::thread([this] { ReadLoop(); });
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout, [this] { return created_ || done_; })) {
      lock.unlock();
      Cancel();
      return Status::Unavailable("etcd Watch: not set up within " +
                                 std::to_string(timeout.count()) + " ms");
    }
    return created_ && !done_ ? Status::Ok() : ended_;
  }

  StatusOr<std::vector<StoreEvent>> Next(milliseconds timeout) override {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout, [this] { return !queue_.empty() || done_; })) {
      return Status::DeadlineExceeded("no change");
    }
    if (!queue_.empty()) {
      std::vector<StoreEvent> events = std::move(queue_.front());
      queue_.pop_front();
      return events;
    }
    return ended_;
  }

  void Cancel() override {
    std::lock_guard lock(mu_);
    cancelled_ = true;
    context_.TryCancel();
  }

 private:
  void ReadLoop() {
    etcdserverpb::WatchResponse response;
    Status end;
    while (stream_->Read(&response)) {
      std::lock_guard lock(mu_);
      if (response.created()) created_ = true;
      if (response.canceled()) {
        end = response.compact_revision() > 0
                  ? Status::OutOfRange("etcd Watch: revisions below " +
                                       std::to_string(response.compact_revision()) +
                                       " were compacted")
                  : Status::Unavailable("etcd cancelled the watch: " + response.cancel_reason());
        break;
      }
      std::vector<StoreEvent> events = EventsOf(response);
      if (!events.empty()) queue_.push_back(std::move(events));
      cv_.notify_all();
    }
    if (!end.ok()) context_.TryCancel();  // a watch etcd cancelled: end the stream too
    grpc::Status finished = stream_->Finish();
    std::lock_guard lock(mu_);
    if (cancelled_) {
      ended_ = Status::Cancelled("the watch was cancelled");
    } else if (!end.ok()) {
      ended_ = end;
    } else {
      Status st = FromGrpcStatus(finished, "etcd Watch: ");
      ended_ = st.ok() || st.code() == StatusCode::kCancelled
                   ? Status::Unavailable("etcd ended the watch: " + st.message())
                   : st;
    }
    done_ = true;
    cv_.notify_all();
  }

  std::unique_ptr<etcdserverpb::Watch::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<etcdserverpb::WatchRequest, etcdserverpb::WatchResponse>>
      stream_;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<StoreEvent>> queue_;  // guarded by mu_
  bool created_ = false;                       // guarded by mu_
  bool cancelled_ = false;                     // guarded by mu_
  bool done_ = false;                          // guarded by mu_
  Status ended_;                               // guarded by mu_
};

class EtcdStore final : public MembershipStore {
 public:
  EtcdStore(std::vector<std::string> names, std::vector<std::shared_ptr<grpc::Channel>> channels,
            milliseconds timeout)
      : names_(std::move(names)), channels_(std::move(channels)), timeout_(timeout) {}

  StatusOr<int64_t> GrantLease(std::chrono::seconds ttl) override {
    etcdserverpb::LeaseGrantRequest request;
    request.set_ttl(ttl.count());
    etcdserverpb::LeaseGrantResponse response;
    RDMAD_RETURN_IF_ERROR(Run("LeaseGrant", [&](const Channel& c, grpc::ClientContext* ctx) {
      return etcdserverpb::Lease::NewStub(c)->LeaseGrant(ctx, request, &response);
    }));
    if (!response.error().empty())
      return Status::Unavailable("etcd LeaseGrant: " + response.error());
    return response.id();
  }

  StatusOr<std::chrono::seconds> KeepAlive(int64_t lease) override {
    etcdserverpb::LeaseKeepAliveResponse response;
    bool answered = false;
    RDMAD_RETURN_IF_ERROR(Run("LeaseKeepAlive", [&](const Channel& c, grpc::ClientContext* ctx) {
      auto stream = etcdserverpb::Lease::NewStub(c)->LeaseKeepAlive(ctx);
      etcdserverpb::LeaseKeepAliveRequest request;
      request.set_id(lease);
      answered = stream->Write(request) && stream->WritesDone() && stream->Read(&response);
      return stream->Finish();
    }));
    if (!answered) return Status::Unavailable("etcd LeaseKeepAlive: no answer");
    if (response.ttl() <= 0)
      return Status::NotFound("etcd lease " + std::to_string(lease) + " expired");
    return std::chrono::seconds(response.ttl());
  }

  Status RevokeLease(int64_t lease) override {
    etcdserverpb::LeaseRevokeRequest request;
    request.set_id(lease);
    etcdserverpb::LeaseRevokeResponse response;
    return Run("LeaseRevoke", [&](const Channel& c, grpc::ClientContext* ctx) {
      return etcdserverpb::Lease::NewStub(c)->LeaseRevoke(ctx, request, &response);
    });
  }

  StatusOr<int64_t> Put(const std::string& key, const std::string& value, int64_t lease) override {
    etcdserverpb::PutRequest request;
    request.set_key(key);
    request.set_value(value);
    request.set_lease(lease);
    etcdserverpb::PutResponse response;
    RDMAD_RETURN_IF_ERROR(Run("Put", [&](const Channel& c, grpc::ClientContext* ctx) {
      return etcdserverpb::KV::NewStub(c)->Put(ctx, request, &response);
    }));
    return response.header().revision();
  }

  Status Delete(const std::string& key) override {
    etcdserverpb::DeleteRangeRequest request;
    request.set_key(key);
    etcdserverpb::DeleteRangeResponse response;
    return Run("DeleteRange", [&](const Channel& c, grpc::ClientContext* ctx) {
      return etcdserverpb::KV::NewStub(c)->DeleteRange(ctx, request, &response);
    });
  }

  StatusOr<StoreSnapshot> List(const std::string& prefix) override {
    etcdserverpb::RangeRequest request;
    request.set_key(prefix);
    request.set_range_end(PrefixRangeEnd(prefix));
    etcdserverpb::RangeResponse response;
    RDMAD_RETURN_IF_ERROR(Run("Range", [&](const Channel& c, grpc::ClientContext* ctx) {
      return etcdserverpb::KV::NewStub(c)->Range(ctx, request, &response);
    }));
    StoreSnapshot snapshot;
    snapshot.revision = response.header().revision();
    for (const auto& kv : response.kvs()) {
      snapshot.entries.push_back({kv.key(), kv.value(), kv.mod_revision(), kv.lease()});
    }
    return snapshot;
  }

  StatusOr<std::unique_ptr<StoreWatch>> Watch(const std::string& prefix,
                                              int64_t from_revision) override {
    Status last;
    for (size_t i = 0; i < channels_.size(); ++i) {
      size_t at = (current_.load() + i) % channels_.size();
      auto watch = std::make_unique<EtcdWatch>(channels_[at]);
      last = watch->Start(prefix, from_revision, timeout_);
      if (last.ok()) {
        current_ = at;
        return std::unique_ptr<StoreWatch>(std::move(watch));
      }
      if (!Unreachable(last)) return last;
    }
    return Status(last.code(), "etcd (" + Names() + "): " + last.message());
  }

 private:
  // call(channel, context) on the current endpoint, then the others while
  // they are unreachable; each with the call deadline.
  template <typename Call>
  Status Run(const char* what, Call call) {
    Status last;
    for (size_t i = 0; i < channels_.size(); ++i) {
      size_t at = (current_.load() + i) % channels_.size();
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + timeout_);
      last = FromGrpcStatus(call(channels_[at], &context), std::string("etcd ") + what + ": ");
      if (!Unreachable(last)) {
        current_ = at;
        return last;
      }
    }
    return Status(last.code(), "etcd (" + Names() + "): " + last.message());
  }

  std::string Names() const {
    std::string out;
    for (const std::string& n : names_) out += (out.empty() ? "" : ", ") + n;
    return out;
  }

  const std::vector<std::string> names_;
  const std::vector<std::shared_ptr<grpc::Channel>> channels_;
  const milliseconds timeout_;
  std::atomic<size_t> current_{0};  // the endpoint that answered last
};

}  // namespace

StatusOr<std::unique_ptr<MembershipStore>> NewEtcdStore(const EtcdOptions& options) {
  if (options.endpoints.empty()) return Status::InvalidArgument("no etcd endpoint");
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!options.tls_ca.empty()) {
    grpc::SslCredentialsOptions ssl;
    auto ca = ReadPem(options.tls_ca, "cluster.tls_ca");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    if (!options.tls_cert.empty()) {
      auto cert = ReadPem(options.tls_cert, "cluster.tls_cert");
      if (!cert.ok()) return cert.status();
      auto key = ReadPem(options.tls_key, "cluster.tls_key");
      if (!key.ok()) return key.status();
      ssl.pem_cert_chain = *cert;
      ssl.pem_private_key = *key;
    }
    credentials = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessage);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);  // etcd refuses pings under 5 s apart
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 3000);
  // gRPC's own reconnection backoff (1 s growing to 120 s by default) would
  // fail our calls fast for many seconds after etcd is back, long enough
  // for the members' leases to expire: the channel redials etcd at most
  // kMaxReconnect apart, and the membership loops' backoff paces the calls.
  // (GRPC_ARG_MIN_RECONNECT_BACKOFF_MS stays: it is also the time a connect
  // attempt gets, 20 s, which a TLS handshake on a loaded host needs.)
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, int(kFirstReconnect.count()));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, int(kMaxReconnect.count()));
  std::vector<std::string> names;
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (const std::string& endpoint : options.endpoints) {
    auto target = Target(endpoint);
    if (!target.ok()) return target.status();
    names.push_back(*target);
    channels.push_back(grpc::CreateCustomChannel(*target, credentials, args));
  }
  return std::unique_ptr<MembershipStore>(
      std::make_unique<EtcdStore>(std::move(names), std::move(channels), options.call_timeout));
}

StatusOr<std::shared_ptr<MembershipStore>> MakeEtcdStore(const StoreOptions& options) {
  auto store = NewEtcdStore(options);
  if (!store.ok()) return store.status();
  return std::shared_ptr<MembershipStore>(std::move(store).value());
}

}  // namespace rdmad

// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/pool_follower.h"

#include <unistd.h>

#include <vector>

#include "client/src/client_log.h"

namespace rdmad::internal {
namespace {

Status FromGrpc(const grpc::Status& status, const char* what) {
  if (status.ok()) return Status::Ok();
  return Status(StatusCodeFromInt(status.error_code()),
                std::string(what) + ": " + status.error_message());
}

}  // namespace

PoolFollower::PoolFollower(std::shared_ptr<grpc::Channel> rpc, ChannelPool::Connector connect)
    : rpc_(std::move(rpc)), stub_(v1::Rdmad::NewStub(rpc_)) {
  pool_ = ChannelPool::Create(std::move(connect), [this](const PoolCount& c) { Report(c); });
  thread_ = std::thread([this] { Run(); });
}

PoolFollower::~PoolFollower() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (context_ != nullptr) context_->TryCancel();
    cv_.notify_all();
  }
  thread_.join();
  pool_->Stop();  // before this object goes: the reporter points here
}

void PoolFollower::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    Follow();
    lock.lock();
    client_id_ = 0;
    cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; });
  }
}

void PoolFollower::Follow() {
  grpc::ClientContext context;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    context_ = &context;
  }
  v1::WatchPoolRequest request;
  request.set_pid(int32_t(getpid()));
  auto reader = stub_->WatchPool(&context, request);
  v1::PoolEvent event;
  while (reader->Read(&event)) {
    std::vector<ChannelPool::Target> targets;
    for (const v1::PoolTarget& t : event.targets()) {
      targets.push_back({t.peer(), t.service(), int(std::min<uint32_t>(t.channels(), 1u << 20))});
    }
    pool_->SetTargets(targets, std::chrono::seconds(event.idle_timeout_s()));
    std::map<std::pair<std::string, std::string>, int> resend;
    bool first;
    {
      std::lock_guard lock(mu_);
      first = client_id_ == 0;
      if (first) resend = prewarm_;  // a new stream: say them again
      client_id_ = event.client_id();
      cv_.notify_all();
    }
    for (const auto& [key, n] : resend) {
      Status sent =
          SendPrewarm(event.client_id(), key.first, key.second, n, std::chrono::milliseconds(5000));
      if (!sent.ok())
        ClientLog().warn("pool: Prewarm {} {} again: {}", key.first, key.second, sent.message());
    }
    // A new stream (rdmad restarted): it hears this client's counts again.
    if (first) {
      for (const PoolCount& count : pool_->Counts()) Report(count);
    }
  }
  Status ended = FromGrpc(reader->Finish(), "WatchPool");
  std::lock_guard lock(mu_);
  context_ = nullptr;
  last_error_ = ended.ok() ? Status::Unavailable("WatchPool: the daemon ended the stream") : ended;
  if (!stopping_) ClientLog().info("pool: {}; following again in 1 s", last_error_.message());
}

Status PoolFollower::WaitFollowing(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  if (cv_.wait_for(lock, timeout, [this] { return client_id_ != 0; })) return Status::Ok();
  return Status::Unavailable("rdmad's pool did not answer within " +
                             std::to_string(timeout.count()) + " ms" +
                             (last_error_.ok() ? "" : ": " + last_error_.message()));
}

Status PoolFollower::Prewarm(const std::string& peer, const std::string& service, int channels,
                             std::chrono::milliseconds timeout) {
  RDMAD_RETURN_IF_ERROR(WaitFollowing(timeout));
  uint64_t id;
  {
    std::lock_guard lock(mu_);
    id = client_id_;
  }
  RDMAD_RETURN_IF_ERROR(SendPrewarm(id, peer, service, channels, timeout));
  std::lock_guard lock(mu_);
  prewarm_[{peer, service}] = channels;
  return Status::Ok();
}

Status PoolFollower::SendPrewarm(uint64_t client_id, const std::string& peer,
                                 const std::string& service, int channels,
                                 std::chrono::milliseconds timeout) {
  v1::PrewarmRequest request;
  request.set_client_id(client_id);
  request.set_peer(peer);
  request.set_service(service);
  request.set_channels(uint32_t(std::max(0, channels)));
  if (channels < 0) return Status::InvalidArgument("channels: must be >= 0");
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  v1::PrewarmResponse response;
  return FromGrpc(stub_->Prewarm(&context, request, &response), "Prewarm");
}

void PoolFollower::Report(const PoolCount& count) {
  v1::ReportPoolRequest request;
  {
    std::lock_guard lock(mu_);
    if (client_id_ == 0) return;
    request.set_client_id(client_id_);
  }
  request.set_peer(count.peer);
  request.set_service(count.service);
  request.set_warm(uint32_t(count.warm));
  request.set_in_use(uint32_t(count.in_use));
  request.set_last_error(count.last_error);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  v1::ReportPoolResponse response;
  grpc::Status st = stub_->ReportPool(&context, request, &response);
  if (!st.ok()) ClientLog().debug("pool: ReportPool: {}", st.error_message());
}

}  // namespace rdmad::internal

// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/handshake.h"

#include <string>

#include "client/src/client_log.h"
#include "client/src/rdma/completion_group.h"
#include "common/endpoint_convert.h"
#include "common/secure_random.h"

namespace rdmad::internal {

Status StatusFromGrpc(const grpc::Status& status) {
  return Status(StatusCodeFromInt(status.error_code()), status.error_message());
}

double MsSince(HandshakeClock::time_point start) {
  return std::chrono::duration<double, std::milli>(HandshakeClock::now() - start).count();
}

std::shared_ptr<CompletionGroup> BatchGroup(const v1::ChannelPlan& plan, size_t count) {
  if (count < 2 || !plan.has_path()) return nullptr;
  auto group = CompletionGroup::ForBatch(PlanFromChannelPlan(plan), count);
  if (!group.ok()) {
    ClientLog().info("a batch of {} channels: no shared CQ ({}); each makes its own", count,
                     group.status().ToString());
    return nullptr;
  }
  return std::move(group).value();
}

std::array<uint8_t, 32> RandomToken() {
  std::array<uint8_t, 32> token{};
  SecureRandomBytes(token.data(), token.size());
  return token;
}

void LogRdma(const char* what, uint64_t id, const RdmaEndpoint& local, const RdmaEndpoint& peer,
             bool first_of_batch) {
  const auto level = first_of_batch ? spdlog::level::info : spdlog::level::debug;
  if (!ClientLog().should_log(level)) return;
  ClientLog().log(level,
                  "channel {:#018x} {} over RDMA: local {} port {} GID index {} QPN {:#x} MTU {}; "
                  "peer {} GID index {} QPN {:#x} MTU {}; path MTU {}",
                  id, what, local.device, local.port, local.gid_index, local.qpn, local.active_mtu,
                  peer.device, peer.gid_index, peer.qpn, peer.active_mtu,
                  NegotiatedMtu(0, local.active_mtu, peer.active_mtu));
}

void BatchLogged(const char* what, const std::vector<std::unique_ptr<Channel>>& channels) {
  if (channels.size() < 2) return;
  size_t rdma = 0;
  for (const auto& c : channels) rdma += c->info().transport == ChannelTransport::kRdma;
  ClientLog().info("{} channels {} ({:#018x} ...): {} over RDMA, {} over TCP", channels.size(),
                   what, channels.front()->info().id, rdma, channels.size() - rdma);
}

StatusOr<std::unique_ptr<Channel>> Held(StatusOr<std::unique_ptr<Channel>> channel,
                                        std::unique_ptr<HoldStream> hold, const char* role) {
  if (channel.ok()) {
    auto abortable = AsAbortable(std::move(channel).value());
    if (abortable.ok()) {
      return std::unique_ptr<Channel>(
          new HeldChannel(std::move(abortable).value(), std::move(hold)));
    }
    channel = abortable.status();
  }
  hold->Release(std::string("the ") + role +
                " could not finish the handshake: " + channel.status().message());
  return channel.status();
}

StatusOr<std::vector<std::unique_ptr<Channel>>> HoldAndFinish(
    const DaemonRpc& rpc, const std::vector<uint64_t>& ids, const std::vector<std::string>& leases,
    const FinishOne& finish) {
  std::vector<std::unique_ptr<HoldStream>> holds;
  if (ids.size() == 1) {
    holds.push_back(
        HoldStream::Open(rpc.stub, ids[0], leases.empty() ? "" : leases[0], rpc.reattach_timeout));
  } else {  // one lifeline stream for the batch
    holds = HoldStream::OpenBatch(rpc.stub, ids, leases, rpc.reattach_timeout);
  }
  for (auto& hold : holds) hold->SetReporter(rpc.reporter);
  std::vector<std::unique_ptr<Channel>> channels;
  for (size_t i = 0; i < ids.size(); ++i) {
    StatusOr<std::unique_ptr<Channel>> channel = finish(i, std::move(holds[i]));
    if (!channel.ok()) {
      for (size_t j = i + 1; j < ids.size(); ++j) {
        holds[j]->Release("another channel of its batch failed: " + channel.status().message());
      }
      return channel.status();  // the channels made so far close
    }
    channels.push_back(std::move(channel).value());
  }
  return channels;
}

}  // namespace rdmad::internal

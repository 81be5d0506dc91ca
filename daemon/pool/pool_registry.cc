// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/pool/pool_registry.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "daemon/broker/service_registry.h"

namespace rdmad {
namespace {

Status ValidatePeerName(const std::string& peer) {
  if (peer.empty() || peer.size() > 255) {
    return Status::InvalidArgument("peer: must be 1..255 characters");
  }
  for (unsigned char c : peer) {
    if (c <= ' ' || c >= 0x7f) {
      return Status::InvalidArgument("peer: may not hold spaces or control characters");
    }
  }
  return Status::Ok();
}

}  // namespace

const char* PoolSourceName(PoolSource source) {
  return source == PoolSource::kApi ? "api" : "config";
}

void PoolRegistry::SetConfig(const std::vector<PoolTarget>& targets, int idle_timeout_s) {
  std::vector<std::pair<std::shared_ptr<PoolSink>, PoolTargets>> tell;
  {
    std::lock_guard lock(mu_);
    if (config_ == targets && idle_timeout_s_ == idle_timeout_s) return;
    config_ = targets;
    idle_timeout_s_ = idle_timeout_s;
    for (const auto& [id, client] : clients_)
      tell.emplace_back(client.sink, TargetsLocked(id, client));
  }
  for (const auto& [sink, t] : tell) sink->OnTargets(t);
}

uint64_t PoolRegistry::Subscribe(std::shared_ptr<PoolSink> sink, Owner owner) {
  PoolTargets first;
  uint64_t id = 0;
  {
    std::lock_guard lock(mu_);
    id = next_id_++;
    Client& client = clients_[id];
    client.sink = sink;
    client.owner = owner;
    first = TargetsLocked(id, client);
  }
  spdlog::info("pool: client {} (pid {}, uid {}) follows the pool: {} target(s)", id, owner.pid,
               owner.uid, first.targets.size());
  sink->OnTargets(first);
  return id;
}

void PoolRegistry::Unsubscribe(uint64_t client_id) {
  std::lock_guard lock(mu_);
  if (clients_.erase(client_id) > 0) spdlog::info("pool: client {} stopped following", client_id);
}

Status PoolRegistry::Prewarm(const Caller& caller, uint64_t client_id, const std::string& peer,
                             const std::string& service, int channels) {
  RDMAD_RETURN_IF_ERROR(ValidatePeerName(peer));
  RDMAD_RETURN_IF_ERROR(ServiceRegistry::ValidateServiceName(service));
  if (channels < 0 || channels > kMaxChannelsPerTarget) {
    return Status::InvalidArgument("channels: must be 0.." + std::to_string(kMaxChannelsPerTarget));
  }
  std::shared_ptr<PoolSink> sink;
  PoolTargets targets;
  {
    std::lock_guard lock(mu_);
    auto it = clients_.find(client_id);
    if (it == clients_.end() || !caller.Is(it->second.owner.uid)) {
      return Status::NotFound("pool client " + std::to_string(client_id) +
                              " is not following the pool (WatchPool)");
    }
    RDMAD_RETURN_IF_ERROR(
        CheckUidQuotaLocked(it->second.owner.uid, client_id, {peer, service}, channels));
    it->second.prewarm[{peer, service}] = channels;
    sink = it->second.sink;
    targets = TargetsLocked(client_id, it->second);
  }
  spdlog::info("pool: client {} prewarms {} channel(s) to {} service {}", client_id, channels, peer,
               service);
  sink->OnTargets(targets);
  return Status::Ok();
}

Status PoolRegistry::Report(const Caller& caller, uint64_t client_id, const std::string& peer,
                            const std::string& service, int warm, int in_use,
                            const std::string& last_error) {
  if (warm < 0 || in_use < 0) return Status::InvalidArgument("warm, in_use: must be >= 0");
  std::lock_guard lock(mu_);
  auto it = clients_.find(client_id);
  if (it == clients_.end() || !caller.Is(it->second.owner.uid)) {
    return Status::NotFound("pool client " + std::to_string(client_id) + " is not following");
  }
  // Bounded: one row per target the client could have, plus a margin.
  auto& reports = it->second.reports;
  if (reports.size() >= 4096 && reports.find({peer, service}) == reports.end()) {
    return Status::ResourceExhausted("pool client " + std::to_string(client_id) +
                                     " reports too many targets");
  }
  reports[{peer, service}] = Counts{warm, in_use, last_error.substr(0, 512)};
  return Status::Ok();
}

Status PoolRegistry::CheckUidQuotaLocked(uid_t uid, uint64_t client_id, const Key& key,
                                         int channels) const {
  size_t targets = 1;
  int total = channels;
  for (const auto& [id, client] : clients_) {
    if (client.owner.uid != uid) continue;
    for (const auto& [k, n] : client.prewarm) {
      if (id == client_id && k == key) continue;  // replaced
      ++targets;
      total += n;
    }
  }
  if (targets > kMaxTargetsPerUid || total > kMaxChannelsPerUid) {
    return Status::ResourceExhausted(fmt::format(
        "uid {} would prewarm {} channels to {} targets; its limit is {} channels to {} targets",
        uid, total, targets, kMaxChannelsPerUid, kMaxTargetsPerUid));
  }
  return Status::Ok();
}

PoolTargets PoolRegistry::TargetsLocked(uint64_t id, const Client& client) const {
  PoolTargets out;
  out.client_id = id;
  out.idle_timeout_s = idle_timeout_s_;
  std::map<Key, PoolTargetSpec> merged;
  for (const PoolTarget& t : config_) {
    merged[{t.peer, t.service}] = {t.peer, t.service, t.channels, PoolSource::kConfig};
  }
  for (const auto& [key, n] : client.prewarm) {
    merged[key] = {key.first, key.second, n, PoolSource::kApi};
  }
  for (auto& [key, spec] : merged) {
    if (spec.channels > 0) out.targets.push_back(std::move(spec));
  }
  return out;
}

std::vector<PoolRow> PoolRegistry::List() const {
  std::lock_guard lock(mu_);
  std::vector<PoolRow> rows;
  for (const auto& entry : clients_) {
    // Named references, not structured bindings: the lambda below captures
    // them (clang before 16 cannot capture a structured binding).
    const auto& id = entry.first;
    const auto& client = entry.second;
    PoolTargets targets = TargetsLocked(id, client);
    std::map<Key, PoolRow> by_key;
    // The row of (peer, service), its client's fields filled in.
    auto row_of = [&](const Key& key) -> PoolRow& {
      PoolRow& row = by_key[key];
      row.client_id = id;
      row.pid = client.owner.pid;
      row.uid = client.owner.uid;
      row.peer = key.first;
      row.service = key.second;
      return row;
    };
    for (const PoolTargetSpec& t : targets.targets) {
      PoolRow& row = row_of({t.peer, t.service});
      row.target = t.channels;
      row.source = t.source;
    }
    // Reported rows without a target: channels kept after a target went.
    for (const auto& [key, counts] : client.reports) {
      PoolRow& row = row_of(key);
      row.warm = counts.warm;
      row.in_use = counts.in_use;
      row.last_error = counts.last_error;
    }
    for (auto& [key, row] : by_key) rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<PoolRow> PoolRegistry::ListFor(const Caller& caller) const {
  std::vector<PoolRow> rows = List();
  std::erase_if(rows, [&](const PoolRow& row) { return !caller.Reaches(row.uid); });
  return rows;
}

size_t PoolRegistry::clients() const {
  std::lock_guard lock(mu_);
  return clients_.size();
}

}  // namespace rdmad

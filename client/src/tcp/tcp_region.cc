// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/tcp/tcp_region.h"

#include <cstring>
#include <mutex>
#include <string>

#include "common/secure_random.h"

namespace rdmad::internal {
namespace {

uint32_t RandomKey() {
  uint32_t key = 0;
  SecureRandomBytes(&key, sizeof(key));
  return key;
}

}  // namespace

RegionRegistry& RegionRegistry::Global() {
  static auto* registry = new RegionRegistry();  // outlives static destructors
  return *registry;
}

RegionDescriptor RegionRegistry::Add(uint8_t* data, size_t len, MemoryAccess access) {
  RegionDescriptor d;
  d.length = len;
  d.rkey = RandomKey();
  std::unique_lock lock(mu_);
  d.address = next_id_++;
  Entry e;
  e.data = data;
  e.len = len;
  e.key = d.rkey;
  e.writable = access == MemoryAccess::kReadWrite;
  e.remote = access != MemoryAccess::kLocal;
  regions_[d.address] = e;
  return d;
}

void RegionRegistry::Remove(uint64_t id) {
  std::unique_lock lock(mu_);
  regions_.erase(id);
  std::erase_if(regions_, [&](const auto& entry) { return entry.second.base == id; });
}

StatusOr<RegionDescriptor> RegionRegistry::Expose(uint64_t id, uint64_t channel, bool writable) {
  RegionDescriptor d;
  d.rkey = RandomKey();
  std::unique_lock lock(mu_);
  auto it = regions_.find(id);
  if (it == regions_.end() || it->second.base != 0) {
    return Status::NotFound("Expose: no registered region " + std::to_string(id));
  }
  Entry e = it->second;
  e.key = d.rkey;
  e.writable = writable;
  e.remote = true;
  e.channel = channel;
  e.base = id;
  d.address = next_id_++;
  d.length = e.len;
  regions_[d.address] = e;
  return d;
}

Status RegionRegistry::Revoke(const RegionDescriptor& exposed, uint64_t channel) {
  std::unique_lock lock(mu_);
  auto it = regions_.find(exposed.address);
  if (it == regions_.end() || it->second.channel != channel || it->second.key != exposed.rkey) {
    return Status::NotFound("Revoke: this channel has not exposed region " +
                            std::to_string(exposed.address));
  }
  regions_.erase(it);
  return Status::Ok();
}

void RegionRegistry::RemoveChannel(uint64_t channel) {
  std::unique_lock lock(mu_);
  std::erase_if(regions_, [&](const auto& entry) { return entry.second.channel == channel; });
}

StatusOr<uint8_t*> RegionRegistry::Locate(uint64_t channel, uint64_t id, uint32_t key,
                                          uint64_t offset, uint64_t len) const {
  auto it = regions_.find(id);
  if (it == regions_.end() || !it->second.remote ||
      (it->second.channel != 0 && it->second.channel != channel)) {
    return Status::NotFound("no registered region " + std::to_string(id));
  }
  const Entry& e = it->second;
  if (key != e.key) {
    return Status::PermissionDenied("wrong key for region " + std::to_string(id));
  }
  if (offset > e.len || len > e.len - offset) {
    return Status::OutOfRange("[" + std::to_string(offset) + ", +" + std::to_string(len) +
                              ") is outside region " + std::to_string(id) + " of " +
                              std::to_string(e.len) + " bytes");
  }
  return e.data + offset;
}

Status RegionRegistry::Check(uint64_t channel, uint64_t id, uint32_t key, uint64_t offset,
                             uint64_t len) const {
  std::shared_lock lock(mu_);
  return Locate(channel, id, key, offset, len).status();
}

Status RegionRegistry::CopyIn(uint64_t channel, uint64_t id, uint32_t key, uint64_t offset,
                              const void* src, size_t len) {
  std::shared_lock lock(mu_);
  StatusOr<uint8_t*> dst = Locate(channel, id, key, offset, len);
  if (!dst.ok()) return dst.status();
  if (!regions_.at(id).writable) {
    return Status::PermissionDenied("region " + std::to_string(id) + " is read-only");
  }
  if (len > 0) std::memcpy(*dst, src, len);
  return Status::Ok();
}

Status RegionRegistry::CopyOut(uint64_t channel, uint64_t id, uint32_t key, uint64_t offset,
                               void* dst, size_t len) const {
  std::shared_lock lock(mu_);
  StatusOr<uint8_t*> src = Locate(channel, id, key, offset, len);
  if (!src.ok()) return src.status();
  if (len > 0) std::memcpy(dst, *src, len);
  return Status::Ok();
}

TcpMemoryRegion::TcpMemoryRegion(uint8_t* data, size_t len, MemoryAccess access)
    : data_(data),
      len_(len),
      access_(access),
      descriptor_(RegionRegistry::Global().Add(data, len, access)) {}

TcpMemoryRegion::~TcpMemoryRegion() { RegionRegistry::Global().Remove(descriptor_.address); }

}  // namespace rdmad::internal

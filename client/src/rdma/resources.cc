// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/resources.h"

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "client/src/client_log.h"
#include "client/src/rdma/wire.h"

namespace rdmad::internal {
namespace {

constexpr size_t kStagingBytes = 64u << 10;  // per channel, split into slot-sized chunks

Status VerbsError(int err, const std::string& what) {
  std::string msg = what + ": " + std::strerror(err);
  if (err == ENOMEM) return Status::ResourceExhausted(msg);
  if (err == EINVAL) return Status::InvalidArgument(msg);
  return Status::Unavailable(msg);
}

ibv_mtu BytesToIbvMtu(uint32_t bytes) {
  switch (bytes) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 2048: return IBV_MTU_2048;
    case 4096: return IBV_MTU_4096;
    default: return IBV_MTU_1024;
  }
}

Status CheckPlan(const RdmaPlan& plan, const RdmaDevice& device) {
  const QpAttributes& qp = plan.qp;
  auto bad = [&](const std::string& what) {
    return Status::InvalidArgument("RDMA plan for " + plan.device + ": " + what);
  };
  if (qp.send_depth < 1 || qp.send_depth > device.max_qp_wr()) {
    return bad("send_depth " + std::to_string(qp.send_depth) + " is out of range 1.." +
               std::to_string(device.max_qp_wr()));
  }
  if (qp.recv_depth < kMinRingSlots ||
      qp.recv_depth > std::min<uint32_t>(device.max_qp_wr(), 32768)) {
    return bad("recv_depth " + std::to_string(qp.recv_depth) + " is out of range " +
               std::to_string(kMinRingSlots) + ".." +
               std::to_string(std::min<uint32_t>(device.max_qp_wr(), 32768)));
  }
  if (plan.slot_size < 64 || plan.slot_size > (64u << 20)) {
    return bad("slot_size " + std::to_string(plan.slot_size) + " is out of range 64..64 MiB");
  }
  if (plan.port < 1 || plan.port > 255 || plan.gid_index > 255) {
    return bad("port " + std::to_string(plan.port) + " / GID index " +
               std::to_string(plan.gid_index) + " out of range");
  }
  return Status::Ok();
}

}  // namespace

void FillOneSided(bool write, uint64_t local_addr, uint32_t n, uint32_t lkey, uint64_t remote_addr,
                  uint32_t rkey, uint64_t wr_id, ibv_sge* sge, ibv_send_wr* wr) {
  *sge = ibv_sge{};
  sge->addr = local_addr;
  sge->length = n;
  sge->lkey = lkey;
  *wr = ibv_send_wr{};
  wr->wr_id = wr_id;
  wr->opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
  wr->send_flags = IBV_SEND_SIGNALED;
  wr->sg_list = sge;
  wr->num_sge = 1;
  wr->wr.rdma.remote_addr = remote_addr;
  wr->wr.rdma.rkey = rkey;
}

uint32_t IbvMtuBytes(int ibv_mtu) {
  return (ibv_mtu >= IBV_MTU_256 && ibv_mtu <= IBV_MTU_4096) ? 128u << ibv_mtu : 0;
}

StatusOr<MappedBuffer> MappedBuffer::Allocate(size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return Status::FromErrno(errno, "mmap " + std::to_string(size) + " bytes");
  MappedBuffer b;
  b.data_ = static_cast<uint8_t*>(p);
  b.size_ = size;
  return b;
}

MappedBuffer& MappedBuffer::operator=(MappedBuffer&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  return *this;
}

MappedBuffer::~MappedBuffer() {
  if (data_ != nullptr) munmap(data_, size_);
}

StatusOr<std::unique_ptr<ChannelResources>> ChannelResources::Open(const RdmaPlan& plan) {
  auto device = RdmaDevice::Open(plan.device);
  if (!device.ok()) return device.status();
  std::unique_ptr<ChannelResources> r(new ChannelResources);
  r->plan = plan;
  r->device = std::move(device).value();
  r->send_depth = plan.qp.send_depth;
  r->recv_depth = plan.qp.recv_depth;
  r->slot_size = plan.slot_size;
  ibv_port_attr port{};
  if (int rc = r->device->QueryPort(uint8_t(plan.port), &port); rc != 0) {
    return VerbsError(rc, "ibv_query_port " + plan.device + " port " + std::to_string(plan.port));
  }
  if (port.state != IBV_PORT_ACTIVE) {
    return Status::Unavailable("RDMA device " + plan.device + " port " + std::to_string(plan.port) +
                               " is " + ibv_port_state_str(port.state));
  }
  r->roce = port.link_layer == IBV_LINK_LAYER_ETHERNET;
  r->active_mtu = IbvMtuBytes(port.active_mtu);
  r->lid = port.lid;
  r->max_msg_size = port.max_msg_sz;
  return r;
}

StatusOr<std::unique_ptr<ChannelResources>> ChannelResources::Create(
    const RdmaPlan& plan, std::shared_ptr<CompletionGroup> group) {
  auto opened = Open(plan);
  if (!opened.ok()) return opened.status();
  std::unique_ptr<ChannelResources> r = std::move(opened).value();
  RDMAD_RETURN_IF_ERROR(CheckPlan(plan, *r->device));
  r->relaxed_ordering = ChooseRelaxedOrdering(plan.relaxed_ordering, *r->device);
  RDMAD_RETURN_IF_ERROR(r->CreateQueues(/*blocking_events=*/true, std::move(group)));
  RDMAD_RETURN_IF_ERROR(r->CreateQp());
  if (r->group) r->group->Join(r->qp->qp_num);
  RDMAD_RETURN_IF_ERROR(r->ToInit());
  RDMAD_RETURN_IF_ERROR(r->RegisterBuffers());
  for (uint32_t i = 0; i < r->ring_size(); ++i) RDMAD_RETURN_IF_ERROR(r->PostRecv(i));
  return r;
}

StatusOr<std::unique_ptr<ChannelResources>> ChannelResources::CreateRail(const RdmaPlan& base,
                                                                         const RailPlan& rail) {
  RdmaPlan plan = base;
  plan.device = rail.device;
  plan.port = rail.port;
  plan.gid_index = rail.gid_index;
  plan.weight = rail.weight;
  plan.rails.clear();
  plan.qp.recv_depth = 1;  // one-sided only: nothing is received
  plan.qp.max_inline = 0;
  if (plan.port < 1 || plan.port > 255 || plan.gid_index > 255) {
    return Status::InvalidArgument("RDMA rail " + rail.device + ": port or GID index out of range");
  }
  auto opened = Open(plan);
  if (!opened.ok()) return opened.status();
  std::unique_ptr<ChannelResources> r = std::move(opened).value();
  r->send_depth = std::clamp<uint32_t>(plan.qp.send_depth, 1, r->device->max_qp_wr());
  r->relaxed_ordering = ChooseRelaxedOrdering(plan.relaxed_ordering, *r->device);
  RDMAD_RETURN_IF_ERROR(r->CreateQueues(/*blocking_events=*/false));
  RDMAD_RETURN_IF_ERROR(r->CreateQp());
  RDMAD_RETURN_IF_ERROR(r->ToInit());
  return r;
}

Status ChannelResources::CreateQueues(bool blocking, std::shared_ptr<CompletionGroup> shared) {
  const uint32_t entries = send_depth + recv_depth + 1;
  if (shared && shared->Reserve(entries)) {
    group = std::move(shared);
    group_entries = entries;
    cq = group->cq();
    comp_channel = group->comp_channel();
    blocking_events = false;
    return Status::Ok();
  }
  ibv_context* ctx = device->context();
  comp_channel = ibv_create_comp_channel(ctx);
  if (comp_channel == nullptr)
    return VerbsError(errno, "ibv_create_comp_channel on " + plan.device);
  blocking_events = blocking;
  if (!blocking) RDMAD_RETURN_IF_ERROR(NonBlockingEvents());
  int cqe = static_cast<int>(std::min<uint64_t>(entries, device->max_cqe()));
  cq = ibv_create_cq(ctx, cqe, nullptr, comp_channel, 0);
  if (cq == nullptr)
    return VerbsError(errno, "ibv_create_cq (" + std::to_string(cqe) + " entries)");
  return Status::Ok();
}

Status ChannelResources::NonBlockingEvents() {
  int flags = fcntl(comp_channel->fd, F_GETFL);
  if (flags < 0 || fcntl(comp_channel->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return Status::FromErrno(errno, "completion channel O_NONBLOCK");
  }
  blocking_events = false;
  return Status::Ok();
}

Status ChannelResources::CreateQp() {
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = send_depth;
  init.cap.max_recv_wr = recv_depth;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = plan.qp.max_inline;
  qp = ibv_create_qp(device->pd(), &init);
  if (qp == nullptr && plan.qp.max_inline > 0) {
    ClientLog().info("RDMA {}: QP with max_inline {} refused ({}); retrying without inline data",
                     plan.device, plan.qp.max_inline, std::strerror(errno));
    init.cap.max_inline_data = 0;
    qp = ibv_create_qp(device->pd(), &init);
  }
  if (qp == nullptr) {
    return VerbsError(errno, "ibv_create_qp RC on " + plan.device + " (send " +
                                 std::to_string(send_depth) + ", recv " +
                                 std::to_string(recv_depth) + ")");
  }
  max_inline = std::min<uint32_t>(init.cap.max_inline_data, plan.qp.max_inline);
  return Status::Ok();
}

void SlotTable::Append(uint8_t* base, uint32_t lkey, uint32_t count, uint32_t slot_size) {
  for (uint32_t i = 0; i < count; ++i) slots_.push_back({base + size_t(i) * slot_size, lkey});
}

StatusOr<ChannelResources::OwnBuffer*> ChannelResources::AddBuffer(uint32_t slots) {
  auto mem = MappedBuffer::Allocate(size_t(slots) * slot_size);
  if (!mem.ok()) return mem.status();
  auto mr = RdmaMemoryRegion::RegisterLocal(device, mem->data(), mem->size());
  if (!mr.ok()) return mr.status();
  buffers.push_back({std::move(mem).value(), std::move(mr).value()});
  return &buffers.back();
}

Status ChannelResources::RegisterBuffers() {
  staging_max = static_cast<uint32_t>(std::clamp<size_t>(kStagingBytes / slot_size, 2, send_depth));
  uint32_t ring = std::min(recv_depth, kInitialRingSlots);
  auto piece = device->channel_slab().Take(size_t(ring) * slot_size);
  if (!piece.ok()) return piece.status();
  first_piece = std::move(piece).value();
  ring_slots.Append(first_piece.data(), first_piece.lkey(), ring, slot_size);
  return Status::Ok();
}

StatusOr<uint32_t> ChannelResources::GrowStaging() {
  if (staging.size() > 0) return Grow(staging, staging_max);
  auto piece = device->channel_slab().Take(slot_size);
  if (!piece.ok()) return piece.status();
  first_chunk = std::move(piece).value();
  staging.Append(first_chunk.data(), first_chunk.lkey(), 1, slot_size);
  return 0;
}

StatusOr<uint32_t> ChannelResources::Grow(SlotTable& table, uint32_t to) {
  uint32_t from = table.size();
  if (from >= to) return Status::ResourceExhausted("already at its full size");
  auto buffer = AddBuffer(to - from);
  if (!buffer.ok()) return buffer.status();
  table.Append((*buffer)->mem.data(), (*buffer)->mr->lkey(), to - from, slot_size);
  return from;
}

size_t ChannelResources::registered_bytes() const {
  size_t total = first_piece.size() + first_chunk.size();
  for (const OwnBuffer& b : buffers) total += b.mem.size();
  return total;
}

Status ChannelResources::PostRecv(uint32_t index) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uintptr_t>(slot(index));
  sge.length = slot_size;
  sge.lkey = ring_slots.lkey(index);
  ibv_recv_wr wr{};
  wr.wr_id = MakeWrId(WrKind::kRecv, index);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(qp, &wr, &bad); rc != 0) return VerbsError(rc, "ibv_post_recv");
  return Status::Ok();
}

Status ChannelResources::ToInit() {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = uint8_t(plan.port);
  attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  if (int rc = ibv_modify_qp(qp, &attr, mask); rc != 0) return VerbsError(rc, "QP to INIT");
  return Status::Ok();
}

Status ChannelResources::ToRtr(const RdmaEndpoint& remote, uint32_t path_mtu) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = BytesToIbvMtu(path_mtu);
  attr.dest_qp_num = remote.qpn;
  attr.rq_psn = remote.psn;
  attr.max_dest_rd_atomic = uint8_t(device->max_dest_rd_atomic());
  attr.min_rnr_timer = uint8_t(plan.qp.min_rnr_timer);
  attr.ah_attr.port_num = uint8_t(plan.port);
  attr.ah_attr.sl = uint8_t(plan.qp.service_level);
  if (roce) {
    attr.ah_attr.is_global = 1;
    std::memcpy(attr.ah_attr.grh.dgid.raw, remote.gid.data(), 16);
    attr.ah_attr.grh.sgid_index = uint8_t(plan.gid_index);
    attr.ah_attr.grh.hop_limit = uint8_t(plan.qp.hop_limit);
    attr.ah_attr.grh.traffic_class = uint8_t(plan.qp.traffic_class);
  } else {
    attr.ah_attr.dlid = uint16_t(remote.lid);
  }
  int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  if (int rc = ibv_modify_qp(qp, &attr, mask); rc != 0) {
    char what[160];
    std::snprintf(what, sizeof(what), "QP 0x%x to RTR (peer QP 0x%x GID %s)", qp->qp_num,
                  remote.qpn, GidText(remote.gid.data()).c_str());
    return VerbsError(rc, what);
  }
  return Status::Ok();
}

Status ChannelResources::ToRts(uint32_t local_psn, uint32_t peer_responder_resources) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = uint8_t(plan.qp.timeout);
  attr.retry_cnt = uint8_t(plan.qp.retry_cnt);
  attr.rnr_retry = uint8_t(plan.qp.rnr_retry);
  attr.sq_psn = local_psn;
  attr.max_rd_atomic =
      uint8_t(NegotiatedReadDepth(device->max_rd_atomic(), peer_responder_resources));
  int mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
             IBV_QP_MAX_QP_RD_ATOMIC;
  if (int rc = ibv_modify_qp(qp, &attr, mask); rc != 0) return VerbsError(rc, "QP to RTS");
  return Status::Ok();
}

ChannelResources::~ChannelResources() {
  const uint32_t qpn = qp != nullptr ? qp->qp_num : 0;
  const bool shared = group != nullptr;
  if (qp != nullptr) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    ibv_modify_qp(qp, &attr, IBV_QP_STATE);
    if (int rc = ibv_destroy_qp(qp); rc != 0)
      ClientLog().warn("ibv_destroy_qp: {}", std::strerror(rc));
  }
  if (cq != nullptr && unacked_cq_events > 0) ibv_ack_cq_events(cq, unacked_cq_events);
  if (shared) {  // the CQ and completion channel are the group's
    group->Leave(qpn, group_entries);
    group.reset();
  } else if (cq != nullptr) {
    if (int rc = ibv_destroy_cq(cq); rc != 0)
      ClientLog().warn("ibv_destroy_cq: {}", std::strerror(rc));
  }
  if (comp_channel != nullptr && !shared) ibv_destroy_comp_channel(comp_channel);
  buffers.clear();
  first_piece.Release();  // after the QP: nothing lands in it any more
  first_chunk.Release();
}

}  // namespace rdmad::internal

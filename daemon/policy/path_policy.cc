// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/policy/path_policy.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <tuple>

#include "daemon/policy/device_filter.h"
#include "daemon/policy/gid_policy.h"

namespace rdmad {
namespace {

constexpr int kPortActive = 4;  // IBV_PORT_ACTIVE

enum class PortKind { kRoce, kInfiniBand, kIwarp };

// What one resolution reads, gathered once.
struct Context {
  const Config& config;
  std::string peer;  // as the request spells it
  GidPreferences prefs;
  std::optional<IpAddress> kernel_source;
};

// A usable port: its best GID (nullopt when only a pinned gid.index makes
// it usable) and the ranking of its GIDs.
struct Option {
  const DeviceInfo* device = nullptr;
  const PortInfo* port = nullptr;
  PortKind kind = PortKind::kRoce;
  std::optional<GidCandidate> best;
  bool owns_source = false;  // one of its GIDs holds the kernel's source
  PortGids gids;
  std::string filter_reason;
};

struct Survey {
  std::vector<Option> options;
  std::vector<std::string> rejected;  // "mlx5_0 port 2: DOWN, not ACTIVE"
};

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) text += sep;
    text += parts[i];
  }
  return text;
}

PortKind KindOf(const DeviceInfo& device, const PortInfo& port) {
  if (port.link_layer == LinkLayer::kInfiniBand || port.transport == Transport::kInfiniBand) {
    return PortKind::kInfiniBand;
  }
  if (port.transport == Transport::kIwarp || device.node_type == NodeType::kRnic) {
    return PortKind::kIwarp;
  }
  return PortKind::kRoce;
}

std::string PortLabel(const DeviceInfo& device, const PortInfo& port) {
  return device.name + " port " + std::to_string(port.port);
}

const GidEntry* FindGid(const PortInfo& port, int index) {
  for (const GidEntry& gid : port.gids) {
    if (gid.index == index) return &gid;
  }
  return nullptr;
}

// An InfiniBand port's GID: index 0 or the pinned one.
GidCandidate InfiniBandGid(const PortInfo& port, int pinned) {
  int index = pinned >= 0 ? pinned : 0;
  GidCandidate c;
  if (const GidEntry* gid = FindGid(port, index)) c.gid = *gid;
  c.gid.index = index;
  c.scope_text = "InfiniBand";
  return c;
}

// Adds port to the survey as an option or with the reason it is rejected.
void SurveyPort(const Context& ctx, const DeviceInfo& device, const PortInfo& port,
                Survey* survey) {
  std::string label = PortLabel(device, port);
  FilterDecision filter = DecideDevice(ctx.config.devices, device.name, port.port);
  if (!filter.selected) {
    survey->rejected.push_back(label + ": " + filter.reason);
    return;
  }
  if (port.state != kPortActive) {
    std::string state =
        port.state_name.empty() ? "state " + std::to_string(port.state) : port.state_name;
    survey->rejected.push_back(label + ": " + state + ", not ACTIVE");
    return;
  }
  Option o;
  o.device = &device;
  o.port = &port;
  o.kind = KindOf(device, port);
  o.filter_reason = filter.reason;
  int pinned = ctx.config.gid.index;
  if (o.kind == PortKind::kInfiniBand) {
    if (port.lid == 0) {
      survey->rejected.push_back(label + ": InfiniBand port without a LID (no subnet manager?)");
      return;
    }
    o.best = InfiniBandGid(port, pinned);
    survey->options.push_back(std::move(o));
    return;
  }
  o.gids = RankPortGids(port, o.kind == PortKind::kIwarp, ctx.prefs, ctx.kernel_source);
  for (const GidCandidate& c : o.gids.candidates) {
    o.owns_source = o.owns_source || c.kernel_source;
  }
  if (!o.gids.candidates.empty()) {
    o.best = o.gids.candidates.front();
  } else if (pinned < 0 || o.kind == PortKind::kIwarp || FindGid(port, pinned) == nullptr) {
    survey->rejected.push_back(label + ": no usable GID" +
                               (o.gids.rejected.empty()
                                    ? " (empty GID table)"
                                    : " [" + Join(o.gids.rejected, ", ") + "]"));
    return;
  }
  survey->options.push_back(std::move(o));
}

// Every device port in name, port order.
Survey SurveyPorts(const Context& ctx, const Inventory& inventory) {
  std::vector<const DeviceInfo*> devices;
  for (const DeviceInfo& d : inventory.devices) devices.push_back(&d);
  std::sort(devices.begin(), devices.end(), [](auto* a, auto* b) { return a->name < b->name; });
  Survey survey;
  for (const DeviceInfo* device : devices) {
    std::vector<const PortInfo*> ports;
    for (const PortInfo& p : device->ports) ports.push_back(&p);
    std::sort(ports.begin(), ports.end(), [](auto* a, auto* b) { return a->port < b->port; });
    if (ports.empty()) survey.rejected.push_back(device->name + ": no ports");
    for (const PortInfo* port : ports) {
      SurveyPort(ctx, *device, *port, &survey);
    }
  }
  return survey;
}

bool OptionBefore(const Option& a, const Option& b) {
  auto key = [](const Option& o) {
    const GidCandidate* c = o.best ? &*o.best : nullptr;
    return std::make_tuple(c == nullptr, !o.owns_source, c != nullptr && c->v1_fallback,
                           c ? c->scope_rank : 3, c ? c->gid.index : 0,
                           std::string_view(o.device->name), o.port->port);
  };
  return key(a) < key(b);
}

Status CheckPinned(const Option& o, int pinned) {
  if (pinned < 0 || o.kind == PortKind::kIwarp) return Status::Ok();
  if (FindGid(*o.port, pinned) != nullptr) return Status::Ok();
  std::vector<std::string> have;
  for (const GidEntry& gid : o.port->gids) have.push_back(DescribeGid(gid));
  return Status::FailedPrecondition("gid.index " + std::to_string(pinned) + " does not exist on " +
                                    PortLabel(*o.device, *o.port) + "; it has " +
                                    (have.empty() ? "no GIDs" : Join(have, ", ")));
}

// Why auto picks candidate c on port o.
std::string WhyAuto(const Context& ctx, const Option& o, const GidCandidate& c) {
  std::string why;
  std::string source = ctx.kernel_source ? FormatIpAddress(*ctx.kernel_source) : "";
  if (c.kernel_source) {
    why = "the kernel's source address for " + ctx.peer;
  } else if (o.owns_source) {
    why = c.scope_text +
          ", preferred over the RoCE v1 GID of the kernel's "
          "source address " +
          source;
  } else if (ctx.kernel_source) {
    why = c.scope_text + "; the kernel's source address for " + ctx.peer + " is " + source +
          ", on no usable GID of a selected port";
  } else {
    why = c.scope_text + "; the kernel gave no source address for " + ctx.peer;
  }
  if (c.v1_fallback) {
    why +=
        "; RoCE v1 fallback: no usable RoCE v2 GID (gid.roce_version "
        "prefer-v2)";
  }
  if (ctx.prefs.subnet) why += "; inside gid.subnet " + ctx.prefs.subnet_text;
  if (ctx.prefs.family_forced) {
    why += std::string("; gid.family ") + (ctx.prefs.want_v6 ? "ipv6" : "ipv4");
  }
  return why;
}

// The GID line for a RoCE port where gid.index pins `used`.
std::string PinnedReason(const Context& ctx, const Option& o, const GidEntry& used) {
  std::string label = DescribeGid(used);
  std::string why = label + ": pinned by gid.index " + std::to_string(used.index);
  if (o.best && o.best->gid.index != used.index) {
    why += "; auto would pick GID " + std::to_string(o.best->gid.index) + " (" +
           WhyAuto(ctx, o, *o.best) + ")";
  }
  for (const std::string& rejected : o.gids.rejected) {
    if (rejected.rfind(label + ": ", 0) == 0) {
      why += "; warning: auto rejects it: " + rejected.substr(label.size() + 2);
    }
  }
  return why;
}

// The source address a GID maps, formatted; "" when it has none.
std::string GidAddress(const GidEntry& gid) {
  std::optional<IpAddress> ip = GidIpAddress(gid);
  return ip ? FormatIpAddress(*ip) : "";
}

// Fills the GID fields of d and returns the GID reason line.
std::string ChooseGid(const Context& ctx, const Option& o, PathDecision* d) {
  const PortInfo& port = *o.port;
  int pinned = ctx.config.gid.index;
  if (o.kind == PortKind::kInfiniBand) {
    d->transport = Transport::kInfiniBand;
    d->gid_index = o.best->gid.index;
    d->gid = o.best->gid.gid;
    d->lid = port.lid;
    return DescribeGid(o.best->gid) + ": InfiniBand port, addressed by LID " +
           std::to_string(port.lid) +
           (pinned >= 0 ? "; GID index pinned by gid.index"
                        : "; GID index 0 is the port GID (for the GRH)");
  }
  if (o.kind == PortKind::kIwarp) {
    const GidCandidate& c = *o.best;
    d->transport = Transport::kIwarp;
    d->gid_type = c.gid.type;
    d->source_ip = FormatIpAddress(c.ip);
    d->netdev = c.gid.netdev.empty() ? port.netdev : c.gid.netdev;
    return "iWARP: no GID index (rdma_cm addresses the port by IP); source " + d->source_ip +
           (d->netdev.empty() ? "" : " on " + d->netdev) + ": " + WhyAuto(ctx, o, c) +
           (pinned >= 0 ? "; gid.index ignored" : "");
  }
  const GidEntry& used = pinned >= 0 ? *FindGid(port, pinned) : o.best->gid;
  d->transport = used.type == GidType::kRoceV2 ? Transport::kRoceV2 : Transport::kRoceV1;
  d->gid_index = used.index;
  d->gid = used.gid;
  d->gid_type = used.type;
  d->source_ip = GidAddress(used);
  d->netdev = used.netdev.empty() ? port.netdev : used.netdev;
  if (pinned >= 0) return PinnedReason(ctx, o, used);
  return DescribeGid(used) + ": " + WhyAuto(ctx, o, *o.best);
}

std::string PortReason(const Context& ctx, const Option& o, const PathDecision& d,
                       const Survey& survey) {
  std::string text = "port " + std::to_string(o.port->port) + " (ACTIVE, " +
                     std::string(TransportName(d.transport));
  if (!o.port->netdev.empty()) text += ", netdev " + o.port->netdev;
  text += "): ";
  if (o.owns_source) {
    text += "holds the kernel's source address " + FormatIpAddress(*ctx.kernel_source) + " for " +
            ctx.peer;
  } else if (survey.options.size() == 1) {
    text += "the only usable port";
  } else {
    text += "best-ranked GID of " + std::to_string(survey.options.size()) + " usable ports";
  }
  if (!survey.rejected.empty()) {
    text += "; not used: " + Join(survey.rejected, "; ");
  }
  return text;
}

// Builds the context: validates the request and the gid settings.
StatusOr<Context> MakeContext(const Config& config, const PathRequest& request,
                              const SourceAddressLookup* lookup) {
  std::optional<IpAddress> peer = ParseIpAddress(request.peer_ip);
  if (!peer || ClassifyAddress(*peer) == AddressScope::kUnspecified) {
    return Status::InvalidArgument("peer address \"" + request.peer_ip +
                                   "\" is not an IPv4 or IPv6 address");
  }
  if (request.peer_active_mtu != 0) {
    Status mtu = ValidateIbMtu(request.peer_active_mtu);
    if (!mtu.ok()) {
      return Status::InvalidArgument("peer active MTU: " + mtu.message());
    }
  }
  StatusOr<GidPreferences> prefs = MakeGidPreferences(config.gid, *peer);
  if (!prefs.ok()) return prefs.status();
  Context ctx{config, request.peer_ip, std::move(*prefs), std::nullopt};
  if (lookup != nullptr) {
    std::optional<std::string> source = lookup->SourceAddressFor(request.peer_ip);
    if (source) ctx.kernel_source = ParseIpAddress(*source);
  }
  return ctx;
}

}  // namespace

StatusOr<PathDecision> ResolvePath(const Inventory& inventory, const Config& config,
                                   const PathRequest& request, const SourceAddressLookup* lookup) {
  StatusOr<Context> ctx = MakeContext(config, request, lookup);
  if (!ctx.ok()) return ctx.status();
  StatusOr<QpPlan> qp = ResolveQpAttributes(config);
  if (!qp.ok()) return qp.status();
  if (inventory.devices.empty()) {
    return Status::FailedPrecondition("no RDMA devices; channels will use TCP");
  }
  Survey survey = SurveyPorts(*ctx, inventory);
  if (survey.options.empty()) {
    return Status::FailedPrecondition("no usable RDMA port for " + request.peer_ip + ": " +
                                      Join(survey.rejected, "; "));
  }
  const Option& o = *std::min_element(survey.options.begin(), survey.options.end(), OptionBefore);
  RDMAD_RETURN_IF_ERROR(CheckPinned(o, config.gid.index));

  PathDecision d;
  d.device = o.device->name;
  d.port = o.port->port;
  d.qp = *qp;
  std::string gid_reason = ChooseGid(*ctx, o, &d);
  d.mtu = ChooseMtu(*o.port, request.peer_active_mtu, config.mtu.cap);
  d.reasons = {"device " + d.device + ": " + o.filter_reason, PortReason(*ctx, o, d, survey),
               gid_reason, "MTU " + d.mtu.reason, DescribeQpAttributes(d.qp)};
  return d;
}

}  // namespace rdmad

// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/discovery/sysfs_reader.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>

namespace rdmad {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxAttrBytes = 64 * 1024;

// The text of a sysfs attribute without trailing whitespace; nullopt when it
// is missing or reading fails (EINVAL for empty GID attributes, EACCES, ...).
std::optional<std::string> ReadAttr(const fs::path& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  while (text.size() < kMaxAttrBytes) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

std::string ReadText(const fs::path& path) { return ReadAttr(path).value_or(""); }

// A whole unsigned number; base 16 accepts a "0x" prefix.
std::optional<uint64_t> ParseUint(std::string_view s, int base) {
  if (base == 16 && (s.starts_with("0x") || s.starts_with("0X"))) s.remove_prefix(2);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

// "4: ACTIVE" -> {4, "ACTIVE"}; {0, ""} when it does not parse.
std::pair<int, std::string> ParseNumbered(std::string_view s) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos) return {0, ""};
  auto number = ParseInt(s.substr(0, colon));
  if (!number) return {0, ""};
  std::string_view name = s.substr(colon + 1);
  while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
  return {static_cast<int>(*number), std::string(name)};
}

NodeType ParseNodeType(int code) {
  switch (code) {
    case 1: return NodeType::kCa;
    case 2: return NodeType::kSwitch;
    case 3: return NodeType::kRouter;
    case 4: return NodeType::kRnic;
    default: return NodeType::kUnknown;
  }
}

LinkLayer ParseLinkLayer(std::string_view s) {
  if (s == "InfiniBand") return LinkLayer::kInfiniBand;
  if (s == "Ethernet") return LinkLayer::kEthernet;
  return LinkLayer::kUnknown;
}

// "0000:3b:00.0" (domain of 4+ hex digits).
bool IsPciAddress(std::string_view s) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon < 4) return false;
  auto hex = [](std::string_view part, size_t n) {
    return part.size() == n && std::all_of(part.begin(), part.end(), [](char c) {
             return std::isxdigit(static_cast<unsigned char>(c));
           });
  };
  std::string_view rest = s.substr(colon + 1);
  return hex(s.substr(0, colon), colon) && rest.size() == 7 && hex(rest.substr(0, 2), 2) &&
         rest[2] == ':' && hex(rest.substr(3, 2), 2) && rest[5] == '.' && rest[6] >= '0' &&
         rest[6] <= '7';
}

// The PCI function a `device` link leads to: the link's target when it is
// one, else its nearest PCI ancestor (an auxiliary or virtio device).
std::optional<fs::path> PciFunctionDir(const fs::path& link) {
  std::error_code ec;
  if (!fs::is_symlink(link, ec)) return std::nullopt;
  fs::path target = fs::canonical(link, ec);
  if (ec) return std::nullopt;
  for (fs::path p = target; p.has_relative_path(); p = p.parent_path()) {
    if (IsPciAddress(p.filename().string())) return p;
  }
  return std::nullopt;
}

// Fills the PCI fields from the device behind `link` (if it is PCI).
void ReadPciFunction(const fs::path& link, DeviceInfo* device) {
  std::optional<fs::path> pci = PciFunctionDir(link);
  if (!pci) return;
  device->pci_address = pci->filename().string();
  device->vendor_id = ParseUint(ReadText(*pci / "vendor"), 16).value_or(0);
  device->vendor_part_id = ParseUint(ReadText(*pci / "device"), 16).value_or(0);
  if (auto numa = ParseInt(ReadText(*pci / "numa_node")))
    device->numa_node = static_cast<int>(*numa);
  std::error_code ec;
  fs::path driver = fs::read_symlink(*pci / "driver", ec);
  if (!ec) device->driver = driver.filename().string();
}

GidType ParseGidType(const std::optional<std::string>& text, LinkLayer link_layer,
                     NodeType node_type) {
  // "IB/RoCE v1", or a kernel without gid_attrs: v1 on Ethernet.
  return GidTypeFor(text && *text == "RoCE v2", link_layer, node_type);
}

bool IsNullGid(const in6_addr& addr) {
  return std::all_of(std::begin(addr.s6_addr), std::end(addr.s6_addr),
                     [](uint8_t b) { return b == 0; });
}

std::vector<GidEntry> ReadGids(const fs::path& port_dir, LinkLayer link_layer, NodeType node_type) {
  std::vector<GidEntry> gids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(port_dir / "gids", ec)) {
    auto index = ParseUint(entry.path().filename().string(), 10);
    std::optional<std::string> text = ReadAttr(entry.path());
    in6_addr addr{};
    if (!index || !text || inet_pton(AF_INET6, text->c_str(), &addr) != 1 || IsNullGid(addr))
      continue;
    std::string name = entry.path().filename().string();
    GidEntry gid;
    gid.index = static_cast<int>(*index);
    gid.gid = *text;
    gid.type = ParseGidType(ReadAttr(port_dir / "gid_attrs/types" / name), link_layer, node_type);
    if (gid.type != GidType::kIb) {
      gid.netdev = ReadText(port_dir / "gid_attrs/ndevs" / name);
      gid.ip = GidIpText(gid.gid, gid.type);
    }
    gids.push_back(std::move(gid));
  }
  std::sort(gids.begin(), gids.end(),
            [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
  return gids;
}

// The netdev of port `port` among the PCI function's net/ entries: the only
// one, or the one whose dev_port is port - 1 (cxgb4, mlx4: one function, a
// netdev per port).
std::string NetdevOfPciFunction(const fs::path& dev_dir, int port) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dev_dir / "device/net", ec))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  if (names.size() == 1) return names[0];
  for (const std::string& name : names) {
    auto dev_port = ParseUint(ReadText(dev_dir / "device/net" / name / "dev_port"), 10);
    if (dev_port && *dev_port == static_cast<uint64_t>(port - 1)) return name;
  }
  return "";
}

Transport PortTransport(const PortInfo& port, NodeType node_type) {
  if (port.link_layer == LinkLayer::kInfiniBand) return Transport::kInfiniBand;
  if (node_type == NodeType::kRnic) return Transport::kIwarp;
  if (port.link_layer != LinkLayer::kEthernet) return Transport::kUnknown;
  bool v2 = std::any_of(port.gids.begin(), port.gids.end(),
                        [](const auto& g) { return g.type == GidType::kRoceV2; });
  return v2 ? Transport::kRoceV2 : Transport::kRoceV1;
}

// The Ethernet netdev of a port: that of its lowest GID that names one, else
// the rxe/siw parent, else the PCI function's netdev for this port.
std::string PortNetdev(const PortInfo& port, const DeviceInfo& device, const fs::path& dev_dir) {
  for (const GidEntry& gid : port.gids) {
    if (!gid.netdev.empty()) return gid.netdev;
  }
  if (!device.parent_netdev.empty()) return device.parent_netdev;
  return NetdevOfPciFunction(dev_dir, port.port);
}

PortInfo ReadPort(const fs::path& root, const fs::path& dev_dir, int number,
                  const DeviceInfo& device, const GidTableSource* source) {
  fs::path dir = dev_dir / "ports" / std::to_string(number);
  PortInfo port;
  port.port = number;
  std::tie(port.state, port.state_name) = ParseNumbered(ReadText(dir / "state"));
  std::tie(port.phys_state, port.phys_state_name) = ParseNumbered(ReadText(dir / "phys_state"));
  port.link_layer = ParseLinkLayer(ReadText(dir / "link_layer"));
  port.rate = ReadText(dir / "rate");
  port.rate_gbps = ParseSysfsRateGbps(port.rate);
  port.lid = ParseUint(ReadText(dir / "lid"), 16).value_or(0);
  port.sm_lid = ParseUint(ReadText(dir / "sm_lid"), 16).value_or(0);
  std::optional<std::vector<GidEntry>> table;
  if (source != nullptr) table = source->GidTable(device.name, port, device.node_type);
  port.gids = table ? std::move(*table) : ReadGids(dir, port.link_layer, device.node_type);
  port.transport = PortTransport(port, device.node_type);
  if (port.link_layer == LinkLayer::kEthernet) {
    port.netdev = PortNetdev(port, device, dev_dir);
    if (!port.netdev.empty()) {
      port.netdev_mtu = static_cast<int>(
          ParseInt(ReadText(root / "class/net" / port.netdev / "mtu")).value_or(0));
    }
  }
  return port;
}

std::vector<PortInfo> ReadPorts(const fs::path& root, const fs::path& dev_dir,
                                const DeviceInfo& device, const GidTableSource* source) {
  std::vector<int> numbers;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dev_dir / "ports", ec)) {
    auto number = ParseUint(entry.path().filename().string(), 10);
    if (number && *number > 0 && *number < 256) numbers.push_back(static_cast<int>(*number));
  }
  std::sort(numbers.begin(), numbers.end());
  std::vector<PortInfo> ports;
  for (int number : numbers) ports.push_back(ReadPort(root, dev_dir, number, device, source));
  return ports;
}

// rxe and siw: the netdev they sit on; PCI data comes from that netdev.
void ReadSoftwareDevice(const fs::path& root, const std::string& parent, DeviceInfo* device) {
  device->parent_netdev = parent;
  device->vendor = "software";
  if (device->driver.empty())
    device->driver = device->node_type == NodeType::kRnic ? "siw" : "rdma_rxe";
  if (device->pci_address.empty()) {
    DeviceInfo pci;
    ReadPciFunction(root / "class/net" / parent / "device", &pci);
    device->pci_address = pci.pci_address;
    device->numa_node = pci.numa_node;
  }
}

bool IsPlainName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

}  // namespace

StatusOr<DeviceInfo> ReadSysfsDevice(const std::string& sysfs_root, const std::string& name,
                                     const GidTableSource* gids) {
  if (!IsPlainName(name)) return Status::InvalidArgument("bad RDMA device name '" + name + "'");
  fs::path root(sysfs_root);
  fs::path dir = root / "class/infiniband" / name;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Status::NotFound("no RDMA device " + name + " in " + dir.string());
  DeviceInfo device;
  device.name = name;
  device.node_guid = ReadText(dir / "node_guid");
  device.fw_ver = ReadText(dir / "fw_ver");
  device.hw_rev = ReadText(dir / "hw_rev");
  device.node_type = ParseNodeType(ParseNumbered(ReadText(dir / "node_type")).first);
  ReadPciFunction(dir / "device", &device);
  if (device.vendor_id != 0) device.vendor = VendorName(device.vendor_id);
  if (auto parent = ReadAttr(dir / "parent"); parent && !parent->empty())
    ReadSoftwareDevice(root, *parent, &device);
  device.ports = ReadPorts(root, dir, device, gids);
  if (!fs::is_directory(dir, ec))
    return Status::NotFound("RDMA device " + name + " vanished while read");
  return device;
}

StatusOr<std::vector<DeviceInfo>> ReadSysfsDevices(const std::string& sysfs_root,
                                                   const GidTableSource* gids) {
  fs::path dir = fs::path(sysfs_root) / "class/infiniband";
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec == std::errc::no_such_file_or_directory) return std::vector<DeviceInfo>{};
  if (ec) return Status::FromErrno(ec.value(), "listing " + dir.string());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  if (ec) return Status::FromErrno(ec.value(), "listing " + dir.string());
  std::sort(names.begin(), names.end());
  std::vector<DeviceInfo> devices;
  for (const std::string& name : names) {
    StatusOr<DeviceInfo> device = ReadSysfsDevice(sysfs_root, name, gids);
    if (device.ok()) {
      devices.push_back(std::move(device).value());
    } else if (device.status().code() != StatusCode::kNotFound) {
      return device.status();
    }
  }
  return devices;
}

StatusOr<std::map<std::string, uint64_t>> ReadPortCounters(const std::string& sysfs_root,
                                                           const std::string& device, int port) {
  if (!IsPlainName(device) || port <= 0)
    return Status::InvalidArgument("bad RDMA port " + device + "/" + std::to_string(port));
  fs::path dir =
      fs::path(sysfs_root) / "class/infiniband" / device / "ports" / std::to_string(port);
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Status::NotFound("no RDMA port " + device + "/" + std::to_string(port));
  std::map<std::string, uint64_t> counters;
  for (const char* group : {"counters", "hw_counters"}) {
    for (const auto& entry : fs::directory_iterator(dir / group, ec)) {
      std::string name = entry.path().filename().string();
      if (name == "lifespan") continue;  // a setting, not a counter
      auto value = ParseUint(ReadText(entry.path()), 10);
      if (value) counters.emplace(std::move(name), *value);
    }
  }
  return counters;
}

int IbMtuForNetdevMtu(int netdev_mtu) {
  // GRH + UDP + BTH + XRC ETH + AtomicETH + ICRC, as iboe_get_mtu().
  constexpr int kRoceHeadroom = 40 + 8 + 12 + 4 + 28 + 4;
  int payload = netdev_mtu - kRoceHeadroom;
  for (int mtu = 4096; mtu >= 256; mtu /= 2) {
    if (payload >= mtu) return mtu;
  }
  return 0;
}

double ParseSysfsRateGbps(std::string_view rate) {
  size_t space = rate.find(' ');
  if (space == std::string_view::npos || !rate.substr(space).starts_with(" Gb/sec")) return 0;
  double gbps = 0;
  auto [end, ec] = std::from_chars(rate.data(), rate.data() + space, gbps);
  if (ec != std::errc() || end != rate.data() + space || gbps < 0) return 0;
  return gbps;
}

GidType GidTypeFor(bool roce_v2, LinkLayer link_layer, NodeType node_type) {
  if (link_layer == LinkLayer::kInfiniBand || node_type == NodeType::kRnic)
    return GidType::kIb;  // iWARP GIDs have no type: the kernel's default
  return roce_v2 ? GidType::kRoceV2 : GidType::kRoceV1;
}

std::string GidIpText(std::string_view gid, GidType type) {
  if (type == GidType::kIb) return "";
  in6_addr addr{};
  if (inet_pton(AF_INET6, std::string(gid).c_str(), &addr) != 1) return "";
  char text[INET6_ADDRSTRLEN] = {};
  if (IN6_IS_ADDR_V4MAPPED(&addr)) {
    if (!inet_ntop(AF_INET, &addr.s6_addr[12], text, sizeof(text))) return "";
  } else if (!inet_ntop(AF_INET6, &addr, text, sizeof(text))) {
    return "";
  }
  return text;
}

}  // namespace rdmad

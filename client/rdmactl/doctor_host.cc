// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/doctor_host.h"

#include <arpa/inet.h>
#include <grp.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

namespace rdmactl {
namespace {

namespace fs = std::filesystem;

bool Exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

std::string ReadLine(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

std::string RdmaProviderOf(const std::string& nic_driver) {
  static const std::pair<const char*, const char*> kProviders[] = {
      {"mlx5_core", "mlx5_ib"},   {"mlx4_core", "mlx4_ib"}, {"bnxt_en", "bnxt_re"},
      {"ice", "irdma"},           {"i40e", "irdma"},        {"qede", "qedr"},
      {"hns3", "hns_roce_hw_v2"}, {"ionic", "ionic_rdma"}};
  for (const auto& [driver, provider] : kProviders) {
    if (nic_driver == driver) return provider;
  }
  return "";
}

HostFacts ReadHostFacts(const std::string& socket_path, const std::string& config_file) {
  HostFacts h;
  for (const char* m : {"ib_uverbs", "rdma_ucm", "ib_core"}) {
    h.modules[m] = Exists(fs::path("/sys/module") / m);
  }
  std::error_code ec;
  std::set<std::string> missing;
  for (const auto& net : fs::directory_iterator("/sys/class/net", ec)) {
    fs::path driver = fs::read_symlink(net.path() / "device" / "driver", ec);
    if (ec) continue;
    std::string provider = RdmaProviderOf(driver.filename().string());
    if (!provider.empty() && !Exists(fs::path("/sys/module") / provider)) missing.insert(provider);
  }
  h.missing_providers.assign(missing.begin(), missing.end());

  h.dev_dir = Exists("/dev/infiniband");
  for (const auto& node : fs::directory_iterator("/dev/infiniband", ec)) {
    std::string error;
    if (access(node.path().c_str(), R_OK | W_OK) != 0) error = std::strerror(errno);
    h.dev_nodes[node.path().filename().string()] = error;
  }

  rlimit limit{};
  if (getrlimit(RLIMIT_MEMLOCK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    h.memlock = uint64_t(limit.rlim_cur);
  }

  h.socket_path = socket_path;
  // The socket's group, or its directory's when that is closed to the
  // caller (rdmad gives its directory the socket's group).
  struct stat st {};
  bool seen = stat(socket_path.c_str(), &st) == 0;
  if (!seen && errno == EACCES) {
    h.socket_hidden = true;
    seen = stat(fs::path(socket_path).parent_path().c_str(), &st) == 0;
  }
  if (seen) {
    if (group* g = getgrgid(st.st_gid)) h.socket_group = g->gr_name;
    std::vector<gid_t> groups(size_t(std::max(getgroups(0, nullptr), 0)) + 1);
    int n = getgroups(int(groups.size()), groups.data());
    groups.resize(size_t(std::max(n, 0)));
    groups.push_back(getegid());
    h.in_socket_group = geteuid() == 0 || geteuid() == st.st_uid ||
                        std::find(groups.begin(), groups.end(), st.st_gid) != groups.end();
  }
  if (!config_file.empty() && stat(config_file.c_str(), &st) == 0) {
    h.config_mtime_unix_ms = int64_t(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
  }

  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
      if (a->ifa_addr == nullptr || a->ifa_name == nullptr) continue;
      char text[INET6_ADDRSTRLEN] = {};
      if (a->ifa_addr->sa_family == AF_INET) {
        inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text,
                  sizeof(text));
      } else if (a->ifa_addr->sa_family == AF_INET6) {
        const in6_addr& ip6 = reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr;
        if (IN6_IS_ADDR_LINKLOCAL(&ip6)) continue;  // RoCE v2 GIDs come from routable ones
        inet_ntop(AF_INET6, &ip6, text, sizeof(text));
      } else {
        continue;
      }
      h.netdev_addresses[a->ifa_name].push_back(text);
    }
    freeifaddrs(list);
  }
  for (const auto& [netdev, addresses] : h.netdev_addresses) {
    fs::path enable = fs::path("/sys/class/net") / netdev / "ecn" / "roce_np" / "enable";
    if (!Exists(enable)) continue;
    bool on = false;
    for (const auto& prio : fs::directory_iterator(enable, ec)) on |= ReadLine(prio.path()) == "1";
    h.roce_ecn[netdev] = on;
  }
  return h;
}

}  // namespace rdmactl

// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// What a process holds, for the scale and leak tests: open fds, threads,
// RSS (from /proc; for this process after malloc_trim, with malloc's own
// figures) and its RDMA objects (`rdma resource show`: QPs, CQs,
// MRs, PDs). Usage::Of takes a snapshot; Usage::Same compares two the way
// the leak tests do (fds and RDMA objects exact, threads within a slack of
// 4, RSS within a fraction).
//
// Thread safety: free functions over /proc and a child process; call from
// any thread.

#ifndef RDMAD_TESTS_INTEGRATION_PROCESS_USAGE_H_
#define RDMAD_TESTS_INTEGRATION_PROCESS_USAGE_H_

#include <malloc.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace rdmad::testing {

inline int CountFds(pid_t pid) {
  std::error_code ec;
  auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
  return ec ? -1 : static_cast<int>(std::distance(it, std::filesystem::directory_iterator()));
}

// A number field of /proc/PID/status ("VmRSS:", "Threads:"); -1 if absent.
inline double StatusField(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field, 0) == 0) return std::atof(line.c_str() + field.size());
  }
  return -1;
}

inline double RssMib(pid_t pid) { return StatusField(pid, "VmRSS:") / 1024.0; }

// What command prints on stdout.
inline std::string Run(const std::string& command) {
  FILE* f = popen(command.c_str(), "r");
  if (f == nullptr) return "";
  std::string out;
  char buf[1024];
  while (std::fgets(buf, sizeof buf, f) != nullptr) out += buf;
  pclose(f);
  return out;
}

// Lines of `rdma resource show KIND` (qp, cq, mr, pd) for pid's objects; -1
// without the rdma tool. The kernel names the thread that created an object:
// every thread of pid counts.
inline int RdmaResources(const std::string& kind, pid_t pid) {
  std::set<std::string> tids{std::to_string(pid)};
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    tids.insert(task.path().filename().string());
  }
  std::string cmd = "rdma resource show " + kind + " 2>/dev/null";
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return -1;
  int n = 0;
  char line[1024];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    std::istringstream words(line);
    for (std::string word, prev; words >> word; prev = word) {
      if (prev == "pid" && tids.count(word) > 0) {
        ++n;
        break;
      }
    }
  }
  return pclose(f) == 0 ? n : -1;
}

// What pid's open fds point to ("3 -> socket:[1234]"), one per line.
inline std::string FdTargets(pid_t pid) {
  std::string out;
  std::error_code ec;
  for (const auto& fd :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code link_ec;
    auto target = std::filesystem::read_symlink(fd.path(), link_ec);
    out += fd.path().filename().string() + " -> " + (link_ec ? "?" : target.string()) + "\n";
  }
  return out;
}

// RSS in KiB by mapping kind ("[heap]", "[stack]", "anon", or the file):
// what grew, when RSS grows.
inline std::map<std::string, long> RssByMapping(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps");
  std::map<std::string, long> out;
  std::string current;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Rss:", 0) == 0) {
      out[current] += std::atol(line.c_str() + 4);
    } else {
      // A mapping's header: "7f00-7f80 rw-p 00000000 00:00 0   [PATH]".
      std::istringstream fields(line);
      std::string range, perms, offset, dev, inode, path;
      fields >> range >> perms >> offset >> dev >> inode >> path;
      size_t dash = range.find('-');
      bool header = dash != std::string::npos && dash > 0 && perms.size() == 4 &&
                    std::all_of(range.begin(), range.end(), [](char c) {
                      return c == '-' || std::isxdigit(static_cast<unsigned char>(c));
                    });
      if (header) current = path.empty() ? "anon" : path;
    }
  }
  return out;
}

// "anon +812 KiB, [heap] +64 KiB": the mappings whose RSS changed most.
inline std::string RssGrowth(const std::map<std::string, long>& before,
                             const std::map<std::string, long>& after) {
  std::vector<std::pair<long, std::string>> diffs;
  for (const auto& [name, kib] : after) {
    auto it = before.find(name);
    long d = kib - (it == before.end() ? 0 : it->second);
    if (d != 0) diffs.emplace_back(d, name);
  }
  std::sort(diffs.begin(), diffs.end(),
            [](const auto& a, const auto& b) { return std::labs(a.first) > std::labs(b.first); });
  std::string out;
  for (size_t i = 0; i < diffs.size() && i < 5; ++i) {
    out += (out.empty() ? "" : ", ") + diffs[i].second + " " + (diffs[i].first > 0 ? "+" : "") +
           std::to_string(diffs[i].first) + " KiB";
  }
  return out.empty() ? "no change" : out;
}

struct Usage {
  int fds = 0;
  int threads = 0;
  double rss_mib = 0;
  double heap_mib = -1;             // malloc's bytes in use: this process only
  double heap_free_mib = -1;        // free bytes malloc keeps: this process only
  std::map<std::string, int> rdma;  // qp, cq, mr, pd (with_rdma only)

  static Usage Of(pid_t pid, bool with_rdma) {
    // Free memory malloc keeps in its arenas (the RPC runtime's threads
    // come and go) is not in use: this process gives it back to the system
    // first, as rdmad does every 10 s, so that RSS counts what is held.
    if (pid == getpid()) malloc_trim(0);
    Usage u;
    u.fds = CountFds(pid);
    u.threads = static_cast<int>(StatusField(pid, "Threads:"));
    u.rss_mib = RssMib(pid);
    if (pid == getpid()) {
      struct mallinfo2 m = mallinfo2();
      u.heap_mib = double(m.uordblks + m.hblkhd) / (1024.0 * 1024.0);
      u.heap_free_mib = double(m.fordblks) / (1024.0 * 1024.0);
    }
    if (with_rdma) {
      for (const char* kind : {"qp", "cq", "mr", "pd"}) u.rdma[kind] = RdmaResources(kind, pid);
    }
    return u;
  }

  // now is back to this baseline: the same fds and RDMA objects, at most
  // kThreadSlack more threads (gRPC's and rdmad's worker pools grow on
  // demand and shrink when idle: a leak grows with the cycles), RSS at most
  // rss_fraction above.
  static constexpr int kThreadSlack = 4;
  bool Same(const Usage& now, double rss_fraction) const {
    return now.fds == fds && now.threads <= threads + kThreadSlack && now.rdma == rdma &&
           now.rss_mib <= rss_mib * (1 + rss_fraction);
  }

  // "fds=22 threads=9 rss_mib=24.1 qp=0 cq=0 mr=0 pd=0".
  std::string Describe() const {
    char buf[96];
    std::snprintf(buf, sizeof buf, "fds=%d threads=%d rss_mib=%.1f", fds, threads, rss_mib);
    std::string out = buf;
    if (heap_mib >= 0) {
      std::snprintf(buf, sizeof buf, " heap_mib=%.1f heap_free_mib=%.1f", heap_mib, heap_free_mib);
      out += buf;
    }
    for (const auto& [kind, n] : rdma) out += " " + kind + "=" + std::to_string(n);
    return out;
  }
};

}  // namespace rdmad::testing

#endif  // RDMAD_TESTS_INTEGRATION_PROCESS_USAGE_H_

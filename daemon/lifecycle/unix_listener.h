// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// UnixListener owns the local API socket: it creates the runtime directory
// (0750), binds the socket with the configured mode and group (set before the
// socket appears at its path, so no client ever finds it half set up), and accepts
// connections on its own thread. Each accepted connection's credentials
// (SO_PEERCRED) are logged and checked against the allowed uids and the
// uid's quota of open connections before the non-blocking fd is handed to
// the RPC server, so that no uid can take every descriptor and thread of
// the daemon before it is even identified. gRPC has no socket-mode option
// and exposes no peer credentials, hence this accept loop of our own.
//
// Thread safety: Start and Stop from one thread; the sink is called on the
// accept thread.

#ifndef RDMAD_DAEMON_LIFECYCLE_UNIX_LISTENER_H_
#define RDMAD_DAEMON_LIFECYCLE_UNIX_LISTENER_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/clients/quota_refusals.h"
#include "rdmad/status.h"

namespace rdmad {

// Takes the accepted connections (the local API server).
class ConnectionSink {
 public:
  virtual ~ConnectionSink() = default;
  // Takes ownership of fd (non-blocking, close-on-exec). The server reads
  // the peer's credentials itself (SO_PEERCRED).
  virtual void AddConnection(int fd) = 0;
};

struct UnixListenerOptions {
  std::string path;
  uint32_t mode = 0660;
  std::string group;                  // "" keeps the process's group
  std::vector<int64_t> allowed_uids;  // empty: all
  // The daemon owns the socket's directory (it created it, or systemd did as
  // RuntimeDirectory): give it the socket's group too, so group members can
  // reach the socket through the 0750 directory.
  bool owns_directory = false;
  // Open connections of one uid (root and the daemon's uid excepted); 0:
  // no limit (limits.max_connections_per_uid).
  int max_connections_per_uid = 0;
  // Counts the refusals of that limit (not owned; may be null).
  QuotaRefusals* refusals = nullptr;
};

// The local API's clients connected now: connections and the processes
// behind them.
struct LocalClientCount {
  size_t connections = 0;
  size_t processes = 0;
};

class UnixListener {
 public:
  static StatusOr<std::unique_ptr<UnixListener>> Bind(const UnixListenerOptions& options);
  ~UnixListener();

  // Starts the accept thread.
  void Start(ConnectionSink* sink);
  // Stops accepting, joins the thread and unlinks the socket file.
  void Stop();

  uint64_t accepted() const { return accepted_.load(); }
  // The connections gRPC has not closed yet, and their processes.
  LocalClientCount Clients();
  const std::string& path() const { return options_.path; }

 private:
  UnixListener(UnixListenerOptions options, int fd, int wake_fd);
  void AcceptLoop();
  void AcceptOne();
  bool Allowed(uid_t uid) const;
  // Whether uid's connections are counted against the limit, and whether it
  // may open one more (mu_ held).
  bool Limited(uid_t uid) const;
  bool UnderQuotaLocked(uid_t uid);
  // Forgets the connections gRPC has closed (mu_ held).
  void PruneLocked();

  UnixListenerOptions options_;
  int fd_;
  int wake_fd_;
  ConnectionSink* sink_ = nullptr;  // not owned; outlives Stop
  std::thread thread_;
  std::atomic<uint64_t> accepted_{0};
  bool stopped_ = false;
  // The connections handed over, by fd: the uid, the pid and the socket's
  // inode, which tells a live one from a number gRPC closed and the kernel
  // reused.
  struct Handed {
    uid_t uid;
    pid_t pid;
    ino_t inode;
  };
  std::mutex mu_;
  std::map<int, Handed> handed_;  // guarded by mu_
  uint64_t refused_ = 0;
};

// Creates the parent directory of path with mode 0750 if it is missing.
// Returns whether the daemon owns that directory: it created it now, or it is
// systemd's RuntimeDirectory ($RUNTIME_DIRECTORY).
StatusOr<bool> EnsureRuntimeDir(const std::string& path);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_LIFECYCLE_UNIX_LISTENER_H_

// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// UnixListener owns the local API socket: it creates the runtime directory
// (0750), binds the socket with the configured mode and group (set before the
// socket appears at its path, so no client ever finds it half set up), and accepts
// connections on its own thread. Each accepted connection's credentials
// (SO_PEERCRED) are logged and checked against the allowed uids before the
// non-blocking fd is handed to the RPC server. gRPC has no socket-mode option
// and exposes no peer credentials, hence this accept loop of our own.
//
// Thread safety: Start and Stop from one thread; the handler runs on the
// accept thread.

#ifndef RDMAD_DAEMON_LIFECYCLE_UNIX_LISTENER_H_
#define RDMAD_DAEMON_LIFECYCLE_UNIX_LISTENER_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rdmad/status.h"

namespace rdmad {

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
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
};

class UnixListener {
 public:
  // Takes ownership of fd (non-blocking, close-on-exec).
  using Handler = std::function<void(int fd, const PeerCredentials& peer)>;

  static StatusOr<std::unique_ptr<UnixListener>> Bind(const UnixListenerOptions& options);
  ~UnixListener();

  // Starts the accept thread.
  void Start(Handler handler);
  // Stops accepting, joins the thread and unlinks the socket file.
  void Stop();

  uint64_t accepted() const { return accepted_.load(); }
  const std::string& path() const { return options_.path; }

 private:
  UnixListener(UnixListenerOptions options, int fd, int wake_fd);
  void AcceptLoop();
  void AcceptOne();
  bool Allowed(uid_t uid) const;

  UnixListenerOptions options_;
  int fd_;
  int wake_fd_;
  Handler handler_;
  std::thread thread_;
  std::atomic<uint64_t> accepted_{0};
  bool stopped_ = false;
};

// Creates the parent directory of path with mode 0750 if it is missing.
// Returns whether the daemon owns that directory: it created it now, or it is
// systemd's RuntimeDirectory ($RUNTIME_DIRECTORY).
StatusOr<bool> EnsureRuntimeDir(const std::string& path);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_LIFECYCLE_UNIX_LISTENER_H_

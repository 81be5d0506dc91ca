// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Test helpers that run the real rdmad binary: a temp directory, a child
// process with its stderr captured, and a fake systemd NOTIFY_SOCKET.
//
// Thread safety: none of these types are thread-safe; one test thread each.

#ifndef RDMAD_TESTS_INTEGRATION_DAEMON_PROCESS_H_
#define RDMAD_TESTS_INTEGRATION_DAEMON_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rdmad::testing {

// A fresh directory, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  // Writes text to name and returns the full path.
  std::string Write(const std::string& name, const std::string& text) const;

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path);

// The tests' shared peer key (daemon.peer_key_file), the same on every host
// of a lab run, as 64 hex digits; WritePeerKey puts it in dir/peer.key
// (mode 0600, as rdmad requires) and returns that path.
inline constexpr char kTestPeerKey[] =
    "7e577e577e577e577e577e577e577e577e577e577e577e577e577e577e577e57";
std::string WritePeerKey(const TempDir& dir);

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreeLoopbackPort();

// A child process; killed (SIGKILL) on destruction if still running. If
// the test that started it has failed by then, its log (or the head and
// tail of a long one) is printed, so that every failure shows what the
// daemons and helpers said, whichever assertion failed.
class Process {
 public:
  // Runs binary with args and env added to the test's own environment;
  // stdout and stderr go to log_path. Unless env sets it,
  // RDMAD_DAEMON_PEER_PORT is a free port, so daemons started at the same
  // time (tests here, other builds' tests) never compete for 7581.
  Process(const std::string& binary, const std::vector<std::string>& args,
          const std::map<std::string, std::string>& env, const std::string& log_path);
  ~Process();

  pid_t pid() const { return pid_; }
  void Signal(int signo) const;
  // The exit code once the process exits within timeout (-signal if killed).
  std::optional<int> WaitExit(std::chrono::milliseconds timeout);
  bool running();
  std::string log() const { return ReadFile(log_path_); }
  // "rdmad (pid 123) exited with status 1" / "was killed by signal 9" /
  // "is running": for failure messages.
  std::string Describe();
  // Off for commands whose output the caller returns (RunCommand).
  void set_report_on_failure(bool report) { report_on_failure_ = report; }

 private:
  pid_t pid_ = -1;
  std::string binary_;
  bool report_on_failure_ = true;
  std::optional<int> exit_code_;
  std::string log_path_;
};

// Runs a command to completion; returns its exit code, output in *out.
int RunCommand(const std::string& binary, const std::vector<std::string>& args, std::string* out);

// A Unix datagram socket standing in for systemd's notify socket.
class FakeNotifySocket {
 public:
  explicit FakeNotifySocket(const std::string& path);
  ~FakeNotifySocket();
  const std::string& path() const { return path_; }
  // Waits for a datagram with a line that starts with prefix; all datagrams
  // received meanwhile are kept in received().
  bool WaitFor(const std::string& prefix, std::chrono::milliseconds timeout);
  const std::vector<std::string>& received() const { return received_; }

 private:
  std::string path_;
  int fd_;
  std::vector<std::string> received_;
  size_t scanned_ = 0;
};

// Waits until a file exists at path; false after timeout, or as soon as
// owner (the process that is to create it, if given) has exited.
bool WaitForPath(const std::string& path, std::chrono::milliseconds timeout,
                 Process* owner = nullptr);

// The config of an rdmad on loopback: its socket and peer port, more
// [daemon] keys (daemon_extra, "key = value" lines), and one [[peers]]
// entry for the peer named peer_name on peer_port.
std::string LoopbackPeerConfig(const std::string& socket, int port, const std::string& daemon_extra,
                               const std::string& peer_name, int peer_port);
// rdmad with config, its peer port pinned to port, logging to log.
std::unique_ptr<Process> StartPeeredDaemon(const std::string& config, int port,
                                           const std::string& log);

}  // namespace rdmad::testing

#endif  // RDMAD_TESTS_INTEGRATION_DAEMON_PROCESS_H_

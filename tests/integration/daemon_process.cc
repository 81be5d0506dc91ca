// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "tests/integration/daemon_process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "gtest/gtest.h"

extern char** environ;

namespace rdmad::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> MergedEnv(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  // The tests decide what the daemon sees of systemd.
  for (const char* name : {"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM"}) {
    env.erase(name);
  }
  for (const auto& [k, v] : extra) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Forks and execs binary with stdout and stderr on out_fd; the child gets
// SIGKILL when the forking thread ends (PR_SET_PDEATHSIG).
pid_t ForkExec(const std::string& binary, const std::vector<std::string>& args,
               const std::map<std::string, std::string>& env, int out_fd) {
  std::vector<std::string> argv_s{binary};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<std::string> env_s = MergedEnv(env);
  auto argv = Pointers(argv_s);
  auto envp = Pointers(env_s);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid != 0) return pid;  // the parent (or -1)
  // The child: async-signal-safe calls only until exec.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
  if (dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0) _exit(127);
  execve(binary.c_str(), argv.data(), envp.data());
  _exit(127);
}

// Runs every fork on one thread that lives as long as the test process, so
// that a child dies with the test process however it dies, and not before:
// PR_SET_PDEATHSIG fires when the thread that forked ends, and tests start
// processes from short-lived threads too.
class Spawner {
 public:
  static Spawner& Get() {
    static Spawner* spawner = new Spawner;  // never destroyed: its thread runs to exit
    return *spawner;
  }

  pid_t Spawn(std::function<pid_t()> fork_exec) {
    std::packaged_task<pid_t()> task(std::move(fork_exec));
    std::future<pid_t> pid = task.get_future();
    {
      std::lock_guard lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
    return pid.get();
  }

 private:
  Spawner() {
    std::thread([this] {
      for (;;) {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return !tasks_.empty(); });
        std::packaged_task<pid_t()> task = std::move(tasks_.front());
        tasks_.pop_front();
        lock.unlock();
        task();
      }
    }).detach();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<pid_t()>> tasks_;
};

// Starts binary; the child is killed (SIGKILL) when the test process dies,
// however it dies: no daemon outlives its test.
pid_t Spawn(const std::string& binary, const std::vector<std::string>& args,
            const std::map<std::string, std::string>& env, int out_fd) {
  return Spawner::Get().Spawn([&] { return ForkExec(binary, args, env, out_fd); });
}

int DecodeWaitStatus(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

}  // namespace

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "rdmad-test-XXXXXX").string();
  path_ = mkdtemp(pattern.data()) ? pattern : "";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

std::string TempDir::Write(const std::string& name, const std::string& text) const {
  std::string full = File(name);
  std::ofstream(full) << text;
  return full;
}

std::string WritePeerKey(const TempDir& dir) {
  std::string path = dir.Write("peer.key", std::string(kTestPeerKey) + "\n");
  chmod(path.c_str(), 0600);
  return path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string LoopbackPeerConfig(const std::string& socket, int port, const std::string& daemon_extra,
                               const std::string& peer_name, int peer_port) {
  return "[daemon]\nsocket = \"" + socket +
         "\"\nlog_level = \"debug\"\npeer_address = \"127.0.0.1\"\npeer_port = " +
         std::to_string(port) + "\n" + daemon_extra + "\n[[peers]]\nname = \"" + peer_name +
         "\"\naddress = \"127.0.0.1:" + std::to_string(peer_port) + "\"\n";
}

std::unique_ptr<Process> StartPeeredDaemon(const std::string& config, int port,
                                           const std::string& log) {
  return std::make_unique<Process>(
      RDMAD_BINARY, std::vector<std::string>{"--config", config},
      std::map<std::string, std::string>{{"RDMAD_DAEMON_PEER_PORT", std::to_string(port)}}, log);
}

namespace {

// True if nothing on this host is bound to port (TCP, any address).
bool PortFree(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);  // conflicts with any address's bind
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool free = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return free;
}

// The low end of the kernel's ephemeral range, where outgoing connections
// (the daemons' own dials among them) take their local ports.
int EphemeralLow() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int lo = 0, hi = 0;
  if (!(in >> lo >> hi) || lo <= 12000) return 32768;
  return lo;
}

}  // namespace

int FreeLoopbackPort() {
  // Below the ephemeral range, so that no outgoing connection (another
  // daemon dialling its peer before that peer is up) can hold the port
  // the daemon is about to bind; never the same port twice in a process,
  // and random across processes (tests run in parallel). A daemon that
  // still loses its port says so (EADDRINUSE) and the fixtures retry.
  static std::mutex mu;
  static std::set<int> handed_out;
  static std::mt19937 rng(std::random_device{}() ^ static_cast<unsigned>(getpid()));
  std::lock_guard lock(mu);
  const int lo = 10000, hi = EphemeralLow();
  std::uniform_int_distribution<int> pick(lo, hi - 1);
  for (int i = 0; i < 1000; ++i) {
    int port = pick(rng);
    if (handed_out.count(port) == 0 && PortFree(port)) {
      handed_out.insert(port);
      return port;
    }
  }
  return 0;
}

Process::Process(const std::string& binary, const std::vector<std::string>& args,
                 const std::map<std::string, std::string>& env, const std::string& log_path)
    : binary_(std::filesystem::path(binary).filename()), log_path_(log_path) {
  int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  std::map<std::string, std::string> full_env = env;
  if (!full_env.count("RDMAD_DAEMON_PEER_PORT")) {
    full_env["RDMAD_DAEMON_PEER_PORT"] = std::to_string(FreeLoopbackPort());
  }
  pid_ = Spawn(binary, args, full_env, fd);
  close(fd);
}

Process::~Process() {
  if (report_on_failure_ && ::testing::Test::HasFailure()) {
    std::string state = Describe();
    std::string text = log();
    constexpr size_t kHead = 16 << 10, kTail = 48 << 10;
    if (text.size() > kHead + kTail) {
      text = text.substr(0, kHead) + "\n[... " + std::to_string(text.size() - kHead - kTail) +
             " bytes ...]\n" + text.substr(text.size() - kTail);
    }
    std::printf("--- %s, log %s ---\n%s\n--- end of %s's log ---\n", state.c_str(),
                log_path_.c_str(), text.c_str(), binary_.c_str());
    std::fflush(stdout);
  }
  if (running()) {
    kill(pid_, SIGKILL);
    WaitExit(std::chrono::seconds(5));
  }
}

std::string Process::Describe() {
  std::string who = binary_ + " (pid " + std::to_string(pid_) + ")";
  if (running()) return who + " is running";
  if (!exit_code_) return who + " did not start";
  if (*exit_code_ < 0) return who + " was killed by signal " + std::to_string(-*exit_code_);
  return who + " exited with status " + std::to_string(*exit_code_);
}

void Process::Signal(int signo) const { kill(pid_, signo); }

bool Process::running() {
  if (pid_ <= 0 || exit_code_) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    exit_code_ = DecodeWaitStatus(status);
    return false;
  }
  return true;
}

std::optional<int> Process::WaitExit(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (running() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return exit_code_;
}

int RunCommand(const std::string& binary, const std::vector<std::string>& args, std::string* out) {
  TempDir dir;
  std::string log = dir.File("out");
  Process p(binary, args, {}, log);
  p.set_report_on_failure(false);  // the caller has the output
  auto code = p.WaitExit(std::chrono::seconds(30));
  *out = ReadFile(log);
  return code.value_or(-1000);
}

FakeNotifySocket::FakeNotifySocket(const std::string& path) : path_(path) {
  fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
}

FakeNotifySocket::~FakeNotifySocket() {
  close(fd_);
  unlink(path_.c_str());
}

bool FakeNotifySocket::WaitFor(const std::string& prefix, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    for (; scanned_ < received_.size(); ++scanned_) {
      std::istringstream lines(received_[scanned_]);
      for (std::string line; std::getline(lines, line);) {
        if (line.rfind(prefix, 0) == 0) {
          ++scanned_;
          return true;
        }
      }
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, int(left.count())) <= 0) continue;
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n > 0) received_.emplace_back(buf, size_t(n));
  }
}

bool WaitForPath(const std::string& path, std::chrono::milliseconds timeout, Process* owner) {
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (access(path.c_str(), F_OK) == 0) return true;
    if (owner != nullptr && !owner->running()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace rdmad::testing

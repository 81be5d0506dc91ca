// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The standalone driver of a fuzz target, for builds without libFuzzer
// (gcc, the normal build and CI): it runs LLVMFuzzerTestOneInput on every
// file of the given corpus directories (or files), then on random
// mutations of them (bit flips, interesting values, inserts, erases,
// splices) until --seconds or --runs is reached. No coverage feedback:
// this is a smoke run that keeps the seeds and their neighbourhood
// working; the libFuzzer build (tests/fuzz/run) is the real search.
//
//   fuzz_TARGET [--seconds S] [--runs N] [--seed N] [--max-len N]
//               [--timeout S] [--artifacts DIR] PATH...
//
// A crash (a signal, an abort from FUZZ_CHECK) or an input that runs
// longer than --timeout (default 20 s) writes the input to
// DIR/crash-<hash> or DIR/timeout-<hash> (DIR: --artifacts, default the
// current directory), prints it in hex (`xxd -r -p` makes the file again
// from a CI log) and exits non-zero; rerun it with `fuzz_TARGET FILE` (no
// --seconds: the files only, once each).

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using Steady = std::chrono::steady_clock;

// The input being run, for the crash handler and the watchdog.
std::string g_current;
std::atomic<int64_t> g_started_ms{-1};  // steady ms when the input started; -1 idle
std::string g_artifacts = ".";
char g_crash_path[4096];
char g_timeout_path[4096];

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Steady::now().time_since_epoch())
      .count();
}

uint64_t Hash(const std::string& data) {  // FNV-1a
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : data) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Names the artifact before the input runs, so that the signal handler
// only has to open and write.
void PrepareArtifactPaths() {
  uint64_t h = Hash(g_current);
  std::snprintf(g_crash_path, sizeof(g_crash_path), "%s/crash-%016llx", g_artifacts.c_str(),
                static_cast<unsigned long long>(h));
  std::snprintf(g_timeout_path, sizeof(g_timeout_path), "%s/timeout-%016llx", g_artifacts.c_str(),
                static_cast<unsigned long long>(h));
}

void WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n <= 0) return;
    data += n;
    size -= size_t(n);
  }
}

void SaveInput(const char* path, const char* what) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    WriteAll(fd, g_current.data(), g_current.size());
    close(fd);
  }
  const char* prefix = "\nfuzz: ";
  WriteAll(2, prefix, std::strlen(prefix));
  WriteAll(2, what, std::strlen(what));
  const char* mid = "; input saved to ";
  WriteAll(2, mid, std::strlen(mid));
  WriteAll(2, path, std::strlen(path));
  // And in hex, so that a CI log alone reproduces it (xxd -r -p).
  const char* hex_intro = "\nfuzz: the input in hex:\n";
  WriteAll(2, hex_intro, std::strlen(hex_intro));
  static const char kHex[] = "0123456789abcdef";
  char line[129];
  size_t n = 0;
  for (unsigned char c : g_current) {
    line[n++] = kHex[c >> 4];
    line[n++] = kHex[c & 15];
    if (n == 128) {
      line[n++] = '\n';
      WriteAll(2, line, n);
      n = 0;
    }
  }
  line[n++] = '\n';
  WriteAll(2, line, n);
}

void OnCrash(int signo) {
  if (g_started_ms.load() >= 0) SaveInput(g_crash_path, strsignal(signo));
  signal(signo, SIG_DFL);
  raise(signo);
}

void Watchdog(int64_t timeout_ms) {
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    int64_t started = g_started_ms.load();
    if (started >= 0 && NowMs() - started > timeout_ms) {
      SaveInput(g_timeout_path, "an input ran past --timeout (a hang?)");
      _exit(70);
    }
  }
}

void RunOne(const std::string& input) {
  g_current = input;
  PrepareArtifactPaths();
  g_started_ms.store(NowMs());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(g_current.data()), g_current.size());
  g_started_ms.store(-1);
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

void Load(const std::string& path, std::vector<std::string>* corpus) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "fuzz: %s: %s\n", path.c_str(), std::strerror(errno));
    std::exit(2);
  }
  if (!S_ISDIR(st.st_mode)) {
    std::string data;
    if (ReadFile(path, &data)) corpus->push_back(std::move(data));
    return;
  }
  std::vector<std::string> names;
  if (DIR* dir = opendir(path.c_str())) {
    while (dirent* e = readdir(dir)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    closedir(dir);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    std::string file = path + "/" + name;
    if (stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      std::string data;
      if (ReadFile(file, &data)) corpus->push_back(std::move(data));
    }
  }
}

class Mutator {
 public:
  Mutator(uint64_t seed, size_t max_len) : rng_(seed), max_len_(max_len) {}

  std::string Mutate(std::string s, const std::vector<std::string>& corpus) {
    int rounds = 1 + int(Below(4));
    for (int i = 0; i < rounds; ++i) MutateOnce(&s, corpus);
    if (s.size() > max_len_) s.resize(max_len_);
    return s;
  }

  size_t Below(size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_);
  }

 private:
  void MutateOnce(std::string* s, const std::vector<std::string>& corpus) {
    static constexpr uint8_t kBytes[] = {0, 1, 2, 0x7f, 0x80, 0xfe, 0xff, 0x10, 0x20, 0x40};
    static constexpr uint32_t kWords[] = {
        0, 1, 0xffffffffu, 0x1000000u, 0xffffffu, 0x7fffffffu, 0x80000000u, 255, 256, 65535, 65536};
    switch (Below(9)) {
      case 0:  // flip a bit
        if (!s->empty()) (*s)[Below(s->size())] ^= char(1u << Below(8));
        break;
      case 1:  // a random byte
        if (!s->empty()) (*s)[Below(s->size())] = char(Below(256));
        break;
      case 2:  // an interesting byte
        if (!s->empty()) (*s)[Below(s->size())] = char(kBytes[Below(std::size(kBytes))]);
        break;
      case 3: {  // insert random bytes
        std::string bytes(1 + Below(8), '\0');
        for (char& c : bytes) c = char(Below(256));
        s->insert(Below(s->size() + 1), bytes);
        break;
      }
      case 4:  // erase a range
        if (!s->empty()) {
          size_t at = Below(s->size());
          s->erase(at, 1 + Below(std::min<size_t>(8, s->size() - at)));
        }
        break;
      case 5:  // copy a range elsewhere
        if (!s->empty()) {
          size_t at = Below(s->size());
          std::string chunk = s->substr(at, 1 + Below(16));
          s->insert(Below(s->size() + 1), chunk);
        }
        break;
      case 6: {  // splice with another input
        const std::string& other = corpus[Below(corpus.size())];
        *s = s->substr(0, Below(s->size() + 1)) + other.substr(Below(other.size() + 1));
        break;
      }
      case 7:  // an interesting 32-bit word
        if (s->size() >= 4) {
          uint32_t w = kWords[Below(std::size(kWords))];
          std::memcpy(&(*s)[Below(s->size() - 3)], &w, 4);
        }
        break;
      case 8:  // truncate
        s->resize(Below(s->size() + 1));
        break;
    }
  }

  std::mt19937_64 rng_;
  size_t max_len_;
};

[[noreturn]] void Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--seconds S] [--runs N] [--seed N] [--max-len N] [--timeout S]\n"
               "          [--artifacts DIR] PATH...\n",
               argv0);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0;
  long long runs = -1;
  uint64_t seed = std::random_device{}();
  size_t max_len = 4096;
  int64_t timeout_s = 20;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(argv[0]);
      return argv[++i];
    };
    if (arg == "--seconds") {
      seconds = std::atof(value().c_str());
    } else if (arg == "--runs") {
      runs = std::atoll(value().c_str());
    } else if (arg == "--seed") {
      seed = std::strtoull(value().c_str(), nullptr, 10);
    } else if (arg == "--max-len") {
      max_len = std::strtoull(value().c_str(), nullptr, 10);
    } else if (arg == "--timeout") {
      timeout_s = std::atoll(value().c_str());
    } else if (arg == "--artifacts") {
      g_artifacts = value();
    } else if (arg.rfind("--", 0) == 0) {
      Usage(argv[0]);
    } else {
      paths.push_back(arg);
    }
  }
  if (paths.empty()) Usage(argv[0]);

  for (int signo : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(signo, OnCrash);
  std::thread(Watchdog, timeout_s * 1000).detach();

  std::vector<std::string> corpus;
  for (const std::string& p : paths) Load(p, &corpus);
  auto start = Steady::now();
  for (const std::string& input : corpus) RunOne(input);
  long long done = 0;
  if (!corpus.empty()) {
    Mutator mutator(seed, max_len);
    std::vector<std::string> recent;  // mutants mutated further
    auto budget = std::chrono::duration<double>(seconds);
    while ((runs < 0 || done < runs) && (runs >= 0 || Steady::now() - start < budget)) {
      const std::string& base = !recent.empty() && mutator.Below(3) == 0
                                    ? recent[mutator.Below(recent.size())]
                                    : corpus[mutator.Below(corpus.size())];
      std::string input = mutator.Mutate(base, corpus);
      RunOne(input);
      ++done;
      if (recent.size() < 256) {
        recent.push_back(std::move(input));
      } else {
        recent[mutator.Below(recent.size())] = std::move(input);
      }
    }
  }
  double took = std::chrono::duration<double>(Steady::now() - start).count();
  std::printf("fuzz: %zu corpus inputs and %lld mutations in %.1f s (--seed %llu), no failure\n",
              corpus.size(), done, took, static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  // The targets may leave servers running (grpc_api): skip static teardown.
  std::_Exit(0);
}

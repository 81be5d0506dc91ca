// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Membership at scale (docs/cluster.md): 1,000 simulated members are
// registered in a real etcd next to one real daemon. The daemon's view
// converges to all of them, follows a change to every record and their
// departure, dials none of them until used, and its memory stays bounded.
// The numbers are printed ("SCALE ..." lines); the bound asserted is
// generous, not a target.

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon/cluster/member_record.h"
#include "daemon/rpc/etcd_store.h"
#include "gtest/gtest.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/etcd_process.h"
#include "tests/integration/etcd_store_fixture.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::EtcdProcess;
using Clock = std::chrono::steady_clock;

constexpr int kMembers = 1000;
constexpr char kPrefix[] = "/rdmad/v1/";
// Per simulated member, at most: its record (about 250 bytes of JSON), its
// entries in the view and among the peers. A session per member (about
// 43 KB, with its gRPC channel) or a copy per change would not fit.
constexpr long kMaxBytesPerMember = 16 * 1024;

// Resident memory of pid, in bytes (0 if unknown).
long RssBytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6)) * 1024;
  }
  return 0;
}

MemberRecord Simulated(int i, int closed_port, const std::string& extra_service) {
  MemberRecord r;
  r.name = fmt::format("sim-{:04d}", i);
  r.peer_address = fmt::format("127.0.0.1:{}", closed_port);  // refuses at once
  r.version = "0.1.0";
  r.protocol = 1;
  r.ports = {{"mlx5_0", 1, "RoCE v2", "ACTIVE", 4096}, {"mlx5_1", 1, "RoCE v2", "ACTIVE", 4096}};
  r.services = {"kv", "rdmad.echo"};
  if (!extra_service.empty()) r.services.push_back(extra_service);
  std::sort(r.services.begin(), r.services.end());
  return r;
}

class ClusterScaleTest : public testing::EtcdStoreFixture {
 protected:
  void SetUp() override {
    EtcdStoreFixture::SetUp();
    if (HasFatalFailure()) return;
    socket_ = dir_.File("hub/rdmad.sock");
    std::string config =
        dir_.Write("hub.toml", "[daemon]\nsocket = \"" + socket_ +
                                   "\"\nsocket_group = \"\"\npeer_address = \"127.0.0.1\"\n"
                                   "node_name = \"hub\"\n\n[cluster]\nendpoints = [\"" +
                                   etcd_.endpoint() + "\"]\nprefix = \"" + kPrefix + "\"\n");
    daemon_ = testing::StartPeeredDaemon(config, testing::FreeLoopbackPort(), dir_.File("hub.log"));
    ASSERT_TRUE(testing::WaitForPath(socket_, seconds(10), daemon_.get()))
        << daemon_->Describe() << "\n"
        << daemon_->log();
  }

  // rdmactl --json COMMAND on the hub's socket, parsed (null on failure).
  nlohmann::json Ctl(const std::vector<std::string>& command) {
    std::vector<std::string> args = {"--socket", socket_, "--json"};
    args.insert(args.end(), command.begin(), command.end());
    std::string out;
    if (testing::RunCommand(RDMACTL_BINARY, args, &out) != 0) return nullptr;
    return nlohmann::json::parse(out, nullptr, false);
  }

  // Waits up to timeout until `rdmactl cluster [service]` lists n members;
  // returns how long that took, or nothing.
  std::optional<milliseconds> Converges(size_t n, seconds timeout,
                                        const std::string& service = "") {
    auto start = Clock::now();
    std::vector<std::string> command = {"services"};
    if (service.empty())
      command = {"cluster"};
    else
      command.push_back(service);
    while (Clock::now() - start < timeout) {
      nlohmann::json view = Ctl(command);
      if (view.is_object() && view["members"].size() == n) {
        return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
      }
      std::this_thread::sleep_for(milliseconds(100));
    }
    return std::nullopt;
  }

  // Puts every simulated member's record with lease; false on an error.
  bool PutAll(int64_t lease, int closed_port, const std::string& extra_service) {
    for (int i = 0; i < kMembers; ++i) {
      MemberRecord r = Simulated(i, closed_port, extra_service);
      auto put = store_->Put(MemberKey(kPrefix, r.name), EncodeMemberRecord(r), lease);
      if (!put.ok()) {
        ADD_FAILURE() << r.name << ": " << put.status().ToString();
        return false;
      }
    }
    return true;
  }

  std::string socket_;
  std::unique_ptr<testing::Process> daemon_;
};

TEST_F(ClusterScaleTest, AThousandMembersConvergeAndMemoryStaysBounded) {
  ASSERT_TRUE(Converges(1, seconds(15))) << daemon_->log();
  const long before = RssBytes(daemon_->pid());
  ASSERT_GT(before, 0);

  auto lease = store_->GrantLease(seconds(120));
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  const int closed_port = testing::FreeLoopbackPort();
  auto put_start = Clock::now();
  ASSERT_TRUE(PutAll(*lease, closed_port, ""));
  auto put_ms = std::chrono::duration_cast<milliseconds>(Clock::now() - put_start);
  auto joined = Converges(kMembers + 1, seconds(60));
  ASSERT_TRUE(joined) << "the view did not reach " << kMembers + 1 << " members\n"
                      << daemon_->log();
  ASSERT_TRUE(Converges(kMembers, seconds(5), "kv"));  // not the hub

  // Every record changes (a service appears on each): the view follows.
  ASSERT_TRUE(PutAll(*lease, closed_port, "prefill"));
  auto changed = Converges(kMembers, seconds(60), "prefill");
  ASSERT_TRUE(changed) << daemon_->log();
  // The members are all peers, and none was dialled: nothing used them.
  nlohmann::json peers = Ctl({"peers"});
  ASSERT_TRUE(peers.is_object()) << daemon_->log();
  size_t idle = 0;
  for (const auto& p : peers["peers"]) idle += p["state"] == "idle" && p["origin"] == "discovered";
  EXPECT_EQ(idle, size_t{kMembers});
  EXPECT_EQ(peers["peers"].size(), size_t{kMembers});
  const long full = RssBytes(daemon_->pid());

  // They all leave at once (their lease revoked): the view is the hub alone.
  ASSERT_TRUE(store_->RevokeLease(*lease).ok());
  auto left = Converges(1, seconds(60));
  ASSERT_TRUE(left) << daemon_->log();
  std::this_thread::sleep_for(seconds(1));
  const long after = RssBytes(daemon_->pid());
  nlohmann::json status = Ctl({"status"});
  ASSERT_TRUE(status.is_object()) << "the daemon no longer answers\n" << daemon_->log();

  std::printf(
      "SCALE members=%d put=%lld ms joined=%lld ms changed=%lld ms left=%lld ms "
      "rss_before=%ld KiB rss_full=%ld KiB (%ld B/member) rss_after=%ld KiB\n",
      kMembers, static_cast<long long>(put_ms.count()), static_cast<long long>(joined->count()),
      static_cast<long long>(changed->count()), static_cast<long long>(left->count()),
      before / 1024, full / 1024, (full - before) / kMembers, after / 1024);
  EXPECT_LT(full - before, kMembers * kMaxBytesPerMember);
}

}  // namespace
}  // namespace rdmad

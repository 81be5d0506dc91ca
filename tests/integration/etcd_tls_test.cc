// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// TLS to etcd (cluster.tls_ca, tls_cert, tls_key) against a real etcd that
// serves its clients over TLS only and requires a client certificate its
// CA signed: the daemon's store works with the right files and is refused
// (UNAVAILABLE, naming the endpoint) over plain TCP, without a client
// certificate, with one of another CA, and when it does not trust etcd's;
// a daemon with the [cluster] TLS keys registers itself.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "daemon/cluster/member_record.h"
#include "daemon/rpc/etcd_store.h"
#include "tests/integration/etcd_process.h"
#include "tests/integration/test_certs.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::EtcdProcess;
using ::testing::HasSubstr;

class EtcdTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(EtcdProcess::Binary().empty())
        << "the cluster tests need Debian's etcd-server (scripts/bootstrap installs it)";
    if (!testing::MakeTestCerts(dir_, "ca", {"etcd", "rdmad"})) {
      GTEST_SKIP() << "openssl is not installed";
    }
    ASSERT_TRUE(testing::MakeTestCerts(dir_, "other-ca", {"stranger"}));
    etcd_ = std::make_unique<EtcdProcess>(
        dir_, testing::EtcdTls{dir_.File("etcd.pem"), dir_.File("etcd.key"), dir_.File("ca.pem")});
    ASSERT_TRUE(etcd_->Start()) << etcd_->log();
  }

  // A store that trusts ca and shows cert ("": no client certificate).
  std::unique_ptr<MembershipStore> Store(const std::string& ca, const std::string& cert) {
    StoreOptions options;
    options.endpoints = {etcd_->endpoint()};
    if (!ca.empty()) options.tls_ca = dir_.File(ca + ".pem");
    if (!cert.empty()) {
      options.tls_cert = dir_.File(cert + ".pem");
      options.tls_key = dir_.File(cert + ".key");
    }
    options.call_timeout = milliseconds(2000);
    auto store = NewEtcdStore(options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  // What listing the prefix through store gives.
  static Status ListStatus(MembershipStore& store) { return store.List("/t/").status(); }

  testing::TempDir dir_;
  std::unique_ptr<EtcdProcess> etcd_;
};

TEST_F(EtcdTlsTest, TheRightCertificatesReachEtcdAndOthersAreRefused) {
  auto store = Store("ca", "rdmad");
  ASSERT_NE(store, nullptr);
  auto put = store->Put("/t/key", "value", 0);
  ASSERT_TRUE(put.ok()) << put.status().ToString() << "\n" << etcd_->log();
  auto listed = store->List("/t/");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->entries.size(), 1u);
  EXPECT_EQ(listed->entries[0].value, "value");

  struct Refused {
    const char* what;
    std::string ca;
    std::string cert;
  };
  for (const Refused& r :
       {Refused{"plain TCP", "", ""}, Refused{"no client certificate", "ca", ""},
        Refused{"a client certificate of another CA", "ca", "stranger"},
        Refused{"a server certificate it does not trust", "other-ca", "stranger"}}) {
    SCOPED_TRACE(r.what);
    auto other = Store(r.ca, r.cert);
    ASSERT_NE(other, nullptr);
    Status status = ListStatus(*other);
    EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.ToString();
    EXPECT_THAT(status.message(), HasSubstr(etcd_->endpoint()));
  }
}

TEST_F(EtcdTlsTest, ADaemonWithTheClusterTlsKeysRegistersItself) {
  std::string socket = dir_.File("node/rdmad.sock");
  std::string config =
      dir_.Write("node.toml", "[daemon]\nsocket = \"" + socket +
                                  "\"\nsocket_group = \"\"\npeer_address = \"127.0.0.1\"\n"
                                  "node_name = \"tls-node\"\n\n[cluster]\nendpoints = [\"" +
                                  etcd_->endpoint() + "\"]\ntls_ca = \"" + dir_.File("ca.pem") +
                                  "\"\ntls_cert = \"" + dir_.File("rdmad.pem") +
                                  "\"\ntls_key = \"" + dir_.File("rdmad.key") + "\"\n");
  auto daemon =
      testing::StartPeeredDaemon(config, testing::FreeLoopbackPort(), dir_.File("node.log"));
  auto store = Store("ca", "rdmad");
  ASSERT_NE(store, nullptr);
  const std::string key = MemberKey("/rdmad/v1/", "tls-node");
  auto until = std::chrono::steady_clock::now() + seconds(15);
  bool registered = false;
  while (!registered && std::chrono::steady_clock::now() < until) {
    auto listed = store->List(MembersPrefix("/rdmad/v1/"));
    registered = listed.ok() && listed->entries.size() == 1 && listed->entries[0].key == key;
    if (!registered) std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_TRUE(registered) << daemon->log();
}

}  // namespace
}  // namespace rdmad

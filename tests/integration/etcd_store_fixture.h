// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// EtcdStoreFixture: a real etcd on loopback (Debian's etcd-server) and the
// daemon's own client of it (store_), for the tests that read and write
// records as a daemon, an operator or an attacker would. Derived fixtures
// call EtcdStoreFixture::SetUp() first.
//
// Thread safety: as a gtest fixture, from the test's thread.

#ifndef RDMAD_TESTS_INTEGRATION_ETCD_STORE_FIXTURE_H_
#define RDMAD_TESTS_INTEGRATION_ETCD_STORE_FIXTURE_H_

#include <memory>

#include "daemon/cluster/membership_store.h"
#include "daemon/rpc/etcd_store.h"
#include "gtest/gtest.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/etcd_process.h"

namespace rdmad::testing {

class EtcdStoreFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(EtcdProcess::Binary().empty())
        << "the cluster tests need Debian's etcd-server (scripts/bootstrap installs it)";
    ASSERT_TRUE(etcd_.Start()) << etcd_.log();
    StoreOptions options;
    options.endpoints = {etcd_.endpoint()};
    auto store = NewEtcdStore(options);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }

  TempDir dir_;
  EtcdProcess etcd_{dir_};
  std::shared_ptr<MembershipStore> store_;
};

}  // namespace rdmad::testing

#endif  // RDMAD_TESTS_INTEGRATION_ETCD_STORE_FIXTURE_H_

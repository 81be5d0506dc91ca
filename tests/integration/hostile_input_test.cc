// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Hostile local input is bounded (docs/security.md, "Bounded input"): a
// name longer than its kind allows is INVALID_ARGUMENT before any lookup,
// and no error quotes a caller's text whole. A 64 KiB name used to come
// back whole in the status message, which gRPC clients refuse as oversized
// metadata.

#include <string>

#include "gtest/gtest.h"
#include "rdmad/client.h"
#include "tests/integration/daemon_pair.h"

namespace rdmad {
namespace {

const std::string kHuge(65536, 'x');

class HostileInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status started = pair_.Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
  }
  Client& client() { return *pair_.a().client; }

  // INVALID_ARGUMENT, naming field, with a message of bounded size.
  static void ExpectBounded(const Status& status, const std::string& field) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString().substr(0, 200);
    EXPECT_NE(status.message().find(field + ": 1.."), std::string::npos)
        << status.message().substr(0, 200);
    EXPECT_LT(status.message().size(), 200u);
  }

  testing::DaemonPair pair_;
};

TEST_F(HostileInputTest, LongNamesAreInvalidArgumentWithShortMessages) {
  ExpectBounded(client().GetDevice(kHuge).status(), "name");
  ExpectBounded(client().GetPortCounters(kHuge, 1).status(), "device");
  ExpectBounded(client().ResolvePath(kHuge).status(), "peer_address");
  ExpectBounded(client().Connect(kHuge, "svc").status(), "peer");
  ExpectBounded(client().Prewarm(kHuge, "svc", 1), "peer");
  // The daemon serves on.
  EXPECT_TRUE(client().GetStatus().ok());
}

TEST_F(HostileInputTest, ErrorsQuoteCallerTextBounded) {
  std::string name(64, 'd');  // as long as a device name may be: looked up
  Status missing = client().GetDevice(name).status();
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find(name), std::string::npos) << missing.message();
  Status service = client().Connect("B", std::string(65, 's')).status();
  EXPECT_EQ(service.code(), StatusCode::kInvalidArgument);
  EXPECT_LT(service.message().size(), 200u);
}

}  // namespace
}  // namespace rdmad

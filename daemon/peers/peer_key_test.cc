// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/peer_key.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace rdmad {
namespace {

using namespace std::chrono_literals;

constexpr char kHex[] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
constexpr char kOtherHex[] = "ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

PeerKey Key(const char* hex = kHex) { return PeerKey::FromHex(hex).value(); }

TEST(PeerKeyTest, AProofNamesItsNodeOnceForItsMethod) {
  PeerKey signer = Key(), checker = Key();
  std::string proof = signer.Sign("OpenChannel", "nodeA");
  auto node = checker.Verify("OpenChannel", proof);
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_EQ(*node, "nodeA");
  // The same proof again: a replay.
  auto replay = checker.Verify("OpenChannel", proof);
  EXPECT_EQ(replay.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(replay.status().message().find("replayed"), std::string::npos);
  // For another method, or edited anywhere: refused.
  std::string fresh = signer.Sign("Hello", "nodeA");
  EXPECT_EQ(checker.Verify("CloseChannel", fresh).status().code(), StatusCode::kUnauthenticated);
  for (size_t i = 0; i < fresh.size(); ++i) {
    std::string edited = fresh;
    edited[i] = edited[i] == 'a' ? 'b' : 'a';
    if (edited == fresh) continue;
    EXPECT_EQ(checker.Verify("Hello", edited).status().code(), StatusCode::kUnauthenticated)
        << "edited at " << i << ": " << edited;
  }
  EXPECT_TRUE(checker.Verify("Hello", fresh).ok()) << "the unedited proof still passes";
}

TEST(PeerKeyTest, AnotherKeyNoProofOrAnotherTimeIsRefused) {
  PeerKey checker = Key();
  auto other = checker.Verify("Hello", Key(kOtherHex).Sign("Hello", "nodeA"));
  EXPECT_EQ(other.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(other.status().message().find("wrong MAC"), std::string::npos);
  EXPECT_EQ(checker.Verify("Hello", "").status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(checker.Verify("Hello", "v1:a:b").status().code(), StatusCode::kUnauthenticated);
  auto now = PeerKey::Clock::now();
  auto late =
      checker.Verify("Hello", Key().Sign("Hello", "nodeA", now - 2 * PeerKey::kMaxSkew), now);
  EXPECT_EQ(late.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(late.status().message().find("off this daemon's clock"), std::string::npos);
  EXPECT_TRUE(checker.Verify("Hello", Key().Sign("Hello", "nodeA", now - 30s), now).ok());
}

TEST(PeerKeyTest, TheKeyFileIsTheDaemonsAlone) {
  char dir_template[] = "/tmp/rdmad-peerkey-XXXXXX";
  std::string dir = mkdtemp(dir_template);
  std::string path = dir + "/peer.key";
  std::ofstream(path) << kHex << "\n";
  chmod(path.c_str(), 0600);
  auto loaded = PeerKey::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(Key().Verify("Hello", loaded->Sign("Hello", "n")).ok()) << "the same key";
  chmod(path.c_str(), 0640);
  auto readable = PeerKey::Load(path);
  EXPECT_EQ(readable.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(readable.status().message().find("others may read it"), std::string::npos);
  chmod(path.c_str(), 0600);
  std::ofstream(path) << "not hex at all";
  EXPECT_EQ(PeerKey::Load(path).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(PeerKey::Load(dir + "/missing").status().code(), StatusCode::kFailedPrecondition);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rdmad

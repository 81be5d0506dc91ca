// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/lease_sealer.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

namespace rdmad {
namespace {

class TempDirectory {
 public:
  TempDirectory() {
    char path[] = "/tmp/rdmad-lease-XXXXXX";
    path_ = mkdtemp(path);
  }
  ~TempDirectory() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(LeaseSealerTest, OpensWhatItSealedAndNothingElse) {
  LeaseSealer sealer;
  std::string sealed = sealer.Seal("lease bytes");
  auto opened = sealer.Open(sealed);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(*opened, "lease bytes");
  // Every single-bit edit is refused, in the payload and in the tag.
  for (size_t i = 0; i < sealed.size(); ++i) {
    std::string edited = sealed;
    edited[i] = static_cast<char>(edited[i] ^ 0x01);
    EXPECT_EQ(sealer.Open(edited).status().code(), StatusCode::kNotFound) << "byte " << i;
  }
  EXPECT_EQ(sealer.Open("lease bytes").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(sealer.Open("").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(sealer.Open(sealed.substr(0, sealed.size() - 1)).status().code(),
            StatusCode::kNotFound);
  // Another daemon's key.
  EXPECT_EQ(LeaseSealer().Open(sealed).status().code(), StatusCode::kNotFound);
}

TEST(LeaseSealerTest, TheKeySurvivesARestartInTheStateDirectory) {
  TempDirectory dir;
  auto first = LeaseSealer::FromDirectory(dir.path());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  struct stat st {};
  ASSERT_EQ(stat((dir.path() + "/lease.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, 32);
  std::string sealed = first->Seal("a channel");
  auto again = LeaseSealer::FromDirectory(dir.path());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  auto opened = again->Open(sealed);
  ASSERT_TRUE(opened.ok()) << "a restarted daemon refuses its own lease";
  EXPECT_EQ(*opened, "a channel");
}

TEST(LeaseSealerTest, AKeyFileOthersMayReadOrOfAnotherSizeIsRefused) {
  TempDirectory dir;
  std::string path = dir.path() + "/lease.key";
  ASSERT_TRUE(LeaseSealer::FromDirectory(dir.path()).ok());
  chmod(path.c_str(), 0644);
  auto readable = LeaseSealer::FromDirectory(dir.path());
  EXPECT_EQ(readable.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(readable.status().message().find("others may read it"), std::string::npos)
      << readable.status().message();
  chmod(path.c_str(), 0600);
  std::ofstream(path, std::ios::app) << "x";
  auto longer = LeaseSealer::FromDirectory(dir.path());
  EXPECT_EQ(longer.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(longer.status().message().find("not 32 bytes"), std::string::npos);
  EXPECT_EQ(LeaseSealer::FromDirectory(dir.path() + "/missing").status().code(),
            StatusCode::kFailedPrecondition);
}

// A lease is "RDL1", its payload and HMAC-SHA256 over both under the key
// in lease.key: what a daemon of an earlier release sealed opens after an
// upgrade, and the tag is the standard HMAC, computed here with OpenSSL's
// one-shot HMAC() from the key file.
TEST(LeaseSealerTest, TheTagIsHmacSha256UnderTheKeyFile) {
  TempDirectory dir;
  auto sealer = LeaseSealer::FromDirectory(dir.path());
  ASSERT_TRUE(sealer.ok()) << sealer.status().ToString();
  std::ifstream in(dir.path() + "/lease.key", std::ios::binary);
  std::string key((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(key.size(), LeaseSealer::kKeyBytes);
  for (std::string payload : {std::string(), std::string("a channel"), std::string(300, 'x')}) {
    std::string body = "RDL1" + payload;
    unsigned char tag[32];
    unsigned int length = 0;
    HMAC(EVP_sha256(), key.data(), int(key.size()),
         reinterpret_cast<const unsigned char*>(body.data()), body.size(), tag, &length);
    ASSERT_EQ(length, 32u);
    std::string expected = body + std::string(reinterpret_cast<const char*>(tag), length);
    EXPECT_EQ(sealer->Seal(payload), expected) << payload.size() << " bytes of payload";
    auto opened = sealer->Open(expected);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    EXPECT_EQ(*opened, payload);
  }
}

// gRPC's threads seal and open at once through the one keyed HMAC.
TEST(LeaseSealerTest, ThreadsSealAndOpenAtOnce) {
  LeaseSealer sealer;
  const std::string reference = sealer.Seal("channel 0");
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        std::string payload = "channel " + std::to_string(i % 7);
        std::string sealed = sealer.Seal(payload);
        auto opened = sealer.Open(sealed);
        if (!opened.ok() || *opened != payload) ++failures[t];
        if (i % 7 == 0 && sealed != reference) ++failures[t];
        std::string forged = sealed;
        forged.back() = char(forged.back() ^ 0x80);
        if (sealer.Open(forged).ok()) ++failures[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace rdmad

// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/secret_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace rdmad {
namespace {

class SecretFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char path[] = "/tmp/rdmad-secret-XXXXXX";
    dir_ = mkdtemp(path);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(SecretFileTest, WrittenWholeWithMode0600AndNeverOverAnother) {
  std::string path = dir_ + "/key";
  ASSERT_TRUE(WriteSecretFile(path, "secret").ok());
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(ReadSecretFile(path, 64).value(), "secret");
  EXPECT_EQ(ReadSecretFile(path, 3).value(), "sec") << "at most max_bytes";
  EXPECT_EQ(WriteSecretFile(path, "other").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(ReadSecretFile(path, 64).value(), "secret") << "the first stays";
  EXPECT_EQ(WriteSecretFile(dir_ + "/missing/key", "x").code(), StatusCode::kFailedPrecondition);
}

TEST_F(SecretFileTest, OnlyAFileNobodyElseMayReadIsRead) {
  std::string path = dir_ + "/key";
  ASSERT_TRUE(WriteSecretFile(path, "secret").ok());
  EXPECT_EQ(ReadSecretFile(dir_ + "/none", 64).status().code(), StatusCode::kNotFound);
  for (mode_t mode : {0640, 0604, 0660}) {
    chmod(path.c_str(), mode);
    auto read = ReadSecretFile(path, 64);
    EXPECT_EQ(read.status().code(), StatusCode::kFailedPrecondition) << std::oct << mode;
    EXPECT_NE(read.status().message().find("others may read it"), std::string::npos);
  }
  chmod(path.c_str(), 0400);
  EXPECT_TRUE(ReadSecretFile(path, 64).ok());
  EXPECT_EQ(ReadSecretFile(dir_, 64).status().code(), StatusCode::kFailedPrecondition)
      << "a directory";
  std::string link = dir_ + "/link";
  ASSERT_EQ(symlink(path.c_str(), link.c_str()), 0);
  EXPECT_EQ(ReadSecretFile(link, 64).status().code(), StatusCode::kFailedPrecondition)
      << "a symbolic link is not followed";
}

}  // namespace
}  // namespace rdmad

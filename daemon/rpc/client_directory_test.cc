// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/client_directory.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

TEST(ClientDirectoryTest, NamesARecordedConnectionByItsProcess) {
  ClientDirectory directory;
  directory.Set(7, {.pid = 4242, .uid = 1000, .gid = 1000, .groups = {}});
  Caller client = directory.Identify("fd:7");
  EXPECT_EQ(client.pid, 4242);
  EXPECT_EQ(client.uid, 1000u);
  EXPECT_EQ(client.name, "pid 4242");
  EXPECT_FALSE(client.self);
  EXPECT_FALSE(client.admin);
  directory.Set(
      7, {.pid = 4343, .uid = 1001, .gid = 0, .groups = {}});  // the fd was closed and reused
  EXPECT_EQ(directory.Identify("fd:7").name, "pid 4343");
  EXPECT_EQ(directory.Identify("fd:7").uid, 1001u);
}

TEST(ClientDirectoryTest, ReadsTheKernelsCredentials) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  ClientDirectory directory;
  ASSERT_TRUE(directory.Add(fds[0]));
  Caller client = directory.Identify("fd:" + std::to_string(fds[0]));
  EXPECT_EQ(client.pid, getpid());
  EXPECT_EQ(client.uid, getuid());
  EXPECT_TRUE(client.self);
  close(fds[0]);
  close(fds[1]);
}

TEST(ClientDirectoryTest, AnUnknownConnectionIsNamedByItsPeer) {
  ClientDirectory directory;
  directory.Set(7, {.pid = 4242, .uid = 0, .gid = 0, .groups = {}});
  for (const std::string peer : {"fd:8", "fd:7x", "unix:/run/x.sock", "ipv4:1.2.3.4:5"}) {
    Caller client = directory.Identify(peer);
    EXPECT_EQ(client.pid, 0) << peer;
    EXPECT_EQ(client.name, peer);
    EXPECT_FALSE(client.self);
    EXPECT_FALSE(client.admin) << "an unknown connection is nobody";
    EXPECT_FALSE(client.Reaches(kNoUid));
  }
  EXPECT_EQ(directory.Identify("").name, "unknown");
}

TEST(ClientDirectoryTest, RootAndTheAdminGroupAreAdmins) {
  ClientDirectory directory;
  directory.Set(1, {.pid = 11, .uid = 0, .gid = 0, .groups = {}});
  directory.Set(2, {.pid = 12, .uid = 1000, .gid = 1000, .groups = {27, 600}});
  directory.Set(3, {.pid = 13, .uid = 1001, .gid = 600, .groups = {}});
  directory.Set(4, {.pid = 14, .uid = 1002, .gid = 1002, .groups = {27}});
  EXPECT_TRUE(directory.Identify("fd:1").admin);
  EXPECT_FALSE(directory.Identify("fd:2").admin) << "no admin group configured";
  EXPECT_TRUE(directory.Identify("fd:2", 600).admin) << "a supplementary group";
  EXPECT_TRUE(directory.Identify("fd:3", 600).admin) << "the primary group";
  EXPECT_FALSE(directory.Identify("fd:4", 600).admin);
  Caller user = directory.Identify("fd:4", 600);
  EXPECT_TRUE(user.Reaches(1002));
  EXPECT_FALSE(user.Reaches(1000));
  EXPECT_TRUE(directory.Identify("fd:1").Reaches(1000));
}

TEST(ClientDirectoryTest, ReadsAProcesssGroups) {
  std::vector<gid_t> groups(64);
  int n = getgroups(int(groups.size()), groups.data());
  ASSERT_GE(n, 0);
  groups.resize(size_t(n));
  std::vector<gid_t> read = GroupsOf(getpid());
  std::sort(groups.begin(), groups.end());
  std::sort(read.begin(), read.end());
  EXPECT_EQ(read, groups);
}

TEST(ClientDirectoryTest, AddFailsOnANonSocket) {
  ClientDirectory directory;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  EXPECT_FALSE(directory.Add(fds[0]));
  EXPECT_EQ(directory.Identify("fd:" + std::to_string(fds[0])).pid, 0);
  close(fds[0]);
  close(fds[1]);
}

}  // namespace
}  // namespace rdmad

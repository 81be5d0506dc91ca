// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/client_directory.h"

#include <sys/socket.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

TEST(ClientDirectoryTest, NamesARecordedConnectionByItsProcess) {
  ClientDirectory directory;
  directory.Set(7, 4242);
  LocalClient client = directory.Identify("fd:7");
  EXPECT_EQ(client.pid, 4242);
  EXPECT_EQ(client.name, "pid 4242");
  EXPECT_FALSE(client.self);
  directory.Set(7, 4343);  // the fd was closed and reused
  EXPECT_EQ(directory.Identify("fd:7").name, "pid 4343");
}

TEST(ClientDirectoryTest, ReadsTheKernelsCredentials) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  ClientDirectory directory;
  ASSERT_TRUE(directory.Add(fds[0]));
  LocalClient client = directory.Identify("fd:" + std::to_string(fds[0]));
  EXPECT_EQ(client.pid, getpid());
  EXPECT_TRUE(client.self);
  close(fds[0]);
  close(fds[1]);
}

TEST(ClientDirectoryTest, AnUnknownConnectionIsNamedByItsPeer) {
  ClientDirectory directory;
  directory.Set(7, 4242);
  for (const std::string peer : {"fd:8", "fd:7x", "unix:/run/x.sock", "ipv4:1.2.3.4:5"}) {
    LocalClient client = directory.Identify(peer);
    EXPECT_EQ(client.pid, 0) << peer;
    EXPECT_EQ(client.name, peer);
    EXPECT_FALSE(client.self);
  }
  EXPECT_EQ(directory.Identify("").name, "unknown");
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

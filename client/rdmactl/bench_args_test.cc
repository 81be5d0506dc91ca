// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/bench_args.h"

#include "gtest/gtest.h"

namespace rdmactl {
namespace {

using rdmad::StatusCode;

BenchArgs Parse(const std::vector<std::string>& args) {
  auto a = ParseBenchArgs(args);
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return a.ok() ? *a : BenchArgs{};
}

std::string Error(const std::vector<std::string>& args) {
  auto a = ParseBenchArgs(args);
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  return a.status().message();
}

TEST(BenchArgsTest, PooledGoesWithConnectOnly) {
  auto pooled = ParseBenchArgs({"B", "--test", "connect", "--pooled"});
  ASSERT_TRUE(pooled.ok()) << pooled.status().ToString();
  EXPECT_TRUE(pooled->pooled);
  EXPECT_NE(ParseBenchArgs({"B", "--pooled"}).status().message().find("--test connect only"),
            std::string::npos);
  EXPECT_EQ(ParseBenchArgs({"B", "--test", "connect", "--pooled", "--tcp"}).status().code(),
            rdmad::StatusCode::kInvalidArgument);
}

TEST(BenchArgsTest, DepthGoesWithWriteAndReadOnly) {
  EXPECT_EQ(Parse({"B", "--test", "write"}).depth, 1u);
  EXPECT_EQ(Parse({"B", "--test", "read", "--depth", "128"}).depth, 128u);
  EXPECT_EQ(Error({"B", "--test", "bw", "--depth", "8"}),
            "--depth goes with --test write or read only");
  EXPECT_EQ(Error({"B", "--test", "write", "--depth", "0"}),
            "--depth: Value 0 not in range 1 to 4096");
}

TEST(BenchArgsTest, WarmupGoesWithLatOnly) {
  EXPECT_EQ(Parse({"B"}).warmup, kBenchLatWarmup);
  EXPECT_EQ(Parse({"B", "--test", "lat", "--warmup", "10000"}).warmup, 10000u);
  EXPECT_EQ(Parse({"B", "--test", "bw"}).warmup, 0u);
  EXPECT_EQ(Error({"B", "--test", "bw", "--warmup", "100"}), "--warmup goes with --test lat only");
  EXPECT_EQ(Error({"B", "--warmup", "0"}), "--warmup: Value 0 not in range 1 to 1000000000");
}

TEST(BenchArgsTest, KvBatchesAThousandSixteenKiBBlocksByDefault) {
  BenchArgs kv = Parse({"B", "--test", "kv"});
  EXPECT_EQ(kv.test, BenchTest::kKv);
  EXPECT_EQ(kv.sizes, std::vector<uint64_t>{16384});
  EXPECT_EQ(kv.blocks, 1024u);
  EXPECT_EQ(kv.iters, 100u);
  EXPECT_EQ(Parse({"B", "--test", "kv", "--blocks", "8", "--size", "4K"}).blocks, 8u);
  EXPECT_EQ(Parse({"B", "--test", "write"}).blocks, 0u);
  EXPECT_EQ(Error({"B", "--test", "write", "--blocks", "8"}), "--blocks goes with --test kv only");
  EXPECT_EQ(Error({"B", "--test", "kv", "--size", "0"}), "--test kv: blocks of 0 bytes");
  // The server's region (twice the batch) stays within 1 GiB.
  EXPECT_EQ(Parse({"B", "--test", "kv", "--blocks", "32768", "--size", "16K"}).blocks, 32768u);
  EXPECT_EQ(Error({"B", "--test", "kv", "--blocks", "32769", "--size", "16K"}),
            "--test kv: twice --blocks x --size is 1073774592 bytes, above the echo service's "
            "1073741824");
}

TEST(BenchArgsTest, SizesTakeBinarySuffixes) {
  EXPECT_EQ(*ParseByteSize("0"), 0u);
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("4K"), 4096u);
  EXPECT_EQ(*ParseByteSize("64KiB"), 65536u);
  EXPECT_EQ(*ParseByteSize("1M"), 1048576u);
  EXPECT_EQ(*ParseByteSize("1MiB"), 1048576u);
  EXPECT_EQ(*ParseByteSize("1G"), kBenchMaxSize);
  EXPECT_EQ(ParseByteSize("2G").status().message(),
            "size 2G is above the channel's limit of 1 GiB");
  EXPECT_EQ(ParseByteSize("1073741825").status().code(), StatusCode::kInvalidArgument);
  for (const char* bad : {"", "K", "4k", "4 K", "-1", "4KB", "0x10"}) {
    EXPECT_EQ(ParseByteSize(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(BenchArgsTest, Seconds) {
  EXPECT_DOUBLE_EQ(*ParseSeconds("5"), 5);
  EXPECT_DOUBLE_EQ(*ParseSeconds("0.5"), 0.5);
  for (const char* bad : {"", "0", "-1", "1s", "nan", "inf", "100000"}) {
    EXPECT_FALSE(ParseSeconds(bad).ok()) << bad;
  }
}

TEST(BenchArgsTest, DefaultsFollowPerftest) {
  BenchArgs lat = Parse({"B"});
  EXPECT_EQ(lat.peer, "B");
  EXPECT_EQ(lat.test, BenchTest::kLat);
  EXPECT_EQ(lat.sizes, std::vector<uint64_t>{2});
  EXPECT_EQ(lat.iters, 1000u);
  EXPECT_EQ(lat.channels, 1u);
  EXPECT_FALSE(lat.force_tcp);
  for (const char* test : {"bw", "write", "read"}) {
    BenchArgs a = Parse({"B", "--test", test});
    EXPECT_EQ(a.sizes, std::vector<uint64_t>{65536}) << test;
    EXPECT_EQ(a.iters, 5000u) << test;
    EXPECT_STREQ(BenchTestName(a.test), test);
  }
  BenchArgs idle = Parse({"--test", "idle", "B"});
  EXPECT_TRUE(idle.sizes.empty());
  EXPECT_EQ(idle.iters, 0u);
  EXPECT_DOUBLE_EQ(idle.duration_s, 5);
  EXPECT_EQ(Parse({"B", "--test", "connect"}).iters, 100u);
}

TEST(BenchArgsTest, Options) {
  BenchArgs a = Parse({"B", "--test", "write", "--sizes", "2,4K,1MiB", "--duration", "1.5",
                       "--channels", "4", "--tcp"});
  EXPECT_EQ(a.sizes, (std::vector<uint64_t>{2, 4096, 1048576}));
  EXPECT_EQ(a.iters, 0u);
  EXPECT_DOUBLE_EQ(a.duration_s, 1.5);
  EXPECT_EQ(a.channels, 4u);
  EXPECT_TRUE(a.force_tcp);
  EXPECT_EQ(Parse({"B", "--size", "64K", "--iters", "7"}).iters, 7u);
  EXPECT_EQ(Parse({"B", "--test", "connect", "--iters", "20", "--channels", "2"}).iters, 20u);
}

TEST(BenchArgsTest, Errors) {
  // CLI11's words for what it checks; ours for the rest.
  EXPECT_EQ(Error({}), "PEER is required");
  EXPECT_EQ(Error({"B", "C"}), "The following argument was not expected: C");
  EXPECT_NE(Error({"B", "--test"}).find("--test: 1 required"), std::string::npos);
  EXPECT_EQ(Error({"B", "--test", "send"}),
            "--test: send not in {lat,bw,write,read,kv,idle,connect}");
  EXPECT_EQ(Error({"B", "--size", "1,2"}), "--size takes one size; --sizes takes a list");
  EXPECT_EQ(Error({"B", "--size", "1", "--sizes", "2"}), "--size excludes --sizes");
  EXPECT_EQ(Error({"B", "--sizes", "1,,2"}),
            "--sizes: \"\" is not a size (bytes, or with K, M, G: 4K, 1MiB)");
  EXPECT_EQ(Error({"B", "--iters", "0"}), "--iters: Value 0 not in range 1 to 1000000000");
  EXPECT_EQ(Error({"B", "--channels", "65"}), "--channels: Value 65 not in range 1 to 64");
  EXPECT_EQ(Error({"B", "--iters", "5", "--duration", "1"}), "--iters excludes --duration");
  EXPECT_EQ(Error({"B", "--test", "idle", "--size", "4"}), "--test idle takes no --size");
  EXPECT_EQ(Error({"B", "--test", "idle", "--iters", "4"}),
            "--test idle takes --duration, not --iters");
  EXPECT_EQ(Error({"B", "--test", "connect", "--duration", "4"}),
            "--test connect takes --iters, not --duration");
  EXPECT_EQ(Error({"B", "-x"}), "The following argument was not expected: -x");
}

}  // namespace
}  // namespace rdmactl

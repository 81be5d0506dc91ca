// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "rdmad/status.h"

#include <cerrno>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

TEST(StatusTest, OkAndNamedConstructors) {
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status().ToString(), "OK");
  Status s = Status::InvalidArgument("bad");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.ToString(), "INVALID_ARGUMENT: bad");
}

TEST(StatusTest, FromErrnoMapsCommonErrors) {
  EXPECT_EQ(Status::FromErrno(ENOENT, "open x").code(), StatusCode::kNotFound);
  EXPECT_EQ(Status::FromErrno(EACCES, "open x").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(Status::FromErrno(ENOENT, "open x").message(), "open x: No such file or directory");
}

TEST(StatusTest, CodeFromIntNamesEveryGrpcCodeAndNothingElse) {
  EXPECT_EQ(StatusCodeFromInt(14), StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeFromInt(16), StatusCode::kUnauthenticated);
  EXPECT_EQ(StatusCodeName(StatusCodeFromInt(16)), "UNAUTHENTICATED");
  EXPECT_EQ(StatusCodeFromInt(17), StatusCode::kUnknown);
  EXPECT_EQ(StatusCodeFromInt(-1), StatusCode::kUnknown);
}

TEST(StatusOrTest, HoldsValueOrError) {
  StatusOr<int> v = 7;
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 7);
  StatusOr<int> e = Status::NotFound("nope");
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kNotFound);
  StatusOr<int> bogus = Status::Ok();  // a bug, turned into an error
  EXPECT_EQ(bogus.status().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace rdmad

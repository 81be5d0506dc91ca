// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "rdmad/status.h"

#include <cerrno>
#include <utility>

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

TEST(StatusTest, CopiesAreIndependentAndMovesLeaveOk) {
  Status a = Status::Unavailable("peer gone");
  Status b = a;  // a copy owns its own code and message
  a = Status(StatusCode::kDataLoss, "torn");
  EXPECT_EQ(b.code(), StatusCode::kUnavailable);
  EXPECT_EQ(b.message(), "peer gone");
  EXPECT_EQ(a.ToString(), "DATA_LOSS: torn");
  const Status& same = b;
  b = same;  // self-assignment keeps it
  EXPECT_EQ(b.message(), "peer gone");
  Status c = std::move(b);
  EXPECT_EQ(c.ToString(), "UNAVAILABLE: peer gone");
  EXPECT_TRUE(b.ok());  // NOLINT(bugprone-use-after-move): moved-from is OK
  EXPECT_EQ(b.message(), "");
  c = Status();
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c, Status::Ok());
}

TEST(StatusTest, OkIsOnePointerAndKeepsNoMessage) {
  // OK is what every call on the data path returns: no string to build or
  // destroy, the size of a pointer.
  static_assert(sizeof(Status) == sizeof(void*));
  Status ok_with_text(StatusCode::kOk, "ignored");
  EXPECT_TRUE(ok_with_text.ok());
  EXPECT_EQ(ok_with_text.message(), "");
  EXPECT_EQ(ok_with_text, Status());
  EXPECT_NE(Status::Internal("x"), Status::Internal("y"));
  EXPECT_NE(Status::Internal("x"), Status(StatusCode::kUnknown, "x"));
}

}  // namespace
}  // namespace rdmad

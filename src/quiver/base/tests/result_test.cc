// Tests for quiver/base/result.h: a value or an error, moves, ValueOr and
// QUIVER_ASSIGN_OR_RETURN.
#include "quiver/base/result.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "quiver/testing/status_assertions.h"

namespace quiver {
namespace {

TEST(ResultTest, HoldsAValue) {
  Result<int> r = 42;
  ASSERT_OK(r);
  EXPECT_EQ(r.status().code(), StatusCode::kOk);
  EXPECT_EQ(*r, 42);
  EXPECT_EQ(r.value(), 42);
}

TEST(ResultTest, HoldsAnError) {
  Result<int> r = Status::OutOfMemory("pool 'x' limit 10 bytes");
  ASSERT_RAISES_WITH_MESSAGE(OutOfMemory, "limit 10 bytes", r);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(), "OutOfMemory: pool 'x' limit 10 bytes");
}

TEST(ResultTest, ValueOrGivesTheFallbackOnError) {
  EXPECT_EQ(Result<std::string>(Status::Invalid("x")).ValueOr("fallback"), "fallback");
  EXPECT_EQ(Result<std::string>(std::string("v")).ValueOr("fallback"), "v");
}

TEST(ResultTest, MovesOutMoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_OK(r);
  std::unique_ptr<int> p = std::move(r).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 7);
}

TEST(ResultTest, ArrowGivesMemberAccess) {
  Result<std::vector<int>> r = std::vector<int>{1, 2, 3};
  EXPECT_EQ(r->size(), 3u);
  r->push_back(4);
  EXPECT_EQ((*r)[3], 4);
}

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::Invalid("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  QUIVER_ASSIGN_OR_RETURN(int h, Half(x));
  QUIVER_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(ResultTest, AssignOrReturnPropagatesTheFirstError) {
  ASSERT_OK_AND_ASSIGN(int q, Quarter(12));
  EXPECT_EQ(q, 3);
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "odd: 3", Quarter(6));
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "odd: 5", Quarter(5));
}

#ifdef NDEBUG
TEST(ResultTest, OkStatusBecomesAnErrorInReleaseBuilds) {
  // A Result built from an OK Status is a programmer error (asserted in debug
  // builds); release builds turn it into an Invalid error, never a value.
  Result<int> r{Status::OK()};
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "Result built from an OK Status", r);
}
#endif

}  // namespace
}  // namespace quiver

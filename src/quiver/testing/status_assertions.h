// quiver/testing/status_assertions.h — GoogleTest assertions over Status and
// Result<T>, printing the error on failure.
//
// Learned from Arrow C++'s testing/gtest_util.h (ASSERT_OK, ASSERT_RAISES,
// ASSERT_OK_AND_ASSIGN); written for quiver's Status/Result.
//
//   ASSERT_OK(expr);                       expr is a Status or a Result<T>
//   EXPECT_OK(expr);
//   ASSERT_OK_AND_ASSIGN(auto batch, reader->Next());
//   ASSERT_RAISES(Invalid, expr);          the code's name without the k
//   EXPECT_RAISES(OutOfMemory, expr);
//   ASSERT_RAISES_WITH_MESSAGE(Invalid, "buffer 2", expr);   substring of message()
//   EXPECT_RAISES_WITH_MESSAGE(...);
//
// ASSERT_OK / EXPECT_OK / ASSERT_RAISES* / EXPECT_RAISES* accept a streamed
// context (`ASSERT_OK(r) << "batch " << i;`), as every gtest assertion does.
// `expr` is evaluated exactly once. ASSERT_OK_AND_ASSIGN declares a hidden
// temporary, so it is a statement of its own (not the body of an unbraced if).
//
// Used by test executables only (target quiver_testing); never by the
// library or the CLI. Thread safety: as GoogleTest's assertions.
#pragma once

#include <gtest/gtest.h>

#include <string_view>
#include <utility>

#include "quiver/base/result.h"
#include "quiver/base/status.h"

namespace quiver::testing {

/// The Status of a Status (itself) or of a Result<T> (OK or its error).
inline const Status& StatusOf(const Status& st) { return st; }
template <typename T>
Status StatusOf(const Result<T>& r) {
  return r.status();
}

/// Success when `st` is OK; otherwise a failure naming `expr_text` and the
/// Status ("Code: message").
::testing::AssertionResult CheckOk(const char* expr_text, const Status& st);

/// Success when `st` failed with `code` and (when `message_part` is not
/// empty) its message() contains `message_part`; otherwise a failure naming
/// `expr_text`, the expectation and the Status actually returned.
::testing::AssertionResult CheckRaises(const char* expr_text, StatusCode code, std::string_view message_part,
                                       const Status& st);

/// gtest predicate-formatters (ASSERT_PRED_FORMAT*) behind the macros.
template <typename T>
::testing::AssertionResult IsOkFormat(const char* expr_text, const T& value) {
  return CheckOk(expr_text, StatusOf(value));
}
template <typename T>
::testing::AssertionResult RaisesFormat(const char* /*code_text*/, const char* expr_text, StatusCode code,
                                        const T& value) {
  return CheckRaises(expr_text, code, {}, StatusOf(value));
}
template <typename T>
::testing::AssertionResult RaisesWithMessageFormat(const char* /*code_text*/, const char* /*message_text*/,
                                                   const char* expr_text, StatusCode code,
                                                   std::string_view message_part, const T& value) {
  return CheckRaises(expr_text, code, message_part, StatusOf(value));
}

}  // namespace quiver::testing

#define ASSERT_OK(expr) ASSERT_PRED_FORMAT1(::quiver::testing::IsOkFormat, expr)
#define EXPECT_OK(expr) EXPECT_PRED_FORMAT1(::quiver::testing::IsOkFormat, expr)

#define ASSERT_RAISES(code, expr) \
  ASSERT_PRED_FORMAT2(::quiver::testing::RaisesFormat, ::quiver::StatusCode::k##code, expr)
#define EXPECT_RAISES(code, expr) \
  EXPECT_PRED_FORMAT2(::quiver::testing::RaisesFormat, ::quiver::StatusCode::k##code, expr)

#define ASSERT_RAISES_WITH_MESSAGE(code, message_part, expr) \
  ASSERT_PRED_FORMAT3(::quiver::testing::RaisesWithMessageFormat, ::quiver::StatusCode::k##code, message_part, expr)
#define EXPECT_RAISES_WITH_MESSAGE(code, message_part, expr) \
  EXPECT_PRED_FORMAT3(::quiver::testing::RaisesWithMessageFormat, ::quiver::StatusCode::k##code, message_part, expr)

#define QUIVER_TESTING_CONCAT_INNER(a, b) a##b
#define QUIVER_TESTING_CONCAT(a, b) QUIVER_TESTING_CONCAT_INNER(a, b)
#define QUIVER_TESTING_ASSIGN_IMPL(tmp, lhs, rexpr)                                  \
  auto tmp = (rexpr);                                                                \
  ASSERT_TRUE(::quiver::testing::CheckOk(#rexpr, ::quiver::testing::StatusOf(tmp))); \
  lhs = std::move(tmp).value()

/// `lhs = value of rexpr` (a Result<T>), or a fatal failure printing the error.
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  QUIVER_TESTING_ASSIGN_IMPL(QUIVER_TESTING_CONCAT(_quiver_testing_res_, __LINE__), lhs, rexpr)

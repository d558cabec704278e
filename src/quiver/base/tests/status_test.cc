// Tests for quiver/base/status.h: the OK value, codes and their names, the
// "Code: message" text, WithContext and the RETURN_NOT_OK macros.
#include "quiver/base/status.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quiver/testing/status_assertions.h"

namespace quiver {
namespace {

TEST(StatusTest, DefaultIsOkWithEmptyMessage) {
  Status st;
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kOk);
  EXPECT_EQ(st.message(), "");
  EXPECT_EQ(st.ToString(), "OK");
  EXPECT_TRUE(Status::OK().ok());
}

TEST(StatusTest, FactoriesSetCodeMessageAndText) {
  struct Case {
    Status st;
    StatusCode code;
    const char* text;
  };
  const std::vector<Case> cases = {
      {Status::Invalid("m"), StatusCode::kInvalid, "Invalid: m"},
      {Status::NotImplemented("m"), StatusCode::kNotImplemented, "NotImplemented: m"},
      {Status::IOError("m"), StatusCode::kIOError, "IOError: m"},
      {Status::OutOfMemory("m"), StatusCode::kOutOfMemory, "OutOfMemory: m"},
      {Status::EndOfStream("m"), StatusCode::kEndOfStream, "EndOfStream: m"},
      {Status::Timeout("m"), StatusCode::kTimeout, "Timeout: m"},
      {Status::Cancelled("m"), StatusCode::kCancelled, "Cancelled: m"},
      {Status::KeyError("m"), StatusCode::kKeyError, "KeyError: m"},
  };
  for (const auto& c : cases) {
    EXPECT_FALSE(c.st.ok()) << c.text;
    EXPECT_EQ(c.st.code(), c.code) << c.text;
    EXPECT_EQ(c.st.message(), "m") << c.text;
    EXPECT_EQ(c.st.ToString(), c.text);
  }
}

TEST(StatusTest, PredicatesMatchOnlyTheirCode) {
  EXPECT_TRUE(Status::Invalid("x").IsInvalid());
  EXPECT_FALSE(Status::Invalid("x").IsIOError());
  EXPECT_TRUE(Status::NotImplemented("x").IsNotImplemented());
  EXPECT_TRUE(Status::IOError("x").IsIOError());
  EXPECT_TRUE(Status::OutOfMemory("x").IsOutOfMemory());
  EXPECT_TRUE(Status::EndOfStream("x").IsEndOfStream());
  EXPECT_TRUE(Status::KeyError("x").IsKeyError());
  EXPECT_FALSE(Status::OK().IsInvalid());
}

TEST(StatusTest, CodeNames) {
  EXPECT_EQ(StatusCodeName(StatusCode::kOk), "OK");
  EXPECT_EQ(StatusCodeName(StatusCode::kOutOfMemory), "OutOfMemory");
  EXPECT_EQ(StatusCodeName(StatusCode::kKeyError), "KeyError");
  EXPECT_EQ(StatusCodeName(static_cast<StatusCode>(99)), "Unknown");
}

TEST(StatusTest, OkCodeWithMessageIsOk) {
  // Status(kOk, msg) carries no state: the message is dropped.
  Status st(StatusCode::kOk, "ignored");
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(st.message(), "");
}

TEST(StatusTest, WithContextPrefixesTheMessageAndKeepsTheCode) {
  Status st = Status::Invalid("bad offset").WithContext("buffer 2");
  EXPECT_EQ(st.code(), StatusCode::kInvalid);
  EXPECT_EQ(st.message(), "buffer 2: bad offset");
  EXPECT_EQ(st.WithContext("message 0").ToString(), "Invalid: message 0: buffer 2: bad offset");
  // OK stays OK; an empty context changes nothing.
  EXPECT_TRUE(Status::OK().WithContext("where").ok());
  EXPECT_EQ(Status::IOError("x").WithContext("").ToString(), "IOError: x");
}

// The SQLSTATE is a field set where the error is raised, kept through
// WithContext and copies, never read from the message (issue 21 item 6).
TEST(StatusTest, SqlStateIsAFieldKeptThroughContext) {
  EXPECT_EQ(Status::KeyError("no table named t").sql_state(), "");
  Status st = Status::KeyError("no column named x").WithSqlState("42703");
  EXPECT_EQ(st.sql_state(), "42703");
  EXPECT_EQ(st.code(), StatusCode::kKeyError);
  EXPECT_EQ(st.message(), "no column named x");
  Status ctx = st.WithContext("statement 1");
  EXPECT_EQ(ctx.sql_state(), "42703");
  EXPECT_EQ(ctx.message(), "statement 1: no column named x");
  Status copy = ctx;
  EXPECT_EQ(copy.sql_state(), "42703");
  EXPECT_TRUE(Status::OK().WithSqlState("42703").ok());
  EXPECT_EQ(Status::OK().WithSqlState("42703").sql_state(), "");
}

TEST(StatusTest, CopiesShareTheValue) {
  Status a = Status::Timeout("slow");
  Status b = a;
  EXPECT_EQ(b.ToString(), "Timeout: slow");
  a = Status::OK();
  EXPECT_EQ(b.ToString(), "Timeout: slow");
}

Status Fails() { return Status::IOError("disk"); }
Status Passes() { return Status::OK(); }

Status Chain(bool fail, int* reached) {
  QUIVER_RETURN_NOT_OK(Passes());
  *reached = 1;
  if (fail) QUIVER_RETURN_NOT_OK_CTX(Fails(), std::string("chunk 3"));
  *reached = 2;
  return Status::OK();
}

TEST(StatusTest, ReturnNotOkPropagatesWithAndWithoutContext) {
  int reached = 0;
  ASSERT_OK(Chain(false, &reached));
  EXPECT_EQ(reached, 2);
  reached = 0;
  Status st = Chain(true, &reached);
  EXPECT_EQ(reached, 1);
  EXPECT_EQ(st.ToString(), "IOError: chunk 3: disk");
}

TEST(StatusAssertionsTest, ReportTheStatusOnFailure) {
  // The quiver_testing macros themselves: success paths and failure texts.
  EXPECT_OK(Status::OK());
  EXPECT_RAISES(Invalid, Status::Invalid("bad"));
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "ba", Status::Invalid("bad"));
  auto failure = testing::CheckOk("Open()", Status::IOError("gone"));
  EXPECT_FALSE(failure);
  EXPECT_STREQ(failure.message(), "'Open()' failed: IOError: gone");
  auto wrong_code = testing::CheckRaises("f()", StatusCode::kInvalid, {}, Status::IOError("x"));
  EXPECT_FALSE(wrong_code);
  EXPECT_STREQ(wrong_code.message(), "'f()' was expected to fail with Invalid, but returned IOError: x");
  auto ok_instead = testing::CheckRaises("f()", StatusCode::kInvalid, "y", Status::OK());
  EXPECT_FALSE(ok_instead);
  EXPECT_STREQ(ok_instead.message(),
               "'f()' was expected to fail with Invalid and a message containing \"y\", but returned OK");
  EXPECT_FALSE(testing::CheckRaises("f()", StatusCode::kInvalid, "z", Status::Invalid("y")));
}

}  // namespace
}  // namespace quiver

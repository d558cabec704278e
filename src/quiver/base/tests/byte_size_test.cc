// Tests for quiver/base/byte_size.h: the report text of byte counts at each
// unit boundary, and the option parser's units, fractions and errors.
#include "quiver/base/byte_size.h"

#include <gtest/gtest.h>

#include "quiver/testing/status_assertions.h"

namespace quiver {
namespace {

TEST(ByteSizeTest, FormatBytesAtEachUnit) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.0 KiB");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(int64_t{3} << 20), "3.00 MiB");
  EXPECT_EQ(FormatBytes((int64_t{1} << 30) - 1), "1024.00 MiB");
  EXPECT_EQ(FormatBytes(int64_t{3} << 29), "1.50 GiB");
  EXPECT_EQ(FormatBytes(-5), "-5 B");
}

TEST(ByteSizeTest, ParseBytesUnits) {
  ASSERT_OK_AND_ASSIGN(int64_t b, ParseBytes("1048576"));
  EXPECT_EQ(b, 1048576);
  ASSERT_OK_AND_ASSIGN(b, ParseBytes("256MiB"));
  EXPECT_EQ(b, int64_t{256} << 20);
  ASSERT_OK_AND_ASSIGN(b, ParseBytes("64M"));
  EXPECT_EQ(b, int64_t{64} << 20);
  ASSERT_OK_AND_ASSIGN(b, ParseBytes("200K"));
  EXPECT_EQ(b, 200 * 1024);
  ASSERT_OK_AND_ASSIGN(b, ParseBytes("1.5g"));
  EXPECT_EQ(b, int64_t{3} << 29);
  ASSERT_OK_AND_ASSIGN(b, ParseBytes("48mb"));
  EXPECT_EQ(b, int64_t{48} << 20);
  ASSERT_OK_AND_ASSIGN(b, ParseBytes("10b"));
  EXPECT_EQ(b, 10);
  // What FormatBytes writes reads back (a space before the unit).
  ASSERT_OK_AND_ASSIGN(b, ParseBytes("3.00 MiB"));
  EXPECT_EQ(b, int64_t{3} << 20);
}

TEST(ByteSizeTest, ParseBytesErrors) {
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "not a byte count: 'MiB'", ParseBytes("MiB"));
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "unknown byte unit in '5T'", ParseBytes("5T"));
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "byte count out of range: '0'", ParseBytes("0"));
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "out of range", ParseBytes("-1K"));
  EXPECT_RAISES_WITH_MESSAGE(Invalid, "out of range", ParseBytes("1e30"));
}

}  // namespace
}  // namespace quiver

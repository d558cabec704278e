// Tests for quiver/columnar/spark_type.h: the Spark SQL type each Arrow type
// is served as (the one mapping behind the Thrift types, DESCRIBE and the
// Python description).
#include "quiver/columnar/spark_type.h"

#include <gtest/gtest.h>

#include <string>

namespace quiver {
namespace {

std::string Name(const DataTypePtr& t) { return SparkTypeBaseName(SparkTypeOf(*t)); }

TEST(SparkTypeTest, EachLayoutMapsToItsSparkType) {
  EXPECT_EQ(Name(null()), "void");
  EXPECT_EQ(Name(boolean()), "boolean");
  EXPECT_EQ(Name(int8()), "tinyint");
  EXPECT_EQ(Name(uint8()), "smallint");  // unsigned: the next wider signed type
  EXPECT_EQ(Name(uint16()), "int");
  EXPECT_EQ(Name(uint32()), "bigint");
  EXPECT_EQ(Name(uint64()), "bigint");
  EXPECT_EQ(Name(float16()), "float");
  EXPECT_EQ(Name(float64()), "double");
  EXPECT_EQ(Name(large_utf8()), "string");
  EXPECT_EQ(Name(time32(TimeUnit::kMilli)), "string");  // served as text
  EXPECT_EQ(Name(duration(TimeUnit::kMicro)), "bigint");
  EXPECT_EQ(Name(binary()), "binary");
  EXPECT_EQ(Name(decimal(128, 15, 2)), "decimal");
  EXPECT_EQ(Name(date32()), "date");
  EXPECT_EQ(Name(timestamp(TimeUnit::kMicro, "UTC")), "timestamp");
  EXPECT_EQ(Name(interval_year_month()), "interval year to month");
  EXPECT_EQ(Name(interval_month_day_nano()), "interval day to second");
  EXPECT_EQ(Name(list(field("item", int32()))), "array");
  EXPECT_EQ(Name(struct_({field("a", int16())})), "struct");
  EXPECT_EQ(Name(sparse_union({field("a", int16())}, {0})), "uniontype");
}

TEST(SparkTypeTest, EncodingsAreServedAsTheirValueType) {
  const DataTypePtr dict = dictionary(int32(), decimal(128, 9, 3));
  EXPECT_EQ(SparkTypeOf(*dict), SparkType::kDecimal);
  EXPECT_EQ(SparkServedType(*dict).precision, 9);
  const DataTypePtr ree = run_end_encoded(field("run_ends", int32(), false), field("values", dict));
  EXPECT_EQ(SparkTypeOf(*ree), SparkType::kDecimal);  // through both encodings
  EXPECT_EQ(SparkServedType(*ree).scale, 3);
}

}  // namespace
}  // namespace quiver

// Window functions and GROUPING SETS / ROLLUP / CUBE (issue 37) on a small
// table with NULLs in the partition, order and value columns, against
// values worked out by hand; the binder's refusals. The differential suite
// against DuckDB over TPC-H is tests/window/window_vs_duckdb.sh.
#include "quiver/sql/tests/sql_test_fixture.h"

namespace quiver::sql::testing {
namespace {

class WindowTest : public SqlTest {
 protected:
  void SetUp() override {
    SqlTest::SetUp();
    // w(id, g, x): g and x have NULLs.
    auto schema = std::make_shared<Schema>();
    schema->fields = {field("id", int64(), false), field("g", int64(), true), field("x", int64(), true)};
    auto batch = Batch(schema, {Int64Array(pool_.get(), {1, 2, 3, 4, 5, 6, 7}),
                                Int64Array(pool_.get(), {1, 1, 1, 1, 2, std::nullopt, std::nullopt}),
                                Int64Array(pool_.get(), {10, 20, 20, std::nullopt, 5, 7, std::nullopt})});
    ASSERT_OK(catalog_->RegisterBatches("w", schema, Split(batch, 3)));
  }

  std::vector<std::string> Query(const std::string& sql) {
    auto r = Run(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.status().ToString();
    return r.ok() ? Rows(*r) : std::vector<std::string>{};
  }
  std::string ErrorOf(const std::string& sql) {
    auto r = Run(sql);
    EXPECT_FALSE(r.ok()) << sql;
    return r.ok() ? "" : r.status().ToString();
  }
};

TEST_F(WindowTest, RankingWithNullPartitionAndOrderKeys) {
  EXPECT_EQ(Query("SELECT id, row_number() OVER (PARTITION BY g ORDER BY x, id), rank() OVER (PARTITION BY g "
                  "ORDER BY x), dense_rank() OVER (PARTITION BY g ORDER BY x) FROM w"),
            (std::vector<std::string>{"1|1|1|1", "2|2|2|2", "3|3|2|2", "4|4|4|3", "5|1|1|1", "6|1|1|1", "7|2|2|2"}));
  EXPECT_EQ(Query("SELECT id, percent_rank() OVER (PARTITION BY g ORDER BY x), cume_dist() OVER (PARTITION BY g "
                  "ORDER BY x), ntile(3) OVER (PARTITION BY g ORDER BY id) FROM w"),
            (std::vector<std::string>{"1|0|0.25|1", "2|0.3333333333333333|0.75|1", "3|0.3333333333333333|0.75|2",
                                      "4|1|1|3", "5|0|1|1", "6|0|0.5|1", "7|1|1|2"}));
}

TEST_F(WindowTest, ValueFunctionsAndRowsFrames) {
  EXPECT_EQ(Query("SELECT id, sum(x) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), "
                  "lag(x, 1, -1) OVER (ORDER BY id), lead(x, 2) OVER (ORDER BY id), last_value(x) OVER (ORDER BY id), "
                  "nth_value(x, 2) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) "
                  "FROM w"),
            (std::vector<std::string>{"1|30|-1|20|10|20", "2|50|10|null|20|20", "3|40|20|5|20|20", "4|25|20|7|null|20",
                                      "5|12|null|null|5|20", "6|12|5|null|7|20", "7|7|7|null|null|20"}));
  // An offset near INT64_MAX reads past the partition's edge (the default).
  EXPECT_EQ(Query("SELECT id, lead(x, 9223372036854775807, 0) OVER (ORDER BY id), lag(x, 9223372036854775807) "
                  "OVER (ORDER BY id) FROM w WHERE id < 3"),
            (std::vector<std::string>{"1|0|null", "2|0|null"}));
  // min / max over sliding frames (segment tree), count(*) of a frame past the end.
  EXPECT_EQ(Query("SELECT id, min(x) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), "
                  "max(x) OVER (ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 3 FOLLOWING), "
                  "count(*) OVER (ORDER BY id ROWS BETWEEN 5 FOLLOWING AND 9 FOLLOWING) FROM w"),
            (std::vector<std::string>{"1|10|20|2", "2|10|20|1", "3|10|7|0", "4|20|7|0", "5|5|7|0", "6|5|null|0",
                                      "7|5|null|0"}));
}

TEST_F(WindowTest, RangeFramesAndDefaultFrame) {
  // Default frame with ORDER BY: up to the last peer (the two 20s together).
  // RANGE 10 PRECEDING: keys within 10 below; a NULL key's frame is its NULL peers.
  EXPECT_EQ(
      Query("SELECT id, sum(x) OVER (PARTITION BY g ORDER BY x), count(*) OVER (PARTITION BY g ORDER BY x "
            "RANGE BETWEEN 10 PRECEDING AND CURRENT ROW), sum(x) OVER (PARTITION BY g) FROM w"),
      (std::vector<std::string>{"1|10|1|50", "2|50|3|50", "3|50|3|50", "4|50|1|50", "5|5|1|5", "6|7|1|7", "7|7|1|7"}));
}

TEST_F(WindowTest, GroupingSets) {
  EXPECT_EQ(Query("SELECT g, count(*), sum(x), grouping(g) FROM w GROUP BY ROLLUP (g)"),
            (std::vector<std::string>{"1|4|50|0", "2|1|5|0", "null|2|7|0", "null|7|62|1"}));
  EXPECT_EQ(
      Query("SELECT g, x, count(*), grouping(g, x) FROM w WHERE id < 4 GROUP BY CUBE (g, x)"),
      (std::vector<std::string>{"1|10|1|0", "1|20|2|0", "1|null|3|1", "null|10|1|2", "null|20|2|2", "null|null|3|3"}));
  // The same set twice gives its groups twice.
  EXPECT_EQ(Query("SELECT g, count(*) FROM w WHERE id < 3 GROUP BY GROUPING SETS ((g), (g), ())"),
            (std::vector<std::string>{"1|2", "1|2", "null|2"}));
}

TEST_F(WindowTest, Refusals) {
  EXPECT_NE(ErrorOf("SELECT id FROM w WHERE row_number() OVER () > 1").find("not allowed in WHERE"), std::string::npos);
  EXPECT_NE(ErrorOf("SELECT sum(row_number() OVER ()) FROM w").find("cannot contain window function"),
            std::string::npos);
  EXPECT_NE(ErrorOf("SELECT ntile(0) OVER () FROM w").find("must be at least 1"), std::string::npos);
  EXPECT_NE(ErrorOf("SELECT sum(x) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM w")
                .find("cannot have preceding rows"),
            std::string::npos);
  EXPECT_NE(ErrorOf("SELECT sum(x) OVER (ORDER BY g, x RANGE 1 PRECEDING) FROM w").find("exactly one ORDER BY"),
            std::string::npos);
  EXPECT_NE(ErrorOf("SELECT row_number() OVER w2 FROM w WINDOW w1 AS ()").find("does not exist"), std::string::npos);
  EXPECT_NE(ErrorOf("SELECT grouping(g) FROM w").find("needs a GROUP BY"), std::string::npos);
  std::string nested = "g";
  for (int i = 0; i < 20; ++i) nested = "GROUPING SETS (" + nested + ")";
  EXPECT_NE(ErrorOf("SELECT count(*) FROM w GROUP BY " + nested).find("nested deeper than 16"), std::string::npos);
  EXPECT_NE(ErrorOf("SELECT g, grouping(x) FROM w GROUP BY ROLLUP (g)").find("grouping expressions"),
            std::string::npos);
  EXPECT_NE(ErrorOf("SELECT g, x, count(*) FROM w GROUP BY ROLLUP (g)").find("GROUP BY"), std::string::npos);
}

}  // namespace
}  // namespace quiver::sql::testing

// Issue 37's aggregate functions over TPC-H lineitem (scale 0.01) at 2 and
// 4 and 8 threads, merged serially (few groups), in place (ProbeMerge:
// many groups in up to 4 tables, integer or string keys) and partition by
// partition (ParallelMerge: 8 tables), and under a memory limit that makes the hash
// aggregate spill its states: every run gives the one-thread answer
// (statistics within 1e-9 relative: Chan's merge of partial states
// rounds differently from one Welford pass).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "quiver/join/tests/join_test_util.h"
#include "quiver/sql/engine.h"
#include "quiver/sql/tpch_tables.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::sql {
namespace {

namespace fs = std::filesystem;
using join::testing::Cell;

class AggregateParallelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(
        (fs::temp_directory_path() / ("quiver-aggregate-parallel-test-" + std::to_string(::getpid()))).string());
    fs::remove_all(*dir_);
    fs::create_directories(*dir_ + "/tables");
    fs::create_directories(*dir_ + "/spill");
    pool_ = new std::shared_ptr<MemoryPool>(MemoryPool::MakeRoot({"aggregate-parallel-test"}));
    catalog_ = new std::shared_ptr<Catalog>(std::make_shared<Catalog>());
    TpchFilesOptions to;
    to.scale = 0.01;
    to.batch_rows = 4096;  // ~15 morsels of lineitem: the workers share the scan
    to.pool = pool_->get();
    ASSERT_OK(RegisterTpchTables(catalog_->get(), *dir_ + "/tables", to).status());
  }
  static void TearDownTestSuite() {
    delete catalog_;
    delete pool_;
    fs::remove_all(*dir_);
    delete dir_;
  }

  // Every row of `sql` as text ("c1|c2|..."), sorted.
  static Result<std::vector<std::string>> Rows(const std::string& sql, ExecuteOptions eo) {
    Engine engine(*catalog_);
    auto statement = (*pool_)->MakeChild({.name = "statement"});
    eo.pool = statement.get();
    QUIVER_ASSIGN_OR_RETURN(auto stream, engine.Execute(sql, eo));
    std::vector<std::string> rows;
    while (true) {
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, stream->Next());
      if (!b) break;
      for (int64_t r = 0; r < b->num_rows; ++r) {
        std::string s;
        for (size_t c = 0; c < b->columns.size(); ++c) s += (c ? "|" : "") + Cell(*b->columns[c], r);
        rows.push_back(s);
      }
    }
    stream.reset();
    EXPECT_EQ(statement->held_bytes(), 0) << sql;
    std::sort(rows.begin(), rows.end());
    return rows;
  }

  // Whether rows `a` and `b` hold the same fields, numbers within 1e-9
  // relative (sorted alike: the statistics' tests keep exact key columns
  // first).
  static bool SameRows(const std::vector<std::string>& a, const std::vector<std::string>& b, std::string* diff) {
    if (a.size() != b.size()) {
      *diff = std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " rows";
      return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
      auto fa = Split(a[i]), fb = Split(b[i]);
      bool same = fa.size() == fb.size();
      for (size_t k = 0; same && k < fa.size(); ++k) {
        if (fa[k] == fb[k]) continue;
        char *ea = nullptr, *eb = nullptr;
        const double x = std::strtod(fa[k].c_str(), &ea), y = std::strtod(fb[k].c_str(), &eb);
        same = *ea == 0 && *eb == 0 && !fa[k].empty() &&
               std::fabs(x - y) <= 1e-9 * std::max({1.0, std::fabs(x), std::fabs(y)});
      }
      if (!same) {
        *diff = "row " + std::to_string(i) + ": " + a[i] + " vs " + b[i];
        return false;
      }
    }
    return true;
  }
  // Each of `sqls` at 2, 4 and 8 threads gives its one-thread rows (up to
  // 4 workers' tables merge in place, 8 partition by partition).
  static void ExpectOneThreadAnswers(const std::vector<std::string>& sqls) {
    for (const auto& sql : sqls) {
      ExecuteOptions one;
      one.threads = 1;
      auto ref = Rows(sql, one);
      ASSERT_OK(ref) << sql;
      ASSERT_FALSE(ref->empty()) << sql;
      if (sql.find("SELECT count(DISTINCT k)") == 0) EXPECT_EQ(*ref, std::vector<std::string>{"15000"}) << sql;
      for (int threads : {2, 4, 8}) {
        ExecuteOptions eo;
        eo.threads = threads;
        eo.max_batch_rows = 3000;  // several batches per worker
        auto got = Rows(sql, eo);
        ASSERT_OK(got) << sql << " threads=" << threads;
        std::string diff;
        EXPECT_TRUE(SameRows(*ref, *got, &diff)) << sql << " threads=" << threads << ": " << diff;
      }
    }
  }

  static std::vector<std::string> Split(const std::string& row) {
    std::vector<std::string> out(1);
    for (char c : row) {
      if (c == '|') {
        out.emplace_back();
      } else {
        out.back() += c;
      }
    }
    return out;
  }

  static std::string* dir_;
  static std::shared_ptr<MemoryPool>* pool_;
  static std::shared_ptr<Catalog>* catalog_;
};

std::string* AggregateParallelTest::dir_ = nullptr;
std::shared_ptr<MemoryPool>* AggregateParallelTest::pool_ = nullptr;
std::shared_ptr<Catalog>* AggregateParallelTest::catalog_ = nullptr;

// The statistics, count_if, bool_and / bool_or and picks whose value is
// determined (a pick of a unique row, of a constant per group, or checked
// to be one of the group's values).
const char* const kStatistics =
    "stddev(l_quantity), stddev_pop(l_extendedprice), var_samp(l_discount), var_pop(l_tax), "
    "count_if(l_shipmode = 'AIR'), bool_and(l_quantity < 50), bool_or(l_returnflag = 'R'), "
    "var_samp(DISTINCT l_quantity), count(*)";

TEST_F(AggregateParallelTest, MergedStatesEqualOneThread) {
  const std::vector<std::string> sqls = {
      // no GROUP BY: the workers' one groups merged
      std::string("SELECT ") + kStatistics + " FROM lineitem",
      // few groups: merged into the first table
      std::string("SELECT l_returnflag, l_linestatus, ") + kStatistics +
          ", any_value(l_returnflag), first(l_linestatus), last(l_linestatus, true) FROM lineitem GROUP BY "
          "l_returnflag, l_linestatus",
      std::string("SELECT l_suppkey, ") + kStatistics + " FROM lineitem GROUP BY l_suppkey",
      // one integer key, 60 K groups: merged in place (ProbeMerge)
      "SELECT l_orderkey * 10 + l_linenumber, first(l_shipmode), last(l_comment), any_value(l_extendedprice), "
      "stddev_pop(l_quantity), var_samp(l_quantity), count_if(l_tax > 0.04) FROM lineitem GROUP BY "
      "l_orderkey * 10 + l_linenumber",
      // string keys, many groups: in place through the GroupTables (2, 4
      // threads), partition by partition (8)
      "SELECT l_comment, stddev(l_quantity), var_pop(l_tax), count_if(l_shipmode = 'AIR'), bool_and(l_quantity < "
      "50), first(l_comment), last(l_comment), any_value(l_comment) FROM lineitem GROUP BY l_comment",
      "SELECT l_orderkey, l_linenumber, first(l_shipinstruct), last(l_shipmode, true), any_value(l_shipdate), "
      "stddev_samp(l_discount), bool_or(l_discount > 0.05) FROM lineitem GROUP BY l_orderkey, l_linenumber",
      // any_value / first / last of a group is one of its values: every
      // group (15,000 orders) finds its row
      "SELECT count(DISTINCT k) FROM (SELECT l_orderkey AS k, any_value(l_partkey) AS p FROM lineitem GROUP BY "
      "l_orderkey) a JOIN lineitem ON l_orderkey = k AND l_partkey = p",
      "SELECT count(DISTINCT k) FROM (SELECT l_orderkey AS k, first(l_comment) AS c, last(l_comment) AS d FROM "
      "lineitem GROUP BY l_orderkey) a JOIN lineitem x ON x.l_orderkey = k AND x.l_comment = c JOIN lineitem y ON "
      "y.l_orderkey = k AND y.l_comment = d",
  };
  ExpectOneThreadAnswers(sqls);
}

TEST_F(AggregateParallelTest, PackedIntegerKeysMergeInPlace) {
  // Several integer keys packed into 64 bits, ~45 K groups that every
  // worker's table shares in part (lineitem's (part, supplier) pairs recur
  // across its orders), one key with NULLs: the workers' tables merge in
  // place (ProbeMerge, each group's key packed by the later table's own
  // layout), string min / max values left in their arenas.
  const std::vector<std::string> sqls = {
      "SELECT l_partkey, l_suppkey, l_linenumber, count(*), sum(l_quantity), min(l_shipdate), max(l_comment), "
      "stddev_pop(l_discount) FROM lineitem GROUP BY l_partkey, l_suppkey, l_linenumber",
      "SELECT CASE WHEN l_linenumber = 2 THEN NULL ELSE l_partkey END, l_suppkey, l_linenumber, count(*), "
      "sum(l_extendedprice), min(l_shipmode), max(l_shipinstruct) FROM lineitem WHERE l_shipmode = 'AIR' OR "
      "l_linenumber < 7 GROUP BY 1, 2, 3",
  };
  ExpectOneThreadAnswers(sqls);
  // The groups, counted apart: as many as the distinct triples.
  ExecuteOptions two;
  two.threads = 2;
  auto groups = Rows(
      "SELECT count(*), sum(c) FROM (SELECT l_partkey, l_suppkey, l_linenumber, count(*) AS c FROM "
      "lineitem GROUP BY 1, 2, 3) g",
      two);
  ASSERT_OK(groups);
  auto distinct = Rows(
      "SELECT count(DISTINCT l_partkey * 1000000 + l_suppkey * 10 + l_linenumber), count(*) FROM "
      "lineitem",
      two);
  ASSERT_OK(distinct);
  EXPECT_EQ(*groups, *distinct);
}

TEST_F(AggregateParallelTest, MergedValueListsEqualOneThread) {
  const std::vector<std::string> sqls = {
      // percentiles: the workers' value lists linked (serially, in place,
      // by partitions)
      "SELECT median(l_quantity), percentile_cont(0.9) WITHIN GROUP (ORDER BY l_extendedprice), "
      "percentile_disc(0.1) WITHIN GROUP (ORDER BY l_comment DESC), percentile_approx(l_shipdate, 0.5), "
      "median(DISTINCT l_tax) FROM lineitem",
      "SELECT l_suppkey, median(l_extendedprice), percentile_disc(0.75) WITHIN GROUP (ORDER BY l_discount), "
      "percentile(l_quantity, 0.3), percentile_disc(0.5) WITHIN GROUP (ORDER BY l_shipmode) FROM lineitem GROUP BY "
      "l_suppkey",
      "SELECT l_orderkey * 10 + l_linenumber, median(l_quantity), percentile_disc(0.5) WITHIN GROUP (ORDER BY "
      "l_comment) FROM lineitem GROUP BY l_orderkey * 10 + l_linenumber",

      // string_agg ordered by its value (unordered it is as the workers
      // saw the rows), approx_count_distinct's registers merged: exact
      // equality with one thread
      "SELECT l_suppkey, string_agg(l_shipmode, ',' ORDER BY l_shipmode), approx_count_distinct(l_partkey), "
      "approx_count_distinct(l_comment, 0.01) FROM lineitem GROUP BY l_suppkey",
      "SELECT approx_count_distinct(l_orderkey), approx_count_distinct(l_extendedprice), length(string_agg(l_comment, "
      "'')), approx_count_distinct(l_shipdate) FROM lineitem",
      "SELECT l_comment, string_agg(l_shipmode, '/' ORDER BY l_shipmode DESC), approx_count_distinct(l_tax), "
      "median(l_quantity), percentile_disc(0.2) WITHIN GROUP (ORDER BY l_receiptdate) FROM lineitem GROUP BY "
      "l_comment",
  };
  ExpectOneThreadAnswers(sqls);
}

TEST_F(AggregateParallelTest, SpilledStatesEqualTheUnlimitedAnswer) {
  const std::string spill_root = *dir_ + "/spill";
  const std::vector<std::string> sqls = {
      "SELECT l_orderkey, l_linenumber, stddev_samp(l_extendedprice), var_pop(l_quantity), count_if(l_tax > 0.02), "
      "bool_and(l_discount < 0.1), first(l_comment), last(l_shipmode), any_value(l_shipinstruct), "
      "first(l_receiptdate, true) FROM lineitem GROUP BY l_orderkey, l_linenumber",
      "SELECT l_orderkey, stddev(l_quantity), var_samp(DISTINCT l_discount), bool_or(l_returnflag = 'A'), "
      "count_if(DISTINCT l_shipmode = 'MAIL'), count(*) FROM lineitem GROUP BY l_orderkey",
      // value lists (percentiles) spill as their values' bytes
      "SELECT l_orderkey, median(l_extendedprice), percentile_disc(0.5) WITHIN GROUP (ORDER BY l_comment), "
      "percentile_cont(0.25) WITHIN GROUP (ORDER BY l_quantity DESC), percentile_approx(l_shipdate, 0.9), count(*), "
      // string_agg's values and approx_count_distinct's registers too
      "string_agg(l_comment, ' ' ORDER BY l_comment), approx_count_distinct(l_partkey), "
      "approx_count_distinct(l_shipmode, 0.1) FROM lineitem GROUP BY l_orderkey",
  };
  for (const auto& sql : sqls) {
    ExecuteOptions plain;
    plain.threads = 1;
    auto ref = Rows(sql, plain);
    ASSERT_OK(ref) << sql;
    for (int threads : {1, 2}) {
      ExecuteOptions eo;
      eo.threads = threads;
      eo.memory_limit_bytes = 10 << 20;
      eo.max_batch_rows = 4096;
      eo.spill_directory = spill_root;
      eo.spilled_files = std::make_shared<std::atomic<int64_t>>(0);
      eo.spilled_bytes = std::make_shared<std::atomic<int64_t>>(0);
      auto got = Rows(sql, eo);
      ASSERT_OK(got) << sql << " threads=" << threads;
      std::string diff;
      EXPECT_TRUE(SameRows(*ref, *got, &diff)) << sql << " threads=" << threads << ": " << diff;
      EXPECT_GT(eo.spilled_files->load(), 0) << sql;
      EXPECT_TRUE(fs::is_empty(spill_root)) << "spill files left behind by " << sql;
    }
  }
}

// The value lists are the statement's memory: string_agg of lineitem's
// 60,000 comments (1.6 MB of text) raises the statement pool's peak by at
// least their bytes over count(*) of the same rows.
TEST_F(AggregateParallelTest, ValueListsAreChargedToTheStatement) {
  auto peak = [&](const std::string& sql) -> int64_t {
    Engine engine(*catalog_);
    auto statement = (*pool_)->MakeChild({.name = "statement"});
    ExecuteOptions eo;
    eo.threads = 2;
    eo.pool = statement.get();
    auto stream = engine.Execute(sql, eo);
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    if (!stream.ok()) return -1;
    while (true) {
      auto b = (*stream)->Next();
      EXPECT_TRUE(b.ok()) << b.status().ToString();
      if (!b.ok() || !*b) break;
    }
    stream->reset();
    EXPECT_EQ(statement->held_bytes(), 0) << sql;
    return statement->peak_bytes();
  };
  auto text = Rows("SELECT sum(length(l_comment)) FROM lineitem", ExecuteOptions{});
  ASSERT_OK(text);
  const int64_t comment_bytes = std::stoll((*text)[0]);
  EXPECT_GT(comment_bytes, 1000000);
  const int64_t plain = peak("SELECT count(*) FROM lineitem");
  const int64_t listed = peak("SELECT length(string_agg(l_comment, ' ')) FROM lineitem");
  EXPECT_GT(listed - plain, comment_bytes) << plain << " vs " << listed;
}

}  // namespace
}  // namespace quiver::sql

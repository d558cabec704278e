// End-to-end tests of `quiver gen tpch` and `quiver sql` (skipped when the
// quiver binary has not been built).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "quiver/testing/shared_data.h"

namespace {

namespace fs = std::filesystem;

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

CliRun Quiver(const std::string& args) {
  CliRun r;
#ifndef QUIVER_BINARY
  return r;
#else
  const fs::path base = fs::temp_directory_path() / ("quiver-sql-cli-" + std::to_string(::getpid()));
  const std::string out = base.string() + ".out", err = base.string() + ".err";
  const std::string cmd = std::string("'") + QUIVER_BINARY + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int rc = std::system(cmd.c_str());
  r.exit_code = (rc != -1 && WIFEXITED(rc)) ? WEXITSTATUS(rc) : -1;
  auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  r.out = slurp(out);
  r.err = slurp(err);
  std::error_code ec;
  fs::remove(out, ec);
  fs::remove(err, ec);
  return r;
#endif
}

bool HaveBinary() {
#ifdef QUIVER_BINARY
  return fs::exists(QUIVER_BINARY);
#else
  return false;
#endif
}

// `quiver stats` shows an annotated leaf's type as a reader gets it and its
// statistics as values of that type: dates, timestamps and decimals (in
// INT32 and FIXED_LEN_BYTE_ARRAY, negative ones too), not their physical
// integers and bytes.
TEST(SqlCliTest, StatsShowLogicalValues) {
  if (!HaveBinary()) GTEST_SKIP() << "quiver binary not built";
  const fs::path file = fs::temp_directory_path() / ("quiver-stats-" + std::to_string(::getpid()) + ".parquet");
  CliRun r = Quiver("sql -o '" + file.string() +
                    "' \"SELECT DATE '2024-05-17' + i AS d, TIMESTAMP '2024-05-17 10:00:00' AS ts, "
                    "CAST(i AS DECIMAL(30,3)) / 8 AS big, CAST(i - 1 AS DECIMAL(9,2)) AS small "
                    "FROM (VALUES (0), (1), (2)) t(i)\"");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Quiver("stats '" + file.string() + "'");
  fs::remove(file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part : {"  d: INT32 (date32[day]), ", "statistics min 2024-05-17 max 2024-05-19 nulls 0",
                           "  ts: INT64 (timestamp[us]), ",
                           "statistics min 2024-05-17T10:00:00.000000 max 2024-05-17T10:00:00.000000 nulls 0",
                           "  big: FIXED_LEN_BYTE_ARRAY (decimal128(38, 12)), ",
                           "statistics min 0.000000000000 max 0.250000000000 nulls 0",
                           "  small: INT32 (decimal128(9, 2)), ", "statistics min -1.00 max 1.00 nulls 0"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
}

// `quiver stats` of a Parquet file (row groups, column chunks, page
// index) and of a CSV file; `quiver sql` counts the pages it read and
// pruned by the page index.
TEST(SqlCliTest, StatsAndPageCountsOfTableFiles) {
  if (!HaveBinary()) GTEST_SKIP() << "quiver binary not built";
  const fs::path tiny = quiver::testing::SharedDataDir() / "parquet-testing" / "data" / "alltypes_tiny_pages.parquet";
  if (!fs::exists(tiny)) GTEST_SKIP() << "no parquet-testing data";
  CliRun r = Quiver("stats '" + tiny.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {
           "row group 0: rows 7300, compressed 323579 B, uncompressed 323579 B (1.00x)\n",
           "  id: INT32, codec UNCOMPRESSED, encodings [PLAIN, RLE, BIT_PACKED], values 7300, compressed 37325 B, "
           "uncompressed 37325 B (1.00x), statistics min 0 max 7299 nulls 0, page index: 325 pages (offset index, "
           "column index)\n",
           "statistics min '01/01/09' max '12/31/10' nulls 0, page index: 974 pages",
           "  timestamp_col: INT96, codec UNCOMPRESSED, encodings [RLE, PLAIN_DICTIONARY, BIT_PACKED], values 7300, "
           "compressed 126532 B, uncompressed 126532 B (1.00x), statistics nulls 0, page index: 1055 pages (offset "
           "index)\n",
           "total: 1 row groups, 7300 rows, compressed 323579 B, uncompressed 323579 B (1.00x), page index on 13 of 13 "
           "column chunks (5794 pages)\n",
       }) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  r = Quiver("sql --table t='" + tiny.string() + "' 'SELECT count(*), sum(id) FROM t WHERE id BETWEEN 1000 AND 1100'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("106050"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("parquet 1 row groups read, 0 pruned, pages 13 read, 312 pruned"), std::string::npos) << r.err;
  const fs::path csv = fs::temp_directory_path() / ("quiver-stats-" + std::to_string(::getpid()) + ".csv");
  {
    std::ofstream out(csv);
    out << "a,b,s\n1,2.5,x\n2,,\"y,z\"\n3,4.25,\n";
  }
  r = Quiver("stats '" + csv.string() + "'");
  fs::remove(csv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "format: csv, compression none, 31 B, delimiter ',', quote '\"', header yes, 3 rows, 3 columns\n"
            "  a: int64, nulls 0, 24 B as Arrow\n"
            "  b: double, nulls 1, 25 B as Arrow\n"
            "  s: utf8, nulls 1, 21 B as Arrow\n");
}

TEST(SqlCliTest, GenTpchThenQuery) {
  if (!HaveBinary()) GTEST_SKIP() << "quiver binary not built";
  const fs::path dir = fs::temp_directory_path() / ("quiver-sql-cli-tpch-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  CliRun gen = Quiver("gen tpch --scale 0.001 -o '" + dir.string() + "'");
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  for (const char* t : {"region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"}) {
    EXPECT_TRUE(fs::exists(dir / (std::string(t) + ".arrow"))) << t;
  }
  CliRun q =
      Quiver("sql --table region='" + (dir / "region.arrow").string() + "' --table nation='" +
             (dir / "nation.arrow").string() +
             "' --format csv \"SELECT r.r_name, n.n_name FROM nation n JOIN region r ON r.r_regionkey = n.n_regionkey "
             "WHERE r.r_name = 'EUROPE' AND n.n_name <> 'RUSSIA'\"");
  ASSERT_EQ(q.exit_code, 0) << q.err;
  std::istringstream lines(q.out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  std::sort(rows.begin() + 1, rows.end());
  EXPECT_EQ(rows, (std::vector<std::string>{"r_name,n_name", "EUROPE,FRANCE", "EUROPE,GERMANY", "EUROPE,ROMANIA",
                                            "EUROPE,UNITED KINGDOM"}));
  CliRun j = Quiver("sql --tpch-dir '" + dir.string() +
                    "' --tpch 0.001 --format jsonl \"SELECT n_name FROM nation WHERE n_nationkey = 7\"");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(j.out, "{\"n_name\":\"GERMANY\"}\n");
  // A self-join's SELECT * repeats column names; jsonl keys stay unique
  // (the k-th field of a name is "name_k") so no value is lost.
  CliRun self =
      Quiver("sql --table r='" + (dir / "region.arrow").string() +
             "' --format jsonl \"SELECT a.r_regionkey, b.r_regionkey, a.r_regionkey AS r_regionkey_2 FROM r a "
             "JOIN r b ON a.r_regionkey = b.r_regionkey WHERE a.r_regionkey = 3\"");
  ASSERT_EQ(self.exit_code, 0) << self.err;
  EXPECT_EQ(self.out, "{\"r_regionkey\":3,\"r_regionkey_3\":3,\"r_regionkey_2\":3}\n");
  CliRun bad = Quiver("sql --table nation='" + (dir / "nation.arrow").string() +
                      "' \"WITH RECURSIVE r AS (SELECT n_name FROM nation) SELECT * FROM r\"");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("WITH RECURSIVE is not supported (line 1, column 16)"), std::string::npos) << bad.err;
  // An aggregate with ORDER BY and LIMIT: the regions by their number of nations.
  CliRun agg = Quiver("sql --table nation='" + (dir / "nation.arrow").string() +
                      "' --format csv \"SELECT n_regionkey, count(*) AS n FROM nation GROUP BY n_regionkey "
                      "ORDER BY n DESC, n_regionkey LIMIT 2\"");
  ASSERT_EQ(agg.exit_code, 0) << agg.err;
  EXPECT_EQ(agg.out, "n_regionkey,n\n0,5\n1,5\n");
  // --repeat runs the statement again in the same process: the same rows
  // each time, and with --timing one line per run.
  CliRun rep = Quiver("sql --table nation='" + (dir / "nation.arrow").string() +
                      "' --repeat 3 --timing --format csv \"SELECT count(*) AS n FROM nation\"");
  ASSERT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_EQ(rep.out, "n\n25\nn\n25\nn\n25\n");
  for (const char* run : {"timing (run 1 of 3): wall ", "timing (run 2 of 3): wall ", "timing (run 3 of 3): wall "}) {
    EXPECT_NE(rep.err.find(run), std::string::npos) << run << " in " << rep.err;
  }
  CliRun rep_out = Quiver("sql --table nation='" + (dir / "nation.arrow").string() + "' --repeat 2 -o '" +
                          (dir / "out.arrow").string() + "' \"SELECT 1\"");
  EXPECT_NE(rep_out.exit_code, 0);
  EXPECT_NE(rep_out.err.find("--repeat writes no -o FILE"), std::string::npos) << rep_out.err;
  EXPECT_FALSE(fs::exists(dir / "out.arrow"));
  fs::remove_all(dir);
}

}  // namespace

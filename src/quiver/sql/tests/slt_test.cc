// The sqllogictest record files of tests/slt/ (slt_runner.h), one test case
// per file: issue 38's wrong answers and refusals (issue38_*.slt) and the
// generated per-construct files (gen_*.slt, tests/slt/generate.mjs: queries
// over small random tables, the expected values DuckDB's in PostgreSQL
// mode). Each file runs on a fresh catalog; its tables come from CREATE
// TABLE + INSERT. The runner itself is checked first on scripts written
// here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "quiver/sql/tests/slt_runner.h"
#include "quiver/testing/shared_data.h"

namespace quiver::sql::testing {
namespace {

std::filesystem::path SltDir() { return ::quiver::testing::SourceDir() / "tests" / "slt"; }

std::vector<std::string> SltFiles() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(SltDir(), ec))
    if (e.path().extension() == ".slt") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SltRunner, Md5IsSqllogictests) {
  EXPECT_EQ(Md5Hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Md5Hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(Md5Hex("1\n2\n"), "6ddb4095eb719e2a9f0a3f95677d24e0");
}

TEST(SltRunner, RecordsPassAndFail) {
  const std::string script =
      "# a comment\n"
      "statement ok\n"
      "CREATE TABLE t(a INTEGER, b VARCHAR, c DOUBLE)\n"
      "\n"
      "statement ok\n"
      "INSERT INTO t VALUES (1, 'x', 1.5), (2, NULL, -0.25), (3, '', NULL)\n"
      "\n"
      "query ITR rowsort\n"
      "SELECT a, b, c FROM t\n"
      "----\n"
      "1\tx\t1.500\n"
      "2\tNULL\t-0.250\n"
      "3\t(empty)\tNULL\n"
      "\n"
      "query I valuesort label-a\n"
      "SELECT a FROM t\n"
      "----\n"
      "3 values hashing to " +
      Md5Hex("1\n2\n3\n") +
      "\n"
      "\n"
      "query I nosort label-a\n"
      "SELECT a FROM t ORDER BY a\n"
      "----\n"
      "1\n2\n3\n"
      "\n"
      "statement error no table named\n"
      "SELECT * FROM missing\n"
      "\n"
      "skipif quiver\n"
      "query I nosort\n"
      "SELECT 1\n"
      "----\n"
      "2\n"
      "\n"
      "onlyif other\n"
      "statement ok\n"
      "nonsense\n";
  const SltReport ok = RunSltScript(script, "inline.slt");
  EXPECT_TRUE(ok.failures.empty()) << ok.failures[0];
  EXPECT_EQ(ok.records, 6);
  EXPECT_EQ(ok.skipped, 2);
  const SltReport bad = RunSltScript(
      "statement ok\nCREATE TABLE t AS SELECT 1 AS a\n\nquery I nosort\nSELECT a + 1 FROM t\n----\n3\n\n"
      "statement error\nSELECT 1\n\nquery I nosort\nSELECT 1\n----\n1 values hashing to 0\n",
      "bad.slt");
  ASSERT_EQ(bad.failures.size(), 3u);
  EXPECT_NE(bad.failures[0].find("bad.slt:4"), std::string::npos) << bad.failures[0];
  EXPECT_NE(bad.failures[0].find("expected 1 values [3], got 1 [2]"), std::string::npos) << bad.failures[0];
}

class SltFile : public ::testing::TestWithParam<std::string> {};

TEST_P(SltFile, Passes) {
  const auto path = SltDir() / (GetParam() + ".slt");
  const std::string text = ReadFile(path);
  ASSERT_FALSE(text.empty()) << path;
  SltOptions o;
  // The generated files run at two threads (parallel operators), the
  // issue's at one.
  o.threads = GetParam().rfind("gen_", 0) == 0 ? 2 : 1;
  const SltReport r = RunSltScript(text, path.filename().string(), o);
  std::cout << GetParam() << ": " << r.records << " records (" << r.statements << " statements, " << r.queries
            << " queries), " << r.skipped << " skipped\n";
  EXPECT_GT(r.records, 0);
  for (const auto& f : r.failures) ADD_FAILURE() << f;
}

// A script named by $QUIVER_SLT_FILE (the differential fuzzer's,
// tests/slt/fuzz_vs_duckdb.sh); skipped when unset. $QUIVER_SLT_THREADS
// sets the threads (default 1).
TEST(SltExternal, File) {
  const char* file = std::getenv("QUIVER_SLT_FILE");
  if (file == nullptr || *file == '\0') GTEST_SKIP() << "QUIVER_SLT_FILE is not set";
  const std::string text = ReadFile(file);
  ASSERT_FALSE(text.empty()) << file;
  SltOptions o;
  const char* threads = std::getenv("QUIVER_SLT_THREADS");
  if (threads != nullptr && *threads != '\0') o.threads = std::max(1, std::atoi(threads));
  o.max_failures = 1000;
  const SltReport r = RunSltScript(text, std::filesystem::path(file).filename().string(), o);
  std::cout << "slt: " << r.records << " records (" << r.statements << " statements, " << r.queries << " queries), "
            << r.failures.size() << " failed\n";
  for (const auto& f : r.failures) ADD_FAILURE() << f;
}

INSTANTIATE_TEST_SUITE_P(Files, SltFile, ::testing::ValuesIn(SltFiles()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param;
                           for (auto& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace quiver::sql::testing

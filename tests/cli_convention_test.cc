// One CLI convention (issue 21 item 4): every byte option of every
// subcommand takes units (one parser, base/byte_size.h); a bad option value
// or a missing required setting is a usage error (exit 2) in every
// subcommand; `quiver sql` prints the aligned table `cat` prints, takes
// `--tables DIR` (every *.arrow file under its stem, as `serve` does) and
// writes its result as Arrow IPC with `-o FILE [--compression]`; the CLI
// reference (docs/cli.md) has a section for every subcommand.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "cross_test_support.h"

namespace quiver::cross_test {
namespace {

class CliConventionTest : public ScratchDirTest {
 protected:
  CliConventionTest() : ScratchDirTest("quiver_cli_convention") {}

  /// Runs `quiver <args>` (args already shell-quoted) without QUIVER_TOKEN.
  CliResult Quiver(const std::string& args) {
    return RunCapturingOutput("env -u QUIVER_TOKEN " + ShellQuote(QUIVER_BINARY) + " " + args, dir_);
  }

  std::string Q(const fs::path& p) const { return ShellQuote(p.string()); }

  /// Two small tables as IPC files in dir_/tables: nums (bigint-seq, 5 rows)
  /// and words (text, 3 rows), plus a file that is not *.arrow.
  fs::path MakeTables() {
    const fs::path t = dir_ / "tables";
    fs::create_directories(t);
    EXPECT_EQ(Quiver("gen bigint-seq --rows 5 --format file -o " + Q(t / "nums.arrow")).exit_code, 0);
    EXPECT_EQ(Quiver("gen text --rows 3 --format file -o " + Q(t / "words.arrow")).exit_code, 0);
    std::ofstream(t / "notes.txt") << "not a table\n";
    return t;
  }
};

// Every byte option of every subcommand takes a size with a unit. Each
// command line then fails at run time (a missing input, a port nobody
// listens on, a tiny memory limit) with exit 1, or succeeds — never a usage
// error about the size.
TEST_F(CliConventionTest, EveryByteOptionTakesUnits) {
  const std::string missing = Q(dir_ / "missing.arrow");
  const std::vector<std::string> lines = {
      "--memory-limit 1GiB cat " + missing,
      "convert " + missing + " " + Q(dir_ / "o.arrow") + " --max-bytes-per-batch 8MiB",
      "gen bigint-seq --rows 10 --max-bytes-per-batch 1KiB -o " + Q(dir_ / "g.arrow"),
      "--memory-limit 1KiB demo --chunk-bytes 8MiB --scale 0.001 --tpch-dir " + Q(dir_ / "demo"),
      "join --build " + missing + " --probe " + missing + " --on a=b --memory-limit 64MiB --max-bytes-per-batch 1M",
      "bench fetch --scale 0 --chunk-bytes 8MiB --window 64MiB --no-curl --no-node",
      "--memory-limit 1KiB bench serve --rows 1000 --clients 1 --chunk-bytes 1MiB",
      "query --server https://127.0.0.1:1/sql --token t --window 32MiB \"SELECT 1\"",
      "sql --statement-memory-limit 1MiB --table x=" + missing + " \"SELECT 1\"",
      "serve --token t --table x=" + missing +
          " --chunk-bytes 8MiB --inline-threshold-bytes 1MiB --store-budget 1G --spill-limit 2GiB"
          " --max-body-bytes 16MiB --statement-memory-limit 1MiB",
  };
  for (const std::string& args : lines) {
    CliResult r = Quiver(args);
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << args << "\nexit " << r.exit_code << ": " << r.err;
    EXPECT_EQ(r.err.find("Could not convert"), std::string::npos) << args << ": " << r.err;
  }
  // A bad size is a usage error naming the text.
  CliResult r = Quiver("serve --token t --store-budget 5T");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("unknown byte unit in '5T'"), std::string::npos) << r.err;
  r = Quiver("sql --statement-memory-limit lots \"SELECT 1\"");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("not a byte count: 'lots'"), std::string::npos) << r.err;
}

// A bad option value or a missing setting is a usage error: one line, exit 2,
// in every subcommand (some exited 1 once).
TEST_F(CliConventionTest, UsageErrorsExitTwoEverywhere) {
  const std::string missing = Q(dir_ / "missing.arrow");
  const std::vector<std::string> lines = {
      "",  // no subcommand
      "--allocator nope cat " + missing,
      "convert " + missing + " " + Q(dir_ / "o.arrow") + " --compression lz5",
      "convert " + missing + " " + Q(dir_ / "o.arrow") + " --output-policy hoard",
      "gen bogus --rows 3 -o " + Q(dir_ / "x.arrow"),
      "gen bigint-seq --rows 3 --compression lz5 -o " + Q(dir_ / "x.arrow"),
      "join --build " + missing + " --probe " + missing + " --on a=b --type sideways",
      "join --build " + missing + " --probe " + missing + " --on a=b --memory-mode nowhere",
      "demo --memory-mode nowhere",
      "sql --memory-mode nowhere \"SELECT 1\"",
      "sql --compression zstd \"SELECT 1\"",  // --compression without -o
      "sql --tables " + Q(dir_ / "no-such-dir") + " \"SELECT 1\"",
      "query --server https://127.0.0.1:1/sql \"SELECT 1\"",  // no token
      "query --server https://127.0.0.1:1/sql --token t --parallel 0 \"SELECT 1\"",
      "query --server https://127.0.0.1:1/sql --token t --compression lz5 -o x \"SELECT 1\"",
      "serve --port 0",  // no token
      "serve --token t --memory-mode nowhere",
      "bench ipc " + missing + " --codec lz5",
  };
  for (const std::string& args : lines) {
    CliResult r = Quiver(args);
    EXPECT_EQ(r.exit_code, 2) << "quiver " << args << ": " << r.err;
    EXPECT_NE(r.err.find("quiver: error: "), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
}

// `quiver sql` prints the aligned table `quiver cat` prints; --tables DIR
// registers every *.arrow file of the directory under its stem.
TEST_F(CliConventionTest, SqlPrintsTheCatTableAndTakesATablesDirectory) {
  const fs::path t = MakeTables();
  CliResult show = Quiver("sql --tables " + Q(t) + " \"SHOW TABLES\" --format csv");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("nums"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("words"), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find("notes"), std::string::npos) << show.out;
  CliResult sql = Quiver("sql --tables " + Q(t) + " \"SELECT * FROM words\"");
  ASSERT_EQ(sql.exit_code, 0) << sql.err;
  CliResult cat = Quiver("cat " + Q(t / "words.arrow"));
  ASSERT_EQ(cat.exit_code, 0) << cat.err;
  EXPECT_EQ(sql.out, cat.out);
  CliResult two =
      Quiver("sql --tables " + Q(t) + " \"SELECT a.id, b.id AS other FROM nums a JOIN nums b ON a.id = b.id\"");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(two.out.rfind("id | other\n---+------\n", 0), 0u) << "aligned, with a rule:\n" << two.out;
  // The same on serve is checked by its usage: a directory without tables is refused.
  fs::create_directories(dir_ / "empty");
  CliResult none = Quiver("serve --token t --tables " + Q(dir_ / "empty"));
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_NE(none.err.find("no *.arrow file"), std::string::npos) << none.err;
  // Two files of one stem (words.arrow and its Parquet copy) are named in
  // a usage error, not "already registered".
  CliResult conv = Quiver("convert " + Q(t / "words.arrow") + " " + Q(t / "words.parquet"));
  ASSERT_EQ(conv.exit_code, 0) << conv.err;
  CliResult both = Quiver("sql --tables " + Q(t) + " \"SELECT * FROM words\"");
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_NE(both.err.find("words.arrow and words.parquet would both be table 'words'"), std::string::npos) << both.err;
}

// `quiver sql -o FILE --compression zstd` writes the result as an Arrow IPC
// file that reads back to the rows sql prints.
TEST_F(CliConventionTest, SqlWritesArrowIpc) {
  const fs::path t = MakeTables();
  const fs::path out = dir_ / "result.arrow";
  CliResult w =
      Quiver("sql --tables " + Q(t) + " \"SELECT * FROM nums WHERE id >= 2\" -o " + Q(out) + " --compression zstd");
  ASSERT_EQ(w.exit_code, 0) << w.err;
  EXPECT_EQ(w.out, "");
  EXPECT_NE(w.err.find("3 rows written"), std::string::npos) << w.err;
  CliResult stats = Quiver("stats " + Q(out));
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("codec zstd"), std::string::npos) << stats.out;
  CliResult back = Quiver("cat " + Q(out) + " --format csv");
  ASSERT_EQ(back.exit_code, 0) << back.err;
  CliResult direct = Quiver("sql --tables " + Q(t) + " \"SELECT * FROM nums WHERE id >= 2\" --format csv");
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_EQ(back.out, direct.out);
  EXPECT_EQ(direct.out, "id\n2\n3\n4\n");
}

// The CLI reference, docs/cli.md (scripts/gen-cli-docs.sh; docs.cli checks
// every line), has a section for every subcommand `quiver --help` lists.
TEST_F(CliConventionTest, CliReferenceHasEverySubcommand) {
  CliResult help = Quiver("--help");
  ASSERT_EQ(help.exit_code, 0) << help.err;
  const std::string reference = ReadText(fs::path(QUIVER_SOURCE_DIR) / "docs" / "cli.md");
  const size_t subs = help.out.find("Subcommands:");
  ASSERT_NE(subs, std::string::npos) << help.out;
  std::istringstream lines(help.out.substr(subs));
  std::string line;
  std::getline(lines, line);
  int named = 0;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, std::regex("^\\s+([a-z]+)\\s"))) continue;
    ++named;
    EXPECT_NE(reference.find("\n## quiver " + m[1].str() + "\n"), std::string::npos)
        << m[1] << " has no section in docs/cli.md (run scripts/gen-cli-docs.sh > docs/cli.md)";
  }
  EXPECT_GE(named, 10);
}

}  // namespace
}  // namespace quiver::cross_test

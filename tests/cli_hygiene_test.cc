// The CLI on a new user's first contact and on failure (issue 10):
//   item 2 — a failed command leaves no output that reads as valid: files are
//            written beside the target and renamed only on success; stdout
//            ends without an end-of-stream marker and the exit is non-zero;
//   item 6 — `quiver --version`, the help when no subcommand is given, and
//            "not Arrow IPC data" (with what it looks like) for other inputs,
//            while legacy pre-0.15 streams still read.
// Inputs are made here (streams cut off mid-body, CSV / Parquet / gzip /
// Feather V1 look-alikes).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cross_test_support.h"
#include "quiver/testing/array_builders.h"
#include "quiver/testing/array_readers.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::cross_test {
namespace {

void WriteText(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// A scratch folder per test, removed afterwards.
class CliHygieneTest : public ScratchDirTest {
 protected:
  CliHygieneTest() : ScratchDirTest("quiver_cli_hygiene") {}

  /// Runs `quiver <args>` (args already shell-quoted), stdin from `in` when given.
  CliResult Quiver(const std::string& args, const fs::path& in = {}) {
    return RunCapturingOutput(ShellQuote(QUIVER_BINARY) + " " + args, dir_, in);
  }

  /// Files in the scratch folder other than `keep` (temporary files left over).
  std::vector<std::string> Leftovers(const std::vector<std::string>& keep) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string n = e.path().filename().string();
      if (std::find(keep.begin(), keep.end(), n) == keep.end()) out.push_back(n);
    }
    return out;
  }

  /// A valid stream of three batches of one int32 column, and the same
  /// stream cut off in the middle of the last batch's body.
  void MakeStreams() {
    auto pool = MemoryPool::MakeRoot({});
    auto schema = std::make_shared<Schema>();
    schema->fields = {field("x", int32())};
    std::vector<RecordBatchPtr> batches;
    for (int b = 0; b < 3; ++b) {
      std::vector<std::optional<int32_t>> v;
      for (int i = 0; i < 1000; ++i) v.push_back(b * 1000 + i);
      auto batch = std::make_shared<RecordBatch>();
      batch->schema = schema;
      batch->num_rows = 1000;
      batch->columns = {quiver::testing::Int32Array(pool.get(), v)};
      batches.push_back(batch);
    }
    ipc::BufferOutputStream sink;
    ipc::WriteOptions wo;
    wo.pool = pool.get();
    ASSERT_OK(ipc::WriteTable(&sink, schema, batches, ipc::IpcFormat::kStream, wo));
    const auto& bytes = sink.bytes();
    good_ = dir_ / "good.arrows";
    cut_ = dir_ / "cut.arrows";
    WriteText(good_, std::string(bytes.begin(), bytes.end()));
    // The last 8 bytes are the end-of-stream marker; 2000 bytes before them
    // lie inside the last body (4000 bytes of int32 values).
    WriteText(cut_, std::string(bytes.begin(), bytes.end() - 8 - 2000));
  }

  fs::path good_, cut_;
};

constexpr char kEos[] = "\xff\xff\xff\xff\x00\x00\x00\x00";

// ---- item 2 ------------------------------------------------------------------

TEST_F(CliHygieneTest, FailedConvertLeavesNoFile) {
  MakeStreams();
  for (const char* to : {"stream", "file"}) {
    SCOPED_TRACE(to);
    const fs::path out = dir_ / (std::string("out.") + to);
    CliResult r = Quiver("convert " + ShellQuote(cut_.string()) + " " + ShellQuote(out.string()) + " --to " + to);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("message 3: body of 4000 bytes runs past the end of the input"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << "a failed convert left " << out;
    EXPECT_EQ(Leftovers({"good.arrows", "cut.arrows"}), std::vector<std::string>{});
  }
  // An existing target keeps what it held.
  const fs::path existing = dir_ / "existing.arrows";
  WriteText(existing, "previous content");
  CliResult r = Quiver("convert " + ShellQuote(cut_.string()) + " " + ShellQuote(existing.string()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(ReadText(existing), "previous content");
  // On success the target appears (replacing the old content), and reads.
  r = Quiver("convert " + ShellQuote(good_.string()) + " " + ShellQuote(existing.string()) + " --to file");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadText(existing).substr(0, 6), "ARROW1");
  r = Quiver("stats " + ShellQuote(existing.string()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Leftovers({"good.arrows", "cut.arrows", "existing.arrows"}), std::vector<std::string>{});
}

TEST_F(CliHygieneTest, FailedConvertToStdoutHasNoEndOfStreamMarker) {
  MakeStreams();
  CliResult r = Quiver("convert " + ShellQuote(cut_.string()) + " -");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ASSERT_GE(r.out.size(), 8u);
  EXPECT_NE(r.out.substr(r.out.size() - 8), std::string(kEos, 8)) << "a failed write ended with the marker";
  // The same command on the whole input ends with it.
  r = Quiver("convert " + ShellQuote(good_.string()) + " -");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_GE(r.out.size(), 8u);
  EXPECT_EQ(r.out.substr(r.out.size() - 8), std::string(kEos, 8));
}

TEST_F(CliHygieneTest, FailedJoinGenAndIntegrationLeaveNoFile) {
  MakeStreams();
  const fs::path out = dir_ / "out.arrows";
  // join: the probe side is cut off after the output was opened.
  CliResult r = Quiver("join --build " + ShellQuote(good_.string()) + " --probe " + ShellQuote(cut_.string()) +
                       " --on x=x -o " + ShellQuote(out.string()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("runs past the end of the input"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  // gen: the schema is written, then the first batch runs out of memory.
  r = Quiver("--memory-limit 300000 gen bigint-seq --rows 2000000 --max-bytes-per-batch 1000000 -o " +
             ShellQuote(out.string()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("OutOfMemory"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  // integration STREAM_TO_FILE of a cut stream.
  r = Quiver("integration --mode STREAM_TO_FILE --stream " + ShellQuote(cut_.string()) + " --arrow " +
             ShellQuote(out.string()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(Leftovers({"good.arrows", "cut.arrows"}), std::vector<std::string>{});
  // ...and they do write on success.
  r = Quiver("join --build " + ShellQuote(good_.string()) + " --probe " + ShellQuote(good_.string()) + " --on x=x -o " +
             ShellQuote(out.string()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(out));
  EXPECT_EQ(Leftovers({"good.arrows", "cut.arrows", "out.arrows"}), std::vector<std::string>{});
}

// A read error after the first message names the input too (it used to
// name it only for errors of the open).
TEST_F(CliHygieneTest, ReadErrorsAfterTheFirstMessageNameTheInput) {
  MakeStreams();
  for (const char* cmd : {"cat", "stats"}) {
    CliResult r = Quiver(std::string(cmd) + " " + ShellQuote(cut_.string()));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("quiver: error: Invalid: '" + cut_.string() + "': message 3: body of 4000 bytes runs past"),
              std::string::npos)
        << cmd << ": " << r.err;
  }
}

// gen tpch refuses a bad scale before it creates anything, and a run that
// fails part way removes the tables it had written.
TEST_F(CliHygieneTest, FailedGenTpchLeavesNoTables) {
  const fs::path out = dir_ / "tpch";
  CliResult r = Quiver("gen tpch --scale -1 -o " + ShellQuote(out.string()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("scale"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  r = Quiver("--memory-limit 200000 gen tpch --scale 0.01 -o " + ShellQuote(out.string()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("OutOfMemory"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out)) << "left: " << (fs::exists(out) ? fs::directory_iterator(out)->path().string() : "");
  // An existing directory stays, without the tables.
  fs::create_directories(out);
  WriteText(out / "notes.txt", "mine");
  r = Quiver("--memory-limit 200000 gen tpch --scale 0.01 -o " + ShellQuote(out.string()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(out)) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"notes.txt"});
}

// Usage errors are one "quiver: error:" line and exit 2, like other errors
// (not the option parser's own codes); ports past 65535 and negative row
// counts are usage errors.
TEST_F(CliHygieneTest, UsageErrorsAreOneLineAndExitTwo) {
  for (const char* args :
       {"cat x --format xml", "cat", "cat x --limit abc", "cat x --nope", "nope", "serve --port 99999 --token t",
        "serve --port 65536 --token t", "gen bigint-seq --rows -5 -o x"}) {
    CliResult r = Quiver(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("quiver: error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
  CliResult r = Quiver("cat --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--format"), std::string::npos);
}

// ---- item 6 ------------------------------------------------------------------

TEST_F(CliHygieneTest, VersionNamesBuildCodecsAndAllocators) {
  CliResult r = Quiver("--version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("quiver 0.1.0 (", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(" build"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("codecs: lz4 1."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", zstd 1."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("jemalloc 5."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mimalloc "), std::string::npos) << r.out;
}

TEST_F(CliHygieneTest, NoSubcommandPrintsTheSubcommandList) {
  CliResult r = Quiver("");
  EXPECT_EQ(r.exit_code, 2) << "a missing subcommand is a usage error";
  for (const char* name : {"Subcommands:", "cat", "convert", "integration", "join", "--version"}) {
    EXPECT_NE(r.err.find(name), std::string::npos) << name << " missing from:\n" << r.err;
  }
  EXPECT_NE(r.err.find("quiver: error: a subcommand is required"), std::string::npos) << r.err;
}

TEST_F(CliHygieneTest, InputThatIsNotArrowIpcIsNamed) {
  struct Case {
    std::string file, bytes, looks;
  };
  const std::vector<Case> cases = {
      {"data.csv", "Row ID,Order ID,Order Date\n1,CA-2016-152156,11/8/2016\n", "text (CSV, JSON, ...)"},
      {"data.parquet", std::string("PAR1\x15\x04\x15\x10\x15\x14L\x15\x02\x15\x00", 16) + "PAR1",
       "Parquet (PAR1 magic)"},
      {"data.gz", std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x4b\x4c\x4a\x06\x00", 15),
       "gzip-compressed data"},
      {"data.feather", std::string("FEA1\x00\x00\x00\x00\x01\x02\x03\x04", 12) + "FEA1",
       "a Feather V1 file (FEA1 magic)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    const fs::path p = dir_ / c.file;
    WriteText(p, c.bytes);
    const std::string expected = "not Arrow IPC data (it looks like " + c.looks + ")";
    CliResult r = Quiver("cat " + ShellQuote(p.string()));
    if (c.file == "data.csv") {
      // A CSV file is a table now (issue 36 §2): its rows.
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_NE(r.out.find("CA-2016-152156"), std::string::npos) << r.out;
    } else if (c.file == "data.parquet") {
      // A Parquet file is read by the Parquet reader (issue 36 §1): this
      // one's footer is cut short, and the error names the file.
      EXPECT_EQ(r.exit_code, 1);
      EXPECT_NE(r.err.find("data.parquet: footer of"), std::string::npos) << r.err;
    } else {
      EXPECT_EQ(r.exit_code, 1);
      EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    }
    EXPECT_EQ(r.err.find("exceeds the limit"), std::string::npos) << r.err;
    // Through stdin (read sequentially, as Arrow IPC only) every one is named.
    r = Quiver("schema -", p);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  }
  // A legacy (pre-0.15) stream, without continuation markers, still reads.
  const fs::path legacy = IntegrationDir() / "0.14.1" / "generated_primitive.stream";
  ASSERT_NE(ReadText(legacy).substr(0, 4), std::string("\xff\xff\xff\xff", 4)) << "not a legacy stream";
  CliResult r = Quiver("stats " + ShellQuote(legacy.string()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Quiver("stats -", legacy);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace quiver::cross_test

// tests/cross_test_support.h — shared pieces of the cross-layer tests:
// locating the shared test data, listing files for parameterised suites,
// making valid gtest names from paths, and reading / writing whole IPC
// tables through quiver's reader and writer.
//
// Header-only so that each test executable (quiver_cross_tests,
// quiver_fuzz_corpus_tests) compiles its own copy.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/columnar/compare.h"
#include "quiver/columnar/validate.h"
#include "quiver/ipc/io.h"
#include "quiver/ipc/reader.h"
#include "quiver/ipc/writer.h"
#include "quiver/memory/buffer.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/testing/shared_data.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::cross_test {

namespace fs = std::filesystem;

inline fs::path SharedDir() { return ::quiver::testing::SharedDataDir(); }

/// A gtest fixture with a scratch folder per test:
/// $TMPDIR/<prefix>_<pid>_<test name>, emptied before the test and removed
/// after it (errors of the removal ignored). `dir_` is the folder.
class ScratchDirTest : public ::testing::Test {
 protected:
  explicit ScratchDirTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = fs::temp_directory_path() / (prefix_ + "_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  fs::path dir_;

 private:
  std::string prefix_;
};

/// `s` as one single-quoted POSIX shell word (for std::system command lines).
inline std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out.push_back(c);
  }
  return out + "'";
}

/// What one run of the quiver binary gave: its exit status (-1 when it did
/// not exit normally), stdout and stderr.
struct CliResult {
  int exit_code = -1;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

/// The whole contents of `p` ("" when it cannot be read).
inline std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs the shell command `cmd` (already quoted) with stdout and stderr
/// captured in `scratch`/run.stdout and run.stderr (removed afterwards),
/// stdin from `in` when given, else from /dev/null.
inline CliResult RunCapturingOutput(const std::string& cmd, const fs::path& scratch, const fs::path& in = {}) {
  const fs::path out = scratch / "run.stdout", err = scratch / "run.stderr";
  const std::string full = cmd + " >" + ShellQuote(out.string()) + " 2>" + ShellQuote(err.string()) + " <" +
                           ShellQuote(in.empty() ? std::string("/dev/null") : in.string());
  CliResult r;
  const int rc = std::system(full.c_str());
  r.exit_code = (rc != -1 && WIFEXITED(rc)) ? WEXITSTATUS(rc) : -1;
  r.out = ReadText(out);
  r.err = ReadText(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

inline fs::path ArrowTestingData() { return SharedDir() / "arrow-testing" / "data"; }
inline fs::path IntegrationDir() { return ArrowTestingData() / "arrow-ipc-stream" / "integration"; }
inline fs::path RealWorldDir() { return SharedDir() / "data" / "real-world"; }
inline fs::path PeerSamplesDir() { return SharedDir() / "data" / "peer-samples"; }

/// Regular files directly in `dir` (not recursive) that `keep` accepts,
/// sorted by name. An absent folder gives an empty list (the suite then
/// reports that it found nothing, see GTEST_ALLOW_UNINSTANTIATED below).
inline std::vector<fs::path> ListFiles(const fs::path& dir, const std::function<bool(const fs::path&)>& keep = {}) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file()) continue;
    if (keep && !keep(entry.path())) continue;
    out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Sub-folders directly in `dir`, sorted by name.
inline std::vector<fs::path> ListDirs(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory()) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// A valid gtest parameter name: every character that is not [A-Za-z0-9]
/// becomes '_', runs of '_' collapse, no leading/trailing '_'.
inline std::string TestNameOf(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out.push_back(c);
    } else if (!out.empty() && out.back() != '_') {
      out.push_back('_');
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  if (out.empty()) out = "unnamed";
  return out;
}

inline bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

/// Everything a reader produced from one input.
struct IpcTable {
  SchemaPtr schema;
  std::vector<RecordBatchPtr> batches;
  ipc::IpcFormat format = ipc::IpcFormat::kStream;
  std::string metadata_version;
  int64_t num_dictionary_batches = 0;
  /// Codec of the last record batch read (kNone when there was none).
  CompressionType last_codec = CompressionType::kNone;
  int64_t num_rows() const {
    int64_t n = 0;
    for (const auto& b : batches) n += b->num_rows;
    return n;
  }
};

/// Reads every batch of `reader` (last_codec needs the reader opened with
/// ReadOptions::collect_body_stats; kNone otherwise).
inline Result<IpcTable> DrainReader(ipc::RecordBatchReader* reader) {
  IpcTable t;
  t.schema = reader->schema();
  t.format = reader->format();
  QUIVER_ASSIGN_OR_RETURN(t.batches, ipc::ReadAllBatches(reader));
  t.metadata_version = reader->metadata_version();
  t.num_dictionary_batches = reader->num_dictionary_batches();
  if (!t.batches.empty()) t.last_codec = reader->last_batch_stats().codec;
  return t;
}

/// `options` with body statistics on (IpcTable::last_codec comes from them).
inline ipc::ReadOptions WithBodyStats(ipc::ReadOptions options) {
  options.collect_body_stats = true;
  return options;
}

/// Reads every batch from a reader opened over `bytes` (body statistics on).
inline Result<IpcTable> ReadIpc(std::shared_ptr<Buffer> bytes, const ipc::ReadOptions& options) {
  QUIVER_ASSIGN_OR_RETURN(auto reader, ipc::RecordBatchReader::Open(std::move(bytes), WithBodyStats(options)));
  return DrainReader(reader.get());
}

/// Reads a stream-format file sequentially (RecordBatchReader::OpenStream;
/// body statistics on).
inline Result<IpcTable> ReadIpcSequential(const fs::path& path, const ipc::ReadOptions& options) {
  QUIVER_ASSIGN_OR_RETURN(auto input, ipc::OpenInputStream(path.string()));
  QUIVER_ASSIGN_OR_RETURN(auto reader, ipc::RecordBatchReader::OpenStream(std::move(input), WithBodyStats(options)));
  return DrainReader(reader.get());
}

/// Maps `path` and reads it with full validation from `pool`.
inline Result<IpcTable> ReadIpcPath(const fs::path& path, MemoryPool* pool) {
  QUIVER_ASSIGN_OR_RETURN(auto bytes, ipc::MapFile(path.string()));
  ipc::ReadOptions ro;
  ro.pool = pool;
  ro.validation = ValidationLevel::kFull;
  auto t = ReadIpc(std::move(bytes), ro);
  if (!t.ok()) return t.status().WithContext(path.filename().string());
  return t;
}

/// A read-only buffer owning the bytes of a BufferOutputStream (heap
/// memory from operator new: at least 16-byte aligned).
inline std::shared_ptr<Buffer> TakeBytes(ipc::BufferOutputStream* sink) {
  auto owner = std::make_shared<std::vector<uint8_t>>(std::move(sink->mutable_bytes()));
  const uint8_t* data = owner->data();
  const auto size = static_cast<int64_t>(owner->size());
  return Buffer::Wrap(data, size, std::move(owner));
}

/// Writes a table with quiver's writer into memory.
inline Result<std::shared_ptr<Buffer>> WriteIpc(const SchemaPtr& schema, const std::vector<RecordBatchPtr>& batches,
                                                ipc::IpcFormat format, CompressionType compression, MemoryPool* pool) {
  ipc::BufferOutputStream sink;
  ipc::WriteOptions wo;
  wo.pool = pool;
  wo.compression = compression;
  QUIVER_RETURN_NOT_OK(ipc::WriteTable(&sink, schema, batches, format, wo));
  return TakeBytes(&sink);
}

/// Schemas (with `options.check_metadata`), batch counts, then each batch.
inline Status CompareTables(const SchemaPtr& expected_schema, const std::vector<RecordBatchPtr>& expected_batches,
                            const IpcTable& actual, const CompareOptions& options) {
  QUIVER_RETURN_NOT_OK_CTX(CompareSchemas(*expected_schema, *actual.schema, options), "schema");
  if (expected_batches.size() != actual.batches.size()) {
    return Status::Invalid("batch count mismatch: expected " + std::to_string(expected_batches.size()) + ", actual " +
                           std::to_string(actual.batches.size()));
  }
  for (size_t i = 0; i < expected_batches.size(); ++i) {
    QUIVER_RETURN_NOT_OK_CTX(CompareBatches(*expected_batches[i], *actual.batches[i], options),
                             "batch " + std::to_string(i));
  }
  return Status::OK();
}

inline CompareOptions ExactCompare(bool check_metadata = true) {
  CompareOptions o;
  o.float_abs_tolerance = 0;
  o.float_rel_tolerance = 0;
  o.check_metadata = check_metadata;
  return o;
}

inline std::string_view CodecLabel(CompressionType c) {
  switch (c) {
    case CompressionType::kNone: return "none";
    case CompressionType::kLz4Frame: return "lz4";
    case CompressionType::kZstd: return "zstd";
  }
  return "?";
}

}  // namespace quiver::cross_test

// quiver CLI — shared declarations of the subcommands. The CLI is a thin
// shell over the library (design notes): argument parsing, output
// formatting, exit codes. Data goes to stdout, diagnostics to stderr.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/byte_size.h"  // FormatBytes, ParseBytes
#include "quiver/base/result.h"
#include "quiver/columnar/data_type.h"
#include "quiver/columnar/row_text.h"  // RowTextWriter, CsvField, UniqueJsonKeys
#include "quiver/memory/memory_pool.h"

namespace quiver::cli {

/// Process-wide settings from the global options, and the root pool every
/// subcommand charges its memory to.
struct Context {
  std::string allocator_name;  // empty = QUIVER_ALLOCATOR or system
  int64_t memory_limit_bytes = -1;
  std::shared_ptr<MemoryPool> root;

  /// Set by UsageError: main() then exits 2, as for the option parser's own
  /// usage errors (one convention for every subcommand).
  bool usage_error = false;
  /// Set by a command that SIGINT / SIGTERM stopped (interrupt.h): main()
  /// then prints one line, "interrupted", and exits 130.
  bool interrupted = false;

  /// Makes `root` from the options (once). Errors name the bad option.
  Status Init();
  /// A usage error found after parsing (a missing token, options that do not
  /// go together): Invalid with `message`, and the process exits 2.
  Status UsageError(std::string message);
  /// A child pool of the root for one stage, e.g. "read".
  std::shared_ptr<MemoryPool> Child(const std::string& name);
};

/// The one convention for byte-size options of every subcommand: a CLI11
/// transform accepting ParseBytes text ("8MiB", "1G", "1.5k", "64 M",
/// "1048576") that hands the option its count in bytes (as decimal text, so
/// any integer option type takes it). A plain integer passes unchanged, so
/// 0 and negative values keep the meaning an option gives them ("none").
/// A bad value is a usage error (exit 2) naming the text.
CLI::Validator ByteSize();

/// A CLI11 check that `parse(text)` (a quiver Parse* function returning
/// Result) accepts the value: a bad value is a usage error (exit 2) with the
/// parser's message, found before anything runs.
template <typename Parse>
CLI::Validator ParsedBy(Parse parse, std::string type_name) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        auto r = parse(text);
        return r.ok() ? std::string() : r.status().message();
      },
      std::move(type_name));
}

/// The path of the running quiver executable (/proc/self/exe), for the
/// subcommands that start quiver again as a child (bench fetch, bench serve,
/// demo); "quiver" (looked up in PATH) when it cannot be read.
std::string SelfExecutable();

/// The end of a benchmark run with --check: Invalid "<what> --check: N
/// check(s) failed; first: ..." when `failures` is not empty, else OK after
/// "<what> --check: all checks passed (<passed_note>)" on stderr.
Status CheckResult(const std::string& what, const std::vector<std::string>& failures, const std::string& passed_note);

/// A subcommand's action: returns the process exit status or an error.
using Action = std::function<Status()>;

void AddCat(CLI::App& app, Context& ctx, Action* action);
void AddSchema(CLI::App& app, Context& ctx, Action* action);
void AddStats(CLI::App& app, Context& ctx, Action* action);
void AddConvert(CLI::App& app, Context& ctx, Action* action);
void AddGen(CLI::App& app, Context& ctx, Action* action);
void AddIntegration(CLI::App& app, Context& ctx, Action* action, int* exit_code);
void AddDemo(CLI::App& app, Context& ctx, Action* action);
void AddBench(CLI::App& app, Context& ctx, Action* action, int* exit_code);
void AddBenchCompress(CLI::App* bench, Context& ctx, Action* action, int* exit_code);
// --- bench fetch (issue 8) ---: bench fetch and the hidden bench fetch-client (cmd_bench_fetch.cc)
void AddBenchFetch(CLI::App* bench, Context& ctx, Action* action);
void AddBenchTpch(CLI::App* bench, Context& ctx, Action* action);           // cmd_bench_queries.cc (issue 17)
void AddBenchTpcds(CLI::App* bench, Context& ctx, Action* action);          // cmd_bench_queries.cc (issue 37)
void AddJoin(CLI::App& app, Context& ctx, Action* action, int* exit_code);  // join, bench join
// --- result server ---
void AddServe(CLI::App& app, Context& ctx, Action* action);
// --- end result server ---

/// `quiver --version`: "quiver <version> (<build type> build)" and the codec
/// and allocator library versions, one per line, without a final newline
/// (tools/quiver/cmd_version.cc).
std::string VersionText();
// --- fetch client ---
void AddQuery(CLI::App& app, Context& ctx, Action* action, int* exit_code);  // quiver query (tools/quiver/cmd_query.cc)
// --- end fetch client ---

// --- sql ---
void AddSql(CLI::App& app, Context& ctx, Action* action);  // sql
/// `quiver functions`: the SQL function catalogue (tools/quiver/cmd_functions.cc).
void AddFunctions(CLI::App& app, Context& ctx, Action* action);
// --- sql ---

}  // namespace quiver::cli

// quiver sql: run one SQL statement in-process over Arrow IPC tables
// (--table NAME=PATH, --tables DIR) and/or generated TPC-H tables (--tpch
// SCALE), and print the result as the aligned table `quiver cat` and `quiver
// query` print, CSV or JSON lines, or write it as an Arrow IPC file (-o), or
// as Parquet (-o FILE.parquet).
// SIGINT / SIGTERM cancel the statement; its spill directory, the -o
// temporary file and generated TPC-H data are removed, "interrupted" is
// printed and the exit status is 130 (interrupt.h).
#include <unistd.h>

#include <atomic>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "csv_output.h"
#include "interrupt.h"
#include "parquet_output.h"
#include "quiver/bench/measure.h"
#include "quiver/cli.h"
#include "quiver/compression/codec.h"
#include "quiver/ipc/io.h"
#include "quiver/ipc/writer.h"
#include "quiver/memory/disk_budget.h"
#include "quiver/memory/spill_directory.h"
#include "quiver/sql/engine.h"
#include "quiver/sql/execution/join_filter.h"
#include "quiver/sql/file_scan.h"
#include "quiver/sql/file_tables.h"
#include "quiver/sql/tpch_queries.h"
#include "quiver/sql/tpch_tables.h"
#include "table_catalog.h"

namespace quiver::cli {
namespace {

struct SqlOpts {
  std::vector<std::string> tables, table_dirs;
  double tpch = 0;
  std::string tpch_dir, sql, format = "table", memory_mode = "on-heap", output, compression = "none",
                             ipc_format = "file";
  int64_t statement_limit = -1;
  int64_t spill_limit = -1;
  int tpch_query = 0;
  int threads = 0;
  int repeat = 1;
  bool print_sql = false, no_spill = false, no_page_index = false, no_join_filters = false, timing = false;
  std::string spill_directory, dialect = "postgres";
  ParquetOutputOpts parquet;
  S3StoreOptions s3;
};

Status RunSql(Context& ctx, const SqlOpts& opts, InterruptGuard& guard);
Status RunStatement(Context& ctx, const SqlOpts& o, InterruptGuard& guard, join::MemoryMode mode);

}  // namespace

void AddSql(CLI::App& app, Context& ctx, Action* action) {
  auto* cmd = app.add_subcommand("sql", "run one SQL statement over Arrow IPC tables or generated TPC-H tables");
  using Opts = SqlOpts;
  auto o = std::make_shared<Opts>();
  cmd->add_option("SQL", o->sql, "the statement (SELECT ..., SHOW TABLES, DESCRIBE t; '-' = read it from stdin)");
  cmd->add_option("--tpch-query", o->tpch_query, "run TPC-H query N (1..22, validation parameters) instead of SQL")
      ->check(CLI::Range(1, sql::kNumTpchQueries));
  cmd->add_flag("--print-sql", o->print_sql, "print the statement (e.g. of --tpch-query) and exit");
  // One value per --table (CLI11 lets a vector option swallow the SQL text otherwise).
  cmd->add_option("--table", o->tables,
                  "NAME=PATH: an IPC file, stream or directory of IPC files, a Parquet or CSV file, or "
                  "s3://BUCKET/KEY[.parquet|.csv], s3://BUCKET/PREFIX/*.parquet (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--tables", o->table_dirs,
                  "DIR: register every *.arrow, *.arrows, *.parquet and *.csv[.gz|.zst] file of DIR under its stem "
                  "(e.g. a `quiver gen tpch` directory; repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--tpch", o->tpch, "also generate the TPC-H tables at this scale factor (e.g. 0.01)");
  cmd->add_option("--tpch-dir", o->tpch_dir,
                  "where to write the TPC-H files (default: a temporary directory, removed)");
  cmd->add_option("--format", o->format, "stdout text: table|pipe|csv|jsonl (default table)")
      ->check(CLI::IsMember({"table", "pipe", "csv", "jsonl"}));
  cmd->add_option("-o,--output", o->output,
                  "write the result as Arrow IPC (Parquet for a path ending in .parquet, CSV for .csv, .csv.gz or "
                  ".csv.zst) to this path instead of printing it (atomically: temp file + rename; '-' = stdout)");
  cmd->add_option("--compression", o->compression, "IPC body compression of -o: none|lz4|zstd (default none)")
      ->check(ParsedBy(ParseCompressionType, "CODEC"));
  cmd->add_option("--ipc-format", o->ipc_format, "IPC format of -o: file|stream (default file)")
      ->check(CLI::IsMember({"file", "stream"}));
  AddParquetOutputOptions(cmd, &o->parquet);
  cmd->add_option("--memory-mode", o->memory_mode, "join relations on-heap|off-heap (default on-heap)")
      ->check(ParsedBy(join::ParseMemoryMode, "MODE"));
  cmd->add_option("--threads", o->threads,
                  "workers per pipeline (default 0 = the machine's hardware threads; 1 = one thread)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--spill-directory", o->spill_directory,
                  "where operators past the memory limit spill (default $TMPDIR or /tmp; a directory per "
                  "statement, removed at its end)");
  cmd->add_option("--dialect", o->dialect,
                  "postgres|spark: integer '/', 'div' and the default NULL order (docs/sql.md; default postgres)")
      ->check(CLI::IsMember({"postgres", "spark"}));
  AddS3StoreOptions(cmd, &o->s3, /*for_chunks=*/false);
  cmd->add_flag("--no-spill", o->no_spill, "fail with OutOfMemory at the memory limit instead of spilling");
  cmd->add_flag("--no-page-index", o->no_page_index,
                "prune Parquet row groups by their statistics only, not pages by the page index");
  cmd->add_flag("--no-join-filters", o->no_join_filters,
                "scan every probe row: no join filter pushdown (a hash join's build keys filtering its probe side's "
                "scan)");
  cmd->add_flag("--timing", o->timing,
                "print the statement's wall and CPU time (user + system, every thread) to stderr: from opening its "
                "tables to the last row out, without the process's start-up");
  cmd->add_option("--repeat", o->repeat,
                  "run the statement N times in this process (tables opened anew each time), printing its rows "
                  "each time and, with --timing, each run's time: the runs after the first show it without the "
                  "process's first touch of its memory (default 1; not with -o)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--statement-memory-limit", o->statement_limit,
                  "byte limit of the statement's pool (e.g. 1GiB; default none)")
      ->transform(ByteSize());
  cmd->add_option("--spill-limit", o->spill_limit,
                  "bytes of spill files the statement may hold on disk; past it it fails with SQLSTATE 53100 "
                  "(e.g. 10GiB; default -1 = no limit)")
      ->transform(ByteSize());
  cmd->callback([&ctx, o, action] {
    if (o->tpch_query > 0) o->sql = std::string(sql::TpchQueries()[o->tpch_query - 1].sql);
    if (o->sql.empty()) throw CLI::RequiredError("SQL (or --tpch-query)");
    if (o->sql == "-") o->sql.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    *action = [&ctx, o]() -> Status {
      if (o->print_sql) {
        std::printf("%s\n", o->sql.c_str());
        return Status::OK();
      }
      if (o->output.empty() && o->compression != "none") {
        return ctx.UsageError("sql: --compression applies to -o FILE only");
      }
      if (o->spill_limit < -1) return ctx.UsageError("sql: --spill-limit takes bytes >= 0, or -1 (no limit)");
      if (o->repeat > 1 && !o->output.empty()) return ctx.UsageError("sql: --repeat writes no -o FILE");
      QUIVER_ASSIGN_OR_RETURN(auto guard, InterruptGuard::Install(kInterruptGraceMs));
      Status st = RunSql(ctx, *o, *guard);
      if (guard->interrupted()) ctx.interrupted = true;
      return st;
    };
  });
}

namespace {

Status RunSql(Context& ctx, const SqlOpts& o, InterruptGuard& guard) {
  QUIVER_ASSIGN_OR_RETURN(join::MemoryMode mode, join::ParseMemoryMode(o.memory_mode));
  // Spill directories of quiver processes that died without removing them.
  const SpillSweepReport swept = SweepDeadSpillDirectories(o.spill_directory);
  if (swept.directories > 0) {
    std::fprintf(stderr, "quiver sql: removed %lld spill directories (%s) of dead quiver processes\n",
                 static_cast<long long>(swept.directories), FormatBytes(swept.bytes).c_str());
  }
  if (const SpillSweepReport tpch = SweepDeadTpchDirectories(); tpch.directories > 0) {
    std::fprintf(stderr, "quiver sql: removed %lld generated TPC-H directories (%s) of dead quiver processes\n",
                 static_cast<long long>(tpch.directories), FormatBytes(tpch.bytes).c_str());
  }
  // Should the statement not unwind in time after a signal: what it wrote.
  guard.AddCleanup([root = o.spill_directory] { SweepDeadSpillDirectories(root, /*only_own=*/true); });
  if (o.tpch > 0 && o.tpch_dir.empty()) {
    guard.AddCleanup([dir = TpchTempDirectory("quiver-tpch-")] {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    });
  }
  if (!o.output.empty() && o.output != "-") guard.AddCleanup([out = o.output] { RemoveOwnTemporaryOutput(out); });
  for (int run = 1; run <= o.repeat; ++run) {
    const bench::Clock::time_point wall_start = bench::Clock::now();
    const double cpu_start_s = bench::ProcessCpuSeconds();
    QUIVER_RETURN_NOT_OK(RunStatement(ctx, o, guard, mode));
    if (o.timing) {
      const std::string which =
          o.repeat > 1 ? " (run " + std::to_string(run) + " of " + std::to_string(o.repeat) + ")" : "";
      std::fprintf(stderr,
                   "quiver sql: timing%s: wall %.1f ms, cpu %.1f ms (from opening the tables to the last row out)\n",
                   which.c_str(), 1000 * bench::Seconds(wall_start, bench::Clock::now()),
                   1000 * (bench::ProcessCpuSeconds() - cpu_start_s));
    }
    if (guard.interrupted()) break;
  }
  return Status::OK();
}

// The statement of RunSql: its tables opened, run, its rows written out.
Status RunStatement(Context& ctx, const SqlOpts& o, InterruptGuard& guard, join::MemoryMode mode) {
  QUIVER_ASSIGN_OR_RETURN(auto tables,
                          OpenTableCatalog(ctx, o.tables, o.table_dirs, o.tpch, o.tpch_dir, "quiver-tpch-", o.s3));
  if (!tables->tpch_summary.empty()) std::fprintf(stderr, "%s\n", tables->tpch_summary.c_str());
  const std::shared_ptr<sql::Catalog>& catalog = tables->catalog;
  if (o.no_page_index) {
    for (const sql::TableInfo& t : catalog->ListTables()) {
      if (t.file_source) t.file_source->UsePageIndex(false);
    }
  }
  sql::Engine engine(catalog);
  auto pool = ctx.Child("sql");
  auto peaks = std::make_shared<bench::PeakByPath>();  // the statement's operators, by pool
  pool->AddListener(peaks);
  sql::ExecuteOptions eo;
  eo.pool = pool.get();
  eo.memory_mode = mode;
  eo.memory_limit_bytes = o.statement_limit;
  eo.threads = o.threads;
  eo.spill = !o.no_spill;
  eo.spill_directory = o.spill_directory;
  eo.cancel = guard.flag();
  if (o.spill_limit >= 0) {
    DiskBudgetOptions d;
    d.name = "the statement's spill files";
    d.limit_bytes = o.spill_limit;
    d.limit_name = "--spill-limit";
    QUIVER_ASSIGN_OR_RETURN(eo.disk_budget, DiskBudget::MakeRoot(d));
  }
  eo.file_tables = true;  // the user's own files, with the user's rights
  eo.path_tables = std::make_shared<sql::PathTableScans>(/*page_index=*/!o.no_page_index);
  eo.s3_files = tables->s3_files;
  QUIVER_ASSIGN_OR_RETURN(eo.dialect, sql::ParseSqlDialect(o.dialect));
  eo.spilled_bytes = std::make_shared<std::atomic<int64_t>>(0);
  eo.spilled_files = std::make_shared<std::atomic<int64_t>>(0);
  eo.join_filters = !o.no_join_filters;
  eo.join_filter_counters = std::make_shared<sql::JoinFilterCounters>();
  auto notes = [&eo]() -> std::string {
    std::string s;
    const sql::JoinFilterCounters& jf = *eo.join_filter_counters;
    if (jf.published.load() > 0)
      s = "; join filters " + std::to_string(jf.published.load()) + ": " + std::to_string(jf.rows_dropped.load()) +
          " of " + std::to_string(jf.rows_checked.load()) + " scanned rows dropped (" +
          std::to_string(jf.batches_dropped.load()) + " batches whole)";
    if (eo.spilled_files->load() == 0) return s;
    return s + "; spilled " + FormatBytes(eo.spilled_bytes->load()) + " in " +
           std::to_string(eo.spilled_files->load()) + " files";
  };
  QUIVER_ASSIGN_OR_RETURN(auto stream, engine.Execute(o.sql, eo));
  int64_t rows = 0;
  if (IsCsvOutputPath(o.output)) {
    // The result as CSV text (gzip / zstd by the extension), published only
    // when the whole result is written.
    if (o.compression != "none")
      return ctx.UsageError("sql: --compression is IPC's; a CSV output is compressed by its name (.csv.gz, .csv.zst)");
    auto write_pool = ctx.Child("write");
    QUIVER_ASSIGN_OR_RETURN(auto stats,
                            WriteCsvOutput(
                                o.output, stream->schema(), [&] { return stream->Next(); }, write_pool.get()));
    stream.reset();
    std::fprintf(stderr, "%s; statement pool peak %s%s%s\n", CsvOutputSummary(o.output, stats).c_str(),
                 FormatBytes(pool->peak_bytes()).c_str(), notes().c_str(),
                 S3FilesSummary(tables->s3_files.get()).c_str());
    return Status::OK();
  }
  if (!o.output.empty() && IsParquetPath(o.output)) {
    // The result as Parquet, published only when the whole file is written.
    if (o.compression != "none") return ctx.UsageError("sql: --compression is IPC's; use --parquet-compression");
    auto write_pool = ctx.Child("write");
    QUIVER_ASSIGN_OR_RETURN(auto wo, ToWriterOptions(o.parquet, write_pool.get()));
    QUIVER_ASSIGN_OR_RETURN(auto out, ipc::OpenOutputFile(o.output));
    StreamSink sink(out.get());
    QUIVER_ASSIGN_OR_RETURN(auto writer, parquet::FileWriter::Make(stream->schema(), &sink, wo));
    while (true) {
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, stream->Next());
      if (!b) break;
      QUIVER_RETURN_NOT_OK(writer->WriteBatch(b));
      rows += b->num_rows;
    }
    QUIVER_RETURN_NOT_OK(writer->Close());
    QUIVER_RETURN_NOT_OK(out->Commit());
    stream.reset();
    std::fprintf(stderr, "%lld rows written to %s (Parquet, %lld row groups, %s); statement pool peak %s%s\n",
                 static_cast<long long>(rows), o.output.c_str(), static_cast<long long>(writer->stats().num_row_groups),
                 FormatBytes(writer->stats().file_bytes).c_str(), FormatBytes(pool->peak_bytes()).c_str(),
                 notes().c_str());
    return Status::OK();
  }
  if (!o.output.empty()) {
    // The result as Arrow IPC, published only when the whole result is written.
    QUIVER_ASSIGN_OR_RETURN(CompressionType codec, ParseCompressionType(o.compression));
    auto write_pool = ctx.Child("write");
    QUIVER_ASSIGN_OR_RETURN(auto sink, ipc::OpenOutputFile(o.output));
    ipc::WriteOptions wo;
    wo.pool = write_pool.get();
    wo.compression = codec;
    QUIVER_ASSIGN_OR_RETURN(
        auto writer,
        ipc::RecordBatchWriter::Make(sink.get(), stream->schema(),
                                     o.ipc_format == "file" ? ipc::IpcFormat::kFile : ipc::IpcFormat::kStream, wo));
    while (true) {
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, stream->Next());
      if (!b) break;
      QUIVER_RETURN_NOT_OK(writer->WriteBatch(*b));
      rows += b->num_rows;
    }
    QUIVER_RETURN_NOT_OK(writer->Close());
    QUIVER_RETURN_NOT_OK(sink->Commit());
    stream.reset();
    std::fprintf(stderr, "%lld rows written to %s; statement pool peak %s%s%s\n", static_cast<long long>(rows),
                 o.output.c_str(), FormatBytes(pool->peak_bytes()).c_str(), notes().c_str(),
                 S3FilesSummary(tables->s3_files.get()).c_str());
    return Status::OK();
  }
  // --format table is the aligned table of `quiver cat` and `quiver query`.
  QUIVER_ASSIGN_OR_RETURN(const RowTextFormat format, ParseRowTextFormat(o.format));
  RowTextWriter text(format, stdout);
  text.WriteHeader(*stream->schema());
  while (true) {
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, stream->Next());
    if (!b) break;
    text.WriteRows(*b);
    rows += b->num_rows;
  }
  std::fflush(stdout);
  std::string by_operator;
  for (const char* op : {"scan", "build", "probe", "aggregate", "sort"}) {
    const int64_t p = peaks->Peak(std::string("/sql-statement/") + op);
    if (p > 0) by_operator += std::string(by_operator.empty() ? "" : ", ") + op + " " + FormatBytes(p);
  }
  stream.reset();
  std::fprintf(stderr, "%lld rows; statement pool peak %s (%s)%s%s\n", static_cast<long long>(rows),
               FormatBytes(pool->peak_bytes()).c_str(), by_operator.empty() ? "nothing allocated" : by_operator.c_str(),
               notes().c_str(),
               (FileTablesSummary(*catalog, eo.path_tables.get()) + S3FilesSummary(tables->s3_files.get())).c_str());
  return Status::OK();
}

}  // namespace
}  // namespace quiver::cli

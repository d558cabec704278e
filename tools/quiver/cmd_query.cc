// quiver query: the options of the CloudFetch client run
// (quiver/job/query_job.h): SQL on a Databricks SQL-protocol server (quiver
// serve, or a warehouse), rows to stdout as table|csv|jsonl, or to an Arrow
// IPC file written atomically (-o FILE). Progress on stderr when it is a
// terminal; a summary and a memory report at the end. Ctrl-C (or SIGTERM)
// cancels the operation on the server, frees everything, removes the -o
// temporary file, prints "interrupted" and exits 130 (interrupt.h).
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include "csv_output.h"
#include "interrupt.h"
#include "parquet_output.h"
#include "quiver/cli.h"
#include "quiver/job/query_job.h"

namespace quiver::cli {
namespace {

struct QueryOpts {
  std::string server;
  std::string token;
  std::string ca_cert;
  bool insecure = false;
  std::string dialect;
  std::string sql;
  std::string format = "table";
  std::string output;
  std::string compression = "none";
  std::string window = "64MiB";  // fetch::DownloadOptions' default, chosen by measurement
  int parallel = 8;
  std::string policy = "stream-mmap";
  int retries = 4;
  bool no_lz4_checksums = false;
  int64_t limit = -1;
  bool quiet = false;
  bool hold = false;
  ParquetOutputOpts parquet;
};

Status RunQuery(Context& ctx, const QueryOpts& o, InterruptGuard& guard) {
  job::QueryJobOptions jo;
  jo.server_url = o.server;
  jo.token = o.token;
  if (jo.token.empty()) {
    if (const char* env = std::getenv("QUIVER_TOKEN")) jo.token = env;
  }
  if (jo.token.empty()) return ctx.UsageError("no token: pass --token or set QUIVER_TOKEN");
  jo.ca_cert_path = o.ca_cert;
  jo.insecure = o.insecure;
  if (!o.dialect.empty()) jo.session_configuration["dialect"] = o.dialect;
  if (o.insecure) {
    std::fprintf(stderr,
                 "quiver: WARNING: --insecure: TLS certificates and host names are NOT verified; "
                 "anyone on the path can read the token and the data\n");
  }
  QUIVER_ASSIGN_OR_RETURN(jo.policy, fetch::ParseChunkPolicy(o.policy));
  QUIVER_ASSIGN_OR_RETURN(jo.window_bytes, ParseBytes(o.window));
  if (o.parallel < 1) return Status::Invalid("--parallel must be >= 1");
  jo.parallel = o.parallel;
  if (o.retries < 0) return Status::Invalid("--retries must be >= 0");
  jo.retries = o.retries;
  jo.verify_lz4_checksums = !o.no_lz4_checksums;
  jo.sql = o.sql;
  if (jo.sql == "-") {  // the statement from stdin (texts over the 128 KiB argument limit)
    jo.sql.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  QUIVER_ASSIGN_OR_RETURN(jo.format, ParseRowTextFormat(o.format));
  jo.output_path = o.output;
  if (!o.output.empty() && o.output != "-" && IsParquetPath(o.output)) {
    if (o.compression != "none") return ctx.UsageError("query: --compression is IPC's; use --parquet-compression");
    jo.output_parquet = true;
    // The pool is set by the job (its "write" pool); checked here first.
    QUIVER_ASSIGN_OR_RETURN(jo.parquet, ToWriterOptions(o.parquet, ctx.root.get()));
    jo.parquet.pool = nullptr;
  } else if (IsCsvOutputPath(o.output)) {
    if (o.compression != "none") {
      return ctx.UsageError(
          "query: --compression is IPC's; a CSV output is compressed by its name (.csv.gz, .csv.zst)");
    }
    jo.output_csv = true;
  } else if (!o.output.empty() && o.output != "-") {
    QUIVER_ASSIGN_OR_RETURN(jo.compression, ParseCompressionType(o.compression));
  }
  jo.limit = o.limit;
  jo.hold = o.hold;
  jo.progress = isatty(STDERR_FILENO) && !o.quiet;
  jo.report = !o.quiet;
  jo.interrupt = guard.flag().get();
  if (!o.output.empty() && o.output != "-") guard.AddCleanup([out = o.output] { RemoveOwnTemporaryOutput(out); });
  return job::RunQueryJob(jo, ctx.root, stdout, stderr);
}

}  // namespace

void AddQuery(CLI::App& app, Context& ctx, Action* action, int* exit_code) {
  auto* cmd =
      app.add_subcommand("query", "run SQL on a Databricks SQL-protocol server and fetch the result (CloudFetch)");
  auto o = std::make_shared<QueryOpts>();
  cmd->add_option("--server", o->server, "https://HOST:PORT/PATH of the server (warehouse HTTP path)")->required();
  cmd->add_option("--token", o->token, "bearer token (default: $QUIVER_TOKEN); never printed");
  cmd->add_option("--ca-cert", o->ca_cert, "PEM file of a CA to trust (e.g. quiver serve's self-signed certificate)");
  cmd->add_flag("--insecure", o->insecure, "do NOT verify TLS certificates (dangerous)");
  cmd->add_option("--dialect", o->dialect,
                  "spark|postgres: the session's SQL dialect, sent in OpenSession's configuration (default: the "
                  "server's, spark for quiver serve)")
      ->check(CLI::IsMember({"postgres", "spark"}));
  cmd->add_option("SQL", o->sql, "the statement ('-' = read it from stdin)")->required();
  cmd->add_option("--format", o->format, "stdout text format: table|csv|jsonl|none (none: fetch and count only)")
      ->check(CLI::IsMember({"table", "csv", "jsonl", "none"}));
  cmd->add_flag("--hold", o->hold, "keep every batch until the end (measures fetch-all memory)");
  cmd->add_option("-o,--output", o->output,
                  "write the result as an Arrow IPC file, Parquet for a path ending in .parquet, CSV for .csv, .csv.gz "
                  "or .csv.zst (atomically: temp file + rename)");
  AddParquetOutputOptions(cmd, &o->parquet);
  cmd->add_option("--compression", o->compression, "IPC body compression of -o: none|lz4|zstd")
      ->check(ParsedBy(ParseCompressionType, "CODEC"));
  cmd->add_option("--window", o->window, "download window in bytes (e.g. 32MiB; default 64MiB, see the README)")
      ->transform(ByteSize());
  cmd->add_option("--parallel", o->parallel, "files downloading at once (default 8)")->check(CLI::Range(1, 1024));
  cmd->add_option("--policy", o->policy, "chunk memory: heap|mmap-after|stream-mmap (default stream-mmap)")
      ->check(CLI::IsMember({"heap", "mmap-after", "stream-mmap"}));
  cmd->add_option("--retries", o->retries, "retries per chunk on 5xx, timeouts, resets (default 4)")
      ->check(CLI::Range(0, 100));
  cmd->add_flag("--no-lz4-checksums", o->no_lz4_checksums,
                "skip the LZ4 frames' xxHash32 checksums of chunks received over TLS (which already authenticates "
                "every byte; less client CPU); plain-http chunks are always checked");
  cmd->add_option("--limit", o->limit, "stop after N rows (cancels the rest)");
  cmd->add_flag("-q,--quiet", o->quiet, "no progress, summary or memory report");
  cmd->callback([&ctx, o, action] {
    *action = [&ctx, o]() -> Status {
      QUIVER_ASSIGN_OR_RETURN(auto guard, InterruptGuard::Install(kInterruptGraceMs));
      Status st = RunQuery(ctx, *o, *guard);
      // Ctrl-C: the statement was cancelled on the server; main() prints
      // "interrupted" and exits 130 (128 + SIGINT) as shells expect.
      if (guard->interrupted()) ctx.interrupted = true;
      return st;
    };
  });
}

}  // namespace quiver::cli

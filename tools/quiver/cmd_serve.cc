// quiver serve: the result server (Databricks SQL protocol over HTTPS,
// results as CloudFetch chunks). Statements run on the SQL layer
// (server::SqlExecutor over a sql::Catalog of --table inputs and, with
// --tpch, generated TPC-H tables). Runs until SIGINT / SIGTERM (a second
// one while it stops, or one while it generates TPC-H data: it removes its
// files and exits 130 at once, interrupt.h).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "interrupt.h"
#include "quiver/cli.h"
#include "quiver/fetch/s3_chunk_store.h"
#include "quiver/memory/disk_budget.h"
#include "quiver/memory/spill_directory.h"
#include "quiver/server/http_server.h"
#include "quiver/server/sql_executor.h"
#include "quiver/server/statement_executor.h"
#include "quiver/sql/tpch_tables.h"
#include "table_catalog.h"

namespace quiver::cli {
namespace {

// A signal before the server is ready (generating TPC-H data does not
// poll for it): the guard removes the server's files and exits this soon.
constexpr int kStartupGraceMs = 1000;

/// The default server memory budget: half of the machine's physical memory.
int64_t DefaultMemoryBudgetBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return int64_t{4} << 30;
  return static_cast<int64_t>(pages) * page_size / 2;
}

}  // namespace

void AddBenchServe(CLI::App* bench, Context& ctx, Action* action);  // cmd_bench_serve.cc

void AddServe(CLI::App& app, Context& ctx, Action* action) {
  // `quiver bench serve` hangs under the bench subcommand when it exists
  // (AddBench runs first in main.cc).
  try {
    if (auto* bench = app.get_subcommand("bench")) AddBenchServe(bench, ctx, action);
  } catch (const CLI::OptionNotFound&) {
  }
  auto* cmd = app.add_subcommand("serve", "serve tables over the Databricks SQL protocol (HTTPS, Thrift, CloudFetch)");
  struct Opts {
    int port = 0;
    std::string host = "127.0.0.1", cert, key, cert_dir, token, warehouse_id = "quiver", spill_dir;
    std::vector<std::string> tables, table_dirs;
    int64_t chunk_bytes = int64_t{20} << 20;
    int64_t inline_threshold_bytes = int64_t{1} << 20;
    int64_t store_budget_bytes = int64_t{1} << 30;
    int64_t spill_limit_bytes = int64_t{8} << 30;
    int64_t statement_spill_limit_bytes = 0;  // 0 = a quarter of --spill-limit
    int64_t link_expiry_s = 900;
    int64_t session_idle_s = 3600, operation_idle_s = 1800, session_max_s = 7 * 24 * 3600, orphan_timeout_s = 120;
    int max_sessions = 64, max_operations = 256, max_links_per_fetch = 32, threads = 64;
    int64_t max_body_bytes = int64_t{16} << 20;
    int64_t max_body_bytes_per_client = 0;  // 0 = 4 x max_body_bytes
    int read_timeout_s = 30, write_timeout_s = 60, header_timeout_s = 10, keep_alive_timeout_s = 120;
    int max_connections = 4096, max_connections_per_address = 0, io_threads = 2;  // 0: max_connections / 16
    int64_t memory_budget = 0;                                                    // 0 = half the physical memory
    int64_t max_statement_bytes = int64_t{1} << 20;
    double statement_timeout_s = 3600, planning_timeout_s = 30;
    int64_t fetch_wait_ms = 100;
    int max_waiting_rpcs = 16, max_planning = 0, max_queued_plans = 64;
    int max_unfetched_chunks = 8;
    int64_t max_result_bytes = -1;  // -1: 16 GiB with an S3 store, none with the local store
    int max_operations_per_session = 64;
    int max_sessions_per_token = 32;
    int max_operations_per_token = 128;
    std::string tokens_file;
    bool keep_freed_memory = false;
    bool no_lz4 = false;
    double stats_interval_s = 0;
    double tpch = 0;
    std::string tpch_dir, memory_mode = "on-heap";
    int64_t statement_limit = 0;  // 0 = a quarter of the memory budget
    int sql_threads = 0;
    std::string spill_directory;
    bool allow_file_tables = false;
    std::string dialect = "spark";
    int owner_lease_s = 5, max_reruns = 2;
    std::string chunk_store = "local", cluster_secret_file;
    S3StoreOptions s3;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--port", o->port, "TCP port (0 = ephemeral; the port in use is printed)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--host", o->host, "address to bind and to put in links (default 127.0.0.1)");
  cmd->add_option("--cert", o->cert, "PEM certificate (default: a self-signed one is generated)");
  cmd->add_option("--key", o->key, "PEM private key of --cert");
  cmd->add_option("--cert-dir", o->cert_dir, "directory for the generated certificate (default: a temp dir)");
  cmd->add_option("--token", o->token, "bearer token clients must send (default: $QUIVER_TOKEN)");
  cmd->add_option("--table", o->tables,
                  "NAME=PATH of an Arrow IPC file, stream or directory of IPC files, a Parquet or CSV file, or "
                  "s3://BUCKET/KEY[.parquet|.csv], s3://BUCKET/PREFIX/*.parquet (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--tables", o->table_dirs,
                  "DIR: serve every *.arrow, *.arrows, *.parquet and *.csv[.gz|.zst] file of DIR under its stem "
                  "(e.g. a `quiver gen tpch` directory; repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--tpch", o->tpch, "generate the 8 TPC-H tables at this scale factor (e.g. 0.01, 1) and serve them");
  cmd->add_option("--tpch-dir", o->tpch_dir,
                  "where to write the TPC-H files (default: a temporary directory, removed)");
  cmd->add_option("--memory-mode", o->memory_mode, "join relations on-heap|off-heap (default on-heap)")
      ->check(ParsedBy(join::ParseMemoryMode, "MODE"));
  cmd->add_option("--sql-threads", o->sql_threads,
                  "workers per pipeline of each SQL statement, from one pool all statements share (default 0 = the "
                  "machine's hardware threads; --threads is the RPC workers)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--sql-spill-directory", o->spill_directory,
                  "where statements past --statement-memory-limit spill operator state (default $TMPDIR or /tmp)");
  cmd->add_flag("--allow-file-tables", o->allow_file_tables,
                "let SQL read local files (FROM 'x.parquet', read_parquet, read_csv) with the server's rights "
                "(default off: a client could read any file the server can)");
  cmd->add_option("--dialect", o->dialect,
                  "spark|postgres: the dialect of sessions whose OpenSession configuration names none "
                  "(dialect=...); integer '/', 'div', the default NULL order (docs/sql.md; default spark, as "
                  "Databricks SQL)")
      ->check(CLI::IsMember({"postgres", "spark"}));
  cmd->add_option("--memory-budget", o->memory_budget,
                  "byte limit of everything the server charges (statements, chunks in memory, requests); "
                  "default: half the physical memory")
      ->transform(ByteSize())
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--statement-memory-limit", o->statement_limit,
                  "byte limit of each statement's pool; past it the statement fails with SQLSTATE 53200 "
                  "(e.g. 1GiB; default: a quarter of --memory-budget; -1 = none)")
      ->transform(ByteSize());
  cmd->add_option("--statement-timeout-s", o->statement_timeout_s,
                  "cancel a statement running longer than this (time paused waiting for the client to fetch "
                  "excluded), SQLSTATE 57014 (default 3600 = 1 hour; 0 = no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--planning-timeout-s", o->planning_timeout_s,
                  "fail a statement whose parsing and planning take longer than this, SQLSTATE 57014 (default 30; "
                  "0 = no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-planning", o->max_planning,
                  "statements planned at once, half of them at most of one token; the others wait their turn on "
                  "their own threads, round-robin over tokens (default 0 = the hardware threads, at least 2)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-queued-plans", o->max_queued_plans,
                  "statements waiting to be planned at most, half of them of one token; past it a statement is "
                  "refused, SQLSTATE 53400 (default 64)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--fetch-wait-ms", o->fetch_wait_ms,
                  "how long FetchResults, metadata and ExecuteStatement wait for the next chunk or the plan before "
                  "replying with what exists (default 100)")
      ->check(CLI::Range(int64_t{0}, int64_t{60'000}));
  cmd->add_option("--max-waiting-rpcs", o->max_waiting_rpcs,
                  "RPCs that may wait (--fetch-wait-ms) at once, at most half of --threads; the others reply at once "
                  "(default 16)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--orphan-timeout-s", o->orphan_timeout_s,
                  "free an operation whose producer waits for a client that has not called for it this long "
                  "(default 120; 0 = never)")
      ->check(CLI::Range(int64_t{0}, int64_t{10} * 365 * 24 * 3600));
  cmd->add_option("--max-statement-bytes", o->max_statement_bytes,
                  "longest SQL text accepted, checked before parsing (default 1 MiB)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warehouse-id", o->warehouse_id, "warehouse id in the RPC path (default quiver)");
  cmd->add_option("--chunk-bytes", o->chunk_bytes, "target uncompressed IPC bytes per CloudFetch chunk (default 20MiB)")
      ->transform(ByteSize());
  cmd->add_option("--inline-threshold-bytes", o->inline_threshold_bytes,
                  "results up to this many IPC bytes are sent inline (default 1MiB)")
      ->transform(ByteSize());
  cmd->add_option("--store-budget", o->store_budget_bytes,
                  "bytes of chunks kept in memory before spilling (default 1GiB)")
      ->transform(ByteSize());
  cmd->add_option("--spill-dir", o->spill_dir, "directory for spilled chunks (default: a private temp dir)");
  cmd->add_option("--max-unfetched-chunks", o->max_unfetched_chunks,
                  "a statement pauses while this many of its chunks wait for the client to fetch them "
                  "(default 8; 0 = no bound)");
  cmd->add_option("--max-result-bytes", o->max_result_bytes,
                  "largest result a statement may store; past it the statement fails (SQLSTATE 54000) and its "
                  "chunks are removed (default: 16GiB with an S3 store, where a result is whole in the store "
                  "before it is FINISHED; no limit with the local store, bounded by --max-unfetched-chunks; "
                  "0 = no limit)")
      ->transform(ByteSize())
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--spill-limit", o->spill_limit_bytes,
                  "bytes the server may hold on disk: spilled result chunks and the spill files of statements "
                  "past --statement-memory-limit together; past it a statement fails with SQLSTATE 53100 "
                  "(default 8GiB; -1 = no limit)")
      ->transform(ByteSize());
  cmd->add_option("--statement-spill-limit", o->statement_spill_limit_bytes,
                  "bytes of spill files one statement's operators may hold, within --spill-limit; past it the "
                  "statement fails with SQLSTATE 53100 (default: a quarter of --spill-limit; -1 = none of its own)")
      ->transform(ByteSize());
  cmd->add_option("--link-expiry-s", o->link_expiry_s, "lifetime of download links in seconds (default 900)");
  cmd->add_option("--session-idle-s", o->session_idle_s, "close sessions idle this long (default 3600)");
  cmd->add_option("--session-max-s", o->session_max_s,
                  "with --chunk-store s3://: a session handle is valid this long after it was opened, on every server "
                  "(default 604800, 7 days)")
      ->check(CLI::Range(int64_t{1}, int64_t{10} * 365 * 24 * 3600));
  cmd->add_option("--operation-idle-s", o->operation_idle_s, "close operations idle this long (default 1800)");
  cmd->add_option("--max-sessions", o->max_sessions, "open sessions at most (default 64)");
  cmd->add_option("--max-operations", o->max_operations, "open operations at most (default 256)");
  cmd->add_option("--max-operations-per-session", o->max_operations_per_session,
                  "open operations of one session at most (default 64)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-sessions-per-token", o->max_sessions_per_token,
                  "open sessions of one bearer token at most, apart from --max-sessions (default 32)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-operations-per-token", o->max_operations_per_token,
                  "open operations of one bearer token at most, apart from --max-operations (default 128)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--tokens-file", o->tokens_file,
                  "further bearer tokens, one per line ('#' lines and blank lines skipped); each token is one "
                  "client for the per-token caps");
  cmd->add_option("--max-links-per-fetch", o->max_links_per_fetch, "links per FetchResults page (default 32)");
  cmd->add_option("--max-body-bytes", o->max_body_bytes, "largest request body (default 16MiB)")->transform(ByteSize());
  cmd->add_option("--max-body-bytes-per-client", o->max_body_bytes_per_client,
                  "request body bytes one token, and one client address, may hold at once (bodies are reserved as "
                  "their bytes arrive; 429 past it; default 0 = 4 x --max-body-bytes)")
      ->transform(ByteSize())
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--header-timeout-s", o->header_timeout_s,
                  "total time for a new connection's TLS handshake and first header section, and for each later "
                  "request's header section from its first byte (default 10)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--keep-alive-timeout-s", o->keep_alive_timeout_s,
                  "close a kept-alive connection idle this long between a response and its next request; longer "
                  "than the pauses drivers make between RPCs while they convert a batch (default 120)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--read-timeout-s", o->read_timeout_s, "total time to receive a request's body (default 30)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--write-timeout-s", o->write_timeout_s, "total time to send one response (default 60)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-connections", o->max_connections,
                  "open connections at most; from 90% of it each new connection sheds an idle one (default 4096)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-connections-per-address", o->max_connections_per_address,
                  "open connections from one client address at most (default 0 = --max-connections / 16)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--io-threads", o->io_threads, "event-loop threads doing every socket's I/O (default 2)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--threads", o->threads,
                  "worker threads running RPCs and chunk reads; idle connections hold none (default 64)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--chunk-store", o->chunk_store,
                  "where result chunks live: local (memory + spill dir, the default) or s3://BUCKET/PREFIX (an S3 "
                  "store; links are the store's presigned URLs; credentials from AWS_ACCESS_KEY_ID / "
                  "AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN)");
  AddS3StoreOptions(cmd, &o->s3, /*for_chunks=*/true);
  cmd->add_option("--cluster-secret-file", o->cluster_secret_file,
                  "file with the secret (>= 16 bytes) shared by the servers of a deployment: handles are signed "
                  "with it, so any server with the same secret and S3 store answers for any operation");
  cmd->add_option("--owner-lease-s", o->owner_lease_s,
                  "S3 mode: a running statement whose server has not renewed its status for this long is taken "
                  "for dead and run again by the server a client asks next (default 5)")
      ->check(CLI::Range(1, 3600));
  cmd->add_option("--max-reruns", o->max_reruns,
                  "S3 mode: runs of a statement after its server died, at most; past them it fails with 08S01 "
                  "(default 2; 0 = never run again)")
      ->check(CLI::Range(0, 100));
  cmd->add_flag("--no-lz4", o->no_lz4, "serve chunks without LZ4 compression");
  cmd->add_flag("--keep-freed-memory", o->keep_freed_memory,
                "do not hand freed memory back to the OS after statements (for measurements)");
  cmd->add_option("--stats", o->stats_interval_s, "print a held/peak stats line to stderr every N seconds");
  cmd->callback([&ctx, o, action] {
    *action = [&ctx, o]() -> Status {
      std::string token = o->token;
      const bool token_from_env = token.empty();
      if (token_from_env) {
        const char* env = std::getenv("QUIVER_TOKEN");
        if (env) token = env;
      }
      if (token.empty()) return ctx.UsageError("serve: give a bearer token with --token or QUIVER_TOKEN");
      // SIGINT / SIGTERM from here on: before the server is ready (TPC-H
      // generation) the guard removes the server's files and exits 130;
      // once it is ready, a signal stops it as usual, a second one at once.
      if (o->spill_limit_bytes < -1 || o->statement_spill_limit_bytes < -1) {
        return ctx.UsageError("serve: --spill-limit and --statement-spill-limit take bytes >= 0, or -1 (no limit)");
      }
      QUIVER_ASSIGN_OR_RETURN(auto guard, InterruptGuard::Install(kStartupGraceMs));
      // The spill roots: the statements' and the chunk store's (its private
      // directory; a given --spill-dir is the user's).
      std::vector<std::string> spill_roots = {o->spill_directory.empty() ? DefaultSpillRoot() : o->spill_directory};
      if (spill_roots[0] != DefaultSpillRoot()) spill_roots.push_back(DefaultSpillRoot());
      for (const std::string& root : spill_roots) {
        guard->AddCleanup([root] { SweepDeadSpillDirectories(root, /*only_own=*/true); });
      }
      if (o->tpch > 0 && o->tpch_dir.empty()) {
        guard->AddCleanup([dir = TpchTempDirectory("quiver-serve-tpch-")] {
          std::error_code ec;
          std::filesystem::remove_all(dir, ec);
        });
      }
      // Spill directories of quiver processes that died without removing them.
      for (const std::string& root : spill_roots) {
        const SpillSweepReport swept = SweepDeadSpillDirectories(root);
        if (swept.directories > 0) {
          std::printf("spill: removed %lld directories (%s) of dead quiver processes under %s\n",
                      static_cast<long long>(swept.directories), FormatBytes(swept.bytes).c_str(), root.c_str());
        }
      }
      // And the generated TPC-H data of killed servers and `quiver sql`s.
      if (const SpillSweepReport tpch = SweepDeadTpchDirectories(); tpch.directories > 0) {
        std::printf("tpch: removed %lld generated directories (%s) of dead quiver processes under %s\n",
                    static_cast<long long>(tpch.directories), FormatBytes(tpch.bytes).c_str(),
                    std::filesystem::path(TpchTempDirectory("")).parent_path().c_str());
      }
      // One disk budget for everything the server writes: spilled result
      // chunks and the statements' spill files (a child per statement).
      DiskBudgetOptions dbo;
      dbo.name = "the server's spill files";
      dbo.limit_bytes = o->spill_limit_bytes;
      dbo.limit_name = "--spill-limit";
      QUIVER_ASSIGN_OR_RETURN(auto disk_budget, DiskBudget::MakeRoot(dbo));
      const int64_t statement_spill_limit =
          o->statement_spill_limit_bytes != 0
              ? o->statement_spill_limit_bytes
              : (o->spill_limit_bytes < 0 ? -1 : std::max<int64_t>(0, o->spill_limit_bytes / 4));
      const int64_t budget = o->memory_budget > 0 ? o->memory_budget : DefaultMemoryBudgetBytes();
      MemoryPoolOptions po;
      po.name = "serve";
      po.limit_bytes = budget;
      auto server_pool = ctx.root->MakeChild(po);
      const int64_t statement_limit = o->statement_limit == 0 ? std::max<int64_t>(1, budget / 4) : o->statement_limit;
      QUIVER_ASSIGN_OR_RETURN(join::MemoryMode mode, join::ParseMemoryMode(o->memory_mode));
      QUIVER_ASSIGN_OR_RETURN(auto tables, OpenTableCatalog(ctx, o->tables, o->table_dirs, o->tpch, o->tpch_dir,
                                                            "quiver-serve-tpch-", o->s3));
      if (!tables->tpch_summary.empty()) std::printf("%s\n", tables->tpch_summary.c_str());
      const std::shared_ptr<sql::Catalog>& catalog = tables->catalog;
      server::SqlExecutorOptions xo;
      xo.memory_mode = mode;
      xo.statement_memory_limit_bytes = statement_limit;
      xo.threads = o->sql_threads;
      xo.spill_directory = o->spill_directory;
      xo.disk_budget = disk_budget;
      xo.statement_spill_limit_bytes = statement_spill_limit;
      xo.allow_file_tables = o->allow_file_tables;
      xo.s3_files = tables->s3_files;
      xo.planning_timeout_ms = static_cast<int64_t>(o->planning_timeout_s * 1000);
      QUIVER_ASSIGN_OR_RETURN(auto executor, server::SqlExecutor::Make(catalog, xo));
      server::ServerOptions so;
      so.host = o->host;
      so.port = o->port;
      so.cert_path = o->cert;
      so.key_path = o->key;
      so.cert_dir = o->cert_dir;
      so.token = token;
      if (!o->tokens_file.empty()) {
        std::ifstream in(o->tokens_file);
        if (!in) return Status::IOError("serve: cannot read --tokens-file " + o->tokens_file);
        for (std::string line; std::getline(in, line);) {
          while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
          const size_t start = line.find_first_not_of(" \t");
          if (start == std::string::npos || line[start] == '#') continue;
          so.tokens.push_back(line.substr(start));
        }
      }
      so.warehouse_id = o->warehouse_id;
      so.max_body_bytes = o->max_body_bytes;
      so.max_body_bytes_per_client = o->max_body_bytes_per_client;
      so.header_timeout_ms = int64_t{o->header_timeout_s} * 1000;
      so.keep_alive_timeout_ms = int64_t{o->keep_alive_timeout_s} * 1000;
      so.body_timeout_ms = int64_t{o->read_timeout_s} * 1000;
      so.write_timeout_ms = int64_t{o->write_timeout_s} * 1000;
      so.max_connections = o->max_connections;
      so.max_connections_per_address = o->max_connections_per_address;
      so.io_threads = o->io_threads;
      so.worker_threads = o->threads;
      so.release_memory_after_statements = !o->keep_freed_memory;
      so.store.memory_budget_bytes = o->store_budget_bytes;
      so.store.spill_dir = o->spill_dir;
      so.store.spill_limit_bytes = o->spill_limit_bytes;
      so.store.disk_budget = disk_budget;
      if (o->chunk_store != "local") {
        QUIVER_ASSIGN_OR_RETURN(auto loc, objstore::ParseS3Location(o->chunk_store));
        if (o->s3.endpoint.empty()) return ctx.UsageError("serve: --chunk-store s3://... needs --s3-endpoint");
        fetch::S3ChunkStoreOptions s3;
        QUIVER_ASSIGN_OR_RETURN(s3.client, S3ClientOptionsFrom(o->s3, loc.bucket));
        s3.prefix = loc.prefix;
        so.s3_store = std::move(s3);
      }
      if (!o->cluster_secret_file.empty()) {
        QUIVER_ASSIGN_OR_RETURN(so.service.cluster_secret, server::ReadClusterSecret(o->cluster_secret_file));
      }
      so.service.pool = server_pool.get();
      so.service.executor = executor.get();
      so.service.chunk_bytes = o->chunk_bytes;
      so.service.lz4 = !o->no_lz4;
      so.service.inline_threshold_bytes = o->inline_threshold_bytes;
      so.service.link_expiry_ms = o->link_expiry_s * 1000;
      so.service.session_idle_timeout_ms = o->session_idle_s * 1000;
      so.service.session_max_lifetime_ms = o->session_max_s * 1000;
      so.service.operation_idle_timeout_ms = o->operation_idle_s * 1000;
      so.service.max_sessions = o->max_sessions;
      so.service.max_operations = o->max_operations;
      so.service.max_links_per_fetch = o->max_links_per_fetch;
      so.service.max_statement_bytes = o->max_statement_bytes;
      so.service.max_unfetched_chunks = o->max_unfetched_chunks;
      so.service.max_result_bytes =
          o->max_result_bytes >= 0 ? o->max_result_bytes : (so.s3_store ? int64_t{16} << 30 : 0);
      so.service.max_operations_per_session = o->max_operations_per_session;
      so.service.max_sessions_per_token = o->max_sessions_per_token;
      so.service.max_operations_per_token = o->max_operations_per_token;
      so.service.statement_timeout_ms = static_cast<int64_t>(o->statement_timeout_s * 1000);
      so.service.orphan_timeout_ms = o->orphan_timeout_s * 1000;
      so.service.owner_stale_ms = int64_t{o->owner_lease_s} * 1000;
      so.service.max_reruns = o->max_reruns;
      QUIVER_ASSIGN_OR_RETURN(so.service.default_dialect, sql::ParseSqlDialect(o->dialect));
      so.service.fetch_wait_ms = o->fetch_wait_ms;
      so.service.max_waiting_rpcs = o->max_waiting_rpcs;
      so.service.max_planning = o->max_planning;
      so.service.max_queued_plans = o->max_queued_plans;
      QUIVER_ASSIGN_OR_RETURN(auto server, server::ResultServer::Start(so));
      std::printf("quiver serve: listening on %s\n", server->rpc_url().c_str());
      std::printf("port: %d\n", server->port());
      std::printf("path: %s\n", server->rpc_path().c_str());
      std::printf("certificate: %s\n", server->cert_path().c_str());
      std::printf("chunk store: %s\n", server->service_store()->Describe().c_str());
      std::printf("memory: budget %s, per statement %s\n", FormatBytes(budget).c_str(),
                  statement_limit < 0 ? "unlimited" : FormatBytes(statement_limit).c_str());
      std::printf("disk: spill limit %s, per statement %s\n",
                  o->spill_limit_bytes < 0 ? "unlimited" : FormatBytes(o->spill_limit_bytes).c_str(),
                  statement_spill_limit < 0 ? "unlimited" : FormatBytes(statement_spill_limit).c_str());
      if (token_from_env) {
        std::printf("token: from QUIVER_TOKEN (send it as 'Authorization: Bearer <token>')\n");
      } else {
        std::printf("token: as given by --token (send it as 'Authorization: Bearer <token>')\n");
      }
      for (const auto& t : catalog->ListTables()) {
        std::printf("table: %s (%lld rows)\n", t.name.c_str(), static_cast<long long>(t.num_rows));
      }
      std::printf("from another terminal:\n  QUIVER_TOKEN=%s quiver query --server %s --ca-cert %s \"SHOW TABLES\"\n",
                  token_from_env ? "\"$QUIVER_TOKEN\"" : "<the --token value>", server->rpc_url().c_str(),
                  server->cert_path().c_str());
      std::printf("ready\n");
      std::fflush(stdout);
      guard->set_grace_ms(-1);  // ready: a signal is the normal stop
      auto next_stats = std::chrono::steady_clock::now();
      while (!guard->interrupted()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (o->stats_interval_s > 0 && std::chrono::steady_clock::now() >= next_stats) {
          std::fprintf(stderr, "quiver serve: stats %s\n", server->StatsLine().c_str());
          next_stats = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(o->stats_interval_s * 1000));
        }
      }
      std::fprintf(stderr, "quiver serve: stopping; final stats %s\n", server->StatsLine().c_str());
      server->Stop();
      return Status::OK();
    };
  });
}

}  // namespace quiver::cli

// quiver/job/main_job.cc — see main_job.h.
#include "quiver/job/main_job.h"

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <map>
#include <mutex>
#include <random>

#include "quiver/base/byte_size.h"
#include "quiver/bench/child_process.h"
#include "quiver/bench/measure.h"
#include "quiver/columnar/value_format.h"
#include "quiver/fetch/chunk_decoder.h"
#include "quiver/fetch/fetch_result.h"
#include "quiver/server/http_server.h"
#include "quiver/server/sql_executor.h"
#include "quiver/sql/engine.h"
#include "quiver/sql/tpch_queries.h"
#include "quiver/sql/tpch_tables.h"

namespace quiver::job {

using bench::PeakByPath;
namespace {

using bench::ProcStatusBytes;

// Order-independent digest of a result: rows and the wrapping sum of a
// 64-bit FNV-1a hash of each row's values (text format, NULL distinct from
// every string, fields separated by a byte no text value holds alone).
struct Digest {
  int64_t rows = 0;
  uint64_t sum = 0;
  std::vector<std::vector<std::string>> first_rows;  // cells, up to `keep` rows

  void Add(const RecordBatch& b, size_t keep) {
    std::string row, v;
    std::vector<std::string> cells;
    for (int64_t r = 0; r < b.num_rows; ++r) {
      row.clear();
      cells.clear();
      for (size_t c = 0; c < b.columns.size(); ++c) {
        if (c) row += '\x1f';
        if (IsLogicalNull(*b.columns[c], r)) {
          row += "\x1eNULL";
          cells.emplace_back("NULL");
        } else {
          v.clear();
          FormatValue(*b.columns[c], r, ValueFormat::kText, &v);
          row += v;
          cells.push_back(v);
        }
      }
      uint64_t h = 1469598103934665603ull;
      for (unsigned char ch : row) {
        h ^= ch;
        h *= 1099511628211ull;
      }
      sum += h;
      ++rows;
      if (first_rows.size() < keep) first_rows.push_back(cells);
    }
  }
};

// 1234567 -> "1,234,567".
std::string Count(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (n < 0 ? "-" : "") + out;
}

// Every line of `text` after the first indented by `indent`.
std::string Indent(const std::string& text, const std::string& indent) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += indent;
  }
  return out;
}

std::string RandomToken() {
  std::random_device rd;  // /dev/urandom on Linux
  static const char* hex = "0123456789abcdef";
  std::string t;
  for (int i = 0; i < 32; ++i) t += hex[rd() & 15];
  return t;
}

std::string B(int64_t bytes) { return bytes < 0 ? "-" : FormatBytes(bytes); }

std::shared_ptr<MemoryPool> Child(const std::shared_ptr<MemoryPool>& root, const std::string& name) {
  MemoryPoolOptions o;
  o.name = name;
  return root->MakeChild(o);
}

// The smallest peak that puts a stage in the memory table.
constexpr int64_t kMovedBytes = 1024;

struct Query {
  const char* label;
  const char* sql;
};

}  // namespace

namespace {

// One client run over `sql` through the in-process server: mode "stream"
// drops each batch once read, "fetchall" keeps every batch to the end. With
// a client executable the run is a child process (`quiver bench
// fetch-client`), whose peak RSS increase is the client's alone; without
// one it runs here and reports the client pool's peak.
Result<MainJobFetchCost> MeasureFetch(const server::ResultServer& server, const std::string& token,
                                      const std::string& sql, const std::string& mode, fetch::ChunkPolicy policy,
                                      const MainJobOptions& o, const std::shared_ptr<MemoryPool>& root) {
  MainJobFetchCost cost;
  cost.mode = mode;
  cost.policy = std::string(fetch::ChunkPolicyName(policy));
  if (!o.client_exe.empty()) {
    // The token goes through the environment, never the command line.
    ::setenv("QUIVER_TOKEN", token.c_str(), 1);
    auto run =
        bench::RunCapture({o.client_exe, "bench", "fetch-client", "--server", server.rpc_url(), "--ca-cert",
                           server.cert_path(), "--mode", mode, "--policy", cost.policy, "--window",
                           std::to_string(o.window_bytes), "--parallel", std::to_string(o.parallel), "--sql", sql});
    ::unsetenv("QUIVER_TOKEN");
    QUIVER_RETURN_NOT_OK(run.status());
    const auto& [rc, out] = *run;
    if (rc != 0) return Status::IOError("demo: the client process failed (exit " + std::to_string(rc) + "): " + out);
    QUIVER_ASSIGN_OR_RETURN(const auto json, bench::LastJson(out, "demo: the client process"));
    cost.rows = json.value("rows", int64_t{-1});
    cost.decoded_bytes = json.value("decoded_bytes", int64_t{-1});
    cost.client_peak_bytes = json.value("peak_rss_increase", int64_t{-1});
    cost.seconds = json.value("seconds", 0.0);
    cost.rss = true;
    if (cost.rows < 0 || cost.decoded_bytes < 0 || cost.client_peak_bytes < 0) {
      return Status::IOError("demo: the client process printed no rows, decoded_bytes or peak_rss_increase: " + out);
    }
    return cost;
  }
  auto pool = Child(root, "fetch-" + mode + "-" + cost.policy);
  fetch::ConnectionOptions conn;
  conn.server_url = server.rpc_url();
  conn.token = token;
  conn.ca_cert_path = server.cert_path();
  fetch::FetchOptions fo;
  fo.download.pool = pool.get();
  fo.download.policy = policy;
  fo.download.window_bytes = o.window_bytes;
  fo.download.parallel = o.parallel;
  const auto t0 = bench::Clock::now();
  QUIVER_ASSIGN_OR_RETURN(auto result, fetch::FetchResult::Query(conn, sql, fo));
  std::vector<RecordBatchPtr> all;
  while (true) {
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, result->Next());
    if (!b) break;
    cost.rows += b->num_rows;
    if (mode == "fetchall") all.push_back(std::move(b));
  }
  if (const auto* ds = result->download_stats()) cost.decoded_bytes = ds->bytes_decoded.load();
  cost.seconds = bench::Seconds(t0, bench::Clock::now());
  all.clear();
  result.reset();
  cost.client_peak_bytes = pool->peak_bytes();
  return cost;
}

}  // namespace
Result<MainJobResult> RunMainJob(const MainJobOptions& o, const std::shared_ptr<MemoryPool>& root, std::FILE* out) {
  const auto t0 = bench::Clock::now();
  auto secs = [&] { return bench::Seconds(t0, bench::Clock::now()); };
  const join::MemoryMode mode = o.memory_mode;
  MainJobResult res;
  res.window_bytes = o.window_bytes;
  std::vector<MainJobStage>& table = res.stages;
  // A stage enters the memory table only when it moved: a peak of at least
  // 1 KiB (a sort that kept a few hundred bytes of a top-N did not).
  auto stage = [&table](MainJobStage s) {
    if (s.peak_bytes >= kMovedBytes) table.push_back(std::move(s));
  };

  // 1. Generate TPC-H into a private directory (removed at the end).
  std::string dir = o.tpch_dir, temp_dir;
  if (dir.empty()) {
    temp_dir = (std::filesystem::temp_directory_path() / ("quiver-demo-" + std::to_string(::getpid()))).string();
    dir = temp_dir;
  }
  struct RemoveDir {
    std::string* dir;
    ~RemoveDir() {
      std::error_code ec;
      if (!dir->empty()) std::filesystem::remove_all(*dir, ec);
    }
  } remove_dir{&temp_dir};
  auto gen_pool = Child(root, "generate");
  auto catalog = std::make_shared<sql::Catalog>();
  sql::TpchFilesOptions to;
  to.scale = o.scale;
  to.pool = gen_pool.get();
  QUIVER_ASSIGN_OR_RETURN(auto files, sql::RegisterTpchTables(catalog.get(), dir, to));
  int64_t file_bytes = 0;
  std::string sizes;
  for (const auto& f : files) {
    file_bytes += f.file_bytes;
    if (f.table == "lineitem" || f.table == "orders" || f.table == "customer") {
      sizes += (sizes.empty() ? "" : ", ") + f.table + " " + Count(f.num_rows);
    }
  }
  std::fprintf(out, "== TPC-H scale %g: 8 tables, %s of Arrow IPC files (%s rows) in %.1f s\n", o.scale,
               FormatBytes(file_bytes).c_str(), sizes.c_str(), secs());
  stage({"generate", "generate", B(gen_pool->held_bytes()), B(gen_pool->peak_bytes()),
         "8 IPC files, " + B(file_bytes) + " on disk (scans map them: no pool bytes)", ProcStatusBytes("VmRSS"),
         ProcStatusBytes("VmHWM"), gen_pool->peak_bytes()});

  // 2. The server, in-process.
  auto serve_pool = Child(root, "serve");
  auto serve_peaks = std::make_shared<PeakByPath>();
  serve_pool->AddListener(serve_peaks);
  server::SqlExecutorOptions xo;
  xo.memory_mode = mode;
  xo.threads = o.threads;
  QUIVER_ASSIGN_OR_RETURN(auto executor, server::SqlExecutor::Make(catalog, xo));
  const std::string token = RandomToken();
  server::ServerOptions so;
  so.host = "127.0.0.1";
  so.port = 0;
  so.token = token;
  // Workers run RPCs and chunk reads (idle connections hold none): room for
  // the parallel downloads.
  so.worker_threads = 32;
  so.store.memory_budget_bytes = int64_t{1} << 30;
  so.service.pool = serve_pool.get();
  so.service.executor = executor.get();
  so.service.chunk_bytes = o.chunk_bytes;
  so.service.lz4 = true;
  so.service.inline_threshold_bytes = 64 << 10;  // results above 64 KiB go as CloudFetch links
  QUIVER_ASSIGN_OR_RETURN(auto server, server::ResultServer::Start(so));
  std::fprintf(out,
               "== server: %s in this process (self-signed certificate, random bearer token); results as LZ4 "
               "CloudFetch chunks of ~%s of IPC\n",
               server->rpc_url().c_str(), FormatBytes(o.chunk_bytes).c_str());

  // (a) a large join (many CloudFetch chunks, more than the client's
  // window at scale 0.1); (b)-(d) TPC-H queries (validation parameters): a
  // 3-way join with aggregate and top-N, a 6-way join, and IN over a grouped
  // subquery.
  const std::string q3(sql::TpchQueries()[2].sql), q5(sql::TpchQueries()[4].sql), q18(sql::TpchQueries()[17].sql);
  const Query queries[] = {
      {"(a) orders JOIN lineitem, every line",
       "select o.o_orderkey, o.o_orderdate, o.o_orderpriority, l.l_linenumber, l.l_partkey, l.l_suppkey,\n"
       "  l.l_quantity, l.l_extendedprice, l.l_discount, l.l_tax, l.l_returnflag, l.l_linestatus, l.l_shipdate,\n"
       "  l.l_commitdate, l.l_receiptdate, l.l_shipinstruct, l.l_shipmode, l.l_comment\n"
       "from orders o join lineitem l on o.o_orderkey = l.l_orderkey"},
      {"(b) TPC-H Q3: customer, orders, lineitem; aggregate; top 10", q3.c_str()},
      {"(c) TPC-H Q5: six-way join, aggregate, ORDER BY", q5.c_str()},
      {"(d) TPC-H Q18: IN over a grouped subquery, top 100", q18.c_str()},
  };
  int matched = 0;
  auto fetch_pool = Child(root, "fetch");
  auto check_pool = Child(root, "check");
  for (size_t qi = 0; qi < std::size(queries); ++qi) {
    const Query& q = queries[qi];
    if (qi == 0) {
      std::fprintf(out, "\n== 1. A result larger than the client's fetch window, streamed\n");
    } else if (qi == 1) {
      std::fprintf(out, "\n== 2. TPC-H queries through the same server and client\n");
    }
    std::fprintf(out, "\n   %s\n   %s\n", q.label, Indent(q.sql, "   ").c_str());
    const std::string tag = std::string(q.label).substr(0, 3) + " ";
    serve_peaks->Reset();
    fetch_pool->ResetPeak();
    fetch::ResetMappingPeak();
    const auto svc0 = server->service()->stats();
    // Through the server and the CloudFetch client.
    fetch::ConnectionOptions conn;
    conn.server_url = server->rpc_url();
    conn.token = token;
    conn.ca_cert_path = server->cert_path();
    fetch::FetchOptions fo;
    fo.download.pool = fetch_pool.get();
    fo.download.policy = fetch::ChunkPolicy::kStreamMmap;
    fo.download.window_bytes = o.window_bytes;
    fo.download.parallel = o.parallel;
    const double q0 = secs();
    Digest remote;
    std::vector<std::string> columns;
    int64_t chunks = 0, window_peak = 0, downloaded = 0, decoded = 0, store_mem = 0, store_peak = 0, store_spilled = 0,
            store_spilled_chunks = 0;
    {
      QUIVER_ASSIGN_OR_RETURN(auto result, fetch::FetchResult::Query(conn, q.sql, fo));
      while (true) {
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, result->Next());
        if (!b) break;
        if (columns.empty()) {
          for (const auto& f : b->schema->fields) columns.push_back(f->name);
        }
        remote.Add(*b, static_cast<size_t>(o.rows_shown));
      }
      chunks = result->chunks_consumed();
      if (const auto* ds = result->download_stats()) {
        window_peak = ds->window_peak_bytes.load();
        downloaded = ds->bytes_downloaded.load();
        decoded = ds->bytes_decoded.load();
      }
      const auto ss = server->store()->stats();  // before the session closes and removes the chunks
      store_mem = ss.memory_bytes;
      store_peak = ss.peak_memory_bytes;
      store_spilled = ss.spilled_bytes;
      store_spilled_chunks = ss.total_spilled_chunks;
    }
    const double fetch_s = secs() - q0;
    const std::vector<std::string> shown = FormatAlignedRows(columns, remote.first_rows);
    for (const auto& line : shown) std::fprintf(out, "   %s\n", line.c_str());
    const auto svc1 = server->service()->stats();
    const int64_t rss = ProcStatusBytes("VmRSS"), hwm = ProcStatusBytes("VmHWM");
    const auto maps = fetch::GetMappingStats();

    // The same statement in this process, on the same tables.
    sql::Engine engine(catalog);
    sql::ExecuteOptions eo;
    eo.pool = check_pool.get();
    eo.memory_mode = mode;
    eo.threads = o.threads;
    Digest local;
    {
      QUIVER_ASSIGN_OR_RETURN(auto stream, engine.Execute(q.sql, eo));
      while (true) {
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, stream->Next());
        if (!b) break;
        local.Add(*b, 0);
      }
    }
    const bool ok = local.rows == remote.rows && local.sum == remote.sum && remote.rows > 0;
    matched += ok ? 1 : 0;
    const std::string how = chunks > 0 ? FormatBytes(decoded) + " of IPC decoded from " + FormatBytes(downloaded) +
                                             " of LZ4 in " + Count(chunks) + " CloudFetch chunks"
                                       : "inline (under the 64 KiB inline threshold)";
    std::fprintf(out, "   %s rows, %s, %.2f s\n", Count(remote.rows).c_str(), how.c_str(), fetch_s);
    if (ok) {
      std::fprintf(out,
                   "   matches the in-process engine (sql::Engine here on the same tables: %s rows, checksum "
                   "%016" PRIx64 ")\n",
                   Count(local.rows).c_str(), local.sum);
    } else {
      std::fprintf(out,
                   "   MISMATCH with the in-process engine: %s rows, checksum %016" PRIx64
                   " through the server; %s rows, checksum %016" PRIx64 " in process\n",
                   Count(remote.rows).c_str(), remote.sum, Count(local.rows).c_str(), local.sum);
    }
    std::vector<std::string> first_lines(shown.begin() + 1, shown.end());
    res.queries.push_back({q.label, q.sql, remote.rows, chunks, remote.sum, local.rows, local.sum, ok, columns,
                           first_lines, decoded, downloaded});

    const int64_t ipc = svc1.chunk_ipc_bytes - svc0.chunk_ipc_bytes;
    const int64_t served = svc1.chunk_served_bytes - svc0.chunk_served_bytes;
    const int64_t nchunks = svc1.chunks_written - svc0.chunks_written;
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, "%.2fx", served > 0 ? static_cast<double>(ipc) / served : 0.0);
    auto peak = [&](const std::string& suffix) { return serve_peaks->Peak(suffix); };
    auto pool_stage = [&](const std::string& name, const std::string& pool, const std::string& suffix,
                          const std::string& detail) {
      const int64_t p = peak(suffix);
      stage({tag + name, pool, B(0), B(p), detail, rss, hwm, p});
    };
    std::string build_detail = std::string("hashed build side (") + std::string(join::MemoryModeName(mode)) + ")";
    if (mode == join::MemoryMode::kOffHeap) build_detail += ": mapped pages, charged with Reserve";
    pool_stage("build relation", "serve/exec/sql-statement/build", "/sql-statement/build", build_detail);
    pool_stage("probe", "serve/exec/sql-statement/probe", "/sql-statement/probe",
               "scan decode, filtered copies, join output batches");
    pool_stage("scan", "serve/exec/sql-statement/scan", "/sql-statement/scan",
               "decoded columns, filtered copies, projections");
    pool_stage("aggregate", "serve/exec/sql-statement/aggregate", "/sql-statement/aggregate",
               std::string("hash aggregation tables (") + std::string(join::MemoryModeName(mode)) + ") and output");
    pool_stage("sort", "serve/exec/sql-statement/sort", "/sql-statement/sort", "sort / top-N buffers");
    pool_stage("statement", "serve/exec/sql-statement", "/serve/exec/sql-statement",
               "every operator of the statement (sampled at each allocation)");
    if (chunks > 0) {  // an inline result has no chunks to compress, serve, download or decompress
      const int64_t chunk_peak = peak("/serve/chunks");
      stage({tag + "compress chunks", "serve/chunks", B(server->service()->chunk_pool()->held_bytes()), B(chunk_peak),
             Count(nchunks) + " chunks, LZ4 frame each, ~" + FormatBytes(o.chunk_bytes) + " IPC target: IPC " + B(ipc) +
                 " -> served " + B(served) + " (" + ratio + ")",
             rss, hwm, chunk_peak});
      stage({tag + "serve", "chunk store", B(store_mem), B(store_peak),
             "held once the last chunk was read (the closing session removes them); spilled " + B(store_spilled) +
                 " (" + std::to_string(store_spilled_chunks) + " chunks ever), budget 1 GiB",
             rss, hwm, store_peak});
      stage({tag + "download", "fetch window", B(0), B(window_peak),
             B(downloaded) + " over HTTPS; window = shares reserved for files in flight, of " + B(o.window_bytes), rss,
             hwm, window_peak});
      stage({tag + "decompress", "chunk mappings", B(maps.mapped_bytes), B(maps.peak_mapped_bytes),
             B(decoded) + " of IPC decompressed into private mappings (stream-mmap)", rss, hwm,
             maps.peak_mapped_bytes});
    }
    stage(
        {tag + "decode", "fetch", B(fetch_pool->held_bytes()), B(fetch_pool->peak_bytes()),
         chunks > 0 ? "zero-copy batches over the mappings, hashed and dropped" : "inline batches, hashed and dropped",
         rss, hwm, fetch_pool->peak_bytes()});

    if (qi == 0) {
      // The story of (a): what the client costs streaming it, and holding
      // all of it under each chunk policy, each run in its own process.
      QUIVER_ASSIGN_OR_RETURN(res.streaming,
                              MeasureFetch(*server, token, q.sql, "stream", fetch::ChunkPolicy::kStreamMmap, o, root));
      for (const auto policy :
           {fetch::ChunkPolicy::kStreamMmap, fetch::ChunkPolicy::kMmapAfter, fetch::ChunkPolicy::kHeap}) {
        QUIVER_ASSIGN_OR_RETURN(auto cost, MeasureFetch(*server, token, q.sql, "fetchall", policy, o, root));
        res.holding.push_back(std::move(cost));
      }
      for (const auto* c : {&res.streaming, &res.holding[0], &res.holding[1], &res.holding[2]}) {
        if (c->rows != remote.rows) {
          return Status::Invalid("demo: the client run (" + c->mode + ", " + c->policy + ") fetched " + Count(c->rows) +
                                 " rows of (a), expected " + Count(remote.rows));
        }
      }
      std::fprintf(out, "\n%s", FormatFetchCosts(res).c_str());
    }
  }
  server->Stop();

  std::fprintf(out,
               "\n== 3. Memory, stage by stage: the stages that moved (held = at the end of the stage's query, peak = "
               "highest during it;\n   RSS/HWM of this process, server and client, once the query was done: the "
               "stages of a query stream concurrently)\n");
  std::fputs(FormatStageTable(table).c_str(), out);
  std::fputs(FormatMainJobHeadline(res).c_str(), out);
  const int total = static_cast<int>(std::size(queries));
  if (matched == total) {
    std::fprintf(out, "\nall %d results match the in-process engine (%.1f s)\n", total, secs());
  } else {
    std::fprintf(out, "\nMISMATCH: %d of %d results differ from the in-process engine (%.1f s)\n", total - matched,
                 total, secs());
    return Status::Invalid("demo: a result differs from the in-process run");
  }
  return res;
}

}  // namespace quiver::job

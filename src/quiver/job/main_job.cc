// quiver/job/main_job.cc — see main_job.h.
#include "quiver/job/main_job.h"

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>

#include "quiver/base/byte_size.h"
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
  std::vector<std::string> first_rows;  // " | "-joined, up to `keep`

  void Add(const RecordBatch& b, size_t keep) {
    std::string row, v;
    for (int64_t r = 0; r < b.num_rows; ++r) {
      row.clear();
      for (size_t c = 0; c < b.columns.size(); ++c) {
        if (c) row += '\x1f';
        if (IsLogicalNull(*b.columns[c], r)) {
          row += "\x1eNULL";
        } else {
          v.clear();
          FormatValue(*b.columns[c], r, ValueFormat::kText, &v);
          row += v;
        }
      }
      uint64_t h = 1469598103934665603ull;
      for (unsigned char ch : row) {
        h ^= ch;
        h *= 1099511628211ull;
      }
      sum += h;
      ++rows;
      if (first_rows.size() < keep) {
        std::string shown;
        for (char ch : row) {
          if (ch == '\x1f') {
            shown += " | ";
          } else if (ch != '\x1e') {
            shown += ch;
          }
        }
        first_rows.push_back(std::move(shown));
      }
    }
  }
};

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

struct Query {
  const char* label;
  const char* sql;
};

}  // namespace

std::string FormatStageTable(const std::vector<MainJobStage>& stages) {
  const char* head[] = {"stage", "pool", "held", "peak", "RSS", "HWM", "detail"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& r : stages) {
    cells.push_back({r.stage, r.pool, r.held, r.peak, B(r.rss_bytes), B(r.hwm_bytes), r.detail});
  }
  size_t w[7];
  for (int c = 0; c < 7; ++c) {
    w[c] = std::string(head[c]).size();
    for (const auto& row : cells) w[c] = std::max(w[c], row[c].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& v) {
    std::string s;
    for (int c = 0; c < 7; ++c) {
      std::string cell = v[c];
      if (c < 6) cell += std::string(w[c] - cell.size(), ' ');
      s += (c ? " | " : "  ") + cell;
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out += s + "\n";
  };
  line({head[0], head[1], head[2], head[3], head[4], head[5], head[6]});
  std::string sep = "  ";
  for (int c = 0; c < 7; ++c) sep += (c ? "-+-" : "") + std::string(c < 6 ? w[c] : 6, '-');
  out += sep + "\n";
  for (const auto& r : cells) line(r);
  return out;
}

// One fetch of `sql` through the in-process server with `policy`, every batch
// dropped as it comes (streaming): the decoded bytes and the client pool's
// peak (chunks, mappings, LZ4 buffers: everything the client charges).
Result<MainJobFetchCost> MeasureFetch(const server::ResultServer& server, const std::string& token,
                                      const std::string& sql, fetch::ChunkPolicy policy,
                                      const std::shared_ptr<MemoryPool>& root, const std::string& client_exe) {
  if (!client_exe.empty()) {
    // A child process: its peak RSS is the client's alone. The token goes
    // through the environment, never the command line.
    ::setenv("QUIVER_TOKEN", token.c_str(), 1);
    const std::string cmd = "'" + client_exe + "' bench fetch-client --server '" + server.rpc_url() + "' --ca-cert '" +
                            server.cert_path() + "' --mode fetchall --policy " +
                            std::string(fetch::ChunkPolicyName(policy)) + " --sql \"" + sql + "\"";
    std::FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return Status::IOError("demo: cannot run " + client_exe);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    const int rc = ::pclose(p);
    ::unsetenv("QUIVER_TOKEN");
    auto field = [&](const std::string& key) -> int64_t {
      const size_t at = out.find("\"" + key + "\":");
      return at == std::string::npos ? -1 : std::strtoll(out.c_str() + at + key.size() + 3, nullptr, 10);
    };
    MainJobFetchCost cost;
    cost.policy = std::string(fetch::ChunkPolicyName(policy));
    cost.decoded_bytes = field("decoded_bytes");
    cost.client_peak_bytes = field("peak_rss_increase");
    cost.rss = true;
    if (rc != 0 || cost.decoded_bytes < 0 || cost.client_peak_bytes < 0) {
      return Status::IOError("demo: the headline's client failed (exit " + std::to_string(rc) + "): " + out);
    }
    return cost;
  }
  auto pool = Child(root, "fetch-" + std::string(fetch::ChunkPolicyName(policy)));
  fetch::ConnectionOptions conn;
  conn.server_url = server.rpc_url();
  conn.token = token;
  conn.ca_cert_path = server.cert_path();
  fetch::FetchOptions fo;
  fo.download.pool = pool.get();
  fo.download.policy = policy;
  MainJobFetchCost cost;
  cost.policy = std::string(fetch::ChunkPolicyName(policy));
  const auto t0 = bench::Clock::now();
  QUIVER_ASSIGN_OR_RETURN(auto result, fetch::FetchResult::Query(conn, sql, fo));
  std::vector<RecordBatchPtr> all;  // fetch-all, as fetchall() does
  while (true) {
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, result->Next());
    if (!b) break;
    all.push_back(std::move(b));
  }
  if (const auto* ds = result->download_stats()) cost.decoded_bytes = ds->bytes_decoded.load();
  cost.seconds = bench::Seconds(t0, bench::Clock::now());
  result.reset();
  cost.client_peak_bytes = pool->peak_bytes();
  return cost;
}

std::string FormatMainJobHeadline(const MainJobResult& r) {
  const auto ratio = [](int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0; };
  char line[1024];
  std::snprintf(line, sizeof line,
                "\n== headline: query (a) decodes to %s; the client's peak fetching it all is %s %s (%.2fx of the "
                "decoded size, policy %s)\n   the same fetch with the heap policy (compressed body held, then "
                "decompressed on the heap): %s (%.2fx), %.1fx quiver's\n",
                FormatBytes(r.stream_mmap.decoded_bytes).c_str(), FormatBytes(r.stream_mmap.client_peak_bytes).c_str(),
                r.stream_mmap.rss ? "of RSS (a client process)" : "(client pool)",
                ratio(r.stream_mmap.client_peak_bytes, r.stream_mmap.decoded_bytes), r.stream_mmap.policy.c_str(),
                FormatBytes(r.heap.client_peak_bytes).c_str(), ratio(r.heap.client_peak_bytes, r.heap.decoded_bytes),
                ratio(r.heap.client_peak_bytes, r.stream_mmap.client_peak_bytes));
  return line;
}

Result<MainJobResult> RunMainJob(const MainJobOptions& o, const std::shared_ptr<MemoryPool>& root, std::FILE* out) {
  const auto t0 = bench::Clock::now();
  auto secs = [&] { return bench::Seconds(t0, bench::Clock::now()); };
  const join::MemoryMode mode = o.memory_mode;
  MainJobResult res;
  std::vector<MainJobStage>& table = res.stages;

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
      sizes += (sizes.empty() ? "" : ", ") + f.table + " " + std::to_string(f.num_rows);
    }
  }
  std::fprintf(out, "== TPC-H scale %g: 8 tables, %s of Arrow IPC files (%s rows) in %.1f s\n", o.scale,
               FormatBytes(file_bytes).c_str(), sizes.c_str(), secs());
  table.push_back({"generate", "generate", B(gen_pool->held_bytes()), B(gen_pool->peak_bytes()),
                   "8 IPC files, " + B(file_bytes) + " on disk (scans map them: no pool bytes)",
                   ProcStatusBytes("VmRSS"), ProcStatusBytes("VmHWM")});

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
               "== server: %s (self-signed certificate %s, random bearer token), chunks: LZ4 frames of ~%s of IPC\n",
               server->rpc_url().c_str(), server->cert_path().c_str(), FormatBytes(o.chunk_bytes).c_str());

  // (a) a large join (many CloudFetch chunks); (b)-(d) TPC-H queries
  // (validation parameters): a 3-way join with aggregate and top-N, a 6-way
  // join, and IN over a grouped subquery.
  const std::string q3(sql::TpchQueries()[2].sql), q5(sql::TpchQueries()[4].sql), q18(sql::TpchQueries()[17].sql);
  const Query queries[] = {
      {"(a) orders JOIN lineitem, orderdate < 1993-01-01",
       "SELECT o.o_orderkey, o.o_orderdate, o.o_totalprice, l.l_linenumber, l.l_partkey, l.l_quantity, "
       "l.l_extendedprice, l.l_shipdate FROM orders o JOIN lineitem l ON o.o_orderkey = l.l_orderkey "
       "WHERE o.o_orderdate < DATE '1993-01-01'"},
      {"(b) TPC-H Q3: customer, orders, lineitem; aggregate; top 10", q3.c_str()},
      {"(c) TPC-H Q5: six-way join, aggregate, ORDER BY", q5.c_str()},
      {"(d) TPC-H Q18: IN over a grouped subquery, top 100", q18.c_str()},
  };
  bool all_ok = true;
  auto fetch_pool = Child(root, "fetch");
  auto check_pool = Child(root, "check");
  for (const auto& q : queries) {
    std::fprintf(out, "\n== %s\n   %s\n", q.label, q.sql);
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
    fo.download.policy = fetch::ChunkPolicy::kStreamMmap;  // the default window
    const double q0 = secs();
    Digest remote;
    int64_t chunks = 0, window_peak = 0, downloaded = 0, decoded = 0, store_mem = 0, store_peak = 0, store_spilled = 0,
            store_spilled_chunks = 0;
    {
      QUIVER_ASSIGN_OR_RETURN(auto result, fetch::FetchResult::Query(conn, q.sql, fo));
      while (true) {
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, result->Next());
        if (!b) break;
        remote.Add(*b, static_cast<size_t>(o.rows_shown));
        if (remote.first_rows.size() <= static_cast<size_t>(o.rows_shown) && remote.rows == b->num_rows) {
          std::string h;
          for (size_t c = 0; c < b->schema->fields.size(); ++c) h += (c ? " | " : "") + b->schema->fields[c]->name;
          std::fprintf(out, "   %s\n", h.c_str());
        }
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
    for (const auto& r : remote.first_rows) std::fprintf(out, "   %s\n", r.c_str());
    const auto svc1 = server->service()->stats();
    const int64_t rss = ProcStatusBytes("VmRSS"), hwm = ProcStatusBytes("VmHWM");
    const auto maps = fetch::GetMappingStats();

    // The same statement in-process.
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
    all_ok = all_ok && ok;
    std::fprintf(
        out,
        "   %lld rows in %lld CloudFetch chunks (%.2f s); in-process sql::Engine: %lld rows; checksum %016" PRIx64
        " vs %016" PRIx64 ": %s\n",
        static_cast<long long>(remote.rows), static_cast<long long>(chunks), fetch_s,
        static_cast<long long>(local.rows), remote.sum, local.sum, ok ? "verified" : "MISMATCH");
    res.queries.push_back(
        {q.label, q.sql, remote.rows, chunks, remote.sum, local.rows, local.sum, ok, remote.first_rows});

    const int64_t ipc = svc1.chunk_ipc_bytes - svc0.chunk_ipc_bytes;
    const int64_t served = svc1.chunk_served_bytes - svc0.chunk_served_bytes;
    const int64_t nchunks = svc1.chunks_written - svc0.chunks_written;
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, "%.2fx", served > 0 ? static_cast<double>(ipc) / served : 0.0);
    auto peak = [&](const std::string& suffix) { return serve_peaks->Peak(suffix); };
    const int64_t build_peak = peak("/sql-statement/build");
    std::string build_detail = std::string("hashed build side (") + std::string(join::MemoryModeName(mode)) + ")";
    if (mode == join::MemoryMode::kOffHeap) build_detail += ": mapped pages, charged with Reserve";
    table.push_back(
        {tag + "build relation", "serve/exec/sql-statement/build", B(0), B(build_peak), build_detail, rss, hwm});
    table.push_back({tag + "probe", "serve/exec/sql-statement/probe", B(0), B(peak("/sql-statement/probe")),
                     "scan decode, filtered copies, join output batches", rss, hwm});
    table.push_back({tag + "scan", "serve/exec/sql-statement/scan", B(0), B(peak("/sql-statement/scan")),
                     "decoded columns, filtered copies, projections", rss, hwm});
    table.push_back(
        {tag + "aggregate", "serve/exec/sql-statement/aggregate", B(0), B(peak("/sql-statement/aggregate")),
         std::string("hash aggregation tables (") + std::string(join::MemoryModeName(mode)) + ") and output", rss,
         hwm});
    table.push_back({tag + "sort", "serve/exec/sql-statement/sort", B(0), B(peak("/sql-statement/sort")),
                     "sort / top-N buffers", rss, hwm});
    table.push_back({tag + "statement", "serve/exec/sql-statement", B(0), B(peak("/serve/exec/sql-statement")),
                     "every operator of the statement (sampled at each allocation)", rss, hwm});
    table.push_back({tag + "compress chunks", "serve/chunks", B(server->service()->chunk_pool()->held_bytes()),
                     B(peak("/serve/chunks")),
                     std::to_string(nchunks) + " chunks, LZ4 frame each, ~" + FormatBytes(o.chunk_bytes) +
                         " IPC target: IPC " + B(ipc) + " -> served " + B(served) + " (" + ratio + ")",
                     rss, hwm});
    table.push_back({tag + "serve", "chunk store", B(store_mem), B(store_peak),
                     "held once the last chunk was read (the closing session removes them); spilled " +
                         B(store_spilled) + " (" + std::to_string(store_spilled_chunks) + " chunks ever), budget 1 GiB",
                     rss, hwm});
    table.push_back(
        {tag + "download", "fetch window", B(0), B(window_peak),
         B(downloaded) + " over HTTPS; window = shares reserved for files in flight, of " + B(fo.download.window_bytes),
         rss, hwm});
    table.push_back({tag + "decompress", "chunk mappings", B(maps.mapped_bytes), B(maps.peak_mapped_bytes),
                     B(decoded) + " of IPC decompressed into private mappings (stream-mmap)", rss, hwm});
    table.push_back({tag + "decode", "fetch", B(fetch_pool->held_bytes()), B(fetch_pool->peak_bytes()),
                     "zero-copy batches over the mappings, hashed and dropped", rss, hwm});
  }
  // The headline: the larger result fetched again, streaming, with quiver's
  // policy and with the heap policy (the seed's "before"), same server, same run.
  QUIVER_ASSIGN_OR_RETURN(res.stream_mmap, MeasureFetch(*server, token, queries[0].sql, fetch::ChunkPolicy::kStreamMmap,
                                                        root, o.client_exe));
  QUIVER_ASSIGN_OR_RETURN(res.heap,
                          MeasureFetch(*server, token, queries[0].sql, fetch::ChunkPolicy::kHeap, root, o.client_exe));
  server->Stop();

  std::fprintf(out,
               "\n== memory, stage by stage (held = at the end of the stage's query, peak = highest during it;\n"
               "   the stages of a query stream concurrently, so RSS/HWM are sampled once the query is done)\n");
  std::fputs(FormatStageTable(table).c_str(), out);
  std::fputs(FormatMainJobHeadline(res).c_str(), out);
  std::fprintf(out, "\n%s in %.1f s\n", all_ok ? "all results verified" : "VERIFICATION FAILED", secs());
  if (!all_ok) return Status::Invalid("demo: a result differs from the in-process run");
  return res;
}

}  // namespace quiver::job

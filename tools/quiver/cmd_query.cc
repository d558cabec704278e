// quiver query: run SQL on a Databricks SQL-protocol server (quiver serve, or
// a warehouse) and fetch the result with quiver's CloudFetch client
// (quiver/fetch/fetch_result.h): rows to stdout as table|csv|jsonl, or to an
// Arrow IPC file written atomically (-o FILE, temp file + rename). Progress
// on stderr when it is a terminal; a summary and a memory report at the end.
// Ctrl-C cancels the operation on the server and frees everything.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "quiver/bench/measure.h"
#include "quiver/cli.h"
#include "quiver/columnar/value_format.h"
#include "quiver/fetch/chunk_decoder.h"
#include "quiver/fetch/fetch_result.h"
#include "quiver/ipc/io.h"
#include "quiver/ipc/writer.h"

namespace quiver::cli {
namespace {

std::atomic<bool> g_interrupted{false};

void OnSigint(int) { g_interrupted = true; }

struct QueryOpts {
  std::string server;
  std::string token;
  std::string ca_cert;
  bool insecure = false;
  std::string sql;
  std::string format = "table";
  std::string output;
  std::string compression = "none";
  std::string window = "256MiB";
  int parallel = 8;
  std::string policy = "stream-mmap";
  int retries = 4;
  int64_t limit = -1;
  bool quiet = false;
  bool hold = false;
};

Status RunQuery(Context& ctx, const QueryOpts& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t rss0 = bench::ProcStatusBytes("VmRSS");
  fetch::ConnectionOptions conn;
  conn.server_url = o.server;
  conn.token = o.token;
  if (conn.token.empty()) {
    if (const char* env = std::getenv("QUIVER_TOKEN")) conn.token = env;
  }
  if (conn.token.empty()) return Status::Invalid("no token: pass --token or set QUIVER_TOKEN");
  conn.ca_cert_path = o.ca_cert;
  conn.insecure = o.insecure;
  if (o.insecure) {
    std::fprintf(stderr,
                 "quiver: WARNING: --insecure: TLS certificates and host names are NOT verified; "
                 "anyone on the path can read the token and the data\n");
  }
  auto pool = ctx.Child("fetch");
  fetch::FetchOptions fo;
  fo.download.pool = pool.get();
  QUIVER_ASSIGN_OR_RETURN(fo.download.policy, fetch::ParseChunkPolicy(o.policy));
  QUIVER_ASSIGN_OR_RETURN(fo.download.window_bytes, ParseBytes(o.window));
  if (o.parallel < 1) return Status::Invalid("--parallel must be >= 1");
  fo.download.parallel = o.parallel;
  if (o.retries < 0) return Status::Invalid("--retries must be >= 0");
  fo.download.max_retries = o.retries;
  std::atomic<bool> cancel{false};
  conn.cancel = &cancel;

  struct sigaction sa {};
  sa.sa_handler = OnSigint;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_sa {};
  sigaction(SIGINT, &sa, &old_sa);
  struct RestoreSignal {
    struct sigaction old;
    ~RestoreSignal() { sigaction(SIGINT, &old, nullptr); }
  } restore{old_sa};

  // A watcher: turns Ctrl-C into Cancel(), draws the progress line.
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  fetch::FetchResult* live = nullptr;
  const bool tty = isatty(STDERR_FILENO) && !o.quiet;
  std::thread watcher([&] {
    std::unique_lock<std::mutex> lock(mu);
    bool cancelled = false;
    while (!done) {
      cv.wait_for(lock, std::chrono::milliseconds(100));
      if (g_interrupted && !cancelled) {
        cancelled = true;
        cancel = true;
        if (live) live->Cancel();
      }
      if (tty && live) {
        const fetch::DownloadStats* s = live->download_stats();
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (s) {
          std::fprintf(stderr, "\r%lld/%lld%s chunks, %.1f MB/s, %lld rows   ",
                       static_cast<long long>(s->chunks_done.load()), static_cast<long long>(s->chunks_known.load()),
                       s->all_links_known ? "" : "+", s->bytes_downloaded.load() / 1e6 / std::max(secs, 1e-3),
                       static_cast<long long>(live->rows_delivered()));
        }
      }
    }
  });
  struct Join {
    std::thread* t;
    std::mutex* mu;
    std::condition_variable* cv;
    bool* done;
    ~Join() {
      {
        std::lock_guard<std::mutex> lock(*mu);
        *done = true;
      }
      cv->notify_all();
      t->join();
    }
  } join{&watcher, &mu, &cv, &done};

  QUIVER_ASSIGN_OR_RETURN(auto result, fetch::FetchResult::Query(conn, o.sql, fo));
  {
    std::lock_guard<std::mutex> lock(mu);
    live = result.get();
    if (g_interrupted) result->Cancel();
  }
  struct Unlive {
    std::mutex* mu;
    fetch::FetchResult** live;
    ~Unlive() {
      std::lock_guard<std::mutex> lock(*mu);
      *live = nullptr;
    }
  } unlive{&mu, &live};

  int64_t rows = 0;
  std::string tmp_path;
  std::unique_ptr<ipc::OutputStream> file;
  std::unique_ptr<ipc::RecordBatchWriter> writer;
  QUIVER_ASSIGN_OR_RETURN(const RowTextFormat text_format, ParseRowTextFormat(o.format));
  RowTextWriter text(text_format, stdout);
  auto write_pool = ctx.Child("write");
  if (!o.output.empty() && o.output != "-") {
    QUIVER_ASSIGN_OR_RETURN(CompressionType codec, ParseCompressionType(o.compression));
    tmp_path = o.output + ".tmp-" + std::to_string(getpid());
    QUIVER_ASSIGN_OR_RETURN(file, ipc::OpenOutputStream(tmp_path));
    ipc::WriteOptions wo;
    wo.pool = write_pool.get();
    wo.compression = codec;
    QUIVER_ASSIGN_OR_RETURN(writer, ipc::RecordBatchWriter::Make(file.get(), result->schema(), ipc::IpcFormat::kFile, wo));
  } else {
    text.WriteHeader(*result->schema());
  }
  struct RemoveTmp {
    std::string* path;
    ~RemoveTmp() {
      if (!path->empty()) std::remove(path->c_str());
    }
  } remove_tmp{&tmp_path};

  Status st;
  std::vector<RecordBatchPtr> held;  // --hold
  for (;;) {
    auto b = result->Next();
    if (!b.ok()) {
      st = b.status();
      break;
    }
    if (!*b) break;
    RecordBatchPtr batch = *b;
    if (o.limit >= 0 && rows + batch->num_rows > o.limit) {
      QUIVER_ASSIGN_OR_RETURN(batch, SliceBatch(batch, 0, o.limit - rows));
    }
    rows += batch->num_rows;
    if (o.hold) held.push_back(batch);
    if (writer) {
      st = writer->WriteBatch(*batch);
      if (!st.ok()) break;
    } else {
      text.WriteRows(*batch);
    }
    if (o.limit >= 0 && rows >= o.limit) {
      result->Cancel();
      break;
    }
  }
  if (tty) std::fprintf(stderr, "\r\033[K");
  if (st.ok() && writer) {
    st = writer->Close();
    if (st.ok()) st = file->Flush();
    file.reset();
    if (st.ok() && std::rename(tmp_path.c_str(), o.output.c_str()) != 0) {
      st = Status::IOError("cannot rename " + tmp_path + " to " + o.output);
    }
    if (st.ok()) tmp_path.clear();
  }
  std::fflush(stdout);

  held.clear();
  // Summary and memory report (stderr).
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const fetch::DownloadStats* s = result->download_stats();
  const fetch::MappingStats ms = fetch::GetMappingStats();
  if (!o.quiet) {
    std::fprintf(stderr, "quiver query: %lld rows, %lld chunks, %s downloaded, %s decoded, %lld retries, %lld refreshes, %.2f s",
                 static_cast<long long>(rows), static_cast<long long>(result->chunks_consumed()),
                 FormatBytes(s ? s->bytes_downloaded.load() : 0).c_str(),
                 FormatBytes(s ? s->bytes_decoded.load() : 0).c_str(),
                 static_cast<long long>(s ? s->retries.load() : 0), static_cast<long long>(s ? s->refreshes.load() : 0), secs);
    if (s && secs > 0) std::fprintf(stderr, " (%.1f MB/s)", s->bytes_downloaded.load() / 1e6 / secs);
    std::fprintf(stderr, "\n");
    const int64_t hwm = bench::ProcStatusBytes("VmHWM");
    std::fprintf(stderr, "memory: policy %s, window %s (peak %s), client pool held %s, peak %s; mapped peak %s, heap fallbacks %lld; peak RSS increase %s\n",
                 o.policy.c_str(), FormatBytes(fo.download.window_bytes).c_str(),
                 FormatBytes(s ? s->window_peak_bytes.load() : 0).c_str(), FormatBytes(pool->held_bytes()).c_str(),
                 FormatBytes(pool->peak_bytes()).c_str(), FormatBytes(ms.peak_mapped_bytes).c_str(),
                 static_cast<long long>(ms.heap_fallbacks),
                 hwm >= 0 && rss0 >= 0 ? FormatBytes(hwm - rss0).c_str() : "unknown");
  }
  if (o.limit >= 0 && rows >= o.limit && st.code() == StatusCode::kCancelled) st = Status::OK();
  return st;
}

}  // namespace

void AddQuery(CLI::App& app, Context& ctx, Action* action, int* exit_code) {
  auto* cmd = app.add_subcommand("query", "run SQL on a Databricks SQL-protocol server and fetch the result (CloudFetch)");
  auto o = std::make_shared<QueryOpts>();
  cmd->add_option("--server", o->server, "https://HOST:PORT/PATH of the server (warehouse HTTP path)")->required();
  cmd->add_option("--token", o->token, "bearer token (default: $QUIVER_TOKEN); never printed");
  cmd->add_option("--ca-cert", o->ca_cert, "PEM file of a CA to trust (e.g. quiver serve's self-signed certificate)");
  cmd->add_flag("--insecure", o->insecure, "do NOT verify TLS certificates (dangerous)");
  cmd->add_option("SQL", o->sql, "the statement")->required();
  cmd->add_option("--format", o->format, "stdout text format: table|csv|jsonl|none (none: fetch and count only)")
      ->check(CLI::IsMember({"table", "csv", "jsonl", "none"}));
  cmd->add_flag("--hold", o->hold, "keep every batch until the end (measures fetch-all memory)");
  cmd->add_option("-o,--output", o->output, "write the result as an Arrow IPC file (atomically: temp file + rename)");
  cmd->add_option("--compression", o->compression, "IPC body compression of -o: none|lz4|zstd");
  cmd->add_option("--window", o->window, "download window in bytes (suffix K/M/G; default 256MiB)");
  cmd->add_option("--parallel", o->parallel, "files downloading at once (default 8)");
  cmd->add_option("--policy", o->policy, "chunk memory: heap|mmap-after|stream-mmap (default stream-mmap)")
      ->check(CLI::IsMember({"heap", "mmap-after", "stream-mmap"}));
  cmd->add_option("--retries", o->retries, "retries per chunk on 5xx, timeouts, resets (default 4)");
  cmd->add_option("--limit", o->limit, "stop after N rows (cancels the rest)");
  cmd->add_flag("-q,--quiet", o->quiet, "no progress, summary or memory report");
  cmd->callback([&ctx, o, action, exit_code] {
    *action = [&ctx, o, exit_code]() -> Status {
      Status st = RunQuery(ctx, *o);
      // Ctrl-C: the statement was cancelled on the server; exit 130 (128 + SIGINT) as shells expect.
      if (g_interrupted && !st.ok()) {
        *exit_code = 130;
        if (st.code() == StatusCode::kCancelled) {
          st = Status::Cancelled("interrupted: the operation was cancelled on the server");
        }
      }
      return st;
    };
  });
}

}  // namespace quiver::cli

// quiver/job/query_job.cc — see query_job.h.
#include "quiver/job/query_job.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "quiver/base/byte_size.h"
#include "quiver/bench/measure.h"
#include "quiver/fetch/fetch_result.h"
#include "quiver/formats/sink.h"
#include "quiver/ipc/io.h"
#include "quiver/ipc/writer.h"

namespace quiver::job {
namespace {

std::shared_ptr<MemoryPool> Child(const std::shared_ptr<MemoryPool>& root, const std::string& name) {
  MemoryPoolOptions o;
  o.name = name;
  return root->MakeChild(o);
}

}  // namespace

std::string FormatQueryMemoryReport(const QueryJobSummary& sum, const QueryJobOptions& o) {
  std::string out = "memory: peak RSS increase ";
  out += sum.peak_rss_increase_bytes >= 0 ? FormatBytes(sum.peak_rss_increase_bytes) : "unknown";
  out += " for " + FormatBytes(sum.decoded_bytes) + " decoded";
  if (sum.peak_rss_increase_bytes >= 0 && sum.decoded_bytes > 0) {
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, " = %.2fx",
                  static_cast<double>(sum.peak_rss_increase_bytes) / static_cast<double>(sum.decoded_bytes));
    out += ratio;
  }
  out += " (the client's memory per decoded byte" + std::string(o.hold ? ", every batch held" : "") + ")\n";
  out += "  window: limit " + FormatBytes(o.window_bytes) + " x parallel " + std::to_string(o.parallel) + ", peak " +
         FormatBytes(sum.window_peak_bytes) +
         " of reservations (expected decoded bytes of files in flight + decoded bytes not yet consumed)\n";
  out += "  client pool held " + FormatBytes(sum.pool_held_bytes) + ", peak " + FormatBytes(sum.pool_peak_bytes) +
         " (chunks and LZ4 buffers charged); chunk mappings peak " + FormatBytes(sum.mapped_peak_bytes) + "; policy " +
         std::string(fetch::ChunkPolicyName(o.policy)) + ", heap fallbacks " + std::to_string(sum.heap_fallbacks) +
         "\n";
  return out;
}

Status RunQueryJob(const QueryJobOptions& o, const std::shared_ptr<MemoryPool>& root, std::FILE* rows_out,
                   std::FILE* log, QueryJobSummary* summary) {
  const auto t0 = bench::Clock::now();
  const int64_t rss0 = bench::ProcStatusBytes("VmRSS");
  fetch::ConnectionOptions conn;
  conn.server_url = o.server_url;
  conn.token = o.token;
  conn.ca_cert_path = o.ca_cert_path;
  conn.insecure = o.insecure;
  conn.session_configuration = o.session_configuration;
  auto pool = Child(root, "fetch");
  fetch::FetchOptions fo;
  fo.download.pool = pool.get();
  fo.download.policy = o.policy;
  fo.download.window_bytes = o.window_bytes;
  fo.download.parallel = o.parallel;
  fo.download.max_retries = o.retries;
  fo.download.verify_lz4_checksums = o.verify_lz4_checksums;
  fo.download.row_limit = o.limit;  // --limit: no chunk past the limit is fetched
  std::atomic<bool> cancel{false};
  conn.cancel = &cancel;
  auto interrupted = [&] { return o.interrupt != nullptr && o.interrupt->load(); };

  // A watcher: turns an interruption into Cancel(), draws the progress line.
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  fetch::FetchResult* live = nullptr;
  std::thread watcher([&] {
    std::unique_lock<std::mutex> lock(mu);
    bool cancelled = false;
    while (!done) {
      cv.wait_for(lock, std::chrono::milliseconds(100));
      if (interrupted() && !cancelled) {
        cancelled = true;
        cancel = true;
        if (live) live->Cancel();
      }
      if (o.progress && live) {
        const fetch::DownloadStats* s = live->download_stats();
        const double secs = bench::Seconds(t0, bench::Clock::now());
        if (s) {
          std::fprintf(log, "\r%lld/%lld%s chunks, %.1f MB/s, %lld rows   ",
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
    if (interrupted()) result->Cancel();
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
  std::unique_ptr<formats::LocalFileSink> table_file;
  std::unique_ptr<parquet::FileWriter> parquet_writer;
  std::unique_ptr<formats::csv::CsvWriter> csv_writer;
  RowTextWriter text(o.format, rows_out);
  auto write_pool = Child(root, "write");
  if (!o.output_path.empty() && o.output_path != "-" && (o.output_parquet || o.output_csv)) {
    tmp_path = o.output_path + ".tmp-" + std::to_string(getpid());
    QUIVER_ASSIGN_OR_RETURN(table_file, formats::LocalFileSink::Open(tmp_path));
  }
  if (o.output_csv && table_file) {
    formats::csv::CsvWriteOptions co;
    co.pool = write_pool.get();
    co.compression = formats::csv::CsvCompressionOf(o.output_path);
    QUIVER_ASSIGN_OR_RETURN(csv_writer, formats::csv::CsvWriter::Make(result->schema(), table_file.get(), co));
  } else if (table_file) {
    parquet::WriterOptions po = o.parquet;
    po.pool = write_pool.get();
    QUIVER_ASSIGN_OR_RETURN(parquet_writer, parquet::FileWriter::Make(result->schema(), table_file.get(), po));
  } else if (!o.output_path.empty() && o.output_path != "-") {
    tmp_path = o.output_path + ".tmp-" + std::to_string(getpid());
    QUIVER_ASSIGN_OR_RETURN(file, ipc::OpenOutputStream(tmp_path));
    ipc::WriteOptions wo;
    wo.pool = write_pool.get();
    wo.compression = o.compression;
    QUIVER_ASSIGN_OR_RETURN(writer,
                            ipc::RecordBatchWriter::Make(file.get(), result->schema(), ipc::IpcFormat::kFile, wo));
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
  std::vector<RecordBatchPtr> held;  // hold
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
    if (csv_writer) {
      st = csv_writer->WriteBatch(*batch);
      if (!st.ok()) break;
    } else if (parquet_writer) {
      st = parquet_writer->WriteBatch(batch);
      if (!st.ok()) break;
    } else if (writer) {
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
  if (o.progress) std::fprintf(log, "\r\033[K");
  if (st.ok() && (parquet_writer || csv_writer)) {
    st = parquet_writer ? parquet_writer->Close() : csv_writer->Close();
    if (st.ok()) st = table_file->Close();
    table_file.reset();
    if (st.ok() && std::rename(tmp_path.c_str(), o.output_path.c_str()) != 0) {
      st = Status::IOError("cannot rename " + tmp_path + " to " + o.output_path);
    }
    if (st.ok()) tmp_path.clear();
  }
  if (st.ok() && writer) {
    st = writer->Close();
    if (st.ok()) st = file->Flush();
    file.reset();
    if (st.ok() && std::rename(tmp_path.c_str(), o.output_path.c_str()) != 0) {
      st = Status::IOError("cannot rename " + tmp_path + " to " + o.output_path);
    }
    if (st.ok()) tmp_path.clear();
  }
  std::fflush(rows_out);

  held.clear();
  // Summary and memory report.
  QueryJobSummary sum;
  sum.rows = rows;
  sum.chunks = result->chunks_consumed();
  sum.seconds = bench::Seconds(t0, bench::Clock::now());
  const fetch::DownloadStats* s = result->download_stats();
  if (s) {
    sum.downloaded_bytes = s->bytes_downloaded.load();
    sum.decoded_bytes = s->bytes_decoded.load();
    sum.retries = s->retries.load();
    sum.refreshes = s->refreshes.load();
    sum.window_peak_bytes = s->window_peak_bytes.load();
    sum.lz4_checksums_skipped = s->lz4_checksums_skipped.load();
  }
  sum.pool_held_bytes = pool->held_bytes();
  sum.pool_peak_bytes = pool->peak_bytes();
  const fetch::MappingStats ms = fetch::GetMappingStats();
  sum.mapped_peak_bytes = ms.peak_mapped_bytes;
  sum.heap_fallbacks = ms.heap_fallbacks;
  if (o.report) {
    std::fprintf(
        log, "quiver query: %lld rows, %lld chunks, %s downloaded, %s decoded, %lld retries, %lld refreshes, %.2f s",
        static_cast<long long>(sum.rows), static_cast<long long>(sum.chunks), FormatBytes(sum.downloaded_bytes).c_str(),
        FormatBytes(sum.decoded_bytes).c_str(), static_cast<long long>(sum.retries),
        static_cast<long long>(sum.refreshes), sum.seconds);
    if (s && sum.seconds > 0) std::fprintf(log, " (%.1f MB/s)", sum.downloaded_bytes / 1e6 / sum.seconds);
    if (sum.lz4_checksums_skipped > 0) {
      std::fprintf(log, "; LZ4 checksums skipped on %lld chunks (TLS)",
                   static_cast<long long>(sum.lz4_checksums_skipped));
    }
    std::fprintf(log, "\n");
  }
  const int64_t hwm = bench::ProcStatusBytes("VmHWM");
  if (hwm >= 0 && rss0 >= 0) sum.peak_rss_increase_bytes = hwm - rss0;
  if (o.report) std::fputs(FormatQueryMemoryReport(sum, o).c_str(), log);
  if (summary) *summary = sum;
  if (o.limit >= 0 && rows >= o.limit && st.code() == StatusCode::kCancelled) st = Status::OK();
  return st;
}

}  // namespace quiver::job

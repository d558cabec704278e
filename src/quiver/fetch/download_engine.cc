// quiver/fetch/download_engine.cc — see download_engine.h.
#include "quiver/fetch/download_engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <thread>

namespace quiver::fetch {

std::string ChunkLabel(int64_t index, int64_t start_row, int64_t row_count) {
  return "chunk " + std::to_string(index) + " (rows [" + std::to_string(start_row) + ", " +
         std::to_string(start_row + row_count) + "))";
}

namespace {

using Clock = std::chrono::steady_clock;

int64_t NowEpochMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The byte window. Shared with the chunk Buffers (their leases), so it
// outlives the engine when the consumer keeps batches.
class ByteWindow {
 public:
  explicit ByteWindow(int64_t capacity, DownloadStats* stats) : capacity_(capacity), stats_(stats) {}

  bool TryAcquire(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (in_use_ != 0 && in_use_ + bytes > capacity_) return false;
    in_use_ += bytes;
    if (stats_ != nullptr && in_use_ > stats_->window_peak_bytes.load()) stats_->window_peak_bytes = in_use_;
    return true;
  }
  void Release(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    in_use_ -= bytes;
    if (wake_) wake_();
  }
  // Takes bytes past the capacity if need be: a chunk that decoded to more
  // than its grant (bytesNum too small) is counted at its real size; later
  // files wait until the window is back under its capacity.
  void ForceAcquire(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    in_use_ += bytes;
    if (stats_ != nullptr && in_use_ > stats_->window_peak_bytes.load()) stats_->window_peak_bytes = in_use_;
  }
  void SetWake(std::function<void()> wake) {
    std::lock_guard<std::mutex> lock(mu_);
    wake_ = std::move(wake);
    if (!wake_) stats_ = nullptr;
  }
  int64_t in_use() const {
    std::lock_guard<std::mutex> lock(mu_);
    return in_use_;
  }
  int64_t capacity() const { return capacity_; }

 private:
  mutable std::mutex mu_;
  const int64_t capacity_;
  int64_t in_use_ = 0;
  std::function<void()> wake_;
  DownloadStats* stats_;
};

// A chunk's window share: returned once, by Release() (the consumer has
// read the whole chunk) or when the chunk's Buffer goes, whichever is first.
struct Lease {
  std::shared_ptr<ByteWindow> window;
  std::atomic<int64_t> bytes{0};
  void Release() {
    const int64_t n = bytes.exchange(0);
    if (window && n > 0) window->Release(n);
  }
  ~Lease() { Release(); }
};

struct Chunk {
  enum class State { kWaiting, kActive, kBackoff, kDone, kFailed };
  int64_t index = 0;
  ResultLink link;
  std::string label;
  State state = State::kWaiting;
  int64_t grant = 0;  // window bytes held (0 = none)
  int attempts = 0;   // retries used
  int refreshes = 0;
  bool need_refresh = false;
  Clock::time_point retry_at;
  Clock::time_point last_progress;  // last header or body byte (stall detection)
  std::unique_ptr<ChunkDecoder> decoder;
  objstore::CurlEasyPtr easy;
  objstore::CurlSlistPtr headers;
  char error_buffer[CURL_ERROR_SIZE] = {0};
  // Per-response state, reset by the status line.
  long status = 0;
  bool accept_ranges = false;
  int64_t content_range_start = -1;
  int64_t content_range_total = -1;
  bool body_started = false;
  std::string error_body;
  int64_t range_from = 0;  // resuming from this byte (0 = whole body)
  Status write_error;
  bool decoder_error = false;  // write_error came from the decoder (final)
  DownloadStats* stats = nullptr;
  const DownloadOptions* options = nullptr;
  bool lz4 = true;
  std::shared_ptr<Lz4ContextCache> lz4_contexts;  // the engine's, shared by its decoders
  bool checksums_skipped = false;                 // the decoder skips the LZ4 checksums (opted out, over TLS)
};

bool StartsWithNoCase(const char* s, size_t n, const char* prefix) {
  const size_t m = std::strlen(prefix);
  if (n < m) return false;
  for (size_t i = 0; i < m; ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  }
  return true;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* c = static_cast<Chunk*>(user);
  const size_t len = size * n;
  c->last_progress = Clock::now();
  if (StartsWithNoCase(data, len, "HTTP/")) {
    c->status = 0;
    c->accept_ranges = false;
    c->content_range_start = c->content_range_total = -1;
    c->body_started = false;
    c->error_body.clear();
    const char* sp = static_cast<const char*>(std::memchr(data, ' ', len));
    if (sp != nullptr) c->status = std::strtol(sp + 1, nullptr, 10);
  } else if (StartsWithNoCase(data, len, "accept-ranges:")) {
    std::string v(data + 14, len - 14);
    c->accept_ranges = v.find("bytes") != std::string::npos;
  } else if (StartsWithNoCase(data, len, "content-range:")) {
    std::string v(data + 14, len - 14);
    long long a = -1, b = -1, t = -1;
    if (std::sscanf(v.c_str(), " bytes %lld-%lld/%lld", &a, &b, &t) == 3) {
      c->content_range_start = a;
      c->content_range_total = t;
    }
  }
  return len;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* c = static_cast<Chunk*>(user);
  const size_t len = size * n;
  c->last_progress = Clock::now();
  c->stats->bytes_downloaded += static_cast<int64_t>(len);
  if (c->status != 200 && c->status != 206) {
    if (c->error_body.size() < 512) c->error_body.append(data, std::min<size_t>(len, 512 - c->error_body.size()));
    return len;
  }
  if (!c->body_started) {
    c->body_started = true;
    if (c->status == 200 && c->range_from > 0) {
      // The server ignored the Range: start over.
      c->decoder.reset();
      c->range_from = 0;
      c->stats->restarts += 1;
    }
    if (c->status == 206 && (c->range_from == 0 || c->content_range_start != c->range_from)) {
      c->write_error =
          Status::IOError(c->label + ": HTTP 206 with Content-Range start " + std::to_string(c->content_range_start) +
                          ", expected " + std::to_string(c->range_from));
      c->decoder.reset();
      c->range_from = 0;
      return 0;
    }
    if (!c->decoder) {
      curl_off_t cl = -1;
      objstore::Curl().easy_getinfo(c->easy.get(), CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
      ChunkDecoderOptions o;
      o.pool = c->options->pool;
      o.policy = c->options->policy;
      o.lz4 = c->lz4;
      o.lz4_contexts = c->lz4_contexts;
      o.expected_bytes = c->link.bytes_num > 0 ? std::min(c->link.bytes_num, c->options->max_chunk_bytes) : -1;
      o.bytes_num_is_exact = c->options->bytes_num_is_exact;
      o.compressed_length = c->status == 200 ? static_cast<int64_t>(cl) : -1;
      o.max_decompressed_bytes = c->options->max_chunk_bytes;
      o.max_live_mappings = c->options->max_live_mappings;
      o.chunk_label = c->label;
      // Checksums may be skipped only over TLS, which authenticates every
      // byte in transit (the URL after any redirect decides).
      const char* effective = nullptr;
      objstore::Curl().easy_getinfo(c->easy.get(), CURLINFO_EFFECTIVE_URL, &effective);
      o.verify_lz4_checksums = c->options->verify_lz4_checksums || effective == nullptr ||
                               std::string_view(effective).rfind("https://", 0) != 0;
      c->checksums_skipped = c->lz4 && !o.verify_lz4_checksums;
      auto d = ChunkDecoder::Make(o);
      if (!d.ok()) {
        c->write_error = d.status();
        c->decoder_error = true;
        return 0;
      }
      c->decoder = std::move(*d);
    }
  }
  Status st = c->decoder->Consume({reinterpret_cast<const uint8_t*>(data), len});
  if (!st.ok()) {
    c->write_error = st;
    c->decoder_error = true;
    return 0;
  }
  return len;
}

class EngineImpl final : public DownloadEngine {
 public:
  EngineImpl(std::shared_ptr<ProtocolClient> client, OperationHandle op, bool lz4, std::optional<FetchPage> first,
             bool close_operation, DownloadOptions o)
      : client_(std::move(client)),
        op_(std::move(op)),
        lz4_(lz4),
        first_page_(std::move(first)),
        close_operation_(close_operation),
        o_(o),
        window_(std::make_shared<ByteWindow>(o.window_bytes, &stats_)),
        lz4_contexts_(std::make_shared<Lz4ContextCache>(o.parallel)),
        rng_(std::random_device{}()) {}

  ~EngineImpl() override {
    stop_ = true;
    Wake();
    if (thread_.joinable()) thread_.join();
    window_->SetWake(nullptr);
    if (multi_ != nullptr) objstore::Curl().multi_cleanup(multi_);
  }

  Status Init() {
    QUIVER_ASSIGN_OR_RETURN(const objstore::CurlLibrary* curl, objstore::LoadCurl());
    multi_ = curl->multi_init();
    if (multi_ == nullptr) return Status::OutOfMemory("curl_multi_init failed");
    objstore::Curl().multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(o_.parallel));
    objstore::Curl().multi_setopt(multi_, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    CURLM* m = multi_;
    window_->SetWake([m] { objstore::Curl().multi_wakeup(m); });
    thread_ = std::thread([this] { Run(); });
    return Status::OK();
  }

  Result<std::optional<ReadyChunk>> Next() override {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      auto it = ready_.find(next_deliver_);
      if (it != ready_.end()) {
        ReadyChunk r = std::move(it->second);
        ready_.erase(it);
        ++next_deliver_;
        return std::optional<ReadyChunk>(std::move(r));
      }
      if (!fatal_.ok()) return fatal_;
      if (finished_ && next_deliver_ >= total_chunks_) return std::optional<ReadyChunk>();
      cv_.wait(lock);
    }
  }

  void Cancel() override {
    cancel_ = true;
    Wake();
  }

  const DownloadStats& stats() const override { return stats_; }
  int64_t window_in_use_bytes() const override { return window_->in_use(); }

 private:
  void Wake() {
    if (multi_ != nullptr) objstore::Curl().multi_wakeup(multi_);
  }

  void Fail(Status st) {
    std::lock_guard<std::mutex> lock(mu_);
    if (fatal_.ok()) fatal_ = std::move(st);
    cv_.notify_all();
  }

  void Run() {
    Status st = Loop();
    StopFetcher();           // its page in flight is abandoned; the RPCs below are this thread's alone
    lz4_contexts_->Clear();  // the downloads are over: their LZ4 scratch goes back
    // Stop every transfer and return their window shares.
    for (auto& c : chunks_) {
      if (c->easy) {
        objstore::Curl().multi_remove_handle(multi_, c->easy.get());
        c->easy.reset();
      }
      c->decoder.reset();
      if (c->grant > 0) {
        window_->Release(c->grant);
        c->grant = 0;
      }
    }
    if (cancel_) {
      (void)client_->CancelOperation(op_);
      if (st.ok() || st.code() != StatusCode::kCancelled) st = Status::Cancelled("fetch cancelled");
    }
    if (!st.ok()) {
      Fail(st);
    } else {
      std::lock_guard<std::mutex> lock(mu_);
      finished_ = true;
      cv_.notify_all();
    }
    if (close_operation_) (void)client_->CloseOperation(op_);
    window_->SetWake(nullptr);
    // multi_ itself lives until the destructor: Cancel() may still wake it.
  }

  bool Stopping() const { return cancel_ || stop_; }

  // Appends a page's links after checking them.
  // The consumer's row limit is covered by the links known: ask for no more.
  bool LimitReached() const { return o_.row_limit >= 0 && next_row_ >= o_.row_limit; }

  Status AddLinks(const FetchPage& page) {
    for (const ResultLink& l : page.links) {
      if (LimitReached()) {
        has_more_ = false;  // links past the limit are neither kept nor downloaded
        break;
      }
      const int64_t index = static_cast<int64_t>(chunks_.size());
      const std::string label = ChunkLabel(index, l.start_row_offset, l.row_count);
      if (l.row_count < 0) return Status::Invalid(label + ": negative rowCount " + std::to_string(l.row_count));
      if (l.start_row_offset != next_row_) {
        const int64_t d = l.start_row_offset - next_row_;
        return Status::Invalid(label + ": startRowOffset " + std::to_string(l.start_row_offset) + ", expected " +
                               std::to_string(next_row_) + " (" + (d > 0 ? "a gap of " : "an overlap of ") +
                               std::to_string(d > 0 ? d : -d) + " rows)");
      }
      if (o_.bytes_num_is_exact && l.bytes_num > o_.max_chunk_bytes) {
        return Status::Invalid(label + ": bytesNum " + std::to_string(l.bytes_num) + " exceeds the limit of " +
                               std::to_string(o_.max_chunk_bytes) + " bytes");
      }
      if (l.file_link.empty()) return Status::Invalid(label + ": empty fileLink");
      auto c = std::make_unique<Chunk>();
      c->index = index;
      c->link = l;
      c->label = label;
      c->stats = &stats_;
      c->options = &o_;
      c->lz4 = lz4_;
      c->lz4_contexts = lz4_contexts_;
      next_row_ += l.row_count;
      stats_.rows_announced = next_row_;
      chunks_.push_back(std::move(c));
    }
    stats_.chunks_known = static_cast<int64_t>(chunks_.size());
    return Status::OK();
  }

  // The link fetcher's thread: FetchResults pages from `next_row` (FETCH_FIRST
  // when `first`) while fewer than parallel + 2 links wait to start (queued
  // here or known to the engine), each page queued for the engine thread
  // (TakeLinks), which is woken. A server may hold FetchResults until its
  // next chunk exists, so pages are asked here and never stall the
  // transfers. Ends after the last page (hasMoreRows false, or the row
  // limit covered), on an error (kept for the engine), or at StopFetcher.
  void FetchLinks(int64_t next_row, bool first) {
    int empty = 0;
    int64_t delay_ms = 5;
    Status st;
    auto stopped = [&] { return fetcher_stop_.load(); };
    for (bool more = true; more && !stopped();) {
      {
        std::unique_lock<std::mutex> lock(links_mu_);
        links_cv_.wait(lock, [&] { return stopped() || queued_links_ + engine_waiting_ < o_.parallel + 2; });
        if (stopped()) break;
      }
      Result<FetchPage> page = [&] {
        std::lock_guard<std::mutex> lock(client_mu_);
        return client_->Fetch(op_, first, next_row, o_.page_rows, &fetcher_stop_);
      }();
      if (!page.ok()) {
        if (!stopped()) st = page.status();
        break;
      }
      first = false;
      stats_.pages += 1;
      if (!page->arrow_batches.empty()) {
        st = Status::NotImplemented("FetchResults returned inline Arrow batches in a CloudFetch result");
        break;
      }
      if (page->links.empty() && page->has_more_rows) {
        if (++empty > o_.max_empty_pages) {
          st = Status::Invalid("FetchResults returned " + std::to_string(empty) +
                               " empty pages in a row with hasMoreRows at row " + std::to_string(next_row));
          break;
        }
        std::unique_lock<std::mutex> lock(links_mu_);
        links_cv_.wait_for(lock, std::chrono::milliseconds(delay_ms), stopped);
        delay_ms = std::min<int64_t>(delay_ms * 2, 200);
        continue;
      }
      empty = 0;
      // The engine checks the links (AddLinks); the next page starts after
      // the last one here.
      if (!page->links.empty()) next_row = page->links.back().start_row_offset + page->links.back().row_count;
      more = page->has_more_rows && !(o_.row_limit >= 0 && next_row >= o_.row_limit);
      {
        std::lock_guard<std::mutex> lock(links_mu_);
        queued_links_ += static_cast<int64_t>(page->links.size());
        pages_.push_back(std::move(page).value());
      }
      Wake();
    }
    {
      std::lock_guard<std::mutex> lock(links_mu_);
      fetcher_done_ = true;
      fetcher_error_ = st;
    }
    Wake();
  }

  void StopFetcher() {
    {
      std::lock_guard<std::mutex> lock(links_mu_);
      fetcher_stop_ = true;
    }
    links_cv_.notify_all();
    if (fetcher_.joinable()) fetcher_.join();
  }

  // Engine thread: the pages the fetcher queued, checked and appended; once
  // the fetcher is done and its pages are taken, every link is known.
  Status TakeLinks() {
    std::deque<FetchPage> pages;
    bool done = false;
    Status error;
    {
      std::lock_guard<std::mutex> lock(links_mu_);
      pages.swap(pages_);
      queued_links_ = 0;
      done = fetcher_done_;
      error = fetcher_error_;
    }
    for (const FetchPage& page : pages) {
      if (!has_more_) break;  // the row limit is covered
      QUIVER_RETURN_NOT_OK(AddLinks(page));
      has_more_ = has_more_ && !LimitReached();
    }
    QUIVER_RETURN_NOT_OK(error);
    if (done) has_more_ = false;
    if (!has_more_ && !stats_.all_links_known) {
      StopFetcher();
      stats_.all_links_known = true;
      std::lock_guard<std::mutex> lock(mu_);
      total_chunks_ = static_cast<int64_t>(chunks_.size());
    }
    return Status::OK();
  }

  // Engine thread: tells the fetcher how many known links wait to start.
  void PublishWaiting() {
    int64_t waiting = 0;
    for (size_t i = next_start_; i < chunks_.size(); ++i) waiting += chunks_[i]->state == Chunk::State::kWaiting;
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(links_mu_);
      wake = waiting < engine_waiting_;
      engine_waiting_ = waiting;
    }
    if (wake) links_cv_.notify_all();
  }

  // Replaces a chunk's link by a fresh one from FetchResults(startRowOffset).
  Status Refresh(Chunk* c) {
    if (c->refreshes >= o_.max_refreshes) {
      return Status::IOError(c->label + ": link still refused or expired after " + std::to_string(c->refreshes) +
                             " refreshes");
    }
    ++c->refreshes;
    stats_.refreshes += 1;
    Result<FetchPage> fetched = [&] {
      std::lock_guard<std::mutex> lock(client_mu_);  // after the fetcher's page in flight, if any
      return client_->Fetch(op_, false, c->link.start_row_offset, o_.page_rows);
    }();
    QUIVER_ASSIGN_OR_RETURN(FetchPage page, std::move(fetched));
    stats_.pages += 1;
    for (const ResultLink& l : page.links) {
      if (l.start_row_offset != c->link.start_row_offset) continue;
      if (l.row_count != c->link.row_count || (o_.bytes_num_is_exact && l.bytes_num != c->link.bytes_num)) {
        return Status::Invalid(c->label + ": refreshed link differs: rowCount " + std::to_string(l.row_count) +
                               " (expected " + std::to_string(c->link.row_count) + "), bytesNum " +
                               std::to_string(l.bytes_num) + " (expected " + std::to_string(c->link.bytes_num) + ")");
      }
      c->link.file_link = l.file_link;
      c->link.expiry_time_ms = l.expiry_time_ms;
      c->link.http_headers = l.http_headers;
      c->need_refresh = false;
      return Status::OK();
    }
    return Status::Invalid(c->label + ": FetchResults(startRowOffset " + std::to_string(c->link.start_row_offset) +
                           ") returned no link for the chunk");
  }

  bool Expiring(const Chunk& c) const {
    return c.link.expiry_time_ms > 0 && c.link.expiry_time_ms - o_.refresh_margin_ms <= NowEpochMs();
  }

  Status StartTransfer(Chunk* c) {
    if (c->need_refresh || Expiring(*c)) QUIVER_RETURN_NOT_OK(Refresh(c));
    QUIVER_ASSIGN_OR_RETURN(c->easy, objstore::MakeEasy());
    CURL* e = c->easy.get();
    curl_slist* h = nullptr;
    for (const auto& [k, v] : c->link.http_headers) h = objstore::Curl().slist_append(h, (k + ": " + v).c_str());
    if (c->range_from > 0)
      h = objstore::Curl().slist_append(h, ("Range: bytes=" + std::to_string(c->range_from) + "-").c_str());
    c->headers.reset(h);
    c->status = 0;
    c->body_started = false;
    c->write_error = Status::OK();
    c->decoder_error = false;
    c->error_buffer[0] = 0;
    objstore::Curl().easy_setopt(e, CURLOPT_URL, c->link.file_link.c_str());
    objstore::Curl().easy_setopt(e, CURLOPT_HTTPHEADER, c->headers.get());
    objstore::Curl().easy_setopt(e, CURLOPT_HTTPGET, 1L);
    objstore::Curl().easy_setopt(e, CURLOPT_HEADERFUNCTION, OnHeader);
    objstore::Curl().easy_setopt(e, CURLOPT_HEADERDATA, c);
    objstore::Curl().easy_setopt(e, CURLOPT_WRITEFUNCTION, OnBody);
    objstore::Curl().easy_setopt(e, CURLOPT_WRITEDATA, c);
    objstore::Curl().easy_setopt(e, CURLOPT_PRIVATE, c);
    objstore::Curl().easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    objstore::Curl().easy_setopt(e, CURLOPT_ERRORBUFFER, c->error_buffer);
    objstore::Curl().easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o_.connect_timeout_ms));
    objstore::Curl().easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(o_.low_speed_bytes));
    objstore::Curl().easy_setopt(e, CURLOPT_LOW_SPEED_TIME, static_cast<long>(o_.low_speed_time_s));
    objstore::Curl().easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https");
    objstore::Curl().easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
    objstore::Curl().easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    objstore::ApplyTls(e, o_.tls);
    c->last_progress = Clock::now();
    if (objstore::Curl().multi_add_handle(multi_, e) != CURLM_OK)
      return Status::IOError(c->label + ": curl_multi_add_handle failed");
    c->state = Chunk::State::kActive;
    return Status::OK();
  }

  // A chunk's expected decoded size: bytesNum scaled by the largest
  // decoded / bytesNum ratio seen so far (1 until a chunk is done, and
  // always 1 when bytesNum is exact); without bytesNum, the largest chunk
  // seen so far, else the whole window (the first such chunk goes alone).
  int64_t EstimateFor(const Chunk& c) const {
    if (c.link.bytes_num <= 0) return largest_decoded_ > 0 ? largest_decoded_ : window_->capacity();
    if (o_.bytes_num_is_exact || hint_ratio_ <= 0) return c.link.bytes_num;
    const double est = std::ceil(static_cast<double>(c.link.bytes_num) * hint_ratio_);
    return est >= static_cast<double>(o_.max_chunk_bytes) ? o_.max_chunk_bytes : static_cast<int64_t>(est);
  }

  // A chunk's window share: its expected decoded size, plus for LZ4 the
  // input block LZ4F buffers while it streams (at most one 4 MiB block +
  // 64 KiB, and never more than the chunk). Trued up to the decoded size
  // when the chunk is done (OnDone).
  int64_t GrantFor(const Chunk& c) const {
    const int64_t est = EstimateFor(c);
    if (c.link.bytes_num <= 0 && largest_decoded_ <= 0) return est;
    const int64_t scratch = lz4_ ? std::min<int64_t>(est, (int64_t{4} << 20) + (64 << 10)) : 0;
    return std::max<int64_t>(est + scratch, 1);
  }

  // Learns how bytesNum relates to decoded sizes and sets the chunk's share
  // to its decoded size (more when bytesNum was too small or missing, less
  // when it was too large; the LZ4 input share goes with the decoder).
  void TrueUp(Chunk* c, int64_t decoded) {
    largest_decoded_ = std::max(largest_decoded_, decoded);
    if (c->link.bytes_num > 0 && !o_.bytes_num_is_exact) {
      const double ratio = static_cast<double>(decoded) / static_cast<double>(c->link.bytes_num);
      hint_ratio_ = std::max(hint_ratio_, ratio);
    }
    if (decoded > c->grant) {
      window_->ForceAcquire(decoded - c->grant);
      c->grant = decoded;
    } else if (!o_.bytes_num_is_exact && decoded < c->grant) {
      window_->Release(c->grant - decoded);
      c->grant = decoded;
    }
  }

  Status StartNext() {
    int64_t active = 0;
    for (auto& c : chunks_) active += c->state == Chunk::State::kActive || c->state == Chunk::State::kBackoff;
    while (next_start_ < chunks_.size() && active < o_.parallel && !Stopping()) {
      Chunk* c = chunks_[next_start_].get();
      const int64_t grant = GrantFor(*c);
      if (!window_->TryAcquire(grant)) break;  // file order: later files wait too
      c->grant = grant;
      QUIVER_RETURN_NOT_OK(StartTransfer(c));
      ++next_start_;
      ++active;
    }
    return Status::OK();
  }

  int64_t BackoffMs(int attempt) {
    double d = static_cast<double>(o_.retry_initial_ms) * static_cast<double>(int64_t{1} << std::min(attempt, 20));
    d = std::min(d, static_cast<double>(o_.retry_max_ms));
    std::uniform_real_distribution<double> jitter(0.5, 1.5);
    return static_cast<int64_t>(d * jitter(rng_));
  }

  // Schedules a retry; Err when the budget is spent.
  Status Retry(Chunk* c, const Status& why) {
    if (c->attempts >= o_.max_retries) {
      return Status(why.code(), c->label + ": download failed after " + std::to_string(c->attempts + 1) +
                                    " attempts: " + why.message());
    }
    const int64_t ms = BackoffMs(c->attempts);
    ++c->attempts;
    stats_.retries += 1;
    // Resume with Range when the server allows it and the bytes so far are good.
    if (c->accept_ranges && c->decoder && c->decoder->received_bytes() > 0 && !c->decoder_error) {
      c->range_from = c->decoder->received_bytes();
      stats_.range_resumes += 1;
    } else {
      if (c->decoder) c->decoder->Reset();
      if (c->decoder && c->decoder->received_bytes() == 0 && c->range_from > 0) c->range_from = 0;
      c->range_from = 0;
      if (c->decoder) stats_.restarts += 1;
    }
    c->state = Chunk::State::kBackoff;
    c->retry_at = Clock::now() + std::chrono::milliseconds(ms);
    return Status::OK();
  }

  Status OnDone(Chunk* c, CURLcode rc) {
    objstore::Curl().multi_remove_handle(multi_, c->easy.get());
    c->easy.reset();
    c->headers.reset();
    if (c->decoder_error) return c->write_error;  // bad data or memory: final
    if (rc == CURLE_OK && (c->status == 200 || c->status == 206)) {
      if (!c->decoder) {
        // An empty body: nothing was ever written.
        ChunkDecoderOptions o;
        o.pool = o_.pool;
        o.policy = o_.policy;
        o.lz4 = lz4_;
        o.lz4_contexts = lz4_contexts_;
        o.expected_bytes = c->link.bytes_num > 0 ? std::min(c->link.bytes_num, o_.max_chunk_bytes) : -1;
        o.bytes_num_is_exact = o_.bytes_num_is_exact;
        o.max_decompressed_bytes = o_.max_chunk_bytes;
        o.chunk_label = c->label;
        QUIVER_ASSIGN_OR_RETURN(c->decoder, ChunkDecoder::Make(o));
      }
      QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> body, c->decoder->Finish());
      stats_.heap_fallbacks += c->decoder->used_heap_fallback() ? 1 : 0;
      stats_.lz4_checksums_skipped += c->checksums_skipped ? 1 : 0;
      c->decoder.reset();
      stats_.bytes_decoded += body->size();
      TrueUp(c, body->size());
      // The Buffer handed out owns the chunk memory and the window share.
      struct Owner {
        std::shared_ptr<Buffer> body;
        std::shared_ptr<Lease> lease;
      };
      auto lease = std::make_shared<Lease>();
      lease->window = window_;
      lease->bytes = c->grant;
      c->grant = 0;
      auto owner = std::make_shared<Owner>();
      owner->body = body;
      owner->lease = lease;
      ReadyChunk r;
      r.index = c->index;
      r.link = c->link;
      r.body = Buffer::Wrap(body->data(), body->size(), owner);
      r.release_window_share = [lease] { lease->Release(); };
      c->state = Chunk::State::kDone;
      stats_.chunks_done += 1;
      std::lock_guard<std::mutex> lock(mu_);
      ready_.emplace(c->index, std::move(r));
      cv_.notify_all();
      return Status::OK();
    }
    if (rc == CURLE_OK && c->status == 403) {
      c->need_refresh = true;
      if (c->decoder) c->decoder->Reset();
      c->range_from = 0;
      return StartTransfer(c);  // refreshes first
    }
    if (rc == CURLE_OK) {
      const long s = c->status;
      std::string what = "HTTP " + std::to_string(s) + " from " + objstore::RedactUrl(c->link.file_link) +
                         (c->error_body.empty() ? "" : ": " + c->error_body.substr(0, 200));
      if (s >= 500 || s == 408 || s == 429) return Retry(c, Status::IOError(what));
      return Status::IOError(c->label + ": " + what);
    }
    if (!c->write_error.ok()) return Retry(c, c->write_error);
    std::string what = std::string(objstore::Curl().easy_strerror(rc)) +
                       (c->error_buffer[0] ? std::string(" (") + c->error_buffer + ")" : "");
    if (rc == CURLE_OPERATION_TIMEDOUT) return Retry(c, Status::Timeout(what));
    switch (rc) {
      case CURLE_PARTIAL_FILE:
      case CURLE_RECV_ERROR:
      case CURLE_SEND_ERROR:
      case CURLE_GOT_NOTHING:
      case CURLE_COULDNT_CONNECT:
      case CURLE_HTTP2:
      case CURLE_HTTP2_STREAM:
      case CURLE_SSL_CONNECT_ERROR: return Retry(c, Status::IOError(what));
      default: return Status::IOError(c->label + ": download failed: " + what);
    }
  }

  Status Loop() {
    bool first = true;
    if (first_page_) {
      stats_.pages += 1;
      first = false;
      QUIVER_RETURN_NOT_OK(AddLinks(*first_page_));
      has_more_ = first_page_->has_more_rows && !LimitReached();
    }
    if (has_more_) {
      fetcher_ = std::thread([this, next_row = next_row_, first] { FetchLinks(next_row, first); });
    } else {
      QUIVER_RETURN_NOT_OK(TakeLinks());  // every link known: no fetcher
    }
    for (;;) {
      if (Stopping()) return cancel_ ? Status::Cancelled("fetch cancelled") : Status::OK();
      QUIVER_RETURN_NOT_OK(TakeLinks());
      // Retries whose backoff is over.
      const auto now = Clock::now();
      auto next_wake = now + std::chrono::milliseconds(500);
      for (auto& c : chunks_) {
        if (c->state != Chunk::State::kBackoff) continue;
        if (c->retry_at <= now) {
          QUIVER_RETURN_NOT_OK(StartTransfer(c.get()));
        } else {
          next_wake = std::min(next_wake, c->retry_at);
        }
      }
      QUIVER_RETURN_NOT_OK(StartNext());
      PublishWaiting();
      int running = 0;
      objstore::Curl().multi_perform(multi_, &running);
      int left = 0;
      while (CURLMsg* m = objstore::Curl().multi_info_read(multi_, &left)) {
        if (m->msg != CURLMSG_DONE) continue;
        Chunk* c = nullptr;
        objstore::Curl().easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &c);
        const CURLcode rc = m->data.result;
        QUIVER_RETURN_NOT_OK(OnDone(c, rc));
      }
      // Cut stalled transfers (no byte for stall_timeout_ms) and retry them.
      const auto stall = std::chrono::milliseconds(o_.stall_timeout_ms);
      for (auto& c : chunks_) {
        if (c->state != Chunk::State::kActive || !c->easy) continue;
        if (Clock::now() - c->last_progress >= stall) {
          objstore::Curl().multi_remove_handle(multi_, c->easy.get());
          c->easy.reset();
          c->headers.reset();
          QUIVER_RETURN_NOT_OK(
              Retry(c.get(), Status::Timeout("no byte received for " + std::to_string(o_.stall_timeout_ms) + " ms")));
        } else {
          next_wake = std::min(next_wake, c->last_progress + stall);
        }
      }
      bool all_done = !has_more_;
      for (auto& c : chunks_) all_done = all_done && c->state == Chunk::State::kDone;
      if (all_done) return Status::OK();
      for (auto& c : chunks_) {
        if (c->state == Chunk::State::kBackoff) next_wake = std::min(next_wake, c->retry_at);
      }
      int ms = static_cast<int>(std::max<int64_t>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(next_wake - Clock::now()).count()));
      objstore::Curl().multi_poll(multi_, nullptr, 0, std::max(ms, 1), nullptr);
    }
  }

  std::shared_ptr<ProtocolClient> client_;
  OperationHandle op_;
  bool lz4_;
  std::optional<FetchPage> first_page_;
  bool close_operation_;
  DownloadOptions o_;
  DownloadStats stats_;
  std::shared_ptr<ByteWindow> window_;
  // LZ4 contexts reused from file to file (one per parallel download).
  std::shared_ptr<Lz4ContextCache> lz4_contexts_;
  std::mt19937_64 rng_;
  CURLM* multi_ = nullptr;
  std::thread thread_;
  std::atomic<bool> cancel_{false};
  std::atomic<bool> stop_{false};

  // Engine-thread state.
  std::deque<std::unique_ptr<Chunk>> chunks_;
  size_t next_start_ = 0;
  int64_t next_row_ = 0;
  double hint_ratio_ = 0;        // largest decoded / bytesNum of done chunks (0 = none yet)
  int64_t largest_decoded_ = 0;  // largest decoded chunk so far
  bool has_more_ = true;

  // The link fetcher (FetchLinks on fetcher_) and what it shares with the
  // engine thread.
  std::thread fetcher_;
  std::atomic<bool> fetcher_stop_{false};  // also abandons its FetchResults in flight
  std::mutex links_mu_;
  std::condition_variable links_cv_;
  std::deque<FetchPage> pages_;  // links_mu_: fetched, not yet taken by the engine
  int64_t queued_links_ = 0;     // links_mu_: links in pages_
  int64_t engine_waiting_ = 0;   // links_mu_: links the engine knows and has not started
  bool fetcher_done_ = false;    // links_mu_: no page will follow
  Status fetcher_error_;         // links_mu_
  // One RPC at a time on client_: the fetcher's pages, the engine's link
  // refreshes (a refresh waits for a page in flight).
  std::mutex client_mu_;

  // Shared with the consumer (mu_).
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, ReadyChunk> ready_;
  int64_t next_deliver_ = 0;
  int64_t total_chunks_ = 0;
  bool finished_ = false;
  Status fatal_;
};

}  // namespace

Result<std::unique_ptr<DownloadEngine>> DownloadEngine::Start(std::shared_ptr<ProtocolClient> client,
                                                              OperationHandle operation, bool lz4,
                                                              std::optional<FetchPage> first_page, bool close_operation,
                                                              DownloadOptions options) {
  if (options.pool == nullptr) return Status::Invalid("DownloadEngine: pool is required");
  if (!client) return Status::Invalid("DownloadEngine: client is required");
  if (options.window_bytes <= 0) return Status::Invalid("DownloadEngine: window_bytes must be > 0");
  if (options.parallel < 1) return Status::Invalid("DownloadEngine: parallel must be >= 1");
  if (options.max_retries < 0) return Status::Invalid("DownloadEngine: max_retries must be >= 0");
  if (options.low_speed_time_s < 1) options.low_speed_time_s = 1;
  if (options.stall_timeout_ms < 1) return Status::Invalid("DownloadEngine: stall_timeout_ms must be > 0");
  auto e = std::make_unique<EngineImpl>(std::move(client), std::move(operation), lz4, std::move(first_page),
                                        close_operation, options);
  QUIVER_RETURN_NOT_OK(e->Init());
  return std::unique_ptr<DownloadEngine>(std::move(e));
}

}  // namespace quiver::fetch

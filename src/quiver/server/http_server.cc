// quiver/server/http_server.cc — Boost.Beast (Asio, OpenSSL) routes over the
// result service. See http_server.h for the routes, limits and I/O model.
//
// Each connection is a Connection object driven by completion handlers on
// its own strand; it is owned by the handler waiting on it (shared_ptr), so
// it dies when its last operation ends (a deadline, an error, the client
// closing). Steps: TLS handshake -> header section (parser with byte and
// field caps, one deadline) -> route and authorise from the header alone ->
// body (bytes reserved in the thrift pool first, one deadline) -> a worker
// thread answers -> one response write -> the next request, or close.
#include "quiver/server/http_server.h"

#include <malloc.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "quiver/fetch/link_signer.h"
#include "quiver/server/tls_cert.h"

namespace quiver::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

bool ValidWarehouseId(const std::string& id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  }
  return true;
}

void PoolLines(const MemoryPool* pool, std::ostringstream& out) {
  out << "pool " << pool->path() << " held_bytes=" << pool->held_bytes() << " peak_bytes=" << pool->peak_bytes()
      << "\n";
}

/// Resident bytes of this process (/proc/self/statm), -1 if unreadable.
int64_t ProcessResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages_total = 0, pages_resident = 0;
  if (!(statm >> pages_total >> pages_resident)) return -1;
  return pages_resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Percent-decodes `text` ('+' stays '+'); a '%' not followed by two hex
/// digits is kept as is.
std::string PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int hi = HexValue(text[i + 1]);
      const int lo = HexValue(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

/// The decoded path and query parameters of a request target.
struct Target {
  std::string path;
  std::map<std::string, std::string> params;  // first occurrence of each name wins
};

Target ParseTarget(std::string_view target) {
  Target t;
  const size_t q = target.find('?');
  t.path = PercentDecode(target.substr(0, q));
  if (q == std::string_view::npos) return t;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const size_t eq = pair.find('=');
    std::string name = PercentDecode(pair.substr(0, eq));
    std::string value = eq == std::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1));
    t.params.emplace(std::move(name), std::move(value));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return t;
}

/// One byte range of a Range header ("bytes=a-b", "bytes=a-", "bytes=-n").
/// first < 0 means a suffix of `last` bytes; last < 0 means to the end.
struct ByteRange {
  int64_t first = 0;
  int64_t last = -1;
};

bool ParseDecimal(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

/// Parses a Range value; false when it is not in the bytes-range syntax
/// (the caller then ignores it, as RFC 7233 allows).
bool ParseRanges(std::string_view value, std::vector<ByteRange>* out) {
  constexpr std::string_view kUnit = "bytes=";
  if (value.substr(0, kUnit.size()) != kUnit) return false;
  value.remove_prefix(kUnit.size());
  while (true) {
    const size_t comma = value.find(',');
    std::string_view one = value.substr(0, comma);
    while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
    while (!one.empty() && one.back() == ' ') one.remove_suffix(1);
    const size_t dash = one.find('-');
    if (dash == std::string_view::npos) return false;
    ByteRange r;
    const std::string_view a = one.substr(0, dash), b = one.substr(dash + 1);
    if (a.empty()) {
      r.first = -1;
      if (!ParseDecimal(b, &r.last)) return false;
    } else {
      if (!ParseDecimal(a, &r.first)) return false;
      if (!b.empty()) {
        if (!ParseDecimal(b, &r.last) || r.last < r.first) return false;
      }
    }
    out->push_back(r);
    if (comma == std::string_view::npos) return true;
    value.remove_prefix(comma + 1);
  }
}

/// What a worker (or the router) answers: a status, a few headers and a
/// body that is either `text` or bytes of `chunk`.
struct Reply {
  unsigned status = 200;
  std::string content_type = "text/plain";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string text;
  std::shared_ptr<Buffer> chunk;  // when set, the body is chunk[offset, offset + length)
  size_t offset = 0;
  size_t length = 0;
  /// Bytes of `text` charged to the thrift pool until the reply is sent.
  std::shared_ptr<MemoryPool> charged_pool;
  int64_t charged_bytes = 0;
  /// Close the connection after this reply.
  bool close = false;

  Reply() = default;
  Reply(const Reply&) = delete;
  Reply& operator=(const Reply&) = delete;
  ~Reply() {
    if (charged_bytes > 0) charged_pool->Unreserve(charged_bytes);
  }

  static std::unique_ptr<Reply> Text(unsigned status, std::string text) {
    auto r = std::make_unique<Reply>();
    r->status = status;
    r->text = std::move(text);
    return r;
  }
};

class Connection;

}  // namespace

class ResultServer::Impl {
 public:
  ServerOptions o;
  std::unique_ptr<fetch::LocalChunkStore> store;
  std::unique_ptr<fetch::S3ChunkStore> s3_store;  // results when configured; outlives service
  std::unique_ptr<ResultService> service;
  std::unique_ptr<ssl::context> tls;
  std::unique_ptr<asio::io_context> ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<asio::thread_pool> workers;
  std::vector<std::thread> io_threads;
  std::thread sweep_thread;
  std::mutex sweep_mu;
  std::condition_variable sweep_cv;
  bool stopping = false;
  int port = 0;
  std::string cert_path;
  std::string key_path;
  std::string generated_dir;  // private temp dir we made (removed on stop)
  bool generated = false;
  std::atomic<int64_t> downloads{0}, download_bytes{0}, auth_failures{0}, link_rejections{0};
  std::atomic<int64_t> refused_connections{0}, bad_requests{0}, timeouts{0}, requests{0};

  // Open connections, in all and per client address.
  std::mutex conn_mu;
  int64_t open_connections = 0;
  std::map<std::string, int> per_address;

  // The index of the token `header` carries (0 = o.token, i + 1 =
  // o.tokens[i]), or -1. Every token is compared, each in constant time.
  int AuthorizedToken(std::string_view header) const {
    static constexpr std::string_view kBearer = "Bearer ";
    int found = -1;
    for (size_t k = 0; k <= o.tokens.size(); ++k) {
      const std::string expected = std::string(kBearer) + (k == 0 ? o.token : o.tokens[k - 1]);
      if (fetch::ConstantTimeEquals(header, expected) && found < 0) found = static_cast<int>(k);
    }
    return found;
  }
  bool Authorized(std::string_view header) const { return AuthorizedToken(header) >= 0; }

  /// Takes a connection slot for `address`; false past a cap.
  bool Admit(const std::string& address) {
    std::lock_guard<std::mutex> lock(conn_mu);
    int& n = per_address[address];
    if (open_connections >= o.max_connections || n >= o.max_connections_per_address) {
      if (n == 0) per_address.erase(address);
      return false;
    }
    ++n;
    ++open_connections;
    return true;
  }
  void Release(const std::string& address) {
    std::lock_guard<std::mutex> lock(conn_mu);
    --open_connections;
    auto it = per_address.find(address);
    if (it != per_address.end() && --it->second <= 0) per_address.erase(it);
  }
  int64_t connections() {
    std::lock_guard<std::mutex> lock(conn_mu);
    return open_connections;
  }

  void Accept();

  // Request handlers; they run on worker threads.
  std::unique_ptr<Reply> HandleRpc(std::string body, const std::string& client);
  std::unique_ptr<Reply> HandleFile(const std::string& id, const std::map<std::string, std::string>& params,
                                    const std::string& range);

  void SweepLoop() {
    std::unique_lock<std::mutex> lock(sweep_mu);
    while (!stopping) {
      sweep_cv.wait_for(lock, std::chrono::milliseconds(o.sweep_interval_ms));
      if (stopping) break;
      lock.unlock();
      const int64_t now = fetch::NowEpochMs();
      service->ExpireIdle(now);
      store->RemoveExpired(now);
      if (s3_store) s3_store->Sweep(now);
      ReleaseMemoryIfStatementsEnded();
      lock.lock();
    }
  }

  // After statements end, the freed memory goes back to the OS here, off
  // the request path: the pools' allocator purges, and glibc's arenas (the
  // general heap of every thread: Thrift strings, containers) are trimmed.
  // A sweep trims when a producer ended, an operation closed or the pools
  // hold at least 8 MiB less than at the last sweep, and once more on the
  // sweep after that (what the closing requests free just after a close).
  int64_t finished_seen = 0, open_seen = 0, held_seen = 0;
  bool trailing_trim = false;
  std::atomic<int64_t> trims{0};
  void ReleaseMemoryIfStatementsEnded() {
    if (!o.release_memory_after_statements) return;
    const auto sv = service->stats();
    const int64_t held = o.service.pool->held_bytes();
    const bool ended = sv.finished_operations != finished_seen || sv.open_operations < open_seen ||
                       held + (int64_t{8} << 20) <= held_seen;
    finished_seen = sv.finished_operations;
    open_seen = sv.open_operations;
    held_seen = held;
    if (!ended && !trailing_trim) return;
    trailing_trim = ended;
    Allocator* allocator = o.service.pool->allocator();
    if (allocator != nullptr) allocator->ReleaseFreeMemory();
    if (allocator == nullptr || allocator->kind() != AllocatorKind::kSystem) malloc_trim(0);
    ++trims;
  }

  std::string Metrics() {
    std::ostringstream out;
    PoolLines(o.service.pool, out);
    PoolLines(service->exec_pool(), out);
    PoolLines(service->chunk_pool(), out);
    PoolLines(service->thrift_pool(), out);
    const struct mallinfo2 mi = mallinfo2();
    const Allocator* allocator = o.service.pool->allocator();
    out << "allocator name=" << (allocator ? allocator->name() : "none")
        << " reserved_bytes=" << (allocator ? allocator->reserved_bytes() : -1)
        << " malloc_heap_bytes=" << static_cast<int64_t>(mi.arena + mi.hblkhd)
        << " malloc_free_bytes=" << static_cast<int64_t>(mi.fordblks)
        << " process_resident_bytes=" << ProcessResidentBytes() << " trims=" << trims.load() << "\n";
    const auto st = store->stats();
    out << "store chunks=" << st.chunks << " memory_bytes=" << st.memory_bytes
        << " peak_memory_bytes=" << st.peak_memory_bytes << " spilled_chunks=" << st.spilled_chunks
        << " spilled_bytes=" << st.spilled_bytes << " total_spilled_chunks=" << st.total_spilled_chunks << "\n";
    const auto sv = service->stats();
    out << "service sessions=" << sv.open_sessions << " operations=" << sv.open_operations
        << " running=" << sv.running_operations << " rpcs=" << sv.rpcs << " rpc_errors=" << sv.rpc_errors
        << " statements=" << sv.statements << " chunks_written=" << sv.chunks_written
        << " expired_sessions=" << sv.expired_sessions << " expired_operations=" << sv.expired_operations
        << " paused=" << sv.paused_operations << " producer_pauses=" << sv.producer_pauses << "\n";
    out << "http connections=" << connections() << " refused_connections=" << refused_connections
        << " requests=" << requests << " bad_requests=" << bad_requests << " timeouts=" << timeouts
        << " downloads=" << downloads << " download_bytes=" << download_bytes << " auth_failures=" << auth_failures
        << " link_rejections=" << link_rejections << "\n";
    return out.str();
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(sweep_mu);
      if (stopping) return;
      stopping = true;
    }
    sweep_cv.notify_all();
    if (ioc) {
      asio::post(*ioc, [this] {
        boost::system::error_code ignored;
        if (acceptor) acceptor->close(ignored);
      });
      ioc->stop();
    }
    for (auto& t : io_threads) {
      if (t.joinable()) t.join();
    }
    if (workers) {
      workers->stop();  // requests not started are dropped (their connections close)
      workers->join();
      workers.reset();
    }
    acceptor.reset();
    ioc.reset();  // destroys the connections still waiting on I/O
    if (sweep_thread.joinable()) sweep_thread.join();
    service.reset();  // closes operations, removes their chunks
    store.reset();    // removes what is left and the private spill dir
    s3_store.reset();
    tls.reset();
    if (generated) {
      unlink(cert_path.c_str());
      unlink(key_path.c_str());
      if (!generated_dir.empty()) rmdir(generated_dir.c_str());
    }
  }
};

namespace {

using Stream = beast::ssl_stream<beast::tcp_stream>;

// A BIO that appends what OpenSSL writes to a byte vector: the sink of the
// chunk body writer (Connection::WriteChunkBatch), which encrypts a batch of
// TLS records straight into one buffer and hands it to the socket in one
// write. Asio's own path gives OpenSSL a 17 KiB BIO pair, so every 16 KiB
// record is a separate asynchronous operation with two more copies (into the
// pair, out of it) and its own send(); this one costs one copy per record and
// one send per batch. The vector is borrowed (BIO_set_data) and outlives the
// BIO.
BIO_METHOD* RecordSinkMethod() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "quiver TLS record sink");
    BIO_meth_set_write(m, [](BIO* b, const char* data, int n) -> int {
      auto* out = static_cast<std::vector<uint8_t>*>(BIO_get_data(b));
      if (n <= 0) return 0;
      out->insert(out->end(), reinterpret_cast<const uint8_t*>(data), reinterpret_cast<const uint8_t*>(data) + n);
      return n;
    });
    BIO_meth_set_ctrl(m, [](BIO*, int cmd, long, void*) -> long { return cmd == BIO_CTRL_FLUSH ? 1 : 0; });
    BIO_meth_set_create(m, [](BIO* b) -> int {
      BIO_set_init(b, 1);
      return 1;
    });
    return m;
  }();
  return method;
}

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(ResultServer::Impl* server, tcp::socket socket, std::string address)
      : server_(server),
        tcp_(std::move(socket)),
        first_byte_timer_(tcp_.get_executor()),
        address_(std::move(address)),
        buffer_(64 << 10) {}

  ~Connection() {
    if (body_charged_ > 0) server_->service->thrift_pool()->Unreserve(body_charged_);
    server_->Release(address_);
  }

  // Until the client sends its first byte the connection is a bare socket
  // (no TLS state, no buffers: an idle connection costs about 1 KiB); the
  // TLS stream is made when the handshake can start. The header deadline
  // runs from here.
  void Start() {
    boost::system::error_code ignored;
    tcp_.socket().set_option(tcp::no_delay(true), ignored);
    deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(server_->o.header_timeout_ms);
    first_byte_timer_.expires_at(deadline_);
    first_byte_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec) return;  // cancelled: the first byte came
      ++self->server_->timeouts;
      boost::system::error_code ignored;
      self->tcp_.socket().close(ignored);
    });
    tcp_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) {
      self->first_byte_timer_.cancel();
      if (ec || !self->tcp_.socket().is_open()) return;
      self->stream_.emplace(std::move(self->tcp_), *self->server_->tls);
      beast::get_lowest_layer(*self->stream_).expires_at(self->deadline_);
      self->stream_->async_handshake(ssl::stream_base::server, [self](beast::error_code ec) { self->OnHandshake(ec); });
    });
  }

 private:
  void Deadline(int64_t ms) { beast::get_lowest_layer(*stream_).expires_after(std::chrono::milliseconds(ms)); }

  void OnHandshake(beast::error_code ec) {
    if (ec) return CountTimeout(ec);
    ReadHeader();
  }

  void CountTimeout(beast::error_code ec) {
    if (ec == beast::error::timeout) ++server_->timeouts;
  }

  void ReadHeader() {
    header_.emplace();
    header_->header_limit(static_cast<std::uint32_t>(server_->o.max_header_bytes));
    // A Content-Length over the cap is answered 413 below. (Not boost::none:
    // Beast 1.74 compares the length with the optional, and "none" is below
    // every value.)
    header_->body_limit(std::numeric_limits<std::uint64_t>::max());
    Deadline(server_->o.header_timeout_ms);
    http::async_read_header(*stream_, buffer_, *header_,
                            [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == ssl::error::stream_truncated) return;
    if (ec == beast::error::timeout) return CountTimeout(ec);
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      ++server_->bad_requests;
      return RefuseAndClose(Reply::Text(431, "request header section over the limit\n"));
    }
    if (ec) {
      // A parse error (bad syntax, two different Content-Length, both
      // Content-Length and Transfer-Encoding), or the socket failed.
      if (ec.category() != http::make_error_code(http::error::bad_method).category()) return;
      ++server_->bad_requests;
      return RefuseAndClose(Reply::Text(400, "malformed request: " + ec.message() + "\n"));
    }
    ++server_->requests;
    const auto& req = header_->get();
    keep_alive_ = req.keep_alive();
    int fields = 0, content_lengths = 0;
    for (const auto& f : req) {
      ++fields;
      if (f.name() == http::field::content_length) ++content_lengths;
    }
    if (fields > server_->o.max_header_fields) {
      ++server_->bad_requests;
      return RefuseAndClose(
          Reply::Text(431, "too many header fields (at most " + std::to_string(server_->o.max_header_fields) + ")\n"));
    }
    if (content_lengths > 1) {
      ++server_->bad_requests;
      return RefuseAndClose(Reply::Text(400, "more than one Content-Length\n"));
    }
    const bool has_body = header_->chunked() || (header_->content_length() && *header_->content_length() > 0);
    Target target = ParseTarget(std::string_view(req.target().data(), req.target().size()));
    static constexpr std::string_view kRpcPrefix = "/sql/1.0/warehouses/";
    static constexpr std::string_view kFilesPrefix = "/files/";
    const std::string_view path = target.path;
    if (path.substr(0, kRpcPrefix.size()) == kRpcPrefix &&
        path.find('/', kRpcPrefix.size()) == std::string_view::npos) {
      if (req.method() != http::verb::post) return RefuseAndClose(Reply::Text(405, "use POST\n"), has_body);
      return RouteRpc(path.substr(kRpcPrefix.size()));
    }
    if (path.substr(0, kFilesPrefix.size()) == kFilesPrefix &&
        path.find('/', kFilesPrefix.size()) == std::string_view::npos) {
      if (req.method() != http::verb::get) return RefuseAndClose(Reply::Text(405, "use GET\n"), has_body);
      if (has_body) return RefuseAndClose(Reply::Text(400, "a GET carries no body\n"));
      std::string id(path.substr(kFilesPrefix.size()));
      const auto range_it = req.find(http::field::range);
      std::string range = range_it == req.end() ? "" : std::string(range_it->value());
      return RunOnWorker([id = std::move(id), params = std::move(target.params), range = std::move(range)](
                             ResultServer::Impl* server) { return server->HandleFile(id, params, range); });
    }
    if (path == "/metrics") {
      if (req.method() != http::verb::get) return RefuseAndClose(Reply::Text(405, "use GET\n"), has_body);
      if (has_body) return RefuseAndClose(Reply::Text(400, "a GET carries no body\n"));
      if (!Authorized()) return RefuseUnauthorized(false);
      return RunOnWorker([](ResultServer::Impl* server) { return Reply::Text(200, server->Metrics()); });
    }
    return RefuseAndClose(Reply::Text(404, "not found\n"), has_body);
  }

  bool Authorized() {
    const auto& req = header_->get();
    const auto it = req.find(http::field::authorization);
    const std::string_view value =
        it == req.end() ? std::string_view() : std::string_view(it->value().data(), it->value().size());
    token_index_ = server_->AuthorizedToken(value);
    return token_index_ >= 0;
  }

  void RefuseUnauthorized(bool has_body) {
    ++server_->auth_failures;
    auto reply = Reply::Text(401, "missing or wrong bearer token\n");
    reply->headers.emplace_back("WWW-Authenticate", "Bearer");
    RefuseAndClose(std::move(reply), has_body);
  }

  void RouteRpc(std::string_view warehouse) {
    const bool has_body = header_->chunked() || (header_->content_length() && *header_->content_length() > 0);
    if (warehouse != server_->o.warehouse_id) {
      return RefuseAndClose(Reply::Text(404, "no such warehouse\n"), has_body);
    }
    if (!Authorized()) return RefuseUnauthorized(has_body);
    if (header_->chunked() || !header_->content_length()) {
      ++server_->bad_requests;
      return RefuseAndClose(Reply::Text(411, "a Content-Length is required (chunked bodies are not accepted)\n"),
                            has_body);
    }
    const uint64_t length = *header_->content_length();
    if (length > static_cast<uint64_t>(server_->o.max_body_bytes)) {
      return RefuseAndClose(
          Reply::Text(413, "request body over the limit (" + std::to_string(server_->o.max_body_bytes) + " bytes)\n"),
          true);
    }
    // The body's bytes are charged to the thrift pool before they are read.
    MemoryPool* pool = server_->service->thrift_pool();
    if (length > 0 && !pool->Reserve(static_cast<int64_t>(length)).ok()) {
      return RefuseAndClose(Reply::Text(503, "no memory for the request body\n"), true);
    }
    body_charged_ = static_cast<int64_t>(length);
    body_.emplace(std::move(*header_));
    header_.reset();
    body_->body_limit(static_cast<uint64_t>(server_->o.max_body_bytes));
    const auto& r = body_->get();
    const auto e = r.find(http::field::expect);
    if (e != r.end() && beast::iequals(e->value(), "100-continue")) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      Deadline(server_->o.write_timeout_ms);
      return asio::async_write(*stream_, asio::buffer(kContinue.data(), kContinue.size()),
                               [self = shared_from_this()](beast::error_code ec, size_t) {
                                 if (ec) return self->CountTimeout(ec);
                                 self->ReadBody();
                               });
    }
    ReadBody();
  }

  void ReadBody() {
    Deadline(server_->o.body_timeout_ms);
    http::async_read(*stream_, buffer_, *body_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->CountTimeout(ec);
      std::string body = std::move(self->body_->get().body());
      self->body_.reset();
      self->RunOnWorker([body = std::move(body), client = "token-" + std::to_string(self->token_index_)](
                            ResultServer::Impl* server) mutable { return server->HandleRpc(std::move(body), client); });
    });
  }

  template <typename Handler>
  void RunOnWorker(Handler handler) {
    beast::get_lowest_layer(*stream_).expires_never();
    asio::post(*server_->workers, [self = shared_from_this(), handler = std::move(handler)]() mutable {
      std::shared_ptr<Reply> reply = handler(self->server_);
      // The request body's charge ends once the worker is done with it.
      if (self->body_charged_ > 0) {
        self->server_->service->thrift_pool()->Unreserve(self->body_charged_);
        self->body_charged_ = 0;
      }
      asio::post(self->stream_->get_executor(), [self, reply]() mutable { self->Write(std::move(reply)); });
    });
  }

  /// Answers `reply` and closes. When the client may still be sending a body
  /// (`drain`), what it sends is read and dropped for a moment first, so that
  /// its TCP stack does not discard the answer on a reset.
  void RefuseAndClose(std::unique_ptr<Reply> reply, bool drain = true) {
    reply->close = true;
    drain_ = drain;
    Write(std::shared_ptr<Reply>(std::move(reply)));
  }

  void Write(std::shared_ptr<Reply> reply) {
    if (!keep_alive_) reply->close = true;
    if (reply->chunk && reply->length > 0) return WriteChunk(std::move(reply));
    response_.emplace();
    auto& res = *response_;
    res.version(11);
    res.result(reply->status);
    res.set(http::field::server, "quiver");
    res.set(http::field::content_type, reply->content_type);
    for (const auto& [name, value] : reply->headers) res.set(name, value);
    if (reply->chunk) {
      res.body().data = const_cast<uint8_t*>(reply->chunk->data()) + reply->offset;
      res.body().size = reply->length;
    } else {
      res.body().data = reply->text.data();
      res.body().size = reply->text.size();
    }
    res.body().more = false;
    res.content_length(res.body().size);
    res.keep_alive(!reply->close);
    reply_ = std::move(reply);
    Deadline(server_->o.write_timeout_ms);
    http::async_write(*stream_, res, [self = shared_from_this()](beast::error_code ec, size_t) { self->OnWrite(ec); });
  }

  // A chunk reply: the header and the body are encrypted in batches of
  // kChunkBatchBytes straight into chunk_out_ (RecordSinkMethod), each batch
  // one socket write; the write deadline covers the whole reply.
  static constexpr size_t kChunkBatchBytes = 256 << 10;

  void WriteChunk(std::shared_ptr<Reply> reply) {
    http::response_header<> header;
    header.version(11);
    header.result(reply->status);
    header.set(http::field::server, "quiver");
    header.set(http::field::content_type, reply->content_type);
    for (const auto& [name, value] : reply->headers) header.set(name, value);
    header.set(http::field::content_length, std::to_string(reply->length));
    if (reply->close) header.set(http::field::connection, "close");  // HTTP/1.1 keeps the connection otherwise
    std::ostringstream text;
    text << header;
    chunk_header_ = text.str();
    chunk_sent_ = 0;
    reply_ = std::move(reply);
    chunk_out_.reserve(kChunkBatchBytes + kChunkBatchBytes / 256 + chunk_header_.size() + 4096);
    Deadline(server_->o.write_timeout_ms);
    WriteChunkBatch();
  }

  void WriteChunkBatch() {
    const size_t left = reply_->length - chunk_sent_;
    if (left == 0) {
      // An idle keep-alive connection holds no batch and no record buffers.
      std::vector<uint8_t>().swap(chunk_out_);
      SSL_free_buffers(stream_->native_handle());
      return OnWrite({});
    }
    const size_t n = std::min(left, kChunkBatchBytes);
    chunk_out_.clear();
    if (!EncryptInto(chunk_header_, reply_->chunk->data() + reply_->offset + chunk_sent_, n)) {
      ++server_->bad_requests;  // never expected: OpenSSL refused to encrypt; the connection ends
      return;
    }
    chunk_header_.clear();
    chunk_sent_ += n;
    asio::async_write(beast::get_lowest_layer(*stream_), asio::buffer(chunk_out_),
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (ec) {
                          self->response_.reset();
                          self->reply_.reset();
                          return self->CountTimeout(ec);
                        }
                        self->WriteChunkBatch();
                      });
  }

  // TLS records of `prefix` then `data[0, n)` appended to chunk_out_, with
  // the session's own SSL object (so sequence numbers and keys stay Asio's):
  // the write BIO is swapped for the sink and back. Asio's BIO pair is empty
  // here (its last write completed). False when OpenSSL fails.
  bool EncryptInto(const std::string& prefix, const uint8_t* data, size_t n) {
    SSL* ssl = stream_->native_handle();
    BIO* sink = BIO_new(RecordSinkMethod());
    if (sink == nullptr) return false;
    BIO_set_data(sink, &chunk_out_);
    BIO* asio_bio = SSL_get_wbio(ssl);
    BIO_up_ref(asio_bio);      // SSL_set0_wbio releases one reference
    SSL_set0_wbio(ssl, sink);  // the SSL owns the sink now
    // One SSL_write per piece writes all of it (no partial writes), and
    // OpenSSL keeps its record buffer between records.
    const long modes = SSL_get_mode(ssl);
    SSL_clear_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_RELEASE_BUFFERS);
    ERR_clear_error();
    bool ok = prefix.empty() ||
              SSL_write(ssl, prefix.data(), static_cast<int>(prefix.size())) == static_cast<int>(prefix.size());
    ok = ok && SSL_write(ssl, data, static_cast<int>(n)) == static_cast<int>(n);
    SSL_set_mode(ssl, modes);
    SSL_set0_wbio(ssl, asio_bio);  // frees the sink
    if (!ok) ERR_clear_error();
    return ok;
  }

  void OnWrite(beast::error_code ec) {
    const bool close = reply_->close;
    if (!ec && reply_->chunk) {
      ++server_->downloads;
      server_->download_bytes += static_cast<int64_t>(reply_->length);
    }
    response_.reset();
    reply_.reset();
    if (ec) return CountTimeout(ec);
    if (!close) return ReadHeader();
    if (!drain_) return;
    // Lingering close: stop sending, read and drop what the client still
    // sends (raw TLS records, not decrypted) for a bounded time and size.
    auto& socket = beast::get_lowest_layer(*stream_).socket();
    boost::system::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_send, ignored);
    drain_left_ = std::max<int64_t>(server_->o.max_body_bytes, 1 << 20);
    Deadline(std::min<int64_t>(server_->o.body_timeout_ms, 2000));
    Drain();
  }

  void Drain() {
    drain_buffer_.resize(16 << 10);
    beast::get_lowest_layer(*stream_).async_read_some(asio::buffer(drain_buffer_),
                                                      [self = shared_from_this()](beast::error_code ec, size_t n) {
                                                        self->drain_left_ -= static_cast<int64_t>(n);
                                                        if (ec || self->drain_left_ <= 0) return;
                                                        self->Drain();
                                                      });
  }

  ResultServer::Impl* server_;
  beast::tcp_stream tcp_;  // until the first byte; then moved into stream_
  asio::steady_timer first_byte_timer_;
  std::chrono::steady_clock::time_point deadline_;
  std::optional<Stream> stream_;
  std::string address_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> header_;
  std::optional<http::request_parser<http::string_body>> body_;
  int64_t body_charged_ = 0;
  int token_index_ = -1;  // the token the request carried (AuthorizedToken)
  bool keep_alive_ = true;
  bool drain_ = false;
  int64_t drain_left_ = 0;
  std::vector<char> drain_buffer_;
  std::optional<http::response<http::buffer_body>> response_;
  std::shared_ptr<Reply> reply_;
  // A chunk reply in progress (WriteChunk): the header text not yet
  // encrypted, body bytes encrypted so far, the current batch of records.
  std::string chunk_header_;
  size_t chunk_sent_ = 0;
  std::vector<uint8_t> chunk_out_;
};

}  // namespace

void ResultServer::Impl::Accept() {
  acceptor->async_accept(asio::make_strand(*ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
    if (!ec) {
      boost::system::error_code addr_ec;
      const auto endpoint = socket.remote_endpoint(addr_ec);
      const std::string address = addr_ec ? std::string("?") : endpoint.address().to_string();
      if (Admit(address)) {
        std::make_shared<Connection>(this, std::move(socket), address)->Start();
      } else {
        ++refused_connections;
        boost::system::error_code ignored;
        socket.close(ignored);
      }
    } else if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space) {
      // Out of file descriptors: wait a moment rather than spin.
      auto timer = std::make_shared<asio::steady_timer>(*ioc, std::chrono::milliseconds(50));
      timer->async_wait([this, timer](beast::error_code) { Accept(); });
      return;
    }
    Accept();
  });
}

std::unique_ptr<Reply> ResultServer::Impl::HandleRpc(std::string body, const std::string& client) {
  auto reply =
      service->Dispatch(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(body.data()), body.size()), client);
  std::string().swap(body);
  if (!reply.ok()) {
    return Reply::Text(reply.status().IsOutOfMemory() ? 503 : 400, reply.status().ToString() + "\n");
  }
  // The reply stays charged to the thrift pool until it has been sent.
  auto out = std::make_unique<Reply>();
  out->text = std::move(reply).value();
  auto pool = service->thrift_pool()->shared_from_this();
  if (!pool->Reserve(static_cast<int64_t>(out->text.size())).ok()) {
    return Reply::Text(503, "no memory for the reply\n");
  }
  out->charged_pool = std::move(pool);
  out->charged_bytes = static_cast<int64_t>(out->text.size());
  out->content_type = "application/x-thrift";
  return out;
}

std::unique_ptr<Reply> ResultServer::Impl::HandleFile(const std::string& id,
                                                      const std::map<std::string, std::string>& params,
                                                      const std::string& range) {
  if (!fetch::IsValidChunkId(id)) {
    ++link_rejections;
    return Reply::Text(400, "not a chunk id\n");
  }
  const auto e = params.find("e");
  const auto s = params.find("s");
  const fetch::LinkCheck check = store->signer().Verify(id, e == params.end() ? "" : e->second,
                                                        s == params.end() ? "" : s->second, fetch::NowEpochMs());
  if (check != fetch::LinkCheck::kOk) {
    ++link_rejections;
    return Reply::Text(403, "link refused: " + std::string(fetch::LinkCheckName(check)) + "\n");
  }
  auto bytes = store->Get(id);
  if (!bytes.ok()) return Reply::Text(404, "chunk removed (its operation was closed or expired)\n");
  auto out = std::make_unique<Reply>();
  out->content_type = "application/octet-stream";
  out->chunk = std::move(bytes).value();
  const int64_t n = out->chunk->size();
  out->length = static_cast<size_t>(n);
  std::vector<ByteRange> ranges;
  // One range: 206 (or 416); several: the whole chunk with 200 (RFC 7233
  // lets a server ignore Range; clients resume with one range); a Range that
  // does not parse is ignored too.
  if (!range.empty() && ParseRanges(range, &ranges) && ranges.size() == 1) {
    int64_t first = ranges[0].first;
    int64_t last = ranges[0].last;
    bool satisfiable = true;
    if (first < 0) {  // suffix: the last `last` bytes
      satisfiable = last > 0 && n > 0;
      first = std::max<int64_t>(0, n - last);
      last = n - 1;
    } else {
      if (last < 0 || last >= n) last = n - 1;
      satisfiable = first < n && first <= last;
    }
    if (!satisfiable) {
      auto refused = Reply::Text(416, "range not satisfiable: the chunk has " + std::to_string(n) + " bytes\n");
      refused->headers.emplace_back("Content-Range", "bytes */" + std::to_string(n));
      return refused;
    }
    out->status = 206;
    out->offset = static_cast<size_t>(first);
    out->length = static_cast<size_t>(last - first + 1);
    out->headers.emplace_back("Content-Range",
                              "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" + std::to_string(n));
  }
  out->headers.emplace_back("Accept-Ranges", "bytes");
  return out;
}

Result<std::unique_ptr<ResultServer>> ResultServer::Start(ServerOptions options) {
  if (options.token.empty()) return Status::Invalid("serve: a bearer token is required (--token or QUIVER_TOKEN)");
  for (size_t i = 0; i < options.tokens.size(); ++i) {
    if (options.tokens[i].empty()) return Status::Invalid("serve: token " + std::to_string(i + 1) + " is empty");
    if (options.tokens[i] == options.token ||
        std::find(options.tokens.begin(), options.tokens.begin() + static_cast<std::ptrdiff_t>(i), options.tokens[i]) !=
            options.tokens.begin() + static_cast<std::ptrdiff_t>(i))
      return Status::Invalid("serve: token " + std::to_string(i + 1) + " repeats an earlier token");
  }
  if (!ValidWarehouseId(options.warehouse_id)) {
    return Status::Invalid("serve: warehouse id '" + options.warehouse_id + "' is not 1..128 of [A-Za-z0-9_-]");
  }
  if (options.cert_path.empty() != options.key_path.empty()) {
    return Status::Invalid("serve: --cert and --key go together");
  }
  if (options.max_body_bytes < 1024) return Status::Invalid("serve: max_body_bytes must be >= 1024");
  if (options.header_timeout_ms <= 0 || options.body_timeout_ms <= 0 || options.write_timeout_ms <= 0) {
    return Status::Invalid("serve: header, body and write timeouts must be positive");
  }
  if (options.max_header_bytes < 1024 || options.max_header_bytes > (int64_t{1} << 20) ||
      options.max_header_fields < 8) {
    return Status::Invalid("serve: max_header_bytes must be in 1 KiB..1 MiB and max_header_fields >= 8");
  }
  if (options.max_connections < 1 || options.max_connections_per_address < 1 || options.io_threads < 1 ||
      options.worker_threads < 1) {
    return Status::Invalid("serve: connection caps, io_threads and worker_threads must be >= 1");
  }
  auto impl = std::make_unique<Impl>();
  impl->o = options;
  if (options.cert_path.empty()) {
    std::string dir = options.cert_dir;
    if (dir.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/quiver-serve-XXXXXX";
      std::vector<char> buf(tmpl.begin(), tmpl.end());
      buf.push_back('\0');
      if (!mkdtemp(buf.data())) return Status::IOError("serve: cannot make a directory for the certificate: " + tmpl);
      dir = buf.data();
      chmod(dir.c_str(), 0755);
      impl->generated_dir = dir;
    }
    auto cert = GenerateSelfSignedCert(dir);
    if (!cert.ok()) {
      if (!impl->generated_dir.empty()) rmdir(impl->generated_dir.c_str());
      return cert.status();
    }
    impl->cert_path = cert->cert_path;
    impl->key_path = cert->key_path;
    impl->generated = true;
  } else {
    impl->cert_path = options.cert_path;
    impl->key_path = options.key_path;
  }
  impl->tls = std::make_unique<ssl::context>(ssl::context::tls_server);
  {
    boost::system::error_code ec;
    impl->tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                               ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use,
                           ec);
    SSL_CTX_set_min_proto_version(impl->tls->native_handle(), TLS1_2_VERSION);
    // Idle keep-alive connections give OpenSSL's record buffers back.
    SSL_CTX_set_mode(impl->tls->native_handle(), SSL_MODE_RELEASE_BUFFERS);
    if (!ec) impl->tls->use_certificate_chain_file(impl->cert_path, ec);
    if (!ec) impl->tls->use_private_key_file(impl->key_path, ssl::context::pem, ec);
    if (ec) {
      impl->Stop();
      return Status::IOError("serve: cannot load the certificate " + impl->cert_path + " / key " + impl->key_path +
                             ": " + ec.message());
    }
  }

  impl->ioc = std::make_unique<asio::io_context>(options.io_threads);
  {
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(options.host, ec);
    if (ec) {
      // A host name: bind what it resolves to first.
      tcp::resolver resolver(*impl->ioc);
      auto results = resolver.resolve(options.host, std::to_string(options.port), ec);
      if (ec || results.empty()) {
        impl->Stop();
        return Status::IOError("serve: cannot resolve " + options.host);
      }
      impl->acceptor = std::make_unique<tcp::acceptor>(*impl->ioc);
      const tcp::endpoint endpoint = results.begin()->endpoint();
      impl->acceptor->open(endpoint.protocol(), ec);
      if (!ec) impl->acceptor->set_option(asio::socket_base::reuse_address(true), ec);
      if (!ec) impl->acceptor->bind(endpoint, ec);
    } else {
      const tcp::endpoint endpoint(address, static_cast<unsigned short>(options.port));
      impl->acceptor = std::make_unique<tcp::acceptor>(*impl->ioc);
      impl->acceptor->open(endpoint.protocol(), ec);
      if (!ec) impl->acceptor->set_option(asio::socket_base::reuse_address(true), ec);
      if (!ec) impl->acceptor->bind(endpoint, ec);
    }
    if (!ec) impl->acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      impl->Stop();
      return Status::IOError("serve: cannot bind " + options.host + ":" + std::to_string(options.port) + ": " +
                             ec.message());
    }
    impl->port = impl->acceptor->local_endpoint().port();
  }

  auto signer = fetch::LinkSigner::MakeRandom();
  if (!signer.ok()) {
    impl->Stop();
    return signer.status();
  }
  options.store.link_base_url = "https://" + options.host + ":" + std::to_string(impl->port);
  auto store = fetch::LocalChunkStore::Make(options.store, *signer);
  if (!store.ok()) {
    impl->Stop();
    return store.status();
  }
  impl->store = std::move(store).value();
  options.service.store = impl->store.get();
  if (options.s3_store) {
    options.s3_store->pool = options.service.pool;
    auto s3 = fetch::S3ChunkStore::Make(*options.s3_store);
    if (!s3.ok()) {
      impl->Stop();
      return s3.status();
    }
    impl->s3_store = std::move(s3).value();
    options.service.store = impl->s3_store.get();
  }
  options.service.max_message_bytes = options.max_body_bytes;
  auto service = ResultService::Make(options.service);
  if (!service.ok()) {
    impl->Stop();
    return service.status();
  }
  impl->service = std::move(service).value();

  Impl* self = impl.get();
  impl->workers = std::make_unique<asio::thread_pool>(static_cast<size_t>(options.worker_threads));
  impl->Accept();
  for (int i = 0; i < options.io_threads; ++i) {
    impl->io_threads.emplace_back([self] { self->ioc->run(); });
  }
  impl->sweep_thread = std::thread([self] { self->SweepLoop(); });
  return std::unique_ptr<ResultServer>(new ResultServer(std::move(impl)));
}

ResultServer::ResultServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ResultServer::~ResultServer() { Stop(); }
void ResultServer::Stop() { impl_->Stop(); }
int ResultServer::port() const { return impl_->port; }
std::string ResultServer::base_url() const { return "https://" + impl_->o.host + ":" + std::to_string(impl_->port); }
std::string ResultServer::rpc_path() const { return "/sql/1.0/warehouses/" + impl_->o.warehouse_id; }
std::string ResultServer::rpc_url() const { return base_url() + rpc_path(); }
std::string ResultServer::cert_path() const { return impl_->cert_path; }
ResultService* ResultServer::service() const { return impl_->service.get(); }
fetch::LocalChunkStore* ResultServer::store() const { return impl_->store.get(); }
fetch::ChunkStore* ResultServer::service_store() const {
  return impl_->s3_store ? static_cast<fetch::ChunkStore*>(impl_->s3_store.get()) : impl_->store.get();
}
std::string ResultServer::MetricsText() const { return impl_->Metrics(); }

std::string ResultServer::StatsLine() const {
  std::string text = impl_->Metrics();
  for (char& c : text) {
    if (c == '\n') c = ';';
  }
  return text;
}

}  // namespace quiver::server

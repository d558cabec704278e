// quiver/server/http_connection.cc — one HTTPS connection of the result
// server (http_server.h describes the limits and the I/O model).
//
// Each connection is a Connection object driven by completion handlers on
// its own strand; it is owned by the handler waiting on it (shared_ptr), so
// it dies when its last operation ends (a deadline, an error, the client
// closing). Steps: TLS handshake -> header section (parser with byte and
// field caps, one deadline) -> route and authorise from the header alone
// (http_routes.h) -> body (read in pieces, each reserved in the thrift pool
// and charged to the token and address before it is read, one deadline) ->
// a worker thread answers -> one response write -> the next request, or
// close.
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <limits>
#include <optional>
#include <sstream>

#include "quiver/server/http_routes.h"
#include "quiver/server/http_server_impl.h"

namespace quiver::server {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

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

class Connection : public SheddableConnection, public std::enable_shared_from_this<Connection> {
 public:
  Connection(ResultServer::Impl* server, tcp::socket socket, std::string address)
      : server_(server),
        tcp_(std::move(socket)),
        strand_(tcp_.get_executor()),
        first_byte_timer_(tcp_.get_executor()),
        address_(std::move(address)),
        buffer_(64 << 10) {}

  ~Connection() override {
    DropBody();
    if (id_ != 0) server_->Release(id_);
  }

  // Closes the socket on the strand: what is pending ends (operation
  // aborted), and with it the connection.
  void Shed() override {
    asio::post(strand_, [self = shared_from_this()] {
      boost::system::error_code ignored;
      if (self->stream_) {
        beast::get_lowest_layer(*self->stream_).close();
      } else {
        self->first_byte_timer_.cancel();
        self->tcp_.socket().close(ignored);
      }
    });
  }

  // Until the client sends its first byte the connection is a bare socket
  // (no TLS state, no buffers: an idle connection costs about 1 KiB); the
  // TLS stream is made when the handshake can start. The header deadline
  // runs from here.
  void Start(uint64_t id) {
    id_ = id;
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

  // Between requests of a kept-alive connection: up to
  // keep_alive_timeout_ms for the next request's first byte, then the
  // header deadline for its header section (ReadHeader). The first byte is
  // read through TLS, so a request already buffered below (pipelined, or
  // in the TLS layer) is seen at once.
  void AwaitNextRequest() {
    if (buffer_.size() > 0) return ReadHeader();
    buffer_.shrink_to_fit();  // an idle connection holds no read buffer
    Deadline(server_->o.keep_alive_timeout_ms);
    server_->SetActivity(id_, ConnectionActivity::kKeptAlive);
    stream_->async_read_some(buffer_.prepare(kFirstReadBytes),
                             [self = shared_from_this()](beast::error_code ec, size_t n) {
                               if (ec) {
                                 if (ec == beast::error::timeout) ++self->server_->keep_alive_closes;
                                 return;  // idle past the limit, the client closed, or shed
                               }
                               self->server_->SetActivity(self->id_, ConnectionActivity::kBusy);
                               self->buffer_.commit(n);
                               self->ReadHeader();
                             });
  }
  static constexpr size_t kFirstReadBytes = 4096;

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
    server_->SetActivity(id_, ConnectionActivity::kBusy);  // no longer sheddable as new
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
    const Route route = MatchRoute(target.path);
    switch (route.kind) {
      case RouteKind::kRpc:
        if (req.method() != http::verb::post) return RefuseAndClose(Reply::Text(405, "use POST\n"), has_body);
        return RouteRpc(route.tail);
      case RouteKind::kFile: {
        if (req.method() != http::verb::get) return RefuseAndClose(Reply::Text(405, "use GET\n"), has_body);
        if (has_body) return RefuseAndClose(Reply::Text(400, "a GET carries no body\n"));
        std::string id(route.tail);
        const auto range_it = req.find(http::field::range);
        std::string range = range_it == req.end() ? "" : std::string(range_it->value());
        return RunOnWorker([id = std::move(id), params = std::move(target.params), range = std::move(range)](
                               ResultServer::Impl* server) { return server->HandleFile(id, params, range); });
      }
      case RouteKind::kMetrics:
        if (req.method() != http::verb::get) return RefuseAndClose(Reply::Text(405, "use GET\n"), has_body);
        if (has_body) return RefuseAndClose(Reply::Text(400, "a GET carries no body\n"));
        if (!Authorized()) return RefuseUnauthorized(false);
        return RunOnWorker([](ResultServer::Impl* server) { return Reply::Text(200, server->Metrics()); });
      case RouteKind::kNone: break;
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
    // The body is reserved as its bytes arrive (ReadBodySome), not from
    // the Content-Length: a request that announces a large body and sends
    // nothing holds nothing.
    body_length_ = static_cast<size_t>(length);
    body_received_ = 0;
    const auto& r = header_->get();
    const auto e = r.find(http::field::expect);
    const bool expect_continue = e != r.end() && beast::iequals(e->value(), "100-continue");
    header_.reset();
    if (expect_continue) {
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

  // One deadline for the whole body. Bytes arrive in buffer_ (at most one
  // read of kBodyReadBytes, like a header section, not charged) and are
  // charged before they move to body_text_. Bytes after the body in the
  // buffer (a pipelined request) stay there.
  void ReadBody() {
    Deadline(server_->o.body_timeout_ms);
    if (!TakeBufferedBody()) return;
    ReadBodySome();
  }

  void ReadBodySome() {
    if (body_received_ == body_length_) return BodyDone();
    const size_t want = std::min(body_length_ - body_received_, kBodyReadBytes);
    stream_->async_read_some(buffer_.prepare(want), [self = shared_from_this()](beast::error_code ec, size_t n) {
      if (ec) return self->CountTimeout(ec);
      self->buffer_.commit(n);
      if (!self->TakeBufferedBody()) return;
      self->ReadBodySome();
    });
  }
  static constexpr size_t kBodyReadBytes = 16 << 10;  // one TLS record

  // Moves the body bytes of buffer_ to body_text_, charging them first.
  // False when a cap or the budget refused them (the answer is on its way).
  bool TakeBufferedBody() {
    const size_t n = std::min(buffer_.size(), body_length_ - body_received_);
    if (n == 0) return true;
    if (!GrowBody(n)) return false;
    body_text_.append(static_cast<const char*>(buffer_.data().data()), n);
    buffer_.consume(n);
    body_received_ += n;
    return true;
  }

  // Makes room for `want` more body bytes: body_text_'s capacity grows by
  // doubling (from kBodyGrowBytes, at most the declared length), and each growth is
  // charged to the token and address (ChargeBody) and reserved in the
  // thrift pool before the string grows. The charge is what the string's
  // allocator will hold: libstdc++ rounds a growth to less than twice the
  // capacity up to twice. False when a cap or the budget refuses; the
  // request is then answered (429 / 503) and the connection closes.
  bool GrowBody(size_t want) {
    const size_t need = body_received_ + want;
    const size_t capacity = body_charged_ > 0 ? body_text_.capacity() : 0;
    if (need <= capacity) return true;
    const size_t target = std::min(body_length_, std::max({need, 2 * capacity, kBodyGrowBytes}));
    const size_t predicted = capacity > 0 ? std::max(target, 2 * capacity) : target;
    if (!ChargeBodyBytes(static_cast<int64_t>(predicted) - body_charged_)) return false;
    body_text_.reserve(target);
    // Never expected: the allocator gave more than predicted.
    if (static_cast<int64_t>(body_text_.capacity()) > body_charged_) {
      if (!ChargeBodyBytes(static_cast<int64_t>(body_text_.capacity()) - body_charged_)) return false;
    }
    return true;
  }

  static constexpr size_t kBodyGrowBytes = 64 << 10;

  bool ChargeBodyBytes(int64_t bytes) {
    if (!server_->ChargeBody(token_index_, address_, bytes)) {
      ++server_->body_refusals;
      DropBody();
      RefuseAndClose(Reply::Text(429, "request bodies of this client over the limit (" +
                                          std::to_string(server_->o.max_body_bytes_per_client) +
                                          " bytes held at once per token and per address)\n"));
      return false;
    }
    if (!server_->service->thrift_pool()->Reserve(bytes).ok()) {
      server_->ReleaseBody(token_index_, address_, bytes);
      ++server_->body_refusals;
      DropBody();
      RefuseAndClose(Reply::Text(503, "no memory for the request body\n"));
      return false;
    }
    body_charged_ += bytes;
    return true;
  }

  // Ends the body's charges and frees its bytes. (On a worker thread after
  // the answer, while the connection waits for it; else on the strand.)
  void DropBody() {
    std::string().swap(body_text_);
    if (body_charged_ == 0) return;
    server_->service->thrift_pool()->Unreserve(body_charged_);
    server_->ReleaseBody(token_index_, address_, body_charged_);
    body_charged_ = 0;
  }

  void BodyDone() {
    std::string body = std::move(body_text_);
    body_text_ = std::string();
    RunOnWorker([body = std::move(body), client = "token-" + std::to_string(token_index_)](
                    ResultServer::Impl* server) mutable { return server->HandleRpc(std::move(body), client); });
  }

  template <typename Handler>
  void RunOnWorker(Handler handler) {
    beast::get_lowest_layer(*stream_).expires_never();
    asio::post(*server_->workers, [self = shared_from_this(), handler = std::move(handler)]() mutable {
      std::shared_ptr<Reply> reply = handler(self->server_);
      // The request body's charges end once the worker is done with it
      // (the handler owned, and has freed, its bytes).
      self->DropBody();
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
      if (!reply_->served_chunk_id.empty()) server_->SpillServedChunk(std::move(reply_->served_chunk_id));
    }
    response_.reset();
    reply_.reset();
    if (ec) return CountTimeout(ec);
    if (!close) return AwaitNextRequest();
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
  uint64_t id_ = 0;               // the slot Admit gave (0: none)
  beast::tcp_stream tcp_;         // until the first byte; then moved into stream_
  asio::any_io_executor strand_;  // the connection's strand (tcp_'s, then stream_'s)
  asio::steady_timer first_byte_timer_;
  std::chrono::steady_clock::time_point deadline_;
  std::optional<Stream> stream_;
  std::string address_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> header_;
  // The body of the request being read: its declared length, the bytes
  // read so far into body_text_, and the bytes charged (GrowBody) to the
  // thrift pool and to the token and address, until the worker is done.
  size_t body_length_ = 0;
  size_t body_received_ = 0;
  std::string body_text_;
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

void ServeConnection(ResultServer::Impl* server, tcp::socket socket, std::string address) {
  auto connection = std::make_shared<Connection>(server, std::move(socket), address);
  const uint64_t id = server->Admit(address, connection);
  if (id == 0) {
    ++server->refused_connections;
    return;  // the socket closes with the connection
  }
  connection->Start(id);
}

}  // namespace quiver::server

// quiver/server/http_server.h — the HTTPS front of the result server
// (Boost.Beast over Boost.Asio, OpenSSL, TLS 1.2 or later): Thrift RPCs,
// chunk downloads, metrics.
//
// Routes:
//   POST /sql/1.0/warehouses/<id>  Thrift TCLIService call (binary protocol)
//       with "Authorization: Bearer <token>" (constant-time compare). Checked
//       from the header section alone, before any body byte is read: 404 for
//       another warehouse id, 401 without or with a wrong token, 411 without
//       a Content-Length (chunked bodies are refused too), 413 for a
//       Content-Length over max_body_bytes. Then the body is read (within
//       body_timeout_ms), reserved as its bytes arrive (429 past
//       max_body_bytes_per_client, 503 past the memory budget), and 400
//       answers a malformed Thrift message.
//   GET /files/<id>?e=<expiry_ms>&s=<sig>  a result chunk; no Authorization
//       (the signature is the authority): 400 for an id outside the chunk id
//       syntax, 403 for a bad, truncated or expired signature, 404 for a
//       removed chunk; one Range (RFC 7233, checked after the signature) is
//       answered with 206, or 416 when it starts past the end.
//   GET /metrics  held/peak bytes per pool, allocator statistics and service
//       counters, text, with the bearer token.
// Anything else is 404 (405 for another method on a known path). A header
// section that is malformed, has two Content-Length fields or both
// Content-Length and Transfer-Encoding is 400; one over max_header_bytes or
// max_header_fields is 431. Error answers sent before a body was read close
// the connection (after draining what the client is still sending, briefly).
//
// I/O model: io_threads event-loop threads run every socket (TLS handshake,
// header and body reads, response writes) asynchronously, so a connection
// that is idle or sends slowly costs a socket and its buffers, never a
// thread: a connection that has sent nothing yet is a bare socket (~1 KiB),
// the TLS state (~80 KiB) is made when its first byte arrives. Only a complete, authorised request goes to
// one of worker_threads threads, which runs the RPC (or reads the chunk) and
// hands the response back to the event loop. TCP_NODELAY is set on every
// socket and a response's header and (first 64 KiB of) body leave in one
// TLS write. A chunk file is encrypted in batches of 256 KiB (header
// included in the first), about 16 TLS records each, into one buffer that
// goes to the socket in one write: the server's CPU per GB served is then
// about AES-GCM and the kernel's copy, not a 16 KiB Asio operation (two
// copies and a send) per record.
//
// Thread safety: all methods may be called from any thread; Stop() is
// idempotent and called by the destructor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <optional>
#include "quiver/base/result.h"

#include "quiver/fetch/chunk_store.h"
#include "quiver/fetch/s3_chunk_store.h"
#include "quiver/server/result_service.h"

namespace quiver::server {

struct ServerOptions {
  /// Address to bind; links are built with it (https://HOST:PORT).
  std::string host = "127.0.0.1";
  /// TCP port; 0 = an ephemeral port (see ResultServer::port()).
  int port = 0;
  /// PEM certificate and key; both empty = generate a self-signed pair into
  /// `cert_dir`.
  std::string cert_path;
  std::string key_path;
  /// Directory for a generated certificate; empty = a private temporary
  /// directory (removed when the server stops).
  std::string cert_dir;
  /// Bearer token every RPC must carry. Required (non-empty).
  std::string token;
  /// Further bearer tokens accepted (each non-empty, distinct). Each token
  /// is one client for the per-token caps of the service
  /// (ResultServiceOptions::max_sessions_per_token, max_operations_per_token):
  /// the RPCs carrying token k are dispatched with client id "token-k"
  /// (`token` is token-0, tokens[i] is token-(i+1)). Every comparison is
  /// constant-time and all tokens are compared on every request.
  std::vector<std::string> tokens;
  /// The <id> of the RPC path /sql/1.0/warehouses/<id> ([A-Za-z0-9_-]+).
  std::string warehouse_id = "quiver";
  /// Largest request body accepted (bytes); also the Thrift message limit.
  int64_t max_body_bytes = int64_t{16} << 20;
  /// Request body bytes one bearer token may hold at once, and one client
  /// address (each a cap of its own): a body counts from its first byte
  /// until the worker answering it is done. Bodies are reserved in the
  /// thrift pool as their bytes arrive (in doubling steps, at most the
  /// declared Content-Length), never from the Content-Length before the
  /// bytes come, so requests that announce a large body and send nothing
  /// hold nothing. A read that would pass either cap ends its request with
  /// 429, one the memory budget refuses with 503; both close the
  /// connection. 0 = 4 x max_body_bytes (64 MiB by default); otherwise at
  /// least max_body_bytes.
  int64_t max_body_bytes_per_client = 0;
  /// Deadlines (milliseconds), each a total for one step, however the
  /// client spreads its bytes: a new connection's TLS handshake and first
  /// header section (from accept), and each later request's header section
  /// (from its first byte); a request's body; the writing of one response.
  int64_t header_timeout_ms = 10'000;
  int64_t body_timeout_ms = 30'000;
  int64_t write_timeout_ms = 60'000;
  /// How long a kept-alive connection may stay idle between a response and
  /// the first byte of its next request before the server closes it (ms).
  /// Apart from header_timeout_ms because drivers pause between RPCs while
  /// they convert what they fetched (the Databricks Node driver blocks its
  /// event loop for seconds per batch) and then reuse their pooled socket
  /// at once, without noticing a close that came meanwhile: a close there
  /// fails their next RPC ("socket hang up"). An idle connection costs a
  /// socket and a few KiB (no thread, no TLS record buffers).
  int64_t keep_alive_timeout_ms = 120'000;
  /// Largest header section (request line and fields, bytes) and number of
  /// fields; both checked as bytes arrive (431 past them).
  int64_t max_header_bytes = 16 << 10;
  int max_header_fields = 100;
  /// Open connections at most, in all and from one client address; a
  /// connection past either is closed at once (counted in /metrics as
  /// http refused_connections). Bounded below by what file descriptors
  /// allow. max_connections_per_address 0 = max_connections / 16 (at least
  /// 1), so that a handful of addresses cannot hold the whole cap.
  ///
  /// Shedding: once open connections reach 90% of max_connections, each new
  /// connection first closes one idle connection, so a new client is
  /// accepted while others hold idle sockets: connections that have not
  /// yet sent a complete request header (bare sockets, TLS handshakes,
  /// first header sections in progress) go first, oldest first; then
  /// kept-alive connections waiting between requests, longest idle first.
  /// Connections reading a later header or a body, waiting for a worker or
  /// writing a response are never shed. A new connection is refused only
  /// when the cap is reached and none is idle. Counted in /metrics as http
  /// shed_connections.
  int max_connections = 4096;
  int max_connections_per_address = 0;
  /// Event-loop threads (every socket's I/O) and worker threads (RPCs and
  /// chunk reads; a request waits in a queue, at most one per connection,
  /// when all are busy). An RPC may wait up to fetch_wait_ms for the next
  /// chunk, so workers bound the RPCs in progress at once, not connections;
  /// at most service.max_waiting_rpcs (lowered by Start to half the worker
  /// threads) wait at once, and statements plan on their own threads
  /// (service.max_planning), so neither can hold every worker.
  int io_threads = 2;
  int worker_threads = 64;
  /// How often idle sessions/operations and expired chunks are swept (ms).
  int64_t sweep_interval_ms = 1000;
  /// At a sweep after statements have ended, hand free memory back to the
  /// OS (Allocator::ReleaseFreeMemory of the service pool's allocator, and
  /// malloc_trim for glibc's heap), so RSS returns near its baseline.
  bool release_memory_after_statements = true;
  /// The local chunk store (link_base_url is filled in by Start); it serves
  /// /files downloads. Used for results unless s3_store is set.
  fetch::LocalChunkStoreOptions store;
  /// Results in an S3 store instead (its pool is filled in by Start with
  /// service.pool): links are the store's presigned URLs, and servers
  /// sharing the store and service.cluster_secret answer for each other.
  /// Start fails (IOError naming the store and the HTTP status) when the
  /// bucket is missing or refuses the credentials.
  std::optional<fetch::S3ChunkStoreOptions> s3_store;
  /// The service (store and max_message_bytes are filled in by Start; pool
  /// and executor are required).
  ResultServiceOptions service;
};

class ResultServer {
 public:
  /// Makes the store and service, loads or generates the certificate, binds
  /// and starts serving on a background thread. Errors: Invalid for options
  /// (empty token, bad warehouse id, only one of cert/key), IOError for the
  /// certificate, the bind or the spill directory.
  static Result<std::unique_ptr<ResultServer>> Start(ServerOptions options);
  ~ResultServer();

  /// Stops accepting, joins the server and sweeper threads, closes every
  /// operation and removes every chunk and generated file.
  void Stop();

  int port() const;
  /// https://HOST:PORT
  std::string base_url() const;
  /// https://HOST:PORT/sql/1.0/warehouses/ID
  std::string rpc_url() const;
  /// /sql/1.0/warehouses/ID
  std::string rpc_path() const;
  /// The certificate clients must trust (given or generated).
  std::string cert_path() const;

  ResultService* service() const;
  fetch::LocalChunkStore* store() const;
  /// The store results go to: the S3 store when configured, else store().
  fetch::ChunkStore* service_store() const;

  /// The /metrics text: one "pool <path> held_bytes=N peak_bytes=N" line per
  /// pool, one "allocator ..." line (process resident bytes and the byte
  /// sources' own statistics), then "store ...", "service ..." and "http ..."
  /// counter lines.
  std::string MetricsText() const;
  /// One line for logs: held/peak per pool, chunks, sessions, operations.
  std::string StatsLine() const;

  class Impl;

 private:
  explicit ResultServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace quiver::server

// quiver/server/http_server.h — the HTTPS front of the result server
// (cpp-httplib with OpenSSL): Thrift RPCs, chunk downloads, metrics.
//
// Routes:
//   POST /sql/1.0/warehouses/<id>  Thrift TCLIService call (binary protocol)
//       with "Authorization: Bearer <token>" (constant-time compare): 401
//       without or with a wrong token, 404 for another warehouse id, 413 for
//       a body over max_body_bytes, 400 for a malformed Thrift message.
//   GET /files/<id>?e=<expiry_ms>&s=<sig>  a result chunk; no Authorization
//       (the signature is the authority): 400 for an id outside the chunk id
//       syntax, 403 for a bad, truncated or expired signature, 404 for a
//       removed chunk; Range requests are answered with 206.
//   GET /metrics  held/peak bytes per pool and service counters, text, with
//       the bearer token.
//
// Thread safety: all methods may be called from any thread; Stop() is
// idempotent and called by the destructor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "quiver/base/result.h"
#include "quiver/fetch/chunk_store.h"
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
  /// The <id> of the RPC path /sql/1.0/warehouses/<id> ([A-Za-z0-9_-]+).
  std::string warehouse_id = "quiver";
  /// Largest request body accepted (bytes); also the Thrift message limit.
  int64_t max_body_bytes = int64_t{16} << 20;
  /// Socket timeouts: a slow client cannot hold a worker longer than these
  /// per read / write (seconds), nor keep an idle connection past keep_alive_s.
  int read_timeout_s = 30;
  int write_timeout_s = 60;
  int keep_alive_s = 10;
  /// HTTP worker threads. cpp-httplib keeps a worker on each open
  /// keep-alive connection until it goes idle for keep_alive_s, so this is
  /// the number of client connections served at once: clients open one RPC
  /// connection plus one per parallel download (8 for quiver, 10 for the
  /// Node driver), and a pool smaller than that stalls downloads for
  /// keep_alive_s. 64 serves about six such clients at once.
  int worker_threads = 64;
  /// How often idle sessions/operations and expired chunks are swept (ms).
  int64_t sweep_interval_ms = 1000;
  /// The chunk store (link_base_url is filled in by Start).
  fetch::LocalChunkStoreOptions store;
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

  /// The /metrics text: one "pool <path> held_bytes=N peak_bytes=N" line per
  /// pool, then "store ..." and "service ..." counter lines.
  std::string MetricsText() const;
  /// One line for logs: held/peak per pool, chunks, sessions, operations.
  std::string StatsLine() const;

  class Impl;

 private:
  explicit ResultServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace quiver::server

// quiver/server/http_server_impl.h — the state of a running ResultServer
// shared by its parts (http_server.h describes the routes, limits and I/O
// model):
//   http_server.cc      start, stop, accept and admission, sweeps, metrics
//   http_connection.cc  one connection: TLS, header and body reads under
//                       their deadlines, writes (chunk bodies encrypted in
//                       batches), lingering close
//   http_routes.cc      what a request asks for (path, query, Range) and the
//                       answers of the routes (RPC, chunk file)
//
// Internal to the server layer (includes Boost.Asio). Thread safety: the
// counters are atomic; Admit/SetActivity/Release and the connection table
// take conn_mu; ChargeBody/ReleaseBody and the body counts take body_mu; the
// rest is set up by Start before any thread runs and torn down by Stop
// after they have all ended.
#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/thread_pool.hpp>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "quiver/memory/buffer.h"
#include "quiver/server/http_server.h"

namespace quiver::server {

/// What a worker (or the router) answers: a status, a few headers and a
/// body that is either `text` or bytes of `chunk`. Move-only; a charge to
/// the thrift pool ends with it.
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
  /// Set when the body is a whole chunk of the local store: once it has been
  /// sent in full, the chunk leaves memory for a spill file
  /// (Impl::SpillServedChunk; issue 35 #11).
  std::string served_chunk_id;

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

/// An open connection as the admission policy sees it (http_connection.cc
/// implements it).
class SheddableConnection {
 public:
  virtual ~SheddableConnection() = default;
  /// Closes the connection from its own strand; any thread may call it.
  /// Its slot is given back when the connection object ends.
  virtual void Shed() = 0;
};

/// What a connection is doing, for shedding (ServerOptions::max_connections
/// has the order): kFresh = no complete request header yet, kKeptAlive =
/// waiting for the next request after a response, kBusy = the rest (a
/// later header section, a body, a worker, a response).
enum class ConnectionActivity { kFresh, kKeptAlive, kBusy };

class ResultServer::Impl {
 public:
  ServerOptions o;
  std::unique_ptr<fetch::LocalChunkStore> store;
  std::unique_ptr<fetch::S3ChunkStore> s3_store;  // results when configured; outlives service
  std::unique_ptr<ResultService> service;
  std::unique_ptr<boost::asio::ssl::context> tls;
  std::unique_ptr<boost::asio::io_context> ioc;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor;
  std::unique_ptr<boost::asio::thread_pool> workers;
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
  /// Kept-alive connections closed for idling past keep_alive_timeout_ms.
  std::atomic<int64_t> keep_alive_closes{0};
  /// Idle connections closed to admit a new one near max_connections.
  std::atomic<int64_t> shed_connections{0};
  /// Requests ended because their body would pass a cap (429) or the
  /// memory budget (503).
  std::atomic<int64_t> body_refusals{0};

  // Open connections, in all and per client address, and the idle ones in
  // shedding order. An entry lives from Admit to Release.
  struct OpenConnection {
    std::string address;
    std::weak_ptr<SheddableConnection> connection;
    ConnectionActivity activity = ConnectionActivity::kFresh;
    uint64_t idle_key = 0;  // its key in kept_alive while kKeptAlive
    bool shed = false;      // chosen to be shed: closing
  };
  std::mutex conn_mu;
  int64_t open_connections = 0;
  int64_t shedding = 0;  // open entries with `shed` set
  uint64_t next_connection_id = 1, next_idle_key = 1;
  std::map<std::string, int> per_address;
  std::unordered_map<uint64_t, OpenConnection> open;
  std::set<uint64_t> fresh;                 // ids of kFresh entries (ids grow with accept time)
  std::map<uint64_t, uint64_t> kept_alive;  // idle_key (grows with idle start) -> id of kKeptAlive entries

  // Request body bytes held (ChargeBody), in all and per token and address.
  std::mutex body_mu;
  int64_t body_bytes = 0, peak_body_bytes = 0;
  std::map<int, int64_t> body_bytes_per_token;
  std::map<std::string, int64_t> body_bytes_per_address;

  /// The index of the token an Authorization header carries (0 = o.token,
  /// i + 1 = o.tokens[i]), or -1. Every token is compared, each in
  /// constant time.
  int AuthorizedToken(std::string_view header) const;
  /// Takes a connection slot for `connection` from `address`: its id, or 0
  /// when the address is at its cap or the server is full with nothing idle
  /// to shed. From 90% of max_connections it sheds one idle connection
  /// first (ServerOptions::max_connections has the order). The new entry is
  /// kFresh. Called by the accept loop.
  uint64_t Admit(const std::string& address, const std::shared_ptr<SheddableConnection>& connection);
  /// Records what connection `id` is doing (for shedding).
  void SetActivity(uint64_t id, ConnectionActivity activity);
  /// Gives slot `id` back (the connection's destructor).
  void Release(uint64_t id);
  int64_t connections();

  /// Charges `bytes` of request body to token `token` and client `address`;
  /// false (nothing charged) when either would pass
  /// max_body_bytes_per_client. ReleaseBody gives bytes back.
  bool ChargeBody(int token, const std::string& address, int64_t bytes);
  void ReleaseBody(int token, const std::string& address, int64_t bytes);

  /// Accepts connections until the acceptor closes (on the event loop).
  void Accept();

  /// A whole chunk of the local store has been sent: it moves to a spill
  /// file (LocalChunkStore::SpillServed, within the disk budget) on a worker
  /// thread, off the event loop, so that an open operation keeps in memory
  /// only the chunks not yet downloaded; a retried or repeated download
  /// reads the spill file. Any thread; a no-op once the server stops.
  void SpillServedChunk(std::string id);
  /// Chunks moved out of memory after being served in full (/metrics).
  std::atomic<int64_t> served_chunks_spilled{0};

  /// Request handlers (http_routes.cc); they run on worker threads.
  std::unique_ptr<Reply> HandleRpc(std::string body, const std::string& client);
  std::unique_ptr<Reply> HandleFile(const std::string& id, const std::map<std::string, std::string>& params,
                                    const std::string& range);

  /// The sweeper thread's loop: idle sessions and operations, expired
  /// chunks, S3 sweeps, then ReleaseMemoryIfStatementsEnded.
  void SweepLoop();
  /// After statements end, the freed memory goes back to the OS here, off
  /// the request path: the pools' allocator purges, and glibc's arenas (the
  /// general heap of every thread: Thrift strings, containers) are trimmed.
  /// A sweep trims when a producer ended, an operation closed or the pools
  /// hold at least 8 MiB less than at the last sweep, and once more on the
  /// sweep after that (what the closing requests free just after a close).
  void ReleaseMemoryIfStatementsEnded();
  int64_t finished_seen = 0, open_seen = 0, held_seen = 0;
  bool trailing_trim = false;
  std::atomic<int64_t> trims{0};

  /// The /metrics text (ResultServer::MetricsText).
  std::string Metrics();
  /// Idempotent: stops the event loop, workers and sweeper, then the
  /// service, stores and generated certificate.
  void Stop();
};

/// Admits (Impl::Admit) and serves one accepted connection, or closes it at
/// once when it is refused (counted in refused_connections); its slot is
/// released when it ends. Runs on the event loop.
void ServeConnection(ResultServer::Impl* server, boost::asio::ip::tcp::socket socket, std::string address);

}  // namespace quiver::server

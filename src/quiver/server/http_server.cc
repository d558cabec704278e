// quiver/server/http_server.cc — the result server's life: Start (options,
// certificate, TLS context, bind, stores, service, threads), Stop, the
// accept loop and its connection caps, the sweeper thread and /metrics.
// A connection's steps are in http_connection.cc, the routes' answers in
// http_routes.cc (http_server_impl.h lists the parts); http_server.h
// describes the routes, limits and I/O model.
#include "quiver/server/http_server.h"

#include <malloc.h>
#include <openssl/ssl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "quiver/fetch/link_signer.h"
#include "quiver/server/http_server_impl.h"
#include "quiver/server/tls_cert.h"

namespace quiver::server {
namespace {

namespace asio = boost::asio;
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

}  // namespace

int ResultServer::Impl::AuthorizedToken(std::string_view header) const {
  static constexpr std::string_view kBearer = "Bearer ";
  int found = -1;
  for (size_t k = 0; k <= o.tokens.size(); ++k) {
    const std::string expected = std::string(kBearer) + (k == 0 ? o.token : o.tokens[k - 1]);
    if (fetch::ConstantTimeEquals(header, expected) && found < 0) found = static_cast<int>(k);
  }
  return found;
}

uint64_t ResultServer::Impl::Admit(const std::string& address, const std::shared_ptr<SheddableConnection>& connection) {
  std::shared_ptr<SheddableConnection> victim;  // shed after the lock is let go
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(conn_mu);
    auto at = per_address.find(address);
    if (at != per_address.end() && at->second >= o.max_connections_per_address) return 0;
    // From 90% of the cap, one idle connection makes room for each new one:
    // the oldest that has sent no complete request header, else the one
    // idle longest between requests. (A victim's slot counts until its
    // socket has closed; `shedding` keeps it from blocking admission.)
    const int64_t shed_from = o.max_connections - o.max_connections / 10;
    while (open_connections - shedding >= shed_from && !victim) {
      uint64_t candidate = 0;
      if (!fresh.empty()) {
        candidate = *fresh.begin();
        fresh.erase(fresh.begin());
      } else if (!kept_alive.empty()) {
        candidate = kept_alive.begin()->second;
        kept_alive.erase(kept_alive.begin());
      } else {
        break;
      }
      OpenConnection& entry = open.at(candidate);
      entry.activity = ConnectionActivity::kBusy;  // out of the idle sets
      entry.shed = true;
      ++shedding;
      victim = entry.connection.lock();  // null when it is ending anyway
    }
    if (open_connections - shedding >= o.max_connections) return 0;
    id = next_connection_id++;
    ++per_address[address];
    ++open_connections;
    open.emplace(id, OpenConnection{address, connection, ConnectionActivity::kFresh, 0, false});
    fresh.insert(id);
  }
  if (victim) {
    ++shed_connections;
    victim->Shed();
  }
  return id;
}

void ResultServer::Impl::SetActivity(uint64_t id, ConnectionActivity activity) {
  std::lock_guard<std::mutex> lock(conn_mu);
  auto it = open.find(id);
  if (it == open.end() || it->second.shed || it->second.activity == activity) return;
  OpenConnection& entry = it->second;
  if (entry.activity == ConnectionActivity::kFresh) fresh.erase(id);
  if (entry.activity == ConnectionActivity::kKeptAlive) kept_alive.erase(entry.idle_key);
  entry.activity = activity;
  if (activity == ConnectionActivity::kFresh) fresh.insert(id);
  if (activity == ConnectionActivity::kKeptAlive) {
    entry.idle_key = next_idle_key++;
    kept_alive.emplace(entry.idle_key, id);
  }
}

void ResultServer::Impl::Release(uint64_t id) {
  std::lock_guard<std::mutex> lock(conn_mu);
  auto it = open.find(id);
  if (it == open.end()) return;
  OpenConnection& entry = it->second;
  if (entry.activity == ConnectionActivity::kFresh) fresh.erase(id);
  if (entry.activity == ConnectionActivity::kKeptAlive) kept_alive.erase(entry.idle_key);
  if (entry.shed) --shedding;
  auto a = per_address.find(entry.address);
  if (a != per_address.end() && --a->second <= 0) per_address.erase(a);
  --open_connections;
  open.erase(it);
}

bool ResultServer::Impl::ChargeBody(int token, const std::string& address, int64_t bytes) {
  std::lock_guard<std::mutex> lock(body_mu);
  int64_t& by_token = body_bytes_per_token[token];
  int64_t& by_address = body_bytes_per_address[address];
  const int64_t cap = o.max_body_bytes_per_client;
  if (bytes > cap - by_token || bytes > cap - by_address) {
    if (by_token == 0) body_bytes_per_token.erase(token);
    if (by_address == 0) body_bytes_per_address.erase(address);
    return false;
  }
  by_token += bytes;
  by_address += bytes;
  body_bytes += bytes;
  peak_body_bytes = std::max(peak_body_bytes, body_bytes);
  return true;
}

void ResultServer::Impl::ReleaseBody(int token, const std::string& address, int64_t bytes) {
  std::lock_guard<std::mutex> lock(body_mu);
  body_bytes -= bytes;
  auto t = body_bytes_per_token.find(token);
  if (t != body_bytes_per_token.end() && (t->second -= bytes) <= 0) body_bytes_per_token.erase(t);
  auto a = body_bytes_per_address.find(address);
  if (a != body_bytes_per_address.end() && (a->second -= bytes) <= 0) body_bytes_per_address.erase(a);
}

int64_t ResultServer::Impl::connections() {
  std::lock_guard<std::mutex> lock(conn_mu);
  return open_connections;
}

void ResultServer::Impl::SweepLoop() {
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

void ResultServer::Impl::ReleaseMemoryIfStatementsEnded() {
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

void ResultServer::Impl::SpillServedChunk(std::string id) {
  // Off the event loop: the spill file is written on a worker (the stopped
  // pool of a stopping server drops the task; the store removes everything).
  asio::post(*workers, [this, id = std::move(id)] {
    if (store->SpillServed(id)) ++served_chunks_spilled;
  });
}

std::string ResultServer::Impl::Metrics() {
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
      << " spilled_bytes=" << st.spilled_bytes << " total_spilled_chunks=" << st.total_spilled_chunks
      << " served_chunks_spilled=" << served_chunks_spilled << "\n";
  const auto sv = service->stats();
  out << "service sessions=" << sv.open_sessions << " operations=" << sv.open_operations
      << " running=" << sv.running_operations << " rpcs=" << sv.rpcs << " rpc_errors=" << sv.rpc_errors
      << " statements=" << sv.statements << " chunks_written=" << sv.chunks_written
      << " expired_sessions=" << sv.expired_sessions << " expired_operations=" << sv.expired_operations
      << " orphaned_operations=" << sv.orphaned_operations << " paused=" << sv.paused_operations
      << " producer_pauses=" << sv.producer_pauses << " planning=" << sv.planning << " queued_plans=" << sv.queued_plans
      << " refused_plans=" << sv.refused_plans << " waiting_rpcs=" << sv.waiting_rpcs
      << " waits_declined=" << sv.waits_declined << "\n";
  if (s3_store) {
    // The S3 client's retry policy at work (fetch/s3_client.h): throttling
    // and server errors retried with backoff, and the requests that failed.
    const auto s3 = s3_store->client()->stats();
    out << "s3 requests=" << s3.requests << " retries=" << s3.retries << " throttled=" << s3.throttled
        << " server_errors=" << s3.server_errors << " transport_errors=" << s3.transport_errors
        << " backoff_ms=" << s3.backoff_ms << " failures=" << s3.failures << " put_bytes=" << s3.put_bytes
        << " multipart_uploads=" << s3.multipart_uploads << "\n";
    // Statements run again after their server died (failover.h).
    out << "failover reruns=" << sv.failover_reruns << " exhausted=" << sv.failover_exhausted << "\n";
  }
  out << "http connections=" << connections() << " refused_connections=" << refused_connections
      << " shed_connections=" << shed_connections << " requests=" << requests << " bad_requests=" << bad_requests
      << " timeouts=" << timeouts << " downloads=" << downloads << " download_bytes=" << download_bytes
      << " auth_failures=" << auth_failures << " link_rejections=" << link_rejections
      << " keep_alive_closes=" << keep_alive_closes;
  {
    std::lock_guard<std::mutex> lock(body_mu);
    out << " body_bytes=" << body_bytes << " peak_body_bytes=" << peak_body_bytes;
  }
  out << " body_refusals=" << body_refusals << "\n";
  return out.str();
}

void ResultServer::Impl::Stop() {
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

void ResultServer::Impl::Accept() {
  acceptor->async_accept(asio::make_strand(*ioc), [this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
    if (!ec) {
      boost::system::error_code addr_ec;
      const auto endpoint = socket.remote_endpoint(addr_ec);
      const std::string address = addr_ec ? std::string("?") : endpoint.address().to_string();
      ServeConnection(this, std::move(socket), address);
    } else if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space) {
      // Out of file descriptors: wait a moment rather than spin.
      auto timer = std::make_shared<asio::steady_timer>(*ioc, std::chrono::milliseconds(50));
      timer->async_wait([this, timer](boost::system::error_code) { Accept(); });
      return;
    }
    Accept();
  });
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
  if (options.max_body_bytes_per_client == 0) {
    options.max_body_bytes_per_client = options.max_body_bytes > std::numeric_limits<int64_t>::max() / 4
                                            ? std::numeric_limits<int64_t>::max()
                                            : 4 * options.max_body_bytes;
  }
  if (options.max_body_bytes_per_client < options.max_body_bytes) {
    return Status::Invalid("serve: max_body_bytes_per_client (" + std::to_string(options.max_body_bytes_per_client) +
                           ") must be 0 or at least max_body_bytes (" + std::to_string(options.max_body_bytes) + ")");
  }
  if (options.header_timeout_ms <= 0 || options.body_timeout_ms <= 0 || options.write_timeout_ms <= 0 ||
      options.keep_alive_timeout_ms <= 0) {
    return Status::Invalid("serve: header, body, write and keep-alive timeouts must be positive");
  }
  if (options.max_header_bytes < 1024 || options.max_header_bytes > (int64_t{1} << 20) ||
      options.max_header_fields < 8) {
    return Status::Invalid("serve: max_header_bytes must be in 1 KiB..1 MiB and max_header_fields >= 8");
  }
  if (options.max_connections_per_address == 0) {
    options.max_connections_per_address = std::max(1, options.max_connections / 16);
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
  // Waiting RPCs hold workers: at most half of them may (issue 35 #3).
  options.service.max_waiting_rpcs =
      std::min(options.service.max_waiting_rpcs, std::max(1, options.worker_threads / 2));
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

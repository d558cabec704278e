// quiver/server/http_server.cc — cpp-httplib routes over the result service.
#include "quiver/server/http_server.h"

#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "quiver/fetch/link_signer.h"
#include "quiver/server/tls_cert.h"

namespace quiver::server {
namespace {

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

}  // namespace

class ResultServer::Impl {
 public:
  ServerOptions o;
  std::unique_ptr<fetch::LocalChunkStore> store;
  std::unique_ptr<ResultService> service;
  std::unique_ptr<httplib::SSLServer> http;
  std::thread listen_thread;
  std::atomic<bool> listen_returned{false};  // listen_after_bind came back
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

  bool Authorized(const httplib::Request& req) {
    const std::string h = req.get_header_value("Authorization");
    static constexpr std::string_view kBearer = "Bearer ";
    // Compare the whole header against "Bearer <token>" in constant time.
    const std::string expected = std::string(kBearer) + o.token;
    return fetch::ConstantTimeEquals(h, expected);
  }

  void HandleRpc(const httplib::Request& req, httplib::Response& res) {
    const_cast<httplib::Request&>(req).ranges.clear();  // a reply is never partial (see HandleFile)
    if (req.matches.size() < 2 || req.matches[1].str() != o.warehouse_id) {
      res.status = 404;
      res.set_content("no such warehouse\n", "text/plain");
      return;
    }
    if (!Authorized(req)) {
      ++auth_failures;
      res.status = 401;
      res.set_header("WWW-Authenticate", "Bearer");
      res.set_content("missing or wrong bearer token\n", "text/plain");
      return;
    }
    if (static_cast<int64_t>(req.body.size()) > o.max_body_bytes) {
      res.status = 413;
      res.set_content("request body over the limit\n", "text/plain");
      return;
    }
    auto reply =
        service->Dispatch(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(req.body.data()), req.body.size()));
    if (!reply.ok()) {
      res.status = reply.status().IsOutOfMemory() ? 503 : 400;
      res.set_content(reply.status().ToString() + "\n", "text/plain");
      return;
    }
    // The reply stays charged to the thrift pool until httplib has sent it
    // and drops the response (the provider's captures go with it).
    struct ChargedBody {
      std::string bytes;
      std::shared_ptr<MemoryPool> pool;
      int64_t charged = 0;
      ~ChargedBody() {
        if (charged > 0) pool->Unreserve(charged);
      }
    };
    auto body = std::make_shared<ChargedBody>();
    body->bytes = std::move(reply).value();
    body->pool = service->thrift_pool()->shared_from_this();
    if (body->pool->Reserve(static_cast<int64_t>(body->bytes.size())).ok()) {
      body->charged = static_cast<int64_t>(body->bytes.size());
    } else {
      res.status = 503;
      res.set_content("no memory for the reply\n", "text/plain");
      return;
    }
    res.status = 200;
    const size_t size = body->bytes.size();
    res.set_content_provider(size, "application/x-thrift",
                             [body](size_t offset, size_t length, httplib::DataSink& sink) {
                               const size_t end = std::min(offset + length, body->bytes.size());
                               return offset >= end || sink.write(body->bytes.data() + offset, end - offset);
                             });
  }

  void HandleFile(const httplib::Request& req, httplib::Response& res) {
    // Range (RFC 7233) is checked here, not by cpp-httplib 0.11: it answers a
    // start past the end with a 206 whose Content-Length wraps below zero,
    // gives multi-range parts a total of 0, and applies a Range to error
    // bodies. httplib's writer reads req.ranges after the handler returns, so
    // the handler leaves there exactly what may be applied (the only field
    // of the request it changes).
    auto& ranges = const_cast<httplib::Request&>(req).ranges;
    const httplib::Ranges asked = ranges;
    ranges.clear();
    const std::string id = req.matches.size() > 1 ? req.matches[1].str() : "";
    if (!fetch::IsValidChunkId(id)) {
      ++link_rejections;
      res.status = 400;
      res.set_content("not a chunk id\n", "text/plain");
      return;
    }
    const std::string e = req.has_param("e") ? req.get_param_value("e") : "";
    const std::string s = req.has_param("s") ? req.get_param_value("s") : "";
    const fetch::LinkCheck check = store->signer().Verify(id, e, s, fetch::NowEpochMs());
    if (check != fetch::LinkCheck::kOk) {
      ++link_rejections;
      res.status = 403;
      res.set_content("link refused: " + std::string(fetch::LinkCheckName(check)) + "\n", "text/plain");
      return;
    }
    auto bytes = store->Get(id);
    if (!bytes.ok()) {
      res.status = 404;
      res.set_content("chunk removed (its operation was closed or expired)\n", "text/plain");
      return;
    }
    std::shared_ptr<Buffer> buffer = std::move(bytes).value();
    const size_t size = static_cast<size_t>(buffer->size());
    if (asked.size() == 1) {
      const int64_t n = static_cast<int64_t>(size);
      int64_t first = asked[0].first;
      int64_t last = asked[0].second;
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
        res.status = 416;
        res.set_header("Content-Range", "bytes */" + std::to_string(n));
        res.set_content("range not satisfiable: the chunk has " + std::to_string(n) + " bytes\n", "text/plain");
        return;
      }
      ranges.emplace_back(first, last);
    }
    // Several ranges: the whole chunk with 200 (RFC 7233 lets a server
    // ignore Range; clients resume with one range).
    ++downloads;
    res.set_content_provider(
        size, "application/octet-stream", [this, buffer](size_t offset, size_t length, httplib::DataSink& sink) {
          const size_t end = std::min(offset + length, static_cast<size_t>(buffer->size()));
          if (offset >= end) return true;
          const bool ok = sink.write(reinterpret_cast<const char*>(buffer->data()) + offset, end - offset);
          if (ok) download_bytes += static_cast<int64_t>(end - offset);
          return ok;
        });
  }

  void SweepLoop() {
    std::unique_lock<std::mutex> lock(sweep_mu);
    while (!stopping) {
      sweep_cv.wait_for(lock, std::chrono::milliseconds(o.sweep_interval_ms));
      if (stopping) break;
      lock.unlock();
      const int64_t now = fetch::NowEpochMs();
      service->ExpireIdle(now);
      store->RemoveExpired(now);
      lock.lock();
    }
  }

  std::string Metrics() const {
    std::ostringstream out;
    PoolLines(o.service.pool, out);
    PoolLines(service->exec_pool(), out);
    PoolLines(service->chunk_pool(), out);
    PoolLines(service->thrift_pool(), out);
    const auto st = store->stats();
    out << "store chunks=" << st.chunks << " memory_bytes=" << st.memory_bytes
        << " peak_memory_bytes=" << st.peak_memory_bytes << " spilled_chunks=" << st.spilled_chunks
        << " spilled_bytes=" << st.spilled_bytes << " total_spilled_chunks=" << st.total_spilled_chunks << "\n";
    const auto sv = service->stats();
    out << "service sessions=" << sv.open_sessions << " operations=" << sv.open_operations
        << " running=" << sv.running_operations << " rpcs=" << sv.rpcs << " rpc_errors=" << sv.rpc_errors
        << " statements=" << sv.statements << " chunks_written=" << sv.chunks_written
        << " expired_sessions=" << sv.expired_sessions << " expired_operations=" << sv.expired_operations << "\n";
    out << "http downloads=" << downloads << " download_bytes=" << download_bytes << " auth_failures=" << auth_failures
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
    if (http) http->stop();
    if (listen_thread.joinable()) listen_thread.join();
    if (sweep_thread.joinable()) sweep_thread.join();
    service.reset();  // closes operations, removes their chunks
    store.reset();    // removes what is left and the private spill dir
    http.reset();
    if (generated) {
      unlink(cert_path.c_str());
      unlink(key_path.c_str());
      if (!generated_dir.empty()) rmdir(generated_dir.c_str());
    }
  }
};

Result<std::unique_ptr<ResultServer>> ResultServer::Start(ServerOptions options) {
  if (options.token.empty()) return Status::Invalid("serve: a bearer token is required (--token or QUIVER_TOKEN)");
  if (!ValidWarehouseId(options.warehouse_id)) {
    return Status::Invalid("serve: warehouse id '" + options.warehouse_id + "' is not 1..128 of [A-Za-z0-9_-]");
  }
  if (options.cert_path.empty() != options.key_path.empty()) {
    return Status::Invalid("serve: --cert and --key go together");
  }
  if (options.max_body_bytes < 1024) return Status::Invalid("serve: max_body_bytes must be >= 1024");
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
  impl->http = std::make_unique<httplib::SSLServer>(impl->cert_path.c_str(), impl->key_path.c_str());
  if (!impl->http->is_valid()) {
    impl->Stop();
    return Status::IOError("serve: cannot load the certificate " + impl->cert_path + " / key " + impl->key_path);
  }
  auto& http = *impl->http;
  const int threads = std::max(1, options.worker_threads);
  http.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  http.set_read_timeout(options.read_timeout_s, 0);
  http.set_write_timeout(options.write_timeout_s, 0);
  http.set_keep_alive_timeout(options.keep_alive_s);
  http.set_keep_alive_max_count(1000);
  http.set_payload_max_length(static_cast<size_t>(options.max_body_bytes));
  const int port = options.port == 0 ? http.bind_to_any_port(options.host)
                                     : (http.bind_to_port(options.host, options.port) ? options.port : -1);
  if (port <= 0) {
    impl->Stop();
    return Status::IOError("serve: cannot bind " + options.host + ":" + std::to_string(options.port));
  }
  impl->port = port;

  auto signer = fetch::LinkSigner::MakeRandom();
  if (!signer.ok()) {
    impl->Stop();
    return signer.status();
  }
  options.store.link_base_url = "https://" + options.host + ":" + std::to_string(port);
  auto store = fetch::LocalChunkStore::Make(options.store, *signer);
  if (!store.ok()) {
    impl->Stop();
    return store.status();
  }
  impl->store = std::move(store).value();
  options.service.store = impl->store.get();
  options.service.max_message_bytes = options.max_body_bytes;
  auto service = ResultService::Make(options.service);
  if (!service.ok()) {
    impl->Stop();
    return service.status();
  }
  impl->service = std::move(service).value();

  Impl* self = impl.get();
  http.Post(R"(/sql/1\.0/warehouses/([^/]+))",
            [self](const httplib::Request& req, httplib::Response& res) { self->HandleRpc(req, res); });
  http.Get(R"(/files/([^/]*))",
           [self](const httplib::Request& req, httplib::Response& res) { self->HandleFile(req, res); });
  http.Get("/metrics", [self](const httplib::Request& req, httplib::Response& res) {
    if (!self->Authorized(req)) {
      res.status = 401;
      res.set_content("missing or wrong bearer token\n", "text/plain");
      return;
    }
    res.set_content(self->Metrics(), "text/plain");
  });
  impl->listen_thread = std::thread([self] {
    self->http->listen_after_bind();
    self->listen_returned = true;
  });
  // cpp-httplib (0.11) ignores stop() until its accept loop has started, so
  // a server stopped before that would never stop: Start returns only once
  // the loop runs (or has already ended), at most 10 s.
  for (int waited_ms = 0; waited_ms < 10000 && !http.is_running() && !impl->listen_returned; ++waited_ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
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
std::string ResultServer::MetricsText() const { return impl_->Metrics(); }

std::string ResultServer::StatsLine() const {
  std::string text = impl_->Metrics();
  for (char& c : text) {
    if (c == '\n') c = ';';
  }
  return text;
}

}  // namespace quiver::server

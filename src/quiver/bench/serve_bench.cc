// quiver/bench/serve_bench.cc — see serve_bench.h.
#include "quiver/bench/serve_bench.h"

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <thread>
#include <vector>

#include "quiver/base/byte_size.h"
#include "quiver/bench/generated_stream.h"
#include "quiver/bench/measure.h"
#include "quiver/datagen/batch_generator.h"
#include "quiver/fetch/link_signer.h"
#include "quiver/server/http_server.h"
#include "quiver/server/statement_executor.h"
#include "quiver/tcli/TCLIService.h"

namespace quiver::bench {
namespace {

namespace t = ::quiver::tcli;
using apache::thrift::transport::TMemoryBuffer;

// One client: executes the statement and collects every link of the result.
Result<std::vector<t::TSparkArrowResultLink>> CollectLinks(server::ResultService* service, const std::string& sql) {
  auto out = std::make_shared<TMemoryBuffer>();
  auto in = std::make_shared<TMemoryBuffer>();
  t::TCLIServiceClient c(std::make_shared<apache::thrift::protocol::TBinaryProtocol>(in),
                         std::make_shared<apache::thrift::protocol::TBinaryProtocol>(out));
  std::string reply;
  auto round = [&]() -> Status {
    std::string req = out->getBufferAsString();
    out->resetBuffer();
    QUIVER_ASSIGN_OR_RETURN(
        reply, service->Dispatch(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(req.data()), req.size())));
    in->resetBuffer(reinterpret_cast<uint8_t*>(reply.data()), static_cast<uint32_t>(reply.size()), TMemoryBuffer::COPY);
    return Status::OK();
  };
  t::TOpenSessionReq open;
  c.send_OpenSession(open);
  QUIVER_RETURN_NOT_OK(round());
  t::TOpenSessionResp session;
  c.recv_OpenSession(session);
  t::TExecuteStatementReq ex;
  ex.sessionHandle = session.sessionHandle;
  ex.statement = sql;
  ex.__set_runAsync(true);
  ex.__set_canDownloadResult(true);
  c.send_ExecuteStatement(ex);
  QUIVER_RETURN_NOT_OK(round());
  t::TExecuteStatementResp exr;
  c.recv_ExecuteStatement(exr);
  if (exr.status.statusCode != t::TStatusCode::SUCCESS_STATUS) return Status::Invalid(exr.status.errorMessage);
  std::vector<t::TSparkArrowResultLink> links;
  t::TFetchResultsReq fr;
  fr.operationHandle = exr.operationHandle;
  fr.orientation = t::TFetchOrientation::FETCH_FIRST;
  fr.maxRows = 1 << 30;
  for (int pages = 0; pages < 100000; ++pages) {
    c.send_FetchResults(fr);
    QUIVER_RETURN_NOT_OK(round());
    t::TFetchResultsResp page;
    c.recv_FetchResults(page);
    if (page.status.statusCode != t::TStatusCode::SUCCESS_STATUS) return Status::Invalid(page.status.errorMessage);
    links.insert(links.end(), page.results.resultLinks.begin(), page.results.resultLinks.end());
    if (!page.hasMoreRows) break;
    fr.orientation = t::TFetchOrientation::FETCH_NEXT;
  }
  return links;
}

// The chunk store key of a link ("<...>/files/<32 characters>...").
std::string StoreKey(const t::TSparkArrowResultLink& link) {
  return link.fileLink.substr(link.fileLink.find("/files/") + 7, 32);
}

}  // namespace

Result<ServeBenchResult> RunServeBench(const ServeBenchOptions& options, const std::shared_ptr<MemoryPool>& root) {
  ServeBenchResult res;
  res.options = options;
  char dir_template[] = "/tmp/quiver-bench-serve-XXXXXX";
  if (!mkdtemp(dir_template)) return Status::IOError("bench serve: mkdtemp failed");
  const std::string dir = dir_template;
  struct RemoveDir {
    std::string dir;
    ~RemoveDir() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } remove_dir{dir};
  const std::string table = dir + "/lineitem.arrows";
  {
    auto gen_pool = root->MakeChild({.name = "gen"});
    datagen::GenOptions go;
    go.kind = datagen::GenKind::kLineitem;
    go.num_rows = options.rows;
    go.max_bytes_per_batch = 4 << 20;
    go.pool = gen_pool.get();
    QUIVER_RETURN_NOT_OK(WriteGeneratedStream(go, table, /*stop_at_bytes=*/0).status());
  }
  auto server_pool = root->MakeChild({.name = "serve"});
  server::TableExecutor executor;
  QUIVER_RETURN_NOT_OK(executor.AddTable("lineitem", table, server_pool.get()));
  server::ServerOptions so;
  so.token = "bench-" + std::to_string(fetch::NowEpochMs());
  so.cert_dir = dir;
  so.store.memory_budget_bytes = int64_t{8} << 30;
  so.service.pool = server_pool.get();
  so.service.executor = &executor;
  so.service.chunk_bytes = options.chunk_bytes;
  so.service.lz4 = options.lz4;
  so.service.max_links_per_fetch = 1000;
  QUIVER_ASSIGN_OR_RETURN(auto server, server::ResultServer::Start(so));

  // C clients execute at once; each collects the links of the whole result.
  const auto t_exec = Clock::now();
  std::vector<Result<std::vector<t::TSparkArrowResultLink>>> results(options.clients, Status::Invalid("not run"));
  {
    std::vector<std::thread> threads;
    for (int c = 0; c < options.clients; ++c) {
      threads.emplace_back([&, c] { results[c] = CollectLinks(server->service(), "SELECT * FROM lineitem"); });
    }
    for (auto& th : threads) th.join();
  }
  res.execute_seconds = Seconds(t_exec, Clock::now());
  const std::string cfg = dir + "/curl.cfg";
  {
    std::ofstream f(cfg);
    for (auto& r : results) {
      if (!r.ok()) return r.status().WithContext("bench serve: client");
      for (const auto& l : *r) {
        QUIVER_ASSIGN_OR_RETURN(auto bytes, server->store()->Get(StoreKey(l)));
        res.served_bytes += bytes->size();
        res.ipc_bytes += l.bytesNum;
        ++res.files;
        f << "url = \"" << l.fileLink << "\"\noutput = \"/dev/null\"\n";
      }
    }
  }
  // Memory copy of the same bytes (the floor a download cannot beat).
  {
    std::vector<uint8_t> dst;
    const auto t0 = Clock::now();
    for (auto& r : results) {
      for (const auto& l : *r) {
        QUIVER_ASSIGN_OR_RETURN(auto bytes, server->store()->Get(StoreKey(l)));
        dst.resize(static_cast<size_t>(bytes->size()));  // reused: page faults only on growth
        std::memcpy(dst.data(), bytes->data(), dst.size());
      }
    }
    res.copy_seconds = Seconds(t0, Clock::now());
  }
  const double cpu0 = ProcessCpuSeconds();
  const auto t0 = Clock::now();
  const std::string command = options.curl +
                              " --silent --no-progress-meter --show-error --fail --parallel --parallel-max " +
                              std::to_string(options.parallel) + " --cacert " + server->cert_path() + " -K " + cfg;
  const int rc = std::system(command.c_str());
  res.curl_seconds = Seconds(t0, Clock::now());
  res.server_cpu_seconds = ProcessCpuSeconds() - cpu0;
  if (rc != 0) return Status::IOError("bench serve: curl failed (" + std::to_string(rc) + "): " + command);
  res.metrics_text = server->MetricsText();
  server->Stop();
  return res;
}

std::string ServeBenchReport(const ServeBenchResult& r) {
  const ServeBenchOptions& o = r.options;
  const double served = static_cast<double>(r.served_bytes);
  const double gb = served / 1e9;
  std::string out;
  out += StringPrintf("bench serve: lineitem %lld rows, %d clients, %lld chunk files, lz4 %s\n",
                      static_cast<long long>(o.rows), o.clients, static_cast<long long>(r.files), o.lz4 ? "on" : "off");
  out += StringPrintf("  result IPC bytes (all clients): %s; served (files): %s; execute+chunk: %.2f s\n",
                      FormatBytes(r.ipc_bytes).c_str(), FormatBytes(r.served_bytes).c_str(), r.execute_seconds);
  out += StringPrintf("  curl --parallel %d over loopback TLS: %.3f s, %.1f MB/s\n", o.parallel, r.curl_seconds,
                      served / 1e6 / r.curl_seconds);
  out += StringPrintf("  memory copy of the same bytes:        %.3f s, %.1f MB/s (curl/copy time ratio %.1fx)\n",
                      r.copy_seconds, served / 1e6 / r.copy_seconds, r.curl_seconds / r.copy_seconds);
  out += StringPrintf("  server CPU while serving: %.2f s, %.2f CPU-s per GB served\n", r.server_cpu_seconds,
                      gb > 0 ? r.server_cpu_seconds / gb : 0.0);
  out += r.metrics_text;
  return out;
}

}  // namespace quiver::bench

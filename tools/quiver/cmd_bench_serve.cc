// quiver bench serve: loopback TLS download throughput of CloudFetch chunk
// files served by quiver's result server, fetched by the Debian curl
// (`curl --parallel`), side by side with a plain memory copy of the same
// bytes; server CPU per GB served; held/peak memory of the server's pools
// while C clients fetch the whole result at once.
//
// RPCs go through the service in process (Thrift binary messages, as over
// HTTPS); the downloads are real HTTPS GETs over loopback.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include "quiver/bench/generated_stream.h"
#include "quiver/cli.h"
#include "quiver/datagen/batch_generator.h"
#include "quiver/fetch/link_signer.h"
#include "quiver/ipc/io.h"
#include "quiver/ipc/writer.h"
#include "quiver/server/http_server.h"
#include "quiver/tcli/TCLIService.h"

namespace quiver::cli {
namespace {
namespace t = ::quiver::tcli;
using apache::thrift::transport::TMemoryBuffer;

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

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
    QUIVER_ASSIGN_OR_RETURN(reply, service->Dispatch(std::span<const uint8_t>(
                                       reinterpret_cast<const uint8_t*>(req.data()), req.size())));
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

}  // namespace

void AddBenchServe(CLI::App* bench, Context& ctx, Action* action) {
  auto* cmd = bench->add_subcommand("serve", "loopback TLS download throughput of quiver serve's CloudFetch chunks (curl --parallel)");
  struct Opts {
    int64_t rows = 1000000;
    int clients = 4;
    int64_t chunk_bytes = int64_t{20} << 20;
    int parallel = 10;
    bool no_lz4 = false;
    std::string curl = "curl";
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--rows", o->rows, "lineitem rows (default 1000000 ~ 170 MiB of IPC; 6500000 for > 1 GiB)");
  cmd->add_option("--clients", o->clients, "concurrent clients fetching the whole result (default 4)");
  cmd->add_option("--chunk-bytes", o->chunk_bytes, "target IPC bytes per chunk (default 20 MiB)");
  cmd->add_option("--parallel", o->parallel, "curl --parallel-max (default 10, like the Databricks drivers)");
  cmd->add_option("--curl", o->curl, "curl binary (default: curl from PATH)");
  cmd->add_flag("--no-lz4", o->no_lz4, "serve raw IPC chunks");
  cmd->callback([&ctx, o, action] {
    *action = [&ctx, o]() -> Status {
      char dir_template[] = "/tmp/quiver-bench-serve-XXXXXX";
      if (!mkdtemp(dir_template)) return Status::IOError("bench serve: mkdtemp failed");
      const std::string dir = dir_template;
      const std::string table = dir + "/lineitem.arrows";
      {
        auto gen_pool = ctx.Child("gen");
        datagen::GenOptions go;
        go.kind = datagen::GenKind::kLineitem;
        go.num_rows = o->rows;
        go.max_bytes_per_batch = 4 << 20;
        go.pool = gen_pool.get();
        QUIVER_RETURN_NOT_OK(bench::WriteGeneratedStream(go, table, /*stop_at_bytes=*/0).status());
      }
      auto server_pool = ctx.Child("serve");
      server::TableExecutor executor;
      QUIVER_RETURN_NOT_OK(executor.AddTable("lineitem", table, server_pool.get()));
      server::ServerOptions so;
      so.token = "bench-" + std::to_string(fetch::NowEpochMs());
      so.cert_dir = dir;
      so.store.memory_budget_bytes = int64_t{8} << 30;
      so.service.pool = server_pool.get();
      so.service.executor = &executor;
      so.service.chunk_bytes = o->chunk_bytes;
      so.service.lz4 = !o->no_lz4;
      so.service.max_links_per_fetch = 1000;
      QUIVER_ASSIGN_OR_RETURN(auto server, server::ResultServer::Start(so));

      // C clients execute at once; each collects the links of the whole result.
      const auto t_exec = std::chrono::steady_clock::now();
      std::vector<Result<std::vector<t::TSparkArrowResultLink>>> results(o->clients, Status::Invalid("not run"));
      {
        std::vector<std::thread> threads;
        for (int c = 0; c < o->clients; ++c) {
          threads.emplace_back([&, c] { results[c] = CollectLinks(server->service(), "SELECT * FROM lineitem"); });
        }
        for (auto& th : threads) th.join();
      }
      const double exec_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_exec).count();
      int64_t served = 0, ipc_bytes = 0, files = 0;
      const std::string cfg = dir + "/curl.cfg";
      {
        std::ofstream f(cfg);
        for (auto& r : results) {
          if (!r.ok()) return r.status().WithContext("bench serve: client");
          for (const auto& l : *r) {
            const std::string path = l.fileLink.substr(l.fileLink.find("/files/") + 7, 32);
            QUIVER_ASSIGN_OR_RETURN(auto bytes, server->store()->Get(path));
            served += bytes->size();
            ipc_bytes += l.bytesNum;
            ++files;
            f << "url = \"" << l.fileLink << "\"\noutput = \"/dev/null\"\n";
          }
        }
      }
      // Memory copy of the same bytes (the floor a download cannot beat).
      double copy_s = 0;
      {
        std::vector<uint8_t> dst;
        const auto t0 = std::chrono::steady_clock::now();
        for (auto& r : results) {
          for (const auto& l : *r) {
            QUIVER_ASSIGN_OR_RETURN(auto bytes, server->store()->Get(l.fileLink.substr(l.fileLink.find("/files/") + 7, 32)));
            dst.resize(static_cast<size_t>(bytes->size()));  // reused: page faults only on growth
            std::memcpy(dst.data(), bytes->data(), dst.size());
          }
        }
        copy_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      const double cpu0 = CpuSeconds();
      const auto t0 = std::chrono::steady_clock::now();
      const std::string command = o->curl + " --silent --no-progress-meter --show-error --fail --parallel --parallel-max " +
                                  std::to_string(o->parallel) + " --cacert " + server->cert_path() + " -K " + cfg;
      const int rc = std::system(command.c_str());
      const double curl_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double server_cpu_s = CpuSeconds() - cpu0;
      if (rc != 0) return Status::IOError("bench serve: curl failed (" + std::to_string(rc) + "): " + command);
      const double gb = static_cast<double>(served) / 1e9;
      std::printf("bench serve: lineitem %lld rows, %d clients, %lld chunk files, lz4 %s\n",
                  static_cast<long long>(o->rows), o->clients, static_cast<long long>(files), o->no_lz4 ? "off" : "on");
      std::printf("  result IPC bytes (all clients): %s; served (files): %s; execute+chunk: %.2f s\n",
                  FormatBytes(ipc_bytes).c_str(), FormatBytes(served).c_str(), exec_s);
      std::printf("  curl --parallel %d over loopback TLS: %.3f s, %.1f MB/s\n", o->parallel, curl_s,
                  static_cast<double>(served) / 1e6 / curl_s);
      std::printf("  memory copy of the same bytes:        %.3f s, %.1f MB/s (curl/copy time ratio %.1fx)\n", copy_s,
                  static_cast<double>(served) / 1e6 / copy_s, curl_s / copy_s);
      std::printf("  server CPU while serving: %.2f s, %.2f CPU-s per GB served\n", server_cpu_s,
                  gb > 0 ? server_cpu_s / gb : 0.0);
      std::printf("%s", server->MetricsText().c_str());
      server->Stop();
      server.reset();
      std::remove(cfg.c_str());
      std::remove(table.c_str());
      rmdir(dir.c_str());
      return Status::OK();
    };
  });
}

}  // namespace quiver::cli

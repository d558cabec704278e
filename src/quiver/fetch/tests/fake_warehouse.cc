// quiver/fetch/tests/fake_warehouse.cc — see fake_warehouse.h.
#include "quiver/fetch/tests/fake_warehouse.h"

#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TBufferTransports.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "quiver/tcli/TCLIService.h"

namespace quiver::fetch::testing {

namespace tcli = ::quiver::tcli;
using apache::thrift::protocol::TBinaryProtocol;
using apache::thrift::transport::TMemoryBuffer;

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A self-signed P-256 certificate for 127.0.0.1 (SAN IP), valid one day.
struct Cert {
  EVP_PKEY* key = nullptr;
  X509* x509 = nullptr;
  ~Cert() {
    X509_free(x509);
    EVP_PKEY_free(key);
  }
};

void MakeCert(Cert* c) {
  c->key = EVP_EC_gen("P-256");
  if (c->key == nullptr) throw std::runtime_error("EVP_EC_gen failed");
  c->x509 = X509_new();
  X509_set_version(c->x509, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(c->x509), static_cast<long>(NowMs() & 0x7fffffff));
  X509_gmtime_adj(X509_getm_notBefore(c->x509), -3600);
  X509_gmtime_adj(X509_getm_notAfter(c->x509), 86400);
  X509_set_pubkey(c->x509, c->key);
  X509_NAME* name = X509_get_subject_name(c->x509);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
  X509_set_issuer_name(c->x509, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, c->x509, c->x509, nullptr, nullptr, 0);
  for (auto [nid, value] : {std::pair<int, const char*>{NID_subject_alt_name, "IP:127.0.0.1"},
                            {NID_basic_constraints, "critical,CA:TRUE"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    if (ext == nullptr) throw std::runtime_error("X509V3_EXT_conf_nid failed");
    X509_add_ext(c->x509, ext, -1);
    X509_EXTENSION_free(ext);
  }
  if (X509_sign(c->x509, c->key, EVP_sha256()) == 0) throw std::runtime_error("X509_sign failed");
}

std::string Guid(uint8_t tag) {
  std::string g(16, '\0');
  for (int i = 0; i < 16; ++i) g[i] = static_cast<char>(tag * 17 + i);
  g[6] = static_cast<char>((g[6] & 0x0f) | 0x40);  // version 4
  g[8] = static_cast<char>((g[8] & 0x3f) | 0x80);  // RFC 4122 variant
  return g;
}

}  // namespace

class FakeWarehouse::Impl : public tcli::TCLIServiceIf {
 public:
  FakeConfig cfg;
  FakeCounters counters;
  Cert cert;
  std::string ca_path;
  std::unique_ptr<httplib::SSLServer> server;
  std::thread thread;
  int port = 0;
  std::atomic<bool> stopping{false};
  mutable std::mutex mu;
  std::map<int, int> attempts;  // file -> GETs so far
  int empty_pages_left = 0;
  int polls_left = 0;
  int still_executing_metadata_left = 0;
  int cursor = 0;            // next file index for FETCH_NEXT without offset
  std::vector<bool> served;  // file links handed out at least once
  std::atomic<int64_t> sig_counter{1};

  static void Ok(tcli::TStatus* s) { s->statusCode = tcli::TStatusCode::SUCCESS_STATUS; }

  tcli::TOperationHandle Op() const {
    tcli::TOperationHandle h;
    h.operationId.guid = Guid(2);
    h.operationId.secret = Guid(3);
    h.operationType = tcli::TOperationType::EXECUTE_STATEMENT;
    h.hasResultSet = true;
    return h;
  }

  std::string LinkFor(int i) {
    const int64_t exp = NowMs() + cfg.link_ttl_ms;
    return "https://127.0.0.1:" + std::to_string(port) + "/files/" + std::to_string(i) +
           "?sig=" + std::to_string(sig_counter++) + "&exp=" + std::to_string(exp);
  }

  // TCLIServiceIf ------------------------------------------------------
  void OpenSession(tcli::TOpenSessionResp& r, const tcli::TOpenSessionReq&) override {
    Ok(&r.status);
    r.serverProtocolVersion = tcli::TProtocolVersion::SPARK_CLI_SERVICE_PROTOCOL_V8;
    tcli::TSessionHandle h;
    h.sessionId.guid = Guid(1);
    h.sessionId.secret = Guid(4);
    r.__set_sessionHandle(h);
  }
  void CloseSession(tcli::TCloseSessionResp& r, const tcli::TCloseSessionReq&) override {
    counters.close_sessions++;
    Ok(&r.status);
  }
  void GetInfo(tcli::TGetInfoResp& r, const tcli::TGetInfoReq&) override { Ok(&r.status); }
  void ExecuteStatement(tcli::TExecuteStatementResp& r, const tcli::TExecuteStatementReq& req) override {
    Ok(&r.status);
    r.__set_operationHandle(Op());
    {
      std::lock_guard<std::mutex> lock(mu);
      polls_left = cfg.running_polls;
      still_executing_metadata_left = cfg.still_executing_metadata;
    }
    if (cfg.direct_results && req.__isset.getDirectResults) {
      tcli::TSparkDirectResults d;
      tcli::TGetOperationStatusResp st;
      Ok(&st.status);
      st.__set_operationState(tcli::TOperationState::FINISHED_STATE);
      d.__set_operationStatus(st);
      tcli::TGetResultSetMetadataResp meta;
      GetResultSetMetadata(meta, tcli::TGetResultSetMetadataReq());
      d.__set_resultSetMetadata(meta);
      tcli::TFetchResultsResp page;
      tcli::TFetchResultsReq fr;
      fr.orientation = tcli::TFetchOrientation::FETCH_FIRST;
      FetchResults(page, fr);
      d.__set_resultSet(page);
      r.__set_directResults(d);
    }
  }
  void GetTypeInfo(tcli::TGetTypeInfoResp& r, const tcli::TGetTypeInfoReq&) override { Ok(&r.status); }
  void GetCatalogs(tcli::TGetCatalogsResp& r, const tcli::TGetCatalogsReq&) override { Ok(&r.status); }
  void GetSchemas(tcli::TGetSchemasResp& r, const tcli::TGetSchemasReq&) override { Ok(&r.status); }
  void GetTables(tcli::TGetTablesResp& r, const tcli::TGetTablesReq&) override { Ok(&r.status); }
  void GetColumns(tcli::TGetColumnsResp& r, const tcli::TGetColumnsReq&) override { Ok(&r.status); }
  void GetFunctions(tcli::TGetFunctionsResp& r, const tcli::TGetFunctionsReq&) override { Ok(&r.status); }
  void GetOperationStatus(tcli::TGetOperationStatusResp& r, const tcli::TGetOperationStatusReq&) override {
    Ok(&r.status);
    std::lock_guard<std::mutex> lock(mu);
    if (polls_left > 0) {
      --polls_left;
      r.__set_operationState(tcli::TOperationState::RUNNING_STATE);
      return;
    }
    if (!cfg.fail_statement_message.empty()) {
      r.__set_operationState(tcli::TOperationState::ERROR_STATE);
      r.__set_displayMessage(cfg.fail_statement_message);
      r.__set_sqlState("42P01");
      return;
    }
    r.__set_operationState(tcli::TOperationState::FINISHED_STATE);
    r.__set_hasResultSet(true);
  }
  void CancelOperation(tcli::TCancelOperationResp& r, const tcli::TCancelOperationReq&) override {
    counters.cancels++;
    Ok(&r.status);
  }
  void CloseOperation(tcli::TCloseOperationResp& r, const tcli::TCloseOperationReq&) override {
    counters.close_operations++;
    Ok(&r.status);
  }
  void GetResultSetMetadata(tcli::TGetResultSetMetadataResp& r, const tcli::TGetResultSetMetadataReq&) override {
    counters.metadata_calls++;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (still_executing_metadata_left > 0) {
        // As a server behind a balancer that has not yet seen the end.
        --still_executing_metadata_left;
        r.status.statusCode = tcli::TStatusCode::STILL_EXECUTING_STATUS;
        return;
      }
    }
    Ok(&r.status);
    tcli::TTableSchema schema;
    tcli::TColumnDesc col;
    col.columnName = "id";
    tcli::TTypeEntry te;
    te.primitiveEntry.type = tcli::TTypeId::BIGINT_TYPE;
    te.__isset.primitiveEntry = true;
    col.typeDesc.types.push_back(te);
    col.position = 1;
    schema.columns.push_back(col);
    r.__set_schema(schema);
    r.__set_resultFormat(cfg.inline_batches.empty() ? tcli::TSparkRowSetType::URL_BASED_SET
                                                    : tcli::TSparkRowSetType::ARROW_BASED_SET);
    r.__set_lz4Compressed(cfg.lz4);
    if (!cfg.arrow_schema.empty()) r.__set_arrowSchema(cfg.arrow_schema);
    if (cfg.uncompressed_bytes >= 0) r.__set_uncompressedBytes(cfg.uncompressed_bytes);
  }
  void FetchResults(tcli::TFetchResultsResp& r, const tcli::TFetchResultsReq& req) override {
    counters.fetch_results++;
    Ok(&r.status);
    tcli::TRowSet rs;
    std::lock_guard<std::mutex> lock(mu);
    if (!cfg.inline_batches.empty()) {
      // Two inline batches per page, paged by row offset.
      int64_t row = 0;
      size_t i = 0;
      const int64_t want = req.__isset.startRowOffset ? req.startRowOffset : 0;
      while (i < cfg.inline_batches.size() && row < want) row += cfg.inline_batches[i++].second;
      rs.startRowOffset = row;
      std::vector<tcli::TSparkArrowBatch> batches;
      for (size_t k = i; k < std::min(cfg.inline_batches.size(), i + 2); ++k) {
        tcli::TSparkArrowBatch b;
        b.batch = cfg.inline_batches[k].first;
        b.rowCount = cfg.inline_batches[k].second;
        batches.push_back(b);
      }
      rs.__set_arrowBatches(batches);
      r.__set_results(rs);
      r.__set_hasMoreRows(i + 2 < cfg.inline_batches.size());
      return;
    }
    if (empty_pages_left > 0) {
      --empty_pages_left;
      rs.startRowOffset = req.__isset.startRowOffset ? req.startRowOffset : 0;
      rs.__set_resultLinks({});
      r.__set_results(rs);
      r.__set_hasMoreRows(true);
      return;
    }
    int first = cursor;
    if (req.orientation == tcli::TFetchOrientation::FETCH_FIRST) first = 0;
    if (req.__isset.startRowOffset) {
      for (size_t i = 0; i < cfg.files.size(); ++i) {
        if (cfg.files[i].start_row == req.startRowOffset) {
          first = static_cast<int>(i);
          break;
        }
      }
    }
    const int n = static_cast<int>(cfg.files.size());
    const int last = std::min(n, first + cfg.links_per_page);
    std::vector<tcli::TSparkArrowResultLink> links;
    bool refresh = false;
    for (int i = first; i < last; ++i) {
      const FakeFile& f = cfg.files[static_cast<size_t>(i)];
      if (served[static_cast<size_t>(i)]) refresh = true;
      served[static_cast<size_t>(i)] = true;
      tcli::TSparkArrowResultLink l;
      l.fileLink = LinkFor(i);
      l.expiryTime = NowMs() + cfg.link_ttl_ms;
      l.startRowOffset = f.start_row;
      l.rowCount = f.row_count;
      l.bytesNum = f.bytes_num;
      l.__set_httpHeaders({{"X-Quiver-Test", "chunk-" + std::to_string(i)}});
      links.push_back(l);
    }
    if (refresh) counters.refresh_fetches++;
    cursor = std::max(cursor, last);
    rs.startRowOffset = first < n ? cfg.files[static_cast<size_t>(first)].start_row : 0;
    rs.__set_resultLinks(links);
    r.__set_results(rs);
    r.__set_hasMoreRows(last < n);
  }

  // Serving ------------------------------------------------------------
  std::string Hostile() const {
    auto out = std::make_shared<TMemoryBuffer>();
    TBinaryProtocol p(out);
    using apache::thrift::protocol::T_I32;
    using apache::thrift::protocol::T_I64;
    using apache::thrift::protocol::T_LIST;
    using apache::thrift::protocol::T_STRING;
    using apache::thrift::protocol::T_STRUCT;
    p.writeMessageBegin("FetchResults", apache::thrift::protocol::T_REPLY, 0);
    p.writeStructBegin("r");
    p.writeFieldBegin("success", T_STRUCT, 0);
    p.writeStructBegin("TFetchResultsResp");
    p.writeFieldBegin("status", T_STRUCT, 1);
    p.writeStructBegin("TStatus");
    p.writeFieldBegin("statusCode", T_I32, 1);
    p.writeI32(0);
    p.writeFieldEnd();
    p.writeFieldStop();
    p.writeStructEnd();
    p.writeFieldEnd();
    p.writeFieldBegin("results", T_STRUCT, 3);
    p.writeStructBegin("TRowSet");
    p.writeFieldBegin("startRowOffset", T_I64, 1);
    p.writeI64(0);
    p.writeFieldEnd();
    if (cfg.hostile_fetch == HostileReply::kHugeList) {
      p.writeFieldBegin("resultLinks", T_LIST, 1282);
      p.writeListBegin(T_STRUCT, 0x7fffffff);  // 2^31 - 1 elements claimed, none sent
    } else {
      p.writeFieldBegin("resultLinks", T_LIST, 1282);
      p.writeListBegin(T_STRUCT, 1);
      p.writeStructBegin("TSparkArrowResultLink");
      p.writeFieldBegin("fileLink", T_STRING, 1);
      p.writeI32(0x7fffffff);  // a string of 2^31 - 1 bytes claimed
      p.writeByte(65);
    }
    std::string s = out->getBufferAsString();
    if (cfg.hostile_fetch == HostileReply::kGarbage) s = s.substr(0, 20) + std::string(40, '\xee');
    return s;
  }

  void HandleRpc(const httplib::Request& req, httplib::Response& res) {
    counters.rpcs++;
    if (req.get_header_value("Authorization") != "Bearer " + cfg.token) {
      counters.bad_auth++;
      res.status = 401;
      res.set_content("bad token", "text/plain");
      return;
    }
    const bool is_fetch = req.body.find("FetchResults") != std::string::npos && req.body.size() > 12 &&
                          req.body.compare(8, 12, "FetchResults") == 0;
    if (is_fetch && cfg.hostile_fetch != HostileReply::kNone) {
      res.set_content(Hostile(), "application/x-thrift");
      return;
    }
    auto in = std::make_shared<TMemoryBuffer>(reinterpret_cast<uint8_t*>(const_cast<char*>(req.body.data())),
                                              static_cast<uint32_t>(req.body.size()));
    auto out = std::make_shared<TMemoryBuffer>();
    auto pin = std::make_shared<TBinaryProtocol>(in);
    auto pout = std::make_shared<TBinaryProtocol>(out);
    tcli::TCLIServiceProcessor processor(std::shared_ptr<tcli::TCLIServiceIf>(this, [](tcli::TCLIServiceIf*) {}));
    try {
      processor.process(pin, pout, nullptr);
    } catch (const std::exception& e) {
      res.status = 500;
      res.set_content(e.what(), "text/plain");
      return;
    }
    res.set_content(out->getBufferAsString(), "application/x-thrift");
  }

  void HandleFile(const httplib::Request& req, httplib::Response& res) {
    counters.gets++;
    const int i = std::stoi(req.matches[1]);
    if (i < 0 || i >= static_cast<int>(cfg.files.size())) {
      res.status = 404;
      return;
    }
    int attempt;
    {
      std::lock_guard<std::mutex> lock(mu);
      attempt = attempts[i]++;
    }
    if (req.has_header("Authorization")) {
      res.status = 400;
      res.set_content("links carry their own authority", "text/plain");
      return;
    }
    if (req.get_header_value("X-Quiver-Test") != "chunk-" + std::to_string(i)) {
      res.status = 400;
      res.set_content("missing link header", "text/plain");
      return;
    }
    const int64_t exp = std::stoll(req.get_param_value("exp"));
    GetFault fault = GetFault::kNone;
    if (auto it = cfg.faults.find({i, attempt}); it != cfg.faults.end()) fault = it->second;
    if (exp < NowMs() || fault == GetFault::kHttp403) {
      counters.forbidden++;
      res.status = 403;
      res.set_content("link expired", "text/plain");
      return;
    }
    if (fault == GetFault::kHttp500) {
      res.status = 500;
      res.set_content("internal error (injected)", "text/plain");
      return;
    }
    if (cfg.file_delay_ms > 0) Sleep(cfg.file_delay_ms);
    const std::string& body = cfg.files[static_cast<size_t>(i)].wire;
    res.set_header("Accept-Ranges", cfg.range_support ? "bytes" : "none");
    if (fault == GetFault::kEndless) {
      const std::string* b = &body;
      auto self = this;
      res.set_chunked_content_provider("application/octet-stream", [b, self](size_t offset, httplib::DataSink& sink) {
        if (self->stopping) return false;
        const size_t at = offset % b->size();
        return sink.write(b->data() + at, std::min<size_t>(b->size() - at, 64 << 10));
      });
      return;
    }
    if (!req.ranges.empty()) counters.range_gets++;
    // cpp-httplib answers a Range itself (206, Content-Range) by asking the
    // provider for that slice of the whole body.
    const size_t total = body.size();
    const std::string* b = &body;
    auto self = this;
    res.set_content_provider(total, "application/octet-stream",
                             [b, fault, total, self](size_t offset, size_t length, httplib::DataSink& sink) {
                               const size_t half = total / 2;
                               if (fault == GetFault::kResetAfterHeaders) return false;
                               if (fault == GetFault::kCutShort || fault == GetFault::kStall) {
                                 if (offset >= half) {
                                   if (fault == GetFault::kStall) self->Sleep(self->cfg.stall_ms);
                                   return false;
                                 }
                                 length = std::min(length, half - offset);
                               }
                               length = std::min<size_t>(length, 64 << 10);
                               sink.write(b->data() + offset, length);
                               return true;
                             });
  }

  void Sleep(int64_t ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (!stopping && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
};

std::unique_ptr<FakeWarehouse> FakeWarehouse::Start(FakeConfig config) {
  std::unique_ptr<FakeWarehouse> w(new FakeWarehouse());
  w->impl_ = std::make_unique<Impl>();
  Impl& im = *w->impl_;
  im.cfg = std::move(config);
  im.empty_pages_left = im.cfg.empty_pages_first;
  im.served.assign(im.cfg.files.size(), false);
  MakeCert(&im.cert);
  char path[] = "/tmp/quiver-fake-ca-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  FILE* f = fdopen(fd, "w");
  PEM_write_X509(f, im.cert.x509);
  fclose(f);
  im.ca_path = path;
  im.server = std::make_unique<httplib::SSLServer>(im.cert.x509, im.cert.key);
  if (!im.server->is_valid()) throw std::runtime_error("SSLServer is not valid");
  im.server->set_keep_alive_max_count(1000);
  im.server->Post("/sql/1.0/warehouses/fake",
                  [&im](const httplib::Request& req, httplib::Response& res) { im.HandleRpc(req, res); });
  im.server->Get(R"(/files/(\d+))",
                 [&im](const httplib::Request& req, httplib::Response& res) { im.HandleFile(req, res); });
  im.port = im.server->bind_to_any_port("127.0.0.1");
  if (im.port <= 0) throw std::runtime_error("bind failed");
  im.thread = std::thread([&im] { im.server->listen_after_bind(); });
  while (!im.server->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return w;
}

FakeWarehouse::~FakeWarehouse() {
  if (!impl_) return;
  impl_->stopping = true;
  impl_->server->stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  unlink(impl_->ca_path.c_str());
}

std::string FakeWarehouse::url() const {
  return "https://127.0.0.1:" + std::to_string(impl_->port) + "/sql/1.0/warehouses/fake";
}
const std::string& FakeWarehouse::ca_cert_path() const { return impl_->ca_path; }
FakeCounters& FakeWarehouse::counters() { return impl_->counters; }
int FakeWarehouse::attempts(int file) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->attempts.find(file);
  return it == impl_->attempts.end() ? 0 : it->second;
}

}  // namespace quiver::fetch::testing

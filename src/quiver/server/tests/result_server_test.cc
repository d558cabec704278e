// End-to-end tests of the result server: results through the generated
// Thrift client over HTTPS (cpp-httplib client trusting the generated
// certificate): cloud-fetch chunks and links, inline results, statement
// errors, metadata and bad input.
#include "quiver/server/tests/result_server_test_util.h"

namespace quiver::server {
namespace {
using namespace rs_test;  // NOLINT: the shared helpers

TEST(ResultServer, CloudFetchLz4SeveralChunksPagesAndSpill) {
  auto table = MakeLineitem(60000, "cf");
  Fixture f;
  ASSERT_OK(f.executor.AddTable("lineitem", table->path, f.pool.get()));
  ServerOptions so;
  so.service.chunk_bytes = 512 << 10;
  so.service.inline_threshold_bytes = 64 << 10;
  so.service.max_links_per_fetch = 3;
  so.store.memory_budget_bytes = 1 << 20;  // smaller than the result: spills
  f.Start(so);
  Rpc rpc(*f.server);
  auto s = Open(rpc);
  auto ex = Execute(rpc, s, "select * from lineitem", true);
  ASSERT_EQ(ex.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << ex.status.errorMessage;
  ASSERT_EQ(WaitFinished(rpc, ex.operationHandle), t::TOperationState::FINISHED_STATE);
  auto md = Metadata(rpc, ex.operationHandle);
  ASSERT_EQ(md.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
  EXPECT_EQ(md.resultFormat, t::TSparkRowSetType::URL_BASED_SET);
  EXPECT_TRUE(md.lz4Compressed);
  ASSERT_EQ(md.schema.columns.size(), 16u);
  EXPECT_EQ(md.schema.columns[0].columnName, "l_orderkey");
  EXPECT_EQ(md.schema.columns[0].typeDesc.types[0].primitiveEntry.type, t::TTypeId::BIGINT_TYPE);
  EXPECT_EQ(md.schema.columns[0].position, 1);
  EXPECT_FALSE(md.arrowSchema.empty());

  std::vector<int64_t> keys;
  int64_t next_row = 0;
  int pages = 0;
  bool first = true;
  std::vector<t::TSparkArrowResultLink> all_links;
  while (true) {
    auto page = Fetch(rpc, ex.operationHandle, first);
    first = false;
    ASSERT_EQ(page.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << page.status.errorMessage;
    ++pages;
    EXPECT_LE(page.results.resultLinks.size(), 3u);
    auto k = DownloadAll(rpc, page.results.resultLinks, true, f.pool.get(), &next_row);
    keys.insert(keys.end(), k.begin(), k.end());
    all_links.insert(all_links.end(), page.results.resultLinks.begin(), page.results.resultLinks.end());
    if (!page.hasMoreRows) break;
    ASSERT_LT(pages, 1000);
  }
  EXPECT_GE(pages, 2);
  EXPECT_GE(all_links.size(), 4u);
  EXPECT_EQ(keys, table->orderkeys);
  // Once the statement has finished, the metadata carries the whole sizes.
  auto md_done = Metadata(rpc, ex.operationHandle);
  int64_t ipc_total = 0;
  for (const auto& l : all_links) ipc_total += l.bytesNum;
  EXPECT_EQ(md_done.uncompressedBytes, ipc_total);
  EXPECT_GT(md_done.compressedBytes, 0);
  EXPECT_LT(md_done.compressedBytes, md_done.uncompressedBytes) << "LZ4 frames are smaller than the IPC streams";
  EXPECT_GT(f.server->store()->stats().total_spilled_chunks, 0) << "budget below the result spills";

  // startRowOffset: links again from the chunk that holds a given row.
  const auto& third = all_links[2];
  auto again = Fetch(rpc, ex.operationHandle, false, 100000, third.startRowOffset + 1);
  ASSERT_FALSE(again.results.resultLinks.empty());
  EXPECT_EQ(again.results.resultLinks[0].startRowOffset, third.startRowOffset);
  // FETCH_FIRST restarts.
  auto restart = Fetch(rpc, ex.operationHandle, true);
  ASSERT_FALSE(restart.results.resultLinks.empty());
  EXPECT_EQ(restart.results.resultLinks[0].startRowOffset, 0);

  // Links: Range -> 206 with the right bytes; forged and expired -> 403.
  const std::string path = PathOf(all_links[0].fileLink);
  auto full = rpc.http().Get(path.c_str());
  ASSERT_TRUE(full);
  ASSERT_EQ(full->status, 200);
  auto part = rpc.http().Get(path.c_str(), httplib::Headers{{"Range", "bytes=100-1099"}});
  ASSERT_TRUE(part);
  EXPECT_EQ(part->status, 206);
  EXPECT_EQ(part->body, full->body.substr(100, 1000));
  auto tail = rpc.http().Get(path.c_str(), httplib::Headers{{"Range", "bytes=-10"}});
  ASSERT_TRUE(tail);
  EXPECT_EQ(tail->status, 206);
  EXPECT_EQ(tail->body, full->body.substr(full->body.size() - 10));
  // A start at or past the end is 416 with "bytes */size" (cpp-httplib alone
  // answered 206 with a Content-Length near 2^64 and hung the connection);
  // an open end past the size is cut at the size; several ranges get the
  // whole chunk (200); an error body ignores Range.
  const std::string size_text = std::to_string(full->body.size());
  for (const std::string& r : std::vector<std::string>{"bytes=" + size_text + "-", "bytes=999999999999-", "bytes=-0"}) {
    auto bad = rpc.http().Get(path.c_str(), httplib::Headers{{"Range", r}});
    ASSERT_TRUE(bad) << r;
    EXPECT_EQ(bad->status, 416) << r;
    EXPECT_EQ(bad->get_header_value("Content-Range"), "bytes */" + size_text) << r;
  }
  auto open_end = rpc.http().Get(path.c_str(), httplib::Headers{{"Range", "bytes=5-99999999999"}});
  ASSERT_TRUE(open_end);
  EXPECT_EQ(open_end->status, 206);
  EXPECT_EQ(open_end->body, full->body.substr(5));
  auto multi = rpc.http().Get(path.c_str(), httplib::Headers{{"Range", "bytes=0-1,5-6,10-"}});
  ASSERT_TRUE(multi);
  EXPECT_EQ(multi->status, 200);
  EXPECT_EQ(multi->body, full->body);
  auto bad_id = rpc.http().Get("/files/abc", httplib::Headers{{"Range", "bytes=-5"}});
  ASSERT_TRUE(bad_id);
  EXPECT_EQ(bad_id->status, 400);
  EXPECT_EQ(bad_id->body, "not a chunk id\n");
  std::string forged = path;
  char& last = forged.back();
  last = last == '0' ? '1' : '0';
  EXPECT_EQ(rpc.http().Get(forged.c_str())->status, 403);
  const std::string id = path.substr(7, 32);
  const int64_t past = fetch::NowEpochMs() - 1000;
  const std::string expired = "/files/" + id + "?" + f.server->store()->signer().Query(id, past);
  EXPECT_EQ(rpc.http().Get(expired.c_str())->status, 403);
  EXPECT_EQ(rpc.http().Get(("/files/" + id).c_str())->status, 403) << "no signature";
  EXPECT_EQ(rpc.http().Get(("/files/" + id + "?e=1&s=").c_str())->status, 403) << "truncated";
  EXPECT_EQ(rpc.http().Get("/files/..%2F..%2Fetc%2Fpasswd")->status, 404) << "decoded to a path outside /files/<id>";
  EXPECT_EQ(rpc.http().Get("/files/..")->status, 400);
  EXPECT_EQ(rpc.http().Get(("/files/" + id.substr(0, 31) + "G?" + path.substr(path.find('?') + 1)).c_str())->status,
            400);
  EXPECT_EQ(rpc.http().Get("/files/../../etc/passwd")->status / 100, 4);

  // Removed: after CloseOperation the same signed link answers 404.
  EXPECT_EQ(CloseOp(rpc, ex.operationHandle).statusCode, t::TStatusCode::SUCCESS_STATUS);
  EXPECT_EQ(rpc.http().Get(path.c_str())->status, 404);
  EXPECT_EQ(CloseOp(rpc, ex.operationHandle).statusCode, t::TStatusCode::INVALID_HANDLE_STATUS);
  CloseSession(rpc, s);
  EXPECT_EQ(f.server->store()->stats().chunks, 0);
  EXPECT_EQ(f.server->store()->CountSpillFiles(), 0);
  EXPECT_EQ(f.server->service()->chunk_pool()->held_bytes(), 0);
  EXPECT_EQ(f.server->service()->exec_pool()->held_bytes(), 0);
}

TEST(ResultServer, InlineResultsPagesLz4AndDirectResults) {
  auto table = MakeLineitem(5000, "inline");
  Fixture f;
  ASSERT_OK(f.executor.AddTable("lineitem", table->path, f.pool.get()));
  ServerOptions so;
  so.service.chunk_bytes = 128 << 10;
  f.Start(so);
  Rpc rpc(*f.server);
  auto s = Open(rpc);
  for (bool lz4 : {false, true}) {
    auto ex = Execute(rpc, s, "SELECT * FROM lineitem", false, lz4);
    ASSERT_EQ(ex.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
    ASSERT_EQ(WaitFinished(rpc, ex.operationHandle), t::TOperationState::FINISHED_STATE);
    auto md = Metadata(rpc, ex.operationHandle);
    EXPECT_EQ(md.resultFormat, t::TSparkRowSetType::ARROW_BASED_SET);
    EXPECT_EQ(md.lz4Compressed, lz4);
    std::vector<int64_t> keys;
    int64_t rows = 0;
    int pages = 0;
    for (bool first = true;; first = false) {
      auto page = Fetch(rpc, ex.operationHandle, first, 2000);
      ASSERT_EQ(page.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
      EXPECT_TRUE(page.results.resultLinks.empty());
      EXPECT_EQ(page.results.startRowOffset, rows);
      auto k = InlineKeys(md, page.results.arrowBatches, lz4, f.pool.get(), &rows);
      keys.insert(keys.end(), k.begin(), k.end());
      ++pages;
      if (!page.hasMoreRows) break;
      ASSERT_LT(pages, 100);
    }
    EXPECT_GE(pages, 2);
    EXPECT_EQ(keys, table->orderkeys);
    EXPECT_EQ(CloseOp(rpc, ex.operationHandle).statusCode, t::TStatusCode::SUCCESS_STATUS);
  }
  // Direct results with the whole (small) result: closeOperation is set and
  // the operation is gone.
  auto ex = Execute(rpc, s, "SELECT * FROM lineitem LIMIT 7", true, false, 100000);
  ASSERT_TRUE(ex.__isset.directResults);
  ASSERT_TRUE(ex.directResults.__isset.resultSet);
  EXPECT_EQ(ex.directResults.operationStatus.operationState, t::TOperationState::FINISHED_STATE);
  EXPECT_TRUE(ex.directResults.__isset.closeOperation);
  EXPECT_FALSE(ex.directResults.resultSet.hasMoreRows);
  int64_t rows = 0;
  auto keys = InlineKeys(ex.directResults.resultSetMetadata, ex.directResults.resultSet.results.arrowBatches, false,
                         f.pool.get(), &rows);
  EXPECT_EQ(rows, 7);
  EXPECT_EQ(keys, std::vector<int64_t>(table->orderkeys.begin(), table->orderkeys.begin() + 7));
  EXPECT_EQ(CloseOp(rpc, ex.operationHandle).statusCode, t::TStatusCode::INVALID_HANDLE_STATUS);
  // Empty result.
  auto empty = Execute(rpc, s, "SELECT * FROM lineitem LIMIT 0", true, false, 100000);
  ASSERT_TRUE(empty.__isset.directResults);
  EXPECT_FALSE(empty.directResults.resultSet.hasMoreRows);
  EXPECT_TRUE(empty.directResults.resultSet.results.arrowBatches.empty());
  CloseSession(rpc, s);
  EXPECT_EQ(f.server->service()->stats().open_operations, 0);
  EXPECT_EQ(f.server->store()->stats().chunks, 0);
}

TEST(ResultServer, StatementErrorsMetadataAndBadInput) {
  auto table = MakeLineitem(100, "err");
  Fixture f;
  ASSERT_OK(f.executor.AddTable("lineitem", table->path, f.pool.get()));
  ServerOptions so;
  so.max_body_bytes = 64 << 10;
  so.service.max_sessions = 3;
  f.Start(so);
  Rpc rpc(*f.server);
  auto s = Open(rpc);
  auto bad = Execute(rpc, s, "SELECT l_orderkey FROM lineitem WHERE 1 = 1", false);
  EXPECT_EQ(bad.status.statusCode, t::TStatusCode::ERROR_STATUS);
  EXPECT_NE(bad.status.displayMessage.find("not supported"), std::string::npos) << bad.status.displayMessage;
  auto missing = Execute(rpc, s, "SELECT * FROM nope", false);
  EXPECT_EQ(missing.status.statusCode, t::TStatusCode::ERROR_STATUS);
  EXPECT_NE(missing.status.displayMessage.find("nope"), std::string::npos);

  // GetTables / GetColumns are Arrow results.
  {
    t::TGetColumnsReq req;
    req.sessionHandle = s;
    req.__set_tableName("line%");
    req.__set_columnName("l_order%");
    t::TGetColumnsResp resp;
    RPC(rpc, GetColumns, req, resp);
    ASSERT_EQ(resp.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
    ASSERT_EQ(WaitFinished(rpc, resp.operationHandle), t::TOperationState::FINISHED_STATE);
    auto md = Metadata(rpc, resp.operationHandle);
    ASSERT_GE(md.schema.columns.size(), 5u);
    EXPECT_EQ(md.schema.columns[3].columnName, "COLUMN_NAME");
    auto page = Fetch(rpc, resp.operationHandle, true);
    ASSERT_EQ(page.results.arrowBatches.size(), 1u);
    EXPECT_EQ(page.results.arrowBatches[0].rowCount, 1);  // l_orderkey
    EXPECT_NE(page.results.arrowBatches[0].batch.find("l_orderkey"), std::string::npos);
    EXPECT_EQ(CloseOp(rpc, resp.operationHandle).statusCode, t::TStatusCode::SUCCESS_STATUS);
  }
  {
    t::TGetTablesReq req;
    req.sessionHandle = s;
    t::TGetTablesResp resp;
    RPC(rpc, GetTables, req, resp);
    ASSERT_EQ(resp.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
    auto page = Fetch(rpc, resp.operationHandle, true);
    ASSERT_EQ(page.results.arrowBatches.size(), 1u);
    EXPECT_EQ(page.results.arrowBatches[0].rowCount, 1);
    EXPECT_NE(page.results.arrowBatches[0].batch.find("lineitem"), std::string::npos);
  }
  // GetFunctions: the SQL function catalogue's names (JDBC getFunctions
  // columns), filtered by a LIKE pattern: date_add, date_format, date_part,
  // date_sub, date_trunc, datediff.
  {
    t::TGetFunctionsReq req;
    req.sessionHandle = s;
    req.functionName = "date%";
    t::TGetFunctionsResp resp;
    RPC(rpc, GetFunctions, req, resp);
    ASSERT_EQ(resp.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
    ASSERT_EQ(WaitFinished(rpc, resp.operationHandle), t::TOperationState::FINISHED_STATE);
    auto md = Metadata(rpc, resp.operationHandle);
    std::vector<std::string> names;
    for (const auto& c : md.schema.columns) names.push_back(c.columnName);
    EXPECT_EQ(names, (std::vector<std::string>{"FUNCTION_CAT", "FUNCTION_SCHEM", "FUNCTION_NAME", "REMARKS",
                                               "FUNCTION_TYPE", "SPECIFIC_NAME"}));
    auto page = Fetch(rpc, resp.operationHandle, true);
    ASSERT_EQ(page.results.arrowBatches.size(), 1u);
    EXPECT_EQ(page.results.arrowBatches[0].rowCount, 6);
    EXPECT_NE(page.results.arrowBatches[0].batch.find("datediff"), std::string::npos);
    EXPECT_EQ(CloseOp(rpc, resp.operationHandle).statusCode, t::TStatusCode::SUCCESS_STATUS);
    // Another schema: no rows.
    req.__set_schemaName("sales");
    RPC(rpc, GetFunctions, req, resp);
    ASSERT_EQ(resp.status.statusCode, t::TStatusCode::SUCCESS_STATUS);
    auto none = Fetch(rpc, resp.operationHandle, true);
    EXPECT_TRUE(none.results.arrowBatches.empty() || none.results.arrowBatches[0].rowCount == 0);
  }
  {
    t::TGetInfoReq req;
    req.sessionHandle = s;
    req.infoType = t::TGetInfoType::CLI_DBMS_NAME;
    t::TGetInfoResp resp;
    RPC(rpc, GetInfo, req, resp);
    EXPECT_EQ(resp.infoValue.stringValue, "quiver");
  }

  // Unknown handles.
  t::TOperationHandle fake;
  fake.operationId.guid = std::string(16, 'x');
  fake.operationId.secret = std::string(16, 'y');
  t::TGetOperationStatusReq sreq;
  sreq.operationHandle = fake;
  t::TGetOperationStatusResp sresp;
  RPC(rpc, GetOperationStatus, sreq, sresp);
  EXPECT_EQ(sresp.status.statusCode, t::TStatusCode::INVALID_HANDLE_STATUS);
  auto fetch_fake = Fetch(rpc, fake, true);
  EXPECT_EQ(fetch_fake.status.statusCode, t::TStatusCode::INVALID_HANDLE_STATUS);
  t::TSessionHandle wrong_secret = s;
  wrong_secret.sessionId.secret[0] ^= 1;
  auto ws = Execute(rpc, wrong_secret, "SELECT * FROM lineitem", false);
  EXPECT_EQ(ws.status.statusCode, t::TStatusCode::INVALID_HANDLE_STATUS);

  // Session limit.
  Open(rpc);
  Open(rpc);
  {
    t::TOpenSessionReq req;
    t::TOpenSessionResp resp;
    RPC(rpc, OpenSession, req, resp);
    EXPECT_EQ(resp.status.statusCode, t::TStatusCode::ERROR_STATUS);
    EXPECT_NE(resp.status.errorMessage.find("too many open sessions"), std::string::npos);
  }

  // HTTP-level bad input.
  {
    t::TOpenSessionReq req;
    rpc.c().send_OpenSession(req);
    const std::string good = rpc.Take();
    Rpc no_token(*f.server, "");
    EXPECT_EQ(no_token.Send(good), 401);
    Rpc wrong(*f.server, "wrong-token-0123");
    EXPECT_EQ(wrong.Send(good), 401);
    EXPECT_EQ(rpc.Send("garbage that is not thrift"), 400);
    EXPECT_EQ(rpc.Send(good.substr(0, good.size() / 2)), 400);
    EXPECT_EQ(rpc.Send(std::string(100 << 10, 'a')), 413);
    // A string length field claiming 2 GiB.
    EXPECT_EQ(
        rpc.Send(std::string(
            "\x80\x01\x00\x01\x00\x00\x00\x0bOpenSession\x00\x00\x00\x00\x0c\x00\x01\x0b\x00\x02\x7f\xff\xff\xff", 34)),
        400);
    // Every truncation of a valid message is refused without a crash.
    for (size_t n = 0; n < good.size(); n += 3) EXPECT_EQ(rpc.Send(good.substr(0, n)), 400) << n;
    auto r = rpc.http().Post("/sql/1.0/warehouses/other", httplib::Headers{{"Authorization", "Bearer " + kToken}}, good,
                             "application/x-thrift");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404);
    auto m = rpc.http().Get("/metrics", httplib::Headers{{"Authorization", "Bearer " + kToken}});
    ASSERT_TRUE(m);
    EXPECT_NE(m->body.find("pool test/chunks held_bytes="), std::string::npos) << m->body;
    EXPECT_EQ(rpc.http().Get("/metrics")->status, 401);
  }
  // Still serving.
  auto s2 = f.server->service()->stats();
  EXPECT_GT(s2.rpc_errors, 0);
  CloseSession(rpc, s);
}

// Chunk files leave in batches of TLS records written straight to the
// socket (http_server.h): multi-MiB files arrive byte for byte as stored,
// whole and as a Range crossing batch boundaries, one after another on the
// same keep-alive connection, and an RPC still follows on it.
TEST(ResultServer, LargeChunkFilesArriveExactlyInBatches) {
  auto table = MakeLineitem(60000, "batches");
  Fixture f;
  ASSERT_OK(f.executor.AddTable("lineitem", table->path, f.pool.get()));
  ServerOptions so;
  so.service.lz4 = false;  // raw IPC: files as large as the chunks
  so.service.chunk_bytes = 3 << 20;
  so.service.inline_threshold_bytes = 0;
  f.Start(so);
  Rpc rpc(*f.server);
  rpc.http().set_keep_alive(true);  // every request below on one connection
  auto s = Open(rpc);
  auto ex = Execute(rpc, s, "SELECT * FROM lineitem", true);
  ASSERT_EQ(ex.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << ex.status.errorMessage;
  ASSERT_EQ(WaitFinished(rpc, ex.operationHandle), t::TOperationState::FINISHED_STATE);
  std::vector<t::TSparkArrowResultLink> links;
  for (bool first = true;; first = false) {
    auto page = Fetch(rpc, ex.operationHandle, first);
    ASSERT_EQ(page.status.statusCode, t::TStatusCode::SUCCESS_STATUS) << page.status.errorMessage;
    links.insert(links.end(), page.results.resultLinks.begin(), page.results.resultLinks.end());
    if (!page.hasMoreRows) break;
  }
  ASSERT_GE(links.size(), 2u);
  int64_t multi_batch_files = 0;
  for (const auto& l : links) {
    const std::string path = PathOf(l.fileLink);
    auto stored = f.server->store()->Get(path.substr(7, 32));
    ASSERT_OK(stored);
    const std::string want(reinterpret_cast<const char*>((*stored)->data()), static_cast<size_t>((*stored)->size()));
    multi_batch_files += want.size() > (size_t{512} << 10) ? 1 : 0;  // three batches or more
    auto whole = rpc.http().Get(path.c_str());
    ASSERT_TRUE(whole);
    EXPECT_EQ(whole->status, 200);
    EXPECT_EQ(whole->get_header_value("Content-Length"), std::to_string(want.size()));
    EXPECT_TRUE(whole->body == want) << "file bytes differ from the stored chunk";
    if (want.size() < 600000) continue;
    auto part = rpc.http().Get(path.c_str(), httplib::Headers{{"Range", "bytes=200000-599999"}});
    ASSERT_TRUE(part);
    EXPECT_EQ(part->status, 206);
    EXPECT_TRUE(part->body == want.substr(200000, 400000));
  }
  EXPECT_GE(multi_batch_files, 2);
  int64_t next_row = 0;
  auto keys = DownloadAll(rpc, links, false, f.pool.get(), &next_row);
  EXPECT_EQ(keys, table->orderkeys);
  EXPECT_EQ(CloseOp(rpc, ex.operationHandle).statusCode, t::TStatusCode::SUCCESS_STATUS);
  CloseSession(rpc, s);
  auto metrics = rpc.http().Get("/metrics", httplib::Headers{{"Authorization", std::string("Bearer ") + kToken}});
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("http connections=1 "), std::string::npos) << "one keep-alive connection:\n"
                                                                          << metrics->body;
}

}  // namespace
}  // namespace quiver::server

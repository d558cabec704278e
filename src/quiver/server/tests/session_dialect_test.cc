// The dialect of a server session (issue 37, "a dialect setting"): spark by
// default, as a Databricks SQL warehouse; chosen in OpenSession's
// configuration map ("dialect" / "quiver.dialect"); changed by `SET dialect`
// for that session only; an unknown name fails OpenSession with 22023. Run
// end to end through ResultServer and quiver's own client.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "quiver/fetch/fetch_result.h"
#include "quiver/fetch/protocol_client.h"
#include "quiver/server/http_server.h"
#include "quiver/server/operation.h"
#include "quiver/server/sql_executor.h"
#include "quiver/sql/tpch_tables.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::server {
namespace {

struct DialectServer {
  std::string dir;
  std::shared_ptr<sql::Catalog> catalog = std::make_shared<sql::Catalog>();
  std::shared_ptr<MemoryPool> pool = MemoryPool::MakeRoot({.name = "serve"});
  std::unique_ptr<SqlExecutor> executor;
  std::unique_ptr<ResultServer> server;
  fetch::ConnectionOptions conn;

  explicit DialectServer(std::optional<sql::SqlDialect> default_dialect = std::nullopt) {
    dir = (std::filesystem::temp_directory_path() / ("quiver-dialect-test-" + std::to_string(getpid()))).string();
    sql::TpchFilesOptions t;
    t.scale = 0.001;
    t.pool = pool.get();
    EXPECT_OK(sql::RegisterTpchTables(catalog.get(), dir, t));
    executor = SqlExecutor::Make(catalog).value();
    ServerOptions so;
    so.token = "dialect-test-token";
    so.service.pool = pool.get();
    so.service.executor = executor.get();
    if (default_dialect) so.service.default_dialect = *default_dialect;
    server = ResultServer::Start(so).value();
    conn.server_url = server->rpc_url();
    conn.token = so.token;
    conn.ca_cert_path = server->cert_path();
  }
  ~DialectServer() {
    server->Stop();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

// The one value of a one-row, one-column result, as text, with its type.
std::string OneValue(const fetch::ConnectionOptions& conn, const std::string& sql) {
  auto pool = MemoryPool::MakeRoot({});
  fetch::FetchOptions fo;
  fo.download.pool = pool.get();
  auto r = fetch::FetchResult::Query(conn, sql, fo);
  if (!r.ok()) return "error: " + r.status().ToString();
  std::string out;
  while (true) {
    auto b = (*r)->Next();
    if (!b.ok()) return "error: " + b.status().ToString();
    if (!*b) break;
    const RecordBatch& batch = **b;
    for (int64_t i = 0; i < batch.num_rows; ++i) {
      const ArrayData& col = *batch.columns[0];
      if (col.type->id == TypeId::kFloat64) {
        out += "double " + std::to_string(col.GetValues<double>(1)[col.offset + i]);
      } else if (col.type->id == TypeId::kInt32) {
        out += "int32 " + std::to_string(col.GetValues<int32_t>(1)[col.offset + i]);
      } else if (col.type->id == TypeId::kInt64) {
        out += "int64 " + std::to_string(col.GetValues<int64_t>(1)[col.offset + i]);
      } else {
        out += "type " + std::to_string(static_cast<int>(col.type->id));
      }
    }
  }
  return out;
}

TEST(SessionDialect, SparkByDefaultOrAsOpenSessionsConfigurationSays) {
  DialectServer s;
  EXPECT_EQ(OneValue(s.conn, "SELECT 7 / 2 AS q"), "double 3.500000");
  EXPECT_EQ(OneValue(s.conn, "SELECT 7 div 2 AS q"), "int64 3");
  // Spark's default NULL order: first ascending, last descending.
  const char* kDescFirst = "SELECT coalesce(x, -1) FROM (VALUES (1), (NULL)) v(x) ORDER BY x DESC LIMIT 1";
  EXPECT_EQ(OneValue(s.conn, kDescFirst), "int32 1");

  fetch::ConnectionOptions pg = s.conn;
  pg.session_configuration = {{"dialect", "postgres"}};
  EXPECT_EQ(OneValue(pg, "SELECT 7 / 2 AS q"), "int64 3");
  EXPECT_EQ(OneValue(pg, kDescFirst), "int32 -1");
  pg.session_configuration = {{"quiver.dialect", "PostgreSQL"}, {"spark.sql.ansi.enabled", "true"}};
  EXPECT_EQ(OneValue(pg, "SELECT 7 / 2 AS q"), "int64 3");

  // A server started with --dialect postgres: sessions that name none.
  DialectServer p(sql::SqlDialect::kPostgres);
  EXPECT_EQ(OneValue(p.conn, "SELECT 7 / 2 AS q"), "int64 3");
  fetch::ConnectionOptions sp = p.conn;
  sp.session_configuration = {{"dialect", "spark"}};
  EXPECT_EQ(OneValue(sp, "SELECT 7 / 2 AS q"), "double 3.500000");
}

TEST(SessionDialect, AnUnknownDialectFailsOpenSessionNamingIt) {
  DialectServer s;
  fetch::ConnectionOptions bad = s.conn;
  bad.session_configuration = {{"dialect", "mysql"}};
  auto c = fetch::ProtocolClient::Connect(bad);
  ASSERT_FALSE(c.ok());
  const std::string msg = c.status().ToString();
  EXPECT_NE(msg.find("configuration dialect"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mysql"), std::string::npos) << msg;
  EXPECT_NE(msg.find("22023"), std::string::npos) << msg;
}

TEST(SessionDialect, SetDialectChangesOnlyItsOwnSession) {
  DialectServer s;
  auto a = fetch::ProtocolClient::Connect(s.conn);
  ASSERT_OK(a);
  auto b = fetch::ProtocolClient::Connect(s.conn);
  ASSERT_OK(b);
  auto pool = MemoryPool::MakeRoot({});
  auto type_of = [&](fetch::ProtocolClient* c, const std::string& sql) -> TypeId {
    auto r = c->Execute(sql, 100);
    EXPECT_OK(r);
    if (!r.ok()) return TypeId::kNull;
    auto schema = fetch::DecodeSchemaMessage(r->info.arrow_schema_message, pool.get());
    EXPECT_OK(schema);
    if (!schema.ok() || !*schema || (*schema)->fields.empty()) return TypeId::kNull;
    const TypeId id = (*schema)->fields[0]->type->id;
    if (!r->closed_by_server) EXPECT_OK(c->CloseOperation(r->operation));
    return id;
  };
  EXPECT_EQ(type_of(a->get(), "SELECT 7 / 2"), TypeId::kFloat64);
  auto set = (*a)->Execute("SET dialect = postgres", 100);
  ASSERT_OK(set);
  if (!set->closed_by_server) EXPECT_OK((*a)->CloseOperation(set->operation));
  EXPECT_EQ(type_of(a->get(), "SELECT 7 / 2"), TypeId::kInt64);
  EXPECT_EQ(type_of(b->get(), "SELECT 7 / 2"), TypeId::kFloat64) << "another session keeps its dialect";
  auto wrong = (*a)->Execute("SET dialect = mysql", 100);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().ToString().find("mysql"), std::string::npos) << wrong.status().ToString();
  EXPECT_EQ(type_of(a->get(), "SELECT 7 / 2"), TypeId::kInt64) << "a failed SET changes nothing";
  ASSERT_OK((*a)->Execute("SET quiver.dialect = spark", 100));
  EXPECT_EQ(type_of(a->get(), "SELECT 7 / 2"), TypeId::kFloat64);
}

TEST(SessionDialect, TheGuidCarriesTheDialect) {
  std::string guid = TimedHandleBytes(1'700'000'000'000);
  const std::string before = guid;
  SetSessionDialect(&guid, sql::SqlDialect::kPostgres);
  EXPECT_EQ(SessionDialectOf(guid), sql::SqlDialect::kPostgres);
  EXPECT_EQ(HandleIssuedMs(guid), std::optional<int64_t>(1'700'000'000'000)) << "the time and version stay";
  SetSessionDialect(&guid, sql::SqlDialect::kSpark);
  EXPECT_EQ(SessionDialectOf(guid), sql::SqlDialect::kSpark);
  EXPECT_EQ(HandleIssuedMs(guid), std::optional<int64_t>(1'700'000'000'000));
  for (size_t i = 0; i < guid.size(); ++i) {
    if (i != 7) EXPECT_EQ(guid[i], before[i]) << "byte " << i;
  }
  std::string short_guid = "abc";
  SetSessionDialect(&short_guid, sql::SqlDialect::kPostgres);
  EXPECT_EQ(short_guid, "abc");
  EXPECT_EQ(SessionDialectOf(short_guid), sql::SqlDialect::kSpark);
}

}  // namespace
}  // namespace quiver::server

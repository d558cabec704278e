// python/src/dbapi.cc — DB-API connections and results (dbapi.h).
#include "dbapi.h"

#include "quiver/columnar/spark_type.h"

namespace quiver::python {

py::tuple FieldDescription(const Field& f) {
  const SparkType kind = SparkTypeOf(*f.type);
  py::object precision = py::none(), scale = py::none();
  if (kind == SparkType::kDecimal) {
    const DataType& t = SparkServedType(*f.type);
    precision = py::int_(t.precision);
    scale = py::int_(t.scale);
  }
  // Values the DB-API hands out as text or Python objects of their own
  // (intervals, unions, durations as timedelta) are described as strings.
  const bool as_string = kind == SparkType::kIntervalYearMonth || kind == SparkType::kIntervalDayTime ||
                         kind == SparkType::kUnion || SparkServedType(*f.type).id == TypeId::kDuration;
  return py::make_tuple(f.name, as_string ? "string" : SparkTypeBaseName(kind), precision, scale, f.nullable);
}

std::shared_ptr<Connection> Connect(const std::string& url, const std::string& token, const std::string& ca_cert,
                                    bool insecure, int64_t window_bytes, int parallel, const std::string& policy,
                                    int64_t connect_timeout_ms) {
  auto c = std::make_shared<Connection>();
  fetch::ConnectionOptions co;
  co.server_url = url;
  co.token = token;
  co.ca_cert_path = ca_cert;
  co.insecure = insecure;
  co.connect_timeout_ms = connect_timeout_ms;
  c->options.download.policy = Unwrap(fetch::ParseChunkPolicy(policy));
  if (window_bytes <= 0) Raise(Status::Invalid("window_bytes must be > 0, got " + std::to_string(window_bytes)));
  if (parallel < 1) Raise(Status::Invalid("parallel must be >= 1, got " + std::to_string(parallel)));
  c->options.download.window_bytes = window_bytes;
  c->options.download.parallel = parallel;
  c->pool = std::static_pointer_cast<MemoryPool>(ModulePool()->MakeChild({.name = "connection"}));
  c->options.download.pool = c->pool.get();
  Result<std::unique_ptr<fetch::ProtocolClient>> client = Status::OK();
  {
    py::gil_scoped_release nogil;
    client = fetch::ProtocolClient::Connect(co);
  }
  c->client = Unwrap(std::move(client));
  return c;
}

std::shared_ptr<PyStatement> Execute(const std::shared_ptr<Connection>& c, const std::string& sql) {
  if (!c->client) Raise(Status::Invalid("the connection is closed"));
  auto out = std::make_shared<PyStatement>();
  out->connection = c;
  Status st;
  {
    py::gil_scoped_release nogil;
    std::lock_guard<std::mutex> lock(c->mu);
    st = [&]() -> Status {
      QUIVER_ASSIGN_OR_RETURN(auto statement, c->client->Execute(sql, c->options.direct_max_rows));
      QUIVER_ASSIGN_OR_RETURN(out->result, fetch::FetchResult::Open(c->client, std::move(statement), c->options));
      return Status::OK();
    }();
  }
  Check(st);
  return out;
}

}  // namespace quiver::python

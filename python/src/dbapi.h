// python/src/dbapi.h — the DB-API (PEP 249) side: a connection
// to a quiver / Databricks SQL server (fetch/protocol_client.h) and the
// results of its statements, fetched as the caller pulls (CloudFetch links
// downloaded in parallel inside a byte window).
#pragma once

#include <mutex>
#include <string>

#include "quiver/fetch/fetch_result.h"
#include "quiver/fetch/protocol_client.h"

#include "module_support.h"

namespace quiver::python {

/// PEP 249 description fields of one column: (name, type name as the
/// Databricks connector reports it, precision, scale, nullable).
py::tuple FieldDescription(const Field& f);

struct Connection {
  std::shared_ptr<fetch::ProtocolClient> client;
  std::shared_ptr<MemoryPool> pool;
  fetch::FetchOptions options;
  std::mutex mu;  // one RPC sequence at a time per session
};

/// The result of one statement, fetched as the caller pulls.
struct PyStatement {
  std::shared_ptr<Connection> connection;
  std::unique_ptr<fetch::FetchResult> result;
  RecordBatchPtr pending;
  int64_t pending_offset = 0;
  bool done = false;
  int64_t rows_returned = 0;

  /// Up to `max_rows` rows (all remaining when < 0) as a Table. GIL released.
  std::shared_ptr<Table> Fetch(int64_t max_rows) {
    CheckOpen();
    auto out = std::make_shared<Table>();
    out->schema = result->schema();
    Status st;
    {
      py::gil_scoped_release nogil;
      st = [&]() -> Status {
        int64_t want = max_rows;
        while (!done && (want < 0 || want > 0)) {
          if (!pending || pending_offset >= pending->num_rows) {
            QUIVER_ASSIGN_OR_RETURN(pending, result->Next());
            pending_offset = 0;
            if (!pending) {
              done = true;
              break;
            }
            continue;
          }
          const int64_t available = pending->num_rows - pending_offset;
          const int64_t take = want < 0 ? available : std::min(available, want);
          QUIVER_ASSIGN_OR_RETURN(auto piece, SliceBatch(pending, pending_offset, take));
          out->batches.push_back(std::move(piece));
          pending_offset += take;
          if (want > 0) want -= take;
        }
        return Status::OK();
      }();
    }
    Check(st);
    rows_returned += out->num_rows();
    return out;
  }

  void CheckOpen() const {
    if (!result) Raise(Status::Invalid("the statement's result is closed"));
  }

  py::dict Stats() const {
    CheckOpen();
    py::dict d;
    d["rows_delivered"] = result->rows_delivered();
    d["rows_dropped"] = result->rows_dropped();
    d["chunks_consumed"] = result->chunks_consumed();
    if (const fetch::DownloadStats* s = result->download_stats()) {
      d["bytes_downloaded"] = s->bytes_downloaded.load();
      d["chunks_done"] = s->chunks_done.load();
    }
    d["pool_held_bytes"] = connection->pool->held_bytes();
    d["pool_peak_bytes"] = connection->pool->peak_bytes();
    return d;
  }
};

std::shared_ptr<Connection> Connect(const std::string& url, const std::string& token, const std::string& ca_cert,
                                    bool insecure, int64_t window_bytes, int parallel, const std::string& policy,
                                    int64_t connect_timeout_ms);

std::shared_ptr<PyStatement> Execute(const std::shared_ptr<Connection>& c, const std::string& sql);

}  // namespace quiver::python

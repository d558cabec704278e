// quiver/fetch/fetch_result.cc — see fetch_result.h.
#include "quiver/fetch/fetch_result.h"

#include <deque>

#include "quiver/columnar/compare.h"
#include "quiver/ipc/reader.h"

namespace quiver::fetch {

class FetchResult::Impl {
 public:
  FetchResult* owner = nullptr;
  FetchOptions o;
  StatementResult statement;
  SchemaPtr schema;
  std::unique_ptr<DownloadEngine> engine;
  std::atomic<bool> cancel{false};
  bool done = false;
  Status error;

  // The chunk being read.
  std::unique_ptr<ipc::RecordBatchReader> reader;
  ResultLink link;
  std::string label;
  int64_t rows_in_chunk = 0;
  std::function<void()> release_share;
  std::optional<ReadyChunk> pending_first;  // opened in Open to learn the schema

  // Inline results.
  bool inline_mode = false;
  std::optional<FetchPage> page;
  size_t page_batch = 0;
  int64_t next_row = 0;
  bool fetched_any = false;
  std::deque<RecordBatchPtr> inline_queue;  // decoded batches of the current inline payload

  Status OpenChunk(ReadyChunk chunk) {
    label = ChunkLabel(chunk.index, chunk.link.start_row_offset, chunk.link.row_count);
    ipc::ReadOptions ro;
    ro.pool = o.download.pool;
    auto r = ipc::RecordBatchReader::Open(std::move(chunk.body), ro);
    if (!r.ok()) return r.status().WithContext(label);
    if (schema) {
      Status st = CompareSchemas(*schema, *(*r)->schema(), CompareOptions{});
      if (!st.ok()) return Status::Invalid(label + ": the chunk's schema differs from the result's: " + st.message());
    } else {
      schema = (*r)->schema();
    }
    reader = std::move(*r);
    release_share = std::move(chunk.release_window_share);
    link = chunk.link;
    rows_in_chunk = 0;
    owner->chunks_consumed_ += 1;
    return Status::OK();
  }

  // Trims a batch to the rows the chunk still owes; nullptr = padding.
  Result<RecordBatchPtr> Take(RecordBatchPtr batch) {
    const int64_t owed = link.row_count - rows_in_chunk;
    if (owed <= 0) {
      owner->rows_dropped_ += batch->num_rows;
      return RecordBatchPtr();
    }
    if (batch->num_rows > owed) {
      owner->rows_dropped_ += batch->num_rows - owed;
      QUIVER_ASSIGN_OR_RETURN(batch, SliceBatch(batch, 0, owed));
    }
    rows_in_chunk += batch->num_rows;
    owner->rows_delivered_ += batch->num_rows;
    return batch;
  }

  Status EndChunk() {
    if (rows_in_chunk < link.row_count) {
      return Status::Invalid(label + ": fewer rows than rowCount: expected " + std::to_string(link.row_count) +
                             ", actual " + std::to_string(rows_in_chunk));
    }
    reader.reset();
    // Every batch of the chunk is the consumer's now: free the window share.
    if (release_share) release_share();
    release_share = nullptr;
    return Status::OK();
  }

  Status CheckTotals() {
    if (!engine) return Status::OK();
    const DownloadStats& s = engine->stats();
    if (owner->rows_delivered_.load() != s.rows_announced.load()) {
      return Status::Invalid("rows delivered " + std::to_string(owner->rows_delivered_.load()) +
                             " differ from the rows announced " + std::to_string(s.rows_announced.load()));
    }
    if (o.check_total_bytes && o.download.row_limit < 0 && statement.info.uncompressed_bytes > 0 &&
        s.bytes_decoded.load() != statement.info.uncompressed_bytes) {
      return Status::Invalid("decompressed bytes of all chunks differ from the result's uncompressedBytes: expected " +
                             std::to_string(statement.info.uncompressed_bytes) + ", actual " +
                             std::to_string(s.bytes_decoded.load()));
    }
    return Status::OK();
  }

  Result<RecordBatchPtr> NextCloudFetch() {
    for (;;) {
      if (reader) {
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, [&]() -> Result<RecordBatchPtr> {
          auto r = reader->Next();
          if (!r.ok()) return r.status().WithContext(label);
          return r;
        }());
        if (b) {
          QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr t, Take(std::move(b)));
          if (t && t->num_rows > 0) return t;
          continue;
        }
        QUIVER_RETURN_NOT_OK(EndChunk());
        continue;
      }
      std::optional<ReadyChunk> chunk;
      if (pending_first) {
        chunk = std::move(pending_first);
        pending_first.reset();
        QUIVER_RETURN_NOT_OK(OpenChunk(std::move(*chunk)));
        continue;
      }
      QUIVER_ASSIGN_OR_RETURN(chunk, engine->Next());
      if (!chunk) {
        QUIVER_RETURN_NOT_OK(CheckTotals());
        return RecordBatchPtr();
      }
      QUIVER_RETURN_NOT_OK(OpenChunk(std::move(*chunk)));
    }
  }

  Result<RecordBatchPtr> NextInline(ProtocolClient* client) {
    for (;;) {
      if (cancel) return Status::Cancelled("fetch cancelled");
      if (!inline_queue.empty()) {
        RecordBatchPtr b = std::move(inline_queue.front());
        inline_queue.pop_front();
        return b;
      }
      if (page && page_batch < page->arrow_batches.size()) {
        const InlineBatch& ib = page->arrow_batches[page_batch++];
        const std::string where =
            "inline batch (rows [" + std::to_string(next_row) + ", " + std::to_string(next_row + ib.row_count) + "))";
        if (ib.row_count < 0) return Status::Invalid(where + ": negative rowCount");
        std::string message = ib.batch;
        if (statement.info.lz4_compressed) {
          ChunkDecoderOptions d;
          d.pool = o.download.pool;
          d.policy = ChunkPolicy::kHeap;
          d.chunk_label = where;
          QUIVER_ASSIGN_OR_RETURN(auto raw,
                                  DecodeChunk({reinterpret_cast<const uint8_t*>(message.data()), message.size()}, d));
          message.assign(reinterpret_cast<const char*>(raw->data()), static_cast<size_t>(raw->size()));
        }
        std::string stream = statement.info.arrow_schema_message + message;
        const uint8_t eos[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
        stream.append(reinterpret_cast<const char*>(eos), sizeof eos);
        QUIVER_ASSIGN_OR_RETURN(
            auto buf,
            Buffer::CopyOf(o.download.pool, {reinterpret_cast<const uint8_t*>(stream.data()), stream.size()}));
        ipc::ReadOptions ro;
        ro.pool = o.download.pool;
        auto r = ipc::RecordBatchReader::Open(buf, ro);
        if (!r.ok()) return r.status().WithContext(where);
        link = ResultLink{};
        link.row_count = ib.row_count;
        label = where;
        reader = std::move(*r);
        rows_in_chunk = 0;
        // One TSparkArrowBatch may hold several record batch messages (quiver
        // serve sends a chunk's messages); rowCount covers them all.
        for (;;) {
          auto b = reader->Next();
          if (!b.ok()) return b.status().WithContext(where);
          if (!*b) break;
          QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr t, Take(*b));
          if (t && t->num_rows > 0) inline_queue.push_back(t);
        }
        QUIVER_RETURN_NOT_OK(EndChunk());
        next_row += ib.row_count;
        continue;
      }
      if (page && !page->has_more_rows) return RecordBatchPtr();
      if (!page && statement.first_page) {
        page = std::move(statement.first_page);
        statement.first_page.reset();
        fetched_any = true;
      } else {
        QUIVER_ASSIGN_OR_RETURN(FetchPage p,
                                client->Fetch(statement.operation, !fetched_any, next_row, o.download.page_rows));
        fetched_any = true;
        if (!p.links.empty()) return Status::NotImplemented("links in an inline Arrow result");
        page = std::move(p);
      }
      page_batch = 0;
    }
  }
};

FetchResult::~FetchResult() {
  if (impl_ && impl_->engine) impl_->engine.reset();  // joins the engine thread
  if (impl_ && impl_->inline_mode && !impl_->statement.closed_by_server && client_) {
    (void)client_->CloseOperation(impl_->statement.operation);
  }
}

Result<std::unique_ptr<FetchResult>> FetchResult::Query(ConnectionOptions connection, const std::string& sql,
                                                        FetchOptions options) {
  QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<ProtocolClient> c, ProtocolClient::Connect(std::move(connection)));
  std::shared_ptr<ProtocolClient> client(std::move(c));
  QUIVER_ASSIGN_OR_RETURN(StatementResult st, client->Execute(sql, options.direct_max_rows));
  return Open(std::move(client), std::move(st), std::move(options));
}

Result<std::unique_ptr<FetchResult>> FetchResult::Open(std::shared_ptr<ProtocolClient> client,
                                                       StatementResult statement, FetchOptions options) {
  if (options.download.pool == nullptr) return Status::Invalid("FetchResult: download.pool is required");
  if (options.download.tls.ca_cert_path.empty() && !options.download.tls.insecure) {
    // Links are trusted as the server is (its CA file, or --insecure).
    options.download.tls.ca_cert_path = client->options().ca_cert_path;
    options.download.tls.insecure = client->options().insecure;
  }
  std::unique_ptr<FetchResult> r(new FetchResult());
  r->client_ = client;
  r->impl_ = std::make_unique<Impl>();
  Impl& im = *r->impl_;
  im.owner = r.get();
  im.o = options;
  im.statement = std::move(statement);
  if (!im.statement.operation.has_result_set) {
    im.schema = std::make_shared<Schema>();
    im.done = true;
    if (!im.statement.closed_by_server) (void)client->CloseOperation(im.statement.operation);
    return r;
  }
  if (!im.statement.info.arrow_schema_message.empty()) {
    auto s = DecodeSchemaMessage(im.statement.info.arrow_schema_message, options.download.pool);
    if (!s.ok()) return s.status().WithContext("arrowSchema of the result");
    im.schema = *s;
  }
  if (im.statement.info.result_format == 0) {
    im.inline_mode = true;
    if (!im.schema) return Status::Invalid("an inline Arrow result without arrowSchema");
    return r;
  }
  std::optional<FetchPage> first = std::move(im.statement.first_page);
  im.statement.first_page.reset();
  QUIVER_ASSIGN_OR_RETURN(im.engine,
                          DownloadEngine::Start(client, im.statement.operation, im.statement.info.lz4_compressed,
                                                std::move(first), !im.statement.closed_by_server, options.download));
  if (!im.schema) {
    // No arrowSchema: the first chunk's schema is the result's.
    QUIVER_ASSIGN_OR_RETURN(auto chunk, im.engine->Next());
    if (chunk) {
      QUIVER_RETURN_NOT_OK(im.OpenChunk(std::move(*chunk)));
    } else {
      im.schema = std::make_shared<Schema>();
      im.done = true;
    }
  }
  return r;
}

const SchemaPtr& FetchResult::schema() const { return impl_->schema; }

Result<RecordBatchPtr> FetchResult::Next() {
  Impl& im = *impl_;
  if (!im.error.ok()) return im.error;
  if (im.done && !im.reader) return RecordBatchPtr();
  if (im.cancel.load()) {
    im.error = Status::Cancelled("fetch cancelled");
    im.reader.reset();
    return im.error;
  }
  auto r = im.inline_mode ? im.NextInline(client_.get()) : im.NextCloudFetch();
  if (!r.ok()) {
    im.error = r.status();
    im.reader.reset();
    return im.error;
  }
  if (!*r) {
    im.done = true;
    im.reader.reset();
  }
  return r;
}

void FetchResult::Cancel() {
  impl_->cancel = true;
  if (impl_->engine) impl_->engine->Cancel();
}

const DownloadStats* FetchResult::download_stats() const { return impl_->engine ? &impl_->engine->stats() : nullptr; }

}  // namespace quiver::fetch

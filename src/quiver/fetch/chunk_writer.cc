// quiver/fetch/chunk_writer.cc — record batches -> IPC stream chunks (+LZ4).
#include "quiver/fetch/chunk_writer.h"

#include <lz4frame.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "quiver/ipc/io.h"
#include "quiver/ipc/writer.h"

namespace quiver::fetch {
namespace {

// An OutputStream that writes into one growable pool buffer (doubling), so
// the encoding is charged to the pool; Finish() shrinks it to its size.
class PoolBufferSink : public ipc::OutputStream {
 public:
  explicit PoolBufferSink(MemoryPool* pool) : pool_(pool) {}

  Status Write(std::span<const uint8_t> bytes) override {
    if (bytes.empty()) return Status::OK();
    const int64_t need = size_ + static_cast<int64_t>(bytes.size());
    if (!buffer_) {
      QUIVER_ASSIGN_OR_RETURN(buffer_, Buffer::Allocate(pool_, std::max<int64_t>(need, 64 << 10)));
    } else if (need > buffer_->size()) {
      QUIVER_RETURN_NOT_OK(buffer_->Resize(std::max(need, buffer_->size() * 2), false));
    }
    std::memcpy(buffer_->mutable_data() + size_, bytes.data(), bytes.size());
    size_ = need;
    return Status::OK();
  }
  int64_t position() const override { return size_; }
  std::span<const uint8_t> bytes() const {
    return buffer_ ? std::span<const uint8_t>(buffer_->data(), static_cast<size_t>(size_)) : std::span<const uint8_t>();
  }
  /// The written bytes in an exact-size buffer (the sink is empty after).
  Result<std::shared_ptr<Buffer>> Finish() {
    if (!buffer_) return Buffer::Allocate(pool_, 0);
    QUIVER_RETURN_NOT_OK(buffer_->Resize(size_, true));
    size_ = 0;
    return std::move(buffer_);
  }

 private:
  MemoryPool* pool_;
  std::shared_ptr<Buffer> buffer_;
  int64_t size_ = 0;
};

// Rows of `batch` that fit in about `budget_bytes`, from its buffer bytes
// per row; at least 1.
int64_t RowsForBytes(const RecordBatch& batch, int64_t budget_bytes) {
  int64_t total = 0;
  for (const auto& c : batch.columns) total += c->TotalBufferBytes();
  if (batch.num_rows <= 0 || total <= 0) return std::max<int64_t>(batch.num_rows, 1);
  const double per_row = static_cast<double>(total) / static_cast<double>(batch.num_rows);
  const double rows = static_cast<double>(budget_bytes) / per_row;
  if (rows >= static_cast<double>(batch.num_rows)) return batch.num_rows;
  return std::max<int64_t>(1, static_cast<int64_t>(rows));
}

}  // namespace

Result<std::shared_ptr<Buffer>> Lz4FrameCompress(std::span<const uint8_t> bytes, MemoryPool* pool) {
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof prefs);
  prefs.frameInfo.contentSize = bytes.size();
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  // 4 MiB independent blocks. (64 KiB linked blocks cut a streaming
  // client's LZ4F buffers from ~8 MiB to ~260 KiB per download, but left
  // ~70 MiB of freed heap the allocator could not hand back after a burst of
  // statements: ResultServerMemory.RssReturnsAfterABurstOfStatements.)
  prefs.frameInfo.blockSizeID = LZ4F_max4MB;
  const size_t bound = LZ4F_compressFrameBound(bytes.size(), &prefs);
  QUIVER_ASSIGN_OR_RETURN(auto out, Buffer::Allocate(pool, static_cast<int64_t>(bound)));
  const size_t n = LZ4F_compressFrame(out->mutable_data(), bound, bytes.data(), bytes.size(), &prefs);
  if (LZ4F_isError(n)) {
    return Status::IOError(std::string("LZ4F_compressFrame: ") + LZ4F_getErrorName(n));
  }
  QUIVER_RETURN_NOT_OK(out->Resize(static_cast<int64_t>(n), true));
  return out;
}

Result<std::shared_ptr<Buffer>> Lz4FrameDecompress(std::span<const uint8_t> frame, MemoryPool* pool,
                                                   int64_t max_output_bytes) {
  LZ4F_dctx* dctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
    return Status::OutOfMemory("LZ4F_createDecompressionContext failed");
  }
  std::unique_ptr<LZ4F_dctx, decltype(&LZ4F_freeDecompressionContext)> guard(dctx, LZ4F_freeDecompressionContext);
  LZ4F_frameInfo_t info;
  size_t consumed = frame.size();
  size_t r = LZ4F_getFrameInfo(dctx, &info, frame.data(), &consumed);
  if (LZ4F_isError(r)) return Status::Invalid(std::string("LZ4 frame header: ") + LZ4F_getErrorName(r));
  if (info.contentSize == 0 && frame.size() > 0) {
    // contentSize 0 means "not present" (or a truly empty frame).
  }
  if (info.contentSize > static_cast<unsigned long long>(max_output_bytes)) {
    return Status::Invalid("LZ4 frame declares " + std::to_string(info.contentSize) + " bytes, above the limit " +
                           std::to_string(max_output_bytes));
  }
  const int64_t size = static_cast<int64_t>(info.contentSize);
  QUIVER_ASSIGN_OR_RETURN(auto out, Buffer::Allocate(pool, size));
  size_t in_pos = consumed;
  size_t out_pos = 0;
  while (true) {
    size_t dst = static_cast<size_t>(size) - out_pos;
    size_t src = frame.size() - in_pos;
    r = LZ4F_decompress(dctx, out->mutable_data() + out_pos, &dst, frame.data() + in_pos, &src, nullptr);
    if (LZ4F_isError(r)) return Status::Invalid(std::string("LZ4 frame data: ") + LZ4F_getErrorName(r));
    in_pos += src;
    out_pos += dst;
    if (r == 0) break;  // frame complete (checksum verified)
    if (src == 0 && dst == 0) {
      return Status::Invalid("LZ4 frame truncated or larger than its declared content size " + std::to_string(size));
    }
  }
  if (out_pos != static_cast<size_t>(size) || in_pos != frame.size()) {
    return Status::Invalid("LZ4 frame: decoded " + std::to_string(out_pos) + " of " + std::to_string(size) +
                           " bytes, consumed " + std::to_string(in_pos) + " of " + std::to_string(frame.size()));
  }
  return out;
}

ChunkWriter::ChunkWriter(RecordBatchStream* input, ChunkWriterOptions options) : input_(input), options_(options) {}
ChunkWriter::~ChunkWriter() = default;

Result<std::unique_ptr<ChunkWriter>> ChunkWriter::Make(RecordBatchStream* input, ChunkWriterOptions options) {
  if (options.pool == nullptr) return Status::Invalid("chunk writer: options.pool is null");
  if (input == nullptr) return Status::Invalid("chunk writer: input is null");
  if (options.target_chunk_bytes < 1) {
    return Status::Invalid("chunk writer: target_chunk_bytes must be >= 1, got " +
                           std::to_string(options.target_chunk_bytes));
  }
  return std::unique_ptr<ChunkWriter>(new ChunkWriter(input, options));
}

Result<std::optional<Chunk>> ChunkWriter::Next() {
  if (input_done_ && !pending_ && chunks_written_ > 0) return std::optional<Chunk>();
  const std::string where = "chunk " + std::to_string(chunks_written_);
  PoolBufferSink sink(options_.pool);
  ipc::WriteOptions wo;
  wo.pool = options_.pool;
  QUIVER_ASSIGN_OR_RETURN(auto writer,
                          ipc::RecordBatchWriter::Make(&sink, input_->schema(), ipc::IpcFormat::kStream, wo));
  Chunk chunk;
  chunk.index = chunks_written_;
  chunk.start_row_offset = rows_written_;
  chunk.schema_message_bytes = sink.position();
  while (sink.position() < options_.target_chunk_bytes) {
    if (!pending_) {
      if (input_done_) break;
      auto next = input_->Next();
      if (!next.ok()) return next.status().WithContext(where);
      pending_ = std::move(next).value();
      if (!pending_) {
        input_done_ = true;
        break;
      }
      if (pending_->num_rows == 0) {
        pending_.reset();
        continue;
      }
    }
    const int64_t budget = std::max<int64_t>(options_.target_chunk_bytes - sink.position(), 1);
    const int64_t rows = RowsForBytes(*pending_, budget);
    RecordBatchPtr piece = pending_;
    if (rows < pending_->num_rows) {
      QUIVER_ASSIGN_OR_RETURN(piece, SliceBatch(pending_, 0, rows));
      QUIVER_ASSIGN_OR_RETURN(pending_, SliceBatch(pending_, rows, pending_->num_rows - rows));
    } else {
      pending_.reset();
    }
    QUIVER_RETURN_NOT_OK_CTX(writer->WriteBatch(*piece), where);
    chunk.row_count += piece->num_rows;
  }
  QUIVER_RETURN_NOT_OK_CTX(writer->Close(), where);
  writer.reset();
  chunk.ipc_bytes = sink.position();
  if (options_.lz4) {
    auto compressed = Lz4FrameCompress(sink.bytes(), options_.pool);
    if (!compressed.ok()) return compressed.status().WithContext(where);
    chunk.bytes = std::move(compressed).value();
    chunk.lz4 = true;
  } else {
    QUIVER_ASSIGN_OR_RETURN(chunk.bytes, sink.Finish());
  }
  rows_written_ += chunk.row_count;
  ++chunks_written_;
  // An input that ended exactly at a chunk boundary needs no empty trailing chunk.
  if (chunk.row_count == 0 && chunk.index > 0) return std::optional<Chunk>();
  return std::optional<Chunk>(std::move(chunk));
}

}  // namespace quiver::fetch

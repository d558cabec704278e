#include "quiver/formats/csv/csv_writer.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "quiver/columnar/value_format.h"
#include "quiver/memory/buffer.h"

namespace quiver::formats::csv {

namespace {

constexpr int64_t kCompressedChunkBytes = int64_t{256} << 10;

bool NeedsQuotes(std::string_view text, char delimiter) {
  if (text.empty()) return true;  // "" is an empty string; an empty field is NULL
  for (char c : text) {
    if (c == delimiter || c == '"' || c == '\r' || c == '\n') return true;
  }
  return false;
}

}  // namespace

// The file's codec: text in, compressed bytes to the sink through one pool
// buffer of kCompressedChunkBytes.
class CsvWriter::Codec {
 public:
  Codec(CsvCompression kind, OutputSink* sink, std::shared_ptr<Buffer> out) : kind_(kind), sink_(sink), out_(out) {}
  ~Codec() {
    if (z_open_) deflateEnd(&z_);
    if (zstd_ != nullptr) ZSTD_freeCCtx(zstd_);
  }
  Codec(const Codec&) = delete;
  Codec& operator=(const Codec&) = delete;

  Status Init(int level) {
    if (kind_ == CsvCompression::kGzip) {
      z_ = z_stream{};
      // windowBits 15 + 16: a gzip header and trailer (RFC 1952), not zlib's.
      if (deflateInit2(&z_, level == 0 ? Z_DEFAULT_COMPRESSION : level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
          Z_OK) {
        return Status::IOError("csv writer: gzip: deflateInit2 failed (level " + std::to_string(level) + ")");
      }
      z_open_ = true;
      return Status::OK();
    }
    zstd_ = ZSTD_createCCtx();
    if (zstd_ == nullptr) return Status::OutOfMemory("csv writer: zstd context");
    const size_t rc = ZSTD_CCtx_setParameter(zstd_, ZSTD_c_compressionLevel, level == 0 ? 3 : level);
    if (ZSTD_isError(rc)) return Status::IOError(std::string("csv writer: zstd level: ") + ZSTD_getErrorName(rc));
    return Status::OK();
  }

  /// Compresses `text` (end: and ends the stream) and writes what comes out.
  Status Write(const uint8_t* text, int64_t size, bool end, int64_t* written) {
    uint8_t* out = out_->mutable_data();
    const auto out_size = static_cast<size_t>(out_->size());
    if (kind_ == CsvCompression::kGzip) {
      z_.next_in = const_cast<Bytef*>(text);
      z_.avail_in = static_cast<uInt>(size);  // size <= buffer_bytes, far below 4 GiB
      while (true) {
        z_.next_out = out;
        z_.avail_out = static_cast<uInt>(out_size);
        const int rc = deflate(&z_, end ? Z_FINISH : Z_NO_FLUSH);
        if (rc == Z_STREAM_ERROR) return Status::IOError("csv writer: gzip: deflate failed");
        const size_t produced = out_size - z_.avail_out;
        QUIVER_RETURN_NOT_OK(Emit(out, produced, written));
        if (end ? rc == Z_STREAM_END : (z_.avail_in == 0 && z_.avail_out != 0)) return Status::OK();
      }
    }
    ZSTD_inBuffer in{text, static_cast<size_t>(size), 0};
    while (true) {
      ZSTD_outBuffer o{out, out_size, 0};
      const size_t left = ZSTD_compressStream2(zstd_, &o, &in, end ? ZSTD_e_end : ZSTD_e_continue);
      if (ZSTD_isError(left)) return Status::IOError(std::string("csv writer: zstd: ") + ZSTD_getErrorName(left));
      QUIVER_RETURN_NOT_OK(Emit(out, o.pos, written));
      if (end ? left == 0 : in.pos == in.size) return Status::OK();
    }
  }

 private:
  Status Emit(const uint8_t* data, size_t size, int64_t* written) {
    if (size == 0) return Status::OK();
    QUIVER_RETURN_NOT_OK(sink_->Write({data, size}));
    *written += static_cast<int64_t>(size);
    return Status::OK();
  }

  CsvCompression kind_;
  OutputSink* sink_;
  std::shared_ptr<Buffer> out_;
  z_stream z_{};
  bool z_open_ = false;
  ZSTD_CCtx* zstd_ = nullptr;
};

CsvWriter::CsvWriter(SchemaPtr schema, OutputSink* sink, CsvWriteOptions options)
    : schema_(std::move(schema)), sink_(sink), options_(options) {}

CsvWriter::~CsvWriter() = default;

Result<std::unique_ptr<CsvWriter>> CsvWriter::Make(SchemaPtr schema, OutputSink* sink, CsvWriteOptions options) {
  if (options.pool == nullptr) return Status::Invalid("csv writer: no memory pool");
  if (sink == nullptr || schema == nullptr) return Status::Invalid("csv writer: no sink or schema");
  const char d = options.delimiter;
  if (d == '"' || d == '\r' || d == '\n') {
    return Status::Invalid("csv writer: the delimiter cannot be a quote, CR or LF");
  }
  if (options.buffer_bytes < 4096) {
    return Status::Invalid("csv writer: buffer_bytes " + std::to_string(options.buffer_bytes) + ": expected >= 4096");
  }
  std::unique_ptr<CsvWriter> w(new CsvWriter(std::move(schema), sink, options));
  QUIVER_ASSIGN_OR_RETURN(w->text_, Buffer::Allocate(options.pool, options.buffer_bytes));
  if (options.compression != CsvCompression::kNone) {
    QUIVER_ASSIGN_OR_RETURN(auto out, Buffer::Allocate(options.pool, kCompressedChunkBytes));
    w->codec_ = std::make_unique<Codec>(options.compression, sink, std::move(out));
    QUIVER_RETURN_NOT_OK(w->codec_->Init(options.level));
  }
  return w;
}

Status CsvWriter::Flush(bool end) {
  const uint8_t* text = text_->data();
  if (codec_) {
    QUIVER_RETURN_NOT_OK(codec_->Write(text, used_, end, &stats_.file_bytes));
  } else if (used_ > 0) {
    QUIVER_RETURN_NOT_OK(sink_->Write({text, static_cast<size_t>(used_)}));
    stats_.file_bytes += used_;
  }
  used_ = 0;
  return Status::OK();
}

Status CsvWriter::Append(const char* data, int64_t size) {
  stats_.text_bytes += size;
  const int64_t capacity = text_->size();
  while (size > 0) {
    if (used_ == capacity) QUIVER_RETURN_NOT_OK(Flush(false));
    const int64_t n = std::min(size, capacity - used_);
    std::memcpy(text_->mutable_data() + used_, data, static_cast<size_t>(n));
    used_ += n;
    data += n;
    size -= n;
  }
  return Status::OK();
}

Status CsvWriter::AppendField(std::string_view text) {
  if (!NeedsQuotes(text, options_.delimiter)) return Append(text.data(), static_cast<int64_t>(text.size()));
  QUIVER_RETURN_NOT_OK(Append("\"", 1));
  size_t start = 0;
  while (true) {
    const size_t q = text.find('"', start);
    if (q == std::string_view::npos) break;
    // The run up to and including the quote, then the quote again.
    QUIVER_RETURN_NOT_OK(Append(text.data() + start, static_cast<int64_t>(q - start + 1)));
    QUIVER_RETURN_NOT_OK(Append("\"", 1));
    start = q + 1;
  }
  QUIVER_RETURN_NOT_OK(Append(text.data() + start, static_cast<int64_t>(text.size() - start)));
  return Append("\"", 1);
}

Status CsvWriter::WriteHeader() {
  header_done_ = true;
  if (!options_.header) return Status::OK();
  for (size_t c = 0; c < schema_->fields.size(); ++c) {
    if (c) QUIVER_RETURN_NOT_OK(Append(&options_.delimiter, 1));
    QUIVER_RETURN_NOT_OK(AppendField(schema_->fields[c]->name));
  }
  return Append("\n", 1);
}

Status CsvWriter::WriteBatch(const RecordBatch& batch) {
  if (closed_) return Status::Invalid("csv writer: WriteBatch after Close");
  if (batch.columns.size() != schema_->fields.size()) {
    return Status::Invalid("csv writer: a batch of " + std::to_string(batch.columns.size()) + " columns, expected " +
                           std::to_string(schema_->fields.size()));
  }
  for (size_t c = 0; c < batch.columns.size(); ++c) {
    const ArrayData* a = batch.columns[c].get();
    if (a == nullptr || a->length < batch.num_rows || !a->type->Equals(*schema_->fields[c]->type)) {
      return Status::Invalid("csv writer: column " + std::to_string(c) + " ('" + schema_->fields[c]->name +
                             "') does not match the schema or the batch's row count");
    }
  }
  if (!header_done_) QUIVER_RETURN_NOT_OK(WriteHeader());
  for (int64_t r = 0; r < batch.num_rows; ++r) {
    for (size_t c = 0; c < batch.columns.size(); ++c) {
      const ArrayData& a = *batch.columns[c];
      if (c) QUIVER_RETURN_NOT_OK(Append(&options_.delimiter, 1));
      if (IsLogicalNull(a, r)) continue;  // NULL: an empty unquoted field
      if (a.type->id == TypeId::kUtf8) {  // the common case, without a copy
        const int64_t k = a.offset + r;
        const int32_t* off = a.GetValues<int32_t>(1);
        const Buffer* data = a.buffers.size() > 2 ? a.buffers[2].get() : nullptr;
        const char* base = data != nullptr ? reinterpret_cast<const char*>(data->data()) : "";
        QUIVER_RETURN_NOT_OK(AppendField({base + off[k], static_cast<size_t>(off[k + 1] - off[k])}));
        continue;
      }
      cell_.clear();
      FormatValue(a, r, ValueFormat::kText, &cell_);
      QUIVER_RETURN_NOT_OK(AppendField(cell_));
    }
    QUIVER_RETURN_NOT_OK(Append("\n", 1));
  }
  stats_.num_rows += batch.num_rows;
  return Status::OK();
}

Status CsvWriter::Close() {
  if (closed_) return Status::Invalid("csv writer: Close called twice");
  if (!header_done_) QUIVER_RETURN_NOT_OK(WriteHeader());
  closed_ = true;
  return Flush(/*end=*/true);
}

}  // namespace quiver::formats::csv

#include "quiver/formats/csv/csv_stream.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>

namespace quiver::formats::csv {
namespace {

bool EndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// Compressed bytes of a source, a block at a time.
class SourceBlocks {
 public:
  SourceBlocks(std::shared_ptr<RandomAccessSource> source, MemoryPool* pool, int64_t read_bytes)
      : source_(std::move(source)), pool_(pool), read_bytes_(read_bytes) {}
  // The unread bytes of the current block, reading the next one when it is used up (empty at the end).
  Result<std::span<const uint8_t>> Available() {
    if (block_ && used_ < block_->size()) return block_->span().subspan(static_cast<size_t>(used_));
    block_.reset();
    const int64_t n = std::min(read_bytes_, source_->size() - offset_);
    if (n <= 0) return std::span<const uint8_t>();
    QUIVER_ASSIGN_OR_RETURN(block_, source_->ReadAt(offset_, n, pool_));
    block_start_ = offset_;
    offset_ += n;
    used_ = 0;
    return block_->span();
  }
  void Consume(int64_t n) { used_ += n; }
  int64_t position() const { return block_start_ + used_; }  // input byte
  const std::string& name() const { return source_->name(); }
  RandomAccessSource& source() { return *source_; }

 private:
  std::shared_ptr<RandomAccessSource> source_;
  MemoryPool* pool_;
  int64_t read_bytes_;
  std::shared_ptr<Buffer> block_;
  int64_t block_start_ = 0;
  int64_t used_ = 0;
  int64_t offset_ = 0;
};

class PlainStream final : public CsvByteStream {
 public:
  PlainStream(std::shared_ptr<RandomAccessSource> source, MemoryPool* pool, int64_t read_bytes)
      : in_(std::move(source), pool, read_bytes) {}
  Result<int64_t> Read(uint8_t* out, int64_t max_bytes) override {
    QUIVER_ASSIGN_OR_RETURN(auto avail, in_.Available());
    const int64_t n = std::min<int64_t>(max_bytes, static_cast<int64_t>(avail.size()));
    if (n > 0) std::memcpy(out, avail.data(), static_cast<size_t>(n));
    in_.Consume(n);
    return n;
  }
  const std::string& name() const override { return in_.name(); }

 private:
  SourceBlocks in_;
};

class GzipStream final : public CsvByteStream {
 public:
  GzipStream(std::shared_ptr<RandomAccessSource> source, MemoryPool* pool, int64_t read_bytes)
      : in_(std::move(source), pool, read_bytes) {}
  ~GzipStream() override {
    if (open_) inflateEnd(&z_);
  }
  Result<int64_t> Read(uint8_t* out, int64_t max_bytes) override {
    int64_t produced = 0;
    while (produced == 0 && !done_) {
      QUIVER_ASSIGN_OR_RETURN(auto avail, in_.Available());
      if (!open_) {
        // Trailing zero padding after the last member is allowed.
        bool zeros = std::all_of(avail.begin(), avail.end(), [](uint8_t b) { return b == 0; });
        if (avail.empty() || (zeros && in_.source().size() - in_.position() == static_cast<int64_t>(avail.size()))) {
          done_ = true;
          break;
        }
        z_ = z_stream{};
        if (inflateInit2(&z_, 15 + 16) != Z_OK) return Status::Invalid(in_.name() + ": gzip: inflateInit failed");
        open_ = true;
      }
      if (avail.empty())
        return Status::Invalid(in_.name() + ": gzip: truncated or corrupt data (input byte " +
                               std::to_string(in_.position()) + ")");
      z_.next_in = const_cast<Bytef*>(avail.data());
      z_.avail_in = static_cast<uInt>(std::min<size_t>(avail.size(), UINT32_MAX));
      z_.next_out = out;
      z_.avail_out = static_cast<uInt>(std::min<int64_t>(max_bytes, UINT32_MAX));
      const uInt in_before = z_.avail_in;
      const uInt out_before = z_.avail_out;
      int rc = inflate(&z_, Z_NO_FLUSH);
      in_.Consume(in_before - z_.avail_in);
      produced = out_before - z_.avail_out;
      if (rc == Z_BUF_ERROR && in_before == z_.avail_in && produced == 0) rc = Z_DATA_ERROR;
      if (rc != Z_OK && rc != Z_STREAM_END) {
        std::string msg = z_.msg ? z_.msg : "truncated or corrupt data";
        return Status::Invalid(in_.name() + ": gzip: " + msg + " (input byte " + std::to_string(in_.position()) + ")");
      }
      if (rc == Z_STREAM_END) {
        inflateEnd(&z_);
        open_ = false;
      }
    }
    return produced;
  }
  const std::string& name() const override { return in_.name(); }

 private:
  SourceBlocks in_;
  z_stream z_{};
  bool open_ = false;
  bool done_ = false;
};

class ZstdStream final : public CsvByteStream {
 public:
  ZstdStream(std::shared_ptr<RandomAccessSource> source, MemoryPool* pool, int64_t read_bytes)
      : in_(std::move(source), pool, read_bytes), dctx_(ZSTD_createDCtx(), ZSTD_freeDCtx) {}
  Result<int64_t> Read(uint8_t* out, int64_t max_bytes) override {
    if (!dctx_) return Status::OutOfMemory(in_.name() + ": zstd context");
    while (true) {
      QUIVER_ASSIGN_OR_RETURN(auto avail, in_.Available());
      if (avail.empty()) {
        if (last_ != 0) return Status::Invalid(in_.name() + ": zstd: truncated input");
        return int64_t{0};
      }
      ZSTD_inBuffer in{avail.data(), avail.size(), 0};
      ZSTD_outBuffer o{out, static_cast<size_t>(max_bytes), 0};
      last_ = ZSTD_decompressStream(dctx_.get(), &o, &in);
      in_.Consume(static_cast<int64_t>(in.pos));
      if (ZSTD_isError(last_)) {
        return Status::Invalid(in_.name() + ": zstd: " + ZSTD_getErrorName(last_) + " (input byte " +
                               std::to_string(in_.position()) + ")");
      }
      if (o.pos > 0) return static_cast<int64_t>(o.pos);
    }
  }
  const std::string& name() const override { return in_.name(); }

 private:
  SourceBlocks in_;
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx_;
  size_t last_ = 0;
};

}  // namespace

Result<std::unique_ptr<CsvByteStream>> OpenCsvByteStream(std::shared_ptr<RandomAccessSource> source, MemoryPool* pool,
                                                         int64_t read_bytes) {
  const std::string& name = source->name();
  read_bytes = std::max<int64_t>(read_bytes, 1);
  if (EndsWith(name, ".gz")) return std::unique_ptr<CsvByteStream>(new GzipStream(std::move(source), pool, read_bytes));
  if (EndsWith(name, ".zst")) {
    return std::unique_ptr<CsvByteStream>(new ZstdStream(std::move(source), pool, read_bytes));
  }
  return std::unique_ptr<CsvByteStream>(new PlainStream(std::move(source), pool, read_bytes));
}

Result<std::unique_ptr<CsvStreamReader>> CsvStreamReader::Open(std::unique_ptr<CsvByteStream> stream,
                                                               const CsvOptions& options, MemoryPool* pool,
                                                               CsvStreamOptions so,
                                                               std::optional<std::vector<int>> columns) {
  so.block_bytes = std::max<int64_t>(so.block_bytes, 64);
  so.sniff_bytes = std::max<int64_t>(so.sniff_bytes, 64);
  QUIVER_ASSIGN_OR_RETURN(auto text, Buffer::Allocate(pool, std::max(so.block_bytes, so.sniff_bytes)));
  int64_t filled = 0;
  bool eof = false;
  while (filled < so.sniff_bytes) {
    QUIVER_ASSIGN_OR_RETURN(int64_t n, stream->Read(text->mutable_data() + filled, so.sniff_bytes - filled));
    if (n == 0) {
      eof = true;
      break;
    }
    filled += n;
  }
  QUIVER_ASSIGN_OR_RETURN(CsvLayout layout, InferCsvLayout(std::string_view(reinterpret_cast<const char*>(text->data()),
                                                                            static_cast<size_t>(filled)),
                                                           eof, options, stream->name()));
  const bool empty = layout.empty_text;
  const int64_t begin = layout.data_offset;
  const int64_t line = layout.data_line;
  std::unique_ptr<CsvStreamReader> r(
      new CsvStreamReader(std::move(stream), CsvRowConverter(std::move(layout), options, std::move(columns)), pool));
  r->text_ = std::move(text);
  r->begin_ = begin;
  r->end_ = filled;
  r->line_ = line;
  r->eof_ = eof;
  r->done_ = empty;
  r->peak_text_bytes_ = r->text_->size();
  return r;
}

Status CsvStreamReader::Fill() {
  const int64_t left = end_ - begin_;
  if (begin_ > 0) {
    std::memmove(text_->mutable_data(), text_->data() + begin_, static_cast<size_t>(left));
    begin_ = 0;
    end_ = left;
  }
  if (end_ == text_->size()) {  // one row fills the buffer: grow it
    QUIVER_RETURN_NOT_OK(text_->Resize(text_->size() * 2, false));
    peak_text_bytes_ = std::max(peak_text_bytes_, text_->size());
  }
  while (end_ < text_->size()) {
    QUIVER_ASSIGN_OR_RETURN(int64_t n, stream_->Read(text_->mutable_data() + end_, text_->size() - end_));
    if (n == 0) {
      eof_ = true;
      break;
    }
    end_ += n;
  }
  return Status::OK();
}

Result<RecordBatchPtr> CsvStreamReader::Next() {
  while (true) {
    if (next_pending_ < pending_.size()) return std::move(pending_[next_pending_++]);
    pending_.clear();
    next_pending_ = 0;
    if (done_) return RecordBatchPtr{};
    const std::string_view text(reinterpret_cast<const char*>(text_->data()) + begin_,
                                static_cast<size_t>(end_ - begin_));
    QUIVER_ASSIGN_OR_RETURN(auto chunk, converter_.Convert(text, line_, eof_, pool_, stream_->name(), scratch_.get()));
    begin_ += chunk.consumed_bytes;
    line_ = chunk.end_line;
    pending_ = std::move(chunk.batches);
    if (eof_) {
      done_ = true;
      text_.reset();  // the text and the scratch are no longer needed
      scratch_.reset();
      continue;
    }
    QUIVER_RETURN_NOT_OK(Fill());
  }
}

}  // namespace quiver::formats::csv

#include "quiver/formats/csv/csv_ranges.h"

#include <algorithm>
#include <cstring>

#include "quiver/formats/csv/csv_tokenizer.h"

namespace quiver::formats::csv {

// Bytes [start, start + size) of the source, read on demand.
struct CsvRangeScan::Window {
  RandomAccessSource* source = nullptr;
  MemoryPool* pool = nullptr;
  int64_t start = 0;
  std::shared_ptr<Buffer> buf;
  int64_t end() const { return start + (buf ? buf->size() : 0); }
  const char* at(int64_t pos) const { return reinterpret_cast<const char*>(buf->data()) + (pos - start); }
  // Makes [start, upto) readable (upto clamped to the source's size).
  Status Ensure(int64_t upto) {
    upto = std::min(upto, source->size());
    if (upto <= end()) return Status::OK();
    const int64_t old = buf ? buf->size() : 0;
    const int64_t want = std::min(source->size() - start, std::max(upto - start, old * 2));
    QUIVER_ASSIGN_OR_RETURN(auto more, source->ReadAt(start + old, want - old, pool));
    if (!buf) {  // the first read: the source's buffer as is
      buf = std::move(more);
      return Status::OK();
    }
    QUIVER_ASSIGN_OR_RETURN(auto grown, Buffer::Allocate(pool, std::max<int64_t>(want, 1)));
    if (old > 0) std::memcpy(grown->mutable_data(), buf->data(), static_cast<size_t>(old));
    std::memcpy(grown->mutable_data() + old, more->data(), static_cast<size_t>(want - old));
    QUIVER_RETURN_NOT_OK(grown->Resize(want));
    buf = std::move(grown);
    return Status::OK();
  }
};

CsvRangeScan::CsvRangeScan(std::shared_ptr<RandomAccessSource> source, const CsvLayout& layout,
                           const CsvOptions& options, std::optional<std::vector<int>> columns, int64_t range_bytes)
    : source_(std::move(source)),
      converter_(
          layout,
          [&] {
            CsvOptions o = options;
            o.batch_rows = int64_t{1} << 24;  // one batch per range
            return o;
          }(),
          std::move(columns)),
      range_bytes_(std::clamp<int64_t>(range_bytes, 1, int64_t{16} << 20)) {
  const int64_t data = std::max<int64_t>(0, source_->size() - layout.data_offset);
  num_ranges_ = std::max<int64_t>(1, (data + range_bytes_ - 1) / range_bytes_);
  if (layout.schema == nullptr || layout.empty_text) num_ranges_ = 1;
  chain_ = std::make_unique<CsvQuoteChain>(num_ranges_);
}

Status CsvRangeScan::LineError(const Status& relative, int64_t start, std::string_view text, MemoryPool* pool,
                               CsvRowScratch* scratch) const {
  // Line ends before `start`, read a block at a time.
  int64_t ends = 0;
  constexpr int64_t kBlock = int64_t{4} << 20;
  for (int64_t at = 0; at < start; at += kBlock) {
    const int64_t n = std::min(kBlock, start - at);
    auto b = source_->ReadAt(at, n, pool);
    if (!b.ok()) return relative;
    ends += CsvLineEndsIn((*b)->view());
    // A CR ending the block and an LF starting the next are one line end.
    if ((*b)->view().back() == '\r' && at + n < start) {
      auto next = source_->ReadAt(at + n, 1, pool);
      if (next.ok() && (*next)->view()[0] == '\n') --ends;
    }
  }
  auto again = converter_.Convert(text, 1 + ends, true, pool, source_->name(), scratch);
  return again.ok() ? relative : again.status();
}

Result<RecordBatchPtr> CsvRangeScan::ParseRange(int64_t k, MemoryPool* pool) {
  if (k < 0 || k >= num_ranges_) return Status::Invalid("CSV range " + std::to_string(k) + " out of range");
  const CsvLayout& layout = converter_.layout();
  const int64_t size = source_->size();
  const int64_t nominal_k = layout.data_offset + k * range_bytes_;
  const int64_t nominal_next = k + 1 == num_ranges_ ? size : layout.data_offset + (k + 1) * range_bytes_;
  Window w;
  w.source = source_.get();
  w.pool = pool;
  w.start = k == 0 ? layout.data_offset : nominal_k - 1;
  int64_t b = 0, e = 0;
  auto bounds = [&]() -> Status {
    if (k == 0) {
      b = layout.data_offset;
    } else {
      QUIVER_ASSIGN_OR_RETURN(b, CsvNextLineStart(nominal_k - 1, std::min<int64_t>(range_bytes_, 4096), &w));
    }
    if (k + 1 == num_ranges_) {
      e = size;
    } else {
      QUIVER_ASSIGN_OR_RETURN(e, CsvNextLineStart(nominal_next - 1, std::min<int64_t>(range_bytes_, 4096), &w));
    }
    e = std::max(b, e);
    QUIVER_RETURN_NOT_OK(w.Ensure(e));
    return Status::OK();
  };
  // A range with no LF in [nominal_k - 1, nominal_next - 1) lies inside
  // one line: both its boundaries are the first LF after it (b == e), and
  // it owns no row. Said from its own bytes, without looking for that LF:
  // ranges inside a very long row (one of 100 MB: 50 ranges of 2 MiB) each
  // searched to the row's end before, quadratic in the row's length; now
  // only the range where the row starts reads past its end. First the
  // range and a little more, where the next boundary's LF usually is.
  Status st = w.Ensure(nominal_next + std::min<int64_t>(range_bytes_ / 8 + 256, int64_t{64} << 10));
  if (st.ok() && k > 0 &&
      std::memchr(w.at(nominal_k - 1), '\n', static_cast<size_t>(nominal_next - nominal_k)) == nullptr) {
    chain_->Publish(k, false, true);  // the state passes through unchanged
    return converter_.EmptyBatch(pool);
  }
  if (st.ok()) st = bounds();
  if (!st.ok()) {
    chain_->Fail(st);
    return st;
  }
  if (b == e) {
    chain_->Publish(k, false, true);
  } else {
    const std::string_view own(w.at(b), static_cast<size_t>(e - b));
    chain_->Publish(k, CsvEndsInsideQuotes(own, false, layout.delimiter, layout.quote),
                    CsvEndsInsideQuotes(own, true, layout.delimiter, layout.quote));
  }
  QUIVER_ASSIGN_OR_RETURN(bool inside, chain_->WaitStart(k));
  int64_t start = b;
  if (inside && b < e) {
    QUIVER_ASSIGN_OR_RETURN(start, CsvRowRestEnd(b, true, layout.delimiter, layout.quote, &w));
  }
  if (b == e || start >= e) return converter_.EmptyBatch(pool);
  // The end: the boundary when it is a row start, else the end of the row across it.
  int64_t end = e;
  if (e < size) {
    if (chain_->EndInside(k, inside)) {
      QUIVER_ASSIGN_OR_RETURN(end, CsvRowRestEnd(e, true, layout.delimiter, layout.quote, &w));
    }
  }
  QUIVER_RETURN_NOT_OK(w.Ensure(end));
  const std::string_view text(w.at(start), static_cast<size_t>(end - start));
  // A scratch of this thread's for the parse, back on the free list after.
  std::unique_ptr<CsvRowScratch> scratch = chain_->TakeScratch(pool);
  auto chunk = converter_.Convert(text, 1, true, pool, source_->name(), scratch.get());
  if (!chunk.ok()) chunk = LineError(chunk.status(), start, text, pool, scratch.get());
  chain_->GiveBackScratch(std::move(scratch));
  if (!chunk.ok()) return chunk.status();
  if (chunk->batches.empty()) return converter_.EmptyBatch(pool);
  return std::move(chunk->batches[0]);
}

}  // namespace quiver::formats::csv

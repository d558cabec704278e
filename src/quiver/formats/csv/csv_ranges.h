// quiver/formats/csv/csv_ranges.h — an uncompressed CSV text split into
// byte ranges that parse on several threads at once (issue 36 §2 "Large
// files parse in parallel").
//
// The layout (dialect, header, schema) is inferred once from the head
// before the split. Range k covers nominal bytes [data_offset + k * R,
// data_offset + (k + 1) * R); each boundary moves forward to just after
// the next LF, so that a boundary is either a row start or inside a quoted
// field (a line end in a quoted value). Range k owns the rows that start
// in it and reads past its end to finish its last row.
//
// Which of the two a boundary is, is exact (no guessing, DuckDB's
// "verify by parsing ahead" is not needed): each range scans its own bytes
// for quotes (memchr) under both hypotheses, "the range starts outside a
// quoted field" and "inside", and publishes the two end states; the state
// at boundary k+1 is f_k(state at k), from state "outside" at the data
// start. A range waits for the ranges before it to publish (a scan of
// their bytes, not their parse) before it parses (csv_quote_chain.h, shared
// with the zstd frame ranges of csv_frames.h). A quote opens a quoted
// field only at a field start (after a delimiter or line end), as the
// tokenizer reads it.
//
// Lines: a range parses with lines counted from its own start; when it
// fails, it counts the line ends before its start (reading the text again)
// and parses again, so that the error names the file's line.
//
// Memory: each ParseRange reads its bytes (about R, plus the rest of its
// last row) into `pool` memory, freed when it returns, and the field
// positions of its rows into a CsvRowScratch (about 24 bytes a field: some
// 6 MiB for a 2 MiB range of TPC-H lineitem) from `pool`, kept for the
// next range on a free list (one scratch per thread parsing at once) and
// released with the CsvRangeScan.
//
// Thread safety: ParseRange may be called from several threads at once,
// each range once, and range k only after ranges 0..k-1 were started (a
// range waits for those before it).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/formats/csv/csv_quote_chain.h"
#include "quiver/formats/csv/csv_reader.h"
#include "quiver/formats/source.h"

namespace quiver::formats::csv {

class CsvRangeScan {
 public:
  /// `layout`: of the text of `source` (InferCsvLayout over its head);
  /// `columns`: as CsvRowConverter; `range_bytes`: R, clamped to 1 B ..
  /// 16 MiB. Each range makes one batch (batch_rows does not split it).
  CsvRangeScan(std::shared_ptr<RandomAccessSource> source, const CsvLayout& layout, const CsvOptions& options,
               std::optional<std::vector<int>> columns, int64_t range_bytes = int64_t{2} << 20);

  int64_t num_ranges() const { return num_ranges_; }

  /// The rows range `k` owns, as one batch (possibly of no rows). Errors:
  /// the source's; ParseCsv's, naming the source and the file's line;
  /// Cancelled when a range before it failed before publishing its quote
  /// states; OutOfMemory.
  Result<RecordBatchPtr> ParseRange(int64_t k, MemoryPool* pool);

 private:
  struct Window;
  Status LineError(const Status& relative, int64_t start, std::string_view text, MemoryPool* pool,
                   CsvRowScratch* scratch) const;

  std::shared_ptr<RandomAccessSource> source_;
  CsvRowConverter converter_;
  int64_t range_bytes_;
  int64_t num_ranges_ = 1;
  std::unique_ptr<CsvQuoteChain> chain_;  // quote states at the boundaries; scratch free list
};

}  // namespace quiver::formats::csv

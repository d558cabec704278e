// quiver/sql/csv_scan.h — a table of CSV files scanned in place (issue 36
// §2): at planning only each file's head is read (formats/csv: the
// dialect, header and column types); every statement's scan reads the
// files again, in bounded pieces, into its scan pool.
//
// An uncompressed file (local or in an S3 store) is split into byte ranges
// (formats/csv/csv_ranges.h, 2 MiB each) that are the scan's morsels,
// parsed on every thread of the statement; a local .zst file of several
// zstd frames is split into ranges of frames (formats/csv/csv_frames.h,
// about 4 MiB of text each), decompressed and parsed on every thread; a
// .gz file, or a .zst of one frame, is decompressed and parsed on one
// thread at a time, a block (a few MiB) per morsel (csv_stream.h). Morsels are numbered in file order, so an ordered
// consumer sees the rows in file order.
//
// The table's columns are the files' fields (every file has the first
// one's names and types: the loader checks), then the hive partition
// columns (file_tables.h), constant per file.
//
// Thread safety: a CsvTableSource is immutable; a CsvScan's Next may be
// called from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/formats/csv/csv_reader.h"
#include "quiver/formats/source.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::formats::csv {
class CsvFrameScan;
class CsvRangeScan;
class CsvStreamReader;
}  // namespace quiver::formats::csv

namespace quiver::sql {

class CsvTableSource {
 public:
  /// One file: its bytes, its layout (InferCsvLayout over its head), and
  /// the values of the partition columns the table adds.
  struct File {
    std::shared_ptr<formats::RandomAccessSource> source;
    formats::csv::CsvLayout layout;
    std::vector<std::string> partition_values;
  };
  /// Reads the head of `source` (decompressed by its name's extension)
  /// with `pool` (released before returning) and infers its layout.
  /// Errors: the source's and InferCsvLayout's.
  static Result<File> OpenFile(std::shared_ptr<formats::RandomAccessSource> source,
                               const formats::csv::CsvOptions& options, MemoryPool* pool);

  /// `schema`: the files' fields (`num_file_fields`) then the partition
  /// columns. `range_bytes`: the byte ranges of uncompressed files.
  /// Errors: Invalid when a file's partition values do not match.
  static Result<std::shared_ptr<CsvTableSource>> Make(SchemaPtr schema, size_t num_file_fields, std::vector<File> files,
                                                      formats::csv::CsvOptions options,
                                                      int64_t range_bytes = int64_t{2} << 20);

  const SchemaPtr& schema() const { return schema_; }
  /// Estimated rows (file bytes over the sampled bytes per row; a
  /// compressed file counted as 4 times its size): for the planner only.
  int64_t estimated_rows() const { return estimated_rows_; }

 private:
  friend class CsvScan;
  CsvTableSource() = default;
  SchemaPtr schema_;
  size_t num_file_fields_ = 0;
  std::vector<File> files_;
  formats::csv::CsvOptions options_;
  int64_t range_bytes_ = 0;
  int64_t estimated_rows_ = 0;
};

/// One statement's scan of a CsvTableSource: batches of schema()'s width
/// whose `columns` hold the data (the others null pointers), buffers from
/// `pool` (the statement's scan pool).
class CsvScan {
 public:
  CsvScan(std::shared_ptr<const CsvTableSource> source, std::vector<int> columns, MemoryPool* pool);
  ~CsvScan();
  /// The next morsel and its number in file order (`*sequence`; at the
  /// end, nullptr and the number handed out). A range may hold no rows (a
  /// batch of none). Errors: the files' and the parser's (naming the file
  /// and line); once one is returned, every later call returns it again.
  /// With several bad rows on several threads, the error of the range that
  /// fails first is returned, which need not be the earliest line.
  Result<RecordBatchPtr> Next(int64_t* sequence);

 private:
  Result<RecordBatchPtr> Finish(RecordBatchPtr batch, size_t file);
  // Hands out range next_range_ of `ranges` (a CsvRangeScan or
  // CsvFrameScan) and parses it with `lock` released.
  template <typename Ranges>
  Result<RecordBatchPtr> ParseNextRange(std::shared_ptr<Ranges> ranges, size_t file, std::unique_lock<std::mutex>* lock,
                                        int64_t* sequence);
  std::shared_ptr<const CsvTableSource> source_;
  std::vector<int> columns_;
  std::vector<int> file_columns_;
  MemoryPool* pool_;
  std::mutex mutex_;
  Status error_;
  size_t file_ = 0;
  int64_t next_range_ = 0;
  std::shared_ptr<formats::csv::CsvRangeScan> ranges_;
  std::unique_ptr<formats::csv::CsvStreamReader> stream_;
  std::shared_ptr<formats::csv::CsvFrameScan> frames_;
  bool frames_checked_ = false;  // whether file_ was tried for a frame scan
  int64_t handed_out_ = 0;
};

}  // namespace quiver::sql

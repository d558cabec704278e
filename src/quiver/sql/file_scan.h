// quiver/sql/file_scan.h — a table of Parquet files scanned in place
// (issue 36 section 1 "Scans"): at planning only the footers are read
// (schema, row counts, column-chunk statistics); at execution the scan
// takes the row groups of the files as its units (morsels), each read with
// only the columns the statement reads and decoded into the statement's
// scan pool, after the row groups whose statistics exclude the scan's
// filter are pruned (parquet/row_group_filter.h) and, where the files have
// a page index, the pages (parquet/page_filter.h): a row group is then
// read as the ranges of rows whose pages may match, one unit each.
//
// The table's columns are the files' fields (every file has the first
// one's), then the hive partition columns the files do not have (one
// constant value per file, BIGINT or VARCHAR; see file_tables.h).
//
// Ownership: the source owns the opened files (their footers; a file is
// read again, by pread(2), for every unit). Thread safety: immutable after
// Make except the counters; ReadUnit and Units may be called from several
// threads at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/formats/parquet/file_reader.h"
#include "quiver/formats/parquet/page_filter.h"
#include "quiver/formats/parquet/row_group_filter.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::sql {

class FileTableSource {
 public:
  /// One opened file: its reader and the values (as written in the
  /// folder names) of the partition columns the table adds after the
  /// files' fields, in order.
  struct File {
    std::unique_ptr<parquet::FileReader> reader;
    std::vector<std::string> partition_values;
  };
  /// A unit of work: row group `row_group` of file `file`, whole, or
  /// (`pages` set) its rows [first_row, first_row + num_rows), one of the
  /// ranges the page index left (read through `pages`' offset indexes).
  struct Unit {
    int file = 0;
    int row_group = 0;
    int64_t num_rows = 0;
    int64_t first_row = 0;
    bool first_of_row_group = true;  ///< counts the row group as read
    std::shared_ptr<const parquet::RowGroupPagePlan> pages;
  };

  /// `schema`: the table (the files' fields first, `num_file_fields` of
  /// them, then the partition columns, BIGINT or VARCHAR). Every file's
  /// schema must have those first fields (the caller checks names and
  /// types). Errors: Invalid when a file's partition values do not match
  /// the partition columns in number.
  static Result<std::shared_ptr<FileTableSource>> Make(SchemaPtr schema, size_t num_file_fields,
                                                       std::vector<File> files);

  const SchemaPtr& schema() const { return schema_; }
  /// Rows of every file (their footers' row groups).
  int64_t num_rows() const { return num_rows_; }
  /// Row groups of every file, with rows.
  int64_t num_row_groups() const { return static_cast<int64_t>(units_.size()); }
  /// The files' paths, in scan order.
  std::vector<std::string> paths() const;
  /// Compressed bytes of `unit`'s row group (the sum of its column chunks'
  /// total_compressed_size, every column): an upper bound of what reading
  /// the unit fetches, for read-ahead budgets. 0 for a bad unit.
  int64_t UnitBytes(const Unit& unit) const;

  /// The units a scan reads, in file and row-group order: every row group
  /// with rows whose statistics do not exclude the conjunction `prune`
  /// (fields: table column indices; predicates on partition columns are
  /// ignored). Adds the row groups left out to row_groups_pruned().
  std::vector<Unit> Units(std::span<const parquet::StatsPredicate> prune) const;

  /// Units, then page pruning (unless UsePageIndex(false)): each row group
  /// left whose page index excludes some rows becomes one unit per range
  /// of rows its pages may match, reading the table columns `columns`;
  /// a row group with no such range is left out too (counted in
  /// row_groups_pruned()). Adds the data pages of `columns` left out to
  /// pages_pruned(). The page indexes are read here (bytes from `pool`).
  /// Errors: Invalid for a corrupt page index (naming the file, row group
  /// and column), IOError, OutOfMemory.
  Result<std::vector<Unit>> PlanUnits(std::span<const parquet::StatsPredicate> prune, const std::vector<int>& columns,
                                      MemoryPool* pool) const;

  /// Whether PlanUnits uses the page index (default true): a setting of
  /// the scans (to compare answers and times with and without it), not of
  /// the data, so it may be changed on a shared source between statements.
  void UsePageIndex(bool on) const { page_index_.store(on, std::memory_order_relaxed); }

  /// Reads `unit` with the table columns `columns` (indices into schema()):
  /// a batch of schema()'s width and the unit's rows whose listed columns
  /// hold the data (file columns as decoded, partition columns constant)
  /// and whose other columns are null pointers (the caller reads only the
  /// columns it asked for). Buffers come from `pool`. Errors: the reader's
  /// (naming the file, row group, column and page); Invalid for a column
  /// index outside the schema; OutOfMemory.
  Result<RecordBatchPtr> ReadUnit(const Unit& unit, const std::vector<int>& columns, MemoryPool* pool) const;

  /// A unit read a slice of rows at a time (OpenUnit). Not thread-safe
  /// (one thread at a time); the source must outlive it.
  class UnitReader {
   public:
    ~UnitReader();
    /// The next min(max_rows, rows_left()) rows (max_rows > 0) as ReadUnit
    /// gives the whole unit (a batch of schema()'s width, the unread
    /// columns null), or nullptr once every row was returned. Errors: as
    /// ReadUnit; after one, the reader must not be used again.
    Result<RecordBatchPtr> Next(int64_t max_rows);
    int64_t rows_left() const { return rows_left_; }

   private:
    friend class FileTableSource;
    UnitReader() = default;
    const FileTableSource* source_ = nullptr;
    Unit unit_;
    std::vector<int> columns_;       // table columns asked for
    std::vector<int> file_columns_;  // those of the file, in order
    std::unique_ptr<parquet::RowGroupSlices> slices_;
    MemoryPool* pool_ = nullptr;
    int64_t rows_left_ = 0;
  };

  /// Opens `unit` to be read in slices (the morsels of a parallel scan):
  /// its column chunks of `columns` are read now (parquet
  /// FileReader::OpenRowGroup, or OpenRowGroupRange for a range), decoded
  /// by UnitReader::Next. Counts the unit's row group in row_groups_read()
  /// (once per row group). Errors: as ReadUnit.
  Result<std::unique_ptr<UnitReader>> OpenUnit(const Unit& unit, const std::vector<int>& columns,
                                               MemoryPool* pool) const;

  /// Counters since Make, over every scan of this source (relaxed: exact
  /// once the scans have finished): row groups read by ReadUnit, row
  /// groups left out by Units, and the column chunks and their bytes the
  /// readers have read.
  int64_t row_groups_read() const { return row_groups_read_.load(std::memory_order_relaxed); }
  int64_t row_groups_pruned() const { return row_groups_pruned_.load(std::memory_order_relaxed); }
  /// Data pages of the scans' columns read through their offset index
  /// (OpenUnit of a range), and left out by PlanUnits. Row groups read
  /// whole count no pages.
  int64_t pages_read() const;
  int64_t pages_pruned() const { return pages_pruned_.load(std::memory_order_relaxed); }
  int64_t column_chunks_read() const;
  int64_t bytes_read() const;

 private:
  FileTableSource() = default;
  SchemaPtr schema_;
  size_t num_file_fields_ = 0;
  std::vector<File> files_;
  std::vector<Unit> units_;  // every row group with rows
  int64_t num_rows_ = 0;
  mutable std::atomic<int64_t> row_groups_read_{0};
  mutable std::atomic<int64_t> row_groups_pruned_{0};
  mutable std::atomic<int64_t> pages_pruned_{0};
  mutable std::atomic<bool> page_index_{true};
};

/// A column of `rows` copies of `value` (a partition folder's value):
/// `type` BIGINT (int64; `value` must be an integer) or VARCHAR (utf8),
/// buffers from `pool`. Errors: Invalid when the strings would pass 2 GiB;
/// OutOfMemory.
Result<ArrayDataPtr> PartitionColumn(const DataTypePtr& type, const std::string& value, int64_t rows, MemoryPool* pool);

}  // namespace quiver::sql

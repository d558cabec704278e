// quiver/sql/catalog.h — the tables a SQL statement can name: Arrow IPC
// files, streams or directories of IPC files on disk, or record batches
// held in memory, each with its schema and row count known up front (the
// planner picks a join's build side by row count; the server answers
// GetTables / GetColumns from here).
//
// Table names are case-insensitive (stored lower-case, as PostgreSQL folds
// unquoted identifiers). Paths are opened with ipc::RecordBatchReader::OpenPath
// (regular files are memory-mapped: scans are zero-copy and charge no pool);
// a directory is one table made of its regular files in name order, every
// file with the same schema (hidden files, starting with '.', are skipped).
//
// Thread safety: every method is thread-safe (registration takes a lock;
// lookups return copies of immutable descriptions). A Catalog is shared by
// the engines and sessions that use it (std::shared_ptr<Catalog>).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/columnar/record_batch_stream.h"
#include "quiver/columnar/validate.h"
#include "quiver/formats/parquet/row_group_filter.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::ipc {
class MappedFileCache;  // ipc/mapped_file_cache.h
}  // namespace quiver::ipc

namespace quiver::sql {

class FileTableSource;  // file_scan.h
class CsvTableSource;   // csv_scan.h
class CsvScan;          // csv_scan.h

/// What a table is made of and what it holds. Immutable once registered.
struct TableInfo {
  std::string name;  ///< lower-case
  SchemaPtr schema;
  int64_t num_rows = 0;
  /// "memory", or the path(s): one path for a file or stream, the files of
  /// a directory in scan order.
  std::vector<std::string> paths;
  /// Validation level the scans decode IPC batches at (ReadOptions).
  ValidationLevel validation = ValidationLevel::kFull;
  /// In-memory tables: the batches (shared, immutable). Empty for paths.
  std::vector<RecordBatchPtr> batches;
  /// Parquet file tables (file_tables.h): the files, scanned in place a
  /// row group at a time (file_scan.h); `paths` and `batches` are empty.
  std::shared_ptr<const FileTableSource> file_source;
  /// CSV file tables (file_tables.h): the files, read again by each scan
  /// in bounded pieces (csv_scan.h); num_rows is an estimate.
  std::shared_ptr<const CsvTableSource> csv_source;
  /// Path tables: the files' mappings, made when the table was opened and
  /// kept for its scans while each file is unchanged (every scan mapping
  /// the files again paid a page fault for each page it touched, every
  /// time). Shared by the copies of this description; null: each scan
  /// maps the files itself.
  std::shared_ptr<ipc::MappedFileCache> mapped_files;
  bool in_memory() const { return paths.empty() && !file_source && !csv_source; }
};

/// One column of one table (GetColumns).
struct ColumnInfo {
  std::string table;  ///< lower-case table name
  std::string name;   ///< as stored in the schema
  DataTypePtr type;   ///< the stored type (dictionary types as stored; SQL sees their value type)
  bool nullable = true;
  int ordinal = 0;  ///< 0-based position in the table's schema
};

/// A table's batches handed out to several threads (the morsels of a
/// parallel scan): each Next() returns the next batch no thread has taken
/// (in-memory batches longer than `morsel_rows` are handed out in slices;
/// a Parquet file table's row groups are decoded in slices of at most
/// min(`morsel_rows`, 8 Ki) rows, several row groups at once when several
/// threads scan, and of files in an object store the next two row groups'
/// column chunks are fetched in the background while the workers decode;
/// a CSV file table's byte ranges are parsed on every thread
/// that calls, csv_scan.h),
/// nullptr at the end. IPC batches are decoded under a lock (zero-copy for
/// uncompressed files: the lock covers a flatbuffer read) and their chosen
/// columns validated at the table's level outside it, in the calling
/// thread; errors name the path, record batch and column. After an
/// error of the reader every later Next() returns it again.
/// Thread safety: Next() is thread-safe. The batches keep their data alive.
class SharedScan {
 public:
  /// `prune`: conjuncts over table columns whose statistics let a file
  /// table skip row groups and, by the page index, pages (ignored by other
  /// tables; FileTableSource::PlanUnits reads the page indexes here, and
  /// an error doing so is returned by every Next()).
  SharedScan(const TableInfo& table, MemoryPool* pool, std::optional<std::vector<int>> columns, int64_t morsel_rows,
             std::vector<parquet::StatsPredicate> prune = {});
  ~SharedScan();
  /// `sequence` (optional) receives the batch's number in storage order
  /// (0, 1, ...: hand-out order, except for file tables, whose slices are
  /// numbered in storage order whichever thread takes them; every number
  /// below the total is handed out once), or at the end the number of
  /// batches handed out.
  Result<RecordBatchPtr> Next(int64_t* sequence = nullptr);
  const SchemaPtr& schema() const { return schema_; }

 private:
  Result<RecordBatchPtr> NextUnit(int64_t* sequence);  // file tables
  SchemaPtr schema_;
  ValidationLevel validation_;
  std::optional<std::vector<int>> columns_;
  int64_t morsel_rows_;
  std::mutex mutex_;
  Status error_;
  std::vector<RecordBatchPtr> batches_;  // in-memory tables
  size_t next_batch_ = 0;
  int64_t next_row_ = 0;
  int64_t handed_out_ = 0;
  std::unique_ptr<RecordBatchStream> files_;  // path tables (a MultiPathStream)
  struct FileUnits;
  std::unique_ptr<FileUnits> file_units_;  // Parquet file tables
  std::unique_ptr<CsvScan> csv_;           // CSV file tables
};

/// The table Arrow IPC files `paths` (files or streams, all of one schema,
/// concatenated in order) make, named `name` (folded to lower case; not
/// checked as an identifier: file tables are named by their file's stem):
/// the schema and row count, read once through `scratch_pool` as
/// Catalog::RegisterPath does; every scan reads the files again at
/// `validation`. Used by RegisterPath and by path tables (`FROM 'x.arrow'`,
/// file_tables.h). Errors: Invalid for no path or no pool, files of
/// different schemas; the reader's errors with the path in front.
/// Thread safety: a pure function.
Result<TableInfo> OpenIpcTable(std::string_view name, std::vector<std::string> paths, MemoryPool* scratch_pool,
                               ValidationLevel validation = ValidationLevel::kFull);

class Catalog {
 public:
  Catalog() = default;
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  /// Registers `path` (an IPC file, an IPC stream, or a directory of IPC
  /// files) as table `name`. Reads the whole input once to learn its schema
  /// and row count (regular files are mapped, so this costs page faults,
  /// not pool memory; streams and compressed bodies are decoded with
  /// `scratch_pool` batch by batch and released); the framing and every
  /// buffer's bounds are checked then. `validation` is the level every
  /// later scan checks the columns it reads at (kFull for untrusted files:
  /// a corrupt column fails the statements that read it, naming the path,
  /// record batch and column).
  /// Every scan reads the path again, so it must be a regular file or a
  /// directory ("-" and pipes are refused: Invalid).
  /// Errors: Invalid for an empty or non-identifier name, a name already
  /// registered, an empty directory, files of one directory with different
  /// schemas; the reader's errors (IOError, Invalid) with the path in front.
  Status RegisterPath(std::string_view name, const std::string& path, MemoryPool* scratch_pool,
                      ValidationLevel validation = ValidationLevel::kFull);

  /// Registers a Parquet or CSV file table (file_tables.h LoadFileTable:
  /// its file_source or csv_source set) as table `name`; its files are
  /// read by each scan. Errors: Invalid as above, or for a TableInfo
  /// without either.
  Status RegisterFileTable(std::string_view name, TableInfo table);

  /// Registers batches held in memory as table `name` (they are shared, not
  /// copied; each must have `schema`'s shape). Errors: Invalid as above, or
  /// for a batch whose shape does not match the schema.
  Status RegisterBatches(std::string_view name, SchemaPtr schema, std::vector<RecordBatchPtr> batches);

  /// Appends batches to in-memory table `name` (INSERT): each must have
  /// the table's schema. Statements planned before keep the rows they saw
  /// (they hold a copy of the TableInfo). Errors: KeyError when absent;
  /// Invalid for a file table, a null batch or a batch of another shape
  /// (nothing is appended then).
  Status AppendBatches(std::string_view name, std::vector<RecordBatchPtr> batches);

  /// Removes a table; KeyError when absent. Running scans keep their data.
  Status Unregister(std::string_view name);

  /// The table named `name` (case-insensitive); KeyError naming it when absent.
  Result<TableInfo> GetTable(std::string_view name) const;
  /// Every table, sorted by name.
  std::vector<TableInfo> ListTables() const;
  /// The columns of table `table` (case-insensitive), or of every table
  /// when `table` is empty; tables by name, columns in schema order.
  /// An unknown table gives an empty list.
  std::vector<ColumnInfo> ListColumns(std::string_view table = {}) const;

  /// A stream over the table's batches, in storage order. Batches of
  /// in-memory tables are returned as registered; IPC batches are decoded
  /// with `pool` (only non-zero-copy buffers are charged) at the table's
  /// validation level. Dictionary-encoded columns come out as they are
  /// stored (the engine decodes them). Errors: KeyError for an unknown
  /// table; the reader's errors on open and on Next (IOError when a file
  /// changed since registration shows up as Invalid/IOError from the
  /// decoder, or Invalid "schema changed").
  /// `columns` (top-level column indices): when given, only those columns
  /// are validated (at the table's level, errors naming the path, record
  /// batch and column) and the caller must not read the others; by default
  /// every column is.
  Result<std::unique_ptr<RecordBatchStream>> OpenScan(const TableInfo& table, MemoryPool* pool,
                                                      std::optional<std::vector<int>> columns = std::nullopt) const;

  /// The same batches as OpenScan, for several threads at once (see
  /// SharedScan). `morsel_rows` (> 0; default 64 Ki) bounds the rows of the
  /// slices in-memory batches are handed out in. `prune`: as SharedScan.
  /// Errors: Invalid for a column index outside the schema or a missing
  /// pool (file tables); the reader's errors come from Next().
  Result<std::shared_ptr<SharedScan>> OpenSharedScan(const TableInfo& table, MemoryPool* pool,
                                                     std::optional<std::vector<int>> columns = std::nullopt,
                                                     int64_t morsel_rows = 64 * 1024,
                                                     std::vector<parquet::StatsPredicate> prune = {}) const;

 private:
  mutable std::mutex mutex_;
  std::vector<TableInfo> tables_;  // sorted by name
};

/// Lower-case ASCII copy of `s` (identifier folding).
std::string FoldIdentifier(std::string_view s);

}  // namespace quiver::sql

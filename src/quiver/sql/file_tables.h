// quiver/sql/file_tables.h — tables named by where their files are, as
// DuckDB reads them (issue 36 section 3): `FROM 'data/x.parquet'`,
// `read_parquet('dir/*.parquet')`, `read_csv('x.csv', header => true)`.
//
// A path is a Parquet, CSV (.csv, .csv.gz, .csv.zst) or Arrow IPC (.arrow,
// .arrows, .feather, .ipc; or by the "ARROW1" / stream magic) file, a glob
// (glob(3): `*`, `?`, `[...]`; no `**`), or a directory: every regular
// file under it (recursively, in path order) whose name has the format's
// extension, hidden entries ('.' or '_' first, e.g. _SUCCESS) skipped.
// Several files make one table: each must have the first file's column
// names and types (else Invalid naming both files).
//
// Hive partitions: folders named key=value between the pattern's fixed
// prefix (the folders before its first glob character, or the directory
// given) and a file add one column per key after the file's columns, BIGINT
// when every value of the key is an integer, else VARCHAR. On by default
// when the first file's path has such a folder (as DuckDB's
// hive_partitioning auto-detection); every file must then have the same
// keys in the same order. A key that is also a column of the files is left
// to the files.
//
// Parquet files are opened and only their footers read (with the pool
// given, released at once): the table is a FileTableSource (file_scan.h)
// that each statement's scan reads a row group at a time. CSV files: only
// each file's head is read (its layout, with the pool given, released at
// once): the table is a CsvTableSource (csv_scan.h) that each statement's
// scan reads in bounded pieces, in parallel for uncompressed files. A mix
// of CSV and Parquet files is read whole into memory at planning time,
// charged to the pool given (the statement's scan pool). Partition filters
// (FileTableOptions::partition_values) skip the files of other partitions
// before any of their bytes are read. Arrow IPC files make a table as
// `--table` does (catalog.h OpenIpcTable: mapped, framing checked, read in
// place by each scan); they cannot share a table with other formats nor
// sit under hive folders, and are read from local disk only
// (NotImplemented for s3://).
//
// Errors: KeyError with SQLSTATE 42P01 naming the path when nothing exists
// there or no file matches; Invalid for a file of unknown format, differing
// schemas or partition keys; the readers' errors (naming the file).
// Object stores: a path "s3://BUCKET/KEY" (a file), "s3://BUCKET/PREFIX/"
// or one without an extension that is no object (a folder: its objects of
// the format's extension, hidden names skipped), or with glob characters in
// the key (a listing of the fixed prefix, matched per '/' segment) reads
// through FileTableOptions::s3 (formats/s3_files.h): Parquet footers and
// then only the needed column chunks by ranged GETs, CSV objects in byte
// ranges (uncompressed) or a block at a time (.gz / .zst).
// Without an S3 store such a path is Invalid naming it.
//
// Thread safety: pure functions (each call reads its files).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/formats/csv/csv_reader.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/sql/catalog.h"

namespace quiver::formats {
class S3Files;  // formats/s3_files.h
}  // namespace quiver::formats

namespace quiver::sql {

enum class FileFormat {
  kAuto,  ///< by extension (.parquet / .parq, .csv[.gz|.zst], .arrow/.arrows/.feather/.ipc), else by magic
  kParquet,
  kCsv,
  kArrow,  ///< Arrow IPC files or streams (catalog.h OpenIpcTable): mapped, scanned in place
};

struct FileTableOptions {
  FileFormat format = FileFormat::kAuto;
  /// Hive partition columns: nullopt = when the first file's path has a
  /// key=value folder; true / false = always / never.
  std::optional<bool> hive_partitioning;
  /// CSV files: delimiter, quote, header, NULL texts (csv_reader.h).
  formats::csv::CsvOptions csv;
  /// Partition key (lower-case) -> the values (as written in the folder names) that can
  /// match a filter of the statement: files whose value for the key is not
  /// listed are skipped (never read). Keys that are not partition keys are
  /// ignored. Pruning only: the filter itself still runs.
  std::map<std::string, std::vector<std::string>> partition_values;
  /// CSV files: bytes per parallel range of an uncompressed file (csv_scan.h).
  int64_t csv_range_bytes = int64_t{2} << 20;
  /// Where s3:// paths are read; null: they are refused.
  std::shared_ptr<formats::S3Files> s3;
};

/// What the tables a caller's statements name by path (`FROM 'x.parquet'`,
/// read_parquet) share with that caller (ExecuteOptions::path_tables):
/// whether their scans use the page index (FileTableSource::UsePageIndex;
/// `quiver sql --no-page-index`), and the Parquet sources they opened, for
/// their read / pruned counters (row groups, pages, bytes), as the
/// catalog's tables give theirs. Sources are kept (with their footers)
/// until this object goes. Thread-safe.
class PathTableScans {
 public:
  explicit PathTableScans(bool page_index = true) : page_index_(page_index) {}
  bool page_index() const { return page_index_; }
  /// Sets the source's page-index use and keeps it.
  void Add(const std::shared_ptr<const FileTableSource>& source);
  /// The sources added, in order.
  std::vector<std::shared_ptr<const FileTableSource>> sources() const;

 private:
  const bool page_index_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<const FileTableSource>> sources_;
};

/// Whether `name` (a table name as written, quotes removed) reads as a file
/// path rather than a table: it holds '/', '.', '*', '?' or '['
/// (characters no catalog table name has).
bool LooksLikeFilePath(std::string_view name);

/// The files `pattern` names (see above), sorted; `format` picks the
/// extension a directory's files must have (kAuto: .parquet / .parq).
/// s3:// patterns are listed through `s3`. Errors: KeyError 42P01 naming
/// the pattern when nothing matches; IOError from the directory walk or
/// the store; Invalid for an s3:// pattern without `s3`.
Result<std::vector<std::string>> ExpandFilePattern(const std::string& pattern, FileFormat format,
                                                   formats::S3Files* s3 = nullptr);

/// The table `patterns` (one or more, their files concatenated in order)
/// make, named `name`: for Parquet files a TableInfo with file_source set
/// (footers read), for CSV files one with csv_source set (heads read),
/// else an in-memory TableInfo read into `pool` memory.
/// Errors: as above (a file's footer errors at once; its data's when a
/// statement reads it).
Result<TableInfo> LoadFileTable(const std::string& name, const std::vector<std::string>& patterns,
                                const FileTableOptions& options, MemoryPool* pool);

}  // namespace quiver::sql

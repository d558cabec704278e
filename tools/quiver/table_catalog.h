// quiver CLI — the catalog of `quiver sql` and `quiver serve`: tables given
// as --table NAME=PATH (Arrow IPC or Parquet), every *.arrow and *.parquet
// file of a --tables DIR under its stem,
// and, with --tpch SCALE, the 8 TPC-H tables generated into --tpch-dir or a
// private temporary directory.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "quiver/cli.h"
#include "quiver/formats/s3_files.h"
#include "quiver/memory/spill_directory.h"
#include "quiver/sql/catalog.h"
#include "quiver/sql/file_tables.h"
#include "s3_options.h"

namespace quiver::cli {

/// A catalog and the temporary TPC-H directory it reads from (removed when
/// this goes; empty when none was made). Scans map the files, so keep this
/// alive as long as statements run.
struct TableCatalog {
  std::shared_ptr<sql::Catalog> catalog;
  std::string temp_dir;
  /// "tpch: scale S, 8 tables, N MiB in DIR[ (removed on exit)]", or empty.
  std::string tpch_summary;
  /// The S3 store of s3:// tables (null without --s3-endpoint): the
  /// catalog's tables and the statements' `FROM 's3://...'` share it (and
  /// its cache of footers).
  std::shared_ptr<MemoryPool> s3_pool;  ///< the cached footers ("s3-footers")
  std::shared_ptr<formats::S3Files> s3_files;
  TableCatalog() = default;
  TableCatalog(const TableCatalog&) = delete;
  TableCatalog& operator=(const TableCatalog&) = delete;
  ~TableCatalog();
};

/// Registers each "NAME=PATH" of `tables` (file, stream or directory of IPC
/// files; an s3://BUCKET/KEY object, s3://BUCKET/PREFIX/ folder or
/// s3://BUCKET/PREFIX/*.parquet pattern of Parquet (or CSV) objects, read
/// through the store of `s3` (sql/file_tables.h); a Parquet file, of which only the footer is read here: each
/// statement then reads the row groups and columns it needs; or a
/// *.csv[.gz|.zst] file, read whole into memory charged to the "load"
/// pool), then every regular file named *.arrow,
/// *.parquet or *.csv[.gz|.zst] (stem without .csv...) of each directory of
/// `table_dirs` under its stem (region.arrow -> region; in name order),
/// then, when `tpch_scale` > 0, writes TPC-H at that scale into `tpch_dir`
/// (or a temporary directory named after `temp_prefix` and the pid) and
/// registers it. Memory of loading and generating is charged to child pools
/// of ctx. Errors: Invalid for a malformed spec (naming it), a --tables path
/// that is not a directory or holds no *.arrow file (a usage error: exit 2),
/// the catalog's errors (a stem that is not an identifier, a name given
/// twice) and the generator's.
Result<std::unique_ptr<TableCatalog>> OpenTableCatalog(Context& ctx, const std::vector<std::string>& tables,
                                                       const std::vector<std::string>& table_dirs, double tpch_scale,
                                                       const std::string& tpch_dir, const std::string& temp_prefix,
                                                       const S3StoreOptions& s3 = {});

/// "; parquet R row groups read, P pruned[, pages PR read, PP pruned] (B
/// of column chunks)" (pages: of the row groups read by their page index): what the
/// scans of the catalog's Parquet file tables have read and left out by
/// their statistics since the tables were registered (sql/file_scan.h
/// counters, summed over the tables, and over the Parquet tables the
/// statements named by path, kept in `path_tables` when not null), or ""
/// when they have read and pruned nothing. Thread-safe; exact once the
/// statements have ended.
std::string FileTablesSummary(const sql::Catalog& catalog, const sql::PathTableScans* path_tables = nullptr);

/// Where OpenTableCatalog generates TPC-H data without a --tpch-dir:
/// "<temp dir>/<temp_prefix><pid>" (removed with the TableCatalog, and by
/// the interrupt guard of a command that exits on a signal). Pure but for
/// the pid and $TMPDIR.
std::string TpchTempDirectory(const std::string& temp_prefix);

/// Removes the TpchTempDirectory directories of dead quiver processes
/// (SIGKILL, a crash: "quiver-serve-tpch-<pid>" of `quiver serve`,
/// "quiver-tpch-<pid>" of `quiver sql`) under the temp directory, under the
/// rules of SweepDeadSpillDirectories (memory/spill_directory.h: the owner
/// pid gone, a real directory of this user); returns what went and prints
/// nothing (issue 35 #7).
SpillSweepReport SweepDeadTpchDirectories();

/// The *.arrow, *.parquet and *.csv[.gz|.zst] regular files of `dir` as
/// (stem, path; a CSV file's stem without .csv...), sorted
/// by stem. Errors: Invalid (through ctx.UsageError) when `dir` is not a
/// directory or holds no such file.
Result<std::vector<std::pair<std::string, std::string>>> ArrowFilesOf(Context& ctx, const std::string& dir);

}  // namespace quiver::cli

// quiver CLI — the catalog of `quiver sql` and `quiver serve`: tables given
// as --table NAME=PATH and, with --tpch SCALE, the 8 TPC-H tables generated
// into --tpch-dir or a private temporary directory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "quiver/cli.h"
#include "quiver/sql/catalog.h"

namespace quiver::cli {

/// A catalog and the temporary TPC-H directory it reads from (removed when
/// this goes; empty when none was made). Scans map the files, so keep this
/// alive as long as statements run.
struct TableCatalog {
  std::shared_ptr<sql::Catalog> catalog;
  std::string temp_dir;
  /// "tpch: scale S, 8 tables, N MiB in DIR[ (removed on exit)]", or empty.
  std::string tpch_summary;
  TableCatalog() = default;
  TableCatalog(const TableCatalog&) = delete;
  TableCatalog& operator=(const TableCatalog&) = delete;
  ~TableCatalog();
};

/// Registers each "NAME=PATH" of `tables` (file, stream or directory of IPC
/// files), then, when `tpch_scale` > 0, writes TPC-H at that scale into
/// `tpch_dir` (or a temporary directory named after `temp_prefix` and the
/// pid) and registers it. Memory of loading and generating is charged to
/// child pools of ctx. Errors: Invalid for a malformed spec (naming it), the
/// catalog's and the generator's errors.
Result<std::unique_ptr<TableCatalog>> OpenTableCatalog(Context& ctx, const std::vector<std::string>& tables,
                                                       double tpch_scale, const std::string& tpch_dir,
                                                       const std::string& temp_prefix);

}  // namespace quiver::cli

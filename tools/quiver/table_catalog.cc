#include "table_catalog.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "quiver/formats/csv/csv_file.h"
#include "quiver/formats/parquet/file_reader.h"
#include "quiver/server/statement_executor.h"
#include "quiver/sql/file_scan.h"
#include "quiver/sql/file_tables.h"
#include "quiver/sql/tpch_tables.h"

namespace quiver::cli {

TableCatalog::~TableCatalog() {
  std::error_code ec;
  if (!temp_dir.empty()) std::filesystem::remove_all(temp_dir, ec);
}

std::string TpchTempDirectory(const std::string& temp_prefix) {
  std::error_code ec;
  auto tmp = std::filesystem::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  return (tmp / (temp_prefix + std::to_string(::getpid()))).string();
}

SpillSweepReport SweepDeadTpchDirectories() {
  std::error_code ec;
  auto tmp = std::filesystem::temp_directory_path(ec);
  const std::string root = ec ? std::string("/tmp") : tmp.string();
  SpillSweepReport all;
  for (const char* prefix : {"quiver-serve-tpch-", "quiver-tpch-"}) {
    const SpillSweepReport r = SweepDeadProcessDirectories(root, prefix);
    all.directories += r.directories;
    all.bytes += r.bytes;
  }
  return all;
}

namespace {

// A CSV file as a file table: its head read now (with `pool`), its rows by
// each scan (sql/csv_scan.h).
Status RegisterCsvTable(sql::Catalog* catalog, const std::string& name, const std::string& path, MemoryPool* pool) {
  sql::FileTableOptions options;
  options.format = sql::FileFormat::kCsv;
  options.hive_partitioning = false;
  QUIVER_ASSIGN_OR_RETURN(auto table, sql::LoadFileTable(name, {path}, options, pool));
  return catalog->RegisterFileTable(name, std::move(table));
}

}  // namespace

Status RegisterTablePath(sql::Catalog* catalog, const std::string& name, const std::string& path, MemoryPool* pool) {
  if (!formats::csv::IsCsvPath(path)) return catalog->RegisterPath(name, path, pool);
  return RegisterCsvTable(catalog, name, path, pool);
}

Result<std::vector<std::pair<std::string, std::string>>> ArrowFilesOf(Context& ctx, const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return ctx.UsageError("--tables " + dir + ": not a directory");
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    const std::string file = e.path().filename().string();
    const auto ext = e.path().extension();
    if (ext == ".arrow" || ext == ".arrows" || ext == ".parquet") {
      out.emplace_back(e.path().stem().string(), e.path().string());
    } else if (formats::csv::IsCsvPath(file)) {
      out.emplace_back(file.substr(0, file.rfind(".csv")), e.path().string());
    }
  }
  if (ec) return Status::IOError("--tables " + dir + ": " + ec.message());
  if (out.empty())
    return ctx.UsageError("--tables " + dir +
                          ": no *.arrow file (nor *.arrows, *.parquet, *.csv[.gz|.zst]) in the directory");
  std::sort(out.begin(), out.end());
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i].first == out[i - 1].first) {
      return ctx.UsageError("--tables " + dir + ": " + std::filesystem::path(out[i - 1].second).filename().string() +
                            " and " + std::filesystem::path(out[i].second).filename().string() +
                            " would both be table '" + out[i].first +
                            "'; keep one of them in the directory, or name each with --table NAME=PATH");
    }
  }
  return out;
}

namespace {

/// Registers `path` as table `name`: a Parquet file (by its magic) becomes
/// a file table scanned in place (only its footer is read here, with
/// `pool`; sql/file_scan.h); a CSV file likewise (its head read here;
/// sql/csv_scan.h); anything else goes to Catalog::RegisterPath (Arrow IPC).
Status RegisterTable(sql::Catalog* catalog, const std::string& name, const std::string& path, MemoryPool* pool,
                     const std::shared_ptr<formats::S3Files>& s3) {
  if (formats::IsS3Url(path)) {
    sql::FileTableOptions options;
    options.s3 = s3;
    QUIVER_ASSIGN_OR_RETURN(auto table, sql::LoadFileTable(name, {path}, options, pool));
    if (table.file_source || table.csv_source) return catalog->RegisterFileTable(name, std::move(table));
    return catalog->RegisterBatches(name, table.schema, std::move(table.batches));
  }
  if (formats::csv::IsCsvPath(path)) return RegisterCsvTable(catalog, name, path, pool);
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec) && parquet::IsParquetFile(path)) {
    sql::FileTableOptions options;
    options.format = sql::FileFormat::kParquet;
    options.hive_partitioning = false;
    QUIVER_ASSIGN_OR_RETURN(auto table, sql::LoadFileTable(name, {path}, options, pool));
    return catalog->RegisterFileTable(name, std::move(table));
  }
  return catalog->RegisterPath(name, path, pool);
}

}  // namespace

Result<std::unique_ptr<TableCatalog>> OpenTableCatalog(Context& ctx, const std::vector<std::string>& tables,
                                                       const std::vector<std::string>& table_dirs, double tpch_scale,
                                                       const std::string& tpch_dir, const std::string& temp_prefix,
                                                       const S3StoreOptions& s3) {
  auto out = std::make_unique<TableCatalog>();
  out->catalog = std::make_shared<sql::Catalog>();
  if (!s3.endpoint.empty()) {
    out->s3_pool = ctx.Child("s3-footers");
    QUIVER_ASSIGN_OR_RETURN(out->s3_files, MakeS3Files(s3, out->s3_pool.get()));
  }
  {
    auto load_pool = ctx.Child("load");
    for (const auto& spec : tables) {
      QUIVER_ASSIGN_OR_RETURN(auto name_path, server::ParseTableSpec(spec));
      QUIVER_RETURN_NOT_OK(
          RegisterTable(out->catalog.get(), name_path.first, name_path.second, load_pool.get(), out->s3_files));
    }
    for (const auto& dir : table_dirs) {
      QUIVER_ASSIGN_OR_RETURN(auto files, ArrowFilesOf(ctx, dir));
      for (const auto& [name, path] : files) {
        QUIVER_RETURN_NOT_OK(RegisterTable(out->catalog.get(), name, path, load_pool.get(), out->s3_files));
      }
    }
  }
  if (tpch_scale > 0) {
    std::string dir = tpch_dir;
    if (dir.empty()) {
      out->temp_dir = TpchTempDirectory(temp_prefix);
      dir = out->temp_dir;
    }
    auto gen_pool = ctx.Child("tpch-gen");
    sql::TpchFilesOptions to;
    to.scale = tpch_scale;
    to.pool = gen_pool.get();
    QUIVER_ASSIGN_OR_RETURN(auto files, sql::RegisterTpchTables(out->catalog.get(), dir, to));
    int64_t bytes = 0;
    for (const auto& f : files) bytes += f.file_bytes;
    char line[512];
    std::snprintf(line, sizeof(line), "tpch: scale %g, 8 tables, %s in %s%s", tpch_scale, FormatBytes(bytes).c_str(),
                  dir.c_str(), out->temp_dir.empty() ? "" : " (removed on exit)");
    out->tpch_summary = line;
  }
  return out;
}

std::string FileTablesSummary(const sql::Catalog& catalog, const sql::PathTableScans* path_tables) {
  int64_t read = 0, pruned = 0, bytes = 0, pages_read = 0, pages_pruned = 0;
  auto add = [&](const sql::FileTableSource& s) {
    read += s.row_groups_read();
    pruned += s.row_groups_pruned();
    bytes += s.bytes_read();
    pages_read += s.pages_read();
    pages_pruned += s.pages_pruned();
  };
  for (const sql::TableInfo& t : catalog.ListTables()) {
    if (t.file_source) add(*t.file_source);
  }
  if (path_tables != nullptr) {
    for (const auto& s : path_tables->sources()) add(*s);
  }
  if (read == 0 && pruned == 0) return "";
  std::string pages;
  if (pages_read > 0 || pages_pruned > 0) {
    pages = ", pages " + std::to_string(pages_read) + " read, " + std::to_string(pages_pruned) + " pruned";
  }
  return "; parquet " + std::to_string(read) + " row groups read, " + std::to_string(pruned) + " pruned" + pages +
         " (" + FormatBytes(bytes) + " of column chunks)";
}

}  // namespace quiver::cli

// quiver/sql/file_tables.cc — see file_tables.h.
#include "quiver/sql/file_tables.h"

#include <glob.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "quiver/formats/csv/csv_file.h"
#include "quiver/formats/parquet/file_reader.h"
#include "quiver/formats/s3_files.h"
#include "quiver/sql/csv_scan.h"
#include "quiver/sql/file_scan.h"

namespace quiver::sql {

namespace {

namespace fs = std::filesystem;

// Parquet as the engine reads it: INT32 / INT64 DECIMAL(p <= 18) columns as
// decimal64, 8 bytes a value from the page to the kernels (a statement's
// results still leave as decimal128, engine.cc).
constexpr parquet::ArrowTypeOptions kSqlParquetTypes{.decimal64 = true};

bool HasGlobChar(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsParquetName(std::string_view s) { return EndsWith(s, ".parquet") || EndsWith(s, ".parq"); }

bool IsArrowName(std::string_view s) {
  return EndsWith(s, ".arrow") || EndsWith(s, ".arrows") || EndsWith(s, ".feather") || EndsWith(s, ".ipc");
}

// Whether local file `path` starts as an Arrow IPC file ("ARROW1") or
// stream (a 0xFFFFFFFF continuation marker) does (Arrow columnar format,
// "IPC File Format" and "Encapsulated message format").
bool LooksLikeArrowIpc(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  unsigned char head[6] = {};
  const size_t n = std::fread(head, 1, sizeof(head), f);
  std::fclose(f);
  if (n == 6 && std::memcmp(head, "ARROW1", 6) == 0) return true;
  return n >= 4 && head[0] == 0xFF && head[1] == 0xFF && head[2] == 0xFF && head[3] == 0xFF;
}

Status NotFound(const std::string& what) { return Status::KeyError(what).WithSqlState("42P01"); }

Status NoStore(const std::string& path) {
  return Status::Invalid("'" + path +
                         "': no S3 store configured (give --s3-endpoint, and the credentials in AWS_ACCESS_KEY_ID / "
                         "AWS_SECRET_ACCESS_KEY)");
}

// The bytes of `path`: a local file, or an object of the S3 store.
Result<std::shared_ptr<formats::RandomAccessSource>> OpenSource(const std::string& path,
                                                                const FileTableOptions& options) {
  if (formats::IsS3Url(path)) {
    if (!options.s3) return NoStore(path);
    return options.s3->Open(path);
  }
  QUIVER_ASSIGN_OR_RETURN(auto local, formats::LocalFileSource::Open(path));
  return std::shared_ptr<formats::RandomAccessSource>(std::move(local));
}

// The format of one file: by its name, else by its first bytes.
Result<FileFormat> FormatOf(const std::string& path, FileFormat asked) {
  if (asked != FileFormat::kAuto) return asked;
  if (IsParquetName(path)) return FileFormat::kParquet;
  if (formats::csv::IsCsvPath(path)) return FileFormat::kCsv;
  if (IsArrowName(path)) return FileFormat::kArrow;
  if (!formats::IsS3Url(path)) {
    if (parquet::IsParquetFile(path)) return FileFormat::kParquet;
    if (LooksLikeArrowIpc(path)) return FileFormat::kArrow;
  }
  return Status::Invalid("cannot tell the format of '" + path +
                         "' (not .parquet, .csv[.gz|.zst] nor .arrow/.arrows/.feather/.ipc; no Parquet or Arrow "
                         "magic): use read_csv or read_parquet");
}

// The key=value folders of `path`, in path order.
std::vector<std::pair<std::string, std::string>> HivePartsOf(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  const fs::path parent = fs::path(path).parent_path();
  for (const auto& part : parent) {
    const std::string s = part.string();
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    out.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  return out;
}

bool IsInteger(const std::string& s) {
  int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

struct FileBatches {
  SchemaPtr schema;
  std::vector<RecordBatchPtr> batches;
};

Result<FileBatches> ReadOneFile(const std::string& path, const FileTableOptions& options, MemoryPool* pool) {
  QUIVER_ASSIGN_OR_RETURN(FileFormat format, FormatOf(path, options.format));
  if (formats::IsS3Url(path)) {
    QUIVER_ASSIGN_OR_RETURN(auto source, OpenSource(path, options));
    if (format == FileFormat::kCsv) {
      QUIVER_ASSIGN_OR_RETURN(auto csv, formats::csv::ReadCsvSource(*source, options.csv, pool));
      return FileBatches{csv.schema, std::move(csv.batches)};
    }
    QUIVER_ASSIGN_OR_RETURN(auto table, parquet::ReadParquetSource(std::move(source), pool, kSqlParquetTypes));
    return FileBatches{table.schema, std::move(table.batches)};
  }
  if (format == FileFormat::kCsv) {
    QUIVER_ASSIGN_OR_RETURN(auto csv, formats::csv::ReadCsvFile(path, options.csv, pool));
    return FileBatches{csv.schema, std::move(csv.batches)};
  }
  QUIVER_ASSIGN_OR_RETURN(auto table, parquet::ReadParquetFile(path, pool, kSqlParquetTypes));
  return FileBatches{table.schema, std::move(table.batches)};
}

// Whether `a` has the names and types of b's first `n` fields.
bool SameColumns(const Schema& a, const Schema& b, size_t n) {
  if (a.fields.size() != n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (a.fields[i]->name != b.fields[i]->name || !a.fields[i]->type->Equals(*b.fields[i]->type)) return false;
  }
  return true;
}

// The columns of a table of files: the first file's fields (nullable),
// then the partition keys the files do not have; every later file must
// have the first one's fields.
struct TableColumns {
  std::shared_ptr<Schema> schema;
  std::vector<size_t> key_added;  // keys that become columns
  size_t num_file_fields = 0;

  Status Add(const Schema& fs, const std::vector<std::string>& keys, const std::vector<DataTypePtr>& key_types,
             const std::string& file, const std::string& first_file) {
    if (schema) {
      if (SameColumns(fs, *schema, num_file_fields)) return Status::OK();
      return Status::Invalid("'" + file + "' has other columns than '" + first_file + "': " + fs.ToString());
    }
    schema = std::make_shared<Schema>();
    for (const auto& field : fs.fields) {
      auto copy = std::make_shared<Field>(*field);
      copy->nullable = true;
      schema->fields.push_back(copy);
    }
    num_file_fields = schema->fields.size();
    for (size_t k = 0; k < keys.size(); ++k) {
      if (fs.FieldIndex(keys[k]) >= 0) continue;
      auto field = std::make_shared<Field>();
      field->name = keys[k];
      field->type = key_types[k];
      schema->fields.push_back(field);
      key_added.push_back(k);
    }
    return Status::OK();
  }
};

// The streaming table of Parquet files `files` (those of `kept`; parts
// and keys as LoadFileTable found them): only the footers are read here.
Result<TableInfo> OpenParquetTable(const std::string& name, const std::vector<std::string>& files,
                                   const std::vector<std::vector<std::pair<std::string, std::string>>>& parts,
                                   const std::vector<size_t>& kept, const std::vector<std::string>& keys,
                                   const std::vector<DataTypePtr>& key_types, const FileTableOptions& options,
                                   MemoryPool* pool) {
  std::vector<FileTableSource::File> opened;
  TableColumns columns;
  // Every file pruned: the schema still comes from the first file.
  const std::vector<size_t> order = kept.empty() ? std::vector<size_t>{0} : kept;
  for (size_t f : order) {
    QUIVER_ASSIGN_OR_RETURN(auto source, OpenSource(files[f], options));
    QUIVER_ASSIGN_OR_RETURN(auto reader, parquet::FileReader::Open(std::move(source), pool, kSqlParquetTypes));
    const Schema& fs = *reader->schema();
    QUIVER_RETURN_NOT_OK(columns.Add(fs, keys, key_types, files[f], files[order[0]]));
    FileTableSource::File file;
    file.reader = std::move(reader);
    for (size_t k : columns.key_added) file.partition_values.push_back(parts[f][k].second);
    opened.push_back(std::move(file));
  }
  if (kept.empty()) opened.clear();
  QUIVER_ASSIGN_OR_RETURN(auto source,
                          FileTableSource::Make(columns.schema, columns.num_file_fields, std::move(opened)));
  TableInfo info;
  info.name = name;
  info.schema = columns.schema;
  info.num_rows = source->num_rows();
  info.file_source = std::move(source);
  return info;
}

// The CSV table of files `files` (those of `kept`): only each file's head
// is read here (its layout); every scan reads the files again.
Result<TableInfo> OpenCsvTable(const std::string& name, const std::vector<std::string>& files,
                               const std::vector<std::vector<std::pair<std::string, std::string>>>& parts,
                               const std::vector<size_t>& kept, const std::vector<std::string>& keys,
                               const std::vector<DataTypePtr>& key_types, const FileTableOptions& options,
                               MemoryPool* pool) {
  std::vector<CsvTableSource::File> opened;
  TableColumns columns;
  const std::vector<size_t> order = kept.empty() ? std::vector<size_t>{0} : kept;
  for (size_t f : order) {
    QUIVER_ASSIGN_OR_RETURN(auto source, OpenSource(files[f], options));
    QUIVER_ASSIGN_OR_RETURN(auto file, CsvTableSource::OpenFile(std::move(source), options.csv, pool));
    opened.push_back(std::move(file));
  }
  // A file with no row (0 bytes) has no columns of its own: the others
  // give the table's (DuckDB's read_csv skips it so); all empty, the first.
  const bool any_rows =
      std::any_of(opened.begin(), opened.end(), [](const CsvTableSource::File& f) { return !f.layout.empty_text; });
  std::string first_file;
  for (size_t i = 0; i < opened.size(); ++i) {
    if (any_rows && opened[i].layout.empty_text) continue;
    if (first_file.empty()) first_file = files[order[i]];
    QUIVER_RETURN_NOT_OK(columns.Add(*opened[i].layout.schema, keys, key_types, files[order[i]], first_file));
  }
  for (size_t i = 0; i < opened.size(); ++i) {
    for (size_t k : columns.key_added) opened[i].partition_values.push_back(parts[order[i]][k].second);
  }
  if (kept.empty()) opened.clear();
  QUIVER_ASSIGN_OR_RETURN(auto source, CsvTableSource::Make(columns.schema, columns.num_file_fields, std::move(opened),
                                                            options.csv, options.csv_range_bytes));
  TableInfo info;
  info.name = name;
  info.schema = columns.schema;
  info.num_rows = source->estimated_rows();
  info.csv_source = std::move(source);
  return info;
}

}  // namespace

void PathTableScans::Add(const std::shared_ptr<const FileTableSource>& source) {
  source->UsePageIndex(page_index_);
  std::lock_guard<std::mutex> lock(mu_);
  sources_.push_back(source);
}

std::vector<std::shared_ptr<const FileTableSource>> PathTableScans::sources() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sources_;
}

bool LooksLikeFilePath(std::string_view name) { return name.find_first_of("/.*?[") != std::string_view::npos; }

Result<std::vector<std::string>> ExpandFilePattern(const std::string& pattern, FileFormat format,
                                                   formats::S3Files* s3) {
  std::vector<std::string> out;
  if (pattern.empty()) return NotFound("an empty file path");
  if (formats::IsS3Url(pattern)) {
    if (s3 == nullptr) return NoStore(pattern);
    static constexpr std::string_view kParquet[] = {".parquet", ".parq"};
    static constexpr std::string_view kCsv[] = {".csv", ".csv.gz", ".csv.zst"};
    if (format == FileFormat::kCsv) return s3->Expand(pattern, kCsv);
    if (format == FileFormat::kArrow) {
      return Status::NotImplemented("'" + pattern + "': Arrow IPC objects in S3 are not read (Parquet and CSV are)");
    }
    return s3->Expand(pattern, kParquet);
  }
  if (HasGlobChar(pattern)) {
    glob_t g{};
    const int rc = ::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g);
    if (rc == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) {
        std::error_code ec;
        if (fs::is_regular_file(g.gl_pathv[i], ec)) out.emplace_back(g.gl_pathv[i]);
      }
    }
    globfree(&g);
    if (rc == GLOB_ABORTED) return Status::IOError("cannot read the folders of '" + pattern + "'");
    if (rc == GLOB_NOSPACE) return Status::OutOfMemory("glob of '" + pattern + "'");
    if (out.empty()) return NotFound("no file matches '" + pattern + "'");
    std::sort(out.begin(), out.end());
    return out;
  }
  std::error_code ec;
  const auto st = fs::status(pattern, ec);
  if (fs::is_regular_file(st)) return std::vector<std::string>{pattern};
  if (!fs::is_directory(st)) return NotFound("no file or directory '" + pattern + "'");
  fs::recursive_directory_iterator it(pattern, fs::directory_options::none, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (!file.empty() && (file[0] == '.' || file[0] == '_')) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    const bool wanted = format == FileFormat::kCsv     ? formats::csv::IsCsvPath(file)
                        : format == FileFormat::kArrow ? IsArrowName(file)
                                                       : IsParquetName(file);
    if (wanted) out.push_back(it->path().string());
  }
  if (ec) return Status::IOError("reading the directory '" + pattern + "': " + ec.message());
  if (out.empty()) {
    const char* ext = format == FileFormat::kCsv ? ".csv" : format == FileFormat::kArrow ? ".arrow" : ".parquet";
    return NotFound("no " + std::string(ext) + " file in the directory '" + pattern + "'");
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<TableInfo> LoadFileTable(const std::string& name, const std::vector<std::string>& patterns,
                                const FileTableOptions& options, MemoryPool* pool) {
  std::vector<std::string> files;
  for (const auto& p : patterns) {
    QUIVER_ASSIGN_OR_RETURN(auto more, ExpandFilePattern(p, options.format, options.s3.get()));
    files.insert(files.end(), more.begin(), more.end());
  }
  // Partition keys: the first file's, then every file must agree.
  std::vector<std::vector<std::pair<std::string, std::string>>> parts(files.size());
  const bool hive = options.hive_partitioning.value_or(!HivePartsOf(files[0]).empty());
  std::vector<std::string> keys;
  if (hive) {
    for (size_t f = 0; f < files.size(); ++f) {
      parts[f] = HivePartsOf(files[f]);
      if (f == 0) {
        for (const auto& kv : parts[0]) keys.push_back(kv.first);
        continue;
      }
      bool same = parts[f].size() == keys.size();
      for (size_t k = 0; same && k < keys.size(); ++k) same = parts[f][k].first == keys[k];
      if (!same) {
        return Status::Invalid("hive partitions: '" + files[f] + "' has other key=value folders than '" + files[0] +
                               "'");
      }
    }
  }
  // Partition pruning: drop the files a filter's values exclude.
  std::vector<size_t> kept;
  for (size_t f = 0; f < files.size(); ++f) {
    bool keep = true;
    for (size_t k = 0; keep && k < keys.size(); ++k) {
      auto it = options.partition_values.find(FoldIdentifier(keys[k]));
      if (it == options.partition_values.end()) continue;
      const std::string& v = parts[f][k].second;
      keep = std::any_of(it->second.begin(), it->second.end(), [&](const std::string& w) {
        return w == v || (IsInteger(w) && IsInteger(v) && std::stoll(w) == std::stoll(v));
      });
    }
    if (keep) kept.push_back(f);
  }
  // Key types: BIGINT when every value (of every file) is an integer.
  std::vector<DataTypePtr> key_types(keys.size(), int64());
  for (size_t k = 0; k < keys.size(); ++k) {
    for (size_t f = 0; f < files.size(); ++f) {
      if (!IsInteger(parts[f][k].second)) key_types[k] = utf8();
    }
  }
  bool all_parquet = true;
  bool all_csv = true;
  size_t arrow_files = 0;
  const std::vector<size_t> read = kept.empty() ? std::vector<size_t>{0} : kept;
  for (size_t f : read) {
    QUIVER_ASSIGN_OR_RETURN(FileFormat format, FormatOf(files[f], options.format));
    all_parquet = all_parquet && format == FileFormat::kParquet;
    all_csv = all_csv && format == FileFormat::kCsv;
    if (format == FileFormat::kArrow) ++arrow_files;
  }
  if (arrow_files > 0) {
    // Arrow IPC files are mapped and scanned in place, as --table's are.
    if (arrow_files != read.size()) {
      return Status::Invalid("'" + files[read[0]] + "' and '" + files[read.back()] +
                             "': Arrow IPC files cannot share a table with Parquet or CSV files");
    }
    if (!keys.empty()) {
      return Status::NotImplemented("'" + files[0] + "': hive partition folders over Arrow IPC files");
    }
    std::vector<std::string> paths;
    for (size_t f : read) {
      if (formats::IsS3Url(files[f])) {
        return Status::NotImplemented("'" + files[f] + "': Arrow IPC objects in S3 are not read (Parquet and CSV are)");
      }
      paths.push_back(files[f]);
    }
    return OpenIpcTable(name, std::move(paths), pool);
  }
  if (all_parquet) return OpenParquetTable(name, files, parts, kept, keys, key_types, options, pool);
  if (all_csv) return OpenCsvTable(name, files, parts, kept, keys, key_types, options, pool);
  TableInfo info;
  info.name = name;
  std::shared_ptr<Schema> schema;
  std::vector<int> key_added;  // keys that become columns
  std::string first_file;
  for (size_t f : kept) {
    QUIVER_ASSIGN_OR_RETURN(FileBatches fb, ReadOneFile(files[f], options, pool));
    if (!schema) {
      schema = std::make_shared<Schema>();
      for (const auto& field : fb.schema->fields) {
        auto copy = std::make_shared<Field>(*field);
        copy->nullable = true;
        schema->fields.push_back(copy);
      }
      for (size_t k = 0; k < keys.size(); ++k) {
        if (fb.schema->FieldIndex(keys[k]) >= 0) continue;
        auto field = std::make_shared<Field>();
        field->name = keys[k];
        field->type = key_types[k];
        schema->fields.push_back(field);
        key_added.push_back(static_cast<int>(k));
      }
      first_file = files[f];
    } else if (!SameColumns(*fb.schema, *schema, schema->fields.size() - key_added.size())) {
      return Status::Invalid("'" + files[f] + "' has other columns than '" + first_file +
                             "': " + fb.schema->ToString());
    }
    for (const auto& b : fb.batches) {
      auto batch = std::make_shared<RecordBatch>();
      batch->schema = schema;
      batch->num_rows = b->num_rows;
      batch->columns = b->columns;
      for (int k : key_added) {
        QUIVER_ASSIGN_OR_RETURN(auto col, PartitionColumn(key_types[k], parts[f][k].second, b->num_rows, pool));
        batch->columns.push_back(std::move(col));
      }
      info.num_rows += b->num_rows;
      info.batches.push_back(std::move(batch));
    }
  }
  if (!schema) {
    // Every file pruned: the schema still comes from the first file.
    QUIVER_ASSIGN_OR_RETURN(FileBatches fb, ReadOneFile(files[0], options, pool));
    schema = std::make_shared<Schema>(*fb.schema);
    for (size_t k = 0; k < keys.size(); ++k) {
      if (fb.schema->FieldIndex(keys[k]) >= 0) continue;
      auto field = std::make_shared<Field>();
      field->name = keys[k];
      field->type = key_types[k];
      schema->fields.push_back(field);
    }
  }
  info.schema = schema;
  return info;
}

}  // namespace quiver::sql

// quiver/sql/catalog.cc — see catalog.h.
#include "quiver/sql/catalog.h"

#include <optional>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <list>
#include <map>

#include "quiver/formats/s3_files.h"
#include "quiver/ipc/mapped_file_cache.h"
#include "quiver/ipc/reader.h"
#include "quiver/sql/csv_scan.h"
#include "quiver/sql/file_scan.h"
#include "quiver/sql/ipc_batch_pruning.h"

namespace quiver::sql {

std::string FoldIdentifier(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

namespace {

Status CheckName(std::string_view name) {
  if (name.empty()) return Status::Invalid("table name is empty");
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) {
      return Status::Invalid("table name '" + std::string(name) +
                             "' is not an identifier (letters, digits, '_'; not starting with a digit)");
    }
  }
  return Status::OK();
}

// Opens one IPC path for reading at `validation` (a regular file through
// `mapped`, when given: its kept mapping).
Result<std::unique_ptr<ipc::RecordBatchReader>> OpenOne(const std::string& path, MemoryPool* pool,
                                                        ValidationLevel validation, bool message_metadata = false,
                                                        ipc::MappedFileCache* mapped = nullptr) {
  ipc::ReadOptions ro;
  ro.pool = pool;
  ro.validation = validation;
  ro.collect_message_metadata = message_metadata;
  std::error_code ec;
  if (mapped != nullptr && std::filesystem::is_regular_file(path, ec)) {
    auto bytes = mapped->Get(path);
    if (!bytes.ok()) return bytes.status();
    return ipc::RecordBatchReader::OpenFileBytes(std::move(*bytes), path, ro);
  }
  auto r = ipc::RecordBatchReader::OpenPath(path, ro);
  if (!r.ok()) return r.status().WithContext(path);
  return r;
}

// A stream over several IPC paths in turn (a directory table). With
// `columns`, only those top-level columns are validated (at `validation`;
// the reader itself validates nothing), so a scan does not pay for
// checking, e.g., the offsets of string columns it never reads. With
// `prune`, the batches whose recorded column ranges no row of which can
// pass (ipc_batch_pruning.h) are skipped before anything of them is read.
class MultiPathStream : public RecordBatchStream {
 public:
  MultiPathStream(SchemaPtr schema, std::vector<std::string> paths, MemoryPool* pool, ValidationLevel validation,
                  std::optional<std::vector<int>> columns, std::vector<parquet::StatsPredicate> prune = {},
                  std::shared_ptr<ipc::MappedFileCache> mapped = nullptr)
      : schema_(std::move(schema)),
        paths_(std::move(paths)),
        mapped_(std::move(mapped)),
        pool_(pool),
        validation_(validation),
        columns_(std::move(columns)),
        prune_(std::move(prune)) {}
  const SchemaPtr& schema() const override { return schema_; }
  /// The path of the last batch returned and its index in that file.
  const std::string& last_path() const { return paths_[next_path_ - 1]; }
  int64_t last_batch_index() const { return batch_index_ - 1; }
  Result<RecordBatchPtr> Next() override {
    while (true) {
      if (!reader_) {
        if (next_path_ >= paths_.size()) return RecordBatchPtr{};
        const std::string& path = paths_[next_path_++];
        QUIVER_ASSIGN_OR_RETURN(reader_, OpenOne(path, pool_, columns_ ? ValidationLevel::kNone : validation_,
                                                 !prune_.empty(), mapped_.get()));
        if (!reader_->schema()->Equals(*schema_)) {
          return Status::Invalid(path + ": schema changed since the table was registered");
        }
        batch_index_ = 0;
      }
      auto b = reader_->Next();
      if (!b.ok()) return b.status().WithContext(paths_[next_path_ - 1]);
      if (*b) {
        if (!prune_.empty() && !BatchRangesMayMatch(reader_->last_batch_stats().message_metadata, prune_)) {
          ++batch_index_;
          continue;
        }
        if (columns_ && validation_ != ValidationLevel::kNone) {
          for (int c : *columns_) {
            if (c < 0 || c >= static_cast<int>((*b)->columns.size()))
              return Status::Invalid("OpenScan: no column " + std::to_string(c));
            Status st = ValidateArray(*(*b)->columns[static_cast<size_t>(c)], validation_,
                                      schema_->fields[static_cast<size_t>(c)]->name);
            if (!st.ok()) {
              return st.WithContext("record batch " + std::to_string(batch_index_)).WithContext(paths_[next_path_ - 1]);
            }
          }
        }
        ++batch_index_;
        return b;
      }
      reader_.reset();
    }
  }

 private:
  SchemaPtr schema_;
  std::vector<std::string> paths_;
  std::shared_ptr<ipc::MappedFileCache> mapped_;  // null: each path mapped afresh
  MemoryPool* pool_;
  ValidationLevel validation_;
  std::optional<std::vector<int>> columns_;
  std::vector<parquet::StatsPredicate> prune_;
  size_t next_path_ = 0;
  int64_t batch_index_ = 0;
  std::unique_ptr<ipc::RecordBatchReader> reader_;
};

// A SharedScan read by one consumer (OpenScan of a file table).
class SharedScanStream final : public RecordBatchStream {
 public:
  explicit SharedScanStream(std::shared_ptr<SharedScan> scan) : scan_(std::move(scan)) {}
  const SchemaPtr& schema() const override { return scan_->schema(); }
  Result<RecordBatchPtr> Next() override { return scan_->Next(); }

 private:
  std::shared_ptr<SharedScan> scan_;
};

}  // namespace

// Rows of the slices a file table's row groups are decoded and handed out
// in: a slice of 4 decimal columns is 512 KiB, which the next operator
// reads while it is still in the cache, and whose memory (under the system
// allocator's mapping threshold) the next slice takes again. Whole SF1
// lineitem row groups (122,880 rows: 8 MiB of output for 4 decimal
// columns) went to memory and back, and doubled the scan's pool peak;
// 16 Ki-row slices (1 MiB) still cost the 4-column sum of SF1 lineitem
// about 8% more CPU and 670 more page faults than 8 Ki (4 Ki: a few % less
// again, but TPC-H over Parquet then pays more per batch; benchmarks.md
// "Parquet scans").
constexpr int64_t kFileSliceRows = 8 * 1024;
// Units of an object store's files fetched ahead of the workers (each holds its
// row group's compressed column chunks, from the scan's pool, until decoded):
// at most 2, and at most 64 MiB of row groups (FileTableSource::UnitBytes) in
// all, so files of 128 MB row groups (Spark's default) are not read ahead.
constexpr size_t kReadAheadUnits = 2;
constexpr int64_t kReadAheadBytes = int64_t{64} << 20;

// A file table's units (row groups) handed out a slice at a time. A thread
// takes the earliest opened unit no other thread is decoding (so units
// finish in storage order), else opens the next unit; when every opened
// unit is busy and none is left to open, it waits for one to be put back.
// Slice j of unit u is morsel number first_slice[u] + j: morsels are
// numbered in storage order, whatever thread decodes them.
struct SharedScan::FileUnits {
  struct Open {
    size_t unit = 0;
    int64_t next_slice = 0;
    bool busy = false;
    std::unique_ptr<FileTableSource::UnitReader> reader;  // null until opened
  };
  using Opened = Result<std::unique_ptr<FileTableSource::UnitReader>>;
  std::shared_ptr<const FileTableSource> source;
  MemoryPool* pool = nullptr;
  std::vector<FileTableSource::Unit> units;  // not pruned
  std::vector<int64_t> first_slice;          // per unit, then the total
  int64_t slice_rows = kFileSliceRows;
  size_t next = 0;       // next unit to open
  std::list<Open> open;  // opened units with rows left, in storage order
  std::condition_variable put_back;
  // Read-ahead of an object store's files: the units after `next` being
  // opened (their column chunks fetched) in the background while the
  // workers decode, at most kReadAheadUnits at once; a worker that claims
  // one takes its result. Their futures wait in their destructors, so a
  // scan ends only after its fetches have.
  bool remote = false;
  std::map<size_t, std::future<Opened>> read_ahead;

  // Starts the fetches of the units after `next` not yet started (under
  // the scan's lock).
  void StartReadAhead(const std::vector<int>& columns) {
    if (!remote) return;
    int64_t bytes = 0;
    for (const auto& [u, f] : read_ahead) bytes += source->UnitBytes(units[u]);
    for (size_t u = next; u < units.size() && u < next + kReadAheadUnits; ++u) {
      if (read_ahead.count(u)) continue;
      bytes += source->UnitBytes(units[u]);
      if (bytes > kReadAheadBytes) break;
      read_ahead.emplace(u, std::async(std::launch::async, [src = source, unit = units[u], columns, p = pool] {
                           return src->OpenUnit(unit, columns, p);
                         }));
    }
  }
};

SharedScan::SharedScan(const TableInfo& table, MemoryPool* pool, std::optional<std::vector<int>> columns,
                       int64_t morsel_rows, std::vector<parquet::StatsPredicate> prune)
    : schema_(table.schema),
      validation_(table.validation),
      columns_(std::move(columns)),
      morsel_rows_(morsel_rows > 0 ? morsel_rows : 64 * 1024) {
  if (table.csv_source) {
    if (!columns_) {
      columns_.emplace();
      for (size_t c = 0; c < schema_->fields.size(); ++c) columns_->push_back(static_cast<int>(c));
    }
    csv_ = std::make_unique<CsvScan>(table.csv_source, *columns_, pool);
  } else if (table.file_source) {
    file_units_ = std::make_unique<FileUnits>();
    file_units_->source = table.file_source;
    file_units_->pool = pool;
    for (const auto& path : table.file_source->paths()) file_units_->remote |= formats::IsS3Url(path);
    if (!columns_) {
      columns_.emplace();
      for (size_t c = 0; c < schema_->fields.size(); ++c) columns_->push_back(static_cast<int>(c));
    }
    // Row groups and pages pruned; a corrupt page index fails the scan's
    // first Next.
    auto units = table.file_source->PlanUnits(prune, *columns_, pool);
    if (units.ok()) {
      file_units_->units = std::move(*units);
    } else {
      error_ = units.status();
    }
    file_units_->slice_rows = std::min(morsel_rows_, kFileSliceRows);
    int64_t slices = 0;
    for (const auto& u : file_units_->units) {
      file_units_->first_slice.push_back(slices);
      slices += (u.num_rows + file_units_->slice_rows - 1) / file_units_->slice_rows;
    }
    file_units_->first_slice.push_back(slices);
  } else if (table.in_memory()) {
    batches_ = table.batches;
  } else {
    // The reader validates nothing; Next() validates the chosen columns
    // outside the lock, in the thread that took the batch.
    std::vector<int> all;
    if (!columns_) {
      for (size_t c = 0; c < schema_->fields.size(); ++c) all.push_back(static_cast<int>(c));
    }
    files_ = std::make_unique<MultiPathStream>(schema_, table.paths, pool, ValidationLevel::kNone,
                                               columns_ ? *columns_ : all, std::move(prune), table.mapped_files);
    if (!columns_) columns_ = std::move(all);
  }
}

SharedScan::~SharedScan() = default;

Result<RecordBatchPtr> SharedScan::Next(int64_t* sequence) {
  RecordBatchPtr b;
  std::string path;
  int64_t index = 0;
  int64_t ignored;
  if (sequence == nullptr) sequence = &ignored;
  if (file_units_) return NextUnit(sequence);
  if (csv_) return csv_->Next(sequence);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_.ok()) return error_;
    *sequence = handed_out_;
    if (!files_) {
      while (next_batch_ < batches_.size()) {
        const RecordBatchPtr& cur = batches_[next_batch_];
        if (cur->num_rows <= morsel_rows_ && next_row_ == 0) {
          ++next_batch_;
          ++handed_out_;
          return cur;
        }
        if (next_row_ >= cur->num_rows) {
          ++next_batch_;
          next_row_ = 0;
          continue;
        }
        const int64_t n = std::min(morsel_rows_, cur->num_rows - next_row_);
        auto slice = SliceBatch(cur, next_row_, n);
        next_row_ += n;
        ++handed_out_;
        return slice;
      }
      return RecordBatchPtr{};
    }
    auto* files = static_cast<MultiPathStream*>(files_.get());
    auto r = files->Next();
    if (!r.ok()) {
      error_ = r.status();
      return error_;
    }
    b = std::move(*r);
    if (!b) return b;
    ++handed_out_;
    path = files->last_path();
    index = files->last_batch_index();
  }
  if (validation_ != ValidationLevel::kNone) {
    for (int c : *columns_) {
      if (c < 0 || c >= static_cast<int>(b->columns.size()))
        return Status::Invalid("OpenScan: no column " + std::to_string(c));
      Status st = ValidateArray(*b->columns[static_cast<size_t>(c)], validation_,
                                schema_->fields[static_cast<size_t>(c)]->name);
      if (!st.ok()) return st.WithContext("record batch " + std::to_string(index)).WithContext(path);
    }
  }
  return b;
}

Result<RecordBatchPtr> SharedScan::NextUnit(int64_t* sequence) {
  FileUnits& f = *file_units_;
  FileUnits::Open* entry = nullptr;
  std::future<FileUnits::Opened> fetched;  // the claimed unit, when read ahead
  {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      if (!error_.ok()) return error_;
      for (auto& o : f.open) {
        if (!o.busy) {
          entry = &o;
          break;
        }
      }
      if (entry) break;
      if (f.next < f.units.size()) {
        f.open.push_back(FileUnits::Open{f.next++, 0, false, nullptr});
        entry = &f.open.back();
        if (auto it = f.read_ahead.find(entry->unit); it != f.read_ahead.end()) {
          fetched = std::move(it->second);
          f.read_ahead.erase(it);
        }
        f.StartReadAhead(*columns_);
        break;
      }
      if (f.open.empty()) {
        *sequence = handed_out_;
        return RecordBatchPtr{};
      }
      f.put_back.wait(lock);
    }
    entry->busy = true;
    *sequence = f.first_slice[entry->unit] + entry->next_slice++;
    ++handed_out_;
  }
  // Opened (its column chunks read) and decoded in this thread, outside the
  // lock; no other thread touches a busy entry.
  const FileTableSource::Unit& unit = f.units[entry->unit];
  Status st;
  RecordBatchPtr b;
  if (!entry->reader) {
    auto r = fetched.valid() ? fetched.get() : f.source->OpenUnit(unit, *columns_, f.pool);
    if (r.ok()) {
      entry->reader = std::move(*r);
    } else {
      st = r.status();
    }
  }
  if (st.ok()) {
    auto r = entry->reader->Next(f.slice_rows);
    if (r.ok()) {
      b = std::move(*r);
      if (!b) st = Status::Invalid("file table: row group " + std::to_string(unit.row_group) + " ended early");
    } else {
      st = r.status();
    }
  }
  if (st.ok() && validation_ != ValidationLevel::kNone) {
    for (int c : *columns_) {
      st = ValidateArray(*b->columns[static_cast<size_t>(c)], validation_,
                         schema_->fields[static_cast<size_t>(c)]->name);
      if (!st.ok()) {
        st = st.WithContext("row group " + std::to_string(unit.row_group))
                 .WithContext(f.source->paths()[static_cast<size_t>(unit.file)]);
        break;
      }
    }
  }
  std::unique_ptr<FileTableSource::UnitReader> finished;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!st.ok()) {
      if (error_.ok()) error_ = st;
    } else if (entry->reader->rows_left() == 0) {
      finished = std::move(entry->reader);
      for (auto it = f.open.begin(); it != f.open.end(); ++it) {
        if (&*it == entry) {
          f.open.erase(it);
          break;
        }
      }
    } else {
      entry->busy = false;
    }
  }
  f.put_back.notify_all();
  if (!st.ok()) return st;
  return b;
}

Result<std::shared_ptr<SharedScan>> Catalog::OpenSharedScan(const TableInfo& table, MemoryPool* pool,
                                                            std::optional<std::vector<int>> columns,
                                                            int64_t morsel_rows,
                                                            std::vector<parquet::StatsPredicate> prune) const {
  if (!table.in_memory() && pool == nullptr) return Status::Invalid("OpenSharedScan: pool is required");
  if (columns) {
    for (int c : *columns)
      if (c < 0 || c >= static_cast<int>(table.schema->fields.size()))
        return Status::Invalid("OpenSharedScan: no column " + std::to_string(c));
  }
  return std::make_shared<SharedScan>(table, pool, std::move(columns), morsel_rows, std::move(prune));
}

Result<TableInfo> OpenIpcTable(std::string_view name, std::vector<std::string> paths, MemoryPool* scratch_pool,
                               ValidationLevel validation) {
  if (scratch_pool == nullptr) return Status::Invalid("OpenIpcTable: scratch_pool is required");
  if (paths.empty()) return Status::Invalid("OpenIpcTable: no file");
  TableInfo info;
  info.name = FoldIdentifier(name);
  info.validation = validation;
  info.paths = std::move(paths);
  info.mapped_files = std::make_shared<ipc::MappedFileCache>();
  for (const std::string& p : info.paths) {
    // The reader checks the framing and every buffer's bounds; the values
    // (offsets, dictionary indices) are validated by the scans, of the
    // columns they read, at `validation` (counting the rows of an 8-column
    // string table validated every offset: 7% of a one-query process).
    QUIVER_ASSIGN_OR_RETURN(auto reader,
                            OpenOne(p, scratch_pool, ValidationLevel::kNone, false, info.mapped_files.get()));
    if (!info.schema) {
      info.schema = reader->schema();
    } else if (!reader->schema()->Equals(*info.schema)) {
      return Status::Invalid(p + ": schema differs from " + info.paths[0] + "'s (expected\n" + info.schema->ToString() +
                             "\nactual\n" + reader->schema()->ToString() + ")");
    }
    while (true) {
      auto b = reader->Next();
      if (!b.ok()) return b.status().WithContext(p);
      if (!*b) break;
      info.num_rows += (*b)->num_rows;
    }
  }
  return info;
}

Status Catalog::RegisterPath(std::string_view name, const std::string& path, MemoryPool* scratch_pool,
                             ValidationLevel validation) {
  QUIVER_RETURN_NOT_OK(CheckName(name));
  if (scratch_pool == nullptr) return Status::Invalid("RegisterPath: scratch_pool is required");
  std::error_code ec;
  if (path == "-" || (std::filesystem::exists(path, ec) && !std::filesystem::is_directory(path, ec) &&
                      !std::filesystem::is_regular_file(path, ec))) {
    return Status::Invalid(path + ": a table must be a regular file or a directory (scans read it again)");
  }
  std::vector<std::string> paths;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
      const std::string file_name = entry.path().filename().string();
      if (file_name.empty() || file_name[0] == '.') continue;
      std::error_code ec2;
      if (!entry.is_regular_file(ec2)) continue;
      paths.push_back(entry.path().string());
    }
    if (ec) return Status::IOError(path + ": cannot list directory: " + ec.message());
    std::sort(paths.begin(), paths.end());
    if (paths.empty()) return Status::Invalid(path + ": directory holds no files");
  } else {
    paths.push_back(path);
  }
  QUIVER_ASSIGN_OR_RETURN(TableInfo info, OpenIpcTable(name, std::move(paths), scratch_pool, validation));
  std::lock_guard lock(mutex_);
  auto it = std::lower_bound(tables_.begin(), tables_.end(), info.name,
                             [](const TableInfo& t, const std::string& n) { return t.name < n; });
  if (it != tables_.end() && it->name == info.name) {
    return Status::Invalid("table '" + info.name + "' is already registered");
  }
  tables_.insert(it, std::move(info));
  return Status::OK();
}

Status Catalog::RegisterFileTable(std::string_view name, TableInfo table) {
  QUIVER_RETURN_NOT_OK(CheckName(name));
  if ((!table.file_source && !table.csv_source) || !table.schema) {
    return Status::Invalid("RegisterFileTable: not a file table");
  }
  table.name = FoldIdentifier(name);
  std::lock_guard lock(mutex_);
  auto it = std::lower_bound(tables_.begin(), tables_.end(), table.name,
                             [](const TableInfo& t, const std::string& n) { return t.name < n; });
  if (it != tables_.end() && it->name == table.name) {
    return Status::Invalid("table '" + table.name + "' is already registered");
  }
  tables_.insert(it, std::move(table));
  return Status::OK();
}

Status Catalog::RegisterBatches(std::string_view name, SchemaPtr schema, std::vector<RecordBatchPtr> batches) {
  QUIVER_RETURN_NOT_OK(CheckName(name));
  if (!schema) return Status::Invalid("RegisterBatches: schema is required");
  TableInfo info;
  info.name = FoldIdentifier(name);
  for (size_t i = 0; i < batches.size(); ++i) {
    if (!batches[i]) return Status::Invalid("RegisterBatches: batch " + std::to_string(i) + " is null");
    QUIVER_RETURN_NOT_OK_CTX(batches[i]->CheckShape(), "table '" + info.name + "' batch " + std::to_string(i));
    if (!batches[i]->schema->Equals(*schema)) {
      return Status::Invalid("table '" + info.name + "' batch " + std::to_string(i) +
                             ": schema differs from the table's");
    }
    info.num_rows += batches[i]->num_rows;
  }
  info.schema = std::move(schema);
  info.batches = std::move(batches);
  std::lock_guard lock(mutex_);
  auto it = std::lower_bound(tables_.begin(), tables_.end(), info.name,
                             [](const TableInfo& t, const std::string& n) { return t.name < n; });
  if (it != tables_.end() && it->name == info.name) {
    return Status::Invalid("table '" + info.name + "' is already registered");
  }
  tables_.insert(it, std::move(info));
  return Status::OK();
}

Status Catalog::Unregister(std::string_view name) {
  const std::string n = FoldIdentifier(name);
  std::lock_guard lock(mutex_);
  auto it = std::find_if(tables_.begin(), tables_.end(), [&](const TableInfo& t) { return t.name == n; });
  if (it == tables_.end()) return Status::KeyError("no table named '" + n + "'");
  tables_.erase(it);
  return Status::OK();
}

Status Catalog::AppendBatches(std::string_view name, std::vector<RecordBatchPtr> batches) {
  const std::string n = FoldIdentifier(name);
  std::lock_guard lock(mutex_);
  auto it = std::find_if(tables_.begin(), tables_.end(), [&](const TableInfo& t) { return t.name == n; });
  if (it == tables_.end()) return Status::KeyError("no table named '" + n + "'");
  if (!it->in_memory()) return Status::Invalid("table '" + n + "' is a file: rows cannot be appended to it");
  int64_t rows = it->num_rows;
  for (size_t i = 0; i < batches.size(); ++i) {
    if (!batches[i]) return Status::Invalid("AppendBatches: batch " + std::to_string(i) + " is null");
    QUIVER_RETURN_NOT_OK_CTX(batches[i]->CheckShape(), "table '" + n + "' appended batch " + std::to_string(i));
    if (!batches[i]->schema->Equals(*it->schema))
      return Status::Invalid("table '" + n + "' appended batch " + std::to_string(i) +
                             ": schema differs from the table's");
    if (__builtin_add_overflow(rows, batches[i]->num_rows, &rows))
      return Status::Invalid("table '" + n + "': row count overflows");
  }
  // Readers hold copies of the TableInfo (and so of the batch list):
  // a statement already planned keeps the rows it saw.
  it->num_rows = rows;
  for (auto& b : batches) it->batches.push_back(std::move(b));
  return Status::OK();
}

Result<TableInfo> Catalog::GetTable(std::string_view name) const {
  const std::string n = FoldIdentifier(name);
  std::lock_guard lock(mutex_);
  for (const TableInfo& t : tables_) {
    if (t.name == n) return t;
  }
  return Status::KeyError("no table named '" + n + "'");
}

std::vector<TableInfo> Catalog::ListTables() const {
  std::lock_guard lock(mutex_);
  return tables_;
}

std::vector<ColumnInfo> Catalog::ListColumns(std::string_view table) const {
  const std::string n = FoldIdentifier(table);
  std::vector<ColumnInfo> out;
  std::lock_guard lock(mutex_);
  for (const TableInfo& t : tables_) {
    if (!n.empty() && t.name != n) continue;
    for (int c = 0; c < t.schema->num_fields(); ++c) {
      const Field& f = *t.schema->fields[static_cast<size_t>(c)];
      out.push_back({t.name, f.name, f.type, f.nullable, c});
    }
  }
  return out;
}

Result<std::unique_ptr<RecordBatchStream>> Catalog::OpenScan(const TableInfo& table, MemoryPool* pool,
                                                             std::optional<std::vector<int>> columns) const {
  if (table.in_memory()) {
    return std::unique_ptr<RecordBatchStream>(std::make_unique<BatchVectorStream>(table.schema, table.batches));
  }
  if (pool == nullptr) return Status::Invalid("OpenScan: pool is required");
  if (table.file_source || table.csv_source) {
    QUIVER_ASSIGN_OR_RETURN(auto shared, OpenSharedScan(table, pool, std::move(columns)));
    return std::unique_ptr<RecordBatchStream>(std::make_unique<SharedScanStream>(std::move(shared)));
  }
  return std::unique_ptr<RecordBatchStream>(
      std::make_unique<MultiPathStream>(table.schema, table.paths, pool, table.validation, std::move(columns),
                                        std::vector<parquet::StatsPredicate>{}, table.mapped_files));
}

}  // namespace quiver::sql

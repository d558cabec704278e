// quiver/sql/file_scan.cc — see file_scan.h.
#include "quiver/sql/file_scan.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace quiver::sql {

Result<ArrayDataPtr> PartitionColumn(const DataTypePtr& type, const std::string& value, int64_t rows,
                                     MemoryPool* pool) {
  auto a = std::make_shared<ArrayData>();
  a->type = type;
  a->length = rows;
  if (type->id == TypeId::kInt64) {
    int64_t v = 0;
    std::from_chars(value.data(), value.data() + value.size(), v);
    QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::Allocate(pool, rows * 8));
    auto* p = reinterpret_cast<int64_t*>(data->mutable_data());
    std::fill(p, p + rows, v);
    a->buffers = {nullptr, std::move(data)};
    return ArrayDataPtr(a);
  }
  const int64_t bytes = rows * static_cast<int64_t>(value.size());
  if (bytes > INT32_MAX) return Status::Invalid("partition value '" + value + "' repeated past 2 GiB in one batch");
  QUIVER_ASSIGN_OR_RETURN(auto offsets, Buffer::Allocate(pool, (rows + 1) * 4));
  QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::Allocate(pool, std::max<int64_t>(bytes, 1)));
  auto* o = reinterpret_cast<int32_t*>(offsets->mutable_data());
  uint8_t* d = data->mutable_data();
  for (int64_t i = 0; i <= rows; ++i) o[i] = static_cast<int32_t>(i * static_cast<int64_t>(value.size()));
  for (int64_t i = 0; i < rows; ++i) std::memcpy(d + i * value.size(), value.data(), value.size());
  a->buffers = {nullptr, std::move(offsets), std::move(data)};
  return ArrayDataPtr(a);
}

Result<std::shared_ptr<FileTableSource>> FileTableSource::Make(SchemaPtr schema, size_t num_file_fields,
                                                               std::vector<File> files) {
  if (num_file_fields > schema->fields.size()) {
    return Status::Invalid("file table: " + std::to_string(num_file_fields) + " file columns in a schema of " +
                           std::to_string(schema->fields.size()));
  }
  std::shared_ptr<FileTableSource> s(new FileTableSource());
  const size_t keys = schema->fields.size() - num_file_fields;
  for (size_t f = 0; f < files.size(); ++f) {
    const parquet::FileReader& r = *files[f].reader;
    if (files[f].partition_values.size() != keys) {
      return Status::Invalid(r.source().name() + ": " + std::to_string(files[f].partition_values.size()) +
                             " partition values for " + std::to_string(keys) + " partition columns");
    }
    if (r.schema()->fields.size() < num_file_fields) {
      return Status::Invalid(r.source().name() + ": " + std::to_string(r.schema()->fields.size()) +
                             " columns, the table " + std::to_string(num_file_fields));
    }
    for (int g = 0; g < r.num_row_groups(); ++g) {
      const int64_t rows = r.metadata().row_groups[static_cast<size_t>(g)].num_rows;
      if (rows == 0) continue;
      Unit u;
      u.file = static_cast<int>(f);
      u.row_group = g;
      u.num_rows = rows;
      s->units_.push_back(std::move(u));
    }
    if (__builtin_add_overflow(s->num_rows_, r.num_rows(), &s->num_rows_)) {
      return Status::Invalid(r.source().name() + ": the files' row counts overflow");
    }
  }
  s->schema_ = std::move(schema);
  s->num_file_fields_ = num_file_fields;
  s->files_ = std::move(files);
  return s;
}

std::vector<std::string> FileTableSource::paths() const {
  std::vector<std::string> out;
  for (const auto& f : files_) out.push_back(f.reader->source().name());
  return out;
}

int64_t FileTableSource::UnitBytes(const Unit& unit) const {
  if (unit.file < 0 || static_cast<size_t>(unit.file) >= files_.size()) return 0;
  const auto& groups = files_[static_cast<size_t>(unit.file)].reader->metadata().row_groups;
  if (unit.row_group < 0 || static_cast<size_t>(unit.row_group) >= groups.size()) return 0;
  int64_t bytes = 0;
  for (const auto& c : groups[static_cast<size_t>(unit.row_group)].columns)
    if (c.meta_data) bytes += std::max<int64_t>(c.meta_data->total_compressed_size, 0);
  return bytes;
}

std::vector<FileTableSource::Unit> FileTableSource::Units(std::span<const parquet::StatsPredicate> prune) const {
  std::vector<parquet::StatsPredicate> own;
  for (const auto& p : prune) {
    if (p.field >= 0 && static_cast<size_t>(p.field) < num_file_fields_) own.push_back(p);
  }
  if (own.empty()) return units_;
  std::vector<Unit> out;
  for (const Unit& u : units_) {
    if (parquet::RowGroupMayMatch(*files_[static_cast<size_t>(u.file)].reader, u.row_group, own)) out.push_back(u);
  }
  row_groups_pruned_.fetch_add(static_cast<int64_t>(units_.size() - out.size()), std::memory_order_relaxed);
  return out;
}

Result<std::vector<FileTableSource::Unit>> FileTableSource::PlanUnits(std::span<const parquet::StatsPredicate> prune,
                                                                      const std::vector<int>& columns,
                                                                      MemoryPool* pool) const {
  std::vector<Unit> kept = Units(prune);
  std::vector<parquet::StatsPredicate> own;
  for (const auto& p : prune) {
    if (p.field >= 0 && static_cast<size_t>(p.field) < num_file_fields_) own.push_back(p);
  }
  if (own.empty() || !page_index_.load(std::memory_order_relaxed)) return kept;
  std::vector<int> file_columns;
  for (int c : columns) {
    if (c >= 0 && static_cast<size_t>(c) < num_file_fields_) file_columns.push_back(c);
  }
  std::vector<Unit> out;
  for (const Unit& u : kept) {
    const parquet::FileReader& reader = *files_[static_cast<size_t>(u.file)].reader;
    QUIVER_ASSIGN_OR_RETURN(auto plan, parquet::PlanRowGroupPages(reader, u.row_group, own, file_columns, pool));
    if (!plan) {
      out.push_back(u);
      continue;
    }
    pages_pruned_.fetch_add(plan->pages_total - plan->pages_selected, std::memory_order_relaxed);
    if (plan->ranges.empty()) {
      row_groups_pruned_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    auto shared = std::make_shared<const parquet::RowGroupPagePlan>(std::move(*plan));
    for (size_t k = 0; k < shared->ranges.size(); ++k) {
      Unit r = u;
      r.first_row = shared->ranges[k].first_row;
      r.num_rows = shared->ranges[k].num_rows;
      r.first_of_row_group = k == 0;
      r.pages = shared;
      out.push_back(std::move(r));
    }
  }
  return out;
}

Result<std::unique_ptr<FileTableSource::UnitReader>> FileTableSource::OpenUnit(const Unit& unit,
                                                                               const std::vector<int>& columns,
                                                                               MemoryPool* pool) const {
  if (unit.file < 0 || static_cast<size_t>(unit.file) >= files_.size()) {
    return Status::Invalid("file table: no file " + std::to_string(unit.file));
  }
  const File& file = files_[static_cast<size_t>(unit.file)];
  std::unique_ptr<UnitReader> r(new UnitReader());
  r->source_ = this;
  r->unit_ = unit;
  r->columns_ = columns;
  r->pool_ = pool;
  r->rows_left_ = unit.num_rows;
  for (int c : columns) {
    if (c < 0 || static_cast<size_t>(c) >= schema_->fields.size()) {
      return Status::Invalid("file table: no column " + std::to_string(c));
    }
    if (static_cast<size_t>(c) < num_file_fields_) r->file_columns_.push_back(c);
  }
  if (!r->file_columns_.empty()) {
    if (unit.pages) {
      QUIVER_ASSIGN_OR_RETURN(r->slices_,
                              file.reader->OpenRowGroupRange(unit.row_group, r->file_columns_, *unit.pages,
                                                             parquet::RowRange{unit.first_row, unit.num_rows}, pool));
    } else {
      QUIVER_ASSIGN_OR_RETURN(r->slices_, file.reader->OpenRowGroup(unit.row_group, r->file_columns_, pool));
    }
    if (r->slices_->num_rows() != unit.num_rows) {
      return Status::Invalid(file.reader->source().name() + ": row group " + std::to_string(unit.row_group) +
                             " read as " + std::to_string(r->slices_->num_rows()) + " rows, the footer says " +
                             std::to_string(unit.num_rows));
    }
  }
  if (unit.first_of_row_group) row_groups_read_.fetch_add(1, std::memory_order_relaxed);
  return r;
}

FileTableSource::UnitReader::~UnitReader() = default;

Result<RecordBatchPtr> FileTableSource::UnitReader::Next(int64_t max_rows) {
  if (rows_left_ == 0) return RecordBatchPtr{};
  const int64_t n = std::min(std::max<int64_t>(max_rows, 1), rows_left_);
  const File& file = source_->files_[static_cast<size_t>(unit_.file)];
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = source_->schema_;
  batch->num_rows = n;
  batch->columns.resize(source_->schema_->fields.size());
  if (slices_) {
    QUIVER_ASSIGN_OR_RETURN(auto read, slices_->Next(n));
    if (!read || read->num_rows != n || read->columns.size() != file_columns_.size()) {
      return Status::Invalid(file.reader->source().name() + ": row group " + std::to_string(unit_.row_group) +
                             " ended before the footer's " + std::to_string(unit_.num_rows) + " rows");
    }
    for (size_t i = 0; i < file_columns_.size(); ++i) {
      batch->columns[static_cast<size_t>(file_columns_[i])] = std::move(read->columns[i]);
    }
  }
  for (int c : columns_) {
    const size_t k = static_cast<size_t>(c);
    if (k < source_->num_file_fields_) continue;
    QUIVER_ASSIGN_OR_RETURN(batch->columns[k],
                            PartitionColumn(source_->schema_->fields[k]->type,
                                            file.partition_values[k - source_->num_file_fields_], n, pool_));
  }
  rows_left_ -= n;
  return RecordBatchPtr(batch);
}

Result<RecordBatchPtr> FileTableSource::ReadUnit(const Unit& unit, const std::vector<int>& columns,
                                                 MemoryPool* pool) const {
  QUIVER_ASSIGN_OR_RETURN(auto reader, OpenUnit(unit, columns, pool));
  if (unit.num_rows == 0) {
    auto batch = std::make_shared<RecordBatch>();
    batch->schema = schema_;
    batch->columns.resize(schema_->fields.size());
    return RecordBatchPtr(batch);
  }
  return reader->Next(unit.num_rows);
}

int64_t FileTableSource::column_chunks_read() const {
  int64_t n = 0;
  for (const auto& f : files_) n += f.reader->column_chunks_read();
  return n;
}

int64_t FileTableSource::pages_read() const {
  int64_t n = 0;
  for (const auto& f : files_) n += f.reader->pages_read();
  return n;
}

int64_t FileTableSource::bytes_read() const {
  int64_t n = 0;
  for (const auto& f : files_) n += f.reader->bytes_read();
  return n;
}

}  // namespace quiver::sql

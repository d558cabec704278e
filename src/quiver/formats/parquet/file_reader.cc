#include "quiver/formats/parquet/file_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/validate.h"
#include "quiver/formats/parquet/column_reader.h"
#include "quiver/formats/parquet/nested_assembly.h"

namespace quiver::parquet {

bool LooksLikeParquet(std::span<const uint8_t> head) {
  return head.size() >= 4 && std::memcmp(head.data(), "PAR1", 4) == 0;
}

Result<std::unique_ptr<FileReader>> FileReader::Open(std::shared_ptr<formats::RandomAccessSource> source,
                                                     MemoryPool* pool, const ArrowTypeOptions& types) {
  const std::string& name = source->name();
  const int64_t size = source->size();
  if (size < 12) {
    return Status::Invalid(name + ": " + std::to_string(size) + " bytes is too short for a Parquet file");
  }
  QUIVER_ASSIGN_OR_RETURN(auto tail, source->ReadAt(size - 8, 8, pool));
  if (std::memcmp(tail->data() + 4, "PARE", 4) == 0) {
    return Status::NotImplemented(name + ": encrypted Parquet footer (PARE magic): encryption is not supported");
  }
  if (std::memcmp(tail->data() + 4, "PAR1", 4) != 0) {
    return Status::Invalid(name + ": not a Parquet file (no PAR1 magic at the end)");
  }
  const uint32_t footer_len = bit_util::LoadLE<uint32_t>(tail->data());
  if (footer_len > static_cast<uint64_t>(size - 12)) {
    return Status::Invalid(name + ": footer of " + std::to_string(footer_len) + " bytes in a file of " +
                           std::to_string(size));
  }
  QUIVER_ASSIGN_OR_RETURN(auto footer, source->ReadAt(size - 8 - footer_len, footer_len, pool));
  auto md = DecodeFileMetaData(footer->span());
  if (!md.ok()) return md.status().WithContext(name);
  std::unique_ptr<FileReader> r(new FileReader());
  r->source_ = std::move(source);
  r->metadata_ = std::move(*md);
  if (r->metadata_.encryption_algorithm) {
    return Status::NotImplemented(name + ": encrypted Parquet file (plaintext footer): encryption is not supported");
  }
  auto schema = BuildSchema(r->metadata_, types);
  if (!schema.ok()) return schema.status().WithContext(name);
  r->schema_ = std::move(*schema);
  const size_t leaves = r->schema_.leaves.size();
  for (size_t g = 0; g < r->metadata_.row_groups.size(); ++g) {
    const RowGroup& rg = r->metadata_.row_groups[g];
    if (rg.columns.size() != leaves) {
      return Status::Invalid(name + ": row group " + std::to_string(g) + " has " + std::to_string(rg.columns.size()) +
                             " column chunks, the schema " + std::to_string(leaves) + " columns");
    }
    if (rg.num_rows < 0 || __builtin_add_overflow(r->num_rows_, rg.num_rows, &r->num_rows_)) {
      return Status::Invalid(name + ": row group " + std::to_string(g) + ": row count " + std::to_string(rg.num_rows));
    }
  }
  return r;
}

Result<SchemaPtr> FileReader::ProjectedSchema(const std::vector<int>& columns) const {
  if (columns.empty()) return schema_.arrow_schema;
  auto s = std::make_shared<Schema>();
  s->metadata = schema_.arrow_schema->metadata;
  for (int c : columns) {
    if (c < 0 || c >= static_cast<int>(schema_.fields.size())) {
      return Status::Invalid(source_->name() + ": no column " + std::to_string(c));
    }
    s->fields.push_back(schema_.fields[c]);
  }
  return SchemaPtr(s);
}

Result<formats::ByteRange> FileReader::ChunkRange(int row_group, int leaf) const {
  const ColumnChunk& cc = metadata_.row_groups[row_group].columns[leaf];
  if (!cc.file_path.empty()) {
    return Status::NotImplemented("column chunk stored in another file ('" + cc.file_path + "')");
  }
  if (cc.encrypted) return Status::NotImplemented("encrypted column chunk: encryption is not supported");
  if (!cc.meta_data) return Status::Invalid("column chunk without metadata");
  const ColumnMetaData& m = *cc.meta_data;
  int64_t start = m.data_page_offset;
  if (m.dictionary_page_offset && *m.dictionary_page_offset > 0 && *m.dictionary_page_offset < start) {
    start = *m.dictionary_page_offset;
  }
  const int64_t length = m.total_compressed_size;
  if (start < 4 || length < 0 || start > source_->size() || length > source_->size() - start) {
    return Status::Invalid("column chunk at byte " + std::to_string(start) + " of " + std::to_string(length) +
                           " bytes outside the file of " + std::to_string(source_->size()) + " bytes");
  }
  return formats::ByteRange{start, length};
}

Result<ArrayDataPtr> FileReader::ReadColumn(int row_group, int field, MemoryPool* pool,
                                            std::span<std::shared_ptr<Buffer>> prefetched) const {
  const RowGroup& rg = metadata_.row_groups[row_group];
  const int first = schema_.first_leaf[field];
  const int count = schema_.num_leaves[field];
  if (count == 0) return Status::NotImplemented("a group without leaf columns");
  // The bytes of the field's i-th leaf column chunk.
  auto chunk = [&](int i) -> Result<std::shared_ptr<Buffer>> {
    QUIVER_ASSIGN_OR_RETURN(const formats::ByteRange range, ChunkRange(row_group, first + i));
    column_chunks_read_.fetch_add(1, std::memory_order_relaxed);
    bytes_read_.fetch_add(range.length, std::memory_order_relaxed);
    if (static_cast<size_t>(i) < prefetched.size() && prefetched[i]) return std::move(prefetched[i]);
    return source_->ReadAt(range.offset, range.length, pool);
  };
  if (!IsNestedField(schema_, field)) {
    const SchemaNode& node = schema_.nodes[schema_.top_nodes[field]];
    QUIVER_ASSIGN_OR_RETURN(auto bytes, chunk(0));
    return ReadFlatColumnChunk(node, *rg.columns[first].meta_data, std::move(bytes), rg.num_rows,
                               schema_.fields[field]->type, pool);
  }
  QUIVER_ASSIGN_OR_RETURN(auto types, NestedLeafTypes(schema_, field));
  std::vector<LeafLevels> leaves;
  for (int i = 0; i < count; ++i) {
    const SchemaNode& leaf = schema_.nodes[schema_.leaves[first + i]];
    const std::string where = "leaf column '" + leaf.element->name + "'";
    auto bytes = chunk(i);
    if (!bytes.ok()) return bytes.status().WithContext(where);
    auto levels = ReadLeafColumnChunk(leaf, *rg.columns[first + i].meta_data, std::move(*bytes), rg.num_rows,
                                      types[static_cast<size_t>(i)], pool);
    if (!levels.ok()) return levels.status().WithContext(where);
    leaves.push_back(std::move(*levels));
  }
  return AssembleNestedField(schema_, field, leaves, rg.num_rows, pool);
}

Result<std::shared_ptr<Buffer>> FileReader::LeafChunk(int row_group, int leaf, MemoryPool* pool,
                                                      std::shared_ptr<Buffer> prefetched) const {
  QUIVER_ASSIGN_OR_RETURN(const formats::ByteRange range, ChunkRange(row_group, leaf));
  column_chunks_read_.fetch_add(1, std::memory_order_relaxed);
  bytes_read_.fetch_add(range.length, std::memory_order_relaxed);
  if (prefetched) return prefetched;
  return source_->ReadAt(range.offset, range.length, pool);
}

Result<std::unique_ptr<RowGroupSlices>> FileReader::OpenRowGroup(int index, const std::vector<int>& columns,
                                                                 MemoryPool* pool) const {
  if (index < 0 || index >= num_row_groups()) {
    return Status::Invalid(source_->name() + ": no row group " + std::to_string(index));
  }
  std::vector<int> fields = columns;
  if (fields.empty()) {
    for (int i = 0; i < static_cast<int>(schema_.fields.size()); ++i) fields.push_back(i);
  }
  std::unique_ptr<RowGroupSlices> out(new RowGroupSlices());
  QUIVER_ASSIGN_OR_RETURN(out->schema_, ProjectedSchema(fields));
  const RowGroup& rg = metadata_.row_groups[index];
  out->num_rows_ = out->rows_left_ = rg.num_rows;
  for (int f : fields) {
    out->where_.push_back(source_->name() + ": row group " + std::to_string(index) + ", column '" +
                          schema_.fields[f]->name + "'");
  }
  // A remote source gets every column chunk's range at once (merged and
  // fetched in parallel there); a local one is read a chunk at a time.
  // (Each field's leaf column chunks, in order.)
  std::vector<std::shared_ptr<Buffer>> prefetched;
  if (source_->remote()) {
    std::vector<formats::ByteRange> ranges;
    for (size_t i = 0; i < fields.size(); ++i) {
      for (int l = 0; l < schema_.num_leaves[fields[i]]; ++l) {
        auto r = ChunkRange(index, schema_.first_leaf[fields[i]] + l);
        if (!r.ok()) return r.status().WithContext(out->where_[i]);
        ranges.push_back(*r);
      }
    }
    auto read = source_->ReadRanges(ranges, pool);
    if (!read.ok()) return read.status().WithContext(source_->name() + ": row group " + std::to_string(index));
    prefetched = std::move(*read);
  }
  size_t next_leaf = 0;
  for (size_t i = 0; i < fields.size(); ++i) {
    const int f = fields[i];
    const size_t leaves = static_cast<size_t>(schema_.num_leaves[f]);
    std::span<std::shared_ptr<Buffer>> mine;
    if (!prefetched.empty()) mine = std::span(prefetched).subspan(next_leaf, leaves);
    next_leaf += leaves;
    if (leaves == 1 && !IsNestedField(schema_, f)) {
      // Flat: decoded slice by slice in Next.
      const int leaf = schema_.first_leaf[f];
      const SchemaNode& node = schema_.nodes[schema_.top_nodes[f]];
      auto bytes = LeafChunk(index, leaf, pool, mine.empty() ? nullptr : std::move(mine[0]));
      if (!bytes.ok()) return bytes.status().WithContext(out->where_[i]);
      auto reader = ColumnChunkReader::Make(node, *rg.columns[leaf].meta_data, std::move(*bytes), rg.num_rows,
                                            schema_.fields[f]->type, pool);
      if (!reader.ok()) return reader.status().WithContext(out->where_[i]);
      out->columns_.push_back(std::move(*reader));
      out->nested_.push_back(nullptr);
    } else {
      // Nested: assembled whole from its leaves, handed out in slices.
      auto col = ReadColumn(index, f, pool, mine);
      if (!col.ok()) return col.status().WithContext(out->where_[i]);
      out->columns_.push_back(nullptr);
      out->nested_.push_back(std::move(*col));
    }
  }
  return out;
}

Result<RecordBatchPtr> FileReader::ReadRowGroup(int index, const std::vector<int>& columns, MemoryPool* pool) const {
  QUIVER_ASSIGN_OR_RETURN(auto slices, OpenRowGroup(index, columns, pool));
  if (slices->num_rows() == 0) {
    // No rows: every column's empty array (and its pages checked).
    auto batch = std::make_shared<RecordBatch>();
    batch->schema = slices->schema_;
    for (size_t i = 0; i < slices->columns_.size(); ++i) {
      if (!slices->columns_[i]) {
        batch->columns.push_back(slices->nested_[i]);
        continue;
      }
      auto col = slices->columns_[i]->Read(0);
      if (!col.ok()) return col.status().WithContext(slices->where_[i]);
      batch->columns.push_back(std::move(*col));
    }
    return RecordBatchPtr(batch);
  }
  return slices->Next(slices->num_rows());
}

RowGroupSlices::RowGroupSlices() = default;
RowGroupSlices::~RowGroupSlices() = default;

Result<RecordBatchPtr> RowGroupSlices::Next(int64_t max_rows) {
  if (rows_left_ == 0) return RecordBatchPtr{};
  const int64_t n = std::min(std::max<int64_t>(max_rows, 1), rows_left_);
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema_;
  batch->num_rows = n;
  batch->columns.reserve(columns_.size());
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (!columns_[i]) {
      // A nested field: the whole row group's array, or a slice of it.
      if (nested_first_ == 0 && n == nested_[i]->length) {
        batch->columns.push_back(nested_[i]);
      } else {
        auto col = SliceArray(nested_[i], nested_first_ + num_rows_ - rows_left_, n);
        if (!col.ok()) return col.status().WithContext(where_[i]);
        batch->columns.push_back(std::move(*col));
      }
      continue;
    }
    if (i < skip_.size() && skip_[i] > 0) {
      QUIVER_RETURN_NOT_OK_CTX(columns_[i]->Skip(skip_[i]), where_[i]);
      skip_[i] = 0;
    }
    auto col = columns_[i]->Read(n);
    if (!col.ok()) return col.status().WithContext(where_[i]);
    batch->columns.push_back(std::move(*col));
  }
  rows_left_ -= n;
  if (rows_left_ == 0) nested_.clear();
  return RecordBatchPtr(batch);
}

Result<ParquetTable> ReadParquetFile(const std::string& path, MemoryPool* pool, const ArrowTypeOptions& types) {
  QUIVER_ASSIGN_OR_RETURN(auto source, formats::LocalFileSource::Open(path));
  return ReadParquetSource(std::move(source), pool, types);
}

Result<ParquetTable> ReadParquetSource(std::shared_ptr<formats::RandomAccessSource> source, MemoryPool* pool,
                                       const ArrowTypeOptions& types) {
  const std::string path = source->name();
  QUIVER_ASSIGN_OR_RETURN(auto reader, FileReader::Open(std::move(source), pool, types));
  ParquetTable t;
  t.schema = reader->schema();
  for (int g = 0; g < reader->num_row_groups(); ++g) {
    QUIVER_ASSIGN_OR_RETURN(auto batch, reader->ReadRowGroup(g, {}, pool));
    QUIVER_RETURN_NOT_OK_CTX(ValidateBatch(*batch, ValidationLevel::kFull), path + ": row group " + std::to_string(g));
    t.batches.push_back(std::move(batch));
  }
  return t;
}

bool IsParquetFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  uint8_t head[4] = {0, 0, 0, 0};
  const size_t n = std::fread(head, 1, 4, f);
  std::fclose(f);
  return LooksLikeParquet(std::span<const uint8_t>(head, n));
}

}  // namespace quiver::parquet

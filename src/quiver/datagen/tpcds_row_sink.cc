// quiver/datagen/tpcds_row_sink.cc — RowSink and TpcdsRng (tpcds_rows.h).
#include <cstring>

#include "quiver/datagen/tpcds_rows.h"
#include "quiver/memory/buffer.h"

namespace quiver::datagen::tpcds {

TpcdsRng::TpcdsRng(uint64_t seed, TpcdsTable table, int64_t unit, uint64_t stream)
    : SplitMix64Stream(SplitMix64Mix(SplitMix64Mix(seed ^ ((static_cast<uint64_t>(table) + 1) * 0x7470636473ULL) ^
                                                   (stream * 0xA24BAED4963EE407ULL)) +
                                     static_cast<uint64_t>(unit) * kSplitMix64Golden)) {}

RowSink::RowSink(SchemaPtr schema) : schema_(std::move(schema)) {
  if (!schema_) return;
  columns_.resize(schema_->fields.size());
  for (size_t i = 0; i < columns_.size(); ++i) columns_[i].type = schema_->fields[i]->type;
}

RowSink& RowSink::Int(int64_t v) {
  if (cursor_ >= columns_.size() || columns_[cursor_].type->id == TypeId::kUtf8) {
    bad_row_ = true;
    return *this;
  }
  Column& c = columns_[cursor_++];
  c.ints.push_back(v);
  c.valid.push_back(1);
  return *this;
}

RowSink& RowSink::Str(std::string_view s) {
  if (cursor_ >= columns_.size() || columns_[cursor_].type->id != TypeId::kUtf8) {
    bad_row_ = true;
    return *this;
  }
  Column& c = columns_[cursor_++];
  c.chars.append(s);
  c.offsets.push_back(static_cast<int32_t>(c.chars.size()));
  c.valid.push_back(1);
  return *this;
}

RowSink& RowSink::Null() {
  if (cursor_ >= columns_.size()) {
    bad_row_ = true;
    return *this;
  }
  Column& c = columns_[cursor_++];
  if (c.type->id == TypeId::kUtf8) {
    c.offsets.push_back(static_cast<int32_t>(c.chars.size()));
  } else {
    c.ints.push_back(0);
  }
  c.valid.push_back(0);
  ++c.nulls;
  return *this;
}

void RowSink::EndRow() {
  if (cursor_ != columns_.size()) bad_row_ = true;
  cursor_ = 0;
  ++rows_;
}

void RowSink::Clear() {
  for (Column& c : columns_) {
    c.ints.clear();
    c.chars.clear();
    c.offsets.assign(1, 0);
    c.valid.clear();
    c.nulls = 0;
  }
  rows_ = 0;
  cursor_ = 0;
}

Result<RecordBatchPtr> RowSink::Finish(MemoryPool* pool) {
  auto batch = Build(pool);
  Clear();
  return batch;
}

Result<RecordBatchPtr> RowSink::Build(MemoryPool* pool) {
  if (bad_row_) return Status::Invalid("tpcds: a row writer appended values not matching its table's schema");
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema_;
  batch->num_rows = rows_;
  for (Column& c : columns_) {
    auto a = std::make_shared<ArrayData>();
    a->type = c.type;
    a->length = rows_;
    a->null_count = c.nulls;
    std::shared_ptr<Buffer> validity;
    if (c.nulls > 0) {
      QUIVER_ASSIGN_OR_RETURN(validity, Buffer::Allocate(pool, std::max<int64_t>(1, (rows_ + 7) / 8)));
      uint8_t* bits = validity->mutable_data();
      std::memset(bits, 0, static_cast<size_t>(validity->size()));
      for (int64_t i = 0; i < rows_; ++i) {
        if (c.valid[static_cast<size_t>(i)]) bits[i / 8] = static_cast<uint8_t>(bits[i / 8] | (1u << (i % 8)));
      }
    }
    if (c.type->id == TypeId::kUtf8) {
      if (c.chars.size() > static_cast<size_t>(INT32_MAX)) return Status::Invalid("tpcds: string column over 2 GiB");
      QUIVER_ASSIGN_OR_RETURN(auto off, Buffer::CopyOf(pool, {reinterpret_cast<const uint8_t*>(c.offsets.data()),
                                                              c.offsets.size() * sizeof(int32_t)}));
      QUIVER_ASSIGN_OR_RETURN(auto data,
                              Buffer::CopyOf(pool, {reinterpret_cast<const uint8_t*>(c.chars.data()), c.chars.size()}));
      a->buffers = {validity, off, data};
    } else {
      const int width = c.type->id == TypeId::kDecimal ? 16 : (c.type->id == TypeId::kInt64 ? 8 : 4);
      QUIVER_ASSIGN_OR_RETURN(auto buf, Buffer::Allocate(pool, std::max<int64_t>(1, rows_ * width)));
      uint8_t* p = buf->mutable_data();
      for (int64_t i = 0; i < rows_; ++i) {
        const int64_t v = c.ints[static_cast<size_t>(i)];
        if (width == 4) {
          const auto x = static_cast<int32_t>(v);
          std::memcpy(p + i * 4, &x, 4);
        } else if (width == 8) {
          std::memcpy(p + i * 8, &v, 8);
        } else {
          const int64_t hi = v < 0 ? -1 : 0;
          std::memcpy(p + i * 16, &v, 8);
          std::memcpy(p + i * 16 + 8, &hi, 8);
        }
      }
      a->buffers = {validity, buf};
    }
    batch->columns.push_back(std::move(a));
  }
  return RecordBatchPtr(std::move(batch));
}

}  // namespace quiver::datagen::tpcds

// quiver/testing/array_builders.h — small hand-built arrays and batches for
// tests (one set for every layer's tests), built from plain vectors with
// std::nullopt for nulls.
//
// Buffers are allocated from the pool the caller passes (which must be owned
// by a std::shared_ptr, as Buffer::Allocate requires); an allocation failure
// is a non-fatal test failure and leaves a null buffer. Arrays are shared
// and immutable once built. Thread safety: the functions keep no state.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/array_data.h"
#include "quiver/memory/buffer.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::testing {

template <typename T>
std::shared_ptr<Buffer> BufferOf(MemoryPool* pool, const std::vector<T>& values) {
  auto r = Buffer::CopyOf(pool, {reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(T)});
  EXPECT_OK(r);
  return r.ok() ? *r : nullptr;
}

inline std::shared_ptr<Buffer> BytesOf(MemoryPool* pool, const std::string& bytes) {
  auto r = Buffer::CopyOf(pool, {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  EXPECT_OK(r);
  return r.ok() ? *r : nullptr;
}

/// A bitmap with bit i = bits[i]; nullptr plus null_count 0 when all set.
inline std::shared_ptr<Buffer> BitmapOf(MemoryPool* pool, const std::vector<bool>& bits, int64_t* null_count) {
  std::vector<uint8_t> bytes(bit_util::BytesForBits(static_cast<int64_t>(bits.size())), 0);
  int64_t nulls = 0;
  for (size_t i = 0; i < bits.size(); ++i) {
    if (bits[i]) {
      bit_util::SetBit(bytes.data(), static_cast<int64_t>(i));
    } else {
      ++nulls;
    }
  }
  if (null_count) *null_count = nulls;
  return BufferOf(pool, bytes);
}

inline ArrayDataPtr MakeArray(DataTypePtr type, int64_t length, std::vector<std::shared_ptr<Buffer>> buffers,
                              std::vector<ArrayDataPtr> children = {}, int64_t null_count = 0, int64_t offset = 0) {
  auto a = std::make_shared<ArrayData>();
  a->type = std::move(type);
  a->length = length;
  a->null_count = null_count;
  a->offset = offset;
  a->buffers = std::move(buffers);
  a->children = std::move(children);
  return a;
}

template <typename T>
ArrayDataPtr PrimitiveArray(MemoryPool* pool, DataTypePtr type, const std::vector<std::optional<T>>& values) {
  std::vector<T> data;
  std::vector<bool> valid;
  for (const auto& v : values) {
    data.push_back(v.value_or(T{}));
    valid.push_back(v.has_value());
  }
  int64_t nulls = 0;
  auto bitmap = BitmapOf(pool, valid, &nulls);
  return MakeArray(std::move(type), static_cast<int64_t>(values.size()),
                   {nulls ? bitmap : nullptr, BufferOf(pool, data)}, {}, nulls);
}

inline ArrayDataPtr Int32Array(MemoryPool* pool, const std::vector<std::optional<int32_t>>& v) {
  return PrimitiveArray<int32_t>(pool, int32(), v);
}

inline ArrayDataPtr Int64Array(MemoryPool* pool, const std::vector<std::optional<int64_t>>& v) {
  return PrimitiveArray<int64_t>(pool, int64(), v);
}

inline ArrayDataPtr BoolArray(MemoryPool* pool, const std::vector<std::optional<bool>>& values) {
  std::vector<bool> data, valid;
  for (const auto& v : values) {
    data.push_back(v.value_or(false));
    valid.push_back(v.has_value());
  }
  int64_t nulls = 0;
  auto bitmap = BitmapOf(pool, valid, &nulls);
  return MakeArray(boolean(), static_cast<int64_t>(values.size()),
                   {nulls ? bitmap : nullptr, BitmapOf(pool, data, nullptr)}, {}, nulls);
}

/// utf8 (32-bit offsets) or large_utf8 (64-bit) strings.
template <typename O = int32_t>
ArrayDataPtr StringArray(MemoryPool* pool, const std::vector<std::optional<std::string>>& values) {
  std::vector<O> offsets{0};
  std::string data;
  std::vector<bool> valid;
  for (const auto& v : values) {
    if (v) data += *v;
    offsets.push_back(static_cast<O>(data.size()));
    valid.push_back(v.has_value());
  }
  int64_t nulls = 0;
  auto bitmap = BitmapOf(pool, valid, &nulls);
  return MakeArray(sizeof(O) == 4 ? utf8() : large_utf8(), static_cast<int64_t>(values.size()),
                   {nulls ? bitmap : nullptr, BufferOf(pool, offsets), BytesOf(pool, data)}, {}, nulls);
}

/// utf8 or, when `large`, large_utf8 (the width chosen at run time).
inline ArrayDataPtr StringArray(MemoryPool* pool, const std::vector<std::optional<std::string>>& values, bool large) {
  return large ? StringArray<int64_t>(pool, values) : StringArray<int32_t>(pool, values);
}

/// list<item: child type> with the given offsets (length = offsets.size() - 1).
inline ArrayDataPtr ListArray(MemoryPool* pool, ArrayDataPtr child, const std::vector<int32_t>& offsets,
                              const std::vector<bool>& valid = {}) {
  const int64_t length = static_cast<int64_t>(offsets.size()) - 1;
  int64_t nulls = 0;
  std::shared_ptr<Buffer> bitmap;
  if (!valid.empty()) bitmap = BitmapOf(pool, valid, &nulls);
  auto type = list(field("item", child->type));
  return MakeArray(type, length, {nulls ? bitmap : nullptr, BufferOf(pool, offsets)}, {std::move(child)}, nulls);
}

/// A record batch of `columns` (num_rows from the first column, 0 without
/// columns); a non-fatal failure when the shape does not match `schema`.
inline RecordBatchPtr Batch(SchemaPtr schema, std::vector<ArrayDataPtr> columns) {
  auto b = std::make_shared<RecordBatch>();
  b->schema = std::move(schema);
  b->num_rows = columns.empty() ? 0 : columns[0]->length;
  b->columns = std::move(columns);
  EXPECT_OK(b->CheckShape());
  return b;
}

/// Splits a batch into slices (offsets != 0) of at most `rows` rows; an empty
/// batch gives itself.
inline std::vector<RecordBatchPtr> Split(const RecordBatchPtr& b, int64_t rows) {
  std::vector<RecordBatchPtr> out;
  if (b->num_rows == 0) {
    out.push_back(b);
    return out;
  }
  for (int64_t off = 0; off < b->num_rows; off += rows) {
    auto s = SliceBatch(b, off, std::min(rows, b->num_rows - off));
    EXPECT_OK(s);
    if (s.ok()) out.push_back(*s);
  }
  return out;
}

}  // namespace quiver::testing

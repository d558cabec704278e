// quiver/join/tests/join_test_util.h — array builders, random inputs and
// a naive nested-loop reference join for the join layer's tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/array_data.h"
#include "quiver/columnar/validate.h"
#include "quiver/columnar/value_format.h"
#include "quiver/join/hash_join.h"
#include "quiver/memory/buffer.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::join::testing {

inline std::shared_ptr<Buffer> Bytes(MemoryPool* pool, const void* data, int64_t size) {
  auto r = Buffer::Allocate(pool, std::max<int64_t>(size, 1));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (size > 0) std::memcpy((*r)->mutable_data(), data, static_cast<size_t>(size));
  return *r;
}

inline std::shared_ptr<Buffer> Bitmap(MemoryPool* pool, const std::vector<bool>& valid, int64_t* nulls) {
  std::vector<uint8_t> bits(static_cast<size_t>(bit_util::BytesForBits(static_cast<int64_t>(valid.size()))) + 1, 0);
  *nulls = 0;
  for (size_t i = 0; i < valid.size(); ++i) {
    if (valid[i]) {
      bit_util::SetBit(bits.data(), static_cast<int64_t>(i));
    } else {
      ++*nulls;
    }
  }
  return Bytes(pool, bits.data(), static_cast<int64_t>(bits.size()));
}

template <typename T>
ArrayDataPtr Primitive(MemoryPool* pool, DataTypePtr type, const std::vector<std::optional<T>>& values) {
  std::vector<T> data;
  std::vector<bool> valid;
  for (const auto& v : values) {
    data.push_back(v.value_or(T{}));
    valid.push_back(v.has_value());
  }
  auto a = std::make_shared<ArrayData>();
  a->type = std::move(type);
  a->length = static_cast<int64_t>(values.size());
  int64_t nulls = 0;
  auto bitmap = Bitmap(pool, valid, &nulls);
  a->null_count = nulls;
  a->buffers = {nulls ? bitmap : nullptr,
                Bytes(pool, data.data(), static_cast<int64_t>(data.size() * sizeof(T)))};
  return a;
}

inline ArrayDataPtr Int64s(MemoryPool* pool, const std::vector<std::optional<int64_t>>& v) {
  return Primitive<int64_t>(pool, int64(), v);
}
inline ArrayDataPtr Int32s(MemoryPool* pool, const std::vector<std::optional<int32_t>>& v) {
  return Primitive<int32_t>(pool, int32(), v);
}

inline ArrayDataPtr Strings(MemoryPool* pool, const std::vector<std::optional<std::string>>& values,
                            bool large = false) {
  std::string data;
  std::vector<int64_t> offsets{0};
  std::vector<bool> valid;
  for (const auto& v : values) {
    if (v) data += *v;
    offsets.push_back(static_cast<int64_t>(data.size()));
    valid.push_back(v.has_value());
  }
  auto a = std::make_shared<ArrayData>();
  a->type = large ? large_utf8() : utf8();
  a->length = static_cast<int64_t>(values.size());
  int64_t nulls = 0;
  auto bitmap = Bitmap(pool, valid, &nulls);
  a->null_count = nulls;
  std::shared_ptr<Buffer> off;
  if (large) {
    off = Bytes(pool, offsets.data(), static_cast<int64_t>(offsets.size() * 8));
  } else {
    std::vector<int32_t> o32(offsets.begin(), offsets.end());
    off = Bytes(pool, o32.data(), static_cast<int64_t>(o32.size() * 4));
  }
  a->buffers = {nulls ? bitmap : nullptr, off, Bytes(pool, data.data(), static_cast<int64_t>(data.size()))};
  return a;
}

inline RecordBatchPtr Batch(SchemaPtr schema, std::vector<ArrayDataPtr> cols) {
  auto b = std::make_shared<RecordBatch>();
  b->schema = std::move(schema);
  b->num_rows = cols.empty() ? 0 : cols[0]->length;
  b->columns = std::move(cols);
  EXPECT_TRUE(b->CheckShape().ok()) << b->CheckShape().ToString();
  return b;
}

/// Splits a batch into pieces of at most `rows` rows (slices: offsets != 0).
inline std::vector<RecordBatchPtr> Split(const RecordBatchPtr& b, int64_t rows) {
  std::vector<RecordBatchPtr> out;
  if (b->num_rows == 0) {
    out.push_back(b);
    return out;
  }
  for (int64_t off = 0; off < b->num_rows; off += rows) {
    auto s = SliceBatch(b, off, std::min(rows, b->num_rows - off));
    EXPECT_TRUE(s.ok());
    out.push_back(*s);
  }
  return out;
}

/// prefix + text, spelled out (GCC 12 warns falsely on "x" + std::string).
inline std::string Cat(std::string prefix, const std::string& text) {
  prefix += text;
  return prefix;
}

inline std::string Cell(const ArrayData& a, int64_t row) {
  if (!a.IsValid(row)) return "null";
  return FormatValueToString(a, row, ValueFormat::kText);
}

/// Every output row rendered as "c1|c2|...", sorted (join output order is
/// unspecified). Also validates each batch fully.
inline std::vector<std::string> RenderSorted(const std::vector<RecordBatchPtr>& batches) {
  std::vector<std::string> rows;
  for (const auto& b : batches) {
    EXPECT_TRUE(ValidateBatch(*b, ValidationLevel::kFull).ok()) << ValidateBatch(*b, ValidationLevel::kFull).ToString();
    for (int64_t r = 0; r < b->num_rows; ++r) {
      std::string s;
      for (size_t c = 0; c < b->columns.size(); ++c) {
        if (c) s += '|';
        s += Cell(*b->columns[c], r);
      }
      rows.push_back(std::move(s));
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

/// The naive reference: nested loops over every (probe, build) pair, keys
/// equal when all are valid and render to the same text (so int32 5 equals
/// int64 5, utf8 equals large_utf8 by bytes). Output rendered as the join
/// renders it.
inline std::vector<std::string> NaiveJoin(const Schema& build_schema, const std::vector<RecordBatchPtr>& build,
                                          const Schema& probe_schema, const std::vector<RecordBatchPtr>& probe,
                                          const HashJoinOptions& o) {
  struct Row {
    const RecordBatch* b;
    int64_t i;
    bool null_key;
    std::string key;
  };
  auto rows_of = [](const std::vector<RecordBatchPtr>& batches, const std::vector<int>& keys) {
    std::vector<Row> rows;
    for (const auto& b : batches) {
      for (int64_t i = 0; i < b->num_rows; ++i) {
        Row r{b.get(), i, false, ""};
        for (int k : keys) {
          if (!b->columns[k]->IsValid(i)) r.null_key = true;
          r.key += Cell(*b->columns[k], i) + "\x1f";
        }
        rows.push_back(std::move(r));
      }
    }
    return rows;
  };
  const auto brows = rows_of(build, o.build_keys);
  const auto prows = rows_of(probe, o.probe_keys);
  std::vector<int> pout, bout;
  if (o.probe_output) pout = *o.probe_output; else for (int i = 0; i < probe_schema.num_fields(); ++i) pout.push_back(i);
  if (o.build_output) bout = *o.build_output; else for (int i = 0; i < build_schema.num_fields(); ++i) bout.push_back(i);
  const JoinType t = o.type;
  const bool with_build = t == JoinType::kInner || t == JoinType::kLeftOuter || t == JoinType::kRightOuter ||
                          t == JoinType::kFullOuter;
  auto render = [&](const Row* p, const Row* b) {
    std::string s;
    bool first = true;
    auto add = [&](const std::string& v) {
      if (!first) s += '|';
      first = false;
      s += v;
    };
    for (int c : pout) add(p ? Cell(*p->b->columns[c], p->i) : "null");
    if (with_build) {
      for (int c : bout) add(b ? Cell(*b->b->columns[c], b->i) : "null");
    }
    return s;
  };
  std::vector<std::string> out;
  std::vector<bool> build_matched(brows.size(), false);
  bool build_has_null = false;
  for (const auto& b : brows) build_has_null |= b.null_key;
  for (const auto& p : prows) {
    bool any = false;
    for (size_t j = 0; j < brows.size(); ++j) {
      const Row& b = brows[j];
      if (p.null_key || b.null_key || p.key != b.key) continue;
      any = true;
      build_matched[j] = true;
      if (with_build) out.push_back(render(&p, &b));
    }
    switch (t) {
      case JoinType::kLeftOuter: case JoinType::kFullOuter:
        if (!any) out.push_back(render(&p, nullptr));
        break;
      case JoinType::kLeftSemi:
        if (any) out.push_back(render(&p, nullptr));
        break;
      case JoinType::kLeftAnti:
        if (!any) out.push_back(render(&p, nullptr));
        break;
      case JoinType::kNullAwareAnti:
        if (brows.empty()) {
          out.push_back(render(&p, nullptr));
        } else if (!build_has_null && !p.null_key && !any) {
          out.push_back(render(&p, nullptr));
        }
        break;
      default:
        break;
    }
  }
  if (t == JoinType::kRightOuter || t == JoinType::kFullOuter) {
    for (size_t j = 0; j < brows.size(); ++j) {
      if (!build_matched[j]) out.push_back(render(nullptr, &brows[j]));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::vector<JoinType> AllJoinTypes() {
  return {JoinType::kInner,    JoinType::kLeftOuter, JoinType::kRightOuter,   JoinType::kFullOuter,
          JoinType::kLeftSemi, JoinType::kLeftAnti,  JoinType::kNullAwareAnti};
}

/// Collects output batches.
struct Collector {
  std::vector<RecordBatchPtr> batches;
  BatchSink sink() {
    return [this](RecordBatchPtr b) {
      batches.push_back(std::move(b));
      return Status::OK();
    };
  }
};

}  // namespace quiver::join::testing

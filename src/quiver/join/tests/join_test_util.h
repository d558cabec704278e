// quiver/join/tests/join_test_util.h — row rendering, output collection and
// a naive nested-loop reference join for the join layer's tests (the array
// builders are quiver/testing/array_builders.h).
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
#include "quiver/testing/array_builders.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::join::testing {

// The array builders (Int64Array, StringArray, Batch, Split, ...) are the
// shared ones of quiver_testing, visible here as join::testing::X.
using namespace ::quiver::testing;  // NOLINT(build/namespaces)

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
    EXPECT_OK(ValidateBatch(*b, ValidationLevel::kFull));
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
  if (o.probe_output)
    pout = *o.probe_output;
  else
    for (int i = 0; i < probe_schema.num_fields(); ++i) pout.push_back(i);
  if (o.build_output)
    bout = *o.build_output;
  else
    for (int i = 0; i < build_schema.num_fields(); ++i) bout.push_back(i);
  const JoinType t = o.type;
  const bool with_build =
      t == JoinType::kInner || t == JoinType::kLeftOuter || t == JoinType::kRightOuter || t == JoinType::kFullOuter;
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
      case JoinType::kLeftOuter:
      case JoinType::kFullOuter:
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
      default: break;
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

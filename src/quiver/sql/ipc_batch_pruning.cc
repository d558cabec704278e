// quiver/sql/ipc_batch_pruning.cc — see ipc_batch_pruning.h.
#include "quiver/sql/ipc_batch_pruning.h"

#include <optional>
#include <vector>

#include "quiver/ipc/column_ranges.h"

namespace quiver::sql {
namespace {

using Op = parquet::StatsPredicate::Op;

// Whether a value of `r` may pass `p`.
bool RangeMayPass(const ipc::ColumnRange& r, const parquet::StatsPredicate& p) {
  if (p.op == Op::kIsNull) return r.has_nulls;
  if (p.op == Op::kIsNotNull) return r.any;
  if (p.values.empty()) return true;
  for (const auto& v : p.values)
    if (v.kind != parquet::StatsValue::Kind::kInt) return true;
  if (!r.any) return false;  // a comparison is false on NULL
  const int64_t v = p.values[0].i;
  switch (p.op) {
    case Op::kEq: return r.min <= v && v <= r.max;
    case Op::kLt: return r.min < v;
    case Op::kLe: return r.min <= v;
    case Op::kGt: return r.max > v;
    case Op::kGe: return r.max >= v;
    case Op::kIn:
      for (const auto& x : p.values)
        if (r.min <= x.i && x.i <= r.max) return true;
      return false;
    default: return true;
  }
}

}  // namespace

bool BatchRangesMayMatch(const KeyValueMetadata& message_metadata,
                         std::span<const parquet::StatsPredicate> predicates) {
  if (predicates.empty()) return true;
  const std::string* text = nullptr;
  for (const auto& [k, v] : message_metadata)
    if (k == ipc::kColumnRangesMetadataKey) text = &v;
  if (text == nullptr) return true;
  const std::optional<std::vector<ipc::ColumnRange>> ranges = ipc::DecodeColumnRanges(*text);
  if (!ranges) return true;
  for (const parquet::StatsPredicate& p : predicates) {
    for (const ipc::ColumnRange& r : *ranges) {
      if (r.column == p.field && !RangeMayPass(r, p)) return false;
    }
  }
  return true;
}

}  // namespace quiver::sql

// quiver/formats/parquet/row_group_filter.cc — see row_group_filter.h.
#include "quiver/formats/parquet/row_group_filter.h"

#include <cmath>
#include <cstring>
#include <optional>

namespace quiver::parquet {

namespace {

// A statistic decoded to the kind its leaf is compared as.
std::optional<StatsValue> DecodeStat(int32_t type, const std::string& raw) {
  switch (static_cast<PhysicalType>(type)) {
    case PhysicalType::kInt32: {
      if (raw.size() != 4) return std::nullopt;
      int32_t v = 0;
      std::memcpy(&v, raw.data(), 4);
      return StatsValue::Int(v);
    }
    case PhysicalType::kInt64: {
      if (raw.size() != 8) return std::nullopt;
      int64_t v = 0;
      std::memcpy(&v, raw.data(), 8);
      return StatsValue::Int(v);
    }
    case PhysicalType::kFloat: {
      if (raw.size() != 4) return std::nullopt;
      float v = 0;
      std::memcpy(&v, raw.data(), 4);
      if (std::isnan(v)) return std::nullopt;
      return StatsValue::Double(v);
    }
    case PhysicalType::kDouble: {
      if (raw.size() != 8) return std::nullopt;
      double v = 0;
      std::memcpy(&v, raw.data(), 8);
      if (std::isnan(v)) return std::nullopt;
      return StatsValue::Double(v);
    }
    case PhysicalType::kByteArray: return StatsValue::Bytes(raw);
    default: return std::nullopt;
  }
}

// -1, 0, 1 as a < b, a == b, a > b; nullopt when they cannot be compared.
std::optional<int> Compare(const StatsValue& a, const StatsValue& b) {
  if (a.kind != b.kind) return std::nullopt;
  switch (a.kind) {
    case StatsValue::Kind::kInt: return a.i < b.i ? -1 : (a.i > b.i ? 1 : 0);
    case StatsValue::Kind::kDouble:
      if (std::isnan(a.d) || std::isnan(b.d)) return std::nullopt;
      return a.d < b.d ? -1 : (a.d > b.d ? 1 : 0);
    case StatsValue::Kind::kBytes: {
      // unsigned byte order (std::string::compare compares as unsigned char)
      const int c = a.bytes.compare(b.bytes);
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
  }
  return std::nullopt;
}

bool IsUnsigned(const SchemaElement& e) {
  if (e.logical_type.kind == LogicalType::kInteger && !e.logical_type.is_signed) return true;
  if (!e.converted_type) return false;
  const auto c = static_cast<ConvertedType>(*e.converted_type);
  return c == ConvertedType::kUint8 || c == ConvertedType::kUint16 || c == ConvertedType::kUint32 ||
         c == ConvertedType::kUint64;
}

}  // namespace

bool StatisticsMayMatch(const SchemaElement& e, const Statistics* stats, int64_t rows, const StatsPredicate& p) {
  std::optional<int64_t> nulls;
  if (stats && stats->null_count && *stats->null_count >= 0) nulls = stats->null_count;
  if (p.op == StatsPredicate::Op::kIsNull) return !nulls || *nulls > 0;
  const bool all_null = nulls && rows > 0 && *nulls >= rows;
  if (all_null) return false;  // every other operator is false (or NULL) on NULL
  if (p.op == StatsPredicate::Op::kIsNotNull || !stats || !e.type || IsUnsigned(e)) return true;
  const Statistics& s = *stats;
  const bool bytes = *e.type == static_cast<int32_t>(PhysicalType::kByteArray);
  const std::string* lo_raw = s.min_value ? &*s.min_value : (bytes ? nullptr : (s.min ? &*s.min : nullptr));
  const std::string* hi_raw = s.max_value ? &*s.max_value : (bytes ? nullptr : (s.max ? &*s.max : nullptr));
  if (lo_raw == nullptr || hi_raw == nullptr) return true;
  const auto lo = DecodeStat(*e.type, *lo_raw);
  const auto hi = DecodeStat(*e.type, *hi_raw);
  if (!lo || !hi || p.values.empty()) return true;
  auto in_range = [&](const StatsValue& v) {
    const auto a = Compare(*lo, v), b = Compare(v, *hi);
    return !a || !b || (*a <= 0 && *b <= 0);
  };
  const StatsValue& v = p.values[0];
  switch (p.op) {
    case StatsPredicate::Op::kEq: return in_range(v);
    case StatsPredicate::Op::kIn:
      for (const auto& w : p.values)
        if (in_range(w)) return true;
      return false;
    case StatsPredicate::Op::kLt: {
      const auto c = Compare(*lo, v);
      return !c || *c < 0;
    }
    case StatsPredicate::Op::kLe: {
      const auto c = Compare(*lo, v);
      return !c || *c <= 0;
    }
    case StatsPredicate::Op::kGt: {
      const auto c = Compare(*hi, v);
      return !c || *c > 0;
    }
    case StatsPredicate::Op::kGe: {
      const auto c = Compare(*hi, v);
      return !c || *c >= 0;
    }
    default: return true;
  }
}

int FlatLeafOf(const ParquetSchema& schema, int field) {
  if (field < 0 || field >= static_cast<int>(schema.fields.size())) return -1;
  const size_t f = static_cast<size_t>(field);
  if (schema.num_leaves[f] != 1) return -1;
  const SchemaNode& node = schema.nodes[static_cast<size_t>(schema.top_nodes[f])];
  if (node.leaf_index < 0 || node.max_rep != 0 || !node.is_leaf()) return -1;
  return node.leaf_index;
}

bool RowGroupMayMatch(const FileReader& reader, int row_group, std::span<const StatsPredicate> predicates) {
  if (row_group < 0 || row_group >= reader.num_row_groups()) return true;
  const ParquetSchema& schema = reader.parquet_schema();
  const RowGroup& rg = reader.metadata().row_groups[static_cast<size_t>(row_group)];
  for (const StatsPredicate& p : predicates) {
    const int leaf = FlatLeafOf(schema, p.field);
    if (leaf < 0 || static_cast<size_t>(leaf) >= rg.columns.size()) continue;
    const SchemaNode& node = schema.nodes[static_cast<size_t>(schema.leaves[static_cast<size_t>(leaf)])];
    const ColumnChunk& cc = rg.columns[static_cast<size_t>(leaf)];
    if (!cc.meta_data || cc.encrypted) continue;
    const Statistics* stats = cc.meta_data->statistics ? &*cc.meta_data->statistics : nullptr;
    if (!StatisticsMayMatch(*node.element, stats, rg.num_rows, p)) return false;
  }
  return true;
}

}  // namespace quiver::parquet

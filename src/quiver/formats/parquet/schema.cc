#include "quiver/formats/parquet/schema.h"

#include <functional>

namespace quiver::parquet {
namespace {

constexpr int kMaxDepth = 64;

bool Annotated(const SchemaElement& e, LogicalType::Kind logical, ConvertedType converted) {
  return e.logical_type.kind == logical || (e.converted_type && *e.converted_type == static_cast<int32_t>(converted));
}

// `narrow`: an INT32 / INT64 leaf read with ArrowTypeOptions::decimal64.
Result<DataTypePtr> DecimalType(int32_t precision, int32_t scale, bool narrow = false) {
  if (precision <= 0 || scale < 0 || scale > precision) {
    return Status::Invalid("DECIMAL(" + std::to_string(precision) + ", " + std::to_string(scale) + ")");
  }
  if (narrow && precision <= 18) return MakeDecimalType(64, precision, scale);
  return MakeDecimalType(precision > 38 ? 256 : 128, precision, scale);
}

TimeUnit UnitOf(int time_unit) {
  return time_unit == 1 ? TimeUnit::kMilli : time_unit == 2 ? TimeUnit::kMicro : TimeUnit::kNano;
}

}  // namespace

Result<DataTypePtr> LeafArrowType(const SchemaElement& e, const ArrowTypeOptions& options) {
  const LogicalType& lt = e.logical_type;
  const int32_t ct = e.converted_type.value_or(-1);
  auto is = [&](ConvertedType c) { return ct == static_cast<int32_t>(c); };
  const bool decimal = lt.kind == LogicalType::kDecimal || is(ConvertedType::kDecimal);
  const int32_t precision = lt.kind == LogicalType::kDecimal ? lt.precision : e.precision;
  const int32_t scale = lt.kind == LogicalType::kDecimal ? lt.scale : e.scale;
  switch (static_cast<PhysicalType>(e.type.value_or(-1))) {
    case PhysicalType::kBoolean: return boolean();
    case PhysicalType::kInt32:
      if (decimal) return DecimalType(precision, scale, options.decimal64);
      if (lt.kind == LogicalType::kInteger) {
        if (lt.bit_width != 8 && lt.bit_width != 16 && lt.bit_width != 32) {
          return Status::Invalid("INTEGER(" + std::to_string(lt.bit_width) + ") on INT32");
        }
        return MakeIntegerType(lt.bit_width, lt.is_signed);
      }
      if (lt.kind == LogicalType::kDate || is(ConvertedType::kDate)) return date32();
      if ((lt.kind == LogicalType::kTime && lt.time_unit == 1) || is(ConvertedType::kTimeMillis)) {
        return time32(TimeUnit::kMilli);
      }
      if (is(ConvertedType::kInt8)) return int8();
      if (is(ConvertedType::kInt16)) return int16();
      if (is(ConvertedType::kUint8)) return uint8();
      if (is(ConvertedType::kUint16)) return uint16();
      if (is(ConvertedType::kUint32)) return uint32();
      return int32();
    case PhysicalType::kInt64:
      if (decimal) return DecimalType(precision, scale, options.decimal64);
      if (lt.kind == LogicalType::kInteger) {
        if (lt.bit_width != 64) return Status::Invalid("INTEGER(" + std::to_string(lt.bit_width) + ") on INT64");
        return lt.is_signed ? int64() : uint64();
      }
      if (lt.kind == LogicalType::kTime && (lt.time_unit == 2 || lt.time_unit == 3))
        return time64(UnitOf(lt.time_unit));
      if (is(ConvertedType::kTimeMicros)) return time64(TimeUnit::kMicro);
      if (lt.kind == LogicalType::kTimestamp && lt.time_unit >= 1 && lt.time_unit <= 3) {
        return timestamp(UnitOf(lt.time_unit), lt.adjusted_to_utc ? "UTC" : "");
      }
      if (is(ConvertedType::kTimestampMillis)) return timestamp(TimeUnit::kMilli, "UTC");
      if (is(ConvertedType::kTimestampMicros)) return timestamp(TimeUnit::kMicro, "UTC");
      if (is(ConvertedType::kUint64)) return uint64();
      return int64();
    case PhysicalType::kInt96: return timestamp(TimeUnit::kNano);
    case PhysicalType::kFloat: return float32();
    case PhysicalType::kDouble: return float64();
    case PhysicalType::kByteArray:
      if (decimal) return DecimalType(precision, scale);
      if (lt.kind == LogicalType::kString || lt.kind == LogicalType::kEnum || lt.kind == LogicalType::kJson ||
          is(ConvertedType::kUtf8) || is(ConvertedType::kEnum) || is(ConvertedType::kJson)) {
        return utf8();
      }
      return binary();
    case PhysicalType::kFixedLenByteArray:
      if (decimal) return DecimalType(precision, scale);
      if (lt.kind == LogicalType::kFloat16 && e.type_length == 2) return float16();
      if (is(ConvertedType::kInterval) && e.type_length == 12) return interval_month_day_nano();
      return MakeFixedSizeBinaryType(e.type_length);
  }
  return Status::Invalid("unknown physical type " + std::to_string(e.type.value_or(-1)));
}

bool ListElementIsRepeatedNode(const ParquetSchema& s, int list_node) {
  const SchemaNode& rn = s.nodes[s.nodes[list_node].children[0]];
  return rn.children.empty() || rn.children.size() > 1 || rn.element->name == "array" ||
         rn.element->name == s.nodes[list_node].element->name + "_tuple";
}

Result<ParquetSchema> BuildSchema(const FileMetaData& md, const ArrowTypeOptions& options) {
  ParquetSchema s;
  if (md.schema.empty()) return Status::Invalid("the schema has no root element");
  s.nodes.resize(md.schema.size());
  size_t next = 0;
  // Depth-first: each element is followed by its num_children subtrees.
  std::function<Status(int, int, int16_t, int16_t)> build = [&](int parent, int depth, int16_t def,
                                                                int16_t rep) -> Status {
    if (depth > kMaxDepth) return Status::Invalid("schema nested deeper than " + std::to_string(kMaxDepth));
    if (next >= md.schema.size()) return Status::Invalid("schema: children counts exceed the elements given");
    const int index = static_cast<int>(next++);
    const SchemaElement& e = md.schema[index];
    SchemaNode& node = s.nodes[index];
    node.element = &e;
    node.parent = parent;
    if (parent >= 0) {
      const int32_t r = e.repetition.value_or(static_cast<int32_t>(Repetition::kOptional));
      if (r < 0 || r > 2) return Status::Invalid("schema element '" + e.name + "': repetition " + std::to_string(r));
      if (r != static_cast<int32_t>(Repetition::kRequired)) ++def;
      if (r == static_cast<int32_t>(Repetition::kRepeated)) ++rep;
    }
    node.max_def = def;
    node.max_rep = rep;
    if (e.num_children < 0 || static_cast<size_t>(e.num_children) > md.schema.size() - next) {
      return Status::Invalid("schema element '" + e.name + "': " + std::to_string(e.num_children) + " children with " +
                             std::to_string(md.schema.size() - next) + " elements left");
    }
    if (e.num_children == 0 && parent >= 0) {
      if (!e.type) return Status::Invalid("schema element '" + e.name + "': a leaf without a physical type");
      if (*e.type < 0 || *e.type > 7) {
        return Status::Invalid("schema element '" + e.name + "': physical type " + std::to_string(*e.type));
      }
      if (*e.type == static_cast<int32_t>(PhysicalType::kFixedLenByteArray) &&
          (e.type_length <= 0 || e.type_length > (1 << 24))) {
        return Status::Invalid("schema element '" + e.name + "': FIXED_LEN_BYTE_ARRAY length " +
                               std::to_string(e.type_length));
      }
      s.nodes[index].leaf_index = static_cast<int>(s.leaves.size());
      s.leaves.push_back(index);
      return Status::OK();
    }
    for (int32_t c = 0; c < e.num_children; ++c) {
      const int child = static_cast<int>(next);
      QUIVER_RETURN_NOT_OK(build(index, depth + 1, def, rep));
      s.nodes[index].children.push_back(child);
    }
    return Status::OK();
  };
  QUIVER_RETURN_NOT_OK(build(-1, 0, 0, 0));
  if (next != md.schema.size()) {
    return Status::Invalid("schema: " + std::to_string(md.schema.size() - next) + " elements after the root's subtree");
  }

  // Arrow fields (LogicalTypes.md "Nested Types", backward-compatibility rules).
  std::function<Result<FieldPtr>(int, int)> field_of;
  // The type of node n's values, its own repetition aside.
  std::function<Result<DataTypePtr>(int, int)> type_of = [&](int n, int depth) -> Result<DataTypePtr> {
    if (depth > kMaxDepth) return Status::Invalid("schema nested too deeply");
    const SchemaNode& node = s.nodes[n];
    const SchemaElement& e = *node.element;
    if (node.children.empty()) {
      auto t = LeafArrowType(e, options);
      if (!t.ok()) return t.status().WithContext("column '" + e.name + "'");
      return *t;
    }
    if (Annotated(e, LogicalType::kList, ConvertedType::kList) && node.children.size() == 1 &&
        s.nodes[node.children[0]].element->repetition == static_cast<int32_t>(Repetition::kRepeated)) {
      const int r = node.children[0];
      const SchemaNode& rn = s.nodes[r];
      FieldPtr element;
      if (ListElementIsRepeatedNode(s, n)) {
        // Two-level: the repeated node is the element (required).
        QUIVER_ASSIGN_OR_RETURN(auto t, type_of(r, depth + 1));
        element = field(rn.element->name, t, false);
      } else {
        QUIVER_ASSIGN_OR_RETURN(element, field_of(rn.children[0], depth + 2));
      }
      return list(element);
    }
    if ((Annotated(e, LogicalType::kMap, ConvertedType::kMap) ||
         Annotated(e, LogicalType::kMap, ConvertedType::kMapKeyValue)) &&
        node.children.size() == 1 && s.nodes[node.children[0]].children.size() == 2 &&
        s.nodes[node.children[0]].element->repetition == static_cast<int32_t>(Repetition::kRepeated)) {
      const SchemaNode& kv = s.nodes[node.children[0]];
      QUIVER_ASSIGN_OR_RETURN(auto key, field_of(kv.children[0], depth + 2));
      QUIVER_ASSIGN_OR_RETURN(auto value, field_of(kv.children[1], depth + 2));
      auto entries = field("key_value", struct_({field(key->name, key->type, false), value}), false);
      return MakeMapType(entries, false);
    }
    std::vector<FieldPtr> children;
    for (int c : node.children) {
      QUIVER_ASSIGN_OR_RETURN(auto f, field_of(c, depth + 1));
      children.push_back(f);
    }
    return struct_(std::move(children));
  };
  field_of = [&](int n, int depth) -> Result<FieldPtr> {
    const SchemaElement& e = *s.nodes[n].element;
    QUIVER_ASSIGN_OR_RETURN(auto type, type_of(n, depth));
    if (e.repetition == static_cast<int32_t>(Repetition::kRepeated)) {
      return field(e.name, list(field(e.name, type, false)), false);
    }
    return field(e.name, type, e.repetition != static_cast<int32_t>(Repetition::kRequired));
  };
  const SchemaNode& root = s.nodes[0];
  for (int c : root.children) {
    QUIVER_ASSIGN_OR_RETURN(auto f, field_of(c, 1));
    s.fields.push_back(f);
    s.top_nodes.push_back(c);
  }
  // Leaves of each top-level field: consecutive in depth-first order.
  for (size_t i = 0; i < s.top_nodes.size(); ++i) {
    const int begin = s.top_nodes[i];
    const int end = i + 1 < s.top_nodes.size() ? s.top_nodes[i + 1] : static_cast<int>(s.nodes.size());
    int first = -1, count = 0;
    for (int n = begin; n < end; ++n) {
      if (s.nodes[n].leaf_index >= 0) {
        if (first < 0) first = s.nodes[n].leaf_index;
        ++count;
      }
    }
    s.first_leaf.push_back(first < 0 ? 0 : first);
    s.num_leaves.push_back(count);
  }
  auto schema = std::make_shared<Schema>();
  schema->fields = s.fields;
  schema->metadata = md.key_value_metadata;
  s.arrow_schema = schema;
  return s;
}

}  // namespace quiver::parquet

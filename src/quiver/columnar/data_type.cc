// quiver/columnar/data_type.cc — type factories, traits, ToString and
// structural equality of types, fields and schemas.
//
// Text follows Arrow C++ DataType::ToString (cpp/src/arrow/type.cc), with
// quiver's names for the string types ("utf8", "large_utf8", "utf8_view").
#include "quiver/columnar/data_type.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "quiver/columnar/layout.h"
#include "quiver/columnar/type_info.h"
#include "quiver/columnar/type_visit.h"

namespace quiver {

bool MetadataEquals(const KeyValueMetadata& a, const KeyValueMetadata& b) {
  if (a.size() != b.size()) return false;
  if (a == b) return true;
  KeyValueMetadata sa = a, sb = b;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  return sa == sb;
}

namespace {

std::shared_ptr<DataType> MakeType(TypeId id, int32_t bit_width = 0) {
  auto t = std::make_shared<DataType>();
  t->id = id;
  t->bit_width = bit_width;
  return t;
}

// A process-wide immutable instance of a parameterless type. Function-local
// statics are initialised thread-safely (C++11 "magic statics").
#define QUIVER_SINGLETON_TYPE(fn, type_id, width)                  \
  DataTypePtr fn() {                                               \
    static const DataTypePtr kInstance = MakeType(type_id, width); \
    return kInstance;                                              \
  }

// Appends "key: 'value'" lines with `indent` in front of each.
void AppendMetadata(std::string* out, const KeyValueMetadata& metadata, const std::string& indent) {
  for (const auto& [key, value] : metadata) {
    out->append("\n");
    out->append(indent);
    out->append(key);
    out->append(": '");
    out->append(value);
    out->append("'");
  }
}

bool TypePtrEquals(const DataTypePtr& a, const DataTypePtr& b, bool check_metadata, bool check_internal_names) {
  if (a == b) return true;
  if (!a || !b) return false;
  return a->Equals(*b, check_metadata, check_internal_names);
}

/// A child field compared as Field::Equals does, except that its name is
/// compared only when `compare_name` (internal field names, ARROW-14999).
bool ChildFieldEquals(const FieldPtr& a, const FieldPtr& b, bool check_metadata, bool check_internal_names,
                      bool compare_name) {
  if (a == b) return true;
  if (!a || !b) return false;
  if (compare_name && a->name != b->name) return false;
  if (a->nullable != b->nullable) return false;
  if (!TypePtrEquals(a->type, b->type, check_metadata, check_internal_names)) return false;
  if (check_metadata && !MetadataEquals(a->metadata, b->metadata)) return false;
  return true;
}

std::string TypeText(const DataTypePtr& type) { return type ? type->ToString() : "<null type>"; }
std::string FieldText(const FieldPtr& f) { return f ? f->ToString() : "<null field>"; }

// "<a: int32, b: utf8>" from the children (union codes appended when given).
std::string ChildrenText(const DataType& type, bool with_codes) {
  std::string out = "<";
  for (size_t i = 0; i < type.children.size(); ++i) {
    if (i > 0) out += ", ";
    out += FieldText(type.children[i]);
    if (with_codes) {
      out += "=";
      out += i < type.type_codes.size() ? std::to_string(type.type_codes[i]) : std::string("?");
    }
  }
  out += ">";
  return out;
}

}  // namespace

std::string_view TimeUnitName(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kSecond: return "s";
    case TimeUnit::kMilli: return "ms";
    case TimeUnit::kMicro: return "us";
    case TimeUnit::kNano: return "ns";
  }
  return "?";
}

// ---- factories --------------------------------------------------------------

QUIVER_SINGLETON_TYPE(null, TypeId::kNull, 0)
QUIVER_SINGLETON_TYPE(boolean, TypeId::kBool, 0)
QUIVER_SINGLETON_TYPE(int8, TypeId::kInt8, 8)
QUIVER_SINGLETON_TYPE(int16, TypeId::kInt16, 16)
QUIVER_SINGLETON_TYPE(int32, TypeId::kInt32, 32)
QUIVER_SINGLETON_TYPE(int64, TypeId::kInt64, 64)
QUIVER_SINGLETON_TYPE(uint8, TypeId::kUInt8, 8)
QUIVER_SINGLETON_TYPE(uint16, TypeId::kUInt16, 16)
QUIVER_SINGLETON_TYPE(uint32, TypeId::kUInt32, 32)
QUIVER_SINGLETON_TYPE(uint64, TypeId::kUInt64, 64)
QUIVER_SINGLETON_TYPE(float16, TypeId::kFloat16, 0)
QUIVER_SINGLETON_TYPE(float32, TypeId::kFloat32, 0)
QUIVER_SINGLETON_TYPE(float64, TypeId::kFloat64, 0)
QUIVER_SINGLETON_TYPE(binary, TypeId::kBinary, 0)
QUIVER_SINGLETON_TYPE(utf8, TypeId::kUtf8, 0)
QUIVER_SINGLETON_TYPE(large_binary, TypeId::kLargeBinary, 0)
QUIVER_SINGLETON_TYPE(large_utf8, TypeId::kLargeUtf8, 0)
QUIVER_SINGLETON_TYPE(binary_view, TypeId::kBinaryView, 0)
QUIVER_SINGLETON_TYPE(utf8_view, TypeId::kUtf8View, 0)
QUIVER_SINGLETON_TYPE(interval_year_month, TypeId::kIntervalYearMonth, 0)
QUIVER_SINGLETON_TYPE(interval_day_time, TypeId::kIntervalDayTime, 0)
QUIVER_SINGLETON_TYPE(interval_month_day_nano, TypeId::kIntervalMonthDayNano, 0)

#undef QUIVER_SINGLETON_TYPE

DataTypePtr date32() {
  static const DataTypePtr kInstance = MakeType(TypeId::kDate32);
  return kInstance;
}

DataTypePtr date64() {
  static const DataTypePtr kInstance = [] {
    auto t = MakeType(TypeId::kDate64);
    t->unit = TimeUnit::kMilli;
    return t;
  }();
  return kInstance;
}

DataTypePtr LeafType(TypeId id) {
  static const auto kLeaves = [] {
    std::array<DataTypePtr, static_cast<size_t>(TypeId::kDictionary) + 1> out{};
    // clang-format off
    const DataTypePtr leaves[] = {
        null(), boolean(), int8(), int16(), int32(), int64(), uint8(), uint16(), uint32(), uint64(),
        float16(), float32(), float64(), binary(), utf8(), large_binary(), large_utf8(), binary_view(),
        utf8_view(), date32(), date64(), interval_year_month(), interval_day_time(), interval_month_day_nano()};
    // clang-format on
    for (const DataTypePtr& t : leaves) out[static_cast<size_t>(t->id)] = t;
    return out;
  }();
  const auto i = static_cast<size_t>(id);
  return i < kLeaves.size() ? kLeaves[i] : nullptr;
}

DataTypePtr fixed_size_binary(int32_t byte_width) {
  auto t = MakeType(TypeId::kFixedSizeBinary);
  t->byte_width = byte_width;
  return t;
}

DataTypePtr decimal(int32_t bit_width, int32_t precision, int32_t scale) {
  auto t = MakeType(TypeId::kDecimal, bit_width);
  t->precision = precision;
  t->scale = scale;
  return t;
}

namespace {
DataTypePtr WithUnit(TypeId id, TimeUnit unit) {
  auto t = MakeType(id);
  t->unit = unit;
  return t;
}
std::shared_ptr<DataType> WithChildren(TypeId id, std::vector<FieldPtr> children) {
  auto t = MakeType(id);
  t->children = std::move(children);
  return t;
}
}  // namespace

DataTypePtr time32(TimeUnit unit) { return WithUnit(TypeId::kTime32, unit); }
DataTypePtr time64(TimeUnit unit) { return WithUnit(TypeId::kTime64, unit); }
DataTypePtr duration(TimeUnit unit) { return WithUnit(TypeId::kDuration, unit); }

DataTypePtr timestamp(TimeUnit unit, std::string timezone) {
  auto t = MakeType(TypeId::kTimestamp);
  t->unit = unit;
  t->timezone = std::move(timezone);
  return t;
}

DataTypePtr list(FieldPtr value_field) { return WithChildren(TypeId::kList, {std::move(value_field)}); }
DataTypePtr large_list(FieldPtr value_field) { return WithChildren(TypeId::kLargeList, {std::move(value_field)}); }
DataTypePtr list_view(FieldPtr value_field) { return WithChildren(TypeId::kListView, {std::move(value_field)}); }
DataTypePtr large_list_view(FieldPtr value_field) {
  return WithChildren(TypeId::kLargeListView, {std::move(value_field)});
}
DataTypePtr fixed_size_list(FieldPtr value_field, int32_t list_size) {
  auto t = WithChildren(TypeId::kFixedSizeList, {std::move(value_field)});
  t->list_size = list_size;
  return t;
}
DataTypePtr struct_(std::vector<FieldPtr> fields) { return WithChildren(TypeId::kStruct, std::move(fields)); }
DataTypePtr map(FieldPtr entries_field, bool keys_sorted) {
  auto t = WithChildren(TypeId::kMap, {std::move(entries_field)});
  t->keys_sorted = keys_sorted;
  return t;
}
DataTypePtr sparse_union(std::vector<FieldPtr> fields, std::vector<int8_t> type_codes) {
  auto t = WithChildren(TypeId::kSparseUnion, std::move(fields));
  t->type_codes = std::move(type_codes);
  return t;
}
DataTypePtr dense_union(std::vector<FieldPtr> fields, std::vector<int8_t> type_codes) {
  auto t = WithChildren(TypeId::kDenseUnion, std::move(fields));
  t->type_codes = std::move(type_codes);
  return t;
}
DataTypePtr run_end_encoded(FieldPtr run_ends_field, FieldPtr values_field) {
  return WithChildren(TypeId::kRunEndEncoded, {std::move(run_ends_field), std::move(values_field)});
}
DataTypePtr dictionary(DataTypePtr index_type, DataTypePtr value_type, bool ordered) {
  auto t = MakeType(TypeId::kDictionary);
  t->index_type = std::move(index_type);
  t->value_type = std::move(value_type);
  t->ordered = ordered;
  return t;
}

FieldPtr field(std::string name, DataTypePtr type, bool nullable, KeyValueMetadata metadata, int64_t dictionary_id) {
  auto f = std::make_shared<Field>();
  f->name = std::move(name);
  f->type = std::move(type);
  f->nullable = nullable;
  f->metadata = std::move(metadata);
  f->dictionary_id = dictionary_id;
  return f;
}

// ---- traits -----------------------------------------------------------------

bool IsInteger(TypeId id) {
  return VisitTypeId(id, []<TypeId kId>(TypeIdTag<kId>) { return TypeTraits<kId>::kIsInteger; });
}

bool IsSignedInteger(TypeId id) {
  return id == TypeId::kInt8 || id == TypeId::kInt16 || id == TypeId::kInt32 || id == TypeId::kInt64;
}

bool IsFloating(TypeId id) { return id == TypeId::kFloat16 || id == TypeId::kFloat32 || id == TypeId::kFloat64; }

bool IsTemporal(TypeId id) {
  return id == TypeId::kDate32 || id == TypeId::kDate64 || id == TypeId::kTime32 || id == TypeId::kTime64 ||
         id == TypeId::kTimestamp || id == TypeId::kDuration;
}

bool IsBinaryLike(TypeId id) { return id == TypeId::kBinary || id == TypeId::kUtf8; }

bool IsLargeBinaryLike(TypeId id) { return id == TypeId::kLargeBinary || id == TypeId::kLargeUtf8; }

bool IsUnion(TypeId id) { return id == TypeId::kSparseUnion || id == TypeId::kDenseUnion; }

bool IsNested(TypeId id) { return TypeInfoOf(id).child_rows != ChildRows::kNone; }

bool HasValidityBitmap(TypeId id) {
  return id != TypeId::kNull && id != TypeId::kSparseUnion && id != TypeId::kDenseUnion && id != TypeId::kRunEndEncoded;
}

int FixedBitWidth(const DataType& type) {
  return VisitTypeId(type.id, [&]<TypeId kId>(TypeIdTag<kId>) -> int {
    using C = typename TypeTraits<kId>::CType;
    if constexpr (!std::is_void_v<C>) {
      return static_cast<int>(sizeof(C) * 8);  // numbers, dates, times, timestamps, durations
    } else if constexpr (kId == TypeId::kBool) {
      return 1;
    } else if constexpr (kId == TypeId::kIntervalDayTime) {
      return 64;
    } else if constexpr (kId == TypeId::kIntervalMonthDayNano) {
      return 128;
    } else if constexpr (kId == TypeId::kDecimal) {
      return type.bit_width;
    } else if constexpr (kId == TypeId::kFixedSizeBinary) {
      // Saturate instead of overflowing for absurd widths; validation rejects them.
      const int64_t bits = int64_t{type.byte_width} * 8;
      return bits > 0 && bits <= INT32_MAX ? static_cast<int>(bits) : 0;
    } else if constexpr (kId == TypeId::kDictionary) {
      return type.index_type ? FixedBitWidth(*type.index_type) : 0;
    } else {
      return 0;
    }
  });
}

int NumLayoutBuffers(const DataType& type) { return LayoutOf(type).num_buffers; }

// ---- DataType ---------------------------------------------------------------

std::string DataType::ToString() const {
  const TypeInfo& info = TypeInfoOf(id);
  std::string out(info.name);
  switch (info.params) {
    case TypeParams::kNone: break;
    case TypeParams::kByteWidth: return out + "[" + std::to_string(byte_width) + "]";
    case TypeParams::kDecimal:
      return out + std::to_string(bit_width) + "(" + std::to_string(precision) + ", " + std::to_string(scale) + ")";
    case TypeParams::kUnit:
    case TypeParams::kUnitAndTimezone:
      out += '[';
      out += TimeUnitName(unit);
      if (id == TypeId::kTimestamp && !timezone.empty()) out += ", tz=" + timezone;
      return out + "]";
    case TypeParams::kListSize: return out + ChildrenText(*this, false) + "[" + std::to_string(list_size) + "]";
    case TypeParams::kKeysSorted: {
      // map<key type, item type>; a malformed entries field prints as is.
      const DataType* entries =
          children.size() == 1 && children[0] && children[0]->type ? children[0]->type.get() : nullptr;
      if (entries == nullptr || entries->id != TypeId::kStruct || entries->children.size() != 2 ||
          !entries->children[0] || !entries->children[1]) {
        return out + ChildrenText(*this, false);
      }
      out += '<';
      out += TypeText(entries->children[0]->type);
      out += ", ";
      out += TypeText(entries->children[1]->type);
      if (keys_sorted) out += ", keys_sorted";
      return out + ">";
    }
    case TypeParams::kTypeCodes: return out + ChildrenText(*this, true);
    case TypeParams::kDictionary:
      return out + "<values=" + TypeText(value_type) + ", indices=" + TypeText(index_type) +
             ", ordered=" + (ordered ? "1" : "0") + ">";
  }
  if (id == TypeId::kRunEndEncoded && children.size() == 2 && children[0] && children[1]) {
    return out + "<run_ends: " + TypeText(children[0]->type) + ", values: " + TypeText(children[1]->type) + ">";
  }
  return info.child_rows != ChildRows::kNone ? out + ChildrenText(*this, false) : out;
}

bool TypeParametersEqual(const DataType& a, const DataType& b) {
  if (a.id != b.id) return false;
  switch (TypeInfoOf(a.id).params) {
    case TypeParams::kNone: return true;
    case TypeParams::kByteWidth: return a.byte_width == b.byte_width;
    case TypeParams::kDecimal: return a.bit_width == b.bit_width && a.precision == b.precision && a.scale == b.scale;
    case TypeParams::kUnit: return a.unit == b.unit;
    case TypeParams::kUnitAndTimezone: return a.unit == b.unit && a.timezone == b.timezone;
    case TypeParams::kListSize: return a.list_size == b.list_size;
    case TypeParams::kKeysSorted: return a.keys_sorted == b.keys_sorted;
    case TypeParams::kTypeCodes: return a.type_codes == b.type_codes;
    case TypeParams::kDictionary:  // index / value types and `ordered`: DataType::Equals
      return true;
  }
  return true;
}

bool DataType::Equals(const DataType& other, bool check_metadata, bool check_internal_names) const {
  if (this == &other) return true;
  if (id != other.id) return false;
  if (id == TypeId::kDictionary) {
    return ordered == other.ordered &&
           TypePtrEquals(index_type, other.index_type, check_metadata, check_internal_names) &&
           TypePtrEquals(value_type, other.value_type, check_metadata, check_internal_names);
  }
  if (!TypeParametersEqual(*this, other)) return false;
  if (children.size() != other.children.size()) return false;
  // Internal field names: a list-like type's item field, a map's entries
  // field and the entries struct's key / value fields.
  const bool list_like = id == TypeId::kList || id == TypeId::kLargeList || id == TypeId::kListView ||
                         id == TypeId::kLargeListView || id == TypeId::kFixedSizeList;
  if (id == TypeId::kMap && children.size() == 1 && children[0] && other.children[0] && children[0]->type &&
      other.children[0]->type && children[0]->type->id == TypeId::kStruct &&
      other.children[0]->type->id == TypeId::kStruct) {
    const Field& e = *children[0];
    const Field& o = *other.children[0];
    if (check_internal_names && e.name != o.name) return false;
    if (e.nullable != o.nullable) return false;
    if (check_metadata && !MetadataEquals(e.metadata, o.metadata)) return false;
    const auto& ek = e.type->children;
    const auto& ok = o.type->children;
    if (ek.size() != ok.size()) return false;
    for (size_t i = 0; i < ek.size(); ++i) {
      if (!ChildFieldEquals(ek[i], ok[i], check_metadata, check_internal_names, check_internal_names)) return false;
    }
    return true;
  }
  for (size_t i = 0; i < children.size(); ++i) {
    if (!ChildFieldEquals(children[i], other.children[i], check_metadata, check_internal_names,
                          !list_like || check_internal_names)) {
      return false;
    }
  }
  return true;
}

// ---- Field ------------------------------------------------------------------

std::string Field::ToString() const {
  std::string out = name + ": " + TypeText(type);
  if (!nullable) out += " not null";
  return out;
}

bool Field::Equals(const Field& other, bool check_metadata, bool check_internal_names) const {
  if (this == &other) return true;
  if (name != other.name || nullable != other.nullable) return false;
  if (!TypePtrEquals(type, other.type, check_metadata, check_internal_names)) return false;
  if (check_metadata && !MetadataEquals(metadata, other.metadata)) return false;
  return true;
}

// ---- Schema -----------------------------------------------------------------

int Schema::FieldIndex(std::string_view name) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i] && fields[i]->name == name) return static_cast<int>(i);
  }
  return -1;
}

std::string Schema::ToString() const {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += "\n";
    const FieldPtr& f = fields[i];
    if (!f) {
      out += "<null field>";
      continue;
    }
    out += f->ToString();
    if (f->dictionary_id >= 0) out += " dictionary id=" + std::to_string(f->dictionary_id);
    if (!f->metadata.empty()) {
      out += "\n  -- field metadata --";
      AppendMetadata(&out, f->metadata, "  ");
    }
  }
  if (!metadata.empty()) {
    if (!out.empty()) out += "\n";
    out += "-- schema metadata --";
    AppendMetadata(&out, metadata, "");
  }
  return out;
}

bool Schema::Equals(const Schema& other, bool check_metadata, bool check_internal_names) const {
  if (this == &other) return true;
  if (fields.size() != other.fields.size()) return false;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!ChildFieldEquals(fields[i], other.fields[i], check_metadata, check_internal_names, true)) return false;
  }
  if (check_metadata) {
    if (!MetadataEquals(metadata, other.metadata)) return false;
    if (big_endian != other.big_endian) return false;
  }
  return true;
}

}  // namespace quiver

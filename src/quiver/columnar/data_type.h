// quiver/columnar/data_type.h — logical types, fields and schemas of the
// Apache Arrow columnar format (format/Schema.fbs; docs "Columnar Format").
//
// One struct describes every type; the parameters that a type id does not
// use stay at their defaults. Types, fields and schemas are immutable once
// built and shared through std::shared_ptr<const ...>; they are safe to read
// from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quiver/base/result.h"

namespace quiver {

enum class TypeId : uint8_t {
  kNull,
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kFloat32,
  kFloat64,
  kBinary,
  kUtf8,
  kLargeBinary,
  kLargeUtf8,
  kBinaryView,
  kUtf8View,
  kFixedSizeBinary,
  kDecimal,  ///< bit_width 32, 64, 128 or 256
  kDate32,
  kDate64,
  kTime32,
  kTime64,
  kTimestamp,
  kDuration,
  kIntervalYearMonth,
  kIntervalDayTime,
  kIntervalMonthDayNano,
  kList,
  kLargeList,
  kListView,
  kLargeListView,
  kFixedSizeList,
  kStruct,
  kMap,
  kSparseUnion,
  kDenseUnion,
  kRunEndEncoded,
  kDictionary,  ///< dictionary-encoded: index_type + value_type
};

enum class TimeUnit : uint8_t { kSecond, kMilli, kMicro, kNano };
std::string_view TimeUnitName(TimeUnit unit);  // "s", "ms", "us", "ns"

/// Custom metadata: ordered key/value pairs (keys may repeat; order kept).
using KeyValueMetadata = std::vector<std::pair<std::string, std::string>>;

/// True when both hold the same key/value pairs, in any order (writers
/// differ in the order they emit extension keys; Arrow C++ compares
/// metadata the same way).
bool MetadataEquals(const KeyValueMetadata& a, const KeyValueMetadata& b);

struct Field;
struct DataType;
using DataTypePtr = std::shared_ptr<const DataType>;
using FieldPtr = std::shared_ptr<const Field>;

struct DataType {
  TypeId id = TypeId::kNull;
  /// Decimal: 32/64/128/256; integers: 8..64 (derived from id); others 0.
  int32_t bit_width = 0;
  /// FixedSizeBinary: bytes per value.
  int32_t byte_width = 0;
  /// Decimal.
  int32_t precision = 0;
  int32_t scale = 0;
  /// Time32/Time64/Timestamp/Duration; Date64 uses kMilli, Date32 unused.
  TimeUnit unit = TimeUnit::kSecond;
  /// Timestamp: IANA name or "+HH:MM"; empty = no time zone.
  std::string timezone;
  /// FixedSizeList: values per list.
  int32_t list_size = 0;
  /// Map: keys sorted within each map.
  bool keys_sorted = false;
  /// Unions: type code of each child, in child order.
  std::vector<int8_t> type_codes;
  /// Nested types: list-like 1 child, map 1 (struct<key, value>), struct N,
  /// union N, run-end encoded 2 (run_ends, values).
  std::vector<FieldPtr> children;
  /// Dictionary: integer index type and the dictionary's value type.
  DataTypePtr index_type;
  DataTypePtr value_type;
  bool ordered = false;

  /// Arrow-style text, e.g. "timestamp[us, tz=UTC]", "list<item: int32>".
  std::string ToString() const;
  /// Structural equality: the type id, the parameters that id uses, child
  /// field names, types and nullability, and child field metadata only when
  /// `check_metadata` is set. Pure; thread-safe.
  ///
  /// Internal field names — the item field of list, large list, list view,
  /// large list view and fixed-size list, and a map's entries field with its
  /// key / value fields — are not part of the type (Arrow C++ likewise,
  /// ARROW-14999: writers rename them, e.g. "item"/"element",
  /// "entries"/"key_value"); they are compared only when
  /// `check_internal_names` is set. Their nullability, types and (with
  /// `check_metadata`) metadata are always compared.
  bool Equals(const DataType& other, bool check_metadata = false, bool check_internal_names = false) const;
};

/// True when `a` and `b` have the same id and the same values of the
/// parameters that id uses, children and dictionary types aside: decimal
/// bit width / precision / scale, fixed_size_binary byte width, time /
/// duration unit, timestamp unit and time zone, fixed_size_list size, map
/// keys_sorted, union type codes. Shared by DataType::Equals and the array
/// comparison's type check (compare.h). Pure; thread-safe.
bool TypeParametersEqual(const DataType& a, const DataType& b);

struct Field {
  std::string name;
  DataTypePtr type;
  bool nullable = true;
  KeyValueMetadata metadata;
  /// Dictionary id for dictionary-typed fields (Schema.fbs DictionaryEncoding.id); -1 otherwise.
  int64_t dictionary_id = -1;

  /// "name: type", plus " not null" for non-nullable fields (Arrow C++
  /// Field::ToString without metadata).
  std::string ToString() const;
  /// Name, nullability and type (DataType::Equals, internal field names
  /// only with `check_internal_names`); metadata only when
  /// `check_metadata`. The dictionary id is an IPC assignment and is not
  /// compared.
  bool Equals(const Field& other, bool check_metadata = false, bool check_internal_names = false) const;
};

struct Schema {
  std::vector<FieldPtr> fields;
  KeyValueMetadata metadata;
  /// Endianness the data was written in (Schema.fbs Endianness); bodies are
  /// swapped to native order on read, so arrays are always native.
  bool big_endian = false;

  int num_fields() const { return static_cast<int>(fields.size()); }
  /// Index of the first field named `name`, or -1.
  int FieldIndex(std::string_view name) const;
  /// Multi-line text: one field per line, "name: type[ not null]
  /// [ dictionary id=N]", followed by "  -- field metadata --" and
  /// "  key: 'value'" lines when the field has metadata; the schema's
  /// metadata ends the text as "-- schema metadata --" and "key: 'value'"
  /// lines. No trailing newline.
  std::string ToString() const;
  /// Fields pairwise (Field::Equals; internal field names only with
  /// `check_internal_names`); schema metadata and endianness only when
  /// `check_metadata` (arrays are native-endian either way).
  bool Equals(const Schema& other, bool check_metadata = false, bool check_internal_names = false) const;
};
using SchemaPtr = std::shared_ptr<const Schema>;

// ---- type factories -------------------------------------------------------
DataTypePtr null();
DataTypePtr boolean();
DataTypePtr int8();
DataTypePtr int16();
DataTypePtr int32();
DataTypePtr int64();
DataTypePtr uint8();
DataTypePtr uint16();
DataTypePtr uint32();
DataTypePtr uint64();
DataTypePtr float16();
DataTypePtr float32();
DataTypePtr float64();
DataTypePtr binary();
DataTypePtr utf8();
DataTypePtr large_binary();
DataTypePtr large_utf8();
DataTypePtr binary_view();
DataTypePtr utf8_view();
DataTypePtr fixed_size_binary(int32_t byte_width);
DataTypePtr decimal(int32_t bit_width, int32_t precision, int32_t scale);
DataTypePtr date32();
DataTypePtr date64();
DataTypePtr time32(TimeUnit unit);
DataTypePtr time64(TimeUnit unit);
DataTypePtr timestamp(TimeUnit unit, std::string timezone = "");
DataTypePtr duration(TimeUnit unit);
DataTypePtr interval_year_month();
DataTypePtr interval_day_time();
DataTypePtr interval_month_day_nano();
DataTypePtr list(FieldPtr value_field);
DataTypePtr large_list(FieldPtr value_field);
DataTypePtr list_view(FieldPtr value_field);
DataTypePtr large_list_view(FieldPtr value_field);
DataTypePtr fixed_size_list(FieldPtr value_field, int32_t list_size);
DataTypePtr struct_(std::vector<FieldPtr> fields);
DataTypePtr map(FieldPtr entries_field, bool keys_sorted = false);
DataTypePtr sparse_union(std::vector<FieldPtr> fields, std::vector<int8_t> type_codes);
DataTypePtr dense_union(std::vector<FieldPtr> fields, std::vector<int8_t> type_codes);
DataTypePtr run_end_encoded(FieldPtr run_ends_field, FieldPtr values_field);
DataTypePtr dictionary(DataTypePtr index_type, DataTypePtr value_type, bool ordered = false);
/// The shared instance of a type with no parameters and no children (null,
/// bool, the integers and floats, the binary / utf8 families and views,
/// date32, date64, the intervals: TypeInfoOf(id).params == kNone and
/// child_rows == kNone, columnar/type_info.h); nullptr for any other id.
/// Thread-safe (instances are created once and never change).
DataTypePtr LeafType(TypeId id);

FieldPtr field(std::string name, DataTypePtr type, bool nullable = true, KeyValueMetadata metadata = {},
               int64_t dictionary_id = -1);

// ---- validating type factories ---------------------------------------------
// The columnar format's rules for type parameters (format/Schema.fbs,
// "Columnar Format"), each written once here. Decoders of untrusted
// metadata -- the IPC flatbuffer reader (ipc/metadata.cc) and the
// integration JSON reader (integration/json_schema.cc) -- build types with
// the Make* factories; ValidateArray (columnar/validate.cc) checks types that
// are already built with the Check* functions. The plain factories above
// check nothing (for callers that pass constants).
//
// Errors: Invalid stating the rule, without a location, e.g. "decimal bit
// width 100 is not 32, 64, 128 or 256"; callers add where ("field 'x': ...",
// "column 'c': ..."). Pure; thread-safe.

/// 8, 16, 32 or 64.
Status CheckIntegerBitWidth(int64_t bit_width);
/// 32, 64, 128 or 256.
Status CheckDecimalBitWidth(int64_t bit_width);
/// Precision in [1, 76] (decimal256's maximum); scale within int32.
Status CheckDecimalPrecision(int64_t precision, int64_t scale);
/// Bytes per value in [0, 2^31 / 8): the value's width in bits (FixedBitWidth)
/// must fit an int.
Status CheckFixedSizeBinaryWidth(int64_t byte_width);
/// Values per list in [0, 2^31 - 1].
Status CheckFixedSizeListSize(int64_t list_size);
/// Time32 holds seconds or milliseconds (32 bits); Time64 microseconds or
/// nanoseconds (64 bits).
Status CheckTimeBitWidth(TimeUnit unit, int64_t bit_width);
/// One type code per child, each in [0, 127], none twice.
Status CheckUnionTypeCodes(const std::vector<int64_t>& type_codes, size_t num_children);
/// A map's entries field is a struct of two fields (key, value).
Status CheckMapEntries(const Field& entries_field);
/// Run ends are int16, int32 or int64.
Status CheckRunEndsType(const DataType& run_ends_type);

/// int8..int64 / uint8..uint64 (CheckIntegerBitWidth).
Result<DataTypePtr> MakeIntegerType(int64_t bit_width, bool is_signed);
/// decimal(bit_width, precision, scale) (CheckDecimalBitWidth, CheckDecimalPrecision).
Result<DataTypePtr> MakeDecimalType(int64_t bit_width, int64_t precision, int64_t scale);
/// fixed_size_binary(byte_width) (CheckFixedSizeBinaryWidth).
Result<DataTypePtr> MakeFixedSizeBinaryType(int64_t byte_width);
/// fixed_size_list(value_field, list_size) (CheckFixedSizeListSize); `value_field` not null.
Result<DataTypePtr> MakeFixedSizeListType(FieldPtr value_field, int64_t list_size);
/// time32(unit) or time64(unit) as `bit_width` says (CheckTimeBitWidth).
Result<DataTypePtr> MakeTimeType(TimeUnit unit, int64_t bit_width);
/// map(entries_field, keys_sorted) (CheckMapEntries); `entries_field` not null.
Result<DataTypePtr> MakeMapType(FieldPtr entries_field, bool keys_sorted);
/// A sparse (`mode` kSparseUnion) or dense (kDenseUnion) union of `fields`;
/// `type_codes` absent means 0, 1, ..., fields.size() - 1
/// (CheckUnionTypeCodes either way). Invalid for another `mode`.
Result<DataTypePtr> MakeUnionType(TypeId mode, std::vector<FieldPtr> fields,
                                  std::optional<std::vector<int64_t>> type_codes);
/// run_end_encoded(run_ends_field, values_field) (CheckRunEndsType); both not null.
Result<DataTypePtr> MakeRunEndEncodedType(FieldPtr run_ends_field, FieldPtr values_field);

// ---- type traits ----------------------------------------------------------
bool IsInteger(TypeId id);
bool IsSignedInteger(TypeId id);
bool IsFloating(TypeId id);
/// date32, date64, time32, time64, timestamp, duration: one integer count
/// of a time unit per value (intervals are not).
bool IsTemporal(TypeId id);
/// Binary, Utf8 (32-bit offsets).
bool IsBinaryLike(TypeId id);
/// LargeBinary, LargeUtf8 (64-bit offsets).
bool IsLargeBinaryLike(TypeId id);
bool IsUnion(TypeId id);
/// List-likes, struct, map, unions and run-end encoded (dictionary is not
/// nested: its dictionary is not a child).
bool IsNested(TypeId id);
/// True when arrays of this type have a validity bitmap as buffer 0: every
/// type except null, sparse/dense union and run-end encoded (columnar format
/// "Buffer Listing for Each Layout"; dictionary arrays use their indices').
bool HasValidityBitmap(TypeId id);

/// Bit width of one value in the data buffer of a fixed-width type (bool 1,
/// int32 32, decimal128 128, interval month_day_nano 128, fixed_size_binary
/// 8*byte_width, dictionary: its index); 0 for types without a fixed-width
/// data buffer.
int FixedBitWidth(const DataType& type);

/// Number of buffers of this type in the IPC body / in ArrayData::buffers,
/// not counting variadic data buffers of view types. Null 0 (no buffers);
/// primitives 2 (validity, data); binary 3 (validity, offsets, data); view
/// types 2 (validity, views); list 2; list-view 3; fixed-size list 1; struct
/// 1; map 2; sparse union 1 (type ids); dense union 2 (type ids, offsets);
/// run-end encoded 0; dictionary as its index type.
/// (Columnar format "Buffer Listing for Each Layout"; unions have no
/// validity bitmap since format version 1.0.) LayoutOf(type).num_buffers:
/// columnar/layout.h holds the table (buffer kinds, widths, children).
int NumLayoutBuffers(const DataType& type);

}  // namespace quiver

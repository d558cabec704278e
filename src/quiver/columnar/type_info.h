// quiver/columnar/type_info.h — one row of facts per TypeId: its name, its
// C Data Interface format string, which parameters it carries and how its
// children's rows follow its own.
//
// This is the one place that spells each type's name and format string.
// DataType::ToString, the C Data exporter and importer, DataType::Equals
// (TypeParametersEqual), IsNested and LayoutOf read it, so adding a type
// means adding a row here (and its buffers in layout.cc) rather than a case
// to each of their switches. Per-parameter code (how a unit or a decimal's
// precision is printed or compared) switches on TypeParams, which is shared
// by every type that carries the same parameters.
//
// Sources: names follow Arrow C++ DataType::ToString (cpp/src/arrow/type.cc)
// with quiver's "utf8" family names; format strings follow the C Data
// Interface specification (docs/source/format/CDataInterface.rst, "Data
// type description -- format strings"); child rows follow the Columnar
// format's layouts (docs/source/format/Columnar.rst).
//
// Thread safety: an immutable constant table.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "quiver/columnar/data_type.h"

namespace quiver {

/// How the rows of an array's children relate to its own rows.
enum class ChildRows : uint8_t {
  kNone,            ///< no children (null, primitives, binary, views, dictionary)
  kByOffsets,       ///< list, large list, map: rows offsets[i] .. offsets[i + 1]
  kByListViews,     ///< list views: rows offsets[i] .. offsets[i] + sizes[i]
  kFixedSize,       ///< fixed-size list: list_size rows per row
  kSameRows,        ///< struct, sparse union: row i of every child
  kByUnionOffsets,  ///< dense union: row offsets[i] of child type_ids[i]
  kByRunEnds,       ///< run-end encoded: children[0] run ends, children[1] values
};

/// The DataType fields (besides children) that distinguish two types of the
/// same id; every id has exactly one kind.
enum class TypeParams : uint8_t {
  kNone,             ///< nothing beyond the id (and children)
  kByteWidth,        ///< fixed_size_binary: byte_width
  kDecimal,          ///< bit_width, precision, scale
  kUnit,             ///< time32, time64, duration: unit
  kUnitAndTimezone,  ///< timestamp: unit, timezone
  kListSize,         ///< fixed_size_list: list_size
  kKeysSorted,       ///< map: keys_sorted
  kTypeCodes,        ///< sparse / dense union: type_codes
  kDictionary,       ///< dictionary: index_type, value_type, ordered
};

struct TypeInfo {
  TypeId id;
  /// DataType::ToString's text for the id: the whole text for types with
  /// TypeParams::kNone and no children ("int8", "date32[day]"), else the
  /// part in front of the parameters / children ("timestamp", "list").
  std::string_view name;
  /// C Data Interface format: the whole string for TypeParams::kNone
  /// ("c", "tdD", "+s"), else the prefix the parameters follow ("w:", "tt",
  /// "+us:"); empty for dictionary (its format is its index type's).
  std::string_view c_format;
  TypeParams params;
  ChildRows child_rows;
};

/// The row of `id`. Precondition: `id` is a TypeId enumerator; any other
/// value gets a row named "<unknown type>" with no format, no parameters
/// and no children.
const TypeInfo& TypeInfoOf(TypeId id);

/// The id whose TypeParams::kNone, childless format string is `format`
/// ("c" -> kInt8, "tdD" -> kDate32, "vu" -> kUtf8View); nullopt for any
/// other string, including parametric formats ("w:16", "tsu:UTC").
std::optional<TypeId> LeafTypeIdOfCFormat(std::string_view format);

}  // namespace quiver

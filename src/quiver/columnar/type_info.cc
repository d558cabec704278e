// quiver/columnar/type_info.cc — the per-TypeId table (type_info.h).
#include "quiver/columnar/type_info.h"

#include <array>

namespace quiver {
namespace {

using P = TypeParams;
using C = ChildRows;

// One row per TypeId, in enumerator order (checked below).
// clang-format off
constexpr std::array<TypeInfo, static_cast<size_t>(TypeId::kDictionary) + 1> kTable{{
    {TypeId::kNull,                 "null",                     "n",    P::kNone,            C::kNone},
    {TypeId::kBool,                 "bool",                     "b",    P::kNone,            C::kNone},
    {TypeId::kInt8,                 "int8",                     "c",    P::kNone,            C::kNone},
    {TypeId::kInt16,                "int16",                    "s",    P::kNone,            C::kNone},
    {TypeId::kInt32,                "int32",                    "i",    P::kNone,            C::kNone},
    {TypeId::kInt64,                "int64",                    "l",    P::kNone,            C::kNone},
    {TypeId::kUInt8,                "uint8",                    "C",    P::kNone,            C::kNone},
    {TypeId::kUInt16,               "uint16",                   "S",    P::kNone,            C::kNone},
    {TypeId::kUInt32,               "uint32",                   "I",    P::kNone,            C::kNone},
    {TypeId::kUInt64,               "uint64",                   "L",    P::kNone,            C::kNone},
    {TypeId::kFloat16,              "halffloat",                "e",    P::kNone,            C::kNone},
    {TypeId::kFloat32,              "float",                    "f",    P::kNone,            C::kNone},
    {TypeId::kFloat64,              "double",                   "g",    P::kNone,            C::kNone},
    {TypeId::kBinary,               "binary",                   "z",    P::kNone,            C::kNone},
    {TypeId::kUtf8,                 "utf8",                     "u",    P::kNone,            C::kNone},
    {TypeId::kLargeBinary,          "large_binary",             "Z",    P::kNone,            C::kNone},
    {TypeId::kLargeUtf8,            "large_utf8",               "U",    P::kNone,            C::kNone},
    {TypeId::kBinaryView,           "binary_view",              "vz",   P::kNone,            C::kNone},
    {TypeId::kUtf8View,             "utf8_view",                "vu",   P::kNone,            C::kNone},
    {TypeId::kFixedSizeBinary,      "fixed_size_binary",        "w:",   P::kByteWidth,       C::kNone},
    {TypeId::kDecimal,              "decimal",                  "d:",   P::kDecimal,         C::kNone},
    {TypeId::kDate32,               "date32[day]",              "tdD",  P::kNone,            C::kNone},
    {TypeId::kDate64,               "date64[ms]",               "tdm",  P::kNone,            C::kNone},
    {TypeId::kTime32,               "time32",                   "tt",   P::kUnit,            C::kNone},
    {TypeId::kTime64,               "time64",                   "tt",   P::kUnit,            C::kNone},
    {TypeId::kTimestamp,            "timestamp",                "ts",   P::kUnitAndTimezone, C::kNone},
    {TypeId::kDuration,             "duration",                 "tD",   P::kUnit,            C::kNone},
    {TypeId::kIntervalYearMonth,    "interval[month]",          "tiM",  P::kNone,            C::kNone},
    {TypeId::kIntervalDayTime,      "interval[day_time]",       "tiD",  P::kNone,            C::kNone},
    {TypeId::kIntervalMonthDayNano, "interval[month_day_nano]", "tin",  P::kNone,            C::kNone},
    {TypeId::kList,                 "list",                     "+l",   P::kNone,            C::kByOffsets},
    {TypeId::kLargeList,            "large_list",               "+L",   P::kNone,            C::kByOffsets},
    {TypeId::kListView,             "list_view",                "+vl",  P::kNone,            C::kByListViews},
    {TypeId::kLargeListView,        "large_list_view",          "+vL",  P::kNone,            C::kByListViews},
    {TypeId::kFixedSizeList,        "fixed_size_list",          "+w:",  P::kListSize,        C::kFixedSize},
    {TypeId::kStruct,               "struct",                   "+s",   P::kNone,            C::kSameRows},
    {TypeId::kMap,                  "map",                      "+m",   P::kKeysSorted,      C::kByOffsets},
    {TypeId::kSparseUnion,          "sparse_union",             "+us:", P::kTypeCodes,       C::kSameRows},
    {TypeId::kDenseUnion,           "dense_union",              "+ud:", P::kTypeCodes,       C::kByUnionOffsets},
    {TypeId::kRunEndEncoded,        "run_end_encoded",          "+r",   P::kNone,            C::kByRunEnds},
    {TypeId::kDictionary,           "dictionary",               "",     P::kDictionary,      C::kNone},
}};
// clang-format on

constexpr bool RowsInEnumeratorOrder() {
  for (size_t i = 0; i < kTable.size(); ++i) {
    if (static_cast<size_t>(kTable[i].id) != i) return false;
  }
  return true;
}
static_assert(RowsInEnumeratorOrder(), "kTable rows must follow the TypeId enumerators");

constexpr TypeInfo kUnknown{TypeId::kNull, "<unknown type>", "", P::kNone, C::kNone};

}  // namespace

const TypeInfo& TypeInfoOf(TypeId id) {
  const auto i = static_cast<size_t>(id);
  return i < kTable.size() ? kTable[i] : kUnknown;
}

std::optional<TypeId> LeafTypeIdOfCFormat(std::string_view format) {
  if (format.empty()) return std::nullopt;
  for (const TypeInfo& row : kTable) {
    if (row.params == P::kNone && row.child_rows == C::kNone && row.c_format == format) return row.id;
  }
  return std::nullopt;
}

}  // namespace quiver

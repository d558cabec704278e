// quiver/columnar/spark_type.h — the Spark SQL type an Arrow type is served
// as: the one mapping behind the Thrift type of a result column
// (server/hive_types.cc HiveTypeId), DESCRIBE's type names
// (sql/spark_dialect.h SparkTypeName) and the Python DB-API description
// (python/src/dbapi.cc).
//
// Source: Databricks SQL data types (the Spark SQL types of a SQL warehouse)
// and the Hive Thrift protocol's TTypeId (TCLIService.thrift), which has no
// unsigned integers, no TIME and no duration: unsigned integers take the
// next wider signed type (uint64 too: "bigint"), float16 "float", TIME is
// served as text ("string"), a duration as its count ("bigint"), the null
// type "void"; every string layout is "string", every binary layout
// "binary", every list layout "array"; dictionary and run-end encoded types
// are their value type.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>

#include "quiver/columnar/data_type.h"

namespace quiver {

/// The Spark SQL types quiver serves columns as.
enum class SparkType : uint8_t {
  kVoid,
  kBoolean,
  kTinyint,
  kSmallint,
  kInt,
  kBigint,
  kFloat,
  kDouble,
  kString,
  kBinary,
  kDecimal,  ///< precision and scale: the Arrow type's
  kDate,
  kTimestamp,
  kIntervalYearMonth,
  kIntervalDayTime,
  kArray,   ///< element type: the list's child
  kStruct,  ///< fields: the struct's children
  kMap,     ///< key and value: the children of the map's entries struct
  kUnion,   ///< alternatives: the union's children
};

/// The type whose Spark type is served for `type`: the value type of a
/// dictionary or run-end encoded type (recursively), otherwise `type`
/// itself. A dictionary without a value type or a run-end encoded type
/// without its two children is returned as is (SparkTypeOf: kString).
const DataType& SparkServedType(const DataType& type);

/// The Spark SQL type of `type` (after SparkServedType).
SparkType SparkTypeOf(const DataType& type);

/// The lower-case name of `t` without parameters, as Spark prints it:
/// "void", "boolean", ..., "decimal", "interval year to month", "interval
/// day to second", "array", "struct", "map", "uniontype". Never null.
const char* SparkTypeBaseName(SparkType t);

}  // namespace quiver

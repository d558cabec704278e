// quiver/columnar/spark_type.cc — the Spark SQL type an Arrow type is served
// as (spark_type.h).
#include "quiver/columnar/spark_type.h"

namespace quiver {

const DataType& SparkServedType(const DataType& type) {
  const DataType* t = &type;
  // A chain of encodings is as deep as the type tree, which the readers
  // bound; each step goes one level down.
  while (true) {
    if (t->id == TypeId::kDictionary && t->value_type) {
      t = t->value_type.get();
    } else if (t->id == TypeId::kRunEndEncoded && t->children.size() == 2 && t->children[1] && t->children[1]->type) {
      t = t->children[1]->type.get();
    } else {
      return *t;
    }
  }
}

SparkType SparkTypeOf(const DataType& type) {
  switch (SparkServedType(type).id) {
    case TypeId::kNull: return SparkType::kVoid;
    case TypeId::kBool: return SparkType::kBoolean;
    case TypeId::kInt8: return SparkType::kTinyint;
    case TypeId::kInt16:
    case TypeId::kUInt8: return SparkType::kSmallint;
    case TypeId::kInt32:
    case TypeId::kUInt16: return SparkType::kInt;
    case TypeId::kInt64:
    case TypeId::kUInt32:
    case TypeId::kUInt64:
    case TypeId::kDuration: return SparkType::kBigint;
    case TypeId::kFloat16:
    case TypeId::kFloat32: return SparkType::kFloat;
    case TypeId::kFloat64: return SparkType::kDouble;
    case TypeId::kBinary:
    case TypeId::kLargeBinary:
    case TypeId::kBinaryView:
    case TypeId::kFixedSizeBinary: return SparkType::kBinary;
    case TypeId::kDecimal: return SparkType::kDecimal;
    case TypeId::kDate32:
    case TypeId::kDate64: return SparkType::kDate;
    case TypeId::kTimestamp: return SparkType::kTimestamp;
    case TypeId::kIntervalYearMonth: return SparkType::kIntervalYearMonth;
    case TypeId::kIntervalDayTime:
    case TypeId::kIntervalMonthDayNano: return SparkType::kIntervalDayTime;
    case TypeId::kList:
    case TypeId::kLargeList:
    case TypeId::kListView:
    case TypeId::kLargeListView:
    case TypeId::kFixedSizeList: return SparkType::kArray;
    case TypeId::kStruct: return SparkType::kStruct;
    case TypeId::kMap: return SparkType::kMap;
    case TypeId::kSparseUnion:
    case TypeId::kDenseUnion: return SparkType::kUnion;
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8:
    case TypeId::kUtf8View:
    case TypeId::kTime32:  // served as text: the protocol has no TIME
    case TypeId::kTime64:
    case TypeId::kDictionary:  // without its value type
    case TypeId::kRunEndEncoded: return SparkType::kString;
  }
  return SparkType::kString;
}

const char* SparkTypeBaseName(SparkType t) {
  switch (t) {
    case SparkType::kVoid: return "void";
    case SparkType::kBoolean: return "boolean";
    case SparkType::kTinyint: return "tinyint";
    case SparkType::kSmallint: return "smallint";
    case SparkType::kInt: return "int";
    case SparkType::kBigint: return "bigint";
    case SparkType::kFloat: return "float";
    case SparkType::kDouble: return "double";
    case SparkType::kString: return "string";
    case SparkType::kBinary: return "binary";
    case SparkType::kDecimal: return "decimal";
    case SparkType::kDate: return "date";
    case SparkType::kTimestamp: return "timestamp";
    case SparkType::kIntervalYearMonth: return "interval year to month";
    case SparkType::kIntervalDayTime: return "interval day to second";
    case SparkType::kArray: return "array";
    case SparkType::kStruct: return "struct";
    case SparkType::kMap: return "map";
    case SparkType::kUnion: return "uniontype";
  }
  return "string";
}

}  // namespace quiver

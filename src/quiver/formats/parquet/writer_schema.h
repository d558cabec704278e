// quiver/formats/parquet/writer_schema.h — which Parquet leaf each Arrow
// field becomes when quiver writes a file (parquet-format LogicalTypes.md;
// the table is in docs/formats.md, "Writing Parquet"): physical type, type
// length, logical and converted annotations, repetition (OPTIONAL for
// nullable fields, REQUIRED otherwise), the conversion of the values, and
// the order its statistics use.
//
// Pure; thread-safe.
#pragma once

#include <cstdint>

#include "quiver/base/result.h"
#include "quiver/columnar/data_type.h"
#include "quiver/formats/parquet/metadata.h"

namespace quiver::parquet {

/// How Arrow values become physical values (column_values.h applies it).
enum class ValueConversion : uint8_t {
  kBoolean,        ///< bitmap -> one byte 0/1 per value
  kCopy,           ///< same width and bits (int32/64, uint32/64, floats, date32, time, timestamps in ms/us/ns, FLBA)
  kWidenSigned,    ///< int8 / int16 -> INT32 (sign-extended)
  kWidenUnsigned,  ///< uint8 / uint16 -> INT32 (zero-extended)
  kScale1000,      ///< seconds -> milliseconds (time32[s] -> INT32, timestamp[s] -> INT64)
  kDate64ToDays,   ///< date64 milliseconds -> INT32 days (floor)
  kDecimalToInt,   ///< decimal (any width) -> INT32 / INT64 (precision <= 9 / <= 18)
  kDecimalToFlba,  ///< decimal (any width) -> big-endian two's complement of type_length bytes
  kBinary,         ///< binary / utf8 / large / view -> BYTE_ARRAY
};

/// The order statistics compare values in (parquet-format "Sort Order").
enum class StatsOrder : uint8_t {
  kNone,         ///< no min / max (FLOAT16): null_count only
  kSigned,       ///< INT32 / INT64 signed; deprecated min / max written too
  kUnsigned,     ///< INT32 / INT64 as unsigned (INT(bits, false))
  kFloat,        ///< FLOAT / DOUBLE (NaN left out, -0.0 / +0.0 as the spec asks); deprecated min / max too
  kBytes,        ///< BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY: unsigned lexicographic
  kSignedBytes,  ///< DECIMAL in FIXED_LEN_BYTE_ARRAY: big-endian two's complement
  kBoolean,      ///< false < true
};

struct LeafMapping {
  SchemaElement element;  ///< name, type, type_length, repetition, annotations
  PhysicalType physical = PhysicalType::kInt32;
  int32_t width_bytes = 0;  ///< fixed width of a physical value; 0 for BYTE_ARRAY
  ValueConversion conversion = ValueConversion::kCopy;
  StatsOrder order = StatsOrder::kSigned;
  /// The Arrow type the values come in (a dictionary's value type for
  /// dictionary-encoded fields).
  DataTypePtr value_type;
  bool dictionary_encoded_input = false;
};

/// The leaf for `field`. Errors: NotImplemented naming the field and its
/// type for nested types, intervals, durations, the null type and
/// dictionaries of those.
Result<LeafMapping> MapArrowField(const Field& field);

/// Bytes of the smallest two's complement integer that holds every decimal
/// of `precision` digits (1..76).
int32_t DecimalBytesForPrecision(int32_t precision);

}  // namespace quiver::parquet

#include "quiver/formats/parquet/writer_schema.h"

#include <cmath>

namespace quiver::parquet {
namespace {

void SetInteger(LeafMapping* m, int bits, bool is_signed) {
  m->element.logical_type.kind = LogicalType::kInteger;
  m->element.logical_type.bit_width = bits;
  m->element.logical_type.is_signed = is_signed;
  ConvertedType ct = ConvertedType::kInt8;
  switch (bits) {
    case 8: ct = is_signed ? ConvertedType::kInt8 : ConvertedType::kUint8; break;
    case 16: ct = is_signed ? ConvertedType::kInt16 : ConvertedType::kUint16; break;
    case 32: ct = is_signed ? ConvertedType::kInt32 : ConvertedType::kUint32; break;
    default: ct = is_signed ? ConvertedType::kInt64 : ConvertedType::kUint64; break;
  }
  m->element.converted_type = static_cast<int32_t>(ct);
  m->order = is_signed ? StatsOrder::kSigned : StatsOrder::kUnsigned;
}

void SetPhysical(LeafMapping* m, PhysicalType p, int32_t width) {
  m->physical = p;
  m->width_bytes = width;
  m->element.type = static_cast<int32_t>(p);
  if (p == PhysicalType::kFixedLenByteArray) m->element.type_length = width;
}

int TimeUnitCode(TimeUnit u) { return u == TimeUnit::kMicro ? 2 : u == TimeUnit::kNano ? 3 : 1; }

}  // namespace

int32_t DecimalBytesForPrecision(int32_t precision) {
  // The smallest n with 2^(8n - 1) > 10^precision - 1.
  for (int32_t n = 1; n <= 32; ++n) {
    if (static_cast<double>(8 * n - 1) * std::log10(2.0) >= static_cast<double>(precision)) return n;
  }
  return 32;
}

namespace {

/// The types without parameters, one row each (a table, not a switch):
/// physical type and width, conversion, statistics order, and the INTEGER /
/// STRING / DATE annotation.
struct SimpleLeaf {
  TypeId id;
  PhysicalType physical;
  int32_t width_bytes;
  ValueConversion conversion;
  StatsOrder order;
  int32_t logical_kind;  ///< LogicalType::Kind (kInteger rows: bits and sign below)
  int int_bits;
  bool int_signed;
};

constexpr SimpleLeaf kSimpleLeaves[] = {
    {TypeId::kBool, PhysicalType::kBoolean, 1, ValueConversion::kBoolean, StatsOrder::kBoolean, LogicalType::kNone, 0,
     true},
    {TypeId::kInt8, PhysicalType::kInt32, 4, ValueConversion::kWidenSigned, StatsOrder::kSigned, LogicalType::kInteger,
     8, true},
    {TypeId::kInt16, PhysicalType::kInt32, 4, ValueConversion::kWidenSigned, StatsOrder::kSigned, LogicalType::kInteger,
     16, true},
    {TypeId::kInt32, PhysicalType::kInt32, 4, ValueConversion::kCopy, StatsOrder::kSigned, LogicalType::kNone, 0, true},
    {TypeId::kInt64, PhysicalType::kInt64, 8, ValueConversion::kCopy, StatsOrder::kSigned, LogicalType::kNone, 0, true},
    {TypeId::kUInt8, PhysicalType::kInt32, 4, ValueConversion::kWidenUnsigned, StatsOrder::kUnsigned,
     LogicalType::kInteger, 8, false},
    {TypeId::kUInt16, PhysicalType::kInt32, 4, ValueConversion::kWidenUnsigned, StatsOrder::kUnsigned,
     LogicalType::kInteger, 16, false},
    {TypeId::kUInt32, PhysicalType::kInt32, 4, ValueConversion::kCopy, StatsOrder::kUnsigned, LogicalType::kInteger, 32,
     false},
    {TypeId::kUInt64, PhysicalType::kInt64, 8, ValueConversion::kCopy, StatsOrder::kUnsigned, LogicalType::kInteger, 64,
     false},
    {TypeId::kFloat16, PhysicalType::kFixedLenByteArray, 2, ValueConversion::kCopy, StatsOrder::kNone,
     LogicalType::kFloat16, 0, true},
    {TypeId::kFloat32, PhysicalType::kFloat, 4, ValueConversion::kCopy, StatsOrder::kFloat, LogicalType::kNone, 0,
     true},
    {TypeId::kFloat64, PhysicalType::kDouble, 8, ValueConversion::kCopy, StatsOrder::kFloat, LogicalType::kNone, 0,
     true},
    {TypeId::kUtf8, PhysicalType::kByteArray, 0, ValueConversion::kBinary, StatsOrder::kBytes, LogicalType::kString, 0,
     true},
    {TypeId::kLargeUtf8, PhysicalType::kByteArray, 0, ValueConversion::kBinary, StatsOrder::kBytes,
     LogicalType::kString, 0, true},
    {TypeId::kUtf8View, PhysicalType::kByteArray, 0, ValueConversion::kBinary, StatsOrder::kBytes, LogicalType::kString,
     0, true},
    {TypeId::kBinary, PhysicalType::kByteArray, 0, ValueConversion::kBinary, StatsOrder::kBytes, LogicalType::kNone, 0,
     true},
    {TypeId::kLargeBinary, PhysicalType::kByteArray, 0, ValueConversion::kBinary, StatsOrder::kBytes,
     LogicalType::kNone, 0, true},
    {TypeId::kBinaryView, PhysicalType::kByteArray, 0, ValueConversion::kBinary, StatsOrder::kBytes, LogicalType::kNone,
     0, true},
    {TypeId::kDate32, PhysicalType::kInt32, 4, ValueConversion::kCopy, StatsOrder::kSigned, LogicalType::kDate, 0,
     true},
    {TypeId::kDate64, PhysicalType::kInt32, 4, ValueConversion::kDate64ToDays, StatsOrder::kSigned, LogicalType::kDate,
     0, true},
};

}  // namespace

Result<LeafMapping> MapArrowField(const Field& field) {
  LeafMapping m;
  m.element.name = field.name;
  m.element.repetition = static_cast<int32_t>(field.nullable ? Repetition::kOptional : Repetition::kRequired);
  const DataType* t = field.type.get();
  if (t->id == TypeId::kDictionary) {
    m.dictionary_encoded_input = true;
    t = t->value_type.get();
    m.value_type = field.type->value_type;
  } else {
    m.value_type = field.type;
  }
  auto unsupported = [&]() {
    return Status::NotImplemented("Parquet writer: column '" + field.name + "' of type " + field.type->ToString() +
                                  " (nested, interval, duration and null columns are not written)");
  };
  LogicalType& lt = m.element.logical_type;
  for (const SimpleLeaf& row : kSimpleLeaves) {
    if (row.id != t->id) continue;
    SetPhysical(&m, row.physical, row.width_bytes);
    m.conversion = row.conversion;
    m.order = row.order;
    lt.kind = row.logical_kind;
    if (row.logical_kind == LogicalType::kInteger) SetInteger(&m, row.int_bits, row.int_signed);
    if (row.logical_kind == LogicalType::kString) m.element.converted_type = static_cast<int32_t>(ConvertedType::kUtf8);
    if (row.logical_kind == LogicalType::kDate) m.element.converted_type = static_cast<int32_t>(ConvertedType::kDate);
    return m;
  }
  if (t->id == TypeId::kFixedSizeBinary) {
    if (t->byte_width <= 0) return unsupported();
    SetPhysical(&m, PhysicalType::kFixedLenByteArray, t->byte_width);
    m.order = StatsOrder::kBytes;
    return m;
  }
  if (t->id == TypeId::kTime32 || t->id == TypeId::kTime64) {
    // An Arrow time is a time of day without a zone: isAdjustedToUTC false
    // (DuckDB reads true as TIME WITH TIME ZONE), hence no converted type
    // (TIME_MILLIS / _MICROS mean adjusted to UTC). time32 is milliseconds
    // (seconds scaled), time64 micro- or nanoseconds.
    const bool t32 = t->id == TypeId::kTime32;
    SetPhysical(&m, t32 ? PhysicalType::kInt32 : PhysicalType::kInt64, t32 ? 4 : 8);
    lt.kind = LogicalType::kTime;
    lt.time_unit = t32 ? 1 : TimeUnitCode(t->unit);
    lt.adjusted_to_utc = false;
    if (t32 && t->unit == TimeUnit::kSecond) m.conversion = ValueConversion::kScale1000;
    return m;
  }
  if (t->id == TypeId::kTimestamp) {
    SetPhysical(&m, PhysicalType::kInt64, 8);
    const TimeUnit unit = t->unit == TimeUnit::kSecond ? TimeUnit::kMilli : t->unit;
    if (t->unit == TimeUnit::kSecond) m.conversion = ValueConversion::kScale1000;
    lt.kind = LogicalType::kTimestamp;
    lt.time_unit = TimeUnitCode(unit);
    // A time zone (any) means instants: isAdjustedToUTC; none: local times.
    lt.adjusted_to_utc = !t->timezone.empty();
    // The converted types TIMESTAMP_MILLIS / _MICROS mean UTC instants.
    if (lt.adjusted_to_utc && unit != TimeUnit::kNano) {
      m.element.converted_type = static_cast<int32_t>(unit == TimeUnit::kMilli ? ConvertedType::kTimestampMillis
                                                                               : ConvertedType::kTimestampMicros);
    }
    return m;
  }
  if (t->id == TypeId::kDecimal) {
    if (t->precision < 1 || t->precision > 76 || t->scale < 0 || t->scale > t->precision) return unsupported();
    lt.kind = LogicalType::kDecimal;
    lt.precision = t->precision;
    lt.scale = t->scale;
    m.element.converted_type = static_cast<int32_t>(ConvertedType::kDecimal);
    m.element.precision = t->precision;
    m.element.scale = t->scale;
    if (t->precision <= 9) {
      SetPhysical(&m, PhysicalType::kInt32, 4);
      m.conversion = ValueConversion::kDecimalToInt;
    } else if (t->precision <= 18) {
      SetPhysical(&m, PhysicalType::kInt64, 8);
      m.conversion = ValueConversion::kDecimalToInt;
    } else {
      SetPhysical(&m, PhysicalType::kFixedLenByteArray, DecimalBytesForPrecision(t->precision));
      m.conversion = ValueConversion::kDecimalToFlba;
      m.order = StatsOrder::kSignedBytes;
    }
    return m;
  }
  return unsupported();
}

}  // namespace quiver::parquet

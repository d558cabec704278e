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

Result<LeafMapping> MapArrowField(const Field& field) {
  LeafMapping m;
  m.element.name = field.name;
  m.element.repetition =
      static_cast<int32_t>(field.nullable ? Repetition::kOptional : Repetition::kRequired);
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
  switch (t->id) {
    case TypeId::kBool:
      SetPhysical(&m, PhysicalType::kBoolean, 1);
      m.conversion = ValueConversion::kBoolean;
      m.order = StatsOrder::kBoolean;
      break;
    case TypeId::kInt8:
    case TypeId::kInt16:
      SetPhysical(&m, PhysicalType::kInt32, 4);
      m.conversion = ValueConversion::kWidenSigned;
      SetInteger(&m, t->id == TypeId::kInt8 ? 8 : 16, true);
      break;
    case TypeId::kUInt8:
    case TypeId::kUInt16:
      SetPhysical(&m, PhysicalType::kInt32, 4);
      m.conversion = ValueConversion::kWidenUnsigned;
      SetInteger(&m, t->id == TypeId::kUInt8 ? 8 : 16, false);
      break;
    case TypeId::kInt32: SetPhysical(&m, PhysicalType::kInt32, 4); break;
    case TypeId::kUInt32:
      SetPhysical(&m, PhysicalType::kInt32, 4);
      SetInteger(&m, 32, false);
      break;
    case TypeId::kInt64: SetPhysical(&m, PhysicalType::kInt64, 8); break;
    case TypeId::kUInt64:
      SetPhysical(&m, PhysicalType::kInt64, 8);
      SetInteger(&m, 64, false);
      break;
    case TypeId::kFloat16:
      SetPhysical(&m, PhysicalType::kFixedLenByteArray, 2);
      lt.kind = LogicalType::kFloat16;
      m.order = StatsOrder::kNone;
      break;
    case TypeId::kFloat32:
      SetPhysical(&m, PhysicalType::kFloat, 4);
      m.order = StatsOrder::kFloat;
      break;
    case TypeId::kFloat64:
      SetPhysical(&m, PhysicalType::kDouble, 8);
      m.order = StatsOrder::kFloat;
      break;
    case TypeId::kUtf8:
    case TypeId::kLargeUtf8:
    case TypeId::kUtf8View:
      SetPhysical(&m, PhysicalType::kByteArray, 0);
      m.conversion = ValueConversion::kBinary;
      m.order = StatsOrder::kBytes;
      lt.kind = LogicalType::kString;
      m.element.converted_type = static_cast<int32_t>(ConvertedType::kUtf8);
      break;
    case TypeId::kBinary:
    case TypeId::kLargeBinary:
    case TypeId::kBinaryView:
      SetPhysical(&m, PhysicalType::kByteArray, 0);
      m.conversion = ValueConversion::kBinary;
      m.order = StatsOrder::kBytes;
      break;
    case TypeId::kFixedSizeBinary:
      if (t->byte_width <= 0) return unsupported();
      SetPhysical(&m, PhysicalType::kFixedLenByteArray, t->byte_width);
      m.order = StatsOrder::kBytes;
      break;
    case TypeId::kDate32:
    case TypeId::kDate64:
      SetPhysical(&m, PhysicalType::kInt32, 4);
      lt.kind = LogicalType::kDate;
      m.element.converted_type = static_cast<int32_t>(ConvertedType::kDate);
      if (t->id == TypeId::kDate64) m.conversion = ValueConversion::kDate64ToDays;
      break;
    case TypeId::kTime32:
      SetPhysical(&m, PhysicalType::kInt32, 4);
      lt.kind = LogicalType::kTime;
      lt.time_unit = 1;
      lt.adjusted_to_utc = true;
      m.element.converted_type = static_cast<int32_t>(ConvertedType::kTimeMillis);
      if (t->unit == TimeUnit::kSecond) m.conversion = ValueConversion::kScale1000;
      break;
    case TypeId::kTime64:
      SetPhysical(&m, PhysicalType::kInt64, 8);
      lt.kind = LogicalType::kTime;
      lt.time_unit = TimeUnitCode(t->unit);
      lt.adjusted_to_utc = true;
      if (t->unit == TimeUnit::kMicro) m.element.converted_type = static_cast<int32_t>(ConvertedType::kTimeMicros);
      break;
    case TypeId::kTimestamp: {
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
      break;
    }
    case TypeId::kDecimal: {
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
      break;
    }
    default: return unsupported();
  }
  return m;
}

}  // namespace quiver::parquet

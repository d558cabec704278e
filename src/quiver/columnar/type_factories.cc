// quiver/columnar/type_factories.cc — the validating type factories and type
// rules declared in data_type.h ("validating type factories").
#include <array>
#include <limits>
#include <string>
#include <utility>

#include "quiver/columnar/data_type.h"

namespace quiver {

namespace {

std::string Str(int64_t v) { return std::to_string(v); }

}  // namespace

Status CheckIntegerBitWidth(int64_t bit_width) {
  if (bit_width == 8 || bit_width == 16 || bit_width == 32 || bit_width == 64) return Status::OK();
  return Status::Invalid("integer bit width " + Str(bit_width) + " is not 8, 16, 32 or 64");
}

Status CheckDecimalBitWidth(int64_t bit_width) {
  if (bit_width == 32 || bit_width == 64 || bit_width == 128 || bit_width == 256) return Status::OK();
  return Status::Invalid("decimal bit width " + Str(bit_width) + " is not 32, 64, 128 or 256");
}

Status CheckDecimalPrecision(int64_t precision, int64_t scale) {
  if (precision < 1 || precision > 76) {
    return Status::Invalid("decimal precision " + Str(precision) + " is not in [1, 76]");
  }
  if (scale < std::numeric_limits<int32_t>::min() || scale > std::numeric_limits<int32_t>::max()) {
    return Status::Invalid("decimal scale " + Str(scale) + " does not fit 32 bits");
  }
  return Status::OK();
}

Status CheckFixedSizeBinaryWidth(int64_t byte_width) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max() / 8;
  if (byte_width >= 0 && byte_width <= kMax) return Status::OK();
  return Status::Invalid("fixed_size_binary byte width " + Str(byte_width) + " is not in [0, " + Str(kMax) + "]");
}

Status CheckFixedSizeListSize(int64_t list_size) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (list_size >= 0 && list_size <= kMax) return Status::OK();
  return Status::Invalid("fixed_size_list list size " + Str(list_size) + " is not in [0, " + Str(kMax) + "]");
}

Status CheckTimeBitWidth(TimeUnit unit, int64_t bit_width) {
  const int64_t expected = (unit == TimeUnit::kSecond || unit == TimeUnit::kMilli) ? 32 : 64;
  if (bit_width == expected) return Status::OK();
  return Status::Invalid("time unit " + std::string(TimeUnitName(unit)) + " with bit width " + Str(bit_width) +
                         " (expected " + Str(expected) + ")");
}

Status CheckUnionTypeCodes(const std::vector<int64_t>& type_codes, size_t num_children) {
  if (type_codes.size() != num_children) {
    return Status::Invalid("union has " + Str(static_cast<int64_t>(type_codes.size())) + " type codes for " +
                           Str(static_cast<int64_t>(num_children)) + " children");
  }
  std::array<bool, 128> seen{};
  for (int64_t code : type_codes) {
    if (code < 0 || code > 127) return Status::Invalid("union type code " + Str(code) + " is not in [0, 127]");
    if (seen[static_cast<size_t>(code)]) {
      return Status::Invalid("union type code " + Str(code) + " is declared twice");
    }
    seen[static_cast<size_t>(code)] = true;
  }
  return Status::OK();
}

Status CheckMapEntries(const Field& entries_field) {
  const DataType* entries = entries_field.type.get();
  if (entries == nullptr || entries->id != TypeId::kStruct || entries->children.size() != 2) {
    return Status::Invalid("map entries type " + (entries != nullptr ? entries->ToString() : std::string("<none>")) +
                           " is not a struct of two fields");
  }
  return Status::OK();
}

Status CheckRunEndsType(const DataType& run_ends_type) {
  const TypeId id = run_ends_type.id;
  if (id == TypeId::kInt16 || id == TypeId::kInt32 || id == TypeId::kInt64) return Status::OK();
  return Status::Invalid("run ends type " + run_ends_type.ToString() + " is not int16, int32 or int64");
}

Result<DataTypePtr> MakeIntegerType(int64_t bit_width, bool is_signed) {
  QUIVER_RETURN_NOT_OK(CheckIntegerBitWidth(bit_width));
  switch (bit_width) {
    case 8: return is_signed ? int8() : uint8();
    case 16: return is_signed ? int16() : uint16();
    case 32: return is_signed ? int32() : uint32();
    default: return is_signed ? int64() : uint64();
  }
}

Result<DataTypePtr> MakeDecimalType(int64_t bit_width, int64_t precision, int64_t scale) {
  QUIVER_RETURN_NOT_OK(CheckDecimalBitWidth(bit_width));
  QUIVER_RETURN_NOT_OK(CheckDecimalPrecision(precision, scale));
  return decimal(static_cast<int32_t>(bit_width), static_cast<int32_t>(precision), static_cast<int32_t>(scale));
}

Result<DataTypePtr> MakeFixedSizeBinaryType(int64_t byte_width) {
  QUIVER_RETURN_NOT_OK(CheckFixedSizeBinaryWidth(byte_width));
  return fixed_size_binary(static_cast<int32_t>(byte_width));
}

Result<DataTypePtr> MakeFixedSizeListType(FieldPtr value_field, int64_t list_size) {
  QUIVER_RETURN_NOT_OK(CheckFixedSizeListSize(list_size));
  return fixed_size_list(std::move(value_field), static_cast<int32_t>(list_size));
}

Result<DataTypePtr> MakeTimeType(TimeUnit unit, int64_t bit_width) {
  QUIVER_RETURN_NOT_OK(CheckTimeBitWidth(unit, bit_width));
  return bit_width == 32 ? time32(unit) : time64(unit);
}

Result<DataTypePtr> MakeMapType(FieldPtr entries_field, bool keys_sorted) {
  if (!entries_field) return Status::Invalid("map without an entries field");
  QUIVER_RETURN_NOT_OK(CheckMapEntries(*entries_field));
  return map(std::move(entries_field), keys_sorted);
}

Result<DataTypePtr> MakeUnionType(TypeId mode, std::vector<FieldPtr> fields,
                                  std::optional<std::vector<int64_t>> type_codes) {
  if (mode != TypeId::kSparseUnion && mode != TypeId::kDenseUnion) {
    return Status::Invalid("union mode must be sparse or dense");
  }
  std::vector<int64_t> codes;
  if (type_codes.has_value()) {
    codes = std::move(*type_codes);
  } else {
    for (size_t i = 0; i < fields.size(); ++i) codes.push_back(static_cast<int64_t>(i));
  }
  QUIVER_RETURN_NOT_OK(CheckUnionTypeCodes(codes, fields.size()));
  std::vector<int8_t> narrow(codes.begin(), codes.end());  // each in [0, 127]: checked
  return mode == TypeId::kSparseUnion ? sparse_union(std::move(fields), std::move(narrow))
                                      : dense_union(std::move(fields), std::move(narrow));
}

Result<DataTypePtr> MakeRunEndEncodedType(FieldPtr run_ends_field, FieldPtr values_field) {
  if (!run_ends_field || !run_ends_field->type || !values_field) {
    return Status::Invalid("run-end encoded type needs run ends and values fields");
  }
  QUIVER_RETURN_NOT_OK(CheckRunEndsType(*run_ends_field->type));
  return run_end_encoded(std::move(run_ends_field), std::move(values_field));
}

}  // namespace quiver

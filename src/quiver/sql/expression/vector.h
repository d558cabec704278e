// quiver/sql/expression/vector.h — the SQL engine's view of column data: the
// SQL types it computes on, scalar values, and Vec (an Arrow array or a
// constant) with the builders every kernel writes its output through.
//
// SQL types and their Arrow storage (the "canonical" types; scans convert
// other Arrow types to these, see CanonicalType):
//   BOOLEAN   boolean (bit-packed)       INTEGER  int32
//   BIGINT    int64                      DECIMAL(p,s) decimal128(p,s), p <= 38,
//                                                     or decimal64(p,s), p <= 18
//   DOUBLE    float64                    VARCHAR  utf8 (int32 offsets)
//   DATE      date32 (days since 1970-01-01)
//   TIMESTAMP timestamp[us] (time zone kept, instants compared as UTC)
//   NULL      the null type (an untyped NULL literal)
// A DECIMAL has two storages: decimal64 (a column read with p <= 18, e.g. a
// Parquet INT32/INT64 DECIMAL; decimal32 widens to it) and decimal128 (every
// computed DECIMAL: Decimal() below); kernels take either, and a statement's
// results leave the engine as decimal128 (WidenDecimalsForOutput).
// Narrower or unsigned integers become BIGINT (uint64 becomes
// DECIMAL(20,0)), float32 DOUBLE, large_utf8 / utf8_view VARCHAR, date64 DATE, other timestamp units TIMESTAMP[us]
// (nanoseconds truncate toward negative infinity). Other types (binary, nested, intervals, ...) pass through a
// statement untouched but cannot be computed on.
//
// Thread safety: values and Vecs are immutable once built; builders belong
// to one thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "quiver/base/bit_util.h"
#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/columnar/value_visit.h"
#include "quiver/memory/buffer.h"

namespace quiver::sql {

using i128 = __int128;

/// The computation class of a canonical type.
enum class TypeClass : uint8_t { kNull, kBool, kInt, kDecimal, kFloat, kString, kDate, kTimestamp, kOther };

TypeClass ClassOf(const DataType& type);
inline bool IsNumericClass(TypeClass c) {
  return c == TypeClass::kInt || c == TypeClass::kDecimal || c == TypeClass::kFloat;
}
inline bool IsExactClass(TypeClass c) { return c == TypeClass::kInt || c == TypeClass::kDecimal; }
/// A DECIMAL stored in 64 bits (decimal64, precision <= 18).
inline bool IsDecimal64(const DataType& t) { return t.id == TypeId::kDecimal && t.bit_width == 64; }
/// A DECIMAL stored in 128 bits (decimal128).
inline bool IsDecimal128(const DataType& t) { return t.id == TypeId::kDecimal && t.bit_width == 128; }
/// Decimal scale of an exact type (0 for integers).
int ScaleOf(const DataType& type);
/// Decimal digits an exact type can hold (int32 10, int64 19, decimal p).
int PrecisionOf(const DataType& type);
/// The canonical SQL type a stored Arrow type is computed as (the file
/// comment); nullptr when it has none (passed through only).
DataTypePtr CanonicalType(const DataTypePtr& type);
/// SQL name of a canonical type ("BIGINT", "DECIMAL(15,2)", ...).
std::string SqlTypeName(const DataType& type);
/// decimal128(min(38, precision), scale).
DataTypePtr Decimal(int precision, int scale);
/// The largest unscaled value of `precision` digits (10^p - 1).
i128 MaxUnscaled(int precision);
/// 10^n for 0 <= n <= 38.
i128 Pow10(int n);
/// The double nearest to unscaled * 10^-scale (0 <= scale <= 38), ties to
/// even: exact operands of at most 53 bits with scale <= 22 divide in one
/// correctly rounded step; anything else goes through the decimal text and
/// strtod (dividing a rounded unscaled value by 10^scale can land one ulp
/// off: 99999999999999999999.99999 would give 1e20 + 16384). Pure.
double DecimalToDouble(i128 unscaled, int scale);

/// The storage dispatch of the SQL kernels (the columnar layer's
/// VisitValueType restricted to the fixed-width SQL types): calls
/// `visitor.template operator()<T>()` with T the element of the values
/// buffer: PackedBit for BOOLEAN, int32_t for INTEGER and DATE, int64_t for
/// BIGINT, TIMESTAMP (any unit) and decimal64 DECIMAL, double for DOUBLE,
/// i128 for decimal128 DECIMAL; returns `otherwise()` for every other type (NULL,
/// VARCHAR, the passed-through ones). Both must return the same type.
template <typename Visitor, typename Otherwise>
decltype(auto) VisitSqlStorage(const DataType& type, Visitor&& visitor, Otherwise&& otherwise) {
  const TypeId id = type.id;
  const bool fixed = id == TypeId::kBool || id == TypeId::kInt32 || id == TypeId::kInt64 || id == TypeId::kFloat64 ||
                     id == TypeId::kDate32 || id == TypeId::kTimestamp ||
                     (id == TypeId::kDecimal && (type.bit_width == 128 || type.bit_width == 64));
  if (!fixed) return otherwise();
  return VisitValueType(type, std::forward<Visitor>(visitor), std::forward<Otherwise>(otherwise));
}
/// True for T = PackedBit (BOOLEAN's bit-packed storage) in a VisitSqlStorage visitor.
template <typename T>
inline constexpr bool kIsPackedBit = std::is_same_v<T, PackedBit>;

/// A scalar SQL value of a canonical type (literals, constant folding,
/// aggregate results of empty inputs).
struct Value {
  DataTypePtr type;  ///< canonical type (null() for an untyped NULL)
  bool is_null = true;
  i128 i = 0;     ///< bool 0/1, int, decimal unscaled, date days, timestamp us
  double f = 0;   ///< float
  std::string s;  ///< string bytes

  static Value Null(DataTypePtr type);
  static Value Bool(bool v);
  static Value Int64(int64_t v);
  static Value Decimal(i128 unscaled, int precision, int scale);
  static Value Float(double v);
  static Value String(std::string v);
  static Value Date(int32_t days);
  static Value Timestamp(int64_t micros);
  /// SQL text of the value ("NULL", "'abc'", "DATE '1994-01-01'", "1.50").
  std::string ToString() const;
};

/// A column of a batch being computed on: an array of `length` rows, or a
/// constant (an array of one row standing for every row).
struct Vec {
  ArrayDataPtr array;
  bool constant = false;

  const DataTypePtr& type() const { return array->type; }
  /// Row index into `array` for logical row i.
  int64_t Index(int64_t i) const { return constant ? 0 : i; }
  bool IsNull(int64_t i) const {
    // (No shared_ptr copy here: a copy per row cost an atomic increment and
    // decrement, 60% of a GROUP BY of seven strings, TPC-DS Q4.)
    if (array->type->id == TypeId::kNull) return true;
    if (array->null_count == 0 || array->buffers.empty()) return false;
    const Buffer* v = array->buffers[0].get();
    return v != nullptr && !bit_util::GetBit(v->data(), Index(i) + array->offset);
  }
  bool MayHaveNulls() const { return array->type->id == TypeId::kNull || array->null_count != 0; }
  /// Fixed-width values pointer at logical row 0 of the array (offset applied).
  template <typename T>
  const T* Values() const {
    return reinterpret_cast<const T*>(array->buffers[1]->data()) + array->offset;
  }
  bool BoolAt(int64_t i) const { return bit_util::GetBit(array->buffers[1]->data(), Index(i) + array->offset); }
  std::string_view StringAt(int64_t i) const {
    const int64_t k = Index(i) + array->offset;
    const int32_t* off = reinterpret_cast<const int32_t*>(array->buffers[1]->data());
    return {reinterpret_cast<const char*>(array->buffers[2]->data()) + off[k],
            static_cast<size_t>(off[k + 1] - off[k])};
  }
  /// Exact value of row i (int32, int64, decimal64/128, date32 as days,
  /// timestamp, bool) as a 128-bit integer. The common widths inline (this
  /// is called per row by comparisons); the rest through ExactAtAny.
  i128 ExactAt(int64_t i) const {
    const TypeId id = array->type->id;
    if (id == TypeId::kInt64 || id == TypeId::kTimestamp) return Values<int64_t>()[Index(i)];
    if (id == TypeId::kInt32 || id == TypeId::kDate32) return Values<int32_t>()[Index(i)];
    if (id == TypeId::kDecimal) {
      if (array->type->bit_width == 128) {
        i128 v;
        std::memcpy(&v, array->buffers[1]->data() + (Index(i) + array->offset) * 16, sizeof(v));
        return v;
      }
      if (array->type->bit_width == 64) return Values<int64_t>()[Index(i)];
    }
    return ExactAtAny(i);
  }
  /// ExactAt for every type (the storage dispatch).
  i128 ExactAtAny(int64_t i) const;
  /// Numeric value of row i as a double (decimals: DecimalToDouble).
  double FloatAt(int64_t i) const;
};

/// A Vec holding `v` as a constant.
Result<Vec> ConstantVec(const Value& v, MemoryPool* pool);
/// The value of row i of `vec` as a Value.
Value ValueAt(const Vec& vec, int64_t i);
/// A full array of `length` rows from a Vec (a constant is repeated).
Result<ArrayDataPtr> Materialize(const Vec& vec, int64_t length, MemoryPool* pool);

/// The type a statement's result column leaves the engine as: decimal64
/// DECIMAL widened to decimal128 (the outward schema is decimal128 for every
/// DECIMAL), every other type itself.
DataTypePtr OutputType(const DataTypePtr& type);
/// `array` in OutputType(array->type) (decimal64 widened; the array itself
/// otherwise). Errors: OutOfMemory.
Result<ArrayDataPtr> WidenForOutput(const ArrayDataPtr& array, MemoryPool* pool);

/// Converts a stored array to its canonical type (the array itself when it
/// already is one or has none). Errors: OutOfMemory; Invalid for a string
/// column over 2 GiB.
Result<ArrayDataPtr> Canonicalize(const ArrayDataPtr& array, MemoryPool* pool);

/// `array` (a DECIMAL column) in the storage of `to`, a DECIMAL of the same
/// scale: decimal64 <-> decimal128 (a scan of files whose columns differ in
/// width, given the table's one type). The array itself when the storage
/// already matches or either is not a DECIMAL. Errors: Invalid for a value
/// outside 64 bits going to decimal64; OutOfMemory.
Result<ArrayDataPtr> ConformDecimalStorage(const ArrayDataPtr& array, const DataTypePtr& to, MemoryPool* pool);

/// Builds a fixed-width output column (bool, int32, int64, decimal64/128,
/// float64, date32, timestamp): values written by index, validity tracked
/// lazily (no bitmap unless a null is set).
class FixedBuilder {
 public:
  /// Allocates `length` values of `type` from `pool`.
  static Result<FixedBuilder> Make(DataTypePtr type, int64_t length, MemoryPool* pool);
  template <typename T>
  T* values() {
    return reinterpret_cast<T*>(data_->mutable_data());
  }
  uint8_t* bits() { return data_->mutable_data(); }  ///< boolean values
  /// Writes row i (0 <= i < length()): `exact` for BOOLEAN (non-zero is
  /// true), INTEGER, BIGINT, DECIMAL (unscaled), DATE and TIMESTAMP, `flt`
  /// for DOUBLE; validity untouched. Errors: NotImplemented for a type
  /// without fixed-width SQL storage (Make refuses those first).
  Status SetValue(int64_t i, i128 exact, double flt);
  /// Marks row i null (allocates the bitmap on first use).
  Status SetNull(int64_t i);
  /// Copies the validity of `src` rows [0, length) (no-op when it has no
  /// nulls); rows already marked null stay null.
  Status CopyValidity(const Vec& src);
  ArrayDataPtr Finish();
  int64_t length() const { return length_; }

 private:
  DataTypePtr type_;
  int64_t length_ = 0;
  MemoryPool* pool_ = nullptr;
  std::shared_ptr<Buffer> data_, validity_;
  int64_t nulls_ = 0;
};

/// Builds a utf8 column row by row (amortised growth, charged to `pool`).
class StringBuilder {
 public:
  static Result<StringBuilder> Make(int64_t length, int64_t data_hint_bytes, MemoryPool* pool);
  Status Append(std::string_view v);
  Status AppendNull();
  Result<ArrayDataPtr> Finish();

 private:
  int64_t length_ = 0, row_ = 0, used_ = 0;
  MemoryPool* pool_ = nullptr;
  std::shared_ptr<Buffer> offsets_, data_, validity_;
  int64_t nulls_ = 0;
};

/// A boolean array from per-row truth bytes (0 false, 1 true, 2 NULL).
Result<ArrayDataPtr> BoolArrayFromTruth(const uint8_t* truth, int64_t length, MemoryPool* pool);

}  // namespace quiver::sql

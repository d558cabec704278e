// quiver/sql/expression/vector.cc — see vector.h.
#include "quiver/sql/expression/vector.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "quiver/columnar/element_load.h"
#include "quiver/sql/expression/temporal.h"

namespace quiver::sql {

TypeClass ClassOf(const DataType& t) {
  switch (t.id) {
    case TypeId::kNull: return TypeClass::kNull;
    case TypeId::kBool: return TypeClass::kBool;
    case TypeId::kInt32:
    case TypeId::kInt64: return TypeClass::kInt;
    case TypeId::kDecimal:
      return t.bit_width == 128 || (t.bit_width == 64 && t.precision <= 18) ? TypeClass::kDecimal : TypeClass::kOther;
    case TypeId::kFloat64: return TypeClass::kFloat;
    case TypeId::kUtf8: return TypeClass::kString;
    case TypeId::kDate32: return TypeClass::kDate;
    case TypeId::kTimestamp: return t.unit == TimeUnit::kMicro ? TypeClass::kTimestamp : TypeClass::kOther;
    default: return TypeClass::kOther;
  }
}

int ScaleOf(const DataType& t) { return t.id == TypeId::kDecimal ? t.scale : 0; }

int PrecisionOf(const DataType& t) {
  switch (t.id) {
    case TypeId::kInt32: return 10;
    case TypeId::kInt64: return 19;
    case TypeId::kDecimal: return t.precision;
    default: return 38;
  }
}

DataTypePtr Decimal(int precision, int scale) {
  return decimal(128, std::clamp(precision, std::max(scale, 1), 38), std::clamp(scale, 0, 38));
}

namespace {
// 10^0 .. 10^38, computed once at compile time.
constexpr std::array<i128, 39> kPowersOf10 = [] {
  std::array<i128, 39> p{};
  p[0] = 1;
  for (size_t k = 1; k < p.size(); ++k) p[k] = p[k - 1] * 10;
  return p;
}();
}  // namespace

// A table read: called per row and per group (e.g. MaxUnscaled in an
// aggregate's output), where a loop of up to 38 128-bit multiplies cost
// 6% of TPC-H Q18.
i128 Pow10(int n) {
  if (n >= 0 && n <= 38) return kPowersOf10[static_cast<size_t>(n)];
  i128 v = 1;  // past 38 digits: wraps as the loop always did (callers clamp)
  for (int k = 0; k < n; ++k) v *= 10;
  return v;
}

i128 MaxUnscaled(int precision) { return Pow10(std::min(precision, 38)) - 1; }

DataTypePtr CanonicalType(const DataTypePtr& type) {
  // Narrower and unsigned integers: BIGINT; uint64 does not fit it.
  if (IsInteger(type->id) && type->id != TypeId::kInt32 && type->id != TypeId::kInt64)
    return type->id == TypeId::kUInt64 ? Decimal(20, 0) : int64();
  switch (type->id) {
    case TypeId::kNull:
    case TypeId::kBool:
    case TypeId::kInt32:
    case TypeId::kInt64:
    case TypeId::kFloat64:
    case TypeId::kUtf8:
    case TypeId::kDate32: return type;
    case TypeId::kFloat32: return float64();
    case TypeId::kDecimal:
      if (type->scale < 0) return nullptr;
      if (type->bit_width == 128 && type->precision <= 38) return type;
      // 64-bit storage kept (8 bytes a value through scans, filters and
      // sums); decimal32 widens to it, so kernels see two storages, not three.
      if (type->bit_width == 64 && type->precision <= 18) return type;
      if (type->bit_width == 32 && type->precision <= 9) return decimal(64, type->precision, type->scale);
      if (type->bit_width < 128) return Decimal(type->precision, type->scale);
      return nullptr;
    case TypeId::kLargeUtf8:
    case TypeId::kUtf8View: return utf8();
    case TypeId::kDate64: return date32();
    case TypeId::kTimestamp: return type->unit == TimeUnit::kMicro ? type : timestamp(TimeUnit::kMicro, type->timezone);
    default: return nullptr;
  }
}

std::string SqlTypeName(const DataType& t) {
  switch (ClassOf(t)) {
    case TypeClass::kNull: return "NULL";
    case TypeClass::kBool: return "BOOLEAN";
    case TypeClass::kInt: return t.id == TypeId::kInt32 ? "INTEGER" : "BIGINT";
    case TypeClass::kDecimal: return "DECIMAL(" + std::to_string(t.precision) + "," + std::to_string(t.scale) + ")";
    case TypeClass::kFloat: return "DOUBLE";
    case TypeClass::kString: return "VARCHAR";
    case TypeClass::kDate: return "DATE";
    case TypeClass::kTimestamp: return "TIMESTAMP";
    case TypeClass::kOther: return t.ToString();
  }
  return t.ToString();
}

// ---- Value ------------------------------------------------------------------

Value Value::Null(DataTypePtr type) {
  Value v;
  v.type = type ? std::move(type) : null();
  return v;
}
Value Value::Bool(bool b) {
  Value v;
  v.type = boolean();
  v.is_null = false;
  v.i = b ? 1 : 0;
  return v;
}
Value Value::Int64(int64_t x) {
  Value v;
  v.type = int64();
  v.is_null = false;
  v.i = x;
  return v;
}
Value Value::Decimal(i128 unscaled, int precision, int scale) {
  Value v;
  v.type = sql::Decimal(precision, scale);
  v.is_null = false;
  v.i = unscaled;
  return v;
}
Value Value::Float(double x) {
  Value v;
  v.type = float64();
  v.is_null = false;
  v.f = x;
  return v;
}
Value Value::String(std::string x) {
  Value v;
  v.type = utf8();
  v.is_null = false;
  v.s = std::move(x);
  return v;
}
Value Value::Date(int32_t days) {
  Value v;
  v.type = date32();
  v.is_null = false;
  v.i = days;
  return v;
}
Value Value::Timestamp(int64_t micros) {
  Value v;
  v.type = timestamp(TimeUnit::kMicro);
  v.is_null = false;
  v.i = micros;
  return v;
}

std::string FormatExact(i128 v, int scale) {
  const bool neg = v < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u != 0);
  while (static_cast<int>(digits.size()) <= scale) digits.push_back('0');
  std::reverse(digits.begin(), digits.end());
  if (scale > 0) digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  return neg ? "-" + digits : digits;
}

std::string Value::ToString() const {
  if (is_null) return "NULL";
  switch (ClassOf(*type)) {
    case TypeClass::kBool: return i ? "TRUE" : "FALSE";
    case TypeClass::kInt:
    case TypeClass::kDecimal: return FormatExact(i, ScaleOf(*type));
    case TypeClass::kFloat: {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.17g", f);
      return buf;
    }
    case TypeClass::kString: return "'" + s + "'";
    case TypeClass::kDate: return "DATE '" + FormatDate(static_cast<int32_t>(i)) + "'";
    case TypeClass::kTimestamp: return "TIMESTAMP '" + FormatTimestamp(static_cast<int64_t>(i)) + "'";
    default: return "?";
  }
}

// ---- Vec --------------------------------------------------------------------

i128 Vec::ExactAtAny(int64_t i) const {
  const int64_t k = Index(i) + array->offset;
  const uint8_t* d = array->buffers[1]->data();
  return VisitSqlStorage(
      *array->type,
      [&]<typename T>() -> i128 {
        if constexpr (kIsPackedBit<T>) {
          return bit_util::GetBit(d, k) ? 1 : 0;
        } else if constexpr (std::is_floating_point_v<T>) {
          return 0;
        } else {
          return LoadValue<T>(d, k);
        }
      },
      [] { return i128{0}; });
}

double Vec::FloatAt(int64_t i) const {
  if (array->type->id == TypeId::kFloat64) return Values<double>()[Index(i)];
  const i128 v = ExactAt(i);
  const int s = ScaleOf(*array->type);
  return s == 0 ? static_cast<double>(v) : DecimalToDouble(v, s);
}

double DecimalToDouble(i128 unscaled, int scale) {
  // i128 -> double is correctly rounded (round to nearest, ties to even).
  if (scale <= 0) return static_cast<double>(unscaled);
  constexpr i128 kExact = i128{1} << 53;
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  if (scale <= 22 && unscaled > -kExact && unscaled < kExact)
    return static_cast<double>(unscaled) / kPow10[scale];  // both exact: one rounding
  // "[-]digits e-scale", read by strtod (correctly rounded).
  char buf[64];
  char* end = buf + sizeof(buf);
  char* p = end;
  *--p = '\0';
  int exp = scale;
  do {
    *--p = static_cast<char>('0' + static_cast<int>(exp % 10));
    exp /= 10;
  } while (exp > 0);
  *--p = '-';
  *--p = 'e';
  const bool negative = unscaled < 0;
  unsigned __int128 m = negative ? -static_cast<unsigned __int128>(unscaled) : static_cast<unsigned __int128>(unscaled);
  do {
    *--p = static_cast<char>('0' + static_cast<int>(m % 10));
    m /= 10;
  } while (m > 0);
  if (negative) *--p = '-';
  return std::strtod(p, nullptr);
}

namespace {
// Writes the non-null `v` into rows [0, length) of `b` (built for v.type).
Status FillConstant(const Value& v, FixedBuilder* b, int64_t length) {
  return VisitSqlStorage(
      *v.type,
      [&]<typename T>() -> Status {
        if constexpr (kIsPackedBit<T>) {
          if (length == 1) {
            bit_util::SetBitTo(b->bits(), 0, v.i != 0);
          } else {
            std::memset(b->bits(), v.i ? 0xff : 0, static_cast<size_t>(bit_util::BytesForBits(length)));
          }
        } else if constexpr (std::is_floating_point_v<T>) {
          std::fill_n(b->values<T>(), length, static_cast<T>(v.f));
        } else {
          std::fill_n(b->values<T>(), length, static_cast<T>(v.i));
        }
        return Status::OK();
      },
      [&] { return Status::NotImplemented("a constant of type " + v.type->ToString()); });
}
}  // namespace

Result<Vec> ConstantVec(const Value& v, MemoryPool* pool) {
  Vec out;
  out.constant = true;
  const TypeClass c = ClassOf(*v.type);
  if (c == TypeClass::kNull) {
    auto a = std::make_shared<ArrayData>();
    a->type = null();
    a->length = 1;
    a->null_count = 1;
    out.array = a;
    return out;
  }
  if (c == TypeClass::kString) {
    QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(1, static_cast<int64_t>(v.s.size()), pool));
    QUIVER_RETURN_NOT_OK(v.is_null ? b.AppendNull() : b.Append(v.s));
    QUIVER_ASSIGN_OR_RETURN(out.array, b.Finish());
    return out;
  }
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(v.type, 1, pool));
  if (v.is_null) {
    QUIVER_RETURN_NOT_OK(b.SetNull(0));
  } else {
    QUIVER_RETURN_NOT_OK(FillConstant(v, &b, 1));
  }
  out.array = b.Finish();
  return out;
}

Value ValueAt(const Vec& vec, int64_t i) {
  if (vec.IsNull(i)) return Value::Null(vec.type());
  Value v;
  v.type = vec.type();
  v.is_null = false;
  switch (ClassOf(*vec.type())) {
    case TypeClass::kFloat: v.f = vec.Values<double>()[vec.Index(i)]; break;
    case TypeClass::kString: v.s = std::string(vec.StringAt(i)); break;
    default: v.i = vec.ExactAt(i); break;
  }
  return v;
}

Result<ArrayDataPtr> Materialize(const Vec& vec, int64_t length, MemoryPool* pool) {
  if (!vec.constant) return vec.array;
  if (vec.array->type->id == TypeId::kNull) {
    auto a = std::make_shared<ArrayData>();
    a->type = null();
    a->length = length;
    a->null_count = length;
    return ArrayDataPtr(a);
  }
  const Value v = ValueAt(vec, 0);
  if (ClassOf(*v.type) == TypeClass::kString) {
    QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(length, static_cast<int64_t>(v.s.size()) * length, pool));
    for (int64_t r = 0; r < length; ++r) QUIVER_RETURN_NOT_OK(v.is_null ? b.AppendNull() : b.Append(v.s));
    return b.Finish();
  }
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(v.type, length, pool));
  if (v.is_null) {
    for (int64_t r = 0; r < length; ++r) QUIVER_RETURN_NOT_OK(b.SetNull(r));
    return b.Finish();
  }
  QUIVER_RETURN_NOT_OK(FillConstant(v, &b, length));
  return b.Finish();
}

// ---- Canonicalize -----------------------------------------------------------

Result<ArrayDataPtr> Canonicalize(const ArrayDataPtr& array, MemoryPool* pool) {
  const DataTypePtr target = CanonicalType(array->type);
  if (!target || target.get() == array->type.get() || (array->type->Equals(*target))) return array;
  const ArrayData& a = *array;
  const int64_t n = a.length;
  Vec src;
  src.array = array;
  auto valid = [&](int64_t i) { return a.IsValid(i); };
  if (ClassOf(*target) == TypeClass::kString) {
    int64_t total = 0;
    std::vector<std::string_view> views(static_cast<size_t>(n));
    const TypeId id = a.type->id;
    for (int64_t i = 0; i < n; ++i) {
      if (!valid(i)) continue;
      const int64_t k = a.offset + i;
      std::string_view v;
      if (id == TypeId::kBinary) {
        const int32_t* off = a.GetValues<int32_t>(1);
        v = {reinterpret_cast<const char*>(a.buffers[2]->data()) + off[k], static_cast<size_t>(off[k + 1] - off[k])};
      } else if (id == TypeId::kLargeUtf8 || id == TypeId::kLargeBinary) {
        const int64_t* off = a.GetValues<int64_t>(1);
        v = {reinterpret_cast<const char*>(a.buffers[2]->data()) + off[k], static_cast<size_t>(off[k + 1] - off[k])};
      } else {  // views: 16-byte entries, inline up to 12 bytes
        const uint8_t* e = a.buffers[1]->data() + k * 16;
        int32_t len;
        std::memcpy(&len, e, 4);
        if (len <= 12) {
          v = {reinterpret_cast<const char*>(e + 4), static_cast<size_t>(len)};
        } else {
          int32_t buf, off;
          std::memcpy(&buf, e + 8, 4);
          std::memcpy(&off, e + 12, 4);
          v = {reinterpret_cast<const char*>(a.buffers[static_cast<size_t>(2 + buf)]->data()) + off,
               static_cast<size_t>(len)};
        }
      }
      views[static_cast<size_t>(i)] = v;
      total += static_cast<int64_t>(v.size());
    }
    if (total > INT32_MAX)
      return Status::Invalid("a string column of " + std::to_string(total) +
                             " bytes is over the 2 GiB a VARCHAR batch holds");
    QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(n, total, pool));
    for (int64_t i = 0; i < n; ++i)
      QUIVER_RETURN_NOT_OK(valid(i) ? b.Append(views[static_cast<size_t>(i)]) : b.AppendNull());
    return b.Finish();
  }
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(target, n, pool));
  if (a.null_count != 0) {
    for (int64_t i = 0; i < n; ++i)
      if (!valid(i)) QUIVER_RETURN_NOT_OK(b.SetNull(i));
  }
  const uint8_t* d = a.buffers[1] ? a.buffers[1]->data() : nullptr;
  switch (target->id) {
    case TypeId::kInt64: {
      int64_t* out = b.values<int64_t>();
      for (int64_t i = 0; i < n; ++i) out[i] = LoadIntegerAsInt64(a.type->id, d, a.offset + i);
      break;
    }
    case TypeId::kDecimal: {
      if (target->bit_width == 64) {  // from decimal32
        int64_t* out = b.values<int64_t>();
        for (int64_t i = 0; i < n; ++i) out[i] = LoadValue<int32_t>(d, a.offset + i);
        break;
      }
      i128* out = b.values<i128>();
      if (a.type->id == TypeId::kUInt64) {
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<i128>(LoadValue<uint64_t>(d, a.offset + i));
      } else if (a.type->bit_width == 64) {
        for (int64_t i = 0; i < n; ++i) out[i] = LoadValue<int64_t>(d, a.offset + i);
      } else {
        for (int64_t i = 0; i < n; ++i) out[i] = LoadValue<int32_t>(d, a.offset + i);
      }
      break;
    }
    case TypeId::kFloat64: {
      double* out = b.values<double>();
      for (int64_t i = 0; i < n; ++i) out[i] = LoadValue<float>(d, a.offset + i);
      break;
    }
    case TypeId::kDate32: {
      int32_t* out = b.values<int32_t>();
      for (int64_t i = 0; i < n; ++i) {
        const int64_t ms = LoadValue<int64_t>(d, a.offset + i);
        out[i] = static_cast<int32_t>(ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000));
      }
      break;
    }
    case TypeId::kTimestamp: {
      int64_t* out = b.values<int64_t>();
      for (int64_t i = 0; i < n; ++i) {
        const int64_t v = LoadValue<int64_t>(d, a.offset + i);
        switch (a.type->unit) {
          case TimeUnit::kSecond: out[i] = v * 1000000; break;
          case TimeUnit::kMilli: out[i] = v * 1000; break;
          case TimeUnit::kNano: out[i] = v >= 0 ? v / 1000 : -((-v + 999) / 1000); break;
          case TimeUnit::kMicro: out[i] = v; break;
        }
      }
      break;
    }
    default: return Status::NotImplemented("converting " + a.type->ToString() + " to " + target->ToString());
  }
  return b.Finish();
}

DataTypePtr OutputType(const DataTypePtr& type) {
  return IsDecimal64(*type) ? decimal(128, type->precision, type->scale) : type;
}

Result<ArrayDataPtr> WidenForOutput(const ArrayDataPtr& array, MemoryPool* pool) {
  if (!IsDecimal64(*array->type)) return array;
  const int64_t n = array->length;
  QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::Allocate(pool, std::max<int64_t>(n * 16, 1)));
  const int64_t* in = array->GetValues<int64_t>(1) + array->offset;
  uint8_t* out = data->mutable_data();
  for (int64_t i = 0; i < n; ++i) {
    const i128 v = in[i];
    std::memcpy(out + i * 16, &v, 16);
  }
  auto a = std::make_shared<ArrayData>();
  a->type = OutputType(array->type);
  a->length = n;
  a->null_count = array->null_count;
  a->offset = 0;
  if (array->null_count != 0 && !array->buffers.empty() && array->buffers[0]) {
    if (array->offset == 0) {
      a->buffers = {array->buffers[0], data};
    } else {
      QUIVER_ASSIGN_OR_RETURN(auto bits, Buffer::Allocate(pool, std::max<int64_t>(bit_util::BytesForBits(n), 1)));
      for (int64_t i = 0; i < n; ++i)
        bit_util::SetBitTo(bits->mutable_data(), i, bit_util::GetBit(array->buffers[0]->data(), array->offset + i));
      a->buffers = {bits, data};
    }
  } else {
    a->null_count = 0;
    a->buffers = {nullptr, data};
  }
  return ArrayDataPtr(a);
}

Result<ArrayDataPtr> ConformDecimalStorage(const ArrayDataPtr& array, const DataTypePtr& to, MemoryPool* pool) {
  const DataType& from = *array->type;
  if (from.id != TypeId::kDecimal || to->id != TypeId::kDecimal || from.bit_width == to->bit_width ||
      ClassOf(from) != TypeClass::kDecimal || ClassOf(*to) != TypeClass::kDecimal || from.scale != to->scale)
    return array;
  if (IsDecimal64(from) && to->precision == from.precision) return WidenForOutput(array, pool);
  Vec v;
  v.array = array;
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(to, array->length, pool));
  const i128 lim = MaxUnscaled(to->precision);
  for (int64_t i = 0; i < array->length; ++i) {
    if (v.IsNull(i)) {
      QUIVER_RETURN_NOT_OK(b.SetNull(i));
      QUIVER_RETURN_NOT_OK(b.SetValue(i, 0, 0));
      continue;
    }
    const i128 x = v.ExactAt(i);
    if (x > lim || x < -lim)
      return Status::Invalid("a value of a " + from.ToString() + " column does not fit the table's " + to->ToString());
    QUIVER_RETURN_NOT_OK(b.SetValue(i, x, 0));
  }
  return b.Finish();
}

// ---- builders ---------------------------------------------------------------

namespace {
int64_t ByteWidth(const DataType& t) {
  return VisitSqlStorage(
      t,
      []<typename T>() -> int64_t {
        if constexpr (kIsPackedBit<T>) {
          return 0;
        } else {
          return static_cast<int64_t>(sizeof(T));
        }
      },
      [] { return int64_t{0}; });
}
}  // namespace

Result<FixedBuilder> FixedBuilder::Make(DataTypePtr type, int64_t length, MemoryPool* pool) {
  FixedBuilder b;
  const int64_t bytes = type->id == TypeId::kBool ? bit_util::BytesForBits(length) : ByteWidth(*type) * length;
  if (type->id != TypeId::kBool && ByteWidth(*type) == 0)
    return Status::NotImplemented("cannot build a column of type " + type->ToString());
  QUIVER_ASSIGN_OR_RETURN(b.data_, Buffer::Allocate(pool, std::max<int64_t>(bytes, 1)));
  if (type->id == TypeId::kBool && bytes > 0) std::memset(b.data_->mutable_data(), 0, static_cast<size_t>(bytes));
  b.type_ = std::move(type);
  b.length_ = length;
  b.pool_ = pool;
  return b;
}

Status FixedBuilder::SetValue(int64_t i, i128 exact, double flt) {
  return VisitSqlStorage(
      *type_,
      [&]<typename T>() -> Status {
        if constexpr (kIsPackedBit<T>) {
          bit_util::SetBitTo(bits(), i, exact != 0);
        } else if constexpr (std::is_floating_point_v<T>) {
          bit_util::StoreLE<T>(data_->mutable_data() + i * static_cast<int64_t>(sizeof(T)), static_cast<T>(flt));
        } else {
          bit_util::StoreLE<T>(data_->mutable_data() + i * static_cast<int64_t>(sizeof(T)), static_cast<T>(exact));
        }
        return Status::OK();
      },
      [&] { return Status::NotImplemented("a value of type " + type_->ToString()); });
}

Status FixedBuilder::SetNull(int64_t i) {
  if (!validity_) {
    const int64_t bytes = std::max<int64_t>(bit_util::BytesForBits(length_), 1);
    QUIVER_ASSIGN_OR_RETURN(validity_, Buffer::Allocate(pool_, bytes));
    std::memset(validity_->mutable_data(), 0xff, static_cast<size_t>(bytes));
  }
  if (bit_util::GetBit(validity_->data(), i)) {
    bit_util::ClearBit(validity_->mutable_data(), i);
    ++nulls_;
  }
  return Status::OK();
}

Status FixedBuilder::CopyValidity(const Vec& src) {
  if (!src.MayHaveNulls()) return Status::OK();
  for (int64_t i = 0; i < length_; ++i)
    if (src.IsNull(i)) QUIVER_RETURN_NOT_OK(SetNull(i));
  return Status::OK();
}

ArrayDataPtr FixedBuilder::Finish() {
  auto a = std::make_shared<ArrayData>();
  a->type = type_;
  a->length = length_;
  a->null_count = nulls_;
  a->buffers = {nulls_ ? validity_ : nullptr, data_};
  return a;
}

Result<StringBuilder> StringBuilder::Make(int64_t length, int64_t data_hint_bytes, MemoryPool* pool) {
  StringBuilder b;
  b.length_ = length;
  b.pool_ = pool;
  QUIVER_ASSIGN_OR_RETURN(b.offsets_, Buffer::Allocate(pool, (length + 1) * 4));
  QUIVER_ASSIGN_OR_RETURN(b.data_, Buffer::Allocate(pool, std::max<int64_t>(data_hint_bytes, 16)));
  reinterpret_cast<int32_t*>(b.offsets_->mutable_data())[0] = 0;
  return b;
}

Status StringBuilder::Append(std::string_view v) {
  const int64_t need = used_ + static_cast<int64_t>(v.size());
  if (need > INT32_MAX) return Status::Invalid("a VARCHAR column passed 2 GiB in one batch");
  if (need > data_->size()) {
    QUIVER_RETURN_NOT_OK(data_->Resize(std::max(need, data_->size() * 2), false));
  }
  if (!v.empty()) std::memcpy(data_->mutable_data() + used_, v.data(), v.size());
  used_ = need;
  reinterpret_cast<int32_t*>(offsets_->mutable_data())[++row_] = static_cast<int32_t>(used_);
  return Status::OK();
}

Status StringBuilder::AppendNull() {
  if (!validity_) {
    const int64_t bytes = std::max<int64_t>(bit_util::BytesForBits(length_), 1);
    QUIVER_ASSIGN_OR_RETURN(validity_, Buffer::Allocate(pool_, bytes));
    std::memset(validity_->mutable_data(), 0xff, static_cast<size_t>(bytes));
  }
  bit_util::ClearBit(validity_->mutable_data(), row_);
  ++nulls_;
  reinterpret_cast<int32_t*>(offsets_->mutable_data())[++row_] = static_cast<int32_t>(used_);
  return Status::OK();
}

Result<ArrayDataPtr> StringBuilder::Finish() {
  if (row_ != length_)
    return Status::Invalid("string builder got " + std::to_string(row_) + " of " + std::to_string(length_) + " rows");
  if (data_->size() > std::max<int64_t>(used_, 16) * 2)
    QUIVER_RETURN_NOT_OK(data_->Resize(std::max<int64_t>(used_, 1)));
  auto a = std::make_shared<ArrayData>();
  a->type = utf8();
  a->length = length_;
  a->null_count = nulls_;
  a->buffers = {nulls_ ? validity_ : nullptr, offsets_, data_};
  return ArrayDataPtr(a);
}

Result<ArrayDataPtr> BoolArrayFromTruth(const uint8_t* truth, int64_t length, MemoryPool* pool) {
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(boolean(), length, pool));
  uint8_t* bits = b.bits();
  for (int64_t i = 0; i < length; ++i) {
    if (truth[i] == 1)
      bit_util::SetBit(bits, i);
    else if (truth[i] == 2)
      QUIVER_RETURN_NOT_OK(b.SetNull(i));
  }
  return b.Finish();
}

}  // namespace quiver::sql

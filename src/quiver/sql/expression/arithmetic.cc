// quiver/sql/expression/arithmetic.cc — + - * / % unary minus, abs,
// round / bround (half away from zero / half to even) and pmod over
// integers (BIGINT, or INTEGER in the spark dialect; overflow checked),
// decimals (exact 128-bit at the result's scale, overflow past its
// precision checked) and DOUBLE; the DOUBLE functions floor, ceil, sqrt,
// ln, log10, log2, log, exp, power, cbrt, sign.
// The binder (function_registry.cc) has chosen the result type; arguments
// of other numeric classes are converted on the fly.
#include <algorithm>
#include <cmath>
#include <vector>

#include "quiver/sql/expression/kernels.h"

namespace quiver::sql::kernels {
namespace {

// Reads an exact argument (int32, int64, decimal64/128, constant) as i128.
struct ExactReader {
  const int32_t* i32 = nullptr;
  const int64_t* i64 = nullptr;
  const i128* dec = nullptr;
  i128 constant = 0;
  bool is_const = false;
  explicit ExactReader(const Vec& v) {
    if (v.constant || v.type()->id == TypeId::kNull) {
      is_const = true;
      constant = v.type()->id == TypeId::kNull || v.IsNull(0) ? 0 : v.ExactAt(0);
      return;
    }
    if (IsDecimal64(*v.type())) {
      i64 = v.Values<int64_t>();
      return;
    }
    VisitIntegerType(
        v.type()->id,
        [&]<typename T>() {
          if constexpr (std::is_same_v<T, int32_t>) {
            i32 = v.Values<int32_t>();
          } else if constexpr (std::is_same_v<T, int64_t>) {
            i64 = v.Values<int64_t>();
          } else {
            dec = v.Values<i128>();
          }
        },
        [&] { dec = v.Values<i128>(); });
  }
  i128 operator[](int64_t i) const {
    if (is_const) return constant;
    if (i64) return i64[i];
    if (i32) return i32[i];
    i128 x;
    std::memcpy(&x, dec + i, 16);
    return x;
  }
};

struct FloatReader {
  const Vec* v;
  const double* f = nullptr;
  double constant = 0;
  bool is_const = false;
  explicit FloatReader(const Vec& vec) : v(&vec) {
    if (vec.constant || vec.type()->id == TypeId::kNull) {
      is_const = true;
      constant = vec.type()->id == TypeId::kNull || vec.IsNull(0) ? 0 : vec.FloatAt(0);
    } else if (vec.type()->id == TypeId::kFloat64) {
      f = vec.Values<double>();
    }
  }
  double operator[](int64_t i) const { return is_const ? constant : f ? f[i] : v->FloatAt(i); }
};

// r^3 - a, with r^3 carried in two doubles (fma) so that the difference
// is near exact.
double CubeError(double r, double a) {
  const double sq = r * r, sq_low = std::fma(r, r, -sq);
  const double cube = sq * r, cube_low = std::fma(sq, r, -cube) + sq_low * r;
  return (cube - a) + cube_low;
}

// The cube root: glibc's cbrt is not correctly rounded (cbrt(27) is
// 3.0000000000000004), so of it and its two neighbours the one whose cube
// is nearest `a` is taken: exact cubes give their roots, as Java's
// Math.cbrt (Spark's) does.
double CubeRoot(double a) {
  const double r = std::cbrt(a);
  if (r == 0 || !std::isfinite(r)) return r;
  double best = r, best_error = std::fabs(CubeError(r, a));
  for (const double c : {std::nextafter(r, -INFINITY), std::nextafter(r, INFINITY)}) {
    const double error = std::fabs(CubeError(c, a));
    if (error < best_error) {
      best = c;
      best_error = error;
    }
  }
  return best;
}

bool AllConstant(const std::vector<Vec>& args) {
  for (const auto& a : args)
    if (!a.constant && a.type()->id != TypeId::kNull) return false;
  return true;
}

// Marks result rows null where any argument is null.
Status PropagateNulls(FixedBuilder* b, const std::vector<Vec>& args, int64_t n) {
  for (const auto& a : args) {
    if (!a.MayHaveNulls()) continue;
    if (a.constant || a.type()->id == TypeId::kNull) {
      if (a.type()->id == TypeId::kNull || a.IsNull(0)) {
        for (int64_t i = 0; i < n; ++i) QUIVER_RETURN_NOT_OK(b->SetNull(i));
        return Status::OK();
      }
      continue;
    }
    QUIVER_RETURN_NOT_OK(b->CopyValidity(a));
  }
  return Status::OK();
}

bool RowIsNull(const std::vector<Vec>& args, int64_t i) {
  for (const auto& a : args)
    if (a.IsNull(i)) return true;
  return false;
}

i128 DivRound(i128 a, i128 b) {
  // a / b rounded half away from zero (b != 0; r2 * 2 could overflow for
  // b near 10^38, so r2 >= b2 - r2).
  i128 q = a / b, r = a % b;
  if (r != 0) {
    const i128 r2 = r < 0 ? -r : r, b2 = b < 0 ? -b : b;
    if (r2 >= b2 - r2) q += ((a < 0) != (b < 0)) ? -1 : 1;
  }
  return q;
}

// a / b rounded half to even (bround; b > 0, a power of ten).
i128 DivRoundHalfEven(i128 a, i128 b) {
  i128 q = a / b, r = a % b;
  if (r != 0) {
    const i128 r2 = r < 0 ? -r : r;
    const bool up = r2 > b - r2 || (r2 == b - r2 && q % 2 != 0);
    if (up) q += a < 0 ? -1 : 1;
  }
  return q;
}

bool ScaleUp(i128 v, int k, i128* out) {
  i128 r = v;
  for (int j = 0; j < k; ++j)
    if (__builtin_mul_overflow(r, static_cast<i128>(10), &r)) return false;
  *out = r;
  return true;
}

// An exact operand of the fast path as 64-bit integers scaled by 10^k: the
// column's own int64 values, a scaled copy in `scratch`, or a constant.
// A decimal128 column at k = 0 is read in place instead (`d`: its low
// words are the values; the loop checks that the high words are their sign
// extension).
struct Narrow64 {
  const int64_t* p = nullptr;
  const uint8_t* d = nullptr;
  int64_t c = 0;
  bool is_const = false;
  std::shared_ptr<Buffer> scratch;
  int kind() const { return is_const ? 0 : d != nullptr ? 2 : 1; }
};

// Operand i of a fast-path loop (KIND as Narrow64::kind()); a decimal
// value wider than 64 bits sets bits of `*wide`.
template <int KIND>
[[gnu::always_inline]] inline int64_t NarrowAt(const Narrow64& x, int64_t i, uint64_t* wide) {
  if constexpr (KIND == 0) {
    return x.c;
  } else if constexpr (KIND == 1) {
    return x.p[i];
  } else {
    int64_t lo, hi;
    std::memcpy(&lo, x.d + i * 16, 8);
    std::memcpy(&hi, x.d + i * 16 + 8, 8);
    *wide |= static_cast<uint64_t>(hi ^ (lo >> 63));
    return lo;
  }
}

// put(i, op(x[i], y[i])) for every row; false when some decimal operand
// did not fit 64 bits (the outputs are then meaningless).
template <int KX, int KY, typename Op, typename Put>
bool NarrowLoop(const Narrow64& x, const Narrow64& y, int64_t rows, Op op, Put put) {
  uint64_t wide = 0;
  for (int64_t i = 0; i < rows; ++i) put(i, op(NarrowAt<KX>(x, i, &wide), NarrowAt<KY>(y, i, &wide)));
  return wide == 0;
}

template <typename Op, typename Put>
bool NarrowDispatch(const Narrow64& x, const Narrow64& y, int64_t rows, Op op, Put put) {
  switch (x.kind() * 3 + y.kind()) {
    case 1: return NarrowLoop<0, 1>(x, y, rows, op, put);
    case 2: return NarrowLoop<0, 2>(x, y, rows, op, put);
    case 3: return NarrowLoop<1, 0>(x, y, rows, op, put);
    case 4: return NarrowLoop<1, 1>(x, y, rows, op, put);
    case 5: return NarrowLoop<1, 2>(x, y, rows, op, put);
    case 6: return NarrowLoop<2, 0>(x, y, rows, op, put);
    case 7: return NarrowLoop<2, 1>(x, y, rows, op, put);
    case 8: return NarrowLoop<2, 2>(x, y, rows, op, put);
    default: return false;  // two constants: not a fast-path case
  }
}

// Fills `out` from `v` (int32, int64, decimal128 or a constant) times 10^k;
// false when some value (or its scaled form) does not fit 64 bits.
Result<bool> LoadNarrow(const Vec& v, int k, int64_t rows, MemoryPool* pool, Narrow64* out) {
  if (k < 0 || k > 18) return false;
  const int64_t m = static_cast<int64_t>(Pow10(k));
  if (v.constant || v.type()->id == TypeId::kNull) {
    const i128 c = v.type()->id == TypeId::kNull || v.IsNull(0) ? 0 : v.ExactAt(0);
    i128 scaled;
    if (__builtin_mul_overflow(c, static_cast<i128>(m), &scaled) || scaled < INT64_MIN || scaled > INT64_MAX)
      return false;
    out->is_const = true;
    out->c = static_cast<int64_t>(scaled);
    return true;
  }
  const TypeId id = v.type()->id;
  const bool i64 = id == TypeId::kInt64 || IsDecimal64(*v.type());
  if (i64 && m == 1) {
    out->p = v.Values<int64_t>();
    return true;
  }
  if (id == TypeId::kDecimal && m == 1) {
    out->d = v.array->buffers[1]->data() + v.array->offset * 16;
    return true;
  }
  QUIVER_ASSIGN_OR_RETURN(out->scratch, Buffer::Allocate(pool, std::max<int64_t>(rows, 1) * 8));
  int64_t* dst = reinterpret_cast<int64_t*>(out->scratch->mutable_data());
  bool bad = false;
  if (id == TypeId::kInt32) {
    const int32_t* src = v.Values<int32_t>();
    for (int64_t i = 0; i < rows; ++i) bad |= __builtin_mul_overflow(static_cast<int64_t>(src[i]), m, &dst[i]);
  } else if (i64) {
    const int64_t* src = v.Values<int64_t>();
    for (int64_t i = 0; i < rows; ++i) bad |= __builtin_mul_overflow(src[i], m, &dst[i]);
  } else if (id == TypeId::kDecimal) {
    // Little-endian two's complement: a value fits 64 bits when its high
    // word is the sign extension of its low word.
    const uint8_t* src = v.array->buffers[1]->data() + v.array->offset * 16;
    for (int64_t i = 0; i < rows; ++i) {
      int64_t lo, hi;
      std::memcpy(&lo, src + i * 16, 8);
      std::memcpy(&hi, src + i * 16 + 8, 8);
      bad |= hi != (lo >> 63);
      bad |= __builtin_mul_overflow(lo, m, &dst[i]);
    }
  } else {
    return false;
  }
  if (bad) return false;
  out->p = dst;
  return true;
}

// e's result written as `out_type`: e.type itself, or BIGINT for an INTEGER
// result (checked against INTEGER's range, then narrowed by the caller).
Result<Vec> ExactArithmetic(const Expr& e, const DataTypePtr& out_type, const std::vector<Vec>& args, int64_t n,
                            EvalContext* ctx) {
  const bool out_decimal = out_type->id == TypeId::kDecimal;
  const bool out_int32 = e.type->id == TypeId::kInt32;
  const int so = ScaleOf(*out_type);
  const i128 max_out =
      out_decimal ? MaxUnscaled(out_type->precision) : static_cast<i128>(out_int32 ? INT32_MAX : INT64_MAX);
  const i128 min_out = out_decimal ? -max_out : static_cast<i128>(out_int32 ? INT32_MIN : INT64_MIN);
  // Spark's message for an integer overflow (ARITHMETIC_OVERFLOW) where
  // the result is the spark dialect's INTEGER.
  const std::string overflow_prefix = out_int32 ? "[ARITHMETIC_OVERFLOW] integer overflow: " : "";
  const int64_t rows = AllConstant(args) ? 1 : n;
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(out_type, rows, ctx->pool));
  QUIVER_RETURN_NOT_OK(PropagateNulls(&b, args, rows));
  std::vector<ExactReader> r;
  for (const auto& a : args) r.emplace_back(a);
  const int s0 = ScaleOf(*args[0].type());
  const int s1 = args.size() > 1 ? ScaleOf(*args[1].type()) : 0;
  // decimal64 results (unary minus / abs of a decimal64 column) are stored
  // as int64: their precision (<= 18) bounds them.
  i128* dec_out = IsDecimal128(*out_type) ? b.values<i128>() : nullptr;
  int64_t* int_out = dec_out ? nullptr : b.values<int64_t>();
  const bool any_nulls = [&] {
    for (const auto& a : args)
      if (a.MayHaveNulls()) return true;
    return false;
  }();
  auto store = [&](int64_t i, i128 v) -> Status {
    if (v > max_out || v < min_out)
      return NumericOverflow(overflow_prefix + "result of '" + FnName(e.fn) + "' does not fit " + SqlTypeName(*e.type));
    if (dec_out) {
      std::memcpy(dec_out + i, &v, 16);
    } else {
      int_out[i] = static_cast<int64_t>(v);
    }
    return Status::OK();
  };
  // Fast path: + - * over NULL-free inputs whose operands (brought to the
  // result's scale for + -) fit 64 bits, as every DECIMAL(p <= 18) and
  // integer does: one fused loop of 64 x 64 -> 128-bit operations, which
  // cannot overflow 128 bits, so only the result's range is checked.
  if (!any_nulls && rows > 1 && args.size() == 2 && (e.fn == Fn::kAdd || e.fn == Fn::kSub || e.fn == Fn::kMul)) {
    const int kx = e.fn == Fn::kMul ? 0 : so - s0, ky = e.fn == Fn::kMul ? 0 : so - s1;
    Narrow64 x, y;
    QUIVER_ASSIGN_OR_RETURN(const bool fx, LoadNarrow(args[0], kx, rows, ctx->pool, &x));
    QUIVER_ASSIGN_OR_RETURN(const bool fy, fx ? LoadNarrow(args[1], ky, rows, ctx->pool, &y) : Result<bool>(false));
    if (fx && fy) {
      bool overflow = false;
      // Inlined into each loop (GCC otherwise called it per value: a sixth
      // of TPC-H Q1).
      auto put = [&](int64_t i, i128 v) __attribute__((always_inline)) {
        overflow |= v > max_out || v < min_out;
        if (dec_out) {
          std::memcpy(dec_out + i, &v, 16);
        } else {
          int_out[i] = static_cast<int64_t>(v);
        }
      };
      bool narrow;
      if (e.fn == Fn::kAdd) {
        narrow = NarrowDispatch(
            x, y, rows, [](int64_t a, int64_t c) __attribute__((always_inline)) { return static_cast<i128>(a) + c; },
            put);
      } else if (e.fn == Fn::kSub) {
        narrow = NarrowDispatch(
            x, y, rows, [](int64_t a, int64_t c) __attribute__((always_inline)) { return static_cast<i128>(a) - c; },
            put);
      } else {
        narrow = NarrowDispatch(
            x, y, rows, [](int64_t a, int64_t c) __attribute__((always_inline)) { return static_cast<i128>(a) * c; },
            put);
      }
      if (narrow) {  // else a decimal operand was wider: the exact loop below
        if (overflow)
          return NumericOverflow(overflow_prefix + "result of '" + FnName(e.fn) + "' does not fit " +
                                 SqlTypeName(*e.type));
        Vec out;
        out.array = b.Finish();
        return out;
      }
    }
  }
  for (int64_t i = 0; i < rows; ++i) {
    if (any_nulls && RowIsNull(args, i)) {
      if (dec_out) {
        const i128 zero = 0;
        std::memcpy(dec_out + i, &zero, 16);
      } else {
        int_out[i] = 0;
      }
      continue;
    }
    i128 a = r[0][i];
    i128 v = 0;
    switch (e.fn) {
      case Fn::kNeg: v = -a; break;
      case Fn::kAbs: v = a < 0 ? -a : a; break;
      case Fn::kRound:
      case Fn::kBround: {
        // round(x, d): to scale so (<= s0); a negative d also rounds to a
        // multiple of 10^-d (round(1049.5, -2) = 1000). bround: ties to even.
        const i128 d = r[1][i];
        const int left = d < 0 ? static_cast<int>(std::min<i128>(-d, 40)) : 0;
        const int drop = s0 - so + left;
        if (drop > 38) {
          v = 0;  // |a| < 10^38 rounds to 0 at 10^39 and beyond
        } else if (drop > 0) {
          v = e.fn == Fn::kBround ? DivRoundHalfEven(a, Pow10(drop)) : DivRound(a, Pow10(drop));
          if (left > 0 && __builtin_mul_overflow(v, Pow10(left), &v)) return NumericOverflow("result of round()");
        } else {
          v = a;
        }
        break;
      }
      case Fn::kAdd:
      case Fn::kSub: {
        i128 x, y;
        if (!ScaleUp(a, so - s0, &x) || !ScaleUp(r[1][i], so - s1, &y)) return NumericOverflow("operand of '+'/'-'");
        if (e.fn == Fn::kAdd ? __builtin_add_overflow(x, y, &v) : __builtin_sub_overflow(x, y, &v))
          return NumericOverflow(std::string("result of '") + FnName(e.fn) + "'");
        break;
      }
      case Fn::kMul: {
        // so == s0 + s1 (the binder's rule)
        if (__builtin_mul_overflow(a, r[1][i], &v)) return NumericOverflow("result of '*'");
        break;
      }
      case Fn::kDiv: {
        const i128 d = r[1][i];
        if (d == 0) return DivisionByZero();
        if (!out_decimal) {
          v = a / d;  // integer division truncates (PostgreSQL)
        } else {
          const int k = so - s0 + s1;
          i128 num = a, den = d;
          if (k >= 0) {
            if (!ScaleUp(a, k, &num)) return NumericOverflow("dividend of '/' at scale " + std::to_string(so));
          } else if (!ScaleUp(d, -k, &den)) {
            return NumericOverflow("divisor of '/'");
          }
          v = DivRound(num, den);
        }
        break;
      }
      case Fn::kMod: {
        i128 x, y;
        if (!ScaleUp(a, so - s0, &x) || !ScaleUp(r[1][i], so - s1, &y)) return NumericOverflow("operand of '%'");
        if (y == 0) return DivisionByZero();
        v = x % y;
        break;
      }
      case Fn::kPmod: {
        // Spark's pmod: r = a % b; r < 0 ? (r + b) % b : r (128 bits: r + b cannot overflow)
        i128 x, y;
        if (!ScaleUp(a, so - s0, &x) || !ScaleUp(r[1][i], so - s1, &y)) return NumericOverflow("operand of pmod()");
        if (y == 0) return DivisionByZero();
        v = x % y;
        if (v < 0) v = (v + y) % y;
        break;
      }
      default: return Status::NotImplemented(std::string("exact arithmetic ") + FnName(e.fn));
    }
    QUIVER_RETURN_NOT_OK(store(i, v));
  }
  Vec out;
  out.array = b.Finish();
  out.constant = rows == 1 && AllConstant(args);
  return out;
}

Result<Vec> FloatArithmetic(const Expr& e, const std::vector<Vec>& args, int64_t n, EvalContext* ctx) {
  const int64_t rows = AllConstant(args) ? 1 : n;
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(float64(), rows, ctx->pool));
  QUIVER_RETURN_NOT_OK(PropagateNulls(&b, args, rows));
  std::vector<FloatReader> r;
  for (const auto& a : args) r.emplace_back(a);
  double* out = b.values<double>();
  const bool any_nulls = [&] {
    for (const auto& a : args)
      if (a.MayHaveNulls()) return true;
    return false;
  }();
  // round(x, d) of a double: x * 10^d rounded, divided back; beyond what a
  // double resolves (|x * 10^d| >= 2^52, or 10^d overflowing) x is already
  // an integer multiple of 10^-d: x itself. 10^d underflowing to 0 (d <
  // -323): 0.
  int64_t digits = 0;
  if ((e.fn == Fn::kRound || e.fn == Fn::kBround) && args.size() > 1 && !args[1].IsNull(0))
    digits = static_cast<int64_t>(std::clamp<i128>(ExactReader(args[1])[0], -400, 400));
  const double scale = std::pow(10.0, static_cast<double>(digits));
  for (int64_t i = 0; i < rows; ++i) {
    const double a = r[0][i];
    switch (e.fn) {
      case Fn::kAdd: out[i] = a + r[1][i]; break;
      case Fn::kSub: out[i] = a - r[1][i]; break;
      case Fn::kMul: out[i] = a * r[1][i]; break;
      case Fn::kDiv: {
        const double d = r[1][i];
        if (d == 0 && !(any_nulls && RowIsNull(args, i))) return DivisionByZero();
        out[i] = d == 0 ? 0 : a / d;
        break;
      }
      case Fn::kMod: {
        const double d = r[1][i];
        if (d == 0 && !(any_nulls && RowIsNull(args, i))) return DivisionByZero();
        out[i] = d == 0 ? 0 : std::fmod(a, d);
        break;
      }
      case Fn::kNeg: out[i] = -a; break;
      case Fn::kAbs: out[i] = std::fabs(a); break;
      case Fn::kRound:
        if (!std::isfinite(a) || (digits >= 0 && !(std::fabs(a) * scale < 4503599627370496.0))) {
          out[i] = a;
        } else if (scale == 0) {
          out[i] = 0;
        } else {
          out[i] = std::round(a * scale) / scale;
        }
        break;
      case Fn::kBround:  // ties to even: nearbyint in the default rounding mode
        if (!std::isfinite(a) || (digits >= 0 && !(std::fabs(a) * scale < 4503599627370496.0))) {
          out[i] = a;
        } else if (scale == 0) {
          out[i] = 0;
        } else {
          out[i] = std::nearbyint(a * scale) / scale;
        }
        break;
      case Fn::kPmod: {
        const double d = r[1][i];
        if (d == 0 && !(any_nulls && RowIsNull(args, i))) return DivisionByZero();
        const double m = d == 0 ? 0 : std::fmod(a, d);
        out[i] = m < 0 ? std::fmod(m + d, d) : m;
        break;
      }
      case Fn::kCbrt: out[i] = CubeRoot(a); break;
      case Fn::kSign: out[i] = a > 0 ? 1.0 : a < 0 ? -1.0 : 0.0; break;     // NaN: 0 (DuckDB)
      case Fn::kSparkSign: out[i] = a > 0 ? 1.0 : a < 0 ? -1.0 : a; break;  // NaN stays (Spark's signum)
      case Fn::kFloor: out[i] = std::floor(a); break;
      case Fn::kCeil: out[i] = std::ceil(a); break;
      case Fn::kExp: out[i] = std::exp(a); break;
      case Fn::kPower: out[i] = std::pow(a, r[1][i]); break;
      case Fn::kSqrt:
        if (a < 0 && !(any_nulls && RowIsNull(args, i)))
          return SqlError(StatusCode::kInvalid, "2201F", "cannot take the square root of a negative number");
        out[i] = a < 0 ? 0 : std::sqrt(a);
        break;
      case Fn::kLn:
        if (a <= 0 && !(any_nulls && RowIsNull(args, i)))
          return SqlError(
              StatusCode::kInvalid, "2201E",
              a == 0 ? "cannot take the logarithm of zero" : "cannot take the logarithm of a negative number");
        out[i] = a <= 0 ? 0 : std::log(a);
        break;
      case Fn::kLog10:
      case Fn::kLog2:
      case Fn::kLog: {
        // log(base, x): args[0] the base (PostgreSQL's and Spark's order)
        const double x = e.fn == Fn::kLog ? r[1][i] : a;
        const bool skip = any_nulls && RowIsNull(args, i);
        if (!skip && (x <= 0 || (e.fn == Fn::kLog && a <= 0)))
          return SqlError(StatusCode::kInvalid, "2201E",
                          std::string(FnName(e.fn)) + "(): cannot take the logarithm of " +
                              (x == 0 || a == 0 ? "zero" : "a negative number"));
        if (!skip && e.fn == Fn::kLog && a == 1) return DivisionByZero();
        if (skip) {
          out[i] = 0;
        } else if (e.fn == Fn::kLog10) {
          out[i] = std::log10(x);
        } else if (e.fn == Fn::kLog2) {
          out[i] = std::log2(x);
        } else {
          out[i] = std::log(x) / std::log(a);
        }
        break;
      }
      default: return Status::NotImplemented(std::string("float arithmetic ") + FnName(e.fn));
    }
  }
  Vec v;
  v.array = b.Finish();
  v.constant = rows == 1 && AllConstant(args);
  return v;
}

}  // namespace

Result<Vec> Arithmetic(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx) {
  if (ClassOf(*e.type) == TypeClass::kFloat) return FloatArithmetic(e, args, rows, ctx);
  if (e.type->id != TypeId::kInt32) return ExactArithmetic(e, e.type, args, rows, ctx);
  // INTEGER (the spark dialect): computed as BIGINT within INTEGER's range,
  // then narrowed (the BIGINT loops stay as they are for the other results).
  QUIVER_ASSIGN_OR_RETURN(Vec wide, ExactArithmetic(e, int64(), args, rows, ctx));
  const int64_t length = wide.array->length;
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(int32(), length, ctx->pool));
  const int64_t* src = wide.Values<int64_t>();
  int32_t* dst = b.values<int32_t>();
  for (int64_t i = 0; i < length; ++i) dst[i] = static_cast<int32_t>(src[i]);
  QUIVER_RETURN_NOT_OK(b.CopyValidity(wide));
  Vec out;
  out.array = b.Finish();
  out.constant = wide.constant;
  return out;
}

}  // namespace quiver::sql::kernels

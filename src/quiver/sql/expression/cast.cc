// quiver/sql/expression/cast.cc — CAST between numbers (exact rounding half
// away from zero; out of range is 22003), strings (text that does not
// parse is 22P02, dates 22007), dates and timestamps, by PostgreSQL's rules
// (Spark's: spark_cast.h; try_cast gives NULL where either fails); and the date kernels:
// date ± days, date ± months, date - date, EXTRACT(YEAR|MONTH|DAY).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "quiver/sql/expression/kernels.h"
#include "quiver/sql/expression/spark_cast.h"
#include "quiver/sql/expression/temporal.h"

namespace quiver::sql::kernels {
namespace {

std::string FormatExactText(i128 v, int scale) {
  Value x = Value::Decimal(v, 38, scale);
  return x.ToString();
}

std::string FormatDouble(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  for (int prec = 15; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*g", prec, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  return buf;
}

}  // namespace

// PostgreSQL's numeric input ('1e3', '5.5e-11'); see kernels.h.
bool ParseExactText(std::string_view s, int scale, i128* out, bool* overflow) {
  *overflow = false;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  bool neg = false;
  size_t p = 0;
  if (p < s.size() && (s[p] == '-' || s[p] == '+')) neg = s[p++] == '-';
  // The significant digits and the power of ten of the last one.
  std::string digits;
  int64_t exp10 = 0;
  bool dot = false, any = false;
  for (; p < s.size() && s[p] != 'e' && s[p] != 'E'; ++p) {
    const char c = s[p];
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') return false;
    any = true;
    if (dot) --exp10;
    if (digits.empty() && c == '0') continue;
    if (digits.size() >= 4096) return false;  // no numeric input is that long
    digits.push_back(c);
  }
  if (!any) return false;
  if (p < s.size()) {  // the exponent
    ++p;
    bool eneg = false;
    if (p < s.size() && (s[p] == '-' || s[p] == '+')) eneg = s[p++] == '-';
    if (p == s.size()) return false;
    int64_t e = 0;
    for (; p < s.size(); ++p) {
      if (s[p] < '0' || s[p] > '9') return false;
      e = std::min<int64_t>(e * 10 + (s[p] - '0'), 1000000);
    }
    exp10 += eneg ? -e : e;
  }
  // unscaled = digits * 10^(exp10 + scale)
  const int64_t shift = exp10 + scale;
  size_t keep = digits.size();
  bool round_up = false;
  if (shift < 0) {
    const int64_t drop = -shift;
    if (drop > static_cast<int64_t>(digits.size())) {
      keep = 0;
    } else {
      keep = digits.size() - static_cast<size_t>(drop);
      round_up = digits[keep] >= '5';
    }
  }
  i128 v = 0;
  for (size_t k = 0; k < keep; ++k)
    if (__builtin_mul_overflow(v, static_cast<i128>(10), &v) ||
        __builtin_add_overflow(v, static_cast<i128>(digits[k] - '0'), &v)) {
      *overflow = true;
      return false;
    }
  if (v != 0)
    for (int64_t k = 0; k < shift; ++k)
      if (__builtin_mul_overflow(v, static_cast<i128>(10), &v)) {
        *overflow = true;
        return false;
      }
  if (round_up) ++v;
  *out = neg ? -v : v;
  return true;
}

namespace {

// v at a scale `drop` digits finer, rounded half away from zero (drop > 0),
// or coarser (drop < 0); false when it overflows 128 bits.
bool RoundShift(i128 v, int drop, i128* out) {
  if (drop <= 0) return !__builtin_mul_overflow(v, Pow10(std::min(-drop, 38)), out) && -drop <= 38;
  if (drop > 38) {
    *out = 0;
    return true;
  }
  const i128 p = Pow10(drop);
  i128 q = v / p, r = v % p;
  const i128 ar = r < 0 ? -r : r;
  if (ar >= p - ar) q += v < 0 ? -1 : 1;  // ar * 2 could overflow for p = 10^38
  *out = q;
  return true;
}

Status CastError(const Value& v, const DataTypePtr& to) {
  const TypeClass tc = ClassOf(*to);
  const char* state = (tc == TypeClass::kDate || tc == TypeClass::kTimestamp) ? "22007" : "22P02";
  return SqlError(StatusCode::kInvalid, state,
                  "invalid input syntax for type " + SqlTypeName(*to) + ": " + v.ToString());
}

}  // namespace

Result<Value> CastValue(const Value& v, const DataTypePtr& to, CastRules rules) {
  if (rules == CastRules::kSpark) return SparkCastValue(v, to);
  if (v.is_null) return Value::Null(to);
  const TypeClass from = ClassOf(*v.type), tc = ClassOf(*to);
  Value out;
  out.type = to;
  out.is_null = false;
  switch (tc) {
    case TypeClass::kBool:
      if (from == TypeClass::kBool) return v;
      if (from == TypeClass::kString) {
        // PostgreSQL's boolin: any case, blanks around; a prefix of true,
        // yes, false or no ('t', 'y', 'fa'), on, off ('of'), 1, 0.
        std::string t;
        for (char c : v.s)
          if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        auto prefix_of = [&](std::string_view word) { return !t.empty() && word.substr(0, t.size()) == t; };
        if (prefix_of("true") || prefix_of("yes") || t == "on" || t == "1") return Value::Bool(true);
        if (prefix_of("false") || prefix_of("no") || t == "off" || t == "of" || t == "0") return Value::Bool(false);
        return CastError(v, to);
      }
      if (from == TypeClass::kInt) return Value::Bool(v.i != 0);
      break;
    case TypeClass::kInt:
    case TypeClass::kDecimal: {
      const int s = ScaleOf(*to);
      i128 x;
      if (from == TypeClass::kInt || from == TypeClass::kDecimal) {
        if (!RoundShift(v.i, ScaleOf(*v.type) - s, &x))
          return NumericOverflow(v.ToString() + " as " + SqlTypeName(*to));
      } else if (from == TypeClass::kFloat) {
        if (!std::isfinite(v.f)) return NumericOverflow(v.ToString() + " as " + SqlTypeName(*to));
        const long double scaled = std::round(static_cast<long double>(v.f) * std::pow(10.0L, s));
        if (std::fabs(scaled) >= 1e38L) return NumericOverflow(v.ToString() + " as " + SqlTypeName(*to));
        x = static_cast<i128>(scaled);
      } else if (from == TypeClass::kString) {
        bool overflow = false;
        if (!ParseExactText(v.s, s, &x, &overflow))
          return overflow ? NumericOverflow(v.ToString() + " as " + SqlTypeName(*to)) : CastError(v, to);
      } else if (from == TypeClass::kBool) {
        x = v.i;
      } else {
        break;
      }
      const i128 lim = tc == TypeClass::kDecimal  ? MaxUnscaled(to->precision)
                       : to->id == TypeId::kInt32 ? static_cast<i128>(INT32_MAX)
                                                  : static_cast<i128>(INT64_MAX);
      if (x > lim || x < -lim - (tc == TypeClass::kInt ? 1 : 0))
        return NumericOverflow(v.ToString() + " as " + SqlTypeName(*to));
      out.i = x;
      return out;
    }
    case TypeClass::kFloat:
      if (from == TypeClass::kFloat) return v;
      if (from == TypeClass::kInt || from == TypeClass::kDecimal) {
        out.f = DecimalToDouble(v.i, ScaleOf(*v.type));
        return out;
      }
      if (from == TypeClass::kString) {
        std::string t = v.s;
        char* end = nullptr;
        errno = 0;
        out.f = std::strtod(t.c_str(), &end);
        while (end && *end == ' ') ++end;
        if (t.empty() || end != t.c_str() + t.size()) return CastError(v, to);
        return out;
      }
      break;
    case TypeClass::kString:
      switch (from) {
        case TypeClass::kString: return v;
        case TypeClass::kBool: return Value::String(v.i ? "true" : "false");
        case TypeClass::kInt:
        case TypeClass::kDecimal: return Value::String(FormatExactText(v.i, ScaleOf(*v.type)));
        case TypeClass::kFloat: return Value::String(FormatDouble(v.f));
        case TypeClass::kDate: return Value::String(FormatDate(static_cast<int32_t>(v.i)));
        case TypeClass::kTimestamp: return Value::String(FormatTimestamp(static_cast<int64_t>(v.i)));
        default: break;
      }
      break;
    case TypeClass::kDate:
      if (from == TypeClass::kDate) return v;
      if (from == TypeClass::kString) {
        int32_t d;
        if (!ParseDate(v.s, &d)) {
          int64_t us;
          if (!ParseTimestamp(v.s, &us)) return CastError(v, to);
          d = static_cast<int32_t>(us >= 0 ? us / 86400000000LL : -((-us + 86399999999LL) / 86400000000LL));
        }
        out.i = d;
        return out;
      }
      if (from == TypeClass::kTimestamp) {
        const int64_t us = static_cast<int64_t>(v.i);
        out.i = us >= 0 ? us / 86400000000LL : -((-us + 86399999999LL) / 86400000000LL);
        return out;
      }
      break;
    case TypeClass::kTimestamp:
      if (from == TypeClass::kTimestamp) return v;
      if (from == TypeClass::kDate) {
        out.i = v.i * 86400000000LL;
        return out;
      }
      if (from == TypeClass::kString) {
        int64_t us;
        if (!ParseTimestamp(v.s, &us)) return CastError(v, to);
        out.i = us;
        return out;
      }
      break;
    default: break;
  }
  return SqlError(StatusCode::kNotImplemented, "0A000",
                  "cast from " + SqlTypeName(*v.type) + " to " + SqlTypeName(*to) + " is not supported");
}

Result<Vec> Cast(const Expr& e, const std::vector<Vec>& args, int64_t n, EvalContext* ctx) {
  const Vec& x = args[0];
  const DataTypePtr& to = e.type;
  if (x.type()->Equals(*to)) return x;
  const int64_t rows = x.constant ? 1 : n;
  const TypeClass from = ClassOf(*x.type()), tc = ClassOf(*to);
  const CastRules rules = CastRulesOf(e.fn);
  const bool try_cast = IsTryCast(e.fn);
  // One row's value; a failure is NULL under try_cast.
  auto cast_at = [&](int64_t i) -> Result<Value> {
    auto v = CastValue(ValueAt(x, i), to, rules);
    if (!v.ok() && try_cast && IsCastDataError(v.status())) return Value::Null(to);
    return v;
  };
  // Fast paths (the same under both rules): exact / float to exact / float.
  if (!try_cast && (from == TypeClass::kInt || from == TypeClass::kDecimal) &&
      (tc == TypeClass::kDecimal || tc == TypeClass::kInt) && ScaleOf(*to) >= ScaleOf(*x.type())) {
    QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(to, rows, ctx->pool));
    QUIVER_RETURN_NOT_OK(b.CopyValidity(x));
    const i128 mult = Pow10(ScaleOf(*to) - ScaleOf(*x.type()));
    const i128 lim = tc == TypeClass::kDecimal  ? MaxUnscaled(to->precision)
                     : to->id == TypeId::kInt32 ? static_cast<i128>(INT32_MAX)
                                                : static_cast<i128>(INT64_MAX);
    for (int64_t i = 0; i < rows; ++i) {
      i128 v = 0;
      if (!x.IsNull(i) && __builtin_mul_overflow(x.ExactAt(i), mult, &v))
        return NumericOverflow(ValueAt(x, i).ToString() + " as " + SqlTypeName(*to));
      if (v > lim || v < -lim - 1) return NumericOverflow(ValueAt(x, i).ToString() + " as " + SqlTypeName(*to));
      if (IsDecimal128(*to)) {
        std::memcpy(b.values<uint8_t>() + i * 16, &v, 16);
      } else if (to->id == TypeId::kInt32) {
        b.values<int32_t>()[i] = static_cast<int32_t>(v);
      } else {
        b.values<int64_t>()[i] = static_cast<int64_t>(v);
      }
    }
    Vec out;
    out.array = b.Finish();
    out.constant = x.constant;
    return out;
  }
  if (tc == TypeClass::kFloat && (from == TypeClass::kInt || from == TypeClass::kDecimal)) {
    QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(to, rows, ctx->pool));
    QUIVER_RETURN_NOT_OK(b.CopyValidity(x));
    for (int64_t i = 0; i < rows; ++i) b.values<double>()[i] = x.IsNull(i) ? 0 : x.FloatAt(i);
    Vec out;
    out.array = b.Finish();
    out.constant = x.constant;
    return out;
  }
  // General path: value by value.
  Vec out;
  out.constant = x.constant;
  if (tc == TypeClass::kString) {
    QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(rows, rows * 8, ctx->pool));
    for (int64_t i = 0; i < rows; ++i) {
      QUIVER_ASSIGN_OR_RETURN(Value v, cast_at(i));
      QUIVER_RETURN_NOT_OK(v.is_null ? b.AppendNull() : b.Append(v.s));
    }
    QUIVER_ASSIGN_OR_RETURN(out.array, b.Finish());
    return out;
  }
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(to, rows, ctx->pool));
  for (int64_t i = 0; i < rows; ++i) {
    QUIVER_ASSIGN_OR_RETURN(Value v, cast_at(i));
    if (v.is_null) {
      QUIVER_RETURN_NOT_OK(b.SetNull(i));
      continue;
    }
    QUIVER_RETURN_NOT_OK(b.SetValue(i, v.i, v.f));
  }
  out.array = b.Finish();
  return out;
}

Result<Vec> Temporal(const Expr& e, const std::vector<Vec>& args, int64_t n, EvalContext* ctx) {
  bool all_const = true;
  for (const auto& a : args) all_const &= a.constant;
  const int64_t rows = all_const ? 1 : n;
  for (const auto& a : args)
    if (a.type()->id == TypeId::kNull) {
      QUIVER_ASSIGN_OR_RETURN(Vec v, ConstantVec(Value::Null(e.type), ctx->pool));
      if (!all_const) {
        QUIVER_ASSIGN_OR_RETURN(v.array, Materialize(v, rows, ctx->pool));
        v.constant = false;
      }
      return v;
    }
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(e.type, rows, ctx->pool));
  for (const auto& a : args) QUIVER_RETURN_NOT_OK(b.CopyValidity(a));
  const bool is_ts = ClassOf(*args[0].type()) == TypeClass::kTimestamp;
  auto days_of = [&](int64_t i) -> int64_t {
    const i128 v = args[0].ExactAt(i);
    if (!is_ts) return static_cast<int64_t>(v);
    const int64_t us = static_cast<int64_t>(v);
    return us >= 0 ? us / 86400000000LL : -((-us + 86399999999LL) / 86400000000LL);
  };
  for (int64_t i = 0; i < rows; ++i) {
    bool null = false;
    for (const auto& a : args) null |= a.IsNull(i);
    if (null) continue;
    switch (e.fn) {
      case Fn::kAddDays: {
        const i128 d = args[0].ExactAt(i) + args[1].ExactAt(i) * (is_ts ? static_cast<i128>(86400000000LL) : 1);
        if (is_ts) {
          b.values<int64_t>()[i] = static_cast<int64_t>(d);
        } else {
          if (d > INT32_MAX || d < INT32_MIN) return NumericOverflow("date out of range");
          b.values<int32_t>()[i] = static_cast<int32_t>(d);
        }
        break;
      }
      case Fn::kAddMonths: {
        const i128 m = args[1].ExactAt(i);
        if (m > 1200000 || m < -1200000) return NumericOverflow("date out of range");
        if (is_ts) {
          const int64_t us = static_cast<int64_t>(args[0].ExactAt(i));
          const int64_t day = days_of(i);
          const int64_t in_day = us - day * 86400000000LL;
          b.values<int64_t>()[i] =
              static_cast<int64_t>(AddMonths(static_cast<int32_t>(day), static_cast<int64_t>(m))) * 86400000000LL +
              in_day;
        } else {
          b.values<int32_t>()[i] = AddMonths(static_cast<int32_t>(args[0].ExactAt(i)), static_cast<int64_t>(m));
        }
        break;
      }
      case Fn::kDateDiff: b.values<int64_t>()[i] = static_cast<int64_t>(args[0].ExactAt(i) - args[1].ExactAt(i)); break;
      case Fn::kExtractYear:
      case Fn::kExtractMonth:
      case Fn::kExtractDay: {
        int64_t y;
        unsigned m, d;
        CivilFromDays(days_of(i), &y, &m, &d);
        b.values<int64_t>()[i] = e.fn == Fn::kExtractYear ? y : (e.fn == Fn::kExtractMonth ? m : d);
        break;
      }
      default: return Status::NotImplemented(std::string("date function ") + FnName(e.fn));
    }
  }
  Vec out;
  out.array = b.Finish();
  out.constant = all_const;
  return out;
}

}  // namespace quiver::sql::kernels

// quiver/sql/expression/spark_cast.cc — see spark_cast.h. The rules are
// Spark's (Cast.scala, DateTimeUtils.stringToDate / parseTimestampString,
// UTF8String.toLongExact, docs/sql-ref-ansi-compliance.md); the code is
// quiver's own.
#include "quiver/sql/expression/spark_cast.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "quiver/sql/expression/evaluate.h"
#include "quiver/sql/expression/kernels.h"
#include "quiver/sql/expression/temporal.h"

namespace quiver::sql {
namespace {

constexpr int64_t kMicrosPerDay = 86400000000LL;

// Spark trims whitespace and ISO control characters (Character.isWhitespace
// || isISOControl) around text it casts.
bool IsTrimmed(unsigned char c) { return c <= ' ' || c == 0x7f; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsTrimmed(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && IsTrimmed(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Days of a valid civil date whose count fits a DATE; false otherwise.
bool CivilDays(int64_t y, int64_t m, int64_t d, int64_t* days) {
  if (m < 1 || m > 12 || d < 1 || d > static_cast<int64_t>(DaysInMonth(y, static_cast<unsigned>(m)))) return false;
  *days = DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
  return *days >= INT32_MIN && *days <= INT32_MAX;
}

// A zone offset in seconds from Spark's zone text (ZoneId.of with Spark's
// "+h:mm" / "+hh:m" repairs): Z; +|-h, hh, hh:mm, hhmm, hh:mm:ss, hhmmss;
// UTC / GMT / UT alone or followed by such an offset. False otherwise,
// with *region set for what looks like a region id ('Europe/Paris') or a
// short one ('PST'), which quiver does not resolve.
bool ParseZone(std::string_view z, int64_t* offset_s, bool* region) {
  *region = false;
  *offset_s = 0;
  if (z == "Z") return true;
  for (std::string_view prefix : {"UTC", "GMT", "UT"})
    if (z.substr(0, prefix.size()) == prefix) {
      z.remove_prefix(prefix.size());
      if (z.empty()) return true;
      break;
    }
  if (z.empty() || (z[0] != '+' && z[0] != '-')) {
    bool short_id = z.size() == 3;
    for (char c : z) short_id &= c >= 'A' && c <= 'Z';
    *region = short_id || z.find('/') != std::string_view::npos;
    return false;
  }
  const int sign = z[0] == '-' ? -1 : 1;
  z.remove_prefix(1);
  // Fields separated by ':' (1 or 2 digits each) or run together (2 each).
  int64_t f[3] = {0, 0, 0};
  int fields = 0;
  if (z.find(':') != std::string_view::npos) {
    size_t p = 0;
    while (fields < 3) {
      size_t q = p;
      while (q < z.size() && IsDigit(z[q])) ++q;
      if (q == p || q - p > 2) return false;
      f[fields++] = std::atoi(std::string(z.substr(p, q - p)).c_str());
      if (q == z.size()) break;
      if (z[q] != ':') return false;
      p = q + 1;
    }
  } else {
    for (char c : z)
      if (!IsDigit(c)) return false;
    if (z.empty() || z.size() > 6 || (z.size() > 2 && z.size() % 2 == 1)) return false;
    if (z.size() <= 2) {
      f[fields++] = std::atoi(std::string(z).c_str());
    } else {
      for (size_t p = 0; p < z.size(); p += 2) f[fields++] = std::atoi(std::string(z.substr(p, 2)).c_str());
    }
  }
  if (f[1] > 59 || f[2] > 59) return false;
  const int64_t s = f[0] * 3600 + f[1] * 60 + f[2];
  if (s > 18 * 3600) return false;
  *offset_s = sign * s;
  return true;
}

Status InvalidInput(const Value& v, const DataTypePtr& to) {
  return SqlError(StatusCode::kInvalid, "22018",
                  "[CAST_INVALID_INPUT] the value " + v.ToString() + " of type " + SqlTypeName(*v.type) +
                      " cannot be cast to " + SqlTypeName(*to) +
                      " because it is malformed (try_cast gives NULL instead)");
}

Status CastOverflow(const Value& v, const DataTypePtr& to) {
  return SqlError(StatusCode::kInvalid, "22003",
                  "[CAST_OVERFLOW] the value " + v.ToString() + " of type " + SqlTypeName(*v.type) +
                      " cannot be cast to " + SqlTypeName(*to) + " due to an overflow (try_cast gives NULL instead)");
}

Status OutOfRange(const Value& v, const DataTypePtr& to) {
  return SqlError(StatusCode::kInvalid, "22003",
                  "[NUMERIC_VALUE_OUT_OF_RANGE] " + v.ToString() + " cannot be represented as " + SqlTypeName(*to) +
                      " (try_cast gives NULL instead)");
}

i128 IntegerLimit(const DataType& to) {
  return to.id == TypeId::kInt32 ? static_cast<i128>(INT32_MAX) : static_cast<i128>(INT64_MAX);
}

// UTF8String.toLongExact: trimmed, [+-]digits, within [-lim - 1, lim].
bool ParseSparkInteger(std::string_view s, i128 lim, i128* out) {
  s = Trim(s);
  if (s.empty()) return false;
  const bool neg = s[0] == '-';
  if (neg || s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  i128 v = 0;
  for (char c : s) {
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
    if (v > lim + 1) return false;
  }
  if (neg) v = -v;
  if (v > lim || v < -lim - 1) return false;
  *out = v;
  return true;
}

// Java's Double.parseDouble (decimal forms, an f/F/d/D suffix) and Spark's
// special words; false when malformed.
bool ParseSparkDouble(std::string_view s, double* out) {
  s = Trim(s);
  const std::string w = Lower(s);
  if (w == "inf" || w == "+inf" || w == "infinity" || w == "+infinity") {
    *out = HUGE_VAL;
    return true;
  }
  if (w == "-inf" || w == "-infinity") {
    *out = -HUGE_VAL;
    return true;
  }
  if (w == "nan") {
    *out = std::nan("");
    return true;
  }
  if (!s.empty() && (s.back() == 'f' || s.back() == 'F' || s.back() == 'd' || s.back() == 'D')) s.remove_suffix(1);
  size_t p = 0;
  if (p < s.size() && (s[p] == '+' || s[p] == '-')) ++p;
  bool digits = false;
  for (; p < s.size() && IsDigit(s[p]); ++p) digits = true;
  if (p < s.size() && s[p] == '.')
    for (++p; p < s.size() && IsDigit(s[p]); ++p) digits = true;
  if (!digits) return false;
  if (p < s.size() && (s[p] == 'e' || s[p] == 'E')) {
    ++p;
    if (p < s.size() && (s[p] == '+' || s[p] == '-')) ++p;
    const size_t exp_start = p;
    while (p < s.size() && IsDigit(s[p])) ++p;
    if (p == exp_start) return false;
  }
  if (p != s.size()) return false;
  const std::string text(s);
  *out = std::strtod(text.c_str(), nullptr);
  return true;
}

// The shortest digits that read back as `d` (finite, not zero) and the
// power of ten of the first: d = 0.D1D2... * 10^(exp10 + 1).
void ShortestDigits(double d, std::string* digits, int* exp10) {
  char buf[40];
  for (int prec = 15; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*e", prec - 1, std::fabs(d));
    if (std::strtod(buf, nullptr) == std::fabs(d)) break;
  }
  const char* e = std::strchr(buf, 'e');
  digits->clear();
  for (const char* c = buf; c < e; ++c)
    if (IsDigit(*c)) digits->push_back(*c);
  while (digits->size() > 1 && digits->back() == '0') digits->pop_back();
  *exp10 = std::atoi(e + 1);
}

}  // namespace

bool ParseSparkDate(std::string_view text, int32_t* days) {
  std::string_view s = Trim(text);
  if (s.empty()) return false;
  int sign = 1;
  if (s[0] == '-' || s[0] == '+') {
    sign = s[0] == '-' ? -1 : 1;
    s.remove_prefix(1);
  }
  int64_t seg[3] = {1, 1, 1};
  int i = 0, digits = 0;
  int64_t value = 0;
  size_t j = 0;
  auto valid = [&](int segment, int n) { return segment == 0 ? n >= 4 && n <= 7 : n >= 1 && n <= 2; };
  for (; j < s.size() && s[j] != ' ' && s[j] != 'T'; ++j) {
    const char c = s[j];
    if (i < 2 && c == '-') {
      if (!valid(i, digits)) return false;
      seg[i++] = value;
      value = 0;
      digits = 0;
    } else if (IsDigit(c)) {
      value = value * 10 + (c - '0');
      ++digits;
    } else {
      return false;
    }
  }
  if (!valid(i, digits)) return false;
  if (i < 2 && j < s.size()) return false;  // yyyy and yyyy-[m]m take the whole text
  seg[i] = value;
  int64_t d;
  if (!CivilDays(sign * seg[0], seg[1], seg[2], &d)) return false;
  *days = static_cast<int32_t>(d);
  return true;
}

SparkTimestampText ParseSparkTimestamp(std::string_view text, int64_t* micros) {
  using R = SparkTimestampText;
  std::string_view s = Trim(text);
  if (s.empty()) return R::kMalformed;
  // Segments: year, month, day, hour, minute, second, fraction (micros).
  int64_t seg[7] = {1, 1, 1, 0, 0, 0, 0};
  int i = 0, digits = 0, fraction_digits = 0;
  int64_t value = 0;
  int sign = 1;
  bool signed_year = false;
  std::string_view zone;
  size_t j = 0;
  if (s[0] == '-' || s[0] == '+') {
    sign = s[0] == '-' ? -1 : 1;
    signed_year = true;
    j = 1;
  }
  auto valid = [&](int segment, int n) {
    if (segment == 6) return true;
    if (segment == 0) return n >= 4 && n <= 6;
    return n >= 1 && n <= 2;
  };
  auto close = [&](int next) {
    if (!valid(i, digits)) return false;
    seg[i] = value;
    value = 0;
    digits = 0;
    i = next;
    return true;
  };
  for (; j < s.size(); ++j) {
    const char c = s[j];
    if (IsDigit(c)) {
      if (i == 6) {
        if (fraction_digits < 6) value = value * 10 + (c - '0');
        ++fraction_digits;
      } else {
        value = value * 10 + (c - '0');
      }
      ++digits;
      continue;
    }
    if (j == 0 && c == 'T') return R::kUnsupported;  // a time without a date
    if (i < 2) {
      if (c == '-') {
        if (!close(i + 1)) return R::kMalformed;
      } else if (i == 0 && c == ':' && !signed_year) {
        return valid(3, digits) ? R::kUnsupported : R::kMalformed;  // hh:mm... without a date
      } else {
        return R::kMalformed;
      }
    } else if (i == 2) {
      if ((c != ' ' && c != 'T') || !close(3)) return R::kMalformed;
    } else if (i == 3 || i == 4) {
      if (c != ':' || !close(i + 1)) return R::kMalformed;
    } else if (i == 5 && c == '.') {
      if (!close(6)) return R::kMalformed;
    } else if (i == 5 || i == 6) {
      // The rest of the text is the zone.
      if (!close(i + 1)) return R::kMalformed;
      zone = Trim(s.substr(j));
      j = s.size();
      break;
    } else {
      return R::kMalformed;
    }
  }
  if (i <= 6 && !close(i)) return R::kMalformed;
  for (int k = std::min(fraction_digits, 6); k < 6; ++k) seg[6] *= 10;
  int64_t offset_s = 0;
  if (!zone.empty()) {
    bool region = false;
    if (!ParseZone(zone, &offset_s, &region)) return region ? R::kUnsupported : R::kMalformed;
  }
  if (seg[3] > 23 || seg[4] > 59 || seg[5] > 59) return R::kMalformed;
  int64_t days;
  if (!CivilDays(sign * seg[0], seg[1], seg[2], &days)) return R::kMalformed;
  const i128 us =
      static_cast<i128>(days) * kMicrosPerDay + (seg[3] * 3600 + seg[4] * 60 + seg[5] - offset_s) * 1000000 + seg[6];
  if (us > INT64_MAX || us < INT64_MIN) return R::kMalformed;
  *micros = static_cast<int64_t>(us);
  return R::kOk;
}

std::string FormatSparkDouble(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  std::string digits;
  int e;
  ShortestDigits(d, &digits, &e);
  std::string out = d < 0 ? "-" : "";
  const double a = std::fabs(d);
  if (a >= 1e-3 && a < 1e7) {
    if (e >= 0) {
      std::string whole = digits.substr(0, std::min<size_t>(digits.size(), static_cast<size_t>(e) + 1));
      whole.append(static_cast<size_t>(e) + 1 - whole.size(), '0');
      const std::string frac =
          digits.size() > static_cast<size_t>(e) + 1 ? digits.substr(static_cast<size_t>(e) + 1) : "0";
      return out + whole + "." + frac;
    }
    return out + "0." + std::string(static_cast<size_t>(-e - 1), '0') + digits;
  }
  return out + digits.substr(0, 1) + "." + (digits.size() > 1 ? digits.substr(1) : "0") + "E" + std::to_string(e);
}

std::string FormatSparkTimestamp(int64_t micros) {
  int64_t days = micros / kMicrosPerDay, rem = micros % kMicrosPerDay;
  if (rem < 0) {
    rem += kMicrosPerDay;
    --days;
  }
  const int64_t secs = rem / 1000000, frac = rem % 1000000;
  char buf[32];
  std::snprintf(buf, sizeof(buf), " %02lld:%02lld:%02lld", static_cast<long long>(secs / 3600),
                static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60));
  std::string out = FormatDate(static_cast<int32_t>(days)) + buf;
  if (frac) {
    std::snprintf(buf, sizeof(buf), ".%06lld", static_cast<long long>(frac));
    std::string f = buf;
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  return out;
}

bool SparkCanCast(TypeClass from, TypeClass to) {
  using C = TypeClass;
  if (from == to || from == C::kNull || from == C::kOther || to == C::kOther || from == C::kString || to == C::kString)
    return true;
  const bool from_time = from == C::kDate || from == C::kTimestamp;
  const bool to_time = to == C::kDate || to == C::kTimestamp;
  if (from_time || to_time) return from_time && to_time;
  return true;  // numbers and booleans among themselves
}

namespace kernels {

Result<Value> SparkCastValue(const Value& v, const DataTypePtr& to) {
  if (v.is_null) return Value::Null(to);
  const TypeClass from = ClassOf(*v.type), tc = ClassOf(*to);
  if (!SparkCanCast(from, tc))
    return SqlError(
        StatusCode::kInvalid, "42K09",
        "[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION] cannot cast " + SqlTypeName(*v.type) + " to " + SqlTypeName(*to));
  if (from == tc && from != TypeClass::kInt && from != TypeClass::kDecimal) return v;
  Value out;
  out.type = to;
  out.is_null = false;
  switch (tc) {
    case TypeClass::kBool:
      if (from == TypeClass::kString) {
        const std::string t = Lower(Trim(v.s));
        if (t == "t" || t == "true" || t == "y" || t == "yes" || t == "1") return Value::Bool(true);
        if (t == "f" || t == "false" || t == "n" || t == "no" || t == "0") return Value::Bool(false);
        return InvalidInput(v, to);
      }
      if (from == TypeClass::kFloat) return Value::Bool(v.f != 0);
      return Value::Bool(v.i != 0);  // an integer or DECIMAL
    case TypeClass::kInt:
    case TypeClass::kDecimal: {
      const int s = ScaleOf(*to);
      i128 x = 0;
      if (tc == TypeClass::kInt) {
        const i128 lim = IntegerLimit(*to);
        if (from == TypeClass::kString) {
          if (!ParseSparkInteger(v.s, lim, &x)) return InvalidInput(v, to);
        } else if (from == TypeClass::kFloat) {
          const double t = std::trunc(v.f);
          if (!std::isfinite(t) || t >= 9.3e18 || t <= -9.3e18) return CastOverflow(v, to);
          x = static_cast<i128>(t);
        } else if (from == TypeClass::kBool) {
          x = v.i;
        } else {
          x = v.i / Pow10(ScaleOf(*v.type));  // truncated toward zero
        }
        if (x > lim || x < -lim - 1) return CastOverflow(v, to);
        out.i = x;
        return out;
      }
      bool overflow = false;
      if (from == TypeClass::kString) {
        const std::string_view t = Trim(v.s);
        if (!ParseExactText(t, s, &x, &overflow)) return overflow ? OutOfRange(v, to) : InvalidInput(v, to);
      } else if (from == TypeClass::kFloat) {
        if (!std::isfinite(v.f)) return Value::Null(to);  // Spark: NULL, even in ANSI mode
        if (!ParseExactText(FormatSparkDouble(v.f), s, &x, &overflow)) return OutOfRange(v, to);
      } else if (from == TypeClass::kBool) {
        x = v.i * Pow10(s);
      } else {
        const int drop = ScaleOf(*v.type) - s;
        if (drop <= 0) {
          if (__builtin_mul_overflow(v.i, Pow10(-drop), &x)) return OutOfRange(v, to);
        } else {
          const i128 p = Pow10(drop);
          x = v.i / p;
          const i128 r = v.i % p, ar = r < 0 ? -r : r;
          if (ar >= p - ar) x += v.i < 0 ? -1 : 1;  // half up (away from zero)
        }
      }
      const i128 lim = MaxUnscaled(to->precision);
      if (x > lim || x < -lim) return OutOfRange(v, to);
      out.i = x;
      return out;
    }
    case TypeClass::kFloat:
      if (from == TypeClass::kString) {
        if (!ParseSparkDouble(v.s, &out.f)) return InvalidInput(v, to);
        return out;
      }
      out.f = from == TypeClass::kBool ? static_cast<double>(v.i) : DecimalToDouble(v.i, ScaleOf(*v.type));
      return out;
    case TypeClass::kString:
      switch (from) {
        case TypeClass::kFloat: return Value::String(FormatSparkDouble(v.f));
        case TypeClass::kTimestamp: return Value::String(FormatSparkTimestamp(static_cast<int64_t>(v.i)));
        default: return CastValue(v, to);  // booleans, exact numbers, dates: as PostgreSQL prints them
      }
    case TypeClass::kDate:
      if (from == TypeClass::kString) {
        int32_t d;
        if (!ParseSparkDate(v.s, &d)) return InvalidInput(v, to);
        out.i = d;
        return out;
      }
      return CastValue(v, to);  // a TIMESTAMP's day
    case TypeClass::kTimestamp:
      if (from == TypeClass::kString) {
        int64_t us = 0;
        switch (ParseSparkTimestamp(v.s, &us)) {
          case SparkTimestampText::kOk: out.i = us; return out;
          case SparkTimestampText::kMalformed: return InvalidInput(v, to);
          case SparkTimestampText::kUnsupported:
            return SqlError(StatusCode::kNotImplemented, "0A000",
                            "casting " + v.ToString() +
                                " to TIMESTAMP is not supported (a time zone other than Z, UTC, GMT or an offset, or "
                                "a time without a date)");
        }
      }
      return CastValue(v, to);  // a DATE's midnight
    default: break;
  }
  return CastValue(v, to);
}

}  // namespace kernels
}  // namespace quiver::sql

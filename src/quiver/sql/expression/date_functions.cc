// quiver/sql/expression/date_functions.cc — the date and time functions of
// issue 37 that need more than the calendar arithmetic of cast.cc:
// date_trunc, quarter / dayofweek / dayofyear / weekofyear / hour / minute /
// second, to_date / to_timestamp with a Spark datetime pattern, date_format,
// last_day, make_date, and Spark's trunc, next_day, months_between,
// unix_timestamp / to_unix_timestamp and from_unixtime.
// Timestamps are microseconds since the epoch in UTC (no time zones);
// dates days since the epoch (temporal.h). Patterns are Spark's letters
// (docs/sql.md, "Date and time functions"): y M d H h m s S a E, text in
// '...', any other non-letter literal. Errors: 22007 text that does not
// match its pattern (Databricks' ANSI mode: an error, not NULL), 22023 an
// unknown unit or pattern letter, 22008 a make_date that names no day.
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "quiver/sql/expression/kernels.h"
#include "quiver/sql/expression/temporal.h"

namespace quiver::sql::kernels {
namespace {

constexpr int64_t kMicrosPerDay = 86400000000LL;
constexpr const char* kMonthNames[] = {"January", "February", "March",     "April",   "May",      "June",
                                       "July",    "August",   "September", "October", "November", "December"};
constexpr const char* kDayNames[] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

char LowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  return true;
}

// One element of a datetime pattern: a run of one letter, or literal text.
struct PatternItem {
  char letter = 0;  // 0: literal
  int count = 0;
  std::string text;
};

Result<std::vector<PatternItem>> ParsePattern(std::string_view p) {
  std::vector<PatternItem> out;
  for (size_t i = 0; i < p.size();) {
    const char c = p[i];
    if (c == '\'') {  // quoted text; '' is one quote
      PatternItem lit;
      size_t j = i + 1;
      if (j < p.size() && p[j] == '\'') {
        lit.text = "'";
        i = j + 1;
      } else {
        while (j < p.size()) {
          if (p[j] == '\'') {
            if (j + 1 < p.size() && p[j + 1] == '\'') {
              lit.text.push_back('\'');
              j += 2;
              continue;
            }
            break;
          }
          lit.text.push_back(p[j++]);
        }
        if (j >= p.size())
          return SqlError(StatusCode::kInvalid, "22023",
                          "unterminated quoted text in datetime pattern '" + std::string(p) + "'");
        i = j + 1;
      }
      out.push_back(std::move(lit));
      continue;
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      size_t j = i;
      while (j < p.size() && p[j] == c) ++j;
      static constexpr std::string_view kLetters = "yMdHhmsSaE";
      if (kLetters.find(c) == std::string_view::npos)
        return SqlError(StatusCode::kInvalid, "22023",
                        std::string("unsupported datetime pattern letter '") + c + "' in '" + std::string(p) + "'");
      out.push_back({c, static_cast<int>(j - i), {}});
      i = j;
      continue;
    }
    PatternItem lit;
    lit.text.push_back(c);
    out.push_back(std::move(lit));
    ++i;
  }
  return out;
}

void AppendNumber(std::string* out, int64_t v, int width) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%0*lld", width, static_cast<long long>(v));
  out->append(buf);
}

// `micros` formatted by the parsed pattern.
void Format(const std::vector<PatternItem>& items, int64_t micros, std::string* out) {
  out->clear();
  const int64_t day = FloorDiv(micros, kMicrosPerDay);
  const int64_t in_day = micros - day * kMicrosPerDay;
  int64_t y;
  unsigned mo, d;
  CivilFromDays(day, &y, &mo, &d);
  const int64_t hour = in_day / 3600000000LL, minute = in_day / 60000000 % 60, second = in_day / 1000000 % 60;
  const int64_t fraction = in_day % 1000000;
  for (const auto& it : items) {
    switch (it.letter) {
      case 0: out->append(it.text); break;
      case 'y':
        if (it.count == 2) {
          AppendNumber(out, ((y % 100) + 100) % 100, 2);
        } else {
          AppendNumber(out, y, it.count);
        }
        break;
      case 'M':
        if (it.count >= 4) {
          out->append(kMonthNames[mo - 1]);
        } else if (it.count == 3) {
          out->append(std::string_view(kMonthNames[mo - 1]).substr(0, 3));
        } else {
          AppendNumber(out, mo, it.count);
        }
        break;
      case 'd': AppendNumber(out, d, it.count); break;
      case 'H': AppendNumber(out, hour, it.count); break;
      case 'h': AppendNumber(out, hour % 12 == 0 ? 12 : hour % 12, it.count); break;
      case 'm': AppendNumber(out, minute, it.count); break;
      case 's': AppendNumber(out, second, it.count); break;
      case 'S': {
        char buf[16];
        std::snprintf(buf, sizeof(buf), "%06lld", static_cast<long long>(fraction));
        std::string digits = buf;
        while (static_cast<int>(digits.size()) < it.count) digits.push_back('0');
        out->append(digits.substr(0, static_cast<size_t>(it.count)));
        break;
      }
      case 'a': out->append(hour < 12 ? "AM" : "PM"); break;
      case 'E': {
        const int64_t dow = ((day % 7) + 7 + 3) % 7;  // 1970-01-01 was a Thursday (index 3)
        const std::string_view name = kDayNames[dow];
        out->append(it.count >= 4 ? name : name.substr(0, 3));
        break;
      }
      default: break;
    }
  }
}

// Text parsed by the pattern into microseconds; false when it does not match.
bool Parse(const std::vector<PatternItem>& items, std::string_view s, int64_t* micros) {
  size_t p = 0;
  int64_t y = 1970, mo = 1, d = 1, h = 0, mi = 0, sec = 0, frac = 0;
  bool pm = false, has_ampm = false, hour12 = false;
  auto number = [&](int min_digits, int max_digits, int64_t* v) {
    int k = 0;
    *v = 0;
    while (p < s.size() && k < max_digits && s[p] >= '0' && s[p] <= '9') {
      *v = *v * 10 + (s[p] - '0');
      ++p;
      ++k;
    }
    return k >= min_digits;
  };
  for (const auto& it : items) {
    const int lo = it.count >= 2 ? it.count : 1, hi = it.count >= 2 ? it.count : 2;
    switch (it.letter) {
      case 0:
        if (s.substr(p, it.text.size()) != it.text) return false;
        p += it.text.size();
        break;
      case 'y':
        if (it.count == 2) {
          if (!number(2, 2, &y)) return false;
          y += 2000;
        } else if (!number(it.count >= 4 ? 4 : 1, it.count >= 4 ? it.count + 2 : 4, &y)) {
          return false;
        }
        break;
      case 'M':
        if (it.count >= 3) {
          bool found = false;
          for (int k = 0; k < 12 && !found; ++k) {
            const std::string_view name = kMonthNames[k];
            const std::string_view want = it.count == 3 ? name.substr(0, 3) : name;
            if (EqualsNoCase(s.substr(p, want.size()), want)) {
              mo = k + 1;
              p += want.size();
              found = true;
            }
          }
          if (!found) return false;
        } else if (!number(lo, hi, &mo)) {
          return false;
        }
        break;
      case 'd':
        if (!number(lo, hi, &d)) return false;
        break;
      case 'H':
      case 'h':
        if (!number(lo, hi, &h)) return false;
        hour12 = it.letter == 'h';
        break;
      case 'm':
        if (!number(lo, hi, &mi)) return false;
        break;
      case 's':
        if (!number(lo, hi, &sec)) return false;
        break;
      case 'S': {
        const size_t start = p;
        if (!number(1, it.count, &frac)) return false;
        for (size_t k = p - start; k < 6; ++k) frac *= 10;
        for (size_t k = p - start; k > 6; --k) frac /= 10;
        break;
      }
      case 'a':
        if (EqualsNoCase(s.substr(p, 2), "AM") || EqualsNoCase(s.substr(p, 2), "PM")) {
          pm = LowerAscii(s[p]) == 'p';
          has_ampm = true;
          p += 2;
        } else {
          return false;
        }
        break;
      case 'E': {
        bool found = false;
        for (const char* day_name : kDayNames) {
          const std::string_view name = day_name;
          const std::string_view want = it.count >= 4 ? name : name.substr(0, 3);
          if (EqualsNoCase(s.substr(p, want.size()), want)) {
            p += want.size();
            found = true;
            break;
          }
        }
        if (!found) return false;
        break;
      }
      default: return false;
    }
  }
  if (p != s.size()) return false;
  if (hour12) {
    if (h < 1 || h > 12) return false;
    h = h % 12 + (has_ampm && pm ? 12 : 0);
  }
  if (mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, static_cast<unsigned>(mo)) || h > 23 || mi > 59 || sec > 59)
    return false;
  *micros = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * kMicrosPerDay +
            ((h * 60 + mi) * 60 + sec) * 1000000 + frac;
  return true;
}

// date_trunc's unit: microseconds of a fixed unit, or months for year /
// quarter / month (0 when not a month unit); week truncates to Monday.
struct TruncUnit {
  int64_t months = 0;
  int64_t micros = 0;
  bool week = false;
};

Result<TruncUnit> ParseTruncUnit(std::string_view u) {
  std::string unit;
  for (char c : u) unit.push_back(LowerAscii(c));
  if (unit == "year" || unit == "yyyy" || unit == "yy" || unit == "years") return TruncUnit{12, 0, false};
  if (unit == "quarter" || unit == "quarters") return TruncUnit{3, 0, false};
  if (unit == "month" || unit == "mon" || unit == "mm" || unit == "months") return TruncUnit{1, 0, false};
  if (unit == "week" || unit == "weeks") return TruncUnit{0, 0, true};
  if (unit == "day" || unit == "dd" || unit == "days") return TruncUnit{0, kMicrosPerDay, false};
  if (unit == "hour" || unit == "hours") return TruncUnit{0, 3600000000LL, false};
  if (unit == "minute" || unit == "minutes") return TruncUnit{0, 60000000LL, false};
  if (unit == "second" || unit == "seconds") return TruncUnit{0, 1000000LL, false};
  if (unit == "millisecond" || unit == "milliseconds") return TruncUnit{0, 1000LL, false};
  if (unit == "microsecond" || unit == "microseconds") return TruncUnit{0, 1, false};
  return SqlError(StatusCode::kInvalid, "22023",
                  "date_trunc unit '" + std::string(u) +
                      "' is not one of year, quarter, month, week, day, hour, minute, second, millisecond, "
                      "microsecond");
}

int64_t Truncate(const TruncUnit& unit, int64_t micros) {
  const int64_t day = FloorDiv(micros, kMicrosPerDay);
  if (unit.micros) return FloorDiv(micros, unit.micros) * unit.micros;
  if (unit.week) {
    const int64_t monday = day - (((day % 7) + 7 + 3) % 7);
    return monday * kMicrosPerDay;
  }
  int64_t y;
  unsigned m, d;
  CivilFromDays(day, &y, &m, &d);
  const unsigned first = static_cast<unsigned>((m - 1) / unit.months * unit.months + 1);
  return DaysFromCivil(y, first, 1) * kMicrosPerDay;
}

// trunc(d, unit)'s units (Spark's TruncDate, any case): the year, quarter,
// month or week (to Monday) of a date; nullopt for any other (Spark: NULL).
std::optional<TruncUnit> TruncDateUnit(std::string_view u) {
  std::string unit;
  for (char c : u) unit.push_back(LowerAscii(c));
  if (unit == "year" || unit == "yyyy" || unit == "yy") return TruncUnit{12, 0, false};
  if (unit == "quarter") return TruncUnit{3, 0, false};
  if (unit == "month" || unit == "mm" || unit == "mon") return TruncUnit{1, 0, false};
  if (unit == "week") return TruncUnit{0, 0, true};
  return std::nullopt;
}

// next_day's day names (Spark's: two letters, three, or the whole name, any
// case) as 0 Monday .. 6 Sunday.
Result<int> ParseDayName(std::string_view name) {
  for (int k = 0; k < 7; ++k) {
    const std::string_view full = kDayNames[k];
    if (EqualsNoCase(name, full) || EqualsNoCase(name, full.substr(0, 3)) || EqualsNoCase(name, full.substr(0, 2)))
      return k;
  }
  return SqlError(StatusCode::kInvalid, "22023",
                  "next_day(): '" + std::string(name) +
                      "' is not a day of the week (SU, SUN, SUNDAY, MO, MON, MONDAY, ... in any case)");
}

// The weekday of a day since the epoch, 0 Monday .. 6 Sunday (1970-01-01
// was a Thursday).
int64_t Weekday(int64_t day) { return ((day % 7) + 7 + 3) % 7; }

// The ISO 8601 week (1..53): the week of its Thursday in that Thursday's year.
int64_t IsoWeek(int64_t day) {
  const int64_t thursday = day - Weekday(day) + 3;
  int64_t y;
  unsigned m, d;
  CivilFromDays(thursday, &y, &m, &d);
  return (thursday - DaysFromCivil(y, 1, 1)) / 7 + 1;
}

// Spark's months_between (DateTimeUtils.monthsBetween, UTC): whole months
// when both days of the month are equal or both are their month's last;
// otherwise the month difference plus the difference of the day and time
// in seconds over 31 days, rounded to 8 digits with round_off (Java's
// Math.round: half up).
double MonthsBetween(int64_t micros1, int64_t micros2, bool round_off) {
  const int64_t day1 = FloorDiv(micros1, kMicrosPerDay), day2 = FloorDiv(micros2, kMicrosPerDay);
  int64_t y1, y2;
  unsigned m1, d1, m2, d2;
  CivilFromDays(day1, &y1, &m1, &d1);
  CivilFromDays(day2, &y2, &m2, &d2);
  const double month_diff = static_cast<double>((y1 * 12 + m1) - (y2 * 12 + m2));
  const bool both_last = d1 == DaysInMonth(y1, m1) && d2 == DaysInMonth(y2, m2);
  if (d1 == d2 || both_last) return month_diff;
  const int64_t seconds1 = (micros1 - day1 * kMicrosPerDay) / 1000000,
                seconds2 = (micros2 - day2 * kMicrosPerDay) / 1000000;
  const int64_t seconds_diff = (static_cast<int64_t>(d1) - static_cast<int64_t>(d2)) * 86400 + seconds1 - seconds2;
  const double diff = month_diff + static_cast<double>(seconds_diff) / (31.0 * 86400);
  return round_off ? std::floor(diff * 1e8 + 0.5) / 1e8 : diff;
}

}  // namespace

Status CheckDateTruncUnit(std::string_view unit) { return ParseTruncUnit(unit).status(); }

Status CheckDayName(std::string_view name) { return ParseDayName(name).status(); }

Status CheckDatetimePattern(std::string_view pattern) { return ParsePattern(pattern).status(); }

Result<Vec> DateFunction(const Expr& e, const std::vector<Vec>& args, int64_t n, EvalContext* ctx) {
  bool all_const = true;
  for (const auto& a : args) all_const = all_const && a.constant;
  const int64_t rows = all_const ? 1 : n;
  auto any_null = [&](int64_t i) {
    for (const auto& a : args)
      if (a.IsNull(i)) return true;
    return false;
  };
  Vec v;
  v.constant = all_const;
  // the pattern of to_date / to_timestamp / date_format, parsed once per
  // distinct text in a run of rows
  std::string last_pattern;
  bool have_pattern = false;
  std::vector<PatternItem> items;
  auto pattern_at = [&](size_t k, int64_t i) -> Status {
    const std::string_view p = args[k].StringAt(i);
    if (!have_pattern || p != last_pattern) {
      QUIVER_ASSIGN_OR_RETURN(items, ParsePattern(p));
      last_pattern.assign(p);
      have_pattern = true;
    }
    return Status::OK();
  };
  if (e.fn == Fn::kDateFormat || e.fn == Fn::kFromUnixtime) {
    QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(rows, rows * 12, ctx->pool));
    std::string scratch;
    for (int64_t i = 0; i < rows; ++i) {
      if (any_null(i)) {
        QUIVER_RETURN_NOT_OK(b.AppendNull());
        continue;
      }
      QUIVER_RETURN_NOT_OK(pattern_at(1, i));
      int64_t micros = static_cast<int64_t>(args[0].ExactAt(i));
      // from_unixtime: seconds, kept within years -290000..290000
      constexpr int64_t kMaxSeconds = int64_t{9} * 1000 * 1000 * 1000 * 1000;
      if (e.fn == Fn::kFromUnixtime) {
        if (micros > kMaxSeconds || micros < -kMaxSeconds)
          return SqlError(StatusCode::kInvalid, "22008",
                          "from_unixtime(): " + std::to_string(micros) + " seconds is out of the timestamp range");
        micros *= 1000000;
      }
      Format(items, micros, &scratch);
      QUIVER_RETURN_NOT_OK(b.Append(scratch));
    }
    QUIVER_ASSIGN_OR_RETURN(v.array, b.Finish());
    return v;
  }
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(e.type, rows, ctx->pool));
  std::optional<TruncUnit> unit;
  std::string last_unit;
  for (int64_t i = 0; i < rows; ++i) {
    if (any_null(i)) {
      QUIVER_RETURN_NOT_OK(b.SetNull(i));
      continue;
    }
    switch (e.fn) {
      case Fn::kToDate:
      case Fn::kToTimestamp: {
        QUIVER_RETURN_NOT_OK(pattern_at(1, i));
        const std::string_view text = args[0].StringAt(i);
        int64_t us;
        if (!Parse(items, text, &us))
          return SqlError(StatusCode::kInvalid, "22007",
                          "'" + std::string(text) + "' does not match the datetime pattern '" + last_pattern + "'");
        if (e.fn == Fn::kToDate) {
          const int64_t day = FloorDiv(us, kMicrosPerDay);
          if (day > INT32_MAX || day < INT32_MIN) return SqlError(StatusCode::kInvalid, "22008", "date out of range");
          b.values<int32_t>()[i] = static_cast<int32_t>(day);
        } else {
          b.values<int64_t>()[i] = us;
        }
        break;
      }
      case Fn::kDateTrunc: {
        const std::string_view u = args[0].StringAt(i);
        if (!unit || u != last_unit) {
          QUIVER_ASSIGN_OR_RETURN(unit, ParseTruncUnit(u));
          last_unit.assign(u);
        }
        b.values<int64_t>()[i] = Truncate(*unit, static_cast<int64_t>(args[1].ExactAt(i)));
        break;
      }
      case Fn::kUnixTimestamp: {
        int64_t us;
        if (args[0].type()->id == TypeId::kUtf8) {
          QUIVER_RETURN_NOT_OK(pattern_at(1, i));
          const std::string_view text = args[0].StringAt(i);
          if (!Parse(items, text, &us))
            return SqlError(StatusCode::kInvalid, "22007",
                            "'" + std::string(text) + "' does not match the datetime pattern '" + last_pattern + "'");
        } else {
          us = static_cast<int64_t>(args[0].ExactAt(i));
        }
        b.values<int64_t>()[i] = FloorDiv(us, 1000000);
        break;
      }
      case Fn::kTruncDate: {
        const std::optional<TruncUnit> trunc_unit = TruncDateUnit(args[1].StringAt(i));
        if (!trunc_unit) {
          QUIVER_RETURN_NOT_OK(b.SetNull(i));
          break;
        }
        const int64_t day = static_cast<int64_t>(args[0].ExactAt(i));
        b.values<int32_t>()[i] =
            static_cast<int32_t>(FloorDiv(Truncate(*trunc_unit, day * kMicrosPerDay), kMicrosPerDay));
        break;
      }
      case Fn::kNextDay: {
        QUIVER_ASSIGN_OR_RETURN(const int target, ParseDayName(args[1].StringAt(i)));
        const int64_t day = static_cast<int64_t>(args[0].ExactAt(i));
        const int64_t ahead = (target - Weekday(day) + 6) % 7 + 1;  // 1..7: strictly later
        if (day + ahead > INT32_MAX) return SqlError(StatusCode::kInvalid, "22008", "next_day(): date out of range");
        b.values<int32_t>()[i] = static_cast<int32_t>(day + ahead);
        break;
      }
      case Fn::kMonthsBetween:
        b.values<double>()[i] =
            MonthsBetween(static_cast<int64_t>(args[0].ExactAt(i)), static_cast<int64_t>(args[1].ExactAt(i)),
                          args.size() < 3 || args[2].BoolAt(i));
        break;
      case Fn::kLastDay: {
        const int32_t day = static_cast<int32_t>(args[0].ExactAt(i));
        int64_t y;
        unsigned m, d;
        CivilFromDays(day, &y, &m, &d);
        b.values<int32_t>()[i] = static_cast<int32_t>(day + (DaysInMonth(y, m) - d));
        break;
      }
      case Fn::kMakeDate: {
        const int64_t y = static_cast<int64_t>(args[0].ExactAt(i)), m = static_cast<int64_t>(args[1].ExactAt(i)),
                      d = static_cast<int64_t>(args[2].ExactAt(i));
        // years 1..9999 as Spark's (java.time's) valid range, checked before
        // the calendar arithmetic so that it cannot overflow
        if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1 || d > DaysInMonth(y, static_cast<unsigned>(m)))
          return SqlError(StatusCode::kInvalid, "22008",
                          "make_date(" + std::to_string(y) + ", " + std::to_string(m) + ", " + std::to_string(d) +
                              "): no such date (years 1 to 9999)");
        b.values<int32_t>()[i] =
            static_cast<int32_t>(DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d)));
        break;
      }
      default: {  // the fields of a timestamp (a date is cast to one by the binder)
        const int64_t us = static_cast<int64_t>(args[0].ExactAt(i));
        const int64_t day = FloorDiv(us, kMicrosPerDay);
        const int64_t in_day = us - day * kMicrosPerDay;
        int64_t y;
        unsigned m, d;
        CivilFromDays(day, &y, &m, &d);
        int64_t out = 0;
        switch (e.fn) {
          case Fn::kExtractQuarter: out = (m - 1) / 3 + 1; break;
          case Fn::kDayOfWeek: out = ((day % 7) + 7 + 4) % 7 + 1; break;  // Spark: 1 Sunday .. 7 Saturday
          case Fn::kDayOfYear: out = day - DaysFromCivil(y, 1, 1) + 1; break;
          case Fn::kWeekOfYear: out = IsoWeek(day); break;
          case Fn::kExtractHour: out = in_day / 3600000000LL; break;
          case Fn::kExtractMinute: out = in_day / 60000000LL % 60; break;
          case Fn::kExtractSecond: out = in_day / 1000000LL % 60; break;
          default: return Status::NotImplemented(std::string("date function ") + FnName(e.fn));
        }
        b.values<int64_t>()[i] = out;
        break;
      }
    }
  }
  v.array = b.Finish();
  return v;
}

}  // namespace quiver::sql::kernels

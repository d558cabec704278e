// quiver/sql/expression/temporal.cc — see temporal.h.
#include "quiver/sql/expression/temporal.h"

#include <algorithm>
#include <cstdio>

namespace quiver::sql {

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t yy = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = yy + (*m <= 2);
}

bool IsLeapYear(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned DaysInMonth(int64_t y, unsigned m) {
  static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return kDays[m - 1] + (m == 2 && IsLeapYear(y) ? 1 : 0);
}

namespace {

struct Scanner {
  std::string_view s;
  size_t p = 0;
  bool Num(int min_digits, int max_digits, int64_t* v) {
    int k = 0;
    *v = 0;
    while (p < s.size() && k < max_digits && s[p] >= '0' && s[p] <= '9') {
      *v = *v * 10 + (s[p] - '0');
      ++p;
      ++k;
    }
    return k >= min_digits;
  }
  bool Lit(char c) {
    if (p < s.size() && s[p] == c) {
      ++p;
      return true;
    }
    return false;
  }
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool ParseDatePart(Scanner* sc, int64_t* days) {
  int64_t y, mo, d;
  // Year, month and day separated by '-', '/' or '.' (the same twice:
  // PostgreSQL reads 1992/09/20 and 1992.09.20 as ISO order too).
  if (!sc->Num(4, 4, &y) || sc->p >= sc->s.size()) return false;
  const char sep = sc->s[sc->p];
  if ((sep != '-' && sep != '/' && sep != '.') || !sc->Lit(sep) || !sc->Num(1, 2, &mo) || !sc->Lit(sep) ||
      !sc->Num(1, 2, &d))
    return false;
  if (mo < 1 || mo > 12 || d < 1) return false;
  if (d > DaysInMonth(y, static_cast<unsigned>(mo))) return false;
  *days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return true;
}

}  // namespace

bool ParseDate(std::string_view text, int32_t* days) {
  Scanner sc{Trim(text)};
  int64_t d;
  if (!ParseDatePart(&sc, &d)) return false;
  if (sc.p != sc.s.size()) {
    // A date with a time of day (PostgreSQL: '2020-01-01 12:34:56'::date
    // is 2020-01-01): a valid timestamp, its day.
    int64_t micros;
    if (!ParseTimestamp(text, &micros)) return false;
  }
  *days = static_cast<int32_t>(d);
  return true;
}

bool ParseTimestamp(std::string_view text, int64_t* micros) {
  Scanner sc{Trim(text)};
  int64_t d;
  if (!ParseDatePart(&sc, &d)) return false;
  int64_t v = d * 86400 * 1000000;
  if (sc.p < sc.s.size() && (sc.s[sc.p] == ' ' || sc.s[sc.p] == 'T')) {
    ++sc.p;
    int64_t h, mi, sec = 0, frac = 0;
    if (!sc.Num(1, 2, &h) || !sc.Lit(':') || !sc.Num(2, 2, &mi)) return false;
    if (sc.Lit(':')) {
      if (!sc.Num(2, 2, &sec)) return false;
      if (sc.Lit('.')) {
        const size_t start = sc.p;
        if (!sc.Num(1, 9, &frac)) return false;
        size_t digits = sc.p - start;
        for (; digits < 6; ++digits) frac *= 10;
        for (; digits > 6; --digits) frac /= 10;
      }
    }
    if (h > 23 || mi > 59 || sec > 59) return false;
    v += (h * 3600 + mi * 60 + sec) * 1000000 + frac;
  }
  if (sc.p != sc.s.size()) return false;
  *micros = v;
  return true;
}

std::string FormatDate(int32_t days) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04lld-%02u-%02u", static_cast<long long>(y), m, d);
  return buf;
}

std::string FormatTimestamp(int64_t micros) {
  int64_t days = micros / 86400000000LL;
  int64_t rem = micros % 86400000000LL;
  if (rem < 0) {
    rem += 86400000000LL;
    --days;
  }
  const int64_t secs = rem / 1000000, frac = rem % 1000000;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s %02lld:%02lld:%02lld", FormatDate(static_cast<int32_t>(days)).c_str(),
                static_cast<long long>(secs / 3600), static_cast<long long>(secs / 60 % 60),
                static_cast<long long>(secs % 60));
  std::string out = buf;
  if (frac) {
    std::snprintf(buf, sizeof(buf), ".%06lld", static_cast<long long>(frac));
    out += buf;
  }
  return out;
}

int32_t AddMonths(int32_t days, int64_t months) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  int64_t total = y * 12 + (m - 1) + months;
  int64_t ny = total >= 0 ? total / 12 : -((-total + 11) / 12);
  const unsigned nm = static_cast<unsigned>(total - ny * 12) + 1;
  const unsigned nd = std::min(d, DaysInMonth(ny, nm));
  return static_cast<int32_t>(DaysFromCivil(ny, nm, nd));
}

}  // namespace quiver::sql

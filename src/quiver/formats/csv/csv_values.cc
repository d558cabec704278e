#include "quiver/formats/csv/csv_values.h"

#include <charconv>
#include <system_error>

namespace quiver::formats::csv {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!IsDigit(s[pos + i])) return false;
    v = v * 10 + (s[pos + i] - '0');
  }
  *out = v;
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (the era-based civil
// calendar computation: years start in March so leap days fall last).
int64_t DaysFromCivil(int y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool DateParts(std::string_view s, int64_t* days) {
  int y = 0, m = 0, d = 0;
  if (s.size() < 10 || !Digits(s, 0, 4, &y) || s[4] != '-' || !Digits(s, 5, 2, &m) || s[7] != '-' ||
      !Digits(s, 8, 2, &d)) {
    return false;
  }
  if (m < 1 || m > 12 || d < 1) return false;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > kDays[m - 1] + (m == 2 && leap ? 1 : 0)) return false;
  *days = DaysFromCivil(y, m, d);
  return true;
}

}  // namespace

bool ParseCsvBool(std::string_view s, bool* out) {
  auto eq = [&](std::string_view word) {
    if (s.size() != word.size()) return false;
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != word[i]) return false;
    }
    return true;
  };
  if (eq("true")) {
    *out = true;
    return true;
  }
  if (eq("false")) {
    *out = false;
    return true;
  }
  return false;
}

bool ParseCsvInt64(std::string_view s, int64_t* out) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s[0] == '+') return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool ParseCsvDouble(std::string_view s, double* out) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  // Only digits, one sign, '.', and an exponent: no inf / nan / hex.
  bool digit = false;
  for (char c : s) {
    if (IsDigit(c)) {
      digit = true;
    } else if (c != '.' && c != '-' && c != '+' && c != 'e' && c != 'E') {
      return false;
    }
  }
  if (!digit) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, std::chars_format::general);
  return ec == std::errc() && p == s.data() + s.size();
}

bool ParseCsvDate(std::string_view s, int32_t* out_days) {
  int64_t days = 0;
  if (s.size() != 10 || !DateParts(s, &days)) return false;
  *out_days = static_cast<int32_t>(days);
  return true;
}

bool ParseCsvTimestamp(std::string_view s, int64_t* out_us) {
  int64_t days = 0;
  if (s.size() < 19 || !DateParts(s, &days) || (s[10] != 'T' && s[10] != ' ')) return false;
  int hh = 0, mm = 0, ss = 0;
  if (!Digits(s, 11, 2, &hh) || s[13] != ':' || !Digits(s, 14, 2, &mm) || s[16] != ':' || !Digits(s, 17, 2, &ss)) {
    return false;
  }
  if (hh > 23 || mm > 59 || ss > 60) return false;
  size_t pos = 19;
  int64_t frac_us = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int n = 0;
    while (pos < s.size() && IsDigit(s[pos])) {
      if (n < 6) frac_us = frac_us * 10 + (s[pos] - '0');
      ++n;
      ++pos;
    }
    if (n == 0) return false;
    for (int i = n; i < 6; ++i) frac_us *= 10;
  }
  if (pos < s.size() && s[pos] == 'Z') ++pos;
  if (pos != s.size()) return false;
  *out_us = ((days * 24 + hh) * 60 + mm) * 60'000'000LL + ss * 1'000'000LL + frac_us;
  return true;
}

bool ParseCsvDecimal(std::string_view s, int precision, int scale, __int128* out_unscaled) {
  if (precision < 1 || precision > 38 || scale < 0 || scale > precision) return false;
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  __int128 limit = 1;  // 10^precision
  for (int i = 0; i < precision; ++i) limit *= 10;
  __int128 v = 0;
  int digits = 0, fraction = 0;
  bool point = false, round_up = false, past_scale = false;
  for (char c : s) {
    if (c == '.') {
      if (point) return false;
      point = true;
      continue;
    }
    if (!IsDigit(c)) return false;
    ++digits;
    if (point) {
      if (fraction == scale) {
        // The first digit past the scale decides the rounding; the rest
        // only need to be digits.
        if (!past_scale) round_up = c >= '5';
        past_scale = true;
        continue;
      }
      ++fraction;
    }
    v = v * 10 + (c - '0');
    if (v >= limit) return false;
  }
  if (digits == 0) return false;
  for (; fraction < scale; ++fraction) {
    v *= 10;
    if (v >= limit) return false;
  }
  if (round_up && ++v >= limit) return false;
  *out_unscaled = negative ? -v : v;
  return true;
}

}  // namespace quiver::formats::csv

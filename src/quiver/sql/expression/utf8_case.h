// quiver/sql/expression/utf8_case.h — upper / lower case of UTF-8 text for
// upper(), lower() and initcap(): Unicode's simple (one-to-one) case
// mappings, code point by code point, as DuckDB's upper / lower and
// PostgreSQL's in a UTF-8 locale give them (lower('ÄΒΓ') is 'äβγ'). The
// mappings are glibc's C.UTF-8 LC_CTYPE tables (towupper_l / towlower_l on
// a locale object made once; the process's own locale is never changed).
// One-to-many mappings are not applied: upper('ß') stays 'ß' (as DuckDB;
// Spark's Java gives 'SS'). Text that is all ASCII takes a byte loop;
// bytes that are not well-formed UTF-8 are copied unchanged.
//
// Errors: none. Thread safety: pure functions (the locale object is made
// once, thread-safely, and only read).
#pragma once

#include <locale.h>
#include <wctype.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace quiver::sql::kernels {

/// The simple upper (`upper`) or lower case of one code point; itself when
/// it has none (or when the C.UTF-8 locale cannot be loaded: then only
/// ASCII letters map).
inline char32_t MapCase(char32_t c, bool upper) {
  if (c < 0x80) {
    if (upper && c >= 'a' && c <= 'z') return c - 32;
    if (!upper && c >= 'A' && c <= 'Z') return c + 32;
    return c;
  }
  static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  if (utf8 == static_cast<locale_t>(nullptr)) return c;
  const wint_t m = upper ? towupper_l(static_cast<wint_t>(c), utf8) : towlower_l(static_cast<wint_t>(c), utf8);
  return static_cast<char32_t>(m);
}

/// Decodes the well-formed UTF-8 code point at s[*pos] (advancing *pos);
/// false (and *pos unchanged) when the bytes there are not one.
inline bool DecodeUtf8(std::string_view s, size_t* pos, char32_t* out) {
  const size_t p = *pos;
  const auto b0 = static_cast<unsigned char>(s[p]);
  int len = 0;
  char32_t c = 0;
  if (b0 < 0x80) {
    *out = b0;
    *pos = p + 1;
    return true;
  } else if (b0 >= 0xC2 && b0 < 0xE0) {
    len = 2;
    c = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 < 0xF0) {
    len = 3;
    c = b0 & 0x0F;
  } else if (b0 >= 0xF0 && b0 < 0xF5) {
    len = 4;
    c = b0 & 0x07;
  } else {
    return false;
  }
  if (p + static_cast<size_t>(len) > s.size()) return false;
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[p + static_cast<size_t>(k)]);
    if ((b & 0xC0) != 0x80) return false;
    c = (c << 6) | (b & 0x3F);
  }
  if ((len == 3 && (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)))
    return false;
  *out = c;
  *pos = p + static_cast<size_t>(len);
  return true;
}

/// Appends code point `c` (<= 0x10FFFF, not a surrogate) as UTF-8.
inline void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

/// `s` with every code point upper- (`upper`) or lower-cased, into *out
/// (replacing its contents).
inline void CaseMapUtf8(std::string_view s, bool upper, std::string* out) {
  out->clear();
  out->reserve(s.size());
  size_t p = 0;
  while (p < s.size()) {
    char32_t c;
    if (!DecodeUtf8(s, &p, &c)) {
      out->push_back(s[p++]);  // not UTF-8: copied unchanged
      continue;
    }
    AppendUtf8(MapCase(c, upper), out);
  }
}

}  // namespace quiver::sql::kernels

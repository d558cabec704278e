// quiver/sql/spark_literal.cc — see spark_literal.h.
#include "quiver/sql/spark_literal.h"

#include <cctype>
#include <cstdint>

#include "quiver/sql/text_position.h"

namespace quiver::sql {
namespace {

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// Appends code point `cp` as UTF-8.
void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace

// The value of Spark's string literal s[begin, end) (quotes included;
// `raw`: an r'...' literal, no escapes), by Spark's unescapeSQLString:
// \uXXXX and \UXXXXXXXX code points, \ooo octal ([0-3][0-7][0-7]), \0 NUL,
// \b \n \r \t, \Z (U+001A), \\ \' \", \% and \_ kept with their backslash
// (LIKE's escapes), any other \c is c; a doubled quote is one quote.
// Errors: Invalid 22021 for a NUL character or a code point past U+10FFFF.
Result<std::string> SparkStringValue(std::string_view s, size_t begin, size_t end, bool raw) {
  const char quote = s[begin];
  std::string v;
  for (size_t i = begin + 1; i + 1 < end; ++i) {
    const char c = s[i];
    if (c == quote) {  // doubled
      v.push_back(c);
      ++i;
      continue;
    }
    if (c != '\\' || raw || i + 2 >= end) {
      v.push_back(c);
      continue;
    }
    const char n = s[i + 1];
    const size_t rest = end - 1 - (i + 2);  // bytes after the escape letter, before the closing quote
    auto hex_run = [&](size_t k) {
      if (rest < k) return false;
      for (size_t j = 0; j < k; ++j)
        if (!IsHex(s[i + 2 + j])) return false;
      return true;
    };
    if ((n == 'u' && hex_run(4)) || (n == 'U' && hex_run(8))) {
      const size_t k = n == 'u' ? 4 : 8;
      const uint32_t cp = static_cast<uint32_t>(std::stoul(std::string(s.substr(i + 2, k)), nullptr, 16));
      if (cp == 0 || cp > 0x10FFFF)
        return Status::Invalid("string literal escape \\" + std::string(s.substr(i + 1, k + 1)) +
                               " is not a character quiver can hold (" + DescribePosition(s, static_cast<int>(i)) + ")")
            .WithSqlState("22021");
      AppendUtf8(cp, &v);
      i += 1 + k;
      continue;
    }
    if (n >= '0' && n <= '3' && rest >= 2 && s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      const int code = (n - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0');
      if (code == 0)
        return Status::Invalid("a NUL character (\\000) in a string literal is not supported (" +
                               DescribePosition(s, static_cast<int>(i)) + ")")
            .WithSqlState("22021");
      AppendUtf8(static_cast<uint32_t>(code), &v);
      i += 3;
      continue;
    }
    switch (n) {
      case '0':
        return Status::Invalid("a NUL character (\\0) in a string literal is not supported (" +
                               DescribePosition(s, static_cast<int>(i)) + ")")
            .WithSqlState("22021");
      case 'b': v.push_back('\b'); break;
      case 'n': v.push_back('\n'); break;
      case 'r': v.push_back('\r'); break;
      case 't': v.push_back('\t'); break;
      case 'Z': v.push_back('\x1A'); break;
      case '%':
      case '_':
        v.push_back('\\');
        v.push_back(n);
        break;
      default: v.push_back(n); break;
    }
    ++i;
  }
  return v;
}

// Appends Spark's string literal s[begin, end) as a PostgreSQL standard
// string ('...', a ' doubled, backslashes literal), padded with spaces to
// the literal's length where it came out shorter (offsets kept).
Status AppendSparkString(std::string_view s, size_t begin, size_t end, bool raw, std::string* out) {
  QUIVER_ASSIGN_OR_RETURN(std::string v, SparkStringValue(s, begin, end, raw));
  const size_t start = out->size();
  out->push_back('\'');
  for (char c : v) {
    if (c == '\'') out->push_back('\'');
    out->push_back(c);
  }
  out->push_back('\'');
  const size_t written = out->size() - start;
  const size_t original = end - begin;  // (a raw literal's r is blanked by the caller)
  if (written < original) out->append(original - written, ' ');
  return Status::OK();
}

}  // namespace quiver::sql

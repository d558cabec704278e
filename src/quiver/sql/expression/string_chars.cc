// quiver/sql/expression/string_chars.cc — the string functions of Spark's
// library that work character by character (issue 37): locate / position
// with a start, repeat, reverse, translate, ascii, chr (PostgreSQL's and
// DuckDB's code points; Spark's Latin-1 byte). Characters are UTF-8 code
// points; bytes that are not UTF-8 count as one character each. NULL in an
// argument gives NULL, except locate's start (Spark: 0). Semantics and
// SQLSTATEs: docs/functions.md.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/sql/expression/kernels.h"
#include "quiver/sql/expression/utf8_case.h"

namespace quiver::sql::kernels {
namespace {

/// The longest text repeat builds, in bytes: past it 54000
/// (program_limit_exceeded) rather than a huge allocation (lpad's limit).
constexpr int64_t kMaxRepeatBytes = int64_t{1} << 26;

bool AllConstant(const std::vector<Vec>& args) {
  for (const auto& a : args)
    if (!a.constant) return false;
  return true;
}

// The byte offset of the character `chars` characters into `s` (s.size()
// when it has fewer).
size_t CharOffset(std::string_view s, int64_t chars) {
  size_t p = 0;
  for (int64_t k = 0; k < chars && p < s.size(); ++k)
    p += static_cast<size_t>(Utf8CharBytes(static_cast<unsigned char>(s[p])));
  return std::min(p, s.size());
}

int64_t CharCount(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The next character of `s` at *p (advancing *p): a code point, or a stray
// byte as itself (kept apart from code points by the high bit).
char32_t NextChar(std::string_view s, size_t* p) {
  char32_t c;
  if (DecodeUtf8(s, p, &c)) return c;
  return 0x80000000u | static_cast<unsigned char>(s[(*p)++]);
}

void AppendChar(char32_t c, std::string* out) {
  if (c & 0x80000000u) {
    out->push_back(static_cast<char>(c & 0xFF));
  } else {
    AppendUtf8(c, out);
  }
}

// Spark's locate(sub, s, start): the 1-based character position of the
// first sub in s at or after character start; 0 when absent or start < 1;
// an empty sub is found at 1 (UTF8String.indexOf).
int64_t Locate(std::string_view sub, std::string_view s, int64_t start) {
  if (start < 1) return 0;
  if (sub.empty()) return 1;
  const size_t from = CharOffset(s, start - 1);
  const size_t at = s.find(sub, from);
  return at == std::string_view::npos ? 0 : CharCount(s.substr(0, at)) + 1;
}

void Reverse(std::string_view s, std::string* out) {
  out->clear();
  size_t end = s.size();
  while (end > 0) {
    size_t begin = end - 1;
    while (begin > 0 && (static_cast<unsigned char>(s[begin]) & 0xC0) == 0x80 && end - begin < 4) --begin;
    // a lead byte whose length does not reach `end` is a stray byte: copy one
    if (begin + static_cast<size_t>(Utf8CharBytes(static_cast<unsigned char>(s[begin]))) != end) begin = end - 1;
    out->append(s.substr(begin, end - begin));
    end = begin;
  }
}

// translate(s, from, to): each character of s that is in `from` becomes
// the character at the same place in `to`, or is removed when `to` is
// shorter; the first occurrence of a repeated character of `from` counts.
void Translate(std::string_view s, std::string_view from, std::string_view to, std::string* out) {
  std::vector<char32_t> keys, values;
  for (size_t p = 0; p < from.size();) keys.push_back(NextChar(from, &p));
  for (size_t p = 0; p < to.size();) values.push_back(NextChar(to, &p));
  out->clear();
  for (size_t p = 0; p < s.size();) {
    const char32_t c = NextChar(s, &p);
    const auto it = std::find(keys.begin(), keys.end(), c);
    if (it == keys.end()) {
      AppendChar(c, out);
      continue;
    }
    const size_t k = static_cast<size_t>(it - keys.begin());
    if (k < values.size()) AppendChar(values[k], out);
  }
}

Status Repeat(std::string_view s, int64_t n, std::string* out) {
  out->clear();
  if (n <= 0 || s.empty()) return Status::OK();
  if (n > kMaxRepeatBytes / static_cast<int64_t>(s.size()))
    return SqlError(StatusCode::kInvalid, "54000",
                    "repeat(): " + std::to_string(n) + " copies of " + std::to_string(s.size()) +
                        " bytes exceed the limit of " + std::to_string(kMaxRepeatBytes) + " bytes");
  out->reserve(static_cast<size_t>(n) * s.size());
  for (int64_t k = 0; k < n; ++k) out->append(s);
  return Status::OK();
}

// chr(n): PostgreSQL's and DuckDB's code point n (22023 outside Unicode or
// a surrogate); Spark's: '' for n < 0, else the character n mod 256.
Status Chr(bool spark, i128 n, std::string* out) {
  out->clear();
  if (spark) {
    if (n >= 0) AppendUtf8(static_cast<char32_t>(n % 256), out);
    return Status::OK();
  }
  if (n < 0 || n > 0x10FFFF || (n >= 0xD800 && n <= 0xDFFF))
    return SqlError(StatusCode::kInvalid, "22023",
                    "chr(): " + std::to_string(static_cast<int64_t>(std::clamp<i128>(n, INT64_MIN, INT64_MAX))) +
                        " is not a Unicode code point");
  AppendUtf8(static_cast<char32_t>(n), out);
  return Status::OK();
}

}  // namespace

Result<Vec> StringChars(const Expr& e, const std::vector<Vec>& args, int64_t n, EvalContext* ctx) {
  const bool all_const = AllConstant(args);
  const int64_t rows = all_const ? 1 : n;
  Vec v;
  v.constant = all_const;
  auto null_at = [&](int64_t i, size_t count) {
    for (size_t k = 0; k < count; ++k)
      if (args[k].IsNull(i)) return true;
    return false;
  };
  if (e.fn == Fn::kLocate || e.fn == Fn::kAscii) {
    QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(int64(), rows, ctx->pool));
    int64_t* out = b.values<int64_t>();
    for (int64_t i = 0; i < rows; ++i) {
      out[i] = 0;
      if (null_at(i, e.fn == Fn::kLocate ? 2 : 1)) {
        QUIVER_RETURN_NOT_OK(b.SetNull(i));
        continue;
      }
      if (e.fn == Fn::kAscii) {
        const std::string_view s = args[0].StringAt(i);
        size_t p = 0;
        out[i] = s.empty() ? 0 : static_cast<int64_t>(NextChar(s, &p) & 0x7FFFFFFFu);
        continue;
      }
      // a NULL start gives 0 (Spark's StringLocate)
      const bool has_start = args.size() > 2;
      if (has_start && args[2].IsNull(i)) continue;
      const int64_t start =
          has_start ? static_cast<int64_t>(std::clamp<i128>(args[2].ExactAt(i), -1, INT64_MAX)) : int64_t{1};
      out[i] = Locate(args[0].StringAt(i), args[1].StringAt(i), start);
    }
    v.array = b.Finish();
    return v;
  }
  int64_t hint = 0;
  if (!args[0].constant && args[0].type()->id == TypeId::kUtf8) hint = args[0].array->buffers[2]->size();
  QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(rows, hint, ctx->pool));
  std::string scratch;
  for (int64_t i = 0; i < rows; ++i) {
    if (null_at(i, args.size())) {
      QUIVER_RETURN_NOT_OK(b.AppendNull());
      continue;
    }
    switch (e.fn) {
      case Fn::kRepeat:
        QUIVER_RETURN_NOT_OK(Repeat(
            args[0].StringAt(i), static_cast<int64_t>(std::clamp<i128>(args[1].ExactAt(i), -1, INT64_MAX)), &scratch));
        break;
      case Fn::kReverse: Reverse(args[0].StringAt(i), &scratch); break;
      case Fn::kTranslate: Translate(args[0].StringAt(i), args[1].StringAt(i), args[2].StringAt(i), &scratch); break;
      case Fn::kChr:
      case Fn::kSparkChr: QUIVER_RETURN_NOT_OK(Chr(e.fn == Fn::kSparkChr, args[0].ExactAt(i), &scratch)); break;
      default: return Status::NotImplemented(std::string("string function ") + FnName(e.fn));
    }
    QUIVER_RETURN_NOT_OK(b.Append(scratch));
  }
  QUIVER_ASSIGN_OR_RETURN(v.array, b.Finish());
  return v;
}

}  // namespace quiver::sql::kernels

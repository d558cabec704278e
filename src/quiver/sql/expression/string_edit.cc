// quiver/sql/expression/string_edit.cc — the string functions of issue 37
// that cut, pad, search and join text (no regular expressions): replace,
// split_part, lpad / rpad, instr (strpos, position), concat_ws, left /
// right, initcap. Positions and lengths count UTF-8 characters; letters are
// changed in case only in ASCII (as upper / lower). NULL in any argument
// gives NULL, except concat_ws, which skips NULL values (a NULL separator
// gives NULL). Semantics and SQLSTATEs: docs/sql.md, "String functions".
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/sql/expression/kernels.h"
#include "quiver/sql/expression/utf8_case.h"

namespace quiver::sql::kernels {
namespace {

/// The longest result lpad / rpad may build, in characters: a length past
/// it is 54000 (program_limit_exceeded) rather than a huge allocation.
constexpr int64_t kMaxPadChars = int64_t{1} << 26;

bool AllConstant(const std::vector<Vec>& args) {
  for (const auto& a : args)
    if (!a.constant) return false;
  return true;
}

int64_t CharCount(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The first `chars` characters of `s` (all of it when it has fewer).
std::string_view PrefixChars(std::string_view s, int64_t chars) {
  size_t p = 0;
  for (int64_t k = 0; k < chars && p < s.size(); ++k)
    p += static_cast<size_t>(Utf8CharBytes(static_cast<unsigned char>(s[p])));
  return s.substr(0, std::min(p, s.size()));
}

// The last `chars` characters of `s`.
std::string_view SuffixChars(std::string_view s, int64_t chars) {
  size_t p = s.size();
  for (int64_t k = 0; k < chars && p > 0; ++k) {
    --p;
    while (p > 0 && (static_cast<unsigned char>(s[p]) & 0xC0) == 0x80) --p;
  }
  return s.substr(p);
}

Status Pad(bool left, std::string_view s, int64_t n, std::string_view pad, std::string* out) {
  out->clear();
  if (n <= 0) return Status::OK();
  if (n > kMaxPadChars)
    return SqlError(StatusCode::kInvalid, "54000",
                    std::string(left ? "lpad" : "rpad") + " length " + std::to_string(n) + " exceeds the limit of " +
                        std::to_string(kMaxPadChars) + " characters");
  const int64_t have = CharCount(s);
  if (have >= n || pad.empty()) {
    out->assign(PrefixChars(s, n));
    return Status::OK();
  }
  std::string fill;
  int64_t missing = n - have;
  const int64_t pad_chars = CharCount(pad);
  while (missing >= pad_chars) {
    fill.append(pad);
    missing -= pad_chars;
  }
  fill.append(PrefixChars(pad, missing));
  if (left) {
    out->append(fill);
    out->append(s);
  } else {
    out->append(s);
    out->append(fill);
  }
  return Status::OK();
}

// split_part(s, delimiter, n): fields between delimiters; n 1-based, a
// negative n counts from the end; out of range gives ''; an empty delimiter
// leaves one field, the whole string. n = 0 is 22023 (Spark and
// PostgreSQL).
Result<std::string_view> SplitPart(std::string_view s, std::string_view delim, int64_t n) {
  if (n == 0) return SqlError(StatusCode::kInvalid, "22023", "split_part field position must not be zero");
  std::vector<std::string_view> fields;
  if (delim.empty()) {
    fields.push_back(s);
  } else {
    size_t p = 0;
    while (true) {
      const size_t at = s.find(delim, p);
      if (at == std::string_view::npos) {
        fields.push_back(s.substr(p));
        break;
      }
      fields.push_back(s.substr(p, at - p));
      p = at + delim.size();
    }
  }
  const int64_t count = static_cast<int64_t>(fields.size());
  const int64_t k = n > 0 ? n - 1 : count + n;
  if (k < 0 || k >= count) return std::string_view();
  return fields[static_cast<size_t>(k)];
}

void Initcap(std::string_view s, std::string* out) {
  out->clear();
  out->reserve(s.size());
  bool word_start = true;
  size_t p = 0;
  while (p < s.size()) {
    char32_t c;
    if (!DecodeUtf8(s, &p, &c)) {  // not UTF-8: copied unchanged
      out->push_back(s[p++]);
      word_start = false;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      word_start = true;
      out->push_back(static_cast<char>(c));
      continue;
    }
    AppendUtf8(MapCase(c, word_start), out);  // Unicode's simple mappings (utf8_case.h)
    word_start = false;
  }
}

}  // namespace

Result<Vec> StringEdit(const Expr& e, const std::vector<Vec>& args, int64_t n, EvalContext* ctx) {
  const bool all_const = AllConstant(args);
  const int64_t rows = all_const ? 1 : n;
  Vec v;
  v.constant = all_const;
  if (e.fn == Fn::kInstr) {
    QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(int64(), rows, ctx->pool));
    int64_t* out = b.values<int64_t>();
    for (int64_t i = 0; i < rows; ++i) {
      out[i] = 0;
      if (args[0].IsNull(i) || args[1].IsNull(i)) {
        QUIVER_RETURN_NOT_OK(b.SetNull(i));
        continue;
      }
      const std::string_view s = args[0].StringAt(i);
      const size_t at = s.find(args[1].StringAt(i));
      out[i] = at == std::string_view::npos ? 0 : CharCount(s.substr(0, at)) + 1;
    }
    v.array = b.Finish();
    return v;
  }
  int64_t hint = 0;
  if (!args[0].constant && args[0].type()->id == TypeId::kUtf8) hint = args[0].array->buffers[2]->size();
  QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(rows, hint, ctx->pool));
  std::string scratch;
  for (int64_t i = 0; i < rows; ++i) {
    if (e.fn == Fn::kConcatWs) {
      if (args[0].IsNull(i)) {
        QUIVER_RETURN_NOT_OK(b.AppendNull());
        continue;
      }
      const std::string_view sep = args[0].StringAt(i);
      scratch.clear();
      bool first = true;
      for (size_t k = 1; k < args.size(); ++k) {
        if (args[k].IsNull(i)) continue;
        if (!first) scratch.append(sep);
        scratch.append(args[k].StringAt(i));
        first = false;
      }
      QUIVER_RETURN_NOT_OK(b.Append(scratch));
      continue;
    }
    bool any_null = false;
    for (const auto& a : args) any_null = any_null || a.IsNull(i);
    if (any_null) {
      QUIVER_RETURN_NOT_OK(b.AppendNull());
      continue;
    }
    const std::string_view s = args[0].StringAt(i);
    switch (e.fn) {
      case Fn::kReplace: {
        const std::string_view from = args[1].StringAt(i);
        const std::string_view to = args.size() > 2 ? args[2].StringAt(i) : std::string_view();
        if (from.empty()) {
          QUIVER_RETURN_NOT_OK(b.Append(s));
          break;
        }
        scratch.clear();
        size_t p = 0;
        for (size_t at = s.find(from); at != std::string_view::npos; at = s.find(from, p)) {
          scratch.append(s.substr(p, at - p));
          scratch.append(to);
          p = at + from.size();
        }
        scratch.append(s.substr(p));
        QUIVER_RETURN_NOT_OK(b.Append(scratch));
        break;
      }
      case Fn::kSplitPart: {
        QUIVER_ASSIGN_OR_RETURN(std::string_view field,
                                SplitPart(s, args[1].StringAt(i), static_cast<int64_t>(args[2].ExactAt(i))));
        QUIVER_RETURN_NOT_OK(b.Append(field));
        break;
      }
      case Fn::kLpad:
      case Fn::kRpad: {
        const std::string_view pad = args.size() > 2 ? args[2].StringAt(i) : std::string_view(" ");
        QUIVER_RETURN_NOT_OK(Pad(e.fn == Fn::kLpad, s, static_cast<int64_t>(args[1].ExactAt(i)), pad, &scratch));
        QUIVER_RETURN_NOT_OK(b.Append(scratch));
        break;
      }
      case Fn::kLeft:
      case Fn::kRight: {
        const i128 k = args[1].ExactAt(i);
        const int64_t total = CharCount(s);
        // n < 0: all but |n| characters from the other end (PostgreSQL)
        const int64_t keep = k >= 0 ? static_cast<int64_t>(std::min<i128>(k, total))
                                    : std::max<int64_t>(0, total - static_cast<int64_t>(std::min<i128>(-k, total)));
        QUIVER_RETURN_NOT_OK(b.Append(e.fn == Fn::kLeft ? PrefixChars(s, keep) : SuffixChars(s, keep)));
        break;
      }
      case Fn::kInitcap:
        Initcap(s, &scratch);
        QUIVER_RETURN_NOT_OK(b.Append(scratch));
        break;
      default: return Status::NotImplemented(std::string("string function ") + FnName(e.fn));
    }
  }
  QUIVER_ASSIGN_OR_RETURN(v.array, b.Finish());
  return v;
}

}  // namespace quiver::sql::kernels

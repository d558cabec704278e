// quiver/sql/expression/string_functions.cc — [NOT] LIKE (with ESCAPE; `_`
// is one UTF-8 character, `%` any run), SUBSTRING (1-based characters, as
// PostgreSQL: a start before 1 shortens the count), UPPER / LOWER (ASCII
// letters), LENGTH (characters), TRIM / LTRIM / RTRIM (spaces), || .
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "quiver/sql/expression/kernels.h"
#include "quiver/sql/expression/utf8_case.h"

namespace quiver::sql::kernels {
namespace {

int Utf8Len(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

// Whether the UTF-8 character `ch` is one of the characters of `set`.
bool Utf8SetContains(std::string_view set, std::string_view ch) {
  size_t p = 0;
  while (p < set.size()) {
    const size_t len =
        std::min<size_t>(static_cast<size_t>(Utf8Len(static_cast<unsigned char>(set[p]))), set.size() - p);
    if (set.substr(p, len) == ch) return true;
    p += len;
  }
  return false;
}

// A LIKE pattern split at '%' into segments; in a segment, kAny marks '_'.
struct LikePattern {
  static constexpr int kAny = 256;
  std::vector<std::vector<int>> segments;
  bool leading_percent = false, trailing_percent = false;
  bool simple = true;  // no '_' anywhere: segments are plain bytes
  std::vector<std::string> plain;

  static Result<LikePattern> Compile(std::string_view p, int escape) {
    LikePattern out;
    std::vector<int> cur;
    bool any_segment = false;
    for (size_t i = 0; i < p.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(p[i]);
      if (escape >= 0 && c == escape) {
        if (i + 1 >= p.size())
          return SqlError(StatusCode::kInvalid, "22025", "LIKE pattern must not end with escape character");
        cur.push_back(static_cast<unsigned char>(p[++i]));
      } else if (c == '%') {
        if (!any_segment && cur.empty()) out.leading_percent = true;
        if (!cur.empty() || any_segment) out.segments.push_back(cur);
        any_segment = true;
        cur.clear();
        out.trailing_percent = true;
        continue;
      } else if (c == '_') {
        cur.push_back(kAny);
        out.simple = false;
      } else {
        cur.push_back(c);
      }
      out.trailing_percent = false;
    }
    if (!out.trailing_percent || !any_segment) out.segments.push_back(cur);
    // drop empty segments made by '%%'
    std::vector<std::vector<int>> segs;
    for (size_t k = 0; k < out.segments.size(); ++k) {
      const bool first = k == 0 && !out.leading_percent;
      const bool last = k + 1 == out.segments.size() && !out.trailing_percent;
      if (out.segments[k].empty() && !first && !last) continue;
      segs.push_back(out.segments[k]);
    }
    out.segments = std::move(segs);
    for (const auto& s : out.segments) {
      std::string b;
      for (int c : s) b.push_back(static_cast<char>(c));
      out.plain.push_back(std::move(b));
    }
    return out;
  }

  // Matches segment k at s[pos...]; returns bytes consumed or -1.
  int64_t MatchAt(size_t k, std::string_view s, size_t pos) const {
    size_t p = pos;
    for (int c : segments[k]) {
      if (p >= s.size()) return -1;
      if (c == kAny) {
        p += static_cast<size_t>(Utf8Len(static_cast<unsigned char>(s[p])));
        if (p > s.size()) return -1;
      } else {
        if (static_cast<unsigned char>(s[p]) != c) return -1;
        ++p;
      }
    }
    return static_cast<int64_t>(p - pos);
  }

  // Finds segment k at or after `from`; position or npos.
  size_t Find(size_t k, std::string_view s, size_t from, int64_t* len) const {
    if (simple) {
      const size_t at = s.find(plain[k], from);
      *len = static_cast<int64_t>(plain[k].size());
      return at;
    }
    for (size_t p = from; p <= s.size(); ++p) {
      const int64_t m = MatchAt(k, s, p);
      if (m >= 0) {
        *len = m;
        return p;
      }
    }
    return std::string_view::npos;
  }

  bool Matches(std::string_view s) const {
    const size_t n = segments.size();
    if (n == 0) return true;  // only '%'
    if (n == 1 && !leading_percent && !trailing_percent) {
      const int64_t m = MatchAt(0, s, 0);
      return m >= 0 && static_cast<size_t>(m) == s.size();
    }
    size_t pos = 0;
    size_t first = 0, last = n;
    if (!leading_percent) {
      const int64_t m = MatchAt(0, s, 0);
      if (m < 0) return false;
      pos = static_cast<size_t>(m);
      first = 1;
    }
    size_t end = s.size();
    if (!trailing_percent) {
      // the last segment must match at the end (simple: byte length known)
      last = n - 1;
      if (last < first) return pos == s.size();
      if (simple) {
        const std::string& t = plain[last];
        if (t.size() > end - pos || s.substr(s.size() - t.size()) != t) return false;
        end = s.size() - t.size();
      } else {
        bool ok = false;
        for (size_t p = s.size() + 1; p-- > pos;) {
          const int64_t m = MatchAt(last, s, p);
          if (m >= 0 && p + static_cast<size_t>(m) == s.size()) {
            end = p;
            ok = true;
            break;
          }
        }
        if (!ok) return false;
      }
    }
    for (size_t k = first; k < last; ++k) {
      int64_t len = 0;
      const size_t at = Find(k, s.substr(0, end), pos, &len);
      if (at == std::string_view::npos) return false;
      pos = at + static_cast<size_t>(len);
    }
    return pos <= end;
  }
};

Result<Vec> BoolFromTruth(std::vector<uint8_t>& truth, bool constant, MemoryPool* pool) {
  Vec out;
  QUIVER_ASSIGN_OR_RETURN(out.array, BoolArrayFromTruth(truth.data(), static_cast<int64_t>(truth.size()), pool));
  out.constant = constant;
  return out;
}

bool AnyNull(const std::vector<Vec>& args, int64_t i) {
  for (const auto& a : args)
    if (a.IsNull(i)) return true;
  return false;
}

bool AllConst(const std::vector<Vec>& args) {
  for (const auto& a : args)
    if (!a.constant) return false;
  return true;
}

}  // namespace

Result<Vec> Like(const Expr& e, const std::vector<Vec>& args, int64_t n, EvalContext* ctx) {
  const bool all_const = AllConst(args);
  const int64_t rows = all_const ? 1 : n;
  std::vector<uint8_t> truth(static_cast<size_t>(rows), 0);
  for (const auto& a : args)
    if (a.type()->id == TypeId::kNull) {
      std::fill(truth.begin(), truth.end(), 2);
      return BoolFromTruth(truth, all_const, ctx->pool);
    }
  auto escape_of = [&](int64_t i) -> Result<int> {
    if (args.size() < 3) return static_cast<int>('\\');
    const std::string_view esc = args[2].StringAt(i);
    if (esc.empty()) return -1;
    if (esc.size() != 1)
      return SqlError(StatusCode::kInvalid, "22019",
                      "invalid escape string: must be one character, got '" + std::string(esc) + "'");
    return static_cast<int>(static_cast<unsigned char>(esc[0]));
  };
  const bool pattern_const = args[1].constant && (args.size() < 3 || args[2].constant);
  std::optional<LikePattern> fixed;
  if (pattern_const && !args[1].IsNull(0) && (args.size() < 3 || !args[2].IsNull(0))) {
    QUIVER_ASSIGN_OR_RETURN(int esc, escape_of(0));
    QUIVER_ASSIGN_OR_RETURN(auto p, LikePattern::Compile(args[1].StringAt(0), esc));
    fixed = std::move(p);
  }
  for (int64_t i = 0; i < rows; ++i) {
    if (AnyNull(args, i)) {
      truth[static_cast<size_t>(i)] = 2;
      continue;
    }
    bool m;
    if (fixed) {
      m = fixed->Matches(args[0].StringAt(i));
    } else {
      QUIVER_ASSIGN_OR_RETURN(int esc, escape_of(i));
      QUIVER_ASSIGN_OR_RETURN(auto p, LikePattern::Compile(args[1].StringAt(i), esc));
      m = p.Matches(args[0].StringAt(i));
    }
    truth[static_cast<size_t>(i)] = (m != e.negated) ? 1 : 0;
  }
  return BoolFromTruth(truth, all_const, ctx->pool);
}

Result<Vec> StringFunction(const Expr& e, const std::vector<Vec>& args, int64_t n, EvalContext* ctx) {
  const bool all_const = AllConst(args);
  const int64_t rows = all_const ? 1 : n;
  for (const auto& a : args) {
    if (a.type()->id == TypeId::kNull) {
      QUIVER_ASSIGN_OR_RETURN(Vec v, ConstantVec(Value::Null(e.type), ctx->pool));
      if (!all_const) {
        QUIVER_ASSIGN_OR_RETURN(v.array, Materialize(v, rows, ctx->pool));
        v.constant = false;
      }
      return v;
    }
  }
  if (e.fn == Fn::kLength) {
    QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(int64(), rows, ctx->pool));
    QUIVER_RETURN_NOT_OK(b.CopyValidity(args[0]));
    int64_t* out = b.values<int64_t>();
    for (int64_t i = 0; i < rows; ++i) {
      if (args[0].IsNull(i)) {
        out[i] = 0;
        continue;
      }
      const std::string_view s = args[0].StringAt(i);
      int64_t chars = 0;
      for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
      out[i] = chars;
    }
    Vec v;
    v.array = b.Finish();
    v.constant = all_const;
    return v;
  }
  int64_t hint = 0;
  if (!args[0].constant && args[0].type()->id == TypeId::kUtf8) hint = args[0].array->buffers[2]->size();
  QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(rows, hint, ctx->pool));
  std::string scratch;
  for (int64_t i = 0; i < rows; ++i) {
    if (AnyNull(args, i)) {
      QUIVER_RETURN_NOT_OK(b.AppendNull());
      continue;
    }
    std::string_view s = args[0].StringAt(i);
    switch (e.fn) {
      case Fn::kSubstring: {
        int64_t start = static_cast<int64_t>(args[1].ExactAt(i));
        int64_t count = INT64_MAX;
        if (args.size() > 2) {
          count = static_cast<int64_t>(args[2].ExactAt(i));
          if (count < 0) return SqlError(StatusCode::kInvalid, "22011", "negative substring length not allowed");
        }
        // characters [start, start + count) of the 1-based string
        int64_t from = start, to = count == INT64_MAX ? INT64_MAX : start + count;
        if (from < 1) from = 1;
        size_t p = 0;
        int64_t ch = 1;
        while (p < s.size() && ch < from) {
          p += static_cast<size_t>(Utf8Len(static_cast<unsigned char>(s[p])));
          ++ch;
        }
        size_t q = std::min(p, s.size());
        while (q < s.size() && ch < to) {
          q += static_cast<size_t>(Utf8Len(static_cast<unsigned char>(s[q])));
          ++ch;
        }
        q = std::min(q, s.size());
        QUIVER_RETURN_NOT_OK(
            b.Append(to <= from ? std::string_view() : s.substr(std::min(p, s.size()), q - std::min(p, s.size()))));
        break;
      }
      case Fn::kUpper:
      case Fn::kLower:
        CaseMapUtf8(s, e.fn == Fn::kUpper, &scratch);  // Unicode's simple mappings (utf8_case.h)
        QUIVER_RETURN_NOT_OK(b.Append(scratch));
        break;
      case Fn::kTrim:
      case Fn::kLTrim:
      case Fn::kRTrim: {
        // The characters to remove: args[1] (btrim(s, 'xy'), TRIM(BOTH 'xy'
        // FROM s)), whole UTF-8 characters, or a space.
        const std::string_view set = args.size() > 1 ? args[1].StringAt(i) : std::string_view(" ");
        if (e.fn != Fn::kRTrim)
          while (!s.empty()) {
            const size_t len =
                std::min<size_t>(static_cast<size_t>(Utf8Len(static_cast<unsigned char>(s[0]))), s.size());
            if (!Utf8SetContains(set, s.substr(0, len))) break;
            s.remove_prefix(len);
          }
        if (e.fn != Fn::kLTrim)
          while (!s.empty()) {
            size_t start = s.size() - 1;
            while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
            if (!Utf8SetContains(set, s.substr(start))) break;
            s.remove_suffix(s.size() - start);
          }
        QUIVER_RETURN_NOT_OK(b.Append(s));
        break;
      }
      case Fn::kConcat:
        scratch.assign(s);
        for (size_t k = 1; k < args.size(); ++k) scratch.append(args[k].StringAt(i));
        QUIVER_RETURN_NOT_OK(b.Append(scratch));
        break;
      default: return Status::NotImplemented(std::string("string function ") + FnName(e.fn));
    }
  }
  Vec v;
  QUIVER_ASSIGN_OR_RETURN(v.array, b.Finish());
  v.constant = all_const;
  return v;
}

}  // namespace quiver::sql::kernels

// quiver/sql/expression/regexp.cc — regular expressions through RE2
// (Debian's libre2: linear-time matching, so no pattern can make a
// statement hang; no backreferences or lookaround in patterns):
//   s ~ p, rlike(s, p), regexp_like(s, p[, flags])  a match anywhere in s
//   regexp_replace(s, p, r[, flags])  the first match replaced (every match
//       with flag 'g'); r may name groups as \1..\9 (PostgreSQL, DuckDB) or
//       $1..$9 (Spark), \0 / $0 the whole match
//   regexp_extract(s, p[, group])  Spark's: the group (default 1) of the
//       first match; '' when nothing matches or the group took no part
// Flags: 'i' case-insensitive, 'c' case-sensitive, 'g' every match
// (regexp_replace only). A constant pattern is compiled once, when the
// statement is bound (Expr::aux); a pattern from a column is compiled per
// distinct value in a row run. Errors: 2201B invalid pattern, 22023 bad flag
// or group index.
#include <re2/re2.h>

#include <memory>
#include <string>
#include <vector>

#include "quiver/sql/expression/kernels.h"

namespace quiver::sql::kernels {
namespace {

struct Flags {
  bool case_insensitive = false;
  bool global = false;
};

Result<Flags> ParseFlags(std::string_view flags) {
  Flags f;
  for (char c : flags) {
    switch (c) {
      case 'i': f.case_insensitive = true; break;
      case 'c': f.case_insensitive = false; break;
      case 'g': f.global = true; break;
      default:
        return SqlError(StatusCode::kInvalid, "22023",
                        std::string("invalid regular expression flag '") + c + "' (expected i, c or g)");
    }
  }
  return f;
}

Result<std::shared_ptr<const RE2>> Compile(std::string_view pattern, const Flags& flags) {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_case_sensitive(!flags.case_insensitive);
  auto re = std::make_shared<const RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok())
    return SqlError(StatusCode::kInvalid, "2201B",
                    "invalid regular expression '" + std::string(pattern) + "': " + re->error());
  return re;
}

// The replacement text in RE2's form: $n (Spark / Java) becomes \n; \n and
// \\ stay; any other backslash is taken literally (doubled).
std::string RewriteReplacement(std::string_view r) {
  std::string out;
  for (size_t i = 0; i < r.size(); ++i) {
    const char c = r[i];
    if (c == '$' && i + 1 < r.size() && r[i + 1] >= '0' && r[i + 1] <= '9') {
      out.push_back('\\');
      continue;
    }
    if (c == '\\') {
      if (i + 1 < r.size() && ((r[i + 1] >= '0' && r[i + 1] <= '9') || r[i + 1] == '\\')) {
        out.push_back('\\');
        out.push_back(r[++i]);
      } else {
        out += "\\\\";
      }
      continue;
    }
    out.push_back(c);
  }
  return out;
}

// Per-row access to the compiled pattern: the binder's (constant pattern
// and flags), else compiled again only when the pattern text or flags change.
class PatternCache {
 public:
  PatternCache(const Expr& e, const std::vector<Vec>& args, size_t flags_arg)
      : e_(e), args_(args), flags_arg_(flags_arg) {}
  Result<const RE2*> At(int64_t i) {
    if (e_.aux) return static_cast<const RE2*>(e_.aux.get());
    const std::string_view pattern = args_[1].StringAt(i);
    const std::string_view flags = flags_arg_ < args_.size() ? args_[flags_arg_].StringAt(i) : std::string_view();
    if (!re_ || pattern != pattern_ || flags != flags_) {
      QUIVER_ASSIGN_OR_RETURN(Flags f, ParseFlags(flags));
      QUIVER_ASSIGN_OR_RETURN(re_, Compile(pattern, f));
      pattern_.assign(pattern);
      flags_.assign(flags);
    }
    return re_.get();
  }
  /// Whether flag 'g' was given for row i.
  Result<bool> Global(int64_t i) const {
    const std::string_view flags = flags_arg_ < args_.size() ? args_[flags_arg_].StringAt(i) : std::string_view();
    QUIVER_ASSIGN_OR_RETURN(Flags f, ParseFlags(flags));
    return f.global;
  }

 private:
  const Expr& e_;
  const std::vector<Vec>& args_;
  size_t flags_arg_;
  std::shared_ptr<const RE2> re_;
  std::string pattern_, flags_;
};

bool AllConstant(const std::vector<Vec>& args) {
  for (const auto& a : args)
    if (!a.constant) return false;
  return true;
}

}  // namespace

Result<std::shared_ptr<const void>> CompileRegex(std::string_view pattern, std::string_view flags) {
  QUIVER_ASSIGN_OR_RETURN(Flags f, ParseFlags(flags));
  QUIVER_ASSIGN_OR_RETURN(auto re, Compile(pattern, f));
  return std::shared_ptr<const void>(std::move(re));
}

Result<Vec> Regexp(const Expr& e, const std::vector<Vec>& args, int64_t n, EvalContext* ctx) {
  const bool all_const = AllConstant(args);
  const int64_t rows = all_const ? 1 : n;
  auto any_null = [&](int64_t i) {
    for (const auto& a : args)
      if (a.IsNull(i)) return true;
    return false;
  };
  Vec v;
  v.constant = all_const;
  if (e.fn == Fn::kRegexpLike) {
    PatternCache cache(e, args, 2);
    std::vector<uint8_t> truth(static_cast<size_t>(rows), 2);
    for (int64_t i = 0; i < rows; ++i) {
      if (any_null(i)) continue;
      QUIVER_ASSIGN_OR_RETURN(const RE2* re, cache.At(i));
      const std::string_view s = args[0].StringAt(i);
      const bool m = RE2::PartialMatch(re2::StringPiece(s.data(), s.size()), *re);
      truth[static_cast<size_t>(i)] = m != e.negated ? 1 : 0;
    }
    QUIVER_ASSIGN_OR_RETURN(v.array, BoolArrayFromTruth(truth.data(), rows, ctx->pool));
    return v;
  }
  int64_t hint = 0;
  if (!args[0].constant && args[0].type()->id == TypeId::kUtf8) hint = args[0].array->buffers[2]->size();
  QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(rows, hint, ctx->pool));
  PatternCache cache(e, args, e.fn == Fn::kRegexpReplace ? 3 : SIZE_MAX);
  std::string scratch, rewrite, last_replacement;
  bool have_rewrite = false;
  std::vector<re2::StringPiece> groups;
  for (int64_t i = 0; i < rows; ++i) {
    if (any_null(i)) {
      QUIVER_RETURN_NOT_OK(b.AppendNull());
      continue;
    }
    QUIVER_ASSIGN_OR_RETURN(const RE2* re, cache.At(i));
    const std::string_view s = args[0].StringAt(i);
    if (e.fn == Fn::kRegexpReplace) {
      const std::string_view r = args[2].StringAt(i);
      if (!have_rewrite || r != last_replacement) {
        rewrite = RewriteReplacement(r);
        last_replacement.assign(r);
        have_rewrite = true;
      }
      std::string why;
      if (!re->CheckRewriteString(rewrite, &why))
        return SqlError(
            StatusCode::kInvalid, "2201B",
            "invalid regexp_replace replacement '" + std::string(r) + "' for pattern '" + re->pattern() + "': " + why);
      QUIVER_ASSIGN_OR_RETURN(bool global, cache.Global(i));
      scratch.assign(s);
      if (global) {
        RE2::GlobalReplace(&scratch, *re, rewrite);
      } else {
        RE2::Replace(&scratch, *re, rewrite);
      }
      QUIVER_RETURN_NOT_OK(b.Append(scratch));
      continue;
    }
    // regexp_extract
    const i128 group = args.size() > 2 ? args[2].ExactAt(i) : 1;
    if (group < 0 || group > re->NumberOfCapturingGroups())
      return SqlError(StatusCode::kInvalid, "22023",
                      "regexp_extract group " + std::to_string(static_cast<int64_t>(group)) + " is outside 0.." +
                          std::to_string(re->NumberOfCapturingGroups()) + " for pattern '" + re->pattern() + "'");
    groups.assign(static_cast<size_t>(group) + 1, re2::StringPiece());
    const bool m = re->Match(re2::StringPiece(s.data(), s.size()), 0, s.size(), RE2::UNANCHORED, groups.data(),
                             static_cast<int>(groups.size()));
    const re2::StringPiece g = m ? groups[static_cast<size_t>(group)] : re2::StringPiece();
    QUIVER_RETURN_NOT_OK(b.Append(std::string_view(g.data() == nullptr ? "" : g.data(), g.size())));
  }
  QUIVER_ASSIGN_OR_RETURN(v.array, b.Finish());
  return v;
}

}  // namespace quiver::sql::kernels

// quiver/sql/statement_complexity.cc — see statement_complexity.h.
#include "quiver/sql/statement_complexity.h"

#include <cctype>
#include <string>
#include <vector>

#include "quiver/sql/engine.h"

namespace quiver::sql {
namespace {

bool IsIdentStart(unsigned char c) { return std::isalpha(c) || c == '_' || c >= 0x80; }
bool IsIdentChar(unsigned char c) { return std::isalnum(c) || c == '_' || c == '$' || c >= 0x80; }
// PostgreSQL's operator characters (scan.l "op_chars"), backtick excepted
// (Spark quotes identifiers with it).
bool IsOpChar(char c) {
  switch (c) {
    case '+':
    case '-':
    case '*':
    case '/':
    case '<':
    case '>':
    case '=':
    case '~':
    case '!':
    case '@':
    case '#':
    case '%':
    case '^':
    case '&':
    case '|':
    case '?': return true;
    default: return false;
  }
}

enum class Word { kOther, kReset, kOperator, kSticky, kCase, kWhen, kEnd };

Word Classify(std::string_view w) {
  if (w.size() > 9) return Word::kOther;
  char up[10];
  for (size_t i = 0; i < w.size(); ++i) up[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(w[i])));
  const std::string_view u(up, w.size());
  static constexpr std::string_view kReset[] = {"AND",    "OR",    "THEN",   "ELSE",  "SELECT", "FROM",   "WHERE",
                                                "GROUP",  "BY",    "HAVING", "ORDER", "LIMIT",  "OFFSET", "ON",
                                                "WINDOW", "USING", "VALUES", "SET",   "QUALIFY"};
  static constexpr std::string_view kOperator[] = {"NOT", "IS", "LIKE", "ILIKE", "SIMILAR", "BETWEEN", "IN"};
  static constexpr std::string_view kSticky[] = {"UNION", "INTERSECT", "EXCEPT", "JOIN"};
  if (u == "CASE") return Word::kCase;
  if (u == "WHEN") return Word::kWhen;
  if (u == "END") return Word::kEnd;
  for (auto k : kReset)
    if (u == k) return Word::kReset;
  for (auto k : kOperator)
    if (u == k) return Word::kOperator;
  for (auto k : kSticky)
    if (u == k) return Word::kSticky;
  return Word::kOther;
}

// One open parenthesis, bracket or CASE (or the statement itself).
struct Frame {
  int64_t below = 0;   // levels of the frames under it
  int64_t ops = 0;     // operators chained in its current term
  int64_t sticky = 0;  // set operations and joins so far
  int64_t whens = 0;   // WHEN branches (CASE frames)
  bool is_case = false;
  int64_t Depth() const { return below + 1 + ops + sticky; }
};

Status TooComplex(std::string_view sql, size_t at, const std::string& what, int64_t count, const char* limit_name,
                  int limit) {
  return Status::Invalid("statement too complex: " + what + " " + std::to_string(count) + " (" +
                         DescribePosition(sql, static_cast<int>(at)) + "), past the limit of " + std::to_string(limit) +
                         " (" + limit_name + "); simplify or split the statement")
      .WithSqlState("54001");
}

// The end of a dollar-quoted string starting at sql[i] == '$' (the offset
// after its closing tag), or npos where sql[i] opens none ($1 parameters).
size_t DollarQuoteEnd(std::string_view s, size_t i) {
  size_t j = i + 1;
  while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
  if (j >= s.size() || s[j] != '$') return std::string_view::npos;
  if (j > i + 1 && std::isdigit(static_cast<unsigned char>(s[i + 1]))) return std::string_view::npos;
  const std::string_view tag = s.substr(i, j - i + 1);
  const size_t end = s.find(tag, j + 1);
  return end == std::string_view::npos ? s.size() : end + tag.size();
}

// The offset after a quoted run opened by s[i] == quote; `quote` doubled
// stands for itself, a backslash escapes the next byte when `backslash`.
size_t QuotedEnd(std::string_view s, size_t i, char quote, bool backslash) {
  size_t j = i + 1;
  while (j < s.size()) {
    if (backslash && s[j] == '\\') {
      j += 2;
      continue;
    }
    if (s[j] == quote) {
      if (j + 1 < s.size() && s[j + 1] == quote) {
        j += 2;
        continue;
      }
      return j + 1;
    }
    ++j;
  }
  return s.size();
}

}  // namespace

Status CheckStatementComplexity(std::string_view sql, const ComplexityLimits& limits) {
  std::vector<Frame> frames(1);
  const auto check_depth = [&](size_t at) -> Status {
    const Frame& f = frames.back();
    if (limits.max_expression_depth > 0 && f.Depth() > limits.max_expression_depth) {
      const std::string what = f.ops >= f.sticky && f.ops > 0 ? "an expression nests (operators chained) to depth"
                                                              : "an expression nests to depth";
      return TooComplex(sql, at, what, f.Depth(), "max_expression_depth", limits.max_expression_depth);
    }
    return Status::OK();
  };
  const auto open = [&](size_t at, bool is_case) -> Status {
    Frame f;
    f.below = frames.back().Depth();
    f.is_case = is_case;
    frames.push_back(f);
    const int64_t nesting = static_cast<int64_t>(frames.size()) - 1;
    if (limits.max_nesting_depth > 0 && nesting > limits.max_nesting_depth)
      return TooComplex(sql, at, "parentheses, brackets and CASE nest", nesting, "max_nesting_depth",
                        limits.max_nesting_depth);
    return check_depth(at);
  };
  // ')' also closes the CASEs left open inside its parenthesis (text the
  // parser refuses); END closes a CASE only.
  const auto close = [&](bool is_case) {
    if (!is_case)
      while (frames.size() > 1 && frames.back().is_case) frames.pop_back();
    if (frames.size() > 1 && frames.back().is_case == is_case) frames.pop_back();
  };
  const auto add_op = [&](size_t at) -> Status {
    ++frames.back().ops;
    return check_depth(at);
  };
  size_t i = 0;
  const size_t n = sql.size();
  while (i < n) {
    const char c = sql[i];
    const auto uc = static_cast<unsigned char>(c);
    if (std::isspace(uc)) {
      ++i;
    } else if (c == '-' && i + 1 < n && sql[i + 1] == '-') {
      const size_t nl = sql.find('\n', i);
      i = nl == std::string_view::npos ? n : nl + 1;
    } else if (c == '/' && i + 1 < n && sql[i + 1] == '*') {
      int nest = 0;
      for (; i + 1 < n; ++i) {
        if (sql[i] == '/' && sql[i + 1] == '*') {
          ++nest;
          ++i;
        } else if (sql[i] == '*' && sql[i + 1] == '/') {
          ++i;
          if (--nest == 0) break;
        }
      }
      i += 1;
    } else if (c == '\'') {
      i = QuotedEnd(sql, i, '\'', false);
    } else if (c == '"' || c == '`') {
      i = QuotedEnd(sql, i, c, false);
    } else if (c == '$') {
      const size_t end = DollarQuoteEnd(sql, i);
      if (end == std::string_view::npos) {
        ++i;
        while (i < n && std::isdigit(static_cast<unsigned char>(sql[i]))) ++i;
      } else {
        i = end;
      }
    } else if (c == '(' || c == '[') {
      QUIVER_RETURN_NOT_OK(open(i, false));
      ++i;
    } else if (c == ')' || c == ']') {
      close(false);
      ++i;
    } else if (c == ',' || c == ';') {
      frames.back().ops = 0;
      ++i;
    } else if (c == ':' && i + 1 < n && sql[i + 1] == ':') {
      QUIVER_RETURN_NOT_OK(add_op(i));
      i += 2;
    } else if (IsOpChar(c)) {
      const size_t at = i;
      while (i < n && IsOpChar(sql[i]) &&
             !(i + 1 < n && ((sql[i] == '-' && sql[i + 1] == '-') || (sql[i] == '/' && sql[i + 1] == '*'))))
        ++i;
      if (i == at) {  // a comment follows at once: the loop above consumes it next
        ++i;
        continue;
      }
      QUIVER_RETURN_NOT_OK(add_op(at));
    } else if (std::isdigit(uc) || (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(sql[i + 1])))) {
      while (i < n && (std::isdigit(static_cast<unsigned char>(sql[i])) || sql[i] == '.' || sql[i] == '_')) ++i;
      if (i < n && (sql[i] == 'e' || sql[i] == 'E')) {
        size_t j = i + 1;
        if (j < n && (sql[j] == '+' || sql[j] == '-')) ++j;
        if (j < n && std::isdigit(static_cast<unsigned char>(sql[j]))) {
          i = j;
          while (i < n && std::isdigit(static_cast<unsigned char>(sql[i]))) ++i;
        }
      }
      while (i < n && IsIdentChar(static_cast<unsigned char>(sql[i]))) ++i;  // 0x1F, 10L, 1.5BD
    } else if (IsIdentStart(uc)) {
      const size_t at = i;
      while (i < n && IsIdentChar(static_cast<unsigned char>(sql[i]))) ++i;
      const std::string_view word = sql.substr(at, i - at);
      if (i < n && sql[i] == '\'') {  // E'..', X'..', B'..', N'..', U&'..' prefixes
        i = QuotedEnd(sql, i, '\'', word == "e" || word == "E");
        continue;
      }
      switch (Classify(word)) {
        case Word::kOther: break;
        case Word::kReset: frames.back().ops = 0; break;
        case Word::kOperator: QUIVER_RETURN_NOT_OK(add_op(at)); break;
        case Word::kSticky:
          ++frames.back().sticky;
          frames.back().ops = 0;
          QUIVER_RETURN_NOT_OK(check_depth(at));
          break;
        case Word::kCase: QUIVER_RETURN_NOT_OK(open(at, true)); break;
        case Word::kWhen:
          frames.back().ops = 0;
          if (frames.back().is_case) {
            const int64_t whens = ++frames.back().whens;
            if (limits.max_case_branches > 0 && whens > limits.max_case_branches)
              return TooComplex(sql, at, "a CASE has WHEN branches", whens, "max_case_branches",
                                limits.max_case_branches);
          }
          break;
        case Word::kEnd: close(true); break;
      }
    } else {
      ++i;
    }
  }
  return Status::OK();
}

}  // namespace quiver::sql

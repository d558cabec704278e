// quiver/sql/spark_dialect.cc — see spark_dialect.h.
#include "quiver/sql/spark_dialect.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <vector>

#include "quiver/columnar/spark_type.h"
#include "quiver/sql/spark_literal.h"
#include "quiver/sql/text_position.h"

namespace quiver::sql {
namespace {

char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (Lower(a[i]) != Lower(b[i])) return false;
  return true;
}

// PostgreSQL's identifier characters (bytes >= 0x80 included, as its lexer does).
bool IdentStart(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalpha(u) || c == '_' || u >= 0x80;
}
bool IdentChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '_' || c == '$' || u >= 0x80;
}
bool Space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

size_t SkipSpace(std::string_view s, size_t p) {
  while (p < s.size() && Space(s[p])) ++p;
  return p;
}

// End (one past) of the quoted run opening at `p` with `quote`, a doubled
// quote standing for one; `backslash` also lets a backslash escape the next
// byte (E'...'). npos when unterminated.
size_t QuotedEnd(std::string_view s, size_t p, char quote, bool backslash) {
  for (size_t i = p + 1; i < s.size(); ++i) {
    if (backslash && s[i] == '\\') {
      ++i;
      continue;
    }
    if (s[i] != quote) continue;
    if (i + 1 < s.size() && s[i + 1] == quote) {
      ++i;
      continue;
    }
    return i + 1;
  }
  return std::string_view::npos;
}

// End of a comment or literal opening at `p` that the rewrite copies as is,
// or 0 when none opens there. Unterminated ones run to the end of the text
// (the parser reports them).
size_t OpaqueEnd(std::string_view s, size_t p) {
  const char c = s[p];
  const char next = p + 1 < s.size() ? s[p + 1] : '\0';
  if (c == '-' && next == '-') {
    const size_t e = s.find('\n', p);
    return e == std::string_view::npos ? s.size() : e;
  }
  if (c == '/' && next == '*') {  // nested, as PostgreSQL's
    int depth = 0;
    for (size_t i = p; i + 1 < s.size(); ++i) {
      if (s[i] == '/' && s[i + 1] == '*') {
        ++depth;
        ++i;
      } else if (s[i] == '*' && s[i + 1] == '/') {
        ++i;
        if (--depth == 0) return i + 1;
      }
    }
    return s.size();
  }
  if (c == '\'') {
    const bool e_string = p > 0 && (s[p - 1] == 'e' || s[p - 1] == 'E') && (p < 2 || !IdentChar(s[p - 2]));
    const size_t e = QuotedEnd(s, p, '\'', e_string);
    return e == std::string_view::npos ? s.size() : e;
  }
  if (c == '"') {
    const size_t e = QuotedEnd(s, p, '"', false);
    return e == std::string_view::npos ? s.size() : e;
  }
  if (c == '$' && (p == 0 || !IdentChar(s[p - 1]))) {  // $tag$ ... $tag$ ($1 is a parameter)
    size_t t = p + 1;
    if (t < s.size() && IdentStart(s[t]) && s[t] != '$') {
      while (t < s.size() && IdentChar(s[t]) && s[t] != '$') ++t;
    }
    if (t < s.size() && s[t] == '$') {
      const std::string_view tag = s.substr(p, t - p + 1);
      const size_t close = s.find(tag, t + 1);
      return close == std::string_view::npos ? s.size() : close + tag.size();
    }
  }
  return 0;
}

// One part of a dotted name: a bare word, a "quoted" or a `quoted` identifier.
struct NamePart {
  size_t begin = 0, end = 0;  // bytes of the part in the text
  char quote = 0;             // 0, '"' or '`'
  std::string value;          // unquoted (doubled quotes made single); bare: as written
};

// The part starting at `p`, or false.
Result<bool> ReadPart(std::string_view s, size_t p, NamePart* out) {
  if (p >= s.size()) return false;
  out->begin = p;
  out->value.clear();
  const char c = s[p];
  if (c == '"' || c == '`') {
    const size_t e = QuotedEnd(s, p, c, false);
    if (e == std::string_view::npos) {
      if (c == '"') return false;  // the parser reports it
      return Status::Invalid("unterminated backtick-quoted identifier (" + DescribePosition(s, static_cast<int>(p)) +
                             ")")
          .WithSqlState("42601");
    }
    for (size_t i = p + 1; i + 1 < e; ++i) {
      out->value += s[i];
      if (s[i] == c) ++i;
    }
    out->quote = c;
    out->end = e;
    return true;
  }
  if (!IdentStart(c)) return false;
  size_t e = p;
  while (e < s.size() && IdentChar(s[e])) ++e;
  out->quote = 0;
  out->value.assign(s.substr(p, e - p));
  out->end = e;
  return true;
}

// A part written for the PostgreSQL grammar: backticks become double quotes.
void AppendPart(std::string_view s, const NamePart& part, std::string* out) {
  if (part.quote != '`') {
    out->append(s.substr(part.begin, part.end - part.begin));
    return;
  }
  out->push_back('"');
  for (char c : part.value) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

void AppendBlank(std::string_view s, size_t begin, size_t end, std::string* out) {
  for (size_t i = begin; i < end; ++i) out->push_back(s[i] == '\n' ? '\n' : ' ');
}

bool IsSchemaName(std::string_view name) { return EqualsIgnoreCase(name, kSchemaName); }

// ---- tokens of the commands ------------------------------------------------------

struct Token {
  enum class Kind { kWord, kQuoted, kString, kDot, kSemicolon, kOther } kind = Kind::kOther;
  std::string text;  // kWord: lower-cased; kQuoted / kString: the value
  size_t offset = 0;
};

// The tokens of `s`, or false when a quote is unterminated.
bool Tokenize(std::string_view s, std::vector<Token>* out) {
  size_t p = 0;
  while (true) {
    p = SkipSpace(s, p);
    if (p >= s.size()) return true;
    const char c = s[p];
    const char next = p + 1 < s.size() ? s[p + 1] : '\0';
    if ((c == '-' && next == '-') || (c == '/' && next == '*')) {
      p = OpaqueEnd(s, p);
      continue;
    }
    Token t;
    t.offset = p;
    if (c == '"' || c == '`' || c == '\'') {
      const size_t e = QuotedEnd(s, p, c, false);
      if (e == std::string_view::npos) return false;
      for (size_t i = p + 1; i + 1 < e; ++i) {
        t.text += s[i];
        if (s[i] == c) ++i;
      }
      t.kind = c == '\'' ? Token::Kind::kString : Token::Kind::kQuoted;
      p = e;
    } else if (IdentStart(c)) {
      size_t e = p;
      while (e < s.size() && IdentChar(s[e])) t.text += Lower(s[e++]);
      t.kind = Token::Kind::kWord;
      p = e;
    } else {
      t.kind = c == '.' ? Token::Kind::kDot : c == ';' ? Token::Kind::kSemicolon : Token::Kind::kOther;
      t.text = std::string(1, c);
      ++p;
    }
    out->push_back(std::move(t));
  }
}

class CommandParser {
 public:
  explicit CommandParser(std::vector<Token> tokens) : t_(std::move(tokens)) {
    // A trailing ';' is part of no command.
    if (!t_.empty() && t_.back().kind == Token::Kind::kSemicolon) t_.pop_back();
  }
  bool AtEnd() const { return i_ >= t_.size(); }
  bool Word(const char* w) {
    if (AtEnd() || t_[i_].kind != Token::Kind::kWord || t_[i_].text != w) return false;
    ++i_;
    return true;
  }
  bool PeekName() const {
    return !AtEnd() && (t_[i_].kind == Token::Kind::kWord || t_[i_].kind == Token::Kind::kQuoted);
  }
  // A dotted name of 1..max_parts parts.
  bool Name(size_t max_parts, std::vector<std::string>* parts, int* offset) {
    if (!PeekName()) return false;
    *offset = static_cast<int>(t_[i_].offset);
    parts->clear();
    while (true) {
      if (!PeekName()) return false;
      parts->push_back(t_[i_++].text);
      if (AtEnd() || t_[i_].kind != Token::Kind::kDot) break;
      ++i_;
    }
    return parts->size() <= max_parts;
  }
  // [LIKE] 'pattern'
  bool Pattern(std::string* pattern) {
    const size_t save = i_;
    const bool like = Word("like");
    // Spark reads "..." as a string too; after LIKE it can be nothing else.
    if (!AtEnd() && (t_[i_].kind == Token::Kind::kString || (like && t_[i_].kind == Token::Kind::kQuoted))) {
      *pattern = t_[i_++].text;
      return true;
    }
    i_ = save;
    return !like;
  }
  size_t pos() const { return i_; }
  void set_pos(size_t p) { i_ = p; }

 private:
  std::vector<Token> t_;
  size_t i_ = 0;
};

}  // namespace

bool IsCatalogName(std::string_view name) {
  return EqualsIgnoreCase(name, kCatalogName) || EqualsIgnoreCase(name, "hive_metastore");
}

Status CheckQualifier(std::string_view catalog, std::string_view schema, std::string_view where) {
  const std::string at = where.empty() ? std::string() : " (" + std::string(where) + ")";
  if (!catalog.empty() && !IsCatalogName(catalog)) {
    return Status::KeyError("catalog '" + std::string(catalog) + "' does not exist: quiver serves one catalog, " +
                            kCatalogName + at)
        .WithSqlState("42704");
  }
  if (!schema.empty() && !IsSchemaName(schema)) {
    return Status::KeyError("schema '" + std::string(schema) + "' does not exist: quiver serves one schema, " +
                            kSchemaName + at)
        .WithSqlState("3F000");
  }
  return Status::OK();
}

namespace {

// Whether the bare word at [begin, end) of `s` stands between two operands
// (Spark's `a div b`): after an identifier, number, literal or ')' that is
// not a keyword introducing an operand, and before an operand.
// The word ending just before `begin` (spaces skipped), lower-cased; empty
// when something else precedes.
std::string WordBefore(std::string_view s, size_t begin) {
  size_t b = begin;
  while (b > 0 && Space(s[b - 1])) --b;
  size_t w = b;
  while (w > 0 && IdentChar(s[w - 1])) --w;
  std::string word;
  for (size_t i = w; i < b; ++i) word += Lower(s[i]);
  return word;
}

// Whether an operand ends just before `begin`: an identifier, number,
// literal or ')' that is not a keyword introducing an operand.
bool AfterOperand(std::string_view s, size_t begin) {
  size_t b = begin;
  while (b > 0 && Space(s[b - 1])) --b;
  if (b == 0) return false;
  const char before = s[b - 1];
  if (IdentChar(before)) {
    const std::string word = WordBefore(s, begin);
    static const char* const kKeywords[] = {
        "select", "where", "and",      "or", "not", "on",   "by",      "when",   "then", "else", "case", "from",
        "having", "as",    "distinct", "in", "is",  "like", "between", "return", "all",  "any",  "some", "with"};
    for (const char* k : kKeywords)
      if (word == k) return false;
    return true;
  }
  return before == ')' || before == '\'' || before == '"' || before == '`';
}

bool InfixPosition(std::string_view s, size_t begin, size_t end) {
  if (begin == 0 || !Space(s[begin - 1]) || !AfterOperand(s, begin)) return false;
  size_t a = end;
  if (a >= s.size() || (s[a] != ' ' && s[a] != '\t' && s[a] != '\n' && s[a] != '\r' && s[a] != '(')) return false;
  while (a < s.size() && (s[a] == ' ' || s[a] == '\t' || s[a] == '\n' || s[a] == '\r')) ++a;
  if (a >= s.size()) return false;
  const char next = s[a];
  return IdentStart(next) || (next >= '0' && next <= '9') || next == '(' || next == '\'' || next == '"' ||
         next == '`' || next == '-' || next == '+';
}

// Whether the bare word `all` at [begin, end) of `s` is Spark's / DuckDB's
// `GROUP BY ALL`: after the words GROUP BY, and followed by the end of the
// text, `)`, `;` or a clause keyword (not an expression: `GROUP BY ALL a`
// is PostgreSQL's set quantifier).
bool GroupByAllAt(std::string_view s, size_t begin, size_t end) {
  auto word_before = [&](size_t at, size_t* word_begin) {
    size_t b = at;
    while (b > 0 && Space(s[b - 1])) --b;
    size_t w = b;
    while (w > 0 && IdentChar(s[w - 1])) --w;
    *word_begin = w;
    std::string word;
    for (size_t i = w; i < b; ++i) word += Lower(s[i]);
    return word;
  };
  size_t by_begin = 0, group_begin = 0;
  if (word_before(begin, &by_begin) != "by" || by_begin == begin) return false;
  if (word_before(by_begin, &group_begin) != "group") return false;
  const size_t a = SkipSpace(s, end);
  if (a >= s.size() || s[a] == ')' || s[a] == ';') return true;
  if (!IdentStart(s[a])) return false;
  size_t e = a;
  std::string next;
  while (e < s.size() && IdentChar(s[e])) next += Lower(s[e++]);
  static const char* const kClauses[] = {"having",    "order",  "limit",  "window",  "union",
                                         "intersect", "except", "offset", "qualify", "fetch"};
  for (const char* k : kClauses)
    if (next == k) return true;
  return false;
}

// Whether the parenthesis at `open` holds a comma outside nested
// parentheses, strings and comments before it closes (Spark's position(sub,
// s[, start]) rather than the grammar's position(sub IN s)).
bool TopLevelComma(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t p = open; p < s.size();) {
    if (const size_t e = OpaqueEnd(s, p); e > 0) {
      p = e;
      continue;
    }
    const char c = s[p++];
    if (c == '(') ++depth;
    if (c == ')' && --depth == 0) return false;
    if (c == ',' && depth == 1) return true;
  }
  return false;
}

}  // namespace

namespace {

// Whether the word at `p` follows a comparison operator or LIKE / ILIKE
// (`x = ANY (...)`, `s LIKE ANY (...)`).
bool AfterComparison(std::string_view s, size_t p) {
  size_t q = p;
  while (q > 0 && Space(s[q - 1])) --q;
  if (q == 0) return false;
  if (std::strchr("=<>", s[q - 1]) != nullptr) return true;
  size_t w = q;
  while (w > 0 && IdentChar(s[w - 1])) --w;
  const std::string_view word = s.substr(w, q - w);
  return EqualsIgnoreCase(word, "like") || EqualsIgnoreCase(word, "ilike");
}

}  // namespace

Result<std::string> RewriteSparkSql(std::string_view s, bool spark) {
  const bool div_operator = spark;
  bool maybe_div = false;
  if (div_operator)
    for (size_t p = s.find_first_of("dD"); p != std::string_view::npos && !maybe_div; p = s.find_first_of("dD", p + 1))
      maybe_div = EqualsIgnoreCase(s.substr(p, 3), "div");
  bool maybe_all = false;
  for (size_t p = s.find_first_of("aA"); p != std::string_view::npos && !maybe_all; p = s.find_first_of("aA", p + 1))
    maybe_all = EqualsIgnoreCase(s.substr(p, 3), "all");
  // The spark dialect's literal and operator forms: backslash escapes,
  // "strings", r'raw' strings, <=> and ==.
  bool spark_forms = false;
  if (spark) {
    spark_forms = s.find_first_of("\\\"") != std::string_view::npos || s.find("<=>") != std::string_view::npos ||
                  s.find("==") != std::string_view::npos;
    for (size_t p = s.find_first_of("rR"); p != std::string_view::npos && !spark_forms;
         p = s.find_first_of("rR", p + 1))
      spark_forms = p + 1 < s.size() && (s[p + 1] == '\'' || s[p + 1] == '"');
    for (size_t p = s.find_first_of("aAsS"); p != std::string_view::npos && !spark_forms;
         p = s.find_first_of("aAsS", p + 1))
      spark_forms = EqualsIgnoreCase(s.substr(p, 3), "any") || EqualsIgnoreCase(s.substr(p, 4), "some");
  }
  if (s.find('`') == std::string_view::npos && !maybe_div && !maybe_all && !spark_forms) {
    // Fast path: nothing to do unless a word `default` is followed by a dot.
    bool maybe = false;
    for (size_t p = s.find_first_of("dD"); p != std::string_view::npos && !maybe; p = s.find_first_of("dD", p + 1))
      maybe = EqualsIgnoreCase(s.substr(p, 7), kSchemaName);
    // ... or a word RLIKE / REGEXP (Spark's infix regular expression match),
    // TRY_CAST, or CURRENT_DATE / CURRENT_TIMESTAMP (Spark's calls with
    // parentheses).
    for (const char* w : {"rlike", "regexp", "try_cast", "current_", "position", "char"})
      for (size_t p = 0; p < s.size() && !maybe; ++p) maybe = EqualsIgnoreCase(s.substr(p, std::strlen(w)), w);
    if (!maybe) return std::string(s);
  }
  size_t last_not = std::string::npos;  // where in `out` a bare NOT word was just copied
  std::string out;
  out.reserve(s.size() + 16);
  size_t p = 0;
  while (p < s.size()) {
    // The spark dialect's string literals: '...' and "..." with Spark's
    // backslash escapes (an E'...' string is PostgreSQL's own).
    const bool e_prefix = p > 0 && (s[p - 1] == 'e' || s[p - 1] == 'E') && (p < 2 || !IdentChar(s[p - 2]));
    if (spark && (s[p] == '\'' || s[p] == '"') && !e_prefix) {
      const size_t e = QuotedEnd(s, p, s[p], true);
      if (e == std::string_view::npos) {  // unterminated: the parser reports it
        out.append(s.substr(p));
        break;
      }
      QUIVER_RETURN_NOT_OK(AppendSparkString(s, p, e, false, &out));
      p = e;
      continue;
    }
    if (const size_t e = OpaqueEnd(s, p); e > 0 && s[p] != '"') {
      out.append(s.substr(p, e - p));
      p = e;
      continue;
    }
    const char c = s[p];
    // Spark's r'...' / R"..." raw strings: no escapes; the r is blanked.
    if (spark && (c == 'r' || c == 'R') && p + 1 < s.size() && (s[p + 1] == '\'' || s[p + 1] == '"') &&
        (p == 0 || !IdentChar(s[p - 1]))) {
      const size_t e = QuotedEnd(s, p + 1, s[p + 1], false);
      if (e != std::string_view::npos) {
        out.push_back(' ');
        QUIVER_RETURN_NOT_OK(AppendSparkString(s, p + 1, e, true, &out));
        p = e;
        continue;
      }
    }
    // Spark's null-safe equality a <=> b, and a == b.
    if (spark && s.compare(p, 3, "<=>") == 0) {
      out += " IS NOT DISTINCT FROM ";
      p += 3;
      continue;
    }
    if (spark && s.compare(p, 2, "==") == 0 && (p == 0 || std::strchr("<>!=", s[p - 1]) == nullptr) &&
        (p + 2 >= s.size() || s[p + 2] != '=')) {
      out += " =";
      p += 2;
      continue;
    }
    const bool part_start = c == '"' || c == '`' || (IdentStart(c) && (p == 0 || !IdentChar(s[p - 1])));
    if (!part_start) {
      // Numbers and the rest of a word are copied a byte at a time.
      out.push_back(c);
      ++p;
      continue;
    }
    // A dotted chain of parts: a.b.c; `dots[k]` ends the k-th dot (with the
    // spaces around it).
    std::vector<NamePart> parts;
    std::vector<size_t> dot_ends;
    NamePart part;
    QUIVER_ASSIGN_OR_RETURN(bool ok, ReadPart(s, p, &part));
    if (!ok) {  // an unterminated "...": the parser reports it
      out.append(s.substr(p));
      break;
    }
    if (div_operator && part.quote == 0 && EqualsIgnoreCase(part.value, "div") && InfixPosition(s, p, part.end)) {
      out += "/ @";  // the binder reads `/ @ b` back as div (dialect.h)
      p = part.end;
      continue;
    }
    if (part.quote == 0 && EqualsIgnoreCase(part.value, "try_cast") && SkipSpace(s, part.end) < s.size() &&
        s[SkipSpace(s, part.end)] == '(') {
      out += "/**/cast";  // the binder reads a CAST right after /**/ as try_cast
      p = part.end;
      continue;
    }
    // Spark's aggregates some(b) / any(b): reserved words of the grammar,
    // quoted where they are called (not `x = ANY (...)`, `LIKE ANY (...)`).
    if (spark && part.quote == 0 && (EqualsIgnoreCase(part.value, "some") || EqualsIgnoreCase(part.value, "any")) &&
        SkipSpace(s, part.end) < s.size() && s[SkipSpace(s, part.end)] == '(' && !AfterComparison(s, p)) {
      out += EqualsIgnoreCase(part.value, "some") ? "\"some\"" : "\"any\"";
      p = part.end;
      continue;
    }
    if (part.quote == 0 && EqualsIgnoreCase(part.value, "all") && GroupByAllAt(s, p, part.end)) {
      out += "@#1";  // the binder reads GROUP BY @#1 back as GROUP BY ALL
      p = part.end;
      continue;
    }
    // Spark's current_date() / current_timestamp(): the grammar takes the
    // bare words only (current_timestamp(p) is a precision), so the empty
    // parentheses are blanked (offsets unchanged).
    if (part.quote == 0 &&
        (EqualsIgnoreCase(part.value, "current_date") || EqualsIgnoreCase(part.value, "current_timestamp"))) {
      const size_t open = SkipSpace(s, part.end);
      const size_t close = open < s.size() && s[open] == '(' ? SkipSpace(s, open + 1) : s.size();
      if (close < s.size() && s[close] == ')' && (p == 0 || s[p - 1] != '.')) {
        out.append(s.substr(p, part.end - p));
        AppendBlank(s, part.end, close + 1, &out);
        p = close + 1;
        last_not = std::string::npos;
        continue;
      }
    }
    // Spark's position(sub, s[, start]) is locate (the grammar takes only
    // position(sub IN s)); char(n) in an expression is chr(n) (the grammar
    // reads char(n) as a type, which it stays after AS or a column name).
    // Offsets unchanged.
    if (part.quote == 0 && (p == 0 || s[p - 1] != '.')) {
      const size_t open = SkipSpace(s, part.end);
      const bool call = open < s.size() && s[open] == '(';
      if (call && EqualsIgnoreCase(part.value, "position") && TopLevelComma(s, open)) {
        out += "locate  ";
        p = part.end;
        last_not = std::string::npos;
        continue;
      }
      size_t before = p;
      while (before > 0 && Space(s[before - 1])) --before;
      const bool cast_type = (before > 0 && s[before - 1] == ':') || WordBefore(s, p) == "as";  // x::char(3)
      if (call && EqualsIgnoreCase(part.value, "char") && !AfterOperand(s, p) && !cast_type) {
        out += "chr ";
        p = part.end;
        last_not = std::string::npos;
        continue;
      }
    }
    parts.push_back(part);
    // `a [NOT] RLIKE b` / `a [NOT] REGEXP b` become `a ~ b` / `a !~ b` (the
    // words' bytes blanked, offsets unchanged); rlike(...) stays a call.
    const size_t next = SkipSpace(s, part.end);
    if (part.quote == 0 && (next >= s.size() || s[next] != '(') &&
        (EqualsIgnoreCase(part.value, "rlike") || EqualsIgnoreCase(part.value, "regexp"))) {
      const bool negated =
          last_not != std::string::npos && out.find_first_not_of(" \t\r\n", last_not + 3) == std::string::npos;
      if (negated) out.replace(last_not, 3, "   ");
      out.append(part.value.size() - (negated ? 2 : 1), ' ');
      out += negated ? "!~" : "~";
      p = part.end;
      last_not = std::string::npos;
      continue;
    }
    last_not = part.quote == 0 && EqualsIgnoreCase(part.value, "not") ? out.size() : std::string::npos;
    while (true) {
      const size_t dot = SkipSpace(s, parts.back().end);
      if (dot >= s.size() || s[dot] != '.') break;
      const size_t after = SkipSpace(s, dot + 1);
      NamePart more;
      QUIVER_ASSIGN_OR_RETURN(bool more_ok, ReadPart(s, after, &more));
      if (!more_ok) break;
      dot_ends.push_back(after);
      parts.push_back(std::move(more));
    }
    auto is_default = [&](size_t k) { return IsSchemaName(parts[k].value); };
    size_t first = 0;  // parts before it are blanked
    if (parts.size() >= 3 && IsCatalogName(parts[0].value) && is_default(1)) {
      first = 2;
    } else if (parts.size() >= 2 && is_default(0)) {
      first = 1;
    }
    if (first > 0) AppendBlank(s, p, dot_ends[first - 1], &out);
    for (size_t k = first; k < parts.size(); ++k) {
      if (k > first) out.append(s.substr(parts[k - 1].end, parts[k].begin - parts[k - 1].end));
      if (k + 1 < parts.size() && parts[k].quote == 0 && is_default(k)) {
        out += "\"default\"";  // x.default.t: the binder names catalog x
      } else {
        AppendPart(s, parts[k], &out);
      }
    }
    p = parts.back().end;
  }
  return out;
}

std::string RewriteFromStrings(std::string_view s) {
  std::vector<Token> tokens;
  if (s.find('\'') == std::string_view::npos || !Tokenize(s, &tokens)) return std::string(s);
  // Per parenthesis depth: a SELECT seen, inside its FROM list.
  struct Level {
    bool select = false;
    bool from = false;
  };
  std::vector<Level> levels(1);
  std::vector<size_t> rewrite;  // indices of string tokens that are FROM items, and of `[`s to make ARRAY[
  static const char* const kEnds[] = {"where",  "group",     "having", "order",   "limit", "offset",
                                      "window", "union",     "except", "qualify", "fetch", "intersect",
                                      "select", "returning", "values", "into",    "set"};
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    Level& level = levels.back();
    if (t.kind == Token::Kind::kOther && t.text == "[" && i >= 2 && tokens[i - 1].text == "(" &&
        tokens[i - 2].kind == Token::Kind::kWord &&
        (tokens[i - 2].text == "read_parquet" || tokens[i - 2].text == "parquet_scan" ||
         tokens[i - 2].text == "read_csv" || tokens[i - 2].text == "read_csv_auto")) {
      rewrite.push_back(i);  // DuckDB's list of paths: read_parquet(['a', 'b'])
    } else if (t.kind == Token::Kind::kOther && t.text == "(") {
      levels.emplace_back();
    } else if (t.kind == Token::Kind::kOther && t.text == ")") {
      if (levels.size() > 1) levels.pop_back();
    } else if (t.kind == Token::Kind::kWord) {
      const bool after_distinct = i > 0 && tokens[i - 1].kind == Token::Kind::kWord && tokens[i - 1].text == "distinct";
      if (t.text == "from" && level.select && !after_distinct) level.from = true;
      for (const char* e : kEnds)
        if (t.text == e) level.from = false;
      if (t.text == "select") level.select = true;
    } else if (t.kind == Token::Kind::kString && i > 0 && level.from) {
      const Token& prev = tokens[i - 1];
      const bool item = (prev.kind == Token::Kind::kWord && (prev.text == "from" || prev.text == "join")) ||
                        (prev.kind == Token::Kind::kOther && prev.text == ",");
      if (item) rewrite.push_back(i);
    }
  }
  if (rewrite.empty()) return std::string(s);
  std::string out;
  size_t p = 0;
  for (size_t i : rewrite) {
    const Token& t = tokens[i];
    out.append(s.substr(p, t.offset - p));
    if (t.kind == Token::Kind::kOther) {
      out += "ARRAY";
      p = t.offset;
      continue;
    }
    const size_t end = QuotedEnd(s, t.offset, '\'', false);
    out += '"';
    for (char c : t.text) {
      if (c == '"') out += '"';
      out += c;
    }
    out += '"';
    p = end;
  }
  out.append(s.substr(p));
  return out;
}

namespace {

// Words that end an inline table's row list where they stand at its depth
// (a clause, a join, a set operation or an alias's AS).
bool EndsInlineTable(const std::string& w) {
  static const char* const kEnds[] = {"as",     "where",   "group",   "having",     "order", "limit",     "offset",
                                      "window", "union",   "except",  "qualify",    "fetch", "intersect", "join",
                                      "inner",  "left",    "right",   "full",       "cross", "natural",   "on",
                                      "using",  "lateral", "cluster", "distribute", "sort",  "returning"};
  for (const char* e : kEnds)
    if (w == e) return true;
  return false;
}

// Words that continue an expression after an operand (so are no alias).
bool ContinuesExpression(const std::string& w) {
  static const char* const kWords[] = {"and",     "or",     "is",     "not",     "in",     "like",    "ilike",
                                       "between", "escape", "div",    "then",    "else",   "end",     "when",
                                       "collate", "rlike",  "regexp", "similar", "isnull", "notnull", "overlaps",
                                       "at",      "year",   "month",  "day",     "hour",   "minute",  "second",
                                       "week",    "years",  "months", "days",    "hours",  "minutes", "seconds"};
  for (const char* e : kWords)
    if (w == e) return true;
  return false;
}

bool IsOther(const Token& t, char c) { return t.kind == Token::Kind::kOther && t.text.size() == 1 && t.text[0] == c; }

// A token after which a word is an alias, not part of the expression.
bool EndsOperand(const Token& t) {
  if (t.kind == Token::Kind::kString || t.kind == Token::Kind::kQuoted) return true;
  if (t.kind == Token::Kind::kOther) return IsOther(t, ')') || std::isdigit(static_cast<unsigned char>(t.text[0]));
  if (t.kind != Token::Kind::kWord) return false;
  if (t.text == "end") return true;  // CASE ... END
  return !ContinuesExpression(t.text) && t.text != "case" && t.text != "interval";
}

// One past the last byte of token `t` of `s`.
size_t TokenEnd(std::string_view s, const Token& t) {
  if (t.kind == Token::Kind::kString || t.kind == Token::Kind::kQuoted)
    return QuotedEnd(s, t.offset, s[t.offset], false);
  return t.offset + t.text.size();
}

}  // namespace

std::string RewriteInlineTables(std::string_view s) {
  std::vector<Token> tokens;
  bool maybe = false;
  for (size_t p = s.find_first_of("vV"); p != std::string_view::npos && !maybe; p = s.find_first_of("vV", p + 1))
    maybe = EqualsIgnoreCase(s.substr(p, 6), "values");
  if (!maybe || !Tokenize(s, &tokens)) return std::string(s);
  // Edits: (offset, text to insert there); a ' ' before VALUES or before
  // the alias is replaced instead, keeping offsets.
  struct Edit {
    size_t offset;
    std::string text;
    bool replaces_space;
  };
  std::vector<Edit> edits;
  auto insert = [&](size_t at, const char* text) {
    const bool space = at > 0 && s[at - 1] == ' ';
    edits.push_back({space ? at - 1 : at, text, space});
  };
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& v = tokens[i];
    if (v.kind != Token::Kind::kWord || v.text != "values") continue;
    const bool from_item = i > 0 && tokens[i - 1].kind == Token::Kind::kWord &&
                           (tokens[i - 1].text == "from" || tokens[i - 1].text == "join");
    const bool statement =
        i == 0 || IsOther(tokens[i - 1], '(') || IsOther(tokens[i - 1], ';') ||
        (tokens[i - 1].kind == Token::Kind::kWord &&
         (tokens[i - 1].text == "union" || tokens[i - 1].text == "all" || tokens[i - 1].text == "intersect" ||
          tokens[i - 1].text == "except" || tokens[i - 1].text == "distinct"));
    if (!from_item && !statement) continue;  // INSERT ... VALUES and the rest: the grammar's
    // The items: a parenthesized row, or a bare expression (Spark's
    // `VALUES 1, 2`: one column), up to the list's end.
    struct Item {
      size_t first, last;  // token indices
      bool row;
    };
    std::vector<Item> items;
    size_t j = i + 1;
    bool ok = true;
    while (ok && j < tokens.size()) {
      const size_t first = j;
      int depth = 0;
      size_t last = j;
      for (; j < tokens.size(); ++j) {
        const Token& t = tokens[j];
        if (IsOther(t, '(')) {
          ++depth;
        } else if (IsOther(t, ')')) {
          if (depth == 0) break;  // an enclosing parenthesis
          --depth;
        } else if (depth == 0) {
          if (IsOther(t, ',') || t.kind == Token::Kind::kSemicolon) break;
          const bool after_operand = j > first && EndsOperand(tokens[j - 1]);
          if (t.kind == Token::Kind::kQuoted && after_operand) break;  // a "quoted" alias
          if (t.kind == Token::Kind::kWord && j > first) {
            const bool call = j + 1 < tokens.size() && IsOther(tokens[j + 1], '(') && !after_operand;
            if (!call && (EndsInlineTable(t.text) || (after_operand && !ContinuesExpression(t.text)))) break;
          }
        }
        last = j;
      }
      if (j == first || depth != 0) {
        ok = false;
        break;
      }
      const bool row = IsOther(tokens[first], '(') && IsOther(tokens[last], ')') && [&] {
        int d = 0;  // the first '(' closes at `last`
        for (size_t k = first; k <= last; ++k) {
          if (IsOther(tokens[k], '(')) ++d;
          if (IsOther(tokens[k], ')') && --d == 0) return k == last;
        }
        return false;
      }();
      items.push_back({first, last, row});
      if (j < tokens.size() && IsOther(tokens[j], ',')) {
        ++j;
        continue;
      }
      break;
    }
    if (!ok || items.empty()) continue;
    bool bare = false;
    for (const Item& it : items) bare = bare || !it.row;
    if (!from_item && !bare) continue;  // VALUES (1), (2): the grammar's own
    if (from_item) insert(v.offset, "(");
    for (const Item& it : items) {
      if (it.row) continue;
      edits.push_back({tokens[it.first].offset, "(", false});
      edits.push_back({TokenEnd(s, tokens[it.last]), ")", false});
    }
    if (from_item) {
      const size_t after = TokenEnd(s, tokens[items.back().last]);
      // A space after the list becomes the ')' (offsets kept).
      const bool space = after < s.size() && s[after] == ' ';
      edits.push_back({after, ")", space});
    }
    i = items.back().last;
  }
  if (edits.empty()) return std::string(s);
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.offset < b.offset; });
  std::string out;
  out.reserve(s.size() + edits.size());
  size_t p = 0;
  for (const Edit& e : edits) {
    out.append(s.substr(p, e.offset - p));
    out += e.text;
    p = e.replaces_space ? e.offset + 1 : e.offset;
  }
  out.append(s.substr(p));
  return out;
}

SparkCommand MatchSparkCommand(std::string_view sql) {
  SparkCommand none;
  std::vector<Token> tokens;
  if (!Tokenize(sql, &tokens) || tokens.empty() || tokens[0].kind != Token::Kind::kWord) return none;
  CommandParser p(std::move(tokens));
  SparkCommand cmd;
  std::vector<std::string> name;
  int offset = 0;
  if (p.Word("show")) {
    // SHOW [USER | SYSTEM | ALL] FUNCTIONS
    const size_t after_show = p.pos();
    const bool user = p.Word("user");
    if (!user && !p.Word("system")) p.Word("all");
    const bool functions = p.Word("functions");
    if (!functions) p.set_pos(after_show);
    if (functions) {
      cmd.kind = SparkCommand::Kind::kShowFunctions;
      cmd.user_functions_only = user;
      if (p.Word("in") || p.Word("from")) {
        if (!p.Name(2, &name, &offset)) return none;
        cmd.schema = name.back();
        if (name.size() == 2) cmd.catalog = name[0];
        cmd.name_offset = offset;
      }
    } else if (p.Word("schemas") || p.Word("databases") || p.Word("namespaces")) {
      cmd.kind = SparkCommand::Kind::kShowSchemas;
      if (p.Word("in") || p.Word("from")) {
        if (!p.Name(1, &name, &offset)) return none;
        cmd.catalog = name[0];
        cmd.name_offset = offset;
      }
    } else if (p.Word("catalogs")) {
      cmd.kind = SparkCommand::Kind::kShowCatalogs;
    } else if (p.Word("tables")) {
      cmd.kind = SparkCommand::Kind::kShowTables;
      if (p.Word("in") || p.Word("from")) {
        if (!p.Name(2, &name, &offset)) return none;
        cmd.schema = name.back();
        if (name.size() == 2) cmd.catalog = name[0];
        cmd.name_offset = offset;
      }
    } else {
      return none;
    }
    if (!p.Pattern(&cmd.pattern) || !p.AtEnd()) return none;
    return cmd;
  }
  // [keyword] name, the keyword read as the name when nothing follows it.
  auto keyword_then_name = [&](std::initializer_list<const char*> words, size_t max_parts) -> bool {
    const size_t save = p.pos();
    for (const char* w : words) {
      if (p.Word(w)) {
        if (p.Name(max_parts, &name, &offset) && p.AtEnd()) return true;
        break;
      }
    }
    p.set_pos(save);
    return p.Name(max_parts, &name, &offset) && p.AtEnd();
  };
  if (p.Word("describe") || p.Word("desc")) {
    const size_t save = p.pos();
    p.Word("table");
    if (!keyword_then_name({"extended", "formatted"}, 3)) {
      p.set_pos(save);
      if (!p.Name(3, &name, &offset) || !p.AtEnd()) return none;
    }
    cmd.kind = SparkCommand::Kind::kDescribe;
    cmd.table = name.back();
    if (name.size() >= 2) cmd.schema = name[name.size() - 2];
    if (name.size() == 3) cmd.catalog = name[0];
    cmd.name_offset = offset;
    return cmd;
  }
  if (p.Word("use")) {
    const size_t save = p.pos();
    if (p.Word("catalog") && p.Name(1, &name, &offset) && p.AtEnd()) {
      cmd.kind = SparkCommand::Kind::kUse;
      cmd.catalog = name[0];
      cmd.name_offset = offset;
      return cmd;
    }
    p.set_pos(save);
    if (!keyword_then_name({"schema", "database", "namespace"}, 2)) return none;
    cmd.kind = SparkCommand::Kind::kUse;
    cmd.schema = name.back();
    if (name.size() == 2) cmd.catalog = name[0];
    cmd.name_offset = offset;
    return cmd;
  }
  return none;
}

bool SparkPatternMatch(std::string_view pattern, std::string_view text) {
  if (pattern.empty()) return true;
  size_t start = 0;
  while (start <= pattern.size()) {
    size_t bar = pattern.find('|', start);
    if (bar == std::string_view::npos) bar = pattern.size();
    const std::string_view alt = pattern.substr(start, bar - start);
    // Glob with '*', backtracking to the last star.
    size_t pi = 0, si = 0, star = std::string_view::npos, mark = 0;
    bool ok = true;
    while (si < text.size()) {
      if (pi < alt.size() && alt[pi] == '*') {
        star = ++pi;
        mark = si;
      } else if (pi < alt.size() && Lower(alt[pi]) == Lower(text[si])) {
        ++pi;
        ++si;
      } else if (star != std::string_view::npos) {
        pi = star;
        si = ++mark;
      } else {
        ok = false;
        break;
      }
    }
    while (ok && pi < alt.size() && alt[pi] == '*') ++pi;
    if (ok && pi == alt.size()) return true;
    start = bar + 1;
  }
  return false;
}

std::string SparkTypeName(const DataType& type) {
  const DataType& t = SparkServedType(type);
  const auto name = [](const FieldPtr& f) -> std::string { return f && f->type ? SparkTypeName(*f->type) : "void"; };
  const auto child = [&](size_t i) { return i < t.children.size() ? name(t.children[i]) : std::string("void"); };
  const SparkType kind = SparkTypeOf(t);
  switch (kind) {
    case SparkType::kDecimal: return "decimal(" + std::to_string(t.precision) + "," + std::to_string(t.scale) + ")";
    case SparkType::kArray: return "array<" + child(0) + ">";
    case SparkType::kStruct: {
      std::string s = "struct<";
      for (size_t i = 0; i < t.children.size(); ++i) {
        if (i) s += ',';
        s += (t.children[i] ? t.children[i]->name : std::string()) + ":" + child(i);
      }
      return s + ">";
    }
    case SparkType::kMap: {
      // One child: entries, a struct<key, value>.
      const DataType* entries = t.children.empty() || !t.children[0] ? nullptr : t.children[0]->type.get();
      const auto part = [&](size_t i) {
        return entries && i < entries->children.size() ? name(entries->children[i]) : std::string("void");
      };
      return "map<" + part(0) + "," + part(1) + ">";
    }
    case SparkType::kUnion: {
      std::string s = "uniontype<";
      for (size_t i = 0; i < t.children.size(); ++i) s += (i ? "," : "") + child(i);
      return s + ">";
    }
    default: return SparkTypeBaseName(kind);
  }
}

}  // namespace quiver::sql

// quiver/sql/statement_complexity.h — a cheap, linear pre-scan of a
// statement's text that bounds how deeply its parse tree can nest, before
// the parser (libpg_query), the binder, the planner and the evaluator walk
// it recursively (issue 35 #1: a 50,000-term `+` chain overflowed the
// stack in the parser, 6,000 terms in the binder).
#pragma once

#include <string_view>

#include "quiver/base/status.h"

namespace quiver::sql {

/// Limits on a statement's shape, checked by CheckStatementComplexity. A
/// limit of 0 or less turns that check off. The defaults are documented in
/// docs/sql.md ("Limits"); max_expression_depth follows DuckDB's
/// max_expression_depth default (1,000).
struct ComplexityLimits {
  /// Parentheses, brackets and CASE ... END open at once.
  int max_nesting_depth = 256;
  /// The parse tree's estimated depth: for every open parenthesis, bracket
  /// or CASE, one level plus the operators chained in its current term
  /// (`a+1+1+...` is a left-deep tree: n operators, n levels). Commas,
  /// AND, OR (flattened by the grammar), WHEN, THEN, ELSE and clause
  /// keywords end a term; UNION, INTERSECT, EXCEPT and JOIN (left-deep too)
  /// add a level to their enclosing parenthesis for the rest of it.
  int max_expression_depth = 1000;
  /// WHEN branches of one CASE.
  int max_case_branches = 4096;
};

/// Scans `sql` once (O(bytes), no allocation proportional to its length
/// beyond one entry per open parenthesis): skips string literals, quoted
/// identifiers, comments and dollar-quoted text; counts nesting and
/// operator chains. Returns OK or, at the first limit exceeded, an error
/// with SQLSTATE 54001 ("statement too complex") naming the limit, its
/// value, the count reached and the position (line, column) where it was
/// exceeded. Text the grammar would refuse (unbalanced parentheses, an
/// unterminated literal) is not an error here: the parser reports it.
/// Thread-safe (pure function).
Status CheckStatementComplexity(std::string_view sql, const ComplexityLimits& limits = {});

}  // namespace quiver::sql

// quiver/sql/planner/filter_terms.h — simplifying a WHERE term after the
// pushdown rules substituted a branch's expressions into it (join_order.h
// PushFilter through a UNION ALL branch's projection: sale_type = 's'
// becomes 's' = 's' in the branch that produces 's', 'c' = 's' in the one
// that produces 'c').
//
// Thread safety: pure functions.
#pragma once

#include <functional>

#include "quiver/sql/expression/expr.h"

namespace quiver::sql {

/// `term` (a WHERE term: only its TRUE rows matter) with its constant
/// subexpressions that cannot fail evaluated, then AND / OR with constant
/// arguments reduced (TRUE dropped from an AND, FALSE or NULL from an OR;
/// an AND holding FALSE or NULL is FALSE, an OR holding TRUE is TRUE).
/// NULL counts as FALSE only in those positions, where a WHERE term's NULL
/// and FALSE drop the same rows. Returns `term` itself when nothing changed.
ExprPtr SimplifyTerm(const ExprPtr& term);
/// True when `term` is a constant that keeps no row (FALSE or NULL).
bool IsFalseTerm(const Expr& term);
/// True when `term` is the constant TRUE.
bool IsTrueTerm(const Expr& term);
/// A term implied by `term` that `usable` accepts (a weaker filter): `term`
/// itself when usable, the AND of the usable weakenings of an AND's
/// arguments, the OR of an OR's when every argument has one; nullptr when
/// there is none. (`d_year = 2001 AND total > 0 OR d_year = 2002` gives
/// `d_year = 2001 OR d_year = 2002` where only d_year is usable.)
ExprPtr WeakenTerm(const ExprPtr& term, const std::function<bool(const Expr&)>& usable);

}  // namespace quiver::sql

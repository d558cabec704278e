// quiver/sql/binder/bind_correlated_from.cc — FROM items of a subquery
// that read columns of the query around the subquery: a derived table
// (`FROM (SELECT ... WHERE l_orderkey = o.o_orderkey) t`) or a WITH query
// (`WITH t AS (SELECT ... WHERE l_orderkey = o.o_orderkey) SELECT ...`).
//
// Such an item is bound with the outer scope of the query block it stands
// in (not that block's own scope: a derived table that is not LATERAL does
// not see its sibling FROM items). Where the subquery is bound for an
// equality-correlated flattening (bind_subquery.cc), an item reading outer
// columns cannot be flattened there: NotImplemented, and the callers bind
// the subquery again with BindDependent. There the item's filters,
// projections, aggregates, ... keep their outer references and the
// dependent join's push-down (bind_dependent_join.cc) unnests them with the
// rest of the subquery. A WITH query that reads outer columns is bound
// afresh at each reference (not run once and shared: each reference is
// unnested on its own).
#include "quiver/sql/binder/binder_internal.h"

namespace quiver::sql {

Result<BoundQuery> Binder::Impl::BindCorrelatedFrom(Json& select, const Scope* outer, int location, const char* what,
                                                    bool* reads_outer) {
  if (reads_outer) *reads_outer = false;
  if (!outer) return BindQuery(select, nullptr, false);
  // Inside a dependent binding of `outer`'s query or of one within it
  // (a WITH query of the subquery read by a subquery nested in it), the
  // item keeps its outer references too: each level is unnested in turn.
  bool dependent = false;
  for (const Scope* s = dependent_scope; s && !dependent; s = s->outer) dependent = s == outer;
  const Scope* saved = dependent_scope;
  if (dependent) dependent_scope = outer;
  auto bound = BindQuery(select, outer, true);
  dependent_scope = saved;
  QUIVER_ASSIGN_OR_RETURN(BoundQuery b, std::move(bound));
  const bool correlated = !b.corr_keys.empty() || b.corr_residual || NeedsDependentJoin(b, *outer);
  if (reads_outer) *reads_outer = correlated;
  if (correlated && !dependent)
    return Unsupported(std::string(what) + " reading columns of an enclosing query, outside a dependent join",
                       location);
  return b;
}

}  // namespace quiver::sql

// quiver/sql/planner/cte_filters.h — WHERE terms of a materialized WITH
// query's references pushed into the query (DuckDB's CTE filter pushdown).
//
// A WITH query named more than once runs once and every reference reads
// its whole result (LogicalOp::kCteScan), so a filter above one reference
// cannot move into it. But when every reference is filtered, the query
// need only produce the rows some reference keeps: the OR of the
// references' filters (each mapped onto the query's columns by position),
// pushed into the query as a WHERE term would be (join_order.h
// PushFilter: through renames, GROUP BY columns and joins down to the
// scans). Each reference keeps its own filter above it. TPC-DS 39: inv1
// keeps d_moy = 1 and inv2 d_moy = 2, so the query aggregates two months
// of inventory, not twelve.
//
// Only terms that cannot fail and hold no subquery are used; a reference
// with none leaves its query whole. Thread safety: a pure function.
#pragma once

#include <map>

#include "quiver/sql/plan/logical_plan.h"

namespace quiver::sql {

/// `plan` with the filters of the references of each WITH query pushed
/// into every reference's copy of that query. `references`: how many
/// references of each cte_id the binder made; a query some of whose
/// references are not in `plan`'s tree (inside a scalar subquery's own
/// plan) is left alone. Copies the nodes it changes.
LogicalOpPtr PushFiltersIntoCtes(const LogicalOpPtr& plan, const std::map<int, int>& references);

}  // namespace quiver::sql

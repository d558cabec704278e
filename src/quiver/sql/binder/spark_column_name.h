// quiver/sql/binder/spark_column_name.h — the name Spark (and so a
// Databricks SQL warehouse) gives a SELECT item without an alias: the
// expression's SQL text as Spark prints it (Spark SQL's
// `toPrettySQL(expression)`: Expression.sql with literals unquoted), e.g.
// `upper(n_name)`, `(a + 1)`, `count(1)` for count(*), `sum(x)`,
// `CAST(x AS INT)`, `CASE WHEN (x > 1) THEN 1 END`, `greatest(1, 5, 3)`.
// A driver's user sees it as the result column's header; under the
// postgres dialect the binder keeps PostgreSQL's names (`?column?`,
// `upper`, `count`).
//
// Input: one expression node of libpg_query's JSON parse tree (the `val` of
// a ResTarget), as the binder reads it. Recursion is bounded by the
// binder's own depth limit (the expression was bound first); this adds a
// depth cap of its own (past 64 levels the innermost text is "...").
//
// Thread safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace quiver::sql {

/// Spark's name for the expression `node`; an empty string when the node
/// is of a kind not covered (the caller then keeps PostgreSQL's name).
std::string SparkColumnName(const nlohmann::json& node);

}  // namespace quiver::sql

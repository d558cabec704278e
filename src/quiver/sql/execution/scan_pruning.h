// quiver/sql/execution/scan_pruning.h — the conjuncts of a scan's filter
// that row-group statistics can decide (formats/parquet/row_group_filter.h):
// `column op constant` (=, <, <=, >, >=, either side), BETWEEN (bound as
// two comparisons), `column IN (constants)`, IS [NOT] NULL, over signed
// integer, DATE, DOUBLE / FLOAT, DECIMAL and VARCHAR columns, with the
// constant converted to the column's stored representation (a DECIMAL
// constant rescaled to the column's scale only when exact). Anything else
// is left out: the predicates only ever skip row groups that the filter,
// which still runs, would empty anyway.
//
// Pure function; thread-safe.
#pragma once

#include <vector>

#include "quiver/columnar/data_type.h"
#include "quiver/formats/parquet/row_group_filter.h"
#include "quiver/sql/expression/expr.h"

namespace quiver::sql {

/// `filters`: predicates bound to the positions of `table_columns` (the
/// scan's columns, indices into `table_schema`, the table as stored). The
/// result's fields are table column indices.
std::vector<parquet::StatsPredicate> PruningPredicates(const std::vector<ExprPtr>& filters,
                                                       const std::vector<int>& table_columns,
                                                       const Schema& table_schema);

}  // namespace quiver::sql

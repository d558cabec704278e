// quiver/sql/expression/evaluate.h — evaluating bound expressions over a
// record batch, a batch at a time: one kernel call per expression node over
// all rows (kernels are typed loops per type family; kernels.h), never per
// row dispatch through the tree.
//
// Errors are SQL errors with their SQLSTATE (Status::sql_state): division
// by zero 22012, numeric overflow 22003, invalid text for a cast 22P02 /
// 22007, a scalar subquery returning more than one row 21000; OutOfMemory
// from the pool; Cancelled when the statement's flag is set.
//
// Thread safety: Evaluate is reentrant; an EvalContext belongs to one thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/sql/expression/expr.h"
#include "quiver/sql/expression/vector.h"

namespace quiver::sql {

struct EvalContext {
  /// Pool of every buffer evaluation allocates (required; shared_ptr-owned).
  MemoryPool* pool = nullptr;
  /// Polled between expression nodes (may be null).
  const std::atomic<bool>* cancel = nullptr;
  /// Common subexpressions of one batch (may be null): a call equal
  /// (ExprEquals) to one evaluated before over the same batch object with
  /// this memo returns that Vec. The caller owns it and clears it before
  /// evaluating another batch; evaluation over a subset of rows (CASE
  /// branches, narrowed filters) does not use it.
  std::vector<std::pair<const Expr*, Vec>>* memo = nullptr;
  /// The batch the memo's entries were computed over.
  const RecordBatch* memo_batch = nullptr;
};

/// Evaluates `expr` (column ids bound to positions of `batch`) over every
/// row of `batch`. The result has batch.num_rows rows, or is a constant.
Result<Vec> Evaluate(const Expr& expr, const RecordBatch& batch, EvalContext* ctx);

/// Evaluates a predicate and returns the positions of the rows where it is
/// true (NULL and false rows dropped), ascending. The conjuncts of an AND
/// narrow the selection one after another (`column <op> constant` ones
/// straight on the column's values); conjuncts after the selection is empty
/// are not evaluated (selection.cc).
Result<std::vector<int64_t>> EvaluateSelection(const Expr& predicate, const RecordBatch& batch, EvalContext* ctx);

/// Evaluates a constant expression (no columns) to a Value.
Result<Value> EvaluateConstant(const Expr& expr, EvalContext* ctx);

/// The rows `selection` of `batch` (every column gathered with Take; the
/// batch itself when the selection is every row in order).
Result<RecordBatchPtr> TakeRows(const RecordBatchPtr& batch, const std::vector<int64_t>& selection, MemoryPool* pool);

/// SQL error helpers: a Status of `code` carrying `sql_state`.
Status SqlError(StatusCode code, const char* sql_state, std::string message);
inline Status DivisionByZero() { return SqlError(StatusCode::kInvalid, "22012", "division by zero"); }
inline Status NumericOverflow(const std::string& what) {
  return SqlError(StatusCode::kInvalid, "22003", "numeric value out of range: " + what);
}

}  // namespace quiver::sql

// quiver/sql/expression/kernels.h — the scalar kernels behind Evaluate (one
// per type family and function; internal to quiver/sql/expression).
// Each takes its evaluated arguments (Vecs of `rows` rows or constants)
// and returns a Vec of the call's result type (e.type). When every
// argument is constant the result is a constant.
#pragma once

#include <vector>

#include "quiver/sql/expression/evaluate.h"

namespace quiver::sql::kernels {

Result<Vec> Arithmetic(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
Result<Vec> Compare(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
Result<Vec> Logic(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
Result<Vec> InList(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
Result<Vec> Like(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
Result<Vec> StringFunction(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
Result<Vec> Cast(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
Result<Vec> Temporal(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
Result<Vec> Conditional(const Expr& e, const std::vector<Vec>& args, int64_t rows, EvalContext* ctx);
/// Cast of one value (constant folding, literals): same rules as Cast.
Result<Value> CastValue(const Value& v, const DataTypePtr& to);
/// The hashed item set of a constant IN list (Expr::aux), built by the binder.
std::shared_ptr<const void> MakeInSet(const DataTypePtr& probe_type, const std::vector<Value>& items);
/// Picks, for each row r, row index[r] of results[branch[r]] (CASE: each
/// branch evaluated over the rows that take it). Every result has `type`
/// (or is an untyped NULL constant).
Result<Vec> MergeBranches(const DataTypePtr& type, const std::vector<int32_t>& branch,
                          const std::vector<int64_t>& index, const std::vector<Vec>& results, int64_t rows,
                          MemoryPool* pool);

}  // namespace quiver::sql::kernels

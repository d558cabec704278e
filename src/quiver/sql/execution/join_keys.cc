// quiver/sql/execution/join_keys.cc — join keys, their schemas and the
// build's workers (join_keys.h).
#include "quiver/sql/execution/join_keys.h"

#include <numeric>

#include "quiver/sql/execution/task_scheduler.h"

namespace quiver::sql {

join::JoinType ToJoinType(JoinKind k) {
  switch (k) {
    case JoinKind::kInner: return join::JoinType::kInner;
    case JoinKind::kLeft: return join::JoinType::kLeftOuter;
    case JoinKind::kRight: return join::JoinType::kRightOuter;
    case JoinKind::kFull: return join::JoinType::kFullOuter;
    case JoinKind::kSemi: return join::JoinType::kLeftSemi;
    case JoinKind::kAnti: return join::JoinType::kLeftAnti;
    case JoinKind::kNullAwareAnti: return join::JoinType::kNullAwareAnti;
    case JoinKind::kMark: return join::JoinType::kLeftSemi;  // HashJoinOp tracks the matches itself
  }
  return join::JoinType::kInner;
}

Result<RecordBatchPtr> WithKeys(const RecordBatchPtr& in, const std::vector<ExprPtr>& keys, const SchemaPtr& schema,
                                int64_t first_row_id, ExecContext* ctx, MemoryPool* pool) {
  std::vector<ArrayDataPtr> cols = in->columns;
  EvalContext ev = ctx->Eval(pool);
  for (const auto& k : keys) {
    QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(*k, *in, &ev));
    QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr a, Materialize(v, in->num_rows, pool));
    cols.push_back(std::move(a));
  }
  if (first_row_id != kNoRowIds) {
    QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(int64(), in->num_rows, pool));
    std::iota(b.values<int64_t>(), b.values<int64_t>() + in->num_rows, first_row_id);
    cols.push_back(b.Finish());
  }
  return MakeBatch(schema, in->num_rows, std::move(cols));
}

SchemaPtr ExtendSchema(const Schema& base, const std::vector<ExprPtr>& keys, bool row_ids) {
  auto s = std::make_shared<Schema>(base);
  for (size_t k = 0; k < keys.size(); ++k) s->fields.push_back(field("__key" + std::to_string(k), keys[k]->type, true));
  if (row_ids) s->fields.push_back(field("__row", int64(), false));
  return s;
}

join::BuildParallelism BuildThreads(const ExecContext* ctx) {
  join::BuildParallelism p;
  if (ctx->threads <= 1 || !ctx->scheduler) return p;
  p.tasks = ctx->threads;
  p.parallel_for = [scheduler = ctx->scheduler](int n, const std::function<Status(int)>& body) {
    return ParallelFor(scheduler.get(), n, body);
  };
  return p;
}

Result<std::vector<Vec>> EvaluateKeys(const std::vector<ExprPtr>& keys, const RecordBatch& b, ExecContext* ctx) {
  std::vector<Vec> out;
  EvalContext ev = ctx->Eval(ctx->pool.get());
  for (const auto& k : keys) {
    QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(*k, b, &ev));
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace quiver::sql

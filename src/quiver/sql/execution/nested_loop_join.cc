// quiver/sql/execution/nested_loop_join.cc — joins without equality keys
// (nested_loop_join.h).
#include "quiver/sql/execution/nested_loop_join.h"

#include <algorithm>
#include <numeric>

#include "quiver/columnar/concatenate.h"
#include "quiver/columnar/take.h"

namespace quiver::sql {
namespace {

// Joins without equality keys: every left row against every right row.
class NestedLoopJoinOp : public RecordBatchStream {
 public:
  NestedLoopJoinOp(ExecContext* ctx, OperatorPtr left, OperatorPtr right, JoinSpec spec, SchemaPtr schema)
      : ctx_(ctx),
        left_(std::move(left)),
        right_(std::move(right)),
        spec_(std::move(spec)),
        schema_(std::move(schema)) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    auto r = NextImpl();
    if (!r.ok()) return NameOperator(r.status(), "nested loop join");
    return r;
  }

 private:
  Result<RecordBatchPtr> NextImpl() {
    if (spec_.kind == JoinKind::kRight || spec_.kind == JoinKind::kFull)
      return Status::NotImplemented("a right or full join without an equality condition");
    MemoryPool* pool = ctx_->pool.get();
    if (!built_) {
      std::vector<RecordBatchPtr> batches;
      while (true) {
        QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, right_->Next());
        if (!b) break;
        batches.push_back(std::move(b));
      }
      right_schema_ = right_->schema();
      right_.reset();
      std::vector<ArrayDataPtr> cols;
      int64_t rows = 0;
      for (const auto& b : batches) rows += b->num_rows;
      for (size_t c = 0; c < right_schema_->fields.size(); ++c) {
        std::vector<ArrayDataPtr> parts;
        for (const auto& b : batches) parts.push_back(b->columns[c]);
        if (parts.empty()) {
          QUIVER_ASSIGN_OR_RETURN(auto a, MakeArrayOfNull(right_schema_->fields[c]->type, 0, pool, "column"));
          cols.push_back(a);
        } else if (parts.size() == 1) {
          cols.push_back(parts[0]);
        } else {
          QUIVER_ASSIGN_OR_RETURN(auto a, ConcatenateArrays(parts, pool));
          cols.push_back(a);
        }
      }
      right_all_ = MakeBatch(right_schema_, rows, std::move(cols));
      built_ = true;
    }
    while (true) {
      if (pending_) return std::exchange(pending_, nullptr);
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      if (!current_ || pos_ >= current_->num_rows) {
        QUIVER_ASSIGN_OR_RETURN(current_, left_->Next());
        if (!current_) return RecordBatchPtr{};
        pos_ = 0;
        matched_.assign(static_cast<size_t>(current_->num_rows), 0);
      }
      const int64_t nr = right_all_->num_rows;
      const int64_t nl = current_->num_rows;
      std::vector<int64_t> li, ri;
      int64_t end = pos_;
      if (nr > 0) {
        const int64_t per = std::max<int64_t>(1, ctx_->max_batch_rows / nr);
        end = std::min(nl, pos_ + per);
        for (int64_t l = pos_; l < end; ++l)
          for (int64_t r = 0; r < nr; ++r) {
            li.push_back(l);
            ri.push_back(r);
          }
      } else {
        end = nl;
      }
      const int64_t begin = pos_;
      pos_ = end;
      RecordBatchPtr out;
      if (!li.empty()) {
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr lt, TakeRows(current_, li, pool));
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr rt, TakeRows(right_all_, ri, pool));
        std::vector<ArrayDataPtr> cols = lt->columns;
        cols.insert(cols.end(), rt->columns.begin(), rt->columns.end());
        auto both = std::make_shared<Schema>(*current_->schema);
        for (const auto& f : right_schema_->fields) both->fields.push_back(f);
        RecordBatchPtr joined = MakeBatch(both, static_cast<int64_t>(li.size()), std::move(cols));
        std::vector<int64_t> sel;
        if (spec_.residual) {
          EvalContext ev = ctx_->Eval(pool);
          QUIVER_ASSIGN_OR_RETURN(sel, EvaluateSelection(*spec_.residual, *joined, &ev));
        } else {
          sel.resize(li.size());
          std::iota(sel.begin(), sel.end(), int64_t{0});
        }
        for (int64_t s : sel) matched_[static_cast<size_t>(li[static_cast<size_t>(s)])] = 1;
        if ((spec_.kind == JoinKind::kInner || spec_.kind == JoinKind::kLeft) && !sel.empty()) {
          QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr kept, TakeRows(joined, sel, pool));
          out = MakeBatch(schema_, kept->num_rows, kept->columns);
        }
      }
      if (spec_.kind == JoinKind::kMark) {  // every left row, then whether a right row matched
        if (end == begin) continue;
        std::vector<int64_t> rows(static_cast<size_t>(end - begin));
        std::iota(rows.begin(), rows.end(), begin);
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr taken, TakeRows(current_, rows, pool));
        std::vector<ArrayDataPtr> cols = taken->columns;
        QUIVER_ASSIGN_OR_RETURN(auto mark, BoolArrayFromTruth(matched_.data() + begin, end - begin, pool));
        cols.push_back(std::move(mark));
        return MakeBatch(schema_, taken->num_rows, std::move(cols));
      }
      if (spec_.kind != JoinKind::kInner) {
        std::vector<int64_t> rows;
        const bool want = spec_.kind == JoinKind::kSemi;
        for (int64_t l = begin; l < end; ++l)
          if ((matched_[static_cast<size_t>(l)] != 0) == want) rows.push_back(l);
        if (!rows.empty()) {
          QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr taken, TakeRows(current_, rows, pool));
          std::vector<ArrayDataPtr> cols = taken->columns;
          if (spec_.kind == JoinKind::kLeft) {
            for (const auto& f : right_schema_->fields) {
              QUIVER_ASSIGN_OR_RETURN(auto nulls, MakeArrayOfNull(f->type, taken->num_rows, pool, "outer join column"));
              cols.push_back(nulls);
            }
          }
          RecordBatchPtr b = MakeBatch(schema_, taken->num_rows, std::move(cols));
          if (out) {
            pending_ = b;
          } else {
            out = b;
          }
        }
      }
      if (out) return out;
    }
  }

  ExecContext* ctx_;
  OperatorPtr left_, right_;
  JoinSpec spec_;
  SchemaPtr schema_, right_schema_;
  RecordBatchPtr right_all_, current_, pending_;
  bool built_ = false;
  int64_t pos_ = 0;
  std::vector<uint8_t> matched_;
};

}  // namespace

OperatorPtr MakeNestedLoopJoin(ExecContext* ctx, OperatorPtr left, OperatorPtr right, JoinSpec spec, SchemaPtr schema) {
  return std::make_unique<NestedLoopJoinOp>(ctx, std::move(left), std::move(right), std::move(spec), std::move(schema));
}

}  // namespace quiver::sql

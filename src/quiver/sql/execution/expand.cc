// quiver/sql/execution/expand.cc — see expand.h.
#include "quiver/sql/execution/expand.h"

namespace quiver::sql {
namespace {

class ExpandOp : public RecordBatchStream {
 public:
  ExpandOp(ExecContext* ctx, OperatorPtr child, const std::vector<std::vector<ExprPtr>>* sets, SchemaPtr schema)
      : ctx_(ctx), child_(std::move(child)), sets_(sets), schema_(std::move(schema)) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      if (!in_ || next_set_ >= sets_->size()) {
        QUIVER_ASSIGN_OR_RETURN(in_, child_->Next());
        next_set_ = 0;
        if (!in_) return RecordBatchPtr{};
        if (in_->num_rows == 0 || sets_->empty()) {
          in_.reset();
          continue;
        }
      }
      const auto& set = (*sets_)[next_set_++];
      std::vector<ArrayDataPtr> cols = in_->columns;
      EvalContext ev = ctx_->Eval(ctx_->scan_pool.get());
      for (const auto& e : set) {
        auto v = Evaluate(*e, *in_, &ev);
        if (!v.ok()) return NameOperator(v.status(), "expand");
        QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr a, Materialize(*v, in_->num_rows, ctx_->scan_pool.get()));
        cols.push_back(std::move(a));
      }
      return MakeBatch(schema_, in_->num_rows, std::move(cols));
    }
  }

 private:
  ExecContext* ctx_;
  OperatorPtr child_;
  const std::vector<std::vector<ExprPtr>>* sets_;
  SchemaPtr schema_;
  RecordBatchPtr in_;
  size_t next_set_ = 0;
};

class ExpandNode : public PhysicalNode {
 public:
  ExpandNode(ExecContext* ctx, NodePtr child, std::vector<std::vector<ExprPtr>> sets, SchemaPtr schema)
      : PhysicalNode(ctx, std::move(schema)), child_(std::move(child)), sets_(std::move(sets)) {}
  bool parallel() const override { return child_->parallel(); }
  Result<OperatorPtr> Instantiate() override {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, child_->Instantiate());
    return OperatorPtr(std::make_unique<ExpandOp>(ctx_, std::move(in), &sets_, schema_));
  }
  void Release() override { child_->Release(); }

 protected:
  Status DoPrepare() override { return child_->Prepare(); }

 private:
  NodePtr child_;
  std::vector<std::vector<ExprPtr>> sets_;
};

}  // namespace

NodePtr MakeExpandNode(ExecContext* ctx, NodePtr child, std::vector<std::vector<ExprPtr>> sets, SchemaPtr schema) {
  return std::make_shared<ExpandNode>(ctx, std::move(child), std::move(sets), std::move(schema));
}

}  // namespace quiver::sql

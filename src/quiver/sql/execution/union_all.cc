// quiver/sql/execution/union_all.cc — see union_all.h.
#include "quiver/sql/execution/union_all.h"

namespace quiver::sql {
namespace {

// One instance: the streams of its share of every child, in child order.
class UnionAllOp : public RecordBatchStream {
 public:
  UnionAllOp(ExecContext* ctx, std::vector<OperatorPtr> inputs, SchemaPtr schema)
      : ctx_(ctx), inputs_(std::move(inputs)), schema_(std::move(schema)) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    while (next_ < inputs_.size()) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, inputs_[next_]->Next());
      if (!b) {
        inputs_[next_].reset();  // what it holds goes now
        ++next_;
        continue;
      }
      if (b->num_rows == 0) continue;
      return MakeBatch(schema_, b->num_rows, b->columns);
    }
    return RecordBatchPtr{};
  }

 private:
  ExecContext* ctx_;
  std::vector<OperatorPtr> inputs_;
  SchemaPtr schema_;
  size_t next_ = 0;
};

class UnionAllNode : public PhysicalNode {
 public:
  UnionAllNode(ExecContext* ctx, std::vector<NodePtr> children, SchemaPtr schema)
      : PhysicalNode(ctx, std::move(schema)), children_(std::move(children)) {}
  bool parallel() const override { return true; }
  Result<OperatorPtr> Instantiate() override {
    std::vector<OperatorPtr> inputs;
    for (const auto& c : children_) {
      if (!c->parallel() && instances_ > 0) continue;
      QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, c->Instantiate());
      inputs.push_back(std::move(in));
    }
    ++instances_;
    return OperatorPtr(std::make_unique<UnionAllOp>(ctx_, std::move(inputs), schema_));
  }
  void Release() override {
    for (const auto& c : children_) c->Release();
  }

 protected:
  Status DoPrepare() override {
    for (const auto& c : children_) QUIVER_RETURN_NOT_OK(c->Prepare());
    return Status::OK();
  }

 private:
  std::vector<NodePtr> children_;
  int instances_ = 0;
};

}  // namespace

NodePtr MakeUnionAllNode(ExecContext* ctx, std::vector<NodePtr> children, SchemaPtr schema) {
  return std::make_shared<UnionAllNode>(ctx, std::move(children), std::move(schema));
}

}  // namespace quiver::sql

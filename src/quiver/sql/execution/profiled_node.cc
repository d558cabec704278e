// quiver/sql/execution/profiled_node.cc — see profiled_node.h.
#include "quiver/sql/execution/profiled_node.h"

#include <utility>

namespace quiver::sql {
namespace {

class CountingStream : public RecordBatchStream {
 public:
  CountingStream(OperatorPtr in, std::shared_ptr<OperatorProfile> profile)
      : in_(std::move(in)), profile_(std::move(profile)) {}
  const SchemaPtr& schema() const override { return in_->schema(); }
  Result<RecordBatchPtr> Next() override {
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr batch, in_->Next());
    if (batch) {
      profile_->rows.fetch_add(batch->num_rows, std::memory_order_relaxed);
      profile_->batches.fetch_add(1, std::memory_order_relaxed);
    }
    return batch;
  }

 private:
  OperatorPtr in_;
  std::shared_ptr<OperatorProfile> profile_;
};

class ProfiledNode : public PhysicalNode {
 public:
  ProfiledNode(ExecContext* ctx, NodePtr child, std::shared_ptr<OperatorProfile> profile)
      : PhysicalNode(ctx, child->schema()), child_(std::move(child)), profile_(std::move(profile)) {}
  bool parallel() const override { return child_->parallel(); }
  Result<OperatorPtr> Instantiate() override {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, child_->Instantiate());
    return OperatorPtr(std::make_unique<CountingStream>(std::move(in), profile_));
  }
  void Release() override { child_->Release(); }
  bool ordered_source() const override { return child_->ordered_source(); }
  SharedScan* morsel_source() override { return child_->morsel_source(); }
  Result<OperatorPtr> InstantiateOn(RecordBatchPtr morsel) override {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, child_->InstantiateOn(std::move(morsel)));
    return OperatorPtr(std::make_unique<CountingStream>(std::move(in), profile_));
  }

 protected:
  Status DoPrepare() override { return child_->Prepare(); }

 private:
  NodePtr child_;
  std::shared_ptr<OperatorProfile> profile_;
};

}  // namespace

NodePtr MakeProfiledNode(ExecContext* ctx, NodePtr child, std::shared_ptr<OperatorProfile> profile) {
  return std::make_shared<ProfiledNode>(ctx, std::move(child), std::move(profile));
}

}  // namespace quiver::sql

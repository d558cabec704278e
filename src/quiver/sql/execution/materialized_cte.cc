// quiver/sql/execution/materialized_cte.cc — WITH queries named more than
// once: run once into batches kept in memory, read by every reference
// (see operators.h: MaterializedCte, MakeCteScanNode).
#include <atomic>

#include "quiver/sql/execution/pipeline.h"

namespace quiver::sql {

MaterializedCte::MaterializedCte(ExecContext* ctx, NodePtr child, std::string name)
    : ctx_(ctx), child_(std::move(child)), schema_(child_->schema()), name_(std::move(name)) {}

MaterializedCte::~MaterializedCte() = default;

const SchemaPtr& MaterializedCte::schema() const { return schema_; }

Status MaterializedCte::Materialize() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (done_) return status_;
  done_ = true;
  // Gathered keeps a scan chain's order, so a WITH query over one table
  // reads back in the table's order, as when it is inlined.
  status_ = [&]() -> Status {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr op, Gathered(ctx_, child_));
    while (true) {
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, op->Next());
      if (!b) break;
      if (b->num_rows > 0) batches_.push_back(std::move(b));
    }
    return Status::OK();
  }();
  child_.reset();  // its operators' state was released when the gather ended
  if (!status_.ok()) {
    batches_.clear();
    if (status_.code() != StatusCode::kCancelled) status_ = status_.WithContext("WITH query '" + name_ + "'");
  }
  return status_;
}

namespace {

class CteScanOp : public RecordBatchStream {
 public:
  CteScanOp(ExecContext* ctx, const MaterializedCte* cte, SchemaPtr schema, std::atomic<size_t>* next)
      : ctx_(ctx), cte_(cte), schema_(std::move(schema)), next_(next) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    const auto& batches = cte_->batches();
    const size_t i = next_->fetch_add(1, std::memory_order_relaxed);
    if (i >= batches.size()) return RecordBatchPtr{};
    const RecordBatch& b = *batches[i];
    return MakeBatch(schema_, b.num_rows, b.columns);
  }

 private:
  ExecContext* ctx_;
  const MaterializedCte* cte_;
  SchemaPtr schema_;
  std::atomic<size_t>* next_;
};

class CteScanNode : public PhysicalNode {
 public:
  CteScanNode(ExecContext* ctx, std::shared_ptr<MaterializedCte> cte, SchemaPtr schema)
      : PhysicalNode(ctx, std::move(schema)), cte_(std::move(cte)) {}
  bool parallel() const override { return true; }
  Result<OperatorPtr> Instantiate() override {
    return OperatorPtr(std::make_unique<CteScanOp>(ctx_, cte_.get(), schema_, &next_));
  }

 protected:
  Status DoPrepare() override {
    if (cte_->schema()->fields.size() != schema_->fields.size())
      return Status::Invalid("internal: a WITH query's reference has " + std::to_string(schema_->fields.size()) +
                             " columns, its query " + std::to_string(cte_->schema()->fields.size()));
    return cte_->Materialize();
  }

 private:
  std::shared_ptr<MaterializedCte> cte_;
  std::atomic<size_t> next_{0};
};

}  // namespace

NodePtr MakeCteScanNode(ExecContext* ctx, std::shared_ptr<MaterializedCte> cte, SchemaPtr schema) {
  return std::make_shared<CteScanNode>(ctx, std::move(cte), std::move(schema));
}

}  // namespace quiver::sql

// quiver/sql/execution/scan_project.cc — scan, filter, project, limit and
// the single-row source.
#include <algorithm>

#include "quiver/columnar/dictionary.h"
#include "quiver/sql/execution/operators.h"
#include "quiver/sql/execution/pipeline.h"

namespace quiver::sql {

RecordBatchPtr MakeBatch(const SchemaPtr& schema, int64_t rows, std::vector<ArrayDataPtr> columns) {
  auto b = std::make_shared<RecordBatch>();
  b->schema = schema;
  b->num_rows = rows;
  b->columns = std::move(columns);
  return b;
}

SchemaPtr SchemaOf(const std::vector<ColumnBinding>& columns) {
  auto s = std::make_shared<Schema>();
  for (const auto& c : columns) s->fields.push_back(field(c.name, c.type, true));
  return s;
}

Status NameOperator(const Status& st, const char* op) {
  if (st.ok() || !st.IsOutOfMemory() || st.message().rfind(op, 0) == 0) return st;
  return Status::OutOfMemory(std::string(op) + ": " + st.message()).WithSqlState("53200");
}

namespace {

class ScanOp : public RecordBatchStream {
 public:
  // Reads `source`, or only `morsel` when given.
  // `schema`: the scanned columns (the filter's positions); `keep`
  // (empty: all) the positions returned, as `out_schema`.
  ScanOp(ExecContext* ctx, std::shared_ptr<SharedScan> source, std::vector<int> columns, SchemaPtr schema,
         ExprPtr filter, std::vector<int> keep, SchemaPtr out_schema, RecordBatchPtr morsel = nullptr)
      : ctx_(ctx),
        columns_(std::move(columns)),
        schema_(std::move(schema)),
        filter_(std::move(filter)),
        keep_(std::move(keep)),
        out_schema_(std::move(out_schema)),
        source_(std::move(source)),
        morsel_(std::move(morsel)) {}
  const SchemaPtr& schema() const override { return keep_.empty() ? schema_ : out_schema_; }
  Result<RecordBatchPtr> Next() override {
    auto r = NextImpl();
    if (!r.ok()) return NameOperator(r.status(), "scan");
    return r;
  }

 private:
  Result<RecordBatchPtr> NextImpl() {
    MemoryPool* pool = ctx_->scan_pool.get();
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      RecordBatchPtr in;
      if (morsel_) {
        in = std::move(morsel_);
      } else if (source_ && !single_) {
        QUIVER_ASSIGN_OR_RETURN(in, source_->Next());
      }
      single_ = single_ || !source_;
      if (!in) {
        source_.reset();
        return RecordBatchPtr{};
      }
      if (in->num_rows == 0) continue;
      std::vector<ArrayDataPtr> cols;
      cols.reserve(columns_.size());
      for (int c : columns_) {
        ArrayDataPtr a = in->columns[static_cast<size_t>(c)];
        if (a->type->id == TypeId::kDictionary) {
          QUIVER_ASSIGN_OR_RETURN(
              a, DecodeDictionary(*a, pool, "column '" + in->schema->fields[static_cast<size_t>(c)]->name + "'"));
        }
        QUIVER_ASSIGN_OR_RETURN(a, Canonicalize(a, pool));
        cols.push_back(std::move(a));
      }
      RecordBatchPtr b = MakeBatch(schema_, in->num_rows, std::move(cols));
      std::vector<int64_t> sel;
      if (filter_) {
        EvalContext ev = ctx_->Eval(pool);
        QUIVER_ASSIGN_OR_RETURN(sel, EvaluateSelection(*filter_, *b, &ev));
        if (sel.empty()) continue;
      }
      if (!keep_.empty()) {
        // Columns only the filter read are not gathered.
        std::vector<ArrayDataPtr> kept;
        for (int c : keep_) kept.push_back(b->columns[static_cast<size_t>(c)]);
        b = MakeBatch(out_schema_, b->num_rows, std::move(kept));
      }
      if (filter_) {
        QUIVER_ASSIGN_OR_RETURN(b, TakeRows(b, sel, pool));
      }
      return b;
    }
  }

  ExecContext* ctx_;
  std::vector<int> columns_;
  SchemaPtr schema_;
  ExprPtr filter_;
  std::vector<int> keep_;
  SchemaPtr out_schema_;
  std::shared_ptr<SharedScan> source_;
  RecordBatchPtr morsel_;
  bool single_ = false;  // the morsel was the only input
};

class FilterOp : public RecordBatchStream {
 public:
  FilterOp(ExecContext* ctx, OperatorPtr child, ExprPtr predicate)
      : ctx_(ctx), child_(std::move(child)), predicate_(std::move(predicate)) {}
  const SchemaPtr& schema() const override { return child_->schema(); }
  Result<RecordBatchPtr> Next() override {
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr in, child_->Next());
      if (!in) return in;
      EvalContext ev = ctx_->Eval(ctx_->scan_pool.get());
      QUIVER_ASSIGN_OR_RETURN(auto sel, EvaluateSelection(*predicate_, *in, &ev));
      if (sel.empty()) continue;
      auto out = TakeRows(in, sel, ctx_->scan_pool.get());
      if (!out.ok()) return NameOperator(out.status(), "filter");
      return out;
    }
  }

 private:
  ExecContext* ctx_;
  OperatorPtr child_;
  ExprPtr predicate_;
};

class ProjectOp : public RecordBatchStream {
 public:
  ProjectOp(ExecContext* ctx, OperatorPtr child, std::vector<ExprPtr> exprs, SchemaPtr schema)
      : ctx_(ctx), child_(std::move(child)), exprs_(std::move(exprs)), schema_(std::move(schema)) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr in, child_->Next());
    if (!in) return in;
    std::vector<ArrayDataPtr> cols;
    cols.reserve(exprs_.size());
    EvalContext ev = ctx_->Eval(ctx_->scan_pool.get());
    std::vector<std::pair<const Expr*, Vec>> memo;  // subexpressions shared by the outputs
    ev.memo = &memo;
    for (const auto& e : exprs_) {
      auto v = Evaluate(*e, *in, &ev);
      if (!v.ok()) return NameOperator(v.status(), "project");
      QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr a, Materialize(*v, in->num_rows, ctx_->scan_pool.get()));
      cols.push_back(std::move(a));
    }
    return MakeBatch(schema_, in->num_rows, std::move(cols));
  }

 private:
  ExecContext* ctx_;
  OperatorPtr child_;
  std::vector<ExprPtr> exprs_;
  SchemaPtr schema_;
};

class LimitOp : public RecordBatchStream {
 public:
  LimitOp(OperatorPtr child, int64_t offset, int64_t limit) : child_(std::move(child)), skip_(offset), left_(limit) {
    schema_ = child_->schema();
  }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    while (left_ != 0 && child_) {
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr in, child_->Next());
      if (!in) return in;
      int64_t begin = 0;
      if (skip_ > 0) {
        begin = std::min(skip_, in->num_rows);
        skip_ -= begin;
      }
      int64_t n = in->num_rows - begin;
      if (left_ > 0) n = std::min(n, left_);
      if (n <= 0) continue;
      if (left_ > 0) left_ -= n;
      if (left_ == 0) child_.reset();  // nothing more is needed: release the inputs now
      if (begin == 0 && n == in->num_rows) return in;
      return SliceBatch(in, begin, n);
    }
    return RecordBatchPtr{};
  }

 private:
  OperatorPtr child_;
  SchemaPtr schema_;
  int64_t skip_;
  int64_t left_;  // -1 = no limit
};

class SingleRowOp : public RecordBatchStream {
 public:
  SingleRowOp() : schema_(std::make_shared<Schema>()) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    if (done_) return RecordBatchPtr{};
    done_ = true;
    return MakeBatch(schema_, 1, {});
  }

 private:
  SchemaPtr schema_;
  bool done_ = false;
};

class ScanNode : public PhysicalNode {
 public:
  ScanNode(ExecContext* ctx, TableInfo table, std::vector<int> columns, SchemaPtr schema, std::vector<ExprPtr> filters,
           std::vector<int> keep, SchemaPtr out_schema)
      : PhysicalNode(ctx, keep.empty() ? schema : out_schema),
        table_(std::move(table)),
        columns_(std::move(columns)),
        scan_schema_(std::move(schema)),
        keep_(std::move(keep)),
        out_schema_(std::move(out_schema)) {
    if (!filters.empty()) filter_ = MakeAnd(filters);
  }
  bool parallel() const override { return true; }
  Result<OperatorPtr> Instantiate() override {
    return OperatorPtr(std::make_unique<ScanOp>(ctx_, source_, columns_, scan_schema_, filter_, keep_, out_schema_));
  }
  void Release() override { source_.reset(); }
  bool ordered_source() const override { return true; }
  SharedScan* morsel_source() override { return source_.get(); }
  Result<OperatorPtr> InstantiateOn(RecordBatchPtr morsel) override {
    return OperatorPtr(std::make_unique<ScanOp>(ctx_, nullptr, columns_, scan_schema_, filter_, keep_, out_schema_,
                                                std::move(morsel)));
  }

 protected:
  Status DoPrepare() override {
    auto r = ctx_->catalog->OpenSharedScan(table_, ctx_->scan_pool.get(), columns_);
    if (!r.ok()) return NameOperator(r.status(), "scan");
    source_ = std::move(*r);
    return Status::OK();
  }

 private:
  TableInfo table_;
  std::vector<int> columns_;
  SchemaPtr scan_schema_;
  std::vector<int> keep_;
  SchemaPtr out_schema_;
  ExprPtr filter_;
  std::shared_ptr<SharedScan> source_;
};

class FilterNode : public PhysicalNode {
 public:
  FilterNode(ExecContext* ctx, NodePtr child, ExprPtr predicate)
      : PhysicalNode(ctx, child->schema()), child_(std::move(child)), predicate_(std::move(predicate)) {}
  bool parallel() const override { return child_->parallel(); }
  Result<OperatorPtr> Instantiate() override {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, child_->Instantiate());
    return OperatorPtr(std::make_unique<FilterOp>(ctx_, std::move(in), predicate_));
  }
  void Release() override { child_->Release(); }
  bool ordered_source() const override { return child_->ordered_source(); }
  SharedScan* morsel_source() override { return child_->morsel_source(); }
  Result<OperatorPtr> InstantiateOn(RecordBatchPtr morsel) override {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, child_->InstantiateOn(std::move(morsel)));
    return OperatorPtr(std::make_unique<FilterOp>(ctx_, std::move(in), predicate_));
  }

 protected:
  Status DoPrepare() override { return child_->Prepare(); }

 private:
  NodePtr child_;
  ExprPtr predicate_;
};

class ProjectNode : public PhysicalNode {
 public:
  ProjectNode(ExecContext* ctx, NodePtr child, std::vector<ExprPtr> exprs, SchemaPtr schema)
      : PhysicalNode(ctx, std::move(schema)), child_(std::move(child)), exprs_(std::move(exprs)) {}
  bool parallel() const override { return child_->parallel(); }
  Result<OperatorPtr> Instantiate() override {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, child_->Instantiate());
    return OperatorPtr(std::make_unique<ProjectOp>(ctx_, std::move(in), exprs_, schema_));
  }
  void Release() override { child_->Release(); }
  bool ordered_source() const override { return child_->ordered_source(); }
  SharedScan* morsel_source() override { return child_->morsel_source(); }
  Result<OperatorPtr> InstantiateOn(RecordBatchPtr morsel) override {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, child_->InstantiateOn(std::move(morsel)));
    return OperatorPtr(std::make_unique<ProjectOp>(ctx_, std::move(in), exprs_, schema_));
  }

 protected:
  Status DoPrepare() override { return child_->Prepare(); }

 private:
  NodePtr child_;
  std::vector<ExprPtr> exprs_;
};

class LimitNode : public PhysicalNode {
 public:
  LimitNode(ExecContext* ctx, NodePtr child, int64_t offset, int64_t limit)
      : PhysicalNode(ctx, child->schema()), child_(std::move(child)), offset_(offset), limit_(limit) {}
  bool parallel() const override { return false; }
  Result<OperatorPtr> Instantiate() override {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, Gathered(ctx_, child_));
    return OperatorPtr(std::make_unique<LimitOp>(std::move(in), offset_, limit_));
  }

 protected:
  Status DoPrepare() override { return Status::OK(); }

 private:
  NodePtr child_;
  int64_t offset_, limit_;
};

class SingleRowNode : public PhysicalNode {
 public:
  explicit SingleRowNode(ExecContext* ctx) : PhysicalNode(ctx, std::make_shared<Schema>()) {}
  bool parallel() const override { return false; }
  Result<OperatorPtr> Instantiate() override { return OperatorPtr(std::make_unique<SingleRowOp>()); }

 protected:
  Status DoPrepare() override { return Status::OK(); }
};

}  // namespace

NodePtr MakeScanNode(ExecContext* ctx, TableInfo table, std::vector<int> table_columns, SchemaPtr schema,
                     std::vector<ExprPtr> filters, std::vector<int> keep, SchemaPtr out_schema) {
  return std::make_shared<ScanNode>(ctx, std::move(table), std::move(table_columns), std::move(schema),
                                    std::move(filters), std::move(keep), std::move(out_schema));
}
NodePtr MakeFilterNode(ExecContext* ctx, NodePtr child, ExprPtr predicate) {
  return std::make_shared<FilterNode>(ctx, std::move(child), std::move(predicate));
}
NodePtr MakeProjectNode(ExecContext* ctx, NodePtr child, std::vector<ExprPtr> exprs, SchemaPtr schema) {
  return std::make_shared<ProjectNode>(ctx, std::move(child), std::move(exprs), std::move(schema));
}
NodePtr MakeLimitNode(ExecContext* ctx, NodePtr child, int64_t offset, int64_t limit) {
  return std::make_shared<LimitNode>(ctx, std::move(child), offset, limit);
}
NodePtr MakeSingleRowNode(ExecContext* ctx) { return std::make_shared<SingleRowNode>(ctx); }

}  // namespace quiver::sql

// quiver/sql/execution/scan_project.cc — scan, filter, project, limit and
// the single-row source.
#include <algorithm>

#include "quiver/columnar/dictionary.h"
#include "quiver/sql/execution/operators.h"

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
  ScanOp(ExecContext* ctx, TableInfo table, std::vector<int> columns, SchemaPtr schema, std::vector<ExprPtr> filters)
      : ctx_(ctx), table_(std::move(table)), columns_(std::move(columns)), schema_(std::move(schema)) {
    if (!filters.empty()) filter_ = MakeAnd(filters);
  }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    auto r = NextImpl();
    if (!r.ok()) return NameOperator(r.status(), "scan");
    return r;
  }

 private:
  Result<RecordBatchPtr> NextImpl() {
    MemoryPool* pool = ctx_->scan_pool.get();
    if (!source_) {
      QUIVER_ASSIGN_OR_RETURN(source_, ctx_->catalog->OpenScan(table_, pool, columns_));
    }
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr in, source_->Next());
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
      if (filter_) {
        EvalContext ev = ctx_->Eval(pool);
        QUIVER_ASSIGN_OR_RETURN(auto sel, EvaluateSelection(*filter_, *b, &ev));
        if (sel.empty()) continue;
        QUIVER_ASSIGN_OR_RETURN(b, TakeRows(b, sel, pool));
      }
      return b;
    }
  }

  ExecContext* ctx_;
  TableInfo table_;
  std::vector<int> columns_;
  SchemaPtr schema_;
  ExprPtr filter_;
  std::unique_ptr<RecordBatchStream> source_;
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

}  // namespace

OperatorPtr MakeScan(ExecContext* ctx, TableInfo table, std::vector<int> table_columns, SchemaPtr schema,
                     std::vector<ExprPtr> filters) {
  return std::make_unique<ScanOp>(ctx, std::move(table), std::move(table_columns), std::move(schema),
                                  std::move(filters));
}
OperatorPtr MakeFilter(ExecContext* ctx, OperatorPtr child, ExprPtr predicate) {
  return std::make_unique<FilterOp>(ctx, std::move(child), std::move(predicate));
}
OperatorPtr MakeProject(ExecContext* ctx, OperatorPtr child, std::vector<ExprPtr> exprs, SchemaPtr schema) {
  return std::make_unique<ProjectOp>(ctx, std::move(child), std::move(exprs), std::move(schema));
}
OperatorPtr MakeLimit(OperatorPtr child, int64_t offset, int64_t limit) {
  return std::make_unique<LimitOp>(std::move(child), offset, limit);
}
OperatorPtr MakeSingleRow() { return std::make_unique<SingleRowOp>(); }

}  // namespace quiver::sql

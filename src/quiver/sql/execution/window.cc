// quiver/sql/execution/window.cc — the window node and its stream (see
// window.h): sort, cut the sorted rows into chunks of whole partitions,
// compute each chunk's layout (partitions, peer groups) and calls, up to
// one chunk a thread at once.
#include "quiver/sql/execution/window.h"

#include <cmath>

#include "quiver/columnar/concatenate.h"
#include "quiver/sql/execution/task_scheduler.h"
#include "quiver/sql/execution/window_evaluate.h"

namespace quiver::sql {
namespace {

// Row a of `ka` equals row b of `kb` on every key (NULL equals NULL, NaN
// equals NaN: the sort puts them together).
bool KeysEqual(const std::vector<Vec>& ka, int64_t a, const std::vector<Vec>& kb, int64_t b) {
  for (size_t i = 0; i < ka.size(); ++i) {
    const Vec& x = ka[i];
    const Vec& y = kb[i];
    const bool xn = x.IsNull(a), yn = y.IsNull(b);
    if (xn || yn) {
      if (xn != yn) return false;
      continue;
    }
    switch (ClassOf(*x.type())) {
      case TypeClass::kString:
        if (x.StringAt(a) != y.StringAt(b)) return false;
        break;
      case TypeClass::kFloat: {
        const double p = x.FloatAt(a), q = y.FloatAt(b);
        if (!(p == q || (std::isnan(p) && std::isnan(q)))) return false;
        break;
      }
      case TypeClass::kBool:
        if (x.BoolAt(a) != y.BoolAt(b)) return false;
        break;
      default:
        if (x.ExactAt(a) != y.ExactAt(b)) return false;
        break;
    }
  }
  return true;
}

Result<std::vector<Vec>> EvalAll(ExecContext* ctx, const std::vector<ExprPtr>& exprs, const RecordBatch& batch,
                                 MemoryPool* pool) {
  std::vector<Vec> out;
  EvalContext ev = ctx->Eval(pool);
  for (const auto& e : exprs) {
    QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(*e, batch, &ev));
    out.push_back(std::move(v));
  }
  return out;
}

class WindowOp : public RecordBatchStream {
 public:
  WindowOp(ExecContext* ctx, OperatorPtr input, const std::vector<WindowCall>* calls, SchemaPtr schema)
      : ctx_(ctx), input_(std::move(input)), calls_(calls), schema_(std::move(schema)) {
    for (const auto& p : (*calls_)[0].partition) partition_.push_back(p);
    for (const auto& o : (*calls_)[0].order) order_.push_back(o.expr);
  }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    auto r = NextImpl();
    if (!r.ok()) {
      input_.reset();
      pending_.clear();
      chunks_.clear();
      return NameOperator(r.status(), "window");
    }
    return r;
  }

 private:
  Result<RecordBatchPtr> NextImpl() {
    while (true) {
      if (out_at_ < out_.size()) {
        RecordBatchPtr b = std::move(out_[out_at_++]);
        if (out_at_ == out_.size()) {
          out_.clear();
          out_at_ = 0;
        }
        return b;
      }
      if (!input_) return RecordBatchPtr{};
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      if (static_cast<int>(chunks_.size()) >= std::max(1, ctx_->threads)) {
        QUIVER_RETURN_NOT_OK(ComputeChunks());
        continue;
      }
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, input_->Next());
      if (!b) {
        input_.reset();
        QUIVER_RETURN_NOT_OK(Flush(static_cast<int64_t>(-1), nullptr));
        QUIVER_RETURN_NOT_OK(ComputeChunks());
        continue;
      }
      if (b->num_rows == 0) continue;
      if (partition_.empty()) {  // one partition: everything
        pending_.push_back(std::move(b));
        continue;
      }
      QUIVER_ASSIGN_OR_RETURN(std::vector<Vec> keys, EvalAll(ctx_, partition_, *b, ctx_->sort_pool.get()));
      // The last row of `b` that starts a partition.
      int64_t cut = -1;
      for (int64_t r = b->num_rows - 1; r >= 1; --r)
        if (!KeysEqual(keys, r, keys, r - 1)) {
          cut = r;
          break;
        }
      if (cut < 0 && !pending_.empty() && !KeysEqual(keys, 0, last_keys_, last_row_)) cut = 0;
      last_keys_ = keys;
      last_row_ = b->num_rows - 1;
      if (cut < 0) {
        pending_.push_back(std::move(b));
        continue;
      }
      QUIVER_RETURN_NOT_OK(Flush(cut, b));
    }
  }

  // Computes the pending rows plus b's rows [0, cut) (cut < 0: the pending
  // rows only), keeping b's rows [cut, end) pending.
  Status Flush(int64_t cut, const RecordBatchPtr& b) {
    RecordBatchPtr rest;
    if (b && cut > 0) {
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr head, SliceBatch(b, 0, cut));
      pending_.push_back(std::move(head));
    }
    if (b) {
      QUIVER_ASSIGN_OR_RETURN(rest, SliceBatch(b, cut, b->num_rows - cut));
    }
    std::vector<RecordBatchPtr> chunk_parts = std::move(pending_);
    pending_.clear();
    if (rest) pending_.push_back(std::move(rest));
    if (chunk_parts.empty()) return Status::OK();
    chunks_.push_back(std::move(chunk_parts));
    return Status::OK();
  }

  // Computes the chunks of whole partitions cut so far, up to
  // ctx_->threads at once (one a task), their output in input order.
  Status ComputeChunks() {
    if (chunks_.empty()) return Status::OK();
    std::vector<std::vector<RecordBatchPtr>> outs(chunks_.size());
    QUIVER_RETURN_NOT_OK(ParallelFor(ctx_->scheduler.get(), static_cast<int>(chunks_.size()), [&](int i) -> Status {
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr chunk, Concat(chunks_[static_cast<size_t>(i)]));
      return Compute(chunk, &outs[static_cast<size_t>(i)]);
    }));
    chunks_.clear();
    for (auto& o : outs)
      for (auto& b : o) out_.push_back(std::move(b));
    return Status::OK();
  }

  Result<RecordBatchPtr> SliceBatch(const RecordBatchPtr& b, int64_t offset, int64_t length) {
    if (offset == 0 && length == b->num_rows) return b;
    std::vector<ArrayDataPtr> cols;
    for (const auto& c : b->columns) {
      QUIVER_ASSIGN_OR_RETURN(auto s, SliceArray(c, offset, length));
      cols.push_back(std::move(s));
    }
    return MakeBatch(b->schema, length, std::move(cols));
  }

  Result<RecordBatchPtr> Concat(const std::vector<RecordBatchPtr>& parts) {
    if (parts.size() == 1) return parts[0];
    int64_t rows = 0;
    for (const auto& b : parts) rows += b->num_rows;
    std::vector<ArrayDataPtr> cols;
    for (size_t c = 0; c < parts[0]->columns.size(); ++c) {
      std::vector<ArrayDataPtr> pieces;
      for (const auto& b : parts) pieces.push_back(b->columns[c]);
      QUIVER_ASSIGN_OR_RETURN(auto a, ConcatenateArrays(pieces, ctx_->sort_pool.get()));
      cols.push_back(std::move(a));
    }
    return MakeBatch(parts[0]->schema, rows, std::move(cols));
  }

  // Layout and calls of one chunk of whole partitions; its output batches
  // (at most max_batch_rows rows each) go to `out`. Called on several
  // chunks at once (ComputeChunks): touches nothing of the operator's but
  // what it only reads.
  Status Compute(const RecordBatchPtr& chunk, std::vector<RecordBatchPtr>* out) {
    MemoryPool* pool = ctx_->sort_pool.get();
    const int64_t n = chunk->num_rows;
    const size_t un = static_cast<size_t>(n);
    WindowLayout layout;
    layout.rows = n;
    QUIVER_ASSIGN_OR_RETURN(auto reservation, ctx_->aggregate_tmm->Reserve(n * 16, "window peer groups"));
    QUIVER_ASSIGN_OR_RETURN(std::vector<Vec> pkeys, EvalAll(ctx_, partition_, *chunk, pool));
    QUIVER_ASSIGN_OR_RETURN(layout.order_keys, EvalAll(ctx_, order_, *chunk, pool));
    layout.partition_starts.push_back(0);
    for (int64_t i = 1; i < n; ++i)
      if (!pkeys.empty() && !KeysEqual(pkeys, i, pkeys, i - 1)) layout.partition_starts.push_back(i);
    layout.partition_starts.push_back(n);
    layout.peer_begin.assign(un, 0);
    layout.peer_end.assign(un, 0);
    for (size_t p = 0; p + 1 < layout.partition_starts.size(); ++p) {
      const int64_t ps = layout.partition_starts[p], pe = layout.partition_starts[p + 1];
      int64_t gb = ps;
      for (int64_t i = ps; i < pe; ++i) {
        if (i > ps && !layout.order_keys.empty() && !KeysEqual(layout.order_keys, i, layout.order_keys, i - 1)) {
          for (int64_t j = gb; j < i; ++j) layout.peer_end[static_cast<size_t>(j)] = i;
          gb = i;
        }
        layout.peer_begin[static_cast<size_t>(i)] = gb;
      }
      for (int64_t j = gb; j < pe; ++j) layout.peer_end[static_cast<size_t>(j)] = pe;
    }
    QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    std::vector<ArrayDataPtr> cols = chunk->columns;
    for (const auto& call : *calls_) {
      QUIVER_ASSIGN_OR_RETURN(auto a, EvaluateWindowCall(ctx_, call, *chunk, layout, pool));
      cols.push_back(std::move(a));
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    }
    RecordBatchPtr all = MakeBatch(schema_, n, std::move(cols));
    for (int64_t at = 0; at < n; at += ctx_->max_batch_rows) {
      QUIVER_ASSIGN_OR_RETURN(auto piece, SliceBatch(all, at, std::min(ctx_->max_batch_rows, n - at)));
      out->push_back(std::move(piece));
    }
    return Status::OK();
  }

  ExecContext* ctx_;
  OperatorPtr input_;
  const std::vector<WindowCall>* calls_;
  SchemaPtr schema_;
  std::vector<ExprPtr> partition_, order_;
  std::vector<RecordBatchPtr> pending_;  // rows of the partition not yet complete
  std::vector<Vec> last_keys_;           // partition keys of the last pending batch
  int64_t last_row_ = 0;
  // Chunks of whole partitions cut, not computed yet (each in pieces).
  std::vector<std::vector<RecordBatchPtr>> chunks_;
  std::vector<RecordBatchPtr> out_;
  size_t out_at_ = 0;
};

class WindowNode : public PhysicalNode {
 public:
  WindowNode(ExecContext* ctx, NodePtr child, std::vector<WindowCall> calls, SchemaPtr schema)
      : PhysicalNode(ctx, std::move(schema)), child_(std::move(child)), calls_(std::move(calls)) {}
  bool parallel() const override { return false; }
  Result<OperatorPtr> Instantiate() override {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, Gathered(ctx_, input_));
    return OperatorPtr(std::make_unique<WindowOp>(ctx_, std::move(in), &calls_, schema_));
  }
  void Release() override {
    if (input_) input_->Release();
  }

 protected:
  Status DoPrepare() override {
    // PARTITION BY keys (any consistent order), then ORDER BY.
    std::vector<SortKey> keys;
    for (const auto& p : calls_[0].partition) keys.push_back({p, false, false});
    for (const auto& o : calls_[0].order) keys.push_back(o);
    if (keys.empty()) {
      input_ = child_;
    } else {
      QUIVER_ASSIGN_OR_RETURN(input_, MakeSortNode(ctx_, child_, std::move(keys), 0, -1));
    }
    return NameOperator(input_->Prepare(), "window");
  }

 private:
  NodePtr child_;
  NodePtr input_;
  std::vector<WindowCall> calls_;
};

}  // namespace

Result<NodePtr> MakeWindowNode(ExecContext* ctx, NodePtr child, std::vector<WindowCall> calls, SchemaPtr schema) {
  if (calls.empty()) return Status::Invalid("internal: a window node without calls");
  return NodePtr(std::make_shared<WindowNode>(ctx, std::move(child), std::move(calls), std::move(schema)));
}

}  // namespace quiver::sql

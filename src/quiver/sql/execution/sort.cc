// quiver/sql/execution/sort.cc — ORDER BY: the input is collected (sort
// pool), concatenated, and a permutation of row numbers sorted by the keys
// (typed comparisons; NULLS FIRST / LAST per key; stable); the output is
// gathered in batches. With a LIMIT it is a top-N: whenever the kept rows
// pass max(2 x (offset + limit), 4096) they are cut down to the best
// offset + limit, so memory stays bounded by the limit plus one batch and
// there is never a full sort.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "quiver/columnar/concatenate.h"
#include "quiver/sql/execution/operators.h"
#include "quiver/sql/execution/pipeline.h"

namespace quiver::sql {
namespace {

// Row a before row b of one batch by the sort keys (NULLS FIRST / LAST,
// DESC per key), ties by row number (stable).
struct KeyLess {
  const std::vector<SortKey>* keys;
  std::vector<Vec> k;
  std::vector<TypeClass> cls;

  static Result<KeyLess> Make(ExecContext* ctx, const std::vector<SortKey>& keys, const RecordBatch& batch) {
    KeyLess out;
    out.keys = &keys;
    EvalContext ev = ctx->Eval(ctx->sort_pool.get());
    for (const auto& key : keys) {
      QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(*key.expr, batch, &ev));
      out.k.push_back(std::move(v));
    }
    for (const auto& v : out.k) out.cls.push_back(ClassOf(*v.type()));
    return out;
  }

  bool operator()(int64_t a, int64_t b) const {
    for (size_t i = 0; i < k.size(); ++i) {
      const Vec& v = k[i];
      const bool an = v.IsNull(a), bn = v.IsNull(b);
      int c = 0;
      if (an || bn) {
        if (an && bn) continue;
        return an ? (*keys)[i].nulls_first : !(*keys)[i].nulls_first;
      } else {
        switch (cls[i]) {
          case TypeClass::kString: c = v.StringAt(a).compare(v.StringAt(b)); break;
          case TypeClass::kFloat: {
            const double x = v.FloatAt(a), y = v.FloatAt(b);
            const bool xn = std::isnan(x), yn = std::isnan(y);
            c = (xn || yn) ? (xn == yn ? 0 : (xn ? 1 : -1)) : (x < y ? -1 : (x > y ? 1 : 0));
            break;
          }
          default: {
            const i128 x = v.ExactAt(a), y = v.ExactAt(b);
            c = x < y ? -1 : (x > y ? 1 : 0);
            break;
          }
        }
      }
      if (c != 0) return (*keys)[i].descending ? c > 0 : c < 0;
    }
    return a < b;  // stable
  }
};

// Sorts its input (or, given run_rows, merges sorted runs: the input is
// the runs one after the other, run_rows[r] rows each) and emits it in
// batches; with limit >= 0 a top-N.
class SortOp : public RecordBatchStream {
 public:
  SortOp(ExecContext* ctx, OperatorPtr child, std::vector<SortKey> keys, int64_t offset, int64_t limit,
         std::vector<int64_t> run_rows = {})
      : ctx_(ctx),
        child_(std::move(child)),
        keys_(std::move(keys)),
        offset_(offset),
        limit_(limit),
        run_rows_(std::move(run_rows)) {
    schema_ = child_->schema();
  }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    auto r = NextImpl();
    if (!r.ok()) return NameOperator(r.status(), "sort");
    return r;
  }

 private:
  // All kept rows as one batch.
  Result<RecordBatchPtr> Concat() {
    if (kept_.size() == 1) return kept_[0];
    int64_t rows = 0;
    for (const auto& b : kept_) rows += b->num_rows;
    std::vector<ArrayDataPtr> cols;
    for (size_t c = 0; c < schema_->fields.size(); ++c) {
      std::vector<ArrayDataPtr> parts;
      for (const auto& b : kept_) parts.push_back(b->columns[c]);
      QUIVER_ASSIGN_OR_RETURN(auto a, ConcatenateArrays(parts, ctx_->sort_pool.get()));
      cols.push_back(a);
    }
    return MakeBatch(schema_, rows, std::move(cols));
  }

  // Sorted row order of `batch` (the best `keep` rows when keep >= 0).
  Result<std::vector<int64_t>> Order(const RecordBatch& batch, int64_t keep) {
    QUIVER_ASSIGN_OR_RETURN(const KeyLess cmp, KeyLess::Make(ctx_, keys_, batch));
    std::vector<int64_t> idx(static_cast<size_t>(batch.num_rows));
    std::iota(idx.begin(), idx.end(), int64_t{0});
    QUIVER_ASSIGN_OR_RETURN(auto reservation, ctx_->aggregate_tmm->Reserve(batch.num_rows * 8, "sort permutation"));
    if (keep >= 0 && keep < batch.num_rows) {
      std::partial_sort(idx.begin(), idx.begin() + keep, idx.end(), cmp);
      idx.resize(static_cast<size_t>(keep));
    } else {
      std::sort(idx.begin(), idx.end(), cmp);
    }
    return idx;
  }

  // The row order of `batch`, the sorted runs of run_rows_ one after the
  // other: a k-way merge (a heap of the runs' next rows), ties by row
  // number, so equal keys keep run order then row order.
  Result<std::vector<int64_t>> MergeRuns(const RecordBatch& batch) {
    QUIVER_ASSIGN_OR_RETURN(const KeyLess less, KeyLess::Make(ctx_, keys_, batch));
    QUIVER_ASSIGN_OR_RETURN(auto reservation, ctx_->aggregate_tmm->Reserve(batch.num_rows * 8, "sort merge order"));
    std::vector<int64_t> next, end;
    int64_t at = 0;
    for (int64_t rows : run_rows_) {
      next.push_back(at);
      at += rows;
      end.push_back(at);
    }
    if (at != batch.num_rows)
      return Status::Invalid("internal: sorted runs of " + std::to_string(at) + " rows, " +
                             std::to_string(batch.num_rows) + " rows to merge");
    // A min-heap of runs by their next row.
    auto later = [&](size_t x, size_t y) { return less(next[y], next[x]); };
    std::vector<size_t> heap;
    for (size_t r = 0; r < next.size(); ++r)
      if (next[r] < end[r]) heap.push_back(r);
    std::make_heap(heap.begin(), heap.end(), later);
    std::vector<int64_t> order;
    order.reserve(static_cast<size_t>(batch.num_rows));
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), later);
      const size_t r = heap.back();
      order.push_back(next[r]++);
      if (next[r] < end[r]) {
        std::push_heap(heap.begin(), heap.end(), later);
      } else {
        heap.pop_back();
      }
      if ((order.size() & 65535) == 0) QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    }
    return order;
  }

  Status Compact() {
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr all, Concat());
    const int64_t keep = offset_ + limit_;
    QUIVER_ASSIGN_OR_RETURN(auto idx, Order(*all, keep));
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr top, TakeRows(all, idx, ctx_->sort_pool.get()));
    kept_ = {top};
    kept_rows_ = top->num_rows;
    return Status::OK();
  }

  Result<RecordBatchPtr> NextImpl() {
    if (!sorted_) {
      const bool top_n = limit_ >= 0;
      const int64_t threshold = top_n ? std::max<int64_t>(2 * (offset_ + limit_), 4096) : 0;
      while (true) {
        QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr in, child_->Next());
        if (!in) break;
        if (in->num_rows == 0) continue;
        if (top_n && limit_ == 0) continue;
        kept_.push_back(in);
        kept_rows_ += in->num_rows;
        if (top_n && kept_rows_ > threshold) QUIVER_RETURN_NOT_OK(Compact());
      }
      child_.reset();
      sorted_ = true;
      if (kept_.empty()) return RecordBatchPtr{};
      QUIVER_ASSIGN_OR_RETURN(all_, Concat());
      kept_.clear();
      if (run_rows_.empty() || top_n) {
        QUIVER_ASSIGN_OR_RETURN(order_, Order(*all_, top_n ? offset_ + limit_ : -1));
      } else {
        QUIVER_ASSIGN_OR_RETURN(order_, MergeRuns(*all_));
      }
      pos_ = std::min<int64_t>(offset_, static_cast<int64_t>(order_.size()));
      end_ = top_n ? std::min<int64_t>(offset_ + limit_, static_cast<int64_t>(order_.size()))
                   : static_cast<int64_t>(order_.size());
    }
    if (!all_ || pos_ >= end_) {
      all_.reset();
      return RecordBatchPtr{};
    }
    const int64_t n = std::min(ctx_->max_batch_rows, end_ - pos_);
    std::vector<int64_t> rows(order_.begin() + pos_, order_.begin() + pos_ + n);
    pos_ += n;
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr out, TakeRows(all_, rows, ctx_->sort_pool.get()));
    if (pos_ >= end_) {
      all_.reset();
      order_.clear();
    }
    return out;
  }

  ExecContext* ctx_;
  OperatorPtr child_;
  std::vector<SortKey> keys_;
  int64_t offset_, limit_;
  std::vector<int64_t> run_rows_;
  SchemaPtr schema_;
  std::vector<RecordBatchPtr> kept_;
  int64_t kept_rows_ = 0;
  bool sorted_ = false;
  RecordBatchPtr all_;
  std::vector<int64_t> order_;
  int64_t pos_ = 0, end_ = 0;
};

// A stream read through without owning it (a worker's instance).
class BorrowedStream : public RecordBatchStream {
 public:
  explicit BorrowedStream(RecordBatchStream* in) : in_(in) {}
  const SchemaPtr& schema() const override { return in_->schema(); }
  Result<RecordBatchPtr> Next() override { return in_->Next(); }

 private:
  RecordBatchStream* in_;
};

// ORDER BY: every worker collects its share of the input and sorts it into
// a run (a top-N keeps only its best offset + limit rows), then the runs
// are merged (k-way; a top-N: one sort over what the workers kept) into
// the output.
class SortNode : public PhysicalNode {
 public:
  SortNode(ExecContext* ctx, NodePtr child, std::vector<SortKey> keys, int64_t offset, int64_t limit)
      : PhysicalNode(ctx, child->schema()),
        child_(std::move(child)),
        keys_(std::move(keys)),
        offset_(offset),
        limit_(limit) {}
  bool parallel() const override { return false; }
  Result<OperatorPtr> Instantiate() override {
    std::vector<RecordBatchPtr> all;
    std::vector<int64_t> run_rows;
    for (auto& part : parts_) {
      int64_t rows = 0;
      for (auto& b : part) {
        rows += b->num_rows;
        all.push_back(std::move(b));
      }
      run_rows.push_back(rows);
    }
    parts_.clear();
    if (!sort_runs_) run_rows.clear();
    return OperatorPtr(std::make_unique<SortOp>(ctx_, MakeBatchesStream(schema_, std::move(all)), keys_, offset_,
                                                limit_, std::move(run_rows)));
  }
  void Release() override { parts_.clear(); }

 protected:
  Status DoPrepare() override {
    QUIVER_RETURN_NOT_OK(child_->Prepare());
    parts_.resize(static_cast<size_t>(DegreeOf(*ctx_, *child_)));
    const bool top_n = limit_ >= 0 && parts_.size() > 1;
    // A full sort on several workers: each sorts its share into a run.
    sort_runs_ = limit_ < 0 && parts_.size() > 1;
    Status st =
        RunPipeline(ctx_, child_, [&](int worker, RecordBatchStream* in, const std::atomic<bool>& stop) -> Status {
          auto& out = parts_[static_cast<size_t>(worker)];
          OperatorPtr src = std::make_unique<BorrowedStream>(in);
          if (top_n) src = std::make_unique<SortOp>(ctx_, std::move(src), keys_, 0, offset_ + limit_);
          if (sort_runs_) src = std::make_unique<SortOp>(ctx_, std::move(src), keys_, 0, -1);
          while (!stop.load(std::memory_order_relaxed)) {
            QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
            QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, src->Next());
            if (!b) break;
            if (b->num_rows > 0) out.push_back(std::move(b));
          }
          return Status::OK();
        });
    if (!st.ok()) {
      parts_.clear();
      return NameOperator(st, "sort");
    }
    return Status::OK();
  }

 private:
  NodePtr child_;
  std::vector<SortKey> keys_;
  int64_t offset_, limit_;
  bool sort_runs_ = false;
  std::vector<std::vector<RecordBatchPtr>> parts_;
};

}  // namespace

Result<NodePtr> MakeSortNode(ExecContext* ctx, NodePtr child, std::vector<SortKey> keys, int64_t offset,
                             int64_t limit) {
  return NodePtr(std::make_shared<SortNode>(ctx, std::move(child), std::move(keys), offset, limit));
}

}  // namespace quiver::sql

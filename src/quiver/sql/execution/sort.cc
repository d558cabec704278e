// quiver/sql/execution/sort.cc — ORDER BY: the input is collected (sort
// pool) and a permutation of row numbers sorted by the keys (NULLS FIRST /
// LAST per key; stable): where the keys pack into 64 bits, by normalized
// keys and a radix sort across the collected batches as they are
// (sort_keys.h), else by typed comparisons over the batches concatenated;
// the output is gathered in batches. With a LIMIT it is a top-N: whenever the kept rows
// pass max(2 x (offset + limit), 4096) they are cut down to the best
// offset + limit, so memory stays bounded by the limit plus one batch and
// there is never a full sort.
//
// A full sort under a memory limit with spilling on is an external merge
// sort (Spark's UnsafeExternalSorter, DuckDB's sort with its temporary
// directory): each worker holds its share of the input and, whenever the
// statement's memory gets tight, sorts what it holds into a run written
// to a spill file (compressed Arrow IPC, batches of about 256 KiB). At the
// end of the input the workers sort what they still hold into runs, in
// memory when it fits and on disk once anything was spilled; runs on disk
// are merged in passes of at most a fan-in the memory left allows, and the
// last pass streams the output out of a k-way merge (a heap of the runs'
// next rows, ties by run: stable across runs).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>

#include "quiver/columnar/concatenate.h"
#include "quiver/columnar/take.h"
#include "quiver/sql/execution/operators.h"
#include "quiver/sql/execution/pipeline.h"
#include "quiver/sql/execution/sort_keys.h"
#include "quiver/sql/execution/spill.h"
#include "quiver/sql/execution/task_scheduler.h"

namespace quiver::sql {
namespace {

// Row a of the keys `ka` against row b of the keys `kb` (one Vec a sort
// key, the key classes in `cls`): negative when a sorts first, positive
// when b does, 0 on equal keys (NULLS FIRST / LAST and DESC applied).
inline int CompareKeys(const std::vector<SortKey>& keys, const std::vector<TypeClass>& cls, const std::vector<Vec>& ka,
                       int64_t a, const std::vector<Vec>& kb, int64_t b) {
  for (size_t i = 0; i < cls.size(); ++i) {
    const Vec& va = ka[i];
    const Vec& vb = kb[i];
    const bool an = va.IsNull(a), bn = vb.IsNull(b);
    int c = 0;
    if (an || bn) {
      if (an && bn) continue;
      return (an == keys[i].nulls_first) ? -1 : 1;
    }
    switch (cls[i]) {
      case TypeClass::kString: c = va.StringAt(a).compare(vb.StringAt(b)); break;
      case TypeClass::kFloat: {
        const double x = va.FloatAt(a), y = vb.FloatAt(b);
        const bool xn = std::isnan(x), yn = std::isnan(y);
        c = (xn || yn) ? (xn == yn ? 0 : (xn ? 1 : -1)) : (x < y ? -1 : (x > y ? 1 : 0));
        break;
      }
      default: {
        const i128 x = va.ExactAt(a), y = vb.ExactAt(b);
        c = x < y ? -1 : (x > y ? 1 : 0);
        break;
      }
    }
    if (c != 0) return keys[i].descending ? -c : c;
  }
  return 0;
}

// The sort keys of `batch`, evaluated (computed keys into the sort pool).
Result<std::vector<Vec>> EvalKeys(ExecContext* ctx, const std::vector<SortKey>& keys, const RecordBatch& batch) {
  std::vector<Vec> out;
  EvalContext ev = ctx->Eval(ctx->sort_pool.get());
  for (const auto& key : keys) {
    QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(*key.expr, batch, &ev));
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<TypeClass> ClassesOf(const std::vector<Vec>& k) {
  std::vector<TypeClass> cls;
  for (const auto& v : k) cls.push_back(ClassOf(*v.type()));
  return cls;
}

// Row a before row b of one batch by the sort keys, ties by row number
// (stable).
struct KeyLess {
  const std::vector<SortKey>* keys;
  std::vector<Vec> k;
  std::vector<TypeClass> cls;

  static Result<KeyLess> Make(ExecContext* ctx, const std::vector<SortKey>& keys, const RecordBatch& batch) {
    KeyLess out;
    out.keys = &keys;
    QUIVER_ASSIGN_OR_RETURN(out.k, EvalKeys(ctx, keys, batch));
    out.cls = ClassesOf(out.k);
    return out;
  }

  bool operator()(int64_t a, int64_t b) const {
    const int c = CompareKeys(*keys, cls, k, a, k, b);
    return c != 0 ? c < 0 : a < b;
  }
};

int64_t BatchBytes(const RecordBatch& b) {
  int64_t n = 0;
  for (const auto& c : b.columns) n += c->TotalBufferBytes();
  return n;
}

// The rows `rows` of `sources` (batches of `schema`) as one new batch.
Result<RecordBatchPtr> InterleaveRows(const SchemaPtr& schema, const std::vector<RecordBatchPtr>& sources,
                                      const std::vector<SourceRow>& rows, MemoryPool* pool) {
  std::vector<ArrayDataPtr> cols;
  std::vector<const ArrayData*> arrays(sources.size());
  for (size_t c = 0; c < schema->fields.size(); ++c) {
    for (size_t s = 0; s < sources.size(); ++s) arrays[s] = sources[s]->columns[c].get();
    QUIVER_ASSIGN_OR_RETURN(auto a, Interleave(arrays, rows, pool, "column '" + schema->fields[c]->name + "'"));
    cols.push_back(std::move(a));
  }
  return MakeBatch(schema, static_cast<int64_t>(rows.size()), std::move(cols));
}

// Sorts the rows of `batches` (of `schema`, each under 2^32 rows) into
// batches of at most `chunk_rows` rows handed to `sink` in order; equal
// keys keep batch then row order. The order (8 B a row) is reserved from
// the aggregate task memory manager.
Status SortBatches(ExecContext* ctx, const std::vector<SortKey>& keys, const SchemaPtr& schema,
                   const std::vector<RecordBatchPtr>& batches, int64_t chunk_rows,
                   const std::function<Status(RecordBatchPtr)>& sink) {
  std::vector<std::vector<Vec>> k;
  std::vector<int64_t> batch_rows;
  int64_t rows = 0;
  for (const auto& b : batches) {
    QUIVER_ASSIGN_OR_RETURN(auto v, EvalKeys(ctx, keys, *b));
    k.push_back(std::move(v));
    batch_rows.push_back(b->num_rows);
    rows += b->num_rows;
  }
  if (rows == 0) return Status::OK();
  QUIVER_ASSIGN_OR_RETURN(auto reservation, ctx->aggregate_tmm->Reserve(rows * 8, "sort run order"));
  SortWords order;
  QUIVER_ASSIGN_OR_RETURN(const bool packed, SortByNormalizedKeys(ctx, keys, k, batch_rows, &order));
  if (!packed) {  // VARCHAR keys, or ranges wider than 64 bits: typed comparisons
    const std::vector<TypeClass> cls = ClassesOf(k[0]);
    order.reserve(static_cast<size_t>(rows));
    for (size_t b = 0; b < batches.size(); ++b)
      for (int64_t r = 0; r < batches[b]->num_rows; ++r)
        order.push_back((uint64_t{b} << 32) | static_cast<uint64_t>(r));
    std::sort(order.begin(), order.end(), [&](uint64_t x, uint64_t y) {
      const int c = CompareKeys(keys, cls, k[x >> 32], static_cast<int64_t>(x & 0xffffffffu), k[y >> 32],
                                static_cast<int64_t>(y & 0xffffffffu));
      return c != 0 ? c < 0 : x < y;
    });
  }
  QUIVER_RETURN_NOT_OK(ctx->CheckCancel());
  std::vector<SourceRow> chunk;
  for (size_t at = 0; at < order.size();) {
    QUIVER_RETURN_NOT_OK(ctx->CheckCancel());
    const size_t end = std::min(order.size(), at + static_cast<size_t>(chunk_rows));
    chunk.clear();
    for (; at < end; ++at)
      chunk.push_back({static_cast<int32_t>(order[at] >> 32), static_cast<int64_t>(order[at] & 0xffffffffu)});
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr out, InterleaveRows(schema, batches, chunk, ctx->sort_pool.get()));
    QUIVER_RETURN_NOT_OK(sink(std::move(out)));
  }
  return Status::OK();
}

// A k-way merge of sorted runs (streams of sorted batches): batches of up
// to `out_rows` rows in key order, ties by run (the earlier run first).
// Holds each run's current batch (and, until the output batch is built,
// the batches it has rows from).
class RunMerger {
 public:
  RunMerger(ExecContext* ctx, const std::vector<SortKey>* keys, SchemaPtr schema, std::vector<OperatorPtr> runs,
            int64_t out_rows)
      : ctx_(ctx), keys_(keys), schema_(std::move(schema)), out_rows_(out_rows) {
    for (auto& r : runs) inputs_.push_back(Input{std::move(r), nullptr, {}, 0, -1});
  }

  Result<RecordBatchPtr> Next() {
    if (!started_) {
      started_ = true;
      for (size_t i = 0; i < inputs_.size(); ++i) {
        QUIVER_RETURN_NOT_OK(Load(i));
        if (inputs_[i].batch) heap_.push_back(i);
      }
      std::make_heap(heap_.begin(), heap_.end(), Later());
    }
    if (heap_.empty()) return RecordBatchPtr{};
    std::vector<RecordBatchPtr> sources;
    std::vector<SourceRow> rows;
    rows.reserve(static_cast<size_t>(out_rows_));
    while (!heap_.empty() && static_cast<int64_t>(rows.size()) < out_rows_) {
      std::pop_heap(heap_.begin(), heap_.end(), Later());
      const size_t i = heap_.back();
      Input& in = inputs_[i];
      if (in.slot < 0) {
        in.slot = static_cast<int32_t>(sources.size());
        sources.push_back(in.batch);
      }
      rows.push_back({in.slot, in.row++});
      if (in.row < in.batch->num_rows) {
        std::push_heap(heap_.begin(), heap_.end(), Later());
        continue;
      }
      QUIVER_RETURN_NOT_OK(Load(i));
      if (in.batch) {
        std::push_heap(heap_.begin(), heap_.end(), Later());
      } else {
        heap_.pop_back();
      }
    }
    for (auto& in : inputs_) in.slot = -1;
    return InterleaveRows(schema_, sources, rows, ctx_->sort_pool.get());
  }

 private:
  struct Input {
    OperatorPtr stream;
    RecordBatchPtr batch;  // the current one (null: run done)
    std::vector<Vec> keys;
    int64_t row;
    int32_t slot;  // its batch's position in the output's sources (-1: none)
  };

  // The run's next non-empty batch and its keys (batch null at its end).
  Status Load(size_t i) {
    Input& in = inputs_[i];
    in.batch.reset();
    in.keys.clear();
    in.slot = -1;
    in.row = 0;
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, in.stream->Next());
      if (!b) {
        in.stream.reset();  // a spill file goes as its reader does
        return Status::OK();
      }
      if (b->num_rows == 0) continue;
      QUIVER_ASSIGN_OR_RETURN(in.keys, EvalKeys(ctx_, *keys_, *b));
      if (cls_.empty()) cls_ = ClassesOf(in.keys);
      in.batch = std::move(b);
      return Status::OK();
    }
  }

  // Heap order: x after y (a max-heap on "later" is a min-heap on rows).
  struct LaterFn {
    const RunMerger* m;
    bool operator()(size_t x, size_t y) const {
      const Input& a = m->inputs_[x];
      const Input& b = m->inputs_[y];
      const int c = CompareKeys(*m->keys_, m->cls_, a.keys, a.row, b.keys, b.row);
      return c != 0 ? c > 0 : x > y;
    }
  };
  LaterFn Later() const { return LaterFn{this}; }

  ExecContext* ctx_;
  const std::vector<SortKey>* keys_;
  SchemaPtr schema_;
  int64_t out_rows_;
  std::vector<Input> inputs_;
  std::vector<TypeClass> cls_;
  std::vector<size_t> heap_;
  bool started_ = false;
};

// The output of an external sort: the merge of its last runs, the first
// `offset` rows left out.
class MergeRunsOp : public RecordBatchStream {
 public:
  MergeRunsOp(ExecContext* ctx, std::unique_ptr<RunMerger> merger, SchemaPtr schema, int64_t offset)
      : ctx_(ctx), merger_(std::move(merger)), schema_(std::move(schema)), skip_(offset) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    auto r = NextImpl();
    if (!r.ok()) {
      merger_.reset();
      return NameOperator(r.status(), "sort");
    }
    return r;
  }

 private:
  Result<RecordBatchPtr> NextImpl() {
    while (merger_) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, merger_->Next());
      if (!b) {
        merger_.reset();
        break;
      }
      if (skip_ >= b->num_rows) {
        skip_ -= b->num_rows;
        continue;
      }
      if (skip_ > 0) {
        std::vector<ArrayDataPtr> cols;
        for (const auto& c : b->columns) {
          QUIVER_ASSIGN_OR_RETURN(auto s, SliceArray(c, skip_, b->num_rows - skip_));
          cols.push_back(std::move(s));
        }
        b = MakeBatch(schema_, b->num_rows - skip_, std::move(cols));
        skip_ = 0;
      }
      return b;
    }
    return RecordBatchPtr{};
  }

  ExecContext* ctx_;
  std::unique_ptr<RunMerger> merger_;
  SchemaPtr schema_;
  int64_t skip_;
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

  // A full sort of the kept batches as they are (no concatenation): by
  // normalized keys across the batches, across_ as (batch << 32 | row);
  // stable, so for sorted runs one after the other it is their merge
  // (ties by run, then row).
  // False when the keys do not pack or the input is too small or too
  // large for it (then the kept batches are left for the other paths).
  Result<bool> SortAcrossBatches() {
    if (!KeyTypesPack(keys_) || kept_rows_ < 2 || kept_.size() >= (size_t{1} << 31)) return false;
    std::vector<std::vector<Vec>> k;
    std::vector<int64_t> batch_rows;
    k.reserve(kept_.size());
    for (const auto& b : kept_) {
      if (b->num_rows >= (int64_t{1} << 32)) return false;
      QUIVER_ASSIGN_OR_RETURN(auto v, EvalKeys(ctx_, keys_, *b));
      k.push_back(std::move(v));
      batch_rows.push_back(b->num_rows);
    }
    // The permutation (8 B a row) for as long as it is read; the sort's
    // scratch is reserved by SortByNormalizedKeys.
    QUIVER_ASSIGN_OR_RETURN(across_reservation_, ctx_->aggregate_tmm->Reserve(kept_rows_ * 8, "sort permutation"));
    QUIVER_ASSIGN_OR_RETURN(const bool packed, SortByNormalizedKeys(ctx_, keys_, k, batch_rows, &across_));
    if (!packed) across_reservation_ = {};
    return packed;
  }

  // The next output batch of a sort across batches (SortAcrossBatches):
  // its rows gathered from the kept batches, which are dropped at the end.
  // Up to ctx_->threads batches are gathered at once, one a task.
  Result<RecordBatchPtr> NextAcrossBatches() {
    if (ready_at_ < ready_.size()) return std::move(ready_[ready_at_++]);
    ready_.clear();
    ready_at_ = 0;
    if (pos_ >= end_) {
      sources_.clear();
      across_ = {};
      across_reservation_ = {};
      return RecordBatchPtr{};
    }
    const int64_t per = ctx_->max_batch_rows;
    const int tasks = static_cast<int>(std::clamp<int64_t>((end_ - pos_ + per - 1) / per, 1, ctx_->threads));
    ready_.resize(static_cast<size_t>(tasks));
    QUIVER_RETURN_NOT_OK(ParallelFor(ctx_->scheduler.get(), tasks, [&](int t) -> Status {
      const int64_t begin = pos_ + per * t;
      const int64_t n = std::min(per, end_ - begin);
      std::vector<SourceRow> rows(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t w = across_[static_cast<size_t>(begin + i)];
        rows[static_cast<size_t>(i)] = {static_cast<int32_t>(w >> 32), static_cast<int64_t>(w & 0xffffffffu)};
      }
      QUIVER_ASSIGN_OR_RETURN(ready_[static_cast<size_t>(t)],
                              InterleaveRows(schema_, sources_, rows, ctx_->sort_pool.get()));
      return Status::OK();
    }));
    pos_ = std::min(end_, pos_ + per * tasks);
    if (pos_ >= end_) {
      sources_.clear();
      across_ = {};
      across_reservation_ = {};
    }
    return std::move(ready_[ready_at_++]);
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
      bool across = false;
      if (!top_n) {
        QUIVER_ASSIGN_OR_RETURN(across, SortAcrossBatches());
      }
      if (across) {
        across_mode_ = true;
        sources_ = std::move(kept_);
        kept_.clear();
        pos_ = std::min<int64_t>(offset_, static_cast<int64_t>(across_.size()));
        end_ = static_cast<int64_t>(across_.size());
      } else {
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
    }
    if (across_mode_) return NextAcrossBatches();
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
  bool across_mode_ = false;             // a sort across batches (SortAcrossBatches)
  std::vector<RecordBatchPtr> sources_;  // its kept batches
  std::vector<RecordBatchPtr> ready_;    // its output batches gathered ahead
  size_t ready_at_ = 0;                  // the next of ready_ to return
  std::vector<int64_t> order_;
  SortWords across_;                            // a sort across batches: (batch << 32 | row) in order
  join::MemoryReservation across_reservation_;  // across_'s bytes
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
// the output. A full sort that may spill (a memory limit, spilling on) is
// an external merge sort (see the file comment).
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
    if (external_) {
      std::vector<OperatorPtr> runs;
      for (auto& run : memory_runs_) runs.push_back(MakeBatchesStream(schema_, std::move(run)));
      memory_runs_.clear();
      for (const SpillFile& f : disk_runs_) {
        QUIVER_ASSIGN_OR_RETURN(auto in, ctx_->spill->Open(f, ctx_->sort_pool.get()));
        runs.push_back(std::move(in));
      }
      disk_runs_.clear();
      auto merger = std::make_unique<RunMerger>(ctx_, &keys_, schema_, std::move(runs), ctx_->max_batch_rows);
      return OperatorPtr(std::make_unique<MergeRunsOp>(ctx_, std::move(merger), schema_, offset_));
    }
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
  void Release() override {
    parts_.clear();
    memory_runs_.clear();
    disk_runs_.clear();  // their readers were never opened: the manager removes the files
  }

 protected:
  Status DoPrepare() override {
    QUIVER_RETURN_NOT_OK(child_->Prepare());
    parts_.resize(static_cast<size_t>(DegreeOf(*ctx_, *child_)));
    external_ = limit_ < 0 && ctx_->spill && ctx_->spill_reserve_bytes > 0;
    Status st = external_ ? PrepareExternal() : PrepareInMemory();
    if (!st.ok()) {
      Release();
      return NameOperator(st, "sort");
    }
    return Status::OK();
  }

 private:
  Status PrepareInMemory() {
    const bool top_n = limit_ >= 0 && parts_.size() > 1;
    // A full sort on several workers: each sorts its share into a run.
    // (Not when the keys may pack: the final radix sort of everything costs
    // about what merging the runs does, so sorting them first is waste.)
    sort_runs_ = limit_ < 0 && parts_.size() > 1 && !KeyTypesPack(keys_);
    return RunPipeline(ctx_, child_, [&](int worker, RecordBatchStream* in, const std::atomic<bool>& stop) -> Status {
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
  }

  // Rows a batch of a spilled run holds: about 256 KiB of the input's
  // width (the merge holds one or two batches of every run it reads).
  int64_t SpillBatchRows(const RecordBatch& sample) const {
    constexpr int64_t kSpillBatchBytes = 256 << 10;
    const int64_t row_bytes = std::max<int64_t>(1, BatchBytes(sample) / std::max<int64_t>(1, sample.num_rows));
    return std::clamp<int64_t>(kSpillBatchBytes / row_bytes, 64, ctx_->max_batch_rows);
  }

  // Sorts `batches` into runs on disk, then drops them. A run sorts at
  // most what this worker's share of the memory left allows (its order,
  // 8 B a row, and computed keys: about 32 B a row in all), so one worker
  // holding much of the input writes several runs.
  Status SpillRun(std::vector<RecordBatchPtr>* batches) {
    if (batches->empty()) return Status::OK();
    const int64_t chunk_rows = SpillBatchRows(*batches->front());
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (run_batch_rows_ == 0) run_batch_rows_ = chunk_rows;
    }
    const int64_t room = ctx_->statement_pool->AvailableBytes();
    const int64_t workers = std::max<int64_t>(1, static_cast<int64_t>(parts_.size()));
    const int64_t cap_rows =
        room < 0 ? std::numeric_limits<int64_t>::max() : std::max<int64_t>(4096, room / workers / 2 / 32);
    for (size_t at = 0; at < batches->size();) {
      std::vector<RecordBatchPtr> group;
      int64_t rows = 0;
      while (at < batches->size() && (group.empty() || rows + (*batches)[at]->num_rows <= cap_rows)) {
        rows += (*batches)[at]->num_rows;
        group.push_back(std::move((*batches)[at++]));
      }
      QUIVER_ASSIGN_OR_RETURN(auto w, ctx_->spill->Create(schema_, "sort run", ctx_->sort_pool.get()));
      QUIVER_RETURN_NOT_OK(
          SortBatches(ctx_, keys_, schema_, group, chunk_rows, [&](RecordBatchPtr b) { return w->Write(*b); }));
      group.clear();
      QUIVER_ASSIGN_OR_RETURN(SpillFile f, w->Finish());
      std::lock_guard<std::mutex> lock(mutex_);
      disk_runs_.push_back(std::move(f));
      spilled_ = true;
    }
    batches->clear();
    return Status::OK();
  }

  Status PrepareExternal() {
    std::vector<int64_t> held(parts_.size(), 0);
    const int64_t min_run_bytes = std::max<int64_t>(ctx_->spill_reserve_bytes / 8, 64 << 10);
    QUIVER_RETURN_NOT_OK(
        RunPipeline(ctx_, child_, [&](int worker, RecordBatchStream* in, const std::atomic<bool>& stop) -> Status {
          auto& out = parts_[static_cast<size_t>(worker)];
          int64_t& bytes = held[static_cast<size_t>(worker)];
          while (!stop.load(std::memory_order_relaxed)) {
            QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
            QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, in->Next());
            if (!b) break;
            if (b->num_rows == 0) continue;
            bytes += BatchBytes(*b);
            out.push_back(std::move(b));
            // Memory is tight: this worker's rows go out as a sorted run.
            if (bytes >= min_run_bytes && ctx_->MemoryTight()) {
              QUIVER_RETURN_NOT_OK(SpillRun(&out));
              bytes = 0;
            }
          }
          return Status::OK();
        }));
    // What sorting the rest in memory takes: a sorted copy of the rows
    // (made part by part in parallel) and their order.
    int64_t rest_bytes = 0, rest_rows = 0;
    for (size_t w = 0; w < parts_.size(); ++w) {
      rest_bytes += held[w];
      for (const auto& b : parts_[w]) rest_rows += b->num_rows;
    }
    const int64_t room = ctx_->statement_pool->AvailableBytes();
    const bool to_disk = spilled_ || (room >= 0 && room < rest_bytes + 8 * rest_rows + ctx_->spill_reserve_bytes);
    memory_runs_.resize(parts_.size());
    QUIVER_RETURN_NOT_OK(ParallelFor(ctx_->scheduler.get(), static_cast<int>(parts_.size()), [&](int w) -> Status {
      auto& part = parts_[static_cast<size_t>(w)];
      if (part.empty()) return Status::OK();
      if (to_disk) return SpillRun(&part);
      auto& run = memory_runs_[static_cast<size_t>(w)];
      QUIVER_RETURN_NOT_OK(SortBatches(ctx_, keys_, schema_, part, ctx_->max_batch_rows, [&](RecordBatchPtr b) {
        run.push_back(std::move(b));
        return Status::OK();
      }));
      part.clear();
      return Status::OK();
    }));
    parts_.clear();
    std::erase_if(memory_runs_, [](const auto& run) { return run.empty(); });
    return MergePasses();
  }

  // Merges the runs on disk, fan-in at a time, until one merge can read
  // all of them at once (each run read holds one or two ~256 KiB batches).
  Status MergePasses() {
    while (disk_runs_.size() > 1) {
      const int64_t room = ctx_->statement_pool->AvailableBytes();
      const int64_t fan_in = room < 0 ? 256 : std::clamp<int64_t>(room / 2 / (1 << 20), 2, 256);
      if (static_cast<int64_t>(disk_runs_.size()) <= fan_in) break;
      std::vector<SpillFile> next;
      for (size_t at = 0; at < disk_runs_.size(); at += static_cast<size_t>(fan_in)) {
        const size_t end = std::min(disk_runs_.size(), at + static_cast<size_t>(fan_in));
        if (end - at == 1) {
          next.push_back(std::move(disk_runs_[at]));
          continue;
        }
        std::vector<OperatorPtr> runs;
        for (size_t r = at; r < end; ++r) {
          QUIVER_ASSIGN_OR_RETURN(auto in, ctx_->spill->Open(disk_runs_[r], ctx_->sort_pool.get()));
          runs.push_back(std::move(in));
        }
        RunMerger merger(ctx_, &keys_, schema_, std::move(runs), run_batch_rows_);
        QUIVER_ASSIGN_OR_RETURN(auto w, ctx_->spill->Create(schema_, "sort merged run", ctx_->sort_pool.get()));
        while (true) {
          QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, merger.Next());
          if (!b) break;
          QUIVER_RETURN_NOT_OK(w->Write(*b));
        }
        QUIVER_ASSIGN_OR_RETURN(SpillFile f, w->Finish());
        next.push_back(std::move(f));
      }
      disk_runs_ = std::move(next);
    }
    return Status::OK();
  }

  NodePtr child_;
  std::vector<SortKey> keys_;
  int64_t offset_, limit_;
  bool sort_runs_ = false;
  std::vector<std::vector<RecordBatchPtr>> parts_;
  // The external sort: its runs in memory and on disk (guarded by mutex_
  // while the workers spill).
  bool external_ = false;
  std::mutex mutex_;
  bool spilled_ = false;
  int64_t run_batch_rows_ = 0;  // rows a batch of the first run spilled
  std::vector<std::vector<RecordBatchPtr>> memory_runs_;
  std::vector<SpillFile> disk_runs_;
};

}  // namespace

Result<NodePtr> MakeSortNode(ExecContext* ctx, NodePtr child, std::vector<SortKey> keys, int64_t offset,
                             int64_t limit) {
  return NodePtr(std::make_shared<SortNode>(ctx, std::move(child), std::move(keys), offset, limit));
}

}  // namespace quiver::sql

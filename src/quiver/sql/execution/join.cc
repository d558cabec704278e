// quiver/sql/execution/join.cc — the SQL join operators over the join
// layer (quiver/join/hash_join.h): a hash join whose keys are expressions
// (evaluated into extra columns of each side), with a residual condition
// for inner, left, semi and anti joins (matches tracked per probe row),
// and a nested-loop join for joins without equality keys.
//
// Output is bounded: the hash join pulls at most max_batch_rows output rows
// at a time from the join layer (HashJoinProbe::Start / NextOutput,
// resumable inside a key's duplicate chain) and hands each out before the
// next pull, so a key with many duplicates never buffers the product of a
// batch; cancellation is polled between pulls. The build-left semi join
// probes in slices of kProbeSliceRows rows and keeps only a bitmap.
#include <algorithm>
#include <deque>
#include <mutex>
#include <numeric>

#include "quiver/columnar/concatenate.h"
#include "quiver/columnar/take.h"
#include "quiver/sql/execution/group_table.h"
#include "quiver/sql/execution/operators.h"
#include "quiver/sql/execution/pipeline.h"
#include "quiver/sql/execution/spill.h"
#include "quiver/sql/execution/task_scheduler.h"

namespace quiver::sql {
namespace {

// Slices of a probe morsel between cancellation checks. The join layer
// bounds each output batch itself, and the marks sink consumes it at once,
// so a slice only sets how often a statement looks at its cancel flag;
// 2,048 rows flushed a nearly empty output batch (five allocations) per
// slice: TPC-H Q21 made 91,000 pool allocations, 7,300 with whole morsels.
constexpr int64_t kProbeSliceRows = 64 * 1024;

join::JoinType ToJoinType(JoinKind k) {
  switch (k) {
    case JoinKind::kInner: return join::JoinType::kInner;
    case JoinKind::kLeft: return join::JoinType::kLeftOuter;
    case JoinKind::kRight: return join::JoinType::kRightOuter;
    case JoinKind::kFull: return join::JoinType::kFullOuter;
    case JoinKind::kSemi: return join::JoinType::kLeftSemi;
    case JoinKind::kAnti: return join::JoinType::kLeftAnti;
    case JoinKind::kNullAwareAnti: return join::JoinType::kNullAwareAnti;
  }
  return join::JoinType::kInner;
}

constexpr int64_t kNoRowIds = -1;

// Appends evaluated key columns to a batch and, when `first_row_id` is not
// kNoRowIds, an int64 column numbering its rows first_row_id, +1, ...
// (batch-local with 0, global across batches with a running base).
Result<RecordBatchPtr> WithKeys(const RecordBatchPtr& in, const std::vector<ExprPtr>& keys, const SchemaPtr& schema,
                                int64_t first_row_id, ExecContext* ctx, MemoryPool* pool) {
  std::vector<ArrayDataPtr> cols = in->columns;
  EvalContext ev = ctx->Eval(pool);
  for (const auto& k : keys) {
    QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(*k, *in, &ev));
    QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr a, Materialize(v, in->num_rows, pool));
    cols.push_back(std::move(a));
  }
  if (first_row_id != kNoRowIds) {
    QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(int64(), in->num_rows, pool));
    std::iota(b.values<int64_t>(), b.values<int64_t>() + in->num_rows, first_row_id);
    cols.push_back(b.Finish());
  }
  return MakeBatch(schema, in->num_rows, std::move(cols));
}

SchemaPtr ExtendSchema(const Schema& base, const std::vector<ExprPtr>& keys, bool row_ids) {
  auto s = std::make_shared<Schema>(base);
  for (size_t k = 0; k < keys.size(); ++k) s->fields.push_back(field("__key" + std::to_string(k), keys[k]->type, true));
  if (row_ids) s->fields.push_back(field("__row", int64(), false));
  return s;
}

// The statement's workers, lent to a relation build that runs on the
// driving thread while they would otherwise wait (join::BuildParallelism).
join::BuildParallelism BuildThreads(const ExecContext* ctx) {
  join::BuildParallelism p;
  if (ctx->threads <= 1 || !ctx->scheduler) return p;
  p.tasks = ctx->threads;
  p.parallel_for = [scheduler = ctx->scheduler](int n, const std::function<Status(int)>& body) {
    return ParallelFor(scheduler.get(), n, body);
  };
  return p;
}

// The relation a parallel hash join's build pipeline made, probed by every
// instance (read-only while they run); closed when the last one lets go.
struct SharedBuild {
  std::shared_ptr<const join::HashJoin> join;
  std::shared_ptr<join::HashedRelation> relation;
  ~SharedBuild() {
    if (relation) relation->Close();
  }
};

class HashJoinOp : public RecordBatchStream {
 public:
  // `right` null: probe `shared`'s relation (built by the node) instead of
  // building one from `right`.
  HashJoinOp(ExecContext* ctx, OperatorPtr left, OperatorPtr right, SchemaPtr right_schema, JoinSpec spec,
             SchemaPtr schema, std::shared_ptr<SharedBuild> shared = nullptr)
      : ctx_(ctx),
        left_(std::move(left)),
        right_(std::move(right)),
        spec_(std::move(spec)),
        schema_(std::move(schema)),
        right_schema_(std::move(right_schema)),
        shared_(std::move(shared)) {
    nleft_ = static_cast<int>(left_->schema()->fields.size());
    nright_ = static_cast<int>(right_schema_->fields.size());
    tracked_ = spec_.residual && spec_.kind != JoinKind::kInner;
    track_build_ = tracked_ && (spec_.kind == JoinKind::kRight || spec_.kind == JoinKind::kFull);
  }
  ~HashJoinOp() override {
    prober_.reset();
    if (relation_ && !shared_) relation_->Close();
  }
  const SchemaPtr& build_schema() const { return build_schema_; }
  const std::shared_ptr<const join::HashJoin>& join_layer() const { return join_; }
  const SchemaPtr& schema() const override { return schema_; }

  Status Init() {
    if (spec_.residual && spec_.kind == JoinKind::kNullAwareAnti)
      return Status::NotImplemented("NOT IN with a condition other than column equalities");
    build_schema_ = ExtendSchema(*right_schema_, spec_.right_keys, track_build_);
    probe_schema_ = ExtendSchema(*left_->schema(), spec_.left_keys, tracked_);
    join::HashJoinOptions o;
    o.type = tracked_ ? join::JoinType::kInner : ToJoinType(spec_.kind);
    for (size_t k = 0; k < spec_.right_keys.size(); ++k) {
      o.build_keys.push_back(nright_ + static_cast<int>(k));
      o.probe_keys.push_back(nleft_ + static_cast<int>(k));
    }
    std::vector<int> probe_out(static_cast<size_t>(nleft_));
    std::iota(probe_out.begin(), probe_out.end(), 0);
    if (tracked_) probe_out.push_back(nleft_ + static_cast<int>(spec_.left_keys.size()));
    std::vector<int> build_out(static_cast<size_t>(nright_));
    std::iota(build_out.begin(), build_out.end(), 0);
    if (track_build_) build_out.push_back(nright_ + static_cast<int>(spec_.right_keys.size()));
    o.probe_output = probe_out;
    o.build_output = build_out;
    o.max_output_rows = ctx_->max_batch_rows;
    o.output_pool = ctx_->pool.get();
    QUIVER_ASSIGN_OR_RETURN(join_, join::HashJoin::Make(build_schema_, probe_schema_, std::move(o)));
    return Status::OK();
  }

  Result<RecordBatchPtr> Next() override {
    auto r = NextImpl();
    if (!r.ok()) return NameOperator(r.status(), "hash join");
    return r;
  }

  /// Builds the relation from `right` now, before any probe row is read
  /// (a caller that falls back to a grace join on OutOfMemory keeps the
  /// probe side whole: TakeLeft).
  Status BuildNow() { return Start(); }
  /// The probe side, given back unread after a failed BuildNow.
  OperatorPtr TakeLeft() { return std::move(left_); }

 private:
  Status Start() {
    if (prober_ || finished_) return Status::OK();
    right_types_.clear();
    for (const auto& f : right_schema_->fields) right_types_.push_back(f->type);
    if (shared_) {
      relation_ = shared_->relation;
      QUIVER_ASSIGN_OR_RETURN(prober_, join_->MakeProbe(relation_));
      return Status::OK();
    }
    return Build();
  }

  Status Build() {
    std::vector<RecordBatchPtr> batches;
    int64_t base = 0;
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, right_->Next());
      if (!b) break;
      if (track_build_) {
        if (b->num_rows == 0) continue;
        build_batches_.push_back(b);
      }
      const int64_t rows = b->num_rows;
      QUIVER_ASSIGN_OR_RETURN(
          b, WithKeys(b, spec_.right_keys, build_schema_, track_build_ ? base : kNoRowIds, ctx_, ctx_->pool.get()));
      if (track_build_) base += rows;  // global build row numbers
      batches.push_back(std::move(b));
    }
    build_matched_.assign(static_cast<size_t>(base), 0);
    right_.reset();
    QUIVER_ASSIGN_OR_RETURN(relation_, join_->BuildRelation(batches, ctx_->tmm.get(), BuildThreads(ctx_)));
    batches.clear();
    QUIVER_ASSIGN_OR_RETURN(prober_, join_->MakeProbe(relation_));
    return Status::OK();
  }

  // Output of the join layer: left cols [+ row id] + right cols.
  Status Emit(const RecordBatchPtr& out) {
    if (out->num_rows == 0) return Status::OK();
    RecordBatchPtr b = out;
    if (!tracked_) {
      if (spec_.residual) {  // inner join with a residual: filter
        EvalContext ev = ctx_->Eval(ctx_->pool.get());
        RecordBatchPtr view = MakeBatch(schema_, b->num_rows, b->columns);
        QUIVER_ASSIGN_OR_RETURN(auto sel, EvaluateSelection(*spec_.residual, *view, &ev));
        if (sel.empty()) return Status::OK();
        QUIVER_ASSIGN_OR_RETURN(b, TakeRows(view, sel, ctx_->pool.get()));
      }
      pending_.push_back(MakeBatch(schema_, b->num_rows, b->columns));
      return Status::OK();
    }
    // tracked: drop the row-id column, evaluate the residual, mark matches
    std::vector<ArrayDataPtr> cols;
    for (int c = 0; c < nleft_; ++c) cols.push_back(b->columns[static_cast<size_t>(c)]);
    const ArrayDataPtr& rowid = b->columns[static_cast<size_t>(nleft_)];
    for (int c = 0; c < nright_; ++c) cols.push_back(b->columns[static_cast<size_t>(nleft_ + 1 + c)]);
    auto joined_schema = std::make_shared<Schema>();
    for (const auto& f : left_->schema()->fields) joined_schema->fields.push_back(f);
    for (const auto& f : build_schema_->fields) {
      if (static_cast<int>(joined_schema->fields.size()) >= nleft_ + nright_) break;
      joined_schema->fields.push_back(f);
    }
    RecordBatchPtr view = MakeBatch(joined_schema, b->num_rows, std::move(cols));
    EvalContext ev = ctx_->Eval(ctx_->pool.get());
    QUIVER_ASSIGN_OR_RETURN(auto sel, EvaluateSelection(*spec_.residual, *view, &ev));
    const int64_t* ids = rowid->GetValues<int64_t>(1) + rowid->offset;
    for (int64_t r : sel) matched_[static_cast<size_t>(ids[r])] = 1;
    if (track_build_) {
      const ArrayDataPtr& build_rowid = b->columns[static_cast<size_t>(nleft_ + 1 + nright_)];
      const int64_t* bids = build_rowid->GetValues<int64_t>(1) + build_rowid->offset;
      for (int64_t r : sel) build_matched_[static_cast<size_t>(bids[r])] = 1;
    }
    const bool keeps_pairs =
        spec_.kind == JoinKind::kLeft || spec_.kind == JoinKind::kRight || spec_.kind == JoinKind::kFull;
    if (keeps_pairs && !sel.empty()) {
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr kept, TakeRows(view, sel, ctx_->pool.get()));
      pending_.push_back(MakeBatch(schema_, kept->num_rows, kept->columns));
    }
    return Status::OK();
  }

  // Right / full joins with a residual: the build rows no pair matched,
  // the left columns NULL.
  Status EmitUnmatchedBuildRows() {
    int64_t base = 0;
    for (const auto& b : build_batches_) {
      std::vector<int64_t> rows;
      for (int64_t r = 0; r < b->num_rows; ++r)
        if (!build_matched_[static_cast<size_t>(base + r)]) rows.push_back(r);
      base += b->num_rows;
      if (rows.empty()) continue;
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr taken, TakeRows(b, rows, ctx_->pool.get()));
      std::vector<ArrayDataPtr> cols;
      for (int c = 0; c < nleft_; ++c) {
        QUIVER_ASSIGN_OR_RETURN(auto nulls, MakeArrayOfNull(left_->schema()->fields[static_cast<size_t>(c)]->type,
                                                            taken->num_rows, ctx_->pool.get(), "outer join column"));
        cols.push_back(std::move(nulls));
      }
      cols.insert(cols.end(), taken->columns.begin(), taken->columns.end());
      pending_.push_back(MakeBatch(schema_, taken->num_rows, std::move(cols)));
    }
    build_batches_.clear();
    return Status::OK();
  }

  // After every slice of a tracked probe batch: its unmatched / matched rows.
  Status FinishTracked(const RecordBatchPtr& probe) {
    if (spec_.kind == JoinKind::kRight) return Status::OK();  // unmatched probe rows are dropped
    std::vector<int64_t> rows;
    const bool want_matched = spec_.kind == JoinKind::kSemi;
    for (int64_t r = 0; r < probe->num_rows; ++r)
      if ((matched_[static_cast<size_t>(r)] != 0) == want_matched) rows.push_back(r);
    if (rows.empty()) return Status::OK();
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr taken, TakeRows(probe, rows, ctx_->pool.get()));
    std::vector<ArrayDataPtr> cols(taken->columns.begin(), taken->columns.begin() + nleft_);
    if (spec_.kind == JoinKind::kLeft || spec_.kind == JoinKind::kFull) {
      for (int c = 0; c < nright_; ++c) {
        QUIVER_ASSIGN_OR_RETURN(auto nulls, MakeArrayOfNull(right_types_[static_cast<size_t>(c)], taken->num_rows,
                                                            ctx_->pool.get(), "outer join column"));
        cols.push_back(std::move(nulls));
      }
    }
    pending_.push_back(MakeBatch(schema_, taken->num_rows, std::move(cols)));
    return Status::OK();
  }

  Result<RecordBatchPtr> NextImpl() {
    QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    QUIVER_RETURN_NOT_OK(Start());
    const join::BatchSink sink = [this](RecordBatchPtr b) { return Emit(b); };
    while (pending_.empty()) {
      if (finished_) return RecordBatchPtr{};
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      if (current_) {
        // At most max_output_rows rows per pull, resumable inside a key's
        // duplicate chain: a low-cardinality key never buffers the product.
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr out, prober_->NextOutput());
        if (out) {
          QUIVER_RETURN_NOT_OK(Emit(out));
          continue;
        }
        if (tracked_) QUIVER_RETURN_NOT_OK(FinishTracked(current_));
        current_.reset();
        continue;
      }
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr in, left_->Next());
      if (in) {
        QUIVER_ASSIGN_OR_RETURN(
            current_, WithKeys(in, spec_.left_keys, probe_schema_, tracked_ ? 0 : kNoRowIds, ctx_, ctx_->pool.get()));
        QUIVER_RETURN_NOT_OK(prober_->Start(current_));
        if (tracked_) {
          matched_.assign(static_cast<size_t>(in->num_rows), 0);
          // row ids restart per batch but slices keep them: the id column is per batch
        }
        continue;
      }
      current_.reset();
      QUIVER_RETURN_NOT_OK(prober_->Finish(sink));
      if (track_build_) QUIVER_RETURN_NOT_OK(EmitUnmatchedBuildRows());
      finished_ = true;
      prober_.reset();
      if (!shared_) relation_->Close();
      relation_.reset();
      shared_.reset();
      left_.reset();
    }
    RecordBatchPtr out = std::move(pending_.front());
    pending_.pop_front();
    return out;
  }

  ExecContext* ctx_;
  OperatorPtr left_, right_;
  JoinSpec spec_;
  SchemaPtr schema_, right_schema_, build_schema_, probe_schema_;
  std::shared_ptr<SharedBuild> shared_;
  int nleft_ = 0, nright_ = 0;
  bool tracked_ = false, track_build_ = false;
  std::vector<RecordBatchPtr> build_batches_;  // right / full joins with a residual
  std::vector<uint8_t> build_matched_;
  std::vector<DataTypePtr> right_types_;
  std::shared_ptr<const join::HashJoin> join_;
  std::shared_ptr<join::HashedRelation> relation_;
  std::unique_ptr<join::HashJoinProbe> prober_;
  RecordBatchPtr current_;
  std::vector<uint8_t> matched_;
  std::deque<RecordBatchPtr> pending_;
  bool finished_ = false;
};

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
      std::vector<RecordBatchPtr> extra;
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

// A semi / anti join that builds its left (outer) side, with row numbers,
// and marks the left rows the right side's rows match (with the residual,
// if any); then emits the marked (semi) or unmarked (anti) left rows in
// their order. The probing is run by the workers of the right side's
// pipeline (BuildLeftSemiJoinNode): each with its own prober (MakeProber)
// and marks (ProbeInto), combined by MergeMarks; Next() emits once
// FinishProbing was called.
class BuildLeftSemiJoinOp : public RecordBatchStream {
 public:
  BuildLeftSemiJoinOp(ExecContext* ctx, OperatorPtr left, SchemaPtr right_schema, JoinSpec spec, SchemaPtr schema)
      : ctx_(ctx),
        left_(std::move(left)),
        spec_(std::move(spec)),
        schema_(std::move(schema)),
        right_schema_(std::move(right_schema)) {
    left_schema_ = left_->schema();
    nleft_ = static_cast<int>(left_schema_->fields.size());
    nright_ = static_cast<int>(right_schema_->fields.size());
  }
  ~BuildLeftSemiJoinOp() override {
    if (relation_) relation_->Close();
  }
  const SchemaPtr& schema() const override { return schema_; }

  Status Init() {
    build_schema_ = ExtendSchema(*left_->schema(), spec_.left_keys, true);
    probe_schema_ = ExtendSchema(*right_schema_, spec_.right_keys, false);
    join::HashJoinOptions o;
    o.type = join::JoinType::kInner;
    for (size_t k = 0; k < spec_.left_keys.size(); ++k) {
      o.build_keys.push_back(nleft_ + static_cast<int>(k));
      o.probe_keys.push_back(nright_ + static_cast<int>(k));
    }
    std::vector<int> build_out(static_cast<size_t>(nleft_));
    std::iota(build_out.begin(), build_out.end(), 0);
    build_out.push_back(nleft_ + static_cast<int>(spec_.left_keys.size()));  // the row number
    std::vector<int> probe_out;
    if (spec_.residual) {
      probe_out.resize(static_cast<size_t>(nright_));
      std::iota(probe_out.begin(), probe_out.end(), 0);
    } else {
      build_out.erase(build_out.begin(), build_out.end() - 1);  // only the row number is needed
    }
    o.build_output = build_out;
    o.probe_output = probe_out;
    o.max_output_rows = ctx_->max_batch_rows;
    o.output_pool = ctx_->pool.get();
    QUIVER_ASSIGN_OR_RETURN(join_, join::HashJoin::Make(build_schema_, probe_schema_, std::move(o)));
    return Status::OK();
  }

  /// Builds the relation from the whole left side (global row numbers).
  Status Build() {
    std::vector<RecordBatchPtr> keyed;
    int64_t base = 0;
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, left_->Next());
      if (!b) break;
      if (b->num_rows == 0) continue;
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr k,
                              WithKeys(b, spec_.left_keys, build_schema_, base, ctx_, ctx_->pool.get()));
      base += b->num_rows;  // global row numbers
      left_batches_.push_back(b);
      keyed.push_back(std::move(k));
    }
    left_.reset();
    matched_.assign(static_cast<size_t>(base), 0);
    QUIVER_ASSIGN_OR_RETURN(relation_, join_->BuildRelation(keyed, ctx_->tmm.get()));
    return Status::OK();
  }

  int64_t left_rows() const { return static_cast<int64_t>(matched_.size()); }

  /// A prober of the built relation for one thread.
  Result<std::unique_ptr<join::HashJoinProbe>> MakeProber() const { return join_->MakeProbe(relation_); }

  /// Marks in `matched` (left_rows() bytes) the left rows the rows of `in`
  /// (the right side's columns) match. Thread-safe for distinct probers and
  /// marks.
  Status ProbeInto(const RecordBatchPtr& in, join::HashJoinProbe* prober, std::vector<uint8_t>* matched) const {
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr k,
                            WithKeys(in, spec_.right_keys, probe_schema_, kNoRowIds, ctx_, ctx_->pool.get()));
    const join::BatchSink sink = [this, matched](RecordBatchPtr b) { return Mark(b, matched); };
    for (int64_t begin = 0; begin < k->num_rows; begin += kProbeSliceRows) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr slice,
                              SliceBatch(k, begin, std::min(kProbeSliceRows, k->num_rows - begin)));
      QUIVER_RETURN_NOT_OK(prober->Probe(*slice, sink));
    }
    return Status::OK();
  }

  /// Adds a worker's marks (call once per worker, from one thread at a time).
  void MergeMarks(const std::vector<uint8_t>& marks) {
    for (size_t i = 0; i < marks.size() && i < matched_.size(); ++i) matched_[i] |= marks[i];
  }

  /// Ends probing: the relation is freed; Next() emits.
  void FinishProbing() {
    if (relation_) relation_->Close();
    relation_.reset();
    probed_ = true;
  }

  Result<RecordBatchPtr> Next() override {
    auto r = NextImpl();
    if (!r.ok()) return NameOperator(r.status(), "hash join");
    return r;
  }

 private:
  Status Mark(const RecordBatchPtr& out, std::vector<uint8_t>* matched) const {
    if (out->num_rows == 0) return Status::OK();
    const int nprobe = spec_.residual ? nright_ : 0;
    if (out->columns.empty() || out->columns.back()->type->id != TypeId::kInt64 || !out->columns.back()->buffers[1])
      return Status::Invalid("internal: semi join output without its row numbers (" +
                             std::to_string(out->columns.size()) + " columns)");
    const ArrayDataPtr& rowid = out->columns.back();
    const int64_t* ids = rowid->GetValues<int64_t>(1) + rowid->offset;
    const auto n_left = static_cast<int64_t>(matched->size());
    for (int64_t r = 0; r < out->num_rows; ++r)
      if (ids[r] < 0 || ids[r] >= n_left)
        return Status::Invalid("internal: semi join row number " + std::to_string(ids[r]) + " outside " +
                               std::to_string(n_left) + " rows (" + std::to_string(out->columns.size()) + " columns, " +
                               rowid->type->ToString() + ")");
    if (!spec_.residual) {
      for (int64_t r = 0; r < out->num_rows; ++r) (*matched)[static_cast<size_t>(ids[r])] = 1;
      return Status::OK();
    }
    // Lay the pair out as left columns then right columns for the residual.
    std::vector<ArrayDataPtr> cols;
    auto both = std::make_shared<Schema>();
    for (int c = 0; c < nleft_; ++c) {
      cols.push_back(out->columns[static_cast<size_t>(nprobe + c)]);
      both->fields.push_back(left_schema_->fields[static_cast<size_t>(c)]);
    }
    for (int c = 0; c < nright_; ++c) {
      cols.push_back(out->columns[static_cast<size_t>(c)]);
      both->fields.push_back(right_schema_->fields[static_cast<size_t>(c)]);
    }
    RecordBatchPtr view = MakeBatch(both, out->num_rows, std::move(cols));
    EvalContext ev = ctx_->Eval(ctx_->pool.get());
    QUIVER_ASSIGN_OR_RETURN(auto sel, EvaluateSelection(*spec_.residual, *view, &ev));
    for (int64_t r : sel) (*matched)[static_cast<size_t>(ids[r])] = 1;
    return Status::OK();
  }

  Result<RecordBatchPtr> NextImpl() {
    QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    if (!probed_) return Status::Invalid("internal: the build-left semi join emits before its probing ended");
    const bool want = spec_.kind == JoinKind::kSemi;
    while (next_batch_ < left_batches_.size()) {
      RecordBatchPtr b = std::move(left_batches_[next_batch_++]);
      std::vector<int64_t> rows;
      for (int64_t r = 0; r < b->num_rows; ++r)
        if ((matched_[static_cast<size_t>(emitted_base_ + r)] != 0) == want) rows.push_back(r);
      emitted_base_ += b->num_rows;
      if (rows.empty()) continue;
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr taken, TakeRows(b, rows, ctx_->pool.get()));
      return MakeBatch(schema_, taken->num_rows, taken->columns);
    }
    left_batches_.clear();
    return RecordBatchPtr{};
  }

  ExecContext* ctx_;
  OperatorPtr left_;
  JoinSpec spec_;
  SchemaPtr schema_, right_schema_, build_schema_, probe_schema_, left_schema_;
  int nleft_ = 0, nright_ = 0;
  std::shared_ptr<const join::HashJoin> join_;
  std::shared_ptr<join::HashedRelation> relation_;
  std::vector<RecordBatchPtr> left_batches_;
  std::vector<uint8_t> matched_;
  bool probed_ = false;
  size_t next_batch_ = 0;
  int64_t emitted_base_ = 0;
};

}  // namespace

// The stream-level join of one thread (the serial join nodes).
static Result<OperatorPtr> MakeJoin(ExecContext* ctx, OperatorPtr left, OperatorPtr right, JoinSpec spec,
                                    SchemaPtr schema) {
  if (spec.left_keys.empty()) {
    return OperatorPtr(
        std::make_unique<NestedLoopJoinOp>(ctx, std::move(left), std::move(right), std::move(spec), std::move(schema)));
  }
  SchemaPtr right_schema = right->schema();
  auto op = std::make_unique<HashJoinOp>(ctx, std::move(left), std::move(right), std::move(right_schema),
                                         std::move(spec), std::move(schema));
  QUIVER_RETURN_NOT_OK(op->Init());
  return OperatorPtr(std::move(op));
}

namespace {

constexpr int kGracePartitions = 16;

// The grace partition of each row of `keys` (evaluated join keys, of one
// common type per position on both sides): equal keys go to the same
// partition; rows with a NULL key to the last bucket (kGracePartitions).
std::vector<std::vector<int64_t>> PartitionRows(const std::vector<Vec>& keys, int64_t n) {
  std::vector<std::vector<int64_t>> parts(kGracePartitions + 1);
  for (int64_t r = 0; r < n; ++r) {
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    bool null = false;
    for (const Vec& v : keys) {
      if (v.IsNull(r)) {
        null = true;
        break;
      }
      uint64_t k = 0;
      switch (ClassOf(*v.type())) {
        case TypeClass::kString: {
          const std::string_view sv = v.StringAt(r);
          k = HashBytes(reinterpret_cast<const uint8_t*>(sv.data()), sv.size());
          break;
        }
        case TypeClass::kFloat: {
          double d = v.FloatAt(r);
          if (d == 0) d = 0;
          k = HashBytes(reinterpret_cast<const uint8_t*>(&d), sizeof d);
          break;
        }
        default: {
          const i128 x = v.type()->id == TypeId::kBool ? i128{v.BoolAt(r)} : v.ExactAt(r);
          k = HashBytes(reinterpret_cast<const uint8_t*>(&x), sizeof x);
          break;
        }
      }
      h = (h ^ k) * 0xff51afd7ed558ccdULL;
      h ^= h >> 29;
    }
    const size_t p = null ? kGracePartitions : static_cast<size_t>((h >> 52) & (kGracePartitions - 1));
    parts[p].push_back(r);
  }
  return parts;
}

// One side's spill files, partition by partition; writers shared by the
// workers (one lock per partition).
class GraceSide {
 public:
  GraceSide(ExecContext* ctx, SchemaPtr schema, std::string what)
      : ctx_(ctx),
        schema_(std::move(schema)),
        what_(std::move(what)),
        writers_(kGracePartitions),
        locks_(kGracePartitions),
        files_(kGracePartitions) {}

  // Rows with a NULL key are dropped from now on instead of going to
  // partition 0 (the probe side of a NOT IN whose set has no NULL: such a
  // row is never in the answer). Call before the first Write.
  void DropNullKeys() { drop_null_keys_ = true; }

  // Writes the rows of `raw` (the side's own columns) to their partitions,
  // `keys` evaluated over the same rows. Thread-safe.
  Status Write(const RecordBatchPtr& raw, const std::vector<Vec>& keys) {
    auto parts = PartitionRows(keys, raw->num_rows);
    const auto& nulls = parts[kGracePartitions];
    rows_ += raw->num_rows;
    null_key_rows_ += static_cast<int64_t>(nulls.size());
    if (!drop_null_keys_) parts[0].insert(parts[0].end(), nulls.begin(), nulls.end());
    for (int p = 0; p < kGracePartitions; ++p) {
      const auto& rows = parts[static_cast<size_t>(p)];
      if (rows.empty()) continue;
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr taken, TakeRows(raw, rows, ctx_->pool.get()));
      RecordBatchPtr b = MakeBatch(schema_, taken->num_rows, taken->columns);
      std::lock_guard<std::mutex> lock(locks_[static_cast<size_t>(p)]);
      auto& w = writers_[static_cast<size_t>(p)];
      if (!w) {
        QUIVER_ASSIGN_OR_RETURN(
            w, ctx_->spill->Create(schema_, what_ + " partition " + std::to_string(p), ctx_->pool.get()));
      }
      QUIVER_RETURN_NOT_OK(w->Write(*b));
    }
    return Status::OK();
  }

  Status Finish() {
    for (int p = 0; p < kGracePartitions; ++p) {
      auto& w = writers_[static_cast<size_t>(p)];
      if (!w) continue;
      QUIVER_ASSIGN_OR_RETURN(SpillFile f, w->Finish());
      files_[static_cast<size_t>(p)].push_back(std::move(f));
      w.reset();
    }
    return Status::OK();
  }

  std::vector<SpillFile> Take(int p) { return std::move(files_[static_cast<size_t>(p)]); }
  // Partition p's files (after Finish, before Take).
  const std::vector<SpillFile>& Files(int p) const { return files_[static_cast<size_t>(p)]; }
  // Rows written, and of those rows with a NULL key (dropped or not).
  int64_t rows() const { return rows_.load(); }
  int64_t null_key_rows() const { return null_key_rows_.load(); }

 private:
  ExecContext* ctx_;
  SchemaPtr schema_;
  std::string what_;
  bool drop_null_keys_ = false;
  std::atomic<int64_t> rows_{0}, null_key_rows_{0};
  std::vector<std::unique_ptr<SpillWriter>> writers_;
  std::vector<std::mutex> locks_;
  std::vector<std::vector<SpillFile>> files_;
};

Result<std::vector<Vec>> EvaluateKeys(const std::vector<ExprPtr>& keys, const RecordBatch& b, ExecContext* ctx) {
  std::vector<Vec> out;
  EvalContext ev = ctx->Eval(ctx->pool.get());
  for (const auto& k : keys) {
    QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(*k, b, &ev));
    out.push_back(std::move(v));
  }
  return out;
}

// The spill files of one partition read one after the other.
class SpillFilesStream : public RecordBatchStream {
 public:
  // `keep`: the files stay on disk after reading (SpillManager::Open).
  SpillFilesStream(ExecContext* ctx, SchemaPtr schema, std::vector<SpillFile> files, bool keep = false)
      : ctx_(ctx), schema_(std::move(schema)), files_(std::move(files)), keep_(keep) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    while (true) {
      if (!cur_) {
        if (next_ >= files_.size()) return RecordBatchPtr{};
        QUIVER_ASSIGN_OR_RETURN(cur_, ctx_->spill->Open(files_[next_++], ctx_->pool.get(), keep_));
      }
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, cur_->Next());
      if (b) return MakeBatch(schema_, b->num_rows, b->columns);
      cur_.reset();
    }
  }

 private:
  ExecContext* ctx_;
  SchemaPtr schema_;
  std::vector<SpillFile> files_;
  bool keep_ = false;
  size_t next_ = 0;
  std::unique_ptr<RecordBatchStream> cur_;
};

// The hash join of one grace partition: its probe files against a relation
// built from its build files (read with `keep_build`: SpillFilesStream).
Result<std::unique_ptr<HashJoinOp>> MakePartitionJoin(ExecContext* ctx, const SchemaPtr& left_schema,
                                                      std::vector<SpillFile> probe_files, const SchemaPtr& right_schema,
                                                      std::vector<SpillFile> build_files, bool keep_build,
                                                      const JoinSpec& spec, const SchemaPtr& schema) {
  OperatorPtr left = std::make_unique<SpillFilesStream>(ctx, left_schema, std::move(probe_files));
  OperatorPtr right = std::make_unique<SpillFilesStream>(ctx, right_schema, std::move(build_files), keep_build);
  auto op = std::make_unique<HashJoinOp>(ctx, std::move(left), std::move(right), right_schema, spec, schema);
  QUIVER_RETURN_NOT_OK(op->Init());
  return op;
}

// The partitions of a grace hash join joined by several instances at once
// (ParallelHashJoinNode after a spill; both sides partitioned by the
// pipelines' workers): each instance claims the next partition and joins
// it alone, its build side in one relation, as GraceJoinOp does one after
// another. Memory bounds how many run at once:
//  - a partition is claimed beside running ones only when the statement's
//    room (bytes left under its limit) is at least twice its spill reserve
//    plus 8x the partition's build files (compressed batches: a relation
//    of string rows takes several times their size), so that the running
//    joins' probes keep room for their output (a 2 MiB statement with two
//    partitions of 200 KiB at once failed an output batch with 4x);
//    otherwise the instance ends and the running ones take the rest (an
//    instance never waits for another: they may share one thread);
//  - such a partition's build files are read without removal, so a build
//    that fails with OutOfMemory beside others goes back (GiveBack) and is
//    joined later *exclusively*: by the last running instance, while no
//    other starts a partition. Only an exclusive build's OutOfMemory ends
//    the statement, as it would with one partition at a time.
// Thread-safe.
class GracePartitionQueue {
 public:
  struct Claim {
    int partition = -1;  // -1: nothing for this instance; end it
    bool exclusive = false;
    std::vector<SpillFile> build_files, probe_files;
  };
  GracePartitionQueue(std::shared_ptr<GraceSide> build, std::shared_ptr<GraceSide> probe)
      : build_(std::move(build)), probe_(std::move(probe)) {}

  // `room_bytes`: the statement's bytes left (-1: no limit);
  // `reserve_bytes`: ExecContext::spill_reserve_bytes.
  Claim Take(int64_t room_bytes, int64_t reserve_bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    Claim c;
    if (exclusive_) return c;
    if (!retry_.empty()) {
      if (active_ > 0) return c;  // the last running instance takes it
      c = std::move(retry_.front());
      retry_.pop_front();
      c.exclusive = exclusive_ = true;
      ++active_;
      return c;
    }
    while (next_ < kGracePartitions) {
      const int p = next_;
      if (active_ > 0 && room_bytes >= 0) {
        int64_t build_bytes = 0;
        for (const auto& f : build_->Files(p)) build_bytes += f.bytes;
        if (room_bytes < 2 * reserve_bytes + 8 * build_bytes) return c;
      }
      ++next_;
      std::vector<SpillFile> probe_files = probe_->Take(p);
      std::vector<SpillFile> build_files = build_->Take(p);
      bool probe_rows = false;
      for (const auto& f : probe_files) probe_rows = probe_rows || f.rows > 0;
      if (!probe_rows) continue;  // no output (inner, left, semi and anti joins); files go with the directory
      c.partition = p;
      c.build_files = std::move(build_files);
      c.probe_files = std::move(probe_files);
      ++active_;
      return c;
    }
    return c;
  }
  // A non-exclusive claim whose build did not fit beside the others.
  void GiveBack(Claim c) {
    std::lock_guard<std::mutex> lock(mu_);
    --active_;
    retry_.push_back(std::move(c));
  }
  void Done(const Claim& c) {
    std::lock_guard<std::mutex> lock(mu_);
    --active_;
    if (c.exclusive) exclusive_ = false;
  }

 private:
  std::shared_ptr<GraceSide> build_, probe_;
  std::mutex mu_;
  int next_ = 0;
  int active_ = 0;
  bool exclusive_ = false;
  std::deque<Claim> retry_;
};

// One instance over a GracePartitionQueue: joins claimed partitions until
// the queue has nothing for it.
class GracePartitionsOp : public RecordBatchStream {
 public:
  GracePartitionsOp(ExecContext* ctx, std::shared_ptr<GracePartitionQueue> queue, SchemaPtr left_schema,
                    SchemaPtr right_schema, JoinSpec spec, SchemaPtr schema)
      : ctx_(ctx),
        queue_(std::move(queue)),
        left_schema_(std::move(left_schema)),
        right_schema_(std::move(right_schema)),
        spec_(std::move(spec)),
        schema_(std::move(schema)) {}
  ~GracePartitionsOp() override {
    current_.reset();
    if (claimed_) queue_->Done(claim_);
  }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    auto r = NextImpl();
    if (!r.ok()) return NameOperator(r.status(), "hash join");
    return r;
  }

 private:
  Result<RecordBatchPtr> NextImpl() {
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      if (current_) {
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, current_->Next());
        if (b) return b;
        current_.reset();
        claimed_ = false;
        queue_->Done(claim_);
      }
      claim_ = queue_->Take(ctx_->statement_pool->AvailableBytes(), ctx_->spill_reserve_bytes);
      if (claim_.partition < 0) return RecordBatchPtr{};
      claimed_ = true;
      const bool keep = !claim_.exclusive;  // a build that may go back is read again later
      QUIVER_ASSIGN_OR_RETURN(auto op, MakePartitionJoin(ctx_, left_schema_, claim_.probe_files, right_schema_,
                                                         claim_.build_files, keep, spec_, schema_));
      Status st = op->BuildNow();
      if (!st.ok()) {
        op.reset();  // its relation and batches go back first
        if (st.IsOutOfMemory() && !claim_.exclusive) {
          claimed_ = false;
          queue_->GiveBack(std::move(claim_));
          continue;
        }
        return st;
      }
      if (keep) {
        for (const auto& f : claim_.build_files) SpillManager::Remove(f);
      }
      current_ = std::move(op);
    }
  }
  ExecContext* ctx_;
  std::shared_ptr<GracePartitionQueue> queue_;
  SchemaPtr left_schema_, right_schema_;
  JoinSpec spec_;
  SchemaPtr schema_;
  GracePartitionQueue::Claim claim_;
  bool claimed_ = false;
  OperatorPtr current_;
};

// Grace hash join (after the build side was spilled): the probe side is
// written to the same partitions, then each partition is joined on its own
// (its build side in one relation). Right / full joins also join the
// partitions no probe row reached (their build rows come out unmatched).
// NOT IN (one key) needs the whole set: a NULL in it empties the answer,
// an empty set keeps every row; otherwise it is an anti join per partition
// with the probe rows whose key is NULL dropped.
class GraceJoinOp : public RecordBatchStream {
 public:
  GraceJoinOp(ExecContext* ctx, OperatorPtr left, SchemaPtr right_schema, JoinSpec spec, SchemaPtr schema,
              std::shared_ptr<GraceSide> build)
      : ctx_(ctx),
        left_(std::move(left)),
        right_schema_(std::move(right_schema)),
        spec_(std::move(spec)),
        schema_(std::move(schema)),
        build_(std::move(build)) {
    left_schema_ = left_->schema();
  }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    auto r = NextImpl();
    if (!r.ok()) return NameOperator(r.status(), "hash join");
    return r;
  }

 private:
  Result<RecordBatchPtr> NextImpl() {
    if (!probe_ && spec_.kind == JoinKind::kNullAwareAnti) {
      if (build_->null_key_rows() > 0) return RecordBatchPtr{};  // x NOT IN (..., NULL) is never true
      if (build_->rows() == 0) {                                 // NOT IN of the empty set: every row
        QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, left_->Next());
        return b ? MakeBatch(schema_, b->num_rows, b->columns) : b;
      }
    }
    if (!probe_) {
      probe_ = std::make_shared<GraceSide>(ctx_, left_->schema(), "hash join probe");
      if (spec_.kind == JoinKind::kNullAwareAnti) {
        probe_->DropNullKeys();
        spec_.kind = JoinKind::kAnti;
      }
      while (true) {
        QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, left_->Next());
        if (!b) break;
        if (b->num_rows == 0) continue;
        QUIVER_ASSIGN_OR_RETURN(auto keys, EvaluateKeys(spec_.left_keys, *b, ctx_));
        QUIVER_RETURN_NOT_OK(probe_->Write(b, keys));
      }
      left_.reset();
      QUIVER_RETURN_NOT_OK(probe_->Finish());
    }
    while (true) {
      if (current_) {
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, current_->Next());
        if (b) return b;
        current_.reset();
      }
      if (partition_ >= kGracePartitions) return RecordBatchPtr{};
      const int p = partition_++;
      std::vector<SpillFile> build_files = build_->Take(p);
      std::vector<SpillFile> probe_files = probe_->Take(p);
      bool probe_rows = false, build_rows = false;
      for (const auto& f : probe_files) probe_rows = probe_rows || f.rows > 0;
      for (const auto& f : build_files) build_rows = build_rows || f.rows > 0;
      // No probe row: nothing to emit but a right / full join's build rows.
      const bool keeps_build = spec_.kind == JoinKind::kRight || spec_.kind == JoinKind::kFull;
      if (!probe_rows && !(keeps_build && build_rows)) continue;
      QUIVER_ASSIGN_OR_RETURN(
          current_, MakePartitionJoin(ctx_, left_schema_, std::move(probe_files), right_schema_, std::move(build_files),
                                      /*keep_build=*/false, spec_, schema_));
    }
  }
  ExecContext* ctx_;
  OperatorPtr left_;
  SchemaPtr right_schema_;
  JoinSpec spec_;
  SchemaPtr schema_;
  std::shared_ptr<GraceSide> build_, probe_;
  SchemaPtr left_schema_;
  OperatorPtr current_;
  int partition_ = 0;
};

// `first`'s batches, then `rest`'s (as `first`'s schema).
class ChainStream : public RecordBatchStream {
 public:
  ChainStream(OperatorPtr first, OperatorPtr rest) : first_(std::move(first)), rest_(std::move(rest)) {}
  const SchemaPtr& schema() const override { return first_->schema(); }
  Result<RecordBatchPtr> Next() override {
    if (!first_done_) {
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, first_->Next());
      if (b) return b;
      first_done_ = true;
    }
    if (!rest_) return RecordBatchPtr{};
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, rest_->Next());
    return b ? MakeBatch(first_->schema(), b->num_rows, b->columns) : b;
  }

 private:
  OperatorPtr first_, rest_;
  bool first_done_ = false;
};

// Writes `batches` (a side's own columns) to `side`'s partitions by
// `keys`, dropping them as it goes.
Status SpillToPartitions(ExecContext* ctx, const std::vector<ExprPtr>& keys, GraceSide* side,
                         std::vector<RecordBatchPtr>* batches) {
  for (auto& b : *batches) {
    QUIVER_ASSIGN_OR_RETURN(auto k, EvaluateKeys(keys, *b, ctx));
    QUIVER_RETURN_NOT_OK(side->Write(b, k));
    b.reset();
  }
  batches->clear();
  return Status::OK();
}

// Runs `node`'s pipeline with every worker writing its batches to one
// new GraceSide (`what` names it in errors) by `keys`; finished.
Result<std::shared_ptr<GraceSide>> PartitionPipeline(ExecContext* ctx, const NodePtr& node,
                                                     const std::vector<ExprPtr>& keys, const std::string& what) {
  auto side = std::make_shared<GraceSide>(ctx, node->schema(), what);
  QUIVER_RETURN_NOT_OK(RunPipeline(ctx, node, [&](int, RecordBatchStream* in, const std::atomic<bool>& stop) -> Status {
    while (!stop.load(std::memory_order_relaxed)) {
      QUIVER_RETURN_NOT_OK(ctx->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, in->Next());
      if (!b) break;
      if (b->num_rows == 0) continue;
      QUIVER_ASSIGN_OR_RETURN(auto k, EvaluateKeys(keys, *b, ctx));
      QUIVER_RETURN_NOT_OK(side->Write(b, k));
    }
    return Status::OK();
  }));
  QUIVER_RETURN_NOT_OK(side->Finish());
  return side;
}

// A right / full outer hash join that may spill (one instance over
// gathered inputs): the build side is held while memory allows and built
// into one relation before any probe row is read; when memory gets tight
// or the build fails with OutOfMemory, the build side goes to the grace
// partitions and the join runs as a GraceJoinOp.
class SpillableSerialJoinOp : public RecordBatchStream {
 public:
  SpillableSerialJoinOp(ExecContext* ctx, OperatorPtr left, OperatorPtr right, JoinSpec spec, SchemaPtr schema)
      : ctx_(ctx),
        left_(std::move(left)),
        right_(std::move(right)),
        spec_(std::move(spec)),
        schema_(std::move(schema)) {}
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    if (!inner_) {
      Status st = Start();
      if (!st.ok()) return NameOperator(st, "hash join");
    }
    return inner_->Next();
  }

 private:
  Status Start() {
    const SchemaPtr right_schema = right_->schema();
    auto build = std::make_shared<GraceSide>(ctx_, right_schema, "hash join build");
    std::vector<RecordBatchPtr> held;
    bool grace = false;
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, right_->Next());
      if (!b) break;
      if (b->num_rows == 0) continue;
      held.push_back(std::move(b));
      if (grace || ctx_->MemoryTight()) {
        grace = true;
        QUIVER_RETURN_NOT_OK(SpillToPartitions(ctx_, spec_.right_keys, build.get(), &held));
      }
    }
    right_.reset();
    if (!grace) {
      auto op = std::make_unique<HashJoinOp>(ctx_, std::move(left_), MakeBatchesStream(right_schema, held),
                                             right_schema, spec_, schema_);
      QUIVER_RETURN_NOT_OK(op->Init());
      Status st = op->BuildNow();
      if (st.ok() && !ctx_->MemoryTight()) {
        held.clear();
        inner_ = std::move(op);
        return Status::OK();
      }
      if (!st.ok() && !st.IsOutOfMemory()) return st;
      left_ = op->TakeLeft();  // not read yet: the relation is built before probing
      op.reset();              // its relation goes
      QUIVER_RETURN_NOT_OK(SpillToPartitions(ctx_, spec_.right_keys, build.get(), &held));
    }
    QUIVER_RETURN_NOT_OK(build->Finish());
    inner_ = std::make_unique<GraceJoinOp>(ctx_, std::move(left_), right_schema, spec_, schema_, std::move(build));
    return Status::OK();
  }

  ExecContext* ctx_;
  OperatorPtr left_, right_;
  JoinSpec spec_;
  SchemaPtr schema_;
  OperatorPtr inner_;
};

// A hash join whose probe side is parallel: the build side runs as its own
// pipeline at Prepare (keys evaluated in the workers), the relation is built
// once, and every instance probes it with its own HashJoinProbe.
class ParallelHashJoinNode : public PhysicalNode {
 public:
  ParallelHashJoinNode(ExecContext* ctx, NodePtr left, NodePtr right, JoinSpec spec, SchemaPtr schema)
      : PhysicalNode(ctx, std::move(schema)),
        left_(std::move(left)),
        right_(std::move(right)),
        spec_(std::move(spec)) {}
  // After a spill: the probe side is partitioned by its pipeline's
  // workers at Prepare, then the instances join the partitions
  // (GracePartitionQueue). NOT IN keeps one GraceJoinOp (its set's NULLs
  // and emptiness are settled over the whole set first).
  bool parallel() const override { return !SerialGrace() && left_->parallel(); }
  Result<OperatorPtr> Instantiate() override {
    if (SerialGrace()) {
      QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, Gathered(ctx_, left_));
      return OperatorPtr(
          std::make_unique<GraceJoinOp>(ctx_, std::move(in), right_->schema(), spec_, schema_, grace_build_));
    }
    if (grace_) {
      return OperatorPtr(
          std::make_unique<GracePartitionsOp>(ctx_, grace_queue_, left_->schema(), right_->schema(), spec_, schema_));
    }
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr in, left_->Instantiate());
    auto op = std::make_unique<HashJoinOp>(ctx_, std::move(in), nullptr, right_->schema(), spec_, schema_, build_);
    QUIVER_RETURN_NOT_OK(op->Init());
    return OperatorPtr(std::move(op));
  }
  void Release() override {
    build_.reset();
    grace_build_.reset();
    grace_queue_.reset();
    left_->Release();
  }

 protected:
  Status DoPrepare() override {
    Status st = Build();
    if (st.ok() && grace_ && !SerialGrace()) st = PartitionProbeSide();
    if (!st.ok()) return NameOperator(st, "hash join");
    // A serial grace join reads its probe side through a gather (prepared
    // there); a parallel one has read it already.
    return grace_ ? Status::OK() : left_->Prepare();
  }

 private:
  bool SerialGrace() const { return grace_ && spec_.kind == JoinKind::kNullAwareAnti; }

  // The probe side to the grace partitions, written by its pipeline's
  // workers (GraceSide::Write is thread-safe); the node's instances then
  // join the partitions.
  Status PartitionProbeSide() {
    QUIVER_ASSIGN_OR_RETURN(auto probe, PartitionPipeline(ctx_, left_, spec_.left_keys, "hash join probe"));
    grace_queue_ = std::make_shared<GracePartitionQueue>(grace_build_, std::move(probe));
    return Status::OK();
  }

  Status Build() {
    // A prototype instance lays out the build and probe schemas and the
    // join layer's options, exactly as each probing instance will.
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr proto_left, MakeEmptyStream(left_->schema()));
    HashJoinOp proto(ctx_, std::move(proto_left), nullptr, right_->schema(), spec_, schema_);
    QUIVER_RETURN_NOT_OK(proto.Init());
    const SchemaPtr build_schema = proto.build_schema();
    std::vector<std::vector<RecordBatchPtr>> parts(static_cast<size_t>(std::max(1, ctx_->threads)));
    const bool spillable = ctx_->spill && (spec_.kind != JoinKind::kNullAwareAnti || spec_.left_keys.size() == 1);
    const int nright = static_cast<int>(right_->schema()->fields.size());
    grace_build_ = std::make_shared<GraceSide>(ctx_, right_->schema(), "hash join build");
    // Moves keyed batches (own columns + keys) to the build partitions.
    auto spill_keyed = [&](std::vector<RecordBatchPtr>* batches) -> Status {
      for (auto& k : *batches) {
        std::vector<ArrayDataPtr> own(k->columns.begin(), k->columns.begin() + nright);
        std::vector<Vec> keys;
        for (size_t c = static_cast<size_t>(nright); c < k->columns.size(); ++c) {
          Vec v;
          v.array = k->columns[c];
          keys.push_back(std::move(v));
        }
        QUIVER_RETURN_NOT_OK(grace_build_->Write(MakeBatch(right_->schema(), k->num_rows, std::move(own)), keys));
        k.reset();
      }
      batches->clear();
      return Status::OK();
    };
    QUIVER_RETURN_NOT_OK(
        RunPipeline(ctx_, right_, [&](int worker, RecordBatchStream* in, const std::atomic<bool>& stop) -> Status {
          auto& out = parts[static_cast<size_t>(worker)];
          while (!stop.load(std::memory_order_relaxed)) {
            QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
            QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, in->Next());
            if (!b) break;
            if (b->num_rows == 0) continue;
            QUIVER_ASSIGN_OR_RETURN(b, WithKeys(b, spec_.right_keys, build_schema, kNoRowIds, ctx_, ctx_->pool.get()));
            out.push_back(std::move(b));
            // Past the reserve: this side goes to the partitions from now on.
            if (spillable && (grace_.load() || ctx_->MemoryTight())) {
              grace_.store(true);
              QUIVER_RETURN_NOT_OK(spill_keyed(&out));
            }
          }
          return Status::OK();
        }));
    std::vector<RecordBatchPtr> batches;
    for (auto& p : parts) {
      for (auto& b : p) batches.push_back(std::move(b));
      p.clear();
    }
    if (!grace_.load()) {
      auto shared = std::make_shared<SharedBuild>();
      shared->join = proto.join_layer();
      auto relation = shared->join->BuildRelation(batches, ctx_->tmm.get(), BuildThreads(ctx_));
      if (relation.ok() && !(spillable && ctx_->MemoryTight())) {
        shared->relation = std::move(*relation);
        build_ = std::move(shared);
        grace_build_.reset();
        return Status::OK();
      }
      if (relation.ok()) {
        (*relation)->Close();  // it fits, but leaves the probe side no room: partition instead
      } else if (!relation.status().IsOutOfMemory() || !spillable) {
        return relation.status();
      }
      grace_.store(true);  // the relation does not fit: grace hash join
    }
    QUIVER_RETURN_NOT_OK(spill_keyed(&batches));
    return grace_build_->Finish();
  }

  static Result<OperatorPtr> MakeEmptyStream(const SchemaPtr& schema) { return MakeBatchesStream(schema, {}); }

  NodePtr left_, right_;
  JoinSpec spec_;
  std::shared_ptr<SharedBuild> build_;
  std::atomic<bool> grace_{false};
  std::shared_ptr<GraceSide> grace_build_;
  std::shared_ptr<GracePartitionQueue> grace_queue_;
};

// A semi / anti join that builds its left side (BuildLeftSemiJoinOp): the
// left side is gathered and built at Prepare, then the right side runs as
// a parallel pipeline whose workers probe with their own probers and mark
// their own copies of the left rows' marks, OR-ed together at the end (TPC-H
// Q21: 6 M lineitem rows probe the few thousand late orders of one nation).
// One instance emits the left rows. A left side that does not fit (memory
// tight while it is held or built, spilling on) makes it a grace hash join
// the usual way round: the right side is partitioned by its pipeline.
class BuildLeftSemiJoinNode : public PhysicalNode {
 public:
  BuildLeftSemiJoinNode(ExecContext* ctx, NodePtr left, NodePtr right, JoinSpec spec, SchemaPtr schema)
      : PhysicalNode(ctx, std::move(schema)),
        left_(std::move(left)),
        right_(std::move(right)),
        spec_(std::move(spec)) {}
  bool parallel() const override { return false; }
  Result<OperatorPtr> Instantiate() override {
    if (!op_) return Status::Invalid("internal: the build-left semi join was instantiated twice or not prepared");
    return std::move(op_);
  }
  void Release() override { op_.reset(); }

 protected:
  Status DoPrepare() override {
    Status st = Run();
    return st.ok() ? st : NameOperator(st, "hash join");
  }

 private:
  Status Run() {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr gathered, Gathered(ctx_, left_));
    const SchemaPtr left_schema = gathered->schema();
    // The left side, held while memory allows (spilling on).
    std::vector<RecordBatchPtr> held;
    bool grace = false;
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, gathered->Next());
      if (!b) {
        gathered.reset();
        break;
      }
      if (b->num_rows == 0) continue;
      held.push_back(std::move(b));
      if (ctx_->MemoryTight()) {
        grace = true;
        break;
      }
    }
    if (!grace) {
      auto op = std::make_unique<BuildLeftSemiJoinOp>(ctx_, MakeBatchesStream(left_schema, held), right_->schema(),
                                                      spec_, schema_);
      QUIVER_RETURN_NOT_OK(op->Init());
      Status st = op->Build();
      if (st.ok() && !ctx_->MemoryTight()) {
        held.clear();
        return Probe(std::move(op));
      }
      if (!st.ok() && !(st.IsOutOfMemory() && ctx_->spill)) return st;
      op.reset();  // its relation goes
    }
    return RunGrace(left_schema, std::move(held), std::move(gathered));
  }

  // The right side runs as a pipeline whose workers probe the left side's
  // relation, each marking its own copy of the left rows' marks.
  Status Probe(std::unique_ptr<BuildLeftSemiJoinOp> op) {
    std::mutex merge;
    QUIVER_RETURN_NOT_OK(
        RunPipeline(ctx_, right_, [&](int, RecordBatchStream* in, const std::atomic<bool>& stop) -> Status {
          QUIVER_ASSIGN_OR_RETURN(std::unique_ptr<join::HashJoinProbe> prober, op->MakeProber());
          std::vector<uint8_t> marks(static_cast<size_t>(op->left_rows()), 0);
          while (!stop.load(std::memory_order_relaxed)) {
            QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
            QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, in->Next());
            if (!b) break;
            if (b->num_rows == 0) continue;
            QUIVER_RETURN_NOT_OK(op->ProbeInto(b, prober.get(), &marks));
          }
          prober.reset();
          std::lock_guard<std::mutex> lock(merge);
          op->MergeMarks(marks);
          return Status::OK();
        }));
    op->FinishProbing();
    op_ = std::move(op);
    return Status::OK();
  }

  // The left side does not fit: the right side goes to the grace
  // partitions (its pipeline's workers writing), and the join runs the
  // usual way round per partition (left probes, right builds), the left
  // side (`held`, then the rest of `rest`) partitioned as it is read.
  Status RunGrace(const SchemaPtr& left_schema, std::vector<RecordBatchPtr> held, OperatorPtr rest) {
    const SchemaPtr right_schema = right_->schema();
    QUIVER_ASSIGN_OR_RETURN(auto build, PartitionPipeline(ctx_, right_, spec_.right_keys, "hash join build"));
    JoinSpec spec = spec_;
    spec.build_left = false;
    OperatorPtr left = std::make_unique<ChainStream>(MakeBatchesStream(left_schema, std::move(held)), std::move(rest));
    op_ =
        std::make_unique<GraceJoinOp>(ctx_, std::move(left), right_schema, std::move(spec), schema_, std::move(build));
    return Status::OK();
  }

  NodePtr left_, right_;
  JoinSpec spec_;
  OperatorPtr op_;
};

// Joins that see all their input in one thread (right / full outer, nested
// loops): one instance over gathered inputs.
class SerialJoinNode : public PhysicalNode {
 public:
  SerialJoinNode(ExecContext* ctx, NodePtr left, NodePtr right, JoinSpec spec, SchemaPtr schema)
      : PhysicalNode(ctx, std::move(schema)),
        left_(std::move(left)),
        right_(std::move(right)),
        spec_(std::move(spec)) {}
  bool parallel() const override { return false; }
  Result<OperatorPtr> Instantiate() override {
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr right, Gathered(ctx_, right_));
    QUIVER_ASSIGN_OR_RETURN(OperatorPtr left, Gathered(ctx_, left_));
    if (ctx_->spill && !spec_.left_keys.empty())
      return OperatorPtr(
          std::make_unique<SpillableSerialJoinOp>(ctx_, std::move(left), std::move(right), spec_, schema_));
    return MakeJoin(ctx_, std::move(left), std::move(right), spec_, schema_);
  }

 protected:
  Status DoPrepare() override { return Status::OK(); }

 private:
  NodePtr left_, right_;
  JoinSpec spec_;
};

}  // namespace

Result<NodePtr> MakeJoinNode(ExecContext* ctx, NodePtr left, NodePtr right, JoinSpec spec, SchemaPtr schema) {
  if (!spec.left_keys.empty() && spec.build_left && (spec.kind == JoinKind::kSemi || spec.kind == JoinKind::kAnti))
    return NodePtr(std::make_shared<BuildLeftSemiJoinNode>(ctx, std::move(left), std::move(right), std::move(spec),
                                                           std::move(schema)));
  const bool serial = spec.left_keys.empty() || spec.kind == JoinKind::kRight || spec.kind == JoinKind::kFull;
  if (serial)
    return NodePtr(
        std::make_shared<SerialJoinNode>(ctx, std::move(left), std::move(right), std::move(spec), std::move(schema)));
  return NodePtr(std::make_shared<ParallelHashJoinNode>(ctx, std::move(left), std::move(right), std::move(spec),
                                                        std::move(schema)));
}

}  // namespace quiver::sql

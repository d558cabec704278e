// quiver/sql/execution/hash_join_op.h — the hash join of one thread over
// the join layer (quiver/join/hash_join.h): keys are expressions, evaluated
// into extra columns of each side (join_keys.h), with a residual condition
// for inner, left, right, full, semi and anti joins (matches tracked per
// probe row, and per build row for right / full joins), NOT IN without
// one, and mark joins: every probe row once followed by a BOOLEAN mark,
// whether some build row matched (with a residual: matched and passed it);
// with JoinSpec::mark_null_aware NULL instead of FALSE where SQL's IN is
// unknown (the probe key NULL, or a NULL key in the build side, which is
// not empty). DuckDB's MARK join. Internal to sql/execution; not installed.
//
// Output is bounded: the operator pulls at most max_batch_rows output rows
// at a time from the join layer (HashJoinProbe::Start / NextOutput,
// resumable inside a key's duplicate chain) and hands each out before the
// next pull, so a key with many duplicates never buffers the product of a
// batch; cancellation is polled between pulls.
//
// Memory: the relation from the statement's TaskMemoryManager (on or off
// the heap), batches from its pool. Thread safety: one thread per
// instance; a SharedBuild is probed read-only by many.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "quiver/join/hash_join.h"
#include "quiver/sql/execution/join_keys.h"

namespace quiver::sql {

/// The relation a parallel hash join's build pipeline made, probed by every
/// instance (read-only while they run); closed when the last one lets go.
struct SharedBuild {
  std::shared_ptr<const join::HashJoin> join;
  std::shared_ptr<join::HashedRelation> relation;
  /// The build side's rows and rows whose first key is NULL (a
  /// null-aware mark join's answer for unmatched rows).
  int64_t rows = 0, null_key_rows = 0;
  ~SharedBuild() {
    if (relation) relation->Close();
  }
};

/// The hash join of one thread: builds a relation from `right` (or probes a
/// SharedBuild), then streams `left` through it. Init() before the first
/// Next(). Errors: the join layer's and the expressions' errors, named
/// "hash join"; OutOfMemory from the relation (a caller may then fall back
/// to a grace join: BuildNow / TakeLeft); Cancelled.
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
    mark_ = spec_.kind == JoinKind::kMark;
    tracked_ = (spec_.residual && spec_.kind != JoinKind::kInner) || mark_;
    track_build_ = tracked_ && (spec_.kind == JoinKind::kRight || spec_.kind == JoinKind::kFull);
  }
  ~HashJoinOp() override {
    prober_.reset();
    if (relation_ && !shared_) relation_->Close();
  }
  const SchemaPtr& build_schema() const { return build_schema_; }
  const std::shared_ptr<const join::HashJoin>& join_layer() const { return join_; }
  const SchemaPtr& schema() const override { return schema_; }

  Status Init();

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
  Status Start();
  Status Build();

  // Output of the join layer: left cols [+ row id] + right cols.
  Status Emit(const RecordBatchPtr& out);

  // Right / full joins with a residual: the build rows no pair matched,
  // the left columns NULL.
  Status EmitUnmatchedBuildRows();

  // After every slice of a tracked probe batch: its unmatched / matched rows.
  Status FinishTracked(const RecordBatchPtr& probe);

  // A mark join's probe batch: every row, then the mark (hash_join_op.h).
  Status FinishMarked(const RecordBatchPtr& probe);

  Result<RecordBatchPtr> NextImpl();

  ExecContext* ctx_;
  OperatorPtr left_, right_;
  JoinSpec spec_;
  SchemaPtr schema_, right_schema_, build_schema_, probe_schema_;
  std::shared_ptr<SharedBuild> shared_;
  int nleft_ = 0, nright_ = 0;
  bool tracked_ = false, track_build_ = false;
  bool residual_in_join_ = false;  // an inner join's residual, run by the join layer on the pairs
  bool mark_ = false;
  // Mark joins: the build side's rows and NULL-key rows (SharedBuild).
  int64_t build_rows_ = 0, build_null_rows_ = 0;
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

}  // namespace quiver::sql

// quiver/sql/execution/join.cc — the join nodes of a physical plan and
// MakeJoinNode, which picks one for a JoinSpec:
//  - ParallelHashJoinNode: the build side runs as its own pipeline at
//    Prepare, the relation is built once and every probing instance shares
//    it; a build that does not fit turns into a grace hash join whose
//    partitions the instances join (grace_join.h);
//  - SerialJoinNode: right / full outer joins (spillable, grace_join.h) and
//    nested-loop joins (nested_loop_join.h), one instance over gathered
//    inputs;
//  - build-left semi / anti joins (build_left_semi_join.h).
// The operators of one thread are in hash_join_op.h, nested_loop_join.h,
// grace_join.h and build_left_semi_join.h.
#include <algorithm>
#include <mutex>

#include "quiver/sql/execution/build_left_semi_join.h"
#include "quiver/sql/execution/grace_join.h"
#include "quiver/sql/execution/hash_join_op.h"
#include "quiver/sql/execution/join_keys.h"
#include "quiver/sql/execution/nested_loop_join.h"
#include "quiver/sql/execution/operators.h"
#include "quiver/sql/execution/pipeline.h"

namespace quiver::sql {
namespace {

// The stream-level join of one thread (the serial join nodes).
Result<OperatorPtr> MakeJoin(ExecContext* ctx, OperatorPtr left, OperatorPtr right, JoinSpec spec, SchemaPtr schema) {
  if (spec.left_keys.empty()) {
    return MakeNestedLoopJoin(ctx, std::move(left), std::move(right), std::move(spec), std::move(schema));
  }
  SchemaPtr right_schema = right->schema();
  auto op = std::make_unique<HashJoinOp>(ctx, std::move(left), std::move(right), std::move(right_schema),
                                         std::move(spec), std::move(schema));
  QUIVER_RETURN_NOT_OK(op->Init());
  return OperatorPtr(std::move(op));
}

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
      return MakeGraceJoin(ctx_, std::move(in), right_->schema(), spec_, schema_, grace_build_);
    }
    if (grace_) {
      return MakeGracePartitions(ctx_, grace_queue_, left_->schema(), right_->schema(), spec_, schema_);
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
    if (st.ok() && grace_ && spec_.kind == JoinKind::kMark) {
      // Each partition's join answers its unmatched rows from the whole
      // build side's counts (a NULL key anywhere makes IN unknown).
      spec_.mark_build_rows = grace_build_->rows();
      spec_.mark_build_null_rows = grace_build_->null_key_rows();
    }
    // The build is complete: its key ranges may now filter the probe
    // side's scans, which are prepared below (or by the partitioning).
    if (st.ok()) PublishJoinFilter();
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
    grace_queue_ = MakeGracePartitionQueue(grace_build_, std::move(probe));
    return Status::OK();
  }

  // The key ranges the build workers summarized, merged (empty when a key
  // could not be summarized: no filter then).
  std::vector<JoinKeyBounds> MergedBounds() const {
    std::vector<JoinKeyBounds> bounds;
    for (size_t j = 0; j < spec_.filter_keys.size(); ++j) {
      JoinKeySummary all;
      for (const auto& w : summaries_) all.Merge(w[j]);
      if (!all.usable()) return {};
      bounds.push_back(all.bounds());
    }
    return bounds;
  }

  // Publishes the build's key ranges (with bitmaps when the build was held
  // whole: Build made them; a grace join's partitions are on disk).
  void PublishJoinFilter() {
    if (!spec_.join_filter) return;
    std::vector<JoinKeyBounds> bounds = bounds_.empty() ? MergedBounds() : std::move(bounds_);
    bounds_.clear();
    summaries_.clear();
    if (bounds.size() != spec_.filter_keys.size()) return;
    spec_.join_filter->Publish(std::move(bounds));
    if (ctx_->join_filter_counters) ctx_->join_filter_counters->published.fetch_add(1, std::memory_order_relaxed);
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
    const size_t nfilter = spec_.join_filter ? spec_.filter_keys.size() : 0;
    summaries_.assign(parts.size(), std::vector<JoinKeySummary>(nfilter));
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
            for (size_t j = 0; j < nfilter; ++j) {
              const auto key = static_cast<size_t>(nright + spec_.filter_keys[j]);
              summaries_[static_cast<size_t>(worker)][j].Add(*b->columns[key]);
            }
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
      // The whole build side is here: the join filter's key bitmaps.
      if (nfilter > 0) {
        bounds_ = MergedBounds();
        for (size_t j = 0; j < bounds_.size(); ++j) {
          const auto key = static_cast<size_t>(nright + spec_.filter_keys[j]);
          std::vector<ArrayDataPtr> keys;
          for (const auto& b : batches) keys.push_back(b->columns[key]);
          AddKeyBitmap(&bounds_[j], keys);
        }
      }
      auto shared = std::make_shared<SharedBuild>();
      shared->join = proto.join_layer();
      for (const auto& b : batches) {
        shared->rows += b->num_rows;
        shared->null_key_rows += b->columns[static_cast<size_t>(nright)]->null_count;
      }
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
  // Join filter: each build worker's key summaries (one per filtered key)
  // and, for a build held whole, the merged bounds with their bitmaps;
  // dropped once published.
  std::vector<std::vector<JoinKeySummary>> summaries_;
  std::vector<JoinKeyBounds> bounds_;
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
      return MakeSpillableSerialJoin(ctx_, std::move(left), std::move(right), spec_, schema_);
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
    return MakeBuildLeftSemiJoinNode(ctx, std::move(left), std::move(right), std::move(spec), std::move(schema));
  const bool serial = spec.left_keys.empty() || spec.kind == JoinKind::kRight || spec.kind == JoinKind::kFull;
  if (serial)
    return NodePtr(
        std::make_shared<SerialJoinNode>(ctx, std::move(left), std::move(right), std::move(spec), std::move(schema)));
  return NodePtr(std::make_shared<ParallelHashJoinNode>(ctx, std::move(left), std::move(right), std::move(spec),
                                                        std::move(schema)));
}

}  // namespace quiver::sql

// quiver/sql/execution/build_left_semi_join.cc — semi / anti joins that
// build their left side (build_left_semi_join.h).
#include "quiver/sql/execution/build_left_semi_join.h"

#include <mutex>
#include <numeric>

#include "quiver/columnar/take.h"
#include "quiver/sql/execution/grace_join.h"
#include "quiver/sql/execution/join_keys.h"
#include "quiver/sql/execution/pipeline.h"

namespace quiver::sql {
namespace {

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
    OperatorPtr left = MakeChainStream(MakeBatchesStream(left_schema, std::move(held)), std::move(rest));
    op_ = MakeGraceJoin(ctx_, std::move(left), right_schema, std::move(spec), schema_, std::move(build));
    return Status::OK();
  }

  NodePtr left_, right_;
  JoinSpec spec_;
  OperatorPtr op_;
};

}  // namespace

NodePtr MakeBuildLeftSemiJoinNode(ExecContext* ctx, NodePtr left, NodePtr right, JoinSpec spec, SchemaPtr schema) {
  return std::make_shared<BuildLeftSemiJoinNode>(ctx, std::move(left), std::move(right), std::move(spec),
                                                 std::move(schema));
}

}  // namespace quiver::sql

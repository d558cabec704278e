// quiver/sql/execution/hash_join_op.cc — the hash join of one thread
// (hash_join_op.h).
#include "quiver/sql/execution/hash_join_op.h"

#include <algorithm>
#include <numeric>

#include "quiver/columnar/take.h"

namespace quiver::sql {

Status HashJoinOp::Init() {
  if (spec_.residual && spec_.kind == JoinKind::kNullAwareAnti)
    return Status::NotImplemented("NOT IN with a condition other than column equalities");
  if (mark_ && spec_.mark_null_aware && (spec_.residual || spec_.left_keys.size() != 1))
    return Status::Invalid("a null-aware mark join needs one key and no residual condition");
  build_schema_ = ExtendSchema(*right_schema_, spec_.right_keys, track_build_);
  probe_schema_ = ExtendSchema(*left_->schema(), spec_.left_keys, tracked_);
  join::HashJoinOptions o;
  // A mark join without a residual asks the join layer for the matched
  // probe rows' numbers only (a semi join); with one, for the pairs.
  const bool mark_semi = mark_ && !spec_.residual;
  o.type = mark_semi ? join::JoinType::kLeftSemi : tracked_ ? join::JoinType::kInner : ToJoinType(spec_.kind);
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
  if (mark_semi) probe_out = {nleft_ + static_cast<int>(spec_.left_keys.size())};
  o.probe_output = probe_out;
  o.build_output = build_out;
  o.max_output_rows = ctx_->max_batch_rows;
  o.output_pool = ctx_->pool.get();
  // An inner join's residual runs in the join layer on the matched pairs,
  // before their other columns are gathered (the output columns are the
  // probe side's then the build side's, as the residual's positions).
  residual_in_join_ = spec_.residual && spec_.kind == JoinKind::kInner && !tracked_;
  if (residual_in_join_) {
    VisitColumns(*spec_.residual, [&](int c) {
      if (std::find(o.residual_columns.begin(), o.residual_columns.end(), c) == o.residual_columns.end())
        o.residual_columns.push_back(c);
    });
    o.residual = [this](const RecordBatch& pairs) -> Result<std::vector<int64_t>> {
      EvalContext ev = ctx_->Eval(ctx_->pool.get());
      return EvaluateSelection(*spec_.residual, pairs, &ev);
    };
  }
  QUIVER_ASSIGN_OR_RETURN(join_, join::HashJoin::Make(build_schema_, probe_schema_, std::move(o)));
  return Status::OK();
}

Status HashJoinOp::Start() {
  if (prober_ || finished_) return Status::OK();
  right_types_.clear();
  for (const auto& f : right_schema_->fields) right_types_.push_back(f->type);
  if (shared_) {
    relation_ = shared_->relation;
    build_rows_ = shared_->rows;
    build_null_rows_ = shared_->null_key_rows;
    QUIVER_ASSIGN_OR_RETURN(prober_, join_->MakeProbe(relation_));
  } else {
    QUIVER_RETURN_NOT_OK(Build());
  }
  if (spec_.mark_build_rows >= 0) build_rows_ = spec_.mark_build_rows;
  if (spec_.mark_build_null_rows >= 0) build_null_rows_ = spec_.mark_build_null_rows;
  return Status::OK();
}

Status HashJoinOp::Build() {
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
    if (mark_) {
      build_rows_ += rows;
      build_null_rows_ += b->columns[static_cast<size_t>(nright_)]->null_count;
    }
    batches.push_back(std::move(b));
  }
  build_matched_.assign(static_cast<size_t>(base), 0);
  right_.reset();
  QUIVER_ASSIGN_OR_RETURN(relation_, join_->BuildRelation(batches, ctx_->tmm.get(), BuildThreads(ctx_)));
  batches.clear();
  QUIVER_ASSIGN_OR_RETURN(prober_, join_->MakeProbe(relation_));
  return Status::OK();
}

Status HashJoinOp::Emit(const RecordBatchPtr& out) {
  if (out->num_rows == 0) return Status::OK();
  RecordBatchPtr b = out;
  if (!tracked_) {
    if (spec_.residual && !residual_in_join_) {  // inner join with a residual: filter
      EvalContext ev = ctx_->Eval(ctx_->pool.get());
      RecordBatchPtr view = MakeBatch(schema_, b->num_rows, b->columns);
      QUIVER_ASSIGN_OR_RETURN(auto sel, EvaluateSelection(*spec_.residual, *view, &ev));
      if (sel.empty()) return Status::OK();
      QUIVER_ASSIGN_OR_RETURN(b, TakeRows(view, sel, ctx_->pool.get()));
    }
    pending_.push_back(MakeBatch(schema_, b->num_rows, b->columns));
    return Status::OK();
  }
  if (mark_ && !spec_.residual) {  // the matched probe rows' numbers
    const ArrayDataPtr& rowid = b->columns[0];
    const int64_t* ids = rowid->GetValues<int64_t>(1) + rowid->offset;
    for (int64_t r = 0; r < b->num_rows; ++r) matched_[static_cast<size_t>(ids[r])] = 1;
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

Status HashJoinOp::EmitUnmatchedBuildRows() {
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

Status HashJoinOp::FinishMarked(const RecordBatchPtr& probe) {
  const int64_t n = probe->num_rows;
  if (n == 0) return Status::OK();
  // 1 TRUE, 0 FALSE, 2 NULL (BoolArrayFromTruth).
  std::vector<uint8_t> truth(static_cast<size_t>(n), 0);
  const ArrayData& key = *probe->columns[static_cast<size_t>(nleft_)];
  const bool unknown_all = spec_.mark_null_aware && build_rows_ > 0 && build_null_rows_ > 0;
  const bool unknown_null_key = spec_.mark_null_aware && build_rows_ > 0 && key.null_count > 0;
  for (int64_t r = 0; r < n; ++r) {
    const size_t i = static_cast<size_t>(r);
    if (matched_[i]) {
      truth[i] = 1;
    } else if (unknown_all || (unknown_null_key && !key.IsValid(r))) {
      truth[i] = 2;  // x IN (..., NULL) without a match, NULL IN (non-empty)
    }
  }
  std::vector<ArrayDataPtr> cols(probe->columns.begin(), probe->columns.begin() + nleft_);
  QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr mark, BoolArrayFromTruth(truth.data(), n, ctx_->pool.get()));
  cols.push_back(std::move(mark));
  pending_.push_back(MakeBatch(schema_, n, std::move(cols)));
  return Status::OK();
}

Status HashJoinOp::FinishTracked(const RecordBatchPtr& probe) {
  if (mark_) return FinishMarked(probe);
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

Result<RecordBatchPtr> HashJoinOp::NextImpl() {
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

}  // namespace quiver::sql

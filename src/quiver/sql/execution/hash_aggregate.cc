// quiver/sql/execution/hash_aggregate.cc — the hash aggregate operator
// (GROUP BY, DISTINCT, plain aggregates): the node's Prepare, which runs
// the child's pipeline into one AggregateTable per worker, and the
// emission of the result. Each input batch: the group expressions are
// evaluated, every row's key is encoded into bytes and looked up in the
// GroupTable (aggregate_keys.cc); then each aggregate updates its
// per-group state in a typed loop (aggregate_table.cc). DISTINCT
// aggregates keep a second table of (group, value) and update only on a
// value's first occurrence (aggregate_distinct.cc). The workers' tables
// are merged (aggregate_merge.cc). The tables and states live in
// TaskMemoryManager pages ("hash aggregate" consumer), on- or off-heap.
// Past its share of the memory a table spills (aggregate_spill.cc).
// Without GROUP BY there is exactly one group, also for empty input
// (count 0, other aggregates NULL).
#include <algorithm>
#include <atomic>
#include <mutex>

#include "quiver/sql/execution/aggregate_table.h"
#include "quiver/sql/execution/hash_aggregate_node.h"
#include "quiver/sql/execution/operators.h"
#include "quiver/sql/execution/pipeline.h"
#include "quiver/sql/execution/task_scheduler.h"

namespace quiver::sql {
namespace {

// Hands out ranges of a finished table's groups; instances share the cursor.
// Emits the groups of one or more tables (the partitions of a parallel
// merge) in batches of at most max_batch_rows, a batch within one table.
// Parallel instances share `cursor`: the index of the next batch in the
// list every instance computes alike from the same tables.
class AggregateEmitOp : public RecordBatchStream {
 public:
  /// `keep_alive`: the tables whose arenas hold string min / max values
  /// that `tables` point to (the workers' tables of a merge), kept until
  /// this instance ends, whenever the node is released.
  /// `skips` (empty, or one per table, each null or one byte per group):
  /// the groups of a table not to emit (merged into another table's).
  AggregateEmitOp(ExecContext* ctx, SchemaPtr schema, std::vector<std::shared_ptr<const AggregateTable>> tables,
                  std::shared_ptr<std::atomic<int64_t>> cursor, std::vector<std::shared_ptr<AggregateTable>> keep_alive,
                  std::vector<std::shared_ptr<const std::vector<uint8_t>>> skips = {})
      : ctx_(ctx),
        schema_(std::move(schema)),
        tables_(std::move(tables)),
        keep_alive_(std::move(keep_alive)),
        skips_(std::move(skips)),
        cursor_(std::move(cursor)) {
    const int64_t step = std::max<int64_t>(1, ctx_->max_batch_rows);
    for (size_t t = 0; t < tables_.size(); ++t) {
      const int64_t rows = tables_[t]->num_output_rows();
      for (int64_t b = 0; b < rows; b += step) ranges_.push_back({t, b, std::min(step, rows - b)});
    }
  }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    if (tables_.empty()) return RecordBatchPtr{};
    QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    while (true) {
      const int64_t i = cursor_->fetch_add(1);
      if (i >= static_cast<int64_t>(ranges_.size())) {
        tables_.clear();
        keep_alive_.clear();
        skips_.clear();
        return RecordBatchPtr{};
      }
      const Range& r = ranges_[static_cast<size_t>(i)];
      const uint8_t* skip = r.table < skips_.size() && skips_[r.table] ? skips_[r.table]->data() : nullptr;
      auto out = tables_[r.table]->EmitRange(r.begin, r.rows, skip);
      if (!out.ok()) return NameOperator(out.status(), "hash aggregate");
      if ((*out)->num_rows == 0) continue;  // every group of the range was merged elsewhere
      return out;
    }
  }

 private:
  struct Range {
    size_t table;
    int64_t begin, rows;
  };
  ExecContext* ctx_;
  SchemaPtr schema_;
  std::vector<std::shared_ptr<const AggregateTable>> tables_;
  std::vector<std::shared_ptr<AggregateTable>> keep_alive_;
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> skips_;
  std::vector<Range> ranges_;
  std::shared_ptr<std::atomic<int64_t>> cursor_;
};

}  // namespace

Result<OperatorPtr> HashAggregateNode::Instantiate() {
  if (spilled_) {
    return MakeSpilledAggregateEmitOp(
        ctx_, schema_, std::move(partitions_), std::move(distinct_partitions_), [this] { return MakeTable(); },
        groups_.empty(), aggs_.size());
  }
  return OperatorPtr(std::make_unique<AggregateEmitOp>(ctx_, schema_, results_, cursor_, tables_, skips_));
}

void HashAggregateNode::Release() {
  results_.clear();
  skips_.clear();
  tables_.clear();
  partitions_.clear();
  distinct_partitions_.clear();
}

Status HashAggregateNode::DoPrepare() {
  Status st = Aggregate();
  if (!st.ok()) {
    tables_.clear();
    partitions_.clear();
    distinct_partitions_.clear();
    return NameOperator(st, "hash aggregate");
  }
  return Status::OK();
}

Result<std::shared_ptr<AggregateTable>> HashAggregateNode::MakeTable() {
  auto t = std::make_shared<AggregateTable>(ctx_, groups_, aggs_, schema_);
  QUIVER_RETURN_NOT_OK(t->Init());
  return t;
}

Status HashAggregateNode::Consume(std::shared_ptr<AggregateTable>* table, RecordBatchStream* in,
                                  const std::atomic<bool>* stop) {
  while (!stop || !stop->load(std::memory_order_relaxed)) {
    QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, in->Next());
    if (!b) break;
    if (b->num_rows == 0) continue;
    std::vector<uint8_t> keep;
    if (filter_) {
      EvalContext ev = ctx_->Eval(ctx_->scan_pool.get());
      QUIVER_ASSIGN_OR_RETURN(auto sel, EvaluateSelection(*filter_, *b, &ev));
      if (sel.empty()) continue;
      const auto n = static_cast<size_t>(b->num_rows);
      if (sel.size() * 4 >= n * 3) {
        if (sel.size() < n) {
          keep.assign(n, 0);
          for (int64_t r : sel) keep[static_cast<size_t>(r)] = 1;
        }
      } else {
        QUIVER_ASSIGN_OR_RETURN(b, TakeRows(b, sel, ctx_->scan_pool.get()));
      }
    }
    // Slices of a morsel: the arguments' computed values (Q1's decimal
    // products: 16 B a row each) stay in the core's cache, and the peak
    // halves (Q1: 7.5 -> 4.0 MiB at one thread). DISTINCT sets grow
    // while a slice's states are updated, past the point where it could
    // be consumed again: when such a table may spill, smaller slices,
    // with a spill check after each.
    const int64_t n = b->num_rows;
    const bool spilling_distinct = (*table)->has_distinct() && table_budget_bytes_ != INT64_MAX && CanSpill(**table);
    const int64_t step = spilling_distinct ? kDistinctSliceRows : kConsumeSliceRows;
    for (int64_t begin = 0; begin < n; begin += step) {
      RecordBatchPtr part = b;
      if (step < n) {
        QUIVER_ASSIGN_OR_RETURN(part, SliceBatch(b, begin, std::min(step, n - begin)));
      }
      QUIVER_RETURN_NOT_OK(ConsumeOne(table, *part, keep.empty() ? nullptr : keep.data() + begin));
    }
  }
  return Status::OK();
}

Status HashAggregateNode::ConsumeOne(std::shared_ptr<AggregateTable>* table, const RecordBatch& b,
                                     const uint8_t* keep_rows) {
  Status st = (*table)->Consume(b, keep_rows);
  if (st.IsOutOfMemory() && !(*table)->states_started() && CanSpill(**table) && (*table)->num_output_rows() > 0) {
    // Nothing of the batch is in the states yet: spill, then again.
    QUIVER_RETURN_NOT_OK(Spill(table));
    st = (*table)->Consume(b, keep_rows);
  }
  QUIVER_RETURN_NOT_OK(st);
  // Past this table's share or the statement's reserve: spill now, so
  // the other workers and the operators above keep room.
  const bool over_share = (*table)->used_bytes() > table_budget_bytes_;
  const bool tight = ctx_->MemoryTight() && (*table)->used_bytes() > ctx_->spill_reserve_bytes / 8;
  // (One group alone gains nothing from a spill, unless it has DISTINCT
  // values to spill.)
  if ((over_share || tight) && CanSpill(**table) &&
      ((*table)->num_output_rows() > 1 || (*table)->distinct_entries() > 1))
    QUIVER_RETURN_NOT_OK(Spill(table));
  return Status::OK();
}

Status HashAggregateNode::Aggregate() {
  partitions_.assign(kSpillPartitions, {});
  // Every worker aggregates into its own table, DISTINCT aggregates too
  // (their sets are merged value by value).
  QUIVER_RETURN_NOT_OK(child_->Prepare());
  const int degree = DegreeOf(*ctx_, *child_);
  if (ctx_->spill_reserve_bytes > 0) {
    // Each worker's table keeps to its share of the room left above the
    // reserve, so no worker starves another.
    // Half the share: a table grows by whole pages (hundreds of KiB at
    // once) between two checks, and spilling itself needs buffers.
    const int64_t room = ctx_->statement_pool->AvailableBytes() - ctx_->spill_reserve_bytes;
    table_budget_bytes_ = std::max<int64_t>(room / degree / 2, 1 << 20);
  }
  for (int w = 0; w < degree; ++w) {
    QUIVER_ASSIGN_OR_RETURN(auto t, MakeTable());
    tables_.push_back(std::move(t));
  }
  QUIVER_RETURN_NOT_OK(RunPipeline(ctx_, child_, [&](int worker, RecordBatchStream* in, const std::atomic<bool>& stop) {
    return Consume(&tables_[static_cast<size_t>(worker)], in, &stop);
  }));
  if (spilled_) {
    // What is still in memory joins the partitions, so each group is
    // aggregated from one partition.
    for (auto& t : tables_)
      if (t->num_output_rows() > 0) QUIVER_RETURN_NOT_OK(Spill(&t));
    tables_.clear();
    return Status::OK();
  }
  // Workers that saw no row (a pipeline of fewer morsels than workers)
  // have nothing to merge: TPC-DS Q78's web and catalog aggregates, fed by
  // the probe of a one-morsel date_dim scan, merged 250 K groups into
  // fresh partitions from one table. One table is kept.
  tables_.erase(std::remove_if(tables_.begin() + 1, tables_.end(),
                               [](const std::shared_ptr<AggregateTable>& t) { return t->num_output_rows() == 0; }),
                tables_.end());
  if (tables_.size() > 1 && tables_[0]->num_output_rows() == 0) tables_.erase(tables_.begin());
  // Many groups and DISTINCT values (a few groups may hold many) merge on
  // the scheduler: in place (ProbeMerge) or by partitions (ParallelMerge).
  int64_t merge_groups = 0;
  for (const auto& t : tables_) merge_groups += t->num_output_rows() + t->distinct_entries();
  const bool parallel_merge =
      tables_.size() > 1 && !groups_.empty() && ctx_->scheduler && merge_groups >= kParallelMergeGroups;
  // The in-place merge adds no group, so no DISTINCT value either.
  bool in_place = parallel_merge && tables_.size() <= kProbeMergeTables && !tables_[0]->has_distinct();
  for (const auto& t : tables_) in_place = in_place && t->FindableByKey();
  if (tables_.size() > 1 && table_budget_bytes_ != INT64_MAX && !in_place) {
    // The merged table may need as much as all of them: when that does
    // not fit above the reserve, they go to the partitions instead. (The
    // in-place merge takes no memory but a byte per group.)
    int64_t total = 0;
    for (const auto& t : tables_) total += t->used_bytes();
    if (total > ctx_->statement_pool->AvailableBytes() - ctx_->spill_reserve_bytes && CanSpill(*tables_[0])) {
      for (auto& t : tables_)
        if (t->num_output_rows() > 0) QUIVER_RETURN_NOT_OK(Spill(&t));
      tables_.clear();
      return Status::OK();
    }
  }
  if (parallel_merge) return in_place ? ProbeMerge() : ParallelMerge();
  for (size_t w = 1; w < tables_.size(); ++w) {
    int64_t merged = 0;
    Status st = tables_[0]->Merge(*tables_[w], &merged);
    if (st.IsOutOfMemory() && CanSpill(*tables_[0])) {
      // The merged table does not fit: it, the rest of table w and the
      // tables after it go to the partitions.
      QUIVER_RETURN_NOT_OK(Spill(&tables_[0]));
      QUIVER_RETURN_NOT_OK(Spill(&tables_[w], merged));
      for (size_t v = w + 1; v < tables_.size(); ++v) QUIVER_RETURN_NOT_OK(Spill(&tables_[v]));
      tables_.clear();
      return Status::OK();
    }
    QUIVER_RETURN_NOT_OK(st);
    // Table w's arena holds the string min / max values the merged
    // states now point to: it stays (the emitting instances keep
    // tables_ alive) when there are any. ThreadSanitizer's allocator,
    // which unmaps freed pages, caught the read of a freed arena here.
    if (!tables_[0]->has_string_min_max()) tables_[w].reset();
  }
  // No row came: the empty grouping sets' groups (their grand totals).
  if (tables_[0]->num_output_rows() == 0)
    for (const auto& keys : empty_input_groups_) QUIVER_RETURN_NOT_OK(tables_[0]->AddEmptyGroup(keys));
  results_ = {tables_[0]};
  cursor_ = std::make_shared<std::atomic<int64_t>>(0);
  return Status::OK();
}

Result<NodePtr> MakeHashAggregateNode(ExecContext* ctx, NodePtr child, std::vector<ExprPtr> groups,
                                      std::vector<AggregateCall> aggregates, SchemaPtr schema, ExprPtr filter,
                                      std::vector<std::vector<ExprPtr>> empty_input_groups) {
  return NodePtr(std::make_shared<HashAggregateNode>(ctx, std::move(child), std::move(groups), std::move(aggregates),
                                                     std::move(schema), std::move(filter),
                                                     std::move(empty_input_groups)));
}

}  // namespace quiver::sql

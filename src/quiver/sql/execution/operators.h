// quiver/sql/execution/operators.h — the physical operators of a statement
// (DuckDB's src/execution/operator): pull-based RecordBatchStreams, one per
// file family, created by the physical planner (planner/physical_planner.h).
//
// Every operator's memory is charged to a child pool of the statement's
// pool, named after its stage, so a memory report can show them apart:
//   sql-statement/scan       decoded / converted scan batches, filters, projections
//   sql-statement/build      hash join relations (TaskMemoryManager pages,
//                            on-heap or off-heap per ExecuteOptions::memory_mode)
//   sql-statement/probe      join output batches
//   sql-statement/aggregate  hash aggregation tables (TaskMemoryManager pages,
//                            on- or off-heap) and their output
//   sql-statement/sort       sort and top-N buffers (the rows kept, the permutation)
// An operator over its statement's limit fails with OutOfMemory naming
// itself and the bytes ("hash aggregate: ..."), SQLSTATE 53200.
//
// The planner builds nodes (execution/pipeline.h), which instantiate these
// operators once per worker for the parallel pipelines.
//
// Thread safety: each operator instance is driven by one thread at a time;
// instances of one node run on several threads and share only thread-safe
// or read-only state (the pools, the memory managers, the scan source, a
// built relation, finished aggregation tables). The cancel flag may be set
// from any thread and is polled at every batch boundary (and inside long
// loops every few thousand rows).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "quiver/columnar/record_batch_stream.h"
#include "quiver/join/hash_join.h"
#include "quiver/join/task_memory_manager.h"
#include "quiver/sql/catalog.h"
#include "quiver/sql/execution/join_filter.h"
#include "quiver/sql/expression/evaluate.h"
#include "quiver/sql/plan/logical_plan.h"

namespace quiver::sql {

class TaskScheduler;
class SpillManager;
class PhysicalNode;
class MaterializedCte;
using NodePtr = std::shared_ptr<PhysicalNode>;

struct ExecContext {
  std::shared_ptr<MemoryPool> statement_pool;              ///< "sql-statement" (the limit)
  std::shared_ptr<MemoryPool> scan_pool;                   ///< "sql-statement/scan"
  std::shared_ptr<MemoryPool> build_pool;                  ///< "sql-statement/build"
  std::shared_ptr<MemoryPool> pool;                        ///< "sql-statement/probe"
  std::shared_ptr<MemoryPool> aggregate_pool;              ///< "sql-statement/aggregate"
  std::shared_ptr<MemoryPool> sort_pool;                   ///< "sql-statement/sort"
  std::unique_ptr<join::TaskMemoryManager> tmm;            ///< join relations (build pool)
  std::unique_ptr<join::TaskMemoryManager> aggregate_tmm;  ///< aggregation tables
  std::shared_ptr<std::atomic<bool>> cancel;
  std::shared_ptr<const Catalog> catalog;
  int64_t max_batch_rows = 64 * 1024;
  /// Instances per parallel pipeline (>= 1) and the pool that runs them
  /// (null: everything on the driving thread).
  int threads = 1;
  std::shared_ptr<TaskScheduler> scheduler;
  /// Where operators that outgrow the statement's memory spill (null: no
  /// spilling; an operator over the limit fails).
  std::shared_ptr<SpillManager> spill;
  /// Operators that can spill do so once the statement's pool (or an
  /// ancestor) has less than this many bytes left (0: only on OutOfMemory),
  /// so the operators after them keep room to work.
  int64_t spill_reserve_bytes = 0;
  bool MemoryTight() const {
    if (!spill || spill_reserve_bytes <= 0) return false;
    const int64_t room = statement_pool->AvailableBytes();  // -1: no limit anywhere
    return room >= 0 && room < spill_reserve_bytes;
  }
  /// Receive the spill counters when the statement ends (may be null).
  std::shared_ptr<std::atomic<int64_t>> spilled_bytes, spilled_files;
  /// Join filter pushdown (join_filter.h): whether the planner attaches
  /// join filters to scans, and where their scans count (may be null).
  bool join_filters = true;
  std::shared_ptr<JoinFilterCounters> join_filter_counters;

  /// The WITH queries named more than once (LogicalOp::kCteScan), by
  /// cte_id: shared by the statement's plan and its subqueries' plans, run
  /// once, held until ReleaseCtes() (the statement's end). Guarded by
  /// cte_mutex. Declared last of the members that hold memory, so that it
  /// goes before the pools its batches are charged to.
  std::mutex cte_mutex;
  std::unordered_map<int, std::shared_ptr<MaterializedCte>> ctes;
  /// Drops the materialized WITH queries (their batches go back to their
  /// pools). Thread-safe.
  void ReleaseCtes() {
    std::unordered_map<int, std::shared_ptr<MaterializedCte>> dropped;
    std::lock_guard<std::mutex> lock(cte_mutex);
    dropped.swap(ctes);
  }

  Status CheckCancel() const {
    if (cancel && cancel->load(std::memory_order_relaxed)) return Status::Cancelled("statement cancelled");
    return Status::OK();
  }
  EvalContext Eval(MemoryPool* p) const { return EvalContext{p, cancel.get()}; }
};

using OperatorPtr = std::unique_ptr<RecordBatchStream>;

/// A record batch of `schema` from columns (no copy).
RecordBatchPtr MakeBatch(const SchemaPtr& schema, int64_t rows, std::vector<ArrayDataPtr> columns);
/// The schema of a plan node's output (field names from the bindings).
SchemaPtr SchemaOf(const std::vector<ColumnBinding>& columns);
/// Adds the operator's name and SQLSTATE 53200 to an OutOfMemory status.
Status NameOperator(const Status& st, const char* op);

/// Scans `table` (the columns `table_columns`, as `schema`), decoding
/// dictionaries and converting to canonical types (scan pool), keeping the
/// rows where every filter (bound to `schema`'s positions) is true. With
/// `keep` (positions of `schema`), only those columns are returned, as
/// `out_schema` (columns only the filters read are not gathered). A filter
/// over one dictionary-encoded column alone that cannot fail runs on the
/// dictionary's entries (verdicts cached per dictionary, shared by the
/// instances) and selects rows by index before they are decoded.
/// Parallel: instances take the table's batches from one SharedScan.
/// Parquet file tables skip the row groups whose statistics exclude
/// `filters` or `prune_only` (predicates bound like `filters` that an
/// operator above evaluates; the scan only prunes with them).
NodePtr MakeScanNode(ExecContext* ctx, TableInfo table, std::vector<int> table_columns, SchemaPtr schema,
                     std::vector<ExprPtr> filters, std::vector<int> keep = {}, SchemaPtr out_schema = nullptr,
                     std::vector<ExprPtr> prune_only = {});
/// Attaches a join filter (join_filter.h) to a node MakeScanNode made,
/// before it is prepared: when the filter is published by then, the scan
/// skips the Parquet row groups outside its key range and drops the rows
/// that fail it first, before the scan's own filters. `filter.position`
/// indexes `table_columns`. False (nothing attached) for another node.
bool AttachJoinFilter(PhysicalNode* scan, ScanJoinFilter filter);
/// Parallel when its child is.
NodePtr MakeFilterNode(ExecContext* ctx, NodePtr child, ExprPtr predicate);
/// Evaluates `exprs` (bound to the child's positions) into the output
/// columns. Parallel when its child is.
NodePtr MakeProjectNode(ExecContext* ctx, NodePtr child, std::vector<ExprPtr> exprs, SchemaPtr schema);
/// Serial.
NodePtr MakeLimitNode(ExecContext* ctx, NodePtr child, int64_t offset, int64_t limit);
/// One row, no columns. Serial.
NodePtr MakeSingleRowNode(ExecContext* ctx);

struct JoinSpec {
  JoinKind kind = JoinKind::kInner;
  /// Key expressions bound to each side's positions, already cast to a
  /// common type pairwise. Empty: a nested-loop join.
  std::vector<ExprPtr> left_keys, right_keys;
  /// Bound to the output positions of left columns then right columns.
  ExprPtr residual;
  /// Semi / anti joins only: build the left (outer) side and probe with the
  /// right one, marking the left rows that match (for a small outer side
  /// against a large subquery; DuckDB's right semi join).
  bool build_left = false;
  /// kMark: the mark is three-valued as `left_keys[0] IN (right_keys[0]'s
  /// rows)` (one key, no residual; logical_plan.h JoinKind::kMark).
  bool mark_null_aware = false;
  /// kMark with mark_null_aware: the whole build side's rows and rows with
  /// a NULL key when a join sees only part of it (a grace partition); -1:
  /// counted from the rows the join builds.
  int64_t mark_build_rows = -1, mark_build_null_rows = -1;
  /// Inner and semi hash joins that build their right side: a filter the
  /// join publishes once its build is done (join_filter.h), with the
  /// bounds of the keys `filter_keys` (indices into right_keys), in that
  /// order; the planner has attached it to the probe side's scans.
  std::shared_ptr<JoinFilter> join_filter;
  std::vector<int> filter_keys;
};
/// Hash join (left = probe side, right = build side) or, without keys, a
/// nested-loop join. Output: left columns then right columns (semi / anti:
/// left columns). Inner, left, semi, anti and NOT IN hash joins are
/// parallel when the probe side is: the build side runs as its own
/// pipeline when the node is prepared (every worker's batches, keys
/// evaluated in the workers), then each instance probes the one relation.
/// Right / full outer joins and nested-loop joins are serial (their inputs
/// gathered); a build-left semi / anti join builds its gathered left side
/// and probes with the right side's pipeline. Out of core (ctx->spill and
/// a memory limit): a hash join of any kind whose build side does not fit
/// becomes a grace hash join (both sides in 16 key partitions, spill
/// files, each partition joined in one relation; a build-left semi join
/// the usual way round; NOT IN with the set's NULLs and emptiness decided
/// first). A parallel join's grace partitions are joined by its instances
/// at once while memory allows (a partition beside running ones needs
/// room for twice ctx->spill_reserve_bytes plus 8x its compressed build
/// side; a build that fails with OutOfMemory beside others is joined
/// again alone, so only a partition that does not fit alone fails the
/// statement); NOT IN joins its partitions in one instance.
Result<NodePtr> MakeJoinNode(ExecContext* ctx, NodePtr left, NodePtr right, JoinSpec spec, SchemaPtr schema);

/// Hash aggregation: `groups` and aggregate arguments bound to the child's
/// positions; output the group columns then the aggregates. Prepare runs
/// the child's pipeline into one aggregation table per worker, then merges
/// them; instances hand out ranges of the merged groups (parallel).
/// `filter` (may be null; bound to the child's positions): only the rows
/// where it is true are aggregated. Per batch, when at least 3/4 of the
/// rows pass, the others are skipped in place; otherwise the passing rows
/// are gathered first (as a filter below would). DISTINCT aggregates keep
/// per-worker sets too, merged value by value (a value counts once). Out
/// of core (ctx->spill and a
/// memory limit): a table past its share spills its states and DISTINCT
/// values in 16 partitions by group hash, merged partition by partition
/// at the end (serial output; without GROUP BY the DISTINCT values are
/// partitioned by value and the partitions' states folded into one row).
/// `empty_input_groups` (each entry one constant per group expression):
/// groups emitted, with the aggregates' values over no rows, when no row
/// reached the aggregate (the grand total of ROLLUP / GROUPING SETS with
/// `()` over empty input).
/// Errors: OutOfMemory naming "hash aggregate"; Invalid on a spill file
/// that does not hold what was written.
Result<NodePtr> MakeHashAggregateNode(ExecContext* ctx, NodePtr child, std::vector<ExprPtr> groups,
                                      std::vector<AggregateCall> aggregates, SchemaPtr schema, ExprPtr filter = nullptr,
                                      std::vector<std::vector<ExprPtr>> empty_input_groups = {});

/// The materialized result of a WITH query named more than once
/// (LogicalOp::kCteScan), shared by its references through
/// ExecContext::ctes. Materialize() runs `child` (its first reference's
/// plan) to completion once, on the calling thread with the statement's
/// workers, keeping every batch (charged to the pools of the operators
/// that made them) until the object goes; later calls return the first
/// call's status. Thread-safe.
class MaterializedCte {
 public:
  MaterializedCte(ExecContext* ctx, NodePtr child, std::string name);
  ~MaterializedCte();
  Status Materialize();
  /// The batches (after Materialize succeeded).
  const std::vector<RecordBatchPtr>& batches() const { return batches_; }
  const SchemaPtr& schema() const;

 private:
  ExecContext* ctx_;
  std::mutex mutex_;
  NodePtr child_;
  SchemaPtr schema_;
  std::string name_;
  bool done_ = false;
  Status status_;
  std::vector<RecordBatchPtr> batches_;
};

/// A reference to a materialized WITH query: prepares (materializes)
/// `cte`, then its instances hand out its batches, one each (parallel),
/// as `schema` (the reference's column names; the types are the
/// query's).
NodePtr MakeCteScanNode(ExecContext* ctx, std::shared_ptr<MaterializedCte> cte, SchemaPtr schema);

/// Sort by `keys` (bound to the child's positions): each worker sorts its
/// share of the input into a run and the runs are merged k-way (ties by
/// run, then row); with limit >= 0 a top-N that keeps at most offset +
/// limit rows (plus one batch) at a time, per worker, merged at the end.
/// Without a limit, when `ctx->spill` is set and the statement has a
/// memory limit, an external merge sort: workers write sorted runs to
/// spill files when memory gets tight, the runs are merged in passes and
/// the last merge streams the output (the files go as they are read, the
/// rest at Release). Errors: OutOfMemory naming "sort" when even a run
/// does not fit; Cancelled. The output is serial (one instance).
Result<NodePtr> MakeSortNode(ExecContext* ctx, NodePtr child, std::vector<SortKey> keys, int64_t offset, int64_t limit);

}  // namespace quiver::sql

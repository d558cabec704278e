// quiver/sql/execution/hash_aggregate_node.h — the hash aggregate operator
// (GROUP BY, DISTINCT, plain aggregates) as a plan node: its workers each
// fill an AggregateTable, which are then merged or spilled. Its methods
// live by concept: consuming and emitting in hash_aggregate.cc, the
// partial-to-final merge in aggregate_merge.cc, the spill path in
// aggregate_spill.cc. Internal to sql/execution; not installed.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "quiver/sql/execution/aggregate_table.h"
#include "quiver/sql/execution/pipeline.h"
#include "quiver/sql/execution/spill.h"

namespace quiver::sql {

/// Spill partitions of a hash aggregate (by the group key's hash).
inline constexpr int kSpillPartitions = 16;
/// Groups (over all workers' tables) from which the merge runs in parallel.
inline constexpr int64_t kParallelMergeGroups = 1 << 15;

/// Makes an empty, initialised table of the node's groups and aggregates.
using MakeAggregateTable = std::function<Result<std::shared_ptr<AggregateTable>>()>;

/// The operator emitting a spilled aggregation (aggregate_spill.cc): the
/// partitions one at a time, each one's spilled states and DISTINCT values
/// merged into a fresh table from `make_table`, its groups emitted, the
/// table dropped. `partitions[p]`: partition p's spilled states;
/// `distinct[p]`: its spilled DISTINCT values (may be empty); `global`: no
/// GROUP BY (values partitioned by value); `num_aggs`: the aggregates.
/// Single instance; errors are named "hash aggregate".
OperatorPtr MakeSpilledAggregateEmitOp(ExecContext* ctx, SchemaPtr schema,
                                       std::vector<std::vector<SpillFile>> partitions,
                                       std::vector<std::vector<SpillFile>> distinct, MakeAggregateTable make_table,
                                       bool global, size_t num_aggs);

/// The hash aggregate node: Prepare runs the child's pipeline into one
/// table per worker, then merges them (or, short of memory, spills them);
/// instances emit the result in parallel, or one instance the spilled
/// partitions.
class HashAggregateNode : public PhysicalNode {
 public:
  HashAggregateNode(ExecContext* ctx, NodePtr child, std::vector<ExprPtr> groups, std::vector<AggregateCall> aggs,
                    SchemaPtr schema, ExprPtr filter, std::vector<std::vector<ExprPtr>> empty_input_groups = {})
      : PhysicalNode(ctx, std::move(schema)),
        child_(std::move(child)),
        groups_(std::move(groups)),
        aggs_(std::move(aggs)),
        filter_(std::move(filter)),
        empty_input_groups_(std::move(empty_input_groups)) {}
  // After a spill the partitions are emitted one at a time by one instance.
  bool parallel() const override { return !spilled_; }
  Result<OperatorPtr> Instantiate() override;
  void Release() override;

 protected:
  Status DoPrepare() override;

 private:
  Result<std::shared_ptr<AggregateTable>> MakeTable();

  // --- Consuming (hash_aggregate.cc) ---
  Status Consume(std::shared_ptr<AggregateTable>* table, RecordBatchStream* in, const std::atomic<bool>* stop);
  static constexpr int64_t kConsumeSliceRows = 8192;
  static constexpr int64_t kDistinctSliceRows = 4096;
  Status ConsumeOne(std::shared_ptr<AggregateTable>* table, const RecordBatch& b, const uint8_t* keep_rows);
  Status Aggregate();

  // --- Spilling (aggregate_spill.cc) ---
  // Writes every group of `*table` to the spill partitions and replaces
  // it with an empty table (Spark's MemoryConsumer.spill for a hash
  // aggregate: the states go out, partitioned by the group's hash).
  // Groups before `begin` are left out (already merged elsewhere).
  Status Spill(std::shared_ptr<AggregateTable>* table, int64_t begin = 0);
  // (A table with DISTINCT aggregates spills their values too.)
  bool CanSpill(const AggregateTable&) const { return ctx_->spill != nullptr; }

  // --- Merging (aggregate_merge.cc) ---
  // Many groups in up to kProbeMergeTables workers' tables, each able to
  // find every group by its key (an IntGroupMap over integer keys, single
  // or packed into 64 bits; else the GroupTable's hash index): merged in
  // place, without a new table. Table i's groups look their key up in
  // tables i+1.. (the word each of those tables' packing gives the key, or
  // the key's hash, which table i's index kept) and take those states in;
  // the groups so taken are marked and not emitted. Table by table, each
  // in ranges on the scheduler. Nothing is allocated but a byte per group,
  // so there is no OutOfMemory to spill on. TPC-H Q18's 1.5 M l_orderkey
  // groups split nearly disjointly between the workers (lineitem is
  // ordered by l_orderkey): one probe per group instead of a re-insert
  // into a new table. TPC-DS Q78's (d_year, item, customer) and Q67's
  // ROLLUP groups, nearly one per row: copying them into the partitions
  // (ParallelMerge) cost about as much CPU as aggregating them.
  static constexpr size_t kProbeMergeTables = 4;
  Status ProbeMerge();
  // Many groups in more workers' tables (or with DISTINCT sets, or a table
  // whose groups are in neither index whole): they are merged partition by
  // partition in parallel (DuckDB's radix-partitioned hash table, Velox's
  // final aggregation): each worker's groups are split by their key's hash
  // into kMergePartitions lists, then each partition's groups from every
  // worker are merged into a table of its own, on the scheduler; the
  // partitions are emitted one after the other. The workers' tables stay
  // (string min / max point into their arenas). On OutOfMemory the
  // partial partitions are dropped and the workers' tables, untouched, go
  // to the spill partitions. TPC-H Q18: 1.5 M groups merged on one thread
  // took most of what the second thread had saved.
  Status ParallelMerge();

  NodePtr child_;
  std::vector<ExprPtr> groups_;
  std::vector<AggregateCall> aggs_;
  ExprPtr filter_;                                        // rows of the child to aggregate (null: all)
  std::vector<std::vector<ExprPtr>> empty_input_groups_;  // emitted when no row came (MakeHashAggregateNode)
  std::vector<std::shared_ptr<AggregateTable>> tables_;   // kept: string min / max point into their arenas
  // What the instances emit: the merged table, or the parallel merge's
  // partitions.
  std::vector<std::shared_ptr<const AggregateTable>> results_;
  // Per result table (after ProbeMerge): its groups merged into an earlier
  // table, not emitted; else empty.
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> skips_;
  std::shared_ptr<std::atomic<int64_t>> cursor_;
  std::mutex mutex_;
  int64_t table_budget_bytes_ = INT64_MAX;
  bool spilled_ = false;
  std::vector<std::vector<SpillFile>> partitions_;  // spill files per partition
  // Per partition, the spilled values of DISTINCT aggregates (empty or
  // kSpillPartitions lists).
  std::vector<std::vector<SpillFile>> distinct_partitions_;
};

}  // namespace quiver::sql

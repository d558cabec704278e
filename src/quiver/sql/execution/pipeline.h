// quiver/sql/execution/pipeline.h — the physical plan as a tree of nodes
// that can be instantiated once per worker (morsel-driven parallelism:
// Leis et al., SIGMOD 2014; DuckDB's pipelines, sources and sinks).
//
// A node stands for one operator of the plan. A *parallel* node can be
// instantiated any number of times: each instance is a RecordBatchStream
// over a share of the node's rows, and the instances together return every
// row once. Scans are parallel (their instances take morsels — the table's
// batches — from one shared source), filters, projections and hash-join
// probes are parallel when their input is; a hash aggregate is parallel as
// a source (its instances hand out ranges of the finished groups). Such a
// chain of parallel nodes up to a pipeline breaker is a pipeline: the
// breaker (hash-join build, hash aggregate, sort, or the statement's
// result) runs ctx->threads instances of it on the TaskScheduler, each
// into thread-local state (the build's batches, a local aggregation table,
// a local top-N), and combines them when all are done.
// Nodes that must see all their input in one thread (LIMIT, ORDER BY
// output, right / full outer joins, the build-left semi join, nested-loop
// joins) are serial: instantiated once, they read their inputs through
// Gathered(), which runs a parallel input's instances on the workers behind
// a bounded queue.
//
// Order: Prepare() runs the pipelines a node depends on (the join builds
// and breakers below it) before its rows flow; a breaker's own pipeline
// runs when it is prepared. Release() drops what a node prepared (join
// relations, aggregation tables) once the pipeline that read it is done.
//
// Thread safety: Prepare, Release and Instantiate are called by one thread
// at a time (the one driving the pipeline); the instances run on any
// threads, one thread per instance at a time; what instances share (scan
// sources, relations, finished aggregation tables) is thread-safe or
// read-only while they run.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "quiver/columnar/record_batch_stream.h"
#include "quiver/sql/execution/operators.h"

namespace quiver::sql {

class PhysicalNode {
 public:
  PhysicalNode(ExecContext* ctx, SchemaPtr schema) : ctx_(ctx), schema_(std::move(schema)) {}
  virtual ~PhysicalNode() = default;
  PhysicalNode(const PhysicalNode&) = delete;
  PhysicalNode& operator=(const PhysicalNode&) = delete;

  const SchemaPtr& schema() const { return schema_; }
  /// Whether Instantiate may be called more than once (instances share the
  /// rows). Serial nodes are instantiated at most once.
  virtual bool parallel() const = 0;

  /// Runs what must finish before this node's rows flow (the pipelines
  /// below it that end in a breaker, and this node's own if it is one).
  /// Idempotent: the first call's status is returned again.
  Status Prepare() {
    if (!prepared_) {
      prepared_ = true;
      prepare_status_ = DoPrepare();
    }
    return prepare_status_;
  }

  /// A stream over (a share of) the node's rows. Call after Prepare()
  /// succeeded. The stream may outlive neither the node nor ctx.
  virtual Result<OperatorPtr> Instantiate() = 0;

  /// Drops what Prepare built, recursively, once every instance is done.
  virtual void Release() {}

  /// Scan / filter / project chains: each morsel gives at most one output
  /// batch, so a gather can keep the table's order (see Gathered). Such a
  /// node answers morsel_source() (its scan's source, after Prepare) and
  /// InstantiateOn(morsel): a stream over that one morsel's rows, callable
  /// from several threads at once.
  virtual bool ordered_source() const { return false; }
  virtual SharedScan* morsel_source() { return nullptr; }
  virtual Result<OperatorPtr> InstantiateOn(RecordBatchPtr morsel) {
    return Status::NotImplemented("internal: InstantiateOn on a node that is not a scan chain");
  }

 protected:
  virtual Status DoPrepare() = 0;

  ExecContext* ctx_;
  SchemaPtr schema_;

 private:
  bool prepared_ = false;
  Status prepare_status_;
};

using NodePtr = std::shared_ptr<PhysicalNode>;

/// The number of instances a pipeline reading `node` runs: ctx->threads
/// when the node is parallel, else 1.
int DegreeOf(const ExecContext& ctx, const PhysicalNode& node);

/// The node's whole output as one stream, for a serial consumer. Prepares
/// the node; a parallel node with ctx->threads > 1 runs ctx->threads
/// instances on the scheduler behind a queue of at most 2 x threads
/// batches (the consumer also pulls from instances no worker started); the
/// node is Released when the stream ends or is destroyed. Rows come in no
/// particular order. Errors: the first error of any instance; destroying
/// the stream stops the instances within a batch and waits for them.
/// A scan / filter / project chain keeps the table's order (the workers
/// take morsels in turn and the consumer emits them by morsel number, at
/// most 4 x threads morsels ahead), as a one-thread scan does.
Result<OperatorPtr> Gathered(ExecContext* ctx, const NodePtr& node);

/// Runs a pipeline into a breaker: prepares `node`, then calls
/// sink(worker, stream) for worker in [0, DegreeOf(node)) — in parallel on
/// the scheduler for a parallel node, each with its own instance; once on
/// the calling thread with the node's single instance otherwise. Each sink
/// call must drain its stream into worker-local state. Releases the node
/// after. Returns the first error (the other workers stop at their next
/// batch: their streams see the statement's cancel flag or the sink checks
/// `stop`).
Status RunPipeline(
    ExecContext* ctx, const NodePtr& node,
    const std::function<Status(int worker, RecordBatchStream* stream, const std::atomic<bool>& stop)>& sink);

/// A stream over batches already in memory (the combined output of a
/// pipeline's workers).
OperatorPtr MakeBatchesStream(SchemaPtr schema, std::vector<RecordBatchPtr> batches);

}  // namespace quiver::sql

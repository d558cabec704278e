// quiver/sql/execution/grace_join.h — grace hash joins: when a join's
// build side does not fit, both sides go to kGracePartitions spill
// partitions by a hash of their keys, and each partition is joined on its
// own (its build side in one relation), serially (GraceJoin) or by several
// instances at once (GracePartitions). Also the spillable serial join of
// right / full outer joins. Internal to sql/execution; not installed.
//
// Memory: partitions are written through the statement's SpillManager
// (ExecContext::spill) and removed once read; each partition's relation
// comes from the statement's TaskMemoryManager.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "quiver/sql/execution/operators.h"
#include "quiver/sql/execution/spill.h"

namespace quiver::sql {

/// Partitions of a grace hash join.
inline constexpr int kGracePartitions = 16;

/// One side's spill files, partition by partition; writers shared by the
/// workers (one lock per partition). Write is thread-safe; Finish, Take and
/// Files are called by one thread once the writers are done.
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
  Status Write(const RecordBatchPtr& raw, const std::vector<Vec>& keys);

  Status Finish();

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

/// The partitions of a grace hash join, claimed by several GracePartitions
/// instances at once (grace_join.cc says how memory bounds the claims).
class GracePartitionQueue;

/// A queue over the finished partitions of `build` and `probe`.
std::shared_ptr<GracePartitionQueue> MakeGracePartitionQueue(std::shared_ptr<GraceSide> build,
                                                             std::shared_ptr<GraceSide> probe);

/// One instance over `queue`: joins claimed partitions (probe rows with
/// `left_schema`, build rows with `right_schema`) until the queue has
/// nothing for it. Thread safety: one thread per instance.
OperatorPtr MakeGracePartitions(ExecContext* ctx, std::shared_ptr<GracePartitionQueue> queue, SchemaPtr left_schema,
                                SchemaPtr right_schema, JoinSpec spec, SchemaPtr schema);

/// A serial grace hash join after the build side was spilled to `build`:
/// `left` (the probe side) goes to the same partitions, then each partition
/// is joined on its own. Right / full joins also join the partitions no
/// probe row reached; NOT IN (one key) settles its set's NULLs and
/// emptiness over the whole set first.
OperatorPtr MakeGraceJoin(ExecContext* ctx, OperatorPtr left, SchemaPtr right_schema, JoinSpec spec, SchemaPtr schema,
                          std::shared_ptr<GraceSide> build);

/// A right / full outer hash join of one instance that may spill: the
/// build side is held while memory allows and built before any probe row
/// is read; when memory gets tight or the build fails with OutOfMemory, it
/// runs as a grace hash join.
OperatorPtr MakeSpillableSerialJoin(ExecContext* ctx, OperatorPtr left, OperatorPtr right, JoinSpec spec,
                                    SchemaPtr schema);

/// `first`'s batches, then `rest`'s (as `first`'s schema); `rest` may be
/// null.
OperatorPtr MakeChainStream(OperatorPtr first, OperatorPtr rest);

/// Runs `node`'s pipeline with every worker writing its batches to one new
/// GraceSide (`what` names it in errors) by `keys`; returns it finished.
Result<std::shared_ptr<GraceSide>> PartitionPipeline(ExecContext* ctx, const NodePtr& node,
                                                     const std::vector<ExprPtr>& keys, const std::string& what);

}  // namespace quiver::sql

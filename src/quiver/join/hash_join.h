// quiver/join/hash_join.h — the hash join operator over Arrow record
// batches: one side is built into a hashed relation, the other side is
// streamed through it batch by batch (Spark's ShuffledHashJoin /
// BroadcastHashJoin with BuildRight).
//
// Sides: the probe side is the LEFT input and the build side the RIGHT
// input, so "left outer" keeps unmatched probe rows, "right outer" keeps
// unmatched build rows, and semi / anti joins return probe rows.
//
// Join types (SQL semantics; a null key never equals anything):
//   inner            matched pairs
//   left outer       + each unmatched probe row once, build columns null
//   right outer      matched pairs + each unmatched build row once (null
//                    build keys included), probe columns null
//   full outer       both of the above
//   left semi        each probe row with at least one match, once
//   left anti        each probe row without a match (null keys included)
//   null-aware anti  `probe.k NOT IN (SELECT build.k)`: every probe row when
//                    the build side is empty; no row when a build key is
//                    null; otherwise the probe rows whose key is not null
//                    and has no match. One key column only.
//
// Output schema: the probe output columns, then the build output columns
// (semi and anti joins: probe columns only), with their names; a side whose
// rows can be missing (build side of left/full, probe side of right/full)
// has nullable fields. Row order within the output is unspecified beyond
// this: probe-side results follow the probe order batch by batch, and the
// unmatched build rows of right/full joins come last (from Finish).
// Output batches hold at most max_output_rows rows and about at most
// max_output_bytes bytes of buffers (never fewer than one row).
//
// Dictionary-encoded columns (as Arrow files from pandas or Spark carry
// for strings) are decoded to their value type on the way in: they join as
// keys and come out as plain columns (build_schema() / probe_schema() are
// the decoded schemas; quiver/columnar/dictionary.h). Decoded copies come
// from output_pool.
//
// Use:
//   auto join = HashJoin::Make(build_schema, probe_schema, options);
//   auto relation = join->BuildRelation(build_batches, &tmm);   // once
//   auto probe = join->MakeProbe(relation);                     // per thread
//   for (batch : probe batches) probe->Probe(*batch, sink);
//   probe->Finish(sink);                                        // outer joins
// or, pulling bounded output (an operator that returns one batch per call
// and checks for cancellation between calls):
//   probe->Start(batch);
//   for (;;) {
//     QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr out, probe->NextOutput());
//     if (!out) break;  // this probe batch is done
//     use(out);         // at most max_output_rows rows
//   }
// Broadcast use: one relation, one HashJoinProbe per thread (a relation is
// read-only once built; probes share nothing); for right/full joins merge
// the probes' matched sets with MergeMatched into one and call Finish on it
// alone. Shuffled use: a relation per partition, Close()d (or dropped) when
// the partition is done, which returns its pages at once.
//
// Thread safety: HashJoin is immutable and shareable; a HashJoinProbe is
// used by one thread at a time.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/join/hashed_relation.h"
#include "quiver/join/key_types.h"
#include "quiver/join/task_memory_manager.h"

namespace quiver::join {

enum class JoinType { kInner, kLeftOuter, kRightOuter, kFullOuter, kLeftSemi, kLeftAnti, kNullAwareAnti };

/// "inner", "left", "right", "full", "semi", "anti", "null-aware-anti".
std::string_view JoinTypeName(JoinType type);
/// Parses the names above (also "left-outer", "right-outer", "full-outer",
/// "left-semi", "left-anti"). Invalid names the accepted values.
Result<JoinType> ParseJoinType(std::string_view name);

/// Receives output batches; an error stops the join and is returned.
using BatchSink = std::function<Status(RecordBatchPtr)>;

struct HashJoinOptions {
  JoinType type = JoinType::kInner;
  /// Key columns, pairwise: build_keys[i] is compared with probe_keys[i]
  /// (indices into the build / probe schemas; same count, at least one).
  std::vector<int> build_keys;
  std::vector<int> probe_keys;
  /// Output columns of each side (indices); nullopt = every column. The
  /// build side is ignored for semi and anti joins.
  std::optional<std::vector<int>> build_output;
  std::optional<std::vector<int>> probe_output;
  /// Output batch bounds (both > 0).
  int64_t max_output_rows = 64 * 1024;
  int64_t max_output_bytes = int64_t{16} << 20;
  /// Pool of the output batches' buffers and the probes' matched bitmaps.
  /// Required; must be owned by a std::shared_ptr (Buffer::Allocate).
  MemoryPool* output_pool = nullptr;
  /// Relation tuning (dense mode, load factor, page size); the join sets
  /// the key, payload, null and duplicate options itself.
  HashedRelationOptions relation_tuning;
  /// Inner joins only: a condition on each matched pair beyond the keys,
  /// checked before the pairs' output columns are gathered, so that pairs
  /// it drops cost no gathering (TPC-DS Q72 keeps 1 pair in 20). It gets a
  /// batch of the output schema whose columns at `residual_columns`
  /// (output column indices) hold the pairs' values and whose others are
  /// placeholders (type null, every row null) it must not read, and
  /// returns the rows to keep, ascending. Called on the probing thread, on
  /// the pairs of a lookup chunk or of a full output batch; its error stops
  /// the join. Null: every pair is kept.
  std::function<Result<std::vector<int64_t>>(const RecordBatch& pairs)> residual;
  std::vector<int> residual_columns;
};

class HashJoinProbe;

class HashJoin : public std::enable_shared_from_this<HashJoin> {
  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  /// Checks the plan before any work: key indices in range, key pairs
  /// comparable (ResolveKeyPair), output columns of carriable types, bounds
  /// positive, a pool given, one key for null-aware anti. Errors: Invalid
  /// or NotImplemented naming the column.
  static Result<std::shared_ptr<const HashJoin>> Make(SchemaPtr build_schema, SchemaPtr probe_schema,
                                                      HashJoinOptions options);
  HashJoin(PrivateTag, SchemaPtr build_schema, SchemaPtr probe_schema, HashJoinOptions options);

  const SchemaPtr& build_schema() const { return build_schema_; }
  const SchemaPtr& probe_schema() const { return probe_schema_; }
  const SchemaPtr& output_schema() const { return output_schema_; }
  const HashJoinOptions& options() const { return options_; }
  const std::vector<KeyColumnSpec>& key_specs() const { return key_specs_; }
  /// Output column indices of each side (build: empty for semi/anti).
  const std::vector<int>& probe_output_columns() const { return probe_output_; }
  const std::vector<int>& build_output_columns() const { return build_output_; }
  /// The relation options this join builds with.
  const HashedRelationOptions& relation_options() const { return relation_options_; }

  /// Builds the relation from the build side (BuildHashedRelation). Memory
  /// from `tmm`. Errors: as the relation build (OutOfMemory naming bytes
  /// needed and available; Invalid for batches not matching the schema).
  /// `parallelism` lends the build threads (HashedRelationOptions::
  /// parallelism); `tmm` must then be safe to use from them (it is: its
  /// page allocation happens on the calling thread).
  Result<std::shared_ptr<HashedRelation>> BuildRelation(const std::vector<RecordBatchPtr>& build_batches,
                                                        TaskMemoryManager* tmm,
                                                        const BuildParallelism& parallelism = {}) const;

  /// A relation shipped as bytes (HashedRelation::Serialize), for broadcast
  /// use on other workers. Checked as DeserializeHashedRelation does; also
  /// Invalid when its key or stored columns are not this join's.
  Result<std::shared_ptr<HashedRelation>> LoadRelation(const Buffer& serialized, TaskMemoryManager* tmm) const;

  /// A prober of `relation` (which must come from this join's
  /// BuildRelation or LoadRelation and stay alive while probed).
  Result<std::unique_ptr<HashJoinProbe>> MakeProbe(std::shared_ptr<const HashedRelation> relation) const;

 private:
  SchemaPtr build_schema_, probe_schema_, output_schema_;
  HashJoinOptions options_;
  HashedRelationOptions relation_options_;
  std::vector<KeyColumnSpec> key_specs_;
  std::vector<int> probe_output_, build_output_;
  bool decode_build_ = false, decode_probe_ = false;
};

/// Streams probe batches through one relation. Not thread-safe: one per
/// thread.
class HashJoinProbe {
 public:
  /// Use HashJoin::MakeProbe.
  HashJoinProbe(std::shared_ptr<const HashJoin> join, std::shared_ptr<const HashedRelation> relation,
                std::shared_ptr<Buffer> matched);
  /// Allocates the pending-pair buffer (16 bytes per output row of a batch)
  /// from the output pool. Called by MakeProbe; OutOfMemory on failure.
  Status Init();

  /// Pull-style probing, one probe batch at a time. Start takes the batch
  /// (schema = the join's probe schema; shared ownership is kept until
  /// NextOutput has returned its end) and checks its shape; it does no
  /// joining. Errors: Invalid for a null batch, a shape mismatch, a Start
  /// while the previous batch's output has not been drained to its end, or
  /// a Start after Finish; OutOfMemory decoding dictionary columns.
  Status Start(RecordBatchPtr batch);

  /// The next output batch of the started probe batch: at most
  /// max_output_rows rows and about max_output_bytes bytes (at least one
  /// row), or nullptr once that probe batch is done (also when no batch was
  /// started). Work per call is bounded: it stops as soon as one output
  /// batch is full, resuming on the next call where it stopped, in the
  /// middle of a probe row's duplicate chain if need be; so a key with few
  /// values (billions of output rows) never buffers more than one or two
  /// output batches. Errors: OutOfMemory from the output pool; after an
  /// error the probe may only be destroyed.
  Result<RecordBatchPtr> NextOutput();

  /// Joins one probe batch and sends its output batches to `sink` (a loop
  /// of Start and NextOutput; `batch` must stay alive during the call).
  /// Errors: as Start and NextOutput; the sink's error.
  Status Probe(const RecordBatch& batch, const BatchSink& sink);

  /// ORs another probe's matched build rows into this one (right/full
  /// joins over one relation probed by several threads). Invalid when the
  /// probes are of different relations.
  Status MergeMatched(const HashJoinProbe& other);

  /// Right / full outer: sends the build rows no probe matched (those of
  /// this probe and of the probes merged into it), in bounded batches as
  /// Probe does; other types: nothing. Call once, after the last probe
  /// batch was drained (Invalid otherwise).
  Status Finish(const BatchSink& sink);

  /// Output rows sent so far.
  int64_t output_rows() const { return output_rows_; }

 private:
  // Where the started probe batch stands: its lookup chunk (rows [begin,
  // begin + m), their first build rows `heads` and, for null-aware anti,
  // key validity), the next row i of the chunk, and the next build row of
  // row i's duplicate chain when an output batch filled up inside it.
  struct Cursor {
    RecordBatchPtr batch;
    std::vector<const ArrayData*> keys;
    bool active = false;
    bool naaj_all = false;  // null-aware anti over an empty build side
    int64_t begin = 0;
    int64_t m = 0;
    int64_t i = 0;
    const uint8_t* chain = nullptr;
    const uint8_t* heads[HashedRelation::kLookupChunk];
    uint8_t valid[HashedRelation::kLookupChunk];
    void Clear() {
      batch.reset();
      keys.clear();
      active = naaj_all = false;
      begin = m = i = 0;
      chain = nullptr;
    }
  };
  // One routine per join family over the cursor's looked-up chunk, as
  // DuckDB's ScanStructure::NextInnerJoin / NextLeftJoin / NextSemiJoin /
  // NextAntiJoin; each returns when the chunk is done or an output batch is
  // ready. Inner also serves right outer, left also full outer (unmatched
  // build rows come from Finish); semi, anti and null-aware anti output
  // probe rows only (AppendProbeRows).
  Status RunChunk();
  // Duplicate keys: requests the rows of the chunk's duplicate chains up to
  // kChainPrefetchLevels rows past each head, level by level, so that their
  // cache misses overlap (DuckDB's ScanStructure advances all chains of a
  // vector in lockstep for the same reason).
  void PrefetchChains();
  static constexpr int kChainPrefetchLevels = 3;
  const uint8_t* chain_rows_[HashedRelation::kLookupChunk];
  Status AppendProbeRows(const RecordBatch& batch);
  // Shared output paths. AppendMatches: every (probe row, build row) pair
  // of the chunk (and, with keep_probe, unmatched probe rows with no build
  // row), marking matched build rows when tracked. AppendUniqueChunk: its
  // branch-free form for unique keys, fixed-width output and no matched
  // set. AppendEachMatch: AppendMatches' loop with the output kind fixed
  // at compile time. PushPair: queues one pair (fixed-width output) and
  // says whether the pending pairs are full (cap_ rows; the caller then
  // flushes); variable-width output goes through Emit's byte bound.
  Status AppendMatches(const RecordBatch& batch, bool keep_probe);
  template <bool kVarOutput>
  Status AppendEachMatch(const RecordBatch& batch, bool keep_probe, uint8_t* matched, bool unique);
  Status AppendUniqueChunk(const RecordBatch& batch, bool keep_probe);
  bool PushPair(int64_t probe_row, const uint8_t* build_row) {
    probe_rows_[n_] = probe_row;
    build_rows_[n_] = build_row;
    return ++n_ == cap_;
  }
  // Flush turns the pending pairs into an output batch on ready_; Emit
  // queues one pair under the byte bound (flushing before and/or after).
  // Full: the pending pairs reached cap_: filtered by the residual, then
  // flushed if still full.
  Status Flush(const RecordBatch* probe_batch);
  Status Full(const RecordBatch* probe_batch);
  // The residual over pending pairs [filtered_, n_): the kept ones moved
  // down in order (pair_bytes_ with them), n_ and pending_bytes_ lowered.
  Status FilterPending(const RecordBatch* probe_batch);
  int64_t filtered_ = 0;
  std::vector<int64_t> pair_bytes_;  // variable-width output with a residual: each pending pair's bytes
  Status Emit(const RecordBatch* probe_batch, int64_t probe_row, const uint8_t* build_row);

  std::shared_ptr<const HashJoin> join_;
  std::shared_ptr<const HashedRelation> relation_;
  std::shared_ptr<Buffer> matched_;  // bitmap over build ordinals (right/full)
  // Pending output pairs: probe row (-1 = none) and build row (nullptr =
  // none), n_ of them, at most cap_ (rows bound, and the bytes bound when
  // every output column is fixed-width).
  std::shared_ptr<Buffer> pairs_;  // probe_rows_ then build_rows_, from the output pool
  int64_t* probe_rows_ = nullptr;
  const uint8_t** build_rows_ = nullptr;
  int64_t n_ = 0;
  int64_t cap_ = 0;
  int64_t pending_bytes_ = 0;
  // Fixed-width build fields are gathered chunk by chunk, right after the
  // lookups that found their rows (still in cache), into buffers of cap_
  // rows: field indices, values, validity bitmaps, null counts.
  Status GatherPending(const RecordBatch* probe_batch);
  std::vector<int> inc_fields_;
  std::vector<std::shared_ptr<Buffer>> inc_values_, inc_bits_;
  std::vector<int64_t> inc_nulls_;
  int64_t gathered_ = 0;
  int64_t fixed_row_bytes_ = 0;
  bool var_output_ = false;
  // Variable-width output columns, for Emit's byte count: probe columns
  // (index, 64-bit offsets) and the build rows' slots.
  std::vector<std::pair<int, bool>> probe_var_columns_;
  std::vector<int32_t> build_var_slots_;
  int64_t output_rows_ = 0;
  bool finished_ = false;
  Cursor cursor_;
  // Output batches made and not yet returned (at most two: Emit can flush
  // before and after one pair).
  std::deque<RecordBatchPtr> ready_;
};

/// The whole join in one call (shuffled use: one partition): builds the
/// relation from `build_batches` with `tmm`, probes every probe batch,
/// finishes, and closes the relation (its pages go back at once, also on
/// error).
Status RunHashJoin(const HashJoin& join, const std::vector<RecordBatchPtr>& build_batches,
                   const std::vector<RecordBatchPtr>& probe_batches, TaskMemoryManager* tmm, const BatchSink& sink);

}  // namespace quiver::join

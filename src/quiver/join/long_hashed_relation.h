// quiver/join/long_hashed_relation.h — a hashed relation for one 64-bit
// integer key (Spark's LongHashedRelation / LongToUnsafeRowMap, rebuilt).
//
// Rows live in pages in the compact row format (row_format.h), addressed by
// plain 64-bit pointers: no page-size cap, no 2^31-row cap. The index is
// one of two modes, chosen before building from the key statistics:
//
//   dense  — an array of row pointers indexed by (key - min_key), used when
//            the key range has at most `dense_entries_per_key` (default 3)
//            entries per distinct key: 8 bytes per entry, <= 24 bytes per
//            key; or when the range is small (at most
//            `dense_max_small_range` entries, default 64 Ki = 512 KiB),
//            whatever the density. The range is computed in uint64 ((uint64)max - (uint64)min),
//            so keys from INT64_MIN to INT64_MAX never overflow; a probe key
//            maps to entry (uint64)key - (uint64)min_key and is in range
//            iff that is below the entry count.
//   sparse — a TaggedIndex (tagged_index.h): open addressing with linear
//            probing over 8-byte slots {16-bit tag, 48-bit row pointer},
//            sized by the number of distinct keys (a HyperLogLog estimate
//            taken in the statistics pass, +5%, capped at the row count) at
//            load factor 0.5: about 16.8 bytes of index per distinct key.
//            Sparse rows carry their key (8 bytes, RowLayout int64 key), which
//            a tag match is verified against.
//
// Duplicate keys are chained newest-first through each row's `next` field;
// keys_unique() tells the prober it may stop at the chain head. Null keys
// are skipped, or stored unindexed (keep_null_keys) for outer joins. With
// null_aware, one null key makes the relation all-null and stores nothing.
// With ignore_duplicate_keys only the first row of each key is stored.
//
// Build and probe are batched. Inserts prefetch the index entry 16 keys
// ahead. Lookups run in stages over 256 keys so that the cache misses of
// different keys overlap: (1) hash every key and prefetch its home slot
// line (dense: its entry), (2) scan for the first tag match and prefetch
// that row, (3) verify the key in the row (a tag collision, ~1 in 65536
// compared slots, falls back to a plain scan). Lookups never branch on the
// row contents before the rows were requested.
//
// Thread safety: Build runs on the calling thread, and inserts on the
// tasks of options.parallelism when given (see InsertConcurrently); a built
// relation is read-only
// and may be probed from any number of threads. Close() must not race with
// probes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "quiver/join/hashed_relation.h"
#include "quiver/join/key_hash.h"
#include "quiver/join/tagged_index.h"

namespace quiver::join {

/// What the statistics pass over the build input learns (pure function of
/// the input and the options).
struct LongBuildStats {
  int64_t input_rows = 0;
  int64_t null_key_rows = 0;
  int64_t min_key = 0;  ///< over non-null keys (0 when none)
  int64_t max_key = 0;
  int64_t distinct_estimate = 0;  ///< HyperLogLog estimate of distinct non-null keys
  int64_t var_bytes = 0;          ///< variable-width payload bytes (rows padded to 8)
  bool payload_nulls = false;     ///< a stored column has nulls
};

class LongHashedRelation final : public HashedRelation {
  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  /// Use Build or Deserialize.
  LongHashedRelation(PrivateTag, TaskMemoryManager* tmm);

  /// Statistics pass over `batches` (key column options.key_columns[0],
  /// which must load as int64). Errors: Invalid for a bad key column or a
  /// batch whose shape does not match `schema`.
  static Result<LongBuildStats> ComputeStats(const Schema& schema, const std::vector<RecordBatchPtr>& batches,
                                             const HashedRelationOptions& options);

  /// Predicted memory of a build: a pure function of the statistics, the
  /// row layout and the options (no allocation, no side effect). Dense
  /// mode when allowed and range + 1 <= dense_entries_per_key *
  /// max(1, distinct) or range + 1 <= dense_max_small_range; else sparse with max(16, ceil(min(rows, distinct *
  /// 1.05) / load_factor)) + 8 slots of 8 bytes, and 8 more bytes per row
  /// for the key. `layout` is the payload layout without the key.
  static RelationSizeEstimate EstimateSize(const LongBuildStats& stats, const RowLayout& layout,
                                           const HashedRelationOptions& options);

  /// Builds the relation: statistics pass, EstimateSize, one reservation
  /// of the estimate from `tmm` (OutOfMemory naming needed and available
  /// bytes before any page is taken), then one pass writing rows and the
  /// index. On error nothing stays charged.
  static Result<std::unique_ptr<LongHashedRelation>> Build(const Schema& schema,
                                                           const std::vector<RecordBatchPtr>& batches,
                                                           const HashedRelationOptions& options,
                                                           TaskMemoryManager* tmm);

  /// Reads Serialize output (called by DeserializeHashedRelation).
  static Result<std::unique_ptr<LongHashedRelation>> Deserialize(const Schema& schema, const Buffer& bytes,
                                                                 TaskMemoryManager* tmm);

  RelationKind kind() const override { return RelationKind::kLong; }
  bool dense() const { return dense_; }
  int64_t min_key() const { return min_key_; }
  int64_t max_key() const { return max_key_; }
  /// Sparse: slot count (home positions + window); dense: array entries.
  int64_t index_entries() const { return entries_; }
  /// Sparse with a bitmap of its keys over [min_key, max_key] that
  /// FindBatch tests before hashing (see BuildKeyFilter); never changes an
  /// answer.
  bool has_key_filter() const { return key_filter_ != nullptr; }

  /// Chain head for one key, or nullptr.
  const uint8_t* Find(int64_t key) const {
    if (dense_) {
      const uint64_t i = static_cast<uint64_t>(key) - static_cast<uint64_t>(min_key_);
      return i < static_cast<uint64_t>(entries_) ? dense_rows_[i] : nullptr;
    }
    if (index_.empty()) return nullptr;
    const int32_t ko = layout_.int64_key_offset();
    return index_.Find(index_.Home(HashInt64(key)), TaggedIndex::TagOf(TagHashInt64(key)),
                       [&](const uint8_t* row) { return RowLayout::LoadInt64(row, ko) == key; });
  }

  /// Chain heads for n keys (valid[j] == 0 gives nullptr; valid may be
  /// nullptr = all valid), prefetching ahead. Any n.
  void FindBatch(const int64_t* keys, const uint8_t* valid, int64_t n, const uint8_t** out) const;

  void Lookup(const std::vector<const ArrayData*>& probe_keys, int64_t begin, int64_t n,
              const uint8_t** out) const override;
  Result<std::shared_ptr<Buffer>> Serialize(MemoryPool* pool) const override;
  void Close() override;

 private:
  Status Insert(const RecordBatch& batch, int key_column, const RowSource& source, MemoryReservation* reservation);
  // The concurrent build (options.parallelism), a partitioned build: the
  // index positions are split into ranges (partitions) of at most
  // kBuildPartitionIndexBytes of index, at least one per task. Pass 1
  // counts each batch's rows (and, for variable-width rows, their bytes)
  // per partition; the rows are laid out
  // partition by partition (batch order within one; ordinals follow the
  // layout), null-key rows last. Pass 2 writes the rows (tasks claim
  // batches; variable-width rows' addresses are kept by layout position
  // in a page of the relation's for the passes after). Pass 3 indexes them (tasks claim partitions): a partition's
  // inserts touch only its own slice of the index, which stays in cache,
  // with plain stores, in input order (so every duplicate chain is the one
  // a serial build makes). Details at InsertConcurrently.
  static constexpr int64_t kBuildPartitionIndexBytes = int64_t{4} << 20;
  static constexpr int kMaxBuildPartitions = 256;
  // At most this many (batch, partition) regions (24 bytes of heap each,
  // 32 with variable-width rows);
  // a build with more runs serially.
  static constexpr int64_t kMaxBuildRegions = int64_t{1} << 18;
  int BuildPartitionCount(int tasks) const;
  class Partitioner;  // index position -> partition, see the .cc
  struct RegionTally {
    int64_t new_keys = 0;
    bool duplicates = false;
  };
  bool CanInsertConcurrently(const std::vector<RecordBatchPtr>& batches) const;
  Status InsertConcurrently(const std::vector<RecordBatchPtr>& batches, int key_column);
  // Index position of a non-null key: dense entry or sparse home slot.
  uint64_t RowPosition(int64_t key) const {
    return dense_ ? static_cast<uint64_t>(key) - static_cast<uint64_t>(min_key_) : index_.Home(HashInt64(key));
  }
  // Sparse relations over a key range of at most kMaxKeyFilterBits keys
  // get a bitmap of their keys (bit key - min_key), which FindBatch tests
  // before hashing: a probe key that is absent (most of them in a
  // selective join: TPC-H Q17 probes 6 M lineitem rows against ~200 parts)
  // costs one bit test instead of a walk of the index. At most
  // max(256 KiB, twice the index) bytes; a shortcut only, so a page that
  // cannot be had leaves the relation without one.
  // A build allocates the bitmap before its inserts (AllocateKeyFilter;
  // Insert sets each key's bit), a deserialization walks the index
  // (BuildKeyFilter).
  bool AllocateKeyFilter();
  void BuildKeyFilter();
  void DropKeyFilter();
  static constexpr uint64_t kMaxKeyFilterBits = uint64_t{1} << 26;

  bool dense_ = false;
  int64_t min_key_ = 0;
  int64_t max_key_ = 0;
  int64_t entries_ = 0;
  MemoryPage index_page_;
  TaggedIndex index_;                     // sparse
  const uint8_t** dense_rows_ = nullptr;  // dense
  MemoryPage key_filter_page_;            // sparse: BuildKeyFilter
  uint64_t* key_filter_ = nullptr;
  uint64_t key_filter_bits_ = 0;  // max_key - min_key + 1 when key_filter_ is set
};

}  // namespace quiver::join

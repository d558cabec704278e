// quiver/join/generic_hashed_relation.h — a hashed relation for any other
// key: several columns, strings and binaries, bool, floats, decimals,
// integers of any width mixed with other key columns (Spark's
// UnsafeHashedRelation over BytesToBytesMap, rebuilt on quiver's rows).
//
// Keys are encoded to bytes with a KeyEncoder (key_types.h: integers
// widened to int64, floats normalized, strings length-prefixed), stored in
// each row (RowLayoutOptions::with_key_bytes) and hashed with HashBytes.
// The index is a TaggedIndex (tagged_index.h): 8-byte slots {16-bit tag
// from the hash, 48-bit row pointer} at load factor 0.5, sized like the
// long relation's sparse index (distinct-key estimate +5%): ~16.8 bytes
// per key. A slot matches when its tag is equal and the encoded key bytes
// in its row are equal (the tag rejects nearly every other candidate
// without touching its row).
//
// Null keys (any key column null), duplicates, null-aware and
// ignore-duplicates behave as in LongHashedRelation.
//
// Thread safety: as LongHashedRelation (build on one thread, probe from
// many).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "quiver/join/hashed_relation.h"
#include "quiver/join/key_types.h"
#include "quiver/join/tagged_index.h"

namespace quiver::join {

/// What the statistics pass learns.
struct GenericBuildStats {
  int64_t input_rows = 0;
  int64_t null_key_rows = 0;
  int64_t distinct_estimate = 0;
  int64_t var_bytes = 0;  ///< payload variable bytes plus encoded keys (each padded to 8)
  bool payload_nulls = false;
};

class GenericHashedRelation final : public HashedRelation {
  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  /// Use Build or Deserialize.
  GenericHashedRelation(PrivateTag, TaskMemoryManager* tmm, std::vector<KeyColumnSpec> specs);

  static Result<GenericBuildStats> ComputeStats(const Schema& schema, const std::vector<RecordBatchPtr>& batches,
                                                const HashedRelationOptions& options,
                                                const std::vector<KeyColumnSpec>& specs);

  /// Pure prediction: rows (fixed part plus var_bytes) and a tagged index of
  /// max(16, ceil(min(rows, distinct * 1.05) / load_factor)) + 8 slots of 8
  /// bytes.
  static RelationSizeEstimate EstimateSize(const GenericBuildStats& stats, const RowLayout& layout,
                                           const HashedRelationOptions& options);

  /// Builds as LongHashedRelation::Build does (statistics, estimate,
  /// reservation, one pass). `specs` has one resolved spec per key column.
  static Result<std::unique_ptr<GenericHashedRelation>> Build(const Schema& schema,
                                                              const std::vector<RecordBatchPtr>& batches,
                                                              const HashedRelationOptions& options,
                                                              const std::vector<KeyColumnSpec>& specs,
                                                              TaskMemoryManager* tmm);

  /// Reads Serialize output. The key specs are derived from the build
  /// schema's key column types (each compared with itself).
  static Result<std::unique_ptr<GenericHashedRelation>> Deserialize(const Schema& schema, const Buffer& bytes,
                                                                    TaskMemoryManager* tmm);

  RelationKind kind() const override { return RelationKind::kGeneric; }
  int64_t index_entries() const { return entries_; }
  const KeyEncoder& encoder() const { return encoder_; }

  void Lookup(const std::vector<const ArrayData*>& probe_keys, int64_t begin, int64_t n,
              const uint8_t** out) const override;
  Result<std::shared_ptr<Buffer>> Serialize(MemoryPool* pool) const override;
  void Close() override;

 private:
  Status Insert(const RecordBatch& batch, const RowSource& source);

  KeyEncoder encoder_;
  int64_t entries_ = 0;
  MemoryPage index_page_;
  TaggedIndex index_;
};

}  // namespace quiver::join

// quiver/join/generic_hashed_relation.cc — see generic_hashed_relation.h.
#include "quiver/join/generic_hashed_relation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "quiver/base/bit_util.h"
#include "quiver/base/checked_math.h"
#include "quiver/columnar/batch_shape.h"
#include "quiver/join/key_hash.h"
#include "quiver/join/relation_serde.h"

namespace quiver::join {
namespace {

constexpr int64_t kChunk = HashedRelation::kLookupChunk;

// Encoded keys of one chunk: bytes back to back, with offsets and hashes.
struct EncodedChunk {
  std::vector<uint8_t> bytes;
  int64_t offsets[kChunk + 1];
  uint64_t hashes[kChunk];
  uint8_t valid[kChunk];
  bool any_null = false;

  void Encode(const KeyEncoder& enc, const std::vector<const ArrayData*>& cols, int64_t begin, int64_t m) {
    any_null = CombineKeyValidity(cols, begin, m, valid);
    offsets[0] = 0;
    for (int64_t j = 0; j < m; ++j) {
      offsets[j + 1] = offsets[j] + (valid[j] ? enc.EncodedSize(cols, begin + j) : 0);
    }
    bytes.resize(static_cast<size_t>(std::max<int64_t>(offsets[m], 1)));
    for (int64_t j = 0; j < m; ++j) {
      if (!valid[j]) continue;
      enc.Encode(cols, begin + j, bytes.data() + offsets[j]);
      hashes[j] = HashBytes(bytes.data() + offsets[j], offsets[j + 1] - offsets[j]);
    }
  }
  const uint8_t* key(int64_t j) const { return bytes.data() + offsets[j]; }
  int64_t size(int64_t j) const { return offsets[j + 1] - offsets[j]; }
};

std::vector<const ArrayData*> KeyArrays(const RecordBatch& b, const std::vector<int>& keys) {
  std::vector<const ArrayData*> out;
  for (int k : keys) out.push_back(b.columns[k].get());
  return out;
}

inline bool KeyEquals(const uint8_t* row, int32_t key_slot, const uint8_t* key, int64_t size) {
  const std::string_view stored = RowLayout::VarAt(row, key_slot);
  return static_cast<int64_t>(stored.size()) == size && std::memcmp(stored.data(), key, stored.size()) == 0;
}

}  // namespace

GenericHashedRelation::GenericHashedRelation(PrivateTag, TaskMemoryManager* tmm, std::vector<KeyColumnSpec> specs)
    : HashedRelation(tmm, "GenericHashedRelation"), encoder_(std::move(specs)) {}

Result<GenericBuildStats> GenericHashedRelation::ComputeStats(const Schema& schema,
                                                              const std::vector<RecordBatchPtr>& batches,
                                                              const HashedRelationOptions& options,
                                                              const std::vector<KeyColumnSpec>& specs) {
  QUIVER_RETURN_NOT_OK(CheckRelationOptions(schema, options));
  if (specs.size() != options.key_columns.size()) return Status::Invalid("expected one key spec per key column");
  QUIVER_ASSIGN_OR_RETURN(RowLayout var_layout,
                          RowLayout::Make(schema, PayloadColumns(schema, options), RowLayoutOptions{}));
  KeyEncoder enc(specs);
  GenericBuildStats st;
  DistinctSketch sketch;
  EncodedChunk chunk;
  int64_t index = 0;
  for (const auto& bp : batches) {
    const RecordBatch& b = *bp;
    const BatchShapeMismatch shape = FindBatchShapeMismatch(schema, b, {.columns = &options.key_columns});
    if (shape.kind == BatchShapeMismatch::Kind::kColumnCount) {
      return Status::Invalid("build batch " + std::to_string(index) + " has " + std::to_string(b.columns.size()) +
                             " columns, the schema " + std::to_string(schema.fields.size()));
    }
    if (!shape.ok()) {
      return Status::Invalid("build batch " + std::to_string(index) + ": key column '" +
                             schema.fields[shape.column]->name + "' does not match the schema");
    }
    ++index;
    QUIVER_ASSIGN_OR_RETURN(RowSource src, RowSource::Make(var_layout, b));
    st.payload_nulls |= src.any_nulls();
    const auto cols = KeyArrays(b, options.key_columns);
    for (int64_t begin = 0; begin < b.num_rows; begin += kChunk) {
      const int64_t m = std::min(kChunk, b.num_rows - begin);
      chunk.Encode(enc, cols, begin, m);
      for (int64_t j = 0; j < m; ++j) {
        if (!chunk.valid[j]) {
          ++st.null_key_rows;
          if (options.keep_null_keys) st.var_bytes += src.VarBytes(begin + j);
          continue;
        }
        sketch.Add(chunk.hashes[j]);
        st.var_bytes += RoundUpTo8(chunk.size(j)) + src.VarBytes(begin + j);
      }
    }
    st.input_rows += b.num_rows;
  }
  if (st.input_rows > st.null_key_rows) st.distinct_estimate = std::max<int64_t>(1, sketch.Estimate());
  return st;
}

RelationSizeEstimate GenericHashedRelation::EstimateSize(const GenericBuildStats& stats, const RowLayout& layout,
                                                         const HashedRelationOptions& options) {
  RelationSizeEstimate e;
  const int64_t non_null = stats.input_rows - stats.null_key_rows;
  if (non_null > 0) {
    e.index_entries =
        SparseIndexSlots(PlannedDistinctKeys(non_null, stats.distinct_estimate, options), options.load_factor);
  }
  FillEstimateBytes(StoredRows(stats.input_rows, stats.null_key_rows, options), layout.fixed_bytes(), stats.var_bytes,
                    &e);
  return e;
}

Result<std::unique_ptr<GenericHashedRelation>> GenericHashedRelation::Build(const Schema& schema,
                                                                            const std::vector<RecordBatchPtr>& batches,
                                                                            const HashedRelationOptions& options,
                                                                            const std::vector<KeyColumnSpec>& specs,
                                                                            TaskMemoryManager* tmm) {
  QUIVER_ASSIGN_OR_RETURN(GenericBuildStats st, ComputeStats(schema, batches, options, specs));
  RowLayoutOptions lo;
  lo.with_ordinal = options.with_ordinals;
  lo.with_validity = st.payload_nulls;
  lo.with_key_bytes = true;
  QUIVER_ASSIGN_OR_RETURN(RowLayout layout, RowLayout::Make(schema, PayloadColumns(schema, options), lo));
  auto rel = std::make_unique<GenericHashedRelation>(PrivateTag{}, tmm, specs);
  if (rel->StartBuild(options, std::move(layout), st.input_rows, st.null_key_rows)) return rel;
  const RelationSizeEstimate est = EstimateSize(st, rel->layout_, options);
  QUIVER_ASSIGN_OR_RETURN(
      MemoryReservation reservation,
      rel->ReserveForBuild(est, "GenericHashedRelation build of " + std::to_string(st.input_rows) + " rows (" +
                                    std::to_string(st.distinct_estimate) + " distinct keys estimated)"));
  rel->entries_ = est.index_entries;
  if (est.index_entries > 0) {
    QUIVER_ASSIGN_OR_RETURN(rel->index_page_, rel->AllocateZeroedPage(est.index_bytes, &reservation));
    rel->index_ =
        TaggedIndex(reinterpret_cast<uint64_t*>(rel->index_page_.data()), est.index_entries - TaggedIndex::kWindow);
  }
  rel->rows_.Init(rel.get(), &reservation, est.row_bytes, options.max_page_bytes);
  for (const auto& b : batches) {
    QUIVER_ASSIGN_OR_RETURN(RowSource src, RowSource::Make(rel->layout_, *b));
    QUIVER_RETURN_NOT_OK(rel->Insert(*b, src));
  }
  rel->FinishBuild(&reservation, rel->entries_);
  return rel;
}

Status GenericHashedRelation::Insert(const RecordBatch& batch, const RowSource& source) {
  const auto cols = KeyArrays(batch, key_columns_);
  const int64_t fixed = layout_.fixed_bytes();
  const int32_t key_slot = layout_.key_slot_offset();
  const bool ordinals = layout_.options().with_ordinal;
  auto chunk = std::make_unique<EncodedChunk>();
  std::vector<uint8_t*> rows(kChunk);
  std::vector<int64_t> var_start(kChunk);
  std::vector<uint64_t> pos(kChunk);
  for (int64_t begin = 0; begin < batch.num_rows; begin += kChunk) {
    const int64_t m = std::min(kChunk, batch.num_rows - begin);
    chunk->Encode(encoder_, cols, begin, m);
    const bool indexed = !index_.empty();
    for (int64_t j = 0; j < m; ++j) pos[j] = chunk->valid[j] && indexed ? index_.Home(chunk->hashes[j]) : 0;
    for (int64_t j = 0; j < m; ++j) {
      if (j + kPrefetchAhead < m && indexed) index_.PrefetchForWrite(pos[j + kPrefetchAhead]);
      const int64_t payload_var = layout_.var_fields().empty() ? 0 : source.VarBytes(begin + j);
      uint8_t* row;
      if (!chunk->valid[j]) {
        if (!options_.keep_null_keys) {
          rows[j] = nullptr;
          continue;
        }
        QUIVER_ASSIGN_OR_RETURN(row, rows_.Append(fixed + payload_var));
        RowLayout::SetNext(row, nullptr);
        const uint32_t o = static_cast<uint32_t>(fixed), z = 0;
        std::memcpy(row + key_slot, &o, 4);
        std::memcpy(row + key_slot + 4, &z, 4);
        var_start[j] = fixed;
      } else {
        if (SparseIndexNeedsGrowth(index_)) {
          // The distinct-count estimate was low: grow, and re-home the rest of the chunk.
          QUIVER_RETURN_NOT_OK(
              GrowSparseIndex(&index_, &index_page_, &entries_, "generic index", [key_slot](const uint8_t* r) {
                const std::string_view k = RowLayout::VarAt(r, key_slot);
                return HashBytes(reinterpret_cast<const uint8_t*>(k.data()), static_cast<int64_t>(k.size()));
              }));
          for (int64_t r = j; r < m; ++r) pos[r] = chunk->valid[r] ? index_.Home(chunk->hashes[r]) : 0;
        }
        const uint64_t tag = TaggedIndex::TagOf(chunk->hashes[j]);
        const uint8_t* key = chunk->key(j);
        const int64_t ksize = chunk->size(j);
        const uint64_t at =
            index_.FindSlot(pos[j], tag, [&](const uint8_t* r) { return KeyEquals(r, key_slot, key, ksize); });
        uint64_t& slot = index_.slots()[at];
        const uint8_t* head = slot == 0 ? nullptr : TaggedIndex::RowOf(slot);
        if (!AdmitKeyRow(head)) {
          rows[j] = nullptr;
          continue;
        }
        const int64_t kpad = RoundUpTo8(ksize);
        if (fixed + kpad + payload_var > std::numeric_limits<uint32_t>::max()) {
          return Status::Invalid("a build row of " + std::to_string(fixed + kpad + payload_var) +
                                 " bytes exceeds the 4 GiB row limit");
        }
        QUIVER_ASSIGN_OR_RETURN(row, rows_.Append(fixed + kpad + payload_var));
        if (!TaggedIndex::Fits(row, fixed + kpad + payload_var)) {
          return Status::NotImplemented("row address above 2^48 cannot be indexed (5-level page tables?)");
        }
        RowLayout::SetNext(row, head);
        slot = TaggedIndex::Make(tag, row);
        const uint32_t o = static_cast<uint32_t>(fixed), n = static_cast<uint32_t>(ksize);
        std::memcpy(row + key_slot, &o, 4);
        std::memcpy(row + key_slot + 4, &n, 4);
        if (ksize > 0) std::memcpy(row + fixed, key, static_cast<size_t>(ksize));
        if (kpad > ksize) std::memset(row + fixed + ksize, 0, static_cast<size_t>(kpad - ksize));
        var_start[j] = fixed + kpad;
      }
      if (ordinals) bit_util::StoreLE<int64_t>(row + 8, stats_.stored_rows);
      ++stats_.stored_rows;
      rows[j] = row;
    }
    source.Write(begin, m, rows.data(), var_start.data());
  }
  return Status::OK();
}

void GenericHashedRelation::Lookup(const std::vector<const ArrayData*>& probe_keys, int64_t begin, int64_t n,
                                   const uint8_t** out) const {
  if (closed_ || entries_ == 0) {
    std::fill(out, out + n, nullptr);
    return;
  }
  auto chunk = std::make_unique<EncodedChunk>();
  const int32_t key_slot = layout_.key_slot_offset();
  uint64_t pos[kChunk];
  for (int64_t base = 0; base < n; base += kChunk) {
    const int64_t m = std::min(kChunk, n - base);
    chunk->Encode(encoder_, probe_keys, begin + base, m);
    for (int64_t j = 0; j < m; ++j) {
      pos[j] = chunk->valid[j] ? index_.Home(chunk->hashes[j]) : 0;
      index_.Prefetch(pos[j]);
    }
    for (int64_t j = 0; j < m; ++j) {
      const uint8_t* found = nullptr;
      if (chunk->valid[j]) {
        const uint8_t* key = chunk->key(j);
        const int64_t size = chunk->size(j);
        found = index_.Find(pos[j], TaggedIndex::TagOf(chunk->hashes[j]),
                            [&](const uint8_t* r) { return KeyEquals(r, key_slot, key, size); });
        if (found) __builtin_prefetch(found);
      }
      out[base + j] = found;
    }
  }
}

void GenericHashedRelation::Close() {
  HashedRelation::Close();
  index_page_.Free();
  index_ = TaggedIndex();
  entries_ = 0;
}

Result<std::shared_ptr<Buffer>> GenericHashedRelation::Serialize(MemoryPool* pool) const {
  using namespace serde_internal;
  Header h;
  h.kind = RelationKind::kGeneric;
  h.flags = static_cast<uint8_t>((keys_unique_ ? kFlagUnique : 0) | (all_null_keys_ ? kFlagAllNull : 0));
  h.index_entries = entries_;
  return SerializeWith(&h, pool,
                       [&](int64_t i, const RefMap& refs) { return TaggedEntryRef(index_.slots()[i], refs); });
}

Result<std::unique_ptr<GenericHashedRelation>> GenericHashedRelation::Deserialize(const Schema& schema,
                                                                                  const Buffer& bytes,
                                                                                  TaskMemoryManager* tmm) {
  using namespace serde_internal;
  Header h;
  int64_t off = 0;
  QUIVER_RETURN_NOT_OK(ReadHeader(bytes.data(), bytes.size(), &h, &off));
  if (h.kind != RelationKind::kGeneric) return Status::Invalid("serialized relation is not a GenericHashedRelation");
  if (h.flags & kFlagDense) return Status::Invalid("serialized relation: a generic relation cannot be dense");
  if (!h.layout_options.with_key_bytes) return Status::Invalid("serialized relation: generic rows need key bytes");
  std::vector<KeyColumnSpec> specs;
  std::vector<int> keys;
  for (int32_t k : h.key_columns) {
    if (k < 0 || k >= schema.num_fields()) {
      return Status::Invalid("serialized relation: key column " + std::to_string(k) + " is not in the build schema");
    }
    const Field& f = *schema.fields[k];
    QUIVER_ASSIGN_OR_RETURN(KeyColumnSpec s, ResolveKeyPair(*f.type, f.name, *f.type, f.name));
    specs.push_back(s);
    keys.push_back(k);
  }
  std::vector<int> stored(h.stored_columns.begin(), h.stored_columns.end());
  QUIVER_ASSIGN_OR_RETURN(RowLayout layout, RowLayout::Make(schema, stored, h.layout_options));
  int64_t index_bytes;
  if (!SizesFill(h, off, bytes.size(), &index_bytes)) {
    return Status::Invalid("serialized relation: header sizes do not fill the " + std::to_string(bytes.size()) +
                           " bytes given");
  }
  if (h.index_entries > 0 && h.index_entries <= TaggedIndex::kWindow) {
    return Status::Invalid("serialized relation: an index of " + std::to_string(h.index_entries) +
                           " slots is too small");
  }
  const uint8_t* rows = bytes.data() + off;
  const uint8_t* idx = rows + h.row_bytes;
  std::vector<uint64_t> starts;
  QUIVER_RETURN_NOT_OK(ValidateRowRegion(h, layout, rows, &starts));
  int64_t used = 0;
  QUIVER_RETURN_NOT_OK(CountIndexEntries(
      idx, h.index_entries, TaggedIndex::kPointerMask, starts, h.row_bytes,
      [](int64_t i, uint64_t) { return "serialized relation: index entry " + std::to_string(i) + " is not a row"; },
      &used));
  if (used != h.num_keys || (h.index_entries > 0 && h.num_keys >= h.index_entries) ||
      (h.index_entries == 0 && h.num_keys > 0)) {
    return Status::Invalid("serialized relation: " + std::to_string(used) + " slots in use of " +
                           std::to_string(h.index_entries) + ", header says " + std::to_string(h.num_keys) + " keys");
  }
  auto rel = std::make_unique<GenericHashedRelation>(PrivateTag{}, tmm, std::move(specs));
  rel->AdoptHeader(h, std::move(layout), keys);
  uint8_t* row_base = nullptr;
  QUIVER_ASSIGN_OR_RETURN(MemoryReservation reservation,
                          rel->LoadRowsPage(h, index_bytes, rows, "GenericHashedRelation deserialization", &row_base));
  QUIVER_ASSIGN_OR_RETURN(uint64_t * dst, rel->LoadIndex(h, index_bytes, idx, TaggedIndex::kPointerMask, row_base,
                                                         &reservation, &rel->index_page_));
  if (dst != nullptr) rel->index_ = TaggedIndex(dst, h.index_entries - TaggedIndex::kWindow);
  rel->entries_ = h.index_entries;
  return rel;
}

}  // namespace quiver::join

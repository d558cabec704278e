// quiver/join/long_hashed_relation.cc — see long_hashed_relation.h.
#include "quiver/join/long_hashed_relation.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "quiver/base/bit_util.h"
#include "quiver/base/checked_math.h"
#include "quiver/columnar/batch_shape.h"
#include "quiver/join/relation_serde.h"

namespace quiver::join {
namespace {

constexpr int64_t kChunk = HashedRelation::kLookupChunk;

// Key validity of rows [begin, begin + n) of one column as bytes; returns
// false (and leaves `valid` untouched) when the column has no nulls.
bool KeyValidity(const ArrayData& keys, int64_t begin, int64_t n, uint8_t* valid) {
  if (keys.null_count == 0 || keys.buffers.empty() || !keys.buffers[0]) return false;
  const uint8_t* bits = keys.buffers[0]->data();
  const int64_t p = keys.offset + begin;
  for (int64_t j = 0; j < n; ++j) valid[j] = bit_util::GetBit(bits, p + j);
  return true;
}

// Calls fn(begin, m, keys, valid) for rows [0, rows) of the key column
// `keys` in chunks of at most kChunk rows: keys[j] is row begin + j loaded
// as int64, valid[j] its validity (valid is nullptr when the chunk has no
// null key).
template <typename Fn>
void ForEachKeyChunk(const ArrayData& keys, int64_t rows, Fn&& fn) {
  alignas(64) int64_t kbuf[kChunk];
  alignas(64) uint8_t valid[kChunk];
  for (int64_t begin = 0; begin < rows; begin += kChunk) {
    const int64_t m = std::min(kChunk, rows - begin);
    LoadKeysAsInt64(keys, begin, m, kbuf);
    const bool has_nulls = KeyValidity(keys, begin, m, valid);
    fn(begin, m, static_cast<const int64_t*>(kbuf), has_nulls ? static_cast<const uint8_t*>(valid) : nullptr);
  }
}

Status CheckBatch(const Schema& schema, const RecordBatch& batch, int64_t index) {
  const BatchShapeMismatch shape = FindBatchShapeMismatch(schema, batch, {.types = false, .lengths = true});
  if (shape.kind == BatchShapeMismatch::Kind::kColumnCount) {
    return Status::Invalid("build batch " + std::to_string(index) + " has " + std::to_string(batch.columns.size()) +
                           " columns, the schema " + std::to_string(schema.fields.size()));
  }
  if (shape.kind == BatchShapeMismatch::Kind::kNoArray) {
    return Status::Invalid("build batch " + std::to_string(index) + " column " + std::to_string(shape.column) +
                           " has no array");
  }
  if (!shape.ok()) {
    const size_t c = static_cast<size_t>(shape.column);
    return Status::Invalid("build batch " + std::to_string(index) + " column " + std::to_string(c) + " has " +
                           std::to_string(batch.columns[c]->length) + " rows, the batch " +
                           std::to_string(batch.num_rows));
  }
  return Status::OK();
}

}  // namespace

LongHashedRelation::LongHashedRelation(PrivateTag, TaskMemoryManager* tmm)
    : HashedRelation(tmm, "LongHashedRelation") {}

// ------------------------------------------------------------------ stats --

Result<LongBuildStats> LongHashedRelation::ComputeStats(const Schema& schema,
                                                        const std::vector<RecordBatchPtr>& batches,
                                                        const HashedRelationOptions& options) {
  QUIVER_RETURN_NOT_OK(CheckRelationOptions(schema, options));
  if (options.key_columns.size() != 1) {
    return Status::Invalid("LongHashedRelation takes exactly one key column, got " +
                           std::to_string(options.key_columns.size()));
  }
  const int key = options.key_columns[0];
  const Field& kf = *schema.fields[key];
  if (!LoadsAsInt64(*kf.type)) {
    return Status::Invalid("key column '" + kf.name + "' has type " + kf.type->ToString() +
                           ", which is not a 64-bit-loadable integer or temporal type");
  }
  QUIVER_ASSIGN_OR_RETURN(RowLayout var_layout,
                          RowLayout::Make(schema, PayloadColumns(schema, options), RowLayoutOptions{}));
  LongBuildStats st;
  DistinctSketch sketch;
  int64_t mn = std::numeric_limits<int64_t>::max(), mx = std::numeric_limits<int64_t>::min();
  alignas(64) int64_t kbuf[kChunk];
  alignas(64) uint8_t valid[kChunk];
  int64_t batch_index = 0;
  for (const auto& bp : batches) {
    const RecordBatch& b = *bp;
    QUIVER_RETURN_NOT_OK(CheckBatch(schema, b, batch_index++));
    const ArrayData& keys = *b.columns[key];
    if (!keys.type->Equals(*kf.type)) {
      return Status::Invalid("key column '" + kf.name + "' has type " + keys.type->ToString() + " in a batch, " +
                             kf.type->ToString() + " in the schema");
    }
    QUIVER_ASSIGN_OR_RETURN(RowSource src, RowSource::Make(var_layout, b));
    st.payload_nulls |= src.any_nulls();
    for (int64_t begin = 0; begin < b.num_rows; begin += kChunk) {
      const int64_t m = std::min(kChunk, b.num_rows - begin);
      LoadKeysAsInt64(keys, begin, m, kbuf);
      const bool has_nulls = KeyValidity(keys, begin, m, valid);
      for (int64_t j = 0; j < m; ++j) {
        if (has_nulls && !valid[j]) {
          ++st.null_key_rows;
          if (options.keep_null_keys && var_layout.has_var()) st.var_bytes += src.VarBytes(begin + j);
          continue;
        }
        const int64_t k = kbuf[j];
        mn = std::min(mn, k);
        mx = std::max(mx, k);
        sketch.Add(HashInt64(k));
        if (var_layout.has_var()) st.var_bytes += src.VarBytes(begin + j);
      }
    }
    st.input_rows += b.num_rows;
  }
  if (st.input_rows > st.null_key_rows) {
    st.min_key = mn;
    st.max_key = mx;
    st.distinct_estimate = std::max<int64_t>(1, sketch.Estimate());
  }
  return st;
}

RelationSizeEstimate LongHashedRelation::EstimateSize(const LongBuildStats& stats, const RowLayout& layout,
                                                      const HashedRelationOptions& options) {
  RelationSizeEstimate e;
  const int64_t non_null = stats.input_rows - stats.null_key_rows;
  if (non_null > 0) {
    const int64_t distinct = PlannedDistinctKeys(non_null, stats.distinct_estimate, options);
    // Overflow-safe range: in uint64, keys INT64_MIN..INT64_MAX give 2^64-1.
    const uint64_t range_minus_one = static_cast<uint64_t>(stats.max_key) - static_cast<uint64_t>(stats.min_key);
    const double dense_limit = options.dense_entries_per_key * static_cast<double>(distinct);
    const bool small_range =
        options.dense_max_small_range > 0 && range_minus_one < static_cast<uint64_t>(options.dense_max_small_range);
    if (options.allow_dense && (small_range || static_cast<double>(range_minus_one) + 1.0 <= dense_limit) &&
        range_minus_one < (uint64_t{1} << 60)) {
      e.dense = true;
      e.index_entries = static_cast<int64_t>(range_minus_one) + 1;
    } else {
      e.index_entries = SparseIndexSlots(distinct, options.load_factor);
    }
  }
  // Sparse rows carry their key.
  const int64_t row_fixed = layout.fixed_bytes() + (e.dense || non_null == 0 ? 0 : 8);
  FillEstimateBytes(StoredRows(stats.input_rows, stats.null_key_rows, options), row_fixed, stats.var_bytes, &e);
  return e;
}

// ------------------------------------------------------------------ build --

Result<std::unique_ptr<LongHashedRelation>> LongHashedRelation::Build(const Schema& schema,
                                                                      const std::vector<RecordBatchPtr>& batches,
                                                                      const HashedRelationOptions& options,
                                                                      TaskMemoryManager* tmm) {
  QUIVER_ASSIGN_OR_RETURN(LongBuildStats st, ComputeStats(schema, batches, options));
  RowLayoutOptions lo;
  lo.with_ordinal = options.with_ordinals;
  lo.with_validity = st.payload_nulls;
  const std::vector<int> payload = PayloadColumns(schema, options);
  QUIVER_ASSIGN_OR_RETURN(RowLayout payload_layout, RowLayout::Make(schema, payload, lo));
  const RelationSizeEstimate est = EstimateSize(st, payload_layout, options);
  lo.with_int64_key = !est.dense && est.index_entries > 0;
  QUIVER_ASSIGN_OR_RETURN(RowLayout layout, RowLayout::Make(schema, payload, lo));

  auto rel = std::make_unique<LongHashedRelation>(PrivateTag{}, tmm);
  rel->min_key_ = st.min_key;
  rel->max_key_ = st.max_key;
  if (rel->StartBuild(options, std::move(layout), st.input_rows, st.null_key_rows)) return rel;
  QUIVER_ASSIGN_OR_RETURN(
      MemoryReservation reservation,
      rel->ReserveForBuild(est, "LongHashedRelation build of " + std::to_string(st.input_rows) + " rows (" +
                                    std::to_string(st.distinct_estimate) + " distinct keys estimated, " +
                                    (est.dense ? "dense" : "sparse") + " index)"));
  rel->dense_ = est.dense;
  rel->entries_ = est.index_entries;
  if (est.index_entries > 0) {
    QUIVER_ASSIGN_OR_RETURN(rel->index_page_, rel->AllocateZeroedPage(est.index_bytes, &reservation));
    if (est.dense) {
      rel->dense_rows_ = reinterpret_cast<const uint8_t**>(rel->index_page_.data());
    } else {
      rel->index_ =
          TaggedIndex(reinterpret_cast<uint64_t*>(rel->index_page_.data()), est.index_entries - TaggedIndex::kWindow);
    }
  }
  rel->rows_.Init(rel.get(), &reservation, est.row_bytes, options.max_page_bytes);
  rel->AllocateKeyFilter();  // Insert sets the keys' bits
  const int key = options.key_columns[0];
  if (rel->CanInsertConcurrently(batches)) {
    QUIVER_RETURN_NOT_OK(rel->InsertConcurrently(batches, key));
  } else {
    for (const auto& b : batches) {
      QUIVER_ASSIGN_OR_RETURN(RowSource src, RowSource::Make(rel->layout_, *b));
      QUIVER_RETURN_NOT_OK(rel->Insert(*b, key, src, &reservation));
    }
  }
  rel->FinishBuild(&reservation, rel->entries_);
  return rel;
}

bool LongHashedRelation::AllocateKeyFilter() {
  if (dense_ || index_.empty() || entries_ == 0) return false;
  const uint64_t range_minus_one = static_cast<uint64_t>(max_key_) - static_cast<uint64_t>(min_key_);
  if (range_minus_one >= kMaxKeyFilterBits) return false;
  const int64_t bytes = static_cast<int64_t>((range_minus_one + 64) / 64) * 8;
  if (bytes > std::max<int64_t>(int64_t{256} << 10, entries_ * 16)) return false;
  auto page = AllocatePage(bytes);
  if (!page.ok()) return false;
  std::memset(page->data(), 0, static_cast<size_t>(bytes));
  key_filter_page_ = std::move(*page);
  key_filter_ = reinterpret_cast<uint64_t*>(key_filter_page_.data());
  key_filter_bits_ = range_minus_one + 1;
  return true;
}

void LongHashedRelation::DropKeyFilter() {
  key_filter_page_.Free();
  key_filter_ = nullptr;
  key_filter_bits_ = 0;
}

void LongHashedRelation::BuildKeyFilter() {
  if (!AllocateKeyFilter()) return;
  const int32_t ko = layout_.int64_key_offset();
  const uint64_t* slots = index_.slots();
  for (int64_t i = 0; i < entries_; ++i) {
    if (slots[i] == 0) continue;
    const uint64_t off =
        static_cast<uint64_t>(RowLayout::LoadInt64(TaggedIndex::RowOf(slots[i]), ko)) - static_cast<uint64_t>(min_key_);
    if (off >= key_filter_bits_) return DropKeyFilter();  // not this relation's range
    key_filter_[off >> 6] |= uint64_t{1} << (off & 63);
  }
}

Status LongHashedRelation::Insert(const RecordBatch& batch, int key_column, const RowSource& source,
                                  MemoryReservation* reservation) {
  (void)reservation;
  const ArrayData& keys = *batch.columns[key_column];
  const int64_t fixed = layout_.fixed_bytes();
  const bool has_var = layout_.has_var();
  const bool ordinals = layout_.options().with_ordinal;
  const bool keep_null = options_.keep_null_keys;
  const int32_t ko = layout_.int64_key_offset();
  alignas(64) int64_t kbuf[kChunk];
  alignas(64) uint64_t pos[kChunk];
  alignas(64) uint64_t tags[kChunk];
  alignas(64) uint8_t valid[kChunk];
  alignas(64) uint8_t* rows[kChunk];
  alignas(64) int64_t var_start[kChunk];
  for (int64_t j = 0; j < kChunk; ++j) var_start[j] = fixed;

  for (int64_t begin = 0; begin < batch.num_rows; begin += kChunk) {
    const int64_t m = std::min(kChunk, batch.num_rows - begin);
    LoadKeysAsInt64(keys, begin, m, kbuf);
    const bool has_nulls = KeyValidity(keys, begin, m, valid);
    const bool sparse = !dense_ && !index_.empty();
    // Index positions first, so that entries can be prefetched ahead.
    if (dense_) {
      for (int64_t j = 0; j < m; ++j) {
        pos[j] = static_cast<uint64_t>(kbuf[j]) - static_cast<uint64_t>(min_key_);
      }
    } else if (sparse) {
      for (int64_t j = 0; j < m; ++j) {
        pos[j] = index_.Home(HashInt64(kbuf[j]));
        tags[j] = TaggedIndex::TagOf(TagHashInt64(kbuf[j]));
      }
    }
    for (int64_t j = 0; j < m; ++j) {
      if (j + kPrefetchAhead < m) {
        const uint64_t ahead = pos[j + kPrefetchAhead];
        if (dense_) {
          if (ahead < static_cast<uint64_t>(entries_)) __builtin_prefetch(dense_rows_ + ahead, 1);
        } else if (sparse) {
          index_.PrefetchForWrite(ahead);
        }
      }
      const int64_t size = has_var ? fixed + source.VarBytes(begin + j) : fixed;
      uint8_t* row;
      if (has_nulls && !valid[j]) {
        if (!keep_null) {
          rows[j] = nullptr;
          continue;
        }
        QUIVER_ASSIGN_OR_RETURN(row, rows_.Append(size));
        RowLayout::SetNext(row, nullptr);
        if (ko >= 0) bit_util::StoreLE<int64_t>(row + ko, 0);
      } else if (dense_) {
        const uint8_t*& head = dense_rows_[pos[j]];
        if (!AdmitKeyRow(head)) {
          rows[j] = nullptr;
          continue;
        }
        QUIVER_ASSIGN_OR_RETURN(row, rows_.Append(size));
        RowLayout::SetNext(row, head);
        head = row;
      } else {
        const int64_t k = kbuf[j];
        if (SparseIndexNeedsGrowth(index_)) {
          // The distinct-count estimate was low: grow, and re-home the rest of the chunk.
          QUIVER_RETURN_NOT_OK(
              GrowSparseIndex(&index_, &index_page_, &entries_, "sparse index",
                              [ko](const uint8_t* r) { return HashInt64(RowLayout::LoadInt64(r, ko)); }));
          for (int64_t r = j; r < m; ++r) pos[r] = index_.Home(HashInt64(kbuf[r]));
        }
        const uint64_t at =
            index_.FindSlot(pos[j], tags[j], [&](const uint8_t* r) { return RowLayout::LoadInt64(r, ko) == k; });
        uint64_t& slot = index_.slots()[at];
        const uint8_t* head = slot == 0 ? nullptr : TaggedIndex::RowOf(slot);
        if (!AdmitKeyRow(head)) {
          rows[j] = nullptr;
          continue;
        }
        QUIVER_ASSIGN_OR_RETURN(row, rows_.Append(size));
        if (!TaggedIndex::Fits(row, size)) {
          return Status::NotImplemented("row address above 2^48 cannot be indexed (5-level page tables?)");
        }
        RowLayout::SetNext(row, head);
        bit_util::StoreLE<int64_t>(row + ko, k);
        slot = TaggedIndex::Make(tags[j], row);
        if (key_filter_ != nullptr) {
          const uint64_t off = static_cast<uint64_t>(k) - static_cast<uint64_t>(min_key_);
          if (off < key_filter_bits_) {
            key_filter_[off >> 6] |= uint64_t{1} << (off & 63);
          } else {
            DropKeyFilter();  // a key outside the statistics' range: no filter
          }
        }
      }
      if (ordinals) bit_util::StoreLE<int64_t>(row + 8, stats_.stored_rows);
      ++stats_.stored_rows;
      rows[j] = row;
    }
    source.Write(begin, m, rows, var_start);
  }
  return Status::OK();
}

// ------------------------------------------------------- concurrent build --

namespace {

// First position of partition p of [0, positions) split among `tasks`:
// ceil(p * positions / tasks).
inline uint64_t PartitionBegin(int p, uint64_t positions, int tasks) {
  const unsigned __int128 x = static_cast<unsigned __int128>(p) * positions;
  return static_cast<uint64_t>((x + static_cast<unsigned>(tasks) - 1) / static_cast<unsigned>(tasks));
}

}  // namespace

// The partition of an index position, floor(pos * tasks / positions),
// without a division per row: a fixed-point estimate corrected against
// the partition bounds.
class LongHashedRelation::Partitioner {
 public:
  Partitioner(uint64_t positions, int tasks) : tasks_(tasks), begin_(static_cast<size_t>(tasks) + 1) {
    for (int p = 0; p <= tasks; ++p) begin_[static_cast<size_t>(p)] = PartitionBegin(p, positions, tasks);
    mul_ = static_cast<uint64_t>((static_cast<unsigned __int128>(static_cast<unsigned>(tasks)) << 64) /
                                 (static_cast<unsigned __int128>(positions) + 1));
  }
  int operator()(uint64_t pos) const {
    int p = std::min(static_cast<int>((static_cast<unsigned __int128>(pos) * mul_) >> 64), tasks_ - 1);
    while (p + 1 < tasks_ && pos >= begin_[static_cast<size_t>(p) + 1]) ++p;
    while (p > 0 && pos < begin_[static_cast<size_t>(p)]) --p;
    return p;
  }
  uint64_t begin(int p) const { return begin_[static_cast<size_t>(p)]; }

 private:
  int tasks_;
  uint64_t mul_ = 0;
  std::vector<uint64_t> begin_;
};

bool LongHashedRelation::CanInsertConcurrently(const std::vector<RecordBatchPtr>& batches) const {
  const BuildParallelism& par = options_.parallelism;
  if (par.tasks <= 1 || !par.parallel_for || batches.size() < 2) return false;
  if (options_.ignore_duplicate_keys || entries_ == 0) return false;
  if (stats_.input_rows < HashedRelationOptions::kMinParallelBuildRows) return false;
  // The per-(batch, partition) bookkeeping stays small (heap, not pages).
  const int tasks = std::min(par.tasks, kMaxBuildPartitions);
  if (static_cast<int64_t>(batches.size()) * (BuildPartitionCount(tasks) + 1) > kMaxBuildRegions) return false;
  // Every partition of a sparse index needs room of its own.
  return dense_ || index_.capacity() >= int64_t{64} * kMaxBuildPartitions;
}

int LongHashedRelation::BuildPartitionCount(int tasks) const {
  const int64_t index_bytes = entries_ * 8;
  return static_cast<int>(std::clamp<int64_t>((index_bytes + kBuildPartitionIndexBytes - 1) / kBuildPartitionIndexBytes,
                                              tasks, kMaxBuildPartitions));
}

Status LongHashedRelation::InsertConcurrently(const std::vector<RecordBatchPtr>& batches, int key_column) {
  const int tasks = std::min(options_.parallelism.tasks, kMaxBuildPartitions);
  const size_t nb = batches.size();
  const int64_t fixed = layout_.fixed_bytes();
  // Variable-width rows (string or binary fields): a row takes fixed plus
  // its variable bytes, so regions are sized in bytes and each row's
  // address is kept, in layout order, for the passes after the copy.
  const bool var = layout_.has_var();
  const bool keep_null = options_.keep_null_keys;
  const bool ordinals = layout_.options().with_ordinal;
  const int32_t ko = layout_.int64_key_offset();
  const uint64_t positions = dense_ ? static_cast<uint64_t>(entries_) : static_cast<uint64_t>(index_.capacity());
  // Partitions of at most kBuildPartitionIndexBytes of index each (at
  // least one per task), so that a partition's inserts stay in cache.
  const int partitions = BuildPartitionCount(tasks);
  const int parts = partitions + 1;  // then the null-key rows
  const auto& parallel_for = options_.parallelism.parallel_for;
  const Partitioner partition_of(positions, partitions);

  // Pass 1: stored rows (and, for variable-width rows, their bytes) per
  // batch and partition (tasks claim batches).
  std::vector<int64_t> counts(nb * static_cast<size_t>(parts), 0);
  std::vector<int64_t> bytes(var ? nb * static_cast<size_t>(parts) : 0, 0);
  std::atomic<size_t> next_batch{0};
  QUIVER_RETURN_NOT_OK(parallel_for(tasks, [&](int) -> Status {
    // Counted here, stored once: the tasks' batches share lines of `counts`.
    std::vector<int64_t> c(static_cast<size_t>(parts)), cb(var ? static_cast<size_t>(parts) : 0);
    for (size_t b; (b = next_batch.fetch_add(1, std::memory_order_relaxed)) < nb;) {
      const RecordBatch& batch = *batches[b];
      std::fill(c.begin(), c.end(), 0);
      std::fill(cb.begin(), cb.end(), 0);
      std::optional<RowSource> source;
      if (var) {
        QUIVER_ASSIGN_OR_RETURN(RowSource src, RowSource::Make(layout_, batch));
        source.emplace(std::move(src));
      }
      ForEachKeyChunk(*batch.columns[key_column], batch.num_rows,
                      [&](int64_t begin, int64_t m, const int64_t* kbuf, const uint8_t* valid) {
                        for (int64_t j = 0; j < m; ++j) {
                          const bool is_null = valid && !valid[j];
                          if (is_null && !keep_null) continue;
                          const size_t p = is_null ? static_cast<size_t>(partitions)
                                                   : static_cast<size_t>(partition_of(RowPosition(kbuf[j])));
                          ++c[p];
                          if (var) cb[p] += fixed + source->VarBytes(begin + j);
                        }
                      });
      std::copy(c.begin(), c.end(), counts.begin() + static_cast<std::ptrdiff_t>(b * static_cast<size_t>(parts)));
      if (var) {
        std::copy(cb.begin(), cb.end(), bytes.begin() + static_cast<std::ptrdiff_t>(b * static_cast<size_t>(parts)));
      }
    }
    return Status::OK();
  }));

  // Layout: partition by partition, batch order within one; ordinals
  // follow the layout.
  std::vector<uint8_t*> region(nb * static_cast<size_t>(parts), nullptr);
  std::vector<int64_t> first_ordinal(nb * static_cast<size_t>(parts), 0);
  auto region_bytes = [&](size_t at) { return var ? bytes[at] : counts[at] * fixed; };
  int64_t stored = 0;
  for (int p = 0; p < parts; ++p) {
    int64_t rows = 0, size = 0;
    for (size_t b = 0; b < nb; ++b) {
      const size_t at = b * static_cast<size_t>(parts) + static_cast<size_t>(p);
      rows += counts[at];
      size += region_bytes(at);
    }
    if (rows == 0) continue;
    QUIVER_ASSIGN_OR_RETURN(uint8_t * base, rows_.Append(size));
    if (!dense_ && !TaggedIndex::Fits(base, size)) {
      return Status::NotImplemented("row address above 2^48 cannot be indexed (5-level page tables?)");
    }
    for (size_t b = 0; b < nb; ++b) {
      const size_t at = b * static_cast<size_t>(parts) + static_cast<size_t>(p);
      region[at] = base;
      first_ordinal[at] = stored;
      base += region_bytes(at);
      stored += counts[at];
    }
  }
  // Variable-width rows: each row's address by layout position (a page of
  // this relation's, charged like its rows, freed when the build ends).
  MemoryPage row_page;
  uint8_t** row_ptrs = nullptr;
  if (var && stored > 0) {
    QUIVER_ASSIGN_OR_RETURN(row_page, AllocatePage(stored * static_cast<int64_t>(sizeof(uint8_t*))));
    row_ptrs = reinterpret_cast<uint8_t**>(row_page.data());
  }
  // Row r of region `at`.
  auto row_at = [&](size_t at, int64_t r) -> uint8_t* {
    return var ? row_ptrs[first_ordinal[at] + r] : region[at] + r * fixed;
  };

  // Pass 2: the rows (tasks claim batches). Each row's `next` field holds
  // its index position until pass 3 links it.
  next_batch.store(0);
  QUIVER_RETURN_NOT_OK(parallel_for(tasks, [&](int) -> Status {
    alignas(64) uint8_t* rows[kChunk];
    alignas(64) int64_t var_start[kChunk];
    for (int64_t j = 0; j < kChunk; ++j) var_start[j] = fixed;
    std::vector<uint8_t*> cursor(static_cast<size_t>(parts));
    std::vector<int64_t> ordinal(static_cast<size_t>(parts));
    for (size_t b; (b = next_batch.fetch_add(1, std::memory_order_relaxed)) < nb;) {
      const RecordBatch& batch = *batches[b];
      for (int p = 0; p < parts; ++p) {
        cursor[static_cast<size_t>(p)] = region[b * static_cast<size_t>(parts) + static_cast<size_t>(p)];
        ordinal[static_cast<size_t>(p)] = first_ordinal[b * static_cast<size_t>(parts) + static_cast<size_t>(p)];
      }
      QUIVER_ASSIGN_OR_RETURN(RowSource source, RowSource::Make(layout_, batch));
      ForEachKeyChunk(*batch.columns[key_column], batch.num_rows,
                      [&](int64_t begin, int64_t m, const int64_t* kbuf, const uint8_t* valid) {
                        for (int64_t j = 0; j < m; ++j) {
                          const bool is_null = valid && !valid[j];
                          if (is_null && !keep_null) {
                            rows[j] = nullptr;
                            continue;
                          }
                          const uint64_t at = is_null ? 0 : RowPosition(kbuf[j]);
                          const size_t p =
                              is_null ? static_cast<size_t>(partitions) : static_cast<size_t>(partition_of(at));
                          uint8_t* row = cursor[p];
                          if (var) {
                            cursor[p] += fixed + source.VarBytes(begin + j);
                            row_ptrs[ordinal[p]] = row;  // ordinal[p]: the row's layout position
                          } else {
                            cursor[p] += fixed;
                          }
                          bit_util::StoreLE<uint64_t>(row, is_null ? 0 : at);
                          if (ko >= 0) bit_util::StoreLE<int64_t>(row + ko, is_null ? 0 : kbuf[j]);
                          if (ordinals) bit_util::StoreLE<int64_t>(row + 8, ordinal[p]);
                          ++ordinal[p];
                          rows[j] = row;
                        }
                        source.Write(begin, m, rows, var_start);
                      });
    }
    return Status::OK();
  }));

  // Pass 3: the index (tasks claim partitions). A partition's rows are
  // linked in input order, so every duplicate chain is the one a serial
  // build makes, with plain stores: no other task touches the partition's
  // index entries. A sparse probe that would run past the partition's
  // last slot defers its row (a key's rows all defer together: the slots
  // it passed only fill up), to be indexed afterwards on this thread; a
  // partition past its growth load (a distinct-count estimate far too low)
  // stops, and every row is then indexed again on this thread.
  const double max_load = std::min(0.95, std::max(kSparseMaxLoad, options_.load_factor + 0.1));
  std::vector<RegionTally> tallies(static_cast<size_t>(partitions));
  std::vector<std::vector<uint8_t*>> deferred(static_cast<size_t>(partitions));
  std::atomic<bool> overflow{false};
  std::atomic<int> next_partition{0};
  QUIVER_RETURN_NOT_OK(parallel_for(tasks, [&](int) -> Status {
    for (int p; (p = next_partition.fetch_add(1, std::memory_order_relaxed)) < partitions;) {
      if (overflow.load(std::memory_order_relaxed)) break;
      const uint64_t hi =
          p + 1 == partitions ? static_cast<uint64_t>(dense_ ? entries_ : index_.length()) : partition_of.begin(p + 1);
      const int64_t key_room = static_cast<int64_t>(max_load * static_cast<double>(hi - partition_of.begin(p)));
      RegionTally tally;
      std::vector<uint8_t*>& later = deferred[static_cast<size_t>(p)];
      for (size_t b = 0; b < nb && !overflow.load(std::memory_order_relaxed); ++b) {
        const size_t at = b * static_cast<size_t>(parts) + static_cast<size_t>(p);
        const int64_t n = counts[at];
        for (int64_t r = 0; r < n; ++r) {
          if (r + kPrefetchAhead < n) {
            const uint64_t ahead = bit_util::LoadLE<uint64_t>(row_at(at, r + kPrefetchAhead));
            if (dense_) {
              __builtin_prefetch(dense_rows_ + ahead, 1);
            } else {
              index_.PrefetchForWrite(ahead);
            }
          }
          uint8_t* row = row_at(at, r);
          const uint64_t pos = bit_util::LoadLE<uint64_t>(row);
          if (dense_) {
            const uint8_t*& head = dense_rows_[pos];
            if (head == nullptr) {
              ++tally.new_keys;
            } else {
              tally.duplicates = true;
            }
            RowLayout::SetNext(row, head);
            head = row;
            continue;
          }
          const int64_t k = RowLayout::LoadInt64(row, ko);
          const uint64_t tag = TaggedIndex::TagOf(TagHashInt64(k));
          uint64_t slot_at = pos;
          while (slot_at < hi) {
            const uint64_t s = index_.slots()[slot_at];
            if (s == 0 ||
                ((s & ~TaggedIndex::kPointerMask) == tag && RowLayout::LoadInt64(TaggedIndex::RowOf(s), ko) == k))
              break;
            ++slot_at;
          }
          if (slot_at >= hi) {
            later.push_back(row);
            continue;
          }
          uint64_t& slot = index_.slots()[slot_at];
          if (slot == 0) {
            if (++tally.new_keys > key_room) {
              overflow.store(true, std::memory_order_relaxed);
              break;
            }
            RowLayout::SetNext(row, nullptr);
          } else {
            tally.duplicates = true;
            RowLayout::SetNext(row, TaggedIndex::RowOf(slot));
          }
          slot = TaggedIndex::Make(tag, row);
        }
      }
      tallies[static_cast<size_t>(p)] = tally;
    }
    return Status::OK();
  }));

  auto index_serially = [&](uint8_t* row) -> Status {
    const int64_t k = RowLayout::LoadInt64(row, ko);
    if (SparseIndexNeedsGrowth(index_)) {
      QUIVER_RETURN_NOT_OK(GrowSparseIndex(&index_, &index_page_, &entries_, "sparse index",
                                           [ko](const uint8_t* r) { return HashInt64(RowLayout::LoadInt64(r, ko)); }));
    }
    const uint64_t tag = TaggedIndex::TagOf(TagHashInt64(k));
    const uint64_t at = index_.FindSlot(index_.Home(HashInt64(k)), tag,
                                        [&](const uint8_t* r) { return RowLayout::LoadInt64(r, ko) == k; });
    uint64_t& slot = index_.slots()[at];
    const uint8_t* head = slot == 0 ? nullptr : TaggedIndex::RowOf(slot);
    AdmitKeyRow(head);
    RowLayout::SetNext(row, head);
    slot = TaggedIndex::Make(tag, row);
    return Status::OK();
  };
  if (overflow.load()) {
    // Sparse only (a dense index has an entry for every key): index every
    // row again on this thread, growing the index as a serial build does;
    // a key's rows keep their input order. Batch by batch, not partition
    // by partition: rows in index order would pile up into one long
    // linear-probing run.
    std::memset(index_page_.data(), 0, static_cast<size_t>(entries_) * 8);
    keys_unique_ = true;
    for (size_t b = 0; b < nb; ++b) {
      for (int p = 0; p < partitions; ++p) {
        const size_t at = b * static_cast<size_t>(parts) + static_cast<size_t>(p);
        for (int64_t r = 0; r < counts[at]; ++r) QUIVER_RETURN_NOT_OK(index_serially(row_at(at, r)));
      }
    }
  } else {
    for (const RegionTally& t : tallies) {
      stats_.num_keys += t.new_keys;
      if (t.duplicates) keys_unique_ = false;
    }
    for (const auto& rows : deferred) {
      for (uint8_t* row : rows) QUIVER_RETURN_NOT_OK(index_serially(row));
    }
  }
  // Null-key rows (kept for outer joins) are in no chain.
  for (size_t b = 0; b < nb; ++b) {
    const size_t at = b * static_cast<size_t>(parts) + static_cast<size_t>(partitions);
    for (int64_t r = 0; r < counts[at]; ++r) RowLayout::SetNext(row_at(at, r), nullptr);
  }
  stats_.stored_rows += stored;

  if (key_filter_ != nullptr) {
    // Pass 4: the key bitmap, its words split among the tasks by key range.
    const uint64_t words = (key_filter_bits_ + 63) / 64;
    std::atomic<bool> outside{false};
    QUIVER_RETURN_NOT_OK(parallel_for(tasks, [&](int p) -> Status {
      const uint64_t w_lo = PartitionBegin(p, words, tasks), w_hi = PartitionBegin(p + 1, words, tasks);
      for (const auto& bp : batches) {
        ForEachKeyChunk(*bp->columns[key_column], bp->num_rows,
                        [&](int64_t, int64_t m, const int64_t* kbuf, const uint8_t* valid) {
                          for (int64_t j = 0; j < m; ++j) {
                            if (valid && !valid[j]) continue;
                            const uint64_t off = static_cast<uint64_t>(kbuf[j]) - static_cast<uint64_t>(min_key_);
                            if (off >= key_filter_bits_) {
                              outside.store(true, std::memory_order_relaxed);
                              continue;
                            }
                            const uint64_t w = off >> 6;
                            if (w >= w_lo && w < w_hi) key_filter_[w] |= uint64_t{1} << (off & 63);
                          }
                        });
      }
      return Status::OK();
    }));
    if (outside.load()) DropKeyFilter();
  }
  return Status::OK();
}

// ------------------------------------------------------------------ probe --

void LongHashedRelation::FindBatch(const int64_t* keys, const uint8_t* valid, int64_t n, const uint8_t** out) const {
  if (closed_ || entries_ == 0) {
    std::fill(out, out + n, nullptr);
    return;
  }
  constexpr int64_t kStage = 256;
  alignas(64) uint64_t pos[kStage];
  alignas(64) uint64_t tags[kStage];
  for (int64_t base = 0; base < n; base += kStage) {
    const int64_t m = std::min(kStage, n - base);
    const int64_t* k = keys + base;
    const uint8_t** o = out + base;
    const uint8_t* v = valid ? valid + base : nullptr;
    if (dense_) {
      // Stage 1: positions, entries prefetched. Stage 2: branch-free reads.
      const uint64_t lo = static_cast<uint64_t>(min_key_);
      const uint64_t cap = static_cast<uint64_t>(entries_);
      for (int64_t j = 0; j < m; ++j) {
        pos[j] = static_cast<uint64_t>(k[j]) - lo;
        if (pos[j] < cap) __builtin_prefetch(dense_rows_ + pos[j]);
      }
      for (int64_t j = 0; j < m; ++j) {
        const bool in = pos[j] < cap && (!v || v[j]);
        const uint8_t* row = dense_rows_[in ? pos[j] : 0];
        row = in ? row : nullptr;
        if (row) __builtin_prefetch(row);
        o[j] = row;
      }
      continue;
    }
    if (key_filter_ != nullptr) {
      // Stage 0: the keys the bitmap has (and valid) are the candidates;
      // the rest are misses without a hash. Then stages 1-3 over them.
      alignas(64) int32_t cand[kStage];
      int64_t c = 0;
      const uint64_t lo = static_cast<uint64_t>(min_key_);
      for (int64_t j = 0; j < m; ++j) {
        const uint64_t off = static_cast<uint64_t>(k[j]) - lo;
        const bool in = off < key_filter_bits_;
        const uint64_t at = in ? off : 0;
        const bool hit = in & ((key_filter_[at >> 6] >> (at & 63)) & 1) & (!v || v[j]);
        o[j] = nullptr;
        cand[c] = static_cast<int32_t>(j);
        c += hit;
      }
      for (int64_t i = 0; i < c; ++i) {
        const int64_t key = k[cand[i]];
        pos[i] = index_.Home(HashInt64(key));
        tags[i] = TaggedIndex::TagOf(TagHashInt64(key));
        index_.Prefetch(pos[i]);
      }
      const int32_t ko = layout_.int64_key_offset();
      for (int64_t i = 0; i < c; ++i) {
        const int64_t key = k[cand[i]];
        o[cand[i]] = index_.Find(pos[i], tags[i], [&](const uint8_t* r) { return RowLayout::LoadInt64(r, ko) == key; });
      }
      continue;
    }
    // Stage 1: hash, home slot prefetched.
    for (int64_t j = 0; j < m; ++j) {
      pos[j] = index_.Home(HashInt64(k[j]));
      tags[j] = TaggedIndex::TagOf(TagHashInt64(k[j]));
      index_.Prefetch(pos[j]);
    }
    // Stage 2: first tag match (no row touched), row prefetched.
    for (int64_t j = 0; j < m; ++j) {
      uint64_t at = 0;
      const uint8_t* row = (v && !v[j]) ? nullptr : index_.FirstTagMatch(pos[j], tags[j], &at);
      if (row) __builtin_prefetch(row);
      o[j] = row;
      pos[j] = at;
    }
    // Stage 3: verify the key in the row; on a tag collision keep probing.
    const int32_t ko = layout_.int64_key_offset();
    for (int64_t j = 0; j < m; ++j) {
      const uint8_t* row = o[j];
      if (row == nullptr) continue;
      const int64_t key = k[j];
      if (__builtin_expect(RowLayout::LoadInt64(row, ko) != key, 0)) {
        o[j] = index_.Find(index_.Next(pos[j]), tags[j],
                           [&](const uint8_t* r) { return RowLayout::LoadInt64(r, ko) == key; });
      }
    }
  }
}

void LongHashedRelation::Lookup(const std::vector<const ArrayData*>& probe_keys, int64_t begin, int64_t n,
                                const uint8_t** out) const {
  const ArrayData& a = *probe_keys[0];
  alignas(64) uint8_t valid[kChunk];
  alignas(64) int64_t kbuf[kChunk];
  for (int64_t base = 0; base < n; base += kChunk) {
    const int64_t m = std::min(kChunk, n - base);
    const bool has_nulls = KeyValidity(a, begin + base, m, valid);
    const int64_t* keys;
    const TypeId id = a.type->id;
    if (id == TypeId::kInt64 || id == TypeId::kUInt64 || id == TypeId::kTimestamp || id == TypeId::kDate64 ||
        id == TypeId::kTime64 || id == TypeId::kDuration) {
      keys = reinterpret_cast<const int64_t*>(a.buffers[1]->data()) + a.offset + begin + base;
      if (reinterpret_cast<uintptr_t>(keys) % alignof(int64_t) != 0) {
        LoadKeysAsInt64(a, begin + base, m, kbuf);
        keys = kbuf;
      }
    } else {
      LoadKeysAsInt64(a, begin + base, m, kbuf);
      keys = kbuf;
    }
    FindBatch(keys, has_nulls ? valid : nullptr, m, out + base);
  }
}

void LongHashedRelation::Close() {
  HashedRelation::Close();
  index_page_.Free();
  index_ = TaggedIndex();
  dense_rows_ = nullptr;
  entries_ = 0;
  DropKeyFilter();
}

// ------------------------------------------------------------------ serde --

Result<std::shared_ptr<Buffer>> LongHashedRelation::Serialize(MemoryPool* pool) const {
  using namespace serde_internal;
  Header h;
  h.kind = RelationKind::kLong;
  h.flags = static_cast<uint8_t>((dense_ ? kFlagDense : 0) | (keys_unique_ ? kFlagUnique : 0) |
                                 (all_null_keys_ ? kFlagAllNull : 0));
  h.min_key = min_key_;
  h.max_key = max_key_;
  h.index_entries = entries_;
  return SerializeWith(&h, pool, [&](int64_t i, const RefMap& refs) {
    return dense_ ? refs.RefOf(dense_rows_[i]) : TaggedEntryRef(index_.slots()[i], refs);
  });
}

Result<std::unique_ptr<LongHashedRelation>> LongHashedRelation::Deserialize(const Schema& schema, const Buffer& bytes,
                                                                            TaskMemoryManager* tmm) {
  using namespace serde_internal;
  Header h;
  int64_t off = 0;
  QUIVER_RETURN_NOT_OK(ReadHeader(bytes.data(), bytes.size(), &h, &off));
  if (h.kind != RelationKind::kLong) return Status::Invalid("serialized relation is not a LongHashedRelation");
  if (h.key_columns.size() != 1 || h.key_columns[0] < 0 || h.key_columns[0] >= schema.num_fields() ||
      !LoadsAsInt64(*schema.fields[h.key_columns[0]]->type)) {
    return Status::Invalid("serialized relation: the key column does not match the build schema");
  }
  if (h.layout_options.with_key_bytes) return Status::Invalid("serialized relation: unexpected key bytes");
  const bool dense = h.flags & kFlagDense;
  if (!dense && h.index_entries > 0 && !h.layout_options.with_int64_key) {
    return Status::Invalid("serialized relation: sparse rows without keys");
  }
  std::vector<int> stored(h.stored_columns.begin(), h.stored_columns.end());
  QUIVER_ASSIGN_OR_RETURN(RowLayout layout, RowLayout::Make(schema, stored, h.layout_options));
  int64_t index_bytes;
  if (!SizesFill(h, off, bytes.size(), &index_bytes)) {
    return Status::Invalid("serialized relation: header says " + std::to_string(h.row_bytes) + " row bytes and " +
                           std::to_string(h.index_entries) + " index entries, which do not fill the " +
                           std::to_string(bytes.size()) + " bytes given");
  }
  if (!dense && h.index_entries > 0 && h.index_entries <= TaggedIndex::kWindow) {
    return Status::Invalid("serialized relation: a sparse index of " + std::to_string(h.index_entries) +
                           " slots is too small");
  }
  const uint8_t* rows = bytes.data() + off;
  const uint8_t* idx = rows + h.row_bytes;
  std::vector<uint64_t> starts;
  QUIVER_RETURN_NOT_OK(ValidateRowRegion(h, layout, rows, &starts));
  const uint64_t ref_mask = dense ? ~uint64_t{0} : TaggedIndex::kPointerMask;
  int64_t used = 0;
  QUIVER_RETURN_NOT_OK(CountIndexEntries(
      idx, h.index_entries, ref_mask, starts, h.row_bytes,
      [](int64_t i, uint64_t e) {
        return "serialized relation: index entry " + std::to_string(i) + " (" + std::to_string(e) +
               ") does not name a row";
      },
      &used));
  if (used != h.num_keys) {
    return Status::Invalid("serialized relation: " + std::to_string(used) + " index entries in use, header says " +
                           std::to_string(h.num_keys) + " keys");
  }
  if (dense && h.index_entries > 0 &&
      static_cast<uint64_t>(h.max_key) - static_cast<uint64_t>(h.min_key) + 1 !=
          static_cast<uint64_t>(h.index_entries)) {
    return Status::Invalid("serialized relation: dense range does not match its entry count");
  }
  if (!dense && h.index_entries > 0 && h.num_keys >= h.index_entries) {
    return Status::Invalid("serialized relation: the sparse index has no empty slot");
  }
  if (h.index_entries == 0 && h.num_keys > 0) return Status::Invalid("serialized relation: keys without an index");

  auto rel = std::make_unique<LongHashedRelation>(PrivateTag{}, tmm);
  rel->AdoptHeader(h, std::move(layout), {h.key_columns[0]});
  rel->dense_ = dense;
  rel->min_key_ = h.min_key;
  rel->max_key_ = h.max_key;
  uint8_t* row_base = nullptr;
  QUIVER_ASSIGN_OR_RETURN(MemoryReservation reservation,
                          rel->LoadRowsPage(h, index_bytes, rows, "LongHashedRelation deserialization", &row_base));
  QUIVER_ASSIGN_OR_RETURN(uint64_t * dst,
                          rel->LoadIndex(h, index_bytes, idx, ref_mask, row_base, &reservation, &rel->index_page_));
  if (dst != nullptr) {
    if (dense) {
      rel->dense_rows_ = reinterpret_cast<const uint8_t**>(dst);
    } else {
      rel->index_ = TaggedIndex(dst, h.index_entries - TaggedIndex::kWindow);
    }
  }
  rel->entries_ = h.index_entries;
  rel->BuildKeyFilter();
  return rel;
}

}  // namespace quiver::join

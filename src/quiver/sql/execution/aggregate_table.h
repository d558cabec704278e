// quiver/sql/execution/aggregate_table.h — the hash aggregate's table:
// the groups' encoded keys (GroupTable, IntGroupMap) and the aggregates'
// per-group states (PagedArray<AggregateState>), and the encodings of key
// and DISTINCT values they share. One concept is defined per file:
//   aggregate_keys.cc      key encoding and numbering the rows' groups;
//   aggregate_table.cc     updating the states from a batch, emitting them;
//   aggregate_merge.cc     merging workers' tables (partial to final);
//   aggregate_spill.cc     exporting states to spill files and back;
//   aggregate_distinct.cc  the DISTINCT aggregates' (group, value) sets.
// Internal to sql/execution (hash_aggregate.cc is the operator); not
// installed.
//
// Memory: the tables' pages come from ExecContext::aggregate_tmm (the
// "hash aggregate" consumer); every growth may fail with OutOfMemory.
// Thread safety: one thread fills a table (Consume, Merge*); a finished
// table is read (EmitRange, Export*, ProbeMergeRange's `later`) by several.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "quiver/sql/execution/aggregate_statistics.h"
#include "quiver/sql/execution/aggregate_values.h"
#include "quiver/sql/execution/group_key_packing.h"
#include "quiver/sql/execution/group_table.h"
#include "quiver/sql/execution/hyperloglog.h"
#include "quiver/sql/execution/operators.h"

namespace quiver::sql {

/// min() / max() order doubles as PostgreSQL and DuckDB sort them: NaN
/// after every number (max() of a column with a NaN is NaN).
inline bool FloatBefore(double a, double b) { return std::isnan(a) ? false : std::isnan(b) || a < b; }

/// One aggregate's state in one group (trivially copyable: lives in pages).
struct AggregateState {
  i128 i = 0;          // exact sum / min / max / picked value, bool_and / bool_or; a string: pointer bits
  double f = 0;        // float sum / min / max / picked value; variance: the running mean
  int64_t count = 0;   // rows seen (non-null arguments; first / last: NULLs too; count_if: true ones)
  uint32_t len = 0;    // string value length
  uint32_t flags = 0;  // first / last: kPickedNull
  double m2 = 0;       // variance: sum of squared deviations from the mean
};
static_assert(sizeof(AggregateState) == 48, "one state a cache line's 3/4: keep it");
/// AggregateState::flags: the picked value (first / last) is NULL.
inline constexpr uint32_t kPickedNull = 1;

/// Whether `call`'s state holds a string value in its table's arena (string
/// min / max / any_value / first / last): the arena must outlive every
/// table a merge copies the state into.
inline bool HoldsStringValue(const AggregateCall& call) {
  if (!call.arg || ClassOf(*call.arg->type) != TypeClass::kString) return false;
  switch (call.fn) {
    case AggFn::kMin:
    case AggFn::kMax:
    case AggFn::kAnyValue:
    case AggFn::kFirst:
    case AggFn::kLast: return true;
    default: return false;
  }
}

/// How list aggregate `call` stores its argument's values: percentile_cont
/// as DOUBLEs; percentile_disc in the argument's own kind.
inline ListValueKind ListKindOf(const AggregateCall& call) {
  const TypeClass c = ClassOf(*call.arg->type);
  if (call.fn == AggFn::kStringAgg) return ListValueKind::kString;
  if (call.fn == AggFn::kPercentileCont || c == TypeClass::kFloat) return ListValueKind::kDouble;
  if (c == TypeClass::kString) return ListValueKind::kString;
  return c == TypeClass::kDecimal ? ListValueKind::kInt128 : ListValueKind::kInt64;
}

/// approx_count_distinct's registers (2^hll_precision bytes in the table's
/// arena, taken with the group's states).
inline uint8_t* HllRegisters(const AggregateState& s) {
  return reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(static_cast<uint64_t>(s.i)));
}

/// The 64-bit hash approx_count_distinct folds in for a value of class
/// `cls` (a DOUBLE's -0 as 0 and every NaN alike; integers, dates and
/// timestamps as 64-bit integers; decimals as 128-bit unscaled values).
template <typename GetExact, typename GetFloat, typename GetString>
uint64_t HllHashOf(TypeClass cls, GetExact exact, GetFloat flt, GetString str) {
  if (cls == TypeClass::kString) {
    const std::string_view x = str();
    return hll::Hash(x.data(), x.size());
  }
  if (cls == TypeClass::kFloat) {
    double x = flt();
    if (x == 0) x = 0;
    if (std::isnan(x)) x = std::numeric_limits<double>::quiet_NaN();
    return hll::Hash(&x, 8);
  }
  if (cls == TypeClass::kDecimal) {
    const i128 x = exact();
    return hll::Hash(&x, 16);
  }
  const auto x = static_cast<int64_t>(exact());
  return hll::Hash(&x, 8);
}

/// Whether `call` sees NULL arguments (any_value / first / last without
/// ignore_nulls).
inline bool TakesNulls(const AggregateCall& call) { return PicksValue(call.fn) && !call.ignore_nulls; }

/// Packs each row's tuple of string keys into 64 bits when every key is a
/// utf8 column (or constant) of at most 5 columns whose values in this batch
/// are all short: per column 4 bits (0 NULL, else 1 + length) and `width`
/// bytes, width = 7, 3, 2, 1, 1 for 1..5 columns. The layout depends only on
/// the number of columns, so a packed value stands for one key tuple in
/// every batch. False (nothing packed) otherwise. `n`: the batch's rows.
bool PackStringKeys(const std::vector<Vec>& keys, int64_t n, std::vector<uint64_t>* out);

/// Bytes a value of a group key column of type `id` takes after its
/// validity byte when every key column of the GROUP BY has such a width (the
/// fixed key layout: each column at a fixed offset, a NULL's bytes zero);
/// 0 for variable-width columns (strings), whose presence makes every
/// column's encoding variable (EncodeValue: a NULL is its validity byte
/// alone).
int FixedKeyWidth(const DataType& type);

/// Appends row `r` of `v` to `out`: a validity byte (0 NULL, then nothing
/// else), then the value: bool 1 byte, int32 / date32 4, int64 / timestamp
/// / float64 8 (-0 as 0, every NaN alike), decimal 16, utf8 a 4-byte length
/// and the bytes (native byte order).
void EncodeValue(const Vec& v, int64_t r, std::string* out);

/// The native-order uint32 at `p` (4 readable bytes).
inline uint32_t DecodeU32(const uint8_t* p) {
  uint32_t x;
  std::memcpy(&x, p, 4);
  return x;
}

/// A utf8 array's data as binary (spilled keys and values are bytes).
ArrayDataPtr AsBinary(ArrayDataPtr a);

/// One aggregation table: the groups' keys and the aggregates' states, in
/// TaskMemoryManager pages. Each worker of a parallel aggregation fills its
/// own (Consume), then they are merged into the first (Merge), whose groups
/// are emitted in ranges (EmitRange, read-only: several threads at once).
class AggregateTable : public join::MemoryConsumer {
 public:
  AggregateTable(ExecContext* ctx, std::vector<ExprPtr> groups, std::vector<AggregateCall> aggs, SchemaPtr schema);
  /// Without GROUP BY: the one group, also for empty input.
  Status Init();
  /// Groups with states (a key inserted just before its states failed to
  /// grow is not one: its row is consumed again after a spill).
  int64_t num_output_rows() const {
    if (groups_.empty()) return 1;
    return states_.empty() ? table_.num_groups() : std::min(table_.num_groups(), states_[0]->size());
  }
  const uint8_t* table_key(int64_t g) const { return table_.key(g); }
  uint32_t table_key_length(int64_t g) const { return table_.key_length(g); }

  // --- Consuming batches (aggregate_table.cc, aggregate_keys.cc) ---

  /// Aggregates `batch`. `keep` (may be null: every row): the rows with
  /// keep[r] == 0 are skipped, as if the batch did not hold them. Phase 1
  /// numbers the rows' groups (the only place new memory is taken for
  /// tables without DISTINCT or string min / max); phase 2 updates the
  /// states. An OutOfMemory before phase 2 (states_started() false) leaves
  /// every state as it was, so the caller may spill the table and consume
  /// the batch again.
  Status Consume(const RecordBatch& batch, const uint8_t* keep = nullptr);
  /// Adds the group whose key is `keys` (one constant expression per GROUP
  /// BY expression) with fresh states, as if no row had reached it (count
  /// 0, other aggregates NULL); nothing if it exists. Needs GROUP BY.
  /// Errors: OutOfMemory; Invalid when `keys` does not match the groups.
  Status AddEmptyGroup(const std::vector<ExprPtr>& keys);
  bool states_started() const { return states_started_; }
  /// Whether some state points into the table's arena (a merged table's
  /// states then point into the merged-in tables' arenas: keep those).
  bool has_string_min_max() const {
    for (const auto& a : aggs_)
      if (HoldsStringValue(a) || IsListFn(a.fn)) return true;
    return false;
  }
  bool has_distinct() const {
    for (const auto& a : aggs_)
      if (a.distinct) return true;
    return false;
  }

  /// Output rows [begin, begin + n) of the groups, leaving out those with
  /// skip[g] != 0 (skip may be null). Read-only.
  Result<RecordBatchPtr> EmitRange(int64_t begin, int64_t n, const uint8_t* skip = nullptr) const;

  // --- Merging tables (aggregate_merge.cc) ---

  /// Folds state `o` of aggregate `a` into group `g`'s.
  Status MergeOne(size_t a, const AggregateState& o, int64_t g);
  /// Whether every group is in the IntGroupMap under a word MapKeyOf gives
  /// for its encoded key (a single integer key without a NULL group, or
  /// several integer keys packed, group_key_packing.h): ProbeMergeRange can
  /// find them there.
  bool KeysIndexed() const {
    return !groups_.empty() && (int_key_width_ > 0 || packing_.has_layout()) &&
           int_map_.size() == table_.num_groups() && num_output_rows() == table_.num_groups();
  }
  /// The IntGroupMap word of encoded group key `key` (`len` bytes, from any
  /// table of the same GROUP BY) in this table (KeysIndexed): false when
  /// no group of this table can have that key (a NULL single key, a value
  /// outside this table's packing). Read-only.
  bool MapKeyOf(const uint8_t* key, uint32_t len, uint64_t* word) const {
    if (int_key_width_ > 0) {
      if (len != static_cast<uint32_t>(1 + int_key_width_) || key[0] != 1) return false;
      *word = static_cast<uint64_t>(DecodeIntKey(key));
      return true;
    }
    return packing_.PackEncoded(key, len, word);
  }
  /// Whether every group can be found by its encoded key (FindEncoded):
  /// KeysIndexed, or every group in the GroupTable's hash index (string
  /// and other byte-encoded keys).
  bool FindableByKey() const {
    return !groups_.empty() && num_output_rows() == table_.num_groups() && (KeysIndexed() || table_.all_indexed());
  }
  /// The group of encoded key `key` (`len` bytes, from any table of the
  /// same GROUP BY; `hash` its HashBytes, read only when the GroupTable is
  /// searched) in this table (FindableByKey), or -1. Read-only.
  int64_t FindEncoded(const uint8_t* key, uint32_t len, uint64_t hash) const {
    if (KeysIndexed()) {
      uint64_t word;
      return MapKeyOf(key, len, &word) ? int_map_.Find(word) : -1;
    }
    return table_.Find(key, len, hash);
  }
  /// Folds into groups [begin, end) of this table the states of the same
  /// keys in `later` (tables after this one, all FindableByKey), marking
  /// the groups taken from table j in (*consumed)[j]; skips this table's
  /// groups marked in `own` (taken by an earlier table). Writes only this
  /// table's groups [begin, end) and those marks (one writer per mark), so
  /// disjoint ranges run in parallel.
  Status ProbeMergeRange(int64_t begin, int64_t end, const uint8_t* own,
                         const std::vector<const AggregateTable*>& later, const std::vector<uint8_t*>& consumed);
  /// Takes room in the key index for `groups` groups now (a merge that
  /// knows how many groups it may insert grows the index once).
  Status Reserve(int64_t groups);
  /// Adds group `og` of `other` (its key and states) to this table.
  /// A DISTINCT aggregate's state is left out: its values are merged.
  Status MergeGroup(const AggregateTable& other, int64_t og);
  /// Adds the groups `ids` of `other` (and their states) to this table, as
  /// Merge does for all of them: one partition of a worker's table in the
  /// parallel merge. Other's arena must outlive this table's emission.
  Status MergeGroups(const AggregateTable& other, const std::vector<int64_t>& ids);
  /// Adds `other`'s groups and states to this table (other's string min /
  /// max values stay in other's arena: keep it alive while this emits).
  /// `*merged` receives the number of other's groups merged (all of them on
  /// success; on OutOfMemory the ones before the failure).
  Status Merge(const AggregateTable& other, int64_t* merged);

  // --- Spilling states (aggregate_spill.cc) ---

  /// The schema of exported states: the encoded group key, then per
  /// aggregate (kStateColumns) its count, exact value (128-bit), float
  /// value, string value (HoldsStringValue), m2 (variance) and flags.
  static SchemaPtr StateSchema(size_t num_aggs);
  static constexpr size_t kStateColumns = 6;
  /// The partition of group `g`'s key (of `num_partitions`, a power of two):
  /// high hash bits, independent of the table's slot bits.
  static int PartitionOf(const uint8_t* key, uint32_t len, int num_partitions) {
    return static_cast<int>((HashBytes(key, len) >> 40) & static_cast<uint64_t>(num_partitions - 1));
  }
  /// The states of groups `ids` as one batch of StateSchema (pool memory).
  Result<RecordBatchPtr> ExportStates(const std::vector<int64_t>& ids, const SchemaPtr& schema, MemoryPool* pool) const;
  /// Merges exported states (ExportStates' layout) into this table; string
  /// min / max values are copied into this table's arena. A DISTINCT
  /// aggregate's state is left out: it is rebuilt from its values
  /// (MergeDistinct), which a merged count or sum would count twice; unless
  /// `distinct_states`, when the states come from a disjoint set of values
  /// (a value partition of a spilled global DISTINCT).
  Status MergeStates(const RecordBatch& b, bool distinct_states = false);

  // --- DISTINCT sets (aggregate_distinct.cc) ---

  /// Entry e of other's set of DISTINCT aggregate a into this table (its
  /// group found or made here).
  Status MergeDistinctEntry(const AggregateTable& other, size_t a, int64_t e);
  /// The (aggregate, entry) pairs of the DISTINCT sets, by the partition of
  /// their group (PartitionOf, `num_partitions`), or of their value without
  /// GROUP BY. Read-only.
  using DistinctEntries = std::vector<std::pair<uint32_t, int64_t>>;
  std::vector<DistinctEntries> DistinctEntriesByPartition(int num_partitions) const;
  /// Entries of every DISTINCT set.
  int64_t distinct_entries() const;
  /// The layout of spilled DISTINCT values: the group's encoded key, the
  /// aggregate's position, the value as EncodeValue wrote it.
  static SchemaPtr DistinctSchema();
  /// The DISTINCT aggregates' (group, value) entries, partitioned as the
  /// groups are (PartitionOf, `num_partitions`), each partition's entries
  /// as batches of DistinctSchema of up to `batch_rows` rows handed to
  /// sink(partition, batch). Read-only.
  Status ExportDistinct(int num_partitions, int64_t batch_rows, MemoryPool* pool,
                        const std::function<Status(int, RecordBatchPtr)>& sink) const;
  /// Adds spilled DISTINCT entries (ExportDistinct's layout) to this table:
  /// a value new to its group's set updates the aggregate's state. Errors:
  /// Invalid on an aggregate position or value that does not fit the
  /// aggregate (a corrupt spill file).
  Status MergeDistinct(const RecordBatch& b);

 private:
  // Phase 1 of Consume: the group of each row of `keys` (`n` rows) into
  // (*gid)[r], numbered (with states) when new; rows with keep[r] == 0
  // (keep may be null) are left at -1. Needs GROUP BY.
  Status NumberGroups(const std::vector<Vec>& keys, int64_t n, const uint8_t* keep, std::vector<int64_t>* gid_out);

  // Sums of a decimal column into at most kLocalGroups groups (TPC-H Q1: 4
  // groups, 7 sums and averages over 6 M rows): when every value of the
  // batch fits 64 bits, they are added into 4 interleaved 64-bit lanes per
  // group on the stack (the lanes break the chain of adds into one state
  // when rows repeat a group; 64-bit lanes, as a 128-bit lane written in
  // halves and read whole stalls store forwarding), giving the batch's sum
  // and count per group. False when there are more groups, some value is
  // wider or a lane overflows: the caller's exact loop runs.
  static constexpr int64_t kLocalGroups = 64;
  struct FewGroupSums {
    int64_t groups = 0;
    i128 sum[kLocalGroups];
    int64_t count[kLocalGroups];
  };
  // `d`: the values, decimal128 (kWidth 16) or decimal64 (kWidth 8).
  template <int kWidth>
  bool SumFewGroups(const uint8_t* d, const std::vector<int64_t>& gid, int64_t n, bool skip, FewGroupSums* out) const;
  // Adds a batch's per-group sums and counts to the states; false (nothing
  // changed) when some state would overflow (the exact loop reports it).
  static bool AddFewGroupSums(const FewGroupSums& b, PagedArray<AggregateState>* states);

  // The value of a non-NULL encoded single integer key (int_key_width_ > 0).
  int64_t DecodeIntKey(const uint8_t* key) const {
    if (int_key_width_ == 8) {
      int64_t v;
      std::memcpy(&v, key + 1, 8);
      return v;
    }
    int32_t v32;
    std::memcpy(&v32, key + 1, 4);
    return v32;
  }

  // States for a new group (approx_count_distinct's registers taken
  // first: on OutOfMemory no state is appended).
  Status NewGroup() {
    uint8_t* registers[64];
    size_t r = 0;
    for (const auto& a : aggs_) {
      if (a.fn != AggFn::kApproxCountDistinct || r == 64) continue;
      const size_t m = size_t{1} << a.hll_precision;
      QUIVER_ASSIGN_OR_RETURN(registers[r], arena_.Allocate(m));
      std::memset(registers[r++], 0, m);
    }
    if (r == 64) return Status::NotImplemented("more than 64 approx_count_distinct() in one aggregate");
    r = 0;
    for (size_t a = 0; a < aggs_.size(); ++a) {
      AggregateState s;
      if (aggs_[a].fn == AggFn::kApproxCountDistinct)
        s.i = static_cast<i128>(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(registers[r++])));
      QUIVER_RETURN_NOT_OK(states_[a]->Append(s));
    }
    return Status::OK();
  }

  // A new group numbered by the GroupTable without a lookup, with states.
  Result<int64_t> NewGroupOf(const uint8_t* key, uint32_t len) {
    QUIVER_ASSIGN_OR_RETURN(const int64_t g, table_.AppendNew(key, len));
    QUIVER_RETURN_NOT_OK(NewGroup());
    return g;
  }

  // The group of encoded key `key` (numbered, with states, when new):
  // through the IntGroupMap for a single integer key while it holds every
  // group, else through the GroupTable.
  Status GroupOfEncoded(const uint8_t* key, uint32_t len, int64_t* g) {
    if (int_key_width_ > 0 && len == static_cast<uint32_t>(1 + int_key_width_) && key[0] == 1 &&
        int_map_.size() == table_.num_groups()) {
      bool inserted;
      return int_map_.FindOrInsert(
          static_cast<uint64_t>(DecodeIntKey(key)), [&] { return NewGroupOf(key, len); }, g, &inserted);
    }
    bool inserted;
    QUIVER_RETURN_NOT_OK(table_.FindOrInsert(key, len, HashBytes(key, len), g, &inserted));
    if (inserted) QUIVER_RETURN_NOT_OK(NewGroup());
    return Status::OK();
  }

  // --- List aggregates (aggregate_holistic.cc) ---
  // A batch's values of one list aggregate, by group: the rows ordered by
  // group (in input order within one), each group's run of values.
  struct ListBatch {
    Vec values;
    std::vector<std::pair<int64_t, int64_t>> rows;  // (group, row), sorted
    uint64_t growth_bytes = 0;                      // arena bytes the appends take (ListGrowthBytes)
  };
  // Phase 1 of Consume for list aggregate `a`: its argument's values `v`
  // of rows with a group (`gid`, `n` rows) into `out`, and the arena bytes
  // appending them takes.
  Status PrepareList(size_t a, Vec v, const std::vector<int64_t>& gid, int64_t n, ListBatch* out) const;
  // Phase 2: appends the prepared values (into room EnsureFree took).
  Status AppendList(size_t a, const ListBatch& b);
  // Appends one value (the DISTINCT path: may take arena memory).
  template <typename GetExact, typename GetFloat, typename GetString>
  Status AppendListValue(const AggregateCall& call, AggregateState* s, GetExact exact, GetFloat flt, GetString str);
  // The result column of list aggregate `a` for groups `ids`.
  Result<ArrayDataPtr> EmitList(size_t a, const std::vector<int64_t>& ids, MemoryPool* pool) const;

  // Adds `val` (`len` bytes as EncodeValue wrote a non-null value of the
  // argument's type, checked by the caller) to group g's set of DISTINCT
  // aggregate a; when new, folds it into the state.
  Status AddDistinctValue(size_t a, int64_t g, const uint8_t* val, uint32_t len);

  // Folds one non-null argument value into state `s` of aggregate `call`
  // (argument class `cls`); the value is read through the getter of its
  // class (exact: i128, float: double, string: string_view), only when
  // the function needs it.
  template <typename GetExact, typename GetFloat, typename GetString>
  Status UpdateState(const AggregateCall& call, TypeClass cls, AggregateState* s, GetExact exact, GetFloat flt,
                     GetString str);

  ExecContext* ctx_;
  std::vector<ExprPtr> groups_;
  std::vector<AggregateCall> aggs_;
  SchemaPtr schema_;
  GroupTable table_;
  IntGroupMap int_map_;      // single integer keys, or packed integer (packing_) or short string keys (PackStringKeys)
  int int_key_width_ = 0;    // one GROUP BY key of int64 (8), int32 / date32 (4); else 0
  GroupKeyPacking packing_;  // several integer keys: the layout, fixed at the first batch
  std::vector<uint64_t> packed_;
  ByteArena arena_;
  std::vector<std::unique_ptr<PagedArray<AggregateState>>> states_;
  std::vector<std::unique_ptr<GroupTable>> distinct_;
  std::string distinct_key_;  // scratch of AddDistinctValue
  bool states_started_ = false;
};

template <typename GetExact, typename GetFloat, typename GetString>
Status AggregateTable::UpdateState(const AggregateCall& call, TypeClass cls, AggregateState* s, GetExact exact,
                                   GetFloat flt, GetString str) {
  switch (call.fn) {
    case AggFn::kCount: ++s->count; break;
    case AggFn::kSum:
    case AggFn::kAvg:
      if (cls == TypeClass::kFloat) {
        s->f += flt();
      } else if (__builtin_add_overflow(s->i, exact(), &s->i)) {
        return NumericOverflow("sum() passed 128 bits");
      }
      ++s->count;
      break;
    case AggFn::kMin:
    case AggFn::kMax: {
      const bool is_min = call.fn == AggFn::kMin;
      if (cls == TypeClass::kFloat) {
        const double x = flt();
        if (s->count == 0 || (is_min ? FloatBefore(x, s->f) : FloatBefore(s->f, x))) s->f = x;
      } else if (cls == TypeClass::kString) {
        const std::string_view x = str();
        const std::string_view cv(reinterpret_cast<const char*>(static_cast<uintptr_t>(s->i)), s->len);
        if (s->count == 0 || (is_min ? x < cv : x > cv)) {
          QUIVER_ASSIGN_OR_RETURN(uint8_t * stored,
                                  arena_.Append(reinterpret_cast<const uint8_t*>(x.data()), x.size()));
          s->i = static_cast<i128>(reinterpret_cast<uintptr_t>(stored));
          s->len = static_cast<uint32_t>(x.size());
        }
      } else {
        const i128 x = exact();
        if (s->count == 0 || (is_min ? x < s->i : x > s->i)) s->i = x;
      }
      ++s->count;
      break;
    }
    case AggFn::kCountStar: break;
    case AggFn::kVarSamp:
    case AggFn::kVarPop:
    case AggFn::kStddevSamp:
    case AggFn::kStddevPop: WelfordAdd(flt(), &s->count, &s->f, &s->m2); break;
    case AggFn::kCountIf:
      if (exact() != 0) ++s->count;
      break;
    case AggFn::kBoolAnd:
    case AggFn::kBoolOr: {
      const bool x = exact() != 0;
      s->i = s->count == 0 ? x : call.fn == AggFn::kBoolAnd ? (s->i != 0 && x) : (s->i != 0 || x);
      ++s->count;
      break;
    }
    case AggFn::kPercentileCont:
    case AggFn::kPercentileDisc:
    case AggFn::kStringAgg: return AppendListValue(call, s, exact, flt, str);
    case AggFn::kApproxCountDistinct:
      hll::Add(HllRegisters(*s), call.hll_precision, HllHashOf(cls, exact, flt, str));
      ++s->count;
      break;
    case AggFn::kAnyValue:
    case AggFn::kFirst:
    case AggFn::kLast:
      if (call.fn == AggFn::kLast || s->count == 0) {
        if (cls == TypeClass::kFloat) {
          s->f = flt();
        } else if (cls == TypeClass::kString) {
          const std::string_view x = str();
          if (s->count > 0 && !(s->flags & kPickedNull) && x.size() <= s->len) {
            // last(): the value before is this table's own bytes (merges
            // come after every Consume): overwritten in place.
            if (!x.empty()) std::memcpy(reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(s->i)), x.data(), x.size());
          } else {
            QUIVER_ASSIGN_OR_RETURN(uint8_t * stored,
                                    arena_.Append(reinterpret_cast<const uint8_t*>(x.data()), x.size()));
            s->i = static_cast<i128>(reinterpret_cast<uintptr_t>(stored));
          }
          s->len = static_cast<uint32_t>(x.size());
        } else {
          s->i = exact();
        }
        s->flags = 0;
      }
      ++s->count;
      break;
  }
  return Status::OK();
}

template <typename GetExact, typename GetFloat, typename GetString>
Status AggregateTable::AppendListValue(const AggregateCall& call, AggregateState* s, GetExact exact, GetFloat flt,
                                       GetString str) {
  const ListValueKind kind = ListKindOf(call);
  if (kind == ListValueKind::kString) {
    const std::string_view x = str();
    const auto len = static_cast<uint32_t>(x.size());
    QUIVER_ASSIGN_OR_RETURN(uint8_t * dst, ListExtend(&arena_, s, 4 + uint64_t{len}));
    std::memcpy(dst, &len, 4);
    if (len) std::memcpy(dst + 4, x.data(), len);
  } else if (kind == ListValueKind::kInt128) {
    const i128 x = exact();
    QUIVER_ASSIGN_OR_RETURN(uint8_t * dst, ListExtend(&arena_, s, 16));
    std::memcpy(dst, &x, 16);
  } else {
    const double d = kind == ListValueKind::kDouble ? flt() : 0;
    const int64_t x = kind == ListValueKind::kDouble ? 0 : static_cast<int64_t>(exact());
    QUIVER_ASSIGN_OR_RETURN(uint8_t * dst, ListExtend(&arena_, s, 8));
    if (kind == ListValueKind::kDouble) {
      std::memcpy(dst, &d, 8);
    } else {
      std::memcpy(dst, &x, 8);
    }
  }
  ++s->count;
  return Status::OK();
}

}  // namespace quiver::sql

// quiver/sql/execution/hash_aggregate.cc — hash aggregation (GROUP BY,
// DISTINCT, plain aggregates). Each input batch: the group expressions
// are evaluated, every row's key is encoded into bytes (a null flag and
// the value per column; strings length-prefixed) and looked up in the
// GroupTable; then each aggregate updates its per-group state in a typed
// loop. DISTINCT aggregates keep a second table of (group, value) and
// update only on a value's first occurrence; every worker keeps its own,
// and the merge adds each worker's values to the merged sets (in
// partitions on the workers when there are many). The tables and states live in
// TaskMemoryManager pages ("hash aggregate" consumer), on- or off-heap.
// Past its share of the memory a table spills: its groups' states, and
// the (group, value) entries of its DISTINCT aggregates, go to 16
// partitions by the group's hash; at the end each partition is merged into
// a fresh table on its own (a DISTINCT state rebuilt from its values).
// Without GROUP BY there is exactly one group, also for empty input
// (count 0, other aggregates NULL).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>

#include "quiver/sql/execution/group_table.h"
#include "quiver/sql/execution/operators.h"
#include "quiver/sql/execution/pipeline.h"
#include "quiver/sql/execution/spill.h"
#include "quiver/sql/execution/task_scheduler.h"

namespace quiver::sql {
namespace {

// min() / max() order doubles as PostgreSQL and DuckDB sort them: NaN
// after every number (max() of a column with a NaN is NaN).
inline bool FloatBefore(double a, double b) { return std::isnan(a) ? false : std::isnan(b) || a < b; }

struct State {
  i128 i = 0;         // exact sum / min / max; string min/max: pointer bits
  double f = 0;       // float sum / min / max
  int64_t count = 0;  // rows seen (non-null arguments)
  uint32_t len = 0;   // string min/max length
};

// Packs each row's tuple of string keys into 64 bits when every key is a
// utf8 column (or constant) of at most 5 columns whose values in this batch
// are all short: per column 4 bits (0 NULL, else 1 + length) and `width`
// bytes, width = 7, 3, 2, 1, 1 for 1..5 columns. The layout depends only on
// the number of columns, so a packed value stands for one key tuple in
// every batch. False (nothing packed) otherwise.
bool PackStringKeys(const std::vector<Vec>& keys, int64_t n, std::vector<uint64_t>* out) {
  static constexpr int kWidth[] = {0, 7, 3, 2, 1, 1};
  const size_t k = keys.size();
  if (k == 0 || k > 5) return false;
  const int width = kWidth[k];
  for (const auto& v : keys) {
    if (v.type()->id != TypeId::kUtf8) return false;
    const int64_t rows = v.constant ? 1 : n;
    const int32_t* off = reinterpret_cast<const int32_t*>(v.array->buffers[1]->data()) + v.array->offset;
    int32_t longest = 0;
    for (int64_t r = 0; r < rows; ++r) longest = std::max(longest, off[r + 1] - off[r]);
    if (longest > width) return false;
  }
  out->assign(static_cast<size_t>(n), 0);
  uint64_t* dst = out->data();
  const int bits = 4 + 8 * width;
  for (size_t c = 0; c < k; ++c) {
    const Vec& v = keys[c];
    const int shift = static_cast<int>(c) * bits;
    const int32_t* off = reinterpret_cast<const int32_t*>(v.array->buffers[1]->data()) + v.array->offset;
    const auto* data = v.array->buffers[2] ? v.array->buffers[2]->data() : nullptr;
    const bool nulls = v.MayHaveNulls();
    for (int64_t r = 0; r < n; ++r) {
      const int64_t i = v.constant ? 0 : r;
      if (nulls && v.IsNull(r)) continue;  // tag 0
      const int32_t len = off[i + 1] - off[i];
      uint64_t word = static_cast<uint64_t>(1 + len);
      for (int32_t b = 0; b < len; ++b) word |= static_cast<uint64_t>(data[off[i] + b]) << (4 + 8 * b);
      dst[r] |= word << shift;
    }
  }
  return true;
}

// Bytes a value of a group key column of type `id` takes after its
// validity byte when every key column of the GROUP BY has such a width (the
// fixed key layout: each column at a fixed offset, a NULL's bytes zero);
// 0 for variable-width columns (strings), whose presence makes every
// column's encoding variable (EncodeValue: a NULL is its validity byte
// alone).
int FixedKeyWidth(TypeId id) {
  switch (id) {
    case TypeId::kBool: return 1;
    case TypeId::kInt32:
    case TypeId::kDate32: return 4;
    case TypeId::kInt64:
    case TypeId::kTimestamp:
    case TypeId::kFloat64: return 8;
    case TypeId::kDecimal: return 16;
    default: return 0;
  }
}

uint32_t DecodeU32(const uint8_t* p) {
  uint32_t x;
  std::memcpy(&x, p, 4);
  return x;
}

// A utf8 array's data as binary (spilled keys and values are bytes).
ArrayDataPtr AsBinary(ArrayDataPtr a) {
  auto b = std::make_shared<ArrayData>(*a);
  b->type = binary();
  return b;
}

void EncodeValue(const Vec& v, int64_t r, std::string* out) {
  if (v.IsNull(r)) {
    out->push_back('\0');
    return;
  }
  out->push_back('\1');
  switch (v.type()->id) {
    case TypeId::kBool: out->push_back(v.BoolAt(r) ? '\1' : '\0'); break;
    case TypeId::kInt32:
    case TypeId::kDate32: {
      const int32_t x = v.Values<int32_t>()[v.Index(r)];
      out->append(reinterpret_cast<const char*>(&x), 4);
      break;
    }
    case TypeId::kInt64:
    case TypeId::kTimestamp: {
      const int64_t x = v.Values<int64_t>()[v.Index(r)];
      out->append(reinterpret_cast<const char*>(&x), 8);
      break;
    }
    case TypeId::kDecimal: {
      const i128 x = v.ExactAt(r);
      out->append(reinterpret_cast<const char*>(&x), 16);
      break;
    }
    case TypeId::kFloat64: {
      double x = v.Values<double>()[v.Index(r)];
      if (x == 0) x = 0;
      if (std::isnan(x)) x = std::nan("");
      out->append(reinterpret_cast<const char*>(&x), 8);
      break;
    }
    case TypeId::kUtf8: {
      const std::string_view s = v.StringAt(r);
      const uint32_t n = static_cast<uint32_t>(s.size());
      out->append(reinterpret_cast<const char*>(&n), 4);
      out->append(s);
      break;
    }
    default: break;
  }
}

// One aggregation table: the groups' keys and the aggregates' states, in
// TaskMemoryManager pages. Each worker of a parallel aggregation fills its
// own (Consume), then they are merged into the first (Merge), whose groups
// are emitted in ranges (EmitRange, read-only: several threads at once).
class AggregateTable : public join::MemoryConsumer {
 public:
  AggregateTable(ExecContext* ctx, std::vector<ExprPtr> groups, std::vector<AggregateCall> aggs, SchemaPtr schema)
      : join::MemoryConsumer(ctx->aggregate_tmm.get(), "hash aggregate"),
        ctx_(ctx),
        groups_(std::move(groups)),
        aggs_(std::move(aggs)),
        schema_(std::move(schema)),
        table_(this),
        int_map_(this),
        arena_(this) {
    if (groups_.size() == 1) {
      const TypeId id = groups_[0]->type->id;
      int_key_width_ = id == TypeId::kInt64 ? 8 : id == TypeId::kInt32 || id == TypeId::kDate32 ? 4 : 0;
    }
    for (size_t a = 0; a < aggs_.size(); ++a) {
      states_.emplace_back(std::make_unique<PagedArray<State>>(this));
      distinct_.emplace_back(aggs_[a].distinct ? std::make_unique<GroupTable>(this) : nullptr);
    }
  }
  // Without GROUP BY: the one group, also for empty input.
  Status Init() {
    if (groups_.empty()) return NewGroup();
    return Status::OK();
  }
  // Groups with states (a key inserted just before its states failed to
  // grow is not one: its row is consumed again after a spill).
  int64_t num_output_rows() const {
    if (groups_.empty()) return 1;
    return states_.empty() ? table_.num_groups() : std::min(table_.num_groups(), states_[0]->size());
  }
  const uint8_t* table_key(int64_t g) const { return table_.key(g); }
  uint32_t table_key_length(int64_t g) const { return table_.key_length(g); }

  // Folds state `o` of aggregate `a` into group `g`'s.
  Status MergeOne(size_t a, const State& o, int64_t g) {
    const AggregateCall& call = aggs_[a];
    State& s = (*states_[a])[g];
    if (o.count == 0) return Status::OK();
    switch (call.fn) {
      case AggFn::kCount:
      case AggFn::kCountStar: break;
      case AggFn::kSum:
      case AggFn::kAvg:
        if (__builtin_add_overflow(s.i, o.i, &s.i)) return NumericOverflow("sum() passed 128 bits");
        s.f += o.f;
        break;
      case AggFn::kMin:
      case AggFn::kMax: {
        const bool is_min = call.fn == AggFn::kMin;
        const TypeClass cls = ClassOf(*call.arg->type);
        bool take = s.count == 0;
        if (!take) {
          if (cls == TypeClass::kFloat) {
            take = is_min ? FloatBefore(o.f, s.f) : FloatBefore(s.f, o.f);
          } else if (cls == TypeClass::kString) {
            const std::string_view ov(reinterpret_cast<const char*>(static_cast<uintptr_t>(o.i)), o.len);
            const std::string_view sv(reinterpret_cast<const char*>(static_cast<uintptr_t>(s.i)), s.len);
            take = is_min ? ov < sv : ov > sv;
          } else {
            take = is_min ? o.i < s.i : o.i > s.i;
          }
        }
        if (take) {
          s.i = o.i;
          s.f = o.f;
          s.len = o.len;
        }
        break;
      }
    }
    s.count += o.count;
    return Status::OK();
  }

  // Whether every group is in the IntGroupMap (a single integer key, no
  // NULL group): ProbeMerge can find them there.
  bool IntKeysIndexed() const {
    return !groups_.empty() && int_key_width_ > 0 && int_map_.size() == table_.num_groups() &&
           num_output_rows() == table_.num_groups();
  }

  // Folds into groups [begin, end) of this table the states of the same
  // keys in `later` (tables after this one, all IntKeysIndexed), marking
  // the groups taken from table j in (*consumed)[j]; skips this table's
  // groups marked in `own` (taken by an earlier table). Writes only this
  // table's groups [begin, end) and those marks (one writer per mark), so
  // disjoint ranges run in parallel.
  Status ProbeMergeRange(int64_t begin, int64_t end, const uint8_t* own,
                         const std::vector<const AggregateTable*>& later, const std::vector<uint8_t*>& consumed) {
    constexpr int64_t kAhead = 8;
    for (int64_t g = begin; g < end; ++g) {
      if (g + kAhead < end) {
        const uint64_t ahead = static_cast<uint64_t>(DecodeIntKey(table_.key(g + kAhead)));
        for (const AggregateTable* t : later) t->int_map_.Prefetch(ahead);
      }
      if (own != nullptr && own[g]) continue;
      const uint64_t key = static_cast<uint64_t>(DecodeIntKey(table_.key(g)));
      for (size_t j = 0; j < later.size(); ++j) {
        const int64_t o = later[j]->int_map_.Find(key);
        if (o < 0) continue;
        for (size_t a = 0; a < aggs_.size(); ++a) QUIVER_RETURN_NOT_OK(MergeOne(a, (*later[j]->states_[a])[o], g));
        consumed[j][o] = 1;
      }
      if (((g - begin) & 4095) == 4095) QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    }
    return Status::OK();
  }

  // Takes room in the key index for `groups` groups now (a merge that
  // knows how many groups it may insert grows the index once).
  Status Reserve(int64_t groups) {
    if (groups_.empty()) return Status::OK();
    if (int_key_width_ > 0 && int_map_.size() == table_.num_groups()) return int_map_.Reserve(groups);
    return table_.Reserve(groups);
  }

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
  bool SumFewGroups(const uint8_t* d, const std::vector<int64_t>& gid, int64_t n, bool skip, FewGroupSums* out) const {
    const int64_t groups = groups_.empty() ? 1 : table_.num_groups();
    if (groups > kLocalGroups) return false;
    int64_t acc[4][kLocalGroups] = {};
    int64_t cnt[4][kLocalGroups] = {};
    uint64_t wide = 0;
    bool overflow = false;
    for (int64_t r = 0; r < n; ++r) {
      const int64_t g = gid[static_cast<size_t>(r)];
      if (skip && g < 0) continue;
      int64_t lo, hi;
      std::memcpy(&lo, d + r * 16, 8);
      std::memcpy(&hi, d + r * 16 + 8, 8);
      wide |= static_cast<uint64_t>(hi ^ (lo >> 63));
      overflow |= __builtin_add_overflow(acc[r & 3][g], lo, &acc[r & 3][g]);
      ++cnt[r & 3][g];
    }
    if (wide != 0 || overflow) return false;
    out->groups = groups;
    for (int64_t g = 0; g < groups; ++g) {
      out->sum[g] = static_cast<i128>(acc[0][g]) + acc[1][g] + acc[2][g] + acc[3][g];
      out->count[g] = cnt[0][g] + cnt[1][g] + cnt[2][g] + cnt[3][g];
    }
    return true;
  }
  // Adds a batch's per-group sums and counts to the states; false (nothing
  // changed) when some state would overflow (the exact loop reports it).
  static bool AddFewGroupSums(const FewGroupSums& b, PagedArray<State>* states) {
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t g = 0; g < b.groups; ++g) {
        if (b.count[g] == 0) continue;
        State& s = (*states)[g];
        if (pass == 0) {
          i128 ignored;
          if (__builtin_add_overflow(s.i, b.sum[g], &ignored)) return false;
        } else {
          s.i += b.sum[g];
          s.count += b.count[g];
        }
      }
    }
    return true;
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

  // Adds group `og` of `other` (its key and states) to this table.
  // A DISTINCT aggregate's state is left out: its values are merged.
  Status MergeGroup(const AggregateTable& other, int64_t og) {
    int64_t g = 0;
    if (!groups_.empty()) QUIVER_RETURN_NOT_OK(GroupOfEncoded(other.table_.key(og), other.table_.key_length(og), &g));
    for (size_t a = 0; a < aggs_.size(); ++a)
      if (!aggs_[a].distinct) QUIVER_RETURN_NOT_OK(MergeOne(a, (*other.states_[a])[og], g));
    return Status::OK();
  }

  // Adds the groups `ids` of `other` (and their states) to this table, as
  // Merge does for all of them: one partition of a worker's table in the
  // parallel merge. Other's arena must outlive this table's emission.
  Status MergeGroups(const AggregateTable& other, const std::vector<int64_t>& ids) {
    // The ids are ascending but sparse (one of every partition count):
    // each group's key reference, key bytes, states and the slot its key
    // probes here are loaded some groups ahead, in that order.
    constexpr size_t kRef = 24, kKey = 12, kSlot = 6;
    const bool prefetch = int_key_width_ > 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (prefetch) {
        if (i + kRef < ids.size()) {
          other.table_.Prefetch(ids[i + kRef]);
          for (const auto& st : other.states_) __builtin_prefetch(&(*st)[ids[i + kRef]]);
        }
        if (i + kKey < ids.size()) other.table_.PrefetchKey(ids[i + kKey]);
        if (i + kSlot < ids.size()) {
          const int64_t g = ids[i + kSlot];
          if (other.table_.key_length(g) == static_cast<uint32_t>(1 + int_key_width_))
            int_map_.Prefetch(static_cast<uint64_t>(DecodeIntKey(other.table_.key(g))));
        }
      }
      QUIVER_RETURN_NOT_OK(MergeGroup(other, ids[i]));
      if ((i & 4095) == 4095) QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    }
    return Status::OK();
  }

  // Adds `other`'s groups and states to this table (other's string min /
  // max values stay in other's arena: keep it alive while this emits).
  // `*merged` receives the number of other's groups merged (all of them on
  // success; on OutOfMemory the ones before the failure).
  Status Merge(const AggregateTable& other, int64_t* merged) {
    const int64_t n = other.num_output_rows();
    for (int64_t og = 0; og < n; ++og) {
      *merged = og;
      QUIVER_RETURN_NOT_OK(MergeGroup(other, og));
      if ((og & 4095) == 4095) QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    }
    *merged = n;
    // DISTINCT aggregates: other's values join this table's sets, a new
    // one updating the state (a value in both sets counts once). After an
    // OutOfMemory here every state of other is merged but some values may
    // not be: spilling other's values again is harmless (a set dedups).
    for (size_t a = 0; a < aggs_.size(); ++a) {
      if (!distinct_[a]) continue;
      for (int64_t e = 0; e < other.distinct_[a]->num_groups(); ++e) {
        QUIVER_RETURN_NOT_OK(MergeDistinctEntry(other, a, e));
        if ((e & 4095) == 4095) QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      }
    }
    return Status::OK();
  }

  // Entry e of other's set of DISTINCT aggregate a into this table (its
  // group found or made here).
  Status MergeDistinctEntry(const AggregateTable& other, size_t a, int64_t e) {
    const GroupTable& d = *other.distinct_[a];
    const uint8_t* dk = d.key(e);
    int64_t og;
    std::memcpy(&og, dk, 8);
    int64_t g = 0;
    if (!groups_.empty()) QUIVER_RETURN_NOT_OK(GroupOfEncoded(other.table_.key(og), other.table_.key_length(og), &g));
    return AddDistinctValue(a, g, dk + 8, d.key_length(e) - 8);
  }

  // The (aggregate, entry) pairs of the DISTINCT sets, by the partition of
  // their group (PartitionOf, `num_partitions`), or of their value without
  // GROUP BY. Read-only.
  using DistinctEntries = std::vector<std::pair<uint32_t, int64_t>>;
  std::vector<DistinctEntries> DistinctEntriesByPartition(int num_partitions) const {
    std::vector<DistinctEntries> parts(static_cast<size_t>(num_partitions));
    for (size_t a = 0; a < aggs_.size(); ++a) {
      if (!distinct_[a]) continue;
      const GroupTable& d = *distinct_[a];
      for (int64_t e = 0; e < d.num_groups(); ++e) {
        int64_t g;
        std::memcpy(&g, d.key(e), 8);
        // Without GROUP BY: by the value (the partitions' sets are disjoint).
        const int p = groups_.empty() ? PartitionOf(d.key(e) + 8, d.key_length(e) - 8, num_partitions)
                                      : PartitionOf(table_.key(g), table_.key_length(g), num_partitions);
        parts[static_cast<size_t>(p)].emplace_back(static_cast<uint32_t>(a), e);
      }
    }
    return parts;
  }
  int64_t distinct_entries() const {
    int64_t n = 0;
    for (const auto& d : distinct_) n += d ? d->num_groups() : 0;
    return n;
  }

  // The schema of exported states: the encoded group key, then per
  // aggregate its count, exact value (128-bit), float value and string
  // value (string min / max).
  static SchemaPtr StateSchema(size_t num_aggs) {
    auto s = std::make_shared<Schema>();
    s->fields.push_back(field("key", binary(), false));
    for (size_t a = 0; a < num_aggs; ++a) {
      const std::string p = "a" + std::to_string(a) + "_";
      s->fields.push_back(field(p + "count", int64(), false));
      s->fields.push_back(field(p + "i", decimal(128, 38, 0), false));
      s->fields.push_back(field(p + "f", float64(), false));
      s->fields.push_back(field(p + "s", binary(), true));
    }
    return s;
  }

  // The partition of group `g`'s key (of `num_partitions`, a power of two):
  // high hash bits, independent of the table's slot bits.
  static int PartitionOf(const uint8_t* key, uint32_t len, int num_partitions) {
    return static_cast<int>((HashBytes(key, len) >> 40) & static_cast<uint64_t>(num_partitions - 1));
  }

  // The states of groups `ids` as one batch of StateSchema (pool memory).
  Result<RecordBatchPtr> ExportStates(const std::vector<int64_t>& ids, const SchemaPtr& schema,
                                      MemoryPool* pool) const {
    const auto n = static_cast<int64_t>(ids.size());
    std::vector<ArrayDataPtr> cols;
    {
      int64_t bytes = 0;
      for (int64_t g : ids) bytes += groups_.empty() ? 0 : table_.key_length(g);
      QUIVER_ASSIGN_OR_RETURN(auto kb, StringBuilder::Make(n, bytes, pool));
      for (int64_t g : ids) {
        if (groups_.empty()) {
          QUIVER_RETURN_NOT_OK(kb.Append(std::string_view()));
        } else {
          QUIVER_RETURN_NOT_OK(
              kb.Append(std::string_view(reinterpret_cast<const char*>(table_.key(g)), table_.key_length(g))));
        }
      }
      QUIVER_ASSIGN_OR_RETURN(auto k, kb.Finish());
      cols.push_back(AsBinary(k));
    }
    for (size_t a = 0; a < aggs_.size(); ++a) {
      const PagedArray<State>& st = *states_[a];
      QUIVER_ASSIGN_OR_RETURN(auto cb, FixedBuilder::Make(int64(), n, pool));
      QUIVER_ASSIGN_OR_RETURN(auto ib, FixedBuilder::Make(decimal(128, 38, 0), n, pool));
      QUIVER_ASSIGN_OR_RETURN(auto fb, FixedBuilder::Make(float64(), n, pool));
      const bool strings = aggs_[a].arg && ClassOf(*aggs_[a].arg->type) == TypeClass::kString &&
                           (aggs_[a].fn == AggFn::kMin || aggs_[a].fn == AggFn::kMax);
      int64_t sbytes = 0;
      if (strings)
        for (int64_t g : ids) sbytes += st[g].count ? st[g].len : 0;
      QUIVER_ASSIGN_OR_RETURN(auto sb, StringBuilder::Make(n, sbytes, pool));
      for (int64_t r = 0; r < n; ++r) {
        const State& x = st[ids[static_cast<size_t>(r)]];
        cb.values<int64_t>()[r] = x.count;
        std::memcpy(ib.values<uint8_t>() + r * 16, &x.i, 16);
        fb.values<double>()[r] = x.f;
        if (strings && x.count > 0) {
          QUIVER_RETURN_NOT_OK(
              sb.Append(std::string_view(reinterpret_cast<const char*>(static_cast<uintptr_t>(x.i)), x.len)));
        } else {
          QUIVER_RETURN_NOT_OK(sb.AppendNull());
        }
      }
      cols.push_back(cb.Finish());
      cols.push_back(ib.Finish());
      cols.push_back(fb.Finish());
      QUIVER_ASSIGN_OR_RETURN(auto sa, sb.Finish());
      cols.push_back(AsBinary(sa));
    }
    return MakeBatch(schema, n, std::move(cols));
  }

  // Merges exported states (ExportStates' layout) into this table; string
  // min / max values are copied into this table's arena. A DISTINCT
  // aggregate's state is left out: it is rebuilt from its values
  // (MergeDistinct), which a merged count or sum would count twice; unless
  // `distinct_states`, when the states come from a disjoint set of values
  // (a value partition of a spilled global DISTINCT).
  Status MergeStates(const RecordBatch& b, bool distinct_states = false) {
    const ArrayData& keys = *b.columns[0];
    const int32_t* koff = keys.GetValues<int32_t>(1) + keys.offset;
    const uint8_t* kdata = keys.buffers[2] ? keys.buffers[2]->data() : nullptr;
    for (int64_t r = 0; r < b.num_rows; ++r) {
      int64_t g = 0;
      if (!groups_.empty()) {
        QUIVER_RETURN_NOT_OK(GroupOfEncoded(kdata + koff[r], static_cast<uint32_t>(koff[r + 1] - koff[r]), &g));
      }
      for (size_t a = 0; a < aggs_.size(); ++a) {
        if (aggs_[a].distinct && !distinct_states) continue;
        const size_t c = 1 + 4 * a;
        State o;
        o.count = b.columns[c]->GetValues<int64_t>(1)[b.columns[c]->offset + r];
        std::memcpy(&o.i, b.columns[c + 1]->GetValues<uint8_t>(1) + (b.columns[c + 1]->offset + r) * 16, 16);
        o.f = b.columns[c + 2]->GetValues<double>(1)[b.columns[c + 2]->offset + r];
        const ArrayData& sv = *b.columns[c + 3];
        const bool strings = aggs_[a].arg && ClassOf(*aggs_[a].arg->type) == TypeClass::kString &&
                             (aggs_[a].fn == AggFn::kMin || aggs_[a].fn == AggFn::kMax);
        const bool valid = sv.buffers[0] == nullptr || bit_util::GetBit(sv.buffers[0]->data(), sv.offset + r);
        if (strings && o.count > 0 && valid) {
          const int32_t* so = sv.GetValues<int32_t>(1) + sv.offset;
          const auto len = static_cast<size_t>(so[r + 1] - so[r]);
          const uint8_t* src = sv.buffers[2] ? sv.buffers[2]->data() + so[r] : nullptr;
          uint8_t* stored = nullptr;
          if (len > 0) {
            QUIVER_ASSIGN_OR_RETURN(stored, arena_.Append(src, len));
          }
          o.i = static_cast<i128>(reinterpret_cast<uintptr_t>(stored));
          o.len = static_cast<uint32_t>(len);
        }
        QUIVER_RETURN_NOT_OK(MergeOne(a, o, g));
      }
      if ((r & 4095) == 4095) QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    }
    return Status::OK();
  }

  Status NewGroup() {
    for (auto& s : states_) QUIVER_RETURN_NOT_OK(s->Append(State{}));
    return Status::OK();
  }

  // Phase 1 numbers the rows' groups (the only place new memory is taken
  // for tables without DISTINCT or string min / max); phase 2 updates the
  // states. An OutOfMemory before phase 2 leaves every state as it was, so
  // the caller may spill the table and consume the batch again.
  bool states_started() const { return states_started_; }
  bool has_string_min_max() const {
    for (const auto& a : aggs_)
      if (a.arg && ClassOf(*a.arg->type) == TypeClass::kString && (a.fn == AggFn::kMin || a.fn == AggFn::kMax))
        return true;
    return false;
  }
  bool has_distinct() const {
    for (const auto& a : aggs_)
      if (a.distinct) return true;
    return false;
  }

  // `keep` (may be null: every row): the rows with keep[r] == 0 are
  // skipped (their gid is -1), as if the batch did not hold them.
  Status Consume(const RecordBatch& batch, const uint8_t* keep = nullptr) {
    states_started_ = false;
    const int64_t n = batch.num_rows;
    const bool skip = keep != nullptr;
    EvalContext ev = ctx_->Eval(ctx_->aggregate_pool.get());
    // Subexpressions shared by keys and arguments (Q1's
    // l_extendedprice * (1 - l_discount) in two sums) are computed once.
    std::vector<std::pair<const Expr*, Vec>> memo;
    ev.memo = &memo;
    std::vector<Vec> keys;
    for (const auto& g : groups_) {
      QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(*g, batch, &ev));
      keys.push_back(std::move(v));
    }
    std::vector<int64_t> gid(static_cast<size_t>(n), 0);
    if (skip)
      for (int64_t r = 0; r < n; ++r) gid[static_cast<size_t>(r)] = keep[r] ? 0 : -1;
    if (!groups_.empty()) {
      // Fixed-width keys are encoded column by column into one buffer of
      // rows x width bytes (typed loops); strings row by row.
      int64_t width = 0;
      bool fixed = true;
      std::vector<int> widths;
      for (const auto& k : keys) {
        const int w = FixedKeyWidth(k.type()->id);
        if (w == 0) fixed = false;
        widths.push_back(w);
        width += 1 + w;
      }
      const TypeId k0 = keys[0].type()->id;
      // NULL keys only in skipped rows (a fused filter's `k IS NOT NULL`)
      // count as none.
      auto no_nulls = [&](const Vec& k) {
        if (!k.MayHaveNulls()) return true;
        if (!skip) return false;
        for (int64_t r = 0; r < n; ++r)
          if (keep[r] && k.IsNull(r)) return false;
        return true;
      };
      if (keys.size() == 1 && !keys[0].constant && no_nulls(keys[0]) &&
          (k0 == TypeId::kInt64 || k0 == TypeId::kInt32 || k0 == TypeId::kDate32)) {
        // One integer key without NULLs: the IntGroupMap answers known keys
        // with one probe; new keys go to the GroupTable (which numbers them).
        // A row whose key equals the previous row's takes its group without
        // a probe (data clustered by the key: lineitem by l_orderkey).
        // While the map holds every group of the table (always, unless a
        // batch with NULL keys took the generic path), a key it lacks is new
        // to the table too and is numbered without a GroupTable lookup.
        const Vec& k = keys[0];
        const int w = k0 == TypeId::kInt64 ? 8 : 4;
        uint8_t enc[9];
        enc[0] = 1;
        int64_t last_key = 0, last_g = -1;
        const bool complete = int_map_.size() == table_.num_groups();
        constexpr int64_t kAhead = 8;  // rows ahead whose map slot is prefetched
        for (int64_t r = 0; r < n; ++r) {
          const int64_t key = k0 == TypeId::kInt64 ? k.Values<int64_t>()[r] : k.Values<int32_t>()[r];
          if (r + kAhead < n) {
            const int64_t ahead =
                k0 == TypeId::kInt64 ? k.Values<int64_t>()[r + kAhead] : k.Values<int32_t>()[r + kAhead];
            if (ahead != key) int_map_.Prefetch(static_cast<uint64_t>(ahead));
          }
          if (skip && !keep[r]) continue;
          if (key == last_key && last_g >= 0) {
            gid[static_cast<size_t>(r)] = last_g;
            continue;
          }
          if (w == 8) {
            std::memcpy(enc + 1, &key, 8);
          } else {
            const int32_t k32 = static_cast<int32_t>(key);
            std::memcpy(enc + 1, &k32, 4);
          }
          int64_t g;
          if (complete) {
            bool inserted;
            QUIVER_RETURN_NOT_OK(int_map_.FindOrInsert(
                static_cast<uint64_t>(key), [&] { return NewGroupOf(enc, static_cast<uint32_t>(1 + w)); }, &g,
                &inserted));
          } else {
            g = int_map_.Find(static_cast<uint64_t>(key));
            if (g < 0) {
              bool inserted;
              QUIVER_RETURN_NOT_OK(table_.FindOrInsert(enc, static_cast<uint32_t>(1 + w),
                                                       HashBytes(enc, static_cast<size_t>(1 + w)), &g, &inserted));
              if (inserted) QUIVER_RETURN_NOT_OK(NewGroup());
              QUIVER_RETURN_NOT_OK(int_map_.Insert(static_cast<uint64_t>(key), g));
            }
          }
          gid[static_cast<size_t>(r)] = g;
          last_key = key;
          last_g = g;
        }
      } else if (fixed) {
        std::vector<uint8_t> buf(static_cast<size_t>(n * width), 0);
        int64_t offset = 0;
        std::string one;
        for (size_t c = 0; c < keys.size(); ++c) {
          const Vec& k = keys[c];
          const int w = widths[c];
          const bool plain =
              !k.constant && !k.MayHaveNulls() && k.type()->id != TypeId::kBool && k.type()->id != TypeId::kFloat64;
          if (plain) {
            const uint8_t* src = k.array->buffers[1]->data() + k.array->offset * w;
            for (int64_t r = 0; r < n; ++r) {
              uint8_t* dst = buf.data() + r * width + offset;
              dst[0] = 1;
              std::memcpy(dst + 1, src + r * w, static_cast<size_t>(w));
            }
          } else {
            for (int64_t r = 0; r < n; ++r) {
              one.clear();
              EncodeValue(k, r, &one);
              std::memcpy(buf.data() + r * width + offset, one.data(), one.size());
            }
          }
          offset += 1 + w;
        }
        for (int64_t r = 0; r < n; ++r) {
          if (skip && !keep[r]) continue;
          const uint8_t* p = buf.data() + r * width;
          if (r > 0 && gid[static_cast<size_t>(r) - 1] >= 0 &&
              std::memcmp(p, p - width, static_cast<size_t>(width)) == 0) {
            gid[static_cast<size_t>(r)] = gid[static_cast<size_t>(r) - 1];  // same key as the row before
            continue;
          }
          bool inserted;
          QUIVER_RETURN_NOT_OK(table_.FindOrInsert(p, static_cast<uint32_t>(width),
                                                   HashBytes(p, static_cast<size_t>(width)),
                                                   &gid[static_cast<size_t>(r)], &inserted));
          if (inserted) QUIVER_RETURN_NOT_OK(NewGroup());
        }
      } else if (PackStringKeys(keys, n, &packed_)) {
        // Short string keys (TPC-H Q1's flags): each row's key tuple packed
        // into 64 bits answers known groups from the IntGroupMap with one
        // probe; a new group is encoded and numbered by the GroupTable.
        std::string enc;
        for (int64_t r = 0; r < n; ++r) {
          if (skip && !keep[r]) continue;
          const uint64_t key = packed_[static_cast<size_t>(r)];
          if (r > 0 && gid[static_cast<size_t>(r) - 1] >= 0 && key == packed_[static_cast<size_t>(r) - 1]) {
            gid[static_cast<size_t>(r)] = gid[static_cast<size_t>(r) - 1];
            continue;
          }
          int64_t g = int_map_.Find(key);
          if (g < 0) {
            enc.clear();
            for (const auto& k : keys) EncodeValue(k, r, &enc);
            const auto* p = reinterpret_cast<const uint8_t*>(enc.data());
            bool inserted;
            QUIVER_RETURN_NOT_OK(
                table_.FindOrInsert(p, static_cast<uint32_t>(enc.size()), HashBytes(p, enc.size()), &g, &inserted));
            if (inserted) QUIVER_RETURN_NOT_OK(NewGroup());
            QUIVER_RETURN_NOT_OK(int_map_.Insert(key, g));
          }
          gid[static_cast<size_t>(r)] = g;
        }
      } else {
        // Variable-width keys: per-row lengths, then the columns encoded one
        // after the other into one buffer (no per-row allocation).
        std::vector<int64_t> offsets(static_cast<size_t>(n) + 1, 0);
        for (size_t c = 0; c < keys.size(); ++c) {
          const Vec& k = keys[c];
          for (int64_t r = 0; r < n; ++r) {
            int64_t len = 1;
            if (!k.IsNull(r)) len += widths[c] > 0 ? widths[c] : 4 + static_cast<int64_t>(k.StringAt(r).size());
            offsets[static_cast<size_t>(r) + 1] += len;
          }
        }
        for (int64_t r = 0; r < n; ++r) offsets[static_cast<size_t>(r) + 1] += offsets[static_cast<size_t>(r)];
        std::vector<uint8_t> buf(static_cast<size_t>(offsets.back()) + 1);
        std::vector<int64_t> pos(offsets.begin(), offsets.end() - 1);
        std::string one;
        for (size_t c = 0; c < keys.size(); ++c) {
          const Vec& k = keys[c];
          for (int64_t r = 0; r < n; ++r) {
            uint8_t* dst = buf.data() + pos[static_cast<size_t>(r)];
            if (k.type()->id == TypeId::kUtf8) {
              if (k.IsNull(r)) {
                dst[0] = 0;
                pos[static_cast<size_t>(r)] += 1;
                continue;
              }
              const std::string_view v = k.StringAt(r);
              const auto len = static_cast<uint32_t>(v.size());
              dst[0] = 1;
              std::memcpy(dst + 1, &len, 4);
              if (len) std::memcpy(dst + 5, v.data(), len);
              pos[static_cast<size_t>(r)] += 5 + len;
            } else {
              one.clear();
              EncodeValue(k, r, &one);
              std::memcpy(dst, one.data(), one.size());
              pos[static_cast<size_t>(r)] += static_cast<int64_t>(one.size());
            }
          }
        }
        for (int64_t r = 0; r < n; ++r) {
          if (skip && !keep[r]) continue;
          const uint8_t* p = buf.data() + offsets[static_cast<size_t>(r)];
          const auto len = static_cast<size_t>(offsets[static_cast<size_t>(r) + 1] - offsets[static_cast<size_t>(r)]);
          if (r > 0 && gid[static_cast<size_t>(r) - 1] >= 0) {
            const auto prev =
                static_cast<size_t>(offsets[static_cast<size_t>(r)] - offsets[static_cast<size_t>(r) - 1]);
            if (prev == len && std::memcmp(p, p - len, len) == 0) {
              gid[static_cast<size_t>(r)] = gid[static_cast<size_t>(r) - 1];  // same key as the row before
              continue;
            }
          }
          bool inserted;
          QUIVER_RETURN_NOT_OK(table_.FindOrInsert(p, static_cast<uint32_t>(len), HashBytes(p, len),
                                                   &gid[static_cast<size_t>(r)], &inserted));
          if (inserted) QUIVER_RETURN_NOT_OK(NewGroup());
          if ((r & 4095) == 4095) QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
        }
      }
    }
    // String min / max copy values into the arena in phase 2: room for
    // every value of the batch is taken now, while a failure still lets
    // the caller spill and consume the batch again.
    {
      int64_t string_bytes = 0;
      for (const auto& call : aggs_) {
        if (call.distinct || !call.arg || ClassOf(*call.arg->type) != TypeClass::kString ||
            (call.fn != AggFn::kMin && call.fn != AggFn::kMax))
          continue;
        QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(*call.arg, batch, &ev));
        if (v.constant) {
          string_bytes += v.IsNull(0) ? 0 : static_cast<int64_t>(v.StringAt(0).size());
        } else {
          for (int64_t r = 0; r < n; ++r)
            if (!v.IsNull(r)) string_bytes += static_cast<int64_t>(v.StringAt(r).size());
        }
      }
      if (string_bytes > 0) QUIVER_RETURN_NOT_OK(arena_.EnsureFree(static_cast<size_t>(string_bytes)));
    }
    states_started_ = true;
    FewGroupSums few;
    Vec few_arg;
    for (size_t a = 0; a < aggs_.size(); ++a) {
      const AggregateCall& call = aggs_[a];
      PagedArray<State>& st = *states_[a];
      if (call.fn == AggFn::kCountStar) {
        for (int64_t r = 0; r < n; ++r) {
          const int64_t g = gid[static_cast<size_t>(r)];
          if (skip && g < 0) continue;
          ++st[g].count;
        }
        continue;
      }
      QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(*call.arg, batch, &ev));
      const TypeClass cls = ClassOf(*v.type());
      if (!call.distinct && !v.constant && !v.MayHaveNulls() &&
          (call.fn == AggFn::kSum || call.fn == AggFn::kAvg || call.fn == AggFn::kCount)) {
        // Typed loops without per-row dispatch.
        const TypeId id = v.type()->id;
        if (call.fn == AggFn::kCount) {
          for (int64_t r = 0; r < n; ++r) {
            const int64_t g = gid[static_cast<size_t>(r)];
            if (skip && g < 0) continue;
            ++st[g].count;
          }
          continue;
        }
        if (id == TypeId::kDecimal) {
          const uint8_t* d = v.array->buffers[1]->data() + v.array->offset * 16;
          // sum(x) and avg(x) of one column (Q1: two pairs) sum it once.
          // (few_arg holds the summed column, so its address stays its own.)
          if (few_arg.array != v.array && SumFewGroups(d, gid, n, skip, &few)) few_arg = v;
          if (few_arg.array == v.array && AddFewGroupSums(few, &st)) continue;
          for (int64_t r = 0; r < n; ++r) {
            const int64_t g = gid[static_cast<size_t>(r)];
            if (skip && g < 0) continue;
            State& s = st[g];
            i128 x;
            std::memcpy(&x, d + r * 16, 16);
            if (__builtin_add_overflow(s.i, x, &s.i)) return NumericOverflow("sum() passed 128 bits");
            ++s.count;
          }
          continue;
        }
        if (id == TypeId::kInt64 || id == TypeId::kInt32) {
          for (int64_t r = 0; r < n; ++r) {
            const int64_t g = gid[static_cast<size_t>(r)];
            if (skip && g < 0) continue;
            State& s = st[g];
            s.i += id == TypeId::kInt64 ? v.Values<int64_t>()[r] : v.Values<int32_t>()[r];
            ++s.count;
          }
          continue;
        }
        if (id == TypeId::kFloat64) {
          const double* d = v.Values<double>();
          for (int64_t r = 0; r < n; ++r) {
            const int64_t g = gid[static_cast<size_t>(r)];
            if (skip && g < 0) continue;
            State& s = st[g];
            s.f += d[r];
            ++s.count;
          }
          continue;
        }
      }
      std::string dkey;
      for (int64_t r = 0; r < n; ++r) {
        const int64_t g = gid[static_cast<size_t>(r)];
        if (g < 0 || v.IsNull(r)) continue;
        if (call.distinct) {
          dkey.assign(reinterpret_cast<const char*>(&g), 8);
          EncodeValue(v, r, &dkey);
          const auto* p = reinterpret_cast<const uint8_t*>(dkey.data());
          int64_t ignored;
          bool inserted;
          QUIVER_RETURN_NOT_OK(distinct_[a]->FindOrInsert(p, static_cast<uint32_t>(dkey.size()),
                                                          HashBytes(p, dkey.size()), &ignored, &inserted));
          if (!inserted) continue;
        }
        QUIVER_RETURN_NOT_OK(UpdateState(
            call, cls, &st[g], [&] { return v.ExactAt(r); }, [&] { return v.FloatAt(r); },
            [&] { return v.StringAt(r); }));
      }
    }
    return Status::OK();
  }

  // Folds one non-null argument value into state `s` of aggregate `call`
  // (argument class `cls`); the value is read through the getter of its
  // class (exact: i128, float: double, string: string_view), only when
  // the function needs it.
  template <typename GetExact, typename GetFloat, typename GetString>
  Status UpdateState(const AggregateCall& call, TypeClass cls, State* s, GetExact exact, GetFloat flt, GetString str) {
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
    }
    return Status::OK();
  }

  // The layout of spilled DISTINCT values: the group's encoded key, the
  // aggregate's position, the value as EncodeValue wrote it.
  static SchemaPtr DistinctSchema() {
    auto s = std::make_shared<Schema>();
    s->fields.push_back(field("key", binary(), false));
    s->fields.push_back(field("aggregate", int32(), false));
    s->fields.push_back(field("value", binary(), false));
    return s;
  }

  // The DISTINCT aggregates' (group, value) entries, partitioned as the
  // groups are (PartitionOf, `num_partitions`), each partition's entries
  // as batches of DistinctSchema of up to `batch_rows` rows handed to
  // sink(partition, batch). Read-only.
  Status ExportDistinct(int num_partitions, int64_t batch_rows, MemoryPool* pool,
                        const std::function<Status(int, RecordBatchPtr)>& sink) const {
    const std::vector<DistinctEntries> parts = DistinctEntriesByPartition(num_partitions);
    const SchemaPtr schema = DistinctSchema();
    for (int p = 0; p < num_partitions; ++p) {
      const auto& entries = parts[static_cast<size_t>(p)];
      for (size_t begin = 0; begin < entries.size(); begin += static_cast<size_t>(batch_rows)) {
        QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
        const size_t end = std::min(entries.size(), begin + static_cast<size_t>(batch_rows));
        const auto n = static_cast<int64_t>(end - begin);
        int64_t key_bytes = 0, value_bytes = 0;
        for (size_t i = begin; i < end; ++i) {
          const GroupTable& d = *distinct_[entries[i].first];
          int64_t g;
          std::memcpy(&g, d.key(entries[i].second), 8);
          key_bytes += groups_.empty() ? 0 : table_.key_length(g);
          value_bytes += d.key_length(entries[i].second) - 8;
        }
        QUIVER_ASSIGN_OR_RETURN(auto kb, StringBuilder::Make(n, key_bytes, pool));
        QUIVER_ASSIGN_OR_RETURN(auto ab, FixedBuilder::Make(int32(), n, pool));
        QUIVER_ASSIGN_OR_RETURN(auto vb, StringBuilder::Make(n, value_bytes, pool));
        for (size_t i = begin; i < end; ++i) {
          const GroupTable& d = *distinct_[entries[i].first];
          const uint8_t* dk = d.key(entries[i].second);
          int64_t g;
          std::memcpy(&g, dk, 8);
          QUIVER_RETURN_NOT_OK(kb.Append(
              groups_.empty() ? std::string_view()
                              : std::string_view(reinterpret_cast<const char*>(table_.key(g)), table_.key_length(g))));
          ab.values<int32_t>()[i - begin] = static_cast<int32_t>(entries[i].first);
          QUIVER_RETURN_NOT_OK(
              vb.Append(std::string_view(reinterpret_cast<const char*>(dk + 8), d.key_length(entries[i].second) - 8)));
        }
        std::vector<ArrayDataPtr> cols;
        QUIVER_ASSIGN_OR_RETURN(auto k, kb.Finish());
        cols.push_back(AsBinary(std::move(k)));
        cols.push_back(ab.Finish());
        QUIVER_ASSIGN_OR_RETURN(auto v, vb.Finish());
        cols.push_back(AsBinary(std::move(v)));
        QUIVER_RETURN_NOT_OK(sink(p, MakeBatch(schema, n, std::move(cols))));
      }
    }
    return Status::OK();
  }

  // Adds spilled DISTINCT entries (ExportDistinct's layout) to this table:
  // a value new to its group's set updates the aggregate's state. Errors:
  // Invalid on an aggregate position or value that does not fit the
  // aggregate (a corrupt spill file).
  Status MergeDistinct(const RecordBatch& b) {
    const ArrayData& keys = *b.columns[0];
    const ArrayData& aggs = *b.columns[1];
    const ArrayData& values = *b.columns[2];
    const int32_t* koff = keys.GetValues<int32_t>(1) + keys.offset;
    const uint8_t* kdata = keys.buffers[2] ? keys.buffers[2]->data() : nullptr;
    const int32_t* agg = aggs.GetValues<int32_t>(1) + aggs.offset;
    const int32_t* voff = values.GetValues<int32_t>(1) + values.offset;
    const uint8_t* vdata = values.buffers[2] ? values.buffers[2]->data() : nullptr;
    for (int64_t r = 0; r < b.num_rows; ++r) {
      const auto a = static_cast<size_t>(agg[r]);
      if (agg[r] < 0 || a >= aggs_.size() || !distinct_[a])
        return Status::Invalid("spilled DISTINCT value " + std::to_string(r) + ": aggregate " + std::to_string(agg[r]) +
                               " is not a DISTINCT aggregate of " + std::to_string(aggs_.size()));
      const uint8_t* val = vdata + voff[r];
      const auto len = static_cast<uint32_t>(voff[r + 1] - voff[r]);
      const AggregateCall& call = aggs_[a];
      const TypeId id = call.arg->type->id;
      const auto width = static_cast<uint32_t>(FixedKeyWidth(id));
      const bool ok = len >= 1 && val[0] == 1 &&
                      (id == TypeId::kUtf8 ? len >= 5 && len == 5 + DecodeU32(val + 1) : width > 0 && len == 1 + width);
      if (!ok)
        return Status::Invalid("spilled DISTINCT value " + std::to_string(r) + " of aggregate " + std::to_string(a) +
                               ": " + std::to_string(len) + " bytes do not hold a " + call.arg->type->ToString());
      int64_t g = 0;
      if (!groups_.empty()) {
        QUIVER_RETURN_NOT_OK(GroupOfEncoded(kdata + koff[r], static_cast<uint32_t>(koff[r + 1] - koff[r]), &g));
      }
      QUIVER_RETURN_NOT_OK(AddDistinctValue(a, g, val, len));
      if ((r & 4095) == 4095) QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    }
    return Status::OK();
  }

  // Adds `val` (`len` bytes as EncodeValue wrote a non-null value of the
  // argument's type, checked by the caller) to group g's set of DISTINCT
  // aggregate a; when new, folds it into the state.
  Status AddDistinctValue(size_t a, int64_t g, const uint8_t* val, uint32_t len) {
    std::string& dkey = distinct_key_;
    dkey.assign(reinterpret_cast<const char*>(&g), 8);
    dkey.append(reinterpret_cast<const char*>(val), len);
    const auto* p = reinterpret_cast<const uint8_t*>(dkey.data());
    int64_t ignored;
    bool inserted;
    QUIVER_RETURN_NOT_OK(distinct_[a]->FindOrInsert(p, static_cast<uint32_t>(dkey.size()), HashBytes(p, dkey.size()),
                                                    &ignored, &inserted));
    if (!inserted) return Status::OK();
    const AggregateCall& call = aggs_[a];
    const TypeId id = call.arg->type->id;
    auto exact = [&]() -> i128 {
      switch (id) {
        case TypeId::kBool: return val[1] != 0;
        case TypeId::kInt32:
        case TypeId::kDate32: {
          int32_t x;
          std::memcpy(&x, val + 1, 4);
          return x;
        }
        case TypeId::kDecimal: {
          i128 x;
          std::memcpy(&x, val + 1, 16);
          return x;
        }
        default: {
          int64_t x;
          std::memcpy(&x, val + 1, 8);
          return x;
        }
      }
    };
    auto flt = [&] {
      double x;
      std::memcpy(&x, val + 1, 8);
      return x;
    };
    auto str = [&] { return std::string_view(reinterpret_cast<const char*>(val + 5), len - 5); };
    return UpdateState(call, ClassOf(*call.arg->type), &(*states_[a])[g], exact, flt, str);
  }

  // Output rows [begin, begin + n) of the groups, leaving out those with
  // skip[g] != 0 (skip may be null). Read-only.
  Result<RecordBatchPtr> EmitRange(int64_t begin, int64_t n, const uint8_t* skip = nullptr) const {
    MemoryPool* pool = ctx_->aggregate_pool.get();
    std::vector<int64_t> ids;
    if (skip != nullptr) {
      for (int64_t g = begin; g < begin + n; ++g)
        if (!skip[g]) ids.push_back(g);
      n = static_cast<int64_t>(ids.size());
    }
    auto row = [&](int64_t g) { return skip != nullptr ? ids[static_cast<size_t>(g)] : begin + g; };
    std::vector<ArrayDataPtr> cols;
    // Group columns, decoded from the keys. In the fixed layout (no string
    // key) a NULL still takes its column's width.
    bool fixed_layout = true;
    for (size_t k = 0; k < groups_.size(); ++k)
      fixed_layout = fixed_layout && FixedKeyWidth(schema_->fields[k]->type->id) > 0;
    std::vector<size_t> pos(static_cast<size_t>(n), 0);
    for (size_t k = 0; k < groups_.size(); ++k) {
      const DataTypePtr& t = schema_->fields[k]->type;
      const TypeClass cls = ClassOf(*t);
      if (cls == TypeClass::kString) {
        QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(n, n * 8, pool));
        for (int64_t g = 0; g < n; ++g) {
          const uint8_t* key = table_.key(row(g));
          size_t& p = pos[static_cast<size_t>(g)];
          if (key[p++] == 0) {
            QUIVER_RETURN_NOT_OK(b.AppendNull());
            continue;
          }
          uint32_t len;
          std::memcpy(&len, key + p, 4);
          p += 4;
          QUIVER_RETURN_NOT_OK(b.Append(std::string_view(reinterpret_cast<const char*>(key + p), len)));
          p += len;
        }
        QUIVER_ASSIGN_OR_RETURN(auto a, b.Finish());
        cols.push_back(a);
        continue;
      }
      QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(t, n, pool));
      size_t width = 0;
      switch (t->id) {
        case TypeId::kBool: width = 1; break;
        case TypeId::kInt32:
        case TypeId::kDate32: width = 4; break;
        case TypeId::kDecimal: width = 16; break;
        case TypeId::kNull: width = 0; break;
        default: width = 8; break;
      }
      if (t->id == TypeId::kNull) return Status::NotImplemented("GROUP BY a NULL constant");
      for (int64_t g = 0; g < n; ++g) {
        const uint8_t* key = table_.key(row(g));
        size_t& p = pos[static_cast<size_t>(g)];
        if (key[p++] == 0) {
          QUIVER_RETURN_NOT_OK(b.SetNull(g));
          if (t->id != TypeId::kBool) std::memset(b.values<uint8_t>() + g * static_cast<int64_t>(width), 0, width);
          if (fixed_layout) p += width;
          continue;
        }
        if (t->id == TypeId::kBool) {
          bit_util::SetBitTo(b.bits(), g, key[p] != 0);
        } else {
          std::memcpy(b.values<uint8_t>() + g * static_cast<int64_t>(width), key + p, width);
        }
        p += width;
      }
      cols.push_back(b.Finish());
    }
    // Aggregates.
    for (size_t a = 0; a < aggs_.size(); ++a) {
      const AggregateCall& call = aggs_[a];
      const DataTypePtr& t = call.type;
      const PagedArray<State>& st = *states_[a];
      const TypeClass arg_cls = call.arg ? ClassOf(*call.arg->type) : TypeClass::kInt;
      if (ClassOf(*t) == TypeClass::kString) {
        QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(n, n * 8, pool));
        for (int64_t g = 0; g < n; ++g) {
          const State& s = st[row(g)];
          if (s.count == 0) {
            QUIVER_RETURN_NOT_OK(b.AppendNull());
          } else {
            QUIVER_RETURN_NOT_OK(
                b.Append(std::string_view(reinterpret_cast<const char*>(static_cast<uintptr_t>(s.i)), s.len)));
          }
        }
        QUIVER_ASSIGN_OR_RETURN(auto arr, b.Finish());
        cols.push_back(arr);
        continue;
      }
      QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(t, n, pool));
      for (int64_t g = 0; g < n; ++g) {
        const State& s = st[row(g)];
        if (call.fn == AggFn::kCount || call.fn == AggFn::kCountStar) {
          b.values<int64_t>()[g] = s.count;
          continue;
        }
        if (s.count == 0) {
          QUIVER_RETURN_NOT_OK(b.SetNull(g));
          continue;
        }
        if (call.fn == AggFn::kAvg) {
          double avg;
          if (arg_cls == TypeClass::kFloat) {
            avg = s.f / static_cast<double>(s.count);
          } else {
            // exact: divide in long double from the 128-bit sum
            const long double sum = static_cast<long double>(s.i) / powl(10.0L, ScaleOf(*call.arg->type));
            avg = static_cast<double>(sum / static_cast<long double>(s.count));
          }
          b.values<double>()[g] = avg;
          continue;
        }
        switch (t->id) {
          case TypeId::kFloat64: b.values<double>()[g] = s.f; break;
          case TypeId::kInt64:
          case TypeId::kTimestamp:
            if (s.i > INT64_MAX || s.i < INT64_MIN) return NumericOverflow("sum() does not fit BIGINT");
            b.values<int64_t>()[g] = static_cast<int64_t>(s.i);
            break;
          case TypeId::kInt32:
          case TypeId::kDate32: b.values<int32_t>()[g] = static_cast<int32_t>(s.i); break;
          case TypeId::kDecimal: {
            const i128 lim = MaxUnscaled(t->precision);
            if (s.i > lim || s.i < -lim) return NumericOverflow("sum() does not fit " + SqlTypeName(*t));
            std::memcpy(b.values<uint8_t>() + g * 16, &s.i, 16);
            break;
          }
          case TypeId::kBool: bit_util::SetBitTo(b.bits(), g, s.i != 0); break;
          default: return Status::NotImplemented("aggregate result of type " + t->ToString());
        }
      }
      cols.push_back(b.Finish());
    }
    return MakeBatch(schema_, n, std::move(cols));
  }

 private:
  ExecContext* ctx_;
  std::vector<ExprPtr> groups_;
  std::vector<AggregateCall> aggs_;
  SchemaPtr schema_;
  GroupTable table_;
  IntGroupMap int_map_;    // single integer keys, or packed short string keys (PackStringKeys)
  int int_key_width_ = 0;  // one GROUP BY key of int64 (8), int32 / date32 (4); else 0
  std::vector<uint64_t> packed_;
  ByteArena arena_;
  std::vector<std::unique_ptr<PagedArray<State>>> states_;
  std::vector<std::unique_ptr<GroupTable>> distinct_;
  std::string distinct_key_;  // scratch of AddDistinctValue
  bool states_started_ = false;
};

// Hands out ranges of a finished table's groups; instances share the cursor.
// Emits the groups of one or more tables (the partitions of a parallel
// merge) in batches of at most max_batch_rows, a batch within one table.
// Parallel instances share `cursor`: the index of the next batch in the
// list every instance computes alike from the same tables.
class AggregateEmitOp : public RecordBatchStream {
 public:
  /// `keep_alive`: the tables whose arenas hold string min / max values
  /// that `tables` point to (the workers' tables of a merge), kept until
  /// this instance ends, whenever the node is released.
  /// `skips` (empty, or one per table, each null or one byte per group):
  /// the groups of a table not to emit (merged into another table's).
  AggregateEmitOp(ExecContext* ctx, SchemaPtr schema, std::vector<std::shared_ptr<const AggregateTable>> tables,
                  std::shared_ptr<std::atomic<int64_t>> cursor, std::vector<std::shared_ptr<AggregateTable>> keep_alive,
                  std::vector<std::shared_ptr<const std::vector<uint8_t>>> skips = {})
      : ctx_(ctx),
        schema_(std::move(schema)),
        tables_(std::move(tables)),
        keep_alive_(std::move(keep_alive)),
        skips_(std::move(skips)),
        cursor_(std::move(cursor)) {
    const int64_t step = std::max<int64_t>(1, ctx_->max_batch_rows);
    for (size_t t = 0; t < tables_.size(); ++t) {
      const int64_t rows = tables_[t]->num_output_rows();
      for (int64_t b = 0; b < rows; b += step) ranges_.push_back({t, b, std::min(step, rows - b)});
    }
  }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    if (tables_.empty()) return RecordBatchPtr{};
    QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
    while (true) {
      const int64_t i = cursor_->fetch_add(1);
      if (i >= static_cast<int64_t>(ranges_.size())) {
        tables_.clear();
        keep_alive_.clear();
        skips_.clear();
        return RecordBatchPtr{};
      }
      const Range& r = ranges_[static_cast<size_t>(i)];
      const uint8_t* skip = r.table < skips_.size() && skips_[r.table] ? skips_[r.table]->data() : nullptr;
      auto out = tables_[r.table]->EmitRange(r.begin, r.rows, skip);
      if (!out.ok()) return NameOperator(out.status(), "hash aggregate");
      if ((*out)->num_rows == 0) continue;  // every group of the range was merged elsewhere
      return out;
    }
  }

 private:
  struct Range {
    size_t table;
    int64_t begin, rows;
  };
  ExecContext* ctx_;
  SchemaPtr schema_;
  std::vector<std::shared_ptr<const AggregateTable>> tables_;
  std::vector<std::shared_ptr<AggregateTable>> keep_alive_;
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> skips_;
  std::vector<Range> ranges_;
  std::shared_ptr<std::atomic<int64_t>> cursor_;
};

constexpr int kSpillPartitions = 16;
// Groups (over all workers' tables) from which the merge runs in parallel.
constexpr int64_t kParallelMergeGroups = 1 << 15;

// After a spill: the partitions one at a time — each one's spilled states
// merged into a fresh table, its groups emitted, the table dropped.
class SpilledAggregateEmitOp : public RecordBatchStream {
 public:
  using MakeTable = std::function<Result<std::shared_ptr<AggregateTable>>()>;
  // `distinct[p]`: partition p's spilled DISTINCT values (may be empty);
  // `global`: no GROUP BY (values partitioned by value, FoldGlobal);
  // `num_aggs`: the aggregates (StateSchema's).
  SpilledAggregateEmitOp(ExecContext* ctx, SchemaPtr schema, std::vector<std::vector<SpillFile>> partitions,
                         std::vector<std::vector<SpillFile>> distinct, MakeTable make_table, bool global,
                         size_t num_aggs)
      : ctx_(ctx),
        schema_(std::move(schema)),
        partitions_(std::move(partitions)),
        distinct_(std::move(distinct)),
        make_table_(std::move(make_table)),
        global_(global),
        num_aggs_(num_aggs) {
    distinct_.resize(partitions_.size());
  }
  const SchemaPtr& schema() const override { return schema_; }
  Result<RecordBatchPtr> Next() override {
    auto r = NextImpl();
    if (!r.ok()) {
      table_.reset();
      return NameOperator(r.status(), "hash aggregate");
    }
    return r;
  }

 private:
  Result<RecordBatchPtr> NextImpl() {
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      if (table_ && next_ < table_->num_output_rows()) {
        const int64_t n = std::min(ctx_->max_batch_rows, table_->num_output_rows() - next_);
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, table_->EmitRange(next_, n));
        next_ += n;
        return b;
      }
      table_.reset();
      if (partition_ >= partitions_.size()) return RecordBatchPtr{};
      if (global_) {
        QUIVER_RETURN_NOT_OK(FoldGlobal());
        continue;
      }
      std::vector<SpillFile> files = std::move(partitions_[partition_]);
      std::vector<SpillFile> values = std::move(distinct_[partition_++]);
      if (files.empty() && values.empty()) continue;
      QUIVER_ASSIGN_OR_RETURN(table_, make_table_());
      for (const SpillFile& f : files) QUIVER_RETURN_NOT_OK(MergeFile(f, false));
      for (const SpillFile& f : values) QUIVER_RETURN_NOT_OK(MergeFile(f, true));
      next_ = 0;
    }
  }

  // Without GROUP BY the one group's states are in partition 0 and its
  // DISTINCT values spread over the partitions by value: each partition's
  // values are aggregated on their own (disjoint sets) and the states
  // folded into one table (exported and merged: string min / max values
  // are copied), which is emitted.
  Status FoldGlobal() {
    QUIVER_ASSIGN_OR_RETURN(auto acc, make_table_());
    for (; partition_ < partitions_.size(); ++partition_) {
      std::vector<SpillFile> files = std::move(partitions_[partition_]);
      std::vector<SpillFile> values = std::move(distinct_[partition_]);
      if (files.empty() && values.empty()) continue;
      QUIVER_ASSIGN_OR_RETURN(table_, make_table_());
      for (const SpillFile& f : files) QUIVER_RETURN_NOT_OK(MergeFile(f, false));
      for (const SpillFile& f : values) QUIVER_RETURN_NOT_OK(MergeFile(f, true));
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr states, table_->ExportStates({0}, AggregateTable::StateSchema(num_aggs_),
                                                                          ctx_->aggregate_pool.get()));
      table_.reset();
      QUIVER_RETURN_NOT_OK(acc->MergeStates(*states, /*distinct_states=*/true));
    }
    table_ = std::move(acc);
    next_ = 0;
    return Status::OK();
  }

  Status MergeFile(const SpillFile& f, bool distinct_values) {
    QUIVER_ASSIGN_OR_RETURN(auto in, ctx_->spill->Open(f, ctx_->aggregate_pool.get()));
    while (true) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, in->Next());
      if (!b) return Status::OK();
      QUIVER_RETURN_NOT_OK(distinct_values ? table_->MergeDistinct(*b) : table_->MergeStates(*b));
    }
  }

  ExecContext* ctx_;
  SchemaPtr schema_;
  std::vector<std::vector<SpillFile>> partitions_, distinct_;
  MakeTable make_table_;
  bool global_;
  size_t num_aggs_;
  size_t partition_ = 0;
  std::shared_ptr<AggregateTable> table_;
  int64_t next_ = 0;
};

class HashAggregateNode : public PhysicalNode {
 public:
  HashAggregateNode(ExecContext* ctx, NodePtr child, std::vector<ExprPtr> groups, std::vector<AggregateCall> aggs,
                    SchemaPtr schema, ExprPtr filter)
      : PhysicalNode(ctx, std::move(schema)),
        child_(std::move(child)),
        groups_(std::move(groups)),
        aggs_(std::move(aggs)),
        filter_(std::move(filter)) {}
  // After a spill the partitions are emitted one at a time by one instance.
  bool parallel() const override { return !spilled_; }
  Result<OperatorPtr> Instantiate() override {
    if (spilled_) {
      return OperatorPtr(std::make_unique<SpilledAggregateEmitOp>(
          ctx_, schema_, std::move(partitions_), std::move(distinct_partitions_), [this] { return MakeTable(); },
          groups_.empty(), aggs_.size()));
    }
    return OperatorPtr(std::make_unique<AggregateEmitOp>(ctx_, schema_, results_, cursor_, tables_, skips_));
  }
  void Release() override {
    results_.clear();
    skips_.clear();
    tables_.clear();
    partitions_.clear();
    distinct_partitions_.clear();
  }

 protected:
  Status DoPrepare() override {
    Status st = Aggregate();
    if (!st.ok()) {
      tables_.clear();
      partitions_.clear();
      distinct_partitions_.clear();
      return NameOperator(st, "hash aggregate");
    }
    return Status::OK();
  }

 private:
  Result<std::shared_ptr<AggregateTable>> MakeTable() {
    auto t = std::make_shared<AggregateTable>(ctx_, groups_, aggs_, schema_);
    QUIVER_RETURN_NOT_OK(t->Init());
    return t;
  }

  // Writes every group of `*table` to the spill partitions and replaces
  // it with an empty table (Spark's MemoryConsumer.spill for a hash
  // aggregate: the states go out, partitioned by the group's hash).
  // Groups before `begin` are left out (already merged elsewhere).
  Status Spill(std::shared_ptr<AggregateTable>* table, int64_t begin = 0) {
    const AggregateTable& t = **table;
    std::vector<std::vector<int64_t>> ids(kSpillPartitions);
    const int64_t n = t.num_output_rows();
    for (int64_t g = begin; g < n; ++g) {
      const int p =
          groups_.empty() ? 0 : AggregateTable::PartitionOf(t.table_key(g), t.table_key_length(g), kSpillPartitions);
      ids[static_cast<size_t>(p)].push_back(g);
    }
    const SchemaPtr schema = AggregateTable::StateSchema(aggs_.size());
    std::vector<std::pair<int, SpillFile>> written;
    for (int p = 0; p < kSpillPartitions; ++p) {
      auto& part = ids[static_cast<size_t>(p)];
      if (part.empty()) continue;
      QUIVER_ASSIGN_OR_RETURN(auto w, ctx_->spill->Create(schema, "hash aggregate partition " + std::to_string(p),
                                                          ctx_->aggregate_pool.get()));
      // Small batches: exporting must fit in what is left of the memory.
      constexpr size_t kExportRows = 4096;
      for (size_t begin = 0; begin < part.size(); begin += kExportRows) {
        QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
        const size_t end = std::min(part.size(), begin + kExportRows);
        std::vector<int64_t> slice(part.begin() + static_cast<std::ptrdiff_t>(begin),
                                   part.begin() + static_cast<std::ptrdiff_t>(end));
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, t.ExportStates(slice, schema, ctx_->aggregate_pool.get()));
        QUIVER_RETURN_NOT_OK(w->Write(*b));
      }
      part.clear();
      part.shrink_to_fit();
      QUIVER_ASSIGN_OR_RETURN(SpillFile f, w->Finish());
      written.emplace_back(p, std::move(f));
    }
    // DISTINCT aggregates: their (group, value) entries, partitioned alike
    // (a table with them spills whole: begin is 0).
    std::vector<std::pair<int, SpillFile>> values_written;
    if (t.has_distinct()) {
      std::vector<std::unique_ptr<SpillWriter>> writers(kSpillPartitions);
      QUIVER_RETURN_NOT_OK(
          t.ExportDistinct(kSpillPartitions, 4096, ctx_->aggregate_pool.get(), [&](int p, RecordBatchPtr b) -> Status {
            auto& w = writers[static_cast<size_t>(p)];
            if (!w) {
              QUIVER_ASSIGN_OR_RETURN(w, ctx_->spill->Create(AggregateTable::DistinctSchema(),
                                                             "hash aggregate DISTINCT values " + std::to_string(p),
                                                             ctx_->aggregate_pool.get()));
            }
            return w->Write(*b);
          }));
      for (int p = 0; p < kSpillPartitions; ++p) {
        if (!writers[static_cast<size_t>(p)]) continue;
        QUIVER_ASSIGN_OR_RETURN(SpillFile f, writers[static_cast<size_t>(p)]->Finish());
        values_written.emplace_back(p, std::move(f));
      }
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto& [p, f] : written) partitions_[static_cast<size_t>(p)].push_back(std::move(f));
      distinct_partitions_.resize(kSpillPartitions);
      for (auto& [p, f] : values_written) distinct_partitions_[static_cast<size_t>(p)].push_back(std::move(f));
      spilled_ = true;
    }
    table->reset();  // its pages go back before the new table takes any
    QUIVER_ASSIGN_OR_RETURN(*table, MakeTable());
    return Status::OK();
  }

  // (A table with DISTINCT aggregates spills their values too.)
  bool CanSpill(const AggregateTable&) const { return ctx_->spill != nullptr; }

  Status Consume(std::shared_ptr<AggregateTable>* table, RecordBatchStream* in, const std::atomic<bool>* stop) {
    while (!stop || !stop->load(std::memory_order_relaxed)) {
      QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, in->Next());
      if (!b) break;
      if (b->num_rows == 0) continue;
      std::vector<uint8_t> keep;
      if (filter_) {
        EvalContext ev = ctx_->Eval(ctx_->scan_pool.get());
        QUIVER_ASSIGN_OR_RETURN(auto sel, EvaluateSelection(*filter_, *b, &ev));
        if (sel.empty()) continue;
        const auto n = static_cast<size_t>(b->num_rows);
        if (sel.size() * 4 >= n * 3) {
          if (sel.size() < n) {
            keep.assign(n, 0);
            for (int64_t r : sel) keep[static_cast<size_t>(r)] = 1;
          }
        } else {
          QUIVER_ASSIGN_OR_RETURN(b, TakeRows(b, sel, ctx_->scan_pool.get()));
        }
      }
      // Slices of a morsel: the arguments' computed values (Q1's decimal
      // products: 16 B a row each) stay in the core's cache, and the peak
      // halves (Q1: 7.5 -> 4.0 MiB at one thread). DISTINCT sets grow
      // while a slice's states are updated, past the point where it could
      // be consumed again: when such a table may spill, smaller slices,
      // with a spill check after each.
      const int64_t n = b->num_rows;
      const bool spilling_distinct = (*table)->has_distinct() && table_budget_bytes_ != INT64_MAX && CanSpill(**table);
      const int64_t step = spilling_distinct ? kDistinctSliceRows : kConsumeSliceRows;
      for (int64_t begin = 0; begin < n; begin += step) {
        RecordBatchPtr part = b;
        if (step < n) {
          QUIVER_ASSIGN_OR_RETURN(part, SliceBatch(b, begin, std::min(step, n - begin)));
        }
        QUIVER_RETURN_NOT_OK(ConsumeOne(table, *part, keep.empty() ? nullptr : keep.data() + begin));
      }
    }
    return Status::OK();
  }

  static constexpr int64_t kConsumeSliceRows = 8192;
  static constexpr int64_t kDistinctSliceRows = 4096;

  Status ConsumeOne(std::shared_ptr<AggregateTable>* table, const RecordBatch& b, const uint8_t* keep_rows) {
    Status st = (*table)->Consume(b, keep_rows);
    if (st.IsOutOfMemory() && !(*table)->states_started() && CanSpill(**table) && (*table)->num_output_rows() > 0) {
      // Nothing of the batch is in the states yet: spill, then again.
      QUIVER_RETURN_NOT_OK(Spill(table));
      st = (*table)->Consume(b, keep_rows);
    }
    QUIVER_RETURN_NOT_OK(st);
    // Past this table's share or the statement's reserve: spill now, so
    // the other workers and the operators above keep room.
    const bool over_share = (*table)->used_bytes() > table_budget_bytes_;
    const bool tight = ctx_->MemoryTight() && (*table)->used_bytes() > ctx_->spill_reserve_bytes / 8;
    // (One group alone gains nothing from a spill, unless it has DISTINCT
    // values to spill.)
    if ((over_share || tight) && CanSpill(**table) &&
        ((*table)->num_output_rows() > 1 || (*table)->distinct_entries() > 1))
      QUIVER_RETURN_NOT_OK(Spill(table));
    return Status::OK();
  }

  Status Aggregate() {
    partitions_.assign(kSpillPartitions, {});
    // Every worker aggregates into its own table, DISTINCT aggregates too
    // (their sets are merged value by value).
    QUIVER_RETURN_NOT_OK(child_->Prepare());
    const int degree = DegreeOf(*ctx_, *child_);
    if (ctx_->spill_reserve_bytes > 0) {
      // Each worker's table keeps to its share of the room left above the
      // reserve, so no worker starves another.
      // Half the share: a table grows by whole pages (hundreds of KiB at
      // once) between two checks, and spilling itself needs buffers.
      const int64_t room = ctx_->statement_pool->AvailableBytes() - ctx_->spill_reserve_bytes;
      table_budget_bytes_ = std::max<int64_t>(room / degree / 2, 1 << 20);
    }
    for (int w = 0; w < degree; ++w) {
      QUIVER_ASSIGN_OR_RETURN(auto t, MakeTable());
      tables_.push_back(std::move(t));
    }
    QUIVER_RETURN_NOT_OK(
        RunPipeline(ctx_, child_, [&](int worker, RecordBatchStream* in, const std::atomic<bool>& stop) {
          return Consume(&tables_[static_cast<size_t>(worker)], in, &stop);
        }));
    if (spilled_) {
      // What is still in memory joins the partitions, so each group is
      // aggregated from one partition.
      for (auto& t : tables_)
        if (t->num_output_rows() > 0) QUIVER_RETURN_NOT_OK(Spill(&t));
      tables_.clear();
      return Status::OK();
    }
    if (tables_.size() > 1 && table_budget_bytes_ != INT64_MAX) {
      // The merged table may need as much as all of them: when that does
      // not fit above the reserve, they go to the partitions instead.
      int64_t total = 0;
      for (const auto& t : tables_) total += t->used_bytes();
      if (total > ctx_->statement_pool->AvailableBytes() - ctx_->spill_reserve_bytes && CanSpill(*tables_[0])) {
        for (auto& t : tables_)
          if (t->num_output_rows() > 0) QUIVER_RETURN_NOT_OK(Spill(&t));
        tables_.clear();
        return Status::OK();
      }
    }
    if (tables_.size() > 1 && !groups_.empty() && ctx_->scheduler) {
      // Groups and DISTINCT values to merge (a few groups may hold many).
      int64_t groups = 0;
      for (const auto& t : tables_) groups += t->num_output_rows() + t->distinct_entries();
      if (groups >= kParallelMergeGroups) {
        // The in-place merge adds no group, so no DISTINCT value either.
        bool indexed = tables_.size() <= kProbeMergeTables && !tables_[0]->has_distinct();
        for (const auto& t : tables_) indexed = indexed && t->IntKeysIndexed();
        return indexed ? ProbeMerge() : ParallelMerge();
      }
    }
    for (size_t w = 1; w < tables_.size(); ++w) {
      int64_t merged = 0;
      Status st = tables_[0]->Merge(*tables_[w], &merged);
      if (st.IsOutOfMemory() && CanSpill(*tables_[0])) {
        // The merged table does not fit: it, the rest of table w and the
        // tables after it go to the partitions.
        QUIVER_RETURN_NOT_OK(Spill(&tables_[0]));
        QUIVER_RETURN_NOT_OK(Spill(&tables_[w], merged));
        for (size_t v = w + 1; v < tables_.size(); ++v) QUIVER_RETURN_NOT_OK(Spill(&tables_[v]));
        tables_.clear();
        return Status::OK();
      }
      QUIVER_RETURN_NOT_OK(st);
      // Table w's arena holds the string min / max values the merged
      // states now point to: it stays (the emitting instances keep
      // tables_ alive) when there are any. ThreadSanitizer's allocator,
      // which unmaps freed pages, caught the read of a freed arena here.
      if (!tables_[0]->has_string_min_max()) tables_[w].reset();
    }
    results_ = {tables_[0]};
    cursor_ = std::make_shared<std::atomic<int64_t>>(0);
    return Status::OK();
  }

  // Many groups under a single integer key in up to kProbeMergeTables
  // workers' tables: merged in place, without a new table. Table i's
  // groups look their key up in the IntGroupMaps of tables i+1.. and take
  // those states in; the groups so taken are marked and not emitted. Table
  // by table, each in ranges on the scheduler. Nothing is allocated but a
  // byte per group, so there is no OutOfMemory to spill on. TPC-H Q18's
  // 1.5 M l_orderkey groups split nearly disjointly between the workers
  // (lineitem is ordered by l_orderkey): one probe per group instead of a
  // re-insert into a new table.
  static constexpr size_t kProbeMergeTables = 4;
  Status ProbeMerge() {
    const size_t w_count = tables_.size();
    std::vector<std::shared_ptr<std::vector<uint8_t>>> consumed(w_count);
    for (size_t w = 0; w < w_count; ++w)
      consumed[w] = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(tables_[w]->num_output_rows()), 0);
    constexpr int64_t kRangeGroups = 1 << 15;
    for (size_t i = 0; i + 1 < w_count; ++i) {
      AggregateTable& t = *tables_[i];
      std::vector<const AggregateTable*> later;
      std::vector<uint8_t*> marks;
      for (size_t j = i + 1; j < w_count; ++j) {
        later.push_back(tables_[j].get());
        marks.push_back(consumed[j]->data());
      }
      const uint8_t* own = i == 0 ? nullptr : consumed[i]->data();
      const int64_t n = t.num_output_rows();
      const int ranges = static_cast<int>((n + kRangeGroups - 1) / kRangeGroups);
      QUIVER_RETURN_NOT_OK(ParallelFor(ctx_->scheduler.get(), ranges, [&](int r) -> Status {
        const int64_t begin = r * kRangeGroups;
        return t.ProbeMergeRange(begin, std::min(n, begin + kRangeGroups), own, later, marks);
      }));
    }
    results_.clear();
    skips_.clear();
    for (size_t w = 0; w < w_count; ++w) {
      results_.push_back(tables_[w]);
      skips_.push_back(w == 0 ? nullptr : consumed[w]);
    }
    cursor_ = std::make_shared<std::atomic<int64_t>>(0);
    return Status::OK();
  }

  // Many groups in several workers' tables: they are merged partition by
  // partition in parallel (DuckDB's radix-partitioned hash table, Velox's
  // final aggregation): each worker's groups are split by their key's hash
  // into kMergePartitions lists, then each partition's groups from every
  // worker are merged into a table of its own, on the scheduler; the
  // partitions are emitted one after the other. The workers' tables stay
  // (string min / max point into their arenas). On OutOfMemory the
  // partial partitions are dropped and the workers' tables, untouched, go
  // to the spill partitions. TPC-H Q18: 1.5 M groups merged on one thread
  // took most of what the second thread had saved.
  Status ParallelMerge() {
    constexpr int kMergePartitions = 16;
    const int w_count = static_cast<int>(tables_.size());
    std::vector<std::vector<std::vector<int64_t>>> ids(static_cast<size_t>(w_count));
    std::vector<std::vector<AggregateTable::DistinctEntries>> values(static_cast<size_t>(w_count));
    QUIVER_RETURN_NOT_OK(ParallelFor(ctx_->scheduler.get(), w_count, [&](int w) -> Status {
      const AggregateTable& t = *tables_[static_cast<size_t>(w)];
      auto& parts = ids[static_cast<size_t>(w)];
      parts.assign(kMergePartitions, {});
      const int64_t n = t.num_output_rows();
      for (int64_t g = 0; g < n; ++g)
        parts[static_cast<size_t>(AggregateTable::PartitionOf(t.table_key(g), t.table_key_length(g), kMergePartitions))]
            .push_back(g);
      if (t.has_distinct()) values[static_cast<size_t>(w)] = t.DistinctEntriesByPartition(kMergePartitions);
      return ctx_->CheckCancel();
    }));
    std::vector<std::shared_ptr<AggregateTable>> merged(kMergePartitions);
    std::atomic<bool> stop{false};
    Status st = ParallelFor(
        ctx_->scheduler.get(), kMergePartitions,
        [&](int p) -> Status {
          if (stop.load(std::memory_order_relaxed)) return Status::OK();
          QUIVER_ASSIGN_OR_RETURN(auto m, MakeTable());
          int64_t at_most = 0;  // the groups of all workers, as if disjoint
          for (int w = 0; w < w_count; ++w)
            at_most += static_cast<int64_t>(ids[static_cast<size_t>(w)][static_cast<size_t>(p)].size());
          QUIVER_RETURN_NOT_OK(m->Reserve(at_most));
          for (int w = 0; w < w_count; ++w)
            QUIVER_RETURN_NOT_OK(
                m->MergeGroups(*tables_[static_cast<size_t>(w)], ids[static_cast<size_t>(w)][static_cast<size_t>(p)]));
          // DISTINCT sets: the values of this partition's groups.
          for (int w = 0; w < w_count; ++w) {
            if (values[static_cast<size_t>(w)].empty()) continue;
            int64_t i = 0;
            for (const auto& [a, e] : values[static_cast<size_t>(w)][static_cast<size_t>(p)]) {
              QUIVER_RETURN_NOT_OK(m->MergeDistinctEntry(*tables_[static_cast<size_t>(w)], a, e));
              if ((++i & 4095) == 0) QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
            }
          }
          merged[static_cast<size_t>(p)] = std::move(m);
          return Status::OK();
        },
        &stop);
    ids.clear();
    values.clear();
    if (st.IsOutOfMemory() && CanSpill(*tables_[0])) {
      merged.clear();
      for (auto& t : tables_)
        if (t->num_output_rows() > 0) QUIVER_RETURN_NOT_OK(Spill(&t));
      tables_.clear();
      return Status::OK();
    }
    QUIVER_RETURN_NOT_OK(st);
    results_.clear();
    for (auto& m : merged)
      if (m && m->num_output_rows() > 0) results_.push_back(std::move(m));
    cursor_ = std::make_shared<std::atomic<int64_t>>(0);
    return Status::OK();
  }

  NodePtr child_;
  std::vector<ExprPtr> groups_;
  std::vector<AggregateCall> aggs_;
  ExprPtr filter_;                                       // rows of the child to aggregate (null: all)
  std::vector<std::shared_ptr<AggregateTable>> tables_;  // kept: string min / max point into their arenas
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

}  // namespace

Result<NodePtr> MakeHashAggregateNode(ExecContext* ctx, NodePtr child, std::vector<ExprPtr> groups,
                                      std::vector<AggregateCall> aggregates, SchemaPtr schema, ExprPtr filter) {
  return NodePtr(std::make_shared<HashAggregateNode>(ctx, std::move(child), std::move(groups), std::move(aggregates),
                                                     std::move(schema), std::move(filter)));
}

}  // namespace quiver::sql

// quiver/sql/execution/aggregate_table.cc — the hash aggregate's group
// states: a table's construction, Consume (phase 1, numbering the groups,
// is in aggregate_keys.cc; phase 2 here updates each aggregate's
// per-group state in a typed loop) and EmitRange, which turns the keys
// and states into output rows.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quiver/sql/execution/aggregate_table.h"

namespace quiver::sql {

AggregateTable::AggregateTable(ExecContext* ctx, std::vector<ExprPtr> groups, std::vector<AggregateCall> aggs,
                               SchemaPtr schema)
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
    states_.emplace_back(std::make_unique<PagedArray<AggregateState>>(this));
    distinct_.emplace_back(aggs_[a].distinct ? std::make_unique<GroupTable>(this) : nullptr);
  }
}

Status AggregateTable::Init() {
  if (groups_.empty()) return NewGroup();
  return Status::OK();
}

namespace {

// Adds each row's 1 to its group's count (rows with gid < 0 skipped when
// `skip`), without a branch per row: a skipped row adds 0 to group 0.
void CountRows(const std::vector<int64_t>& gid, int64_t n, bool skip, PagedArray<AggregateState>* st) {
  if (!skip) {
    for (int64_t r = 0; r < n; ++r) ++(*st)[gid[static_cast<size_t>(r)]].count;
    return;
  }
  if (st->size() == 0) return;  // no group yet: every row was skipped
  for (int64_t r = 0; r < n; ++r) {
    const int64_t g = gid[static_cast<size_t>(r)];
    const int64_t live = g >= 0;
    (*st)[g & -live].count += live;
  }
}

// The low 64 bits of value r of a decimal column of kWidth bytes a value;
// for 16 bytes, sets bits of `*wide` when the value does not fit them.
template <int kWidth>
[[gnu::always_inline]] inline int64_t LowWord(const uint8_t* d, int64_t r, uint64_t* wide) {
  int64_t lo;
  std::memcpy(&lo, d + r * kWidth, 8);
  if constexpr (kWidth == 16) {
    int64_t hi;
    std::memcpy(&hi, d + r * 16 + 8, 8);
    *wide |= static_cast<uint64_t>(hi ^ (lo >> 63));
  }
  return lo;
}

}  // namespace

template <int kWidth>
bool AggregateTable::SumFewGroups(const uint8_t* d, const std::vector<int64_t>& gid, int64_t n, bool skip,
                                  FewGroupSums* out) const {
  if (groups_.empty() && !skip) {
    // One group and every row (a global sum without a filter): no group
    // ids to read and no counts to keep, four lanes in turn.
    int64_t lane[4] = {};
    uint64_t wide = 0;
    bool overflow = false;
    int64_t r = 0;
    for (; r + 4 <= n; r += 4) {
      for (int k = 0; k < 4; ++k)
        overflow |= __builtin_add_overflow(lane[k], LowWord<kWidth>(d, r + k, &wide), &lane[k]);
    }
    for (; r < n; ++r) overflow |= __builtin_add_overflow(lane[0], LowWord<kWidth>(d, r, &wide), &lane[0]);
    if (wide != 0 || overflow) return false;
    out->groups = 1;
    out->sum[0] = static_cast<i128>(lane[0]) + lane[1] + lane[2] + lane[3];
    out->count[0] = n;
    return true;
  }
  const int64_t groups = groups_.empty() ? 1 : table_.num_groups();
  if (groups > kLocalGroups) return false;
  int64_t acc[4][kLocalGroups] = {};
  int64_t cnt[4][kLocalGroups] = {};
  uint64_t wide = 0;
  bool overflow = false;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t g = gid[static_cast<size_t>(r)];
    // A skipped row (g < 0) adds 0 to group 0's lanes, without a branch: a
    // filter keeping a fifth of the rows at random (TPC-DS Q9) mispredicted
    // a branch on every other row.
    const int64_t live = skip ? static_cast<int64_t>(g >= 0) : 1;
    const int64_t at = g & -live;
    uint64_t w = 0;
    const int64_t lo = LowWord<kWidth>(d, r, &w) & -live;
    wide |= w & static_cast<uint64_t>(-live);
    overflow |= __builtin_add_overflow(acc[r & 3][at], lo, &acc[r & 3][at]);
    cnt[r & 3][at] += live;
  }
  if (wide != 0 || overflow) return false;
  out->groups = groups;
  for (int64_t g = 0; g < groups; ++g) {
    out->sum[g] = static_cast<i128>(acc[0][g]) + acc[1][g] + acc[2][g] + acc[3][g];
    out->count[g] = cnt[0][g] + cnt[1][g] + cnt[2][g] + cnt[3][g];
  }
  return true;
}

bool AggregateTable::AddFewGroupSums(const FewGroupSums& b, PagedArray<AggregateState>* states) {
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t g = 0; g < b.groups; ++g) {
      if (b.count[g] == 0) continue;
      AggregateState& s = (*states)[g];
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

Status AggregateTable::Consume(const RecordBatch& batch, const uint8_t* keep) {
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
  if (!groups_.empty()) QUIVER_RETURN_NOT_OK(NumberGroups(keys, n, keep, &gid));
  std::vector<ListBatch> lists;  // per list aggregate (phase 1's ordering)
  // String min / max copy values into the arena in phase 2: room for
  // every value of the batch is taken now, while a failure still lets
  // the caller spill and consume the batch again.
  {
    // (A constant is stored once per group that takes it; any_value and
    // first store only into groups without a value yet.)
    int64_t string_bytes = 0;
    for (size_t a = 0; a < aggs_.size(); ++a) {
      const AggregateCall& call = aggs_[a];
      if (call.distinct || !HoldsStringValue(call)) continue;
      QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(*call.arg, batch, &ev));
      const bool once = call.fn == AggFn::kAnyValue || call.fn == AggFn::kFirst;
      const bool is_min = call.fn == AggFn::kMin, is_max = call.fn == AggFn::kMax;
      const PagedArray<AggregateState>& st = *states_[a];
      for (int64_t r = 0; r < n; ++r) {
        const int64_t g = gid[static_cast<size_t>(r)];
        if (g < 0 || v.IsNull(r) || (once && st[g].count > 0)) continue;
        const std::string_view x = v.StringAt(r);
        if ((is_min || is_max) && st[g].count > 0) {
          // min / max store a value only where it beats the group's value
          // then, so also the one before the batch (room for every row
          // took a fresh page per batch and wasted most of it).
          const AggregateState& cur = st[g];
          const std::string_view cv(reinterpret_cast<const char*>(static_cast<uintptr_t>(cur.i)), cur.len);
          if (is_min ? !(x < cv) : !(x > cv)) continue;
        }
        string_bytes += static_cast<int64_t>(x.size());
      }
    }
    // List aggregates (percentiles): their values' chunks too, in the
    // same room (one EnsureFree: a second could take a new page).
    for (size_t a = 0; a < aggs_.size(); ++a) {
      if (aggs_[a].distinct || !IsListFn(aggs_[a].fn)) continue;
      if (lists.empty()) lists.resize(aggs_.size());
      QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(*aggs_[a].arg, batch, &ev));
      QUIVER_RETURN_NOT_OK(PrepareList(a, std::move(v), gid, n, &lists[a]));
      string_bytes += static_cast<int64_t>(lists[a].growth_bytes);
    }
    if (string_bytes > 0) QUIVER_RETURN_NOT_OK(arena_.EnsureFree(static_cast<size_t>(string_bytes)));
  }
  states_started_ = true;
  FewGroupSums few;
  Vec few_arg;
  for (size_t a = 0; a < aggs_.size(); ++a) {
    const AggregateCall& call = aggs_[a];
    PagedArray<AggregateState>& st = *states_[a];
    if (call.fn == AggFn::kCountStar) {
      CountRows(gid, n, skip, &st);
      continue;
    }
    if (!call.distinct && IsListFn(call.fn)) {
      QUIVER_RETURN_NOT_OK(AppendList(a, lists[a]));
      continue;
    }
    QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(*call.arg, batch, &ev));
    const TypeClass cls = ClassOf(*v.type());
    if (!call.distinct && !v.constant && !v.MayHaveNulls() &&
        (call.fn == AggFn::kSum || call.fn == AggFn::kAvg || call.fn == AggFn::kCount)) {
      // Typed loops without per-row dispatch.
      const TypeId id = v.type()->id;
      if (call.fn == AggFn::kCount) {
        CountRows(gid, n, skip, &st);
        continue;
      }
      if (id == TypeId::kDecimal) {
        // decimal64 (8 bytes a value) or decimal128 (16).
        const bool narrow = IsDecimal64(*v.type());
        const int64_t width = narrow ? 8 : 16;
        const uint8_t* d = v.array->buffers[1]->data() + v.array->offset * width;
        // sum(x) and avg(x) of one column (Q1: two pairs) sum it once.
        // (few_arg holds the summed column, so its address stays its own.)
        if (few_arg.array != v.array &&
            (narrow ? SumFewGroups<8>(d, gid, n, skip, &few) : SumFewGroups<16>(d, gid, n, skip, &few)))
          few_arg = v;
        if (few_arg.array == v.array && AddFewGroupSums(few, &st)) continue;
        for (int64_t r = 0; r < n; ++r) {
          const int64_t g = gid[static_cast<size_t>(r)];
          if (skip && g < 0) continue;
          AggregateState& s = st[g];
          i128 x;
          if (narrow) {
            int64_t x64;
            std::memcpy(&x64, d + r * 8, 8);
            x = x64;
          } else {
            std::memcpy(&x, d + r * 16, 16);
          }
          if (__builtin_add_overflow(s.i, x, &s.i)) return NumericOverflow("sum() passed 128 bits");
          ++s.count;
        }
        continue;
      }
      if (id == TypeId::kInt64 || id == TypeId::kInt32) {
        for (int64_t r = 0; r < n; ++r) {
          const int64_t g = gid[static_cast<size_t>(r)];
          if (skip && g < 0) continue;
          AggregateState& s = st[g];
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
          AggregateState& s = st[g];
          s.f += d[r];
          ++s.count;
        }
        continue;
      }
    }
    std::string dkey;
    const bool takes_nulls = TakesNulls(call);
    for (int64_t r = 0; r < n; ++r) {
      const int64_t g = gid[static_cast<size_t>(r)];
      if (g < 0) continue;
      if (v.IsNull(r)) {
        if (takes_nulls) {
          // first() / last() respecting NULLs: a NULL is a value too.
          AggregateState& s = st[g];
          if (call.fn == AggFn::kLast || s.count == 0) s.flags = kPickedNull;
          ++s.count;
        }
        continue;
      }
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

Result<RecordBatchPtr> AggregateTable::EmitRange(int64_t begin, int64_t n, const uint8_t* skip) const {
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
    fixed_layout = fixed_layout && FixedKeyWidth(*schema_->fields[k]->type) > 0;
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
    const auto width = static_cast<size_t>(FixedKeyWidth(*t));
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
  std::vector<int64_t> list_ids;  // the groups, for list aggregates
  for (size_t a = 0; a < aggs_.size(); ++a) {
    const AggregateCall& call = aggs_[a];
    if (IsListFn(call.fn)) {
      if (list_ids.empty())
        for (int64_t g = 0; g < n; ++g) list_ids.push_back(row(g));
      QUIVER_ASSIGN_OR_RETURN(auto arr, EmitList(a, list_ids, pool));
      cols.push_back(arr);
      continue;
    }
    const DataTypePtr& t = call.type;
    const PagedArray<AggregateState>& st = *states_[a];
    const TypeClass arg_cls = call.arg ? ClassOf(*call.arg->type) : TypeClass::kInt;
    if (ClassOf(*t) == TypeClass::kString) {
      QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(n, n * 8, pool));
      for (int64_t g = 0; g < n; ++g) {
        const AggregateState& s = st[row(g)];
        if (s.count == 0 || (s.flags & kPickedNull)) {
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
      const AggregateState& s = st[row(g)];
      if (call.fn == AggFn::kCount || call.fn == AggFn::kCountStar || call.fn == AggFn::kCountIf) {
        b.values<int64_t>()[g] = s.count;
        continue;
      }
      if (call.fn == AggFn::kApproxCountDistinct) {
        b.values<int64_t>()[g] = s.count == 0 ? 0 : hll::Estimate(HllRegisters(s), call.hll_precision);
        continue;
      }
      if (s.count == 0 || (s.flags & kPickedNull)) {
        QUIVER_RETURN_NOT_OK(b.SetNull(g));
        continue;
      }
      if (IsVarianceFn(call.fn)) {
        if (!VarianceResult(call.fn, s.count, s.m2, &b.values<double>()[g])) QUIVER_RETURN_NOT_OK(b.SetNull(g));
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
      QUIVER_RETURN_NOT_OK(VisitSqlStorage(
          *t,
          [&]<typename T>() -> Status {
            if constexpr (kIsPackedBit<T>) {
              bit_util::SetBitTo(b.bits(), g, s.i != 0);
            } else if constexpr (std::is_floating_point_v<T>) {
              b.values<T>()[g] = s.f;
            } else if constexpr (std::is_same_v<T, i128>) {
              const i128 lim = MaxUnscaled(t->precision);
              if (s.i > lim || s.i < -lim) return NumericOverflow("sum() does not fit " + SqlTypeName(*t));
              std::memcpy(b.values<uint8_t>() + g * 16, &s.i, 16);
            } else if constexpr (std::is_same_v<T, int64_t>) {
              if (s.i > INT64_MAX || s.i < INT64_MIN) return NumericOverflow("sum() does not fit BIGINT");
              b.values<T>()[g] = static_cast<T>(s.i);
            } else {
              b.values<T>()[g] = static_cast<T>(s.i);
            }
            return Status::OK();
          },
          [&] { return Status::NotImplemented("aggregate result of type " + t->ToString()); }));
    }
    cols.push_back(b.Finish());
  }
  return MakeBatch(schema_, n, std::move(cols));
}

}  // namespace quiver::sql

// quiver/sql/execution/aggregate_merge.cc — partial to final: the workers'
// tables of a parallel aggregation merged into one. Few groups: into the
// first table (Merge). Many groups in a few tables: in place, each group
// probing the later tables' IntGroupMaps or GroupTables (ProbeMerge).
// Else partition by partition on the scheduler, each into a fresh table
// (ParallelMerge, DuckDB's radix-partitioned hash table).
#include <algorithm>
#include <atomic>

#include "quiver/sql/execution/aggregate_table.h"
#include "quiver/sql/execution/hash_aggregate_node.h"
#include "quiver/sql/execution/task_scheduler.h"

namespace quiver::sql {

Status AggregateTable::MergeOne(size_t a, const AggregateState& o, int64_t g) {
  const AggregateCall& call = aggs_[a];
  AggregateState& s = (*states_[a])[g];
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
    case AggFn::kVarSamp:
    case AggFn::kVarPop:
    case AggFn::kStddevSamp:
    case AggFn::kStddevPop: {
      int64_t count = s.count;
      ChanMerge(o.count, o.f, o.m2, &count, &s.f, &s.m2);
      break;  // (count added below)
    }
    case AggFn::kCountIf: break;
    case AggFn::kBoolAnd:
    case AggFn::kBoolOr:
      s.i = s.count == 0 ? o.i : call.fn == AggFn::kBoolAnd ? (s.i != 0 && o.i != 0) : (s.i != 0 || o.i != 0);
      break;
    case AggFn::kPercentileCont:
    case AggFn::kPercentileDisc:
    case AggFn::kStringAgg: ListLink(&s, o); break;
    case AggFn::kApproxCountDistinct: hll::Merge(HllRegisters(s), HllRegisters(o), call.hll_precision); break;
    case AggFn::kAnyValue:
    case AggFn::kFirst:
    case AggFn::kLast:
      // This table's rows come first (workers' tables in order: the
      // result is one of the rows' values, as Spark's and DuckDB's).
      if (s.count == 0 || call.fn == AggFn::kLast) {
        s.i = o.i;
        s.f = o.f;
        s.len = o.len;
        s.flags = o.flags;
      }
      break;
  }
  s.count += o.count;
  return Status::OK();
}

Status AggregateTable::ProbeMergeRange(int64_t begin, int64_t end, const uint8_t* own,
                                       const std::vector<const AggregateTable*>& later,
                                       const std::vector<uint8_t*>& consumed) {
  // Per later table: searched through its IntGroupMap (a word from the
  // key) or its GroupTable (the key's hash, kept by this table's index).
  std::vector<uint8_t> by_map(later.size());
  bool hashes = false;
  for (size_t j = 0; j < later.size(); ++j) {
    by_map[j] = later[j]->KeysIndexed();
    hashes = hashes || !by_map[j];
  }
  constexpr int64_t kAhead = 8;
  for (int64_t g = begin; g < end; ++g) {
    if (g + kAhead < end) {
      const uint8_t* ahead = table_.key(g + kAhead);
      const uint32_t ahead_len = table_.key_length(g + kAhead);
      const uint64_t ahead_hash = hashes ? table_.hash(g + kAhead) : 0;
      for (size_t j = 0; j < later.size(); ++j) {
        uint64_t word;
        if (!by_map[j]) {
          later[j]->table_.PrefetchSlot(ahead_hash);
        } else if (later[j]->MapKeyOf(ahead, ahead_len, &word)) {
          later[j]->int_map_.Prefetch(word);
        }
      }
    }
    if (own != nullptr && own[g]) continue;
    const uint8_t* key = table_.key(g);
    const uint32_t len = table_.key_length(g);
    const uint64_t hash = hashes ? table_.hash(g) : 0;
    for (size_t j = 0; j < later.size(); ++j) {
      const int64_t o = later[j]->FindEncoded(key, len, hash);
      if (o < 0) continue;
      for (size_t a = 0; a < aggs_.size(); ++a) QUIVER_RETURN_NOT_OK(MergeOne(a, (*later[j]->states_[a])[o], g));
      consumed[j][o] = 1;
    }
    if (((g - begin) & 4095) == 4095) QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
  }
  return Status::OK();
}

Status AggregateTable::Reserve(int64_t groups) {
  if (groups_.empty()) return Status::OK();
  if (int_key_width_ > 0 && int_map_.size() == table_.num_groups()) return int_map_.Reserve(groups);
  return table_.Reserve(groups);
}

Status AggregateTable::MergeGroup(const AggregateTable& other, int64_t og) {
  int64_t g = 0;
  if (!groups_.empty()) QUIVER_RETURN_NOT_OK(GroupOfEncoded(other.table_.key(og), other.table_.key_length(og), &g));
  for (size_t a = 0; a < aggs_.size(); ++a)
    if (!aggs_[a].distinct) QUIVER_RETURN_NOT_OK(MergeOne(a, (*other.states_[a])[og], g));
  return Status::OK();
}

Status AggregateTable::MergeGroups(const AggregateTable& other, const std::vector<int64_t>& ids) {
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

Status AggregateTable::Merge(const AggregateTable& other, int64_t* merged) {
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

Status HashAggregateNode::ProbeMerge() {
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

Status HashAggregateNode::ParallelMerge() {
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

}  // namespace quiver::sql

// quiver/sql/execution/aggregate_spill.cc — the hash aggregate's spill
// path. Past its share of the memory a table spills (HashAggregateNode::
// Spill, Spark's MemoryConsumer.spill): its groups' states (ExportStates),
// and the (group, value) entries of its DISTINCT aggregates, go to
// kSpillPartitions partitions by the group's hash; at the end each
// partition is merged into a fresh table on its own (MergeStates, a
// DISTINCT state rebuilt from its values) and emitted
// (SpilledAggregateEmitOp).
#include <algorithm>
#include <cstring>
#include <mutex>

#include "quiver/memory/buffer.h"
#include "quiver/sql/execution/aggregate_table.h"
#include "quiver/sql/execution/hash_aggregate_node.h"
#include "quiver/sql/execution/spill.h"

namespace quiver::sql {

SchemaPtr AggregateTable::StateSchema(size_t num_aggs) {
  auto s = std::make_shared<Schema>();
  s->fields.push_back(field("key", binary(), false));
  for (size_t a = 0; a < num_aggs; ++a) {
    const std::string p = "a" + std::to_string(a) + "_";
    s->fields.push_back(field(p + "count", int64(), false));
    s->fields.push_back(field(p + "i", decimal(128, 38, 0), false));
    s->fields.push_back(field(p + "f", float64(), false));
    s->fields.push_back(field(p + "s", binary(), true));
    s->fields.push_back(field(p + "m2", float64(), false));
    s->fields.push_back(field(p + "flags", int32(), false));
  }
  return s;
}

Result<RecordBatchPtr> AggregateTable::ExportStates(const std::vector<int64_t>& ids, const SchemaPtr& schema,
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
    const PagedArray<AggregateState>& st = *states_[a];
    QUIVER_ASSIGN_OR_RETURN(auto cb, FixedBuilder::Make(int64(), n, pool));
    QUIVER_ASSIGN_OR_RETURN(auto ib, FixedBuilder::Make(decimal(128, 38, 0), n, pool));
    QUIVER_ASSIGN_OR_RETURN(auto fb, FixedBuilder::Make(float64(), n, pool));
    QUIVER_ASSIGN_OR_RETURN(auto mb, FixedBuilder::Make(float64(), n, pool));
    QUIVER_ASSIGN_OR_RETURN(auto xb, FixedBuilder::Make(int32(), n, pool));
    const bool strings = HoldsStringValue(aggs_[a]);
    const bool hll = aggs_[a].fn == AggFn::kApproxCountDistinct;  // the registers' bytes
    const size_t hll_bytes = hll ? size_t{1} << aggs_[a].hll_precision : 0;
    const bool list = IsListFn(aggs_[a].fn);  // the values' bytes (aggregate_values.h)
    const ListValueKind kind = list ? ListKindOf(aggs_[a]) : ListValueKind::kDouble;
    int64_t sbytes = 0;
    if (strings)
      for (int64_t g : ids) sbytes += st[g].count ? st[g].len : 0;
    if (hll) sbytes = n * static_cast<int64_t>(hll_bytes);
    std::shared_ptr<Buffer> scratch;  // one list's bytes, gathered (pool memory)
    if (list) {
      uint64_t most = 1;
      for (int64_t g : ids) {
        const uint64_t bytes = ListBytes(st[g], st[g].count, kind);
        sbytes += static_cast<int64_t>(bytes);
        most = std::max(most, bytes);
      }
      QUIVER_ASSIGN_OR_RETURN(scratch, Buffer::Allocate(pool, static_cast<int64_t>(most)));
      if (sbytes > INT32_MAX)
        return Status::NotImplemented("spilling " + std::to_string(sbytes) + " bytes of " + AggFnName(aggs_[a].fn) +
                                      "() values in one batch (at most 2 GiB)");
    }
    QUIVER_ASSIGN_OR_RETURN(auto sb, StringBuilder::Make(n, sbytes, pool));
    for (int64_t r = 0; r < n; ++r) {
      const AggregateState& x = st[ids[static_cast<size_t>(r)]];
      cb.values<int64_t>()[r] = x.count;
      std::memcpy(ib.values<uint8_t>() + r * 16, &x.i, 16);
      fb.values<double>()[r] = x.f;
      mb.values<double>()[r] = x.m2;
      xb.values<int32_t>()[r] = static_cast<int32_t>(x.flags);
      if (hll) {
        QUIVER_RETURN_NOT_OK(sb.Append(std::string_view(reinterpret_cast<const char*>(HllRegisters(x)), hll_bytes)));
      } else if (list && x.count > 0) {
        uint8_t* dst = scratch->mutable_data();
        ForEachListValue(x, x.count, kind, [&](const uint8_t* p, uint32_t b) {
          std::memcpy(dst, p, b);
          dst += b;
        });
        QUIVER_RETURN_NOT_OK(sb.Append(std::string_view(reinterpret_cast<const char*>(scratch->data()),
                                                        static_cast<size_t>(dst - scratch->data()))));
      } else if (strings && x.count > 0 && !(x.flags & kPickedNull)) {
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
    cols.push_back(mb.Finish());
    cols.push_back(xb.Finish());
  }
  return MakeBatch(schema, n, std::move(cols));
}

Status AggregateTable::MergeStates(const RecordBatch& b, bool distinct_states) {
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
      const size_t c = 1 + kStateColumns * a;
      AggregateState o;
      o.count = b.columns[c]->GetValues<int64_t>(1)[b.columns[c]->offset + r];
      std::memcpy(&o.i, b.columns[c + 1]->GetValues<uint8_t>(1) + (b.columns[c + 1]->offset + r) * 16, 16);
      o.f = b.columns[c + 2]->GetValues<double>(1)[b.columns[c + 2]->offset + r];
      o.m2 = b.columns[c + 4]->GetValues<double>(1)[b.columns[c + 4]->offset + r];
      o.flags = static_cast<uint32_t>(b.columns[c + 5]->GetValues<int32_t>(1)[b.columns[c + 5]->offset + r]);
      const ArrayData& sv = *b.columns[c + 3];
      const bool strings = HoldsStringValue(aggs_[a]);
      const bool valid = sv.buffers[0] == nullptr || bit_util::GetBit(sv.buffers[0]->data(), sv.offset + r);
      if (aggs_[a].fn == AggFn::kApproxCountDistinct) {
        // The registers, read in place (MergeOne takes their maxima).
        const int32_t* so = sv.GetValues<int32_t>(1) + sv.offset;
        const auto len = static_cast<size_t>(so[r + 1] - so[r]);
        if (!valid || len != size_t{1} << aggs_[a].hll_precision || sv.buffers[2] == nullptr)
          return Status::Invalid("spilled state " + std::to_string(r) + " of aggregate " + std::to_string(a) + ": " +
                                 std::to_string(len) + " bytes of HyperLogLog registers, not " +
                                 std::to_string(size_t{1} << aggs_[a].hll_precision));
        o.i = static_cast<i128>(static_cast<uint64_t>(reinterpret_cast<uintptr_t>(sv.buffers[2]->data() + so[r])));
      } else if (IsListFn(aggs_[a].fn) && o.count > 0) {
        // The values, checked, into one chunk of this table's arena.
        if (!valid)
          return Status::Invalid("spilled state " + std::to_string(r) + " of aggregate " + std::to_string(a) + ": " +
                                 std::to_string(o.count) + " values missing");
        const int32_t* so = sv.GetValues<int32_t>(1) + sv.offset;
        const auto len = static_cast<uint64_t>(so[r + 1] - so[r]);
        const uint8_t* src = sv.buffers[2] ? sv.buffers[2]->data() + so[r] : nullptr;
        QUIVER_RETURN_NOT_OK(
            CheckListBytes(ListKindOf(aggs_[a]), src, len, o.count,
                           "spilled state " + std::to_string(r) + " of aggregate " + std::to_string(a)));
        AggregateState fresh;
        QUIVER_ASSIGN_OR_RETURN(uint8_t * dst, ListExtend(&arena_, &fresh, len));
        if (len) std::memcpy(dst, src, len);
        o.i = fresh.i;
      } else if (strings && o.count > 0 && valid) {
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

namespace {

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

}  // namespace

OperatorPtr MakeSpilledAggregateEmitOp(ExecContext* ctx, SchemaPtr schema,
                                       std::vector<std::vector<SpillFile>> partitions,
                                       std::vector<std::vector<SpillFile>> distinct, MakeAggregateTable make_table,
                                       bool global, size_t num_aggs) {
  return OperatorPtr(std::make_unique<SpilledAggregateEmitOp>(
      ctx, std::move(schema), std::move(partitions), std::move(distinct), std::move(make_table), global, num_aggs));
}

Status HashAggregateNode::Spill(std::shared_ptr<AggregateTable>* table, int64_t begin) {
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

}  // namespace quiver::sql

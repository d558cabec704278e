// quiver/sql/execution/aggregate_distinct.cc — DISTINCT aggregates: each
// table keeps, per DISTINCT aggregate, a set of (group, value) entries (a
// GroupTable keyed by the group number and the encoded value) and updates
// the state only on a value's first occurrence. Every worker keeps its
// own sets; a merge adds each worker's values to the merged sets, a spill
// writes them out (ExportDistinct) and reads them back (MergeDistinct).
#include <algorithm>
#include <cstring>

#include "quiver/sql/execution/aggregate_table.h"

namespace quiver::sql {

Status AggregateTable::MergeDistinctEntry(const AggregateTable& other, size_t a, int64_t e) {
  const GroupTable& d = *other.distinct_[a];
  const uint8_t* dk = d.key(e);
  int64_t og;
  std::memcpy(&og, dk, 8);
  int64_t g = 0;
  if (!groups_.empty()) QUIVER_RETURN_NOT_OK(GroupOfEncoded(other.table_.key(og), other.table_.key_length(og), &g));
  return AddDistinctValue(a, g, dk + 8, d.key_length(e) - 8);
}

std::vector<AggregateTable::DistinctEntries> AggregateTable::DistinctEntriesByPartition(int num_partitions) const {
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

int64_t AggregateTable::distinct_entries() const {
  int64_t n = 0;
  for (const auto& d : distinct_) n += d ? d->num_groups() : 0;
  return n;
}

SchemaPtr AggregateTable::DistinctSchema() {
  auto s = std::make_shared<Schema>();
  s->fields.push_back(field("key", binary(), false));
  s->fields.push_back(field("aggregate", int32(), false));
  s->fields.push_back(field("value", binary(), false));
  return s;
}

Status AggregateTable::ExportDistinct(int num_partitions, int64_t batch_rows, MemoryPool* pool,
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

Status AggregateTable::MergeDistinct(const RecordBatch& b) {
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
    const auto width = static_cast<uint32_t>(FixedKeyWidth(*call.arg->type));
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

Status AggregateTable::AddDistinctValue(size_t a, int64_t g, const uint8_t* val, uint32_t len) {
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
  // The value's bytes after its validity byte, as EncodeValue wrote them.
  auto exact = [&]() -> i128 {
    return VisitSqlStorage(
        *call.arg->type,
        [&]<typename T>() -> i128 {
          if constexpr (kIsPackedBit<T>) {
            return val[1] != 0;
          } else if constexpr (std::is_floating_point_v<T>) {
            return bit_util::LoadLE<int64_t>(val + 1);
          } else {
            return bit_util::LoadLE<T>(val + 1);
          }
        },
        [&]() -> i128 { return bit_util::LoadLE<int64_t>(val + 1); });
  };
  // (A DOUBLE's bytes; an exact value converted, as Vec::FloatAt does:
  // var_samp(DISTINCT x) of an integer or decimal x.)
  auto flt = [&]() -> double {
    if (call.arg->type->id != TypeId::kFloat64) {
      const int scale = ScaleOf(*call.arg->type);
      return scale == 0 ? static_cast<double>(exact()) : DecimalToDouble(exact(), scale);
    }
    double x;
    std::memcpy(&x, val + 1, 8);
    return x;
  };
  auto str = [&] { return std::string_view(reinterpret_cast<const char*>(val + 5), len - 5); };
  return UpdateState(call, ClassOf(*call.arg->type), &(*states_[a])[g], exact, flt, str);
}

}  // namespace quiver::sql

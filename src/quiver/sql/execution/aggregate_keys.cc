// quiver/sql/execution/aggregate_keys.cc — the hash aggregate's group
// keys: each row's GROUP BY values encoded into bytes (a validity byte and
// the value per column; strings length-prefixed), and phase 1 of
// AggregateTable::Consume, which numbers the rows' groups through the
// GroupTable, or the IntGroupMap for one integer key, several integer
// keys packed into 64 bits (group_key_packing.h) or a few short string
// keys packed into 64 bits.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quiver/columnar/element_load.h"
#include "quiver/sql/execution/aggregate_table.h"

namespace quiver::sql {

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

int FixedKeyWidth(const DataType& type) {
  return VisitSqlStorage(
      type,
      []<typename T>() -> int {
        if constexpr (kIsPackedBit<T>) {
          return 1;
        } else {
          return static_cast<int>(sizeof(T));
        }
      },
      [] { return 0; });
}

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
  if (v.type()->id == TypeId::kUtf8) {
    const std::string_view s = v.StringAt(r);
    const uint32_t n = static_cast<uint32_t>(s.size());
    out->append(reinterpret_cast<const char*>(&n), 4);
    out->append(s);
    return;
  }
  // Fixed widths: the value's bytes (a DOUBLE's -0 as 0, its NaNs as one NaN).
  VisitSqlStorage(
      *v.type(),
      [&]<typename T>() {
        if constexpr (kIsPackedBit<T>) {
          out->push_back(v.BoolAt(r) ? '\1' : '\0');
        } else {
          T x = LoadValue<T>(v.array->buffers[1]->data(), v.Index(r) + v.array->offset);
          if constexpr (std::is_floating_point_v<T>) {
            if (x == 0) x = 0;
            if (std::isnan(x)) x = std::nan("");
          }
          out->append(reinterpret_cast<const char*>(&x), sizeof(T));
        }
      },
      [] {});
}

Status AggregateTable::NumberGroups(const std::vector<Vec>& keys, int64_t n, const uint8_t* keep,
                                    std::vector<int64_t>* gid_out) {
  std::vector<int64_t>& gid = *gid_out;
  const bool skip = keep != nullptr;
  // Fixed-width keys are encoded column by column into one buffer of
  // rows x width bytes (typed loops); strings row by row.
  int64_t width = 0;
  bool fixed = true;
  std::vector<int> widths;
  for (const auto& k : keys) {
    const int w = FixedKeyWidth(*k.type());
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
        const int64_t ahead = k0 == TypeId::kInt64 ? k.Values<int64_t>()[r + kAhead] : k.Values<int32_t>()[r + kAhead];
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
            static_cast<uint64_t>(key), [&] { return NewGroupOf(enc, static_cast<uint32_t>(1 + w)); }, &g, &inserted));
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
  } else if (fixed && GroupKeyPacking::TypesPack(keys) && packing_.Pack(keys, n, &packed_)) {
    // Several integer keys packed into 64 bits (group_key_packing.h):
    // known groups from the IntGroupMap with one probe; a new group's key
    // is encoded (the fixed layout below) only for the GroupTable.
    // While the map holds every group of the table, a key it lacks is new.
    std::vector<uint8_t> enc(static_cast<size_t>(width));
    std::string one;
    auto encode = [&](int64_t r) {
      uint8_t* dst = enc.data();
      for (size_t c = 0; c < keys.size(); ++c) {
        one.clear();
        EncodeValue(keys[c], r, &one);
        std::memset(dst, 0, static_cast<size_t>(1 + widths[c]));
        std::memcpy(dst, one.data(), one.size());
        dst += 1 + widths[c];
      }
      return enc.data();
    };
    const bool complete = int_map_.size() == table_.num_groups();
    const uint64_t* packed = packed_.data();
    constexpr int64_t kAhead = 8;  // rows ahead whose map slot is prefetched
    for (int64_t r = 0; r < n; ++r) {
      if (r + kAhead < n) int_map_.Prefetch(packed[r + kAhead]);
      if (skip && !keep[r]) continue;
      const uint64_t key = packed[r];
      if (r > 0 && gid[static_cast<size_t>(r) - 1] >= 0 && key == packed[r - 1]) {
        gid[static_cast<size_t>(r)] = gid[static_cast<size_t>(r) - 1];
        continue;
      }
      int64_t g;
      if (complete) {
        bool inserted;
        QUIVER_RETURN_NOT_OK(int_map_.FindOrInsert(
            key, [&] { return NewGroupOf(encode(r), static_cast<uint32_t>(width)); }, &g, &inserted));
      } else {
        g = int_map_.Find(key);
        if (g < 0) {
          const uint8_t* p = encode(r);
          bool inserted;
          QUIVER_RETURN_NOT_OK(table_.FindOrInsert(p, static_cast<uint32_t>(width),
                                                   HashBytes(p, static_cast<size_t>(width)), &g, &inserted));
          if (inserted) QUIVER_RETURN_NOT_OK(NewGroup());
          QUIVER_RETURN_NOT_OK(int_map_.Insert(key, g));
        }
      }
      gid[static_cast<size_t>(r)] = g;
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
      if (r > 0 && gid[static_cast<size_t>(r) - 1] >= 0 && std::memcmp(p, p - width, static_cast<size_t>(width)) == 0) {
        gid[static_cast<size_t>(r)] = gid[static_cast<size_t>(r) - 1];  // same key as the row before
        continue;
      }
      bool inserted;
      QUIVER_RETURN_NOT_OK(table_.FindOrInsert(p, static_cast<uint32_t>(width),
                                               HashBytes(p, static_cast<size_t>(width)), &gid[static_cast<size_t>(r)],
                                               &inserted));
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
        const auto prev = static_cast<size_t>(offsets[static_cast<size_t>(r)] - offsets[static_cast<size_t>(r) - 1]);
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
  return Status::OK();
}

Status AggregateTable::AddEmptyGroup(const std::vector<ExprPtr>& keys) {
  if (groups_.empty() || keys.size() != groups_.size())
    return Status::Invalid("an empty group's key has " + std::to_string(keys.size()) + " values, the GROUP BY " +
                           std::to_string(groups_.size()));
  RecordBatch one;  // constants read no column
  one.schema = schema_;
  one.num_rows = 1;
  EvalContext ev = ctx_->Eval(ctx_->aggregate_pool.get());
  std::vector<Vec> vecs;
  for (size_t k = 0; k < keys.size(); ++k) {
    QUIVER_ASSIGN_OR_RETURN(Vec v, Evaluate(*keys[k], one, &ev));
    if (!v.type()->Equals(*groups_[k]->type))
      return Status::Invalid("an empty group's key " + std::to_string(k) + " is " + v.type()->ToString() +
                             ", its GROUP BY expression " + groups_[k]->type->ToString());
    vecs.push_back(std::move(v));
  }
  std::vector<int64_t> gid(1, 0);
  return NumberGroups(vecs, 1, nullptr, &gid);
}

}  // namespace quiver::sql

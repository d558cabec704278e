// quiver/join/row_format.cc — see row_format.h.
#include "quiver/join/row_format.h"

#include <algorithm>
#include <limits>

#include "quiver/base/bit_util.h"
#include "quiver/base/checked_math.h"
#include "quiver/columnar/take.h"
#include "quiver/columnar/var_width_output.h"

namespace quiver::join {
namespace {

int32_t SlotAlignment(int32_t width) {
  if (width <= 0) return 1;
  int32_t a = width & -width;  // lowest set bit
  return std::min(a, 8);
}

template <int W>
inline void CopyFixed(uint8_t* dst, const uint8_t* src) {
  std::memcpy(dst, src, W);
}

inline void CopyWidth(uint8_t* dst, const uint8_t* src, int32_t w) {
  switch (w) {
    case 1: CopyFixed<1>(dst, src); break;
    case 2: CopyFixed<2>(dst, src); break;
    case 4: CopyFixed<4>(dst, src); break;
    case 8: CopyFixed<8>(dst, src); break;
    case 16: CopyFixed<16>(dst, src); break;
    default: std::memcpy(dst, src, static_cast<size_t>(w)); break;
  }
}

inline int64_t LoadOffset(const uint8_t* offsets, bool large, int64_t i) {
  if (large) {
    int64_t v;
    std::memcpy(&v, offsets + i * 8, 8);
    return v;
  }
  int32_t v;
  std::memcpy(&v, offsets + i * 4, 4);
  return v;
}

Result<std::shared_ptr<Buffer>> AllocateBitmap(MemoryPool* pool, int64_t n) {
  QUIVER_ASSIGN_OR_RETURN(auto buf, Buffer::Allocate(pool, std::max<int64_t>(1, bit_util::BytesForBits(n))));
  std::memset(buf->mutable_data(), 0, static_cast<size_t>(buf->size()));
  return buf;
}

std::shared_ptr<ArrayData> NewArray(const DataTypePtr& type, int64_t n) {
  auto a = std::make_shared<ArrayData>();
  a->type = type;
  a->length = n;
  return a;
}

}  // namespace

Status FieldKindOf(const DataType& type, const std::string& what, FieldKind* kind, int32_t* width) {
  // Rows hold what columnar gathers can produce (Take's types).
  int32_t value_width = 0;
  switch (GatherKindOf(type, &value_width)) {
    case GatherKind::kNull:
      *kind = FieldKind::kNull;
      *width = 0;
      return Status::OK();
    case GatherKind::kBool:
      *kind = FieldKind::kBool;
      *width = 1;
      return Status::OK();
    case GatherKind::kFixed:
      *kind = FieldKind::kFixed;
      *width = value_width;
      return Status::OK();
    case GatherKind::kVar32:
      *kind = FieldKind::kVar32;
      *width = 8;
      return Status::OK();
    case GatherKind::kVar64:
      *kind = FieldKind::kVar64;
      *width = 8;
      return Status::OK();
    case GatherKind::kUnsupported: break;
  }
  return Status::NotImplemented(what + " has type " + type.ToString() +
                                ", which the join cannot carry (supported: null, bool, "
                                "fixed-width, binary, utf8, large_binary, large_utf8)");
}

// ----------------------------------------------------------------- layout --

Result<RowLayout> RowLayout::Make(const Schema& schema, const std::vector<int>& columns, RowLayoutOptions options) {
  RowLayout l;
  l.options_ = options;
  std::vector<bool> seen(schema.fields.size(), false);
  for (int c : columns) {
    if (c < 0 || c >= schema.num_fields()) {
      return Status::Invalid("column index " + std::to_string(c) + " is out of range (schema has " +
                             std::to_string(schema.num_fields()) + " fields)");
    }
    if (seen[c]) return Status::Invalid("column index " + std::to_string(c) + " is listed twice");
    seen[c] = true;
    const Field& f = *schema.fields[c];
    RowField rf;
    rf.column = c;
    rf.name = f.name;
    rf.type = f.type;
    rf.nullable = f.nullable;
    QUIVER_RETURN_NOT_OK(FieldKindOf(*f.type, "column '" + f.name + "'", &rf.kind, &rf.width));
    l.fields_.push_back(std::move(rf));
  }
  int32_t off = 8;  // next
  if (options.with_ordinal) off += 8;
  if (options.with_int64_key) {
    l.int64_key_offset_ = off;
    off += 8;
  }
  if (options.with_validity && !l.fields_.empty()) {
    l.validity_offset_ = off;
    off += static_cast<int32_t>((l.fields_.size() + 63) / 64 * 8);
  } else {
    l.options_.with_validity = false;
  }
  if (options.with_key_bytes) {
    l.key_slot_offset_ = off;
    off += 8;
    l.has_var_ = true;
  }
  // Slots by decreasing alignment: no padding between them.
  std::vector<int> order(l.fields_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return SlotAlignment(l.fields_[a].width) > SlotAlignment(l.fields_[b].width); });
  for (int i : order) {
    l.fields_[i].slot_offset = off;
    off += l.fields_[i].width;
  }
  for (size_t i = 0; i < l.fields_.size(); ++i) {
    if (l.fields_[i].kind == FieldKind::kVar32 || l.fields_[i].kind == FieldKind::kVar64) {
      l.var_fields_.push_back(static_cast<int>(i));
      l.has_var_ = true;
    }
  }
  l.fixed_bytes_ = static_cast<int32_t>(RoundUpTo8(off));
  return l;
}

int64_t RowLayout::RowSize(const uint8_t* row) const {
  if (!has_var_) return fixed_bytes_;
  int64_t end = fixed_bytes_;
  auto visit = [&](int32_t slot) {
    uint32_t o, n;
    std::memcpy(&o, row + slot, 4);
    std::memcpy(&n, row + slot + 4, 4);
    end = std::max<int64_t>(end, int64_t{o} + n);
  };
  if (key_slot_offset_ >= 0) visit(key_slot_offset_);
  for (int f : var_fields_) visit(fields_[f].slot_offset);
  return RoundUpTo8(end);
}

std::string RowLayout::Describe() const {
  std::string s = "row:";
  s += options_.with_ordinal ? "o" : "-";
  s += options_.with_validity ? "v" : "-";
  s += options_.with_key_bytes ? "k" : "-";
  s += options_.with_int64_key ? "i" : "-";
  s += ";fixed=";
  s += std::to_string(fixed_bytes_);
  for (const auto& f : fields_) {
    s += ';';
    s += std::to_string(f.column);
    s += ':';
    s += f.type->ToString();
    s += '@';
    s += std::to_string(f.slot_offset);
    s += '/';
    s += std::to_string(f.width);
  }
  return s;
}

// ----------------------------------------------------------------- writer --

Result<RowSource> RowSource::Make(const RowLayout& layout, const RecordBatch& batch) {
  RowSource s;
  s.layout_ = &layout;
  for (const auto& f : layout.fields()) {
    if (f.column >= static_cast<int>(batch.columns.size())) {
      return Status::Invalid("batch has " + std::to_string(batch.columns.size()) +
                             " columns, the relation stores column " + std::to_string(f.column));
    }
    const ArrayData& a = *batch.columns[f.column];
    if (!a.type->Equals(*f.type)) {
      return Status::Invalid("column '" + f.name + "' has type " + a.type->ToString() + " in this batch, " +
                             f.type->ToString() + " in the relation");
    }
    Column c;
    c.array = &a;
    c.offset = a.offset;
    if (f.kind != FieldKind::kNull) {
      if (a.null_count != 0 && a.buffers.size() > 0 && a.buffers[0]) {
        c.validity = a.buffers[0]->data();
        s.any_nulls_ = true;
      }
      c.values = a.buffers.size() > 1 && a.buffers[1] ? a.buffers[1]->data() : nullptr;
      if (f.kind == FieldKind::kVar32 || f.kind == FieldKind::kVar64) {
        c.data = a.buffers.size() > 2 && a.buffers[2] ? a.buffers[2]->data() : nullptr;
      }
    } else if (a.length > 0) {
      s.any_nulls_ = true;
    }
    s.columns_.push_back(c);
  }
  return s;
}

int64_t RowSource::VarBytes(int64_t i) const {
  int64_t total = 0;
  for (int fi : layout_->var_fields()) {
    const auto& f = layout_->fields()[fi];
    const Column& c = columns_[fi];
    const bool large = f.kind == FieldKind::kVar64;
    const int64_t p = c.offset + i;
    if (c.validity && !bit_util::GetBit(c.validity, p)) continue;
    total += LoadOffset(c.values, large, p + 1) - LoadOffset(c.values, large, p);
  }
  return RoundUpTo8(total);
}

void RowSource::Write(int64_t begin, int64_t n, uint8_t* const* rows, const int64_t* var_start) const {
  const RowLayout& l = *layout_;
  if (l.options().with_validity) {
    const int32_t vbytes = static_cast<int32_t>((l.fields().size() + 63) / 64 * 8);
    const int32_t voff = l.validity_offset();
    for (int64_t j = 0; j < n; ++j) {
      if (rows[j]) std::memset(rows[j] + voff, 0, static_cast<size_t>(vbytes));
    }
  }
  std::vector<int64_t> cursor;
  if (!l.var_fields().empty()) cursor.assign(var_start, var_start + n);
  for (size_t fi = 0; fi < l.fields().size(); ++fi) {
    const RowField& f = l.fields()[fi];
    const Column& c = columns_[fi];
    const int32_t slot = f.slot_offset;
    if (l.options().with_validity && f.kind != FieldKind::kNull) {
      const int32_t byte = l.validity_offset() + static_cast<int32_t>(fi >> 3);
      const uint8_t bit = static_cast<uint8_t>(1u << (fi & 7));
      for (int64_t j = 0; j < n; ++j) {
        if (!rows[j]) continue;
        if (!c.validity || bit_util::GetBit(c.validity, c.offset + begin + j)) rows[j][byte] |= bit;
      }
    }
    switch (f.kind) {
      case FieldKind::kNull: break;
      case FieldKind::kBool:
        for (int64_t j = 0; j < n; ++j) {
          if (rows[j]) rows[j][slot] = bit_util::GetBit(c.values, c.offset + begin + j) ? 1 : 0;
        }
        break;
      case FieldKind::kFixed: {
        const int32_t w = f.width;
        const uint8_t* src = c.values + (c.offset + begin) * w;
        switch (w) {
          case 8:
            for (int64_t j = 0; j < n; ++j) {
              if (rows[j]) CopyFixed<8>(rows[j] + slot, src + j * 8);
            }
            break;
          case 4:
            for (int64_t j = 0; j < n; ++j) {
              if (rows[j]) CopyFixed<4>(rows[j] + slot, src + j * 4);
            }
            break;
          default:
            for (int64_t j = 0; j < n; ++j) {
              if (rows[j]) CopyWidth(rows[j] + slot, src + j * w, w);
            }
            break;
        }
        break;
      }
      case FieldKind::kVar32:
      case FieldKind::kVar64: {
        const bool large = f.kind == FieldKind::kVar64;
        for (int64_t j = 0; j < n; ++j) {
          if (!rows[j]) continue;
          const int64_t p = c.offset + begin + j;
          int64_t len = 0, start = 0;
          if (!c.validity || bit_util::GetBit(c.validity, p)) {
            start = LoadOffset(c.values, large, p);
            len = LoadOffset(c.values, large, p + 1) - start;
          }
          const uint32_t off32 = static_cast<uint32_t>(cursor[j]);
          const uint32_t len32 = static_cast<uint32_t>(len);
          std::memcpy(rows[j] + slot, &off32, 4);
          std::memcpy(rows[j] + slot + 4, &len32, 4);
          if (len > 0) std::memcpy(rows[j] + cursor[j], c.data + start, static_cast<size_t>(len));
          cursor[j] += len;
        }
        break;
      }
    }
  }
}

// ----------------------------------------------------------------- gather --

Result<ArrayDataPtr> GatherField(const RowLayout& layout, int field, const uint8_t* const* rows, int64_t n,
                                 MemoryPool* pool) {
  const RowField& f = layout.fields()[field];
  auto out = NewArray(f.type, n);
  if (f.kind == FieldKind::kNull) {
    out->null_count = n;
    return ArrayDataPtr(out);
  }
  // Validity: needed when a row is missing or the layout tracks nulls.
  int64_t missing = 0;
  for (int64_t j = 0; j < n; ++j) missing += rows[j] == nullptr;
  const bool track = missing > 0 || layout.options().with_validity;
  std::shared_ptr<Buffer> bitmap;
  int64_t nulls = 0;
  if (track) {
    QUIVER_ASSIGN_OR_RETURN(bitmap, AllocateBitmap(pool, n));
    uint8_t* bits = bitmap->mutable_data();
    for (int64_t j = 0; j < n; ++j) {
      if (rows[j] && layout.IsValid(rows[j], field)) {
        bit_util::SetBit(bits, j);
      } else {
        ++nulls;
      }
    }
  }
  out->null_count = nulls;
  const int32_t slot = f.slot_offset;
  switch (f.kind) {
    case FieldKind::kNull: break;
    case FieldKind::kBool: {
      QUIVER_ASSIGN_OR_RETURN(auto values, AllocateBitmap(pool, n));
      uint8_t* bits = values->mutable_data();
      for (int64_t j = 0; j < n; ++j) {
        if (rows[j] && rows[j][slot]) bit_util::SetBit(bits, j);
      }
      out->buffers = {nulls ? bitmap : nullptr, values};
      break;
    }
    case FieldKind::kFixed: {
      const int32_t w = f.width;
      QUIVER_ASSIGN_OR_RETURN(auto values, Buffer::Allocate(pool, std::max<int64_t>(1, n * w)));
      uint8_t* dst = values->mutable_data();
      if (w == 8) {
        constexpr int64_t kAhead = 16;
        for (int64_t j = 0; j < n; ++j) {
          if (j + kAhead < n && rows[j + kAhead]) __builtin_prefetch(rows[j + kAhead] + slot);
          if (rows[j]) {
            CopyFixed<8>(dst + j * 8, rows[j] + slot);
          } else {
            std::memset(dst + j * 8, 0, 8);
          }
        }
      } else {
        for (int64_t j = 0; j < n; ++j) {
          if (rows[j]) {
            CopyWidth(dst + j * w, rows[j] + slot, w);
          } else {
            std::memset(dst + j * w, 0, static_cast<size_t>(w));
          }
        }
      }
      out->buffers = {nulls ? bitmap : nullptr, values};
      break;
    }
    case FieldKind::kVar32:
    case FieldKind::kVar64: {
      const bool large = f.kind == FieldKind::kVar64;
      std::shared_ptr<Buffer> offsets, data;
      QUIVER_RETURN_NOT_OK(BuildVarWidthBuffers(
          pool, n, large, "column '" + f.name + "'",
          [&](int64_t j) { return rows[j] ? RowLayout::VarAt(rows[j], slot) : std::string_view(); }, &offsets, &data));
      out->buffers = {nulls ? bitmap : nullptr, offsets, data};
      break;
    }
  }
  return ArrayDataPtr(out);
}

}  // namespace quiver::join

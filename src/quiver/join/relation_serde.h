// quiver/join/relation_serde.h — the byte format of serialized hashed
// relations (internal to the join layer).
//
//   header   magic "QVHREL01" (8 bytes)
//            u8 kind (RelationKind), u8 flags (kFlag*), u16 layout options
//            (bit 0 ordinal, 1 validity, 2 key bytes, 3 int64 key), u32 number of key
//            columns, u32 number of stored columns
//            i64 input_rows, stored_rows, null_key_rows, num_keys,
//                min_key, max_key, index_entries, row_bytes
//            i32 key column indices, then i32 stored column indices
//            (padded to 8)
//   rows     row_bytes bytes: the rows of every page, back to back, in
//            write order; each row's `next` holds (offset of the next row
//            in this region) + 1, or 0
//   index    index_entries u64 entries: dense: ref; sparse (tagged index,
//            both kinds): tag << 48 | ref; a ref is (row offset) + 1, or 0
//            for an empty entry
//
// All integers are little-endian (quiver supports little-endian hosts
// only). Readers check every count against the bytes present, every row
// against the layout, every ref against the set of row starts, and that
// chains only point backwards (so no chain can loop) and that a sparse
// index has an empty slot (so no lookup can loop).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "quiver/base/checked_math.h"
#include "quiver/base/result.h"
#include "quiver/join/hashed_relation.h"
#include "quiver/join/tagged_index.h"

namespace quiver::join::serde_internal {

inline constexpr char kMagic[8] = {'Q', 'V', 'H', 'R', 'E', 'L', '0', '1'};
inline constexpr uint8_t kFlagDense = 1, kFlagUnique = 2, kFlagAllNull = 4;

struct Header {
  RelationKind kind = RelationKind::kLong;
  uint8_t flags = 0;
  RowLayoutOptions layout_options;
  int64_t input_rows = 0, stored_rows = 0, null_key_rows = 0, num_keys = 0;
  int64_t min_key = 0, max_key = 0, index_entries = 0, row_bytes = 0;
  std::vector<int32_t> key_columns;
  std::vector<int32_t> stored_columns;
};

/// Bytes of the encoded header.
int64_t HeaderBytes(const Header& h);
/// Writes the header at `out` (HeaderBytes(h) bytes).
void WriteHeader(const Header& h, uint8_t* out);
/// Parses a header; `*consumed` receives its size. Invalid on malformed
/// or truncated input.
Status ReadHeader(const uint8_t* data, int64_t size, Header* h, int64_t* consumed);

/// Copies the rows of `store` into `out` (row_bytes bytes), rewriting
/// `next` pointers as refs. `offsets_of` receives nothing; the caller maps
/// chain heads with RefOf.
void WriteRows(const RowStore& store, const RowLayout& layout, uint8_t* out);

/// The ref of a row pointer (offset in the serialized region + 1); rows
/// are located by walking the pages in order. Built once per Serialize.
class RefMap {
 public:
  explicit RefMap(const RowStore& store);
  uint64_t RefOf(const uint8_t* row) const;

 private:
  struct Span {
    uintptr_t begin, end;
    int64_t region_offset;
  };
  std::vector<Span> spans_;  // sorted by begin
};

/// Validates the serialized rows region [data, data + size) against
/// `layout` and `expected_rows` (ordinals must count 0, 1, ... when the
/// layout has them); on success `*row_starts` has bit (offset / 8) set for
/// every row start. Invalid naming the row and the problem otherwise.
Status ValidateRows(const RowLayout& layout, const uint8_t* data, int64_t size, int64_t expected_rows,
                    std::vector<uint64_t>* row_starts);

/// True when `ref` (offset + 1) names a row start (ref 0 is "none").
inline bool IsRowStart(const std::vector<uint64_t>& row_starts, uint64_t ref, int64_t size) {
  if (ref == 0) return true;
  const uint64_t off = ref - 1;
  if (off >= static_cast<uint64_t>(size) || (off & 7) != 0) return false;
  const uint64_t bit = off >> 3;
  return (row_starts[bit >> 6] >> (bit & 63)) & 1;
}

/// Copies the validated rows into `page` and turns every `next` ref into
/// a pointer into the page.
void LoadRows(const uint8_t* data, int64_t size, const RowLayout& layout, uint8_t* page);

inline int64_t LoadI64(const uint8_t* p) {
  int64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline void StoreI64(uint8_t* p, int64_t v) { std::memcpy(p, &v, 8); }

/// The serialized form of one tagged-index slot `slot`: 0 when empty,
/// else its tag bits with the row pointer replaced by the row's ref.
inline uint64_t TaggedEntryRef(uint64_t slot, const RefMap& refs) {
  return slot == 0 ? 0 : ((slot & ~TaggedIndex::kPointerMask) | refs.RefOf(TaggedIndex::RowOf(slot)));
}

/// True when the header (parsed from `consumed` bytes) plus h.row_bytes
/// plus h.index_entries 8-byte entries fill exactly `size` bytes, without
/// overflow; `*index_bytes` receives the index size (meaningful only when
/// true).
inline bool SizesFill(const Header& h, int64_t consumed, int64_t size, int64_t* index_bytes) {
  int64_t need;
  return CheckedMul<int64_t>(h.index_entries, 8, index_bytes) && CheckedAdd(consumed, h.row_bytes, &need) &&
         CheckedAdd(need, *index_bytes, &need) && need == size;
}

/// Checks the serialized rows region `rows` (h.row_bytes bytes) of a
/// relation: Invalid "row region too large" when refs could not address
/// it, then ValidateRows against `layout` and h.stored_rows (filling
/// `*row_starts`), then, for a relation flagged unique, Invalid when any
/// row has a chain.
Status ValidateRowRegion(const Header& h, const RowLayout& layout, const uint8_t* rows,
                         std::vector<uint64_t>* row_starts);

/// Checks the n serialized index entries at `idx`: the ref of each
/// (entry & ref_mask) must be a row start of the rows region (row_starts,
/// row_bytes), and non-zero for a non-empty entry; otherwise returns
/// Invalid(bad_entry(i, entry)) for the first bad entry i. On success
/// `*used` receives the number of non-empty entries.
template <typename BadEntry>
Status CountIndexEntries(const uint8_t* idx, int64_t n, uint64_t ref_mask, const std::vector<uint64_t>& row_starts,
                         int64_t row_bytes, BadEntry bad_entry, int64_t* used) {
  *used = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t e = static_cast<uint64_t>(LoadI64(idx + i * 8));
    const uint64_t ref = e & ref_mask;
    if ((e != 0 && ref == 0) || !IsRowStart(row_starts, ref, row_bytes)) return Status::Invalid(bad_entry(i, e));
    *used += e != 0;
  }
  return Status::OK();
}

}  // namespace quiver::join::serde_internal

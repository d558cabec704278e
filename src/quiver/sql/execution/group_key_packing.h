// quiver/sql/execution/group_key_packing.h — a GROUP BY of several integer
// columns (INTEGER, BIGINT, DATE, TIMESTAMP) with each row's key tuple
// packed into one 64-bit word, so the hash aggregate numbers its groups
// through the IntGroupMap (one probe of a 16-byte slot) instead of hashing
// and comparing the tuple's encoded bytes (DuckDB's packed / perfect-hash
// group keys). Each column's code is 0 for NULL, else 1 + value - base, in
// a field of its own bits; the bases and widths come from the value ranges
// of the first batch (sort_keys.h WidenKeyRange), widened by the bits the
// 64 leave over, and stay fixed for the table's life, so one word stands
// for one key tuple in every batch. A later batch with a value outside the
// ranges is numbered the general way (its rows are not packed).
// Internal to sql/execution; not installed.
//
// Thread safety: none (one per AggregateTable, which one thread fills).
#pragma once

#include <cstdint>
#include <vector>

#include "quiver/sql/expression/vector.h"

namespace quiver::sql {

class GroupKeyPacking {
 public:
  /// Whether `keys` (two or more GROUP BY columns) are all of the integer
  /// types that pack.
  static bool TypesPack(const std::vector<Vec>& keys);

  /// Packs rows [0, n) of `keys` into out[r] when every value fits the
  /// layout (set from these keys' ranges when there is none yet); false,
  /// with `out` unspecified, when some value does not fit or the ranges of
  /// the first batch need more than 64 bits together (then every later call
  /// is false too). `keys` must be the same columns, of the same types, on
  /// every call (TypesPack true).
  bool Pack(const std::vector<Vec>& keys, int64_t n, std::vector<uint64_t>* out);

  /// Whether a layout is set (a Pack call succeeded once).
  bool has_layout() const { return !fields_.empty(); }

  /// The word Pack would give the key tuple encoded in `key` (`len` bytes,
  /// the hash aggregate's fixed key layout: per column a validity byte, 0
  /// for NULL, then the value's 4 or 8 native-order bytes, zeros for a
  /// NULL) into `*word`; false when there is no layout, `len` is not the
  /// layout's, or some value lies outside its field (no row packed under
  /// this layout holds that tuple). Read-only: several threads at once.
  bool PackEncoded(const uint8_t* key, uint32_t len, uint64_t* word) const;

 private:
  struct Field {
    i128 base = 0;  // code = 1 + value - base
    uint64_t max_code = 0;
    int shift = 0;
    int width = 8;  // bytes of a value in the encoded key: 4 (INTEGER, DATE) or 8
  };
  bool SetLayout(const std::vector<Vec>& keys, int64_t n);

  std::vector<Field> fields_;
  bool refused_ = false;
};

}  // namespace quiver::sql

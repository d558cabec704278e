// quiver/sql/execution/sort_keys.h — normalized sort keys: the sort keys of
// a row packed into one unsigned 64-bit word whose unsigned order is the
// rows' order, sorted by a radix sort instead of typed comparisons (the
// "normalized key" of DuckDB's and Velox's sorts; Graefe, "Implementing
// Sorting in Database Systems", ACM Computing Surveys 38(3), 2006, §2.2).
//
// Each key takes only the bits its values' range in this input needs: its
// code is value - min (ASC) or max - value (DESC) over the input's non-NULL
// values, and one more code for NULL, first or last as the key says. The
// first key takes the highest bits. Keys of the exact classes (BOOLEAN,
// INTEGER, BIGINT, DECIMAL, DATE, TIMESTAMP) and DOUBLE pack (a double is
// mapped to an unsigned integer of the same order first: -0.0 equals 0.0,
// every NaN equals every other and sorts after +Infinity, as CompareKeys in
// sort.cc orders them); VARCHAR and any other type do not, and neither do
// keys whose ranges need more than 64 bits together: the caller then sorts
// by comparisons.
//
// Memory: two words per row (the codes, which become the order, and the
// radix sort's scratch).
// Thread safety: none needed (pure functions of their arguments).
#pragma once

#include <cstdint>
#include <vector>

#include "quiver/sql/execution/pipeline.h"
#include "quiver/sql/expression/vector.h"
#include "quiver/sql/plan/logical_plan.h"

namespace quiver::sql {

/// True when every key's type can pack (BOOLEAN, INTEGER, BIGINT, DECIMAL,
/// DATE, TIMESTAMP, DOUBLE, NULL): SortByNormalizedKeys may then succeed,
/// depending on the values' ranges.
bool KeyTypesPack(const std::vector<SortKey>& keys);

/// The rows of batches of `batch_rows` rows (each under 2^31 rows) in key
/// order by normalized keys, when they pack into 64 bits. `k[b][i]` is key
/// `keys[i]` evaluated over batch b (a Vec of batch_rows[b] rows, or a
/// constant). On true, `order` holds every row once as (batch << 32 | row),
/// in key order, equal keys in batch-then-row order (stable): the order a
/// stable sort by CompareKeys (sort.cc) gives. False, with `order`
/// untouched, when a key is not of a packable type, the keys need more than
/// 64 bits, or there are fewer than two or at least 2^32 rows. Memory: the caller accounts
/// for `order` (8 B a row); this reserves 8 B a row more for the radix
/// sort's scratch. Errors: OutOfMemory (the reservation), Cancelled.
Result<bool> SortByNormalizedKeys(ExecContext* ctx, const std::vector<SortKey>& keys,
                                  const std::vector<std::vector<Vec>>& k, const std::vector<int64_t>& batch_rows,
                                  std::vector<int64_t>* order);

/// Sorts the `n` words at `words` by their bits [low_bit, 64) (the bits
/// below do not take part: equal high bits keep their input order). An LSD
/// radix sort of 11-bit digits through `scratch` (resized to n); digits
/// every word shares are skipped.
void RadixSortHighBits(uint64_t* words, size_t n, int low_bit, std::vector<uint64_t>* scratch);

}  // namespace quiver::sql

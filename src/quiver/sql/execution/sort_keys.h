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
// Parallelism: SortByNormalizedKeys computes the ranges and the codes and
// radix sorts on up to ctx->threads tasks of ctx->scheduler (the batches
// cut into groups of about equal rows; the sort's passes each histogram
// and scatter a contiguous part per task, stable across parts).
// Thread safety: none needed (functions of their arguments; the caller
// does not touch them while a call runs).
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "quiver/sql/execution/pipeline.h"
#include "quiver/sql/expression/vector.h"
#include "quiver/sql/plan/logical_plan.h"

namespace quiver::sql {

/// std::allocator, except that a value-initialized element (resize(n)) is
/// left uninitialized instead of zeroed: for buffers of trivial elements
/// written in full before they are read. Sorting 6 million rows zeroed
/// 96 MB on one thread first, faulting in every page, before the parallel
/// tasks wrote it again.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}  // NOLINT: converting, as std::allocator's
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

/// Words of a radix sort, or a sorted order as (batch << 32 | row).
using SortWords = std::vector<uint64_t, UninitializedAllocator<uint64_t>>;

/// The range of one key's values: whether any is non-NULL and any NULL,
/// and the least and greatest non-NULL value as 128-bit integers (a DOUBLE
/// through bits of the same order: -0.0 as 0.0, NaN after +Infinity).
struct KeyRange {
  bool any_value = false, any_null = false;
  i128 min = 0, max = 0;
};

/// Widens `range` by rows [0, rows) of `v` (a constant: its one value);
/// false, with `range` untouched, when v's type does not pack (VARCHAR and
/// the other types KeyTypesPack refuses). The GROUP BY's packed integer
/// keys (group_key_packing.h) take their ranges from here too.
bool WidenKeyRange(const Vec& v, int64_t rows, KeyRange* range);

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
                                  SortWords* order);

/// Sorts the `n` words at `words` by their bits [low_bit, 64) (the bits
/// below do not take part: equal high bits keep their input order). An LSD
/// radix sort of 11-bit digits through `scratch` (resized to n); digits
/// every word shares are skipped.
void RadixSortHighBits(uint64_t* words, size_t n, int low_bit, SortWords* scratch);

/// Inputs under this many words are radix sorted on one thread.
inline constexpr size_t kParallelRadixMinWords = size_t{1} << 16;

/// RadixSortHighBits on `parts` tasks of `scheduler` (null: the calling
/// thread runs them): each pass histograms and scatters `parts` contiguous
/// slices of the words in parallel, so the result is the serial one
/// (stable). Under kParallelRadixMinWords words, or parts <= 1, it is the
/// serial sort. Errors: none but a task's (ParallelFor's contract).
Status ParallelRadixSortHighBits(TaskScheduler* scheduler, int parts, uint64_t* words, size_t n, int low_bit,
                                 SortWords* scratch);

}  // namespace quiver::sql

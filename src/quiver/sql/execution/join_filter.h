// quiver/sql/execution/join_filter.h — join filter pushdown (DuckDB's
// dynamic join filters, "min/max" filters pushed from a finished hash-join
// build into the probe side's table scan).
//
// When the build side of an inner or semi hash join is finished, the keys
// it holds bound every probe key that can match: a probe row whose key is
// NULL, below the smallest build key or above the largest, or (for a build
// with a narrow key range) not one of the build keys, joins nothing. The
// physical planner (planner/physical_planner.cc) traces such a probe key
// down to the scan column it comes from — through filters, projections
// (renames), the probe and build sides of other joins and GROUP BY columns,
// never through LIMIT, top-N, windows, grouping sets, UNION ALL or a
// materialized WITH query — and attaches a JoinFilter to that scan. The
// join publishes the filter when its build is complete (also when the build
// spilled into a grace join), before it prepares its probe side; the scan,
// prepared after that, then
//  - skips the Parquet row groups whose statistics lie outside the range
//    (formats/parquet/row_group_filter.h), and
//  - skips the IPC record batches whose recorded column ranges lie
//    outside it (sql/ipc_batch_pruning.h), and
//  - drops the rows of every batch (in-memory, IPC, Parquet slice) whose
//    key fails the filter before any other column is decoded, filtered or
//    gathered, and before the rest of the probe pipeline sees them (unless
//    fewer than a quarter of the batch's rows fail: it then goes on whole,
//    scan_project.cc kKeepWhole).
// The filter is a necessary condition of the join's key equality only: the
// join still runs on every row it lets through, so answers do not change.
// Integer (INT, BIGINT) and DATE keys only; the probe column must be one of
// those types and the join key the column itself or a widening cast of it.
//
// Thread safety: a JoinFilter is published once, by the thread preparing
// its join, and read-only afterwards (the scan takes the published state
// in its own Prepare, which the join runs after publishing). A
// JoinKeySummary is one worker's; the join merges them on one thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/formats/parquet/row_group_filter.h"

namespace quiver::sql {

/// Counters of one statement's join filters (ExecuteOptions::join_filter_counters):
/// filters published, rows their scans checked and dropped, batches
/// dropped whole. Relaxed atomics, exact once the statement's scans ended.
struct JoinFilterCounters {
  std::atomic<int64_t> published{0};
  std::atomic<int64_t> rows_checked{0};
  std::atomic<int64_t> rows_dropped{0};
  std::atomic<int64_t> batches_dropped{0};
};

/// What a finished build says of one key: the range of its non-NULL values
/// (`any` false: there is none, so no probe row matches) and, when the
/// range is narrow (at most kMaxBitmapBits values) and the keys leave at
/// least a tenth of it out, a bitmap of the values present (bit v - min).
struct JoinKeyBounds {
  static constexpr int64_t kMaxBitmapBits = int64_t{1} << 20;  // 128 KiB
  bool any = false;
  int64_t min = std::numeric_limits<int64_t>::max();
  int64_t max = std::numeric_limits<int64_t>::min();
  std::vector<uint64_t> bitmap;  ///< empty: the range only

  /// Whether `v` may match (v in [min, max] and, with a bitmap, present).
  bool MayMatch(int64_t v) const {
    if (!any || v < min || v > max) return false;
    if (bitmap.empty()) return true;
    const auto bit = static_cast<uint64_t>(v - min);
    return (bitmap[bit >> 6] >> (bit & 63)) & 1;
  }
};

/// Whether the values of `type` can carry a join filter (INT32, INT64,
/// DATE32: compared as int64).
bool JoinFilterType(const DataType& type);

/// The range of one build key, accumulated over the key columns one worker
/// evaluated (JoinFilterType types; other arrays are ignored and make the
/// summary unusable).
class JoinKeySummary {
 public:
  void Add(const ArrayData& keys);
  void Merge(const JoinKeySummary& other);
  /// The bounds, without a bitmap (Finish adds one).
  const JoinKeyBounds& bounds() const { return bounds_; }
  bool usable() const { return usable_; }

 private:
  JoinKeyBounds bounds_;
  bool usable_ = true;
};

/// Sets the bitmap of `bounds` from every key column of `keys` (the whole
/// build side) when the range is narrow enough, and drops it again when at
/// least nine tenths of the range are present (the range says as much).
void AddKeyBitmap(JoinKeyBounds* bounds, const std::vector<ArrayDataPtr>& keys);

/// One join's filter: the bounds of each of its filtered keys, published
/// when the build is done.
class JoinFilter {
 public:
  /// `keys`: the number of keys the join summarizes (see JoinSpec::filter_keys).
  explicit JoinFilter(size_t keys) : keys_(keys) {}
  /// Publishes the bounds (one per filtered key, in order). Once.
  void Publish(std::vector<JoinKeyBounds> bounds);
  /// The published bounds, or null before Publish.
  std::shared_ptr<const std::vector<JoinKeyBounds>> published() const;
  size_t keys() const { return keys_; }

 private:
  const size_t keys_;
  mutable std::mutex mutex_;
  std::shared_ptr<const std::vector<JoinKeyBounds>> bounds_;
};

/// A join filter attached to a scan: key `key` of `filter` bounds the
/// scan's column `position` (an index into the scan's columns).
struct ScanJoinFilter {
  std::shared_ptr<JoinFilter> filter;
  size_t key = 0;
  int position = 0;
};

/// The Parquet statistics predicates a published key's bounds make for
/// table column `field` (>= min and <= max; nothing passes when the build
/// had no key).
std::vector<parquet::StatsPredicate> JoinFilterPredicates(const JoinKeyBounds& bounds, int field);

/// Narrows a scan batch's selection to the rows whose value of `column`
/// may match `bounds`. `*selected` false: every row is selected so far
/// (`*sel` is left empty when no row fails); true: `*sel` holds the
/// selected rows, narrowed in place. Columns of other types are left
/// alone. Returns the rows dropped.
int64_t SelectByJoinFilter(const JoinKeyBounds& bounds, const ArrayData& column, std::vector<int64_t>* sel,
                           bool* selected);

}  // namespace quiver::sql

// quiver/memory/disk_budget.h — accounting of the bytes a process writes to
// its own disk (spill files of operators, result chunks spilled by the chunk
// store), the way MemoryPool accounts memory: a small tree (a server's
// budget, a child per statement), each node with an optional byte limit;
// Reserve charges every node up to the root atomically *before* the bytes
// are written and rolls back on failure, Release gives them back once the
// file is removed.
//
// Errors: a Reserve past a limit is IOError with SQLSTATE 53100
// (PostgreSQL's disk_full), naming the node, its limit and the option that
// sets it: "disk limit: sort run needs 65536 more bytes on disk; the
// statement's spill files hold 1000000 of their limit of 1048576 bytes
// (--statement-spill-limit)".
//
// Thread safety: every method is thread-safe (lock-free counters).
// Ownership: a child keeps its parent alive (shared_ptr).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "quiver/base/result.h"

namespace quiver {

/// SQLSTATE of a write refused by a DiskBudget (PostgreSQL's disk_full).
inline constexpr const char* kDiskFullSqlState = "53100";

struct DiskBudgetOptions {
  /// Who is charged, in messages ("the server's spill files", "the
  /// statement's spill files").
  std::string name = "spill files";
  /// Bytes at most; -1 = no limit of its own (an ancestor's still
  /// applies); 0 = nothing may be written.
  int64_t limit_bytes = -1;
  /// How a user sets the limit, in messages ("--spill-limit").
  std::string limit_name;
};

class DiskBudget {
 public:
  /// A budget without a parent. Invalid when limit_bytes < -1.
  static Result<std::shared_ptr<DiskBudget>> MakeRoot(DiskBudgetOptions options);
  /// A child charged to `parent` too (null parent: a root). Invalid when
  /// limit_bytes < -1.
  static Result<std::shared_ptr<DiskBudget>> Make(DiskBudgetOptions options, std::shared_ptr<DiskBudget> parent);
  ~DiskBudget();
  DiskBudget(const DiskBudget&) = delete;
  DiskBudget& operator=(const DiskBudget&) = delete;

  /// Charges `bytes` (>= 0) to this budget and every ancestor, or to none
  /// of them: IOError 53100 naming the first budget whose limit it would
  /// pass, `what` (the writer: "sort run", "result chunk") and the limit's
  /// option. Reserve(0) always succeeds.
  Status Reserve(int64_t bytes, std::string_view what);
  /// Gives back `bytes` (>= 0) reserved earlier, on this budget and every
  /// ancestor.
  void Release(int64_t bytes);

  /// Bytes charged now (this node and its children).
  int64_t used_bytes() const { return used_.load(std::memory_order_relaxed); }
  /// The highest used_bytes() since the budget was made.
  int64_t peak_bytes() const { return peak_.load(std::memory_order_relaxed); }
  /// Total bytes ever reserved (successful reservations only).
  int64_t total_reserved_bytes() const { return total_.load(std::memory_order_relaxed); }
  int64_t limit_bytes() const { return options_.limit_bytes; }
  const std::string& name() const { return options_.name; }
  const std::shared_ptr<DiskBudget>& parent() const { return parent_; }

 private:
  DiskBudget(DiskBudgetOptions options, std::shared_ptr<DiskBudget> parent);
  // Charges this node alone; false past its limit.
  bool TryCharge(int64_t bytes);
  void Uncharge(int64_t bytes);

  DiskBudgetOptions options_;
  std::shared_ptr<DiskBudget> parent_;
  std::atomic<int64_t> used_{0}, peak_{0}, total_{0};
};

/// A reservation given back when it goes (RAII): Grow / Shrink adjust it.
/// Not thread-safe (one owner); the budget must outlive it (hold the
/// shared_ptr).
class DiskReservation {
 public:
  DiskReservation() = default;
  explicit DiskReservation(std::shared_ptr<DiskBudget> budget) : budget_(std::move(budget)) {}
  ~DiskReservation() { Reset(); }
  DiskReservation(DiskReservation&& other) noexcept;
  DiskReservation& operator=(DiskReservation&& other) noexcept;
  DiskReservation(const DiskReservation&) = delete;
  DiskReservation& operator=(const DiskReservation&) = delete;

  /// Reserves `bytes` more (Status as DiskBudget::Reserve; OK without a
  /// budget).
  Status Grow(int64_t bytes, std::string_view what);
  /// Gives back `bytes` (clamped to what is held).
  void Shrink(int64_t bytes);
  /// Gives everything back.
  void Reset();
  int64_t bytes() const { return bytes_; }

 private:
  std::shared_ptr<DiskBudget> budget_;
  int64_t bytes_ = 0;
};

}  // namespace quiver

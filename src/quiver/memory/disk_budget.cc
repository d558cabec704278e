// quiver/memory/disk_budget.cc — see disk_budget.h.
#include "quiver/memory/disk_budget.h"

#include <algorithm>
#include <utility>

namespace quiver {

Result<std::shared_ptr<DiskBudget>> DiskBudget::MakeRoot(DiskBudgetOptions options) {
  return Make(std::move(options), nullptr);
}

Result<std::shared_ptr<DiskBudget>> DiskBudget::Make(DiskBudgetOptions options, std::shared_ptr<DiskBudget> parent) {
  if (options.limit_bytes < -1) {
    return Status::Invalid("disk budget '" + options.name + "': limit " + std::to_string(options.limit_bytes) +
                           " bytes; expected >= 0 or -1 (no limit)");
  }
  return std::shared_ptr<DiskBudget>(new DiskBudget(std::move(options), std::move(parent)));
}

DiskBudget::DiskBudget(DiskBudgetOptions options, std::shared_ptr<DiskBudget> parent)
    : options_(std::move(options)), parent_(std::move(parent)) {}

// What a child still holds at its end (a file its owner did not release)
// goes back to the ancestors, so they never count a dead child's bytes.
DiskBudget::~DiskBudget() {
  const int64_t left = used_.load();
  for (DiskBudget* b = parent_.get(); b != nullptr && left > 0; b = b->parent_.get()) b->Uncharge(left);
}

bool DiskBudget::TryCharge(int64_t bytes) {
  int64_t cur = used_.load(std::memory_order_relaxed);
  while (true) {
    if (options_.limit_bytes >= 0 && cur > options_.limit_bytes - bytes) return false;
    if (used_.compare_exchange_weak(cur, cur + bytes, std::memory_order_relaxed)) break;
  }
  const int64_t now = cur + bytes;
  int64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  total_.fetch_add(bytes, std::memory_order_relaxed);
  return true;
}

void DiskBudget::Uncharge(int64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }

Status DiskBudget::Reserve(int64_t bytes, std::string_view what) {
  if (bytes < 0) return Status::Invalid("disk budget: negative reservation of " + std::to_string(bytes) + " bytes");
  if (bytes == 0) return Status::OK();
  for (DiskBudget* b = this; b != nullptr; b = b->parent_.get()) {
    if (b->TryCharge(bytes)) continue;
    const int64_t held = b->used_bytes();
    for (DiskBudget* r = this; r != b; r = r->parent_.get()) {
      r->Uncharge(bytes);
      r->total_.fetch_sub(bytes, std::memory_order_relaxed);
    }
    std::string msg = "disk limit: " + std::string(what) + " needs " + std::to_string(bytes) + " more bytes on disk; " +
                      b->options_.name + " hold " + std::to_string(held) + " of their limit of " +
                      std::to_string(b->options_.limit_bytes) + " bytes";
    if (!b->options_.limit_name.empty()) msg += " (" + b->options_.limit_name + ")";
    return Status::IOError(std::move(msg)).WithSqlState(kDiskFullSqlState);
  }
  return Status::OK();
}

void DiskBudget::Release(int64_t bytes) {
  if (bytes <= 0) return;
  for (DiskBudget* b = this; b != nullptr; b = b->parent_.get()) b->Uncharge(bytes);
}

DiskReservation::DiskReservation(DiskReservation&& other) noexcept
    : budget_(std::move(other.budget_)), bytes_(std::exchange(other.bytes_, 0)) {}

DiskReservation& DiskReservation::operator=(DiskReservation&& other) noexcept {
  if (this != &other) {
    Reset();
    budget_ = std::move(other.budget_);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

Status DiskReservation::Grow(int64_t bytes, std::string_view what) {
  if (!budget_) {
    bytes_ += bytes;
    return Status::OK();
  }
  QUIVER_RETURN_NOT_OK(budget_->Reserve(bytes, what));
  bytes_ += bytes;
  return Status::OK();
}

void DiskReservation::Shrink(int64_t bytes) {
  bytes = std::clamp<int64_t>(bytes, 0, bytes_);
  if (budget_) budget_->Release(bytes);
  bytes_ -= bytes;
}

void DiskReservation::Reset() { Shrink(bytes_); }

}  // namespace quiver

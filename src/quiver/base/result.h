// quiver/base/result.h — a value or an error Status.
//
// Follows Arrow C++ Result<T> (cpp/src/arrow/result.h). A Result never holds
// an OK status without a value. Accessing the value of an error Result is a
// programmer error (asserted in debug builds).
#pragma once

#include <cassert>
#include <optional>
#include <utility>
#include <variant>

#include "quiver/base/status.h"

namespace quiver {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(implicit)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(implicit)
    assert(!std::get<Status>(v_).ok() && "Result built from an OK Status");
    if (std::get<Status>(v_).ok()) v_ = Status::Invalid("Result built from an OK Status");
  }

  bool ok() const noexcept { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::OK() : std::get<Status>(v_); }

  const T& value() const& {
    assert(ok());
    return std::get<T>(v_);
  }
  T& value() & {
    assert(ok());
    return std::get<T>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(v_));
  }
  T ValueOr(T fallback) && { return ok() ? std::get<T>(std::move(v_)) : std::move(fallback); }

  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace quiver

#define QUIVER_ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                 \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

/// `lhs = value of rexpr`, or return its error Status from the enclosing function.
#define QUIVER_ASSIGN_OR_RETURN(lhs, rexpr) \
  QUIVER_ASSIGN_OR_RETURN_IMPL(QUIVER_CONCAT(_quiver_res_, __LINE__), lhs, rexpr)

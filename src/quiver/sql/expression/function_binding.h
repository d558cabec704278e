// quiver/sql/expression/function_binding.h — what the typing of calls
// (function_registry.cc) shares with the binding of its families in files
// of their own (date_function_binding.cc): constant folding and the date
// and time functions' types. Internal to quiver/sql/expression.
//
// Thread safety: pure functions (folding evaluates on a pool of its own).
#pragma once

#include <vector>

#include "quiver/base/result.h"
#include "quiver/sql/expression/expr.h"

namespace quiver::sql {

/// Whether `t` is the type of an untyped NULL.
inline bool IsNullType(const DataTypePtr& t) { return t->id == TypeId::kNull; }

/// `e` itself, or its value as a constant when every argument is constant.
/// Errors: the kernel's (22012, 22003, ...) for a constant that fails.
Result<ExprPtr> FoldConstantCall(ExprPtr e);

/// Types a call of a date or time function of issue 37 (date_trunc, the
/// field functions, to_date / to_timestamp, date_format, last_day,
/// make_date, trunc, next_day, months_between, unix_timestamp,
/// from_unixtime; date_add / date_sub / datediff / add_months as the
/// calendar arithmetic): dates and timestamps cast as each takes them, a
/// constant unit, day name or pattern checked (22023), a NULL argument
/// giving a NULL constant. Kernels: date_functions.cc.
Result<ExprPtr> BindDateFunction(Fn fn, std::vector<ExprPtr> args, int location);

}  // namespace quiver::sql

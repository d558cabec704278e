// quiver/sql/execution/scan_pruning.cc — see scan_pruning.h.
#include "quiver/sql/execution/scan_pruning.h"

#include <cmath>
#include <limits>
#include <optional>

#include "quiver/sql/expression/kernels.h"

namespace quiver::sql {

namespace {

using parquet::StatsPredicate;
using parquet::StatsValue;
using Op = StatsPredicate::Op;

bool IsSignedInt(TypeId id) {
  return id == TypeId::kInt8 || id == TypeId::kInt16 || id == TypeId::kInt32 || id == TypeId::kInt64;
}

bool FitsInt64(i128 v) {
  return v >= static_cast<i128>(std::numeric_limits<int64_t>::min()) &&
         v <= static_cast<i128>(std::numeric_limits<int64_t>::max());
}

// The unscaled value of `v` (an integer or DECIMAL constant) at `scale`
// when exact and within int64.
std::optional<int64_t> Rescaled(const Value& v, int scale) {
  int from = 0;
  if (v.type->id == TypeId::kDecimal) {
    from = v.type->scale;
  } else if (!IsSignedInt(v.type->id)) {
    return std::nullopt;
  }
  i128 x = v.i;
  for (int s = from; s < scale; ++s) {
    if (x > static_cast<i128>(std::numeric_limits<int64_t>::max()) ||
        x < static_cast<i128>(std::numeric_limits<int64_t>::min()))
      return std::nullopt;
    x *= 10;
  }
  for (int s = scale; s < from; ++s) {
    if (x % 10 != 0) return std::nullopt;
    x /= 10;
  }
  if (!FitsInt64(x)) return std::nullopt;
  return static_cast<int64_t>(x);
}

// `v` as column type `stored` holds it; nullopt when not convertible
// exactly.
std::optional<StatsValue> Convert(const Value& v, const DataType& stored) {
  if (v.is_null || !v.type) return std::nullopt;
  const TypeId vt = v.type->id;
  const TypeId id = stored.id;
  if (IsSignedInteger(id)) {
    auto x = Rescaled(v, 0);
    if (!x) return std::nullopt;
    return StatsValue::Int(*x);
  }
  if (id == TypeId::kDate32) {
    if (vt != TypeId::kDate32 || !FitsInt64(v.i)) return std::nullopt;
    return StatsValue::Int(static_cast<int64_t>(v.i));
  }
  if (id == TypeId::kDecimal) {
    auto x = Rescaled(v, stored.scale);
    if (!x) return std::nullopt;
    return StatsValue::Int(*x);
  }
  if (id == TypeId::kFloat32 || id == TypeId::kFloat64) {
    if (vt == TypeId::kFloat64 || vt == TypeId::kFloat32) {
      if (std::isnan(v.f)) return std::nullopt;
      return StatsValue::Double(v.f);
    }
    if (IsSignedInt(vt) && v.i >= -(static_cast<i128>(1) << 53) && v.i <= (static_cast<i128>(1) << 53)) {
      return StatsValue::Double(static_cast<double>(static_cast<int64_t>(v.i)));
    }
    return std::nullopt;
  }
  if (id == TypeId::kUtf8 && vt == TypeId::kUtf8) return StatsValue::Bytes(v.s);
  return std::nullopt;
}

Op Flipped(Op op) {
  switch (op) {
    case Op::kLt: return Op::kGt;
    case Op::kLe: return Op::kGe;
    case Op::kGt: return Op::kLt;
    case Op::kGe: return Op::kLe;
    default: return op;
  }
}

std::optional<Op> CompareOp(Fn fn) {
  switch (fn) {
    case Fn::kEq: return Op::kEq;
    case Fn::kLt: return Op::kLt;
    case Fn::kLe: return Op::kLe;
    case Fn::kGt: return Op::kGt;
    case Fn::kGe: return Op::kGe;
    default: return std::nullopt;
  }
}

bool IsConstant(const Expr& e) { return e.kind == Expr::Kind::kConstant && !e.value.is_null; }

// The predicate `e` (one conjunct) stands for, if any.
std::optional<StatsPredicate> PredicateOf(const Expr& e, const std::vector<int>& table_columns,
                                          const Schema& table_schema) {
  if (e.kind != Expr::Kind::kCall || e.args.empty()) return std::nullopt;
  // The table column a scan position names, and its stored type.
  auto column_of = [&](const Expr& c) -> const DataType* {
    if (c.kind != Expr::Kind::kColumn || c.column < 0 || static_cast<size_t>(c.column) >= table_columns.size())
      return nullptr;
    const int t = table_columns[static_cast<size_t>(c.column)];
    if (t < 0 || static_cast<size_t>(t) >= table_schema.fields.size()) return nullptr;
    return table_schema.fields[static_cast<size_t>(t)]->type.get();
  };
  auto table_column = [&](const Expr& c) { return table_columns[static_cast<size_t>(c.column)]; };
  StatsPredicate p;
  if (e.fn == Fn::kIsNull || e.fn == Fn::kIsNotNull) {
    if (e.args.size() != 1 || column_of(*e.args[0]) == nullptr) return std::nullopt;
    p.field = table_column(*e.args[0]);
    p.op = e.fn == Fn::kIsNull ? Op::kIsNull : Op::kIsNotNull;
    return p;
  }
  if (e.fn == Fn::kInList) {
    const DataType* type = column_of(*e.args[0]);
    if (e.negated || type == nullptr) return std::nullopt;
    p.field = table_column(*e.args[0]);
    p.op = Op::kIn;
    // A constant list is hashed away into `aux` (its items kept there).
    std::vector<Value> items;
    if (e.aux && e.args.size() == 1) {
      items = kernels::InSetItems(e.aux.get());
    } else {
      for (size_t i = 1; i < e.args.size(); ++i) {
        if (e.args[i]->kind != Expr::Kind::kConstant) return std::nullopt;
        items.push_back(e.args[i]->value);
      }
    }
    for (const Value& item : items) {
      if (item.is_null) continue;  // x = NULL is never true
      auto v = Convert(item, *type);
      if (!v) return std::nullopt;
      p.values.push_back(std::move(*v));
    }
    return p;
  }
  const auto op = CompareOp(e.fn);
  if (!op || e.args.size() != 2) return std::nullopt;
  const Expr* col = e.args[0].get();
  const Expr* constant = e.args[1].get();
  p.op = *op;
  if (column_of(*col) == nullptr) {
    std::swap(col, constant);
    p.op = Flipped(p.op);
  }
  const DataType* type = column_of(*col);
  if (type == nullptr || !IsConstant(*constant)) return std::nullopt;
  auto v = Convert(constant->value, *type);
  if (!v) return std::nullopt;
  p.field = table_column(*col);
  p.values.push_back(std::move(*v));
  return p;
}

}  // namespace

std::vector<StatsPredicate> PruningPredicates(const std::vector<ExprPtr>& filters,
                                              const std::vector<int>& table_columns, const Schema& table_schema) {
  std::vector<StatsPredicate> out;
  std::vector<ExprPtr> terms;
  for (const auto& f : filters) SplitConjuncts(f, &terms);
  for (const auto& t : terms) {
    if (!t) continue;
    auto p = PredicateOf(*t, table_columns, table_schema);
    if (p) out.push_back(std::move(*p));
  }
  return out;
}

}  // namespace quiver::sql

// quiver/sql/planner/filter_terms.cc — see filter_terms.h.
#include "quiver/sql/planner/filter_terms.h"

#include <memory>
#include <vector>

#include "quiver/memory/memory_pool.h"
#include "quiver/sql/expression/evaluate.h"

namespace quiver::sql {
namespace {

std::shared_ptr<MemoryPool> SimplifyPool() {
  static std::shared_ptr<MemoryPool> pool = MemoryPool::MakeRoot({"sql-filter-simplify"});
  return pool;
}

bool IsBoolConstant(const Expr& e) { return e.kind == Expr::Kind::kConstant && e.type && e.type->id == TypeId::kBool; }

// A constant call evaluated; `e` when it is not one or its evaluation fails.
ExprPtr FoldCall(const ExprPtr& e) {
  if (e->kind != Expr::Kind::kCall || !IsConstantExpr(*e) || MayFail(*e)) return e;
  EvalContext ctx;
  auto pool = SimplifyPool();
  ctx.pool = pool.get();
  auto v = EvaluateConstant(*e, &ctx);
  if (!v.ok()) return e;
  Value out = std::move(*v);
  if (out.is_null) out.type = e->type;
  return Expr::Constant(std::move(out), e->location);
}

ExprPtr BoolConstant(bool b) { return Expr::Constant(Value::Bool(b)); }

}  // namespace

bool IsFalseTerm(const Expr& term) {
  return term.kind == Expr::Kind::kConstant && (term.value.is_null || (IsBoolConstant(term) && term.value.i == 0));
}

bool IsTrueTerm(const Expr& term) { return IsBoolConstant(term) && !term.value.is_null && term.value.i != 0; }

ExprPtr SimplifyTerm(const ExprPtr& term) {
  if (term->kind != Expr::Kind::kCall) return term;
  if (term->fn != Fn::kAnd && term->fn != Fn::kOr) return FoldCall(term);
  const bool is_and = term->fn == Fn::kAnd;
  std::vector<ExprPtr> kept;
  bool changed = false;
  for (const auto& a : term->args) {
    ExprPtr s = SimplifyTerm(a);
    changed |= s != a;
    // AND: FALSE decides, TRUE is dropped; OR: TRUE decides, FALSE dropped.
    if (is_and ? IsFalseTerm(*s) : IsTrueTerm(*s)) return BoolConstant(!is_and);
    if (is_and ? IsTrueTerm(*s) : IsFalseTerm(*s)) {
      changed = true;
      continue;
    }
    kept.push_back(std::move(s));
  }
  if (!changed) return term;
  if (kept.empty()) return BoolConstant(is_and);
  if (kept.size() == 1) return kept[0];
  return Expr::Call(term->fn, std::move(kept), term->type, term->location);
}

ExprPtr WeakenTerm(const ExprPtr& term, const std::function<bool(const Expr&)>& usable) {
  if (usable(*term)) return term;
  if (term->kind != Expr::Kind::kCall || (term->fn != Fn::kAnd && term->fn != Fn::kOr)) return nullptr;
  std::vector<ExprPtr> parts;
  for (const auto& a : term->args) {
    ExprPtr w = WeakenTerm(a, usable);
    if (w) {
      parts.push_back(std::move(w));
    } else if (term->fn == Fn::kOr) {
      return nullptr;
    }
  }
  if (parts.empty()) return nullptr;
  if (parts.size() == 1) return parts[0];
  return Expr::Call(term->fn, std::move(parts), term->type, term->location);
}

}  // namespace quiver::sql

// quiver/sql/binder/bind_window.cc — binding of window function calls
// (`f(...) OVER (...)`, named windows of the WINDOW clause) into WindowCall
// records (plan/window_call.h), and planning them as kWindow nodes: one
// node per distinct PARTITION BY / ORDER BY, chained, so calls over the same
// window share one sort.
#include <algorithm>

#include "quiver/sql/binder/binder_internal.h"
#include "quiver/sql/plan/window_call.h"

namespace quiver::sql {
namespace {

// PostgreSQL's frameOptions bits (parsenodes.h, FRAMEOPTION_*).
constexpr int kFrameNonDefault = 0x1;
constexpr int kFrameRange = 0x2;
constexpr int kFrameRows = 0x4;
constexpr int kFrameGroups = 0x8;
constexpr int kFrameStartUnboundedPreceding = 0x20;
constexpr int kFrameEndUnboundedPreceding = 0x40;
constexpr int kFrameStartUnboundedFollowing = 0x80;
constexpr int kFrameEndUnboundedFollowing = 0x100;
constexpr int kFrameStartCurrentRow = 0x200;
constexpr int kFrameEndCurrentRow = 0x400;
constexpr int kFrameStartOffsetPreceding = 0x800;
constexpr int kFrameEndOffsetPreceding = 0x1000;
constexpr int kFrameStartOffsetFollowing = 0x2000;
constexpr int kFrameEndOffsetFollowing = 0x4000;
constexpr int kFrameExclusions = 0x8000 | 0x10000 | 0x20000;

const std::pair<const char*, WindowFn> kWindowOnly[] = {
    {"row_number", WindowFn::kRowNumber},
    {"rank", WindowFn::kRank},
    {"dense_rank", WindowFn::kDenseRank},
    {"percent_rank", WindowFn::kPercentRank},
    {"cume_dist", WindowFn::kCumeDist},
    {"ntile", WindowFn::kNtile},
    {"lag", WindowFn::kLag},
    {"lead", WindowFn::kLead},
    {"first_value", WindowFn::kFirstValue},
    {"last_value", WindowFn::kLastValue},
    {"nth_value", WindowFn::kNthValue},
};
const std::pair<const char*, AggFn> kWindowAggs[] = {
    {"count", AggFn::kCount}, {"sum", AggFn::kSum}, {"avg", AggFn::kAvg}, {"min", AggFn::kMin}, {"max", AggFn::kMax}};

bool SameBound(const FrameBound& a, const FrameBound& b) {
  return a.kind == b.kind && a.offset.is_null == b.offset.is_null && a.offset.i == b.offset.i &&
         a.offset.f == b.offset.f;
}

bool SameCall(const WindowCall& a, const WindowCall& b) {
  if (a.fn != b.fn || a.agg != b.agg || a.unit != b.unit || !SameBound(a.start, b.start) || !SameBound(a.end, b.end) ||
      a.args.size() != b.args.size() || !SameWindow(a, b))
    return false;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (!ExprEquals(*a.args[i], *b.args[i])) return false;
  return true;
}

}  // namespace

std::vector<std::string_view> WindowFunctionNames() {
  std::vector<std::string_view> out;
  for (const auto& [name, fn] : kWindowOnly) out.emplace_back(name);
  for (const auto& [name, fn] : kWindowAggs) out.emplace_back(name);
  return out;
}

Result<ExprPtr> Binder::Impl::BindWindowCall(Json& node, ExprContext* ctx) {
  Json& f = node["FuncCall"];
  const int location = f.value("location", -1);
  std::string name;
  for (auto& n : f["funcname"]) name = FoldIdentifier(StringOf(n));
  if (!ctx->windows) return Error("window function " + name + "() is not allowed in " + ctx->clause, location);
  if (ctx->in_aggregate) return Error("aggregate function calls cannot contain window function calls", location);
  if (f.contains("agg_order")) return Unsupported("ORDER BY inside a window function's arguments", location);
  if (f.value("agg_distinct", false)) return Unsupported("DISTINCT in a window function", location);
  WindowCall call;
  bool known = false;
  for (const auto& [n, fn] : kWindowOnly)
    if (name == n) {
      call.fn = fn;
      known = true;
    }
  for (const auto& [n, agg] : kWindowAggs)
    if (name == n) {
      call.fn = WindowFn::kAggregate;
      call.agg = agg;
      known = true;
    }
  if (!known) return Unsupported("window function " + name + "()", location);

  // The arguments: window functions may not nest; aggregates of a grouped
  // query may appear (sum(sum(x)) OVER ()).
  ExprContext inner = *ctx;
  inner.windows = nullptr;
  inner.query = nullptr;
  inner.clause = "a window function's arguments";
  std::vector<ExprPtr> args;
  if (f.contains("args"))
    for (auto& a : f["args"]) {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr e, BindExpr(a, &inner));
      args.push_back(e);
    }
  bool star = f.value("agg_star", false);
  if (f.contains("agg_filter")) {
    // As on a grouped aggregate: the rows the condition does not keep
    // reach the frame's aggregate as NULLs, which it skips.
    if (call.fn != WindowFn::kAggregate)
      return Unsupported("FILTER on the non-aggregate window function " + name + "()", location);
    QUIVER_ASSIGN_OR_RETURN(ExprPtr cond, BindFilterCondition(f["agg_filter"], &inner));
    if (star && call.agg == AggFn::kCount) {  // count(*): count(CASE WHEN c THEN 1 END)
      star = false;
      args = {Expr::Constant(Value::Int64(1))};
    }
    if (args.size() == 1) {
      QUIVER_ASSIGN_OR_RETURN(args[0], FilteredArgument(std::move(cond), args[0], location));
    }
  }
  auto arity = [&](size_t lo, size_t hi) -> Status {
    if (star && !(call.fn == WindowFn::kAggregate && call.agg == AggFn::kCount))
      return Error(name + "(*) is not a window function", location);
    if (args.size() < lo || args.size() > hi)
      return Error(name + "() takes " + std::to_string(lo) + (hi != lo ? ".." + std::to_string(hi) : "") +
                       " arguments, got " + std::to_string(args.size()),
                   location);
    return Status::OK();
  };
  // A constant BIGINT argument of at least `min` (offsets, bucket counts).
  auto constant_int = [&](size_t i, int64_t min, const char* what) -> Status {
    const Expr& e = *args[i];
    if (e.kind != Expr::Kind::kConstant || ClassOf(*e.type) != TypeClass::kInt)
      return Unsupported(std::string(what) + " of " + name + "() other than an integer constant", location);
    if (e.value.is_null) return Error(std::string(what) + " of " + name + "() must not be NULL", location);
    if (e.value.i < min)
      return Error(std::string(what) + " of " + name + "() must be at least " + std::to_string(min), location);
    args[i] = Expr::Constant(Value::Int64(static_cast<int64_t>(e.value.i)), e.location);
    return Status::OK();
  };
  switch (call.fn) {
    case WindowFn::kRowNumber:
    case WindowFn::kRank:
    case WindowFn::kDenseRank:
      QUIVER_RETURN_NOT_OK(arity(0, 0));
      call.type = int64();
      break;
    case WindowFn::kPercentRank:
    case WindowFn::kCumeDist:
      QUIVER_RETURN_NOT_OK(arity(0, 0));
      call.type = float64();
      break;
    case WindowFn::kNtile:
      QUIVER_RETURN_NOT_OK(arity(1, 1));
      QUIVER_RETURN_NOT_OK(constant_int(0, 1, "the bucket count"));
      call.type = int64();
      break;
    case WindowFn::kLag:
    case WindowFn::kLead: {
      QUIVER_RETURN_NOT_OK(arity(1, 3));
      if (args.size() >= 2) {
        QUIVER_RETURN_NOT_OK(constant_int(1, 0, "the offset"));
      } else {
        args.push_back(Expr::Constant(Value::Int64(1)));
      }
      DataTypePtr t = args[0]->type;
      if (args.size() == 3) {
        t = CommonType(args[0]->type, args[2]->type, dialect);
        if (!t)
          return Error(name + "() cannot take a default of type " + SqlTypeName(*args[2]->type) + " for " +
                           SqlTypeName(*args[0]->type),
                       location);
        QUIVER_ASSIGN_OR_RETURN(args[0], Typed(CastTo(args[0], t, -1, ImplicitCast(dialect)), location));
        QUIVER_ASSIGN_OR_RETURN(args[2], Typed(CastTo(args[2], t, -1, ImplicitCast(dialect)), location));
      }
      call.type = t;
      break;
    }
    case WindowFn::kFirstValue:
    case WindowFn::kLastValue:
      QUIVER_RETURN_NOT_OK(arity(1, 1));
      call.type = args[0]->type;
      break;
    case WindowFn::kNthValue:
      QUIVER_RETURN_NOT_OK(arity(2, 2));
      QUIVER_RETURN_NOT_OK(constant_int(1, 1, "the position"));
      call.type = args[0]->type;
      break;
    case WindowFn::kAggregate: {
      if (star) {
        QUIVER_RETURN_NOT_OK(arity(0, 0));
        call.agg = AggFn::kCountStar;
        call.type = int64();
        break;
      }
      QUIVER_RETURN_NOT_OK(arity(1, 1));
      const TypeClass c = ClassOf(*args[0]->type);
      switch (call.agg) {
        case AggFn::kCount: call.type = int64(); break;
        case AggFn::kSum:
          if (c == TypeClass::kInt || c == TypeClass::kNull)
            call.type = int64();
          else if (c == TypeClass::kDecimal)
            call.type = Decimal(38, args[0]->type->scale);
          else if (c == TypeClass::kFloat)
            call.type = float64();
          else
            return Error("sum() cannot take " + SqlTypeName(*args[0]->type), location);
          break;
        case AggFn::kAvg:
          if (!IsNumericClass(c) && c != TypeClass::kNull)
            return Error("avg() cannot take " + SqlTypeName(*args[0]->type), location);
          call.type = float64();
          break;
        default:
          if (c == TypeClass::kOther || c == TypeClass::kNull)
            return Error(name + "() cannot take " + SqlTypeName(*args[0]->type), location);
          call.type = args[0]->type;
          break;
      }
      break;
    }
  }
  for (const auto& a : args)
    if (ClassOf(*a->type) == TypeClass::kOther)
      return Unsupported(name + "() over a value of type " + a->type->ToString(), location);
  call.args = std::move(args);

  // The window: OVER name, OVER (name ...), OVER (...).
  Json& over = f["over"];
  const int over_location = over.value("location", location);
  auto find_window = [&](const std::string& wname) -> Result<Json*> {
    if (ctx->window_defs)
      for (auto& w : *ctx->window_defs)
        if (w.contains("WindowDef") && FoldIdentifier(w["WindowDef"].value("name", "")) == wname)
          return &w["WindowDef"];
    return Error("window \"" + wname + "\" does not exist", over_location);
  };
  Json* partition_from = &over;
  Json* order_from = &over;
  Json* frame_from = &over;
  if (over.contains("name")) {  // OVER w: the named window as it is
    QUIVER_ASSIGN_OR_RETURN(Json * w, find_window(FoldIdentifier(over.value("name", ""))));
    partition_from = order_from = frame_from = w;
  } else if (over.contains("refname")) {  // OVER (w ORDER BY ... frame)
    QUIVER_ASSIGN_OR_RETURN(Json * w, find_window(FoldIdentifier(over.value("refname", ""))));
    if (over.contains("partitionClause"))
      return Error("cannot override PARTITION BY clause of window \"" + over.value("refname", "") + "\"",
                   over_location);
    if (w->contains("orderClause") && over.contains("orderClause"))
      return Error("cannot override ORDER BY clause of window \"" + over.value("refname", "") + "\"", over_location);
    partition_from = w;
    if (!over.contains("orderClause")) order_from = w;
  }
  ExprContext wctx = inner;
  wctx.clause = "a window's PARTITION BY or ORDER BY";
  if (partition_from->contains("partitionClause"))
    for (auto& p : (*partition_from)["partitionClause"]) {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr e, BindExpr(p, &wctx));
      if (ClassOf(*e->type) == TypeClass::kOther)
        return Unsupported("PARTITION BY a value of type " + e->type->ToString(), FirstLocation(p));
      call.partition.push_back(e);
    }
  if (order_from->contains("orderClause"))
    for (auto& sb : (*order_from)["orderClause"]) {
      Json& b = sb["SortBy"];
      const std::string dir = b.value("sortby_dir", "SORTBY_DEFAULT");
      if (dir == "SORTBY_USING") return Unsupported("ORDER BY ... USING", FirstLocation(b));
      SortKey k;
      k.descending = dir == "SORTBY_DESC";
      const std::string nulls = b.value("sortby_nulls", "SORTBY_NULLS_DEFAULT");
      k.nulls_first = nulls == "SORTBY_NULLS_DEFAULT" ? DefaultNullsFirst(k.descending) : nulls == "SORTBY_NULLS_FIRST";
      QUIVER_ASSIGN_OR_RETURN(k.expr, BindExpr(b["node"], &wctx));
      if (ClassOf(*k.expr->type) == TypeClass::kOther)
        return Unsupported("ORDER BY a value of type " + k.expr->type->ToString(), FirstLocation(b));
      call.order.push_back(std::move(k));
    }

  // The frame.
  const int opts = frame_from->value("frameOptions", kFrameRange | kFrameStartUnboundedPreceding | kFrameEndCurrentRow);
  if (opts & kFrameNonDefault) {
    if (opts & kFrameGroups) return Unsupported("a GROUPS frame", over_location);
    if (opts & kFrameExclusions) return Unsupported("EXCLUDE in a window frame", over_location);
    call.unit = (opts & kFrameRows) ? FrameUnit::kRows : FrameUnit::kRange;
    if (opts & kFrameStartUnboundedFollowing) return Error("frame start cannot be UNBOUNDED FOLLOWING", over_location);
    if (opts & kFrameEndUnboundedPreceding) return Error("frame end cannot be UNBOUNDED PRECEDING", over_location);
    auto bound = [&](bool is_start) -> Result<FrameBound> {
      FrameBound b;
      const int unb_p = is_start ? kFrameStartUnboundedPreceding : kFrameEndUnboundedPreceding;
      const int unb_f = is_start ? kFrameStartUnboundedFollowing : kFrameEndUnboundedFollowing;
      const int cur = is_start ? kFrameStartCurrentRow : kFrameEndCurrentRow;
      const int off_p = is_start ? kFrameStartOffsetPreceding : kFrameEndOffsetPreceding;
      const int off_f = is_start ? kFrameStartOffsetFollowing : kFrameEndOffsetFollowing;
      if (opts & unb_p) {
        b.kind = FrameBound::Kind::kUnboundedPreceding;
      } else if (opts & unb_f) {
        b.kind = FrameBound::Kind::kUnboundedFollowing;
      } else if (opts & cur) {
        b.kind = FrameBound::Kind::kCurrentRow;
      } else if (opts & (off_p | off_f)) {
        b.kind = (opts & off_p) ? FrameBound::Kind::kPreceding : FrameBound::Kind::kFollowing;
        Json& off = (*frame_from)[is_start ? "startOffset" : "endOffset"];
        const int off_location = FirstLocation(off);
        ExprContext cctx{ctx->scope, "a window frame offset", nullptr, false, nullptr};
        QUIVER_ASSIGN_OR_RETURN(ExprPtr e, BindExpr(off, &cctx));
        if (!IsConstantExpr(*e) || e->kind != Expr::Kind::kConstant)
          return Unsupported("a window frame offset other than a constant", off_location);
        if (e->value.is_null) return Error("frame offset must not be NULL", off_location);
        const TypeClass c = ClassOf(*e->type);
        const bool negative = c == TypeClass::kFloat ? e->value.f < 0 : e->value.i < 0;
        if (!IsNumericClass(c))
          return Unsupported("a window frame offset of type " + SqlTypeName(*e->type), off_location);
        if (negative) return Error("frame offset must not be negative", off_location);
        if (call.unit == FrameUnit::kRows) {
          if (c != TypeClass::kInt) return Error("ROWS frame offset must be an integer", off_location);
          b.offset = Value::Int64(static_cast<int64_t>(e->value.i));
        } else {
          if (call.order.size() != 1)
            return Error("RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column", off_location);
          const DataTypePtr& kt = call.order[0].expr->type;
          const TypeClass kc = ClassOf(*kt);
          if (kc == TypeClass::kFloat) {
            b.offset = Value::Float(c == TypeClass::kFloat ? e->value.f
                                                           : static_cast<double>(e->value.i) /
                                                                 static_cast<double>(Pow10(ScaleOf(*e->type))));
          } else if (IsExactClass(kc)) {
            if (c == TypeClass::kFloat)
              return Unsupported("a fractional RANGE offset over an exact ORDER BY key", off_location);
            const int ks = ScaleOf(*kt), os = ScaleOf(*e->type);
            if (os > ks) return Unsupported("a RANGE offset with more decimals than its ORDER BY key", off_location);
            b.offset = Value::Int64(0);
            if (__builtin_mul_overflow(e->value.i, Pow10(ks - os), &b.offset.i))
              return Error("frame offset out of range", off_location);
          } else {
            return Unsupported("RANGE with an offset over an ORDER BY key of type " + SqlTypeName(*kt), off_location);
          }
        }
      } else {
        b.kind = is_start ? FrameBound::Kind::kUnboundedPreceding : FrameBound::Kind::kCurrentRow;
      }
      return b;
    };
    QUIVER_ASSIGN_OR_RETURN(call.start, bound(true));
    QUIVER_ASSIGN_OR_RETURN(call.end, bound(false));
    if (call.start.kind == FrameBound::Kind::kCurrentRow && call.end.kind == FrameBound::Kind::kPreceding)
      return Error("frame starting from current row cannot have preceding rows", over_location);
    if (call.start.kind == FrameBound::Kind::kFollowing &&
        (call.end.kind == FrameBound::Kind::kPreceding || call.end.kind == FrameBound::Kind::kCurrentRow))
      return Error("frame starting from following row cannot have preceding rows", over_location);
  }

  for (const auto& existing : *ctx->windows)
    if (SameCall(existing, call)) return Expr::Column(existing.output_id, existing.type, location);
  call.output_id = NewId();
  ctx->windows->push_back(call);
  return Expr::Column(call.output_id, call.type, location);
}

Status RewriteWindowCall(WindowCall* call, const std::function<Result<ExprPtr>(const ExprPtr&)>& rewrite) {
  for (auto& a : call->args) {
    QUIVER_ASSIGN_OR_RETURN(a, rewrite(a));
  }
  for (auto& p : call->partition) {
    QUIVER_ASSIGN_OR_RETURN(p, rewrite(p));
  }
  for (auto& o : call->order) {
    QUIVER_ASSIGN_OR_RETURN(o.expr, rewrite(o.expr));
  }
  return Status::OK();
}

LogicalOpPtr PlanWindows(LogicalOpPtr plan, const std::vector<WindowCall>& calls) {
  std::vector<bool> done(calls.size(), false);
  for (size_t i = 0; i < calls.size(); ++i) {
    if (done[i]) continue;
    auto node = std::make_shared<LogicalOp>();
    node->kind = LogicalOp::Kind::kWindow;
    node->columns = plan->columns;
    for (size_t j = i; j < calls.size(); ++j) {
      if (done[j] || !SameWindow(calls[i], calls[j])) continue;
      done[j] = true;
      node->windows.push_back(std::make_shared<const WindowCall>(calls[j]));
      node->columns.push_back({calls[j].output_id, WindowFnName(calls[j].fn, calls[j].agg), calls[j].type});
    }
    node->est_rows = plan->est_rows;
    node->base_rows = plan->base_rows;
    node->children = {plan};
    plan = node;
  }
  return plan;
}

}  // namespace quiver::sql

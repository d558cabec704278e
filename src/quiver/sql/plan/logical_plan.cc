// quiver/sql/plan/logical_plan.cc — see logical_plan.h.
#include "quiver/sql/plan/logical_plan.h"

namespace quiver::sql {

const char* JoinKindName(JoinKind k) {
  switch (k) {
    case JoinKind::kInner: return "inner";
    case JoinKind::kLeft: return "left";
    case JoinKind::kRight: return "right";
    case JoinKind::kFull: return "full";
    case JoinKind::kSemi: return "semi";
    case JoinKind::kAnti: return "anti";
    case JoinKind::kNullAwareAnti: return "null-aware-anti";
    case JoinKind::kMark: return "mark";
  }
  return "?";
}

const char* AggFnName(AggFn fn) {
  switch (fn) {
    case AggFn::kCountStar:
    case AggFn::kCount: return "count";
    case AggFn::kSum: return "sum";
    case AggFn::kAvg: return "avg";
    case AggFn::kMin: return "min";
    case AggFn::kMax: return "max";
    case AggFn::kVarSamp: return "var_samp";
    case AggFn::kVarPop: return "var_pop";
    case AggFn::kStddevSamp: return "stddev_samp";
    case AggFn::kStddevPop: return "stddev_pop";
    case AggFn::kCountIf: return "count_if";
    case AggFn::kBoolAnd: return "bool_and";
    case AggFn::kBoolOr: return "bool_or";
    case AggFn::kAnyValue: return "any_value";
    case AggFn::kFirst: return "first";
    case AggFn::kLast: return "last";
    case AggFn::kPercentileCont: return "percentile_cont";
    case AggFn::kPercentileDisc: return "percentile_disc";
    case AggFn::kStringAgg: return "string_agg";
    case AggFn::kApproxCountDistinct: return "approx_count_distinct";
  }
  return "?";
}

int LogicalOp::IndexOf(int id) const {
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i].id == id) return static_cast<int>(i);
  return -1;
}

namespace {

// An expression's text for EXPLAIN, cut after 160 characters (an IN list
// or OR chain of thousands of items would fill pages).
std::string ShortExprText(const Expr& e) {
  constexpr size_t kMaxChars = 160;
  std::string text = ExprToString(e);
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return text;
}

}  // namespace

std::string PlanToString(const LogicalOp& op, int indent,
                         const std::function<std::string(const LogicalOp&)>& annotate) {
  std::string s(static_cast<size_t>(indent) * 2, ' ');
  switch (op.kind) {
    case LogicalOp::Kind::kScan:
      s += "Scan " + op.table.name + " filters=" + std::to_string(op.filters.size());
      for (size_t i = 0; i < op.filters.size(); ++i) s += (i ? "; " : " [") + ShortExprText(*op.filters[i]);
      if (!op.filters.empty()) s += "]";
      break;
    case LogicalOp::Kind::kFilter: s += "Filter " + ShortExprText(*op.predicate); break;
    case LogicalOp::Kind::kProject: s += "Project " + std::to_string(op.exprs.size()); break;
    case LogicalOp::Kind::kJoin:
      s += std::string("Join ") + JoinKindName(op.join_kind) + " keys=" + std::to_string(op.keys.size()) +
           (op.residual ? " residual" : "");
      break;
    case LogicalOp::Kind::kAggregate:
      s += "Aggregate groups=" + std::to_string(op.groups.size()) + " aggs=" + std::to_string(op.aggregates.size());
      break;
    case LogicalOp::Kind::kSort:
      s += "Sort keys=" + std::to_string(op.sort_keys.size()) + " limit=" + std::to_string(op.limit);
      break;
    case LogicalOp::Kind::kLimit:
      s += "Limit " + std::to_string(op.limit) + " offset " + std::to_string(op.offset);
      break;
    case LogicalOp::Kind::kSingleRow: s += "SingleRow"; break;
    case LogicalOp::Kind::kCteScan: s += "CteScan " + op.cte_name + " #" + std::to_string(op.cte_id); break;
    case LogicalOp::Kind::kWindow: s += "Window calls=" + std::to_string(op.windows.size()); break;
    case LogicalOp::Kind::kExpand: s += "Expand sets=" + std::to_string(op.expand_sets.size()); break;
    case LogicalOp::Kind::kUnion: s += "UnionAll children=" + std::to_string(op.children.size()); break;
  }
  s += " est=" + std::to_string(static_cast<int64_t>(op.est_rows));
  if (annotate) s += annotate(op);
  s += "\n";
  for (const auto& c : op.children) s += PlanToString(*c, indent + 1, annotate);
  return s;
}

}  // namespace quiver::sql

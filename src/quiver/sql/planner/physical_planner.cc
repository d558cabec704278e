// quiver/sql/planner/physical_planner.cc — see physical_planner.h.
#include "quiver/sql/planner/physical_planner.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "quiver/sql/execution/expand.h"
#include "quiver/sql/execution/pipeline.h"
#include "quiver/sql/execution/union_all.h"
#include "quiver/sql/execution/window.h"
#include "quiver/sql/expression/function_registry.h"
#include "quiver/sql/plan/plan_exprs.h"

namespace quiver::sql {
namespace {

// The column ids some expression reads. A projection's expression counts
// only when its output is in `live` (the previous round's answer), so the
// columns that only feed unused projections (e.g. the SELECT * of an
// EXISTS subquery) are pruned from the scans below them.
void CountUses(const LogicalOp& op, const std::unordered_set<int>* live, std::unordered_map<int, int>* uses) {
  auto add = [&](const ExprPtr& e) {
    if (e) VisitColumns(*e, [&](int id) { ++(*uses)[id]; });
  };
  for (const auto& e : op.filters) add(e);
  add(op.predicate);
  for (size_t i = 0; i < op.exprs.size(); ++i) {
    const bool projected = op.kind == LogicalOp::Kind::kProject && i < op.columns.size();
    if (!projected || live == nullptr || live->count(op.columns[i].id)) add(op.exprs[i]);
  }
  for (const auto& k : op.keys) {
    add(k.first);
    add(k.second);
  }
  add(op.residual);
  for (const auto& g : op.groups) add(g);
  for (const auto& a : op.aggregates) add(a.arg);
  for (const auto& s : op.sort_keys) add(s.expr);
  for (const auto& w : op.windows) {
    for (const auto& a : w->args) add(a);
    for (const auto& p : w->partition) add(p);
    for (const auto& o : w->order) add(o.expr);
  }
  for (const auto& set : op.expand_sets)
    for (const auto& e : set) add(e);
  // A materialized WITH query keeps all its columns: the references that
  // read it share its one result, whichever columns each of them uses.
  if (op.kind == LogicalOp::Kind::kCteScan)
    for (const auto& c : op.columns) ++(*uses)[c.id];
  // A UNION ALL's branches keep every column: its output columns are theirs
  // by position.
  if (op.kind == LogicalOp::Kind::kUnion)
    for (const auto& child : op.children)
      for (const auto& c : child->columns) ++(*uses)[c.id];
  for (const auto& c : op.children) CountUses(*c, live, uses);
}

void CollectUsed(const LogicalOp& op, const std::unordered_set<int>* live, std::unordered_set<int>* used) {
  std::unordered_map<int, int> uses;
  CountUses(op, live, &uses);
  for (const auto& [id, n] : uses) used->insert(id);
}

// The uncorrelated scalar (and EXISTS) subqueries of `op`'s expressions,
// each once, in plan order (nested ones inside a subquery's own plan are
// the business of that plan's BuildOperators).
void CollectSubqueries(const LogicalOp& op, std::vector<std::shared_ptr<ScalarSubquery>>* out) {
  std::function<void(const ExprPtr&)> visit = [&](const ExprPtr& e) {
    if (!e) return;
    if (e->kind == Expr::Kind::kSubquery && e->subquery &&
        std::find(out->begin(), out->end(), e->subquery) == out->end())
      out->push_back(e->subquery);
    for (const auto& a : e->args) visit(a);
  };
  ForEachOwnExpr(op, visit);
  for (const auto& c : op.children) CollectSubqueries(*c, out);
}

using Positions = std::unordered_map<int, int>;

Positions PositionsOf(const std::vector<ColumnBinding>& cols) {
  Positions p;
  for (size_t i = 0; i < cols.size(); ++i) p.emplace(cols[i].id, static_cast<int>(i));
  return p;
}

Result<ExprPtr> Bind(const ExprPtr& e, const Positions& pos) {
  return RewriteColumns(e, [&](int id) -> Result<int> {
    auto it = pos.find(id);
    if (it == pos.end())
      return Status::Invalid("internal: column #" + std::to_string(id) + " is not an input of its operator");
    return it->second;
  });
}

// A window call's expressions bound to its input's positions.
Status RewriteWindowExprs(WindowCall* call, const Positions& pos) {
  for (auto& a : call->args) {
    QUIVER_ASSIGN_OR_RETURN(a, Bind(a, pos));
  }
  for (auto& p : call->partition) {
    QUIVER_ASSIGN_OR_RETURN(p, Bind(p, pos));
  }
  for (auto& o : call->order) {
    QUIVER_ASSIGN_OR_RETURN(o.expr, Bind(o.expr, pos));
  }
  return Status::OK();
}

class Builder {
 public:
  Builder(ExecContext* ctx, std::unordered_set<int> used, std::unordered_map<int, int> uses, PlanProfile* profile)
      : ctx_(ctx), used_(std::move(used)), uses_(std::move(uses)), profile_(profile) {}

  // Build (below), wrapped to count the node's rows under EXPLAIN ANALYZE.
  Result<NodePtr> Build(const LogicalOp& op, std::vector<ColumnBinding>* cols, ExprPtr* deferred_filter = nullptr) {
    QUIVER_ASSIGN_OR_RETURN(NodePtr node, BuildNode(op, cols, deferred_filter));
    if (profile_ == nullptr) return node;
    auto& counters = (*profile_)[&op];
    if (!counters) counters = std::make_shared<OperatorProfile>();
    if (deferred_filter != nullptr && *deferred_filter) counters->filters_deferred = true;
    return MakeProfiledNode(ctx_, std::move(node), counters);
  }

  // Builds `op`; `cols` receives its actual output columns (scans may drop unused ones).
  // With `deferred_filter` (scans only), the scan's filters are not applied
  // but handed back as one predicate over its output, for the operator
  // above to evaluate (see kAggregate).
  Result<NodePtr> BuildNode(const LogicalOp& op, std::vector<ColumnBinding>* cols, ExprPtr* deferred_filter) {
    switch (op.kind) {
      case LogicalOp::Kind::kScan: {
        std::vector<int> table_columns;
        for (size_t i = 0; i < op.columns.size(); ++i) {
          if (!used_.count(op.columns[i].id)) continue;
          table_columns.push_back(op.table_columns[i]);
          cols->push_back(op.columns[i]);
        }
        const Positions pos = PositionsOf(*cols);
        std::vector<ExprPtr> filters;
        std::unordered_map<int, int> own;  // references from this scan's filters
        for (const auto& f : op.filters) {
          VisitColumns(*f, [&](int id) { ++own[id]; });
          QUIVER_ASSIGN_OR_RETURN(auto b, Bind(f, pos));
          filters.push_back(b);
        }
        if (deferred_filter != nullptr) {
          // The aggregate above evaluates the filters (all columns kept).
          if (!filters.empty()) *deferred_filter = MakeAnd(filters);
          NodePtr scan = MakeScanNode(ctx_, op.table, std::move(table_columns), SchemaOf(*cols), {}, {}, nullptr,
                                      std::move(filters));
          for (size_t i = 0; i < cols->size(); ++i) NoteOrigin((*cols)[i], scan, static_cast<int>(i));
          return scan;
        }
        // Columns only the scan's own filters read are dropped once they
        // have filtered, before the passing rows are gathered (a join above
        // would otherwise carry them: Q13's o_comment, Q12's three lineitem
        // dates).
        std::vector<ColumnBinding> kept;
        std::vector<int> keep;
        for (size_t i = 0; i < cols->size(); ++i) {
          const int id = (*cols)[i].id;
          const auto total = uses_.find(id);
          const auto mine = own.find(id);
          if (mine != own.end() && total != uses_.end() && total->second <= mine->second) continue;
          kept.push_back((*cols)[i]);
          keep.push_back(static_cast<int>(i));
        }
        if (kept.size() == cols->size() || kept.empty()) {
          NodePtr scan = MakeScanNode(ctx_, op.table, std::move(table_columns), SchemaOf(*cols), std::move(filters));
          for (size_t i = 0; i < cols->size(); ++i) NoteOrigin((*cols)[i], scan, static_cast<int>(i));
          return scan;
        }
        const SchemaPtr scanned = SchemaOf(*cols);
        *cols = std::move(kept);
        NodePtr scan =
            MakeScanNode(ctx_, op.table, std::move(table_columns), scanned, std::move(filters), keep, SchemaOf(*cols));
        for (size_t i = 0; i < cols->size(); ++i) NoteOrigin((*cols)[i], scan, keep[i]);
        return scan;
      }
      case LogicalOp::Kind::kFilter: {
        // A filter straight over an inner equi-join becomes its residual:
        // the join checks it on the matched pairs before gathering their
        // columns (TPC-DS Q72: inv_quantity_on_hand < cs_quantity keeps one
        // pair in twenty).
        const LogicalOp& input = *op.children[0];
        if (input.kind == LogicalOp::Kind::kJoin && input.join_kind == JoinKind::kInner && !input.keys.empty() &&
            !fold_residual_) {
          fold_residual_ = op.predicate;
          return Build(input, cols);
        }
        QUIVER_ASSIGN_OR_RETURN(auto child, Build(*op.children[0], cols));
        QUIVER_ASSIGN_OR_RETURN(auto pred, Bind(op.predicate, PositionsOf(*cols)));
        return MakeFilterNode(ctx_, std::move(child), pred);
      }
      case LogicalOp::Kind::kProject: {
        std::vector<ColumnBinding> in;
        QUIVER_ASSIGN_OR_RETURN(auto child, Build(*op.children[0], &in));
        const Positions pos = PositionsOf(in);
        std::vector<ExprPtr> exprs;
        cols->clear();
        for (size_t i = 0; i < op.exprs.size(); ++i) {
          if (i < op.columns.size() && !used_.count(op.columns[i].id)) continue;  // nobody reads it
          QUIVER_ASSIGN_OR_RETURN(auto b, Bind(op.exprs[i], pos));
          exprs.push_back(b);
          cols->push_back(op.columns[i]);
          if (op.exprs[i]->kind == Expr::Kind::kColumn) SameOrigin(op.columns[i].id, op.exprs[i]->column);
        }
        return MakeProjectNode(ctx_, std::move(child), std::move(exprs), SchemaOf(*cols));
      }
      case LogicalOp::Kind::kJoin: {
        // An inner key join whose probe (left) side is estimated much the
        // smaller builds that side instead, its columns put back in order
        // above it. The join order puts the smaller side right, but a
        // filter may reach a side later, across another join's keys
        // (join_order.cc PushFilter: TPC-DS Q78's ss_sold_year = 2000
        // reaches date_dim through ws_sold_year = ss_sold_year): there the
        // probe was a one-morsel date_dim scan, so one worker ran the whole
        // probe and aggregation of web_sales at any thread count.
        if (op.join_kind == JoinKind::kInner && !op.keys.empty() &&
            op.children[0]->est_rows * 2 < op.children[1]->est_rows) {
          LogicalOp swapped = op;
          std::swap(swapped.children[0], swapped.children[1]);
          for (auto& [l, r] : swapped.keys) std::swap(l, r);
          swapped.columns = swapped.children[0]->columns;
          swapped.columns.insert(swapped.columns.end(), swapped.children[1]->columns.begin(),
                                 swapped.children[1]->columns.end());
          // (BuildNode: EXPLAIN ANALYZE counts the rows of `op`, the
          // projection above, not of this local copy.)
          std::vector<ColumnBinding> in;
          QUIVER_ASSIGN_OR_RETURN(auto join, BuildNode(swapped, &in, nullptr));
          std::vector<ExprPtr> refs;
          cols->clear();
          for (const bool left_side : {true, false})
            for (size_t i = 0; i < in.size(); ++i)
              if ((op.children[0]->IndexOf(in[i].id) >= 0) == left_side) {
                refs.push_back(Expr::Column(static_cast<int>(i), in[i].type));
                cols->push_back(in[i]);
              }
          return MakeProjectNode(ctx_, std::move(join), std::move(refs), SchemaOf(*cols));
        }
        // A filter folded into this join (kFilter above), taken before the
        // children are planned.
        ExprPtr residual = op.residual;
        if (fold_residual_) {
          residual = residual ? MakeAnd({residual, fold_residual_}) : fold_residual_;
          fold_residual_ = nullptr;
        }
        std::vector<ColumnBinding> lc, rc;
        QUIVER_ASSIGN_OR_RETURN(auto left, Build(*op.children[0], &lc));
        QUIVER_ASSIGN_OR_RETURN(auto right, Build(*op.children[1], &rc));
        const Positions lp = PositionsOf(lc), rp = PositionsOf(rc);
        JoinSpec spec;
        spec.kind = op.join_kind;
        // A small outer side against a large subquery: build the outer side.
        spec.build_left = (op.join_kind == JoinKind::kSemi || op.join_kind == JoinKind::kAnti) &&
                          op.children[0]->est_rows * 4 < op.children[1]->est_rows;
        // A LEFT join whose preserved side is much the smaller: build that
        // side and probe with the other, as a RIGHT join with the sides
        // swapped, columns put back in order above it (TPC-H Q13: 150,000
        // customers against 1.5 M orders; built on orders, each customer's
        // probe walked a chain of ~10 rows, a cache miss a row).
        const bool swap = op.join_kind == JoinKind::kLeft && !op.keys.empty() &&
                          op.children[0]->est_rows * 4 < op.children[1]->est_rows;
        for (const auto& [l, r] : op.keys) {
          DataTypePtr common = CommonType(l->type, r->type);
          if (!common || ClassOf(*common) == TypeClass::kOther || ClassOf(*common) == TypeClass::kNull)
            return Status::Invalid("join keys of types " + SqlTypeName(*l->type) + " and " + SqlTypeName(*r->type) +
                                   " cannot be compared" + (l->location >= 0 ? "" : ""));
          QUIVER_ASSIGN_OR_RETURN(auto lb, Bind(l, lp));
          QUIVER_ASSIGN_OR_RETURN(auto rb, Bind(r, rp));
          QUIVER_ASSIGN_OR_RETURN(lb, CastTo(lb, common));
          QUIVER_ASSIGN_OR_RETURN(rb, CastTo(rb, common));
          spec.left_keys.push_back(swap ? rb : lb);
          spec.right_keys.push_back(swap ? lb : rb);
        }
        std::vector<ColumnBinding> both = lc;
        both.insert(both.end(), rc.begin(), rc.end());
        if (swap) {
          std::vector<ColumnBinding> swapped = rc;
          swapped.insert(swapped.end(), lc.begin(), lc.end());
          spec.kind = JoinKind::kRight;
          if (op.residual) {
            QUIVER_ASSIGN_OR_RETURN(spec.residual, Bind(op.residual, PositionsOf(swapped)));
          }
          QUIVER_ASSIGN_OR_RETURN(
              auto join, MakeJoinNode(ctx_, std::move(right), std::move(left), std::move(spec), SchemaOf(swapped)));
          std::vector<ExprPtr> refs;
          for (size_t i = 0; i < lc.size(); ++i)
            refs.push_back(Expr::Column(static_cast<int>(rc.size() + i), lc[i].type));
          for (size_t i = 0; i < rc.size(); ++i) refs.push_back(Expr::Column(static_cast<int>(i), rc[i].type));
          *cols = both;
          return MakeProjectNode(ctx_, std::move(join), std::move(refs), SchemaOf(*cols));
        }
        if (residual) {
          QUIVER_ASSIGN_OR_RETURN(spec.residual, Bind(residual, PositionsOf(both)));
        }
        AttachJoinFilters(op, &spec);
        const bool left_only = op.join_kind == JoinKind::kSemi || op.join_kind == JoinKind::kAnti ||
                               op.join_kind == JoinKind::kNullAwareAnti;
        *cols = left_only ? lc : both;
        if (op.join_kind == JoinKind::kMark) {  // the left columns, then the mark
          spec.mark_null_aware = op.mark_null_aware;
          *cols = lc;
          cols->push_back(op.columns.back());
        }
        return MakeJoinNode(ctx_, std::move(left), std::move(right), std::move(spec), SchemaOf(*cols));
      }
      case LogicalOp::Kind::kAggregate: {
        std::vector<ColumnBinding> in;
        // An aggregate straight over a filtered scan evaluates the scan's
        // filter itself: when most rows pass, it updates the states of the
        // passing rows in place instead of gathering them into new batches
        // first (TPC-H Q1: 98.6% of lineitem passes; the gather was a
        // fifth of the query).
        ExprPtr filter;
        const LogicalOp& input = *op.children[0];
        const bool defer = input.kind == LogicalOp::Kind::kScan && !input.filters.empty();
        QUIVER_ASSIGN_OR_RETURN(auto child, Build(input, &in, defer ? &filter : nullptr));
        const Positions pos = PositionsOf(in);
        std::vector<ExprPtr> groups;
        for (const auto& g : op.groups) {
          QUIVER_ASSIGN_OR_RETURN(auto b, Bind(g, pos));
          groups.push_back(b);
        }
        std::vector<AggregateCall> aggs = op.aggregates;
        for (auto& a : aggs)
          if (a.arg) {
            QUIVER_ASSIGN_OR_RETURN(a.arg, Bind(a.arg, pos));
          }
        *cols = op.columns;
        // A GROUP BY column keeps its scan column's values: a join filter
        // above that drops a key drops its whole group.
        for (size_t g = 0; g < op.groups.size() && g < op.columns.size(); ++g)
          if (op.groups[g]->kind == Expr::Kind::kColumn) SameOrigin(op.columns[g].id, op.groups[g]->column);
        return MakeHashAggregateNode(ctx_, std::move(child), std::move(groups), std::move(aggs), SchemaOf(*cols),
                                     std::move(filter), op.empty_input_groups);
      }
      case LogicalOp::Kind::kSort: {
        QUIVER_ASSIGN_OR_RETURN(auto child, Build(*op.children[0], cols));
        const Positions pos = PositionsOf(*cols);
        std::vector<SortKey> keys = op.sort_keys;
        for (auto& k : keys) {
          QUIVER_ASSIGN_OR_RETURN(k.expr, Bind(k.expr, pos));
        }
        if (op.limit >= 0) ForgetOrigins(*cols);  // a top-N: fewer rows below would change which
        return MakeSortNode(ctx_, std::move(child), std::move(keys), op.offset, op.limit);
      }
      case LogicalOp::Kind::kLimit: {
        QUIVER_ASSIGN_OR_RETURN(auto child, Build(*op.children[0], cols));
        ForgetOrigins(*cols);
        return MakeLimitNode(ctx_, std::move(child), op.offset, op.limit);
      }
      case LogicalOp::Kind::kWindow: {
        QUIVER_ASSIGN_OR_RETURN(auto child, Build(*op.children[0], cols));
        ForgetOrigins(*cols);  // a window reads its partition's other rows
        const Positions pos = PositionsOf(*cols);
        std::vector<WindowCall> calls;
        for (const auto& w : op.windows) {
          WindowCall c = *w;
          QUIVER_RETURN_NOT_OK(RewriteWindowExprs(&c, pos));
          calls.push_back(std::move(c));
          cols->push_back({w->output_id, WindowFnName(w->fn, w->agg), w->type});
        }
        return MakeWindowNode(ctx_, std::move(child), std::move(calls), SchemaOf(*cols));
      }
      case LogicalOp::Kind::kExpand: {
        QUIVER_ASSIGN_OR_RETURN(auto child, Build(*op.children[0], cols));
        ForgetOrigins(*cols);
        const Positions pos = PositionsOf(*cols);
        std::vector<std::vector<ExprPtr>> sets;
        for (const auto& set : op.expand_sets) {
          std::vector<ExprPtr> bound;
          for (const auto& e : set) {
            QUIVER_ASSIGN_OR_RETURN(auto b, Bind(e, pos));
            bound.push_back(b);
          }
          sets.push_back(std::move(bound));
        }
        const size_t passed = op.children[0]->columns.size();
        for (size_t i = passed; i < op.columns.size(); ++i) cols->push_back(op.columns[i]);
        return MakeExpandNode(ctx_, std::move(child), std::move(sets), SchemaOf(*cols));
      }
      case LogicalOp::Kind::kSingleRow: return MakeSingleRowNode(ctx_);
      case LogicalOp::Kind::kUnion: {
        std::vector<NodePtr> children;
        for (const auto& c : op.children) {
          std::vector<ColumnBinding> in;
          QUIVER_ASSIGN_OR_RETURN(auto child, Build(*c, &in));
          if (in.size() != op.columns.size())
            return Status::Invalid("internal: a UNION branch has " + std::to_string(in.size()) + " columns, not " +
                                   std::to_string(op.columns.size()));
          for (size_t i = 0; i < in.size(); ++i)
            if (!in[i].type->Equals(*op.columns[i].type))
              return Status::Invalid("internal: UNION branch column " + std::to_string(i + 1) + " has type " +
                                     in[i].type->ToString() + ", not " + op.columns[i].type->ToString());
          ForgetOrigins(in);
          children.push_back(std::move(child));
        }
        *cols = op.columns;
        ForgetOrigins(*cols);
        return MakeUnionAllNode(ctx_, std::move(children), SchemaOf(*cols));
      }
      case LogicalOp::Kind::kCteScan: {
        // The first reference of the statement (its plan or a subquery's)
        // builds the query's nodes; the others share its result.
        std::shared_ptr<MaterializedCte> cte;
        {
          std::lock_guard<std::mutex> lock(ctx_->cte_mutex);
          auto it = ctx_->ctes.find(op.cte_id);
          if (it != ctx_->ctes.end()) cte = it->second;
        }
        if (!cte) {
          std::vector<ColumnBinding> in;
          QUIVER_ASSIGN_OR_RETURN(auto child, Build(*op.children[0], &in));
          if (in.size() != op.columns.size())
            return Status::Invalid("internal: WITH query '" + op.cte_name + "' lost columns to pruning");
          auto made = std::make_shared<MaterializedCte>(ctx_, std::move(child), op.cte_name);
          std::lock_guard<std::mutex> lock(ctx_->cte_mutex);
          cte = ctx_->ctes.emplace(op.cte_id, std::move(made)).first->second;
        }
        *cols = op.columns;
        ForgetOrigins(*cols);  // its one result is shared by every reference
        return MakeCteScanNode(ctx_, std::move(cte), SchemaOf(*cols));
      }
    }
    return Status::Invalid("internal: unknown plan node");
  }

 private:
  // Join filters (join_filter.h): where a column's values come from — a
  // scan's column, reached through operators that pass its values on
  // unchanged row by row (filters, renames, joins, sorts, GROUP BY), so
  // that a join above may drop the scan's rows whose value it cannot
  // match. Operators that would answer differently with fewer rows below
  // (LIMIT, top-N, windows, grouping sets, UNION ALL, a shared WITH
  // result) forget the origins of what they pass on.
  struct Origin {
    NodePtr scan;
    int position = 0;  // in the scan's columns
    DataTypePtr type;
  };
  void NoteOrigin(const ColumnBinding& c, const NodePtr& scan, int position) {
    if (ctx_->join_filters && c.type && JoinFilterType(*c.type)) origins_[c.id] = Origin{scan, position, c.type};
  }
  void SameOrigin(int id, int from) {
    auto it = origins_.find(from);
    if (it != origins_.end()) origins_[id] = it->second;
  }
  void ForgetOrigins(const std::vector<ColumnBinding>& cols) {
    for (const auto& c : cols) origins_.erase(c.id);
  }

  // An inner or semi hash join that builds its right side: a join filter
  // for each key that is an integer or DATE scan column of the left side
  // (or a widening cast of one), attached to that scan.
  void AttachJoinFilters(const LogicalOp& op, JoinSpec* spec) {
    if (!ctx_->join_filters || spec->build_left || spec->left_keys.empty()) return;
    if (spec->kind != JoinKind::kInner && spec->kind != JoinKind::kSemi) return;
    std::vector<std::pair<Origin, int>> targets;  // origin, key index
    for (size_t k = 0; k < op.keys.size() && k < spec->right_keys.size(); ++k) {
      const ExprPtr& l = op.keys[k].first;
      const Expr* col = l.get();
      if (col->kind == Expr::Kind::kCall && col->fn == Fn::kCast && col->args.size() == 1) col = col->args[0].get();
      if (col->kind != Expr::Kind::kColumn) continue;
      auto it = origins_.find(col->column);
      if (it == origins_.end()) continue;
      const DataTypePtr& key_type = spec->right_keys[k]->type;
      const DataTypePtr& column_type = it->second.type;
      if (!key_type || !JoinFilterType(*key_type)) continue;
      // Same kind of value (integers or dates), the key at least as wide.
      const bool dates = column_type->id == TypeId::kDate32;
      if (dates != (key_type->id == TypeId::kDate32)) continue;
      if (column_type->id == TypeId::kInt64 && key_type->id != TypeId::kInt64) continue;
      targets.emplace_back(it->second, static_cast<int>(k));
    }
    if (targets.empty()) return;
    spec->join_filter = std::make_shared<JoinFilter>(targets.size());
    for (size_t j = 0; j < targets.size(); ++j) {
      spec->filter_keys.push_back(targets[j].second);
      AttachJoinFilter(targets[j].first.scan.get(), ScanJoinFilter{spec->join_filter, j, targets[j].first.position});
    }
  }

  ExecContext* ctx_;
  std::unordered_set<int> used_;
  std::unordered_map<int, int> uses_;  // expression references per column id (the plan's output counts one)
  std::unordered_map<int, Origin> origins_;
  ExprPtr fold_residual_;  // a kFilter's predicate for the inner join just below it
  PlanProfile* profile_;   // EXPLAIN ANALYZE's counters (null: none)
};

// The statement's output: the root node gathered on the first Next(), so
// nothing runs before the consumer asks.
//
// Before the root's pipelines start, the plan's uncorrelated subqueries run
// on this (the driving) thread, each with the statement's workers. Left to
// their first evaluation, one would run inside a pipeline's worker while
// the other workers wait on it, holding its value's lock: TPC-H Q15's
// `(select max(total_revenue) from revenue0)` then ran on one core, slower
// at two threads than at one. A subquery's error is not returned here but
// kept (ScalarSubquery), so it surfaces only where the value is evaluated,
// as before; only cancellation ends the statement at once.
class RootStream : public RecordBatchStream {
 public:
  RootStream(ExecContext* ctx, NodePtr node, std::vector<std::shared_ptr<ScalarSubquery>> subqueries)
      : ctx_(ctx), node_(std::move(node)), subqueries_(std::move(subqueries)) {}
  const SchemaPtr& schema() const override { return node_->schema(); }
  Result<RecordBatchPtr> Next() override {
    if (!op_) {
      if (started_) return RecordBatchPtr{};
      started_ = true;
      for (const auto& s : subqueries_) {
        (void)s->Get();  // the value or error is kept for the expression that reads it
        QUIVER_RETURN_NOT_OK(ctx_->CheckCancel());
      }
      subqueries_.clear();
      QUIVER_ASSIGN_OR_RETURN(op_, Gathered(ctx_, node_));
    }
    auto r = op_->Next();
    if (!r.ok() || !*r) op_.reset();
    return r;
  }

 private:
  ExecContext* ctx_;
  NodePtr node_;
  std::vector<std::shared_ptr<ScalarSubquery>> subqueries_;
  OperatorPtr op_;
  bool started_ = false;
};

}  // namespace

Result<OperatorPtr> BuildOperators(const LogicalOp& plan, ExecContext* ctx, PlanProfile* profile) {
  // Live columns to a fixed point: each round drops the projections nobody
  // read in the round before (and what only they read).
  std::unordered_set<int> used;
  CollectUsed(plan, nullptr, &used);
  for (const auto& c : plan.columns) used.insert(c.id);
  for (int round = 0; round < 16; ++round) {
    std::unordered_set<int> next;
    CollectUsed(plan, &used, &next);
    for (const auto& c : plan.columns) next.insert(c.id);
    const bool same = next.size() == used.size();
    used = std::move(next);
    if (same) break;
  }
  std::unordered_map<int, int> uses;
  CountUses(plan, &used, &uses);
  for (const auto& c : plan.columns) ++uses[c.id];
  Builder b(ctx, std::move(used), std::move(uses), profile);
  std::vector<ColumnBinding> cols;
  QUIVER_ASSIGN_OR_RETURN(NodePtr node, b.Build(plan, &cols));
  if (cols.size() != plan.columns.size()) return Status::Invalid("internal: the plan's output columns were pruned");
  std::vector<std::shared_ptr<ScalarSubquery>> subqueries;
  CollectSubqueries(plan, &subqueries);
  return OperatorPtr(std::make_unique<RootStream>(ctx, std::move(node), std::move(subqueries)));
}

}  // namespace quiver::sql

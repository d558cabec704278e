// quiver/sql/binder/bind_dependent_join.cc — general unnesting of correlated
// subqueries and LATERAL (Neumann & Kemper, "Unnesting Arbitrary Queries",
// BTW 2015; the design of DuckDB's FlattenDependentJoins). Used where the
// equality-correlated flattenings of bind_subquery.cc do not apply: scalar
// subqueries that are not a single aggregate, correlated conditions other
// than equality under an aggregate, outer columns read outside WHERE,
// ORDER BY ... LIMIT per outer row, LATERAL.
//
// The subquery is bound keeping its outer references (BindDependent). The
// dependent join of the outer plan with it becomes D = the distinct values
// of the outer columns it reads, pushed down through its operators:
//  - a part reading no outer column: joined with D (the filters above it
//    that read outer columns become the join's keys and residual);
//  - filter, projection: kept, outer references read D's columns, which
//    the projection passes on;
//  - aggregate: D's columns added to its groups; one without GROUP BY is
//    left-joined from D, so that a D value without rows gets count 0 and
//    sum NULL (the "count bug"); under GROUPING SETS D passes the expand
//    and groups every set, and the empty sets' rows are made for every D
//    value (a FULL join with D x their group values);
//  - inner / left / semi / anti / mark joins: into the sides that read
//    outer columns (both: joined on D as well); RIGHT / FULL joins: into
//    both sides (D of a FULL join's row: coalesce of the sides');
//  - ORDER BY ... LIMIT / OFFSET: row_number() OVER (PARTITION BY D ORDER
//    BY ...) kept between the bounds; window functions: D added to their
//    PARTITION BY; UNION ALL: into each branch.
// The outer plan is then joined with the result on D's columns with
// NULL-safe equality (keys `x IS NULL` and `coalesce(x, zero)`, so the hash
// join serves them). A scalar subquery that may return several rows per
// outer row is grouped by D with a row count, and checked once, by an
// uncorrelated subquery reading the same (shared) grouped result
// (bind_scalar_lookup.cc): more than one row for a D value is 21000.
#include <set>

#include "quiver/sql/binder/binder_internal.h"
#include "quiver/sql/plan/plan_exprs.h"

namespace quiver::sql {

namespace {

using IdMap = std::map<int, int>;

bool ReadsAny(const ExprPtr& e, const std::set<int>& ids) {
  if (!e) return false;
  bool found = false;
  VisitColumns(*e, [&](int id) { found |= ids.count(id) != 0; });
  return found;
}

// Whether an expression of `op` itself (not its children) reads `ids`.
bool OwnReads(const LogicalOp& op, const std::set<int>& ids) {
  bool found = false;
  auto visit = [&](const ExprPtr& e) { found = found || ReadsAny(e, ids); };
  ForEachOwnExpr(op, visit);
  return found;
}

bool TreeReads(const LogicalOp& op, const std::set<int>& ids) {
  if (OwnReads(op, ids)) return true;
  for (const auto& c : op.children)
    if (c && TreeReads(*c, ids)) return true;
  return false;
}

bool Covers(const LogicalOp& op, const std::set<int>& ids) {
  for (int id : ids)
    if (op.IndexOf(id) < 0) return false;
  return true;
}

// The smallest part of `outer` holding every value (NULLs included) its
// columns `ids` take in `outer`'s rows: down inner joins and the left side
// of left, semi and anti joins.
LogicalOpPtr ValueSource(const LogicalOpPtr& outer, const std::set<int>& ids) {
  LogicalOpPtr node = outer;
  while (node->kind == LogicalOp::Kind::kJoin && node->children.size() == 2) {
    const JoinKind k = node->join_kind;
    LogicalOpPtr next;
    if (Covers(*node->children[0], ids)) next = node->children[0];
    if (k == JoinKind::kInner && !next && Covers(*node->children[1], ids)) next = node->children[1];
    if (k == JoinKind::kRight || k == JoinKind::kFull || !next) break;
    node = next;
  }
  return node;
}

Result<ExprPtr> Rewrite(const ExprPtr& e, const IdMap& map) {
  if (!e) return e;
  return RewriteColumns(e, [&](int id) -> Result<int> {
    auto it = map.find(id);
    return it == map.end() ? id : it->second;
  });
}

bool CountLike(AggFn fn) {
  return fn == AggFn::kCountStar || fn == AggFn::kCount || fn == AggFn::kCountIf || fn == AggFn::kApproxCountDistinct;
}

}  // namespace

std::vector<int> Binder::Impl::OuterColumnsOf(const LogicalOp& plan, const Scope& scope) {
  std::vector<int> ids;
  std::set<int> seen;
  auto visit = [&](const ExprPtr& e) {
    if (!e) return;
    VisitColumns(*e, [&](int id) {
      if (scope.ids.count(id) && seen.insert(id).second) ids.push_back(id);
    });
  };
  std::function<void(const LogicalOp&)> walk = [&](const LogicalOp& op) {
    ForEachOwnExpr(op, visit);
    for (const auto& c : op.children)
      if (c) walk(*c);
  };
  walk(plan);
  return ids;
}

bool Binder::Impl::NeedsDependentJoin(const BoundQuery& b, const Scope& scope) {
  bool further = false;
  auto check = [&](int id) {
    if (scope.ids.count(id) || b.plan->IndexOf(id) >= 0) return;
    for (const Scope* s = scope.outer; s; s = s->outer) further |= s->ids.count(id) != 0;
  };
  for (const auto& k : b.corr_keys) VisitColumns(*k.second, check);
  if (b.corr_residual) VisitColumns(*b.corr_residual, check);
  if (further) return true;
  std::set<int> outer;
  for (const Scope* s = &scope; s; s = s->outer) outer.insert(s->ids.begin(), s->ids.end());
  return TreeReads(*b.plan, outer);
}

Result<BoundQuery> Binder::Impl::BindDependent(Json& select, const Scope* outer) {
  const Scope* saved = dependent_scope;
  dependent_scope = outer;
  auto bound = BindQuery(select, outer, true);
  dependent_scope = saved;
  return bound;
}

namespace {

// The push-down of D through one subquery plan.
class Flattener {
 public:
  Flattener(Binder::Impl* binder, LogicalOpPtr source, std::vector<int> outer_ids, std::vector<ExprPtr> outer_exprs,
            int location)
      : b_(binder),
        source_(std::move(source)),
        ids_(std::move(outer_ids)),
        exprs_(std::move(outer_exprs)),
        location_(location) {
    idset_.insert(ids_.begin(), ids_.end());
  }

  const std::vector<int>& ids() const { return ids_; }

  // D once more: the distinct outer values under new column ids, recorded
  // in `map` (outer id -> D column).
  LogicalOpPtr NewD(IdMap* map) {
    auto agg = std::make_shared<LogicalOp>();
    agg->kind = LogicalOp::Kind::kAggregate;
    agg->children = {CopyPlanTree(source_)};  // D's source: a part of the outer plan, read again
    map->clear();
    for (size_t k = 0; k < ids_.size(); ++k) {
      agg->groups.push_back(exprs_[k]);
      ColumnBinding c{b_->NewId(), "__outer", exprs_[k]->type};
      (*map)[ids_[k]] = c.id;
      agg->columns.push_back(c);
    }
    agg->est_rows = std::max(1.0, std::min(source_->est_rows, 1e6));
    agg->base_rows = source_->base_rows;
    return agg;
  }

  // NULL-safe equality of `a` and `b` as two hash-join keys.
  Status AddNullSafeKeys(const ExprPtr& a, const ExprPtr& b, std::vector<std::pair<ExprPtr, ExprPtr>>* keys) {
    if (ClassOf(*a->type) == TypeClass::kOther)
      return b_->Unsupported("a subquery correlated on a value of type " + a->type->ToString(), location_);
    QUIVER_ASSIGN_OR_RETURN(ExprPtr na, BindCall(Fn::kIsNull, {a}, location_));
    QUIVER_ASSIGN_OR_RETURN(ExprPtr nb, BindCall(Fn::kIsNull, {b}, location_));
    keys->emplace_back(na, nb);
    Value zero;
    zero.type = a->type;
    zero.is_null = ClassOf(*a->type) == TypeClass::kNull;
    if (zero.is_null) return Status::OK();
    QUIVER_ASSIGN_OR_RETURN(ExprPtr ca, BindCall(Fn::kCoalesce, {a, Expr::Constant(zero)}, location_));
    QUIVER_ASSIGN_OR_RETURN(ExprPtr cb, BindCall(Fn::kCoalesce, {b, Expr::Constant(zero)}, location_));
    keys->emplace_back(ca, cb);
    return Status::OK();
  }

  // Keys joining two plans on their D columns (`l`, `r`).
  Status DKeys(const IdMap& l, const IdMap& r, const LogicalOp& lop, const LogicalOp& rop,
               std::vector<std::pair<ExprPtr, ExprPtr>>* keys) {
    for (int id : ids_) {
      const int li = l.at(id), ri = r.at(id);
      const auto& lc = lop.columns[static_cast<size_t>(lop.IndexOf(li))];
      const auto& rc = rop.columns[static_cast<size_t>(rop.IndexOf(ri))];
      QUIVER_RETURN_NOT_OK(AddNullSafeKeys(Expr::Column(li, lc.type), Expr::Column(ri, rc.type), keys));
    }
    return Status::OK();
  }

  static LogicalOpPtr Join(JoinKind kind, LogicalOpPtr l, LogicalOpPtr r, std::vector<std::pair<ExprPtr, ExprPtr>> keys,
                           ExprPtr residual, const ColumnBinding* mark = nullptr, bool null_aware = false) {
    auto j = std::make_shared<LogicalOp>();
    j->kind = LogicalOp::Kind::kJoin;
    j->join_kind = kind;
    j->keys = std::move(keys);
    j->residual = std::move(residual);
    j->mark_null_aware = null_aware;
    j->columns = l->columns;
    if (kind == JoinKind::kInner || kind == JoinKind::kLeft || kind == JoinKind::kRight || kind == JoinKind::kFull)
      j->columns.insert(j->columns.end(), r->columns.begin(), r->columns.end());
    if (mark) j->columns.push_back(*mark);
    j->est_rows = std::max(l->est_rows, r->est_rows);
    j->base_rows = std::max(l->base_rows, r->base_rows);
    j->children = {std::move(l), std::move(r)};
    return j;
  }

  // `op` dependent-joined with D: op's columns and D's (their ids in `map`).
  Result<LogicalOpPtr> Push(const LogicalOpPtr& op, IdMap* map) {
    using K = LogicalOp::Kind;
    if (!TreeReads(*op, idset_)) {
      LogicalOpPtr d = NewD(map);
      if (op->kind == K::kSingleRow) return d;
      return PlanJoinGraph({d, op}, {});
    }
    switch (op->kind) {
      case K::kScan: {
        // Its filters reading outer columns become a filter above it.
        auto scan = std::make_shared<LogicalOp>(*op);
        scan->filters.clear();
        std::vector<ExprPtr> outer;
        for (const auto& f : op->filters) (ReadsAny(f, idset_) ? outer : scan->filters).push_back(f);
        auto filter = std::make_shared<LogicalOp>();
        filter->kind = K::kFilter;
        filter->predicate = MakeAnd(outer);
        filter->columns = scan->columns;
        filter->est_rows = scan->est_rows;
        filter->base_rows = scan->base_rows;
        filter->children = {scan};
        return Push(filter, map);
      }
      case K::kFilter: {
        const LogicalOpPtr& child = op->children[0];
        if (!TreeReads(*child, idset_)) {
          // D joined with the child on the filter's terms (keys where they
          // are equalities).
          LogicalOpPtr d = NewD(map);
          QUIVER_ASSIGN_OR_RETURN(ExprPtr pred, Rewrite(op->predicate, *map));
          std::vector<ExprPtr> terms;
          SplitConjuncts(pred, &terms);
          return PlanJoinGraph({d, child}, terms);
        }
        QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr c, Push(child, map));
        QUIVER_ASSIGN_OR_RETURN(ExprPtr pred, Rewrite(op->predicate, *map));
        return AddFilter(c, pred);
      }
      case K::kProject: {
        QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr c, Push(op->children[0], map));
        std::vector<ExprPtr> exprs;
        for (const auto& e : op->exprs) {
          QUIVER_ASSIGN_OR_RETURN(ExprPtr r, Rewrite(e, *map));
          exprs.push_back(r);
        }
        std::vector<ColumnBinding> cols = op->columns;
        AppendD(*c, *map, &exprs, &cols);
        return MakeProject(c, std::move(exprs), std::move(cols));
      }
      case K::kAggregate: return PushAggregate(op, map);
      case K::kSort:
      case K::kLimit: {
        QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr c, Push(op->children[0], map));
        if (op->kind == K::kSort && op->limit < 0 && op->offset == 0) return c;  // order without a bound
        return RowNumberBound(op, c, *map);
      }
      case K::kJoin: return PushJoin(op, map);
      case K::kWindow: {
        QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr c, Push(op->children[0], map));
        auto w = std::make_shared<LogicalOp>(*op);
        w->children = {c};
        w->columns = c->columns;
        w->windows.clear();
        for (const auto& call : op->windows) {
          auto nc = std::make_shared<WindowCall>(*call);
          QUIVER_RETURN_NOT_OK(RewriteWindowCall(nc.get(), [&](const ExprPtr& e) { return Rewrite(e, *map); }));
          for (int id : ids_) nc->partition.push_back(ColumnOf(*c, map->at(id)));
          w->windows.push_back(nc);
          w->columns.push_back(op->columns[static_cast<size_t>(op->IndexOf(call->output_id))]);
        }
        return LogicalOpPtr(w);
      }
      case K::kUnion: {
        auto u = std::make_shared<LogicalOp>(*op);
        u->children.clear();
        IdMap out;
        for (int id : ids_) {
          const int nid = b_->NewId();
          out[id] = nid;
          size_t k = 0;
          while (ids_[k] != id) ++k;
          u->columns.push_back({nid, "__outer", exprs_[k]->type});
        }
        for (const auto& child : op->children) {
          IdMap m;
          QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr c, Push(child, &m));
          std::vector<ExprPtr> exprs;
          std::vector<ColumnBinding> cols = child->columns;
          for (const auto& col : child->columns) exprs.push_back(Expr::Column(col.id, col.type));
          AppendD(*c, m, &exprs, &cols);
          u->children.push_back(MakeProject(c, std::move(exprs), std::move(cols)));
        }
        *map = std::move(out);
        return LogicalOpPtr(u);
      }
      case K::kExpand: {
        // GROUPING SETS: every set's rows keep their D (D's columns pass
        // through the expand, and the aggregate above groups by them).
        QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr c, Push(op->children[0], map));
        auto e = std::make_shared<LogicalOp>(*op);
        e->children = {c};
        e->columns = c->columns;
        e->columns.insert(e->columns.end(),
                          op->columns.begin() + static_cast<std::ptrdiff_t>(op->children[0]->columns.size()),
                          op->columns.end());
        for (auto& set : e->expand_sets)
          for (auto& x : set) {
            QUIVER_ASSIGN_OR_RETURN(x, Rewrite(x, *map));
          }
        return LogicalOpPtr(e);
      }
      default: break;
    }
    // (JoinDependent's shared one-row check of a scalar subquery is an
    // uncorrelated subquery: it cannot take D.)
    if (op->kind == K::kCteScan && op->cte_name == kScalarLookupName)
      return b_->Unsupported(
          "a scalar subquery that may return several rows, reading a column of a query two levels out", location_);
    return b_->Unsupported("a correlated subquery holding a shared WITH query over outer columns", location_);
  }

 private:
  static ExprPtr ColumnOf(const LogicalOp& op, int id) {
    return Expr::Column(id, op.columns[static_cast<size_t>(op.IndexOf(id))].type);
  }

  // D's columns of `c` passed through a projection.
  void AppendD(const LogicalOp& c, const IdMap& map, std::vector<ExprPtr>* exprs, std::vector<ColumnBinding>* cols) {
    for (int id : ids_) {
      const int d = map.at(id);
      exprs->push_back(ColumnOf(c, d));
      cols->push_back(c.columns[static_cast<size_t>(c.IndexOf(d))]);
    }
  }

  Result<LogicalOpPtr> PushAggregate(const LogicalOpPtr& op, IdMap* map) {
    IdMap cm;
    QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr c, Push(op->children[0], &cm));
    auto agg = std::make_shared<LogicalOp>(*op);
    agg->children = {c};
    agg->groups.clear();
    for (const auto& g : op->groups) {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr r, Rewrite(g, cm));
      agg->groups.push_back(r);
    }
    const bool scalar = op->groups.empty();
    std::vector<ColumnBinding> group_cols(op->columns.begin(),
                                          op->columns.begin() + static_cast<std::ptrdiff_t>(op->groups.size()));
    IdMap dm;
    for (int id : ids_) {
      ExprPtr g = ColumnOf(*c, cm.at(id));
      ColumnBinding col{b_->NewId(), "__outer", g->type};
      dm[id] = col.id;
      agg->groups.push_back(g);
      group_cols.push_back(col);
    }
    // Count-like aggregates of a scalar aggregate get new ids: the left
    // join from D makes their NULLs 0 under the old ones.
    std::vector<std::pair<ColumnBinding, int>> counts;  // (old column, new id)
    std::vector<ColumnBinding> agg_cols(op->columns.begin() + static_cast<std::ptrdiff_t>(op->groups.size()),
                                        op->columns.end());
    for (size_t k = 0; k < agg->aggregates.size(); ++k) {
      AggregateCall& a = agg->aggregates[k];
      QUIVER_ASSIGN_OR_RETURN(a.arg, Rewrite(a.arg, cm));
      if (!scalar || !CountLike(a.fn)) continue;
      for (auto& col : agg_cols)
        if (col.id == a.output_id) {
          counts.emplace_back(col, b_->NewId());
          col.id = counts.back().second;
          a.output_id = col.id;
          break;
        }
    }
    agg->columns = group_cols;
    agg->columns.insert(agg->columns.end(), agg_cols.begin(), agg_cols.end());
    agg->est_rows = std::max(1.0, c->est_rows * 0.2);
    agg->base_rows = agg->est_rows;
    if (!op->empty_input_groups.empty()) return EmptySetsPerD(op, agg, group_cols.size() - ids_.size(), dm, map);
    if (!scalar) {
      *map = std::move(dm);
      return LogicalOpPtr(agg);
    }
    // One row per D value, also for the values without rows.
    LogicalOpPtr d = NewD(map);
    std::vector<std::pair<ExprPtr, ExprPtr>> keys;
    QUIVER_RETURN_NOT_OK(DKeys(*map, dm, *d, *agg, &keys));
    LogicalOpPtr joined = Join(JoinKind::kLeft, d, agg, std::move(keys), nullptr);
    joined->est_rows = d->est_rows;
    std::vector<ExprPtr> exprs;
    std::vector<ColumnBinding> cols;
    for (const auto& col : op->columns) {
      ExprPtr e;
      for (const auto& [old_col, nid] : counts)
        if (old_col.id == col.id) {
          QUIVER_ASSIGN_OR_RETURN(
              e,
              BindCall(Fn::kCoalesce, {Expr::Column(nid, old_col.type), Expr::Constant(Value::Int64(0))}, location_));
        }
      exprs.push_back(e ? e : Expr::Column(col.id, col.type));
      cols.push_back(col);
    }
    AppendD(*joined, *map, &exprs, &cols);
    return MakeProject(joined, std::move(exprs), std::move(cols));
  }

  // GROUPING SETS with empty sets (`()`, ROLLUP's total): over no rows the
  // aggregate still gives their rows, so each D value needs them, also one
  // without rows. `agg` (grouped by D as well, `dm`; its first `num_groups`
  // columns the sets' groups) is FULL-joined with E = D x the empty sets'
  // group values on D and the groups (NULL-safe): a row of E without a
  // match gives the set's row with count-like aggregates 0 and the others
  // NULL; a row of `agg` of another set has no match in E and is kept.
  Result<LogicalOpPtr> EmptySetsPerD(const LogicalOpPtr& op, std::shared_ptr<LogicalOp> agg, size_t num_groups,
                                     const IdMap& dm, IdMap* map) {
    if (op->columns.size() != num_groups + agg->aggregates.size())
      return Status::Invalid("internal: a grouping-sets aggregate's columns are not its groups and aggregates");
    agg->empty_input_groups.clear();
    IdMap em;
    LogicalOpPtr d = NewD(&em);
    auto e = std::make_shared<LogicalOp>();
    e->kind = LogicalOp::Kind::kExpand;
    e->columns = d->columns;
    std::vector<int> e_groups;
    for (size_t g = 0; g < num_groups; ++g) {
      e_groups.push_back(b_->NewId());
      e->columns.push_back({e_groups.back(), "__group", agg->columns[g].type});
    }
    e->expand_sets = op->empty_input_groups;
    e->est_rows = d->est_rows * static_cast<double>(op->empty_input_groups.size());
    e->base_rows = d->base_rows;
    e->children = {d};
    // A column that is TRUE on every row of `agg`: NULL marks E's rows
    // without a match.
    const ColumnBinding present{b_->NewId(), "__present", boolean()};
    std::vector<ExprPtr> pass;
    for (const auto& col : agg->columns) pass.push_back(Expr::Column(col.id, col.type));
    pass.push_back(Expr::Constant(Value::Bool(true)));
    std::vector<ColumnBinding> pass_cols = agg->columns;
    pass_cols.push_back(present);
    LogicalOpPtr left = MakeProject(agg, std::move(pass), std::move(pass_cols));
    std::vector<std::pair<ExprPtr, ExprPtr>> keys;
    QUIVER_RETURN_NOT_OK(DKeys(dm, em, *left, *e, &keys));
    for (size_t g = 0; g < num_groups; ++g)
      QUIVER_RETURN_NOT_OK(AddNullSafeKeys(ColumnOf(*left, agg->columns[g].id), ColumnOf(*e, e_groups[g]), &keys));
    LogicalOpPtr j = Join(JoinKind::kFull, left, e, std::move(keys), nullptr);
    j->est_rows = std::max(agg->est_rows, e->est_rows);
    QUIVER_ASSIGN_OR_RETURN(ExprPtr unmatched, BindCall(Fn::kIsNull, {ColumnOf(*j, present.id)}, location_));
    auto pick = [&](int from_agg, int from_e) {
      return BindCall(Fn::kIf, {unmatched, ColumnOf(*j, from_e), ColumnOf(*j, from_agg)}, location_);
    };
    std::vector<ExprPtr> exprs;
    std::vector<ColumnBinding> cols;
    for (size_t g = 0; g < num_groups; ++g) {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr x, pick(agg->columns[g].id, e_groups[g]));
      exprs.push_back(x);
      cols.push_back(op->columns[g]);
    }
    for (size_t k = 0; k < agg->aggregates.size(); ++k) {
      const AggregateCall& a = agg->aggregates[k];
      const ColumnBinding& col = op->columns[num_groups + k];
      ExprPtr x = ColumnOf(*j, a.output_id);
      if (CountLike(a.fn)) {
        QUIVER_ASSIGN_OR_RETURN(x, BindCall(Fn::kCoalesce, {x, Expr::Constant(Value::Int64(0))}, location_));
      }
      exprs.push_back(x);
      cols.push_back(col);
    }
    map->clear();
    for (size_t k = 0; k < ids_.size(); ++k) {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr x, pick(dm.at(ids_[k]), em.at(ids_[k])));
      ColumnBinding col{b_->NewId(), "__outer", exprs_[k]->type};
      (*map)[ids_[k]] = col.id;
      exprs.push_back(x);
      cols.push_back(col);
    }
    return MakeProject(j, std::move(exprs), std::move(cols));
  }

  // ORDER BY ... LIMIT / OFFSET per D value: row_number() within D.
  Result<LogicalOpPtr> RowNumberBound(const LogicalOpPtr& op, const LogicalOpPtr& c, const IdMap& map) {
    auto call = std::make_shared<WindowCall>();
    call->fn = WindowFn::kRowNumber;
    call->type = int64();
    call->output_id = b_->NewId();
    call->unit = FrameUnit::kRows;
    for (int id : ids_) call->partition.push_back(ColumnOf(*c, map.at(id)));
    for (const auto& k : op->sort_keys) {
      SortKey key = k;
      QUIVER_ASSIGN_OR_RETURN(key.expr, Rewrite(k.expr, map));
      call->order.push_back(key);
    }
    auto w = std::make_shared<LogicalOp>();
    w->kind = LogicalOp::Kind::kWindow;
    w->columns = c->columns;
    w->columns.push_back({call->output_id, "__row", int64()});
    w->windows = {call};
    w->est_rows = c->est_rows;
    w->base_rows = c->base_rows;
    w->children = {c};
    ExprPtr rn = Expr::Column(call->output_id, int64());
    std::vector<ExprPtr> terms;
    if (op->offset > 0) {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr t, BindCall(Fn::kGt, {rn, Expr::Constant(Value::Int64(op->offset))}, location_));
      terms.push_back(t);
    }
    if (op->limit >= 0) {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr t,
                              BindCall(Fn::kLe, {rn, Expr::Constant(Value::Int64(op->offset + op->limit))}, location_));
      terms.push_back(t);
    }
    LogicalOpPtr f = terms.empty() ? LogicalOpPtr(w) : AddFilter(w, MakeAnd(terms));
    std::vector<ExprPtr> exprs;
    for (const auto& col : c->columns) exprs.push_back(Expr::Column(col.id, col.type));
    return MakeProject(f, std::move(exprs), c->columns);
  }

  Result<LogicalOpPtr> PushJoin(const LogicalOpPtr& op, IdMap* map) {
    const JoinKind kind = op->join_kind;
    // A RIGHT / FULL join's preserved right side carries D too (its rows
    // without a match keep their D values), so it is pushed into even
    // when it reads no outer column (then D x that side).
    const bool outer_join = kind == JoinKind::kRight || kind == JoinKind::kFull;
    const bool right_reads = TreeReads(*op->children[1], idset_) || outer_join;
    if (right_reads && (kind == JoinKind::kNullAwareAnti || (kind == JoinKind::kMark && op->mark_null_aware)))
      return b_->Unsupported("NOT IN / IN over a subquery correlated two levels out", location_);
    IdMap lm, rm;
    QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr l, Push(op->children[0], &lm));
    std::vector<std::pair<ExprPtr, ExprPtr>> keys;
    for (const auto& k : op->keys) {
      QUIVER_ASSIGN_OR_RETURN(ExprPtr a, Rewrite(k.first, lm));
      QUIVER_ASSIGN_OR_RETURN(ExprPtr b, Rewrite(k.second, lm));
      keys.emplace_back(a, b);
    }
    QUIVER_ASSIGN_OR_RETURN(ExprPtr residual, Rewrite(op->residual, lm));
    LogicalOpPtr r = op->children[1];
    if (right_reads) {
      QUIVER_ASSIGN_OR_RETURN(r, Push(op->children[1], &rm));
      QUIVER_RETURN_NOT_OK(DKeys(lm, rm, *l, *r, &keys));
    }
    const ColumnBinding* mark = kind == JoinKind::kMark ? &op->columns.back() : nullptr;
    LogicalOpPtr j = Join(kind, l, r, std::move(keys), residual, mark, op->mark_null_aware);
    j->est_rows = std::max(1.0, op->est_rows);
    if (kind == JoinKind::kRight) {
      *map = std::move(rm);
      return j;
    }
    if (kind != JoinKind::kFull) {
      *map = std::move(lm);
      return j;
    }
    // FULL: D is the side's that has the row: coalesce(left's, right's)
    // (a matched row's are equal; NULL only where the value is NULL).
    std::vector<ExprPtr> exprs;
    std::vector<ColumnBinding> cols = j->columns;
    for (const auto& c : j->columns) exprs.push_back(Expr::Column(c.id, c.type));
    map->clear();
    for (size_t k = 0; k < ids_.size(); ++k) {
      QUIVER_ASSIGN_OR_RETURN(
          ExprPtr d, BindCall(Fn::kCoalesce, {ColumnOf(*j, lm.at(ids_[k])), ColumnOf(*j, rm.at(ids_[k]))}, location_));
      ColumnBinding col{b_->NewId(), "__outer", exprs_[k]->type};
      (*map)[ids_[k]] = col.id;
      exprs.push_back(d);
      cols.push_back(col);
    }
    return MakeProject(j, std::move(exprs), std::move(cols));
  }

  Binder::Impl* b_;
  LogicalOpPtr source_;
  std::vector<int> ids_;
  std::vector<ExprPtr> exprs_;
  std::set<int> idset_;
  int location_;
};

// Whether `sub` returns at most one row per evaluation: an aggregate
// without GROUP BY, or LIMIT 0 / 1, under projections and filters.
bool AtMostOneRow(const LogicalOp& sub) {
  const LogicalOp* op = &sub;
  while (true) {
    if (op->kind == LogicalOp::Kind::kAggregate) return op->groups.empty() && op->empty_input_groups.empty();
    if ((op->kind == LogicalOp::Kind::kLimit || op->kind == LogicalOp::Kind::kSort) && op->limit >= 0 && op->limit <= 1)
      return true;
    if (op->kind == LogicalOp::Kind::kSingleRow) return true;
    if (op->children.size() != 1 || (op->kind != LogicalOp::Kind::kProject && op->kind != LogicalOp::Kind::kFilter &&
                                     op->kind != LogicalOp::Kind::kSort))
      return false;
    op = op->children[0].get();
  }
}

}  // namespace

Result<LogicalOpPtr> Binder::Impl::JoinDependent(LogicalOpPtr outer, const LogicalOpPtr& sub,
                                                 const std::vector<int>& outer_ids,
                                                 const std::vector<ExprPtr>& outer_exprs, DependentJoin how,
                                                 std::vector<std::pair<ExprPtr, ExprPtr>> keys, ExprPtr residual,
                                                 int location, const ColumnBinding* mark) {
  std::set<int> read;
  for (const auto& e : outer_exprs) VisitColumns(*e, [&](int id) { read.insert(id); });
  Flattener f(this, ValueSource(outer, read), outer_ids, outer_exprs, location);
  IdMap map;
  QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr r, f.Push(sub, &map));
  if (how == DependentJoin::kScalar && !AtMostOneRow(*sub)) {
    // One row per D value (bind_scalar_lookup.cc); every D value is asked
    // for. (Before, the 21000 check ran a copy of the whole subquery.)
    std::vector<ExprPtr> d_cols;
    for (int id : outer_ids) {
      const int d = map.at(id);
      d_cols.push_back(Expr::Column(d, r->columns[static_cast<size_t>(r->IndexOf(d))].type));
    }
    std::vector<ColumnBinding> key_cols;
    QUIVER_ASSIGN_OR_RETURN(r, OneRowPerKey(r, d_cols, sub->columns[0], nullptr, location, &key_cols));
    for (size_t k = 0; k < outer_ids.size(); ++k) map[outer_ids[k]] = key_cols[k].id;
  }
  for (size_t k = 0; k < outer_ids.size(); ++k) {
    const int d = map.at(outer_ids[k]);
    const auto& col = r->columns[static_cast<size_t>(r->IndexOf(d))];
    QUIVER_RETURN_NOT_OK(f.AddNullSafeKeys(outer_exprs[k], Expr::Column(d, col.type), &keys));
  }
  JoinKind kind = JoinKind::kInner;
  switch (how) {
    case DependentJoin::kScalar:
    case DependentJoin::kLeft: kind = JoinKind::kLeft; break;
    case DependentJoin::kInner: kind = JoinKind::kInner; break;
    case DependentJoin::kSemi: kind = JoinKind::kSemi; break;
    case DependentJoin::kAnti: kind = JoinKind::kAnti; break;
    case DependentJoin::kMark: kind = JoinKind::kMark; break;
  }
  if (how == DependentJoin::kMark && !mark) return Status::Invalid("a dependent mark join without its mark column");
  const double rows = outer->est_rows;
  LogicalOpPtr j = Flattener::Join(kind, std::move(outer), std::move(r), std::move(keys), std::move(residual),
                                   how == DependentJoin::kMark ? mark : nullptr);
  j->est_rows = std::max(1.0, how == DependentJoin::kScalar || how == DependentJoin::kMark ? rows : rows * 0.5);
  return j;
}

Result<ExprPtr> Binder::Impl::BindDependentScalar(Json& select, ExprContext* ctx, int location) {
  if (!ctx->query) return Unsupported("a correlated subquery in " + ctx->clause, location);
  QUIVER_ASSIGN_OR_RETURN(BoundQuery b, BindDependent(select, ctx->scope));
  if (b.visible.size() != 1) return Error("subquery must return only one column", location);
  const std::vector<int> ids = OuterColumnsOf(*b.plan, *ctx->scope);
  const ColumnBinding value = b.plan->columns[0];
  LogicalOpPtr sub = b.plan;
  if (b.plan->columns.size() != 1) {  // (hidden ORDER BY columns are dropped by then; keep the value only)
    sub = MakeProject(b.plan, {Expr::Column(value.id, value.type)}, {value});
  }
  return AttachDependentScalar(sub, ids, ctx, location);
}

Result<ExprPtr> Binder::Impl::AttachDependentScalar(const LogicalOpPtr& sub, const std::vector<int>& ids,
                                                    ExprContext* ctx, int location) {
  const ColumnBinding value = sub->columns[0];
  if (ctx->aggs && !ctx->in_aggregate) {
    // SELECT list, HAVING, ORDER BY: the query may aggregate (the join goes
    // onto its groups: ApplyDeferredJoins). In an aggregate's argument it
    // goes below the aggregate, onto the rows it reads.
    QueryState::DeferredJoin d;
    d.sub = sub;
    d.dependent = true;
    d.outer_ids = ids;
    d.location = location;
    ctx->query->deferred_joins.push_back(std::move(d));
  } else {
    QUIVER_ASSIGN_OR_RETURN(std::vector<ExprPtr> exprs, OuterExprs(*ctx->query->plan, ids, location));
    QUIVER_ASSIGN_OR_RETURN(ctx->query->plan, JoinDependent(ctx->query->plan, sub, ids, exprs, DependentJoin::kScalar,
                                                            {}, nullptr, location));
  }
  return Expr::Column(value.id, value.type, location);
}

Result<std::vector<ExprPtr>> Binder::Impl::OuterExprs(const LogicalOp& plan, const std::vector<int>& ids,
                                                      int location) {
  std::vector<ExprPtr> exprs;
  for (int id : ids) {
    const int at = plan.IndexOf(id);
    if (at < 0) return Unsupported("a correlated subquery reading this outer column here", location);
    exprs.push_back(Expr::Column(id, plan.columns[static_cast<size_t>(at)].type));
  }
  return exprs;
}

Status Binder::Impl::ApplyDependentSemiJoin(Json& select, ExprPtr x, bool negated, QueryState* q, int location) {
  QUIVER_ASSIGN_OR_RETURN(BoundQuery b, BindDependent(select, &q->scope));
  std::vector<std::pair<ExprPtr, ExprPtr>> keys;
  if (x) {
    if (b.visible.size() != 1) return Error("subquery has too many columns for IN", location);
    const ColumnBinding& y = b.visible[0];
    auto check = BindCall(Fn::kEq, {x, Expr::Column(y.id, y.type)}, location);
    if (!check.ok()) return WithPosition(check.status(), location);
    keys.emplace_back(x, Expr::Column(y.id, y.type));
  }
  const std::vector<int> ids = OuterColumnsOf(*b.plan, q->scope);
  QUIVER_ASSIGN_OR_RETURN(std::vector<ExprPtr> exprs, OuterExprs(*q->plan, ids, location));
  QUIVER_ASSIGN_OR_RETURN(
      q->plan, JoinDependent(q->plan, b.plan, ids, exprs, negated ? DependentJoin::kAnti : DependentJoin::kSemi,
                             std::move(keys), nullptr, location));
  return Status::OK();
}

Status Binder::Impl::BindLateral(Json& rs, QueryState* q, std::vector<LogicalOpPtr>* rels, std::vector<ExprPtr>* preds,
                                 Json* left_join) {
  const int location = FirstLocation(rs);
  Json* alias = rs.contains("alias") ? &rs["alias"] : nullptr;
  const std::string name = alias ? FoldIdentifier(alias->value("aliasname", "")) : std::string();
  QUIVER_ASSIGN_OR_RETURN(BoundQuery b, BindDependent(rs["subquery"]["SelectStmt"], &q->scope));
  std::vector<std::string> names = b.names;
  QUIVER_RETURN_NOT_OK(ApplyColumnAliases(alias, name, &names, Where(location)));
  for (const auto& a : q->scope.aliases)
    if (!name.empty() && a.first == name) return Error("table name '" + name + "' is used twice in FROM", location);
  const std::vector<int> ids = OuterColumnsOf(*b.plan, q->scope);
  q->scope.aliases.emplace_back(name, location);
  AddToScope(q, name, *b.plan, names);
  if (ids.empty() && !left_join) {
    rels->push_back(b.plan);
    return Status::OK();
  }
  QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr left, PlanJoinGraph(*rels, *preds));
  rels->clear();
  preds->clear();
  std::vector<ExprPtr> exprs;
  for (int id : ids) {
    const int at = left->IndexOf(id);
    if (at < 0) return Unsupported("LATERAL reading a column of a join's other side", location);
    exprs.push_back(Expr::Column(id, left->columns[static_cast<size_t>(at)].type));
  }
  ExprPtr on;
  if (left_join && left_join->contains("quals")) {
    Json& quals = (*left_join)["quals"];
    if (ContainsSubLink(quals)) return Unsupported("a subquery in JOIN ... ON", FirstLocation(quals));
    ExprContext ctx{&q->scope, "JOIN ... ON", nullptr, false, nullptr};
    QUIVER_ASSIGN_OR_RETURN(on, BindExpr(quals, &ctx));
    QUIVER_RETURN_NOT_OK(WithPosition(CheckBoolean(*on, "JOIN ... ON"), FirstLocation(quals)));
    if (on->kind == Expr::Kind::kConstant && !on->value.is_null && on->value.i != 0) on = nullptr;  // ON true
  }
  QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr joined,
                          JoinDependent(left, b.plan, ids, exprs,
                                        left_join ? DependentJoin::kLeft : DependentJoin::kInner, {}, on, location));
  rels->push_back(joined);
  return Status::OK();
}

}  // namespace quiver::sql

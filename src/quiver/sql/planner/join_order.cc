// quiver/sql/planner/join_order.cc — the join graph of a FROM list (see
// join_order.h), selectivity guesses and OR
// factoring.
//
// Cardinality model (no statistics beyond row counts): a filtered
// relation keeps est_rows = rows x selectivity; a join of L and R on keys
// is treated as a foreign-key join whose key side is the relation with
// the smaller base table, so |L join R| = |FK side| x (fraction of the key
// side kept). That is exact for TPC-H's key joins under independent
// filters and errs low on many-to-many joins.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "quiver/sql/planner/join_order.h"

#include "quiver/sql/planner/filter_terms.h"

namespace quiver::sql {

double Selectivity(const Expr& e) {
  if (e.kind == Expr::Kind::kConstant) return e.value.is_null || e.value.i == 0 ? 0.0 : 1.0;
  if (e.kind != Expr::Kind::kCall) return 0.5;
  switch (e.fn) {
    case Fn::kAnd: {
      double s = 1;
      for (const auto& a : e.args) s *= Selectivity(*a);
      return s;
    }
    case Fn::kOr: {
      double s = 0;
      for (const auto& a : e.args) s += Selectivity(*a);
      return std::min(1.0, s);
    }
    case Fn::kNot: return 1.0 - Selectivity(*e.args[0]) * 0.9;
    case Fn::kEq: return 0.1;
    case Fn::kNe: return 0.9;
    case Fn::kLt:
    case Fn::kLe:
    case Fn::kGt:
    case Fn::kGe: return 0.4;
    case Fn::kLike: return e.negated ? 0.9 : 0.1;
    case Fn::kInList:
      return e.negated ? 0.8 : std::min(0.5, 0.1 * static_cast<double>(std::max<size_t>(e.args.size() - 1, 2)));
    case Fn::kIsNull: return 0.05;
    case Fn::kIsNotNull: return 0.95;
    default: return 0.5;
  }
}

LogicalOpPtr AddFilter(LogicalOpPtr child, const ExprPtr& predicate) {
  const double sel = Selectivity(*predicate);
  if (child->kind == LogicalOp::Kind::kScan || child->kind == LogicalOp::Kind::kFilter) {
    auto copy = std::make_shared<LogicalOp>(*child);
    if (copy->kind == LogicalOp::Kind::kScan) {
      copy->filters.push_back(predicate);
    } else {
      copy->predicate = Expr::Call(Fn::kAnd, {copy->predicate, predicate}, boolean());
    }
    copy->est_rows = std::max(1.0, copy->est_rows * sel);
    return copy;
  }
  auto f = std::make_shared<LogicalOp>();
  f->kind = LogicalOp::Kind::kFilter;
  f->columns = child->columns;
  f->predicate = predicate;
  f->est_rows = std::max(1.0, child->est_rows * sel);
  f->base_rows = child->base_rows;
  f->children = {std::move(child)};
  return f;
}

namespace {

// `e` with every column reference replaced by `map(id)`; nullptr when `map`
// has no replacement for one of them.
ExprPtr Substitute(const ExprPtr& e, const std::function<ExprPtr(int)>& map) {
  bool ok = true;
  ExprPtr out = Transform(e, [&](const ExprPtr& x) -> ExprPtr {
    if (x->kind != Expr::Kind::kColumn) return nullptr;
    ExprPtr r = map(x->column);
    ok &= r != nullptr;
    return r ? r : x;
  });
  return ok ? out : nullptr;
}

// True when `op` is known to produce no row: a FALSE filter, under
// projections and filters.
bool KnownEmpty(const LogicalOp& op) {
  for (const LogicalOp* o = &op; o->children.size() == 1; o = o->children[0].get()) {
    if (o->kind == LogicalOp::Kind::kFilter && IsFalseTerm(*SimplifyTerm(o->predicate))) return true;
    if (o->kind != LogicalOp::Kind::kFilter && o->kind != LogicalOp::Kind::kProject) return false;
  }
  return false;
}

bool HasColumns(const Expr& e) {
  bool any = false;
  VisitColumns(e, [&](int) { any = true; });
  return any;
}

// A copy of `conjunct` (over the side holding `from`'s columns) for the
// other side of a join, through the key equalities that name a column on
// each side (of one type): p(l.k) kept on the left means only right rows
// with p(r.k) can match. nullptr when some column is not such a key.
ExprPtr AcrossKeys(const LogicalOp& join, const ExprPtr& conjunct, bool from_left) {
  return Substitute(conjunct, [&](int id) -> ExprPtr {
    for (const auto& [l, r] : join.keys) {
      const ExprPtr& mine = from_left ? l : r;
      const ExprPtr& other = from_left ? r : l;
      if (mine->kind == Expr::Kind::kColumn && mine->column == id && other->kind == Expr::Kind::kColumn && mine->type &&
          other->type && mine->type->Equals(*other->type))
        return other;
    }
    return nullptr;
  });
}

}  // namespace

LogicalOpPtr PushFilter(const LogicalOpPtr& plan, const ExprPtr& conjunct) {
  const bool inner = plan->kind == LogicalOp::Kind::kJoin && plan->join_kind == JoinKind::kInner;
  const bool left = plan->kind == LogicalOp::Kind::kJoin && plan->join_kind == JoinKind::kLeft;
  // Semi and anti joins output their left side; a term over it filters the
  // left rows, and (but for NOT IN, where the right side's NULLs count)
  // through a key the right rows that could match them.
  const bool semi = plan->kind == LogicalOp::Kind::kJoin &&
                    (plan->join_kind == JoinKind::kSemi || plan->join_kind == JoinKind::kAnti ||
                     plan->join_kind == JoinKind::kNullAwareAnti);
  // Below projections, aggregates and filters only what cannot fail: the
  // filters it passes may be what keeps its rows from failing (y <> 0
  // under x / y > 1).
  const bool may_move = !MayFail(*conjunct) && HasColumns(*conjunct);
  if ((inner || left || semi) && plan->children.size() == 2) {
    auto sides = [&](const Expr& e) {
      int mask = 0;
      VisitColumns(e, [&](int id) {
        mask |= plan->children[0]->IndexOf(id) >= 0 ? 1 : (plan->children[1]->IndexOf(id) >= 0 ? 2 : 4);
      });
      return mask;
    };
    const int mask = sides(*conjunct);
    const double sel = Selectivity(*conjunct);
    auto copy = std::make_shared<LogicalOp>(*plan);
    copy->est_rows = std::max(1.0, plan->est_rows * sel);
    // The preserved side of a LEFT join, either side of an inner join, the
    // left side of a semi / anti join.
    if (mask == 1 || (inner && mask == 2)) {
      const size_t c = mask == 1 ? 0 : 1;
      copy->children[c] = PushFilter(plan->children[c], conjunct);
      // The same condition over the other side's key columns (TPC-DS 78:
      // ss_sold_year = 2000 under ss LEFT JOIN ws ON ws_sold_year =
      // ss_sold_year filters ws's years too).
      if (may_move && plan->join_kind != JoinKind::kNullAwareAnti) {
        if (ExprPtr other = AcrossKeys(*plan, conjunct, c == 0))
          copy->children[1 - c] = PushFilter(plan->children[1 - c], other);
      }
      return copy;
    }
    // An equality between the sides of an inner join: one more key.
    if (inner && mask == 3 && conjunct->kind == Expr::Kind::kCall && conjunct->fn == Fn::kEq) {
      const int l = sides(*conjunct->args[0]), r = sides(*conjunct->args[1]);
      if ((l == 1 && r == 2) || (l == 2 && r == 1)) {
        copy->keys.emplace_back(l == 1 ? conjunct->args[0] : conjunct->args[1],
                                l == 1 ? conjunct->args[1] : conjunct->args[0]);
        return copy;
      }
    }
  }
  if (plan->kind == LogicalOp::Kind::kFilter && plan->children.size() == 1) {
    bool below = true;
    VisitColumns(*conjunct, [&](int id) { below &= plan->children[0]->IndexOf(id) >= 0; });
    if (below && (plan->children[0]->kind == LogicalOp::Kind::kJoin || may_move)) {
      auto copy = std::make_shared<LogicalOp>(*plan);
      copy->children[0] = PushFilter(plan->children[0], conjunct);
      copy->est_rows = std::max(1.0, plan->est_rows * Selectivity(*conjunct));
      return copy;
    }
  }
  // Through a projection whose columns the term reads are columns below
  // (renames: a WITH query's or a derived table's SELECT list) or
  // constants (a UNION ALL branch's 's' AS sale_type: sale_type = 's'
  // becomes TRUE there and is dropped, FALSE in the other branches, which
  // the UNION ALL rule below then drops).
  if (may_move && plan->kind == LogicalOp::Kind::kProject && plan->children.size() == 1) {
    ExprPtr below = Substitute(conjunct, [&](int id) -> ExprPtr {
      const int i = plan->IndexOf(id);
      if (i < 0 || static_cast<size_t>(i) >= plan->exprs.size()) return nullptr;
      const ExprPtr& x = plan->exprs[static_cast<size_t>(i)];
      return x->kind == Expr::Kind::kColumn || x->kind == Expr::Kind::kConstant ? x : nullptr;
    });
    if (below) below = SimplifyTerm(below);
    if (below && IsTrueTerm(*below)) return plan;
    if (below && !HasColumns(*below)) return AddFilter(plan, below);
    if (below) {
      auto copy = std::make_shared<LogicalOp>(*plan);
      copy->children[0] = PushFilter(plan->children[0], below);
      copy->est_rows = std::max(1.0, plan->est_rows * Selectivity(*conjunct));
      return copy;
    }
  }
  // Through an aggregate when the term reads only grouping columns that
  // are columns below: it keeps or drops whole groups, so it may drop
  // their rows first (TPC-DS 78: ss_sold_year = 2000 becomes d_year = 2000
  // below the GROUP BY d_year, and then a filter of date_dim). A term
  // that also reads aggregates stays above, and what it implies over the
  // grouping columns goes below (filter_terms.h WeakenTerm: TPC-DS 4's
  // d_year = 2001 AND year_total > 0 OR d_year = 2002 sends
  // d_year = 2001 OR d_year = 2002 down).
  if (may_move && plan->kind == LogicalOp::Kind::kAggregate && plan->children.size() == 1 && !plan->groups.empty()) {
    auto to_groups = [&](const ExprPtr& term) {
      return Substitute(term, [&](int id) -> ExprPtr {
        const int i = plan->IndexOf(id);
        if (i < 0 || static_cast<size_t>(i) >= plan->groups.size()) return nullptr;
        const ExprPtr& x = plan->groups[static_cast<size_t>(i)];
        return x->kind == Expr::Kind::kColumn ? x : nullptr;
      });
    };
    const bool whole = to_groups(conjunct) != nullptr;
    ExprPtr implied = whole ? conjunct : WeakenTerm(conjunct, [&](const Expr& t) {
      bool grouped = true;
      VisitColumns(t, [&](int id) {
        const int i = plan->IndexOf(id);
        grouped &= i >= 0 && static_cast<size_t>(i) < plan->groups.size() &&
                   plan->groups[static_cast<size_t>(i)]->kind == Expr::Kind::kColumn;
      });
      return grouped && HasColumns(t);
    });
    if (ExprPtr below = implied ? to_groups(implied) : nullptr) {
      auto copy = std::make_shared<LogicalOp>(*plan);
      copy->children[0] = PushFilter(plan->children[0], below);
      copy->est_rows = std::max(1.0, plan->est_rows * Selectivity(*implied));
      return whole ? LogicalOpPtr(copy) : AddFilter(copy, conjunct);
    }
  }
  // Into every branch of a UNION ALL, over that branch's columns (same
  // position, same type): each branch keeps its own rows of the result. A
  // branch the term empties (a constant FALSE, TPC-DS 4's 'c' = 's') is
  // dropped.
  if (may_move && plan->kind == LogicalOp::Kind::kUnion && !plan->children.empty()) {
    std::vector<LogicalOpPtr> kept;
    LogicalOpPtr first;
    double rows = 0;
    for (const auto& child : plan->children) {
      ExprPtr mine = Substitute(conjunct, [&](int id) -> ExprPtr {
        const int i = plan->IndexOf(id);
        if (i < 0 || static_cast<size_t>(i) >= child->columns.size()) return nullptr;
        const auto& c = child->columns[static_cast<size_t>(i)];
        return Expr::Column(c.id, c.type);
      });
      if (!mine) return AddFilter(plan, conjunct);
      LogicalOpPtr pushed = PushFilter(child, mine);
      if (!first) first = pushed;
      if (KnownEmpty(*pushed)) continue;
      rows += pushed->est_rows;
      kept.push_back(std::move(pushed));
    }
    if (kept.empty()) kept.push_back(first);
    if (kept.size() == 1) {
      // One branch left: its columns renamed to the union's.
      auto p = std::make_shared<LogicalOp>();
      p->kind = LogicalOp::Kind::kProject;
      p->columns = plan->columns;
      for (const auto& c : kept[0]->columns) p->exprs.push_back(Expr::Column(c.id, c.type));
      p->est_rows = kept[0]->est_rows;
      p->base_rows = kept[0]->base_rows;
      p->children = {kept[0]};
      return p;
    }
    auto copy = std::make_shared<LogicalOp>(*plan);
    copy->children = std::move(kept);
    copy->est_rows = std::max(1.0, rows);
    return copy;
  }
  return AddFilter(plan, conjunct);
}

ExprPtr FactorOr(const ExprPtr& e) {
  if (e->kind != Expr::Kind::kCall) return e;
  if (e->fn == Fn::kAnd) {
    std::vector<ExprPtr> terms;
    for (const auto& a : e->args) {
      std::vector<ExprPtr> sub;
      SplitConjuncts(FactorOr(a), &sub);
      terms.insert(terms.end(), sub.begin(), sub.end());
    }
    return MakeAnd(terms);
  }
  if (e->fn != Fn::kOr) return e;
  std::vector<std::vector<ExprPtr>> branches;
  for (const auto& a : e->args) {
    std::vector<ExprPtr> c;
    SplitConjuncts(FactorOr(a), &c);
    branches.push_back(std::move(c));
  }
  std::vector<ExprPtr> common;
  for (const auto& cand : branches[0]) {
    bool everywhere = true;
    for (size_t b = 1; b < branches.size() && everywhere; ++b) {
      bool found = false;
      for (const auto& x : branches[b]) found |= ExprEquals(*cand, *x);
      everywhere = found;
    }
    bool dup = false;
    for (const auto& c : common) dup |= ExprEquals(*c, *cand);
    if (everywhere && !dup) common.push_back(cand);
  }
  if (common.empty()) return e;
  std::vector<ExprPtr> rest_or;
  for (auto& br : branches) {
    std::vector<ExprPtr> rest;
    for (const auto& x : br) {
      bool is_common = false;
      for (const auto& c : common) is_common |= ExprEquals(*c, *x);
      if (!is_common) rest.push_back(x);
    }
    if (rest.empty()) {  // one branch is only the common part: the OR is true
      rest_or.clear();
      break;
    }
    rest_or.push_back(MakeAnd(rest));
  }
  std::vector<ExprPtr> terms = common;
  if (!rest_or.empty()) terms.push_back(rest_or.size() == 1 ? rest_or[0] : Expr::Call(Fn::kOr, rest_or, boolean()));
  return MakeAnd(terms);
}

namespace {

struct Node {
  LogicalOpPtr plan;
  uint64_t rels = 0;  // bit set of relation indices (up to 64)
};

struct Pred {
  ExprPtr expr;
  uint64_t rels = 0;
  bool used = false;
};

double Frac(const LogicalOp& op) { return std::min(1.0, op.est_rows / std::max(1.0, op.base_rows)); }

// The table a relation reads when it is one scan (under filters), else
// nullptr.
const LogicalOp* ScanOf(const LogicalOp& op) {
  const LogicalOp* o = &op;
  while (o->kind == LogicalOp::Kind::kFilter && o->children.size() == 1) o = o->children[0].get();
  return o->kind == LogicalOp::Kind::kScan ? o : nullptr;
}

double JoinEstimate(const LogicalOp& a, const LogicalOp& b, bool has_keys) {
  if (!has_keys) return a.est_rows * b.est_rows;
  // Two scans of one table are seldom joined on its key (cd1.cd_marital_status
  // = cd2.cd_marital_status, d1.d_week_seq = d2.d_week_seq): taken as many
  // to many, each row meeting sqrt(rows) rows of the other side, not as
  // foreign key to key (TPC-DS 85 joined two customer_demographics on
  // marital status and education first: billions of rows).
  const LogicalOp *sa = ScanOf(a), *sb = ScanOf(b);
  if (sa && sb && sa->table.name == sb->table.name) {
    return std::max(1.0, a.est_rows * b.est_rows / std::max(1.0, std::sqrt(std::min(a.base_rows, b.base_rows))));
  }
  // the side with the smaller base table is the key side
  if (a.base_rows <= b.base_rows) return std::max(1.0, b.est_rows * Frac(a));
  return std::max(1.0, a.est_rows * Frac(b));
}

LogicalOpPtr MakeJoin(LogicalOpPtr probe, LogicalOpPtr build, std::vector<std::pair<ExprPtr, ExprPtr>> keys,
                      double est) {
  auto j = std::make_shared<LogicalOp>();
  j->kind = LogicalOp::Kind::kJoin;
  j->join_kind = JoinKind::kInner;
  j->columns = probe->columns;
  j->columns.insert(j->columns.end(), build->columns.begin(), build->columns.end());
  j->keys = std::move(keys);
  j->est_rows = est;
  j->base_rows = std::max(probe->base_rows, build->base_rows);
  j->children = {std::move(probe), std::move(build)};
  return j;
}

// Joins two plans on `keys` (left side exprs of `a`): the smaller side
// builds (the right child).
LogicalOpPtr JoinSmallerBuilds(LogicalOpPtr a, LogicalOpPtr b, std::vector<std::pair<ExprPtr, ExprPtr>> keys,
                               double est) {
  if (b->est_rows <= a->est_rows) return MakeJoin(std::move(a), std::move(b), std::move(keys), est);
  std::vector<std::pair<ExprPtr, ExprPtr>> swapped;
  for (auto& k : keys) swapped.emplace_back(k.second, k.first);
  return MakeJoin(std::move(b), std::move(a), std::move(swapped), est);
}

constexpr size_t kMaxDpRelations = 10;

// The join order minimising the sum of the estimated intermediate results
// (C_out) over every bushy tree of key joins (DPsize over connected
// subsets, as System R and DuckDB's join order optimiser enumerate them;
// cross products are not considered). Each predicate is applied at the
// lowest join that covers its relations: an equality between the two sides
// as a key, anything else as a filter over the join. Small dimension joins
// (supplier with a filtered nation) thereby come before the fact table's
// joins instead of after them. nullptr when the key edges do not form a
// tree over the relations (the greedy order handles that). Marks the predicates it
// applies as used.
template <typename KeySides>
LogicalOpPtr PlanByDynamicProgramming(const std::vector<LogicalOpPtr>& relations, std::vector<Pred>* preds,
                                      KeySides key_sides) {
  const size_t n = relations.size();
  const uint64_t full = (uint64_t{1} << n) - 1;
  // Only for a tree of key equalities (n - 1 related pairs): the estimates
  // treat each join as foreign key to key, which a cycle breaks (TPC-H Q5's
  // c_nationkey = s_nationkey joins customers to suppliers many-to-many:
  // taken first, it made 60 M rows); the greedy order keeps to the chain.
  std::set<std::pair<int, int>> pairs;
  for (const Pred& p : *preds) {
    if (__builtin_popcountll(p.rels) != 2) continue;
    const int a = __builtin_ctzll(p.rels);
    const int b = 63 - __builtin_clzll(p.rels);
    ExprPtr ka, kb;
    if (key_sides(p, uint64_t{1} << a, uint64_t{1} << b, &ka, &kb)) pairs.emplace(a, b);
  }
  if (pairs.size() != n - 1) return nullptr;
  struct Entry {
    LogicalOpPtr plan;
    double cost = 0;
  };
  std::vector<Entry> best(static_cast<size_t>(full) + 1);
  for (size_t r = 0; r < n; ++r) best[uint64_t{1} << r] = {relations[r], 0};
  for (uint64_t mask = 1; mask <= full; ++mask) {
    if ((mask & (mask - 1)) == 0) continue;  // singletons are set
    // Every split into two non-empty halves, each half once (sub holds the
    // lowest relation of mask).
    const uint64_t low = mask & (~mask + 1);
    for (uint64_t sub = (mask - 1) & mask; sub != 0; sub = (sub - 1) & mask) {
      if (!(sub & low)) continue;
      const uint64_t other = mask ^ sub;
      const Entry& a = best[sub];
      const Entry& b = best[other];
      if (!a.plan || !b.plan) continue;
      std::vector<std::pair<ExprPtr, ExprPtr>> keys;
      std::vector<ExprPtr> filters;
      for (const Pred& p : *preds) {
        if ((p.rels & ~mask) != 0 || (p.rels & ~sub) == 0 || (p.rels & ~other) == 0) continue;
        ExprPtr ka, kb;
        if (key_sides(p, sub, other, &ka, &kb)) {
          keys.emplace_back(ka, kb);
        } else {
          filters.push_back(p.expr);
        }
      }
      if (keys.empty()) continue;  // no cross products
      LogicalOpPtr joined = JoinSmallerBuilds(a.plan, b.plan, keys, JoinEstimate(*a.plan, *b.plan, true));
      for (const auto& f : filters) joined = AddFilter(joined, f);
      const double cost = a.cost + b.cost + joined->est_rows;
      Entry& e = best[mask];
      if (!e.plan || cost < e.cost) e = {joined, cost};
    }
  }
  if (!best[full].plan) return nullptr;
  for (auto& p : *preds) p.used = true;
  return best[full].plan;
}

}  // namespace

Result<LogicalOpPtr> PlanJoinGraph(std::vector<LogicalOpPtr> relations, std::vector<ExprPtr> predicates) {
  if (relations.size() > 64) return Status::NotImplemented("more than 64 relations in one FROM clause");
  std::map<int, int> owner;  // column id -> relation
  for (size_t r = 0; r < relations.size(); ++r)
    for (const auto& c : relations[r]->columns) owner[c.id] = static_cast<int>(r);
  std::vector<Pred> preds;
  std::vector<ExprPtr> constant_preds;
  for (const auto& p : predicates) {
    std::vector<ExprPtr> terms;
    SplitConjuncts(FactorOr(p), &terms);
    for (const auto& t : terms) {
      Pred x;
      x.expr = t;
      VisitColumns(*t, [&](int id) {
        auto it = owner.find(id);
        if (it != owner.end()) x.rels |= uint64_t{1} << it->second;
      });
      if (x.rels == 0) {
        constant_preds.push_back(t);
        continue;
      }
      // single relation: push down now (into it, when it is a tree of
      // explicit JOINs: TPC-DS 72's WHERE below its LEFT JOINs)
      if ((x.rels & (x.rels - 1)) == 0) {
        const int r = __builtin_ctzll(x.rels);
        relations[static_cast<size_t>(r)] = PushFilter(relations[static_cast<size_t>(r)], t);
        continue;
      }
      preds.push_back(x);
      // An OR over several relations implies, for each relation every branch
      // constrains, the OR of those constraints alone: push that down too
      // ((n1 = 'F' AND n2 = 'G') OR (n1 = 'G' AND n2 = 'F') gives
      // n1 IN ('F', 'G') on n1), keeping the OR itself as the join filter.
      if (t->kind == Expr::Kind::kCall && t->fn == Fn::kOr) {
        for (size_t r = 0; r < relations.size(); ++r) {
          if (!(x.rels & (uint64_t{1} << r))) continue;
          std::vector<ExprPtr> branches;
          for (const auto& branch : t->args) {
            std::vector<ExprPtr> conj, mine;
            SplitConjuncts(branch, &conj);
            for (const auto& c : conj) {
              bool only_r = true, any = false;
              VisitColumns(*c, [&](int id) {
                auto it = owner.find(id);
                any = true;
                only_r &= it != owner.end() && it->second == static_cast<int>(r);
              });
              if (any && only_r) mine.push_back(c);
            }
            if (mine.empty()) break;
            branches.push_back(MakeAnd(mine));
          }
          if (branches.size() == t->args.size())
            relations[r] = AddFilter(relations[r], Expr::Call(Fn::kOr, branches, boolean()));
        }
      }
    }
  }
  // An equality whose sides each lie in one relation set (disjoint).
  auto key_sides = [&](const Pred& p, uint64_t a, uint64_t b, ExprPtr* ka, ExprPtr* kb) {
    const Expr& e = *p.expr;
    if (e.kind != Expr::Kind::kCall || e.fn != Fn::kEq) return false;
    uint64_t l = 0, r = 0;
    VisitColumns(*e.args[0], [&](int id) {
      auto it = owner.find(id);
      if (it != owner.end()) l |= uint64_t{1} << it->second;
    });
    VisitColumns(*e.args[1], [&](int id) {
      auto it = owner.find(id);
      if (it != owner.end()) r |= uint64_t{1} << it->second;
    });
    if (l == 0 || r == 0) return false;
    if ((l & ~a) == 0 && (r & ~b) == 0) {
      *ka = e.args[0];
      *kb = e.args[1];
      return true;
    }
    if ((r & ~a) == 0 && (l & ~b) == 0) {
      *ka = e.args[1];
      *kb = e.args[0];
      return true;
    }
    return false;
  };
  if (relations.empty()) return Status::Invalid("internal: empty join graph");
  if (relations.size() >= 3 && relations.size() <= kMaxDpRelations) {
    if (LogicalOpPtr plan = PlanByDynamicProgramming(relations, &preds, key_sides)) {
      for (const auto& p : constant_preds) plan = AddFilter(plan, p);
      return plan;
    }
  }
  std::vector<Node> nodes;
  for (size_t r = 0; r < relations.size(); ++r) nodes.push_back({relations[r], uint64_t{1} << r});
  // Start from the largest relation.
  size_t start = 0;
  for (size_t i = 1; i < nodes.size(); ++i)
    if (nodes[i].plan->est_rows > nodes[start].plan->est_rows) start = i;
  Node cur = nodes[start];
  nodes.erase(nodes.begin() + static_cast<long>(start));
  while (!nodes.empty()) {
    int best = -1;
    double best_est = 0;
    bool best_keys = false;
    for (size_t i = 0; i < nodes.size(); ++i) {
      bool has_keys = false;
      for (const auto& p : preds) {
        ExprPtr a, b;
        if (!p.used && key_sides(p, cur.rels, nodes[i].rels, &a, &b)) has_keys = true;
      }
      const double est = JoinEstimate(*cur.plan, *nodes[i].plan, has_keys);
      if (best < 0 || (has_keys && !best_keys) || (has_keys == best_keys && est < best_est)) {
        best = static_cast<int>(i);
        best_est = est;
        best_keys = has_keys;
      }
    }
    Node add = nodes[static_cast<size_t>(best)];
    nodes.erase(nodes.begin() + best);
    std::vector<std::pair<ExprPtr, ExprPtr>> keys;
    for (auto& p : preds) {
      ExprPtr a, b;
      if (!p.used && key_sides(p, cur.rels, add.rels, &a, &b)) {
        keys.emplace_back(a, b);
        p.used = true;
      }
    }
    // The smaller side builds (the right child).
    LogicalOpPtr joined;
    if (add.plan->est_rows <= cur.plan->est_rows) {
      joined = MakeJoin(cur.plan, add.plan, keys, best_est);
    } else {
      std::vector<std::pair<ExprPtr, ExprPtr>> swapped;
      for (auto& k : keys) swapped.emplace_back(k.second, k.first);
      joined = MakeJoin(add.plan, cur.plan, swapped, best_est);
    }
    cur.plan = joined;
    cur.rels |= add.rels;
    for (auto& p : preds) {
      if (!p.used && (p.rels & ~cur.rels) == 0) {
        cur.plan = AddFilter(cur.plan, p.expr);
        p.used = true;
      }
    }
  }
  for (auto& p : preds)
    if (!p.used) cur.plan = AddFilter(cur.plan, p.expr);
  for (const auto& p : constant_preds) cur.plan = AddFilter(cur.plan, p);
  return cur.plan;
}

}  // namespace quiver::sql

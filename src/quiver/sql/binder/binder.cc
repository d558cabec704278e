// quiver/sql/binder/binder.cc — see binder.h: query blocks, FROM items,
// the SELECT list, aggregation, DISTINCT, ORDER BY and LIMIT.
#include "quiver/sql/binder/binder.h"

#include <algorithm>

#include "quiver/columnar/dictionary.h"
#include "quiver/sql/binder/binder_internal.h"
#include "quiver/sql/binder/spark_column_name.h"
#include "quiver/sql/planner/cte_filters.h"
#include "quiver/sql/spark_dialect.h"

namespace quiver::sql {

Binder::Binder(std::string_view sql, std::shared_ptr<const Catalog> catalog, SubqueryRunnerFactory runner_factory)
    : impl_(std::make_unique<Impl>()) {
  impl_->sql = sql;
  impl_->catalog = std::move(catalog);
  impl_->runner_factory = std::move(runner_factory);
}

Binder::~Binder() = default;

void Binder::SetLimits(BindLimits limits) { impl_->limits = std::move(limits); }

std::string Binder::Where(int location) const { return impl_->Where(location); }
Status Binder::Error(const std::string& m, int location) const { return impl_->Error(m, location); }
Status Binder::Unsupported(const std::string& c, int location) const { return impl_->Unsupported(c, location); }

void Binder::SetDialect(SqlDialect dialect) { impl_->dialect = dialect; }

void Binder::SetFileTables(bool allowed, MemoryPool* pool, std::shared_ptr<formats::S3Files> s3_files,
                           std::shared_ptr<PathTableScans> path_tables) {
  impl_->file_tables_allowed = allowed;
  impl_->file_pool = pool;
  impl_->s3_files = std::move(s3_files);
  impl_->path_tables = std::move(path_tables);
}

Result<BoundStatement> Binder::BindSelectStatement(Json& select) {
  QUIVER_ASSIGN_OR_RETURN(BoundQuery q, impl_->BindQuery(select, nullptr, false));
  BoundStatement out;
  // A WITH query run once for several references computes only the rows
  // some reference keeps.
  out.plan = PushFiltersIntoCtes(q.plan, impl_->cte_references);
  out.names = q.names;
  return out;
}

LogicalOpPtr MakeProject(LogicalOpPtr child, std::vector<ExprPtr> exprs, std::vector<ColumnBinding> cols) {
  auto p = std::make_shared<LogicalOp>();
  p->kind = LogicalOp::Kind::kProject;
  p->exprs = std::move(exprs);
  p->columns = std::move(cols);
  p->est_rows = child->est_rows;
  p->base_rows = child->base_rows;
  p->children = {std::move(child)};
  return p;
}

namespace {

std::string DefaultName(const Json& val) {
  if (val.contains("ColumnRef")) {
    const auto& f = val["ColumnRef"]["fields"];
    if (!f.empty() && f.back().contains("String")) return StringOf(f.back());
    return "?column?";
  }
  if (val.contains("FuncCall")) {
    std::string n;
    for (const auto& x : val["FuncCall"]["funcname"]) n = StringOf(x);
    return n == "like_escape" ? "?column?" : n;
  }
  if (val.contains("TypeCast")) {
    const auto& arg = val["TypeCast"]["arg"];
    if (arg.contains("ColumnRef")) return DefaultName(arg);
    std::string n;
    for (const auto& x : val["TypeCast"]["typeName"]["names"]) n = StringOf(x);
    return n;
  }
  if (val.contains("CoalesceExpr")) return "coalesce";
  if (val.contains("MinMaxExpr")) return val["MinMaxExpr"].value("op", "") == "IS_LEAST" ? "least" : "greatest";
  if (val.contains("CaseExpr")) return "case";
  if (val.contains("A_Expr") && val["A_Expr"].value("kind", "") == "AEXPR_NULLIF") return "nullif";
  return "?column?";
}

// The rewritten text's GROUP BY ALL (`@#1`, spark_dialect.h): a prefix
// operator '@#' (which no type defines) over the constant 1.
bool IsGroupByAllMarker(const Json& g) {
  if (!g.contains("A_Expr")) return false;
  const Json& a = g["A_Expr"];
  return !a.contains("lexpr") && a.contains("name") && a["name"].size() == 1 && StringOf(a["name"][0]) == "@#" &&
         a.contains("rexpr") && a["rexpr"].contains("A_Const");
}

void SplitAndJson(Json& node, std::vector<Json*>* out) {
  if (node.contains("BoolExpr") && node["BoolExpr"].value("boolop", "") == "AND_EXPR") {
    for (auto& a : node["BoolExpr"]["args"]) SplitAndJson(a, out);
  } else {
    out->push_back(&node);
  }
}

// How many times `node` (a parse tree) names the table `name` without a
// schema: its FROM items (RangeVar) anywhere, in subqueries and in WITH
// queries too. A nested WITH of the same name is counted as well, which
// can only make a WITH query materialized that did not need to be.
int CountTableReferences(const Json& node, const std::string& name) {
  int n = 0;
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it.key() == "RangeVar" && it.value().is_object()) {
        const Json& rv = it.value();
        if (!rv.contains("schemaname") && FoldIdentifier(rv.value("relname", "")) == name) ++n;
      }
      n += CountTableReferences(it.value(), name);
    }
  } else if (node.is_array()) {
    for (const auto& v : node) n += CountTableReferences(v, name);
  }
  return n;
}

}  // namespace

// Renames the first columns of a FROM item by its alias's column list
// (`t AS q(x, y)`, `(SELECT ...) AS s(a)`, a CTE reference). More names
// than columns: Invalid 42P10, as PostgreSQL.
Status ApplyColumnAliases(const Json* alias, const std::string& table, std::vector<std::string>* names,
                          const std::string& where) {
  if (!alias || !alias->contains("colnames")) return Status::OK();
  const Json& colnames = (*alias)["colnames"];
  if (colnames.size() > names->size())
    return Status::Invalid("table '" + table + "' has " + std::to_string(names->size()) + " columns available but " +
                           std::to_string(colnames.size()) + " columns specified (" + where + ")")
        .WithSqlState("42P10");
  size_t k = 0;
  for (const auto& cn : colnames) (*names)[k++] = StringOf(cn);
  return Status::OK();
}

namespace {

struct CteGuard {
  std::vector<std::map<std::string, CteDef>>* stack;
  bool pushed = false;
  ~CteGuard() {
    if (pushed) stack->pop_back();
  }
};

}  // namespace

void Binder::Impl::AddToScope(QueryState* q, const std::string& alias, const LogicalOp& plan,
                              const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size() && i < plan.columns.size(); ++i) {
    q->scope.cols.push_back({alias, names[i], plan.columns[i].id, plan.columns[i].type});
    q->scope.ids.insert(plan.columns[i].id);
  }
}

Result<LogicalOpPtr> Binder::Impl::BindTable(Json& rv, QueryState* q) {
  const int location = rv.value("location", -1);
  std::string name = FoldIdentifier(rv.value("relname", ""));
  const std::string schema = FoldIdentifier(rv.value("schemaname", ""));
  // One catalog, one schema (spark_dialect.h): default.t, spark_catalog.default.t.
  QUIVER_RETURN_NOT_OK(CheckQualifier(rv.value("catalogname", ""), schema, Where(location)));
  std::string alias = name;
  if (rv.contains("alias")) alias = FoldIdentifier(rv["alias"].value("aliasname", name));
  // A CTE of this or an enclosing query (unqualified names only).
  if (schema.empty()) {
    for (auto it = ctes.rbegin(); it != ctes.rend(); ++it) {
      auto c = it->find(name);
      if (c == it->end()) continue;
      Json* alias_node = rv.contains("alias") ? &rv["alias"] : nullptr;
      CteDef def = c->second;
      // Bind the CTE's query afresh (new column ids), seeing the CTEs
      // defined before it (not itself: WITH RECURSIVE is refused).
      const size_t level = static_cast<size_t>(std::distance(ctes.begin(), it.base())) - 1;
      auto saved = ctes;
      ctes.resize(level + 1);
      ctes[level].erase(name);
      bool reads_outer = false;
      auto bound = BindCorrelatedFrom(*def.query, def.outer, location, "a WITH query", &reads_outer);
      ctes = std::move(saved);
      if (!bound.ok()) return bound.status();
      std::vector<std::string> names = bound->names;
      for (size_t k = 0; k < def.column_names.size() && k < names.size(); ++k) names[k] = def.column_names[k];
      QUIVER_RETURN_NOT_OK(ApplyColumnAliases(alias_node, alias, &names, Where(location)));
      LogicalOpPtr plan = bound->plan;
      if (plan->columns.size() != bound->visible.size()) {
        std::vector<ExprPtr> exprs;
        for (const auto& c : bound->visible) exprs.push_back(Expr::Column(c.id, c.type));
        plan = MakeProject(plan, exprs, bound->visible);
      }
      // (One reading outer columns is bound again at each reference.)
      if (def.materialize && !reads_outer) {
        auto ref = std::make_shared<LogicalOp>();
        ref->kind = LogicalOp::Kind::kCteScan;
        ref->cte_id = def.id;
        ++cte_references[def.id];
        ref->cte_name = name;
        ref->columns = plan->columns;
        ref->est_rows = plan->est_rows;
        ref->base_rows = plan->base_rows;
        ref->children = {plan};
        plan = ref;
      }
      for (const auto& a : q->scope.aliases)
        if (a.first == alias) return Error("table name '" + alias + "' is used twice in FROM", location);
      q->scope.aliases.emplace_back(alias, location);
      AddToScope(q, alias, *plan, names);
      return plan;
    }
  }
  // A quoted path (FROM 'x.parquet' arrives as "x.parquet"): no table
  // name holds '/' or '.', so it reads the file (bind_file_table.cc).
  if (schema.empty() && LooksLikeFilePath(rv.value("relname", ""))) return BindFilePath(rv, q);
  auto info = catalog->GetTable(name);
  if (!info.ok())
    return Status::KeyError("no table named '" + name + "' (" + Where(location) + ")").WithSqlState("42P01");
  return BindScan(*info, rv.contains("alias") ? &rv["alias"] : nullptr, alias, location, q);
}

Result<LogicalOpPtr> Binder::Impl::BindScan(const TableInfo& table, Json* alias_node, const std::string& alias,
                                            int location, QueryState* q) {
  const TableInfo* info = &table;
  for (const auto& a : q->scope.aliases)
    if (a.first == alias) return Error("table name '" + alias + "' is used twice in FROM", location);
  q->scope.aliases.emplace_back(alias, location);
  auto scan = std::make_shared<LogicalOp>();
  scan->kind = LogicalOp::Kind::kScan;
  scan->table = *info;
  std::vector<std::string> names;
  for (size_t i = 0; i < info->schema->fields.size(); ++i) {
    const auto& f = info->schema->fields[i];
    DataTypePtr t = f->type->id == TypeId::kDictionary ? f->type->value_type : f->type;
    DataTypePtr canon = CanonicalType(t);
    scan->columns.push_back({NewId(), f->name, canon ? canon : t});
    scan->table_columns.push_back(static_cast<int>(i));
    names.push_back(f->name);
  }
  QUIVER_RETURN_NOT_OK(ApplyColumnAliases(alias_node, alias, &names, Where(location)));
  scan->est_rows = std::max<double>(1, static_cast<double>(info->num_rows));
  scan->base_rows = scan->est_rows;
  AddToScope(q, alias, *scan, names);
  return LogicalOpPtr(scan);
}

Result<LogicalOpPtr> Binder::Impl::BindDerived(Json& subquery, Json* alias, int location, QueryState* q,
                                               const std::string& name) {
  // It sees the columns of the queries around this one, not this one's
  // other FROM items (that is LATERAL).
  QUIVER_ASSIGN_OR_RETURN(BoundQuery b, BindCorrelatedFrom(subquery, q->scope.outer, location, "a derived table"));
  std::vector<std::string> names = b.names;
  QUIVER_RETURN_NOT_OK(ApplyColumnAliases(alias, name, &names, Where(location)));
  for (const auto& a : q->scope.aliases)
    if (!name.empty() && a.first == name) return Error("table name '" + name + "' is used twice in FROM", location);
  q->scope.aliases.emplace_back(name, location);
  AddToScope(q, name, *b.plan, names);
  return b.plan;
}

Status Binder::Impl::BindFromItem(Json& item, QueryState* q, std::vector<LogicalOpPtr>* rels,
                                  std::vector<ExprPtr>* preds) {
  const int location = FirstLocation(item);
  if (item.contains("RangeVar")) {
    QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr t, BindTable(item["RangeVar"], q));
    rels->push_back(t);
    return Status::OK();
  }
  if (item.contains("RangeSubselect")) {
    Json& rs = item["RangeSubselect"];
    if (rs.value("lateral", false)) return BindLateral(rs, q, rels, preds);
    // Without an alias (PostgreSQL 16): its columns are named, the item is
    // not (no qualified reference can name it).
    Json* alias = rs.contains("alias") ? &rs["alias"] : nullptr;
    const std::string name = alias ? FoldIdentifier(alias->value("aliasname", "")) : std::string();
    QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr t, BindDerived(rs["subquery"]["SelectStmt"], alias, location, q, name));
    rels->push_back(t);
    return Status::OK();
  }
  if (item.contains("JoinExpr")) return BindJoinExpr(item["JoinExpr"], q, rels, preds);
  if (item.contains("RangeFunction")) {
    QUIVER_ASSIGN_OR_RETURN(LogicalOpPtr t, BindFileFunction(item["RangeFunction"], q));
    rels->push_back(t);
    return Status::OK();
  }
  return Unsupported("this FROM item", location);
}

Result<int64_t> Binder::Impl::BindLimitValue(Json& node, const char* what) {
  const int location = FirstLocation(node);
  if (node.contains("A_Const") && node["A_Const"].value("isnull", false)) return int64_t{-1};
  if (!node.contains("A_Const") || !node["A_Const"].contains("ival"))
    return Unsupported(std::string(what) + " other than an integer constant", location);
  QUIVER_ASSIGN_OR_RETURN(ExprPtr c, BindConst(node));  // reads negative values from the text
  const int64_t v = static_cast<int64_t>(c->value.i);
  if (v < 0) return Error(std::string(what) + " must not be negative", location);
  return v;
}

Result<BoundQuery> Binder::Impl::BindQuery(Json& s, const Scope* outer, bool is_subquery) {
  const int stmt_location = FirstLocation(s);
  if (s.contains("intoClause")) return Unsupported("SELECT INTO", stmt_location);
  if (s.contains("lockingClause")) return Unsupported("FOR UPDATE / FOR SHARE", stmt_location);
  CteGuard guard{&ctes};
  if (s.contains("withClause")) {
    Json& w = s["withClause"];
    if (w.value("recursive", false)) return Unsupported("WITH RECURSIVE", w.value("location", stmt_location));
    ctes.emplace_back();
    guard.pushed = true;
    for (auto& c : w["ctes"]) {
      Json& cte = c["CommonTableExpr"];
      CteDef def;
      if (!cte["ctequery"].contains("SelectStmt"))
        return Unsupported("a WITH query other than SELECT", cte.value("location", 0));
      def.query = &cte["ctequery"]["SelectStmt"];
      def.location = cte.value("location", 0);
      if (cte.contains("aliascolnames"))
        for (auto& n : cte["aliascolnames"]) def.column_names.push_back(StringOf(n));
      const std::string cte_name = FoldIdentifier(cte.value("ctename", ""));
      // Named twice or more (TPC-H Q15's revenue0: in FROM and in a scalar
      // subquery): run once and read by every reference.
      def.materialize = CountTableReferences(s, cte_name) >= 2;
      if (def.materialize) def.id = next_cte_id++;
      def.outer = outer;
      ctes.back()[cte_name] = def;
    }
  }
  if (s.value("op", "SETOP_NONE") != "SETOP_NONE") return BindSetOperation(s, outer, is_subquery);
  if (s.contains("valuesLists")) return BindValues(s, outer);
  QueryState q;
  q.scope.outer = outer;
  q.is_subquery = is_subquery;
  q.dependent = is_subquery && outer != nullptr && outer == dependent_scope;
  if (s.contains("whereClause")) q.where_clause = &s["whereClause"];
  std::vector<LogicalOpPtr> rels;
  std::vector<ExprPtr> preds;
  if (s.contains("fromClause")) {
    for (auto& item : s["fromClause"]) QUIVER_RETURN_NOT_OK(BindFromItem(item, &q, &rels, &preds));
  }
  // WHERE: plain terms go into the join graph; terms with subqueries are
  // applied after it.
  std::vector<Json*> deferred;
  if (s.contains("whereClause")) {
    std::vector<Json*> terms;
    SplitAndJson(s["whereClause"], &terms);
    for (Json* t : terms) {
      if (ContainsSubLink(*t)) {
        deferred.push_back(t);
        continue;
      }
      ExprContext ctx{&q.scope, "WHERE", nullptr, false, &q};
      QUIVER_ASSIGN_OR_RETURN(ExprPtr e, BindExpr(*t, &ctx));
      QUIVER_RETURN_NOT_OK(WithPosition(CheckBoolean(*e, "WHERE"), FirstLocation(*t)));
      if (is_subquery) {
        // A correlation common to every branch of an OR ((a = o.a AND x)
        // OR (a = o.a AND y), TPC-DS 41) is pulled out in front of it
        // first, so that it becomes a correlation key.
        std::vector<ExprPtr> parts;
        SplitConjuncts(FactorOr(e), &parts);
        for (const ExprPtr& part : parts) {
          bool correlated = false;
          QUIVER_RETURN_NOT_OK(ExtractCorrelation(part, &q, &correlated));
          if (!correlated) preds.push_back(part);
        }
        continue;
      }
      preds.push_back(e);
    }
  }
  if (rels.empty()) {
    auto one = std::make_shared<LogicalOp>();
    one->kind = LogicalOp::Kind::kSingleRow;
    rels.push_back(one);
  }
  QUIVER_ASSIGN_OR_RETURN(q.plan, PlanJoinGraph(rels, preds));
  for (Json* t : deferred) QUIVER_RETURN_NOT_OK(ApplySubqueryConjunct(*t, &q));
  // (bind_dependent_join.cc unnests the filters reading outer columns.)
  if (!q.dependent_filters.empty()) q.plan = AddFilter(q.plan, MakeAnd(q.dependent_filters));

  // SELECT list, GROUP BY, HAVING, ORDER BY.
  std::vector<AggregateCall> aggs;
  std::vector<ExprPtr> items;
  std::vector<std::string> names;
  std::vector<int> item_locations;
  std::vector<WindowCall> windows;
  std::vector<GroupingCall> groupings;
  Json* window_defs = s.contains("windowClause") ? &s["windowClause"] : nullptr;
  ExprContext sel{&q.scope, "the SELECT list", &aggs, false, &q, &windows, window_defs, &groupings};
  for (auto& target : s["targetList"]) {
    Json& rt = target["ResTarget"];
    Json& val = rt["val"];
    const int loc = rt.value("location", FirstLocation(val));
    if (val.contains("ColumnRef") && !val["ColumnRef"]["fields"].empty() &&
        val["ColumnRef"]["fields"].back().contains("A_Star")) {
      auto& fields = val["ColumnRef"]["fields"];
      std::string qualifier = fields.size() >= 2 ? FoldIdentifier(StringOf(fields[fields.size() - 2])) : "";
      bool any = false;
      if (!qualifier.empty()) {
        bool known = false;
        for (const auto& a : q.scope.aliases) known |= a.first == qualifier;
        if (!known)
          return Status::KeyError("missing FROM entry for table '" + qualifier + "' (" + Where(loc) + ")")
              .WithSqlState("42P01");
      }
      for (const auto& c : q.scope.cols) {
        if (!qualifier.empty() && c.alias != qualifier) continue;
        if (qualifier.empty() && c.qualified_only) continue;
        items.push_back(c.expr ? c.expr : Expr::Column(c.id, c.type, loc));
        names.push_back(c.name);
        item_locations.push_back(loc);
        any = true;
      }
      if (!any && q.scope.cols.empty()) return Error("SELECT * with no tables specified is not valid", loc);
      continue;
    }
    QUIVER_ASSIGN_OR_RETURN(ExprPtr e, BindExpr(val, &sel));
    if (ClassOf(*e->type) == TypeClass::kOther && e->type->id == TypeId::kIntervalMonthDayNano)
      return Unsupported("an INTERVAL value in the SELECT list", loc);
    items.push_back(e);
    if (rt.contains("name")) {
      names.push_back(rt.value("name", ""));
    } else {
      // Spark names an expression after its text (spark_column_name.h);
      // a plain column keeps its name in both dialects.
      std::string spark = dialect == SqlDialect::kSpark && !val.contains("ColumnRef") ? SparkColumnName(val) : "";
      names.push_back(spark.empty() ? DefaultName(val) : std::move(spark));
    }
    item_locations.push_back(loc);
  }
  const size_t num_visible = items.size();
  // GROUP BY (GROUPING SETS / ROLLUP / CUBE: bind_grouping_sets.cc)
  std::vector<ExprPtr> groups;
  std::vector<std::vector<int>> grouping_sets;
  bool has_grouping_sets = false;
  if (s.contains("groupClause")) {
    auto bind_group_item = [&](Json& g) -> Result<ExprPtr> {
      const int loc = FirstLocation(g);
      if (g.contains("A_Const") && g["A_Const"].contains("ival")) {
        const int64_t k = g["A_Const"]["ival"].value("ival", int64_t{0});
        if (k < 1 || k > static_cast<int64_t>(num_visible))
          return Error("GROUP BY position " + std::to_string(k) + " is not in select list", loc);
        return items[static_cast<size_t>(k - 1)];
      }
      ExprContext gctx{&q.scope, "GROUP BY", nullptr, false, nullptr};
      auto bound = BindExpr(g, &gctx);
      if (!bound.ok() && bound.status().IsKeyError() && g.contains("ColumnRef") &&
          g["ColumnRef"]["fields"].size() == 1) {
        const std::string n = StringOf(g["ColumnRef"]["fields"][0]);
        for (size_t k = 0; k < num_visible; ++k)
          if (names[k] == n) return items[k];
      }
      return bound;
    };
    for (auto& g : s["groupClause"]) has_grouping_sets |= g.contains("GroupingSet");
    if (s["groupClause"].size() == 1 && IsGroupByAllMarker(s["groupClause"][0])) {
      // GROUP BY ALL (Spark, DuckDB): every SELECT item without an
      // aggregate, a window function or GROUPING(); none: one group.
      std::unordered_set<int> computed;
      for (const auto& a : aggs) computed.insert(a.output_id);
      for (const auto& w : windows) computed.insert(w.output_id);
      for (const auto& g : groupings) computed.insert(g.output_id);
      for (size_t k = 0; k < num_visible; ++k) {
        bool plain = true;
        VisitColumns(*items[k], [&](int id) { plain &= computed.count(id) == 0; });
        bool dup = false;
        for (const auto& g : groups) dup |= ExprEquals(*g, *items[k]);
        if (plain && !dup) groups.push_back(items[k]);
      }
    } else if (has_grouping_sets) {
      QUIVER_RETURN_NOT_OK(BindGroupingSets(s["groupClause"], bind_group_item, &groups, &grouping_sets));
    } else {
      for (auto& g : s["groupClause"]) {
        QUIVER_ASSIGN_OR_RETURN(ExprPtr e, bind_group_item(g));
        groups.push_back(e);
      }
    }
  }
  for (const auto& g : groups)
    if (ClassOf(*g->type) == TypeClass::kOther)
      return Unsupported("GROUP BY a value of type " + g->type->ToString(),
                         g->location >= 0 ? g->location : stmt_location);
  ExprPtr having;
  if (s.contains("havingClause")) {
    std::vector<std::pair<std::string, ExprPtr>> output_aliases;
    for (size_t k = 0; k < num_visible; ++k) output_aliases.emplace_back(names[k], items[k]);
    ExprContext hctx{&q.scope, "HAVING", &aggs, false, &q, nullptr, nullptr, &groupings, &output_aliases};
    QUIVER_ASSIGN_OR_RETURN(having, BindExpr(s["havingClause"], &hctx));
    QUIVER_RETURN_NOT_OK(WithPosition(CheckBoolean(*having, "HAVING"), FirstLocation(s["havingClause"])));
  }
  // ORDER BY (bound before aggregation is planned: it may add aggregates)
  struct OrderItem {
    int visible = -1;  // index of a SELECT item, or
    ExprPtr expr;      // an expression to add as a hidden column
    bool desc = false, nulls_first = false;
  };
  std::vector<OrderItem> order;
  if (s.contains("sortClause")) {
    for (auto& sb : s["sortClause"]) {
      Json& b = sb["SortBy"];
      OrderItem o;
      const std::string dir = b.value("sortby_dir", "SORTBY_DEFAULT");
      if (dir == "SORTBY_USING") return Unsupported("ORDER BY ... USING", FirstLocation(b));
      o.desc = dir == "SORTBY_DESC";
      const std::string nulls = b.value("sortby_nulls", "SORTBY_NULLS_DEFAULT");
      o.nulls_first = nulls == "SORTBY_NULLS_DEFAULT" ? DefaultNullsFirst(o.desc) : nulls == "SORTBY_NULLS_FIRST";
      Json& node = b["node"];
      const int loc = FirstLocation(node);
      if (node.contains("A_Const") && node["A_Const"].contains("ival")) {
        const int64_t k = node["A_Const"]["ival"].value("ival", int64_t{0});
        if (k < 1 || k > static_cast<int64_t>(num_visible))
          return Error("ORDER BY position " + std::to_string(k) + " is not in select list", loc);
        o.visible = static_cast<int>(k - 1);
      } else if (node.contains("ColumnRef") && node["ColumnRef"]["fields"].size() == 1 &&
                 node["ColumnRef"]["fields"][0].contains("String") &&
                 std::count(names.begin(), names.end(), StringOf(node["ColumnRef"]["fields"][0])) >= 1 && [&] {
                   // an output name wins over an input column of the same name
                   const std::string n = StringOf(node["ColumnRef"]["fields"][0]);
                   for (size_t k = 0; k < num_visible; ++k)
                     if (names[k] == n) return true;
                   return false;
                 }()) {
        const std::string n = StringOf(node["ColumnRef"]["fields"][0]);
        for (size_t k = 0; k < num_visible; ++k)
          if (names[k] == n) {
            o.visible = static_cast<int>(k);
            break;
          }
      } else {
        ExprContext octx{&q.scope, "ORDER BY", &aggs, false, &q, &windows, window_defs, &groupings};
        QUIVER_ASSIGN_OR_RETURN(o.expr, BindExpr(node, &octx));
        for (size_t k = 0; k < num_visible; ++k)
          if (ExprEquals(*items[k], *o.expr)) {
            o.visible = static_cast<int>(k);
            o.expr = nullptr;
            break;
          }
      }
      order.push_back(o);
    }
  }
  // Correlated subqueries: the inner sides of the correlation keys and the
  // inner columns of residual conditions are extra outputs.
  std::vector<ExprPtr> corr_inner;
  for (const auto& k : q.corr_keys) corr_inner.push_back(k.first);
  std::vector<int> residual_ids;
  for (const auto& r : q.corr_residual)
    VisitColumns(*r, [&](int id) {
      // (a WHERE term's mark join column is this query's too: bind_mark_join.cc)
      const bool own = q.scope.ids.count(id) || q.plan->IndexOf(id) >= 0;
      if (own && std::find(residual_ids.begin(), residual_ids.end(), id) == residual_ids.end())
        residual_ids.push_back(id);
    });
  if (!groupings.empty() && !s.contains("groupClause"))
    return Error("GROUPING() needs a GROUP BY clause", groupings[0].location);
  if (!groupings.empty() && !has_grouping_sets) {  // plain GROUP BY: one set of every column
    has_grouping_sets = true;
    grouping_sets.emplace_back();
    for (size_t g = 0; g < groups.size(); ++g) grouping_sets.back().push_back(static_cast<int>(g));
  }
  const bool aggregating = !groups.empty() || !aggs.empty() || having || has_grouping_sets;
  if (!aggregating) {
    QUIVER_RETURN_NOT_OK(ApplyDeferredJoins(
        &q, [](const ExprPtr& e) -> Result<ExprPtr> { return e; }, nullptr));
  }
  BoundQuery out;
  if (aggregating) {
    if (!residual_ids.empty())
      return Unsupported("a correlated condition other than equality in an aggregated subquery", stmt_location);
    // A correlated aggregate without GROUP BY under HAVING: zero or one row
    // per outer row, the general unnesting's (bind_dependent_join.cc).
    if (having && groups.empty() && !q.corr_keys.empty())
      return Unsupported("HAVING in a correlated aggregate subquery without GROUP BY", stmt_location);
    out.aggregated_without_groups = groups.empty() && !has_grouping_sets;
    for (const auto& e : corr_inner) {
      bool dup = false;
      for (const auto& g : groups) dup |= ExprEquals(*g, *e);
      if (!dup) groups.push_back(e);
    }
    if (has_grouping_sets && !corr_inner.empty())
      return Unsupported("GROUPING SETS / ROLLUP / CUBE in a correlated subquery", stmt_location);
    if (groups.empty() && !has_grouping_sets) {
      QUIVER_ASSIGN_OR_RETURN(q.plan, DistinctValuesFirst(q.plan, &aggs));
    }
    std::vector<ExprPtr> agg_groups = groups;
    std::vector<ColumnBinding> grouping_columns;  // the set number, GROUPING() values
    // Aggregates in two phases (bind_aggregate_split.cc): GROUPING SETS
    // pre-aggregated by their finest set; fn(DISTINCT x) by the groups and x.
    std::optional<SplitAggregates> pre;
    if (has_grouping_sets) {
      if (grouping_sets.size() > 1) {
        QUIVER_ASSIGN_OR_RETURN(pre, SplitAggregate(q.plan, groups, aggs, -1));
      }
      if (pre) q.plan = pre->partial;
      QUIVER_ASSIGN_OR_RETURN(q.plan, PlanGroupingSets(q.plan, groups, pre ? pre->group_values : groups, grouping_sets,
                                                       groupings, &agg_groups, &grouping_columns));
    } else {
      QUIVER_ASSIGN_OR_RETURN(pre, SplitDistinct(q.plan, groups, aggs));
      if (pre) {
        q.plan = pre->partial;
        agg_groups.assign(pre->group_values.begin(),
                          pre->group_values.begin() + static_cast<std::ptrdiff_t>(groups.size()));
      }
    }
    auto agg = std::make_shared<LogicalOp>();
    agg->kind = LogicalOp::Kind::kAggregate;
    std::vector<int> group_ids;
    for (size_t k = 0; k < groups.size(); ++k) {
      const int id = NewId();
      group_ids.push_back(id);
      std::string gname = "group" + std::to_string(k);
      if (groups[k]->kind == Expr::Kind::kColumn)
        for (const auto& c : q.scope.cols)
          if (c.id == groups[k]->column) gname = c.name;
      agg->columns.push_back({id, gname, groups[k]->type});
    }
    agg->columns.insert(agg->columns.end(), grouping_columns.begin(), grouping_columns.end());
    const size_t num_key_columns = agg->columns.size();
    for (const auto& a : aggs) agg->columns.push_back({a.output_id, "agg", a.type});
    agg->groups = agg_groups;
    agg->aggregates = aggs;
    // An empty grouping set's row (its expand entry is all constants) is
    // emitted over empty input too.
    if (has_grouping_sets)
      for (size_t k = 0; k < grouping_sets.size(); ++k)
        if (grouping_sets[k].empty()) agg->empty_input_groups.push_back(q.plan->expand_sets[k]);
    agg->est_rows = groups.empty() ? 1.0 : std::max(1.0, q.plan->est_rows * 0.2);
    agg->base_rows = agg->est_rows;
    agg->children = {q.plan};
    q.plan = agg;
    if (pre) {  // the final aggregate over the pre-aggregate's expand, then each aggregate's value
      std::vector<ColumnBinding> cols = agg->columns;
      std::vector<ExprPtr> exprs;
      for (size_t k = 0; k < num_key_columns; ++k) exprs.push_back(Expr::Column(cols[k].id, cols[k].type));
      exprs.insert(exprs.end(), pre->results.begin(), pre->results.end());
      agg->columns.resize(num_key_columns);
      agg->columns.insert(agg->columns.end(), pre->final_columns.begin(), pre->final_columns.end());
      agg->aggregates = pre->final_aggs;
      q.plan = MakeProject(agg, std::move(exprs), std::move(cols));
    }
    std::unordered_set<int> allowed(group_ids.begin(), group_ids.end());
    for (const auto& a : aggs) allowed.insert(a.output_id);
    for (const auto& w : windows) allowed.insert(w.output_id);
    for (const auto& g : groupings) allowed.insert(g.output_id);
    if (q.is_subquery)  // outer columns are constants of each evaluation (bind_dependent_join.cc)
      for (const Scope* o = q.scope.outer; o; o = o->outer) allowed.insert(o->ids.begin(), o->ids.end());
    auto rewrite = [&](const ExprPtr& e, const char* clause, int loc) -> Result<ExprPtr> {
      ExprPtr r = Transform(e, [&](const ExprPtr& x) -> ExprPtr {
        for (size_t k = 0; k < groups.size(); ++k)
          if (ExprEquals(*x, *groups[k])) return Expr::Column(group_ids[k], groups[k]->type, x->location);
        return nullptr;
      });
      Status st;
      VisitColumns(*r, [&](int id) {
        if (!st.ok() || allowed.count(id)) return;
        std::string cname = "#" + std::to_string(id);
        for (const auto& c : q.scope.cols)
          if (c.id == id) cname = c.name;
        st =
            Error("column '" + cname + "' must appear in the GROUP BY clause or be used in an aggregate function (in " +
                      std::string(clause) + ")",
                  loc);
      });
      if (!st.ok()) return st;
      return r;
    };
    // Correlated subqueries of the SELECT list, HAVING and ORDER BY join the
    // groups, their keys read through the group columns.
    QUIVER_RETURN_NOT_OK(ApplyDeferredJoins(
        &q, [&](const ExprPtr& e) { return rewrite(e, "a correlated subquery", stmt_location); }, &allowed));
    for (size_t k = 0; k < items.size(); ++k) {
      QUIVER_ASSIGN_OR_RETURN(items[k], rewrite(items[k], "the SELECT list", item_locations[k]));
    }
    for (auto& w : windows)
      QUIVER_RETURN_NOT_OK(RewriteWindowCall(&w, [&](const ExprPtr& e) {
        return rewrite(e, "a window function", e->location >= 0 ? e->location : stmt_location);
      }));
    if (having) {
      QUIVER_ASSIGN_OR_RETURN(having, rewrite(having, "HAVING", FirstLocation(s["havingClause"])));
      q.plan = AddFilter(q.plan, having);
    }
    for (auto& o : order)
      if (o.expr) {
        QUIVER_ASSIGN_OR_RETURN(o.expr, rewrite(o.expr, "ORDER BY", stmt_location));
      }
    for (auto& e : corr_inner) {
      QUIVER_ASSIGN_OR_RETURN(e, rewrite(e, "a correlated subquery", stmt_location));
    }
    out.first_is_count = !items.empty() && items[0]->kind == Expr::Kind::kColumn && [&] {
      for (const auto& a : aggs)
        if (a.output_id == items[0]->column)
          return a.fn == AggFn::kCount || a.fn == AggFn::kCountStar || a.fn == AggFn::kCountIf;
      return false;
    }();
  }
  if (!windows.empty()) q.plan = PlanWindows(q.plan, windows);
  // The projection: visible items, hidden ORDER BY expressions, correlation outputs.
  std::vector<ExprPtr> exprs = items;
  std::vector<ColumnBinding> cols;
  for (size_t k = 0; k < items.size(); ++k) cols.push_back({NewId(), names[k], items[k]->type});
  std::vector<int> order_cols;
  for (auto& o : order) {
    if (o.visible >= 0) {
      order_cols.push_back(o.visible);
      continue;
    }
    exprs.push_back(o.expr);
    cols.push_back({NewId(), "__order", o.expr->type});
    order_cols.push_back(static_cast<int>(cols.size()) - 1);
  }
  const size_t num_with_order = exprs.size();
  std::map<int, int> residual_map;
  for (size_t k = 0; k < corr_inner.size(); ++k) {
    exprs.push_back(corr_inner[k]);
    cols.push_back({NewId(), "__key", corr_inner[k]->type});
    out.corr_keys.emplace_back(Expr::Column(cols.back().id, cols.back().type), q.corr_keys[k].second);
  }
  for (int id : residual_ids) {
    DataTypePtr t;
    for (const auto& c : q.scope.cols)
      if (c.id == id) t = c.type;
    if (!t) {
      const int at = q.plan->IndexOf(id);
      if (at >= 0) t = q.plan->columns[static_cast<size_t>(at)].type;
    }
    exprs.push_back(Expr::Column(id, t));
    cols.push_back({NewId(), "__ref", t});
    residual_map[id] = cols.back().id;
  }
  if (!q.corr_residual.empty()) {
    QUIVER_ASSIGN_OR_RETURN(out.corr_residual, RewriteColumns(MakeAnd(q.corr_residual), [&](int id) -> Result<int> {
                              auto it = residual_map.find(id);
                              return it == residual_map.end() ? id : it->second;
                            }));
  }
  q.plan = MakeProject(q.plan, exprs, cols);
  // DISTINCT
  if (s.contains("distinctClause")) {
    if (!s["distinctClause"].empty() && !s["distinctClause"][0].empty())
      return Unsupported("DISTINCT ON", FirstLocation(s["distinctClause"]));
    if (num_with_order != items.size())
      return Error("for SELECT DISTINCT, ORDER BY expressions must appear in select list", stmt_location);
    for (const auto& c : q.plan->columns)
      if (ClassOf(*c.type) == TypeClass::kOther)
        return Unsupported("SELECT DISTINCT over a value of type " + c.type->ToString(), stmt_location);
    auto agg = std::make_shared<LogicalOp>();
    agg->kind = LogicalOp::Kind::kAggregate;
    std::vector<ColumnBinding> new_cols;
    std::map<int, int> remap;
    for (const auto& c : q.plan->columns) {
      agg->groups.push_back(Expr::Column(c.id, c.type));
      ColumnBinding nc{NewId(), c.name, c.type};
      remap[c.id] = nc.id;
      new_cols.push_back(nc);
    }
    agg->columns = new_cols;
    agg->est_rows = std::max(1.0, q.plan->est_rows * 0.5);
    agg->base_rows = agg->est_rows;
    agg->children = {q.plan};
    q.plan = agg;
    for (auto& k : out.corr_keys) k.first = Expr::Column(remap[k.first->column], k.first->type);
    if (out.corr_residual) {
      QUIVER_ASSIGN_OR_RETURN(out.corr_residual, RewriteColumns(out.corr_residual, [&](int id) -> Result<int> {
                                auto it = remap.find(id);
                                return it == remap.end() ? id : it->second;
                              }));
    }
  }
  // ORDER BY / LIMIT / OFFSET
  int64_t limit = -1, offset = 0;
  if (s.contains("limitCount")) {
    QUIVER_ASSIGN_OR_RETURN(limit, BindLimitValue(s["limitCount"], "LIMIT"));
  }
  if (s.contains("limitOffset")) {
    QUIVER_ASSIGN_OR_RETURN(offset, BindLimitValue(s["limitOffset"], "OFFSET"));
    if (offset < 0) offset = 0;
  }
  // LIMIT / OFFSET per outer row: the general unnesting's.
  if ((limit >= 0 || offset > 0) && (!out.corr_keys.empty() || out.corr_residual))
    return Unsupported("LIMIT / OFFSET in a correlated subquery", stmt_location);
  if (!order.empty()) {
    auto sort = std::make_shared<LogicalOp>();
    sort->kind = LogicalOp::Kind::kSort;
    sort->columns = q.plan->columns;
    for (size_t k = 0; k < order.size(); ++k) {
      const auto& c = q.plan->columns[static_cast<size_t>(order_cols[k])];
      if (ClassOf(*c.type) == TypeClass::kOther)
        return Unsupported("ORDER BY a value of type " + c.type->ToString(), stmt_location);
      sort->sort_keys.push_back({Expr::Column(c.id, c.type), order[k].desc, order[k].nulls_first});
    }
    sort->limit = limit;
    sort->offset = offset;
    sort->est_rows = limit >= 0 ? std::min(q.plan->est_rows, static_cast<double>(limit)) : q.plan->est_rows;
    sort->base_rows = q.plan->base_rows;
    sort->children = {q.plan};
    q.plan = sort;
  } else if (limit >= 0 || offset > 0) {
    auto lim = std::make_shared<LogicalOp>();
    lim->kind = LogicalOp::Kind::kLimit;
    lim->columns = q.plan->columns;
    lim->limit = limit;
    lim->offset = offset;
    lim->est_rows = limit >= 0 ? std::min(q.plan->est_rows, static_cast<double>(limit)) : q.plan->est_rows;
    lim->base_rows = q.plan->base_rows;
    lim->children = {q.plan};
    q.plan = lim;
  }
  if (num_with_order != items.size()) {  // drop hidden ORDER BY columns
    std::vector<ExprPtr> keep;
    std::vector<ColumnBinding> keep_cols;
    for (size_t k = 0; k < q.plan->columns.size(); ++k) {
      if (k >= items.size() && k < num_with_order) continue;
      const auto& c = q.plan->columns[k];
      keep.push_back(Expr::Column(c.id, c.type));
      keep_cols.push_back(c);
    }
    q.plan = MakeProject(q.plan, keep, keep_cols);
  }
  out.plan = q.plan;
  out.names = names;
  out.visible.assign(q.plan->columns.begin(), q.plan->columns.begin() + static_cast<long>(items.size()));
  return out;
}

}  // namespace quiver::sql

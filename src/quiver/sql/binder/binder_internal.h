// quiver/sql/binder/binder_internal.h — the binder's state, shared by its
// files (binder.cc: statements, FROM, SELECT; bind_expression.cc:
// expressions and literals; bind_subquery.cc: unnesting). Internal.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "quiver/sql/binder/binder.h"
#include "quiver/sql/expression/function_registry.h"
#include "quiver/sql/file_tables.h"
#include "quiver/sql/plan/window_call.h"
#include "quiver/sql/planner/join_order.h"

namespace quiver::sql {

/// One column visible by name in a query's FROM clause.
struct ScopeEntry {
  std::string alias;  ///< table alias (lower-case), or the table's name
  std::string name;   ///< column name as stored
  int id = -1;
  DataTypePtr type;
  /// Set for a column merged by JOIN ... USING / NATURAL JOIN (bind_join.cc):
  /// what a reference binds to (the left or right key, or COALESCE of both);
  /// `id` is then that column's id or, for an expression, an id of no plan
  /// column (it only tells entries apart).
  ExprPtr expr = nullptr;
  /// A join key merged by USING / NATURAL: reachable only qualified
  /// (`a.k`, `a.*`); unqualified names and `*` see the merged column.
  bool qualified_only = false;
};

struct Scope {
  std::vector<ScopeEntry> cols;
  std::vector<std::pair<std::string, int>> aliases;  ///< (alias, location) of the FROM items
  const Scope* outer = nullptr;                      ///< the enclosing query's scope
  std::unordered_set<int> ids;                       ///< the ids of `cols`
};

/// A GROUPING(a, b, ...) / grouping_id(...) call of a grouped query: bit
/// k-from-the-right of its value is 1 when args[n-1-k] is not grouped in the
/// row's grouping set.
struct GroupingCall {
  std::vector<ExprPtr> args;
  int output_id = -1;
  int location = -1;
};

/// Where expressions are bound and what they may contain.
struct ExprContext {
  const Scope* scope = nullptr;
  std::string clause;                          ///< "WHERE", "SELECT list", ... (messages)
  std::vector<AggregateCall>* aggs = nullptr;  ///< non-null: aggregates allowed, collected here
  bool in_aggregate = false;
  /// The query whose plan correlated scalar subqueries are joined to (null:
  /// scalar subqueries must be uncorrelated).
  struct QueryState* query = nullptr;
  /// Non-null: window function calls allowed, collected here (bind_window.cc).
  std::vector<WindowCall>* windows = nullptr;
  /// The query's WINDOW clause (named windows; may be null).
  Json* window_defs = nullptr;
  /// Non-null: GROUPING() calls allowed, collected here (bind_grouping_sets.cc).
  std::vector<GroupingCall>* groupings = nullptr;
  /// Non-null (HAVING): the SELECT list's output names and bound items; an
  /// unqualified name that no FROM column of this query matches binds to
  /// the item of that output name (Spark / DuckDB: HAVING on an alias).
  const std::vector<std::pair<std::string, ExprPtr>>* output_aliases = nullptr;
};

/// A FROM relation for the join graph.
struct Relation {
  LogicalOpPtr plan;
};

/// One query block being bound.
struct QueryState {
  Scope scope;
  LogicalOpPtr plan;
  /// Correlation with the enclosing query (subqueries only).
  bool is_subquery = false;
  /// Bound by BindDependent: correlated WHERE terms stay in the plan (in
  /// `dependent_filters`, applied over the join graph) instead of becoming
  /// corr_keys / corr_residual, and outer columns may be read anywhere.
  bool dependent = false;
  std::vector<ExprPtr> dependent_filters;
  std::vector<std::pair<ExprPtr, ExprPtr>> corr_keys;  ///< (inner expr, outer expr)
  std::vector<ExprPtr> corr_residual;                  ///< conditions over inner and outer columns
  /// Correlated scalar subqueries of the SELECT list, HAVING and ORDER BY
  /// (each a subquery plan grouped by its keys, and the left join's (outer
  /// expr, subquery column) keys): left-joined after the aggregate when the
  /// query aggregates (the outer sides then read its group columns), else
  /// before the projection.
  /// EXISTS / IN (subquery) there are mark joins (kind kMark: the
  /// subquery's correlation residual, the mark column, IN's NULLs).
  struct DeferredJoin {
    LogicalOpPtr sub;
    std::vector<std::pair<ExprPtr, ExprPtr>> keys;
    JoinKind kind = JoinKind::kLeft;
    ExprPtr residual = nullptr;
    ColumnBinding mark{};
    bool mark_null_aware = false;
    /// A dependent subquery (BindDependent): `sub` reads the outer columns
    /// `outer_ids`; joined by JoinDependent: a scalar one (kind kLeft, keys
    /// unused), or a mark join (kind kMark: `keys`, `residual`, `mark`).
    bool dependent = false;
    std::vector<int> outer_ids;
    int location = -1;
    /// Called with the outer plan and the (rewritten) keys when the join is
    /// placed (a keyed scalar lookup's check reads them: bind_scalar_lookup.cc).
    std::function<void(const LogicalOpPtr&, const std::vector<std::pair<ExprPtr, ExprPtr>>&)> on_place;
  };
  std::vector<DeferredJoin> deferred_joins;
  /// The query's WHERE (null when none): partition pruning of file tables.
  Json* where_clause = nullptr;
};

/// What binding a query block returns.
struct BoundQuery {
  LogicalOpPtr plan;
  std::vector<std::string> names;      ///< visible outputs' names
  std::vector<ColumnBinding> visible;  ///< visible outputs (the first columns of plan)
  /// Correlated subqueries: keys (inner output column, outer expression)
  /// and a residual over inner output columns and outer columns.
  std::vector<std::pair<ExprPtr, ExprPtr>> corr_keys;
  ExprPtr corr_residual;
  bool aggregated_without_groups = false;  ///< a plain aggregate: one row per correlation key
  bool first_is_count = false;             ///< the first output is a bare count() (count bug)
};

struct CteDef {
  Json* query = nullptr;
  std::vector<std::string> column_names;
  int location = 0;
  /// Named more than once in its statement (by its text): its references
  /// become kCteScan nodes sharing `id`, so the query runs once.
  bool materialize = false;
  int id = -1;
  /// The outer scope of the query block holding the WITH (null at the top
  /// level): the WITH query may read its columns (bind_correlated_from.cc).
  const Scope* outer = nullptr;
};

/// A copy of every node of `op`'s tree, with the same column ids
/// (bind_scalar_lookup.cc).
LogicalOpPtr CopyPlanTree(const LogicalOpPtr& op);
/// The name (EXPLAIN) of a scalar subquery's shared one-row-per-key result.
inline constexpr const char* kScalarLookupName = "(scalar subquery)";

/// Whether `name` (lower case) names an aggregate function (bind_aggregate.cc).
bool IsAggregateName(std::string_view name);
/// Every aggregate name and alias the binder accepts (bind_aggregate.cc).
std::vector<std::string_view> AggregateNames();
/// Every window function name the binder accepts with OVER (...), the
/// aggregates allowed there included (bind_window.cc).
std::vector<std::string_view> WindowFunctionNames();

struct Binder::Impl {
  std::string_view sql;
  std::shared_ptr<const Catalog> catalog;
  SubqueryRunnerFactory runner_factory;
  int next_id = 0;
  std::vector<std::map<std::string, CteDef>> ctes;  ///< a stack of WITH levels

  int next_cte_id = 0;
  /// References bound of each materialized WITH query (by cte_id), for
  /// PushFiltersIntoCtes (planner/cte_filters.h).
  std::map<int, int> cte_references;
  BindLimits limits;
  int expr_depth = 0;  ///< BindExpr calls under way
  /// current_date / current_timestamp / now(): the statement's start, read
  /// once (microseconds since the epoch, UTC), so every use in a statement
  /// sees one value; -1 until first used.
  int64_t statement_time_us = -1;
  /// The statement's time as a TIMESTAMP or DATE constant.
  ExprPtr StatementTime(bool date, int location);
  SqlDialect dialect = SqlDialect::kPostgres;
  /// File tables (FROM 'path', read_parquet, read_csv): allowed?, and the
  /// pool their data is read into.
  bool file_tables_allowed = false;
  MemoryPool* file_pool = nullptr;
  std::shared_ptr<formats::S3Files> s3_files;
  std::shared_ptr<PathTableScans> path_tables;  // null: page index on, sources not kept

  int NewId() { return next_id++; }
  std::string Where(int location) const { return DescribePosition(sql, location); }
  Status Error(const std::string& m, int location) const { return Status::Invalid(m + " (" + Where(location) + ")"); }
  Status Unsupported(const std::string& c, int location) const {
    return Status::NotImplemented(c + " is not supported (" + Where(location) + ")").WithSqlState("0A000");
  }
  Status WithPosition(const Status& st, int location) const;

  // binder.cc
  Result<BoundQuery> BindQuery(Json& select, const Scope* outer, bool is_subquery);
  Status BindFromItem(Json& item, QueryState* q, std::vector<LogicalOpPtr>* rels, std::vector<ExprPtr>* preds);

  // bind_join.cc
  /// A JoinExpr of FROM: inner joins add their sides to `rels` and their
  /// conditions to `preds` (one join graph); outer joins plan each side as
  /// its own graph and add one kJoin to `rels`. JOIN ... USING (cols) and
  /// NATURAL JOIN compare the named (common) columns and merge each pair
  /// into one column, as PostgreSQL: first among the join's columns for
  /// `*`, the left key (inner, LEFT), the right key (RIGHT) or COALESCE of
  /// both (FULL, or keys of different types); `a.k` still names a side's
  /// key. Errors: 42703 a USING column missing on a side, 42702 one named
  /// twice on a side or in the list.
  Status BindJoinExpr(Json& join, QueryState* q, std::vector<LogicalOpPtr>* rels, std::vector<ExprPtr>* preds);
  /// The merged columns of a USING / NATURAL join whose left side's scope
  /// entries are [begin, mid) of q->scope.cols and right side's [mid, end):
  /// the equality of each pair, appended to `conditions`; the merged
  /// entries inserted at `begin`, the pairs' entries made qualified-only.
  Status MergeUsingColumns(Json& join, JoinKind kind, size_t begin, size_t mid, QueryState* q,
                           std::vector<ExprPtr>* conditions);
  Result<LogicalOpPtr> BindTable(Json& range_var, QueryState* q);
  /// A scan of `table` named `alias` (column aliases from `alias_node`,
  /// may be null), added to q's scope.
  Result<LogicalOpPtr> BindScan(const TableInfo& table, Json* alias_node, const std::string& alias, int location,
                                QueryState* q);

  // bind_file_table.cc (sql/file_tables.h)
  /// A RangeVar whose name is a file path (`FROM 'x.parquet'`, quoted).
  Result<LogicalOpPtr> BindFilePath(Json& range_var, QueryState* q);
  /// A RangeFunction: read_parquet / parquet_scan, read_csv /
  /// read_csv_auto; other functions in FROM are NotImplemented.
  Result<LogicalOpPtr> BindFileFunction(Json& range_function, QueryState* q);
  /// Loads the file table (refused unless file_tables_allowed; partitions
  /// pruned by options.partition_values, from the query's WHERE).
  Result<TableInfo> LoadFiles(const std::vector<std::string>& paths, const FileTableOptions& options, int location);
  Result<LogicalOpPtr> BindDerived(Json& subquery, Json* alias, int location, QueryState* q, const std::string& name);
  /// Binds `select`, a derived table or WITH query (`what`, for messages)
  /// of a query block whose outer scope is `outer` (null: none), so that it
  /// may read outer columns (bind_correlated_from.cc). Bound dependent when
  /// `outer` is dependent_scope; otherwise an item reading outer columns is
  /// NotImplemented (the enclosing subquery is then bound again by
  /// BindDependent). `*reads_outer` (may be null) tells whether it reads
  /// outer columns. Errors: those of BindQuery.
  Result<BoundQuery> BindCorrelatedFrom(Json& select, const Scope* outer, int location, const char* what,
                                        bool* reads_outer = nullptr);
  void AddToScope(QueryState* q, const std::string& alias, const LogicalOp& plan,
                  const std::vector<std::string>& names);
  Result<int64_t> BindLimitValue(Json& node, const char* what);

  // bind_setop.cc
  /// A SelectStmt with `op` UNION / INTERSECT / EXCEPT (its larg and rarg
  /// bound by BindQuery), with its ORDER BY / LIMIT.
  Result<BoundQuery> BindSetOperation(Json& select, const Scope* outer, bool is_subquery);
  /// A SelectStmt with `valuesLists`: columns column1, column2, ... of the
  /// rows' unified types.
  Result<BoundQuery> BindValues(Json& select, const Scope* outer);
  /// The branches (their visible columns) cast to their columns' common
  /// types, under one kUnion (a single branch: its projection);
  /// `out_cols` receives the output columns (names of the first branch).
  /// Errors: Invalid 42601 for branches of different widths, 42804 for
  /// types without a common type; `what` names the construct.
  Result<LogicalOpPtr> UnifyBranches(std::vector<BoundQuery>& branches, const std::string& what, int location,
                                     std::vector<ColumnBinding>* out_cols);
  /// `plan` under a hash aggregate grouping by all its columns (new ids).
  Result<LogicalOpPtr> DistinctRows(LogicalOpPtr plan, int location);
  /// A projection of `plan` (the typed columns of `wanted`, in order) to
  /// `wanted`'s columns, with NULL constants for its untyped ones.
  LogicalOpPtr RestoreNullColumns(const LogicalOpPtr& plan, const std::vector<ColumnBinding>& wanted);
  /// ORDER BY (output names, positions or expressions over the output
  /// columns), LIMIT and OFFSET of `select` applied to q->plan.
  Status ApplyOrderLimit(Json& select, BoundQuery* q);
  /// Where NULLs sort when ORDER BY names no NULLS FIRST / LAST
  /// (PostgreSQL: as if larger than every value; Spark: smaller).
  bool DefaultNullsFirst(bool descending) const { return dialect == SqlDialect::kSpark ? !descending : descending; }

  // bind_expression.cc
  Result<ExprPtr> BindExpr(Json& node, ExprContext* ctx);
  Result<ExprPtr> BindColumnRef(Json& node, ExprContext* ctx);
  Result<ExprPtr> BindConst(Json& node);
  Result<ExprPtr> BindFuncCall(Json& node, ExprContext* ctx);
  /// An aggregate call (`name`: IsAggregateName, folded) into ctx->aggs;
  /// the column of its result (bind_aggregate.cc). Errors: Invalid for
  /// an aggregate where none may be, nested, with a wrong argument count
  /// or type; NotImplemented for ORDER BY inside other than string_agg and
  /// the percentiles, FILTER on first / last / any_value.
  Result<ExprPtr> BindAggregateCall(Json& node, const std::string& name, ExprContext* ctx);
  /// `FILTER (WHERE c)` (`filter`: the agg_filter node) applied to a bound
  /// `call`: its argument becomes CASE WHEN c THEN x END (count(*):
  /// count_if(c)). Errors: Invalid for a c not BOOLEAN; NotImplemented for
  /// the picks, which would take the NULLs.
  Status ApplyAggregateFilter(Json& filter, const std::string& name, ExprContext* ctx, AggregateCall* call);
  /// The condition of a FILTER clause, BOOLEAN (a NULL literal cast).
  /// Errors: Invalid 42804 for another type; BindExpr's.
  Result<ExprPtr> BindFilterCondition(Json& filter, ExprContext* ctx);
  /// CASE WHEN cond THEN arg END: what a filtered aggregate reads.
  Result<ExprPtr> FilteredArgument(ExprPtr cond, ExprPtr arg, int location);
  /// The value, fraction and order of a percentile call `f` (a FuncCall's
  /// body) into `call` (fn set); its result type.
  Status BindPercentile(Json& f, const std::string& name, ExprContext* ctx, AggregateCall* call);
  /// string_agg / listagg's value, separator and order into `call`.
  Status BindStringAgg(Json& f, const std::string& name, ExprContext* ctx, AggregateCall* call);
  /// Without GROUP BY, when every aggregate of `aggs` is count / sum / avg /
  /// min / max (DISTINCT x) of one x: a GROUP BY x over `input` (its
  /// distinct values, by the parallel hash aggregate's key paths), with
  /// `aggs` made plain aggregates over its column; else `input` unchanged.
  /// No errors today (Result for the binder's conventions).
  Result<LogicalOpPtr> DistinctValuesFirst(LogicalOpPtr input, std::vector<AggregateCall>* aggs);
  Result<ExprPtr> BindAExpr(Json& node, ExprContext* ctx);
  Result<ExprPtr> BindTypeCast(Json& node, ExprContext* ctx);
  /// `arg` cast to `to` by Spark's ANSI rules (expression/spark_cast.h),
  /// NULL where it fails under `try_cast`. Errors: Invalid 42K09 for a pair
  /// Spark cannot cast (DATE to INT, ...); the cast's own when folded.
  Result<ExprPtr> SparkCast(const ExprPtr& arg, const DataTypePtr& to, bool try_cast, int location);
  Result<DataTypePtr> BindTypeName(Json& type_name, int location);
  Result<ExprPtr> Typed(Result<ExprPtr> r, int location) const;

  // bind_window.cc
  /// A FuncCall with OVER: appends a WindowCall to ctx->windows (or finds an
  /// equal one) and returns a reference to its output column.
  Result<ExprPtr> BindWindowCall(Json& node, ExprContext* ctx);

  // bind_grouping_sets.cc
  /// The grouping sets of a GROUP BY clause holding GROUPING SETS / ROLLUP /
  /// CUBE: distinct grouping expressions (bound by `bind_item`) into
  /// `groups`, each set as indexes into it. Errors: more than 4096 sets.
  Status BindGroupingSets(Json& clause, const std::function<Result<ExprPtr>(Json&)>& bind_item,
                          std::vector<ExprPtr>* groups, std::vector<std::vector<int>>* sets);
  /// A GroupingFunc node or grouping_id(...) FuncCall: appends a
  /// GroupingCall to ctx->groupings; returns its BIGINT output column.
  Result<ExprPtr> BindGroupingFunc(Json& node, ExprContext* ctx);
  /// A kExpand node over `input` for `sets` (of `groups`); `agg_groups`
  /// receives the aggregate's grouping expressions (the expanded group
  /// columns, the set number, the GROUPING() values) and `extra` the
  /// aggregate output columns after the group columns (the set number,
  /// then one per GroupingCall, with its output id). `values[g]` is what
  /// the expand emits for groups[g] in the sets that hold it (over
  /// `input`'s columns: groups[g] itself, or a pre-aggregate's group column).
  Result<LogicalOpPtr> PlanGroupingSets(LogicalOpPtr input, const std::vector<ExprPtr>& groups,
                                        const std::vector<ExprPtr>& values, const std::vector<std::vector<int>>& sets,
                                        const std::vector<GroupingCall>& groupings, std::vector<ExprPtr>* agg_groups,
                                        std::vector<ColumnBinding>* extra);
  // bind_aggregate_split.cc
  /// An aggregate computed in two phases: `partial` aggregates the input by
  /// finer groups, and the final aggregate (above `partial`, or above a
  /// kExpand of it) groups its output by the query's groups over
  /// `final_aggs`, whose output columns are `final_columns`; `results[k]` is
  /// the query's aggs[k] over them.
  struct SplitAggregates {
    LogicalOpPtr partial;
    std::vector<ExprPtr> group_values;  ///< partial's group columns, in the finer groups' order
    std::vector<AggregateCall> final_aggs;
    std::vector<ColumnBinding> final_columns;
    std::vector<ExprPtr> results;
  };
  /// Splits `aggs` over `input` grouped by `finer` when every aggregate
  /// decomposes: sum, count, count(*), count_if, avg (a sum and a count,
  /// divided at the end), min, max, bool_and, bool_or, any_value; a DISTINCT
  /// aggregate only when its argument is finer[distinct_group] (each value
  /// is then one partial row of its group: the final aggregate needs no
  /// DISTINCT). nullopt otherwise (variance, first / last, holistic
  /// aggregates, sketches; other DISTINCT arguments). Used for
  /// - GROUPING SETS: `finer` is every grouping expression (the finest
  ///   set), so the kExpand multiplies the groups, not the input's rows (as
  ///   DuckDB pre-aggregates); DISTINCT aggregates are not split there;
  /// - the DISTINCT aggregates of one argument x beside others: `finer` is
  ///   the GROUP BY and x (SplitDistinct).
  Result<std::optional<SplitAggregates>> SplitAggregate(const LogicalOpPtr& input, const std::vector<ExprPtr>& finer,
                                                        const std::vector<AggregateCall>& aggs, int distinct_group);
  /// When some aggregate of `aggs` is DISTINCT and all DISTINCT ones share
  /// one argument x, SplitAggregate by `groups` and x (x as a group, the
  /// final aggregate's groups are group_values' first groups.size());
  /// else nullopt. fn(DISTINCT x) kept a per-group set of x beside the
  /// states (TPC-DS Q28: avg, count and count(DISTINCT) of one column).
  Result<std::optional<SplitAggregates>> SplitDistinct(const LogicalOpPtr& input, const std::vector<ExprPtr>& groups,
                                                       const std::vector<AggregateCall>& aggs);

  // bind_dependent_join.cc (general unnesting, Neumann & Kemper)
  /// Queries whose outer scope is this one are bound dependent (BindQuery
  /// sets QueryState::dependent); null when none.
  const Scope* dependent_scope = nullptr;
  /// Binds `select`, a subquery of the query whose scope is `outer`,
  /// keeping its references to outer columns in its plan (filters,
  /// projections, aggregates, ...), for JoinDependent.
  Result<BoundQuery> BindDependent(Json& select, const Scope* outer);
  /// How JoinDependent joins the outer plan with the unnested subquery.
  enum class DependentJoin : uint8_t {
    kScalar,  ///< LEFT join; more than one subquery row per outer row is 21000
    kInner,   ///< LATERAL: an inner join
    kLeft,    ///< LEFT JOIN LATERAL ... ON `residual`
    kSemi,    ///< EXISTS / IN: a semi join (`keys` and `residual` added)
    kAnti,    ///< NOT EXISTS: an anti join
    kMark,    ///< EXISTS / IN as a value: a mark join (`mark` its column)
  };
  /// The dependent join of `outer` with `sub` (bound by BindDependent),
  /// unnested as DuckDB's FlattenDependentJoins: D, the distinct values of
  /// `outer_exprs` (over `outer`'s columns, one per id of `outer_ids`, the
  /// outer columns `sub` reads), is pushed down through `sub`'s operators
  /// (filters and projections pass it, aggregates group by it, a scalar
  /// aggregate is left-joined from it, ORDER BY ... LIMIT becomes
  /// row_number() per D value, UNION ALL takes it in each branch, a part
  /// that reads no outer column is joined with it), and `outer` is joined
  /// with the result on D's columns with NULL-safe equality. `keys`
  /// (outer expr, sub column) and `residual` (over both sides) are added
  /// to the top join. Errors: NotImplemented naming a shape the push-down
  /// does not cover (GROUPING SETS, RIGHT / FULL joins reading outer
  /// columns, ...). `mark`: kMark's column (required there).
  Result<LogicalOpPtr> JoinDependent(LogicalOpPtr outer, const LogicalOpPtr& sub, const std::vector<int>& outer_ids,
                                     const std::vector<ExprPtr>& outer_exprs, DependentJoin how,
                                     std::vector<std::pair<ExprPtr, ExprPtr>> keys, ExprPtr residual, int location,
                                     const ColumnBinding* mark = nullptr);
  /// Whether a subquery bound by BindQuery (`b`, in the query of `scope`)
  /// needs JoinDependent: its plan reads outer columns, or its correlation
  /// reads columns of a query further out than `scope`'s.
  bool NeedsDependentJoin(const BoundQuery& b, const Scope& scope);
  /// The ids of the columns of `scope` (not its enclosing scopes) that
  /// `plan` reads, in order of first reading.
  std::vector<int> OuterColumnsOf(const LogicalOp& plan, const Scope& scope);
  /// A LATERAL derived table (a RangeSubselect) joined to the FROM items
  /// bound so far (`rels` and `preds`, planned into one relation of
  /// `rels`): an inner join, or with `left_join` (a JoinExpr) LEFT JOIN
  /// LATERAL ... ON its quals.
  Status BindLateral(Json& range_subselect, QueryState* q, std::vector<LogicalOpPtr>* rels, std::vector<ExprPtr>* preds,
                     Json* left_join = nullptr);
  /// [NOT] EXISTS (`x` null) / x IN (`select`) as a WHERE term, by
  /// JoinDependent: a semi (anti) join of q's plan.
  Status ApplyDependentSemiJoin(Json& select, ExprPtr x, bool negated, QueryState* q, int location);
  /// A correlated scalar subquery the flattenings of bind_subquery.cc do
  /// not cover (`select`: its parse tree, not yet bound), joined by
  /// JoinDependent onto ctx->query's plan (deferred like theirs in the
  /// SELECT list, HAVING and ORDER BY); its value column.
  Result<ExprPtr> BindDependentScalar(Json& select, ExprContext* ctx, int location);
  /// `sub` (bound by BindDependent, reading the outer columns `ids`; its
  /// first column the value) joined as a scalar subquery by JoinDependent
  /// onto ctx->query's plan (deferred in the SELECT list, HAVING and ORDER
  /// BY); the value column.
  Result<ExprPtr> AttachDependentScalar(const LogicalOpPtr& sub, const std::vector<int>& ids, ExprContext* ctx,
                                        int location);
  // bind_scalar_lookup.cc
  /// Given the rows of more than one row per key (a plan), the plan whose
  /// rows are the outer rows asking for such a key (null function: every
  /// key is asked for, as D's are).
  using HitPlan = std::function<Result<LogicalOpPtr>(const LogicalOpPtr& dups)>;
  /// `input` grouped by `key_exprs` into one row per key: `value`'s
  /// any_value (under `value`'s id) and the key columns (new ids, in
  /// `*key_cols`), in that order. A key of several rows asked for (see
  /// HitPlan) is 21000, checked once, by an uncorrelated subquery reading
  /// the same shared (run once) grouped result.
  Result<LogicalOpPtr> OneRowPerKey(const LogicalOpPtr& input, const std::vector<ExprPtr>& key_exprs,
                                    const ColumnBinding& value, const HitPlan& hit_plan, int location,
                                    std::vector<ColumnBinding>* key_cols);
  /// Whether a scalar subquery bound for the equality flattening (`b`, in
  /// the query of `scope`) is correlated by equalities only, may return
  /// several rows per key, and its rows follow their keys (no window,
  /// LIMIT, grouping sets or set operation): BindKeyedLookup answers it.
  bool FitsKeyedLookup(const BoundQuery& b, const Scope& scope);
  /// `b` grouped by its inner keys (OneRowPerKey) and left-joined onto
  /// ctx->query's plan by the keys (deferred in the SELECT list, HAVING and
  /// ORDER BY); its value column.
  Result<ExprPtr> BindKeyedLookup(const BoundQuery& b, ExprContext* ctx, int location);
  /// Column references to `ids` in `plan` (NotImplemented at `location`
  /// when `plan` lacks one).
  Result<std::vector<ExprPtr>> OuterExprs(const LogicalOp& plan, const std::vector<int>& ids, int location);
  // bind_dependent_mark.cc
  /// [NOT] EXISTS (`x` null) / x IN (`select`) as a value where the
  /// flattenings of bind_mark_join.cc do not apply, by JoinDependent onto
  /// ctx->query's plan (deferred in the SELECT list, HAVING and ORDER BY):
  /// EXISTS a mark join; IN, when x reads only columns of the query or of
  /// queries further out, one scalar aggregate per outer row (x added to
  /// D): count(*), bool_or(y = x), bool_or(y IS NULL); else two mark joins
  /// (x = y; the subquery bound again, y IS NULL OR x IS NULL). The value.
  Result<ExprPtr> BindDependentMark(const Json& select, ExprPtr x, ExprContext* ctx, int location);
  /// BindDependentMark's x IN (`select`) as one scalar aggregate per outer
  /// row (x read inside the subquery); the value.
  Result<ExprPtr> BindDependentIn(const Json& select, const ExprPtr& x, ExprContext* ctx, int location);

  // bind_subquery.cc
  Result<ExprPtr> BindScalarSubquery(Json& sublink, ExprContext* ctx);
  /// [NOT] EXISTS / x IN (subquery) as a value (under OR, in the SELECT
  /// list, ...): a mark join onto ctx->query's plan (bind_mark_join.cc).
  Result<ExprPtr> BindMarkSubquery(Json& sublink, ExprContext* ctx);
  /// A mark join of `sub` onto ctx->query's plan (deferred in the SELECT
  /// list, HAVING and ORDER BY); its mark column.
  Result<ExprPtr> AddMarkJoin(ExprContext* ctx, LogicalOpPtr sub, std::vector<std::pair<ExprPtr, ExprPtr>> keys,
                              ExprPtr residual, bool null_aware, int location);
  /// Applies a WHERE term holding a subquery to q->plan (semi/anti join, or
  /// a filter whose scalar subqueries are joined in).
  Status ApplySubqueryConjunct(Json& term, QueryState* q);
  /// Left-joins q's deferred_joins to q->plan, the outer side of each key
  /// first rewritten by `outer_rewrite` (onto the aggregate's group
  /// columns; its error stops the binding); the subqueries' columns are
  /// added to `allowed` when given.
  Status ApplyDeferredJoins(QueryState* q, const std::function<Result<ExprPtr>(const ExprPtr&)>& outer_rewrite,
                            std::unordered_set<int>* allowed);
  /// Splits a subquery's correlated WHERE terms into keys and residuals.
  Status ExtractCorrelation(const ExprPtr& term, QueryState* q, bool* correlated);
};

/// Renames the first of `names` by the alias's column list (`AS s(a, b)`);
/// more names than columns is Invalid 42P10 (binder.cc).
Status ApplyColumnAliases(const Json* alias, const std::string& table, std::vector<std::string>* names,
                          const std::string& where);

/// A projection of `child` computing `exprs` as the columns `cols` (binder.cc).
LogicalOpPtr MakeProject(LogicalOpPtr child, std::vector<ExprPtr> exprs, std::vector<ColumnBinding> cols);

/// A mark join (JoinKind::kMark) of `sub` onto `left`: `left`'s columns,
/// then `mark`. `keys` are (left expr, sub expr) equalities, `residual` a
/// condition over both sides (may be null); `null_aware`: the mark is
/// three-valued as keys[0].first IN (sub's keys[0].second).
LogicalOpPtr MakeMarkJoin(LogicalOpPtr left, LogicalOpPtr sub, std::vector<std::pair<ExprPtr, ExprPtr>> keys,
                          ExprPtr residual, ColumnBinding mark, bool null_aware);

/// EXISTS (SELECT list FROM ...): a select list of plain columns and
/// constants becomes one NULL, so the subquery reads only what its joins
/// and filters use (bind_subquery.cc).
void DropExistsSelectList(Json* select);

/// True when the parse-tree node holds a SubLink anywhere.
bool ContainsSubLink(const Json& node);
/// The byte offset of the first "location" in a node, or -1.
int FirstLocation(const Json& node);
/// The string of a {"String": {"sval": ...}} node.
std::string StringOf(const Json& node);

/// Applies `rewrite` to every expression of a window call (its arguments,
/// PARTITION BY and ORDER BY: grouped queries map them onto the aggregate's
/// outputs).
Status RewriteWindowCall(WindowCall* call, const std::function<Result<ExprPtr>(const ExprPtr&)>& rewrite);
/// `plan` under a chain of kWindow nodes, one per distinct window of
/// `calls` (in order of first appearance).
LogicalOpPtr PlanWindows(LogicalOpPtr plan, const std::vector<WindowCall>& calls);

}  // namespace quiver::sql

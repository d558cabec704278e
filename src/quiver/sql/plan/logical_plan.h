// quiver/sql/plan/logical_plan.h — the logical plan: a tree of
// relational operators over columns identified by statement-unique ids
// (ColumnBinding::id). The binder (binder/) builds it from the parse tree
// with subqueries already unnested into joins; the join orderer
// (join_order.h) places inner joins; the physical planner
// (physical_planner.h) turns it into operators, mapping ids to batch
// positions.
//
// Thread safety: plans are built and read by one thread (the statement's
// planner); they are immutable once handed to the physical planner.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "quiver/sql/catalog.h"
#include "quiver/sql/expression/expr.h"

namespace quiver::sql {

struct ColumnBinding {
  int id = -1;
  std::string name;
  DataTypePtr type;  ///< canonical (or a pass-through type)
};

/// kMark (DuckDB's mark join): every left row once, followed by one BOOLEAN
/// column, the mark: TRUE when some right row matches (keys and residual),
/// else FALSE; with LogicalOp::mark_null_aware (`x IN (subquery)`, one key,
/// no residual) NULL instead of FALSE when the right side is not empty and
/// x is NULL or the right side's key has a NULL (SQL's three-valued IN).
enum class JoinKind : uint8_t { kInner, kLeft, kRight, kFull, kSemi, kAnti, kNullAwareAnti, kMark };
const char* JoinKindName(JoinKind k);

/// The aggregate functions (names and aliases: binder/bind_aggregate.cc;
/// states and results: execution/aggregate_table.h).
enum class AggFn : uint8_t {
  kCountStar,
  kCount,
  kSum,
  kAvg,
  kMin,
  kMax,
  // issue 37: statistics (Welford per group, Chan's formula to merge)
  kVarSamp,
  kVarPop,
  kStddevSamp,
  kStddevPop,
  // issue 37: conditions and picks
  kCountIf,
  kBoolAnd,
  kBoolOr,
  kAnyValue,
  kFirst,
  kLast,
  // issue 37: holistic (every value of a group kept: aggregate_values.h)
  kPercentileCont,  ///< median, percentile_cont, percentile: interpolated, DOUBLE
  kPercentileDisc,  ///< percentile_disc, percentile_approx: one of the values
  kStringAgg,       ///< string_agg / listagg: the values joined
  // issue 37: a sketch (execution/hyperloglog.h)
  kApproxCountDistinct,
};

/// The SQL name of `fn` (EXPLAIN, messages).
const char* AggFnName(AggFn fn);

/// Whether `fn` keeps every value of its group (the percentiles:
/// execution/aggregate_values.h).
inline bool IsListFn(AggFn fn) {
  return fn == AggFn::kPercentileCont || fn == AggFn::kPercentileDisc || fn == AggFn::kStringAgg;
}

/// Whether `fn` picks one row's value (any_value / first / last).
inline bool PicksValue(AggFn fn) { return fn == AggFn::kAnyValue || fn == AggFn::kFirst || fn == AggFn::kLast; }

/// One aggregate of an Aggregate node: fn(arg) [DISTINCT], producing the
/// column `output_id` of type `type`.
/// Result types: count -> BIGINT; sum(INTEGER) -> BIGINT (overflow is
/// 22003); sum(BIGINT) -> DECIMAL(38,0) (PostgreSQL's numeric: the binder
/// casts the argument to DECIMAL(19,0)); sum(DECIMAL(p,s)) ->
/// DECIMAL(38,s); sum(DOUBLE) -> DOUBLE;
/// avg -> DOUBLE; min/max -> the argument's type.
/// var_samp / var_pop / stddev_samp / stddev_pop -> DOUBLE (of a numeric
/// argument; the sample forms are NULL below two rows, the population forms
/// 0 for one row); count_if -> BIGINT (rows where the BOOLEAN argument is
/// true, 0 for none); bool_and / bool_or -> BOOLEAN; any_value / first /
/// last -> the argument's type (a NULL is a value unless `ignore_nulls`).
/// percentile_cont(f) WITHIN GROUP (ORDER BY x) / median(x) / percentile(x,
/// f) -> DOUBLE (of a numeric x; linear interpolation between the values at
/// (n - 1) * f); percentile_disc(f) ... / percentile_approx(x, f) -> x's
/// type (the first value whose cumulative distribution reaches f; exact).
/// string_agg(x, sep [ORDER BY x]) -> VARCHAR (NULL without values);
/// approx_count_distinct(x[, rsd]) -> BIGINT (HyperLogLog; 0 without values).
struct AggregateCall {
  AggFn fn = AggFn::kCountStar;
  ExprPtr arg;  ///< null for count(*)
  bool distinct = false;
  DataTypePtr type;
  int output_id = -1;
  bool ignore_nulls = false;  ///< any_value / first / last: skip NULL arguments (Spark's isIgnoreNull)
  /// Percentiles: the fraction f in [0, 1]; when the SQL gave it exactly
  /// (an integer or decimal literal), also as unscaled / 10^scale
  /// (fraction_scale -1: a DOUBLE), which percentile_disc uses to count
  /// exactly as DuckDB does.
  double fraction = 0.5;
  i128 fraction_unscaled = 5;
  int fraction_scale = 1;
  /// Percentiles: WITHIN GROUP (ORDER BY x DESC): f counts from the top;
  /// string_agg: the values joined in descending order.
  bool descending = false;
  /// string_agg: the separator, and whether the values are joined in their
  /// order (ORDER BY x) rather than as the aggregate saw them.
  std::string separator{};
  bool ordered = false;
  /// string_agg ordered by other expressions: `arg` is Fn::kOrderedValue's
  /// (expression/order_key.h), each value behind the bytes that order it,
  /// sorted by those and stripped when joined.
  bool key_prefixed = false;
  /// approx_count_distinct: the sketch's index bits (hyperloglog.h).
  int hll_precision = 0;
};

struct SortKey {
  ExprPtr expr;
  bool descending = false;
  bool nulls_first = false;  ///< PostgreSQL default: NULLS LAST for ASC, FIRST for DESC
};

struct WindowCall;  // window_call.h

struct LogicalOp;
using LogicalOpPtr = std::shared_ptr<LogicalOp>;

struct LogicalOp {
  enum class Kind : uint8_t {
    kScan,       ///< a catalog table: `table`, `table_columns`, `filters`
    kFilter,     ///< `predicate` over the child
    kProject,    ///< `exprs`, one per output column
    kJoin,       ///< `join_kind`, `keys` (left expr, right expr), `residual`
    kAggregate,  ///< `groups` then `aggregates`: the output columns in that order
    kSort,       ///< `sort_keys`; `limit` >= 0 makes it a top-N
    kLimit,      ///< `offset`, `limit` (-1 = none)
    kSingleRow,  ///< one row, no columns (SELECT without FROM)
    /// A reference to a WITH query named more than once in its statement
    /// (`cte_id`, `cte_name`): the one child is that reference's own bound
    /// copy of the query, and `columns` are the child's. Every reference
    /// with the same `cte_id` reads one materialized result: the query
    /// runs once, when the first reference is prepared (DuckDB's
    /// materialized CTE, PhysicalCTEScan). Predicates are not pushed into
    /// it. A WITH query named once is inlined instead (no such node).
    kCteScan,
    /// Window functions (window_call.h) over the child: `columns` are the
    /// child's then one per call of `windows`, which share one PARTITION BY
    /// and ORDER BY (a statement with several windows chains nodes).
    kWindow,
    /// GROUPING SETS / ROLLUP / CUBE below their aggregate (Spark's Expand):
    /// every input row once per entry of `expand_sets`; `columns` are the
    /// child's (passed through) then one per expression of an entry (each
    /// entry has as many, of the same types).
    kExpand,
    /// UNION ALL: the rows of every child (two or more), one after the
    /// other. Each child's `columns` have the types of this node's
    /// `columns`, in order (the binder casts each branch to the unified
    /// types); the names are the first branch's.
    kUnion,
  };
  Kind kind = Kind::kSingleRow;
  std::vector<ColumnBinding> columns;  ///< output columns, in order
  std::vector<LogicalOpPtr> children;
  /// Estimated output rows (join ordering, build-side choice).
  double est_rows = 1;
  /// Rows of the largest base table below (cardinality estimates).
  double base_rows = 1;

  TableInfo table;
  std::vector<int> table_columns;  ///< kScan: schema index of each output column
  std::vector<ExprPtr> filters;    ///< kScan: pushed-down conjuncts
  ExprPtr predicate;               ///< kFilter
  std::vector<ExprPtr> exprs;      ///< kProject
  JoinKind join_kind = JoinKind::kInner;
  std::vector<std::pair<ExprPtr, ExprPtr>> keys;  ///< kJoin: left side expr = right side expr
  ExprPtr residual;                               ///< kJoin: extra condition (may be null)
  /// kJoin kMark: the mark (the last of `columns`) is three-valued as
  /// `keys[0].first IN (keys[0].second's rows)` (JoinKind::kMark).
  bool mark_null_aware = false;
  std::vector<ExprPtr> groups;            ///< kAggregate
  std::vector<AggregateCall> aggregates;  ///< kAggregate
  /// kAggregate over a kExpand: per empty grouping set (`()`, ROLLUP's
  /// grand total), the constant values of `groups` for its group (NULLs,
  /// the set's number, its GROUPING() values). Over empty input these
  /// groups are still emitted, one row each, with the aggregates' values
  /// over no rows (count 0, sum NULL), as PostgreSQL and DuckDB do.
  std::vector<std::vector<ExprPtr>> empty_input_groups;
  std::vector<SortKey> sort_keys;  ///< kSort
  int64_t limit = -1, offset = 0;  ///< kSort (top-N) / kLimit
  int cte_id = -1;                 ///< kCteScan: the WITH query (statement-unique)
  std::string cte_name;            ///< kCteScan: its name (EXPLAIN)

  /// kWindow: the calls (window_call.h).
  std::vector<std::shared_ptr<const WindowCall>> windows;
  /// kExpand: one expression list per grouping set.
  std::vector<std::vector<ExprPtr>> expand_sets;

  /// Position of column `id` in `columns`, or -1.
  int IndexOf(int id) const;
};

/// A one-line-per-node description of a plan (tests, EXPLAIN): the
/// operator, its arguments and `est=` its estimated rows, then what
/// `annotate` returns for the node, if given (EXPLAIN ANALYZE: the rows it
/// returned), each child indented by two more spaces.
std::string PlanToString(const LogicalOp& op, int indent = 0,
                         const std::function<std::string(const LogicalOp&)>& annotate = {});

}  // namespace quiver::sql

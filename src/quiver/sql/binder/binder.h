// quiver/sql/binder/binder.h — turns libpg_query's parse tree of one SELECT
// into a logical plan (plan/logical_plan.h): resolves table and column
// names (scopes for FROM items, derived tables, CTEs and outer queries),
// types every expression (expression/function_registry.h), plans the FROM
// list as a join graph (planner/join_order.h), unnests subqueries into
// joins and plans aggregation, DISTINCT, ORDER BY and LIMIT.
//
// Subqueries (Neumann & Kemper, "Unnesting Arbitrary Queries", the
// equality-correlated cases DuckDB's FlattenDependentJoins covers first):
//   [NOT] EXISTS (...)          -> semi / anti join; correlated equalities
//                                  become keys, other correlated conditions
//                                  (l3.x <> l1.x) the join's residual
//   x [NOT] IN (SELECT y ...)   -> semi join on x = y / null-aware anti join
//   correlated scalar (SELECT agg(...) ... WHERE inner.k = outer.k)
//                               -> the subquery grouped by inner.k, LEFT
//                                  joined on outer.k (count() becomes 0 for
//                                  keys without rows, the "count bug")
//   uncorrelated scalar         -> run once (ScalarSubquery); more than one
//                                  row is error 21000
//   EXISTS / IN elsewhere (under OR or NOT, in the SELECT list, HAVING)
//                               -> a mark join: the outer rows with a BOOLEAN
//                                  column, three-valued for IN
//                                  (bind_mark_join.cc)
//   any other correlated scalar subquery, EXISTS / IN in WHERE, LATERAL
//                               -> the general unnesting (Neumann & Kemper;
//                                  DuckDB's FlattenDependentJoins): the
//                                  distinct outer values pushed down through
//                                  the subquery's operators, joined back on
//                                  them NULL-safely (bind_dependent_join.cc)
//
// Errors carry the position ("(line L, column C)"): Invalid for syntax and
// type errors, KeyError for unknown tables (42P01) and columns (42703),
// NotImplemented for unsupported constructs (0A000).
//
// Thread safety: a Binder is used by one thread for one statement.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/sql/catalog.h"
#include "quiver/sql/dialect.h"
#include "quiver/sql/plan/logical_plan.h"
#include "quiver/sql/text_position.h"

namespace quiver::formats {
class S3Files;  // formats/s3_files.h
}  // namespace quiver::formats

namespace quiver::sql {

class PathTableScans;  // sql/file_tables.h

using Json = nlohmann::json;

/// Makes the run-once function of an uncorrelated scalar subquery from its
/// plan (the engine executes the plan on the statement's context).
/// `exists` asks for "does the plan return a row" (a boolean) instead of
/// the single value of its single column.
using SubqueryRunnerFactory = std::function<ScalarSubquery::Runner(LogicalOpPtr plan, bool exists)>;

struct BoundStatement {
  LogicalOpPtr plan;
  std::vector<std::string> names;  ///< output column names (duplicates allowed)
};

/// Bounds on binding one statement (issue 35 #1, #2), set by the engine.
struct BindLimits {
  /// Expressions being bound inside one another at once (the recursion of
  /// BindExpr): past it, Invalid with SQLSTATE 54001 naming the position.
  /// Defence in depth behind CheckStatementComplexity's pre-scan.
  int max_depth = 4000;
  /// Polled at every expression bound: past it, Timeout with SQLSTATE
  /// 57014 ("planning took longer than ..."); max() = none.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  /// For the message: the planning time limit, in milliseconds.
  int64_t timeout_ms = 0;
  /// Polled likewise when set: true -> Cancelled (57014).
  std::shared_ptr<std::atomic<bool>> cancel;
};

class Binder {
 public:
  Binder(std::string_view sql, std::shared_ptr<const Catalog> catalog, SubqueryRunnerFactory runner_factory);
  ~Binder();

  /// The dialect statements are read in (dialect.h; default postgres):
  /// integer `/`, `div` and the default NULL order. Call before binding.
  void SetDialect(SqlDialect dialect);

  /// Binds one SelectStmt node (the value of {"SelectStmt": ...}).
  Result<BoundStatement> BindSelectStatement(Json& select);

  /// File tables (sql/file_tables.h: `FROM 'x.parquet'`, read_parquet,
  /// read_csv): refused with SQLSTATE 42501 unless `allowed`; their files
  /// are read at binding into `pool` (must outlive the plan's batches'
  /// accounting: the statement's scan pool). `s3_files`: where s3://
  /// paths are read (null: refused, naming the path). `path_tables`: the
  /// page-index setting of their Parquet scans and where their sources are
  /// kept for the caller's counters (null: page index on, not kept).
  /// Default: refused.
  void SetFileTables(bool allowed, MemoryPool* pool, std::shared_ptr<formats::S3Files> s3_files = nullptr,
                     std::shared_ptr<PathTableScans> path_tables = nullptr);

  /// Replaces the default BindLimits; call before binding.
  void SetLimits(BindLimits limits);

  /// Position text of a byte offset ("line L, column C").
  std::string Where(int location) const;
  /// Invalid / NotImplemented / KeyError with the position appended.
  Status Error(const std::string& message, int location) const;
  Status Unsupported(const std::string& construct, int location) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace quiver::sql

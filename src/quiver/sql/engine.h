// quiver/sql/engine.h — runs one SQL statement over a Catalog's tables on
// quiver's own operators, pull-based, so results stream to the consumer
// (e.g. the CloudFetch chunk writer) as they are produced.
//
// The pipeline (one folder per stage):
//   parse      libpg_query (the PostgreSQL 15 grammar) -> JSON parse tree
//   binder/    names, types, scopes (FROM items, derived tables, CTEs, outer
//              queries), aggregates, subqueries unnested into joins
//   planner/   the logical plan, join ordering of comma-separated FROM lists
//              and inner joins, the physical plan (ids -> batch positions,
//              column pruning)
//   expression/ typed expressions evaluated a batch at a time (one kernel
//              per type family), the function registry
//   execution/ operators: scan, filter, project, hash join (with residual
//              conditions) / nested-loop join, hash aggregate, sort / top-N,
//              limit
//
// SQL supported (a SELECT; see binder/binder.h for subqueries and
// expression/function_registry.h for the type rules and result types):
//   SELECT [DISTINCT] <exprs | * | t.*> [AS alias] FROM <items> [WHERE]
//     [GROUP BY exprs | ordinals | output names] [HAVING] [ORDER BY exprs |
//     aliases | ordinals [ASC|DESC] [NULLS FIRST|LAST]] [LIMIT n] [OFFSET m];
//   WITH (non-recursive; a CTE may be referenced more than once: one named
//   more than once runs once, its result held in the statement's pools
//   until the statement ends, not spilled); SELECT without FROM.
//   FROM items: tables [[AS] alias [(cols)]], (SELECT ...) [[AS] t [(cols)]]
//   (no alias: PostgreSQL 16), comma lists
//   with the join predicates in WHERE, [INNER|LEFT|RIGHT|FULL] JOIN ... ON
//   with any condition, CROSS JOIN; files (file_tables.h, when
//   ExecuteOptions::file_tables): 'path' (Parquet / CSV file, glob,
//   directory, hive partitions), read_parquet(...), read_csv(...).
//   Subqueries: scalar (uncorrelated: run once, before the statement's
//   pipelines; an error surfaces only where the value is used; correlated with equalities:
//   a grouped LEFT join), [NOT] EXISTS and [NOT] IN as AND terms of WHERE.
//   Expressions: + - * / % on integers, decimals (exact) and doubles;
//   comparisons across numeric classes; AND OR NOT; IS [NOT] NULL; [NOT]
//   IN lists (hashed); [NOT] BETWEEN; [NOT] LIKE [ESCAPE]; CASE (searched,
//   simple); COALESCE; NULLIF; CAST to INTEGER, BIGINT, DECIMAL(p,s),
//   DOUBLE, VARCHAR, DATE, TIMESTAMP, BOOLEAN; EXTRACT(YEAR|MONTH|DAY);
//   date +/- INTERVAL 'n' DAY|MONTH|YEAR; date +/- integer; date - date;
//   SUBSTRING(s FROM a [FOR b]); UPPER; LOWER; LENGTH; TRIM; LTRIM; RTRIM;
//   ||; ABS; ROUND. Aggregates: count(*), count, sum, avg, min, max, each
//   with DISTINCT.
//   SHOW TABLES [IN|FROM [catalog.]schema] [[LIKE] 'pattern']
//     -> database: utf8 ("default"), tableName: utf8, isTemporary: bool
//     (false), Spark's columns as Databricks returns them
//   DESCRIBE | DESC [TABLE] [EXTENDED] t -> col_name: utf8, data_type: utf8
//     (Spark's type name: "bigint", "decimal(15,2)", ...; SparkTypeName),
//     comment: utf8 (the field's "comment" metadata, else NULL)
//   Spark SQL as Databricks clients send it (spark_dialect.h): `backtick`
//   identifiers; names qualified by the one schema, default, and catalog,
//   spark_catalog (hive_metastore accepted): default.t,
//   spark_catalog.default.t; SHOW SCHEMAS | DATABASES | NAMESPACES ->
//   databaseName: utf8 (Databricks' name; Spark 3 without its legacy
//   setting says namespace);
//   SHOW CATALOGS -> catalog: utf8; USE [SCHEMA] default -> no columns, no
//   rows. Another schema: KeyError 3F000; another catalog: KeyError 42704.
//   EXPLAIN SELECT ... -> plan: utf8, the logical plan (one operator per
//     row, indented by depth, with its estimated rows)
//   On an engine made by WithWritableCatalog: CREATE TABLE, CREATE TABLE
//   AS SELECT, INSERT INTO ... VALUES | SELECT, DROP TABLE over in-memory
//   tables (catalog_writes.h).
//   Set operations UNION [ALL], INTERSECT [ALL], EXCEPT [ALL] with ORDER BY
//   / LIMIT over the whole; VALUES lists as statements and FROM items
//   (binder/bind_setop.cc); window functions; GROUPING SETS.
// Anything else (WITH RECURSIVE, LATERAL, other DML and DDL, ...) is
// NotImplemented naming the construct and its position: "WITH RECURSIVE is
// not supported (line 1, column 16)" (SQLSTATE 0A000). Syntax errors are
// Invalid with their position (42601).
//
// Semantics: SQL three-valued logic; NULLs skipped by aggregates; an
// aggregate without GROUP BY over no rows gives one row (count 0, others
// NULL); NULLS LAST for ASC and FIRST for DESC (PostgreSQL); join keys: a
// NULL never matches. Result rows come in no particular order without
// ORDER BY. Output column names are the aliases, column names or function
// names (duplicates allowed). Runtime errors carry their SQLSTATE
// (Status::sql_state): 22012 division by zero, 22003 numeric overflow,
// 22P02 / 22007 invalid text for a number / date, 21000 a scalar subquery
// with more than one row, 42703 / 42P01 unknown column / table, 53200 out
// of memory.
//
// Memory: every buffer a statement allocates is charged to one child pool
// of ExecuteOptions::pool named "sql-statement", limited to
// memory_limit_bytes; exceeding it is OutOfMemory naming the operator
// (SQLSTATE 53200), and once the stream and its batches are gone the pool
// is back where it was. Its children show the operators apart (an
// AllocationListener on ExecuteOptions::pool sees them):
// "sql-statement/scan" (decoded and converted columns, filters,
// projections), "sql-statement/build" (hash join relations, in the chosen
// memory mode), "sql-statement/probe" (join output), "sql-statement/
// aggregate" (hash aggregation tables in TaskMemoryManager pages, on- or
// off-heap, and their output), "sql-statement/sort" (sort and top-N
// buffers), "sql-statement/plan" (parsing and planning: an estimate from the
// text's length, PlanningEstimateBytes, reserved before parsing starts and
// given back when Execute returns; a text too long for the limit fails
// before it is parsed, OutOfMemory 53200).
//
// Disk: spill files are charged to ExecuteOptions::disk_budget (53100 past
// its limit) and removed when the stream goes, and already at the stream's
// first error (a cancel, a limit, a failed operator).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "quiver/base/result.h"
#include "quiver/columnar/record_batch_stream.h"
#include "quiver/compression/codec.h"
#include "quiver/join/task_memory_manager.h"
#include "quiver/memory/disk_budget.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/sql/catalog.h"
#include "quiver/sql/dialect.h"
#include "quiver/sql/statement_complexity.h"
#include "quiver/sql/text_position.h"

namespace quiver::formats {
class S3Files;  // formats/s3_files.h
}  // namespace quiver::formats

namespace quiver::sql {

struct JoinFilterCounters;  // execution/join_filter.h
class PathTableScans;       // file_tables.h

class TaskScheduler;

struct ExecuteOptions {
  /// Parent of the statement's pool. Required; must be owned by a
  /// std::shared_ptr (buffers keep their pool alive) and outlive nothing in
  /// particular: the statement pool keeps it alive.
  MemoryPool* pool = nullptr;
  /// Where join relations live (on-heap: the pool's allocator; off-heap:
  /// private mappings returned to the OS when the relation is dropped).
  join::MemoryMode memory_mode = join::MemoryMode::kOnHeap;
  /// Byte limit of the statement's pool; -1 = none (ancestors' limits
  /// still apply).
  int64_t memory_limit_bytes = -1;
  /// When set and becoming true, the next batch boundary (scan, join build,
  /// result pull) or the next term of an AND / OR being evaluated over a
  /// batch fails with Cancelled and the statement's operators and their
  /// memory are released at once. May be set from any thread.
  std::shared_ptr<std::atomic<bool>> cancel;
  /// Largest number of rows in one output batch of a join (> 0); scans and
  /// filters keep the batches of their input. Under a memory limit below
  /// 256 MiB it is capped at 8192 (wide joined rows otherwise hold tens of
  /// MiB per worker).
  int64_t max_batch_rows = 64 * 1024;
  /// Workers per pipeline (morsel-driven parallelism, execution/pipeline.h):
  /// 0 = the machine's hardware threads; 1 = everything on the thread that
  /// pulls the result. Results are the same for every value (row order
  /// without ORDER BY aside).
  int threads = 0;
  /// The worker pool (shared by statements); null = the process-wide
  /// TaskScheduler::Default(). Kept alive by the statement.
  std::shared_ptr<TaskScheduler> scheduler;
  /// Out of core: an operator that reaches the statement's memory limit
  /// (or an ancestor's) writes part of its state to spill files and goes
  /// on — a hash aggregate its groups' states, partitioned by hash; a hash
  /// join its build and probe sides, partitioned by key (grace hash join);
  /// a full ORDER BY its input as sorted runs, merged (external sort).
  /// Files: compressed Arrow IPC streams (`spill_compression`) in a
  /// directory made per statement under `spill_directory` (empty: $TMPDIR
  /// or /tmp), removed when the statement ends, also on cancel and error.
  /// Off: such an operator fails with OutOfMemory (53200).
  bool spill = true;
  std::string spill_directory;
  CompressionType spill_compression = CompressionType::kLz4Frame;
  /// Where the bytes of the spill files are charged before they are
  /// written (memory/disk_budget.h; e.g. a child per statement of the
  /// server's budget, with the statement's own limit): past a limit the
  /// statement fails with IOError 53100 naming it, and its spill files
  /// go. Null: no disk limit.
  std::shared_ptr<DiskBudget> disk_budget;
  /// When set, receives the statement's spill counters when its stream
  /// is destroyed (bytes written, files written).
  std::shared_ptr<std::atomic<int64_t>> spilled_bytes, spilled_files;
  /// Join filter pushdown (execution/join_filter.h): an inner or semi hash
  /// join's finished build side bounds the integer / DATE keys of its probe
  /// side's scan (key range, and a bitmap of the keys when their range is
  /// narrow): Parquet row groups outside the range are skipped and the rows
  /// that cannot match dropped at the scan. Off: every row is scanned and
  /// probed (same answers; for comparisons).
  bool join_filters = true;
  /// When set, the statement's join filters count here as its scans run
  /// (filters published, rows checked and dropped, batches dropped whole).
  std::shared_ptr<JoinFilterCounters> join_filter_counters;
  /// Bounds on the statement's shape, checked on its text before it is
  /// parsed (statement_complexity.h): past one, Invalid 54001.
  ComplexityLimits complexity;
  /// Time allowed to parse, bind and plan the statement, in milliseconds
  /// (0 = none): past it, Timeout 57014 naming the limit. Polled at every
  /// expression bound.
  int64_t planning_timeout_ms = 0;
  /// The dialect the statement is read in (dialect.h): integer `/`, `div`,
  /// the default NULL order.
  SqlDialect dialect = SqlDialect::kPostgres;
  /// `SET dialect = postgres | spark` (also `SET quiver.dialect = ...`):
  /// called with the new dialect, for the caller (a session) to use for its
  /// later statements; the statement returns no columns and no rows. Null:
  /// such a SET is NotImplemented (0A000). An unknown dialect is Invalid
  /// 22023.
  std::function<void(SqlDialect)> set_dialect;
  /// File tables (file_tables.h: `FROM 'x.parquet'`, read_parquet,
  /// read_csv) read local files with this process's rights: off by
  /// default (a server's clients must not read its files; then Invalid
  /// with SQLSTATE 42501); `quiver sql` turns them on, `quiver serve` with
  /// --allow-file-tables.
  bool file_tables = false;
  /// Where `s3://BUCKET/KEY` paths of file tables are read from (endpoint,
  /// credentials, the footer cache; formats/s3_files.h); null: such a path
  /// is Invalid naming it ("no S3 store configured").
  std::shared_ptr<formats::S3Files> s3_files;
  /// The scans of file tables named by path (file_tables.h PathTableScans):
  /// their page-index setting and their Parquet sources, kept for the
  /// caller's counters. Null: the page index is used, nothing is kept.
  std::shared_ptr<PathTableScans> path_tables;
};

/// Plans and runs statements against one catalog.
///
/// Thread safety: Execute may be called from several threads at once (each
/// statement has its own operators and pool); each returned stream is used
/// by one thread at a time.
class Engine {
 public:
  /// `catalog` is shared; tables registered later are visible to later
  /// statements.
  explicit Engine(std::shared_ptr<const Catalog> catalog);

  /// An engine whose statements may also create, fill and drop in-memory
  /// tables of `catalog` (catalog_writes.h: CREATE TABLE, CREATE TABLE AS,
  /// INSERT, DROP TABLE), their buffers taken from `table_pool` (required;
  /// shared: tables keep it alive). Engines made with the constructor
  /// refuse those statements (NotImplemented 0A000).
  static Engine WithWritableCatalog(std::shared_ptr<Catalog> catalog, std::shared_ptr<MemoryPool> table_pool);

  /// Parses and plans `sql` (one statement; a trailing ';' is fine) and
  /// returns the stream of its result. Every plan-time error is returned
  /// here: Invalid (syntax, types, ambiguous names), KeyError (unknown
  /// table or column), NotImplemented (unsupported construct), each naming
  /// the position in `sql`. Nothing is read before the first Next() except
  /// the catalog's descriptions. Next() errors: OutOfMemory (the statement's
  /// limit or an ancestor's), Cancelled, the scans' IOError / Invalid.
  /// After an error the stream has released its operators and returns the
  /// same error again.
  /// The stream and the batches it returns may outlive the Engine and the
  /// call's options (they keep the statement pool and the tables' data
  /// alive); the catalog must outlive nothing.
  /// Parsing, binding and planning run on a shared thread with a 64 MiB
  /// stack (base/large_stack.h), after the text has passed
  /// CheckStatementComplexity (options.complexity: 54001 past a limit), so
  /// that no statement can overflow a stack; the binder also bounds its
  /// recursion (BindLimits, 54001) and polls options.planning_timeout_ms
  /// (57014) and options.cancel.
  Result<std::unique_ptr<RecordBatchStream>> Execute(std::string_view sql, const ExecuteOptions& options) const;

  const std::shared_ptr<const Catalog>& catalog() const { return catalog_; }

 private:
  // Execute's work, on the large-stack thread.
  Result<std::unique_ptr<RecordBatchStream>> ExecuteHere(std::string_view sql, const ExecuteOptions& options) const;

  std::shared_ptr<const Catalog> catalog_;
  std::shared_ptr<Catalog> writable_catalog_;  ///< the same catalog, when writable
  std::shared_ptr<MemoryPool> table_pool_;
};

/// Bytes charged to a statement's pool ("sql-statement/plan") while it is
/// parsed and planned, per byte of its text: measured on OR chains of
/// equalities (`x = 1 OR x = 2 OR ...`, the costliest text per byte found:
/// 1.1 MB of text peaked 207 MB of RSS over an idle process, 19 MB 3.3 GB,
/// ~175-190 bytes per byte), rounded up.
inline constexpr int64_t kPlanningBytesPerSqlByte = 256;

/// kPlanningBytesPerSqlByte * sql_bytes + 4 KiB (saturating). Pure.
int64_t PlanningEstimateBytes(int64_t sql_bytes);

}  // namespace quiver::sql

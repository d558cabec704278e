// quiver/sql/engine.h — runs one SQL statement over a Catalog's tables on
// quiver's own operators: scans (memory-mapped IPC, zero-copy), filters
// evaluated a batch at a time into selection vectors, projections, hash
// joins on the join layer, limits; pull-based, so results stream to the
// consumer (e.g. the CloudFetch chunk writer) as they are produced.
//
// SQL (parsed by libpg_query, the PostgreSQL parser):
//   SELECT <list> FROM <from> [WHERE <pred>] [LIMIT n] [OFFSET m]
//     <list>:  *, t.*, column, t.column, each with an optional AS alias
//     <from>:  one table [alias], or a chain t1 [INNER|LEFT|RIGHT|FULL]
//              [OUTER] JOIN t2 ON a = b [AND c = d ...] JOIN t3 ON ...
//              (equalities between a column of the left side and one of
//              the right table)
//     <pred>:  AND / OR / NOT of comparisons (= <> != < <= > >=) between
//              columns and literals or columns, IS [NOT] NULL, [NOT] IN
//              (literals; a hashed lookup per row), [NOT] BETWEEN, boolean columns, TRUE/FALSE,
//              and, as top-level conjuncts, [NOT] EXISTS (SELECT ... FROM t
//              WHERE t.x = outer.y [AND ...] [AND predicates on t only])
//              which run as semi / anti joins.
//     literals: integers, decimals (exact), floats (with an exponent),
//              strings, DATE '…', TIMESTAMP '…', TRUE, FALSE, NULL.
//   SHOW TABLES        -> table_name: utf8, num_rows: int64
//   DESCRIBE t / DESC t -> column_name: utf8, data_type: utf8, nullable: bool
// Anything else (GROUP BY, aggregates and other functions, ORDER BY,
// DISTINCT, set operations, subqueries outside EXISTS, window functions,
// arithmetic, CASE, LIKE, casts other than DATE/TIMESTAMP, DDL, DML, ...)
// is NotImplemented naming the construct and its position:
// "ORDER BY is not supported (line 1, column 27)". Syntax errors are
// Invalid with their position.
//
// Semantics: SQL three-valued logic (a comparison with NULL is unknown; a
// WHERE keeps rows whose predicate is true; x IN (..., NULL) is unknown
// when nothing matches). Join keys: a NULL never matches. Type rules
// (checked when planning, Invalid naming both sides): integers and
// decimals compare exactly with each other and with integer / decimal
// literals, floats with any number (as float64); strings (utf8, binary and
// their large/view forms) with strings, byte-wise; date32/date64/timestamp
// columns with each other and with DATE/TIMESTAMP literals or string
// literals that parse as such (time zones ignored: instants compare as UTC);
// booleans with booleans. Join key pairs follow quiver/join/key_types.h.
// Identifiers: unquoted names are folded to lower case by the parser;
// column names match exactly first, then case-insensitively; an ambiguous
// or unknown name is Invalid / KeyError with its position.
//
// Result rows come in no particular order beyond this: a single-table scan
// keeps storage order; joins emit as the join layer does. Output column
// names are the aliases or the column names (duplicates allowed).
//
// Joins: the side with fewer rows (by the catalog's row counts; a join's
// estimate is the larger of its inputs) is built into a hashed relation
// (LongHashedRelation for one int64-like key, the generic relation
// otherwise; chosen by the join layer); the other side streams through it.
// Single-table WHERE conjuncts are pushed into the scans of tables that no
// outer join can null-extend, and scans keep only the columns the
// statement uses.
//
// Memory: every buffer a statement allocates (filtered copies, decoded
// dictionaries, decompressed IPC bodies, join relations in the chosen
// memory mode, join output) is charged to one child pool of
// ExecuteOptions::pool named "sql-statement", limited to
// memory_limit_bytes; exceeding it is OutOfMemory for that statement, and
// once the stream and its batches are gone the pool is back where it was.
// That pool has two children, so that a reader can see the stages apart
// (e.g. with an AllocationListener on ExecuteOptions::pool):
// "sql-statement/build" holds the join relations (hashed build sides, in the
// chosen memory mode) and "sql-statement/probe" everything else (scan
// decoding, filtered copies, join output batches).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "quiver/base/result.h"
#include "quiver/columnar/record_batch_stream.h"
#include "quiver/join/task_memory_manager.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/sql/catalog.h"

namespace quiver::sql {

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
  /// filters keep the batches of their input.
  int64_t max_batch_rows = 64 * 1024;
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
  Result<std::unique_ptr<RecordBatchStream>> Execute(std::string_view sql, const ExecuteOptions& options) const;

  const std::shared_ptr<const Catalog>& catalog() const { return catalog_; }

 private:
  std::shared_ptr<const Catalog> catalog_;
};

/// "line L, column C" (1-based; columns count bytes) of byte offset
/// `offset` in `text`. For error messages.
std::string DescribePosition(std::string_view text, int offset);

}  // namespace quiver::sql

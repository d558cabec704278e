// quiver/sql/expression/function_catalog.h — the documented list of every
// function quiver's SQL accepts: the scalar functions of the registry
// (function_registry.h), the aggregates (binder/bind_aggregate.cc), the
// window functions (binder/bind_window.cc) and the special forms called
// like functions (CAST, EXTRACT, current_date, ...). One entry per
// function with its aliases, signatures (argument and result types), NULL
// behaviour, errors (SQLSTATE and when), dialect differences and examples
// with their results.
//
// It is what `quiver functions`, docs/functions.md and SHOW FUNCTIONS
// answer from. function_catalog_test.cc keeps it from
// drifting: every name the registry and the binder accept is here, every
// name here binds, and every example, run through the engine, gives its
// stated result.
//
// Thread safety: immutable data; every function is pure.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace quiver::sql {

/// How a function is called.
enum class FunctionKind {
  kScalar,     ///< one value per row
  kAggregate,  ///< one value per group
  kWindow,     ///< one value per row, over a window (OVER (...))
};

/// "scalar", "aggregate" or "window".
std::string_view FunctionKindName(FunctionKind kind);

/// A statement and its result: one row per line ('\n'), columns joined by
/// '|', each value as Arrow's text form writes it (NULL "null", a
/// timestamp "2016-07-01T00:00:00.000000": the test fixture's Rows,
/// unsorted).
struct FunctionExample {
  std::string_view sql;
  std::string_view result;
};

/// One function's documentation.
struct FunctionDoc {
  std::string_view name;        ///< lower case, as SHOW FUNCTIONS lists it
  std::string_view aliases;     ///< other names for the same function, ", "-separated; empty when none
  FunctionKind kind;            ///< scalar, aggregate or window
  std::string_view signature;   ///< "f(x BIGINT) -> BIGINT"; overloads separated by "; "
  std::string_view summary;     ///< what it computes, one sentence
  std::string_view nulls;       ///< what a NULL argument gives
  std::string_view errors;      ///< SQLSTATEs and when; empty when none of its own
  std::string_view dialects;    ///< where Spark / PostgreSQL / DuckDB differ; empty when they agree
  FunctionExample examples[2];  ///< the second may be empty (sql empty)
};

/// Every entry, sorted by name (a name may have two entries: first_value
/// and last_value are an aggregate and a window function).
std::span<const FunctionDoc> FunctionCatalog();

/// `doc`'s aliases, split.
std::vector<std::string_view> AliasesOf(const FunctionDoc& doc);

/// Every name and alias of the catalogue, sorted and without duplicates.
std::vector<std::string> FunctionNames();

/// The entries whose name or an alias is `name` (lower case).
std::vector<const FunctionDoc*> FindFunctionDocs(std::string_view name);

}  // namespace quiver::sql

// quiver/sql/tests/slt_runner.h — a sqllogictest runner: runs the records of
// one script (the format of SQLite's sqllogictest, as DuckDB's and
// CockroachDB's runners read it) against a fresh in-memory catalog through
// the SQL engine (Engine::WithWritableCatalog: tables come from CREATE
// TABLE + INSERT).
//
// Records are separated by blank lines; '#' starts a comment line.
//   statement ok | statement error [text]
//   <SQL, one or more lines>
// runs the statement; `error` wants it to fail (and its message, followed
// by its SQLSTATE in brackets, "... [0A000]", to contain `text` when given).
//   query <types> [nosort | rowsort | valuesort] [label]
//   <SQL>
//   ----
//   <expected values>
// runs the query. <types> has one letter per column: I (integer: a decimal
// or double value is truncated toward zero), R (real: "%.3f"), T (text);
// the letters only choose how values are rendered. Booleans render as
// true / false, NULL as NULL, an empty string as (empty), bytes outside
// ' '..'~' as '@' (sqllogictest's rule). The expected values are one per
// line, or one row per line with the values separated by tabs (DuckDB's
// style); or the single line "N values hashing to H", H the MD5 of every
// value followed by "\n". Sort modes: nosort compares in the engine's
// order (use it with ORDER BY), rowsort sorts the rows by their text,
// valuesort every value. Queries sharing a label must give the same values.
// Conditions before a record: `skipif quiver` skips it, `onlyif X` runs it
// only when X is quiver. `hash-threshold N` is accepted (expected values
// are compared as written); `halt` ends the script.
//
// Thread safety: each call is independent.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace quiver::sql::testing {

struct SltOptions {
  /// Worker threads of each statement (ExecuteOptions::threads).
  int threads = 1;
  /// Stop after this many failures (the rest are not run).
  int max_failures = 20;
};

struct SltReport {
  int64_t records = 0;     ///< statement and query records run
  int64_t statements = 0;  ///< of which statements
  int64_t queries = 0;     ///< of which queries
  int64_t skipped = 0;     ///< records skipped by skipif / onlyif
  /// One message per failing record: "file:line: SQL: expected ... got ...".
  std::vector<std::string> failures;
};

/// Runs the script `text` (named `file` in messages) and reports what
/// passed and what failed. Malformed records are failures too.
SltReport RunSltScript(std::string_view text, const std::string& file, const SltOptions& options = {});

/// MD5 of `text` as 32 lower-case hex digits.
std::string Md5Hex(std::string_view text);

}  // namespace quiver::sql::testing

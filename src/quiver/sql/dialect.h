// quiver/sql/dialect.h — the SQL dialect a statement is read in: where
// PostgreSQL's and Spark SQL's (Databricks SQL, ANSI mode) answers to the
// same text differ (docs/sql.md, "Dialects"):
//
//                      postgres                 spark
//   int / int          integer, truncated       DOUBLE (7 / 2 = 3.5)
//   a div b            (not an operator)        BIGINT, truncated (7 div 2 = 3)
//   default NULL order ASC NULLS LAST,          ASC NULLS FIRST,
//                      DESC NULLS FIRST         DESC NULLS LAST
//   INT op INT         BIGINT                   INT, overflow 22003
//   (+ - * % mod,                               (2147483647 + 1 is an error;
//   unary -, abs)                               function_registry.h)
//   sum(BIGINT)        DECIMAL(38,0)            BIGINT, overflow 22003
//   STRING beside      a literal takes the      least common type (BIGINT
//   another type       other's type             with an integer, DOUBLE with
//                                               DECIMAL / DOUBLE, DATE, ...),
//                                               the string cast to it (22018)
//   CAST, to_date(s)   PostgreSQL's rules       Spark's ANSI rules
//                      (cast.cc)                (expression/spark_cast.h:
//                                               3.7 -> INT is 3, malformed
//                                               text 22018, DECIMAL is
//                                               DECIMAL(10,0))
// Overflow and division by zero are errors (22003 / 22012) in both, as in
// PostgreSQL and Spark's ANSI mode.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "quiver/base/result.h"

namespace quiver::sql {

enum class SqlDialect : uint8_t { kPostgres, kSpark };

/// "postgres" or "spark".
const char* SqlDialectName(SqlDialect d);

/// The dialect named `name` (any case; "postgresql" and "databricks" are
/// synonyms). Errors: Invalid 22023 naming the value and the choices.
Result<SqlDialect> ParseSqlDialect(std::string_view name);

}  // namespace quiver::sql

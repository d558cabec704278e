// quiver/sql/spark_literal.h — Spark SQL's string literals (Spark SQL
// reference, "Literals"; its unescapeSQLString): '...' and "..." with
// backslash escapes, r'...' raw, read for the PostgreSQL grammar by the
// spark dialect's pre-pass (spark_dialect.h, RewriteSparkSql).
//
// Thread safety: functions of their arguments.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "quiver/base/result.h"

namespace quiver::sql {

/// The value of the Spark string literal s[begin, end): s[begin] is its
/// opening quote (' or "), s[end - 1] its closing one. Escapes: \uXXXX and
/// \UXXXXXXXX code points, \ooo octal ([0-3][0-7][0-7]), \b \n \r \t, \Z
/// (U+001A), \% and \_ kept with their backslash (LIKE's escapes), any
/// other \c is c; a doubled quote is one quote. `raw` (r'...'): no escapes.
/// Errors: Invalid 22021 for a NUL character or a code point past
/// U+10FFFF, naming its position in `s`.
Result<std::string> SparkStringValue(std::string_view s, size_t begin, size_t end, bool raw);

/// Appends that value to `out` as a PostgreSQL standard string ('...', a '
/// doubled, backslashes literal), padded with spaces to end - begin bytes
/// where it came out shorter (offsets after it kept). Errors: those of
/// SparkStringValue.
Status AppendSparkString(std::string_view s, size_t begin, size_t end, bool raw, std::string* out);

}  // namespace quiver::sql

// quiver/sql/expression/spark_cast.h — CAST by Spark SQL's ANSI-mode rules
// (spark.sql.ansi.enabled = true, as a Databricks SQL warehouse runs), the
// cast of the `spark` dialect (dialect.h; Fn::kSparkCast / kSparkTryCast).
// The postgres dialect's cast (cast.cc) is unchanged. Where they differ:
//
//   number -> integer    truncated toward zero (3.7 -> 3, -3.7 -> -3); out
//                        of range 22003 (CAST_OVERFLOW); NaN / Infinity 22003
//   DOUBLE -> DECIMAL    the double's shortest decimal text, rounded half up;
//                        NaN / Infinity give NULL (Spark's castToDecimal)
//   text -> integer      blanks and control characters trimmed, [+-]digits
//                        only ('1.5', '1e3', '' are malformed); out of range
//                        is malformed too (22018, CAST_INVALID_INPUT)
//   text -> DECIMAL      trimmed, Java BigDecimal syntax ('1.5', '.5', '5.',
//                        '1e3'); malformed 22018; too many digits 22003
//   text -> DOUBLE       trimmed, [+-]digits[.digits][e[+-]digits] with an
//                        optional f/d suffix, NaN / Infinity / inf / -inf
//                        (any case); malformed 22018
//   text -> BOOLEAN      trimmed, any case: t true y yes 1 / f false n no 0
//   text -> DATE         Spark's stringToDate: [+-]yyyy[y..], yyyy-[m]m,
//                        yyyy-[m]m-[d]d, and yyyy-[m]m-[d]d followed by ' ' or
//                        'T' and anything (ignored); trimmed; 22018 otherwise
//   text -> TIMESTAMP    Spark's stringToTimestamp: the date forms, then ' '
//                        or 'T', [h]h[:[m]m[:[s]s[.fraction]]] and an optional
//                        zone (Z, +|-h[h][[:]mm[[:]ss]], UTC / GMT / UT with or
//                        without an offset); fraction digits past 6 dropped;
//                        the session zone is UTC; a region zone
//                        ('Europe/Paris') or a time without a date is 0A000
//   DOUBLE -> text       Java's Double.toString: 1.0, 0.1, 1.0E10, 1.0E-4
//   TIMESTAMP -> text    yyyy-mm-dd hh:mm:ss[.fraction without trailing 0s]
//   date/timestamp <-> number, boolean <-> date/timestamp
//                        not castable: 42K09 when bound (SparkCanCast)
// Malformed text is 22018 for every target (Spark's CAST_INVALID_INPUT).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "quiver/base/result.h"
#include "quiver/sql/expression/vector.h"

namespace quiver::sql {

/// Spark's stringToDate (see above) into days since 1970-01-01; false when
/// `text` is not one of its forms or not a valid date.
bool ParseSparkDate(std::string_view text, int32_t* days);

/// What ParseSparkTimestamp found.
enum class SparkTimestampText : uint8_t { kOk, kMalformed, kUnsupported };
/// Spark's stringToTimestamp (see above) into microseconds since the epoch,
/// UTC. kUnsupported for the valid Spark forms quiver does not read: a
/// region or short zone id, a time of day without a date.
SparkTimestampText ParseSparkTimestamp(std::string_view text, int64_t* micros);

/// Java's Double.toString of `d` (shortest round-trip digits): plain
/// between 1e-3 and 1e7 ("100.0", "0.001"), otherwise "d.dddE[-]n"
/// ("1.0E10", "1.0E-4"); "NaN", "Infinity", "-Infinity", "-0.0".
std::string FormatSparkDouble(double d);

/// "yyyy-mm-dd hh:mm:ss", with the fraction of a second only when it is
/// not zero and without trailing zeros ("... 00:00:00.5").
std::string FormatSparkTimestamp(int64_t micros);

/// Whether Spark's ANSI CAST takes a `from` value to `to` (the table of
/// docs/sql.md); kOther and kNull are left to the cast itself.
bool SparkCanCast(TypeClass from, TypeClass to);

namespace kernels {

/// One value cast by Spark's ANSI rules (see above). Errors: Invalid 22018
/// malformed text, 22003 out of range, 42K09 a pair SparkCanCast refuses,
/// NotImplemented 0A000 (a timestamp form quiver does not read).
Result<Value> SparkCastValue(const Value& v, const DataTypePtr& to);

}  // namespace kernels
}  // namespace quiver::sql

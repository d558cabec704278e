// quiver/formats/csv/csv_values.h — the text forms of CSV values and their
// conversion to Arrow values (docs/csv.md "Inference rules").
//
// Each parser takes the exact field text (no trimming) and returns false
// when the text is not of its form. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace quiver::formats::csv {

/// "true" / "false", case-insensitive.
bool ParseCsvBool(std::string_view s, bool* out);
/// An optional sign and 1..19 decimal digits that fit in int64.
bool ParseCsvInt64(std::string_view s, int64_t* out);
/// A decimal or scientific number ("1.5", "-2e3", ".5"); also the integer
/// forms. Not "inf"/"nan" (those stay strings when inferring).
bool ParseCsvDouble(std::string_view s, double* out);
/// YYYY-MM-DD (a valid proleptic Gregorian date) -> days since 1970-01-01.
bool ParseCsvDate(std::string_view s, int32_t* out_days);
/// YYYY-MM-DD[T| ]HH:MM:SS[.fraction][Z] -> microseconds since
/// 1970-01-01 00:00:00 (digits past the sixth are truncated).
bool ParseCsvTimestamp(std::string_view s, int64_t* out_us);
/// An optional sign, digits, an optional '.' and digits (at least one digit
/// in all; "1.", ".5" allowed; no exponent) -> the unscaled value of a
/// DECIMAL(precision, scale) (1 <= precision <= 38, 0 <= scale <=
/// precision): digits past `scale` round half away from zero (as DuckDB's
/// cast of a CSV field rounds); false when the value needs more than
/// `precision` digits.
bool ParseCsvDecimal(std::string_view s, int precision, int scale, __int128* out_unscaled);

}  // namespace quiver::formats::csv

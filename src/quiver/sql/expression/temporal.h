// quiver/sql/expression/temporal.h — calendar arithmetic of the SQL engine
// (proleptic Gregorian calendar, days since 1970-01-01; H. Hinnant's
// days_from_civil / civil_from_days algorithms): parsing and formatting
// DATE / TIMESTAMP text, adding months with end-of-month clamping as
// PostgreSQL does (DATE '1994-01-31' + INTERVAL '1' MONTH = 1994-02-28).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace quiver::sql {

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d);
void CivilFromDays(int64_t days, int64_t* y, unsigned* m, unsigned* d);
bool IsLeapYear(int64_t y);
unsigned DaysInMonth(int64_t y, unsigned m);

/// "YYYY-MM-DD" (or with '/' or '.' between the parts; surrounding spaces
/// allowed; a valid time of day after it, as ParseTimestamp reads, is
/// ignored) into days; false when the text is not a valid date.
bool ParseDate(std::string_view text, int32_t* days);
/// "YYYY-MM-DD[( |T)HH:MM[:SS[.f{1,6}]]]" (the date as ParseDate reads it)
/// into microseconds since the epoch.
bool ParseTimestamp(std::string_view text, int64_t* micros);
std::string FormatDate(int32_t days);
std::string FormatTimestamp(int64_t micros);
/// `days` plus `months` calendar months, the day clamped to the month's end.
int32_t AddMonths(int32_t days, int64_t months);

}  // namespace quiver::sql

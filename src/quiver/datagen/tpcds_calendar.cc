// quiver/datagen/tpcds_calendar.cc — date_dim and time_dim rows
// (tpcds_rows.h): one row per day from 1900-01-02 to 2100-01-01 keyed by
// its Julian day number, one per second of the day.
#include <cstdio>

#include "quiver/datagen/tpcds_domains.h"
#include "quiver/datagen/tpcds_rows.h"

namespace quiver::datagen::tpcds {
namespace {

const char* const kDayNames[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};

int64_t DaysInMonth(int64_t y, int64_t m) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

// The same day of month `back` months earlier (the month's last day when it
// is shorter), as a Julian day.
int64_t MonthsBefore(const CivilDate& d, int64_t back) {
  int64_t y = d.year, m = d.month - back;
  while (m < 1) m += 12, --y;
  return JulianFromDays(DaysFromCivil(y, m, std::min(d.day, DaysInMonth(y, m))));
}

bool Holiday(const CivilDate& d, int64_t dow) {
  if ((d.month == 1 && d.day == 1) || (d.month == 7 && d.day == 4) || (d.month == 12 && d.day == 25)) return true;
  // Thanksgiving: the fourth Thursday of November; Labor Day: the first
  // Monday of September; Memorial Day: the last Monday of May.
  if (d.month == 11 && dow == 4 && d.day >= 22 && d.day <= 28) return true;
  if (d.month == 9 && dow == 1 && d.day <= 7) return true;
  return d.month == 5 && dow == 1 && d.day >= 25;
}

}  // namespace

void WriteDateDim(const TpcdsContext&, int64_t unit, RowSink& out) {
  const int64_t sk = kFirstDateSk + unit;
  const int64_t days = DaysFromJulian(sk);
  const CivilDate d = CivilFromDays(days);
  // Julian day 0 is a Monday: day of week with Sunday = 0.
  const int64_t dow = (sk + 1) % 7;
  const int64_t qoy = (d.month - 1) / 3 + 1;
  // Weeks start on Sunday; week 1 holds 1900-01-02 (1899-12-31 is a Sunday).
  const int64_t week_seq = (sk - (kFirstDateSk - 2)) / 7 + 1;
  const int64_t month_seq = (d.year - 1900) * 12 + d.month - 1;
  const int64_t quarter_seq = (d.year - 1900) * 4 + qoy;
  const CivilDate yesterday = CivilFromDays(days - 1);
  char quarter_name[48];
  std::snprintf(quarter_name, sizeof quarter_name, "%lldQ%lld", static_cast<long long>(d.year),
                static_cast<long long>(qoy));
  out.Int(sk).Str(BusinessId(sk)).Int(days).Int(month_seq).Int(week_seq).Int(quarter_seq).Int(d.year).Int(dow);
  out.Int(d.month).Int(d.day).Int(qoy).Int(d.year).Int(quarter_seq).Int(week_seq);
  out.Str(kDayNames[dow]).Str(quarter_name);
  out.Str(Holiday(d, dow) ? "Y" : "N").Str(dow == 0 || dow == 6 ? "Y" : "N");
  out.Str(Holiday(yesterday, (dow + 6) % 7) ? "Y" : "N");
  out.Int(JulianFromDays(DaysFromCivil(d.year, d.month, 1)));
  out.Int(JulianFromDays(DaysFromCivil(d.year, d.month, DaysInMonth(d.year, d.month))));
  out.Int(MonthsBefore(d, 12)).Int(MonthsBefore(d, 3));
  out.Str("N").Str("N").Str("N").Str("N").Str("N");
  out.EndRow();
}

void WriteTimeDim(const TpcdsContext&, int64_t unit, RowSink& out) {
  const int64_t hour = unit / 3600, minute = unit / 60 % 60, second = unit % 60;
  const char* shift = hour < 8 ? "third" : (hour < 16 ? "first" : "second");
  const char* sub = hour < 6 ? "night" : (hour < 12 ? "morning" : (hour < 18 ? "afternoon" : "evening"));
  if (hour >= 22) sub = "night";
  out.Int(unit).Str(BusinessId(unit + 1)).Int(unit).Int(hour).Int(minute).Int(second);
  out.Str(hour < 12 ? "AM" : "PM").Str(shift).Str(sub);
  if (hour >= 6 && hour <= 9) {
    out.Str("breakfast");
  } else if (hour >= 11 && hour <= 13) {
    out.Str("lunch");
  } else if (hour >= 17 && hour <= 19) {
    out.Str("dinner");
  } else {
    out.Null();
  }
  out.EndRow();
}

}  // namespace quiver::datagen::tpcds

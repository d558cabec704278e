// quiver/datagen/tpcds_domains.h — internal to the TPC-DS generator: the
// value domains its writers draw from (word lists, addresses, business
// ids, slowly changing dimension versions, calendar arithmetic), after the
// domains of the TPC-DS specification and dsdgen's distributions where
// the 99 queries filter on them.
//
// Thread safety: pure functions over constant tables.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "quiver/datagen/tpcds_rows.h"

namespace quiver::datagen::tpcds {

/// dsdgen's word of syllables for n: each decimal digit of n, most
/// significant first, as one of bar ought able pri ese anti cally ation
/// eing n st (0 -> "bar", 3 -> "pri", 14 -> "oughtese").
std::string Syllables(int64_t n);

/// A 16-character business id (c_customer_id, i_item_id, ...) for a
/// 1-based id: "AAAAAAAA" then the id in base 16 as letters A..P, least
/// significant first. Distinct ids give distinct strings.
std::string BusinessId(int64_t id);

/// Words drawn until the text is `min_len`..`max_len` characters long.
std::string Text(TpcdsRng& r, int min_len, int max_len);

/// A first name, a last name and a salutation.
std::string_view FirstName(TpcdsRng& r);
std::string_view LastName(TpcdsRng& r);
std::string_view Salutation(TpcdsRng& r);
/// "First Last" (managers of stores, call centers, sites).
std::string PersonName(TpcdsRng& r);
/// An upper-case country name (c_birth_country).
std::string_view BirthCountry(TpcdsRng& r);

/// A street address in the United States. `local_slot` >= 0 puts it in
/// Williamson County, TN, at gmt offset -5, as dsdgen's stores and call
/// centers are at small scales: slots 0 and 1 (mod 3) in Midway and
/// Fairview, slot 2 in another city. -1: anywhere.
struct Address {
  std::string street_number, street_name, street_type, suite_number, city, county, state, zip, country;
  int64_t gmt_offset_cents = 0;  ///< -500 for -5.00
};
Address MakeAddress(TpcdsRng& r, int64_t local_slot);

/// Item domains: 10 categories (category id 1..10), their classes, colors,
/// units, sizes.
struct ItemClass {
  int64_t category_id, class_id;
  std::string_view category, class_name;
};
ItemClass PickItemClass(TpcdsRng& r);
std::string_view ItemColor(TpcdsRng& r);
std::string_view ItemUnits(TpcdsRng& r);
std::string_view ItemSize(TpcdsRng& r);

/// The version of a row of a slowly changing dimension (item, store,
/// call_center, web_page, web_site): rows in runs of six hold three
/// business ids with one, two and three versions. `id` is 1-based; rec
/// dates are days since 1970-01-01, end -1 for the current version.
struct ScdVersion {
  int64_t id = 0;
  int64_t rec_start_days = 0;
  int64_t rec_end_days = -1;
};
ScdVersion ScdVersionOf(int64_t row_index);
/// Business ids among the first `rows` rows of such a dimension.
int64_t ScdIdCount(int64_t rows);
/// The surrogate key (1-based row) of business id `id` (1..ScdIdCount)
/// whose version is current on `days` (days since 1970-01-01), among
/// `rows` rows: sales name the version of an item or outlet that was
/// current when they were made, as dsdgen's do.
int64_t ScdSkAt(int64_t id, int64_t days, int64_t rows);

/// Calendar: days since 1970-01-01 <-> (year, month 1..12, day 1..31).
struct CivilDate {
  int64_t year, month, day;
};
CivilDate CivilFromDays(int64_t days);
int64_t DaysFromCivil(int64_t year, int64_t month, int64_t day);
inline int64_t DaysFromJulian(int64_t julian) { return julian - kJulianOfUnixEpoch; }
inline int64_t JulianFromDays(int64_t days) { return days + kJulianOfUnixEpoch; }

/// A sale date's Julian day in [kFirstSaleSk, kLastSaleSk]: November and
/// December twice as likely as other months' days.
int64_t SaleDateSk(TpcdsRng& r);

/// "%lld" of n.
std::string Num(int64_t n);

}  // namespace quiver::datagen::tpcds

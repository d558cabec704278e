// quiver/datagen/tpcds_people.cc — the rows about customers
// (tpcds_rows.h): customer, customer_address, customer_demographics,
// household_demographics, income_band.
#include "quiver/datagen/tpcds_domains.h"
#include "quiver/datagen/tpcds_rows.h"

namespace quiver::datagen::tpcds {
namespace {

const char* const kGenders[] = {"M", "F"};
const char* const kMarital[] = {"M", "S", "D", "W", "U"};
const char* const kEducation[] = {"Primary",     "Secondary",       "College", "2 yr Degree",
                                  "4 yr Degree", "Advanced Degree", "Unknown"};
const char* const kCredit[] = {"Good", "High Risk", "Low Risk", "Unknown"};
const char* const kBuyPotential[] = {">10000", "5001-10000", "1001-5000", "501-1000", "0-500", "Unknown"};
const char* const kLocationTypes[] = {"single family", "condo", "apartment"};
const char* const kDomains[] = {"gmail.com", "yahoo.com", "hotmail.com", "aol.com", "msn.com", "example.org"};

}  // namespace

void WriteCustomer(const TpcdsContext& c, int64_t unit, RowSink& out) {
  TpcdsRng r(c.seed, TpcdsTable::kCustomer, unit);
  const TpcdsCounts& n = c.counts;
  const int64_t first_sales = r.Uniform(kFirstSaleSk, kLastSaleSk - 30);
  const std::string_view first = FirstName(r), last = LastName(r);
  // Attributes are NULL with probability 3/100 each (not the keys), drawn
  // from a stream of their own: the order in which a call's arguments are
  // evaluated is unspecified, so no call draws twice from one stream.
  TpcdsRng nulls(c.seed, TpcdsTable::kCustomer, unit, 1);
  auto null = [&nulls] { return nulls.Chance(3, 100); };
  out.Int(unit + 1).Str(BusinessId(unit + 1));
  out.Int(r.Uniform(1, n.customer_demographics)).Int(r.Uniform(1, n.household_demographics));
  out.Int(r.Uniform(1, n.customer_address));
  out.IntOrNull(null(), first_sales + 30).IntOrNull(null(), first_sales);
  out.StrOrNull(null(), Salutation(r)).StrOrNull(null(), first).StrOrNull(null(), last);
  out.StrOrNull(null(), r.Chance(1, 2) ? "Y" : "N");
  out.IntOrNull(null(), r.Uniform(1, 28)).IntOrNull(null(), r.Uniform(1, 12)).IntOrNull(null(), r.Uniform(1924, 1992));
  out.StrOrNull(null(), BirthCountry(r));
  out.Null();  // c_login: empty in dsdgen's data
  out.StrOrNull(null(), std::string(first) + "." + std::string(last) + "@" + r.Pick(kDomains));
  out.IntOrNull(null(), r.Uniform(2452283, 2452648));
  out.EndRow();
}

void WriteCustomerAddress(const TpcdsContext& c, int64_t unit, RowSink& out) {
  TpcdsRng r(c.seed, TpcdsTable::kCustomerAddress, unit);
  const Address a = MakeAddress(r, -1);
  out.Int(unit + 1).Str(BusinessId(unit + 1));
  out.Str(a.street_number).Str(a.street_name).Str(a.street_type).Str(a.suite_number).Str(a.city).Str(a.county);
  out.Str(a.state).Str(a.zip).Str(a.country).Int(a.gmt_offset_cents).Str(r.Pick(kLocationTypes));
  out.EndRow();
}

void WriteCustomerDemographics(const TpcdsContext&, int64_t unit, RowSink& out) {
  // The full cross product, gender varying fastest.
  int64_t i = unit;
  auto next = [&i](int64_t n) {
    const int64_t v = i % n;
    i /= n;
    return v;
  };
  const int64_t gender = next(2), marital = next(5), education = next(7), purchase = next(20), credit = next(4);
  const int64_t dep = next(7), employed = next(7), college = next(7);
  out.Int(unit + 1).Str(kGenders[gender]).Str(kMarital[marital]).Str(kEducation[education]);
  out.Int((purchase + 1) * 500).Str(kCredit[credit]).Int(dep).Int(employed).Int(college);
  out.EndRow();
}

void WriteHouseholdDemographics(const TpcdsContext&, int64_t unit, RowSink& out) {
  const int64_t band = unit % 20, potential = unit / 20 % 6, dep = unit / 120 % 10, vehicles = unit / 1200 % 6 - 1;
  out.Int(unit + 1).Int(band + 1).Str(kBuyPotential[potential]).Int(dep).Int(vehicles);
  out.EndRow();
}

void WriteIncomeBand(const TpcdsContext&, int64_t unit, RowSink& out) {
  out.Int(unit + 1).Int(unit == 0 ? 0 : unit * 10000 + 1).Int((unit + 1) * 10000);
  out.EndRow();
}

}  // namespace quiver::datagen::tpcds

// quiver/datagen/tpcds_outlets.cc — the rows about where sales happen
// (tpcds_rows.h): store, call_center, catalog_page, warehouse, web_page,
// web_site.
#include "quiver/datagen/tpcds_domains.h"
#include "quiver/datagen/tpcds_rows.h"

namespace quiver::datagen::tpcds {
namespace {

const char* const kCallCenterNames[] = {"NY Metro",          "Mid Atlantic", "North Midwest",
                                        "Pacific Northwest", "California",   "Hawaii/Alaska"};
const char* const kSizes[] = {"small", "medium", "large"};
const char* const kHours[] = {"8AM-4PM", "8AM-12AM", "8AM-8AM"};
const char* const kPageTypes[] = {"welcome", "protected", "dynamic", "feedback", "general", "order", "review", "ad"};

void AddAddress(RowSink& out, const Address& a) {
  out.Str(a.street_number).Str(a.street_name).Str(a.street_type).Str(a.suite_number).Str(a.city).Str(a.county);
  out.Str(a.state).Str(a.zip).Str(a.country).Int(a.gmt_offset_cents);
}

void AddScd(RowSink& out, int64_t unit, const ScdVersion& v) {
  out.Int(unit + 1).Str(BusinessId(v.id)).Int(v.rec_start_days).IntOrNull(v.rec_end_days < 0, v.rec_end_days);
}

}  // namespace

void WriteStore(const TpcdsContext& c, int64_t unit, RowSink& out) {
  const ScdVersion v = ScdVersionOf(unit);
  TpcdsRng r(c.seed, TpcdsTable::kStore, v.id);
  TpcdsRng row(c.seed, TpcdsTable::kStore, unit, 1);
  const Address a = MakeAddress(r, v.id - 1);
  const std::string manager = PersonName(row), market_manager = PersonName(row);
  const std::string market_desc = Text(row, 20, 100);
  const int64_t employees = row.Uniform(200, 300), floor = row.Uniform(5000000, 10000000);
  // Markets cycle 8, 5, 2, 9, 6, ... over the ids (TPC-DS 24 asks for 8).
  const int64_t market = (v.id * 7) % 10 + 1, tax = row.Uniform(0, 11);
  const bool closed = row.Chance(1, 10);
  const int64_t closed_sk = row.Uniform(kFirstSaleSk, kLastSaleSk);
  AddScd(out, unit, v);
  out.IntOrNull(!closed, closed_sk).Str(Syllables(v.id + 2)).Int(employees).Int(floor);
  out.Str(kHours[v.id % 3]).Str(manager).Int(market).Str("Unknown").Str(market_desc).Str(market_manager);
  out.Int(1).Str("Unknown").Int(1).Str("Unknown");
  AddAddress(out, a);
  out.Int(tax);
  out.EndRow();
}

void WriteCallCenter(const TpcdsContext& c, int64_t unit, RowSink& out) {
  const ScdVersion v = ScdVersionOf(unit);
  TpcdsRng r(c.seed, TpcdsTable::kCallCenter, v.id);
  TpcdsRng row(c.seed, TpcdsTable::kCallCenter, unit, 1);
  const Address a = MakeAddress(r, v.id - 1);
  const int64_t open = r.Uniform(kFirstSaleSk - 3000, kFirstSaleSk);
  const std::string manager = PersonName(row), market_manager = PersonName(row);
  const std::string mkt_class = Text(row, 10, 50), mkt_desc = Text(row, 20, 100);
  const int64_t employees = row.Uniform(1, 7) * 10000, sq_ft = row.Uniform(1, 7) * 50000;
  const int64_t mkt = row.Uniform(1, 6), division = row.Uniform(1, 6), company = row.Uniform(1, 6);
  const int64_t tax = row.Uniform(0, 12);
  AddScd(out, unit, v);
  out.Null().Int(open).Str(kCallCenterNames[(v.id - 1) % 6]).Str(kSizes[v.id % 3]).Int(employees).Int(sq_ft);
  out.Str(kHours[v.id % 3]).Str(manager).Int(mkt).Str(mkt_class).Str(mkt_desc).Str(market_manager);
  out.Int(division).Str(Syllables(division)).Int(company).Str(Syllables(company));
  AddAddress(out, a);
  out.Int(tax);
  out.EndRow();
}

void WriteCatalogPage(const TpcdsContext& c, int64_t unit, RowSink& out) {
  TpcdsRng r(c.seed, TpcdsTable::kCatalogPage, unit);
  // 108 pages a catalog; catalogs run monthly, quarterly or twice a year
  // over the sales years.
  const int64_t catalog = unit / 108 + 1, page = unit % 108 + 1;
  const int64_t kind = catalog % 3;
  const int64_t months = kind == 0 ? 6 : (kind == 1 ? 3 : 1);
  const int64_t start = kFirstSaleSk + (catalog * 30) % (kLastSaleSk - kFirstSaleSk);
  out.Int(unit + 1).Str(BusinessId(unit + 1)).Int(start).Int(start + months * 30 - 1).Str("DEPARTMENT");
  out.Int(catalog).Int(page).Str(Text(r, 20, 100)).Str(kind == 0 ? "bi-annual" : (kind == 1 ? "quarterly" : "monthly"));
  out.EndRow();
}

void WriteWarehouse(const TpcdsContext& c, int64_t unit, RowSink& out) {
  TpcdsRng r(c.seed, TpcdsTable::kWarehouse, unit);
  const std::string name = Text(r, 10, 20);
  const int64_t sq_ft = r.Uniform(50000, 1000000);
  const Address a = MakeAddress(r, unit);
  out.Int(unit + 1).Str(BusinessId(unit + 1)).Str(name).Int(sq_ft);
  AddAddress(out, a);
  out.EndRow();
}

void WriteWebPage(const TpcdsContext& c, int64_t unit, RowSink& out) {
  const ScdVersion v = ScdVersionOf(unit);
  TpcdsRng r(c.seed, TpcdsTable::kWebPage, unit);
  const int64_t created = r.Uniform(kFirstSaleSk - 1000, kFirstSaleSk);
  const int64_t accessed = r.Uniform(kLastSaleSk - 100, kLastSaleSk);
  const bool autogen = r.Chance(1, 2);
  const int64_t customer = r.Uniform(1, c.counts.customer);
  const std::string_view type = r.Pick(kPageTypes);
  const int64_t chars = r.Uniform(303, 8523), links = r.Uniform(2, 25), images = r.Uniform(1, 7), ads = r.Uniform(0, 4);
  AddScd(out, unit, v);
  out.Int(created).Int(accessed).Str(autogen ? "Y" : "N").IntOrNull(autogen, customer).Str("http://www.foo.com");
  out.Str(type).Int(chars).Int(links).Int(images).Int(ads);
  out.EndRow();
}

void WriteWebSite(const TpcdsContext& c, int64_t unit, RowSink& out) {
  const ScdVersion v = ScdVersionOf(unit);
  TpcdsRng r(c.seed, TpcdsTable::kWebSite, v.id);
  TpcdsRng row(c.seed, TpcdsTable::kWebSite, unit, 1);
  const Address a = MakeAddress(r, -1);
  const int64_t open = r.Uniform(kFirstSaleSk - 3000, kFirstSaleSk);
  const std::string manager = PersonName(row), market_manager = PersonName(row);
  const std::string mkt_class = Text(row, 10, 50), mkt_desc = Text(row, 20, 100);
  const int64_t mkt = row.Uniform(1, 6), company = row.Uniform(1, 6), tax = row.Uniform(0, 12);
  AddScd(out, unit, v);
  out.Str("site_" + Num((v.id - 1) % 6)).Int(open).Null().Str("Unknown").Str(manager).Int(mkt).Str(mkt_class);
  out.Str(mkt_desc).Str(market_manager).Int(company).Str(Syllables(company));
  AddAddress(out, a);
  out.Int(tax);
  out.EndRow();
}

}  // namespace quiver::datagen::tpcds

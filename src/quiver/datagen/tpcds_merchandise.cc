// quiver/datagen/tpcds_merchandise.cc — the rows about what is sold and
// how (tpcds_rows.h): item, promotion, reason, ship_mode.
#include <cstdio>

#include "quiver/datagen/tpcds_domains.h"
#include "quiver/datagen/tpcds_rows.h"

namespace quiver::datagen::tpcds {
namespace {

const char* const kBrandWords[] = {"amalg", "edu pack", "exporti", "importo", "scholar",
                                   "univ",  "corp",     "brand",   "maxi",    "nameless"};

// Brands the queries name (TPC-DS 53 and 63), given to half of the items of
// the classes those queries pair them with.
struct NamedBrands {
  std::initializer_list<const char*> categories, classes, brands;
};
const NamedBrands kNamedBrands[] = {
    {{"Books", "Children", "Electronics"},
     {"personal", "portable", "reference", "self-help"},
     {"scholaramalgamalg #14", "scholaramalgamalg #7", "exportiunivamalg #9", "scholaramalgamalg #9"}},
    {{"Women", "Music", "Men"},
     {"accessories", "classical", "fragrances", "pants"},
     {"amalgimporto #1", "edu packscholar #1", "exportiimporto #1", "importoamalg #1"}}};

bool In(std::string_view v, std::initializer_list<const char*> list) {
  for (const char* x : list) {
    if (v == x) return true;
  }
  return false;
}

const char* const kReasons[] = {"Package was damaged",
                                "Stopped working",
                                "Did not get it on time",
                                "Not the product that was ordred",
                                "Parts missing",
                                "Does not work with a product that I have",
                                "Gift exchange",
                                "Did not like the color",
                                "Did not like the model",
                                "Did not like the make",
                                "Did not like the warranty",
                                "No service location in my area",
                                "Found a better price in a store",
                                "Found a better extended warranty in a store",
                                "Not working any more",
                                "Did not fit",
                                "Wrong size",
                                "Lost my job",
                                "unauthoized purchase",
                                "duplicate purchase",
                                "its is a boy",
                                "it is a girl"};

const char* const kShipTypes[] = {"EXPRESS", "NEXT DAY", "OVERNIGHT", "TWO DAY", "REGULAR", "LIBRARY"};
const char* const kShipCodes[] = {"AIR", "SURFACE", "SEA", "BIKE", "HAND CARRY", "MESSENGER", "COURIER"};
const char* const kCarriers[] = {"UPS",      "FEDEX",    "AIRBORNE", "USPS",       "DHL",
                                 "TBS",      "ZHOU",     "ZOUROS",   "MSC",        "LATVIAN",
                                 "ALLIANCE", "ORIENTAL", "BARIAN",   "BOXBUNDLES", "GREAT EASTERN",
                                 "DIAMOND",  "RUPEKSA",  "GERMA",    "HARMSTORF",  "PRIVATECARRIER"};

}  // namespace

void WriteItem(const TpcdsContext& c, int64_t unit, RowSink& out) {
  const ScdVersion v = ScdVersionOf(unit);
  // What an item is stays across its versions (drawn per business id); its
  // price changes (drawn per row).
  TpcdsRng r(c.seed, TpcdsTable::kItem, v.id);
  TpcdsRng price(c.seed, TpcdsTable::kItem, unit, 1);
  const ItemClass k = PickItemClass(r);
  const int64_t brand_number = r.Uniform(1, 10);
  std::string brand =
      std::string(kBrandWords[(k.category_id - 1) % 10]) + kBrandWords[k.class_id % 10] + " #" + Num(brand_number);
  int64_t brand_id = k.category_id * 1000000 + k.class_id * 1000 + brand_number;
  const bool named = r.Chance(1, 2);
  const int64_t named_pick = r.Uniform(0, 3);
  for (const NamedBrands& g : kNamedBrands) {
    if (named && In(k.category, g.categories) && In(k.class_name, g.classes)) {
      brand = *(g.brands.begin() + named_pick);
      brand_id = 10000000 + named_pick;
    }
  }
  const int64_t manufact = r.Uniform(1, 1000);
  const std::string desc = Text(r, 20, 120);
  const std::string_view size = ItemSize(r), color = ItemColor(r), units = ItemUnits(r);
  char formulation[24];
  std::snprintf(formulation, sizeof formulation, "%020llu",
                static_cast<unsigned long long>(r.Next() % 100000000000000000ULL));
  const int64_t manager = r.Uniform(1, 100);
  const int64_t price_cents = price.Uniform(9, 9999);
  const int64_t wholesale_cents = std::max<int64_t>(1, price_cents * price.Uniform(30, 90) / 100);
  out.Int(unit + 1).Str(BusinessId(v.id)).Int(v.rec_start_days).IntOrNull(v.rec_end_days < 0, v.rec_end_days);
  out.Str(desc).Int(price_cents).Int(wholesale_cents).Int(brand_id).Str(brand).Int(k.class_id).Str(k.class_name);
  out.Int(k.category_id).Str(k.category).Int(manufact).Str(Syllables(manufact)).Str(size).Str(formulation);
  out.Str(color).Str(units).Str("Unknown").Int(manager).Str(Syllables(v.id));
  out.EndRow();
}

void WritePromotion(const TpcdsContext& c, int64_t unit, RowSink& out) {
  TpcdsRng r(c.seed, TpcdsTable::kPromotion, unit);
  const int64_t start = r.Uniform(kFirstSaleSk - 100, kLastSaleSk);
  const int64_t end = start + r.Uniform(30, 60);
  const int64_t item = r.Uniform(1, c.counts.item);
  const int64_t name = r.Uniform(1, 10);
  out.Int(unit + 1).Str(BusinessId(unit + 1)).Int(start).Int(end).Int(item).Int(100000).Int(1);
  out.Str(Syllables(name));
  for (int ch = 0; ch < 8; ++ch) out.Str(r.Chance(1, 2) ? "Y" : "N");
  const std::string details = Text(r, 20, 60);
  out.Str(details).Str("Unknown").Str("N");
  out.EndRow();
}

void WriteReason(const TpcdsContext&, int64_t unit, RowSink& out) {
  const auto known = static_cast<int64_t>(std::size(kReasons));
  out.Int(unit + 1).Str(BusinessId(unit + 1));
  out.Str(unit < known ? std::string(kReasons[unit]) : "reason " + Num(unit + 1));
  out.EndRow();
}

void WriteShipMode(const TpcdsContext& c, int64_t unit, RowSink& out) {
  TpcdsRng r(c.seed, TpcdsTable::kShipMode, unit);
  out.Int(unit + 1).Str(BusinessId(unit + 1)).Str(kShipTypes[unit % 6]).Str(kShipCodes[unit % 7]);
  out.Str(kCarriers[unit % 20]).Str(Text(r, 5, 20));
  out.EndRow();
}

}  // namespace quiver::datagen::tpcds

// quiver/datagen/tpcds_domains.cc — see tpcds_domains.h.
#include "quiver/datagen/tpcds_domains.h"

#include <cstdio>

namespace quiver::datagen::tpcds {
namespace {

const char* const kSyllables[] = {"bar", "ought", "able", "pri", "ese", "anti", "cally", "ation", "eing", "n st"};

const char* const kWords[] = {
    "able",      "about",    "above",    "across",    "actually",  "again",     "against",   "ago",         "all",
    "almost",    "already",  "also",     "always",    "american",  "among",     "and",       "another",     "any",
    "areas",     "around",   "back",     "bad",       "because",   "become",    "before",    "being",       "best",
    "better",    "between",  "big",      "black",     "both",      "british",   "business",  "carefully",   "cases",
    "central",   "certain",  "children", "clear",     "close",     "common",    "companies", "conditions",  "control",
    "council",   "country",  "current",  "days",      "decisions", "different", "early",     "economic",    "effects",
    "english",   "even",     "ever",     "every",     "evidence",  "families",  "far",       "final",       "financial",
    "following", "free",     "full",     "further",   "general",   "good",      "great",     "groups",      "hard",
    "high",      "however",  "human",    "important", "industry",  "interest",  "issues",    "just",        "large",
    "late",      "leading",  "less",     "likely",    "little",    "local",     "long",      "main",        "major",
    "members",   "minutes",  "modern",   "months",    "more",      "most",      "much",      "national",    "natural",
    "necessary", "new",      "old",      "only",      "open",      "other",     "parents",   "parts",       "people",
    "perhaps",   "personal", "place",    "points",    "political", "poor",      "possible",  "present",     "private",
    "problems",  "programs", "public",   "quickly",   "quite",     "rather",    "real",      "recent",      "results",
    "right",     "royal",    "schools",  "second",    "services",  "several",   "short",     "significant", "simply",
    "single",    "small",    "social",   "special",   "still",     "strong",    "such",      "systems",     "then",
    "there",     "things",   "times",    "together",  "too",       "true",      "types",     "under",       "usually",
    "various",   "very",     "well",     "white",     "whole",     "wide",      "women",     "words",       "years",
    "young"};

const char* const kFirstNames[] = {
    "James",    "John",     "Robert", "Michael",  "William",   "David",    "Richard", "Charles", "Joseph",   "Thomas",
    "Mary",     "Patricia", "Linda",  "Barbara",  "Elizabeth", "Jennifer", "Maria",   "Susan",   "Margaret", "Dorothy",
    "Lisa",     "Nancy",    "Karen",  "Betty",    "Helen",     "Sandra",   "Donna",   "Carol",   "Ruth",     "Sharon",
    "Michelle", "Laura",    "Sarah",  "Kimberly", "Deborah",   "Jessica",  "Shirley", "Cynthia", "Angela",   "Melissa",
    "Brenda",   "Amy",      "Anna",   "Rebecca",  "Virginia",  "Kathleen", "Pamela",  "Martha",  "Debra",    "Amanda",
    "Daniel",   "Paul",     "Mark",   "Donald",   "George",    "Kenneth",  "Steven",  "Edward",  "Brian",    "Ronald",
    "Anthony",  "Kevin",    "Jason",  "Matthew",  "Gary",      "Timothy",  "Jose",    "Larry",   "Jeffrey",  "Frank"};

const char* const kLastNames[] = {
    "Smith",    "Johnson",   "Williams", "Jones",     "Brown",    "Davis",   "Miller",  "Wilson",   "Moore",
    "Taylor",   "Anderson",  "Thomas",   "Jackson",   "White",    "Harris",  "Martin",  "Thompson", "Garcia",
    "Martinez", "Robinson",  "Clark",    "Rodriguez", "Lewis",    "Lee",     "Walker",  "Hall",     "Allen",
    "Young",    "Hernandez", "King",     "Wright",    "Lopez",    "Hill",    "Scott",   "Green",    "Adams",
    "Baker",    "Gonzalez",  "Nelson",   "Carter",    "Mitchell", "Perez",   "Roberts", "Turner",   "Phillips",
    "Campbell", "Parker",    "Evans",    "Edwards",   "Collins",  "Stewart", "Sanchez", "Morris",   "Rogers",
    "Reed",     "Cook",      "Morgan",   "Bell",      "Murphy",   "Bailey"};

const char* const kSalutations[] = {"Mr.", "Mrs.", "Ms.", "Miss", "Sir", "Dr."};

const char* const kCountries[] = {
    "UNITED STATES", "CANADA", "MEXICO",  "BRAZIL",  "ARGENTINA", "CHILE",    "PERU",        "COLOMBIA",
    "GERMANY",       "FRANCE", "ITALY",   "SPAIN",   "PORTUGAL",  "IRELAND",  "NORWAY",      "SWEDEN",
    "FINLAND",       "POLAND", "GREECE",  "TURKEY",  "EGYPT",     "KENYA",    "NIGERIA",     "MOROCCO",
    "INDIA",         "CHINA",  "JAPAN",   "KOREA",   "VIET NAM",  "THAILAND", "INDONESIA",   "AUSTRALIA",
    "NEW ZEALAND",   "FIJI",   "ICELAND", "JAMAICA", "CUBA",      "BELGIUM",  "NETHERLANDS", "AUSTRIA"};

struct County {
  const char* county;
  const char* state;
  int zip_digit;
  int gmt_hours;
};
// Counties the queries name, and others to spread customers over the
// states they name (ca_state IN (...)).
const County kCounties[] = {
    {"Williamson County", "TN", 3, -5}, {"Rush County", "IN", 4, -5},       {"Toole County", "MT", 5, -7},
    {"Jefferson County", "KY", 4, -5},  {"Dona Ana County", "NM", 8, -7},   {"La Porte County", "IN", 4, -5},
    {"Orange County", "CA", 9, -8},     {"Bronx County", "NY", 1, -5},      {"Franklin Parish", "LA", 7, -6},
    {"Jefferson County", "AL", 3, -6},  {"Fairfield County", "CT", 0, -5},  {"King County", "WA", 9, -8},
    {"Fulton County", "GA", 3, -5},     {"Walker County", "GA", 3, -5},     {"Denver County", "CO", 8, -7},
    {"Franklin County", "OH", 4, -5},   {"Harris County", "TX", 7, -6},     {"Travis County", "TX", 7, -6},
    {"Dallas County", "TX", 7, -6},     {"Bergen County", "NJ", 0, -5},     {"Polk County", "IA", 5, -6},
    {"Pulaski County", "AR", 7, -6},    {"Hinds County", "MS", 3, -6},      {"Cass County", "ND", 5, -6},
    {"Tulsa County", "OK", 7, -6},      {"Fairfax County", "VA", 2, -5},    {"Richmond County", "VA", 2, -5},
    {"Lane County", "OR", 9, -8},       {"Hennepin County", "MN", 5, -6},   {"Dane County", "WI", 5, -6},
    {"Cook County", "IL", 6, -6},       {"Lake County", "IL", 6, -6},       {"Wayne County", "MI", 4, -5},
    {"Miami-Dade County", "FL", 3, -5}, {"Greene County", "MO", 6, -6},     {"Wake County", "NC", 2, -5},
    {"Allegheny County", "PA", 1, -5},  {"Richland County", "SC", 2, -5},   {"Sedgwick County", "KS", 6, -6},
    {"Douglas County", "NE", 6, -6},    {"Minnehaha County", "SD", 5, -6},  {"Kanawha County", "WV", 2, -5},
    {"Baltimore County", "MD", 2, -5},  {"Maricopa County", "AZ", 8, -7},   {"Salt Lake County", "UT", 8, -7},
    {"Ada County", "ID", 8, -7},        {"Clark County", "NV", 8, -8},      {"Jackson County", "MO", 6, -6},
    {"Marion County", "IN", 4, -5},     {"Montgomery County", "TX", 7, -6}, {"Washington County", "KY", 4, -5},
    {"Union County", "GA", 3, -5},      {"Lincoln County", "NM", 8, -7},    {"Adams County", "CO", 8, -7},
    {"Madison County", "MS", 3, -6},    {"Shelby County", "TN", 3, -6},     {"Davidson County", "TN", 3, -6},
    {"Barrow County", "GA", 3, -5},     {"Daviess County", "KY", 4, -5},    {"Anchorage Borough", "AK", 9, -9},
    {"Honolulu County", "HI", 9, -10},  {"Ziebach County", "SD", 5, -7},    {"Luce County", "MI", 4, -5},
    {"Oglethorpe County", "GA", 3, -5}, {"Mesa County", "CO", 8, -7},       {"Terrell County", "TX", 7, -6}};

const char* const kCities[] = {
    "Midway",      "Fairview",   "Oak Grove", "Five Points",    "Pleasant Hill", "Riverside",  "Centerville",
    "Liberty",     "Salem",      "Greenwood", "Union",          "Mount Olive",   "Edgewood",   "Glendale",
    "Oakland",     "Springdale", "Franklin",  "Clinton",        "Marion",        "Georgetown", "Lakeside",
    "Spring Hill", "Shiloh",     "Bethel",    "Hopewell",       "Forest Hills",  "Wildwood",   "Sunnyside",
    "Newport",     "Jamestown",  "Lebanon",   "Mount Pleasant", "Highland Park", "Woodland",   "Kingston",
    "Concord",     "Antioch",    "Red Hill",  "Crossroads",     "Summit"};

const char* const kStreetNames[] = {
    "Main",    "Oak",     "Park",    "Pine",     "Maple",     "Cedar",  "Elm",     "View",   "Washington", "Lake",
    "Hill",    "Walnut",  "Spring",  "North",    "Ridge",     "Church", "Willow",  "Mill",   "Sunset",     "Railroad",
    "Jackson", "Cherry",  "West",    "Highland", "Johnson",   "Poplar", "Wilson",  "Meadow", "Forest",     "Hickory",
    "River",   "Lincoln", "Central", "Locust",   "Jefferson", "Green",  "Ash",     "Spruce", "Birch",      "College",
    "Dogwood", "Second",  "Third",   "Fourth",   "Fifth",     "Sixth",  "Seventh", "Eighth", "Ninth",      "Tenth"};

const char* const kStreetTypes[] = {"Street", "ST",      "Avenue", "Ave", "Boulevard", "Blvd",  "Road",
                                    "RD",     "Parkway", "Pkwy",   "Way", "Wy",        "Drive", "Dr.",
                                    "Circle", "Cir.",    "Lane",   "Ln",  "Court",     "Ct."};

struct Category {
  const char* name;
  std::initializer_list<const char*> classes;
};
const Category kCategories[] = {
    {"Women", {"dresses", "fragrances", "maternity", "swimwear", "intimates"}},
    {"Men", {"accessories", "pants", "shirts", "sports-apparel"}},
    {"Children", {"infants", "newborn", "school-uniforms", "toddlers"}},
    {"Shoes", {"athletic", "kids", "mens", "womens"}},
    {"Music", {"classical", "country", "pop", "rock"}},
    {"Jewelry",
     {"birdal", "bracelets", "consignment", "costume", "custom", "diamonds", "earings", "estate", "gold",
      "jewelry boxes", "loose stones", "mens watch", "pendants", "rings", "semi-precious", "womens watch"}},
    {"Home",
     {"accent", "bathroom", "bedding", "blinds/shades", "curtains/drapes", "decor", "flatware", "furniture",
      "glassware", "kids", "lighting", "mattresses", "paint", "rugs", "tables", "wallpaper"}},
    {"Sports",
     {"archery", "athletic shoes", "baseball", "basketball", "camping", "fishing", "fitness", "football", "golf",
      "guns", "hockey", "optics", "outdoor", "pools", "sailing", "tennis"}},
    {"Books",
     {"arts", "business", "computers", "cooking", "entertainments", "fiction", "history", "home repair", "mystery",
      "parenting", "reference", "romance", "science", "self-help", "sports", "travel"}},
    {"Electronics",
     {"audio", "automotive", "cameras", "camcorders", "computers", "disk drives", "dvd/vcr players", "karoke", "memory",
      "monitors", "musical", "personal", "portable", "radio", "scanners", "stereo", "televisions", "wireless"}}};

const char* const kColors[] = {
    "almond",   "antique", "aquamarine", "azure",     "beige",      "bisque",    "black",     "blanched", "blue",
    "blush",    "brown",   "burlywood",  "burnished", "chartreuse", "chiffon",   "chocolate", "coral",    "cornflower",
    "cornsilk", "cream",   "cyan",       "dark",      "deep",       "dim",       "dodger",    "drab",     "firebrick",
    "floral",   "forest",  "frosted",    "gainsboro", "ghost",      "goldenrod", "green",     "grey",     "honeydew",
    "hot",      "indian",  "ivory",      "khaki",     "lace",       "lavender",  "lawn",      "lemon",    "light",
    "lime",     "linen",   "magenta",    "maroon",    "medium",     "metallic",  "midnight",  "mint",     "misty",
    "moccasin", "navajo",  "navy",       "olive",     "orange",     "orchid",    "pale",      "papaya",   "peach",
    "peru",     "pink",    "plum",       "powder",    "puff",       "purple",    "red",       "rose",     "rosy",
    "royal",    "saddle",  "salmon",     "sandy",     "seashell",   "sienna",    "sky",       "slate",    "smoke",
    "snow",     "spring",  "steel",      "tan",       "thistle",    "tomato",    "turquoise", "violet",   "wheat",
    "white",    "yellow"};

const char* const kUnits[] = {"Unknown", "Each",  "Dozen",  "Case", "Pallet", "Gross", "Carton",
                              "Box",     "Bunch", "Bundle", "Oz",   "Lb",     "Ton",   "Ounce",
                              "Pound",   "Tsp",   "Tbl",    "Cup",  "Dram",   "Gram",  "N/A"};

const char* const kSizes[] = {"petite", "small", "medium", "large", "extra large", "economy", "N/A"};

}  // namespace

std::string Num(int64_t n) { return std::to_string(n); }

std::string Syllables(int64_t n) {
  if (n < 0) n = -n;
  const std::string digits = std::to_string(n);
  std::string s;
  for (char d : digits) s += kSyllables[d - '0'];
  return s;
}

std::string BusinessId(int64_t id) {
  std::string s = "AAAAAAAA";
  auto v = static_cast<uint64_t>(id);
  for (int i = 0; i < 8; ++i) {
    s += static_cast<char>('A' + (v & 15));
    v >>= 4;
  }
  return s;
}

std::string Text(TpcdsRng& r, int min_len, int max_len) {
  const int64_t target = r.Uniform(min_len, max_len);
  std::string s;
  while (static_cast<int64_t>(s.size()) < target) {
    if (!s.empty()) s += ' ';
    s += r.Pick(kWords);
  }
  s.resize(static_cast<size_t>(target));
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (!s.empty()) s[0] = static_cast<char>(s[0] >= 'a' && s[0] <= 'z' ? s[0] - 32 : s[0]);
  return s;
}

std::string_view FirstName(TpcdsRng& r) { return r.Pick(kFirstNames); }
std::string_view LastName(TpcdsRng& r) { return r.Pick(kLastNames); }
std::string_view Salutation(TpcdsRng& r) { return r.Pick(kSalutations); }
std::string PersonName(TpcdsRng& r) { return std::string(FirstName(r)) + " " + std::string(LastName(r)); }
std::string_view BirthCountry(TpcdsRng& r) { return r.Pick(kCountries); }

Address MakeAddress(TpcdsRng& r, int64_t local_slot) {
  Address a;
  const bool local = local_slot >= 0;
  const int64_t county_index = local ? 0 : r.Uniform(0, static_cast<int64_t>(std::size(kCounties)) - 1);
  const County& c = kCounties[county_index];
  const int64_t any_city = r.Uniform(0, std::size(kCities) - 1);
  const int64_t city_index = local && local_slot % 3 != 2 ? local_slot % 3 : any_city;
  a.street_number = Num(r.Uniform(1, 999));
  a.street_name = std::string(r.Pick(kStreetNames));
  if (r.Chance(1, 2)) {
    a.street_name.push_back(' ');
    a.street_name.append(r.Pick(kStreetNames));
  }
  a.street_type = r.Pick(kStreetTypes);
  const int64_t suite = r.Uniform(0, 99);
  a.suite_number = "Suite ";
  if (suite < 50) {
    a.suite_number.append(Num(suite * 10));
  } else {
    a.suite_number.push_back(static_cast<char>('A' + suite % 26));
  }
  a.city = kCities[city_index];
  a.county = c.county;
  a.state = c.state;
  // One zip per (county, city): a few thousand zips, as dsdgen's.
  const uint64_t h = SplitMix64(static_cast<uint64_t>(county_index) * 131 + static_cast<uint64_t>(city_index));
  char zip[8];
  std::snprintf(zip, sizeof zip, "%d%04d", c.zip_digit, static_cast<int>(h % 10000));
  a.zip = zip;
  a.country = "United States";
  a.gmt_offset_cents = static_cast<int64_t>(c.gmt_hours) * 100;
  return a;
}

ItemClass PickItemClass(TpcdsRng& r) {
  const int64_t cat = r.Uniform(0, static_cast<int64_t>(std::size(kCategories)) - 1);
  const Category& c = kCategories[cat];
  const int64_t cls = r.Uniform(0, static_cast<int64_t>(c.classes.size()) - 1);
  return {cat + 1, cls + 1, c.name, *(c.classes.begin() + cls)};
}

std::string_view ItemColor(TpcdsRng& r) { return r.Pick(kColors); }
std::string_view ItemUnits(TpcdsRng& r) { return r.Pick(kUnits); }
std::string_view ItemSize(TpcdsRng& r) { return r.Pick(kSizes); }

ScdVersion ScdVersionOf(int64_t row_index) {
  // Per run of six rows: id A (1 version), id B (2), id C (3).
  static const int kIdOffset[6] = {0, 1, 1, 2, 2, 2};
  static const int kVersion[6] = {0, 0, 1, 0, 1, 2};
  static const int kVersions[6] = {1, 2, 2, 3, 3, 3};
  const int64_t run = row_index / 6;
  const int k = static_cast<int>(row_index % 6);
  ScdVersion v;
  v.id = run * 3 + kIdOffset[k] + 1;
  const int64_t d1 = DaysFromCivil(1997, 10, 27), d2 = DaysFromCivil(1999, 10, 28), d3 = DaysFromCivil(2000, 10, 27),
                d4 = DaysFromCivil(2001, 10, 27);
  switch (kVersions[k] * 10 + kVersion[k]) {
    case 10: v.rec_start_days = d1; break;
    case 20: v.rec_start_days = d1, v.rec_end_days = d3 - 1; break;
    case 21: v.rec_start_days = d3; break;
    case 30: v.rec_start_days = d1, v.rec_end_days = d2 - 1; break;
    case 31: v.rec_start_days = d2, v.rec_end_days = d4 - 1; break;
    default: v.rec_start_days = d4; break;
  }
  return v;
}

int64_t ScdIdCount(int64_t rows) {
  static const int kIdsInPartialRun[6] = {0, 1, 2, 2, 3, 3};
  return rows / 6 * 3 + kIdsInPartialRun[rows % 6];
}

int64_t ScdSkAt(int64_t id, int64_t days, int64_t rows) {
  const int64_t base = (id - 1) / 3 * 6;
  int64_t first = base, row = base;
  switch ((id - 1) % 3) {
    case 0: break;
    case 1:
      first = base + 1;
      row = days < DaysFromCivil(2000, 10, 27) ? base + 1 : base + 2;
      break;
    default:
      first = base + 3;
      row = days < DaysFromCivil(1999, 10, 28) ? base + 3 : (days < DaysFromCivil(2001, 10, 27) ? base + 4 : base + 5);
      break;
  }
  // The last run may stop before the id's later versions.
  return std::max(first, std::min(row, rows - 1)) + 1;
}

// Howard Hinnant's civil-date algorithms (public domain descriptions).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

CivilDate CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  return {yoe + era * 400 + (m <= 2), m, d};
}

int64_t SaleDateSk(TpcdsRng& r) {
  // Rejection: a day of November or December is always kept, any other day
  // half the time, so those months are twice as busy.
  while (true) {
    const int64_t sk = r.Uniform(kFirstSaleSk, kLastSaleSk);
    const CivilDate d = CivilFromDays(DaysFromJulian(sk));
    if (d.month >= 11 || r.Chance(1, 2)) return sk;
  }
}

}  // namespace quiver::datagen::tpcds

// quiver/datagen/tpch.cc — see tpch.h.
#include "quiver/datagen/tpch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "quiver/datagen/splitmix64.h"
#include "quiver/memory/buffer.h"

namespace quiver::datagen {
namespace {

// ---- deterministic draws (splitmix64) --------------------------------------

constexpr uint64_t kGolden = kSplitMix64Golden;
constexpr uint64_t Mix(uint64_t z) { return SplitMix64Mix(z); }

class Rng : public SplitMix64Stream {
 public:
  Rng(uint64_t seed, uint64_t table, uint64_t row)
      : SplitMix64Stream(Mix(Mix(seed ^ (table * 0x7470636800ULL)) + row * kGolden)) {}
  template <size_t N>
  const char* Pick(const char* const (&list)[N]) {
    return list[Uniform(0, static_cast<int64_t>(N) - 1)];
  }
};

// ---- domains (TPC-H clause 4.2.2.13 and 4.2.3) ------------------------------

const char* const kRegions[] = {"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"};
struct NationDef {
  const char* name;
  int region;
};
const NationDef kNations[] = {
    {"ALGERIA", 0},      {"ARGENTINA", 1},  {"BRAZIL", 1},  {"CANADA", 1},         {"EGYPT", 4},
    {"ETHIOPIA", 0},     {"FRANCE", 3},     {"GERMANY", 3}, {"INDIA", 2},          {"INDONESIA", 2},
    {"IRAN", 4},         {"IRAQ", 4},       {"JAPAN", 2},   {"JORDAN", 4},         {"KENYA", 0},
    {"MOROCCO", 0},      {"MOZAMBIQUE", 0}, {"PERU", 1},    {"CHINA", 2},          {"ROMANIA", 3},
    {"SAUDI ARABIA", 4}, {"VIETNAM", 2},    {"RUSSIA", 3},  {"UNITED KINGDOM", 3}, {"UNITED STATES", 1},
};
const char* const kSegments[] = {"AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"};
const char* const kPriorities[] = {"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"};
const char* const kInstructions[] = {"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"};
const char* const kModes[] = {"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"};
const char* const kTypeS1[] = {"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"};
const char* const kTypeS2[] = {"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"};
const char* const kTypeS3[] = {"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"};
const char* const kContS1[] = {"SM", "LG", "MED", "JUMBO", "WRAP"};
const char* const kContS2[] = {"CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"};
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
const char* const kWords[] = {
    "furiously",    "quickly",  "carefully", "blithely",  "slyly",       "fluffily", "ironic",   "final",
    "regular",      "express",  "special",   "pending",   "bold",        "even",     "silent",   "unusual",
    "packages",     "deposits", "requests",  "accounts",  "theodolites", "pinto",    "beans",    "instructions",
    "dependencies", "foxes",    "ideas",     "platelets", "asymptotes",  "courts",   "dolphins", "multipliers",
    "sauternes",    "warthogs", "frets",     "dinos",     "attainments", "somas",    "sleep",    "wake",
    "are",          "cajole",   "haggle",    "nag",       "use",         "boost",    "affix",    "detect",
    "integrate",    "among",    "across",    "above",     "against",     "along",    "after",    "about",
    "the",          "of",       "to"};

constexpr int64_t kStartDate = 8035;    // 1992-01-01 (days since 1970-01-01)
constexpr int64_t kEndDate = 10591;     // 1998-12-31
constexpr int64_t kCurrentDate = 9298;  // 1995-06-17

// Words drawn until the text is between min and max characters long.
std::string Text(Rng& r, int min_len, int max_len) {
  const int64_t target = r.Uniform(min_len, max_len);
  std::string s;
  while (static_cast<int64_t>(s.size()) < target) {
    if (!s.empty()) s += ' ';
    s += r.Pick(kWords);
  }
  s.resize(static_cast<size_t>(target));
  if (!s.empty() && s.back() == ' ') s.back() = '.';
  return s;
}

std::string Address(Rng& r) {
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,";
  const int64_t n = r.Uniform(10, 40);
  std::string s(static_cast<size_t>(n), ' ');
  for (auto& c : s) c = kChars[r.Uniform(0, static_cast<int64_t>(sizeof kChars) - 2)];
  return s;
}

std::string Phone(Rng& r, int64_t nation) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02d-%03d-%03d-%04d", static_cast<int>(nation + 10),
                static_cast<int>(r.Uniform(100, 999)), static_cast<int>(r.Uniform(100, 999)),
                static_cast<int>(r.Uniform(1000, 9999)));
  return buf;
}

std::string Numbered(const char* prefix, int64_t n) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s#%09lld", prefix, static_cast<long long>(n));
  return buf;
}

// ---- column builders ---------------------------------------------------------

class ColumnBuilder {
 public:
  explicit ColumnBuilder(DataTypePtr type) : type_(std::move(type)) {}
  void Int(int64_t v) { ints_.push_back(v); }
  void Str(std::string_view s) {
    data_.append(s);
    offsets_.push_back(static_cast<int32_t>(data_.size()));
  }
  int64_t length() const {
    return type_->id == TypeId::kUtf8 ? static_cast<int64_t>(offsets_.size()) - 1 : static_cast<int64_t>(ints_.size());
  }
  Result<ArrayDataPtr> Finish(MemoryPool* pool) {
    auto a = std::make_shared<ArrayData>();
    a->type = type_;
    a->length = length();
    if (type_->id == TypeId::kUtf8) {
      if (data_.size() > static_cast<size_t>(INT32_MAX)) return Status::Invalid("tpch: string column over 2 GiB");
      QUIVER_ASSIGN_OR_RETURN(
          auto off, Buffer::CopyOf(pool, {reinterpret_cast<const uint8_t*>(offsets_.data()), offsets_.size() * 4}));
      QUIVER_ASSIGN_OR_RETURN(auto data,
                              Buffer::CopyOf(pool, {reinterpret_cast<const uint8_t*>(data_.data()), data_.size()}));
      a->buffers = {nullptr, off, data};
      return ArrayDataPtr(a);
    }
    const int64_t n = a->length;
    int width = 8;
    if (type_->id == TypeId::kInt32 || type_->id == TypeId::kDate32) width = 4;
    if (type_->id == TypeId::kDecimal) width = 16;
    QUIVER_ASSIGN_OR_RETURN(auto buf, Buffer::Allocate(pool, std::max<int64_t>(n * width, 1)));
    uint8_t* p = buf->mutable_data();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = ints_[static_cast<size_t>(i)];
      if (width == 4) {
        const int32_t x = static_cast<int32_t>(v);
        std::memcpy(p + i * 4, &x, 4);
      } else if (width == 8) {
        std::memcpy(p + i * 8, &v, 8);
      } else {
        const int64_t hi = v < 0 ? -1 : 0;
        std::memcpy(p + i * 16, &v, 8);
        std::memcpy(p + i * 16 + 8, &hi, 8);
      }
    }
    a->buffers = {nullptr, buf};
    return ArrayDataPtr(a);
  }

 private:
  DataTypePtr type_;
  std::vector<int64_t> ints_;
  std::string data_;
  std::vector<int32_t> offsets_{0};
};

DataTypePtr Money() { return decimal(128, 15, 2); }

FieldPtr F(const char* name, DataTypePtr t) { return field(name, std::move(t), false); }

SchemaPtr MakeSchema(std::vector<FieldPtr> fields) {
  auto s = std::make_shared<Schema>();
  s->fields = std::move(fields);
  return s;
}

// ---- row counts and keys -------------------------------------------------------

int64_t Scaled(double base, double scale) { return std::max<int64_t>(1, std::llround(base * scale)); }

struct Counts {
  int64_t supplier, customer, part, orders;
};

Counts CountsFor(double scale) {
  return {Scaled(10000, scale), Scaled(150000, scale), Scaled(200000, scale), Scaled(1500000, scale)};
}

// dbgen's sparse order keys: 8 of every 32.
int64_t OrderKey(int64_t order_index) { return (order_index / 8) * 32 + (order_index % 8) + 1; }

int64_t RetailPriceCents(int64_t partkey) { return 90000 + ((partkey / 10) % 20001) + 100 * (partkey % 1000); }

// Supplier of the i-th (0..3) partsupp row of a part: the spec's clause
// 4.2.3 spreads them a quarter of the suppliers apart; its extra term
// ((partkey - 1) / S) can repeat a supplier, so it is left out here, which
// keeps the four suppliers of a part distinct whenever S >= 4.
int64_t PartSupplier(int64_t partkey, int64_t i, int64_t suppliers) {
  return (partkey + i * std::max<int64_t>(1, suppliers / 4)) % suppliers + 1;
}

enum : uint64_t { kTRegion = 1, kTNation, kTSupplier, kTCustomer, kTPart, kTPartSupp, kTOrders, kTLineitem };

struct Line {
  int64_t partkey, suppkey, quantity, ext_cents, discount, tax, ship, commit, receipt;
  char returnflag, linestatus;
  const char* instruct;
  const char* mode;
};

struct Order {
  int64_t key, custkey, date, total_cents;
  char status;
  int nlines;
  Line lines[7];
};

Order MakeOrder(uint64_t seed, const Counts& c, int64_t index) {
  Order o;
  Rng r(seed, kTOrders, static_cast<uint64_t>(index));
  o.key = OrderKey(index);
  int64_t cust = r.Uniform(1, c.customer);
  if (cust % 3 == 0) cust = cust - 1 >= 1 ? cust - 1 : cust;
  o.custkey = cust;
  o.date = r.Uniform(kStartDate, kEndDate - 151);
  o.nlines = static_cast<int>(r.Uniform(1, 7));
  o.total_cents = 0;
  int f = 0, open = 0;
  for (int l = 0; l < o.nlines; ++l) {
    Rng lr(seed, kTLineitem, static_cast<uint64_t>(index) * 8 + static_cast<uint64_t>(l));
    Line& x = o.lines[l];
    x.partkey = lr.Uniform(1, c.part);
    x.suppkey = PartSupplier(x.partkey, lr.Uniform(0, 3), c.supplier);
    x.quantity = lr.Uniform(1, 50);
    x.ext_cents = x.quantity * RetailPriceCents(x.partkey);
    x.discount = lr.Uniform(0, 10);
    x.tax = lr.Uniform(0, 8);
    x.ship = o.date + lr.Uniform(1, 121);
    x.commit = o.date + lr.Uniform(30, 90);
    x.receipt = x.ship + lr.Uniform(1, 30);
    x.returnflag = x.receipt <= kCurrentDate ? (lr.Uniform(0, 1) ? 'R' : 'A') : 'N';
    x.linestatus = x.ship > kCurrentDate ? 'O' : 'F';
    x.instruct = lr.Pick(kInstructions);
    x.mode = lr.Pick(kModes);
    // extendedprice * (1 + tax) * (1 - discount), rounded half up to cents.
    const int64_t num = x.ext_cents * (100 + x.tax) * (100 - x.discount);
    o.total_cents += (num + 5000) / 10000;
    (x.linestatus == 'F' ? f : open) += 1;
  }
  o.status = open == 0 ? 'F' : (f == 0 ? 'O' : 'P');
  return o;
}

}  // namespace

const std::vector<TpchTable>& AllTpchTables() {
  static const std::vector<TpchTable> kAll = {TpchTable::kRegion,   TpchTable::kNation,  TpchTable::kSupplier,
                                              TpchTable::kCustomer, TpchTable::kPart,    TpchTable::kPartSupp,
                                              TpchTable::kOrders,   TpchTable::kLineitem};
  return kAll;
}

std::string_view TpchTableName(TpchTable t) {
  switch (t) {
    case TpchTable::kRegion: return "region";
    case TpchTable::kNation: return "nation";
    case TpchTable::kSupplier: return "supplier";
    case TpchTable::kCustomer: return "customer";
    case TpchTable::kPart: return "part";
    case TpchTable::kPartSupp: return "partsupp";
    case TpchTable::kOrders: return "orders";
    case TpchTable::kLineitem: return "lineitem";
  }
  return "?";
}

Result<TpchTable> ParseTpchTable(std::string_view name) {
  for (TpchTable t : AllTpchTables()) {
    if (TpchTableName(t) == name) return t;
  }
  return Status::Invalid("unknown TPC-H table '" + std::string(name) +
                         "' (expected region|nation|supplier|customer|part|partsupp|orders|lineitem)");
}

SchemaPtr TpchSchema(TpchTable t) {
  switch (t) {
    case TpchTable::kRegion:
      return MakeSchema({F("r_regionkey", int64()), F("r_name", utf8()), F("r_comment", utf8())});
    case TpchTable::kNation:
      return MakeSchema(
          {F("n_nationkey", int64()), F("n_name", utf8()), F("n_regionkey", int64()), F("n_comment", utf8())});
    case TpchTable::kSupplier:
      return MakeSchema({F("s_suppkey", int64()), F("s_name", utf8()), F("s_address", utf8()),
                         F("s_nationkey", int64()), F("s_phone", utf8()), F("s_acctbal", Money()),
                         F("s_comment", utf8())});
    case TpchTable::kCustomer:
      return MakeSchema({F("c_custkey", int64()), F("c_name", utf8()), F("c_address", utf8()),
                         F("c_nationkey", int64()), F("c_phone", utf8()), F("c_acctbal", Money()),
                         F("c_mktsegment", utf8()), F("c_comment", utf8())});
    case TpchTable::kPart:
      return MakeSchema({F("p_partkey", int64()), F("p_name", utf8()), F("p_mfgr", utf8()), F("p_brand", utf8()),
                         F("p_type", utf8()), F("p_size", int32()), F("p_container", utf8()),
                         F("p_retailprice", Money()), F("p_comment", utf8())});
    case TpchTable::kPartSupp:
      return MakeSchema({F("ps_partkey", int64()), F("ps_suppkey", int64()), F("ps_availqty", int32()),
                         F("ps_supplycost", Money()), F("ps_comment", utf8())});
    case TpchTable::kOrders:
      return MakeSchema({F("o_orderkey", int64()), F("o_custkey", int64()), F("o_orderstatus", utf8()),
                         F("o_totalprice", Money()), F("o_orderdate", date32()), F("o_orderpriority", utf8()),
                         F("o_clerk", utf8()), F("o_shippriority", int32()), F("o_comment", utf8())});
    case TpchTable::kLineitem:
      return MakeSchema(
          {F("l_orderkey", int64()), F("l_partkey", int64()), F("l_suppkey", int64()), F("l_linenumber", int32()),
           F("l_quantity", Money()), F("l_extendedprice", Money()), F("l_discount", Money()), F("l_tax", Money()),
           F("l_returnflag", utf8()), F("l_linestatus", utf8()), F("l_shipdate", date32()), F("l_commitdate", date32()),
           F("l_receiptdate", date32()), F("l_shipinstruct", utf8()), F("l_shipmode", utf8()), F("l_comment", utf8())});
  }
  return nullptr;
}

int64_t TpchRowCount(TpchTable t, double scale, uint64_t seed) {
  const Counts c = CountsFor(scale);
  switch (t) {
    case TpchTable::kRegion: return 5;
    case TpchTable::kNation: return 25;
    case TpchTable::kSupplier: return c.supplier;
    case TpchTable::kCustomer: return c.customer;
    case TpchTable::kPart: return c.part;
    case TpchTable::kPartSupp: return 4 * c.part;
    case TpchTable::kOrders: return c.orders;
    case TpchTable::kLineitem: {
      int64_t n = 0;
      for (int64_t i = 0; i < c.orders; ++i) {
        Rng r(seed, kTOrders, static_cast<uint64_t>(i));
        r.Next();  // custkey
        r.Next();  // orderdate
        n += r.Uniform(1, 7);
      }
      return n;
    }
  }
  return 0;
}

struct TpchGenerator::Impl {
  TpchOptions options;
  Counts counts{};
  SchemaPtr schema;
  int64_t total = 0;  // units: rows, or orders for lineitem
  int64_t next = 0;   // next unit
  int64_t rows_out = 0;

  Result<RecordBatchPtr> Generate() {
    const int64_t begin = next;
    std::vector<ColumnBuilder> cols;
    for (const auto& f : schema->fields) cols.emplace_back(f->type);
    const uint64_t seed = options.seed;
    int64_t unit = begin;
    int64_t rows = 0;
    auto money = [](int64_t cents) { return cents; };
    for (; unit < total && rows < options.batch_rows; ++unit) {
      switch (options.table) {
        case TpchTable::kRegion: {
          Rng r(seed, kTRegion, static_cast<uint64_t>(unit));
          cols[0].Int(unit);
          cols[1].Str(kRegions[unit]);
          cols[2].Str(Text(r, 31, 115));
          ++rows;
          break;
        }
        case TpchTable::kNation: {
          Rng r(seed, kTNation, static_cast<uint64_t>(unit));
          cols[0].Int(unit);
          cols[1].Str(kNations[unit].name);
          cols[2].Int(kNations[unit].region);
          cols[3].Str(Text(r, 31, 114));
          ++rows;
          break;
        }
        case TpchTable::kSupplier: {
          Rng r(seed, kTSupplier, static_cast<uint64_t>(unit));
          const int64_t key = unit + 1;
          const int64_t nation = r.Uniform(0, 24);
          cols[0].Int(key);
          cols[1].Str(Numbered("Supplier", key));
          cols[2].Str(Address(r));
          cols[3].Int(nation);
          cols[4].Str(Phone(r, nation));
          cols[5].Int(money(r.Uniform(-99999, 999999)));
          cols[6].Str(Text(r, 25, 100));
          ++rows;
          break;
        }
        case TpchTable::kCustomer: {
          Rng r(seed, kTCustomer, static_cast<uint64_t>(unit));
          const int64_t key = unit + 1;
          const int64_t nation = r.Uniform(0, 24);
          cols[0].Int(key);
          cols[1].Str(Numbered("Customer", key));
          cols[2].Str(Address(r));
          cols[3].Int(nation);
          cols[4].Str(Phone(r, nation));
          cols[5].Int(r.Uniform(-99999, 999999));
          cols[6].Str(r.Pick(kSegments));
          cols[7].Str(Text(r, 29, 116));
          ++rows;
          break;
        }
        case TpchTable::kPart: {
          Rng r(seed, kTPart, static_cast<uint64_t>(unit));
          const int64_t key = unit + 1;
          std::string name;
          for (int w = 0; w < 5; ++w) {
            if (w) name += ' ';
            name += r.Pick(kColors);
          }
          const int64_t m = r.Uniform(1, 5);
          const int64_t n = r.Uniform(1, 5);
          cols[0].Int(key);
          cols[1].Str(name);
          cols[2].Str("Manufacturer#" + std::to_string(m));
          cols[3].Str("Brand#" + std::to_string(m) + std::to_string(n));
          cols[4].Str(std::string(r.Pick(kTypeS1)) + " " + r.Pick(kTypeS2) + " " + r.Pick(kTypeS3));
          cols[5].Int(r.Uniform(1, 50));
          cols[6].Str(std::string(r.Pick(kContS1)) + " " + r.Pick(kContS2));
          cols[7].Int(RetailPriceCents(key));
          cols[8].Str(Text(r, 5, 22));
          ++rows;
          break;
        }
        case TpchTable::kPartSupp: {
          Rng r(seed, kTPartSupp, static_cast<uint64_t>(unit));
          const int64_t part = unit / 4 + 1;
          cols[0].Int(part);
          cols[1].Int(PartSupplier(part, unit % 4, counts.supplier));
          cols[2].Int(r.Uniform(1, 9999));
          cols[3].Int(r.Uniform(100, 100000));
          cols[4].Str(Text(r, 49, 198));
          ++rows;
          break;
        }
        case TpchTable::kOrders: {
          const Order o = MakeOrder(seed, counts, unit);
          Rng r(seed, kTOrders + 100, static_cast<uint64_t>(unit));
          cols[0].Int(o.key);
          cols[1].Int(o.custkey);
          cols[2].Str(std::string_view(&o.status, 1));
          cols[3].Int(o.total_cents);
          cols[4].Int(o.date);
          cols[5].Str(r.Pick(kPriorities));
          cols[6].Str(Numbered("Clerk", r.Uniform(1, std::max<int64_t>(1, std::llround(options.scale * 1000)))));
          cols[7].Int(0);
          cols[8].Str(Text(r, 19, 78));
          ++rows;
          break;
        }
        case TpchTable::kLineitem: {
          const Order o = MakeOrder(seed, counts, unit);
          for (int l = 0; l < o.nlines; ++l) {
            const Line& x = o.lines[l];
            Rng r(seed, kTLineitem + 100, static_cast<uint64_t>(unit) * 8 + static_cast<uint64_t>(l));
            cols[0].Int(o.key);
            cols[1].Int(x.partkey);
            cols[2].Int(x.suppkey);
            cols[3].Int(l + 1);
            cols[4].Int(x.quantity * 100);
            cols[5].Int(x.ext_cents);
            cols[6].Int(x.discount);
            cols[7].Int(x.tax);
            cols[8].Str(std::string_view(&x.returnflag, 1));
            cols[9].Str(std::string_view(&x.linestatus, 1));
            cols[10].Int(x.ship);
            cols[11].Int(x.commit);
            cols[12].Int(x.receipt);
            cols[13].Str(x.instruct);
            cols[14].Str(x.mode);
            cols[15].Str(Text(r, 10, 43));
            ++rows;
          }
          break;
        }
      }
    }
    if (rows == 0) return RecordBatchPtr{};
    auto b = std::make_shared<RecordBatch>();
    b->schema = schema;
    b->num_rows = rows;
    for (auto& c : cols) {
      QUIVER_ASSIGN_OR_RETURN(auto a, c.Finish(options.pool));
      b->columns.push_back(std::move(a));
    }
    next = unit;
    rows_out += rows;
    return RecordBatchPtr(std::move(b));
  }
};

TpchGenerator::TpchGenerator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TpchGenerator::~TpchGenerator() = default;

Result<std::unique_ptr<TpchGenerator>> TpchGenerator::Make(const TpchOptions& options) {
  if (!(options.scale > 0) || options.scale > 100000) {
    return Status::Invalid("tpch: scale must be in (0, 100000], got " + std::to_string(options.scale));
  }
  if (options.batch_rows <= 0) return Status::Invalid("tpch: batch_rows must be positive");
  if (options.pool == nullptr) return Status::Invalid("tpch: pool is required");
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->counts = CountsFor(options.scale);
  impl->schema = TpchSchema(options.table);
  impl->total =
      options.table == TpchTable::kLineitem ? impl->counts.orders : TpchRowCount(options.table, options.scale);
  return std::unique_ptr<TpchGenerator>(new TpchGenerator(std::move(impl)));
}

const SchemaPtr& TpchGenerator::schema() const { return impl_->schema; }
Result<RecordBatchPtr> TpchGenerator::Next() { return impl_->Generate(); }
int64_t TpchGenerator::rows_generated() const { return impl_->rows_out; }

}  // namespace quiver::datagen

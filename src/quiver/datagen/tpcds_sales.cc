// quiver/datagen/tpcds_sales.cc — the fact tables (tpcds_rows.h): the
// orders of the three sales channels with their returned lines, and
// inventory.
//
// An order's values come from separate streams: its line count and which
// lines are returned (so that OrderRows is cheap), its header (date, time,
// customer, outlet), each line (item, promotion, prices) and each return.
// An order's keys are NULL per line (1 in 50 each, as dsdgen's NULLs fall
// on rows). The NULL draws of foreign keys have streams of their own, so that the
// unspecified order in which one call's arguments are evaluated never
// changes a value.
#include <algorithm>

#include "quiver/datagen/tpcds_domains.h"
#include "quiver/datagen/tpcds_rows.h"

namespace quiver::datagen::tpcds {
namespace {

enum Stream : uint64_t { kShape = 7, kHeader = 0, kLine = 2, kLineNulls = 3, kReturn = 4, kReturnNulls = 5 };

constexpr int64_t kMaxLines = 16;

// Line counts of an order per channel.
struct Channel {
  TpcdsTable sales;
  int64_t min_lines, max_lines;
};
constexpr Channel kStore{TpcdsTable::kStoreSales, 8, 16};
constexpr Channel kCatalog{TpcdsTable::kCatalogSales, 4, 14};
constexpr Channel kWeb{TpcdsTable::kWebSales, 8, 16};

// The order's line count and which lines were returned (1 in 10).
struct Shape {
  int64_t lines = 0;
  bool returned[kMaxLines] = {};
};
Shape ShapeOf(const TpcdsContext& c, const Channel& ch, int64_t unit) {
  TpcdsRng r(c.seed, ch.sales, unit, kShape);
  Shape s;
  s.lines = r.Uniform(ch.min_lines, ch.max_lines);
  for (int64_t l = 0; l < s.lines; ++l) s.returned[l] = r.Chance(1, 10);
  return s;
}

// A foreign key that is NULL with probability 1/50.
struct Fk {
  bool null = false;
  int64_t value = 0;
};
Fk Key(TpcdsRng& nulls, int64_t value) { return {nulls.Chance(1, 50), value}; }
// An order's key value, NULL-free until a line draws its NULLs (Relined):
// NULLs fall on rows, as dsdgen's do, so one line of an order can lose its
// customer or date while the others keep them.
Fk Val(int64_t value) { return {false, value}; }
Fk Relined(TpcdsRng& line_nulls, const Fk& k) { return Key(line_nulls, k.value); }
void Put(RowSink& out, const Fk& k) { out.IntOrNull(k.null, k.value); }

// Prices of a line (cents), after dsdgen's pricing rules.
struct Pricing {
  int64_t quantity, wholesale, list, sales, ext_discount, ext_sales, ext_wholesale, ext_list, ext_tax, coupon,
      ship_cost, net_paid, net_paid_inc_tax, net_paid_inc_ship, net_paid_inc_ship_tax, net_profit;
  int64_t tax_percent;
};
Pricing PriceLine(TpcdsRng& r) {
  Pricing p{};
  p.quantity = r.Uniform(1, 100);
  p.wholesale = r.Uniform(100, 10000);
  p.list = p.wholesale * (100 + r.Uniform(0, 200)) / 100;
  p.sales = p.list * (100 - r.Uniform(0, 100)) / 100;
  p.ext_sales = p.sales * p.quantity;
  p.ext_wholesale = p.wholesale * p.quantity;
  p.ext_list = p.list * p.quantity;
  p.ext_discount = p.ext_list - p.ext_sales;
  p.tax_percent = r.Uniform(0, 9);
  p.ext_tax = p.ext_sales * p.tax_percent / 100;
  p.coupon = r.Chance(1, 5) ? p.ext_sales * r.Uniform(0, 100) / 100 : 0;
  p.ship_cost = p.ext_list * r.Uniform(0, 50) / 100;
  p.net_paid = p.ext_sales - p.coupon;
  p.net_paid_inc_tax = p.net_paid + p.ext_tax;
  p.net_paid_inc_ship = p.net_paid + p.ship_cost;
  p.net_paid_inc_ship_tax = p.net_paid_inc_ship + p.ext_tax;
  p.net_profit = p.net_paid - p.ext_wholesale;
  return p;
}

void PutPrices(RowSink& out, const Pricing& p, bool ship) {
  out.Int(p.wholesale).Int(p.list).Int(p.sales).Int(p.ext_discount).Int(p.ext_sales).Int(p.ext_wholesale);
  out.Int(p.ext_list).Int(p.ext_tax).Int(p.coupon);
  if (ship) out.Int(p.ship_cost);
  out.Int(p.net_paid).Int(p.net_paid_inc_tax);
  if (ship) out.Int(p.net_paid_inc_ship).Int(p.net_paid_inc_ship_tax);
  out.Int(p.net_profit);
}

// Amounts of a returned line (cents).
struct Refund {
  int64_t quantity, amount, tax, amount_inc_tax, fee, ship_cost, cash, reversed, credit, net_loss;
};
Refund RefundLine(TpcdsRng& r, const Pricing& p) {
  Refund f{};
  f.quantity = r.Uniform(1, p.quantity);
  f.amount = p.sales * f.quantity;
  f.tax = f.amount * p.tax_percent / 100;
  f.amount_inc_tax = f.amount + f.tax;
  f.fee = r.Uniform(50, 10000);
  f.ship_cost = p.list * f.quantity * r.Uniform(0, 50) / 100;
  f.cash = f.amount_inc_tax * r.Uniform(0, 100) / 100;
  f.reversed = (f.amount_inc_tax - f.cash) * r.Uniform(0, 100) / 100;
  f.credit = f.amount_inc_tax - f.cash - f.reversed;
  f.net_loss = f.tax + f.fee + f.ship_cost;
  return f;
}

void PutRefund(RowSink& out, const Refund& f) {
  out.Int(f.quantity).Int(f.amount).Int(f.tax).Int(f.amount_inc_tax).Int(f.fee).Int(f.ship_cost).Int(f.cash);
  out.Int(f.reversed).Int(f.credit).Int(f.net_loss);
}

// A slowly changing dimension's row (item, store, call center, web site,
// web page) for a sale on Julian day `date_sk`: a business id drawn
// uniformly, then its version current on that day.
int64_t ScdSk(TpcdsRng& r, int64_t rows, int64_t date_sk) {
  return ScdSkAt(r.Uniform(1, ScdIdCount(rows)), DaysFromJulian(date_sk), rows);
}

// Distinct items of one order: a random start and stride over the items'
// business ids, each as its version current on the sale day. Half of the
// orders start among the first fifth of the ids (popular items), so that
// items sell unevenly, as queries comparing an item's revenue with the
// average look for.
struct ItemWalk {
  int64_t start, stride, ids, rows, days;
  int64_t Sk(int64_t line) const { return ScdSkAt((start + line * stride) % ids + 1, days, rows); }
};
ItemWalk WalkItems(TpcdsRng& r, int64_t items, int64_t date_sk) {
  const int64_t ids = ScdIdCount(items);
  const bool popular = r.Chance(1, 2);
  const int64_t start = r.Uniform(0, popular ? std::max<int64_t>(1, ids / 5) - 1 : ids - 1);
  return {start, r.Uniform(1, std::max<int64_t>(1, ids / kMaxLines)), ids, items, DaysFromJulian(date_sk)};
}

// The customer side of an order: who, with which demographics, where.
struct Buyer {
  Fk customer, cdemo, hdemo, addr;
};
// Half the orders come from the first tenth of the customers (regular
// customers, who buy in every channel every year).
Buyer DrawBuyer(TpcdsRng& r, const TpcdsCounts& n) {
  Buyer b;
  const int64_t regulars = std::max<int64_t>(1, n.customer / 10);
  const bool regular = r.Chance(1, 2);
  b.customer = Val(r.Uniform(1, regular ? regulars : n.customer));
  b.cdemo = Val(r.Uniform(1, n.customer_demographics));
  b.hdemo = Val(r.Uniform(1, n.household_demographics));
  b.addr = Val(r.Uniform(1, n.customer_address));
  return b;
}
// (a braced list is evaluated left to right: the NULL draws keep this order)
Buyer Relined(TpcdsRng& line_nulls, const Buyer& b) {
  return {Relined(line_nulls, b.customer), Relined(line_nulls, b.cdemo), Relined(line_nulls, b.hdemo),
          Relined(line_nulls, b.addr)};
}
void PutBuyer(RowSink& out, const Buyer& b) {
  Put(out, b.customer);
  Put(out, b.cdemo);
  Put(out, b.hdemo);
  Put(out, b.addr);
}

// The header of a catalog or web order.
struct RemoteOrder {
  Fk date, time;
  Buyer bill, ship;
  Fk outlet;  // call center or web site
};
RemoteOrder DrawRemoteOrder(const TpcdsContext& c, TpcdsTable table, int64_t unit, int64_t outlets) {
  TpcdsRng r(c.seed, table, unit, kHeader);
  RemoteOrder o;
  o.date = Val(SaleDateSk(r));
  o.time = Val(r.Uniform(0, 86399));
  o.bill = DrawBuyer(r, c.counts);
  o.ship = r.Chance(1, 2) ? o.bill : DrawBuyer(r, c.counts);
  o.outlet = Val(ScdSk(r, outlets, o.date.value));
  return o;
}
RemoteOrder Relined(TpcdsRng& line_nulls, const RemoteOrder& o) {
  return {Relined(line_nulls, o.date), Relined(line_nulls, o.time), Relined(line_nulls, o.bill),
          Relined(line_nulls, o.ship), Relined(line_nulls, o.outlet)};
}

}  // namespace

int64_t OrderRows(const TpcdsContext& c, TpcdsTable table, int64_t unit) {
  const bool returns =
      table == TpcdsTable::kStoreReturns || table == TpcdsTable::kCatalogReturns || table == TpcdsTable::kWebReturns;
  const Channel& ch =
      (table == TpcdsTable::kStoreSales || table == TpcdsTable::kStoreReturns)
          ? kStore
          : ((table == TpcdsTable::kCatalogSales || table == TpcdsTable::kCatalogReturns) ? kCatalog : kWeb);
  const Shape s = ShapeOf(c, ch, unit);
  if (!returns) return s.lines;
  return std::count(s.returned, s.returned + s.lines, true);
}

void WriteStoreOrder(const TpcdsContext& c, int64_t unit, bool returns, RowSink& out) {
  const TpcdsCounts& n = c.counts;
  const Shape shape = ShapeOf(c, kStore, unit);
  TpcdsRng r(c.seed, TpcdsTable::kStoreSales, unit, kHeader);
  const Fk ticket_date = Val(SaleDateSk(r));
  const Fk ticket_time = Val(r.Uniform(8 * 3600, 22 * 3600 - 1));  // store hours
  const Buyer ticket_buyer = DrawBuyer(r, n);
  const Fk ticket_store = Val(ScdSk(r, n.store, ticket_date.value));
  const ItemWalk walk = WalkItems(r, n.item, ticket_date.value);
  for (int64_t l = 0; l < shape.lines; ++l) {
    if (returns && !shape.returned[l]) continue;
    TpcdsRng lr(c.seed, TpcdsTable::kStoreSales, unit * kMaxLines + l, kLine);
    TpcdsRng ln(c.seed, TpcdsTable::kStoreSales, unit * kMaxLines + l, kLineNulls);
    // (declarations are sequenced: the NULL draws keep this order)
    const Fk date = Relined(ln, ticket_date);
    const Fk time = Relined(ln, ticket_time);
    const Buyer buyer = Relined(ln, ticket_buyer);
    const Fk store = Relined(ln, ticket_store);
    const Fk promo = Key(ln, lr.Uniform(1, n.promotion));
    const Pricing p = PriceLine(lr);
    if (!returns) {
      Put(out, date);
      Put(out, time);
      out.Int(walk.Sk(l));
      PutBuyer(out, buyer);
      Put(out, store);
      Put(out, promo);
      out.Int(unit + 1).Int(p.quantity);
      PutPrices(out, p, false);
      out.EndRow();
      continue;
    }
    TpcdsRng rr(c.seed, TpcdsTable::kStoreReturns, unit * kMaxLines + l, kReturn);
    TpcdsRng rn(c.seed, TpcdsTable::kStoreReturns, unit * kMaxLines + l, kReturnNulls);
    const Fk returned = Key(rn, date.value + rr.Uniform(1, 180));
    const Fk return_time = Key(rn, rr.Uniform(8 * 3600, 22 * 3600 - 1));
    const Fk reason = Key(rn, rr.Uniform(1, n.reason));
    const Refund f = RefundLine(rr, p);
    Put(out, returned);
    Put(out, return_time);
    out.Int(walk.Sk(l));
    PutBuyer(out, buyer);
    Put(out, store);
    Put(out, reason);
    out.Int(unit + 1);
    PutRefund(out, f);
    out.EndRow();
  }
}

void WriteCatalogOrder(const TpcdsContext& c, int64_t unit, bool returns, RowSink& out) {
  const TpcdsCounts& n = c.counts;
  const Shape shape = ShapeOf(c, kCatalog, unit);
  const RemoteOrder order = DrawRemoteOrder(c, TpcdsTable::kCatalogSales, unit, n.call_center);
  TpcdsRng r(c.seed, TpcdsTable::kCatalogSales, unit, kShape + 1);
  const Fk order_page = Val(r.Uniform(1, n.catalog_page));
  const ItemWalk walk = WalkItems(r, n.item, order.date.value);
  for (int64_t l = 0; l < shape.lines; ++l) {
    if (returns && !shape.returned[l]) continue;
    TpcdsRng lr(c.seed, TpcdsTable::kCatalogSales, unit * kMaxLines + l, kLine);
    TpcdsRng ln(c.seed, TpcdsTable::kCatalogSales, unit * kMaxLines + l, kLineNulls);
    const RemoteOrder o = Relined(ln, order);
    const Fk page = Relined(ln, order_page);
    const int64_t lag = lr.Uniform(2, 120);
    const Fk ship_date = Key(ln, o.date.value + lag);
    const Fk mode = Key(ln, lr.Uniform(1, n.ship_mode));
    const Fk warehouse = Key(ln, lr.Uniform(1, n.warehouse));
    const Fk promo = Key(ln, lr.Uniform(1, n.promotion));
    const Pricing p = PriceLine(lr);
    if (!returns) {
      Put(out, o.date);
      Put(out, o.time);
      Put(out, ship_date);
      PutBuyer(out, o.bill);
      PutBuyer(out, o.ship);
      Put(out, o.outlet);
      Put(out, page);
      Put(out, mode);
      Put(out, warehouse);
      out.Int(walk.Sk(l));
      Put(out, promo);
      out.Int(unit + 1).Int(p.quantity);
      PutPrices(out, p, true);
      out.EndRow();
      continue;
    }
    TpcdsRng rr(c.seed, TpcdsTable::kCatalogReturns, unit * kMaxLines + l, kReturn);
    TpcdsRng rn(c.seed, TpcdsTable::kCatalogReturns, unit * kMaxLines + l, kReturnNulls);
    const Fk returned = Key(rn, ship_date.value + rr.Uniform(1, 60));
    const Fk return_time = Key(rn, rr.Uniform(0, 86399));
    const Fk return_mode = Key(rn, rr.Uniform(1, n.ship_mode));
    const Fk reason = Key(rn, rr.Uniform(1, n.reason));
    const Refund f = RefundLine(rr, p);
    Put(out, returned);
    Put(out, return_time);
    out.Int(walk.Sk(l));
    PutBuyer(out, o.bill);
    PutBuyer(out, o.ship);
    Put(out, o.outlet);
    Put(out, page);
    Put(out, return_mode);
    Put(out, warehouse);
    Put(out, reason);
    out.Int(unit + 1);
    PutRefund(out, f);
    out.EndRow();
  }
}

void WriteWebOrder(const TpcdsContext& c, int64_t unit, bool returns, RowSink& out) {
  const TpcdsCounts& n = c.counts;
  const Shape shape = ShapeOf(c, kWeb, unit);
  const RemoteOrder order = DrawRemoteOrder(c, TpcdsTable::kWebSales, unit, n.web_site);
  TpcdsRng r(c.seed, TpcdsTable::kWebSales, unit, kShape + 1);
  const ItemWalk walk = WalkItems(r, n.item, order.date.value);
  for (int64_t l = 0; l < shape.lines; ++l) {
    if (returns && !shape.returned[l]) continue;
    TpcdsRng lr(c.seed, TpcdsTable::kWebSales, unit * kMaxLines + l, kLine);
    TpcdsRng ln(c.seed, TpcdsTable::kWebSales, unit * kMaxLines + l, kLineNulls);
    const RemoteOrder o = Relined(ln, order);
    const int64_t lag = lr.Uniform(1, 120);
    const Fk ship_date = Key(ln, o.date.value + lag);
    const Fk page = Key(ln, ScdSk(lr, n.web_page, o.date.value));
    const Fk mode = Key(ln, lr.Uniform(1, n.ship_mode));
    const Fk warehouse = Key(ln, lr.Uniform(1, n.warehouse));
    const Fk promo = Key(ln, lr.Uniform(1, n.promotion));
    const Pricing p = PriceLine(lr);
    if (!returns) {
      Put(out, o.date);
      Put(out, o.time);
      Put(out, ship_date);
      out.Int(walk.Sk(l));
      PutBuyer(out, o.bill);
      PutBuyer(out, o.ship);
      Put(out, page);
      Put(out, o.outlet);
      Put(out, mode);
      Put(out, warehouse);
      Put(out, promo);
      out.Int(unit + 1).Int(p.quantity);
      PutPrices(out, p, true);
      out.EndRow();
      continue;
    }
    TpcdsRng rr(c.seed, TpcdsTable::kWebReturns, unit * kMaxLines + l, kReturn);
    TpcdsRng rn(c.seed, TpcdsTable::kWebReturns, unit * kMaxLines + l, kReturnNulls);
    const Fk returned = Key(rn, ship_date.value + rr.Uniform(1, 60));
    const Fk return_time = Key(rn, rr.Uniform(0, 86399));
    const Fk reason = Key(rn, rr.Uniform(1, n.reason));
    const Refund f = RefundLine(rr, p);
    Put(out, returned);
    Put(out, return_time);
    out.Int(walk.Sk(l));
    PutBuyer(out, o.bill);
    PutBuyer(out, o.ship);
    Put(out, page);
    Put(out, reason);
    out.Int(unit + 1);
    PutRefund(out, f);
    out.EndRow();
  }
}

void WriteInventory(const TpcdsContext& c, int64_t unit, RowSink& out) {
  const TpcdsCounts& n = c.counts;
  // Week-major, then item, then warehouse; every other item sk (1, 3, 5..).
  const int64_t per_week = n.inventory_items * n.warehouse;
  const int64_t week = unit / per_week, item = unit % per_week / n.warehouse, warehouse = unit % n.warehouse;
  TpcdsRng r(c.seed, TpcdsTable::kInventory, unit);
  const bool null = r.Chance(1, 50);
  const int64_t quantity = r.Uniform(0, 1000);
  out.Int(kFirstInventorySk + week * 7).Int(item * 2 + 1).Int(warehouse + 1).IntOrNull(null, quantity);
  out.EndRow();
}

}  // namespace quiver::datagen::tpcds

// quiver/datagen/tpcds.h — the 24 TPC-DS tables (7 fact tables: store_sales,
// store_returns, catalog_sales, catalog_returns, web_sales, web_returns,
// inventory; 17 dimensions), generated deterministically and streamed in
// batches. A generator of our own, written from the TPC-DS specification's
// schema (v3, clause 2) and its published row counts; it is not dsdgen and
// does not reproduce dsdgen's values, only their shapes and domains.
//
// Shapes: the columns of each table in the specification's order, with its
// types: INTEGER columns int32, DECIMAL(p,2) columns decimal128(p,2), DATE
// columns date32, CHAR/VARCHAR columns utf8; the key columns the
// specification declares NOT NULL are non-nullable, every other column is
// nullable.
//
// Row counts (TpcdsRowCount): at scale factor 1 the specification's
// (call_center 6, catalog_page 11,718, customer 100,000, customer_address
// 50,000, customer_demographics 1,920,800, date_dim 73,049,
// household_demographics 7,200, income_band 20, item 18,000, promotion 300,
// reason 35, ship_mode 20, store 12, time_dim 86,400, warehouse 5, web_page
// 60, web_site 30; inventory 261 weeks x warehouses x items / 2 =
// 11,745,000). The fact tables are generated as orders (store tickets of
// 8..16 lines, 240,000 x SF; catalog orders of 4..14 lines, 160,000 x SF;
// web orders of 8..16 lines, 60,000 x SF; about 2.88M / 1.44M / 0.72M
// lines at SF 1), and each line is returned with probability 1/10 (its
// returns row then carries the sale's item, order or ticket number,
// customer and a return date 1..180 days after the sale). The static
// tables (date_dim, time_dim, customer_demographics,
// household_demographics, income_band, reason, ship_mode) keep their size
// at every scale; below SF 1 the other dimensions scale linearly with a
// floor of min(6, their SF 1 count) rows, so that every query has stores,
// warehouses, call centers and sites to group by; above SF 1 they grow as
// SF^e with a per-table exponent that follows the specification's table
// at SF 10 and 100 approximately (e.g. customer SF^0.7: 500k at 10).
//
// Keys: every surrogate key is 1..count of its table (date_dim's d_date_sk
// is the Julian day number: 2415022 = 1900-01-02 .. 2488070 = 2100-01-01,
// time_dim's t_time_sk the second of the day 0..86399), and every non-NULL
// foreign key of a fact row (and of customer, promotion, web_page, store,
// call_center, web_site, catalog_page) names an existing dimension row.
// Foreign keys of fact rows are NULL with probability 1/50 each, per row (an
// order's other lines keep theirs), except item and order / ticket
// numbers. Item, store, call_center, web_page and web_site are slowly changing dimensions as in dsdgen: in each run of
// six rows three business ids (i_item_id, ...) have one, two and three versions with rec_start / rec_end dates, and a
// sale names the version that was current on its day. Half of the orders of every channel come from the first tenth of
// the customers (regular customers buy in every channel every year, as several queries look for).
//
// Value domains follow dsdgen's where the 99 queries filter on them:
// categories and classes of items, colors, units, sizes, the syllable
// words (ought, able, pri, ese, ...) of brands, store names and company
// names, US states and counties (stores, call centers and warehouses
// in Williamson County, TN), demographics as the full cross product
// of gender x marital status x education x purchase estimate x credit
// rating x dependants, buy potentials and income bands, meal times,
// reasons ('reason 28'), ship mode carriers. Sales are dated 1998-01-02 ..
// 2002-12-31 with November and December twice as busy; prices follow
// dsdgen's pricing rules (quantity 1..100, wholesale cost 1.00..100.00,
// list price = cost x (1 + markup 0..2), sales price = list x (1 - discount
// 0..1), extended amounts = unit x quantity, tax 0..9%, coupons on a fifth
// of the lines, net paid / profit / ship cost from them).
//
// Determinism: every value is a pure function of (seed, table, unit) via
// splitmix64 (a unit is a row, or an order of the fact tables); the same
// options give identical batches on every machine, independent of the
// batch size.
//
// Thread safety: one generator per thread; batches are immutable.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/columnar/record_batch_stream.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::datagen {

enum class TpcdsTable {
  kCallCenter,
  kCatalogPage,
  kCatalogReturns,
  kCatalogSales,
  kCustomer,
  kCustomerAddress,
  kCustomerDemographics,
  kDateDim,
  kHouseholdDemographics,
  kIncomeBand,
  kInventory,
  kItem,
  kPromotion,
  kReason,
  kShipMode,
  kStore,
  kStoreReturns,
  kStoreSales,
  kTimeDim,
  kWarehouse,
  kWebPage,
  kWebReturns,
  kWebSales,
  kWebSite,
};

/// The 24 tables, in the order above (alphabetical by name).
const std::vector<TpcdsTable>& AllTpcdsTables();
/// "call_center", "catalog_page", ... "web_site".
std::string_view TpcdsTableName(TpcdsTable table);
/// Parses a name above (lower-case). Invalid lists the names.
Result<TpcdsTable> ParseTpcdsTable(std::string_view name);
/// The table's schema. Pure; thread-safe.
SchemaPtr TpcdsSchema(TpcdsTable table);

/// Rows of a table at `scale` (> 0) with `seed`. For the six sales and
/// returns tables it draws every order's line count (and returns), so it is
/// O(orders); the others are formulas.
int64_t TpcdsRowCount(TpcdsTable table, double scale, uint64_t seed = 42);

struct TpcdsOptions {
  TpcdsTable table = TpcdsTable::kCallCenter;
  /// Scale factor, > 0 (0.1 = about 288,000 store_sales rows), at most 100000.
  double scale = 1.0;
  uint64_t seed = 42;
  /// Rows per batch (> 0); fact tables end a batch at an order boundary, so
  /// a batch may exceed it by up to 15 rows.
  int64_t batch_rows = 64 * 1024;
  /// Pool of every buffer. Required; must be owned by a std::shared_ptr.
  MemoryPool* pool = nullptr;
};

/// Streams one table's batches; only the current batch is held.
class TpcdsGenerator : public RecordBatchStream {
 public:
  /// Invalid for a non-positive or too large scale, batch_rows <= 0 or no pool.
  static Result<std::unique_ptr<TpcdsGenerator>> Make(const TpcdsOptions& options);
  ~TpcdsGenerator() override;
  const SchemaPtr& schema() const override;
  /// The next batch, nullptr at the end. OutOfMemory from the pool (the
  /// generator then stays where it was).
  Result<RecordBatchPtr> Next() override;
  /// Rows returned so far.
  int64_t rows_generated() const;

 private:
  struct Impl;
  explicit TpcdsGenerator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace quiver::datagen

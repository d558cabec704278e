// quiver/datagen/tpcds_rows.h — internal to the TPC-DS generator
// (tpcds.h): table sizes at a scale, the per-unit random stream, the row
// builder the table writers append to, and the writers of each table's
// units (a unit is one row of a dimension or of inventory, one order of a
// sales table, or the returned lines of one order of a returns table).
//
// Thread safety: TpcdsCounts and the writers are pure; a RowSink and a
// TpcdsRng belong to one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/datagen/splitmix64.h"
#include "quiver/datagen/tpcds.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::datagen::tpcds {

/// Rows of each dimension and orders of each sales channel at one scale
/// (tpcds.h describes the rules).
struct TpcdsCounts {
  int64_t call_center = 0, catalog_page = 0, customer = 0, customer_address = 0, customer_demographics = 0,
          date_dim = 0, household_demographics = 0, income_band = 0, item = 0, promotion = 0, reason = 0, ship_mode = 0,
          store = 0, time_dim = 0, warehouse = 0, web_page = 0, web_site = 0;
  int64_t store_tickets = 0, catalog_orders = 0, web_orders = 0;
  /// Weeks of inventory (261) and items counted per week (item / 2).
  int64_t inventory_weeks = 0, inventory_items = 0;
};
TpcdsCounts CountsFor(double scale);

/// Units of a table: rows for dimensions and inventory, orders for the
/// sales and returns tables.
int64_t UnitCount(TpcdsTable table, const TpcdsCounts& counts);

/// Julian day numbers of dates the generator uses.
inline constexpr int64_t kJulianOfUnixEpoch = 2440588;  // 1970-01-01
inline constexpr int64_t kFirstDateSk = 2415022;        // 1900-01-02, date_dim's first row
inline constexpr int64_t kDateDimRows = 73049;          // .. 2100-01-01
inline constexpr int64_t kFirstSaleSk = 2450816;        // 1998-01-02
inline constexpr int64_t kLastSaleSk = 2452640;         // 2002-12-31
inline constexpr int64_t kFirstInventorySk = 2450815;   // 1998-01-01, then weekly

/// A random stream per (seed, table, unit, sub-stream): every value the
/// writers draw comes from one.
class TpcdsRng : public SplitMix64Stream {
 public:
  TpcdsRng(uint64_t seed, TpcdsTable table, int64_t unit, uint64_t stream = 0);
  /// True with probability num / den.
  bool Chance(int64_t num, int64_t den) { return Uniform(0, den - 1) < num; }
  template <typename T, size_t N>
  const T& Pick(const T (&list)[N]) {
    return list[Uniform(0, static_cast<int64_t>(N) - 1)];
  }
};

/// Appends rows column by column in schema order: each row is one call per
/// column (Int for int32 / date32 / decimal unscaled values, Str, Null),
/// then EndRow. Finish turns the rows into a batch on a pool.
class RowSink {
 public:
  /// A sink for rows of `schema` (nullptr: an empty placeholder).
  explicit RowSink(SchemaPtr schema);
  RowSink& Int(int64_t v);
  RowSink& Str(std::string_view s);
  RowSink& Null();
  /// Int(v), or Null when `null`.
  RowSink& IntOrNull(bool null, int64_t v) { return null ? Null() : Int(v); }
  RowSink& StrOrNull(bool null, std::string_view s) { return null ? Null() : Str(s); }
  /// Ends a row; the number of values must equal the schema's columns (a
  /// writer's bug otherwise: checked in Finish).
  void EndRow();
  int64_t rows() const { return rows_; }
  /// The rows as a batch (buffers from `pool`); the sink is empty
  /// afterwards, also on failure (the rows are dropped). Invalid when a row had the wrong number of values or a string
  /// column passed 2 GiB; OutOfMemory from the pool.
  Result<RecordBatchPtr> Finish(MemoryPool* pool);

 private:
  struct Column {
    DataTypePtr type;
    std::vector<int64_t> ints;
    std::string chars;
    std::vector<int32_t> offsets{0};
    std::vector<uint8_t> valid;
    int64_t nulls = 0;
  };
  Result<RecordBatchPtr> Build(MemoryPool* pool);
  void Clear();

  SchemaPtr schema_;
  std::vector<Column> columns_;
  size_t cursor_ = 0;
  int64_t rows_ = 0;
  bool bad_row_ = false;
};

/// What a unit writer knows: the seed and every table's size.
struct TpcdsContext {
  uint64_t seed = 42;
  TpcdsCounts counts;
};

// The writers, one per table, each appending the rows of unit `unit` (0-based).
void WriteCallCenter(const TpcdsContext& c, int64_t unit, RowSink& out);
void WriteCatalogPage(const TpcdsContext& c, int64_t unit, RowSink& out);
void WriteCustomer(const TpcdsContext& c, int64_t unit, RowSink& out);
void WriteCustomerAddress(const TpcdsContext& c, int64_t unit, RowSink& out);
void WriteCustomerDemographics(const TpcdsContext& c, int64_t unit, RowSink& out);
void WriteDateDim(const TpcdsContext& c, int64_t unit, RowSink& out);
void WriteHouseholdDemographics(const TpcdsContext& c, int64_t unit, RowSink& out);
void WriteIncomeBand(const TpcdsContext& c, int64_t unit, RowSink& out);
void WriteInventory(const TpcdsContext& c, int64_t unit, RowSink& out);
void WriteItem(const TpcdsContext& c, int64_t unit, RowSink& out);
void WritePromotion(const TpcdsContext& c, int64_t unit, RowSink& out);
void WriteReason(const TpcdsContext& c, int64_t unit, RowSink& out);
void WriteShipMode(const TpcdsContext& c, int64_t unit, RowSink& out);
void WriteStore(const TpcdsContext& c, int64_t unit, RowSink& out);
void WriteTimeDim(const TpcdsContext& c, int64_t unit, RowSink& out);
void WriteWarehouse(const TpcdsContext& c, int64_t unit, RowSink& out);
void WriteWebPage(const TpcdsContext& c, int64_t unit, RowSink& out);
void WriteWebSite(const TpcdsContext& c, int64_t unit, RowSink& out);
/// Sales and returns: `returns` false writes the order's lines, true only
/// its returned lines (to the returns table's schema).
void WriteStoreOrder(const TpcdsContext& c, int64_t unit, bool returns, RowSink& out);
void WriteCatalogOrder(const TpcdsContext& c, int64_t unit, bool returns, RowSink& out);
void WriteWebOrder(const TpcdsContext& c, int64_t unit, bool returns, RowSink& out);
/// Rows the order writers would append for `unit` (cheap: no values drawn
/// beyond the line count and the return draws).
int64_t OrderRows(const TpcdsContext& c, TpcdsTable table, int64_t unit);

}  // namespace quiver::datagen::tpcds

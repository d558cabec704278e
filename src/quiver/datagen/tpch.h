// quiver/datagen/tpch.h — the eight TPC-H tables (region, nation, supplier,
// customer, part, partsupp, orders, lineitem), generated deterministically
// and streamed in batches.
//
// Shapes follow the TPC-H specification (v3, clause 4.2): the columns of
// each table in order; row counts per scale factor SF (region 5, nation 25,
// supplier 10,000 x SF, customer 150,000 x SF, part 200,000 x SF, partsupp 4
// per part, orders 1,500,000 x SF, lineitem 1..7 lines per order, about
// 6,000,000 x SF); fractional scales allowed (counts are rounded, at least
// 1 row each). Keys and their relationships: order keys are sparse (8 of
// every 32 values used, as dbgen does); every order's customer exists and
// its key is not a multiple of 3 (a third of customers have no orders);
// every lineitem's order exists, and its (partkey, suppkey) is a partsupp
// row; a part's four partsupp suppliers are a quarter of the suppliers
// apart (distinct from SF 0.0004 up); every nation key is
// 0..24 and every region key 0..4. Value domains: dates in
// 1992-01-01..1998-12-31 (orderdate up to 151 days before the end;
// shipdate = orderdate + 1..121, commitdate + 30..90, receiptdate =
// shipdate + 1..30), money as decimal(15,2) (retail price from the part
// key by the spec's formula, extended price = quantity x retail price,
// discount 0.00..0.10, tax 0.00..0.08, account balances -999.99..9,999.99,
// order total price = sum of extendedprice x (1 + tax) x (1 - discount)),
// return flags (R/A before 1995-06-17, else N), line status (O after
// 1995-06-17, else F), order status (F, O or P from its lines), priorities,
// segments, ship modes and instructions from the spec's lists. Free text
// (names, addresses, comments) is drawn from small word lists: same lengths
// as the spec's, not dbgen's text grammar.
//
// Types: keys int64, small counts int32, money decimal128(15,2), dates
// date32, text utf8, all fields non-nullable, no validity bitmaps.
//
// Determinism: every value is a pure function of (seed, table, row) via
// splitmix64; the same options give identical batches on every machine,
// and a row's values do not depend on the batch size.
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

enum class TpchTable { kRegion, kNation, kSupplier, kCustomer, kPart, kPartSupp, kOrders, kLineitem };

/// The eight tables, in the order above (referenced tables first).
const std::vector<TpchTable>& AllTpchTables();
/// "region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem".
std::string_view TpchTableName(TpchTable table);
/// Parses a name above (lower-case). Invalid lists the names.
Result<TpchTable> ParseTpchTable(std::string_view name);
/// The table's schema. Pure; thread-safe.
SchemaPtr TpchSchema(TpchTable table);

/// Rows of a table at `scale` (> 0) with `seed` (only lineitem depends on
/// the seed: it sums the line counts of every order, O(orders)).
int64_t TpchRowCount(TpchTable table, double scale, uint64_t seed = 42);

struct TpchOptions {
  TpchTable table = TpchTable::kRegion;
  /// Scale factor, > 0 (0.01 = 1% of SF 1), at most 100000.
  double scale = 1.0;
  uint64_t seed = 42;
  /// Rows per batch (> 0); lineitem batches end at an order boundary, so
  /// they may exceed it by up to 6 rows.
  int64_t batch_rows = 64 * 1024;
  /// Pool of every buffer. Required; must be owned by a std::shared_ptr.
  MemoryPool* pool = nullptr;
};

/// Streams one table's batches; only the current batch is held.
class TpchGenerator : public RecordBatchStream {
 public:
  /// Invalid for a non-positive or too large scale, batch_rows <= 0 or no pool.
  static Result<std::unique_ptr<TpchGenerator>> Make(const TpchOptions& options);
  ~TpchGenerator() override;
  const SchemaPtr& schema() const override;
  /// The next batch, nullptr at the end. OutOfMemory from the pool (the
  /// generator then stays where it was).
  Result<RecordBatchPtr> Next() override;
  /// Rows returned so far.
  int64_t rows_generated() const;

 private:
  struct Impl;
  explicit TpchGenerator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace quiver::datagen

// quiver/datagen/tpcds.cc — TpcdsGenerator (tpcds.h): streams one table's
// units through its writer (tpcds_rows.h) into batches.
#include "quiver/datagen/tpcds.h"

#include <string>

#include "quiver/datagen/tpcds_rows.h"

namespace quiver::datagen {

using tpcds::RowSink;
using tpcds::TpcdsContext;

struct TpcdsGenerator::Impl {
  TpcdsOptions options;
  TpcdsContext context;
  SchemaPtr schema;
  RowSink sink{nullptr};
  int64_t units = 0, next_unit = 0, rows_out = 0;

  void WriteUnit(int64_t u) {
    const TpcdsContext& c = context;
    switch (options.table) {
      case TpcdsTable::kCallCenter: return tpcds::WriteCallCenter(c, u, sink);
      case TpcdsTable::kCatalogPage: return tpcds::WriteCatalogPage(c, u, sink);
      case TpcdsTable::kCatalogReturns: return tpcds::WriteCatalogOrder(c, u, true, sink);
      case TpcdsTable::kCatalogSales: return tpcds::WriteCatalogOrder(c, u, false, sink);
      case TpcdsTable::kCustomer: return tpcds::WriteCustomer(c, u, sink);
      case TpcdsTable::kCustomerAddress: return tpcds::WriteCustomerAddress(c, u, sink);
      case TpcdsTable::kCustomerDemographics: return tpcds::WriteCustomerDemographics(c, u, sink);
      case TpcdsTable::kDateDim: return tpcds::WriteDateDim(c, u, sink);
      case TpcdsTable::kHouseholdDemographics: return tpcds::WriteHouseholdDemographics(c, u, sink);
      case TpcdsTable::kIncomeBand: return tpcds::WriteIncomeBand(c, u, sink);
      case TpcdsTable::kInventory: return tpcds::WriteInventory(c, u, sink);
      case TpcdsTable::kItem: return tpcds::WriteItem(c, u, sink);
      case TpcdsTable::kPromotion: return tpcds::WritePromotion(c, u, sink);
      case TpcdsTable::kReason: return tpcds::WriteReason(c, u, sink);
      case TpcdsTable::kShipMode: return tpcds::WriteShipMode(c, u, sink);
      case TpcdsTable::kStore: return tpcds::WriteStore(c, u, sink);
      case TpcdsTable::kStoreReturns: return tpcds::WriteStoreOrder(c, u, true, sink);
      case TpcdsTable::kStoreSales: return tpcds::WriteStoreOrder(c, u, false, sink);
      case TpcdsTable::kTimeDim: return tpcds::WriteTimeDim(c, u, sink);
      case TpcdsTable::kWarehouse: return tpcds::WriteWarehouse(c, u, sink);
      case TpcdsTable::kWebPage: return tpcds::WriteWebPage(c, u, sink);
      case TpcdsTable::kWebReturns: return tpcds::WriteWebOrder(c, u, true, sink);
      case TpcdsTable::kWebSales: return tpcds::WriteWebOrder(c, u, false, sink);
      case TpcdsTable::kWebSite: return tpcds::WriteWebSite(c, u, sink);
    }
  }

  Result<RecordBatchPtr> Next() {
    int64_t u = next_unit;
    while (u < units && sink.rows() < options.batch_rows) WriteUnit(u++);
    if (sink.rows() == 0) return RecordBatchPtr{};
    // On OutOfMemory the sink's rows are dropped and the next call starts
    // again from next_unit.
    auto batch = sink.Finish(options.pool);
    if (!batch.ok()) return batch.status();
    next_unit = u;
    rows_out += (*batch)->num_rows;
    return batch;
  }
};

TpcdsGenerator::TpcdsGenerator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TpcdsGenerator::~TpcdsGenerator() = default;

Result<std::unique_ptr<TpcdsGenerator>> TpcdsGenerator::Make(const TpcdsOptions& options) {
  if (!(options.scale > 0) || options.scale > 100000) {
    return Status::Invalid("tpcds: scale must be in (0, 100000], got " + std::to_string(options.scale));
  }
  if (options.batch_rows <= 0) return Status::Invalid("tpcds: batch_rows must be positive");
  if (options.pool == nullptr) return Status::Invalid("tpcds: pool is required");
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->context.seed = options.seed;
  impl->context.counts = tpcds::CountsFor(options.scale);
  impl->schema = TpcdsSchema(options.table);
  impl->sink = RowSink(impl->schema);
  impl->units = tpcds::UnitCount(options.table, impl->context.counts);
  return std::unique_ptr<TpcdsGenerator>(new TpcdsGenerator(std::move(impl)));
}

const SchemaPtr& TpcdsGenerator::schema() const { return impl_->schema; }
Result<RecordBatchPtr> TpcdsGenerator::Next() { return impl_->Next(); }
int64_t TpcdsGenerator::rows_generated() const { return impl_->rows_out; }

}  // namespace quiver::datagen

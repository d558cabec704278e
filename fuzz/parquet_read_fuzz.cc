// libFuzzer target: any bytes as a Parquet file (formats/parquet), read
// from memory under a 256 MiB pool: the footer and schema decoded, then
// every row group with every column (every column chunk, every page
// decoded), each batch validated in full, as `quiver cat` reads a file. A
// crash, hang, leak or runaway allocation is a bug; an error Status is the
// right answer for bad input. Every byte charged must be back when the
// reader and its batches are dropped. Then the page index: every row
// group's offset and column indexes read and checked, a page plan for
// `IS NULL` on each flat field, and every other page's rows of the first
// indexed column read through the offset indexes (OpenRowGroupRange).
#include <cstddef>
#include <cstdint>

#include "quiver/columnar/validate.h"
#include "quiver/formats/parquet/file_reader.h"
#include "quiver/formats/parquet/page_filter.h"
#include "quiver/formats/source.h"

namespace {

using namespace quiver;

// Reads `range` of row group `g` through `plan`, every batch validated.
void ReadRange(const parquet::FileReader& reader, int g, const parquet::RowGroupPagePlan& plan, parquet::RowRange range,
               MemoryPool* pool) {
  auto slices = reader.OpenRowGroupRange(g, {}, plan, range, pool);
  if (!slices.ok()) return;
  while (true) {
    auto b = (*slices)->Next(1000);
    if (!b.ok() || !*b) return;
    if (!ValidateBatch(**b, ValidationLevel::kFull).ok()) __builtin_trap();
  }
}

void ReadPageIndexes(const parquet::FileReader& reader, MemoryPool* pool) {
  const auto& schema = reader.parquet_schema();
  const int fields = static_cast<int>(schema.fields.size());
  std::vector<int> all_fields;
  for (int f = 0; f < fields; ++f) all_fields.push_back(f);
  for (int g = 0; g < reader.num_row_groups(); ++g) {
    std::vector<int> leaves;
    for (int l = 0; l < static_cast<int>(schema.leaves.size()); ++l) leaves.push_back(l);
    auto indexes = parquet::ReadPageIndexes(reader, g, leaves, true, pool);
    if (!indexes.ok()) continue;
    for (int f = 0; f < fields; ++f) {
      parquet::StatsPredicate p;
      p.field = f;
      p.op = parquet::StatsPredicate::Op::kIsNull;
      auto plan = parquet::PlanRowGroupPages(reader, g, std::span(&p, 1), all_fields, pool);
      if (plan.ok() && *plan) {
        for (const auto& r : (*plan)->ranges) ReadRange(reader, g, **plan, r, pool);
      }
    }
    // Every other page of the first flat column with an offset index.
    parquet::RowGroupPagePlan plan;
    plan.offset_indexes.resize(leaves.size());
    for (size_t l = 0; l < leaves.size(); ++l) plan.offset_indexes[l] = (*indexes)[l].offset_index;
    const int64_t rows = reader.metadata().row_groups[static_cast<size_t>(g)].num_rows;
    for (int f = 0; f < fields; ++f) {
      const int leaf = parquet::FlatLeafOf(schema, f);
      if (leaf < 0 || !plan.offset_indexes[static_cast<size_t>(leaf)]) continue;
      const auto& oi = *plan.offset_indexes[static_cast<size_t>(leaf)];
      for (size_t i = 0; i < oi.page_locations.size(); i += 2) {
        ReadRange(reader, g, plan, {oi.page_locations[i].first_row_index, parquet::PageRows(oi, i, rows)}, pool);
      }
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace quiver;
  auto pool = MemoryPool::MakeRoot({"fuzz", int64_t{256} << 20});
  {
    auto source =
        std::make_shared<formats::MemorySource>(Buffer::Unowned(data, static_cast<int64_t>(size)), "fuzz.parquet");
    auto reader = parquet::FileReader::Open(source, pool.get());
    if (reader.ok()) {
      // Every row group, every field (a refused one does not stop the rest:
      // each column is read on its own after the whole-group read).
      for (int g = 0; g < (*reader)->num_row_groups(); ++g) {
        auto batch = (*reader)->ReadRowGroup(g, {}, pool.get());
        if (batch.ok()) {
          if (!ValidateBatch(**batch, ValidationLevel::kFull).ok()) __builtin_trap();
          continue;
        }
        const int fields = static_cast<int>((*reader)->schema()->fields.size());
        for (int f = 0; f < fields; ++f) {
          auto one = (*reader)->ReadRowGroup(g, {f}, pool.get());
          if (one.ok() && !ValidateBatch(**one, ValidationLevel::kFull).ok()) __builtin_trap();
        }
      }
      ReadPageIndexes(**reader, pool.get());
    }
  }
  if (pool->held_bytes() != 0) __builtin_trap();  // everything released
  return 0;
}

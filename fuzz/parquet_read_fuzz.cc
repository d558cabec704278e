// libFuzzer target: any bytes as a Parquet file (formats/parquet), read
// from memory under a 256 MiB pool: the footer and schema decoded, then
// every row group with every column (every column chunk, every page
// decoded), each batch validated in full, as `quiver cat` reads a file. A
// crash, hang, leak or runaway allocation is a bug; an error Status is the
// right answer for bad input. Every byte charged must be back when the
// reader and its batches are dropped.
#include <cstddef>
#include <cstdint>

#include "quiver/columnar/validate.h"
#include "quiver/formats/parquet/file_reader.h"
#include "quiver/formats/source.h"

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
    }
  }
  if (pool->held_bytes() != 0) __builtin_trap();  // everything released
  return 0;
}

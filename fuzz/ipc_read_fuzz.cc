// libFuzzer target: any bytes as an Arrow IPC stream or file (format detected
// from content), read under a 256 MiB pool with full validation; every batch
// that comes back is validated again. A crash, hang, leak or runaway
// allocation is a bug; an error Status is the right answer for bad input.
#include <cstddef>
#include <cstdint>

#include "quiver/columnar/validate.h"
#include "quiver/ipc/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace quiver;
  auto pool = MemoryPool::MakeRoot({"fuzz", int64_t{256} << 20});
  {
    ipc::ReadOptions ro;
    ro.pool = pool.get();
    auto reader = ipc::RecordBatchReader::Open(Buffer::Unowned(data, static_cast<int64_t>(size)), ro);
    if (reader.ok()) {
      while (true) {
        auto batch = (*reader)->Next();
        if (!batch.ok() || *batch == nullptr) break;
        if (!ValidateBatch(**batch, ValidationLevel::kFull).ok()) __builtin_trap();
      }
    }
  }
  if (pool->held_bytes() != 0) __builtin_trap();  // everything released
  return 0;
}

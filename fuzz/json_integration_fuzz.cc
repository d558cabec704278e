// libFuzzer target: any bytes as Arrow integration JSON, read under a 256 MiB
// pool; what comes back must validate fully.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "quiver/columnar/validate.h"
#include "quiver/integration/json_integration.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace quiver;
  auto pool = MemoryPool::MakeRoot({"fuzz", int64_t{256} << 20});
  {
    auto file =
        integration::ReadJsonIntegration(std::string_view(reinterpret_cast<const char*>(data), size), pool.get());
    if (file.ok()) {
      for (const auto& b : file->batches) {
        if (!ValidateBatch(*b, ValidationLevel::kFull).ok()) __builtin_trap();
      }
    }
  }
  if (pool->held_bytes() != 0) __builtin_trap();
  return 0;
}

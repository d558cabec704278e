// quiver/columnar/var_width_output.h — building the offsets and data
// buffers of a new variable-width array (binary, utf8 and their large
// variants) from any source of values: the gathers of Take (take.h) and of
// the join's row format (join/row_format.h GatherField) write their
// variable-width output through it.
//
// Layout written (Arrow): n + 1 offsets (int32 when !large, int64 when
// large), the first 0 and each next one the previous plus the value's size;
// the values' bytes back to back in a data buffer of max(1, total) bytes.
//
// Thread safety: pure functions over caller-owned memory.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "quiver/base/status.h"
#include "quiver/memory/buffer.h"
#include "quiver/memory/memory_pool.h"

namespace quiver {

/// Allocates from `pool` the offsets ((n + 1) x 4 or 8 bytes, uninitialised)
/// and data (max(1, total_bytes) bytes, uninitialised) buffers of a
/// variable-width output of `n` values holding `total_bytes` bytes.
/// Errors: Invalid "<what>: <total> bytes of output values overflow 32-bit
/// offsets" when !large and total_bytes > INT32_MAX (nothing allocated);
/// OutOfMemory from `pool`.
Status AllocateVarWidthBuffers(MemoryPool* pool, int64_t n, bool large, int64_t total_bytes, const std::string& what,
                               std::shared_ptr<Buffer>* offsets, std::shared_ptr<Buffer>* data);

/// Builds the offsets and data buffers of `n` values, value j being
/// `value_at(j)` (a std::string_view; return an empty one for a null). Calls
/// value_at twice per value (a sizing pass, then a copying pass), so it must
/// be cheap and give the same bytes both times. Errors: as
/// AllocateVarWidthBuffers.
template <typename ValueAt>
Status BuildVarWidthBuffers(MemoryPool* pool, int64_t n, bool large, const std::string& what, ValueAt&& value_at,
                            std::shared_ptr<Buffer>* offsets, std::shared_ptr<Buffer>* data) {
  int64_t total = 0;
  for (int64_t j = 0; j < n; ++j) total += static_cast<int64_t>(std::string_view(value_at(j)).size());
  QUIVER_RETURN_NOT_OK(AllocateVarWidthBuffers(pool, n, large, total, what, offsets, data));
  uint8_t* o = (*offsets)->mutable_data();
  uint8_t* d = (*data)->mutable_data();
  int64_t pos = 0;
  auto store = [&](int64_t i) {
    if (large) {
      std::memcpy(o + i * 8, &pos, 8);
    } else {
      const int32_t p32 = static_cast<int32_t>(pos);
      std::memcpy(o + i * 4, &p32, 4);
    }
  };
  for (int64_t j = 0; j < n; ++j) {
    store(j);
    const std::string_view v = value_at(j);
    if (!v.empty()) std::memcpy(d + pos, v.data(), v.size());
    pos += static_cast<int64_t>(v.size());
  }
  store(n);
  return Status::OK();
}

}  // namespace quiver

// quiver/columnar/var_width_output.cc — see var_width_output.h.
#include "quiver/columnar/var_width_output.h"

#include <algorithm>
#include <limits>

#include "quiver/base/result.h"

namespace quiver {

Status AllocateVarWidthBuffers(MemoryPool* pool, int64_t n, bool large, int64_t total_bytes, const std::string& what,
                               std::shared_ptr<Buffer>* offsets, std::shared_ptr<Buffer>* data) {
  if (!large && total_bytes > std::numeric_limits<int32_t>::max()) {
    return Status::Invalid(what + ": " + std::to_string(total_bytes) +
                           " bytes of output values overflow 32-bit offsets");
  }
  QUIVER_ASSIGN_OR_RETURN(*offsets, Buffer::Allocate(pool, (n + 1) * (large ? 8 : 4)));
  QUIVER_ASSIGN_OR_RETURN(*data, Buffer::Allocate(pool, std::max<int64_t>(1, total_bytes)));
  return Status::OK();
}

}  // namespace quiver

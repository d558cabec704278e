#include "quiver/formats/read_buffer.h"

#include "quiver/memory/allocator.h"

namespace quiver::formats {

Result<std::shared_ptr<Buffer>> AllocateReadBuffer(MemoryPool* pool, int64_t size_bytes) {
  if (size_bytes < kReadBufferClassMinBytes) return Buffer::Allocate(pool, size_bytes);
  const int64_t class_bytes = SystemMappedBlockBytes(size_bytes);
  if (class_bytes < size_bytes) return Buffer::Allocate(pool, size_bytes);  // -1: too large to round
  QUIVER_ASSIGN_OR_RETURN(auto buf, Buffer::Allocate(pool, class_bytes));
  QUIVER_RETURN_NOT_OK(buf->Resize(size_bytes, /*shrink_to_fit=*/false));
  return buf;
}

}  // namespace quiver::formats

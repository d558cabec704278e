// quiver/formats/read_buffer.h — the buffers the file readers fill whole:
// file bytes read (LocalFileSource::ReadAt) and decompressed pages
// (parquet/page_reader.h). Their sizes differ by a few bytes from one
// column chunk or page to the next; allocated exactly, a freed one is
// often a little too small for the next, which then extends the heap
// instead of taking its place, and every new page of memory costs a first
// touch (about 12 us on the virtualised hosts measured: a Parquet scan of
// SF1 lineitem grew glibc's heap to 7 MiB for 2.3 MiB of live buffers,
// docs/benchmarks.md "Parquet scans"). From 64 KiB they are allocated in
// size classes (SystemMappedBlockBytes: a sixteenth of a power of two,
// at most 6.25% over), so a freed buffer serves the next of its class.
//
// Thread safety: as MemoryPool::Allocate.
#pragma once

#include <cstdint>
#include <memory>

#include "quiver/base/result.h"
#include "quiver/memory/buffer.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::formats {

/// Smallest size given a size class (smaller buffers are exact).
inline constexpr int64_t kReadBufferClassMinBytes = int64_t{64} << 10;

/// A buffer of `size_bytes` (size() == size_bytes, contents uninitialised)
/// whose allocation, and charge to `pool`, is its size class from
/// kReadBufferClassMinBytes. Errors: OutOfMemory from the pool.
Result<std::shared_ptr<Buffer>> AllocateReadBuffer(MemoryPool* pool, int64_t size_bytes);

}  // namespace quiver::formats

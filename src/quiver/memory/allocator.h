// quiver/memory/allocator.h — byte sources ("allocators" in the design notes'
// three memory roles; cf. Velox MemoryAllocator, Arrow MemoryPool backends).
//
// An Allocator only hands out and takes back bytes; it keeps no accounting
// (that is the MemoryPool's job). Four kinds, selectable at run time:
//   system   — glibc malloc (posix_memalign / free) below 1 MiB, a private
//              mapping per block from 1 MiB (kSystemMapBlockBytes); freed
//              mappings are kept for the next request of the same size or
//              of at least half their size (at most 64 of them, 256 MiB;
//              the oldest go first, and any kept 2 s unused; ReleaseFreeMemory
//              unmaps them), so that the next statement's batches,
//              relations and aggregate tables take pages already faulted
//              in. quiver never lets
//              jemalloc or mimalloc interpose on malloc: jemalloc is linked
//              from a symbol-renamed static archive and mimalloc is opened
//              with dlopen(RTLD_LOCAL), so `system` really is glibc.
//   jemalloc — mallocx / sdallocx / xallocx of a private jemalloc copy.
//   mimalloc — mi_malloc_aligned / mi_free / mi_expand of libmimalloc.so.2.
//   mmap     — one private anonymous mapping per allocation, unmapped on Free.
//
// Thread safety: every Allocator is safe to call from any thread.
// Lifetime: the instances returned by GetAllocator live until process exit.
#pragma once

#include <cstdint>
#include <string_view>

#include "quiver/base/result.h"

namespace quiver {

enum class AllocatorKind { kSystem, kJemalloc, kMimalloc, kMmap };

/// The `system` allocator gives blocks of at least this many bytes their own
/// private mapping instead of glibc malloc (whose dynamic mmap threshold
/// would otherwise keep freed large blocks resident in its arenas; see
/// allocator.cc). Smaller blocks are glibc's.
inline constexpr int64_t kSystemMapBlockBytes = int64_t{1} << 20;

/// The bytes the `system` allocator maps for a block of `size_bytes` (at
/// least kSystemMapBlockBytes): rounded up to a sixteenth of the largest
/// power of two not above it (64 KiB steps from 1 MiB, 512 KiB from 8 MiB,
/// 8 MiB from 128 MiB; at most 6.25% more, pages never touched unless a
/// later block of the class uses them). Blocks of nearly the same size (a
/// column chunk's pages and dictionaries, the batches of a scan) share a
/// class, so a freed one's kept mapping serves the next without page
/// faults. -1 when the rounding would overflow. Thread safety: pure.
int64_t SystemMappedBlockBytes(int64_t size_bytes) noexcept;

/// "system", "jemalloc", "mimalloc" or "mmap".
std::string_view AllocatorKindName(AllocatorKind kind);

/// Parses an allocator name (as above). Invalid names the accepted values.
Result<AllocatorKind> ParseAllocatorKind(std::string_view name);

class Allocator {
 public:
  virtual ~Allocator() = default;

  virtual AllocatorKind kind() const noexcept = 0;
  std::string_view name() const noexcept { return AllocatorKindName(kind()); }

  /// Returns `size_bytes` (> 0) bytes aligned to `alignment` (a power of two,
  /// >= 8, <= 4096), or nullptr when the allocator cannot give them. Never
  /// throws, never aborts.
  virtual uint8_t* Allocate(int64_t size_bytes, int64_t alignment) noexcept = 0;

  /// Returns a block from Allocate of this allocator; `size_bytes` and
  /// `alignment` must be those it was allocated (or last resized) with.
  virtual void Free(uint8_t* ptr, int64_t size_bytes, int64_t alignment) noexcept = 0;

  /// Shrinks a block to `new_size_bytes` (< its size) at the same address
  /// when the allocator can (jemalloc xallocx, mimalloc in-place, mmap
  /// partial munmap); returns false, with the block unchanged, otherwise.
  /// On true, the block must later be freed with `new_size_bytes`.
  virtual bool ShrinkInPlace(uint8_t* ptr, int64_t old_size_bytes, int64_t new_size_bytes, int64_t alignment) noexcept {
    (void)ptr;
    (void)old_size_bytes;
    (void)new_size_bytes;
    (void)alignment;
    return false;
  }

  /// Moves or resizes a block to `new_size_bytes`, keeping the first
  /// min(old, new) bytes. Returns the new address, or nullptr with the old
  /// block untouched and still owned by the caller. Default: Allocate + copy
  /// + Free.
  virtual uint8_t* Reallocate(uint8_t* ptr, int64_t old_size_bytes, int64_t new_size_bytes, int64_t alignment) noexcept;

  /// Bytes the allocator reserves from the OS right now, where it reports
  /// it (jemalloc stats.resident, mimalloc process info); -1 if unknown.
  virtual int64_t reserved_bytes() const noexcept { return -1; }

  /// Hands memory the allocator holds free back to the OS now (system:
  /// malloc_trim(0), which also returns free pages inside glibc's arenas;
  /// jemalloc: purges every arena's dirty and muzzy pages; mimalloc:
  /// mi_collect(true); mmap: nothing, it holds none). Blocks in use are not
  /// touched. Costs about a millisecond per GiB of free heap, so callers
  /// run it off the request path (e.g. a sweeper after statements end).
  /// Thread-safe.
  virtual void ReleaseFreeMemory() noexcept {}
};

/// Returns the process-wide instance of an allocator kind. IOError when the
/// library behind it cannot be loaded (e.g. libmimalloc.so.2 missing).
Result<Allocator*> GetAllocator(AllocatorKind kind);

/// The glibc trim threshold ConfigureProcessMalloc sets: freed arena memory
/// up to this much stays for the next statement.
inline constexpr int64_t kProcessTrimThresholdBytes = int64_t{256} << 20;

/// Process-wide glibc malloc settings for executables that own their
/// process (the `quiver` tool calls it first thing; a library embedding
/// quiver leaves malloc alone). Fixes glibc's mmap threshold at
/// kSystemMapBlockBytes (no dynamic raise: blocks from 1 MiB are the system
/// allocator's own mappings anyway) and raises its trim threshold to
/// 256 MiB, so that the chunks a statement frees stay in the arenas for
/// the next statement instead of being unmapped and faulted in again (TPC-H
/// Q18 at scale 1: 14,000 of its 21,000 page faults per run). The memory
/// still goes back: ReleaseFreeMemory (malloc_trim(0)), which the server
/// runs once its statements have ended. Returns false when glibc refused a
/// setting. Not thread-safe: call before starting threads.
bool ConfigureProcessMalloc() noexcept;

/// The kind named by the QUIVER_ALLOCATOR environment variable, or system
/// when it is unset. Invalid when it names no allocator.
Result<AllocatorKind> AllocatorKindFromEnvironment();

}  // namespace quiver

// python/src/jemalloc_unavailable.cc — stand-ins for the renamed jemalloc
// entry points (quiver_je_*, cmake/rename_jemalloc.cmake) in the Python
// module. Debian's jemalloc archive uses initial-exec TLS, which a module
// loaded by dlopen cannot get ("cannot allocate memory in static TLS
// block"), so the module links these instead: mallctl fails, and
// GetAllocator(kJemalloc) then reports NotImplemented (memory/allocator.cc).
// The allocation functions are never reached; they fail safely if they are.
#include <cerrno>
#include <cstddef>

extern "C" {
void* quiver_je_mallocx(size_t, int) { return nullptr; }
void* quiver_je_rallocx(void*, size_t, int) { return nullptr; }
size_t quiver_je_xallocx(void*, size_t size, size_t, int) { return size == 0 ? 1 : 0; }
size_t quiver_je_nallocx(size_t, int) { return 0; }
void quiver_je_sdallocx(void*, size_t, int) {}
int quiver_je_mallctl(const char*, void*, size_t*, void*, size_t) { return ENOENT; }
}

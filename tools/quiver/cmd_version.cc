// quiver --version: the version, the build type and the versions of the
// codec and allocator libraries this binary uses (issue 10 item 6).
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <lz4.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <string>

#include "quiver/cli.h"

#ifndef QUIVER_VERSION
#define QUIVER_VERSION "unknown"
#endif
#ifndef QUIVER_BUILD_TYPE
#define QUIVER_BUILD_TYPE "unknown"
#endif

// jemalloc, linked from the symbol-renamed archive (memory/allocator.cc).
extern "C" int quiver_je_mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen);

namespace quiver::cli {
namespace {

std::string JemallocVersion() {
  const char* version = nullptr;
  size_t len = sizeof(version);
  if (quiver_je_mallctl("version", &version, &len, nullptr, 0) != 0 || version == nullptr) return "unknown";
  std::string v = version;
  // "5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c": keep "5.3.0".
  if (auto dash = v.find('-'); dash != std::string::npos) v.resize(dash);
  return v;
}

/// mimalloc is opened on demand (memory/allocator.cc); report it without
/// keeping it loaded.
std::string MimallocVersion() {
  void* handle = dlopen("libmimalloc.so.2", RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) return "not installed";
  std::string out = "unknown";
  if (auto* version = reinterpret_cast<int (*)()>(dlsym(handle, "mi_version")); version != nullptr) {
    const int v = version();  // e.g. 212 for 2.1.2
    out = std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." + std::to_string(v % 10);
  }
  dlclose(handle);
  return out;
}

}  // namespace

std::string VersionText() {
  std::string out = std::string("quiver ") + QUIVER_VERSION + " (" + QUIVER_BUILD_TYPE + " build";
#ifdef QUIVER_SANITIZERS
  if (std::string(QUIVER_SANITIZERS).size() > 0) out += std::string(", sanitizers ") + QUIVER_SANITIZERS;
#endif
  out += ")\n";
  out += std::string("codecs: lz4 ") + LZ4_versionString() + ", zstd " + ZSTD_versionString() + ", zlib " +
         zlibVersion() + "\n";
  out += "allocators: system (glibc " + std::string(gnu_get_libc_version()) + "), jemalloc " + JemallocVersion() +
         " (linked, symbols renamed), mimalloc " + MimallocVersion() + ", mmap";
  return out;
}

}  // namespace quiver::cli

// quiver/objstore/curl_library.cc — see curl_library.h.
#include "quiver/objstore/curl_library.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace quiver::objstore {

namespace {

// Resolves `name` into `slot` (a member of CurlLibrary); false when missing.
template <typename Fn>
bool Resolve(void* handle, const char* name, Fn* slot) {
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) return false;
  *slot = reinterpret_cast<Fn>(symbol);
  return true;
}

struct LoadedCurl {
  CurlLibrary library;
  Status status;
};

const LoadedCurl& Loaded() {
  // A function-local static: initialized once, thread-safely, on first use.
  static const LoadedCurl loaded = [] {
    LoadedCurl out;
    Result<CurlLibrary> opened = OpenCurlLibrary(kCurlSoname);
    if (!opened.ok()) {
      out.status = opened.status();
      return out;
    }
    out.library = *opened;
    const CURLcode rc = out.library.global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
      out.status = Status::IOError(std::string("curl_global_init failed: ") + out.library.easy_strerror(rc));
    }
    return out;
  }();
  return loaded;
}

}  // namespace

Result<CurlLibrary> OpenCurlLibrary(const char* soname) {
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Status::IOError(std::string("cannot load ") + soname +
                           ", which quiver needs for HTTP (S3 object stores, result fetch): " +
                           (why != nullptr ? why : "dlopen failed") + " (Debian package libcurl4)");
  }
  CurlLibrary lib;
  struct Entry {
    const char* name;
    bool resolved;
  };
  const Entry entries[] = {
      {"curl_global_init", Resolve(handle, "curl_global_init", &lib.global_init)},
      {"curl_easy_init", Resolve(handle, "curl_easy_init", &lib.easy_init)},
      {"curl_easy_cleanup", Resolve(handle, "curl_easy_cleanup", &lib.easy_cleanup)},
      {"curl_easy_reset", Resolve(handle, "curl_easy_reset", &lib.easy_reset)},
      {"curl_easy_setopt", Resolve(handle, "curl_easy_setopt", &lib.easy_setopt)},
      {"curl_easy_getinfo", Resolve(handle, "curl_easy_getinfo", &lib.easy_getinfo)},
      {"curl_easy_perform", Resolve(handle, "curl_easy_perform", &lib.easy_perform)},
      {"curl_easy_strerror", Resolve(handle, "curl_easy_strerror", &lib.easy_strerror)},
      {"curl_slist_append", Resolve(handle, "curl_slist_append", &lib.slist_append)},
      {"curl_slist_free_all", Resolve(handle, "curl_slist_free_all", &lib.slist_free_all)},
      {"curl_multi_init", Resolve(handle, "curl_multi_init", &lib.multi_init)},
      {"curl_multi_cleanup", Resolve(handle, "curl_multi_cleanup", &lib.multi_cleanup)},
      {"curl_multi_add_handle", Resolve(handle, "curl_multi_add_handle", &lib.multi_add_handle)},
      {"curl_multi_remove_handle", Resolve(handle, "curl_multi_remove_handle", &lib.multi_remove_handle)},
      {"curl_multi_setopt", Resolve(handle, "curl_multi_setopt", &lib.multi_setopt)},
      {"curl_multi_perform", Resolve(handle, "curl_multi_perform", &lib.multi_perform)},
      {"curl_multi_poll", Resolve(handle, "curl_multi_poll", &lib.multi_poll)},
      {"curl_multi_wakeup", Resolve(handle, "curl_multi_wakeup", &lib.multi_wakeup)},
      {"curl_multi_info_read", Resolve(handle, "curl_multi_info_read", &lib.multi_info_read)},
      {"curl_version_info", Resolve(handle, "curl_version_info", &lib.version_info)},
  };
  for (const Entry& e : entries) {
    if (!e.resolved) {
      return Status::IOError(std::string(soname) + " has no function " + e.name +
                             " (a libcurl older than the headers quiver was built with?)");
    }
  }
  return lib;
}

Result<const CurlLibrary*> LoadCurl() {
  const LoadedCurl& loaded = Loaded();
  if (!loaded.status.ok()) return loaded.status;
  return &loaded.library;
}

const CurlLibrary& Curl() {
  const LoadedCurl& loaded = Loaded();
  if (!loaded.status.ok()) {
    std::fprintf(stderr, "quiver: libcurl used before LoadCurl succeeded: %s\n", loaded.status.ToString().c_str());
    std::abort();
  }
  return loaded.library;
}

}  // namespace quiver::objstore

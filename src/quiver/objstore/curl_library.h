// quiver/objstore/curl_library.h — libcurl loaded on first use.
//
// quiver's executables and libraries do not link libcurl: the HTTP users (the
// S3 client, the fetch path's RPC client and download engine, the serve
// benchmark) reach it through the function table below, which LoadCurl()
// fills with dlopen("libcurl.so.4") and dlsym the first time HTTP is needed.
// libcurl and the two dozen libraries it links (nghttp2, GnuTLS, Kerberos,
// LDAP, ...) carried most of the start-up relocations of every quiver
// process, including the ones that never speak HTTP (`quiver --version`:
// about 896 page faults and 29 ms of CPU before, see docs/benchmarks.md
// "Parquet scans"). The headers are still curl's own, so the types, option
// names and constants are checked at compile time.
//
// Thread safety: LoadCurl is thread-safe (the first caller loads, others wait
// for it); the table it returns is immutable and lives until the process
// exits (the library is never unloaded). libcurl's own rules hold for the
// handles (an easy handle is used by one thread at a time).
#pragma once

#include <curl/curl.h>

#include "quiver/base/result.h"

namespace quiver::objstore {

/// The libcurl functions quiver calls, with libcurl's own signatures (curl.h
/// and multi.h; the variadic ones take the same arguments as the functions
/// they point to). Every member is non-null in a table LoadCurl returned.
struct CurlLibrary {
  decltype(&::curl_global_init) global_init = nullptr;
  decltype(&::curl_easy_init) easy_init = nullptr;
  decltype(&::curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&::curl_easy_reset) easy_reset = nullptr;
  decltype(&::curl_easy_setopt) easy_setopt = nullptr;
  decltype(&::curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&::curl_easy_perform) easy_perform = nullptr;
  decltype(&::curl_easy_strerror) easy_strerror = nullptr;
  decltype(&::curl_slist_append) slist_append = nullptr;
  decltype(&::curl_slist_free_all) slist_free_all = nullptr;
  decltype(&::curl_multi_init) multi_init = nullptr;
  decltype(&::curl_multi_cleanup) multi_cleanup = nullptr;
  decltype(&::curl_multi_add_handle) multi_add_handle = nullptr;
  decltype(&::curl_multi_remove_handle) multi_remove_handle = nullptr;
  decltype(&::curl_multi_setopt) multi_setopt = nullptr;
  decltype(&::curl_multi_perform) multi_perform = nullptr;
  decltype(&::curl_multi_poll) multi_poll = nullptr;
  decltype(&::curl_multi_wakeup) multi_wakeup = nullptr;
  decltype(&::curl_multi_info_read) multi_info_read = nullptr;
  decltype(&::curl_version_info) version_info = nullptr;
};

/// The name LoadCurl opens: libcurl's ABI 4 soname (libcurl 7.16 and later,
/// curl 8 included; Debian's libcurl4 package).
inline constexpr const char* kCurlSoname = "libcurl.so.4";

/// Loads libcurl (kCurlSoname) once per process, resolves every member of
/// CurlLibrary and runs curl_global_init(CURL_GLOBAL_DEFAULT); later calls
/// return the same table, or the same error. The table is never freed.
/// Errors (IOError): the library cannot be opened (the message names it,
/// says that S3 and fetch need it, gives dlerror's text and the Debian
/// package, libcurl4), a function is missing from it (named: a libcurl older
/// than the headers quiver was built with), or curl_global_init failed (its
/// code).
Result<const CurlLibrary*> LoadCurl();

/// The table of a LoadCurl that succeeded. Only for code that holds a handle
/// made through it (a CURL* or CURLM* exists only after LoadCurl succeeded);
/// calling it before is a programmer error (aborts).
const CurlLibrary& Curl();

/// Opens `soname` with dlopen and resolves every member of a new table,
/// without caching and without curl_global_init: LoadCurl's loader, public
/// for tests (a missing library, a library that is not libcurl). IOError
/// naming `soname` and dlerror's text when it cannot be opened, or the first
/// function it lacks. The opened library stays loaded.
Result<CurlLibrary> OpenCurlLibrary(const char* soname);

}  // namespace quiver::objstore

// LoadCurl (curl_library.h): libcurl is opened on first use, not at process
// start; the table works; a missing or wrong library is a clear error.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <cstdio>
#include <string>

#include "quiver/objstore/curl_library.h"
#include "quiver/objstore/curl_util.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::objstore {
namespace {

// Whether libcurl was in the process before any test ran (static
// initialization of this file): the test executable links quiver_objstore,
// which must not pull libcurl in.
const bool kCurlMappedAtStart = dlopen(kCurlSoname, RTLD_NOW | RTLD_NOLOAD) != nullptr;

TEST(CurlLibrary, NotLoadedUntilFirstUse) {
  EXPECT_FALSE(kCurlMappedAtStart) << "libcurl was loaded at start-up: something links it";
  ASSERT_OK_AND_ASSIGN(const CurlLibrary* curl, LoadCurl());
  ASSERT_NE(curl, nullptr);
  EXPECT_NE(dlopen(kCurlSoname, RTLD_NOW | RTLD_NOLOAD), nullptr);
}

TEST(CurlLibrary, LoadsOnceAndEveryFunctionWorks) {
  ASSERT_OK_AND_ASSIGN(const CurlLibrary* first, LoadCurl());
  ASSERT_OK_AND_ASSIGN(const CurlLibrary* second, LoadCurl());
  EXPECT_EQ(first, second);
  EXPECT_EQ(&Curl(), first);
  const curl_version_info_data* info = first->version_info(CURLVERSION_NOW);
  ASSERT_NE(info, nullptr);
  EXPECT_GE(info->version_num, 0x074400u) << info->version;  // 7.68: curl_multi_wakeup
  EXPECT_STREQ(first->easy_strerror(CURLE_OK), "No error");
  EXPECT_STREQ(first->easy_strerror(CURLE_COULDNT_CONNECT), "Couldn't connect to server");

  ASSERT_OK_AND_ASSIGN(CurlEasyPtr easy, MakeEasy());
  EXPECT_EQ(first->easy_setopt(easy.get(), CURLOPT_URL, "http://127.0.0.1:1/x"), CURLE_OK);
  EXPECT_EQ(first->easy_setopt(easy.get(), CURLOPT_CONNECTTIMEOUT_MS, 2000L), CURLE_OK);
  // Nothing listens on port 1: the request fails to connect, through the table.
  HttpRequest request;
  request.url = "http://127.0.0.1:1/x";
  request.connect_timeout_ms = 2000;
  const Result<HttpResponse> reply = Perform(easy.get(), request);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kIOError);
  EXPECT_NE(reply.status().message().find("Couldn't connect to server"), std::string::npos)
      << reply.status().ToString();

  CurlSlistPtr list(first->slist_append(nullptr, "A: 1"));
  ASSERT_TRUE(list != nullptr);
  EXPECT_STREQ(list->data, "A: 1");
  CURLM* multi = first->multi_init();
  ASSERT_NE(multi, nullptr);
  EXPECT_EQ(first->multi_wakeup(multi), CURLM_OK);
  EXPECT_EQ(first->multi_cleanup(multi), CURLM_OK);
}

TEST(CurlLibrary, MissingLibraryIsAnErrorNamingIt) {
  const Result<CurlLibrary> r = OpenCurlLibrary("libquiver-no-such-curl.so.4");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIOError);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("cannot load libquiver-no-such-curl.so.4"), std::string::npos) << m;
  EXPECT_NE(m.find("S3 object stores"), std::string::npos) << m;
  EXPECT_NE(m.find("libcurl4"), std::string::npos) << m;
}

TEST(CurlLibrary, LibraryWithoutCurlIsAnErrorNamingTheFunction) {
  const Result<CurlLibrary> r = OpenCurlLibrary("libz.so.1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIOError);
  EXPECT_EQ(r.status().message(),
            "libz.so.1 has no function curl_global_init (a libcurl older than the headers quiver was built with?)");
}

#ifdef QUIVER_BINARY
// `quiver --version` (no HTTP) never opens libcurl: the dynamic loader's
// list of the files it loads names no libcurl.
TEST(CurlLibrary, QuiverVersionDoesNotLoadCurl) {
  struct stat st;
  if (stat(QUIVER_BINARY, &st) != 0) GTEST_SKIP() << "quiver binary not built";
  FILE* p = popen((std::string("LD_DEBUG=files '") + QUIVER_BINARY + "' --version 2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  ASSERT_EQ(pclose(p), 0) << out;
  EXPECT_NE(out.find("file=libzstd.so.1"), std::string::npos) << out;  // LD_DEBUG took effect
  EXPECT_NE(out.find("quiver "), std::string::npos) << out;
  EXPECT_EQ(out.find("libcurl"), std::string::npos) << out;
}
#endif

}  // namespace
}  // namespace quiver::objstore

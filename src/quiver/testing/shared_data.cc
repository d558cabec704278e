// quiver/testing/shared_data.cc — the shared-data folder from the environment
// or the compile-time default.
#include "quiver/testing/shared_data.h"

#include <cstdlib>

#ifndef QUIVER_DEFAULT_SHARED_DIR
#error "QUIVER_DEFAULT_SHARED_DIR must name the default shared data folder"
#endif
#ifndef QUIVER_SOURCE_DIR_FOR_TESTS
#error "QUIVER_SOURCE_DIR_FOR_TESTS must name the source folder"
#endif

namespace quiver::testing {

std::filesystem::path SharedDataDir() {
  const char* from_env = std::getenv("QUIVER_SHARED_DIR");
  if (from_env != nullptr && from_env[0] != '\0') return std::filesystem::path(from_env);
  return std::filesystem::path(QUIVER_DEFAULT_SHARED_DIR);
}

std::filesystem::path SourceDir() { return std::filesystem::path(QUIVER_SOURCE_DIR_FOR_TESTS); }

}  // namespace quiver::testing

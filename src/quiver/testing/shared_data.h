// quiver/testing/shared_data.h — where the tests find the shared data
// (../shared: arrow-testing gold files, real-world and peer samples, fuzz
// corpora), as nanoarrow's tests do: the environment first, then the build's
// default.
//
// Thread safety: SharedDataDir() reads the environment on each call
// (getenv); call it while no thread changes the environment.
#pragma once

#include <filesystem>

namespace quiver::testing {

/// The shared-data folder: $QUIVER_SHARED_DIR when set and not empty,
/// otherwise the path compiled into quiver_testing (the checkout's
/// ../shared). The folder is not checked to exist: suites that list it
/// report what they find (an absent folder lists nothing).
std::filesystem::path SharedDataDir();

/// The checkout's source folder (compiled into quiver_testing), for inputs
/// kept with the sources such as the fuzz corpora (fuzz/corpus/<target>).
std::filesystem::path SourceDir();

}  // namespace quiver::testing

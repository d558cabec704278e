// quiver/testing/sanitizers.h — which sanitizer the test binary is built
// with, for the few checks that a sanitizer changes: AddressSanitizer
// replaces malloc (so tests about glibc's heap do not apply) and reads are
// about 30x slower; both ASan and ThreadSanitizer count their shadow memory
// in the resident set (so RSS bounds are about the allocator only in plain
// builds).
//
// GCC defines __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__; clang answers
// only __has_feature(address_sanitizer / thread_sanitizer). Compile-time
// constants; no state.
#pragma once

namespace quiver::testing {

#if defined(__has_feature)
#define QUIVER_TESTING_HAS_FEATURE(x) __has_feature(x)
#else
#define QUIVER_TESTING_HAS_FEATURE(x) 0
#endif

#if defined(__SANITIZE_ADDRESS__) || QUIVER_TESTING_HAS_FEATURE(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif

#if defined(__SANITIZE_THREAD__) || QUIVER_TESTING_HAS_FEATURE(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif

#undef QUIVER_TESTING_HAS_FEATURE

/// The resident set measures the allocator only without ASan and TSan
/// (their shadow memory is kept for unmapped blocks: TSan measured +66 MiB
/// where the release build showed +7).
inline constexpr bool kRssIsMeaningful = !kAddressSanitizer && !kThreadSanitizer;

}  // namespace quiver::testing

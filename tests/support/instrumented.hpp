// Whether this test binary is built with AddressSanitizer (GCC defines __SANITIZE_ADDRESS__,
// clang answers __has_feature). Instrumented code runs about ten times slower, so the few
// exhaustive cross-checks that dominate the suite's time check a sample of their cases there;
// the plain build checks every case, and the sanitizers still see every code path.
#pragma once

namespace qs::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

/// Every `stride`-th case of an exhaustive check in an instrumented build, every case in a
/// plain one.
inline bool exhaustive_case(int index, int stride) { return !kAddressSanitizer || index % stride == 0; }

}  // namespace qs::test

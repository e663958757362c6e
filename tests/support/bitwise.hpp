// Bitwise comparison for the determinism tests: equal values are not enough (signed zeros,
// NaN payloads), the bits must be the same.
#pragma once

#include <cstring>

namespace qs::test {

inline bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace qs::test

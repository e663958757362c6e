// SplitMix64 (Steele, Lea & Flood 2014): a small deterministic generator, for the few places
// that need reproducible random choices without carrying a <random> engine (the UCP
// bilinear algorithm's restart, the random UCP problems of Pang, Trinkle & Lo 1996, sec. 5).
#pragma once

#include <cstdint>

namespace qs {

/// Advances `state` and returns the next 64 random bits.
inline std::uint64_t splitmix64_next(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace qs

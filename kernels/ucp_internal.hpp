// Internal to the UCP solver's files (kernels/ucp*.cpp): what they share.
#pragma once

#include <chrono>
#include <limits>

namespace qs::ucp_internal {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

/// Seconds since start, for the solvers' time limits and statistics.
inline double elapsed(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace qs::ucp_internal

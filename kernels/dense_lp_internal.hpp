// Internal to the dense LP solver's files (kernels/dense_lp*.cpp): the tolerances and the
// small helpers they share.
#pragma once

#include <limits>

#include "quasistep/kernels/dense_lp.hpp"

namespace qs::dense_lp_internal {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
// Refactorization: a pivot below this fraction of max|B| means B is singular.
inline constexpr double kSingularTol = 1e-11;
// End of phase 1: an artificial is pivoted out of row r only on an entry of row r of
// B^-1 A above this fraction of the largest it could be (|row r of B^-1|_1 max|A|); a row
// without one is linearly dependent on the others.
inline constexpr double kDriveOutTol = 1e-7;
// Harris' ratio test lets a basic variable pass its bound by this fraction of the primal
// tolerance, to pick a larger pivot among near-ties.
inline constexpr double kHarrisFraction = 1e-2;

/// Where a nonbasic variable rests by default: at a finite bound, else at zero (free).
inline LpVarState default_state(double lo, double up) {
  if (lo > -kInf) return LpVarState::at_lower;
  if (up < kInf) return LpVarState::at_upper;
  return LpVarState::at_zero;
}

/// The value of a nonbasic variable in state s.
inline double value_of(LpVarState s, double lo, double up) {
  switch (s) {
    case LpVarState::at_lower: return lo;
    case LpVarState::at_upper: return up;
    default: return 0.0;
  }
}

}  // namespace qs::dense_lp_internal

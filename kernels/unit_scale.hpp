// Powers of two that bring data far from unit scale back to it, for kernels whose pivot and
// feasibility tolerances have absolute floors (max(1, ...)). Scaling by 2^e is exact (short
// of underflow or overflow), so a problem scaled this way is the same problem, and its
// solution scales back exactly.
#pragma once

#include <cmath>

namespace qs {

/// Data whose largest magnitude has a binary exponent within [-kUnitScaleBand,
/// kUnitScaleBand] (about 0.004 ... 500) are used as given: near unit scale the floors are
/// harmless, and such data keep their numbers bitwise.
inline constexpr int kUnitScaleBand = 8;

/// The exponent e with 2^e |x|_max near 1, or 0 when |x|_max is 0, not finite, or already
/// within the band.
inline int unit_scale_exponent(double abs_max) {
  if (!(abs_max > 0) || !std::isfinite(abs_max)) return 0;
  const int e = std::ilogb(abs_max);
  return e < -kUnitScaleBand || e > kUnitScaleBand ? -e : 0;
}

}  // namespace qs

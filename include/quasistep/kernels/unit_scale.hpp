// Powers of two that bring data far from unit scale back to it, for kernels whose pivot and
// feasibility tolerances have absolute floors (max(1, ...)): the UCP's (kernels/ucp.cpp).
// Scaling by 2^e is exact (short of underflow or overflow), so a problem scaled this way is
// the same problem, and its solution scales back exactly. Lemke no longer uses the band: it
// scales every LCP to unit size (lcp_scaling_exponents in quasistep/kernels/lemke.hpp), so
// that its verdict is the same at every power of two.
#pragma once

#include <cmath>

namespace qs {

/// Data whose largest magnitude has a binary exponent within [-kUnitScaleBand,
/// kUnitScaleBand] (about 1e-6 ... 2e6) are used as given: there the floors are harmless
/// (measured: no wrong `solved` from 1e-7 to 1e9), and such data keep their numbers bit for
/// bit.
inline constexpr int kUnitScaleBand = 20;

/// The exponent e with 2^e |x|_max near 1, or 0 when |x|_max is 0, not finite, or already
/// within the band.
inline int unit_scale_exponent(double abs_max) {
  // Inside the band (exponent in [-20, 20], i.e. [2^-20, 2^21)) by two comparisons: this
  // runs on every solve of the hot kernels, ilogb only far from unit scale.
  static_assert(kUnitScaleBand == 20, "the constants below are 2^-kUnitScaleBand and 2^(kUnitScaleBand + 1)");
  if (abs_max >= 0x1p-20 && abs_max < 0x1p21) return 0;
  if (!(abs_max > 0) || !std::isfinite(abs_max)) return 0;
  const int e = std::ilogb(abs_max);
  return e < -kUnitScaleBand || e > kUnitScaleBand ? -e : 0;
}

/// The exponent of abs_max * 2^shift kept within the band as above, without forming the
/// product (it may overflow or underflow): 0 inside the band (or for 0, inf, NaN).
inline int unit_scale_exponent(double abs_max, int shift) {
  if (shift == 0) return unit_scale_exponent(abs_max);
  if (!(abs_max > 0) || !std::isfinite(abs_max)) return 0;
  const int e = std::ilogb(abs_max) + shift;
  return e < -kUnitScaleBand || e > kUnitScaleBand ? -e : 0;
}

}  // namespace qs

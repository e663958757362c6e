// Powers of two that bring data to unit size, for kernels whose pivot and feasibility
// tolerances have absolute floors (max(1, ...)): the UCP's LPs (kernels/ucp.cpp). Scaling by
// 2^e is exact (short of underflow or overflow), so a problem scaled this way is the same
// problem, and its solution scales back exactly. Data that differ by a power of two scale to
// the same numbers, bit for bit, so the kernel's path and verdict are the same for both
// (Lemke does the same for an LCP: lcp_scaling_exponents in quasistep/kernels/lemke.hpp).
#pragma once

#include <cmath>

namespace qs {

/// The exponent e with 2^e abs_max in [1, 2), or 0 when abs_max is 0 or not finite.
inline int unit_exponent(double abs_max) {
  if (!(abs_max > 0) || !std::isfinite(abs_max)) return 0;
  return -std::ilogb(abs_max);
}

/// The power of two at or just below x (2^-unit_exponent(x)), or 1 when x is 0 or not
/// finite: a unit to measure quantities of about x's size in, exact to divide by.
inline double unit_power(double x) { return std::ldexp(1.0, -unit_exponent(x)); }

/// The unit of a variable judged by its column: unit_power of the column's largest entry
/// |A_ij|, or, for a variable no row holds, the power of two at sqrt(H_jj) (floor of half
/// the exponent: exact under a change of unit); 1 if neither. A variable in units 2^k times
/// larger has a column 2^-k times smaller and a unit 2^-k times smaller.
inline double column_unit(double column_max, double diagonal) {
  if (column_max > 0 && std::isfinite(column_max)) return unit_power(column_max);
  if (diagonal > 0 && std::isfinite(diagonal)) {
    const int e = std::ilogb(diagonal);
    return std::ldexp(1.0, (e - (e & 1)) / 2);
  }
  return 1.0;
}

}  // namespace qs

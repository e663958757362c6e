// When an LCP answer counts as `solved`: one rule for every solver of (mixed) LCPs (Lemke,
// its lanes, the exact enumeration) and for the steppers built on them (docs/kernels.md,
// "Checked answers").
//
//   LCP(M, q), the first k variables free:  x = [u; z],  w = M x + q.
//   tol = tolerance * max_i |q_i|, tolerance = kLcpTolerance = 2^-20 = 2^33 u by default
//   (u = 2^-53, the unit roundoff of a double; 2^-20 is about 9.5e-7).
//   x is accepted iff, for w in exact arithmetic,
//     z >= 0,  |w_i| <= tol on the k free rows,  w_i >= -tol on the others,  and
//     sum_i z_i |w_i| <= tol sum_i z_i (so |z'w| <= tol |z|_1: on average over z, the w of
//     a positive z is within tol of zero; a z_i of 1e-20 beside z_j of 0.1, zero to working
//     precision, may sit beside a w_i of 2e-3).
//
// tol depends on q alone, so multiplying M and q, or q alone, or M alone (which scales z),
// by any factor leaves the verdict as it is; and a z many orders larger than the data
// warrant cannot pass with its w negative, as it could against the old scale max(1, |q|,
// |M| |z|). The test is made exact in its meaning: each w_i is computed in double with the
// bound e_i = 2 (n + 2) u (|q_i| + sum_j |M_ij x_j|) on its rounding error (Higham,
// "Accuracy and Stability of Numerical Algorithms", 2002, sec. 3.1; n counts the nonzero
// entries of x, the terms actually summed), and judged widened by
// it; where that bound is too wide to decide, the rows are formed again in long double
// (the x87 format's 64-bit significand) with its own bound. Where even that cannot decide
// (a row's terms about 2^43 / (n + 2) times max|q| or more: 2^39 for n = 20), the answer is not accepted: the solvers
// report `numerical_failure`, never `solved`.
#pragma once

#include "quasistep/kernels/eigen.hpp"

namespace qs {

/// The default relative tolerance of the rule above: tol = kLcpTolerance * max|q|. Lemke's
/// answers are backward stable: their rows err by about u |M| |z| times the growth of the
/// pivoting, and on copositive contact LCPs with stiff feedback (Halm & Posa 2018, feedback
/// c = 1e-4) |M| |z| reaches 6e4 |q| and the best point Lemke's path reaches errs by up
/// to 4.5e-7 |q| (1,000 random instances, tests/support/random_problems.hpp). 2^-20 keeps
/// them solved; a point off by more than 9.5e-7 of the data is refused. (With c = 1e-6 the
/// bases are so ill-conditioned that 45% of such answers err by more: numerical_failure.)
inline constexpr double kLcpTolerance = 0x1p-20;

/// The certified residual of x for LCP(M, q) with `free` leading free variables: the largest
/// violation of the rule above over all rows, each row's value widened by its rounding
/// bound, divided by max|q|. 0 at an exact solution of exactly representable data; +inf for
/// a negative or non-finite z, or for any violation when q = 0. The answer is accepted iff
/// the result is <= `tolerance`. Formed in double and, where that exceeds `tolerance`, again
/// in long double (the smaller of the two certified values is returned).
double lcp_certified_residual(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                              const Eigen::Ref<const Eigen::VectorXd>& x, int free = 0,
                              double tolerance = kLcpTolerance);

/// The same in long double only (the second pass above; for callers that formed the double
/// pass themselves, like Lemke's vectorised check).
double lcp_certified_residual_extended(const Eigen::Ref<const Eigen::MatrixXd>& M,
                                       const Eigen::Ref<const Eigen::VectorXd>& q,
                                       const Eigen::Ref<const Eigen::VectorXd>& x, int free = 0);

/// The rounding-bound factor of a row of n nonzero terms plus q_i in floating point with unit
/// roundoff u: e_i = lcp_rounding_factor(n, u) * (|q_i| + sum_j |M_ij x_j|), generous by
/// a factor of two so that the bound's own rounding is covered.
template <class R>
constexpr R lcp_rounding_factor(int n, R u) {
  return R(2) * R(n + 2) * u;
}

}  // namespace qs

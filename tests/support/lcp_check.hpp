// An independent check of a solved step's LCP, shared by the stepper tests: the acceptance
// rule of quasistep/kernels/lcp_acceptance.hpp, written again here without the kernels'
// code, in long double.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

namespace qs::test {

/// The violation of LCP(M, q) at z relative to max|q|: the largest of -z_i, -w_i and
/// sum_i z_i |w_i| / sum_i z_i, with w = M z + q formed in long double, divided by max_i |q_i| (the
/// kernels accept an answer when this is <= 2^-20, about 9.5e-7). 0 at an exact solution;
/// inf for a violation when q = 0.
inline double lcp_violation(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                            const Eigen::Ref<const Eigen::VectorXd>& z) {
  const Eigen::Index n = q.size();
  long double v = 0, s = 0, zsum = 0, zw = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    long double w = q[i];
    for (Eigen::Index j = 0; j < n; ++j) w += static_cast<long double>(M(i, j)) * z[j];
    s = std::max(s, std::abs(static_cast<long double>(q[i])));
    v = std::max({v, static_cast<long double>(-z[i]), -w});
    if (z[i] > 0) {
      zsum += z[i];
      zw += z[i] * std::abs(w);
    }
    if (std::isnan(static_cast<double>(w)) || std::isnan(z[i])) return std::numeric_limits<double>::infinity();
  }
  if (zsum > 0) v = std::max(v, zw / zsum);
  if (v == 0) return 0;
  return s > 0 ? static_cast<double>(v / s) : std::numeric_limits<double>::infinity();
}

}  // namespace qs::test

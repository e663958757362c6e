// An independent check of a solved step's LCP, shared by the stepper tests.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

namespace qs::test {

/// The scaled violation of LCP(M, q) at z: max of -z, -w and |min(z, w)| with w = M z + q,
/// divided by max(1, |q|_inf, |M|_inf |z|_inf) (the kernels' scale, docs/kernels.md).
inline double lcp_violation(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                            const Eigen::Ref<const Eigen::VectorXd>& z) {
  if (q.size() == 0) return 0;
  const Eigen::VectorXd w = M * z + q;
  const double scale = std::max({1.0, q.cwiseAbs().maxCoeff(), M.cwiseAbs().maxCoeff() * z.cwiseAbs().maxCoeff()});
  double v = 0;
  for (Eigen::Index i = 0; i < z.size(); ++i) v = std::max({v, -z[i], -w[i], std::abs(std::min(z[i], w[i]))});
  return v / scale;
}

}  // namespace qs::test

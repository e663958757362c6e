// Small input checks shared by the dense LP and QP kernels (internal to kernels/).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>

namespace qs::detail {

/// max |v_i|, 0 for an empty vector or matrix.
template <class Derived>
double max_abs(const Eigen::MatrixBase<Derived>& v) {
  return v.size() == 0 ? 0.0 : v.cwiseAbs().maxCoeff();
}

/// Bounds a solver can take: no NaN, lower <= upper, lower != +inf, upper != -inf.
inline bool bounds_ok(const Eigen::Ref<const Eigen::VectorXd>& lower, const Eigen::Ref<const Eigen::VectorXd>& upper) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (Eigen::Index j = 0; j < lower.size(); ++j) {
    const double l = lower[j], u = upper[j];
    if (std::isnan(l) || std::isnan(u) || l > u || l == inf || u == -inf) return false;
  }
  return true;
}

}  // namespace qs::detail

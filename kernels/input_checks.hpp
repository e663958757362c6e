// Small input checks shared by the dense LP and QP kernels (internal to kernels/).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

namespace qs::detail {

/// max |v_i|, 0 for an empty vector or matrix.
template <class Derived>
double max_abs(const Eigen::MatrixBase<Derived>& v) {
  return v.size() == 0 ? 0.0 : v.cwiseAbs().maxCoeff();
}

/// m = max |a_ij| in one pass, true when every entry is finite (false, m unspecified,
/// at a NaN or an infinity): the finiteness check and the scale of the data together.
template <class Derived>
bool finite_max_abs(const Eigen::MatrixBase<Derived>& a, double& m) {
  // Short dependency chains (a max and an or): this runs on every node of a search.
  constexpr double big = std::numeric_limits<double>::max();
  double mx = 0.0;
  bool bad = false;
  for (Eigen::Index j = 0; j < a.cols(); ++j)
    for (Eigen::Index i = 0; i < a.rows(); ++i) {
      const double v = std::abs(a.coeff(i, j));
      mx = std::max(mx, v);
      bad |= !(v <= big);  // NaN or infinite
    }
  m = mx;
  return !bad;
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

#include "quasistep/kernels/lcp_acceptance.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace qs {

namespace {

/// The rule of lcp_acceptance.hpp in arithmetic R (double or long double).
template <class R>
double certified_residual(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                          const Eigen::Ref<const Eigen::VectorXd>& x, int free) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const Eigen::Index n = q.size();
  if (M.rows() != n || M.cols() != n || x.size() != n || free < 0 || free > n) return inf;
  for (Eigen::Index j = 0; j < n; ++j)
    if (!std::isfinite(x[j]) || (j >= free && !(x[j] >= 0))) return inf;
  const R u = std::numeric_limits<R>::epsilon() / 2;
  int terms = 0;  // the nonzero terms of each sum (the bound's length)
  for (Eigen::Index j = 0; j < n; ++j) terms += x[j] != 0.0;
  const R factor = lcp_rounding_factor<R>(terms, u);
  // Products that underflow lose at most half the smallest subnormal double each.
  const R floor = R(n + 2) * R(std::numeric_limits<double>::denorm_min());
  R worst = 0, s = 0, zsum = 0, zw = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    R w = q[i], a = std::abs(R(q[i]));
    s = std::max(s, a);
    for (Eigen::Index j = 0; j < n; ++j) {
      if (x[j] == 0.0) continue;
      const R t = R(M(i, j)) * R(x[j]);
      w += t;
      a += std::abs(t);
    }
    const R e = a == 0 ? R(0) : factor * a + floor;  // no nonzero term: w_i is exact
    R v = std::max(R(0), e - w);  // w_i >= -tol, certified: w - e >= -tol
    if (i < free) {
      v = std::max(v, std::abs(w) + e);  // an equality row
    } else {
      zsum += x[i];  // complementarity: sum z_i |w_i| <= tol sum z_i, certified
      zw += R(x[i]) * (std::abs(w) + e);
    }
    worst = std::max(worst, v);
  }
  if (zsum > 0) worst = std::max(worst, zw / zsum);
  if (!(worst == worst)) return inf;  // NaN (an overflow to inf - inf)
  if (worst == 0) return 0;
  if (s == 0) return inf;
  return static_cast<double>(worst / s);
}

}  // namespace

double lcp_certified_residual(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                              const Eigen::Ref<const Eigen::VectorXd>& x, int free, double tolerance) {
  const double r = certified_residual<double>(M, q, x, free);
  if (r <= tolerance) return r;
  return std::min(r, certified_residual<long double>(M, q, x, free));
}

double lcp_certified_residual_extended(const Eigen::Ref<const Eigen::MatrixXd>& M,
                                       const Eigen::Ref<const Eigen::VectorXd>& q,
                                       const Eigen::Ref<const Eigen::VectorXd>& x, int free) {
  return certified_residual<long double>(M, q, x, free);
}

}  // namespace qs

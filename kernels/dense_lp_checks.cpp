// The dense LP solver's certificate checks (an infeasibility certificate, an unbounded
// ray) and the conversion of row bounds to its standard form (quasistep/kernels/dense_lp.hpp).
#include "quasistep/kernels/dense_lp.hpp"

#include <algorithm>
#include <cmath>

#include "dense_lp_internal.hpp"
#include "quasistep/kernels/input_checks.hpp"

namespace qs {

using dense_lp_internal::kInf;
using detail::bounds_ok;
using detail::max_abs;

bool verify_farkas(const DenseLpProblem& p, const Eigen::Ref<const Eigen::VectorXd>& y,
                   double tol) {
  const Eigen::Index m = p.A.rows(), n = p.A.cols();
  if (m == 0 || n == 0 || p.b.size() != m || y.size() != m || p.lower.size() != n ||
      p.upper.size() != n)
    return false;
  if (!p.A.allFinite() || !p.b.allFinite() || !y.allFinite() || !bounds_ok(p.lower, p.upper))
    return false;
  const double ymax = max_abs(y);
  if (ymax == 0) return false;
  // gap = y'b - sum_j h_j with h_j = max of g_j x_j over the bounds, g = A'y; every sum is
  // compared with the sum of the magnitudes of its terms (its rounding error scale).
  double gap = 0.0, noise = 0.0, floor = 0.0;
  for (Eigen::Index i = 0; i < m; ++i) {
    gap += y[i] / ymax * p.b[i];
    noise += std::abs(y[i] / ymax * p.b[i]);
    floor += std::abs(y[i] / ymax) * (1.0 + std::abs(p.b[i]));
  }
  for (Eigen::Index j = 0; j < n; ++j) {
    double g = 0.0, g_mag = 0.0, col_used = 0.0, col_mag = 0.0;
    for (Eigen::Index i = 0; i < m; ++i) {
      const double t = y[i] / ymax * p.A(i, j);
      g += t;
      g_mag += std::abs(t);
      col_mag += std::abs(p.A(i, j));
      if (std::abs(y[i]) > detail::kFarkasUsedRow * ymax) col_used += std::abs(p.A(i, j));
    }
    if (g == 0) continue;
    const double bound = g > 0 ? p.upper[j] : p.lower[j];
    if (!std::isfinite(bound)) {
      if (detail::farkas_column_is_zero(g, g_mag, col_used, col_mag, tol)) continue;
      return false;  // y'A x is unbounded above on the box
    }
    gap -= g * bound;
    noise += g_mag * std::abs(bound);
  }
  // Nor may the gap be rounding on the rows' own scale, 1 + |b_i| (detail::kFarkasRounding).
  return gap > tol * noise && gap > detail::kFarkasRounding * floor && gap > 0;
}

bool verify_ray(const DenseLpProblem& p, const Eigen::Ref<const Eigen::VectorXd>& d, double tol) {
  const Eigen::Index m = p.A.rows(), n = p.A.cols();
  if (n == 0 || p.b.size() != m || p.c.size() != n || d.size() != n || p.lower.size() != n ||
      p.upper.size() != n)
    return false;
  if (!p.A.allFinite() || !p.c.allFinite() || !d.allFinite() || !bounds_ok(p.lower, p.upper))
    return false;
  const double dmax = max_abs(d);
  if (dmax == 0) return false;
  for (Eigen::Index i = 0; i < m; ++i) {
    double r = 0.0, r_mag = 0.0;
    for (Eigen::Index j = 0; j < n; ++j) {
      const double t = p.A(i, j) * (d[j] / dmax);
      r += t;
      r_mag += std::abs(t);
    }
    if (std::abs(r) > tol * r_mag) return false;
  }
  double cd = 0.0, cd_mag = 0.0;
  for (Eigen::Index j = 0; j < n; ++j) {
    const double v = d[j] / dmax;
    if (v > tol && p.upper[j] < kInf) return false;
    if (v < -tol && p.lower[j] > -kInf) return false;
    cd += p.c[j] * v;
    cd_mag += std::abs(p.c[j] * v);
  }
  return cd < -tol * cd_mag && cd < 0;
}

Status row_bounds_to_standard_form(const Eigen::Ref<const Eigen::MatrixXd>& A_in,
                                   const Eigen::Ref<const Eigen::VectorXd>& row_lower,
                                   const Eigen::Ref<const Eigen::VectorXd>& row_upper,
                                   const Eigen::Ref<const Eigen::VectorXd>& c_in,
                                   const Eigen::Ref<const Eigen::VectorXd>& lower_in,
                                   const Eigen::Ref<const Eigen::VectorXd>& upper_in,
                                   Eigen::Ref<Eigen::MatrixXd> A, Eigen::Ref<Eigen::VectorXd> b,
                                   Eigen::Ref<Eigen::VectorXd> c, Eigen::Ref<Eigen::VectorXd> lower,
                                   Eigen::Ref<Eigen::VectorXd> upper) {
  const Eigen::Index m = A_in.rows(), n = A_in.cols();
  if (row_lower.size() != m || row_upper.size() != m || c_in.size() != n ||
      lower_in.size() != n || upper_in.size() != n || A.rows() != m || A.cols() != n + m ||
      b.size() != m || c.size() != n + m || lower.size() != n + m || upper.size() != n + m)
    return Status::bad_input;
  if (!bounds_ok(row_lower, row_upper) || !bounds_ok(lower_in, upper_in)) return Status::bad_input;
  A.leftCols(n) = A_in;
  A.rightCols(m).setZero();
  A.rightCols(m).diagonal().setConstant(-1.0);
  b.setZero();
  c.head(n) = c_in;
  c.tail(m).setZero();
  lower.head(n) = lower_in;
  lower.tail(m) = row_lower;
  upper.head(n) = upper_in;
  upper.tail(m) = row_upper;
  return Status::solved;
}

}  // namespace qs

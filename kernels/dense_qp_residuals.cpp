// The dense QP's free functions: residuals and checks of a given point or ray (dense_qp.hpp).
#include "quasistep/kernels/dense_qp.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "dense_qp_helpers.hpp"

namespace qs {
namespace {

/// max|A_eq|, max|A_in| together (0 for empty matrices).
double max_abs_a(const DenseQpProblem& p) {
  return std::max(p.A_eq.rows() ? max_abs(p.A_eq) : 0.0, p.A_in.rows() ? max_abs(p.A_in) : 0.0);
}

/// 1 + max(|b_eq|, |b_in|, finite |bounds|) + (1 + max|A|) |x|_inf: the primal scale s_p.
double primal_scale(const DenseQpProblem& p, const Eigen::Ref<const Eigen::VectorXd>& x,
                    double max_a) {
  double b = std::max(max_abs(p.b_eq), max_abs(p.b_in));
  for (Eigen::Index j = 0; j < p.lower.size(); ++j) {
    if (std::isfinite(p.lower[j])) b = std::max(b, std::abs(p.lower[j]));
    if (std::isfinite(p.upper[j])) b = std::max(b, std::abs(p.upper[j]));
  }
  return 1.0 + b + (1.0 + max_a) * max_abs(x);
}

}  // namespace

// ---- free functions ---------------------------------------------------------------------------

double qp_primal_residual(const DenseQpProblem& p, const Eigen::Ref<const Eigen::VectorXd>& x) {
  if (!sizes_ok(p)) return kInf;
  const Eigen::Index n = p.c.size(), me = p.A_eq.rows(), mi = p.A_in.rows();
  if (x.size() != n || !x.allFinite()) return kInf;
  // Primal feasibility row by row, each against its own terms: a scale taken from |x|_inf
  // would let one huge entry (a free variable far out) hide an O(1) violation elsewhere.
  double primal = 0.0;
  const auto row_scale = [&](const Eigen::Ref<const Eigen::MatrixXd>& A, Eigen::Index i, double b, double& r) {
    double sc = 1.0 + std::abs(b);
    r = -b;
    for (Eigen::Index j = 0; j < n; ++j) {
      r += A(i, j) * x[j];
      sc += std::abs(A(i, j) * x[j]);
    }
    return sc;
  };
  for (Eigen::Index i = 0; i < me; ++i) {
    double r;
    const double sc = row_scale(p.A_eq, i, p.b_eq[i], r);
    primal = std::max(primal, std::abs(r) / sc);
  }
  for (Eigen::Index i = 0; i < mi; ++i) {
    double r;
    const double sc = row_scale(p.A_in, i, p.b_in[i], r);
    primal = std::max(primal, -r / sc);
  }
  for (Eigen::Index j = 0; j < n; ++j) {
    const double lo = lower_of(p, j), up = upper_of(p, j);
    if (lo > -kInf) primal = std::max(primal, (lo - x[j]) / (1.0 + std::abs(lo)));
    if (up < kInf) primal = std::max(primal, (x[j] - up) / (1.0 + std::abs(up)));
  }
  return primal;
}

double qp_kkt_residual(const DenseQpProblem& p, const Eigen::Ref<const Eigen::VectorXd>& x,
                       const Eigen::Ref<const Eigen::VectorXd>& y,
                       const Eigen::Ref<const Eigen::VectorXd>& z,
                       const Eigen::Ref<const Eigen::VectorXd>& w) {
  if (!sizes_ok(p)) return kInf;
  const Eigen::Index n = p.c.size(), me = p.A_eq.rows(), mi = p.A_in.rows();
  if (x.size() != n || y.size() != me || z.size() != mi || w.size() != n) return kInf;
  if (!x.allFinite() || !y.allFinite() || !z.allFinite() || !w.allFinite()) return kInf;
  const double max_a = max_abs_a(p);
  const double s_p = primal_scale(p, x, max_a);
  const double s_d = 1.0 + max_abs(p.c) + max_abs(p.H) * max_abs(x) +
                     max_a * std::max(max_abs(y), max_abs(z)) + max_abs(w);
  const double primal = qp_primal_residual(p, x);
  double stat = 0.0, sign = 0.0, comp = 0.0;
  for (Eigen::Index j = 0; j < n; ++j) {
    double r = p.c[j] - w[j];
    for (Eigen::Index k = 0; k < n; ++k) r += p.H(j, k) * x[k];
    for (Eigen::Index i = 0; i < me; ++i) r -= p.A_eq(i, j) * y[i];
    for (Eigen::Index i = 0; i < mi; ++i) r -= p.A_in(i, j) * z[i];
    stat = std::max(stat, std::abs(r));
    const double lo = lower_of(p, j), up = upper_of(p, j);
    bound_multiplier_terms(w[j], x[j], lo, up, sign, comp);
  }
  for (Eigen::Index i = 0; i < mi; ++i) {
    sign = std::max(sign, -z[i]);
    if (z[i] == 0) continue;
    double r = -p.b_in[i];
    for (Eigen::Index j = 0; j < n; ++j) r += p.A_in(i, j) * x[j];
    comp = std::max(comp, std::abs(z[i] * r));
  }
  return std::max({primal, stat / s_d, sign / s_d, comp / (s_p * s_d)});
}

bool verify_qp_farkas(const DenseQpProblem& p, const Eigen::Ref<const Eigen::VectorXd>& u_eq,
                      const Eigen::Ref<const Eigen::VectorXd>& u_in, double tol) {
  if (!sizes_ok(p)) return false;
  const Eigen::Index n = p.c.size(), me = p.A_eq.rows(), mi = p.A_in.rows();
  if (u_eq.size() != me || u_in.size() != mi || me + mi == 0) return false;
  if (!p.A_eq.allFinite() || !p.A_in.allFinite() || !p.b_eq.allFinite() || !p.b_in.allFinite() ||
      !u_eq.allFinite() || !u_in.allFinite())
    return false;
  if (p.lower.size() && !bounds_ok(p.lower, p.upper)) return false;
  const double umax = std::max(max_abs(u_eq), max_abs(u_in));
  if (umax == 0) return false;
  for (Eigen::Index i = 0; i < mi; ++i)
    if (u_in[i] < 0) return false;
  double gap = 0.0, noise = 0.0, floor = 0.0;
  for (Eigen::Index i = 0; i < me; ++i) {
    gap += u_eq[i] / umax * p.b_eq[i];
    noise += std::abs(u_eq[i] / umax * p.b_eq[i]);
    floor += std::abs(u_eq[i] / umax) * (1.0 + std::abs(p.b_eq[i]));
  }
  for (Eigen::Index i = 0; i < mi; ++i) {
    gap += u_in[i] / umax * p.b_in[i];
    noise += std::abs(u_in[i] / umax * p.b_in[i]);
    floor += u_in[i] / umax * (1.0 + std::abs(p.b_in[i]));
  }
  for (Eigen::Index j = 0; j < n; ++j) {
    double g = 0.0, g_mag = 0.0, col_used = 0.0, col_mag = 0.0;
    for (Eigen::Index i = 0; i < me; ++i) {
      const double t = u_eq[i] / umax * p.A_eq(i, j);
      g += t;
      g_mag += std::abs(t);
      col_mag += std::abs(p.A_eq(i, j));
      if (std::abs(u_eq[i]) > detail::kFarkasUsedRow * umax) col_used += std::abs(p.A_eq(i, j));
    }
    for (Eigen::Index i = 0; i < mi; ++i) {
      const double t = u_in[i] / umax * p.A_in(i, j);
      g += t;
      g_mag += std::abs(t);
      col_mag += std::abs(p.A_in(i, j));
      if (u_in[i] > detail::kFarkasUsedRow * umax) col_used += std::abs(p.A_in(i, j));
    }
    if (g == 0) continue;
    const double bound = g > 0 ? upper_of(p, j) : lower_of(p, j);
    if (!std::isfinite(bound)) {
      if (detail::farkas_column_is_zero(g, g_mag, col_used, col_mag, tol)) continue;
      return false;
    }
    gap -= g * bound;
    noise += g_mag * std::abs(bound);
  }
  // Nor rounding on the rows' own scale (as verify_farkas).
  return gap > tol * noise && gap > detail::kFarkasRounding * floor && gap > 0;
}

bool verify_qp_ray(const DenseQpProblem& p, const Eigen::Ref<const Eigen::VectorXd>& d, double tol) {
  if (!sizes_ok(p)) return false;
  const Eigen::Index n = p.c.size();
  if (d.size() != n || !d.allFinite() || !p.H.allFinite() || !p.c.allFinite() ||
      !p.A_eq.allFinite() || !p.A_in.allFinite())
    return false;
  if (p.lower.size() && !bounds_ok(p.lower, p.upper)) return false;
  // The tests below on the ray e = S d / max|S d| of the problem in the variables S x
  // (S = diag(s_j), ray_column_scale): rows A S^-1, c S^-1, H S^-1 (.) S^-1. The same
  // numbers in any units of the variables, so a direction is a ray in all of them or none.
  double dmax = 0.0;
  for (Eigen::Index j = 0; j < n; ++j) dmax = std::max(dmax, std::abs(ray_column_scale(p, j) * d[j]));
  if (!(dmax > 0) || !std::isfinite(dmax)) return false;
  const auto row_ok = [&](const Eigen::Ref<const Eigen::MatrixXd>& A, Eigen::Index i, bool eq) {
    double r = 0.0, mag = 0.0;
    for (Eigen::Index j = 0; j < n; ++j) {
      if (A(i, j) == 0) continue;
      const double s = ray_column_scale(p, j);
      r += A(i, j) * (d[j] / dmax);
      mag += std::abs(A(i, j) / s);
    }
    return eq ? std::abs(r) <= tol * mag : r >= -tol * mag;
  };
  for (Eigen::Index i = 0; i < p.A_eq.rows(); ++i)
    if (!row_ok(p.A_eq, i, true)) return false;
  for (Eigen::Index i = 0; i < p.A_in.rows(); ++i)
    if (!row_ok(p.A_in, i, false)) return false;
  double cd = 0.0, cd_mag = 0.0, curv = 0.0, trace = 0.0, norm2 = 0.0;
  for (Eigen::Index j = 0; j < n; ++j) {
    const double s = ray_column_scale(p, j);
    const double v = s * d[j] / dmax;  // e_j
    if (v > tol && upper_of(p, j) < kInf) return false;
    if (v < -tol && lower_of(p, j) > -kInf) return false;
    cd += p.c[j] * (d[j] / dmax);
    cd_mag += std::abs(p.c[j] / s);
    double hv = 0.0;
    for (Eigen::Index k = 0; k < n; ++k) hv += p.H(j, k) * (d[k] / dmax);
    curv += (d[j] / dmax) * hv;
    trace += std::max(p.H(j, j), 0.0) / (s * s);
    norm2 += v * v;
  }
  if (curv > tol * trace * norm2) return false;
  return cd < -tol * cd_mag && cd < 0;
}

}  // namespace qs

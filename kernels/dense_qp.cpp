// Primal active-set QP with inertia control; see dense_qp.hpp for the method.
#include "kernels/dense_qp.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/input_checks.hpp"
#include "kernels/lane.hpp"

namespace qs {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// H is "symmetric" when |H_ij - H_ji| <= this * max|H_ij|.
constexpr double kSymmetryTol = 1e-12;
// check_psd: the Schur complement left after the pivots above curvature_tol * trace(H)
// must be below this * trace(H) in magnitude (a PSD one is below curvature_tol * trace(H)).
constexpr double kPsdTol = 1e-9;
// Harris' ratio test relaxes every bound by this fraction of the feasibility tolerance.
constexpr double kHarrisFraction = 1e-2;
// Refactorizations allowed when the final check fails, before numerical_failure.
constexpr int kMaxCheckRefactors = 3;
// Rounds of temporary constraints one factorization may add before giving up.
constexpr int kMaxTemporaryRounds = 3;

using detail::bounds_ok;
using detail::finite_max_abs;
using detail::max_abs;

// The O(n) loops of the factor updates on kernels/lane.hpp's explicit native vectors: the
// build passes -fno-tree-vectorize, so plain loops stay scalar. Only element-wise
// operations, each entry computed by the plain loop's expression, so the results are
// bitwise those of the scalar loops and do not depend on alignment (the branch-and-bound's
// answer must not depend on which workspace solved a node). File-local on purpose: as
// inline functions of the shared header GCC inlined them differently and the small
// problems of bench_dense_qp ran 10-20% slower.

/// (x_i, y_i) <- (p x_i + q y_i, r x_i + t y_i), i < n: a plane rotation of two columns.
void rotate(double* x, double* y, int n, double p, double q, double r, double t) {
  const NativeSimd pv(p), qv(q), rv(r), tv(t);
  int i = 0;
  for (; i + kNativeWidth <= n; i += kNativeWidth) {
    const NativeSimd a = load_native(x + i), b = load_native(y + i);
    store_native(pv * a + qv * b, x + i);
    store_native(rv * a + tv * b, y + i);
  }
  for (; i < n; ++i) {
    const double a = x[i], b = y[i];
    x[i] = p * a + q * b;
    y[i] = r * a + t * b;
  }
}

/// y_i += f x_i, i < n.
void axpy(double f, const double* x, double* y, int n) {
  const NativeSimd fv(f);
  int i = 0;
  for (; i + kNativeWidth <= n; i += kNativeWidth) store_native(load_native(y + i) + fv * load_native(x + i), y + i);
  for (; i < n; ++i) y[i] += f * x[i];
}

/// x'y, i < n: lane-wise partial sums, then the lanes in order (a fixed order for a given n,
/// whatever the alignment).
double dot(const double* x, const double* y, int n) {
  NativeSimd acc(0.0);
  int i = 0;
  for (; i + kNativeWidth <= n; i += kNativeWidth) acc += load_native(x + i) * load_native(y + i);
  double s = 0.0;
  for (int l = 0; l < kNativeWidth; ++l) s += acc[l];
  for (; i < n; ++i) s += x[i] * y[i];
  return s;
}

bool sizes_ok(const DenseQpProblem& p) {
  const Eigen::Index n = p.c.size();
  if (n <= 0 || p.H.rows() != n || p.H.cols() != n) return false;
  if (p.A_eq.rows() != p.b_eq.size() || p.A_in.rows() != p.b_in.size()) return false;
  if (p.A_eq.rows() > 0 && p.A_eq.cols() != n) return false;
  if (p.A_in.rows() > 0 && p.A_in.cols() != n) return false;
  if (p.lower.size() != p.upper.size()) return false;
  if (p.lower.size() != 0 && p.lower.size() != n) return false;
  return true;
}

double lower_of(const DenseQpProblem& p, Eigen::Index j) {
  return p.lower.size() ? p.lower[j] : -kInf;
}
double upper_of(const DenseQpProblem& p, Eigen::Index j) {
  return p.upper.size() ? p.upper[j] : kInf;
}

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

/// A bound multiplier's part of the KKT check (qp_kkt_residual): its wrong sign (w > 0 at
/// no lower bound, w < 0 at no upper bound) and its complementarity with the bound's gap.
void bound_multiplier_terms(double w, double x, double lo, double up, double& sign, double& comp) {
  if (w > 0) {
    if (lo == -kInf) sign = std::max(sign, w);
    else comp = std::max(comp, w * std::abs(x - lo));
  } else if (w < 0) {
    if (up == kInf) sign = std::max(sign, -w);
    else comp = std::max(comp, -w * std::abs(up - x));
  }
}

/// In-place diagonally pivoted Cholesky of the symmetric k x k block of A (both triangles
/// stored and kept symmetric in the trailing block). Stops at the first pivot <= tol and
/// returns the rank r; columns 0..r-1 hold L (below the diagonal, with its diagonal), the
/// trailing block the Schur complement. piv[k] is the row swapped with k at step k.
int pivoted_cholesky(Eigen::MatrixXd& A, int k, double tol, int* piv) {
  for (int s = 0; s < k; ++s) {
    int best = s;
    for (int i = s + 1; i < k; ++i)
      if (A(i, i) > A(best, best)) best = i;
    if (!(A(best, best) > tol)) return s;
    piv[s] = best;
    if (best != s) {
      A.row(s).head(k).swap(A.row(best).head(k));
      A.col(s).head(k).swap(A.col(best).head(k));
    }
    const double d = std::sqrt(A(s, s));
    A(s, s) = d;
    for (int i = s + 1; i < k; ++i) A(i, s) /= d;
    for (int j = s + 1; j < k; ++j) {
      const double ljs = A(j, s);
      for (int i = j; i < k; ++i) A(i, j) -= A(i, s) * ljs;
      for (int i = j + 1; i < k; ++i) A(j, i) = A(i, j);
    }
  }
  return k;
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
  const double dmax = max_abs(d);
  if (dmax == 0) return false;
  const auto row_ok = [&](const Eigen::Ref<const Eigen::MatrixXd>& A, Eigen::Index i, bool eq) {
    double r = 0.0, mag = 0.0;
    for (Eigen::Index j = 0; j < n; ++j) {
      r += A(i, j) * (d[j] / dmax);
      mag += std::abs(A(i, j));
    }
    return eq ? std::abs(r) <= tol * mag : r >= -tol * mag;
  };
  for (Eigen::Index i = 0; i < p.A_eq.rows(); ++i)
    if (!row_ok(p.A_eq, i, true)) return false;
  for (Eigen::Index i = 0; i < p.A_in.rows(); ++i)
    if (!row_ok(p.A_in, i, false)) return false;
  double cd = 0.0, cd_mag = 0.0, curv = 0.0, trace = 0.0, norm2 = 0.0;
  for (Eigen::Index j = 0; j < n; ++j) {
    const double v = d[j] / dmax;
    if (v > tol && upper_of(p, j) < kInf) return false;
    if (v < -tol && lower_of(p, j) > -kInf) return false;
    cd += p.c[j] * v;
    cd_mag += std::abs(p.c[j]);
    double hv = 0.0;
    for (Eigen::Index k = 0; k < n; ++k) hv += p.H(j, k) * (d[k] / dmax);
    curv += v * hv;
    trace += std::max(p.H(j, j), 0.0);
    norm2 += v * v;
  }
  if (curv > tol * trace * norm2) return false;
  return cd < -tol * cd_mag && cd < 0;
}

// ---- construction -------------------------------------------------------------------------------

DenseQp::DenseQp(const DenseQpCapacity& capacity, const DenseQpOptions& options)
    : cap_{std::max(capacity.vars, 0), std::max(capacity.eq_rows, 0), std::max(capacity.in_rows, 0)},
      opt_(options),
      lp_(DenseLpCapacity{cap_.eq_rows + cap_.in_rows, cap_.vars + cap_.in_rows, 1, 0}, options.lp) {
  const int n = cap_.vars, rows = cap_.eq_rows + cap_.in_rows;
  Q_.setZero(n, n);
  R_.setZero(n, n);
  L_.setZero(n, n);
  N_.setZero(n, rows);
  T_.setZero(n, n);
  Hs_.setZero(n, n);
  seen_h_.setZero(n, n);
  seen_a_in_.setZero(cap_.in_rows, n);
  HZ_.setZero(n, n);
  ZS_.setZero(n, n);
  row_norm_.setZero(rows);
  row_l1_.setZero(rows);
  row_nz_.assign(static_cast<std::size_t>(rows) * static_cast<std::size_t>(n), 0);
  row_nnz_.assign(rows, 0);
  b_all_.setZero(rows);
  res_.setZero(rows);
  s_.setZero(rows);
  t_rhs_.setZero(n);
  lower_.setZero(n);
  upper_.setZero(n);
  x_.setZero(n);
  g_.setZero(n);
  step_.setZero(n);
  u_.setZero(n);
  v_.setZero(n);
  w_.setZero(n);
  hv_.setZero(n);
  lam_.setZero(n);
  work_.assign(n, -1);
  saved_.assign(n, -1);
  piv_.assign(n, 0);
  in_w_.assign(static_cast<std::size_t>(rows) + 3 * static_cast<std::size_t>(n), 0);
  t_used_.assign(n, 0);
  hidx_.assign(n, 0);
  gather_.setZero(n);
  scatter_.setZero(n);
  A_lp_.setZero(rows, n + cap_.in_rows);
  b_lp_.setZero(rows);
  c_lp_.setZero(n + cap_.in_rows);
  lo_lp_.setZero(n + cap_.in_rows);
  up_lp_.setZero(n + cap_.in_rows);
  x_out_.setZero(n);
  y_out_.setZero(cap_.eq_rows);
  relaxed_.assign(static_cast<std::size_t>(cap_.eq_rows), 0);
  candidate_.assign(static_cast<std::size_t>(rows) + 2 * static_cast<std::size_t>(n), -1);
  exchanged_.assign(2 * (2 * static_cast<std::size_t>(n) + 11), -1);
  z_out_.setZero(cap_.in_rows);
  w_out_.setZero(n);
  farkas_.setZero(rows);
  ray_.setZero(n);
  ws_ = QpWorkingSet(cap_.in_rows, n);
  ws_.rows = ws_.cols = 0;
}

// ---- constraints by index -----------------------------------------------------------------------

bool DenseQp::is_equality(int id) const {
  if (id < me_) return !relaxed_[id];
  if (id >= first_lower() && id < first_upper()) {
    const int j = id - first_lower();
    return lower_[j] == upper_[j];
  }
  return false;
}

double DenseQp::row_dot(int i, const double* v) const {
  const double* a = N_.col(i).data();
  if (!row_sparse(i)) return dot(a, v, n_);
  const int* nz = row_nz_.data() + static_cast<std::size_t>(i) * cap_.vars;
  double s = 0.0;
  for (int k = 0, e = row_nnz_[i]; k < e; ++k) s += a[nz[k]] * v[nz[k]];
  return s;
}

double DenseQp::dot_normal(int id, const double* v) const {
  if (is_row(id)) return row_dot(id, v);
  if (id < first_upper()) return v[id - first_lower()];
  if (id < first_temp()) return -v[id - first_upper()];
  const double* a = T_.col(id - first_temp()).data();
  double s = 0.0;
  for (int j = 0; j < n_; ++j) s += a[j] * v[j];
  return s;
}

void DenseQp::load_normal(int id, double* out) const {
  if (is_row(id) || id >= first_temp()) {
    const double* a = is_row(id) ? N_.col(id).data() : T_.col(id - first_temp()).data();
    for (int j = 0; j < n_; ++j) out[j] = a[j];
    return;
  }
  for (int j = 0; j < n_; ++j) out[j] = 0.0;
  if (id < first_upper()) out[id - first_lower()] = 1.0;
  else out[id - first_upper()] = -1.0;
}

double DenseQp::rhs(int id) const {
  if (id < me_) return p_->b_eq[id];
  if (id < me_ + mi_) return p_->b_in[id - me_];
  if (id < first_upper()) return lower_[id - first_lower()];
  if (id < first_temp()) return -upper_[id - first_upper()];
  return t_rhs_[id - first_temp()];
}

double DenseQp::normal_norm(int id) const { return is_row(id) ? row_norm_[id] : 1.0; }

double DenseQp::residual(int id) const { return dot_normal(id, x_.data()) - rhs(id); }

double DenseQp::primal_scale_at(const double* x) const {
  double xmax = 0.0;
  for (int j = 0; j < n_; ++j) xmax = std::max(xmax, std::abs(x[j]));
  return 1.0 + std::max(max_b_, max_bound_) + (1.0 + max_a_) * xmax;
}

double DenseQp::primal_violation_at(const double* x) const {
  double worst = 0.0;
  for (int i = 0; i < me_ + mi_; ++i) {
    const double r = row_dot(i, x) - b_all_[i];
    worst = std::max(worst, i < me_ ? std::abs(r) : -r);
  }
  for (int j = 0; j < n_; ++j) worst = std::max({worst, lower_[j] - x[j], x[j] - upper_[j]});
  return worst;
}

double DenseQp::row_violation_at(const double* x) const {
  // As the final check's primal part (kkt_residual_of_outputs): each row against its own
  // terms, each bound against 1 + |bound|.
  double worst = 0.0;
  for (int i = 0; i < me_ + mi_; ++i) {
    const double* a = N_.col(i).data();
    const int* nz = row_nz_.data() + static_cast<std::size_t>(i) * cap_.vars;
    double res = -b_all_[i], sc = 1.0 + std::abs(b_all_[i]);
    for (int l = 0; l < row_nnz_[i]; ++l) {
      const double t = a[nz[l]] * x[nz[l]];
      res += t;
      sc += std::abs(t);
    }
    worst = std::max(worst, (i < me_ ? std::abs(res) : -res) / sc);
  }
  for (int j = 0; j < n_; ++j) {
    if (lower_[j] > -kInf) worst = std::max(worst, (lower_[j] - x[j]) / (1.0 + std::abs(lower_[j])));
    if (upper_[j] < kInf) worst = std::max(worst, (x[j] - upper_[j]) / (1.0 + std::abs(upper_[j])));
  }
  return worst;
}

double DenseQp::kkt_residual_of_outputs() {
  // The definition of qp_kkt_residual (dense_qp.hpp), evaluated on the copy begin() made of
  // the rows (their nonzeros alone) with the scales check_problem() took: the same numbers
  // to rounding, at a fraction of the cost of the general function on strided views. Its
  // primal part is row_violation_at()'s, fused here with stationarity in one pass over the
  // rows: keep the two measures in step.
  const int n = n_, me = me_, mi = mi_;
  const double *x = x_out_.data(), *y = y_out_.data(), *z = z_out_.data(), *w = w_out_.data();
  double xmax = 0.0, mmax = 0.0, wmax = 0.0;
  for (int j = 0; j < n; ++j) {
    if (!std::isfinite(x[j]) || !std::isfinite(w[j])) return kInf;
    xmax = std::max(xmax, std::abs(x[j]));
    wmax = std::max(wmax, std::abs(w[j]));
  }
  for (int i = 0; i < me + mi; ++i) {
    const double m = i < me ? y[i] : z[i - me];
    if (!std::isfinite(m)) return kInf;
    mmax = std::max(mmax, std::abs(m));
  }
  const double s_p = primal_scale_at(x);
  const double s_d = 1.0 + max_c_ + max_h_ * xmax + max_a_ * mmax + wmax;
  // Stationarity H x + c - A_eq'y - A_in'z - w, accumulated in v_ (H by columns, over the
  // nonzero x_k; the rows over their nonzeros).
  double* r = v_.data();
  for (int j = 0; j < n; ++j) r[j] = p_->c[j] - w[j];
  for (int k = 0; k < n; ++k) {
    if (x[k] == 0.0) continue;
    const auto h = p_->H.col(k);
    for (int j = 0; j < n; ++j) r[j] += h[j] * x[k];
  }
  double primal = 0.0, sign = 0.0, comp = 0.0;
  for (int i = 0; i < me + mi; ++i) {
    const double* a = N_.col(i).data();
    const int* nz = row_nz_.data() + static_cast<std::size_t>(i) * cap_.vars;
    const int e = row_nnz_[i];
    const double m = i < me ? y[i] : z[i - me];
    // Primal feasibility row by row, each against its own terms (a scale from |x|_inf
    // would let one huge entry hide an O(1) violation elsewhere).
    double res = -b_all_[i], sc = 1.0 + std::abs(b_all_[i]);
    for (int l = 0; l < e; ++l) {
      const double t = a[nz[l]] * x[nz[l]];
      res += t;
      sc += std::abs(t);
      r[nz[l]] -= a[nz[l]] * m;
    }
    if (i < me) {
      primal = std::max(primal, std::abs(res) / sc);
    } else {
      primal = std::max(primal, -res / sc);
      sign = std::max(sign, -m);
      if (m != 0) comp = std::max(comp, std::abs(m * res));
    }
  }
  double stat = 0.0;
  for (int j = 0; j < n; ++j) {
    stat = std::max(stat, std::abs(r[j]));
    const double lo = lower_[j], up = upper_[j];
    if (lo > -kInf) primal = std::max(primal, (lo - x[j]) / (1.0 + std::abs(lo)));
    if (up < kInf) primal = std::max(primal, (x[j] - up) / (1.0 + std::abs(up)));
    bound_multiplier_terms(w[j], x[j], lo, up, sign, comp);
  }
  return std::max({primal, stat / s_d, sign / s_d, comp / (s_p * s_d)});
}

// ---- input and setup ----------------------------------------------------------------------------

namespace {
/// Bitwise equality of a with the top-left block of the same size of a copy (bitwise:
/// equal data gives equal derived data, -0 and NaN included).
bool same_bits(const Eigen::Ref<const Eigen::MatrixXd>& a, const Eigen::MatrixXd& copy) {
  const std::size_t bytes = static_cast<std::size_t>(a.rows()) * sizeof(double);
  if (bytes == 0) return true;
  for (Eigen::Index j = 0; j < a.cols(); ++j)
    if (std::memcmp(a.col(j).data(), copy.col(j).data(), bytes) != 0) return false;
  return true;
}
void copy_into(const Eigen::Ref<const Eigen::MatrixXd>& a, Eigen::MatrixXd& copy) {
  const std::size_t bytes = static_cast<std::size_t>(a.rows()) * sizeof(double);
  for (Eigen::Index j = 0; j < a.cols(); ++j)
    if (bytes) std::memcpy(copy.col(j).data(), a.col(j).data(), bytes);
}
}  // namespace

Status DenseQp::check_problem(const DenseQpProblem& p) {
  if (!sizes_ok(p)) return Status::bad_input;
  const Eigen::Index n = p.c.size();
  if (n > cap_.vars || p.A_eq.rows() > cap_.eq_rows || p.A_in.rows() > cap_.in_rows)
    return Status::bad_input;
  // H and A_in bitwise those of the last problem begin() took (a branch-and-bound's nodes
  // differ in equality rows and bounds only): their checks and scales carry over, and
  // begin() keeps what it derived from them (seen_ comment in the header).
  same_h_ = seen_h_n_ == n && same_bits(p.H, seen_h_);
  same_a_in_ = seen_in_rows_ == p.A_in.rows() && seen_in_cols_ == n && same_bits(p.A_in, seen_a_in_);
  // Finite data, and its scales for the tolerances (one pass each).
  double b_eq = 0, b_in = 0, a_eq = 0, a_in = seen_max_a_in_;
  if (same_h_) max_h_ = seen_max_h_;
  if ((!same_h_ && !finite_max_abs(p.H, max_h_)) || !finite_max_abs(p.c, max_c_) || !finite_max_abs(p.b_eq, b_eq) ||
      !finite_max_abs(p.b_in, b_in) || !finite_max_abs(p.A_eq, a_eq) || (!same_a_in_ && !finite_max_abs(p.A_in, a_in)))
    return Status::bad_input;
  max_b_ = std::max(b_eq, b_in);
  max_a_ = std::max(a_eq, a_in);
  max_a_in_ = a_in;
  if (p.lower.size() && !bounds_ok(p.lower, p.upper)) return Status::bad_input;
  if (!same_h_)
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index i = j + 1; i < n; ++i)
        if (std::abs(p.H(i, j) - p.H(j, i)) > kSymmetryTol * max_h_) return Status::bad_input;
  return Status::solved;
}

void DenseQp::load_rows(const Eigen::Ref<const Eigen::MatrixXd>& A, int off) {
  // A is read by columns (contiguous), the per-row sums kept in arrays (no chain from one
  // entry to the next); the nonzero list is appended branch-free (the pattern is irregular).
  const int m = static_cast<int>(A.rows()), cap = cap_.vars;
  for (int r = 0; r < m; ++r) {
    row_norm_[off + r] = row_l1_[off + r] = 0.0;
    row_nnz_[off + r] = 0;
  }
  for (int j = 0; j < n_; ++j) {
    const auto col = A.col(j);
    for (int r = 0; r < m; ++r) {
      const int i = off + r;
      const double a = col[r];
      N_(j, i) = a;
      row_nz_[static_cast<std::size_t>(i) * cap + row_nnz_[i]] = j;
      row_nnz_[i] += a != 0.0;
      row_norm_[i] += a * a;
      row_l1_[i] += std::abs(a);
    }
  }
  for (int r = 0; r < m; ++r) row_norm_[off + r] = std::sqrt(row_norm_[off + r]);
}

void DenseQp::begin(const DenseQpProblem& p) {
  p_ = &p;
  n_ = static_cast<int>(p.c.size());
  me_ = static_cast<int>(p.A_eq.rows());
  mi_ = static_cast<int>(p.A_in.rows());
  // The rows as N_'s columns, each row's nonzeros, norms and right-hand side: the
  // inequality rows (after the equalities) kept from the last begin() when A_in is the
  // same, moved if the number of equalities changed (before the equalities are written:
  // the blocks may overlap).
  const int rows = me_ + mi_, cap = cap_.vars;
  if (same_a_in_ && in_at_ >= 0) {
    if (in_at_ != me_ && mi_ > 0) {
      const std::size_t from = static_cast<std::size_t>(in_at_), to = static_cast<std::size_t>(me_);
      const std::size_t m = static_cast<std::size_t>(mi_), c = static_cast<std::size_t>(cap);
      std::memmove(N_.col(me_).data(), N_.col(in_at_).data(), m * c * sizeof(double));
      std::memmove(row_nz_.data() + to * c, row_nz_.data() + from * c, m * c * sizeof(int));
      std::memmove(row_nnz_.data() + to, row_nnz_.data() + from, m * sizeof(int));
      std::memmove(row_norm_.data() + to, row_norm_.data() + from, m * sizeof(double));
      std::memmove(row_l1_.data() + to, row_l1_.data() + from, m * sizeof(double));
    }
  } else {
    load_rows(p.A_in, me_);
    copy_into(p.A_in, seen_a_in_);
    seen_in_rows_ = mi_;
    seen_in_cols_ = n_;
    seen_max_a_in_ = max_a_in_;
  }
  in_at_ = me_;
  load_rows(p.A_eq, 0);
  for (int i = 0; i < rows; ++i) b_all_[i] = i < me_ ? p.b_eq[i] : p.b_in[i - me_];
  max_bound_ = 0.0;
  for (int j = 0; j < n_; ++j) {
    lower_[j] = lower_of(p, j);
    upper_[j] = upper_of(p, j);
    if (lower_[j] > -kInf) max_bound_ = std::max(max_bound_, std::abs(lower_[j]));
    if (upper_[j] < kInf) max_bound_ = std::max(max_bound_, std::abs(upper_[j]));
  }
  // The variables H touches, and H on them (kept when H is the same).
  if (!same_h_) {
    hk_ = 0;
    // (Row i touched when any H(i, j) != 0; read by columns, flags in piv_.)
    for (int i = 0; i < n_; ++i) piv_[i] = 0;
    for (int j = 0; j < n_; ++j) {
      const auto col = p.H.col(j);
      for (int i = 0; i < n_; ++i) piv_[i] |= col[i] != 0.0;
    }
    for (int i = 0; i < n_; ++i) {
      hidx_[hk_] = i;
      hk_ += piv_[i];
    }
    for (int b = 0; b < hk_; ++b)
      for (int a = 0; a < hk_; ++a) Hs_(a, b) = p.H(hidx_[a], hidx_[b]);
    trace_h_ = 0.0;
    for (int j = 0; j < n_; ++j) trace_h_ += std::max(p.H(j, j), 0.0);
    copy_into(p.H, seen_h_);
    seen_h_n_ = n_;
    seen_max_h_ = max_h_;
    psd_checked_at_ = -1.0;  // not yet
  }
  zero_curv_ = opt_.curvature_tol * trace_h_;
  const std::size_t ids = static_cast<std::size_t>(me_ + mi_) + 3 * static_cast<std::size_t>(n_);
  std::fill(in_w_.begin(), in_w_.begin() + ids, 0);
  std::fill(t_used_.begin(), t_used_.begin() + n_, 0);
  x_out_.head(n_).setZero();
  y_out_.head(me_).setZero();
  z_out_.head(mi_).setZero();
  w_out_.head(n_).setZero();
  farkas_.head(me_ + mi_).setZero();
  ray_.head(n_).setZero();
  ws_.rows = mi_;
  ws_.cols = n_;
  ws_.has_point = false;
  max_iterations_ = opt_.max_iterations > 0 ? opt_.max_iterations : 50 * (n_ + me_ + mi_) + 1000;
  changes_since_refactor_ = 0;
  degenerate_steps_ = 0;
  at_minimizer_ = false;
  singular_ = false;
}

bool DenseQp::psd_ok() {
  if (hk_ == 0) return true;
  if (psd_checked_at_ == zero_curv_) return true;  // this H passed at this tolerance
  HZ_.topLeftCorner(hk_, hk_) = Hs_.topLeftCorner(hk_, hk_);
  const int r = pivoted_cholesky(HZ_, hk_, zero_curv_, piv_.data());
  for (int j = r; j < hk_; ++j)
    for (int i = r; i < hk_; ++i)
      if (std::abs(HZ_(i, j)) > kPsdTol * trace_h_) return false;
  psd_checked_at_ = zero_curv_;
  return true;
}

// ---- factorization ------------------------------------------------------------------------------

void DenseQp::reset_factors() {
  for (int k = 0; k < t_; ++k) {
    const int id = work_[k];
    in_w_[id] = 0;
    if (id >= first_temp()) t_used_[id - first_temp()] = 0;
  }
  Q_.topLeftCorner(n_, n_).setIdentity();
  t_ = 0;
  nz_ = n_;
  singular_ = false;
}

bool DenseQp::add_constraint(int id, bool update_l) {
  const int n = n_;
  // u = Q'a (all n components).
  if (!is_row(id) && id < first_temp()) {
    const int j = id < first_upper() ? id - first_lower() : id - first_upper();
    const double sgn = id < first_upper() ? 1.0 : -1.0;
    for (int k = 0; k < n; ++k) u_[k] = sgn * Q_(j, k);
  } else if (is_row(id) && row_sparse(id)) {
    const double* a = N_.col(id).data();
    const int* nz = row_nz_.data() + static_cast<std::size_t>(id) * cap_.vars;
    const int e = row_nnz_[id];
    // Four columns at a time: four independent sums (the latency of one chain of adds
    // bounded this loop), each in the same order as one at a time, so bitwise the same.
    const Eigen::Index ld = Q_.outerStride();
    int k = 0;
    for (; k + 4 <= n; k += 4) {
      const double* q = Q_.col(k).data();
      double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
      for (int l = 0; l < e; ++l) {
        const int j = nz[l];
        const double aj = a[j];
        s0 += aj * q[j];
        s1 += aj * q[j + ld];
        s2 += aj * q[j + 2 * ld];
        s3 += aj * q[j + 3 * ld];
      }
      u_[k] = s0;
      u_[k + 1] = s1;
      u_[k + 2] = s2;
      u_[k + 3] = s3;
    }
    for (; k < n; ++k) {
      const double* q = Q_.col(k).data();
      double s = 0.0;
      for (int l = 0; l < e; ++l) s += a[nz[l]] * q[nz[l]];
      u_[k] = s;
    }
  } else {
    const double* a = v_.data();
    if (is_row(id)) a = N_.col(id).data();
    else load_normal(id, v_.data());
    for (int k = 0; k < n; ++k) u_[k] = dot(Q_.col(k).data(), a, n);
  }
  // w_r = z_r'a (reduced index r <-> column n-1-r), into w_.
  double rho = 0.0;
  for (int r = 0; r < nz_; ++r) {
    w_[r] = u_[zcol(r)];
    rho += w_[r] * w_[r];
  }
  rho = std::sqrt(rho);
  if (!(rho > opt_.dependency_tol * normal_norm(id))) return false;
  if (!update_l) {
    // No L to keep in step (a working set being built): Z's column order is free, so
    // w is rotated from each nonzero entry onto the next and then swapped into last place.
    // With sparse normals (bounds, contact rows) that is a few rotations instead of one
    // per column after the first nonzero.
    int prev = -1;
    for (int r = 0; r < nz_; ++r) {
      if (w_[r] == 0.0) continue;
      if (prev >= 0) {
        const double a = w_[prev], b = w_[r];
        const double h = std::sqrt(a * a + b * b);
        const double c = b / h, s = a / h;
        w_[prev] = 0.0;
        w_[r] = h;
        rotate(Q_.col(zcol(prev)).data(), Q_.col(zcol(r)).data(), n, c, -s, s, c);
      }
      prev = r;
    }
    if (prev != nz_ - 1) {
      double* qa = Q_.col(zcol(prev)).data();
      double* qb = Q_.col(zcol(nz_ - 1)).data();
      std::swap_ranges(qa, qa + n, qb);
      w_[nz_ - 1] = w_[prev];
      w_[prev] = 0.0;
    }
  }
  // Rotate w onto its last entry: Z <- Z G, and L <- G'L K (K restores the triangle).
  for (int r = 0; update_l && r + 1 < nz_; ++r) {
    const double a = w_[r], b = w_[r + 1];
    if (a == 0.0) continue;
    const double h = std::sqrt(a * a + b * b);
    const double c = b / h, s = a / h;
    w_[r] = 0.0;
    w_[r + 1] = h;
    // (c x - s y, s x + c y): c x + (-s) y is the same number, to the sign of a zero sum.
    rotate(Q_.col(zcol(r)).data(), Q_.col(zcol(r + 1)).data(), n, c, -s, s, c);
    for (int k = 0; k <= r + 1; ++k) {
      const double x = L_(r, k), y = L_(r + 1, k);
      L_(r, k) = c * x - s * y;
      L_(r + 1, k) = s * x + c * y;
    }
    const double a2 = L_(r, r), b2 = L_(r, r + 1);
    if (b2 == 0.0) continue;
    const double h2 = std::sqrt(a2 * a2 + b2 * b2);
    const double c2 = a2 / h2, s2 = b2 / h2;
    for (int i = r; i < nz_; ++i) {
      const double x = L_(i, r), y = L_(i, r + 1);
      L_(i, r) = c2 * x + s2 * y;
      L_(i, r + 1) = -s2 * x + c2 * y;
    }
    L_(r, r + 1) = 0.0;
  }
  // The last reduced column (Q column t) joins Y.
  for (int k = 0; k < t_; ++k) R_(k, t_) = u_[k];
  R_(t_, t_) = w_[nz_ - 1];
  for (int k = t_ + 1; k < n; ++k) R_(k, t_) = 0.0;
  work_[t_] = id;
  in_w_[id] = 1;
  ++t_;
  --nz_;
  ++changes_since_refactor_;
  return true;
}

void DenseQp::delete_constraint(int pos) {
  const int id = work_[pos];  // -1: a hot start's constraint that is gone (no marks)
  if (id >= 0) {
    in_w_[id] = 0;
    if (id >= first_temp()) t_used_[id - first_temp()] = 0;
  }
  const int t = t_;
  for (int j = pos; j + 1 < t; ++j) {
    for (int i = 0; i <= j + 1; ++i) R_(i, j) = R_(i, j + 1);
    work_[j] = work_[j + 1];
  }
  // R is upper Hessenberg in columns pos..t-2: rotate rows (j, j+1) back to a triangle, and
  // Y's columns with them.
  for (int j = pos; j + 1 < t; ++j) {
    const double a = R_(j, j), b = R_(j + 1, j);
    if (b == 0.0) continue;
    const double h = std::sqrt(a * a + b * b);
    const double c = a / h, s = b / h;
    for (int k = j; k + 1 < t; ++k) {
      const double x = R_(j, k), y = R_(j + 1, k);
      R_(j, k) = c * x + s * y;
      R_(j + 1, k) = -s * x + c * y;
    }
    R_(j + 1, j) = 0.0;
    rotate(Q_.col(j).data(), Q_.col(j + 1).data(), n_, c, s, -s, c);
  }
  for (int k = 0; k < t; ++k) R_(t - 1, k) = 0.0;
  --t_;
  ++nz_;
  ++changes_since_refactor_;
}

void DenseQp::h_times(const double* v, double* out) {
  for (int i = 0; i < n_; ++i) out[i] = 0.0;
  const int k = hk_;
  if (k == 0) return;
  for (int a = 0; a < k; ++a) gather_[a] = v[hidx_[a]];
  scatter_.head(k).noalias() = Hs_.topLeftCorner(k, k) * gather_.head(k);
  for (int a = 0; a < k; ++a) out[hidx_[a]] = scatter_[a];
}

bool DenseQp::border_new_column() {
  // The new column of Z is reduced index nz-1 = column t of Q.
  const int r = nz_ - 1;
  const double* z = Q_.col(t_).data();
  h_times(z, hv_.data());
  double gamma = 0.0;
  for (int a = 0; a < hk_; ++a) gamma += z[hidx_[a]] * hv_[hidx_[a]];
  // v = Z_old' H z, then w = L^-1 v (forward), stored as row r of L.
  for (int k = 0; k < r; ++k) {
    const double* zk = Q_.col(zcol(k)).data();
    double s = 0.0;
    for (int a = 0; a < hk_; ++a) s += zk[hidx_[a]] * hv_[hidx_[a]];
    v_[k] = s;
  }
  double ww = 0.0;
  for (int k = 0; k < r; ++k) {
    double s = v_[k];
    for (int i = 0; i < k; ++i) s -= L_(k, i) * L_(r, i);
    const double wk = s / L_(k, k);
    L_(r, k) = wk;
    L_(k, r) = 0.0;
    ww += wk * wk;
  }
  const double sigma = gamma - ww;
  // The decision is on the curvature of the unit direction d/|d|, d = Z u with
  // u = [-L^-T w; 1]: d'Hd = u'Z'HZu = sigma, |d|^2 = |u|^2. (sigma alone carries an error
  // of order eps |u|^2 |Z'HZ| when Z'HZ is ill-conditioned, and |u| is then large.)
  double uu = 1.0;
  for (int i = r - 1; i >= 0; --i) {
    double s = L_(r, i);
    for (int j = i + 1; j < r; ++j) s -= L_(j, i) * u_[j];
    u_[i] = s / L_(i, i);
    uu += u_[i] * u_[i];
  }
  if (sigma > zero_curv_ * uu) {
    L_(r, r) = std::sqrt(sigma);
    singular_ = false;
    return true;
  }
  // Zero curvature. The factor keeps the pivot's true (tiny) value, not 0, so that L L'
  // stays Z'HZ to rounding through the next rotations: zeroing it would change Z'HZ by
  // sigma each time, and those changes accumulate past the threshold.
  L_(r, r) = std::sqrt(std::max(sigma, 0.0));
  singular_ = true;
  return false;
}

void DenseQp::compute_reduced_hessian() {
  const int nz = nz_, k = hk_;
  if (k == 0) {
    L_.topLeftCorner(nz, nz).setZero();
    return;
  }
  // Z on the variables H touches (ZS), H Z there (HZ), then Z'HZ = ZS' HZ into L_.
  for (int r = 0; r < nz; ++r) {
    const double* z = Q_.col(zcol(r)).data();
    for (int a = 0; a < k; ++a) ZS_(a, r) = z[hidx_[a]];
  }
  for (int r = 0; r < nz; ++r) {
    double* out = HZ_.col(r).data();
    for (int a = 0; a < k; ++a) out[a] = 0.0;
    for (int b = 0; b < k; ++b) {
      const double zb = ZS_(b, r);
      if (zb == 0.0) continue;
      const double* h = Hs_.col(b).data();
      for (int a = 0; a < k; ++a) out[a] += h[a] * zb;
    }
  }
  for (int s = 0; s < nz; ++s) {
    const double* hz = HZ_.col(s).data();
    for (int r = s; r < nz; ++r) {
      const double* zr = ZS_.col(r).data();
      double v = 0.0;
      for (int a = 0; a < k; ++a) v += zr[a] * hz[a];
      L_(r, s) = v;
      L_(s, r) = v;
    }
  }
}

int DenseQp::pivoted_cholesky_of_reduced_hessian() {
  const int rank = pivoted_cholesky(L_, nz_, zero_curv_, piv_.data());
  // The same symmetric permutation on Z's columns, so that L L' = Z'HZ in the new order.
  for (int s = 0; s < rank; ++s)
    if (piv_[s] != s) Q_.col(zcol(s)).head(n_).swap(Q_.col(zcol(piv_[s])).head(n_));
  return rank;
}

bool DenseQp::factor_reduced_hessian(bool allow_temporaries) {
  for (int round = 0; round <= kMaxTemporaryRounds; ++round) {
    compute_reduced_hessian();
    const int rank = pivoted_cholesky_of_reduced_hessian();
    const int nz = nz_;
    if (rank == nz) {
      for (int j = 0; j < nz; ++j)
        for (int i = 0; i < j; ++i) L_(i, j) = 0.0;
      singular_ = false;
      return true;
    }
    if (!allow_temporaries || round == kMaxTemporaryRounds) return false;
    // Null space of Z'HZ: N = [-L11^-T L21'; I] (nz x k); the temporary normals are the
    // columns of Z N, normalised, each in a free slot of T_.
    const int k = nz - rank;
    int slot = 0;
    for (int c = 0; c < k; ++c) {
      while (slot < n_ && t_used_[slot]) ++slot;
      if (slot == n_) return false;
      // Solve L11' y = L21(c, :)' by back substitution.
      for (int i = rank - 1; i >= 0; --i) {
        double s = L_(rank + c, i);
        for (int j = i + 1; j < rank; ++j) s -= L_(j, i) * u_[j];
        u_[i] = s / L_(i, i);
      }
      double* d = T_.col(slot).data();
      const double* zc = Q_.col(zcol(rank + c)).data();
      for (int i = 0; i < n_; ++i) d[i] = zc[i];
      for (int j = 0; j < rank; ++j) {
        const double f = -u_[j];
        if (f == 0.0) continue;
        axpy(f, Q_.col(zcol(j)).data(), d, n_);
      }
      double norm = 0.0;
      for (int i = 0; i < n_; ++i) norm += d[i] * d[i];
      norm = std::sqrt(norm);
      for (int i = 0; i < n_; ++i) d[i] /= norm;
      t_used_[slot] = 1;  // reserved; released again if not added
      saved_[c] = slot;
    }
    for (int c = 0; c < k; ++c) {
      const int s = saved_[c];
      const int id = first_temp() + s;
      t_rhs_[s] = dot_normal(id, x_.data());
      if (add_constraint(id, false)) ++temporaries_made_;
      else t_used_[s] = 0;
    }
  }
  return false;
}

bool DenseQp::rebuild_qr() {
  const int t = t_;
  for (int k = 0; k < t; ++k) saved_[k] = work_[k];
  reset_factors();
  // Equalities and fixings first: one of them is only ever dropped as dependent on others
  // of its kind (then it is implied by them); any other constraint may be dropped.
  for (int pass = 0; pass < 2; ++pass) {
    for (int k = 0; k < t; ++k) {
      const int id = saved_[k];
      if (is_equality(id) != (pass == 0)) continue;
      if (id >= first_temp()) t_used_[id - first_temp()] = 1;
      if (!add_constraint(id, false) && id >= first_temp()) t_used_[id - first_temp()] = 0;
    }
  }
  return true;
}

bool DenseQp::refactor(bool allow_temporaries) {
  rebuild_qr();
  const bool ok = factor_reduced_hessian(allow_temporaries);
  changes_since_refactor_ = 0;
  return ok;
}

bool DenseQp::check_l_diagonal() const {
  const double tol = zero_curv_;
  for (int i = 0; i < nz_; ++i)
    if (!(L_(i, i) * L_(i, i) > tol)) return false;
  return true;
}

// ---- steps --------------------------------------------------------------------------------------

void DenseQp::compute_gradient() {
  h_times(x_.data(), g_.data());
  for (int j = 0; j < n_; ++j) g_[j] += p_->c[j];
}

void DenseQp::newton_step() {
  const int nz = nz_;
  step_.head(n_).setZero();
  if (nz == 0) return;
  // u = -Z'g, then L L' u = u, then p = Z u. Z is Q's columns t..n-1 in reverse order.
  const auto Z = Q_.block(0, t_, n_, nz);
  w_.head(nz).noalias() = Z.transpose() * g_.head(n_);
  for (int r = 0; r < nz; ++r) u_[r] = -w_[nz - 1 - r];
  for (int r = 0; r < nz; ++r) {
    double s = u_[r];
    for (int i = 0; i < r; ++i) s -= L_(r, i) * u_[i];
    u_[r] = s / L_(r, r);
  }
  for (int r = nz - 1; r >= 0; --r) {
    double s = u_[r];
    for (int i = r + 1; i < nz; ++i) s -= L_(i, r) * u_[i];
    u_[r] = s / L_(r, r);
  }
  for (int r = 0; r < nz; ++r) w_[nz - 1 - r] = u_[r];
  step_.head(n_).noalias() = Z * w_.head(nz);
}

void DenseQp::zero_curvature_direction(int deleted_id) {
  // u = [-L11^-T w; 1] with w the last row of L (Z'HZ u = 0 up to sigma), p = Z u.
  const int r = nz_ - 1;
  for (int i = r - 1; i >= 0; --i) {
    double s = L_(r, i);
    for (int j = i + 1; j < r; ++j) s -= L_(j, i) * u_[j];
    u_[i] = s / L_(i, i);
  }
  for (int i = 0; i < r; ++i) u_[i] = -u_[i];
  u_[r] = 1.0;
  const int nz = nz_;
  for (int k = 0; k < nz; ++k) w_[nz - 1 - k] = u_[k];
  step_.head(n_).noalias() = Q_.block(0, t_, n_, nz) * w_.head(nz);
  // Off the deleted constraint (a real one); a temporary: downhill.
  double sgn;
  if (deleted_id < first_temp()) sgn = dot_normal(deleted_id, step_.data()) < 0 ? -1.0 : 1.0;
  else sgn = step_.head(n_).dot(g_.head(n_)) > 0 ? -1.0 : 1.0;
  if (sgn < 0) step_.head(n_) = -step_.head(n_);
}

DenseQp::Ratio DenseQp::ratio_test(double cap) {
  const int rows = me_ + mi_;
  // a'p, and a'x - b afresh (not updated step by step: long steps would carry their rounding).
  for (int i = 0; i < rows; ++i) {
    if (!row_sparse(i)) {
      s_[i] = row_dot(i, step_.data());
      res_[i] = row_dot(i, x_.data()) - b_all_[i];
      continue;
    }
    // Both sums in one pass over the row's nonzeros (two independent chains of adds, each
    // in row_dot's order: bitwise its results).
    const double* a = N_.col(i).data();
    const int* nz = row_nz_.data() + static_cast<std::size_t>(i) * cap_.vars;
    double sp = 0.0, sx = 0.0;
    for (int k = 0, e = row_nnz_[i]; k < e; ++k) {
      const int j = nz[k];
      sp += a[j] * step_[j];
      sx += a[j] * x_[j];
    }
    s_[i] = sp;
    res_[i] = sx - b_all_[i];
  }
  const double pnorm = step_.head(n_).norm();
  const double xmax = max_abs(x_.head(n_));
  const double delta = kHarrisFraction * opt_.feasibility_tol * (1.0 + max_b_ + (1.0 + max_a_) * xmax);
  const bool bland = degenerate_steps_ >= opt_.degenerate_steps_before_bland;
  // Candidates in increasing index: rows, lower bounds, upper bounds.
  const auto slope_and_residual = [&](int id, double& s, double& r) {
    if (id < rows) {
      s = s_[id];
      r = res_[id];
    } else if (id < first_upper()) {
      const int j = id - first_lower();
      s = step_[j];
      r = x_[j] - lower_[j];
    } else {
      const int j = id - first_upper();
      s = -step_[j];
      r = upper_[j] - x_[j];
    }
  };
  const auto eligible = [&](int id) {
    if (in_w_[id] || is_equality(id)) return false;
    if (id >= first_lower()) {
      const int j = id < first_upper() ? id - first_lower() : id - first_upper();
      if (lower_[j] == upper_[j]) return false;
      if (id < first_upper() ? lower_[j] == -kInf : upper_[j] == kInf) return false;
    }
    return true;
  };
  const int end = first_temp();
  // Pass 1: the largest step the relaxed bounds allow (Harris), or under Bland's rule the
  // exact minimum ratio (its ties are then broken by the smallest index alone).
  // The candidates (eligible, and a'p < 0 beyond the pivot tolerance) are kept in
  // increasing index for pass 2 (mostly a few of all the constraints).
  double amax = cap;
  const int start = relaxing_ ? 0 : me_;  // relaxed equality rows are inequalities there
  int candidates = 0;
  for (int id = start; id < end; ++id) {
    if (!eligible(id)) continue;
    double s, r;
    slope_and_residual(id, s, r);
    if (!(s < -opt_.pivot_tol * normal_norm(id) * pnorm)) continue;
    amax = std::min(amax, (std::max(r, 0.0) + (bland ? 0.0 : delta)) / -s);
    candidate_[candidates++] = id;
  }
  if (bland) amax *= 1.0 + 1e-12;
  Ratio best;
  double best_pivot = 0.0;
  for (int c = 0; c < candidates; ++c) {
    const int id = candidate_[c];
    double s, r;
    slope_and_residual(id, s, r);
    const double alpha = std::max(r, 0.0) / -s;
    if (!(alpha <= amax)) continue;
    const double pivot = -s / normal_norm(id);
    if (best.id < 0 || (!bland && pivot > best_pivot)) {
      best.id = id;
      best.alpha = alpha;
      best_pivot = pivot;
      if (bland) break;
    }
  }
  if (best.id < 0) best.alpha = cap;
  return best;
}

bool DenseQp::is_ray() const {
  // After ratio_test(inf) along d: does d already pass verify_qp_ray's tolerances (rows
  // with a'd >= -1e-9 |a|_1 max|d| block only absurdly far away, and do not count there)?
  constexpr double tol = 1e-9;
  const double dmax = max_abs(step_.head(n_));
  if (!(dmax > 0)) return false;
  double cd = 0.0, c1 = 0.0;
  for (int j = 0; j < n_; ++j) {
    cd += p_->c[j] * step_[j];
    c1 += std::abs(p_->c[j]);
    if (step_[j] < -tol * dmax && lower_[j] > -kInf) return false;
    if (step_[j] > tol * dmax && upper_[j] < kInf) return false;
  }
  if (!(cd < -tol * c1 * dmax)) return false;
  for (int i = 0; i < me_ + mi_; ++i) {
    const double lim = tol * row_l1_[i] * dmax;
    if (i < me_ ? std::abs(s_[i]) > lim : s_[i] < -lim) return false;
  }
  return true;
}

void DenseQp::take_step(const Ratio& r) {
  const double a = r.alpha;
  if (a != 0.0)
    for (int j = 0; j < n_; ++j) x_[j] += a * step_[j];
  if (r.id >= 0 && a == 0.0) ++degenerate_steps_;
  else degenerate_steps_ = 0;
}

void DenseQp::compute_multipliers() {
  // R lambda = Y'g.
  const int t = t_;
  lam_.head(t).noalias() = Q_.topLeftCorner(n_, t).transpose() * g_.head(n_);
  // Back substitution by columns of R (contiguous, column-major): each solved lambda_k is
  // taken out of the rows above it at once.
  for (int k = t - 1; k >= 0; --k) {
    lam_[k] /= R_(k, k);
    axpy(-lam_[k], R_.col(k).data(), lam_.data(), k);
  }
}

int DenseQp::choose_deletion() const {
  const double tol = opt_.multiplier_tol * (1.0 + max_abs(g_.head(n_)));
  const bool bland = degenerate_steps_ >= opt_.degenerate_steps_before_bland;
  int best = -1;
  double best_v = 0.0;
  for (int k = 0; k < t_; ++k) {
    const int id = work_[k];
    if (is_equality(id)) continue;
    double v;
    if (id >= first_temp()) {
      if (!(std::abs(lam_[k]) > tol)) continue;
      v = -std::abs(lam_[k]);
    } else {
      v = lam_[k] * normal_norm(id);
      if (!(v < -tol)) continue;
    }
    if (best < 0 || (bland ? id < work_[best] : (v < best_v || (v == best_v && id < work_[best])))) {
      best = k;
      best_v = v;
    }
  }
  return best;
}

// ---- solve --------------------------------------------------------------------------------------

Status DenseQp::solve(const DenseQpProblem& p) { return run(p, nullptr); }

Status DenseQp::solve(const DenseQpProblem& p, const QpWorkingSet& warm) { return run(p, &warm); }

Status DenseQp::solve_hot(const DenseQpProblem& p, const QpWorkingSet& warm, const int* eq_from_last) {
  return run(p, &warm, true, eq_from_last);
}

Status DenseQp::run(const DenseQpProblem& p, const QpWorkingSet* warm, bool hot, const int* eq_from_last) {
  const auto t0 = opt_.timing ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  // The last solve's factorization, for a hot start (begin() leaves Q, R, W and x alone).
  const Hot last{hot_ready_, n_, me_, mi_, t_, changes_since_refactor_};
  hot_ready_ = false;
  repair_proof_ = false;
  stats_ = SolverStats{};
  objective_ = 0.0;
  lp_pivots_ = 0;
  temporaries_made_ = 0;
  warm_ = QpWarmStart::not_requested;
  t_ = 0;
  status_ = check_problem(p);
  if (status_ == Status::solved) {
    begin(p);
    if (opt_.check_psd && !psd_ok()) status_ = Status::bad_input;
  }
  if (status_ == Status::bad_input) {
    n_ = me_ = mi_ = 0;
    t_ = 0;
    ws_.rows = ws_.cols = 0;
    ws_.has_point = false;
  } else {
    bool started = false, proven_by_repair = false;
    // (A null map is fine when the last problem had no equality rows.)
    if (hot && last.ready && last.n == n_ && last.mi == mi_ && (eq_from_last || last.me == 0)) {
      if (try_warm_start(*warm, &last, eq_from_last)) {
        warm_ = QpWarmStart::hot;
        started = true;
      } else if (repair_proof_) {
        warm_ = QpWarmStart::rejected_infeasible;  // its repair walk proved it: verified below
        // Q and R go on from the last solve's: so does their count of updates (a hot start
        // may follow this one, below).
        changes_since_refactor_ += last.changes;
      } else {
        // Then from the list: W emptied, the hot attempt's marks and its count of
        // degenerate steps (which would start the walk under Bland's rule) cleared.
        reset_factors();
        degenerate_steps_ = 0;
        std::fill(in_w_.begin(), in_w_.begin() + first_temp() + n_, 0);
        std::fill(t_used_.begin(), t_used_.begin() + n_, 0);
      }
    }
    if (warm && !started && !repair_proof_) {
      if (warm->cols != n_ || warm->rows > mi_ || static_cast<int>(warm->active.size()) < warm->rows ||
          static_cast<int>(warm->bound.size()) < n_ || (warm->has_point && warm->x.size() < n_)) {
        warm_ = QpWarmStart::rejected_invalid;
      } else {
        repair_proof_ = false;
        // A guessed point first projected with its whole set; then the usual start.
        if ((warm->point_is_guess && warm->has_point && try_warm_start(*warm, nullptr, nullptr, true)) ||
            try_warm_start(*warm)) {
          warm_ = QpWarmStart::accepted;
          started = true;
        } else {
          warm_ = QpWarmStart::rejected_infeasible;
        }
      }
    }
    if (!started && warm_ == QpWarmStart::rejected_infeasible && repair_proof_ &&
        verify_qp_farkas(p, farkas_.head(me_), farkas_.segment(me_, mi_))) {
      // The repair walk proved infeasibility: no phase-1 LP needed. x() is its last point.
      x_out_.head(n_) = x_.head(n_);
      status_ = Status::infeasible;
      proven_by_repair = true;
    } else {
      status_ = started ? Status::solved : cold_start();
    }
    if (status_ == Status::solved) status_ = phase2();
    if (started && (status_ == Status::numerical_failure || status_ == Status::iteration_limit)) {
      // A warm start's repair walk and phase 2 can leave the final check just short (seen
      // at 1e-9 to 2e-8 on the MIQP's stiff elastic-bound rows) where a cold start passes,
      // or cycle to the iteration limit on badly scaled data (a fuzz found 66 such warm
      // starts in 234k; the cold start solved them): one cold attempt before giving up.
      warm_ = QpWarmStart::abandoned;
      // The cold attempt gets the whole iteration budget (a warm phase 2 at the limit has
      // spent it); the count reported is both attempts'.
      const int warm_iterations = stats_.iterations;
      stats_.iterations = 0;
      status_ = cold_start();
      if (status_ == Status::solved) status_ = phase2();
      stats_.iterations += warm_iterations;
    }
    // A hot start can follow a solved problem, or one the repair walk proved empty: its
    // walk leaves W active at x and every constraint but the pending ones held, as a start
    // (a sibling of an empty branch-and-bound child mostly follows one). Not a phase-1
    // LP's end: the LP has its own factorization.
    hot_ready_ = status_ == Status::solved || proven_by_repair;
  }
  if (opt_.timing)
    stats_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return status_;
}

Status DenseQp::cold_start() {
  const int n = n_, me = me_, mi = mi_, m = me + mi, cols = n + mi;
  degenerate_steps_ = 0;  // an abandoned warm start's count would start phase 2 under Bland's rule
  const DenseQpProblem& p = *p_;
  auto A = A_lp_.topLeftCorner(m, cols);
  A.setZero();
  for (int i = 0; i < me; ++i) A.row(i).head(n) = p.A_eq.row(i);
  for (int i = 0; i < mi; ++i) {
    A.row(me + i).head(n) = p.A_in.row(i);
    A(me + i, n + i) = -1.0;
  }
  b_lp_.head(me) = p.b_eq;
  b_lp_.segment(me, mi).setZero();
  if (opt_.phase1_minimizes_c) c_lp_.head(n) = p.c;
  else c_lp_.head(n).setZero();
  c_lp_.segment(n, mi).setZero();
  lo_lp_.head(n) = lower_.head(n);
  up_lp_.head(n) = upper_.head(n);
  lo_lp_.segment(n, mi) = p.b_in;
  up_lp_.segment(n, mi).setConstant(kInf);
  const DenseLpProblem lp{A, b_lp_.head(m), c_lp_.head(cols), lo_lp_.head(cols), up_lp_.head(cols)};
  lp_.options() = opt_.lp;
  const Status s = lp_.solve(lp);
  lp_pivots_ = lp_.stats().iterations;
  x_.head(n) = lp_.x().head(n);
  x_out_.head(n) = x_.head(n);
  if (s == Status::infeasible) {
    farkas_.head(m) = lp_.farkas();
    // The inequality part must be >= 0; the LP's may carry rounding-level negatives (its
    // slack columns' entries of -u_i count as zero to rounding). Clamped, then re-verified.
    for (int i = me; i < m; ++i) farkas_[i] = std::max(farkas_[i], 0.0);
    return verify_qp_farkas(p, farkas_.head(me), farkas_.segment(me, mi)) ? Status::infeasible
                                                                          : Status::numerical_failure;
  }
  if (s != Status::solved && s != Status::unbounded) return s;
  // The first working set from the LP's basis (every mark of an abandoned warm start
  // cleared first).
  const LpBasis& basis = lp_.basis();
  reset_factors();
  std::fill(in_w_.begin(), in_w_.begin() + first_temp() + n, 0);
  std::fill(t_used_.begin(), t_used_.begin() + n, 0);
  for (int i = 0; i < me; ++i) add_constraint(i, false);
  for (int j = 0; j < n; ++j)
    if (lower_[j] == upper_[j]) add_constraint(first_lower() + j, false);
  for (int i = 0; i < mi; ++i)
    if (basis.state[n + i] == LpVarState::at_lower) add_constraint(me + i, false);
  for (int j = 0; j < n; ++j) {
    if (lower_[j] == upper_[j]) continue;
    if (basis.state[j] == LpVarState::at_lower && lower_[j] > -kInf) add_constraint(first_lower() + j, false);
    if (basis.state[j] == LpVarState::at_upper && upper_[j] < kInf) add_constraint(first_upper() + j, false);
  }
  const bool ok = factor_reduced_hessian(true);
  changes_since_refactor_ = 0;
  at_minimizer_ = false;
  return ok ? Status::solved : Status::numerical_failure;
}

bool DenseQp::keep_last_working_set(const Hot& last, const int* eq_from_last) {
  // The last solve's W in its constraint numbering: equalities 0..last.me-1, rows, lower
  // and upper bounds, temporaries. Renamed to this problem's numbering (its rows, bounds
  // and the equalities eq_from_last maps keep their normals, so Q and R stay valid);
  // what is gone, infinite now or no longer held at x leaves W.
  const int old_first_lower = last.me + last.mi, old_first_upper = old_first_lower + last.n,
            old_first_temp = old_first_upper + last.n;
  t_ = last.t;
  nz_ = n_ - t_;
  const double tol = opt_.feasibility_tol * primal_scale_at(x_.data());
  for (int k = t_ - 1; k >= 0; --k) {
    const int old = work_[k];
    int id = -1;
    if (old < last.me) id = eq_from_last[old];
    else if (old < old_first_temp) id = old - last.me + me_;
    bool keep = id >= 0 && id < first_temp();
    if (keep && id >= first_lower()) {
      const int j = id < first_upper() ? id - first_lower() : id - first_upper();
      keep = id < first_upper() ? lower_[j] > -kInf : upper_[j] < kInf;
    }
    keep = keep && std::abs(residual(id)) <= tol;
    if (keep) {
      work_[k] = id;
      in_w_[id] = 1;
    } else {
      work_[k] = -1;  // no mark to clear
      delete_constraint(k);
    }
  }
  return x_.head(n_).allFinite();
}

bool DenseQp::try_warm_start(const QpWorkingSet& ws, const Hot* hot, const int* eq_from_last, bool project_guess) {
  const int n = n_, me = me_;
  if (hot) {
    if (!keep_last_working_set(*hot, eq_from_last)) return false;
  } else {
    reset_factors();
    if (ws.has_point) x_.head(n) = ws.x.head(n);
    else x_.head(n).setZero();
  }
  // A guessed point is only the origin of the projection below, as the origin is without one.
  const bool has_point = hot || (ws.has_point && !project_guess);
  // With a point: the constraints it violates are "pending" (in_w_ = 2: out of every ratio
  // test) until the repair below makes them active; listed constraints it does not hold
  // active are stale and left out.
  const double tol = opt_.feasibility_tol * primal_scale_at(x_.data());
  // The rows' a'x - b at the given point, once (x does not move before the repair below;
  // ratio_test() reuses res_ only after that).
  for (int i = 0; i < me_ + mi_; ++i) res_[i] = row_dot(i, x_.data()) - b_all_[i];
  const auto residual_here = [&](int id) { return is_row(id) ? res_[id] : residual(id); };
  const auto violated = [&](int id) {
    const double r = residual_here(id);
    return is_equality(id) ? std::abs(r) > tol : r < -tol;
  };
  const auto usable = [&](int id) { return !has_point || std::abs(residual_here(id)) <= tol; };
  if (has_point) {
    for (int id = 0; id < first_temp(); ++id) {
      if (in_w_[id]) continue;
      if (id >= first_lower()) {
        const int j = id < first_upper() ? id - first_lower() : id - first_upper();
        if (lower_[j] == upper_[j] && id >= first_upper()) continue;  // fixed: the lower id
        if ((id < first_upper() ? lower_[j] : upper_[j]) == (id < first_upper() ? -kInf : kInf)) continue;
      }
      if (violated(id)) in_w_[id] = 2;
    }
  }
  // An equality or fixing that depends on W: in a fresh W only on earlier ones (implied by
  // them), but a hot W also holds inequalities, one of which it must replace (the repair
  // walk's swap), or phase 2 could drop that inequality and leave the equality.
  for (int i = 0; i < me; ++i)
    if (!in_w_[i] && !add_constraint(i, false) && hot) in_w_[i] = 2;
  for (int j = 0; j < n; ++j) {
    const int id = first_lower() + j;
    if (lower_[j] == upper_[j] && !in_w_[id] && !add_constraint(id, false) && hot) in_w_[id] = 2;
  }
  for (int i = 0; i < ws.rows && !hot; ++i)
    if (ws.active[i] && !in_w_[me + i] && usable(me + i)) add_constraint(me + i, false);
  for (int j = 0; j < n && !hot; ++j) {
    if (lower_[j] == upper_[j]) continue;
    const int lo = first_lower() + j, up = first_upper() + j;
    if (ws.bound[j] == QpBoundState::at_lower && lower_[j] > -kInf && !in_w_[lo] && usable(lo))
      add_constraint(lo, false);
    if (ws.bound[j] == QpBoundState::at_upper && upper_[j] < kInf && !in_w_[up] && usable(up))
      add_constraint(up, false);
  }
  if (has_point) {
    for (int id = 0; id < first_temp(); ++id)
      if (in_w_[id] == 2 && !repair(id)) return false;
  }
  // Onto the affine set of W: x += Y R^-T (b_W - A_W x) (a rounding-level correction after
  // the repair; the whole move without a point).
  for (int k = 0; k < t_; ++k) {
    double s = -residual(work_[k]);
    for (int i = 0; i < k; ++i) s -= R_(i, k) * lam_[i];
    lam_[k] = s / R_(k, k);
  }
  for (int k = 0; k < t_; ++k) {
    const double f = lam_[k];
    axpy(f, Q_.col(k).data(), x_.data(), n);
  }
  if (!x_.head(n).allFinite() || !factor_reduced_hessian(true)) return false;
  // A hot start's Q and R carry the updates of earlier solves: their count goes on (those
  // of the last solve plus this start's), so that phase 2 refactorizes every
  // refactor_interval changes as within one solve.
  changes_since_refactor_ = hot ? hot->changes + changes_since_refactor_ : 0;
  degenerate_steps_ = 0;
  // A guessed point's start must hold every row as the final check measures it, row by row:
  // against the global scale, a row off by 6e-5 passed where |A| ~ 6e3 (found by fuzzing:
  // phase 2 from there cycled, and an empty problem ended iteration_limit).
  const auto feasible_at = [&](const double* x) {
    return project_guess ? row_violation_at(x) <= opt_.feasibility_tol
                         : primal_violation_at(x) <= opt_.feasibility_tol * primal_scale_at(x);
  };
  const bool here_feasible = feasible_at(x_.data());
  // The minimizer on W (with its temporaries) if it is feasible, else this point.
  compute_gradient();
  newton_step();
  for (int i = 0; i < n; ++i) v_[i] = x_[i] + step_[i];
  if (v_.head(n).allFinite() && feasible_at(v_.data())) {
    x_.head(n) = v_.head(n);
    at_minimizer_ = true;
  } else if (here_feasible) {
    at_minimizer_ = false;
  } else {
    return false;
  }
  return true;
}

void DenseQp::record_repair_proof(int id, double sign) {
  const int m = me_ + mi_;
  farkas_.head(m).setZero();
  for (int k = 0; k < t_; ++k) {
    const int wid = work_[k];
    if (wid >= first_temp()) {
      if (lam_[k] != 0.0) return;  // a temporary constraint is not the problem's
      continue;
    }
    if (is_row(wid)) farkas_[wid] -= sign * lam_[k];
  }
  if (is_row(id)) farkas_[id] += sign;
  // Inequality rows: mu_k delta <= 0 up to dependency_tol; rounding-level negatives clamped
  // (the verifier decides).
  for (int i = me_; i < m; ++i) farkas_[i] = std::max(farkas_[i], 0.0);
  repair_proof_ = true;
}

bool DenseQp::repair(int id) {
  // Move x, keeping the constraints of W active and every satisfied constraint satisfied,
  // until constraint `id` holds with equality; then it joins W. A constraint of W whose
  // normal is needed (a_id in the span of W's normals) leaves W when its multiplier in
  // a_id = A_W' mu lets it (mu_k of the sign of the move: the dual simplex's choice).
  const int limit = 4 * n_ + 10;
  for (int it = 0; it < limit; ++it) {
    const double delta = -residual(id);
    // u = Q'a, w = Z'a.
    load_normal(id, v_.data());
    u_.head(n_).noalias() = Q_.topLeftCorner(n_, n_).transpose() * v_.head(n_);
    double ww = 0.0;
    for (int r = 0; r < nz_; ++r) ww += u_[zcol(r)] * u_[zcol(r)];
    if (!(std::sqrt(ww) > opt_.dependency_tol * normal_norm(id))) {
      // a_id = A_W' mu (R mu = Y'a).
      for (int k = t_ - 1; k >= 0; --k) {
        double s = u_[k];
        for (int j = k + 1; j < t_; ++j) s -= R_(k, j) * lam_[j];
        lam_[k] = s / R_(k, k);
      }
      const bool satisfied = std::abs(delta) <= opt_.feasibility_tol * (1.0 + std::abs(rhs(id)));
      // Satisfied already: an inequality needs nothing more; an equality (or fixing) must
      // be held by W itself, so it takes the place of the inequality of W it depends on
      // most (x does not move). Otherwise the inequality with mu_k delta > 0 of largest
      // |mu_k| |a_k| leaves, to let a'x move toward b.
      // After degenerate_steps_before_bland zero-length steps the smallest index among the
      // candidates leaves instead (Bland's rule: the walk is a simplex on the target's
      // violation and cannot cycle then).
      int best = -1;
      const double floor_v = opt_.dependency_tol * normal_norm(id);
      double best_v = floor_v;
      const bool bland = degenerate_steps_ >= opt_.degenerate_steps_before_bland;
      for (int k = 0; k < t_; ++k) {
        const int wid = work_[k];
        if (is_equality(wid) || wid >= first_temp()) continue;
        const double v = satisfied || lam_[k] * delta > 0 ? std::abs(lam_[k]) * normal_norm(wid) : 0.0;
        if (bland ? v > floor_v && (best < 0 || wid < work_[best]) : v > best_v) {
          best = k;
          best_v = v;
        }
      }
      if (satisfied && (best < 0 || !is_equality(id))) {
        in_w_[id] = 0;  // implied by W's equalities, or an inequality that holds
        return true;
      }
      if (best < 0) {
        // No constraint of W can give way: a_id = A_W' mu with every inequality's
        // mu_k delta <= 0, so on {x : W holds} a_id'x moves away from b_id (delta's sign
        // times a_id'x is at most its value here): the problem is infeasible, and
        // sign(delta) (a_id - A_W' mu) is its Farkas combination (bounds in W are the
        // verifier's box). Recorded for run(), which verifies it.
        if (!satisfied) record_repair_proof(id, delta > 0 ? 1.0 : -1.0);
        return false;
      }
      delete_constraint(best);
      if (satisfied) {
        // The equality takes the freed place where x stands. (Moving on instead, toward a
        // residual of rounding size and arbitrary sign, stepped back into the deleted
        // constraint at zero length, re-added it and deleted it again until the step
        // limit: a third of the MIQP's warm starts ended in a cold start that way.) Should
        // it still depend on W (what is left of a_k off the others' span can be below the
        // dependency tolerance), it stays pending and the walk goes on.
        in_w_[id] = 0;
        if (add_constraint(id, false)) return true;
        in_w_[id] = 2;
      }
      continue;
    }
    // The least-norm move in the null space of W that makes a'x = b: d = Z w delta / |w|^2.
    step_.head(n_).setZero();
    for (int r = 0; r < nz_; ++r) {
      const double f = u_[zcol(r)] * delta / ww;
      if (f == 0.0) continue;
      axpy(f, Q_.col(zcol(r)).data(), step_.data(), n_);
    }
    const Ratio r = ratio_test(1.0);
    take_step(r);
    if (r.id >= 0) {
      add_constraint(r.id, false);
      continue;
    }
    in_w_[id] = 0;
    return add_constraint(id, false);
  }
  return false;
}

Status DenseQp::phase2() {
  int check_refactors = 0, refinements = 0;
  while (true) {
    if (stats_.iterations >= max_iterations_) {
      write_outputs(false);
      stats_.has_point = true;
      return Status::iteration_limit;
    }
    if (changes_since_refactor_ >= opt_.refactor_interval) {
      if (!refactor(true)) {
        write_outputs(false);
        return Status::numerical_failure;
      }
    }
    compute_gradient();
    if (!at_minimizer_ && nz_ > 0) {
      newton_step();
      const Ratio r = ratio_test(1.0);
      ++stats_.iterations;
      take_step(r);
      if (r.id >= 0) {
        add_constraint(r.id, true);
        at_minimizer_ = false;
        refinements = 0;
        if (!check_l_diagonal() && !refactor(true)) {
          write_outputs(false);
          return Status::numerical_failure;
        }
      } else {
        at_minimizer_ = true;
      }
      continue;
    }
    // A subspace minimizer (or a vertex). A reduced gradient that is not small (the Newton
    // step was inaccurate: an ill-conditioned Z'HZ) gets one more Newton step first.
    if (nz_ > 0 && refinements < 1) {
      double zg = 0.0;
      for (int r = 0; r < nz_; ++r) zg = std::max(zg, std::abs(Q_.col(zcol(r)).head(n_).dot(g_.head(n_))));
      if (zg > opt_.multiplier_tol * (1.0 + max_abs(g_.head(n_)))) {
        ++refinements;
        at_minimizer_ = false;
        continue;
      }
    }
    refinements = 0;
    compute_multipliers();
    const int k = choose_deletion();
    if (k < 0) {
      bool retry = false;
      const Status s = finish_optimal(retry);
      if (!retry) return s;
      if (++check_refactors > kMaxCheckRefactors) {
        write_outputs(false);
        return Status::numerical_failure;
      }
      continue;
    }
    ++stats_.iterations;
    const int deleted = work_[k];
    delete_constraint(k);
    at_minimizer_ = false;
    if (border_new_column()) continue;  // still positive definite: a Newton step next
    // Singular: step along the direction of zero curvature to the first blocking constraint.
    zero_curvature_direction(deleted);
    const Ratio r = ratio_test(kInf);
    if (r.id < 0 || is_ray()) return finish_unbounded();
    take_step(r);
    add_constraint(r.id, true);
    singular_ = false;
    if (!check_l_diagonal() && !refactor(true)) {
      write_outputs(false);
      return Status::numerical_failure;
    }
  }
}

void DenseQp::write_outputs(bool multipliers) {
  const int n = n_;
  x_out_.head(n) = x_.head(n);
  y_out_.head(me_).setZero();
  z_out_.head(mi_).setZero();
  w_out_.head(n).setZero();
  ws_.rows = mi_;
  ws_.cols = n;
  for (int i = 0; i < mi_; ++i) ws_.active[i] = 0;
  for (int j = 0; j < n; ++j) ws_.bound[j] = QpBoundState::inactive;
  ws_.x.head(n) = x_.head(n);
  ws_.has_point = true;
  for (int k = 0; k < t_; ++k) {
    const int id = work_[k];
    const double lam = multipliers ? lam_[k] : 0.0;
    if (id < me_) {
      y_out_[id] = relaxed_[id] ? std::max(lam, 0.0) : lam;
    } else if (id < me_ + mi_) {
      z_out_[id - me_] = std::max(lam, 0.0);
      ws_.active[id - me_] = 1;
    } else if (id < first_upper()) {
      const int j = id - first_lower();
      w_out_[j] = lower_[j] == upper_[j] ? lam : std::max(lam, 0.0);
      ws_.bound[j] = QpBoundState::at_lower;
    } else if (id < first_temp()) {
      const int j = id - first_upper();
      w_out_[j] = -std::max(lam, 0.0);
      ws_.bound[j] = QpBoundState::at_upper;
    }
  }
  h_times(x_.data(), hv_.data());
  objective_ = 0.0;
  for (int j = 0; j < n; ++j) objective_ += x_[j] * (0.5 * hv_[j] + p_->c[j]);
}

bool DenseQp::optimal_when_relaxed(const DenseQpProblem& p, const std::uint8_t* relax_eq,
                                   const std::uint8_t* relax_fixed) {
  if (status_ != Status::solved || !hot_ready_) return false;
  p_ = &p;
  const int n = n_;
  // A relaxed row keeps its normal and its place in W; a relaxed variable's upper bound is
  // lifted until the end. (A fixed variable is in W by its lower bound: cold_start and
  // try_warm_start add that one.)
  for (int k = 0; k < me_; ++k) relaxed_[k] = relax_eq && relax_eq[k] ? 1 : 0;
  for (int j = 0; j < n && relax_fixed; ++j)
    if (relax_fixed[j] && lower_[j] == upper_[j]) upper_[j] = kInf;
  relaxing_ = true;
  degenerate_steps_ = 0;
  const double tol = opt_.feasibility_tol * primal_scale_at(x_.data());
  const int limit = 2 * n + 10;
  // The constraint that stops the direction in step_ at x at once, or -1: an equality
  // left out of W as dependent on it (it may depend on a constraint that left: then any
  // direction breaking it stops at once), else the ratio test's choice if it is active at
  // x. A step of positive length would be a descent direction leaving x, which is then
  // not optimal.
  const auto blocking_at_x = [&](double cap) {
    const double pnorm = step_.head(n).norm();
    for (int id = 0; id < first_upper(); ++id) {
      if (id == me_) id = first_lower();
      if (in_w_[id] || !is_equality(id)) continue;
      if (std::abs(dot_normal(id, step_.data())) > opt_.pivot_tol * normal_norm(id) * pnorm) return id;
    }
    const Ratio r = ratio_test(cap);
    return r.id >= 0 && std::abs(residual(r.id)) <= tol ? r.id : -1;
  };
  int exchanges = 0;  // pairs (left, joined) in exchanged_; left -1: a join alone
  bool optimal = false;
  for (int e = 0; e <= limit; ++e) {
    compute_gradient();
    // The multipliers mean something only at a minimizer on W, which x may no longer be
    // after a constraint joined (with H != 0; found in review: a "true" at a point that
    // was not optimal): the Newton step on W must be stopped at once, by a constraint
    // that then joins, or x is not optimal.
    double zg = 0.0;
    for (int r = 0; r < nz_; ++r) zg = std::max(zg, std::abs(Q_.col(zcol(r)).head(n).dot(g_.head(n))));
    if (zg > opt_.multiplier_tol * (1.0 + max_abs(g_.head(n)))) {
      if (e == limit) break;
      newton_step();
      const int joined = blocking_at_x(1.0);
      if (joined < 0 || !add_constraint(joined, true)) break;
      exchanged_[2 * exchanges] = -1;
      exchanged_[2 * exchanges + 1] = joined;
      ++exchanges;
      ++degenerate_steps_;
      continue;
    }
    compute_multipliers();
    const int k = choose_deletion();
    if (k < 0) {
      optimal = true;
      break;
    }
    if (e == limit) break;
    const int deleted = work_[k];
    delete_constraint(k);
    exchanged_[2 * exchanges] = deleted;
    exchanged_[2 * exchanges + 1] = -1;
    ++exchanges;
    const bool newton = border_new_column();
    if (newton) newton_step();
    else zero_curvature_direction(deleted);
    const int joined = blocking_at_x(newton ? 1.0 : kInf);
    if (joined < 0 || !add_constraint(joined, true)) break;
    exchanged_[2 * exchanges - 1] = joined;
    singular_ = false;
    ++degenerate_steps_;  // the smallest-index rule after degenerate_steps_before_bland
  }
  if (optimal) write_outputs(true);  // with the relaxed signs (relaxed_, upper_)
  relaxing_ = false;
  for (int k = 0; k < me_; ++k) relaxed_[k] = 0;
  for (int j = 0; j < n && relax_fixed; ++j)
    if (relax_fixed[j]) upper_[j] = upper_of(p, j);
  if (optimal) {
    if (exchanges > 0) hot_ready_ = false;  // W is the relaxed problem's
    return true;
  }
  // Not shown optimal: the exchanges are undone (last first), so that W is the solve's
  // again and a hot start may follow (a branch-and-bound's next node on this workspace).
  for (int e = exchanges - 1; e >= 0; --e) {
    const int left = exchanged_[2 * e], joined = exchanged_[2 * e + 1];
    if (joined >= 0) {
      int pos = 0;
      while (pos < t_ && work_[pos] != joined) ++pos;
      delete_constraint(pos);
      border_new_column();
    }
    if (left < 0) continue;
    if (!add_constraint(left, true)) {
      hot_ready_ = false;
      break;
    }
    if (left >= first_temp()) t_used_[left - first_temp()] = 1;
  }
  singular_ = false;
  hot_ready_ = hot_ready_ && check_l_diagonal();
  return false;
}

Status DenseQp::finish_optimal(bool& retry) {
  write_outputs(true);
  stats_.residual = kkt_residual_of_outputs();
  if (stats_.residual <= opt_.kkt_tol) return Status::solved;
  // Refactorize from scratch and iterate on (the caller bounds how often).
  retry = refactor(true);
  at_minimizer_ = false;
  return Status::numerical_failure;
}

Status DenseQp::finish_unbounded() {
  write_outputs(false);
  const double d = max_abs(step_.head(n_));
  for (int j = 0; j < n_; ++j) ray_[j] = step_[j] / d;
  // The ray's start, row by row as a solved point is checked (a scale from |x|_inf would
  // let a start far out hide a row violated by more than tol; found by fuzzing: an
  // infeasible problem reported unbounded).
  const bool feasible = qp_primal_residual(*p_, x_out_.head(n_)) <= opt_.kkt_tol;
  return feasible && verify_qp_ray(*p_, ray_.head(n_)) ? Status::unbounded : Status::numerical_failure;
}

}  // namespace qs

// Primal active-set QP with inertia control; see dense_qp.hpp for the method. The
// factorization, the starts and the residual checks are in dense_qp_factor.cpp,
// dense_qp_start.cpp and dense_qp_residuals.cpp.
#include "quasistep/kernels/dense_qp.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "dense_qp_helpers.hpp"

namespace qs {
namespace {

// Harris' ratio test relaxes every bound by this fraction of the feasibility tolerance.
constexpr double kHarrisFraction = 1e-2;
// Refactorizations allowed when the final check fails, before numerical_failure.
constexpr int kMaxCheckRefactors = 3;

}  // namespace

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

bool DenseQp::is_ray() {
  // After ratio_test(inf) along d: does d already pass verify_qp_ray's tolerances (rows
  // with a'd >= -1e-9 |a S^-1|_1 max|S d| block only absurdly far away, and do not count
  // there)? Judged as verify_qp_ray judges it, in the variables S x (ray_column_scale, into
  // hv_, free scratch here): the same verdict in any units of the variables.
  constexpr double tol = 1e-9;
  double* const s = hv_.data();
  double dmax = 0.0;
  for (int j = 0; j < n_; ++j) {
    s[j] = ray_column_scale(*p_, j);
    dmax = std::max(dmax, std::abs(s[j] * step_[j]));
  }
  if (!(dmax > 0)) return false;
  double cd = 0.0, c1 = 0.0;
  for (int j = 0; j < n_; ++j) {
    cd += p_->c[j] * step_[j];
    c1 += std::abs(p_->c[j] / s[j]);
    if (s[j] * step_[j] < -tol * dmax && lower_[j] > -kInf) return false;
    if (s[j] * step_[j] > tol * dmax && upper_[j] < kInf) return false;
  }
  if (!(cd < -tol * c1 * dmax)) return false;
  for (int i = 0; i < me_ + mi_; ++i) {
    if (i >= me_ && s_[i] >= 0) continue;  // not blocking
    const double* a = N_.col(i).data();
    const int* nz = row_nz_.data() + static_cast<std::size_t>(i) * cap_.vars;
    double l1 = 0.0;
    for (int k = 0, e = row_nnz_[i]; k < e; ++k) l1 += std::abs(a[nz[k]] / s[nz[k]]);
    const double lim = tol * l1 * dmax;
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

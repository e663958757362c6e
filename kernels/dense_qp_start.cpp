// The dense QP's setup and starts: input checks, the cold start (an LP for a feasible point), warm and hot starts and the repair of a start (dense_qp.hpp).
#include "quasistep/kernels/dense_qp.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "dense_qp_helpers.hpp"

namespace qs {
namespace {

// H is "symmetric" when |H_ij - H_ji| <= this * max|H_ij|.
constexpr double kSymmetryTol = 1e-12;
// check_psd: the Schur complement left after the pivots above curvature_tol * trace(H)
// must be below this * trace(H) in magnitude (a PSD one is below curvature_tol * trace(H)).
constexpr double kPsdTol = 1e-9;

}  // namespace

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
    row_norm_[off + r] = 0.0;
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

}  // namespace qs

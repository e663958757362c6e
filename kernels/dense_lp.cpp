// Bounded revised simplex on an explicit basis inverse; see dense_lp.hpp for the method.
// The certificate checks are in dense_lp_checks.cpp, the adjacent extreme points in
// dense_lp_adjacent.cpp.
#include "quasistep/kernels/dense_lp.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "dense_lp_internal.hpp"
#include "quasistep/kernels/input_checks.hpp"

namespace qs {

using dense_lp_internal::default_state;
using dense_lp_internal::kDriveOutTol;
using dense_lp_internal::kHarrisFraction;
using dense_lp_internal::kInf;
using dense_lp_internal::kSingularTol;
using dense_lp_internal::value_of;
using detail::bounds_ok;
using detail::max_abs;

// ---- construction -------------------------------------------------------------------------

DenseLp::DenseLp(int max_rows, int max_cols, const DenseLpOptions& options)
    : DenseLp(DenseLpCapacity{max_rows, max_cols}, options) {}

DenseLp::DenseLp(const DenseLpCapacity& capacity, const DenseLpOptions& options)
    : cap_(capacity), opt_(options) {
  cap_.rows = std::max(cap_.rows, 0);
  cap_.cols = std::max(cap_.cols, 0);
  cap_.vertex_bases = std::max(cap_.vertex_bases, 1);
  cap_.vertex_neighbours = std::max(cap_.vertex_neighbours, 0);
  const int r = cap_.rows, all = cap_.rows + cap_.cols;
  binv_.setZero(r, r);
  work_.setZero(r, r);
  x_.setZero(all);
  lo_.setZero(all);
  up_.setZero(all);
  cost_.setZero(all);
  d_.setZero(all);
  vertex_.setZero(all);
  y_.setZero(r);
  alpha_.setZero(r);
  rhs_.setZero(r);
  rowv_.setZero(std::max(r, cap_.cols));
  farkas_.setZero(r);
  xs_.setZero(cap_.cols);
  rho_.setZero(cap_.cols);
  ray_.setZero(cap_.cols);
  point_.setZero(cap_.cols);
  edge_.setZero(cap_.cols);
  seen_.setZero(cap_.cols, cap_.vertex_neighbours);
  seen_is_ray_.assign(cap_.vertex_neighbours, 0);
  bases_.assign(static_cast<std::size_t>(cap_.vertex_bases) * r, 0);
  sorted_head_.assign(r, 0);
  as_.setZero(r, cap_.cols);
  bs_.setZero(r);
  cs_.setZero(cap_.cols);
  row_scale_.setOnes(r);
  col_scale_.setOnes(cap_.cols);
  x_out_.setZero(cap_.cols);
  y_out_.setZero(r);
  d_out_.setZero(cap_.cols);
  point_out_.setZero(cap_.cols);
  edge_out_.setZero(cap_.cols);
  basis_ = LpBasis(r, cap_.cols);
  saved_basis_ = LpBasis(r, cap_.cols);
  neighbour_basis_ = LpBasis(r, cap_.cols);
  basis_.rows = basis_.cols = 0;
}

// ---- input and setup ----------------------------------------------------------------------

Status DenseLp::check_problem(const DenseLpProblem& p, bool need_c) const {
  const Eigen::Index m = p.A.rows(), n = p.A.cols();
  if (n <= 0) return Status::bad_input;  // the empty problem
  if (m > cap_.rows || n > cap_.cols) return Status::bad_input;
  if (p.b.size() != m || p.lower.size() != n || p.upper.size() != n) return Status::bad_input;
  if (p.c.size() != n && (need_c || p.c.size() != 0)) return Status::bad_input;
  if (!p.A.allFinite() || !p.b.allFinite() || !p.c.allFinite()) return Status::bad_input;
  if (!bounds_ok(p.lower, p.upper)) return Status::bad_input;
  return Status::solved;
}

void DenseLp::begin(const DenseLpProblem& p) {
  p_ = &p;
  m_ = static_cast<int>(p.A.rows());
  n_ = static_cast<int>(p.A.cols());
  orig_max_a_ = max_abs(p.A);
  orig_max_b_ = max_abs(p.b);
  orig_max_c_ = max_abs(p.c);
  basis_.rows = m_;
  basis_.cols = n_;
  compute_scaling();
  // The scaled problem: A_s = R A S, b_s = R b, c_s = S c, bounds / S.
  auto As = as_.topLeftCorner(m_, n_);
  for (int j = 0; j < n_; ++j) {
    for (int i = 0; i < m_; ++i) As(i, j) = p.A(i, j) * row_scale_[i] * col_scale_[j];
    lo_[j] = p.lower[j] / col_scale_[j];
    up_[j] = p.upper[j] / col_scale_[j];
    cs_[j] = p.c.size() == n_ ? p.c[j] * col_scale_[j] : 0.0;
  }
  for (int i = 0; i < m_; ++i) bs_[i] = p.b[i] * row_scale_[i];
  for (int j = n_; j < n_ + m_; ++j) lo_[j] = up_[j] = 0.0;
  max_abs_a_ = max_abs(As);
  max_abs_b_ = max_abs(bs_.head(m_));
  max_abs_c_ = max_abs(cs_.head(n_));
  ptol_ = opt_.pivot_tol;
}

void DenseLp::compute_scaling() {
  // Equilibration: each row, then each column, divided by its largest |entry|, rounded to a
  // power of two so that scaling and unscaling are exact. (Geometric-mean scaling was tried
  // and made Dantzig pricing take up to twice the pivots on well-scaled problems.)
  row_scale_.head(m_).setOnes();
  col_scale_.head(n_).setOnes();
  if (!opt_.scale || m_ == 0) return;
  const auto& A = p_->A;
  const auto pow2_near = [](double v) {
    const long e = std::lround(std::log2(v));
    return std::ldexp(1.0, static_cast<int>(std::clamp(e, -200L, 200L)));
  };
  for (int i = 0; i < m_; ++i) {
    double big = 0.0;
    for (int j = 0; j < n_; ++j) big = std::max(big, std::abs(A(i, j)));
    if (big > 0) row_scale_[i] = pow2_near(1.0 / big);
  }
  for (int j = 0; j < n_; ++j) {
    double big = 0.0;
    for (int i = 0; i < m_; ++i) big = std::max(big, std::abs(A(i, j)) * row_scale_[i]);
    if (big > 0) col_scale_[j] = pow2_near(1.0 / big);
  }
}

void DenseLp::cold_start() {
  const auto A = scaled_a();
  auto& head = basis_.head;
  auto& state = basis_.state;
  for (int j = 0; j < n_; ++j) {
    state[j] = default_state(lo_[j], up_[j]);
    x_[j] = value_of(state[j], lo_[j], up_[j]);
    cost_[j] = 0.0;
  }
  // Residual of the rows at the starting point.
  rhs_.head(m_) = bs_.head(m_);
  rhs_.head(m_).noalias() -= A * x_.head(n_);
  // Slack crash: a singleton column whose variable can absorb its row's residual within its
  // bounds starts basic in that row (largest |entry|, then smallest column).
  for (int i = 0; i < m_; ++i) head[i] = -1;
  for (int j = 0; j < n_; ++j) {
    int row = -1, nonzeros = 0;
    for (int i = 0; i < m_ && nonzeros < 2; ++i)
      if (A(i, j) != 0.0) {
        row = i;
        ++nonzeros;
      }
    if (nonzeros != 1) continue;
    const double v = x_[j] + rhs_[row] / A(row, j);
    if (!(v >= lo_[j] && v <= up_[j])) continue;
    if (head[row] < 0 || std::abs(A(row, j)) > std::abs(A(row, head[row]))) head[row] = j;
  }
  for (int i = 0; i < m_; ++i) {
    const int logical = n_ + i;
    const int j = head[i];
    if (j >= 0) {
      x_[j] += rhs_[i] / A(i, j);
      state[j] = LpVarState::basic;
      state[logical] = LpVarState::at_lower;
      x_[logical] = 0.0;
      lo_[logical] = up_[logical] = cost_[logical] = 0.0;
      continue;
    }
    // An artificial: its sign follows the residual; cost |a_i| in phase 1.
    head[i] = logical;
    state[logical] = LpVarState::basic;
    x_[logical] = rhs_[i];
    if (rhs_[i] > 0) {
      lo_[logical] = 0.0, up_[logical] = kInf, cost_[logical] = 1.0;
    } else if (rhs_[i] < 0) {
      lo_[logical] = -kInf, up_[logical] = 0.0, cost_[logical] = -1.0;
    } else {
      lo_[logical] = up_[logical] = cost_[logical] = 0.0;
    }
  }
  cost_scale_ = 1.0;
}

bool DenseLp::load_basis(const LpBasis& basis) {
  if (basis.rows != m_ || basis.cols != n_ || static_cast<int>(basis.head.size()) < m_ ||
      static_cast<int>(basis.state.size()) < n_ + m_)
    return false;
  const int all = n_ + m_;
  for (int i = 0; i < m_; ++i)
    if (basis.head[i] < 0 || basis.head[i] >= all) return false;
  if (&basis != &basis_) {
    std::copy(basis.head.begin(), basis.head.begin() + m_, basis_.head.begin());
    std::copy(basis.state.begin(), basis.state.begin() + all, basis_.state.begin());
  }
  auto& head = basis_.head;
  auto& state = basis_.state;
  // In place (basis may be basis_): every column nonbasic, then the heads basic.
  for (int j = 0; j < all; ++j) {
    const double lo = lo_[j], up = up_[j];
    LpVarState& s = state[j];
    const bool ok = (s == LpVarState::at_lower && lo > -kInf) ||
                    (s == LpVarState::at_upper && up < kInf) ||
                    (s == LpVarState::at_zero && lo == -kInf && up == kInf);
    if (!ok) s = default_state(lo, up);
  }
  for (int i = 0; i < m_; ++i) {
    if (state[head[i]] == LpVarState::basic) return false;  // a column twice
    state[head[i]] = LpVarState::basic;
  }
  for (int j = 0; j < all; ++j)
    if (state[j] != LpVarState::basic) x_[j] = value_of(state[j], lo_[j], up_[j]);
  return true;
}

void DenseLp::set_phase2_costs_and_bounds() {
  for (int j = 0; j < n_; ++j) cost_[j] = cs_[j];
  for (int j = n_; j < n_ + m_; ++j) {
    cost_[j] = 0.0;
    lo_[j] = up_[j] = 0.0;
    if (basis_.state[j] != LpVarState::basic) {
      basis_.state[j] = LpVarState::at_lower;
      x_[j] = 0.0;
    }
  }
  cost_scale_ = max_abs_c_;
}

// ---- linear algebra -------------------------------------------------------------------------

bool DenseLp::refactor() {
  const int m = m_;
  if (m == 0) return true;
  auto W = work_.topLeftCorner(m, m);
  auto Inv = binv_.topLeftCorner(m, m);
  for (int k = 0; k < m; ++k) {
    const int h = basis_.head[k];
    if (h < n_) {
      W.col(k) = as_.col(h).head(m);
    } else {
      W.col(k).setZero();
      W(h - n_, k) = 1.0;
    }
  }
  Inv.setIdentity();
  const double scale = max_abs(W);
  if (!(scale > 0)) return false;
  // Gauss-Jordan with partial pivoting on [W | Inv]: W becomes I, Inv becomes B^-1.
  for (int k = 0; k < m; ++k) {
    Eigen::Index p = 0;
    const double piv = W.col(k).tail(m - k).cwiseAbs().maxCoeff(&p);
    if (!(piv > kSingularTol * scale)) return false;
    p += k;
    if (p != k) {
      W.row(p).swap(W.row(k));
      Inv.row(p).swap(Inv.row(k));
    }
    const double inv = 1.0 / W(k, k);
    W.row(k).tail(m - k) *= inv;
    Inv.row(k) *= inv;
    alpha_.head(m) = W.col(k);
    alpha_[k] = 0.0;
    if ((alpha_.head(m).array() == 0.0).all()) continue;  // e.g. a slack column
    // Eliminate column k from the other rows, one column axpy per nonzero of row k (the
    // basis columns of slacks and artificials make many of them zero).
    for (int j = k + 1; j < m; ++j) {
      const double f = W(k, j);
      if (f != 0.0) W.col(j) -= f * alpha_.head(m);
    }
    for (int j = 0; j < m; ++j) {
      const double f = Inv(k, j);
      if (f != 0.0) Inv.col(j) -= f * alpha_.head(m);
    }
  }
  return true;
}

void DenseLp::compute_basic_values() {
  if (m_ == 0) return;
  // rhs = b - (nonbasic columns) x_N
  for (int j = 0; j < n_; ++j) xs_[j] = basis_.state[j] == LpVarState::basic ? 0.0 : x_[j];
  rhs_.head(m_) = bs_.head(m_);
  rhs_.head(m_).noalias() -= scaled_a() * xs_.head(n_);
  for (int i = 0; i < m_; ++i)
    if (basis_.state[n_ + i] != LpVarState::basic) rhs_[i] -= x_[n_ + i];
  alpha_.head(m_).noalias() = binv_.topLeftCorner(m_, m_) * rhs_.head(m_);
  for (int i = 0; i < m_; ++i) x_[basis_.head[i]] = alpha_[i];
}

void DenseLp::compute_duals() {
  for (int i = 0; i < m_; ++i) rowv_[i] = cost_[basis_.head[i]];
  if (m_ > 0)
    y_.head(m_).noalias() = binv_.topLeftCorner(m_, m_).transpose() * rowv_.head(m_);
  tol_d_ = opt_.optimality_tol * (1.0 + cost_scale_ + max_abs_a_ * max_abs(y_.head(m_)));
}

void DenseLp::compute_reduced_costs() {
  if (m_ > 0) {
    d_.head(n_).noalias() = scaled_a().transpose() * y_.head(m_);
    d_.head(n_) = cost_.head(n_) - d_.head(n_);
  } else {
    d_.head(n_) = cost_.head(n_);
  }
  for (int i = 0; i < m_; ++i) d_[n_ + i] = cost_[n_ + i] - y_[i];
}

void DenseLp::ftran(int j) {
  if (m_ == 0) return;
  if (j < n_)
    alpha_.head(m_).noalias() = binv_.topLeftCorner(m_, m_) * as_.col(j).head(m_);
  else
    alpha_.head(m_) = binv_.col(j - n_).head(m_);
}

void DenseLp::update_inverse(int r) {
  const int m = m_;
  auto Inv = binv_.topLeftCorner(m, m);
  const double ar = alpha_[r];
  rowv_.head(m) = Inv.row(r).transpose() / ar;
  alpha_[r] -= 1.0;
  // Inv -= alpha' rowv' (alpha' = alpha - e_r), one column axpy per nonzero of rowv.
  for (int j = 0; j < m; ++j) {
    const double f = rowv_[j];
    if (f != 0.0) Inv.col(j) -= f * alpha_.head(m);
  }
}

bool DenseLp::refresh() {
  if (!refactor()) return false;
  compute_basic_values();
  tol_p_ = opt_.feasibility_tol * primal_scale();
  return true;
}

double DenseLp::primal_scale() const {
  return 1.0 + max_abs_b_ + max_abs_a_ * max_abs(x_.head(n_));
}

// ---- simplex steps --------------------------------------------------------------------------

int DenseLp::price(bool bland, int& sigma) const {
  int best = -1;
  double best_v = 0.0;
  for (int j = 0; j < n_ + m_; ++j) {
    const LpVarState s = basis_.state[j];
    if (s == LpVarState::basic || lo_[j] == up_[j]) continue;
    const double dj = d_[j];
    int dir = 0;
    if (s == LpVarState::at_lower && dj < -tol_d_) dir = 1;
    else if (s == LpVarState::at_upper && dj > tol_d_) dir = -1;
    else if (s == LpVarState::at_zero && std::abs(dj) > tol_d_) dir = dj < 0 ? 1 : -1;
    if (dir == 0) continue;
    if (bland) {
      sigma = dir;
      return j;
    }
    if (std::abs(dj) > best_v) {
      best_v = std::abs(dj);
      best = j;
      sigma = dir;
    }
  }
  return best;
}

double DenseLp::row_ratio(int i, int sigma, double relax) const {
  const double a = sigma * alpha_[i];
  const int h = basis_.head[i];
  if (a > ptol_ && lo_[h] > -kInf) return (x_[h] - lo_[h] + relax) / a;
  if (a < -ptol_ && up_[h] < kInf) return (up_[h] - x_[h] + relax) / -a;
  return kInf;
}

DenseLp::Ratio DenseLp::ratio_test(int q, int sigma, bool bland) {
  ptol_ = opt_.pivot_tol * std::max(1.0, max_abs(alpha_.head(m_)));
  // Harris' two passes: the largest step keeping every basic variable within its bound
  // relaxed by `relax`, then among the rows blocking before it the best pivot.
  const double relax = kHarrisFraction * tol_p_;
  double t_max = kInf;
  for (int i = 0; i < m_; ++i) t_max = std::min(t_max, row_ratio(i, sigma, relax));
  Ratio r;
  if (t_max < kInf) {
    double best_a = 0.0;
    int best_col = 0;
    for (int i = 0; i < m_; ++i) {
      const double t = row_ratio(i, sigma, 0.0);
      if (t > t_max) continue;
      const double a = std::abs(alpha_[i]);
      const int col = basis_.head[i];
      const bool better = r.row < 0 || (bland ? col < best_col
                                              : (a > best_a || (a == best_a && col < best_col)));
      if (better) {
        r.row = i;
        r.theta = std::max(t, 0.0);
        best_a = a;
        best_col = col;
      }
    }
  }
  const double flip = up_[q] - lo_[q];  // +inf for a free or half-bounded column
  if (flip < kInf && (r.row < 0 || flip <= r.theta)) {
    r.row = -1;
    r.flip = true;
    r.theta = flip;
  } else if (r.row < 0) {
    r.unbounded = true;
    r.theta = kInf;
  }
  return r;
}

void DenseLp::pivot(int q, int sigma, const Ratio& r) {
  auto& head = basis_.head;
  auto& state = basis_.state;
  const double step = sigma * r.theta;
  if (r.theta > 0) {
    x_[q] += step;
    for (int i = 0; i < m_; ++i) x_[head[i]] -= step * alpha_[i];
  }
  if (r.flip) {
    state[q] = sigma > 0 ? LpVarState::at_upper : LpVarState::at_lower;
    x_[q] = sigma > 0 ? up_[q] : lo_[q];
    return;
  }
  const int i = r.row, h = head[i];
  const bool to_lower = sigma * alpha_[i] > 0;  // x_h decreased onto its lower bound
  state[h] = (to_lower || lo_[h] == up_[h]) ? LpVarState::at_lower : LpVarState::at_upper;
  x_[h] = to_lower ? lo_[h] : up_[h];
  state[q] = LpVarState::basic;
  head[i] = q;
  update_inverse(i);
}

double DenseLp::phase1_infeasibility() const {
  double worst = 0.0;
  for (int i = 0; i < m_; ++i)
    if (basis_.head[i] >= n_) worst = std::max(worst, std::abs(x_[basis_.head[i]]));
  return worst;
}

Status DenseLp::run_simplex(int phase) {
  const int k_bland = opt_.degenerate_pivots_before_bland;
  bool bland = k_bland <= 0;
  int degenerate_run = 0, since_refactor = 0;
  bool fresh = true;  // the caller refreshed B^-1 and x_B
  for (;;) {
    if (phase == 1 && phase1_infeasibility() <= tol_p_) {
      if (fresh) return Status::solved;
      if (!refresh()) return Status::numerical_failure;
      fresh = true;
      since_refactor = 0;
      continue;
    }
    compute_duals();
    compute_reduced_costs();
    int sigma = 0;
    const int q = price(bland, sigma);
    if (q < 0) {
      if (fresh) return Status::solved;
      // Confirm optimality with a fresh inverse before believing it.
      if (!refresh()) return Status::numerical_failure;
      fresh = true;
      since_refactor = 0;
      continue;
    }
    if (stats_.iterations >= max_iterations_) return Status::iteration_limit;
    ftran(q);
    const Ratio r = ratio_test(q, sigma, bland);
    if (r.unbounded) {
      if (!fresh) {
        if (!refresh()) return Status::numerical_failure;
        fresh = true;
        since_refactor = 0;
        continue;
      }
      if (phase == 1) return Status::numerical_failure;  // phase 1 is bounded below by 0
      return finish_unbounded(q, sigma);
    }
    const int leaving = r.flip ? -1 : basis_.head[r.row];
    pivot(q, sigma, r);
    ++stats_.iterations;
    fresh = false;
    if (phase == 1 && leaving >= n_) {
      // An artificial that left the basis stays out: fix it at 0.
      lo_[leaving] = up_[leaving] = cost_[leaving] = 0.0;
      basis_.state[leaving] = LpVarState::at_lower;
      x_[leaving] = 0.0;
    }
    const bool degenerate =
        r.theta * std::max(1.0, max_abs(alpha_.head(m_))) <= kHarrisFraction * tol_p_;
    if (degenerate) {
      if (++degenerate_run >= k_bland) bland = true;
    } else {
      degenerate_run = 0;
      bland = k_bland <= 0;
    }
    if (++since_refactor >= opt_.refactor_interval) {
      if (!refresh()) return Status::numerical_failure;
      fresh = true;
      since_refactor = 0;
    }
  }
}

void DenseLp::drive_out_artificials() {
  const auto A = scaled_a();
  for (int r = 0; r < m_; ++r) {
    const int h = basis_.head[r];
    if (h < n_) continue;
    rowv_.head(m_) = binv_.row(r).head(m_).transpose();
    rho_.head(n_).noalias() = A.transpose() * rowv_.head(m_);
    const double threshold = kDriveOutTol * rowv_.head(m_).cwiseAbs().sum() * max_abs_a_;
    int best = -1;
    for (int pass = 0; pass < 2 && best < 0; ++pass) {  // movable columns first, then fixed
      double best_v = threshold;
      for (int j = 0; j < n_; ++j) {
        if (basis_.state[j] == LpVarState::basic || ((lo_[j] == up_[j]) != (pass == 1))) continue;
        if (std::abs(rho_[j]) > best_v) {
          best_v = std::abs(rho_[j]);
          best = j;
        }
      }
    }
    if (best < 0) continue;  // row r depends on the others: the artificial stays, fixed at 0
    ftran(best);
    // Phase 1 ended with this artificial within tol_p_ of 0, not always at 0. It leaves
    // fixed at the value it has, so x_B keeps its values and row r holds to that tolerance.
    // Setting it to 0 would push the remainder through this pivot onto x_B, amplified by
    // |alpha / rho_best| and against any bound (seen: 1.9e-10 in one row of an MIQP node
    // became a 2.7e-8 bound violation, and the LP a numerical failure).
    lo_[h] = up_[h] = x_[h];
    basis_.state[h] = LpVarState::at_lower;
    basis_.state[best] = LpVarState::basic;
    basis_.head[r] = best;
    update_inverse(r);
    ++stats_.iterations;
  }
}

// ---- termination --------------------------------------------------------------------------

void DenseLp::unscale_results() {
  // x = S x_s, y = R y_s; the reduced costs are recomputed from the original data.
  out_m_ = m_;
  out_n_ = n_;
  for (int j = 0; j < n_; ++j) x_out_[j] = x_[j] * col_scale_[j];
  for (int i = 0; i < m_; ++i) y_out_[i] = y_[i] * row_scale_[i];
  if (m_ > 0)
    d_out_.head(n_).noalias() = p_->A.transpose() * y_out_.head(m_);
  else
    d_out_.head(n_).setZero();
  d_out_.head(n_) = p_->c - d_out_.head(n_);
  objective_ = p_->c.dot(x_out_.head(n_));
}

double DenseLp::primal_violation() {
  // On the original data; clips x to its bounds first (the violation counts).
  const auto& p = *p_;
  double bound_violation = 0.0;
  for (int j = 0; j < n_; ++j) {
    double& v = x_out_[j];
    if (v < p.lower[j]) {
      bound_violation = std::max(bound_violation, p.lower[j] - v);
      v = p.lower[j];
    } else if (v > p.upper[j]) {
      bound_violation = std::max(bound_violation, v - p.upper[j]);
      v = p.upper[j];
    }
  }
  double row_violation = 0.0;
  if (m_ > 0) {
    rhs_.head(m_).noalias() = p.A * x_out_.head(n_);
    rhs_.head(m_) -= p.b;
    row_violation = max_abs(rhs_.head(m_));
  }
  objective_ = p.c.dot(x_out_.head(n_));
  const double scale = 1.0 + orig_max_b_ + orig_max_a_ * max_abs(x_out_.head(n_));
  return std::max(bound_violation, row_violation) / scale;
}

double DenseLp::dual_violation() const {
  // On the original data: d = c - A'y against where each column sits.
  double worst = 0.0;
  for (int j = 0; j < n_; ++j) {
    const double dj = d_out_[j];
    const bool movable = p_->lower[j] < p_->upper[j];
    switch (basis_.state[j]) {
      case LpVarState::basic: worst = std::max(worst, std::abs(dj)); break;
      case LpVarState::at_lower:
        if (movable) worst = std::max(worst, -dj);
        break;
      case LpVarState::at_upper:
        if (movable) worst = std::max(worst, dj);
        break;
      case LpVarState::at_zero: worst = std::max(worst, std::abs(dj)); break;
    }
  }
  // A logical still basic (a dependent row) must have a zero multiplier.
  for (int i = 0; i < m_; ++i)
    if (basis_.state[n_ + i] == LpVarState::basic) worst = std::max(worst, std::abs(y_out_[i]));
  return worst / (1.0 + orig_max_c_ + orig_max_a_ * max_abs(y_out_.head(m_)));
}

Status DenseLp::finish_optimal() {
  // The caller left B^-1, x_B, y and d fresh.
  unscale_results();
  const double primal = primal_violation();
  const double dual = dual_violation();
  stats_.residual = std::max(primal, dual);
  if (primal <= opt_.feasibility_tol && dual <= opt_.optimality_tol) return Status::solved;
  return Status::numerical_failure;
}

Status DenseLp::finish_infeasible() {
  // Phase 1 is optimal with a positive sum of artificials: its duals (fresh) certify.
  unscale_results();
  for (int i = 0; i < m_; ++i) farkas_[i] = y_[i] * row_scale_[i];
  stats_.residual = 0.0;
  if (verify_farkas(*p_, farkas_.head(m_), opt_.feasibility_tol)) return Status::infeasible;
  return Status::numerical_failure;
}

Status DenseLp::finish_unbounded(int q, int sigma) {
  if (q >= n_) return Status::numerical_failure;
  unscale_results();
  ray_.head(n_).setZero();
  ray_[q] = sigma;
  for (int i = 0; i < m_; ++i) {
    const int h = basis_.head[i];
    if (h < n_ && std::abs(alpha_[i]) > ptol_) ray_[h] = -sigma * alpha_[i];
  }
  for (int j = 0; j < n_; ++j) ray_[j] *= col_scale_[j];
  const double primal = primal_violation();
  stats_.residual = primal;
  if (primal <= opt_.feasibility_tol && verify_ray(*p_, ray_.head(n_), opt_.feasibility_tol))
    return Status::unbounded;
  return Status::numerical_failure;
}

// ---- solve --------------------------------------------------------------------------------

Status DenseLp::solve(const DenseLpProblem& p) { return solve_impl(p, nullptr); }

Status DenseLp::solve(const DenseLpProblem& p, const LpBasis& basis) {
  return solve_impl(p, &basis);
}

Status DenseLp::solve_impl(const DenseLpProblem& p, const LpBasis* warm) {
  const auto t0 = std::chrono::steady_clock::now();
  stats_ = SolverStats{};
  objective_ = 0.0;
  warm_started_ = false;
  status_ = check_problem(p, true);
  if (status_ == Status::bad_input) {
    out_m_ = out_n_ = 0;
    basis_.rows = basis_.cols = 0;
    return status_;
  }
  begin(p);
  max_iterations_ =
      opt_.max_iterations > 0 ? opt_.max_iterations : 50 * (m_ + n_) + 1000;

  if (warm != nullptr && load_basis(*warm)) {
    set_phase2_costs_and_bounds();
    if (refresh()) {
      bool feasible = true;
      for (int i = 0; i < m_ && feasible; ++i) {
        const int h = basis_.head[i];
        feasible = x_[h] >= lo_[h] - tol_p_ && x_[h] <= up_[h] + tol_p_;
      }
      warm_started_ = feasible;
    }
  }

  // Phase 1 from the slack crash (not when a warm basis is feasible), then phase 2.
  const auto two_phases = [&] {
    Status s = Status::not_run;  // not_run: go on to phase 2
    if (!warm_started_) {
      cold_start();
      if (!refresh()) {
        s = Status::numerical_failure;
      } else {
        s = run_simplex(1);
        if (s == Status::solved) {
          if (phase1_infeasibility() > tol_p_) {
            s = finish_infeasible();
          } else {
            set_phase2_costs_and_bounds();
            drive_out_artificials();
            s = refresh() ? Status::not_run : Status::numerical_failure;
          }
        }
      }
    }
    if (s == Status::not_run) {
      s = run_simplex(2);
      if (s == Status::solved) s = finish_optimal();
      if (s == Status::iteration_limit) {
        unscale_results();
        stats_.residual = primal_violation();
        stats_.has_point = true;  // phase 2 iterates are feasible
      }
    }
    return s;
  };
  Status s = two_phases();
  if (warm_started_ && s == Status::numerical_failure) {
    // A basis is only a start: one that leads phase 2 to an answer failing its check (e.g.
    // a logical phase 1 left fixed at a nonzero remainder, which the basis records at 0)
    // gets the cold start it would have had without it.
    warm_started_ = false;
    begin(p);
    s = two_phases();
  }
  if (s == Status::numerical_failure || (s == Status::iteration_limit && !stats_.has_point))
    unscale_results();  // the last iterate, for inspection
  status_ = s;
  p_ = nullptr;
  if (opt_.timing)
    stats_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return status_;
}

}  // namespace qs

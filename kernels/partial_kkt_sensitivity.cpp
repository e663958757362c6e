// The null-space sensitivity solve of quasistep/kernels/partial_kkt_sensitivity.hpp.
#include "quasistep/kernels/partial_kkt_sensitivity.hpp"

#include <algorithm>
#include <cmath>

#include "quasistep/kernels/pivoted_qr.hpp"

namespace qs {

PartialKktSensitivity::PartialKktSensitivity(int max_vars, int max_rows)
    : X_(Eigen::MatrixXd::Zero(std::max(max_vars, 1), std::max(max_rows, 1))),
      beta_(Eigen::VectorXd::Zero(std::max(max_rows, 1))),
      perm_(Eigen::VectorXi::Zero(std::max(max_rows, 1))),
      row_scale_(Eigen::VectorXd::Ones(std::max(max_rows, 1))),
      h_(Eigen::VectorXd::Zero(std::max(max_vars, 1))),
      Q_(Eigen::MatrixXd::Zero(std::max(max_vars, 1), std::max(max_vars, 1))),
      L_(Q_),
      gperm_(Eigen::VectorXi::Zero(std::max(max_vars, 1))),
      U_(Q_),
      w_(Eigen::VectorXd::Zero(std::max(max_vars, std::max(max_rows, 1)))),
      r_(w_),
      t_(w_) {}

Status PartialKktSensitivity::factor(const Eigen::Ref<const Eigen::VectorXd>& h,
                                     const Eigen::Ref<const Eigen::MatrixXd>& A_S, int outputs) {
  const int n = static_cast<int>(A_S.cols()), s = static_cast<int>(A_S.rows());
  if (h.size() != n || n > X_.rows() || s > X_.cols() || outputs > n) return Status::bad_input;
  n_ = n;
  s_ = s;
  inconsistency_ = 0;
  // X = A_S' with each column (a row of A_S) of unit length: rows in different units (an
  // impulse balance beside a gap) weigh alike in the rank decision.
  for (int k = 0; k < s; ++k) {
    double sq = 0;
    for (int i = 0; i < n; ++i) sq += A_S(k, i) * A_S(k, i);
    row_scale_[k] = sq > 0 ? 1.0 / std::sqrt(sq) : 1.0;
    for (int i = 0; i < n; ++i) X_(i, k) = A_S(k, i) * row_scale_[k];
  }
  for (int i = 0; i < n; ++i) h_[i] = h[i];
  // Householder QR with column pivoting in place (quasistep/kernels/pivoted_qr.hpp, as
  // KktSensitivity::factor); every column has length 1 or 0.
  rank_ = pivoted_qr::factor(X_, n, s, kRankTolerance, beta_, perm_);
  auto Q = Q_.topLeftCorner(n, n);
  pivoted_qr::form_q(X_, n, rank_, beta_, Q_);
  // G = Z'HZ and its Cholesky factorization with complete (diagonal) pivoting, stopped where
  // the largest remaining diagonal entry is negligible: G = Pi L L' Pi' of rank grank_.
  const int r = rank_, nz = n - r;
  double h_top = 0;
  for (int i = 0; i < n; ++i) h_top = std::max(h_top, h_[i]);
  auto L = L_.topLeftCorner(nz, nz);
  for (int j = 0; j < nz; ++j) {
    gperm_[j] = j;
    for (int i = j; i < nz; ++i) {
      double v = 0;
      for (int k = 0; k < n; ++k) v += Q(k, r + i) * h_[k] * Q(k, r + j);
      L(i, j) = v;
      L(j, i) = v;
    }
  }
  grank_ = 0;
  for (int k = 0; k < nz; ++k) {
    int best = k;
    for (int i = k + 1; i < nz; ++i)
      if (L(i, i) > L(best, best)) best = i;
    if (!(L(best, best) > kPivotTolerance * h_top)) break;
    if (best != k) {  // symmetric swap of k and best in the full (still symmetric) trailing block
      std::swap(gperm_[k], gperm_[best]);
      for (int i = 0; i < nz; ++i) std::swap(L(i, k), L(i, best));
      for (int j = 0; j < nz; ++j) std::swap(L(k, j), L(best, j));
    }
    const double d = std::sqrt(L(k, k));
    L(k, k) = d;
    for (int i = k + 1; i < nz; ++i) L(i, k) /= d;
    for (int j = k + 1; j < nz; ++j)
      for (int i = j; i < nz; ++i) {
        L(i, j) -= L(i, k) * L(j, k);
        L(j, i) = L(i, j);
      }
    grank_ = k + 1;
  }
  // The undetermined directions: G's null space, Pi [-L11^-T L21'; I], mapped by Z.
  undetermined_ = nz - grank_;
  const int g = grank_;
  for (int j = 0; j < undetermined_; ++j) {
    // t = L11^-T L21(j, :)' by back substitution; n = Pi [-t; e_j].
    for (int i = g - 1; i >= 0; --i) {
      double v = L(g + j, i);
      for (int k = i + 1; k < g; ++k) v -= L(k, i) * t_[k];
      t_[i] = v / L(i, i);
    }
    for (int i = 0; i < nz; ++i) r_[i] = 0;
    for (int i = 0; i < g; ++i) r_[gperm_[i]] = -t_[i];
    r_[gperm_[g + j]] = 1.0;
    double top = 0;
    for (int i = 0; i < n; ++i) {
      double v = 0;
      for (int k = 0; k < nz; ++k) v += Q(i, r + k) * r_[k];
      U_(i, j) = v;
      top = std::max(top, std::abs(v));
    }
    for (int i = 0; i < n; ++i) U_(i, j) /= top;
    for (int i = 0; i < outputs; ++i)
      if (!(std::abs(U_(i, j)) <= kOutputTolerance)) return Status::numerical_failure;
  }
  return Status::solved;
}

void PartialKktSensitivity::solve(const Eigen::Ref<const Eigen::MatrixXd>& R1,
                                  const Eigen::Ref<const Eigen::MatrixXd>& R2, Eigen::Ref<Eigen::MatrixXd> dv) {
  const int n = n_, s = s_, r = rank_, nz = n - r, g = grank_;
  const auto Q = Q_.topLeftCorner(n, n);
  const auto L = L_.topLeftCorner(nz, nz);
  for (Eigen::Index col = 0; col < R1.cols(); ++col) {
    // w = Y' dv from R11' w = (P' R2)_{1..r}, R2 scaled as the rows.
    for (int i = 0; i < r; ++i) {
      double v = R2(perm_[i], col) * row_scale_[perm_[i]];
      for (int k = 0; k < i; ++k) v -= X_(k, i) * w_[k];
      w_[i] = v / X_(i, i);
    }
    double rhs_top = 0, worst = 0;
    for (int i = 0; i < s; ++i) rhs_top = std::max(rhs_top, std::abs(R2(i, col) * row_scale_[i]));
    for (int i = r; i < s; ++i) {
      double v = R2(perm_[i], col) * row_scale_[perm_[i]];
      for (int k = 0; k < r; ++k) v -= X_(k, i) * w_[k];
      worst = std::max(worst, std::abs(v));
    }
    if (rhs_top > 0) inconsistency_ = std::max(inconsistency_, worst / rhs_top);
    // t = R1 + H Y w; the undetermined directions must not see it.
    for (int k = 0; k < n; ++k) {
      double yw = 0;
      for (int p = 0; p < r; ++p) yw += Q(k, p) * w_[p];
      t_[k] = R1(k, col) + h_[k] * yw;
    }
    double t_sq = 0;
    for (int k = 0; k < n; ++k) t_sq += t_[k] * t_[k];
    for (int j = 0; j < undetermined_; ++j) {
      // The cosine of t and the direction: relative to |t| |U_j|, not to the sum of the
      // terms, which vanishes with a direction that t does not see.
      double along = 0, u_sq = 0;
      for (int k = 0; k < n; ++k) {
        along += U_(k, j) * t_[k];
        u_sq += U_(k, j) * U_(k, j);
      }
      const double terms = std::sqrt(t_sq * u_sq);
      if (terms > 0) inconsistency_ = std::max(inconsistency_, std::abs(along) / terms);
    }
    // y: G y = -Z't, the basic solution Pi [L11^-T L11^-1 (Pi' rhs)_{1..g}; 0].
    for (int i = 0; i < g; ++i) {
      const int a = gperm_[i];
      double v = 0;
      for (int k = 0; k < n; ++k) v -= Q(k, r + a) * t_[k];
      for (int k = 0; k < i; ++k) v -= L(i, k) * r_[k];
      r_[i] = v / L(i, i);
    }
    for (int i = g - 1; i >= 0; --i) {
      double v = r_[i];
      for (int k = i + 1; k < g; ++k) v -= L(k, i) * r_[k];
      r_[i] = v / L(i, i);
    }
    // dv = Y w + Z y.
    for (int i = 0; i < n; ++i) {
      double v = 0;
      for (int p = 0; p < r; ++p) v += Q(i, p) * w_[p];
      for (int p = 0; p < g; ++p) v += Q(i, r + gperm_[p]) * r_[p];
      dv(i, col) = v;
    }
  }
}

double PartialKktSensitivity::multipliers(const Eigen::Ref<const Eigen::VectorXd>& g, Eigen::Ref<Eigen::VectorXd> beta) {
  const int n = n_, s = s_, r = rank_;
  const auto Q = Q_.topLeftCorner(n, n);
  // A_S' = X diag(1 / row_scale) and X P = Q [R11 R12; 0 0]: R11 (P' beta~)_{1..r} = Y'g with
  // beta~ = beta / row_scale, the rest of P' beta~ zero; Z'g is what no beta reaches.
  double z_sq = 0;
  for (int j = r; j < n; ++j) {
    double v = 0;
    for (int k = 0; k < n; ++k) v += Q(k, j) * g[k];
    z_sq += v * v;
  }
  for (int i = 0; i < s; ++i) beta[i] = 0;
  for (int i = r - 1; i >= 0; --i) {
    double v = 0;
    for (int k = 0; k < n; ++k) v += Q(k, i) * g[k];
    for (int k = i + 1; k < r; ++k) v -= X_(i, k) * w_[k];
    w_[i] = v / X_(i, i);
  }
  for (int i = 0; i < r; ++i) beta[perm_[i]] = w_[i] * row_scale_[perm_[i]];
  return std::sqrt(z_sq);
}

}  // namespace qs

// The null-space sensitivity solve of quasistep/kernels/kkt_sensitivity.hpp.
#include "quasistep/kernels/kkt_sensitivity.hpp"

#include <algorithm>
#include <cmath>

namespace qs {

KktSensitivity::KktSensitivity(int max_vars, int max_rows)
    : X_(Eigen::MatrixXd::Zero(std::max(max_vars, 1), std::max(max_rows, 1))),
      beta_(Eigen::VectorXd::Zero(std::max(max_rows, 1))),
      perm_(Eigen::VectorXi::Zero(std::max(max_rows, 1))),
      norms_(Eigen::VectorXd::Zero(std::max(max_rows, 1))),
      Q_(Eigen::MatrixXd::Zero(std::max(max_vars, 1), std::max(max_vars, 1))),
      HQ_(Q_),
      L_(Q_),
      w_(Eigen::VectorXd::Zero(std::max(max_vars, 1))),
      r_(w_) {}

Status KktSensitivity::factor(const Eigen::Ref<const Eigen::MatrixXd>& H,
                              const Eigen::Ref<const Eigen::MatrixXd>& A_S) {
  const int n = static_cast<int>(H.rows()), s = static_cast<int>(A_S.rows());
  if (H.cols() != n || A_S.cols() != n || n > X_.rows() || s > X_.cols()) return Status::bad_input;
  n_ = n;
  s_ = s;
  inconsistency_ = 0;
  // X = A_S' (n x s), then Householder QR with column pivoting in place (Golub & Van Loan,
  // "Matrix Computations", 4th ed., alg. 5.4.1): column k of the factor is row perm_[k] of A_S.
  for (int k = 0; k < s; ++k) {
    perm_[k] = k;
    double sq = 0;
    for (int i = 0; i < n; ++i) {
      X_(i, k) = A_S(k, i);
      sq += X_(i, k) * X_(i, k);
    }
    norms_[k] = std::sqrt(sq);
  }
  double top = 0;
  for (int k = 0; k < s; ++k) top = std::max(top, norms_[k]);
  rank_ = 0;
  const int steps = std::min(n, s);
  for (int k = 0; k < steps; ++k) {
    // The remaining column of largest norm (recomputed: s and n are small, and it keeps the
    // choice free of the downdating's cancellation).
    int best = k;
    double best_norm = -1;
    for (int j = k; j < s; ++j) {
      double sq = 0;
      for (int i = k; i < n; ++i) sq += X_(i, j) * X_(i, j);
      if (sq > best_norm) {
        best_norm = sq;
        best = j;
      }
    }
    best_norm = std::sqrt(best_norm);
    if (!(best_norm > kRankTolerance * top)) break;
    if (best != k) {
      for (int i = 0; i < n; ++i) std::swap(X_(i, k), X_(i, best));
      std::swap(perm_[k], perm_[best]);
    }
    // Reflector I - beta u u' with u = x + sign(x_0) |x| e_0, stored below the diagonal
    // (u_0 = 1 after scaling), mapping X(k:, k) to R_kk e_0.
    const double x0 = X_(k, k);
    const double alpha = x0 >= 0 ? -best_norm : best_norm;
    const double u0 = x0 - alpha;
    for (int i = k + 1; i < n; ++i) X_(i, k) /= u0;
    beta_[k] = -u0 / alpha;
    X_(k, k) = alpha;
    for (int j = k + 1; j < s; ++j) {
      double dot = X_(k, j);
      for (int i = k + 1; i < n; ++i) dot += X_(i, k) * X_(i, j);
      dot *= beta_[k];
      X_(k, j) -= dot;
      for (int i = k + 1; i < n; ++i) X_(i, j) -= dot * X_(i, k);
    }
    rank_ = k + 1;
  }
  // Q = H_0 ... H_{r-1} explicitly (columns: Y then Z), by applying the reflectors to I in
  // reverse order.
  auto Q = Q_.topLeftCorner(n, n);
  Q.setIdentity();
  for (int k = rank_ - 1; k >= 0; --k)
    for (int j = 0; j < n; ++j) {
      double dot = Q(k, j);
      for (int i = k + 1; i < n; ++i) dot += X_(i, k) * Q(i, j);
      dot *= beta_[k];
      Q(k, j) -= dot;
      for (int i = k + 1; i < n; ++i) Q(i, j) -= dot * X_(i, k);
    }
  // H Q, then Z'HZ and its Cholesky factor.
  auto HQ = HQ_.topLeftCorner(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      double v = 0;
      for (int k = 0; k < n; ++k) v += H(i, k) * Q(k, j);
      HQ(i, j) = v;
    }
  double h_top = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) h_top = std::max(h_top, std::abs(H(i, j)));
  const int nz = n - rank_;
  auto L = L_.topLeftCorner(nz, nz);
  for (int j = 0; j < nz; ++j)
    for (int i = j; i < nz; ++i) {
      double v = 0;
      for (int k = 0; k < n; ++k) v += Q(k, rank_ + i) * HQ(k, rank_ + j);
      L(i, j) = v;
    }
  for (int k = 0; k < nz; ++k) {
    const double diag = L(k, k);
    double d = diag;
    for (int p = 0; p < k; ++p) d -= L(k, p) * L(k, p);
    if (!(diag > kPivotTolerance * h_top) || !(d > kPivotTolerance * diag)) return Status::numerical_failure;
    d = std::sqrt(d);
    L(k, k) = d;
    for (int i = k + 1; i < nz; ++i) {
      double v = L(i, k);
      for (int p = 0; p < k; ++p) v -= L(i, p) * L(k, p);
      L(i, k) = v / d;
    }
  }
  return Status::solved;
}

void KktSensitivity::solve(const Eigen::Ref<const Eigen::MatrixXd>& R1, const Eigen::Ref<const Eigen::MatrixXd>& R2,
                           Eigen::Ref<Eigen::MatrixXd> dv) {
  const int n = n_, s = s_, r = rank_, nz = n - r;
  const auto Q = Q_.topLeftCorner(n, n);
  const auto HQ = HQ_.topLeftCorner(n, n);
  const auto L = L_.topLeftCorner(nz, nz);
  for (Eigen::Index col = 0; col < R1.cols(); ++col) {
    // w = Y' dv from R11' w = (P' R2)_{1..r} (forward substitution: R11' is lower triangular).
    for (int i = 0; i < r; ++i) {
      double v = R2(perm_[i], col);
      for (int k = 0; k < i; ++k) v -= X_(k, i) * w_[k];
      w_[i] = v / X_(i, i);
    }
    // The dependent rows: R12' w against their own R2.
    double rhs_top = 0, worst = 0;
    for (int i = 0; i < s; ++i) rhs_top = std::max(rhs_top, std::abs(R2(i, col)));
    for (int i = r; i < s; ++i) {
      double v = R2(perm_[i], col);
      for (int k = 0; k < r; ++k) v -= X_(k, i) * w_[k];
      worst = std::max(worst, std::abs(v));
    }
    if (rhs_top > 0) inconsistency_ = std::max(inconsistency_, worst / rhs_top);
    // y from (Z'HZ) y = -Z'(R1 + H Y w): r_ holds the right-hand side, then y.
    for (int i = 0; i < nz; ++i) {
      double v = 0;
      for (int k = 0; k < n; ++k) {
        double hyw = 0;
        for (int p = 0; p < r; ++p) hyw += HQ(k, p) * w_[p];
        v -= Q(k, r + i) * (R1(k, col) + hyw);
      }
      r_[i] = v;
    }
    for (int i = 0; i < nz; ++i) {
      double v = r_[i];
      for (int k = 0; k < i; ++k) v -= L(i, k) * r_[k];
      r_[i] = v / L(i, i);
    }
    for (int i = nz - 1; i >= 0; --i) {
      double v = r_[i];
      for (int k = i + 1; k < nz; ++k) v -= L(k, i) * r_[k];
      r_[i] = v / L(i, i);
    }
    // dv = Y w + Z y.
    for (int i = 0; i < n; ++i) {
      double v = 0;
      for (int p = 0; p < r; ++p) v += Q(i, p) * w_[p];
      for (int p = 0; p < nz; ++p) v += Q(i, r + p) * r_[p];
      dv(i, col) = v;
    }
  }
}

}  // namespace qs

// The null-space sensitivity solve of quasistep/kernels/kkt_sensitivity.hpp.
#include "quasistep/kernels/kkt_sensitivity.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "quasistep/kernels/pivoted_qr.hpp"

namespace qs {

KktSensitivity::KktSensitivity(int max_vars, int max_rows, int max_cols)
    : X_(Eigen::MatrixXd::Zero(std::max(max_vars, 1), std::max(max_rows, 1))),
      beta_(Eigen::VectorXd::Zero(std::max(max_rows, 1))),
      perm_(Eigen::VectorXi::Zero(std::max(max_rows, 1))),
      Q_(Eigen::MatrixXd::Zero(std::max(max_vars, 1), std::max(max_vars, 1))),
      HQ_(Q_),
      L_(Q_),
      W_(RowMatrix::Zero(std::max(max_vars, 1), std::max(max_cols, 1))),
      T_(W_),
      Y_(W_) {}

Status KktSensitivity::factor(const Eigen::Ref<const Eigen::MatrixXd>& H,
                              const Eigen::Ref<const Eigen::MatrixXd>& A_S) {
  const int n = static_cast<int>(H.rows()), s = static_cast<int>(A_S.rows());
  if (H.cols() != n || A_S.cols() != n || n > X_.rows() || s > X_.cols()) return Status::bad_input;
  n_ = n;
  s_ = s;
  inconsistency_ = 0;
  // X = A_S' (n x s), then Householder QR with column pivoting in place
  // (quasistep/kernels/pivoted_qr.hpp): column k of the factor is row perm_[k] of A_S.
  double top = 0;
  for (int k = 0; k < s; ++k) {
    double sq = 0;
    for (int i = 0; i < n; ++i) {
      X_(i, k) = A_S(k, i);
      sq += X_(i, k) * X_(i, k);
    }
    top = std::max(top, std::sqrt(sq));
  }
  rank_ = pivoted_qr::factor(X_, n, s, kRankTolerance * top, beta_, perm_);
  auto Q = Q_.topLeftCorner(n, n);
  pivoted_qr::form_q(X_, n, rank_, beta_, Q_);
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
  const int n = n_, s = s_, r = rank_, nz = n - r, cols = static_cast<int>(R1.cols());
  // The workspace holds max_cols columns (the constructor's); more would write past it.
  assert(cols <= W_.cols() && R2.cols() == cols && dv.cols() == cols);
  const auto Q = Q_.topLeftCorner(n, n);
  const auto HQ = HQ_.topLeftCorner(n, n);
  const auto L = L_.topLeftCorner(nz, nz);
  // Every column at once, the column innermost: each column's substitutions are a chain of
  // divisions, and the columns' chains are independent, so they overlap (one column at a
  // time waits on each division). Per column the operations are the same, in the same order.
  // w = Y' dv from R11' w = (P' R2)_{1..r} (forward substitution: R11' is lower triangular).
  for (int i = 0; i < r; ++i)
    for (int col = 0; col < cols; ++col) {
      double v = R2(perm_[i], col);
      for (int k = 0; k < i; ++k) v -= X_(k, i) * W_(k, col);
      W_(i, col) = v / X_(i, i);
    }
  // The dependent rows: R12' w against their own R2.
  for (int col = 0; col < cols; ++col) {
    double rhs_top = 0, worst = 0;
    for (int i = 0; i < s; ++i) rhs_top = std::max(rhs_top, std::abs(R2(i, col)));
    for (int i = r; i < s; ++i) {
      double v = R2(perm_[i], col);
      for (int k = 0; k < r; ++k) v -= X_(k, i) * W_(k, col);
      worst = std::max(worst, std::abs(v));
    }
    if (rhs_top > 0) inconsistency_ = std::max(inconsistency_, worst / rhs_top);
  }
  // y from (Z'HZ) y = -Z'(R1 + H Y w): T_ holds R1 + H Y w, Y_ the right-hand side, then y.
  for (int k = 0; k < n; ++k)
    for (int col = 0; col < cols; ++col) {
      double hyw = 0;
      for (int p = 0; p < r; ++p) hyw += HQ(k, p) * W_(p, col);
      T_(k, col) = R1(k, col) + hyw;
    }
  for (int i = 0; i < nz; ++i)
    for (int col = 0; col < cols; ++col) {
      double v = 0;
      for (int k = 0; k < n; ++k) v -= Q(k, r + i) * T_(k, col);
      Y_(i, col) = v;
    }
  for (int i = 0; i < nz; ++i)
    for (int col = 0; col < cols; ++col) {
      double v = Y_(i, col);
      for (int k = 0; k < i; ++k) v -= L(i, k) * Y_(k, col);
      Y_(i, col) = v / L(i, i);
    }
  for (int i = nz - 1; i >= 0; --i)
    for (int col = 0; col < cols; ++col) {
      double v = Y_(i, col);
      for (int k = i + 1; k < nz; ++k) v -= L(k, i) * Y_(k, col);
      Y_(i, col) = v / L(i, i);
    }
  // dv = Y w + Z y.
  for (int i = 0; i < n; ++i)
    for (int col = 0; col < cols; ++col) {
      double v = 0;
      for (int p = 0; p < r; ++p) v += Q(i, p) * W_(p, col);
      for (int p = 0; p < nz; ++p) v += Q(i, r + p) * Y_(p, col);
      dv(i, col) = v;
    }
}

}  // namespace qs

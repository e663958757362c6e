// Householder QR with column pivoting, in place, for the null-space sensitivity kernels
// (kkt_sensitivity.hpp, partial_kkt_sensitivity.hpp): X = A_S' (n x s) becomes R above its
// diagonal and the reflectors below (Golub & Van Loan, "Matrix Computations", 4th ed.,
// alg. 5.4.1), and Q = H_0 ... H_{r-1} is formed explicitly: its first r columns span the
// active rows, the rest their null space. Plain loops on caller storage: allocates nothing.
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>

#include "quasistep/kernels/eigen.hpp"

namespace qs::pivoted_qr {

/// Factorises the first n rows and s columns of X in place: column k of the factor is column
/// perm[k] of the input (perm[0..s) is set), reflector k is I - beta[k] u u' with u_0 = 1 and
/// the rest of u below X(k, k). Stops where the largest remaining column norm is at most
/// `floor`; returns the rank.
inline int factor(Eigen::Ref<Eigen::MatrixXd> X, int n, int s, double floor, Eigen::Ref<Eigen::VectorXd> beta,
                  Eigen::Ref<Eigen::VectorXi> perm) {
  for (int k = 0; k < s; ++k) perm[k] = k;
  int rank = 0;
  const int steps = std::min(n, s);
  for (int k = 0; k < steps; ++k) {
    // The remaining column of largest norm (recomputed: s and n are small, and it keeps the
    // choice free of the downdating's cancellation).
    int best = k;
    double best_norm = -1;
    for (int j = k; j < s; ++j) {
      double sq = 0;
      for (int i = k; i < n; ++i) sq += X(i, j) * X(i, j);
      if (sq > best_norm) {
        best_norm = sq;
        best = j;
      }
    }
    best_norm = std::sqrt(best_norm);
    if (!(best_norm > floor)) break;
    if (best != k) {
      for (int i = 0; i < n; ++i) std::swap(X(i, k), X(i, best));
      std::swap(perm[k], perm[best]);
    }
    // Reflector I - beta u u' with u = x + sign(x_0) |x| e_0, stored below the diagonal
    // (u_0 = 1 after scaling), mapping X(k:, k) to R_kk e_0.
    const double x0 = X(k, k);
    const double alpha = x0 >= 0 ? -best_norm : best_norm;
    const double u0 = x0 - alpha;
    for (int i = k + 1; i < n; ++i) X(i, k) /= u0;
    beta[k] = -u0 / alpha;
    X(k, k) = alpha;
    for (int j = k + 1; j < s; ++j) {
      double dot = X(k, j);
      for (int i = k + 1; i < n; ++i) dot += X(i, k) * X(i, j);
      dot *= beta[k];
      X(k, j) -= dot;
      for (int i = k + 1; i < n; ++i) X(i, j) -= dot * X(i, k);
    }
    rank = k + 1;
  }
  return rank;
}

/// Q (n x n) = H_0 ... H_{rank-1} from factor()'s reflectors, by applying them to I in
/// reverse order.
inline void form_q(const Eigen::Ref<const Eigen::MatrixXd>& X, int n, int rank,
                   const Eigen::Ref<const Eigen::VectorXd>& beta, Eigen::Ref<Eigen::MatrixXd> Q) {
  Q.topLeftCorner(n, n).setIdentity();
  for (int k = rank - 1; k >= 0; --k)
    for (int j = 0; j < n; ++j) {
      double dot = Q(k, j);
      for (int i = k + 1; i < n; ++i) dot += X(i, k) * Q(i, j);
      dot *= beta[k];
      Q(k, j) -= dot;
      for (int i = k + 1; i < n; ++i) Q(i, j) -= dot * X(i, k);
    }
}

}  // namespace qs::pivoted_qr

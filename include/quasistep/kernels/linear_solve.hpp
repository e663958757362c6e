// A dense square LU factorisation with partial pivoting, for the implicit differentiation of
// a complementarity problem at a fixed basis: the LCP 0 <= z _|_ M z + q >= 0 with the basic
// variables b solves M_bb z_b = -q_b, so along any direction of the data
//   dz_b = -M_bb^-1 (dM_bb z_b + dq_b)
// (quasistep/core/derivatives.hpp; Halm & Posa's step uses it): one factorisation of M_bb
// serves z_b and every direction's right-hand side.
#pragma once

#include <cmath>
#include <utility>

namespace qs {

/// Factorises A (n x n, row-major with row stride lda) in place by Gaussian elimination with
/// partial pivoting: U on and above the diagonal, the multipliers below; pivot[k] is the row
/// swapped with row k at step k. false when the matrix is singular: a pivot is at most
/// `tolerance` times the largest |a_ij| of the input. Allocates nothing.
inline bool lu_factor_in_place(int n, double* A, int lda, int* pivot, double tolerance = 1e-13) {
  double top = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) top = std::fmax(top, std::fabs(A[i * lda + j]));
  const double floor = tolerance * top;
  for (int k = 0; k < n; ++k) {
    int p = k;
    double best = std::fabs(A[k * lda + k]);
    for (int i = k + 1; i < n; ++i)
      if (std::fabs(A[i * lda + k]) > best) {
        best = std::fabs(A[i * lda + k]);
        p = i;
      }
    if (!(best > floor)) return false;
    pivot[k] = p;
    if (p != k)
      for (int j = 0; j < n; ++j) std::swap(A[k * lda + j], A[p * lda + j]);
    for (int i = k + 1; i < n; ++i) {
      const double f = A[i * lda + k] / A[k * lda + k];
      A[i * lda + k] = f;
      for (int j = k + 1; j < n; ++j) A[i * lda + j] = A[i * lda + j] - f * A[k * lda + j];
    }
  }
  return true;
}

/// B := A^-1 B for lu_factor_in_place's factors: B is n x cols, row-major with row stride
/// ldb (one column: a vector). Each column sees the operations elimination with the same
/// pivots would do on it, in the same order; the columns are interleaved (column innermost)
/// so that their chains of divisions overlap.
inline void lu_solve(int n, const double* A, int lda, const int* pivot, double* B, int cols = 1, int ldb = 1) {
  // The swaps first (the factors' rows are in their final order), then L and U.
  for (int k = 0; k < n; ++k)
    if (pivot[k] != k)
      for (int c = 0; c < cols; ++c) std::swap(B[k * ldb + c], B[pivot[k] * ldb + c]);
  for (int k = 0; k < n; ++k)
    for (int i = k + 1; i < n; ++i) {
      const double f = A[i * lda + k];
      for (int c = 0; c < cols; ++c) B[i * ldb + c] = B[i * ldb + c] - f * B[k * ldb + c];
    }
  for (int i = n - 1; i >= 0; --i)
    for (int c = 0; c < cols; ++c) {
      double s = B[i * ldb + c];
      for (int j = i + 1; j < n; ++j) s = s - A[i * lda + j] * B[j * ldb + c];
      B[i * ldb + c] = s / A[i * lda + i];
    }
}

}  // namespace qs

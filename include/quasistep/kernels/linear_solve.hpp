// A dense square linear solve written once on a scalar type T: T = double, or T = Jet
// (quasistep/core/jet.hpp), where the solution carries the exact derivative of A^-1 b along
// the Jets' directions, d(A^-1 b) = A^-1 (db - dA A^-1 b). That is implicit differentiation
// of a complementarity problem at a fixed basis: the LCP 0 <= z _|_ M z + q >= 0 with the
// basic variables alpha solves M_aa z_a = -q_a, so solving that system in Jets differentiates
// z (quasistep/core/derivatives.hpp; Halm & Posa's and Trinkle's steps use it).
#pragma once

#include <cmath>

namespace qs {

/// Solves A x = b for x by Gaussian elimination with partial pivoting (pivots chosen by the
/// value part, |a_ik|): A is n x n, row-major with row stride lda, and is overwritten by its
/// factors; b (n) is overwritten by x. false when the matrix is singular: a pivot's value is
/// at most `tolerance` times the largest |a_ij| of the input (nothing is then written
/// meaningfully). Allocates nothing.
template <class T>
bool solve_linear_in_place(int n, T* A, int lda, T* b, double tolerance = 1e-13) {
  const auto value = [](const T& x) {
    if constexpr (requires { x.v; }) {
      return x.v;
    } else {
      return static_cast<double>(x);
    }
  };
  double top = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) top = std::fmax(top, std::fabs(value(A[i * lda + j])));
  const double floor = tolerance * top;
  for (int k = 0; k < n; ++k) {
    int pivot = k;
    double best = std::fabs(value(A[k * lda + k]));
    for (int i = k + 1; i < n; ++i) {
      const double a = std::fabs(value(A[i * lda + k]));
      if (a > best) {
        best = a;
        pivot = i;
      }
    }
    if (!(best > floor)) return false;
    if (pivot != k) {
      for (int j = 0; j < n; ++j) {
        const T t = A[k * lda + j];
        A[k * lda + j] = A[pivot * lda + j];
        A[pivot * lda + j] = t;
      }
      const T t = b[k];
      b[k] = b[pivot];
      b[pivot] = t;
    }
    for (int i = k + 1; i < n; ++i) {
      const T f = A[i * lda + k] / A[k * lda + k];
      for (int j = k + 1; j < n; ++j) A[i * lda + j] = A[i * lda + j] - f * A[k * lda + j];
      b[i] = b[i] - f * b[k];
    }
  }
  for (int i = n - 1; i >= 0; --i) {
    T s = b[i];
    for (int j = i + 1; j < n; ++j) s = s - A[i * lda + j] * b[j];
    b[i] = s / A[i * lda + i];
  }
  return true;
}

}  // namespace qs

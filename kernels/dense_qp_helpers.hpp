// File-local helpers of the dense QP solver's files (dense_qp.cpp, dense_qp_factor.cpp,
// dense_qp_start.cpp, dense_qp_residuals.cpp): constants, bound and size checks, and the
// vectorised loops of the factor updates. Internal: include it from those files only. The
// build compiles the four files as one translation unit (kernels/CMakeLists.txt); each also
// compiles alone, so everything here is in an unnamed namespace and marked maybe_unused.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "quasistep/kernels/dense_qp.hpp"
#include "quasistep/kernels/unit_scale.hpp"
#include "quasistep/kernels/input_checks.hpp"
#include "quasistep/kernels/lane.hpp"

namespace qs {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using detail::bounds_ok;
using detail::finite_max_abs;
using detail::max_abs;

// The O(n) loops of the factor updates on quasistep/kernels/lane.hpp's explicit native vectors: the
// build passes -fno-tree-vectorize, so plain loops stay scalar. Only element-wise
// operations, each entry computed by the plain loop's expression, so the results are
// bitwise those of the scalar loops and do not depend on alignment (the branch-and-bound's
// answer must not depend on which workspace solved a node). File-local on purpose (an
// unnamed namespace, a copy per translation unit): as inline functions of the shared
// quasistep/kernels/lane.hpp GCC inlined them differently and the small problems of bench_dense_qp
// ran 10-20% slower. rotate is in dense_qp_factor.cpp, its only user.

/// y_i += f x_i, i < n.
[[maybe_unused]] void axpy(double f, const double* x, double* y, int n) {
  const NativeSimd fv(f);
  int i = 0;
  for (; i + kNativeWidth <= n; i += kNativeWidth) store_native(load_native(y + i) + fv * load_native(x + i), y + i);
  for (; i < n; ++i) y[i] += f * x[i];
}

/// x'y, i < n, added in one order on every instruction set (quasistep/kernels/lane.hpp,
/// SumBlock): kSumWidth partial sums over the whole blocks, added in order, then the tail
/// in order. The order does not depend on the alignment either.
[[maybe_unused]] double dot(const double* x, const double* y, int n) {
  SumBlock acc(0.0);
  int i = 0;
  for (; i + kSumWidth <= n; i += kSumWidth) acc += load_sum_block(x + i) * load_sum_block(y + i);
  double s = 0.0;
  for (int l = 0; l < kSumWidth; ++l) s += acc[l];
  for (; i < n; ++i) s += x[i] * y[i];
  return s;
}

[[maybe_unused]] bool sizes_ok(const DenseQpProblem& p) {
  const Eigen::Index n = p.c.size();
  if (n <= 0 || p.H.rows() != n || p.H.cols() != n) return false;
  if (p.A_eq.rows() != p.b_eq.size() || p.A_in.rows() != p.b_in.size()) return false;
  if (p.A_eq.rows() > 0 && p.A_eq.cols() != n) return false;
  if (p.A_in.rows() > 0 && p.A_in.cols() != n) return false;
  if (p.lower.size() != p.upper.size()) return false;
  if (p.lower.size() != 0 && p.lower.size() != n) return false;
  return true;
}

[[maybe_unused]] double lower_of(const DenseQpProblem& p, Eigen::Index j) {
  return p.lower.size() ? p.lower[j] : -kInf;
}
[[maybe_unused]] double upper_of(const DenseQpProblem& p, Eigen::Index j) {
  return p.upper.size() ? p.upper[j] : kInf;
}

/// The unit of variable j in which a ray is judged (verify_qp_ray, DenseQp::is_ray): a
/// power of two near its column's size, max_i |A_ij| over the rows, or, for a variable no
/// row holds, sqrt(H_jj); 1 if neither. Judged in the
/// variables s_j x_j, a ray's tests do not depend on the units of the problem's variables:
/// a variable in units 2^k times larger has a column 2^-k times smaller, and s_j d_j is the
/// same (the rows in any common unit: each row test is relative to its own entries). In the
/// variables as given, a ray normalised by its largest entry judged radians beside lengths,
/// and a row it violated in the entries of a short lever arm passed as rounding.
[[maybe_unused]] double ray_column_scale(const DenseQpProblem& p, Eigen::Index j) {
  double a = 0.0;
  for (Eigen::Index i = 0; i < p.A_eq.rows(); ++i) a = std::max(a, std::abs(p.A_eq(i, j)));
  for (Eigen::Index i = 0; i < p.A_in.rows(); ++i) a = std::max(a, std::abs(p.A_in(i, j)));
  return column_unit(a, p.H(j, j));
}

/// A bound multiplier's part of the KKT check (qp_kkt_residual): its wrong sign (w > 0 at
/// no lower bound, w < 0 at no upper bound) and its complementarity with the bound's gap.
[[maybe_unused]] void bound_multiplier_terms(double w, double x, double lo, double up, double& sign, double& comp) {
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
[[maybe_unused]] int pivoted_cholesky(Eigen::MatrixXd& A, int k, double tol, int* piv) {
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
}  // namespace qs

// Small input and certificate checks shared by the dense LP and QP kernels (internal to
// kernels/).
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <algorithm>
#include <cmath>
#include <limits>

#include "quasistep/kernels/lane.hpp"

namespace qs::detail {

// Farkas certificates (verify_farkas, verify_qp_farkas; multipliers y scaled to max 1).
// A gap below kFarkasRounding * sum_i |y_i| (1 + |b_i|) is rounding: with b and the bounds
// a certificate uses all 0, gap and terms can be rounding alike (found by fuzzing).
constexpr double kFarkasRounding = 64 * std::numeric_limits<double>::epsilon();
// Rows whose multiplier is above this fraction of the largest are the rows a certificate
// uses: a multiplier of rounding size (1e-17) must not lend its row's entries.
constexpr double kFarkasUsedRow = 1e-3;

/// Whether g_j = (A'y)_j of a column with an infinite bound counts as zero: to tol relative
/// to its terms (g_mag = sum_i |y_i A_ij|: they cancel) or to the column's entries in the
/// rows y uses (col_used; y carries rounding of its own), and to rounding only relative to
/// the whole column (col_mag: data such as cos(pi/2) = 6e-17, or a multiplier of -5e-16
/// that should be 0 on a slack column). To tol against the whole column, one large entry in
/// a row y leaves out excused a g_j that was no rounding at all (fuzzing and review found
/// feasible problems "proved" empty that way).
inline bool farkas_column_is_zero(double g, double g_mag, double col_used, double col_mag, double tol) {
  return std::abs(g) <= tol * std::max(g_mag, col_used) || std::abs(g) <= kFarkasRounding * col_mag;
}

/// max |v_i|, 0 for an empty vector or matrix.
template <class Derived>
double max_abs(const Eigen::MatrixBase<Derived>& v) {
  return v.size() == 0 ? 0.0 : v.cwiseAbs().maxCoeff();
}

/// m = max |a_ij| in one pass, true when every entry is finite (false, m unspecified,
/// at a NaN or an infinity): the finiteness check and the scale of the data together. It
/// runs on every node of a search: columns of directly stored data go on explicit vectors.
template <class Derived>
bool finite_max_abs(const Eigen::MatrixBase<Derived>& a, double& m) {
  constexpr double big = std::numeric_limits<double>::max();
  double mx = 0.0;
  bool bad = false;
  Eigen::Index i0 = 0;  // rows the vector loop left, per column
  if constexpr (bool(Derived::Flags & Eigen::DirectAccessBit)) {
    using V = NativeSimd;
    constexpr int w = kNativeWidth;
    if (a.derived().innerStride() == 1) {
      V mv(0.0);
      V::mask_type bv(false);
      const Eigen::Index rows = a.rows(), full = rows - rows % w;
      for (Eigen::Index j = 0; j < a.cols(); ++j) {
        const double* col = a.derived().data() + j * a.derived().outerStride();
        for (Eigen::Index i = 0; i < full; i += w) {
          const V v = stdx::abs(load_native(col + i));
          mv = stdx::max(mv, v);
          bv = bv || !(v <= V(big));
        }
      }
      for (int l = 0; l < w; ++l) mx = std::max(mx, static_cast<double>(mv[l]));
      bad = stdx::any_of(bv);
      i0 = full;
    }
  }
  // The rest (or all, for data without direct access): short dependency chains.
  for (Eigen::Index j = 0; j < a.cols(); ++j)
    for (Eigen::Index i = i0; i < a.rows(); ++i) {
      const double v = std::abs(a.coeff(i, j));
      mx = std::max(mx, v);
      bad |= !(v <= big);  // NaN or infinite
    }
  m = mx;
  return !bad;
}

/// Bounds a solver can take: no NaN, lower <= upper, lower != +inf, upper != -inf.
inline bool bounds_ok(const Eigen::Ref<const Eigen::VectorXd>& lower, const Eigen::Ref<const Eigen::VectorXd>& upper) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (Eigen::Index j = 0; j < lower.size(); ++j) {
    const double l = lower[j], u = upper[j];
    if (std::isnan(l) || std::isnan(u) || l > u || l == inf || u == -inf) return false;
  }
  return true;
}

}  // namespace qs::detail

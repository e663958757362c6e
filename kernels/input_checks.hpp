// Small input checks shared by the dense LP and QP kernels (internal to kernels/).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <experimental/simd>
#include <limits>

namespace qs::detail {

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
    namespace stdx = std::experimental;
    using V = stdx::native_simd<double>;
    constexpr int w = static_cast<int>(V::size());
    if (a.derived().innerStride() == 1) {
      V mv(0.0);
      stdx::simd_mask<double, stdx::simd_abi::native<double>> bv(false);
      const Eigen::Index rows = a.rows(), full = rows - rows % w;
      for (Eigen::Index j = 0; j < a.cols(); ++j) {
        const double* col = a.derived().data() + j * a.derived().outerStride();
        for (Eigen::Index i = 0; i < full; i += w) {
          const V v = stdx::abs(V(col + i, stdx::element_aligned));
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

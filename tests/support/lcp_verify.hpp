// An LCP verifier that no scaling of the data can fool, written apart from the kernels'
// own checks (it shares no code with them) so that a test can hold a kernel's `solved` to it.
//
// For LCP(M, q) and a claimed z it forms w = M z + q itself and judges every row in that
// row's own units:
//   - w_i is compared with s_i = |q_i| + |z|_inf sum_j |M_ij|, the largest value that terms
//     of the sizes at hand can form (it bounds sum_j |M_ij z_j| + |q_i|, the terms of w_i,
//     and also what a change of z within a rounding of |z|_inf does to w_i: a z_j of 1e-20
//     beside a z_k of 1e-3 is zero to working precision, and its term in w_i with it);
//   - z_i is compared with |z|_inf (the only scale a z entry has that is not taken from w).
// z is a solution when every row has z_i >= 0, w_i >= -tol s_i, and z_i <= tol |z|_inf or
// |w_i| <= tol s_i (one of the pair is zero). Each test is a ratio of two quantities of the
// same units, so the verdict is the same for (M, q) -> (sM, sq) and for q -> sq (z -> sz).
// A relative scale that mixes units (|min(z_i, w_i)| over |M| |z|, or over a floor such as
// max(1, |q|)) is what let wrong points pass at 1e-12 and 1e12.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

namespace qs::test {

struct LcpVerdict {
  bool ok = false;
  double worst = 0;  // the largest relative violation found (inf for a non-finite entry)
  int row = -1;      // the row where it was found
};

inline LcpVerdict verify_lcp(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                             const Eigen::Ref<const Eigen::VectorXd>& z, double tol = 1e-8) {
  LcpVerdict v;
  const Eigen::Index n = q.size();
  if (M.rows() != n || M.cols() != n || z.size() != n) return v;
  long double zmax = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!std::isfinite(z[i])) return LcpVerdict{false, INFINITY, static_cast<int>(i)};
    zmax = std::max(zmax, std::abs(static_cast<long double>(z[i])));
  }
  auto note = [&](long double r, Eigen::Index i) {
    if (r > v.worst) {
      v.worst = static_cast<double>(r);
      v.row = static_cast<int>(i);
    }
  };
  for (Eigen::Index i = 0; i < n; ++i) {
    // Extended precision: the verifier's own rounding stays far below tol.
    long double w = q[i], row = 0;
    for (Eigen::Index j = 0; j < n; ++j) {
      w += static_cast<long double>(M(i, j)) * z[j];
      row += std::abs(static_cast<long double>(M(i, j)));
    }
    const long double s = std::abs(static_cast<long double>(q[i])) + row * zmax;
    const long double zi = z[i];
    if (zi < 0) note(zmax > 0 ? -zi / zmax : INFINITY, i);
    if (w < 0) note(s > 0 ? -w / s : INFINITY, i);
    const long double zrel = zmax > 0 ? std::abs(zi) / zmax : 0;
    const long double wrel = s > 0 ? std::abs(w) / s : (w == 0 ? 0 : INFINITY);
    note(std::min(zrel, wrel), i);
  }
  v.ok = v.worst <= tol;
  return v;
}

}  // namespace qs::test

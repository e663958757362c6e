#include "quasistep/kernels/lemke.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "quasistep/kernels/lane.hpp"

namespace qs {

namespace {

using Simd = NativeSimd;
constexpr Eigen::Index kW = kNativeWidth;
constexpr double kMax = std::numeric_limits<double>::max();

/// max |x| over the runs of entries given by `runs` (runs(f) calls f(begin, length) for each);
/// false when an entry is not finite. On explicit vectors (the build does not auto-vectorise): an
/// entry is finite iff |x| <= DBL_MAX (false for inf and NaN), and the max over finite
/// entries does not depend on the order it is taken in, so four independent accumulators
/// (named variables, which stay in registers) give the scalar loop's value without one
/// serial chain.
template <class Runs>
bool abs_max_if_finite(Runs&& runs, double& out) {
  const Simd lim(kMax);
  Simd b0(0.0), b1(0.0), b2(0.0), b3(0.0);
  Simd::mask_type f0(true), f1(true), f2(true), f3(true);
  double tail_big = 0;
  bool tail_finite = true;
  auto step = [&](Simd& b, Simd::mask_type& f, const double* p) {
    const Simd a = std::experimental::abs(load_native(p));
    f = f && a <= lim;
    where(b < a, b) = a;
  };
  runs([&](const double* p, Eigen::Index len) {
    Eigen::Index i = 0;
    for (; i + 4 * kW <= len; i += 4 * kW) {
      step(b0, f0, p + i);
      step(b1, f1, p + i + kW);
      step(b2, f2, p + i + 2 * kW);
      step(b3, f3, p + i + 3 * kW);
    }
    for (; i + kW <= len; i += kW) step(b0, f0, p + i);
    for (; i < len; ++i) {
      const double a = std::abs(p[i]);
      tail_finite = tail_finite && a <= kMax;
      tail_big = std::max(tail_big, a);
    }
  });
  if (!tail_finite || !all_of(f0 && f1 && f2 && f3)) return false;
  out = std::max({tail_big, hmax(b0), hmax(b1), hmax(b2), hmax(b3)});
  return true;
}

}  // namespace

Status check_lcp_input(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                       int capacity, double* m_abs_max, double* q_abs_max) {
  const Eigen::Index n = q.size();
  if (n < 1 || n > capacity || M.rows() != n || M.cols() != n) return Status::bad_input;
  double biggest = 0;
  const bool finite = abs_max_if_finite(
      [&](auto&& f) {
        if (M.outerStride() == n) {
          f(M.data(), n * n);  // contiguous: one run
        } else {
          for (Eigen::Index j = 0; j < n; ++j) f(M.data() + j * M.outerStride(), n);
        }
      },
      biggest);
  bool q_finite = true;
  double q_biggest = 0;
  for (Eigen::Index j = 0; j < n; ++j) {
    const double a = std::abs(q[j]);
    q_finite = q_finite && a <= kMax;
    q_biggest = std::max(q_biggest, a);
  }
  if (!finite || !q_finite) return Status::bad_input;
  if (m_abs_max) *m_abs_max = biggest;
  if (q_abs_max) *q_abs_max = q_biggest;
  return Status::solved;
}

}  // namespace qs

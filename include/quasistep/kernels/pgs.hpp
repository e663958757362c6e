// Projected Gauss-Seidel / SOR for LCPs with a symmetric positive semidefinite matrix,
// written once on a scalar type T: T = double solves one problem, a lane type (quasistep/kernels/lane.hpp's
// Lane: one double per world) solves a group of problems with the same instructions.
//
//   LCP(M, q):  find z >= 0 with w = M z + q >= 0 and z'w = 0,  M symmetric PSD.
//
// This is the dual of Anitescu's convex step (Pang & Tedrake's Anitescu slides, the QP
// min 1/2 v'Qv + c'v s.t. phi/h + J v >= 0): M = J Q^-1 J', q = phi/h - J Q^-1 c, and the
// primal velocity is v = Q^-1 (J'z - c). For a PSD LCP w (hence v) is unique even where z is
// not.
//
// Sweep (rows in order, each using the newest z):
//   g_i = q_i + sum_j M_ij z_j,   z_i <- max(0, z_i - g_i * (omega / M_ii)),   omega in (0, 2).
// The sum is taken in a fixed order (four interleaved partial sums, added as
// (s0 + s1) + (s2 + s3), then q_i + that): shorter dependency chains, and the same order on
// every path. For symmetric PSD M and a solvable LCP the iterates converge to a solution
// (Luo & Tseng, SIAM J. Control Optim. 29, 1991), linearly but possibly very slowly (nearly
// parallel contact rows: 1e5 sweeps); an unsolvable one lets z grow without bound.
//
// Pair blocks (PgsSettings::pair_blocks). Anitescu's friction rows come in pairs
// J_n + mu J_t, J_n - mu J_t: nearly parallel when mu is small, and plain Gauss-Seidel then
// crawls (the pair's 2 x 2 block is nearly singular). With pair_blocks each sweep solves the
// pair's 2 x 2 LCP exactly, with the rest of z fixed: r = q_P + M_P,rest z_rest (computed as
// g - M_PP z_P from the row sums g), then the first of these that holds, in this order:
//   z = 0 (r >= 0);  z1 = -r1/a, z2 = 0 (z1 >= 0, r2 + b z1 >= 0);
//   z1 = 0, z2 = -r2/c (z2 >= 0, r1 + b z2 >= 0);  both from the 2 x 2 system (det = ac - b^2
//   > 1e-14 ac, z >= 0),
// where [a b; b c] = M_PP. A PSD block with det > 0 always meets one (it is a P-matrix); if
// none holds (a singular block) the two rows take plain Gauss-Seidel steps. A pair with a zero
// diagonal entry takes the plain steps too. Convergence: block Gauss-Seidel on a PSD LCP
// (Cottle, Pang & Stone sec. 5.3).
//
// Stopping rule. Every `check_every` sweeps (and at max_iterations) the scaled natural residual
//   r(z) = max_i |min(sqrt(M_ii) z_i, w_i / sqrt(M_ii))| / max_i |q_i / sqrt(M_ii)|
// is computed from w = M z + q recomputed in full; the lane is solved when r <= tolerance.
// This is the natural residual ||min(z~, w~)||_inf of the Jacobi-scaled LCP (D M D, D q),
// D = diag(M)^-1/2 (unit diagonal; z~ = D^-1 z, w~ = D w), relative to that problem's ||q~||_inf.
// Why: contact rows mix units and magnitudes (normal and friction rows, light and heavy
// bodies), and r is invariant under any positive diagonal rescaling of the rows/variables
// and under scaling q (so z) or (M, q) together; an absolute floor such as 1 + ||q||_inf would
// make the test absolute for small impulses. It is 0 exactly at a solution (|min(a, b)| = 0 iff
// a, b >= 0 and ab = 0). Rows with M_ii = 0 are excluded (below).
// The residual is recorded whatever the outcome; `iteration_limit` keeps the last iterate.
//
// Input (per lane unless said otherwise):
// - bad_input for every lane: n < 0, n > capacity, spans shorter than n*n / n / n, omega not
//   in (0, 2), max_iterations < 0, check_every < 1, tolerance not finite or < 0.
// - bad_input: NaN/Inf in M, q or the warm start z; M_ii < 0; M_ii = 0 with a nonzero entry in
//   row or column i (M cannot be PSD). Symmetry and PSD are otherwise the caller's promise
//   (M = J Q^-1 J' computed in floating point is symmetric only up to roundoff).
// - M_ii = 0 with row and column i zero (an inactive contact slot padded with a zero
//   Jacobian row): w_i = q_i whatever z is, and z_i affects no other row. q_i >= 0: z_i = 0.
//   q_i < 0: `infeasible` (w_i = q_i < 0 for every z: the row is the proof), z untouched.
// - q~ = 0 on every positive-diagonal row: z = 0 is a solution; `solved`, 0 iterations.
//   (A zero problem, as used to pad a lane group, is solved this way.)
// - n = 0: solved.
// Outputs for lanes that are not iterated: bad_input has residual NaN and z untouched;
// infeasible has residual +inf; the trivial cases residual 0.
// numerical_failure: the residual check met a non-finite z or w (M not PSD, or an
// infeasible problem whose iterates overflowed); z is the last iterate, the residual NaN or inf.
//
// Lanes: a lane's operations are exactly those of T = double on that world's numbers (only
// + - * / sqrt, min/max/abs/select, compiled with -ffp-contract=off), and a lane that has
// stopped is masked: z is never written again while the group continues until every lane
// has stopped. So a world's z, status, iterations and residual are bitwise the same alone
// (T = double) or in any lane next to any worlds.
//
// The kernel is written on T: a lane type must supply + - * / and comparisons returning its
// mask, `static constexpr int width`, `operator[](int)` on values and masks, and
// select/min/max/abs/sqrt/none found by argument-dependent lookup (quasistep/kernels/lane.hpp has
// the double and bool versions).
//
// Storage: M is n*n values of T, row-major (for a lane type, entry (i, j) of every world in
// the group is one T: structure of arrays); q and z are n values. The solver's scratch is
// sized at construction; solve() allocates nothing, throws nothing and prints nothing.
#pragma once

#include <array>
#include <cstddef>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "quasistep/kernels/lane.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

struct PgsSettings {
  double omega = 1.0;         // SOR factor in (0, 2); 1 is plain projected Gauss-Seidel
  int max_iterations = 1000;  // sweeps
  double tolerance = 1e-8;    // on the scaled natural residual above
  int check_every = 4;        // sweeps between residual checks (each costs about one sweep)
  /// Rows 2k and 2k + 1 form a block solved exactly in each sweep (block Gauss-Seidel; see
  /// "Pair blocks" above). Requires omega = 1.
  bool pair_blocks = false;
};

namespace pgs_detail {

/// q + M_i. z in the fixed order the header states.
template <class T>
T row_dot_plus(const T* row, const T* z, int n, const T& q) {
  T s0(0.0), s1(0.0), s2(0.0), s3(0.0);
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    s0 = s0 + row[j] * z[j];
    s1 = s1 + row[j + 1] * z[j + 1];
    s2 = s2 + row[j + 2] * z[j + 2];
    s3 = s3 + row[j + 3] * z[j + 3];
  }
  for (; j < n; ++j) s0 = s0 + row[j] * z[j];
  return q + ((s0 + s1) + (s2 + s3));
}

}  // namespace pgs_detail

/// Per-lane outcome of Pgs<T>::solve (one entry for T = double).
template <class T>
struct PgsResult {
  static constexpr int kLanes = lanes_of<T>;
  std::array<Status, kLanes> status;
  std::array<int, kLanes> iterations;  // sweeps done when the lane stopped
  std::array<double, kLanes> residual;  // scaled natural residual of the returned z (header)

  PgsResult() { reset(); }
  void reset() {
    status.fill(Status::not_run);
    iterations.fill(0);
    residual.fill(0.0);
  }
  bool all_solved() const {
    for (Status s : status)
      if (s != Status::solved) return false;
    return true;
  }
};

template <class T>
class Pgs {
 public:
  using Value = T;
  using MaskT = decltype(std::declval<const T&>() < std::declval<const T&>());
  static constexpr int kLanes = lanes_of<T>;

  explicit Pgs(int capacity)
      : capacity_(capacity < 0 ? 0 : capacity),
        step_(static_cast<std::size_t>(capacity_)),
        sqrt_diag_(static_cast<std::size_t>(capacity_)),
        inv_sqrt_diag_(static_cast<std::size_t>(capacity_)) {}

  int capacity() const { return capacity_; }

  /// Solves the n x n LCP(M, q) of every lane from the warm start in z (overwritten with the
  /// answer). Returns true when every lane is solved.
  bool solve(int n, std::span<const T> M, std::span<const T> q, std::span<T> z, const PgsSettings& s,
             PgsResult<T>& out) {
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    constexpr double kInf = std::numeric_limits<double>::infinity();
    out.reset();
    const auto all_lanes = [&out](Status st, double residual) {
      out.status.fill(st);
      out.residual.fill(residual);
      return st == Status::solved;
    };
    const bool settings_ok = s.omega > 0 && s.omega < 2 && s.max_iterations >= 0 && s.check_every >= 1 &&
                             s.tolerance >= 0 && s.tolerance < kInf && (!s.pair_blocks || s.omega == 1.0);
    if (!settings_ok || n < 0 || n > capacity_) return all_lanes(Status::bad_input, kNaN);
    const std::size_t un = static_cast<std::size_t>(n);
    if (M.size() < un * un || q.size() < un || z.size() < un) return all_lanes(Status::bad_input, kNaN);
    if (n == 0) return all_lanes(Status::solved, 0.0);

    const T zero(0.0);
    const T* m = M.data();
    T* x = z.data();
    const auto finite = [&zero](const T& v) { return v - v == zero; };

    // One pass over the data: finiteness, diagonal signs, zero rows/columns.
    MaskT ok = zero == zero;
    MaskT infeasible = zero != zero;
    for (int i = 0; i < n; ++i) {
      const T d = m[i * n + i];
      ok = ok && finite(q[i]) && finite(x[i]) && !(d < zero);
      infeasible = infeasible || (d == zero && q[i] < zero);
    }
    for (int i = 0; i < n; ++i) {
      const T di = m[i * n + i];
      for (int j = 0; j < n; ++j) {
        const T mij = m[i * n + j];
        // PSD with M_ii = 0 (or M_jj = 0) forces M_ij = 0.
        ok = ok && finite(mij) && !(mij != zero && (di == zero || m[j * n + j] == zero));
      }
    }
    infeasible = ok && infeasible;

    const T omega(s.omega), one(1.0);
    T qscale = zero;
    for (int i = 0; i < n; ++i) {
      const T d = m[i * n + i];
      const MaskT pos = d > zero;
      const T d_pos = select(pos, d, one);  // no division by 0 or NaN, even in discarded lanes
      const T root = sqrt(d_pos);
      step_[i] = select(pos, omega / d_pos, zero);
      sqrt_diag_[i] = select(pos, root, zero);
      inv_sqrt_diag_[i] = select(pos, one / root, zero);
      qscale = max(qscale, abs(q[i]) * inv_sqrt_diag_[i]);
    }
    const MaskT go = ok && !infeasible;
    const MaskT trivial = go && !(qscale > zero);
    MaskT active = go && qscale > zero;
    for (int i = 0; i < n; ++i) {
      // Zero rows of iterated lanes, and every row of a trivial lane: z = 0.
      const MaskT zero_row = !(m[i * n + i] > zero);
      x[i] = select(trivial || (active && zero_row), zero, x[i]);
    }
    for (int l = 0; l < kLanes; ++l) {
      if (!lane_of(ok, l)) {
        out.status[l] = Status::bad_input;
        out.residual[l] = kNaN;
      } else if (lane_of(infeasible, l)) {
        out.status[l] = Status::infeasible;
        out.residual[l] = kInf;
      } else if (lane_of(trivial, l)) {
        out.status[l] = Status::solved;
      }
    }

    const T tol(s.tolerance);
    for (int k = 0; any(active); ++k) {
      const bool last = k == s.max_iterations;
      if (last || (k > 0 && k % s.check_every == 0)) {
        T r = zero;
        MaskT fin = zero == zero;
        for (int i = 0; i < n; ++i) {
          const T w = pgs_detail::row_dot_plus(m + i * n, x, n, q[i]);
          fin = fin && finite(w) && finite(x[i]);
          r = max(r, abs(min(x[i] * sqrt_diag_[i], w * inv_sqrt_diag_[i])));
        }
        const T res = r / qscale;
        const MaskT converged = fin && res <= tol;
        for (int l = 0; l < kLanes; ++l) {
          if (!lane_of(active, l)) continue;
          const bool c = lane_of(converged, l), f = !lane_of(fin, l);
          if (!(c || f || last)) continue;
          out.status[l] = c ? Status::solved : f ? Status::numerical_failure : Status::iteration_limit;
          out.iterations[l] = k;
          out.residual[l] = lane_of(res, l);
        }
        if (last) break;
        active = active && !(converged || !fin);
        if (none(active)) break;
      }
      const int blocked = s.pair_blocks ? n - n % 2 : 0;
      for (int i = 0; i < blocked; i += 2) pair_update(m, q, x, n, i, active);
      for (int i = blocked; i < n; ++i) {
        const T g = pgs_detail::row_dot_plus(m + i * n, x, n, q[i]);
        x[i] = select(active, max(zero, x[i] - g * step_[i]), x[i]);
      }
    }
    return out.all_solved();
  }

 private:
  /// One block Gauss-Seidel update of rows i, i + 1 (the header's "Pair blocks").
  void pair_update(const T* m, std::span<const T> q, T* x, int n, int i, const MaskT& active) const {
    const T zero(0.0);
    const T a = m[i * n + i], b = m[i * n + i + 1], c = m[(i + 1) * n + i + 1];
    const T z1 = x[i], z2 = x[i + 1];
    const T r1 = pgs_detail::row_dot_plus(m + i * n, x, n, q[i]) - (a * z1 + b * z2);
    const T r2 = pgs_detail::row_dot_plus(m + (i + 1) * n, x, n, q[i + 1]) - (b * z1 + c * z2);
    const MaskT pos = a > zero && c > zero;
    const T one(1.0);
    const T a_safe = select(pos, a, one), c_safe = select(pos, c, one);
    // The candidates, in the order the header gives.
    const T only1 = -r1 / a_safe, only2 = -r2 / c_safe;
    const T det = a_safe * c_safe - b * b;
    const MaskT regular = det > T(1e-14) * (a_safe * c_safe);
    const T det_safe = select(regular, det, one);
    const T both1 = (b * r2 - c_safe * r1) / det_safe, both2 = (b * r1 - a_safe * r2) / det_safe;
    const MaskT c0 = !(r1 < zero) && !(r2 < zero);
    const MaskT c1 = !(only1 < zero) && !(r2 + b * only1 < zero);
    const MaskT c2 = !(only2 < zero) && !(r1 + b * only2 < zero);
    const MaskT c3 = regular && !(both1 < zero) && !(both2 < zero);
    T n1 = select(c3, both1, z1), n2 = select(c3, both2, z2);
    n1 = select(c2, zero, n1);
    n2 = select(c2, only2, n2);
    n1 = select(c1, only1, n1);
    n2 = select(c1, zero, n2);
    n1 = select(c0, zero, n1);
    n2 = select(c0, zero, n2);
    const MaskT exact = pos && (c0 || c1 || c2 || c3);
    // Otherwise (a singular block, or a zero diagonal entry): two plain steps.
    const T g1 = r1 + a * z1 + b * z2;
    const T p1 = max(zero, z1 - g1 * step_[i]);
    const T g2 = r2 + b * p1 + c * z2;
    const T p2 = max(zero, z2 - g2 * step_[i + 1]);
    x[i] = select(active, select(exact, n1, p1), z1);
    x[i + 1] = select(active, select(exact, n2, p2), z2);
  }

  int capacity_;
  std::vector<T> step_;           // omega / M_ii, 0 on zero rows
  std::vector<T> sqrt_diag_;      // sqrt(M_ii), 0 on zero rows
  std::vector<T> inv_sqrt_diag_;  // 1 / sqrt(M_ii), 0 on zero rows
};

}  // namespace qs

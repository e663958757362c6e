// Lexicographic Lemke written once on a scalar type T: T = double solves one LCP, a lane type
// (quasistep/kernels/lane.hpp's Lane) solves a lane group of LCPs of the same size, one per world, with
// an SoA tableau (entry (i, k) of B^-1 of every world in the group is one T).
//
//   LCP(M, q):  find z >= 0 with w = M z + q >= 0 and z'w = 0.
//
// The method is quasistep/kernels/lemke.hpp's (Cottle, Pang & Stone sec. 4.4: artificial z0 with the
// covering vector 1, cold start B = I, explicit B^-1, the minimum-ratio test with
// lexicographic tie-breaking over the rows of B^-1 divided by the pivot column, z0 leaving
// whenever it ties for the minimum, the degenerate exit when z0 sits at level zero), without
// the warm start and without the refinement: a lane whose point fails the residual check is
// `numerical_failure` and its caller finishes it on the robust scalar path.
//
// Lanes. Each world chooses its own entering variable and pivot row; the entering column is
// B^-1 times a per-lane gathered column (e_j for w_j, -M_j for z_j), the pivot gathers each
// lane's pivot row and scatters it back, and everything else is whole-T arithmetic. A lane's
// numbers see only its own operations, in the same order as T = double (+ - * / and
// comparisons; -ffp-contract=off), and a finished lane stops pivoting (its column is zero and
// its pivot 1, so its tableau is left as it was). So a world's z, w, status and pivot count
// are bitwise the same alone or in any lane next to any worlds. The pivot-row choice reads
// lanes one by one (it is logic, not arithmetic on a lane's numbers).
//
// Excluded rows (optional, per lane): row and variable i take no part. Their w_i stays basic
// and their z_i = 0; they never block in the ratio test nor count in the tolerances or the
// residual. The caller must give them zero rows and columns in M: the answer on the other
// rows is then the answer of the LCP without them, which lets worlds with different active
// contact sets share one fixed layout.
//
// Statuses per lane: solved (residual <= tolerance), not_found (a secondary ray), iteration_limit,
// numerical_failure (the end point fails the residual check), bad_input (n outside [0,
// capacity] for every lane; a non-finite M or q for that lane). z and w are written for the
// lanes that end with a point (solved, numerical_failure, and a ray's point); other lanes' z
// and w are left untouched. Each lane is solved on its data scaled to unit size by powers of
// two (exact; quasistep/kernels/lemke.hpp's lcp_scaling_exponents) and scaled back. The
// residual is the certified residual of quasistep/kernels/lcp_acceptance.hpp (its double
// pass; a lane that fails it goes to the caller's scalar path, which also tries the long
// double pass), over the rows that are not excluded, computed in T for all lanes at once
// when the last lane stops (the degenerate exit computes it on the spot for the lanes that
// ask).
//
// Sizes are fixed at construction; solve() allocates nothing, throws nothing, prints nothing.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "quasistep/kernels/lane.hpp"
#include "quasistep/kernels/lemke.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

/// Per-lane outcome of LemkeLanes<T>::solve (one entry for T = double).
template <class T>
struct LemkeLanesResult {
  static constexpr int kLanes = lanes_of<T>;
  std::array<Status, kLanes> status;
  std::array<int, kLanes> pivots;
  std::array<double, kLanes> residual;  // scaled natural residual of z (NaN where none was formed)

  LemkeLanesResult() { reset(); }
  void reset() {
    status.fill(Status::not_run);
    pivots.fill(0);
    residual.fill(std::numeric_limits<double>::quiet_NaN());
  }
};

template <class T>
class LemkeLanes {
 public:
  using MaskT = decltype(std::declval<const T&>() < std::declval<const T&>());
  static constexpr int kLanes = lanes_of<T>;

  explicit LemkeLanes(int capacity)
      : cap_(capacity < 0 ? 0 : capacity),
        binv_(sz(cap_) * sz(cap_)),
        xb_(sz(cap_)),
        col_(sz(cap_)),
        a_(sz(cap_)),
        ratio_(sz(cap_)),
        zc_(sz(cap_)),
        wc_(sz(cap_)),
        scaled_m_(sz(cap_) * sz(cap_)),
        scaled_q_(sz(cap_)),
        basic_(sz(cap_) * kLanes),
        row_of_((2 * sz(cap_) + 1) * kLanes) {}

  int capacity() const { return cap_; }

  /// Solves LCP(M, q) of every lane. M: n x n row-major, q: n, excluded: n masks or null;
  /// z, w: n outputs each, written per lane as the header says.
  void solve(int n, const T* M, const T* q, const MaskT* excluded, T* z, T* w, const LemkeOptions& opt,
             LemkeLanesResult<T>& out) {
    out.reset();
    pending_.fill(false);
    n_ = n;
    M_ = M;
    q_ = q;
    const T* const orig_m = M;
    const T* const orig_q = q;
    excl_ = excluded;
    if (n < 0 || n > cap_) {
      out.status.fill(Status::bad_input);
      return;
    }
    if (n == 0) {
      out.status.fill(Status::solved);
      out.residual.fill(0.0);
      return;
    }
    // Per lane: finite data, |q|_inf over the rows taken, |M|_inf (zero outside them).
    const T zero(0.0), big(std::numeric_limits<double>::max());
    MaskT finite = zero == zero;
    T qmax = zero, mmax = zero;
    for (int i = 0; i < n; ++i) {
      finite = finite && abs(q[i]) <= big;
      qmax = max(qmax, select(is_excluded(i), zero, abs(q[i])));
      for (int j = 0; j < n; ++j) {
        finite = finite && abs(M[i * n + j]) <= big;
        mmax = max(mmax, abs(M[i * n + j]));
      }
    }
    // Every lane is solved as LCP(2^(eq+ez) M, 2^eq q) (lcp_scaling_exponents, as
    // quasistep/kernels/lemke.hpp does): powers of two scale its arithmetic exactly, so its
    // pivots, tolerances and residual check are those of a problem of unit size, the same
    // for its data at any power of two; z and w are scaled back at the end.
    bool any_scaled = false;
    for (int l = 0; l < kLanes; ++l) {
      exp_q_[l] = exp_z_[l] = 0;
      if (lane_of(finite, l)) lcp_scaling_exponents(lane_of(mmax, l), lane_of(qmax, l), exp_q_[l], exp_z_[l]);
      any_scaled = any_scaled || exp_q_[l] != 0 || exp_z_[l] != 0;
    }
    if (any_scaled) {
      // By whole-T multiplications with each lane's 2^e where every lane has one (exact_pow2:
      // the same rounding as std::ldexp), else lane by lane.
      T pm(0.0), pq(0.0);
      bool by_multiply = true;
      for (int l = 0; l < kLanes; ++l) {
        set_lane(pm, l, exact_pow2(exp_q_[l] + exp_z_[l]));
        set_lane(pq, l, exact_pow2(exp_q_[l]));
        by_multiply = by_multiply && lane_of(pm, l) != 0.0 && lane_of(pq, l) != 0.0;
      }
      for (int k = 0; k < n * n; ++k) {
        T v = M[k];
        if (by_multiply) {
          v = v * pm;
        } else {
          for (int l = 0; l < kLanes; ++l) set_lane(v, l, std::ldexp(lane_of(v, l), exp_q_[l] + exp_z_[l]));
        }
        scaled_m_[static_cast<std::size_t>(k)] = v;
      }
      for (int i = 0; i < n; ++i) {
        T v = q[i];
        if (by_multiply) {
          v = v * pq;
        } else {
          for (int l = 0; l < kLanes; ++l) set_lane(v, l, std::ldexp(lane_of(v, l), exp_q_[l]));
        }
        scaled_q_[static_cast<std::size_t>(i)] = v;
      }
      for (int l = 0; l < kLanes; ++l) {
        set_lane(qmax, l, std::ldexp(lane_of(qmax, l), exp_q_[l]));
        set_lane(mmax, l, std::ldexp(lane_of(mmax, l), exp_q_[l] + exp_z_[l]));
      }
      M_ = M = scaled_m_.data();
      q_ = q = scaled_q_.data();
    }
    qmax_ = qmax;
    solve_from_cold_start(n, q, finite, z, w, opt, out);
    if (any_scaled) unscale(orig_m, orig_q, z, w, out);
  }

 private:
  /// solve() on the data as they are now (scaled or not), from the cold start.
  void solve_from_cold_start(int n, const T* q, MaskT finite, T* z, T* w, const LemkeOptions& opt,
                             LemkeLanesResult<T>& out) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    const T zero(0.0);
    const T* const M = M_;
    const T qmax = qmax_;
    const int limit = opt.max_pivots > 0 ? opt.max_pivots : 1000 + 100 * n;
    for (int l = 0; l < kLanes; ++l) {
      running_[l] = lane_of(finite, l);
      if (!running_[l]) out.status[l] = Status::bad_input;
      zero_level_[l] = 1e-13 * std::max(1.0, lane_of(qmax, l));
    }

    // Cold start: B = I (every w basic), x_B = q.
    for (int k = 0; k < n; ++k)
      for (int i = 0; i < n; ++i) binv(i, k) = T(i == k ? 1.0 : 0.0);
    for (int i = 0; i < n; ++i) xb_[i] = q[i];
    for (int l = 0; l < kLanes; ++l) {
      for (int i = 0; i < n; ++i) basic(i, l) = i;
      for (int v = 0; v <= 2 * n; ++v) row_of(v, l) = v < n ? v : -1;
    }

    // Lanes whose q is already feasible are solved by z = 0 (extract checks it).
    bool any_start = false;
    for (int l = 0; l < kLanes; ++l) {
      if (!running_[l]) continue;
      bool feasible = true;
      for (int i = 0; i < n && feasible; ++i)
        feasible = lane_excluded(i, l) || lane_of(xb_[i], l) >= -zero_level_[l];
      if (feasible) {
        freeze(l, Status::solved, Status::numerical_failure, z);
      } else {
        any_start = true;
      }
    }
    if (!any_start) return settle(opt, z, w, out);

    // z0 enters (its column B^-1 (-B 1) = -1) at the level that makes x_B >= 0: the row
    // leaving is the lexicographic minimum of [x_B, B^-1] over the negative rows.
    for (int i = 0; i < n; ++i) col_[i] = T(-1.0);
    for (int l = 0; l < kLanes; ++l) {
      pivot_row_[l] = 0;
      if (!running_[l]) continue;
      int r = -1;
      for (int i = 0; i < n; ++i)
        if (!lane_excluded(i, l) && lane_of(xb_[i], l) < 0 && (r < 0 || lex_less(i, 1.0, r, 1.0, l))) r = i;
      pivot_row_[l] = r;
      leaving_[l] = basic(r, l);
      entering_[l] = 2 * n;
    }
    pivot();
    for (int l = 0; l < kLanes; ++l)
      if (running_[l]) out.pivots[l] = 1;

    while (true) {
      bool any_running = false;
      for (int l = 0; l < kLanes; ++l) any_running = any_running || running_[l];
      if (!any_running) return settle(opt, z, w, out);
      // z0 at level zero (degenerate): the almost-complementary point may already solve the
      // LCP; the residual check decides (quasistep/kernels/lemke.hpp, same rule).
      bool any_degenerate = false;
      for (int l = 0; l < kLanes; ++l) {
        degenerate_[l] = running_[l] && lane_of(xb_[row_of(2 * n, l)], l) <= zero_level_[l];
        any_degenerate = any_degenerate || degenerate_[l];
      }
      if (any_degenerate) try_degenerate_exit(opt, z, w, out);
      // The entering variable is the complement of the one that left; its column of
      // [I, -M] gathered per lane (zero for lanes that have stopped).
      for (int k = 0; k < n; ++k) a_[k] = zero;
      for (int l = 0; l < kLanes; ++l) {
        if (!running_[l]) continue;
        const int e = leaving_[l] < n ? leaving_[l] + n : leaving_[l] - n;
        entering_[l] = e;
        if (e < n) {
          set_lane(a_[e], l, 1.0);
        } else {
          for (int k = 0; k < n; ++k) set_lane(a_[k], l, -lane_of(M[k * n + (e - n)], l));
        }
      }
      // col = B^-1 a. Terms with a_k = 0 in every lane are skipped: the sum starts at +0 and
      // adding +-0 to it changes no bit, so a lane's value is the same whatever its
      // neighbours' a_k are (B^-1 stays finite while the lane runs).
      for (int i = 0; i < n; ++i) col_[i] = zero;
      for (int k = 0; k < n; ++k) {
        if (all_lanes_zero(a_[k])) continue;
        const T ak = a_[k];
        const T* b = &binv(0, k);
        for (int i = 0; i < n; ++i) col_[i] = col_[i] + b[i] * ak;
      }
      // Minimum ratio over the rows that block (entry above the relative pivot tolerance).
      T cmax = zero;
      for (int i = 0; i < n; ++i) cmax = max(cmax, select(is_excluded(i), zero, abs(col_[i])));
      const T tol = T(opt.pivot_tolerance) * max(T(1.0), cmax);
      const T inf(kInf);
      T best = inf;
      for (int i = 0; i < n; ++i) {
        const MaskT blocks = col_[i] > tol && !is_excluded(i);
        ratio_[i] = select(blocks, xb_[i] / select(blocks, col_[i], T(1.0)), inf);
        best = min(best, ratio_[i]);
      }
      for (int l = 0; l < kLanes; ++l) {
        pivot_row_[l] = 0;
        if (!running_[l]) continue;
        const double bl = lane_of(best, l);
        if (bl == kInf) {
          // A secondary ray; if z0 is zero up to roundoff the point may still solve the LCP.
          freeze(l, Status::solved, Status::not_found, z);
          continue;
        }
        const int z0_row = row_of(2 * n, l);
        const double rz = lane_of(ratio_[z0_row], l);
        int r = -1;
        if (rz != kInf && lemke_lanes_ties(rz, bl)) {
          r = z0_row;  // z0 leaves: a solution
        } else {
          for (int i = 0; i < n; ++i) {
            const double ri = lane_of(ratio_[i], l);
            if (ri != kInf && lemke_lanes_ties(ri, bl) && (r < 0 || lex_less_rows(i, r, l))) r = i;
          }
        }
        pivot_row_[l] = r;
        leaving_[l] = basic(r, l);
      }
      pivot();
      for (int l = 0; l < kLanes; ++l) {
        if (!running_[l]) continue;
        ++out.pivots[l];
        if (leaving_[l] == 2 * n) {
          freeze(l, Status::solved, Status::numerical_failure, z);
        } else if (out.pivots[l] >= limit) {
          out.status[l] = Status::iteration_limit;
          running_[l] = false;
        }
      }
    }
  }

  /// After a scaled solve: each scaled lane that ended with a point gets z and w back in its
  /// own units (z = 2^ez z', w = 2^-eq w', as Lemke<N>::solve); a z that does not scale back
  /// exactly (underflow, overflow) has lost its precision, and a `solved` lane with one
  /// becomes numerical_failure.
  void unscale(const T* M, const T* q, T* z, T* w, LemkeLanesResult<T>& out) {
    const int n = n_;
    for (int l = 0; l < kLanes; ++l) {
      if (exp_q_[l] == 0 && exp_z_[l] == 0) continue;
      const Status st = out.status[l];
      if (st != Status::solved && st != Status::numerical_failure && st != Status::not_found) continue;
      bool exact = true;
      const double pz = exact_pow2(exp_z_[l]), back = exact_pow2(-exp_z_[l]);
      for (int j = 0; j < n; ++j) {
        const double zs = lane_of(z[j], l), zj = times_pow2(zs, exp_z_[l], pz);
        exact = exact && times_pow2(zj, -exp_z_[l], back) == zs && std::isfinite(zj);
        set_lane(z[j], l, zj);
      }
      const double pw = exact_pow2(-exp_q_[l]);
      for (int i = 0; i < n; ++i) set_lane(w[i], l, times_pow2(lane_of(w[i], l), -exp_q_[l], pw));
      if (st == Status::solved && !exact) out.status[l] = Status::numerical_failure;
    }
    M_ = M;
    q_ = q;
  }

  static std::size_t sz(int n) { return static_cast<std::size_t>(n > 1 ? n : 1); }
  static bool lemke_lanes_ties(double a, double b) {
    return std::abs(a - b) <= 1e-12 * std::max({1.0, std::abs(a), std::abs(b)});
  }

  T& binv(int i, int k) { return binv_[static_cast<std::size_t>(k) * n_ + i]; }  // column-major
  int& basic(int i, int l) { return basic_[static_cast<std::size_t>(i) * kLanes + l]; }
  int& row_of(int v, int l) { return row_of_[static_cast<std::size_t>(v) * kLanes + l]; }
  MaskT is_excluded(int i) const { return excl_ ? excl_[i] : MaskT(false); }
  bool lane_excluded(int i, int l) const { return excl_ && lane_of(excl_[i], l); }
  static bool all_lanes_zero(const T& x) {
    for (int l = 0; l < kLanes; ++l)
      if (lane_of(x, l) != 0.0) return false;
    return true;
  }

  /// Rows i and j of [x_B, B^-1] of lane l, each divided by its pivot entry, compared
  /// lexicographically (CPS 4.4.6-4.4.9).
  bool lex_less(int i, double ci, int j, double cj, int l) {
    const double ri = lane_of(xb_[i], l) / ci, rj = lane_of(xb_[j], l) / cj;
    if (!lemke_lanes_ties(ri, rj)) return ri < rj;
    return lex_less_scaled(i, ci, j, cj, l);
  }
  /// Rows i and j of B^-1 of lane l divided by their (positive) pivot-column entries: the
  /// tie-break once the ratios x_B / c are tied.
  bool lex_less_rows(int i, int j, int l) {
    return lex_less_scaled(i, lane_of(col_[i], l), j, lane_of(col_[j], l), l);
  }
  bool lex_less_scaled(int i, double ci, int j, double cj, int l) {
    for (int k = 0; k < n_; ++k) {
      const double a = lane_of(binv(i, k), l) / ci, b = lane_of(binv(j, k), l) / cj;
      if (!lemke_lanes_ties(a, b)) return a < b;
    }
    return i < j;
  }

  /// Pivots each running lane on its row pivot_row_ with column col_ (entering_ enters,
  /// leaving_ leaves). A stopped lane pivots on row 0 with pivot 1 and a zero column: its
  /// tableau keeps its values.
  void pivot() {
    const int n = n_;
    T p(1.0);
    for (int l = 0; l < kLanes; ++l) {
      if (!running_[l]) {
        for (int i = 0; i < n; ++i) set_lane(col_[i], l, 0.0);
        continue;
      }
      set_lane(p, l, lane_of(col_[pivot_row_[l]], l));
    }
    // Row r of x_B and of every column of B^-1 is divided by the pivot; the other rows lose
    // col_i times it. The pivot row's own factor is zeroed for the sweep and its new value
    // written afterwards.
    T xr;
    for (int l = 0; l < kLanes; ++l) set_lane(xr, l, lane_of(xb_[pivot_row_[l]], l));
    xr = xr / p;
    for (int l = 0; l < kLanes; ++l) set_lane(col_[pivot_row_[l]], l, 0.0);
    for (int i = 0; i < n; ++i) xb_[i] = xb_[i] - col_[i] * xr;
    for (int l = 0; l < kLanes; ++l) set_lane(xb_[pivot_row_[l]], l, lane_of(xr, l));
    for (int k = 0; k < n; ++k) {
      T* b = &binv(0, k);
      T brk;
      for (int l = 0; l < kLanes; ++l) set_lane(brk, l, lane_of(b[pivot_row_[l]], l));
      brk = brk / p;
      for (int i = 0; i < n; ++i) b[i] = b[i] - col_[i] * brk;
      for (int l = 0; l < kLanes; ++l) set_lane(b[pivot_row_[l]], l, lane_of(brk, l));
    }
    for (int l = 0; l < kLanes; ++l) {
      if (!running_[l]) continue;
      const int r = pivot_row_[l];
      row_of(basic(r, l), l) = -1;
      basic(r, l) = entering_[l];
      row_of(entering_[l], l) = r;
    }
  }

  /// Lane l's z from the current basis (z0 dropped, roundoff negatives clamped) into lane l
  /// of out_z.
  void basis_point(int l, T* out_z) {
    const int n = n_;
    for (int j = 0; j < n; ++j) set_lane(out_z[j], l, 0.0);
    for (int i = 0; i < n; ++i) {
      const int var = basic(i, l);
      if (var >= n && var < 2 * n) {
        const double x = lane_of(xb_[i], l);
        set_lane(out_z[var - n], l, x > 0.0 ? x : 0.0);
      }
    }
  }

  /// Lane l stops with its basis point in z; settle() gives it w, the residual and `pass`
  /// (residual within tolerance) or `fail`.
  void freeze(int l, Status pass, Status fail, T* z) {
    basis_point(l, z);
    pending_[l] = true;
    pass_[l] = pass;
    fail_[l] = fail;
    running_[l] = false;
  }

  /// w = M zc + q into wc and the certified residual of lcp_acceptance.hpp (its double pass:
  /// each row's violation widened by its rounding bound, over |q|_inf) over the rows taken,
  /// for every lane at once (whole-T arithmetic: a lane's value does not depend on the
  /// others'). Lemke<N>'s residual_of computes the same numbers.
  T residual_of(const T* zc, T* wc) const {
    const int n = n_;
    const T zero(0.0), one(1.0), floor((n + 2) * std::numeric_limits<double>::denorm_min());
    // The bound's length: the nonzero terms of each sum (excluded rows' z are zero), so a lane
    // with excluded rows gets the smaller problem's bound.
    T terms = zero;
    for (int j = 0; j < n; ++j) terms = terms + select(zc[j] == zero, zero, one);
    const T f = (terms + T(2.0)) * T(2.0 * 0x1p-53);
    T worst = zero, zsum = zero, zw = zero;
    for (int i = 0; i < n; ++i) {
      T v = q_[i], a = abs(q_[i]);
      for (int j = 0; j < n; ++j) {
        const T t = M_[i * n + j] * zc[j];
        v = v + t;
        a = a + abs(t);
      }
      wc[i] = v;
      const T e = select(a == zero, zero, a * f + floor);  // no nonzero term: w_i is exact
      const MaskT out = is_excluded(i);
      worst = max(worst, select(out, zero, max(zero, e - v)));
      // Complementarity, as Lemke<N>'s: sum_i z_i (|w_i| + e_i) over sum_i z_i (excluded
      // rows have z_i = 0 and add exact zeros).
      zsum = zsum + zc[i];
      zw = zw + zc[i] * (abs(v) + e);
    }
    worst = select(zsum > zero, max(worst, zw / select(zsum > zero, zsum, one)), worst);
    // 0 at an exact solution; over a zero q any violation is infinite (as Lemke<N>'s).
    const T inf(std::numeric_limits<double>::infinity());
    return select(worst == zero, zero, select(qmax_ == zero, inf, worst / qmax_));
  }

  /// The degenerate exit: lanes in degenerate_ whose basis point passes the residual check
  /// stop as solved; the others keep pivoting.
  void try_degenerate_exit(const LemkeOptions& opt, T* z, T* w, LemkeLanesResult<T>& out) {
    const int n = n_;
    for (int l = 0; l < kLanes; ++l)
      if (degenerate_[l]) basis_point(l, zc_.data());
    const T res = residual_of(zc_.data(), wc_.data());
    for (int l = 0; l < kLanes; ++l) {
      if (!degenerate_[l]) continue;
      const double r = lane_of(res, l);
      if (!(r <= opt.tolerance)) continue;
      for (int i = 0; i < n; ++i) {
        set_lane(z[i], l, lane_of(zc_[i], l));
        set_lane(w[i], l, lane_of(wc_[i], l));
      }
      out.residual[l] = r;
      out.status[l] = Status::solved;
      running_[l] = false;
    }
  }

  /// Every frozen lane: w, the residual and its status (once, when no lane runs any more).
  void settle(const LemkeOptions& opt, T* z, T* w, LemkeLanesResult<T>& out) {
    bool any = false;
    for (int l = 0; l < kLanes; ++l) any = any || pending_[l];
    if (!any) return;
    const T res = residual_of(z, wc_.data());
    for (int l = 0; l < kLanes; ++l) {
      if (!pending_[l]) continue;
      for (int i = 0; i < n_; ++i) set_lane(w[i], l, lane_of(wc_[i], l));
      const double r = lane_of(res, l);
      out.residual[l] = r;
      out.status[l] = r <= opt.tolerance ? pass_[l] : fail_[l];
      pending_[l] = false;
    }
  }

  int cap_ = 0, n_ = 0;
  const T* M_ = nullptr;
  const T* q_ = nullptr;
  const MaskT* excl_ = nullptr;
  T qmax_{};
  std::vector<T> binv_, xb_, col_, a_, ratio_;  // (cap x cap) column-major, then (cap) each
  std::vector<T> zc_, wc_;                      // (cap) candidate points and their w
  std::vector<T> scaled_m_, scaled_q_;          // the data scaled to unit size, when a lane is far from it
  std::array<int, kLanes> exp_q_{}, exp_z_{};   // per lane: lcp_scaling_exponents (0, 0 near unit scale)
  std::vector<int> basic_, row_of_;             // (cap x lanes), ((2 cap + 1) x lanes)
  std::array<bool, kLanes> running_{}, pending_{}, degenerate_{};
  std::array<Status, kLanes> pass_{}, fail_{};
  std::array<int, kLanes> pivot_row_{}, entering_{}, leaving_{};
  std::array<double, kLanes> zero_level_{};
};

}  // namespace qs

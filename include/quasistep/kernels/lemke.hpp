// Lexicographic Lemke for dense linear complementarity problems, and mixed LCPs with free
// variables, on a compile-time capacity.
//
//   LCP(M, q):  find z >= 0 with w = M z + q >= 0 and z'w = 0.
//
// Method: Lemke's complementary pivot algorithm with an artificial variable z0 and the
// lexicographic minimum-ratio rule of Cottle, Pang & Stone, "The Linear Complementarity
// Problem" (1992), sec. 4.4 (Algorithm 4.4.5 with the lexicographic rule of 4.4.6-4.4.9):
// ties in the ratio test are broken by comparing the rows of [x_B, B^-1] divided by the
// pivot column, which never cycles. z0 leaves whenever it is among the minimising rows.
// The basis inverse is kept explicitly (revised form: O(n^2) per pivot).
//
// Termination: a solution (z0 left the basis), a secondary ray (no blocking row: status
// not_found; for copositive-plus M this proves the LCP infeasible, CPS Theorem 4.4.13, but
// the kernel does not classify M), or the pivot limit. Every returned point is held to the
// acceptance rule every LCP solver shares (quasistep/kernels/lcp_acceptance.hpp: relative to
// max|q|, certified against rounding) before `solved` is set; a point that fails it after
// iterative refinement on an LU factorisation of its basis is `numerical_failure`. The
// pivoting tolerances have floors of 1, meaningful at unit scale: every problem is first
// scaled to it by powers of two (lcp_scaling_exponents: exact), solved there, and scaled
// back (a point lost to underflow or overflow is `numerical_failure`), so data that differ
// by a power of two get the same verdict and the same answer, bit for bit.
//
// Warm start: pass the basis of a previous solution. Lemke then starts from that
// complementary basis with the covering vector d = B 1 (so the first step is a uniform
// shift); if the old basis is still optimal this costs no pivot at all. When the warm run
// ends on a ray or the limit, a cold start (B = I, d = 1) follows.
//
// Mixed LCP (Trinkle's step, Pang & Tedrake 2018, eqs. 23a-23b): the first k variables u are free and
// their rows are equalities:
//   0 = A u + C z + a,    w = D u + E z + b,    0 <= z _|_ w >= 0.
// If A is nonsingular the free variables are eliminated by a Schur complement. Otherwise
// (A = 0 in Trinkle's step, where "pivot the free variables in first" fails) k
// complementary rows S with C_S nonsingular are chosen by column-pivoted QR and a
// principal block pivot on {free} U S turns the problem into an exact, equivalent standard
// LCP of size m = n - k (CPS sec. 2.3, principal pivoting), solved as above; u is recovered
// from the pivoted rows. The answer is checked against the original mixed problem.
//
// No function here allocates once the solver object exists (a test proves it); inputs
// must be column-major (Eigen's default) to bind to the Ref parameters without a copy.
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <Eigen/LU>
#include <Eigen/QR>
#include <array>
#include <cmath>
#include <limits>

#include "quasistep/kernels/lane.hpp"
#include "quasistep/kernels/lcp_acceptance.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

struct LemkeOptions {
  int max_pivots = 0;              // 0: 1000 + 100 n
  double tolerance = kLcpTolerance;  // tol / max|q| of the acceptance rule (lcp_acceptance.hpp)
  double pivot_tolerance = 1e-11;  // a pivot column entry counts as positive above this, relative
                                   // to the column's largest magnitude
};

/// Exponents that bring every LCP to unit scale: the kernels solve LCP(2^(eq+ez) M, 2^eq q)
/// (then z = 2^ez z'), with eq and ez chosen so that |2^eq q|_inf and |2^(eq+ez) M|_inf lie
/// in [1, 2) (0 for a zero q or M). Data that differ by powers of two (M and q together, q
/// alone or M alone) give the same scaled problem bit for bit, so the pivots, the verdict
/// and the answer (scaled back) are the same at every power of two.
inline void lcp_scaling_exponents(double m_abs_max, double q_abs_max, int& eq, int& ez) {
  eq = q_abs_max > 0 ? -std::ilogb(q_abs_max) : 0;
  ez = m_abs_max > 0 ? -(std::ilogb(m_abs_max) + eq) : 0;
}

/// 2^e as a double when it is one (e in [-1074, 1023]), else 0. Multiplying by it rounds as
/// std::ldexp(x, e) does (one correctly rounded operation), without a library call per entry.
inline double exact_pow2(int e) { return e >= -1074 && e <= 1023 ? std::ldexp(1.0, e) : 0.0; }

/// x 2^e, by the multiplier p = exact_pow2(e) where it exists.
inline double times_pow2(double x, int e, double p) { return p != 0.0 ? x * p : std::ldexp(x, e); }

/// z = 2^ez z' entry by entry, false when an entry does not come back exactly (it underflowed
/// or overflowed: the precision is lost).
template <class V>
bool scale_back(V& z, int ez) {
  bool exact = true;
  const double p = exact_pow2(ez), back = exact_pow2(-ez);
  for (Eigen::Index j = 0; j < z.size(); ++j) {
    const double s = times_pow2(z[j], ez, p);
    exact = exact && times_pow2(s, -ez, back) == z[j] && std::isfinite(s);
    z[j] = s;
  }
  return exact;
}

/// Status::bad_input unless M is n x n, q has n entries, 1 <= n <= capacity, all finite;
/// otherwise Status::solved, with max |M_ij| in *m_abs_max and max |q_i| in *q_abs_max when
/// given (one pass over M and q).
Status check_lcp_input(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                       int capacity, double* m_abs_max = nullptr, double* q_abs_max = nullptr);

template <int N>
class Lemke {
 public:
  static constexpr int kCapacity = N;
  using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor, N, N>;
  using Vector = Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, N, 1>;

  /// A complementary basis: z_basic[j] says z_j (rather than w_j) is basic.
  struct Basis {
    int n = 0;
    std::array<bool, N> z_basic{};
  };

  struct Result {
    Status status = Status::not_run;
    SolverStats stats;
    Vector z, w;  // (n) valid when solved
    Basis basis;  // the solution's basis, for the next warm start
    bool warm_start_used = false;  // the solution came from the warm-started run
  };

  struct MixedResult {
    Status status = Status::not_run;
    SolverStats stats;
    Vector u;     // (k) free variables
    Vector z, w;  // (n - k) complementary pair
    double equality_residual = 0;  // max |A u + C z + a| / scale
  };

  /// Solves LCP(M, q). `warm`: a previous solution's basis of the same size, or null.
  Status solve(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q, Result& out,
               const Basis* warm = nullptr, const LemkeOptions& opt = {});

  /// Solves the mixed LCP whose first `free` variables are free with equality rows.
  Status solve_mixed(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q, int free,
                     MixedResult& out, const LemkeOptions& opt = {});

 private:
  /// solve_mixed() on data used as given (no scaling).
  Status solve_mixed_as_given(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                              int free, MixedResult& out, const LemkeOptions& opt);

  // Variables: w_j = j, z_j = n + j, z0 = 2n.
  //
  // Row loops are written on explicit native vectors (quasistep/kernels/lane.hpp: the native width, 8
  // doubles with AVX-512): the build passes -fno-tree-vectorize, so plain loops stay scalar.
  // Only element-wise + - * / and comparisons are used (-ffp-contract=off: no fused
  // multiply-add), each entry's terms in the same order as a scalar loop, so every number is
  // bitwise what the scalar code computes.
  using Simd = NativeSimd;
  static constexpr int kW = kNativeWidth;
  // Column stride of B^-1: whole vectors of the widest registers (8 doubles, AVX-512), so
  // that the class has one layout on every instruction set (docs/architecture.md).
  static constexpr int kLd = (N + 7) / 8 * 8;

  int n_ = 0;
  bool cold_ = false;  // B = I (start_from(nullptr)): x_B = q needs no product
  int padded_ = 0;     // n rounded up to whole vectors, at most kLd; kLd itself for small N
  // Small capacities sweep all kLd rows (the extra ones are zero): a compile-time trip count,
  // so the pivot column lives in registers.
  static constexpr int kFixedRows = 16;
  int rows() const { return N <= kFixedRows ? kLd : padded_; }

  /// solve() on data used as given (no scaling).
  Status solve_as_given(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                        Result& out, const Basis* warm, const LemkeOptions& opt);

  /// Sets the starting basis (warm: the given complementary basis, cold: all w) and the
  /// z0 column -B 1. Returns false when the warm basis is singular.
  bool start_from(const Eigen::Ref<const Eigen::MatrixXd>& M, const Basis* warm);

  // B^-1 is stored column-major (stride kLd), so that both O(n^2) loops of a pivot (the
  // entering column and the update) are contiguous axpy loops over whole vectors, without
  // reassociating any sum: each entry still accumulates its terms in index order.
  /// basis_ = the columns of a complementary basis (-M_j for basic z_j, e_j for basic w_j),
  /// LU-factorised into lu_.
  void factor_complementary_basis(const Eigen::Ref<const Eigen::MatrixXd>& M, const Basis& b);

  double& binv(int i, int j) { return binv_[static_cast<size_t>(j) * kLd + i]; }
  double* binv_col(int j) { return &binv_[static_cast<size_t>(j) * kLd]; }

  /// c = B^-1 (column of variable `var` in [I, -M, z0_col]).
  void entering_column(const Eigen::Ref<const Eigen::MatrixXd>& M, int var);

  /// Lexicographic comparison of rows i and j of [x_B, B^-1], each divided by its pivot
  /// entry (ci, cj > 0 for the ratio test; the caller passes magnitudes for the first step).
  bool lex_less(int i, double ci, int j, double cj);
  /// Rows i and j of B^-1, each divided by its (positive) pivot-column entry, compared
  /// lexicographically: the tie-break once the ratios x_B / c are tied.
  bool lex_less_rows(int i, int j);
  static bool ties(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max({1.0, std::abs(a), std::abs(b)}); }

  /// Pivots on row r (`entering` becomes basic there) and leaves in col_ the entering column
  /// of variable `next` for the new basis (none when next < 0).
  void pivot(const Eigen::Ref<const Eigen::MatrixXd>& M, int r, int entering, int next);

  /// Runs Lemke from the basis set by start_from(); `pivots` receives the count.
  Status pivot_loop(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q, int limit,
                    const LemkeOptions& opt, Result& out, int& pivots);


  /// z and w from the current basis (z0, if still basic, is dropped), checked against the
  /// data; the pivoting state is left unchanged.
  Status extract(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                 const LemkeOptions& opt, Result& out);

  /// w = M z + q into out.w (by contiguous columns, skipping z_j = 0) and the certified
  /// residual of lcp_acceptance.hpp (double pass) computed from that w.
  double residual_of(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                     Result& out);

  double m_abs_max_ = 0;  // max |M_ij| of the problem being solved (set by solve)
  double q_abs_max_ = 0;  // max |q_i| of the problem being solved (set by solve)
  alignas(64) std::array<double, static_cast<size_t>(kLd) * kLd> binv_{};  // B^-1, column-major, stride kLd
  alignas(64) std::array<double, kLd> xb_{}, col_{}, ratio_{}, prow_{}, abs_{};
  std::array<double, N> z0_col_{};
  std::array<int, N> basic_{};            // variable basic in each row
  std::array<int, 2 * N + 1> row_of_{};   // row of each basic variable, -1 when nonbasic
  // Factorisations and the mixed-LCP reduction (fixed capacity: no allocation).
  Matrix basis_, inv_, perm_, mp_;
  Vector qperm_ = Vector::Zero(N), qp_, xref_, eq_, xcheck_;
  Vector refine_r_ = Vector::Zero(N), refine_d_, best_z_, best_w_;  // extract()'s iterative refinement
  Matrix scaled_m_, mixed_m_;  // the problem scaled to unit size, when it is far from it
  Vector scaled_q_, mixed_q_;  // (solve(), solve_mixed())
  std::array<int, N> order_{};
  std::array<bool, N> flags_{};
  Eigen::PartialPivLU<Matrix> lu_{N}, lu_small_{N};
  Eigen::ColPivHouseholderQR<Matrix> qr_{N, N};
  Result lcp_;
};

template <int N>
Status Lemke<N>::solve(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q, Result& out,
    const Basis* warm, const LemkeOptions& opt) {
  out = Result{};
  const Status in = check_lcp_input(M, q, N, &m_abs_max_, &q_abs_max_);
  if (in != Status::solved) return out.status = in;
  const int n = static_cast<int>(q.size());
  int eq = 0, ez = 0;
  lcp_scaling_exponents(m_abs_max_, q_abs_max_, eq, ez);
  if (eq == 0 && ez == 0) return solve_as_given(M, q, out, warm, opt);
  // Far from unit scale: LCP(2^(eq+ez) M, 2^eq q), whose z is 2^-ez times ours. Powers of
  // two scale every operation exactly (short of underflow or overflow), so the pivots and
  // the residual check are those of a problem of unit size.
  scaled_m_.resize(n, n);
  scaled_q_.resize(n);
  const double pm = exact_pow2(eq + ez), pq = exact_pow2(eq);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) scaled_m_(i, j) = times_pow2(M(i, j), eq + ez, pm);
  for (int i = 0; i < n; ++i) scaled_q_[i] = times_pow2(q[i], eq, pq);
  m_abs_max_ = std::ldexp(m_abs_max_, eq + ez);
  q_abs_max_ = std::ldexp(q_abs_max_, eq);
  solve_as_given(scaled_m_, scaled_q_, out, warm, opt);
  if (out.status != Status::solved) return out.status;
  if (!scale_back(out.z, ez)) return out.status = Status::numerical_failure;
  // w in the caller's units: 2^-eq times the scaled problem's (exact short of underflow, where
  // an entry is zero to working precision anyway).
  const double pw = exact_pow2(-eq);
  for (int i = 0; i < n; ++i) out.w[i] = times_pow2(out.w[i], -eq, pw);
  return out.status;
}

template <int N>
inline Status Lemke<N>::solve_as_given(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
    Result& out, const Basis* warm, const LemkeOptions& opt) {
  const int n = static_cast<int>(q.size());
  const int limit = opt.max_pivots > 0 ? opt.max_pivots : 1000 + 100 * n;
  int pivots = 0;
  if (warm && warm->n == n && start_from(M, warm)) {
    out.status = pivot_loop(M, q, limit, opt, out, pivots);
    out.stats.iterations = pivots;
    if (out.status == Status::solved) {
      out.warm_start_used = true;
      return out.status;
    }
  }
  start_from(M, nullptr);
  out.status = pivot_loop(M, q, limit, opt, out, pivots);
  out.stats.iterations += pivots;
  return out.status;
}

template <int N>
inline bool Lemke<N>::start_from(const Eigen::Ref<const Eigen::MatrixXd>& M, const Basis* warm) {
  n_ = static_cast<int>(M.rows());
  const int n = n_;
  cold_ = !warm;
  // Loops over rows run to n rounded up to whole vectors (the rows beyond n are kept at
  // zero in B^-1, x_B and every column), so they need no remainder handling.
  padded_ = N <= kFixedRows ? kLd : std::min(kLd, (n + kW - 1) / kW * kW);
  for (int i = 0; i < 2 * n + 1; ++i) row_of_[i] = -1;
  if (!warm) {
    // Column j of I is kUnit[kLd - j + i], i = 0 .. padded_ - 1: whole-vector copies.
    static constexpr std::array<double, 2 * kLd> kUnit = [] {
      std::array<double, 2 * kLd> u{};
      u[kLd] = 1.0;
      return u;
    }();
    const int np = padded_;
    for (int j = 0; j < n; ++j) {
      double* b = binv_col(j);
      for (int i0 = 0; i0 < np; i0 += kW) store_native(load_native(&kUnit[kLd - j + i0]), b + i0);
      basic_[j] = j;
      row_of_[j] = j;
      z0_col_[j] = -1.0;
    }
    return true;
  }
  factor_complementary_basis(M, *warm);
  if (!(lu_.rcond() > 1e-12)) return false;
  inv_.resize(n, n);
  inv_ = lu_.inverse();
  // Eigen's rcond() is an estimate and can pass an exactly singular basis (a zero pivot,
  // rcond() 4.5e-6: halm_posa_disk_lcp(4, 7, 1e-4) solved, then warm-started from its
  // basis with q' = 1.01 q + 1e-3 e_0): the inverse is then not finite. Such a run often
  // still ends on a basis that the refinement in extract() turns into a checked solution,
  // so it is not refused here; where x_B is NaN and no row can leave, pivot_loop() returns
  // numerical_failure (the cold start follows) instead of indexing with r = -1.
  for (int j = 0; j < n; ++j)
    for (int i = n; i < padded_; ++i) binv(i, j) = 0.0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) binv(i, j) = inv_(i, j);
    const int var = warm->z_basic[i] ? n + i : i;
    basic_[i] = var;
    row_of_[var] = i;
    z0_col_[i] = -basis_.row(i).sum();  // -B 1, so that B^-1 (z0 column) = -1
  }
  return true;
}

template <int N>
inline void Lemke<N>::factor_complementary_basis(const Eigen::Ref<const Eigen::MatrixXd>& M, const Basis& b) {
  const int n = n_;
  basis_.resize(n, n);
  for (int j = 0; j < n; ++j) {
    if (b.z_basic[j]) {
      basis_.col(j) = -M.col(j);
    } else {
      basis_.col(j).setZero();
      basis_(j, j) = 1.0;
    }
  }
  lu_.compute(basis_);
}

template <int N>
inline void Lemke<N>::entering_column(const Eigen::Ref<const Eigen::MatrixXd>& M, int var) {
  const int n = n_;
  const int np = rows();
  if (var < n) {
    const double* b = binv_col(var);
    for (int i = 0; i < np; i += kW) store_native(load_native(b + i), &col_[i]);
    return;
  }
  const double* m = var < 2 * n ? M.data() + (var - n) * M.outerStride() : nullptr;  // column j of M (contiguous)
  if constexpr (N <= kFixedRows) {
    // The column accumulates in registers.
    constexpr int kV = kLd / kW;
    Simd acc[kV];
    for (int v = 0; v < kV; ++v) acc[v] = 0.0;
    for (int k = 0; k < n; ++k) {
      const double a = m ? -m[k] : z0_col_[k];
      if (a == 0.0) continue;  // contact LCPs are sparse
      const double* b = binv_col(k);
      const Simd av(a);
      for (int v = 0; v < kV; ++v) acc[v] += load_native(b + v * kW) * av;
    }
    for (int v = 0; v < kV; ++v) store_native(acc[v], &col_[v * kW]);
  } else {
    for (int i = 0; i < np; i += kW) store_native(Simd(0.0), &col_[i]);
    for (int k = 0; k < n; ++k) {
      const double a = m ? -m[k] : z0_col_[k];
      if (a == 0.0) continue;  // contact LCPs are sparse
      const double* b = binv_col(k);
      const Simd av(a);
      for (int i = 0; i < np; i += kW) store_native(load_native(&col_[i]) + load_native(b + i) * av, &col_[i]);
    }
  }
}

template <int N>
inline bool Lemke<N>::lex_less(int i, double ci, int j, double cj) {
  const int n = n_;
  const double ri = xb_[i] / ci, rj = xb_[j] / cj;
  if (!ties(ri, rj)) return ri < rj;
  for (int k = 0; k < n; ++k) {
    const double a = binv(i, k) / ci, b = binv(j, k) / cj;
    if (!ties(a, b)) return a < b;
  }
  return i < j;  // identical rows cannot occur in a nonsingular B^-1; keep a total order
}

template <int N>
inline bool Lemke<N>::lex_less_rows(int i, int j) {
  const double ci = col_[i], cj = col_[j];
  for (int k = 0; k < n_; ++k) {
    const double a = binv(i, k) / ci, b = binv(j, k) / cj;
    if (!ties(a, b)) return a < b;
  }
  return i < j;
}

template <int N>
inline void Lemke<N>::pivot(const Eigen::Ref<const Eigen::MatrixXd>& M, int r, int entering, int next) {
  const int n = n_, np = rows();
  const double p = col_[r];
  const Simd xr(xb_[r] / p), pv(p), lanes = native_lane_index();
  // Row r of B^-1 over p, kW quotients at a time (the same correctly rounded quotients as
  // one by one; binv_ has kLd columns, so whole vectors of the row stay in bounds).
  for (int k0 = 0; k0 < n; k0 += kW) {
    const Simd row([&](auto l) { return binv_[static_cast<size_t>(k0 + static_cast<int>(l)) * kLd + r]; });
    store_native(row / pv, &prow_[k0]);
  }
  // The pivot row's own factor is set to 0 for the sweeps, so one unsplit loop over all
  // rows leaves row r as it is (x - 0 * y == x) after it was given its new value.
  if constexpr (N <= kFixedRows) {
    constexpr int kV = kLd / kW;
    Simd c[kV];
    typename Simd::mask_type at_r[kV];
    for (int v = 0; v < kV; ++v) {
      at_r[v] = lanes == Simd(static_cast<double>(r - v * kW));
      c[v] = load_native(&col_[v * kW]);
      where(at_r[v], c[v]) = 0.0;
      Simd x = load_native(&xb_[v * kW]);
      where(at_r[v], x) = xr;
      store_native(x - c[v] * xr, &xb_[v * kW]);
    }
    // A column of -M entering next is accumulated from each new column of B^-1 while it
    // is in registers (the terms in entering_column's order and with its zero skips).
    const double* m = next >= n && next < 2 * n ? M.data() + (next - n) * M.outerStride() : nullptr;
    Simd acc[kV];
    for (int v = 0; v < kV; ++v) acc[v] = 0.0;
    for (int k = 0; k < n; ++k) {
      double* b = binv_col(k);
      const double brk = prow_[k];
      const Simd bv(brk);
      Simd x[kV];
      if (brk == 0.0) {
        for (int v = 0; v < kV; ++v) x[v] = load_native(b + v * kW);
      } else {
        for (int v = 0; v < kV; ++v) x[v] = load_native(b + v * kW) - c[v] * bv;
      }
      for (int v = 0; v < kV; ++v) {
        where(at_r[v], x[v]) = bv;
        store_native(x[v], b + v * kW);
      }
      if (m) {
        const double a = -m[k];
        if (a == 0.0) continue;
        const Simd av(a);
        for (int v = 0; v < kV; ++v) acc[v] += x[v] * av;
      }
    }
    col_[r] = p;
    if (m) {
      for (int v = 0; v < kV; ++v) store_native(acc[v], &col_[v * kW]);
    } else if (next >= 0) {
      entering_column(M, next);
    }
  } else {
    const int rc = r / kW * kW;  // the vector holding row r
    const auto at_r = lanes == Simd(static_cast<double>(r - rc));
    Simd c = load_native(&col_[rc]);
    where(at_r, c) = 0.0;
    store_native(c, &col_[rc]);
    for (int i = 0; i < np; i += kW) {
      Simd x = load_native(&xb_[i]);
      if (i == rc) where(at_r, x) = xr;
      store_native(x - load_native(&col_[i]) * xr, &xb_[i]);
    }
    for (int k = 0; k < n; ++k) {
      double* b = binv_col(k);
      const double brk = prow_[k];
      if (brk == 0.0) {
        b[r] = brk;
        continue;
      }
      const Simd bv(brk);
      for (int i = 0; i < np; i += kW) {
        Simd x = load_native(b + i) - load_native(&col_[i]) * bv;
        if (i == rc) where(at_r, x) = bv;
        store_native(x, b + i);
      }
    }
  }
  if constexpr (N > kFixedRows) {
    col_[r] = p;
    if (next >= 0) entering_column(M, next);
  }
  row_of_[basic_[r]] = -1;
  basic_[r] = entering;
  row_of_[entering] = r;
}

template <int N>
inline Status Lemke<N>::pivot_loop(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q, int limit,
    const LemkeOptions& opt, Result& out, int& pivots) {
  const int n = n_, np = rows();
  for (int i0 = 0; i0 < np; i0 += kW) {
    Simd x(0.0);
    if (cold_) {
      // B^-1 = I: the product below would give 0 + q_i (every other term is +-0).
      x = Simd([&](auto l) {
        const int i = i0 + static_cast<int>(l);
        return i < n ? 0.0 + q[i] : 0.0;
      });
    } else {
      for (int k = 0; k < n; ++k) x += load_native(binv_col(k) + i0) * Simd(q[k]);
    }
    store_native(x, &xb_[i0]);  // rows beyond n: 0
  }
  pivots = 0;
  // Roundoff-level negatives (e.g. a warm basis that is still optimal) count as feasible;
  // extract() clamps them and the residual check decides.
  const double zero = 1e-13 * std::max(1.0, q_abs_max_);
  bool feasible = true;
  for (int i = 0; i < n; ++i) feasible = feasible && xb_[i] >= -zero;
  if (!feasible) {
    // z0 enters at the level that makes every basic variable >= 0: the row leaving is
    // the lexicographic minimum of [x_B, B^-1] (B^-1 z0-column = -1 by construction).
    entering_column(M, 2 * n);
    int r = -1;
    for (int i = 0; i < n; ++i)
      if (xb_[i] < 0 && (r < 0 || lex_less(i, 1.0, r, 1.0))) r = i;
    if (r < 0) return Status::numerical_failure;  // x_B not a number (see start_from)
    int leaving = basic_[r];
    pivot(M, r, 2 * n, leaving < n ? leaving + n : leaving - n);
    ++pivots;
    while (true) {
      // z0 at level zero (degenerate): the almost-complementary point already solves the
      // LCP, since the missing pair is nonbasic. This also covers the borderline case
      // q'z = 0 for some z in SOL(0, M), where a lexicographic ray can follow it.
      if (xb_[row_of_[2 * n]] <= zero && extract(M, q, opt, out) == Status::solved) return Status::solved;
      const int entering = leaving < n ? leaving + n : leaving - n;  // the complement
      // col_ holds its column (pivot() computed it).
      constexpr double inf = std::numeric_limits<double>::infinity();
      // The max and min below keep std::max / std::min's choice lane by lane (where(a < b):
      // a NaN never enters), so they give the scalar loops' values (rows beyond n: column 0,
      // ratio inf); the lanes are then combined in a tree (hmax, hmin), which for numbers
      // that are not NaN gives the same value in any order (up to the sign of a zero
      // ratio, which no comparison below can tell).
      //
      // tol = pivot_tolerance * max(1, |c|_inf) needs a reduction over c, and the ratio
      // test then needs another; to keep the second off the first's latency, the rows are
      // first screened with the lower bound pivot_tolerance (tol itself whenever
      // |c|_inf <= 1), and the screen is exact unless some entry lies in (bound, tol]: then
      // (rarely) the ratios are taken again with tol.
      const double bound = opt.pivot_tolerance;
      const Simd boundv(bound);
      Simd cm(0.0), bestv(inf), cmin(inf);
      for (int i = 0; i < np; i += kW) {
        const Simd c = load_native(&col_[i]);
        const Simd a = std::experimental::abs(c);
        where(cm < a, cm) = a;
        const auto blocks = c > boundv;
        where(blocks && c < cmin, cmin) = c;
        Simd ratio = load_native(&xb_[i]) / c;
        where(!blocks, ratio) = inf;
        store_native(ratio, &ratio_[i]);
        where(ratio < bestv, bestv) = ratio;
      }
      const double cmax = hmax(cm);
      const double tol = opt.pivot_tolerance * std::max(1.0, cmax);
      if (hmin(cmin) <= tol) {
        // Minimum ratio over the rows that block (entry > tol), each ratio computed once.
        const Simd tolv(tol);
        bestv = inf;
        for (int i = 0; i < np; i += kW) {
          const Simd c = load_native(&col_[i]);
          Simd ratio = load_native(&xb_[i]) / c;
          where(!(c > tolv), ratio) = inf;
          store_native(ratio, &ratio_[i]);
          where(ratio < bestv, bestv) = ratio;
        }
      }
      r = -1;
      const int z0_row = row_of_[2 * n];
      const double best = hmin(bestv);
      if (best == std::numeric_limits<double>::infinity()) {
        // A secondary ray. If z0 is zero up to roundoff (degenerate; seen with nearly
        // singular M), the point without z0 may already be a solution: only the residual
        // check on the original data can say, and it decides.
        if (extract(M, q, opt, out) == Status::solved) return Status::solved;
        return Status::not_found;
      }
      if (ratio_[z0_row] != std::numeric_limits<double>::infinity() && ties(ratio_[z0_row], best)) {
        r = z0_row;  // z0 leaves: a solution
      } else {
        // Among the rows tied at the minimum, the lexicographically smallest row of
        // B^-1 divided by its pivot entry (CPS 4.4.6-4.4.9): never cycles. The tie test
        // is ties() on whole vectors; rows are then visited in increasing order.
        const Simd bv(best), scale_b = std::experimental::max(Simd(1.0), Simd(std::abs(best)));
        for (int i0 = 0; i0 < np; i0 += kW) {
          const Simd ratio = load_native(&ratio_[i0]);
          const auto tied = ratio != Simd(inf) && std::experimental::abs(ratio - bv) <=
                                                      Simd(1e-12) * std::experimental::max(scale_b, std::experimental::abs(ratio));
          if (none_of(tied)) continue;
          for (int l = 0; l < kW; ++l)
            if (tied[l] && (r < 0 || lex_less_rows(i0 + l, r))) r = i0 + l;
        }
      }
      if (r < 0) return Status::numerical_failure;  // x_B not a number (see start_from)
      leaving = basic_[r];
      pivot(M, r, entering, leaving == 2 * n ? -1 : leaving < n ? leaving + n : leaving - n);
      if (++pivots >= limit && leaving != 2 * n) return Status::iteration_limit;
      if (leaving == 2 * n) break;
    }
  }
  return extract(M, q, opt, out);
}

template <int N>
inline Status Lemke<N>::extract(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
    const LemkeOptions& opt, Result& out) {
  const int n = n_;
  out.basis.n = n;
  out.z.setZero(n);
  for (int j = 0; j < n; ++j) out.basis.z_basic[j] = false;
  for (int i = 0; i < n; ++i) {
    const int var = basic_[i];
    if (var >= n && var < 2 * n) {
      out.basis.z_basic[var - n] = true;
      out.z[var - n] = std::max(0.0, xb_[i]);
    }
  }
  out.stats.residual = residual_of(M, q, out);
  if (!(out.stats.residual <= opt.tolerance)) {  // a NaN fails too
    // Refine: iterative refinement of B x = q for the same basis with the residual q - B x
    // formed in long double (mixed-precision refinement, Higham 2002, sec. 12.1), from the
    // pivoting point (or, where z0 is still basic, from B^-1 q afresh). An ill-conditioned
    // basis (Halm & Posa's LCPs with stiff feedback) needs it to meet a tolerance relative
    // to |q| rather than to |M| |z|; where B is too ill-conditioned for it to converge, the
    // best point seen is kept.
    double best = out.stats.residual == out.stats.residual ? out.stats.residual : std::numeric_limits<double>::infinity();
    best_z_ = out.z;
    best_w_ = out.w;
    factor_complementary_basis(M, out.basis);
    xref_.resize(n);
    if (row_of_[2 * n] < 0) {
      for (int i = 0; i < n; ++i) xref_[basic_[i] < n ? basic_[i] : basic_[i] - n] = xb_[i];
    } else {
      xref_ = lu_.solve(q);
    }
    for (int round = 0; round < 3 && !(best <= opt.tolerance); ++round) {
      for (int i = 0; i < n; ++i) {
        long double r = q[i];
        for (int j = 0; j < n; ++j)
          if (basis_(i, j) != 0.0) r -= static_cast<long double>(basis_(i, j)) * xref_[j];
        refine_r_[i] = static_cast<double>(r);
      }
      refine_d_ = lu_.solve(refine_r_.head(n));
      xref_.head(n) += refine_d_;
      for (int j = 0; j < n; ++j) out.z[j] = out.basis.z_basic[j] ? std::max(0.0, xref_[j]) : 0.0;
      const double r = residual_of(M, q, out);
      if (r < best) {
        best = r;
        best_z_ = out.z;
        best_w_ = out.w;
      }
    }
    out.z = best_z_;
    out.w = best_w_;
    out.stats.residual = best;
    // Where the double rounding bound is what fails, the rows again in long double.
    if (!(out.stats.residual <= opt.tolerance))
      out.stats.residual = std::min(out.stats.residual, lcp_certified_residual_extended(M, q, out.z));
    if (!(out.stats.residual <= opt.tolerance)) return Status::numerical_failure;
  }
  return Status::solved;
}

template <int N>
inline double Lemke<N>::residual_of(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
    Result& out) {
  const int n = n_;
  const int nv = n / kW * kW;  // whole vectors, then a scalar tail
  const double* z = out.z.data();
  // Beside each w_i, the sum of its terms' magnitudes a_i = |q_i| + sum_j |M_ij| z_j (z >= 0),
  // in the same order: the rounding bound of lcp_acceptance.hpp.
  double* a = abs_.data();
  if constexpr (kLd == kW) {
    // w_i = q_i + sum_j M_ij z_j in the order of j, skipping z_j = 0: with one vector of
    // rows (and a scalar tail), accumulated in a register rather than through memory.
    out.w.resize(n);
    double* w = out.w.data();
    const double* md = M.data();
    const Eigen::Index ld = M.outerStride();
    for (int i = 0; i < nv; i += kW) {
      Simd acc = load_native(q.data() + i);
      Simd mag = std::experimental::abs(acc);
      for (int j = 0; j < n; ++j) {
        if (z[j] == 0.0) continue;
        const Simd t = load_native(md + j * ld + i) * Simd(z[j]);
        acc += t;
        mag += std::experimental::abs(t);
      }
      store_native(acc, w + i);
      store_native(mag, a + i);
    }
    for (int i = nv; i < n; ++i) {
      double acc = q[i], mag = std::abs(q[i]);
      for (int j = 0; j < n; ++j)
        if (z[j] != 0.0) {
          const double t = md[j * ld + i] * z[j];
          acc += t;
          mag += std::abs(t);
        }
      w[i] = acc;
      a[i] = mag;
    }
  } else {
    // The same sums, one pass over z: w accumulates in memory, column by column.
    out.w = q;
    double* w = out.w.data();
    for (int i = 0; i < n; ++i) a[i] = std::abs(q[i]);
    for (int j = 0; j < n; ++j) {
      const double zj = z[j];
      if (zj == 0.0) continue;
      const double* m = M.data() + j * M.outerStride();
      const Simd zv(zj);
      for (int i = 0; i < nv; i += kW) {
        const Simd t = load_native(m + i) * zv;
        store_native(load_native(w + i) + t, w + i);
        store_native(load_native(a + i) + std::experimental::abs(t), a + i);
      }
      for (int i = nv; i < n; ++i) {
        const double t = m[i] * zj;
        w[i] += t;
        a[i] += std::abs(t);
      }
    }
  }
  const double* w = out.w.data();
  // The certified violations of lcp_acceptance.hpp, with e_i = f a_i + floor: max(0, e_i - w_i)
  // per row, and the complementarity sum_i z_i (|w_i| + e_i) / sum_i z_i, in the order of i
  // (the lanes' residual_of takes the same steps).
  int terms = 0;  // the nonzero terms of each sum (the bound's length)
  for (int j = 0; j < n; ++j) terms += z[j] != 0.0;
  const double f = lcp_rounding_factor(terms, 0x1p-53);
  const double floor = (n + 2) * std::numeric_limits<double>::denorm_min();
  double worst = 0, zsum = 0, zw = 0;
  for (int i = 0; i < n; ++i) {
    const double e = a[i] == 0.0 ? 0.0 : a[i] * f + floor;  // no nonzero term: w_i is exact
    worst = std::max(worst, std::max(0.0, e - w[i]));
    zsum = zsum + z[i];
    zw = zw + z[i] * (std::abs(w[i]) + e);
  }
  if (zsum > 0) worst = std::max(worst, zw / zsum);
  if (!(worst == worst)) return std::numeric_limits<double>::infinity();  // NaN: inf - inf
  if (worst == 0) return 0;
  if (q_abs_max_ == 0) return std::numeric_limits<double>::infinity();
  return worst / q_abs_max_;
}

}  // namespace qs

// The mixed LCP's reduction to a standard one (solve_mixed): its own file, part of this one.
#include "quasistep/kernels/lemke_mixed.hpp"

namespace qs {

// The capacities the library uses (64: the time-stepping formulations' LCPs; 128: the
// CLI's `lcp` command) are compiled once, each in a file of its own that
// kernels/CMakeLists.txt writes (lemke_instance_<N>.cpp): a file that solves with one of them
// links that code instead of instantiating the solver again (which took 5 to 15 s of
// compile time per capacity and file). The helpers above are `inline` as they were inside
// the class, so the instantiated code is the same; solve() and solve_mixed() are not, so
// that a caller does not instantiate them. Any other capacity is instantiated where it is
// used, as before.
extern template class Lemke<64>;
extern template class Lemke<128>;

}  // namespace qs

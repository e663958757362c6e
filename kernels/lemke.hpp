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
// the kernel does not classify M), or the pivot limit. Every returned point is re-checked
// against the original data (natural residual) before `solved` is set; a point that fails
// after one refinement from an LU factorisation of its basis is `numerical_failure`.
//
// Warm start: pass the basis of a previous solution. Lemke then starts from that
// complementary basis with the covering vector d = B 1 (so the first step is a uniform
// shift); if the old basis is still optimal this costs no pivot at all. When the warm run
// ends on a ray or the limit, a cold start (B = I, d = 1) follows.
//
// Mixed LCP (Trinkle's step, seed 000 eqs. 23a-23b): the first k variables u are free and
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

#include <Eigen/Core>
#include <Eigen/LU>
#include <Eigen/QR>
#include <array>
#include <cmath>
#include <limits>

#include "kernels/status.hpp"

namespace qs {

struct LemkeOptions {
  int max_pivots = 0;              // 0: 1000 + 100 n
  double tolerance = 1e-9;         // accepted scaled natural residual (see lcp_natural_residual)
  double pivot_tolerance = 1e-11;  // a pivot column entry counts as positive above this, relative
                                   // to the column's largest magnitude
};

/// max_i |min(z_i, w_i)| with w = M z + q, divided by the scale
/// max(1, |q|_inf, |M|_inf |z|_inf): 0 exactly at a solution, and small only near one.
double lcp_natural_residual(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                            const Eigen::Ref<const Eigen::VectorXd>& z);

/// Status::bad_input unless M is n x n, q has n entries, 1 <= n <= capacity, all finite;
/// otherwise Status::solved, with max |M_ij| in *m_abs_max when given (one pass over M).
Status check_lcp_input(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                       int capacity, double* m_abs_max = nullptr);

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
               const Basis* warm = nullptr, const LemkeOptions& opt = {}) {
    out = Result{};
    const Status in = check_lcp_input(M, q, N, &m_abs_max_);
    if (in != Status::solved) return out.status = in;
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

  /// Solves the mixed LCP whose first `free` variables are free with equality rows.
  Status solve_mixed(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q, int free,
                     MixedResult& out, const LemkeOptions& opt = {}) {
    out = MixedResult{};
    const Status in = check_lcp_input(M, q, N);
    if (in != Status::solved) return out.status = in;
    const int n = static_cast<int>(q.size());
    if (free < 0 || free > n) return out.status = Status::bad_input;
    if (free == 0) {
      out.status = solve(M, q, lcp_, nullptr, opt);
      out.stats = lcp_.stats;
      out.u.resize(0);
      out.z = lcp_.z;
      out.w = lcp_.w;
      return out.status;
    }
    const int k = free, m = n - k;
    // Choose S (k complementary rows to pivot with the free variables) unless A is invertible.
    int s_count = 0;
    lu_small_.compute(M.topLeftCorner(k, k));
    const double a_norm = M.topLeftCorner(k, k).cwiseAbs().maxCoeff();
    const bool a_invertible = a_norm > 0 && lu_small_.rcond() > 1e-12;
    if (!a_invertible) {
      if (m < k) return out.status = Status::not_found;
      qr_.compute(M.topRightCorner(k, m));
      if (qr_.rank() < k) return out.status = Status::not_found;  // u not determined by the rows
      s_count = k;
    }
    // Order [F, S, rest] and pivot on the leading a = k + |S| block.
    for (int i = 0; i < k; ++i) order_[i] = i;
    std::array<bool, N>& in_s = flags_;
    for (int i = 0; i < n; ++i) in_s[i] = false;
    for (int i = 0; i < s_count; ++i) {
      const int col = qr_.colsPermutation().indices()[i];
      order_[k + i] = k + col;
      in_s[k + col] = true;
    }
    int pos = k + s_count;
    for (int j = k; j < n; ++j)
      if (!in_s[j]) order_[pos++] = j;
    const int a = k + s_count;
    perm_.resize(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) perm_(i, j) = M(order_[i], order_[j]);
    for (int i = 0; i < n; ++i) qperm_[i] = q[order_[i]];
    lu_.compute(perm_.topLeftCorner(a, a));
    if (!(lu_.rcond() > 1e-13)) return out.status = Status::not_found;
    // Principal pivot transform on the leading block (CPS eq. 2.3.9).
    const int b = n - a;
    inv_.resize(a, a);
    inv_ = lu_.inverse();
    mp_.resize(n, n);
    mp_.topLeftCorner(a, a) = inv_;
    mp_.topRightCorner(a, b).noalias() = -inv_.lazyProduct(perm_.topRightCorner(a, b));
    mp_.bottomLeftCorner(b, a).noalias() = perm_.bottomLeftCorner(b, a).lazyProduct(inv_);
    mp_.bottomRightCorner(b, b) = perm_.bottomRightCorner(b, b);
    mp_.bottomRightCorner(b, b).noalias() -= mp_.bottomLeftCorner(b, a).lazyProduct(perm_.topRightCorner(a, b));
    qp_.resize(n);
    qp_.head(a).noalias() = -inv_.lazyProduct(qperm_.head(a));
    qp_.tail(b) = qperm_.segment(a, b);
    qp_.tail(b).noalias() -= mp_.bottomLeftCorner(b, a).lazyProduct(qperm_.head(a));
    // The free rows and the equality slacks (fixed at 0) leave; the rest is LCP(M'', q'')
    // in the variables y = (w_S, z_rest), r = (z_S, w_rest).
    if (m == 0) {
      out.u = qp_.head(k);
      out.z.resize(0);
      out.w.resize(0);
    } else {
      solve(mp_.bottomRightCorner(m, m), qp_.tail(m), lcp_, nullptr, opt);
      out.stats = lcp_.stats;
      if (lcp_.status != Status::solved) return out.status = lcp_.status;
      out.u = qp_.head(k);
      out.u.noalias() += mp_.topRightCorner(k, m).lazyProduct(lcp_.z);
      out.z.resize(m);
      // z_S comes from the reduced problem's w side, which may carry roundoff of either sign:
      // values negligible against the data are clamped as the standard path clamps z; the
      // residual check below still rejects anything larger.
      const double negligible = 1e-14 * std::max(1.0, q.cwiseAbs().maxCoeff());
      for (int p = k; p < n; ++p) {
        const int var = order_[p] - k;  // index into z
        const double v = in_s[order_[p]] ? lcp_.w[p - k] : lcp_.z[p - k];
        out.z[var] = v < 0 && v >= -negligible ? 0.0 : v;
      }
    }
    // Check against the original mixed problem.
    out.w.noalias() = M.bottomLeftCorner(m, k) * out.u;  // noalias: no heap temporary
    out.w.noalias() += M.bottomRightCorner(m, m) * out.z;
    out.w += q.tail(m);
    eq_ = q.head(k);
    eq_.noalias() += M.topLeftCorner(k, k) * out.u;
    eq_.noalias() += M.topRightCorner(k, m) * out.z;
    const double scale = std::max({1.0, q.cwiseAbs().maxCoeff(),
                                   M.cwiseAbs().maxCoeff() * std::max(out.u.size() ? out.u.cwiseAbs().maxCoeff() : 0.0,
                                                                      m ? out.z.cwiseAbs().maxCoeff() : 0.0)});
    double comp = 0;
    for (int i = 0; i < m; ++i) comp = std::max(comp, std::abs(std::min(out.z[i], out.w[i])));
    out.equality_residual = eq_.cwiseAbs().maxCoeff() / scale;
    out.stats.residual = std::max(comp / scale, out.equality_residual);
    const bool signs_ok = m == 0 || out.z.minCoeff() >= 0;
    out.status = signs_ok && out.stats.residual <= opt.tolerance ? Status::solved : Status::numerical_failure;
    return out.status;
  }

 private:
  // Variables: w_j = j, z_j = n + j, z0 = 2n.
  int n_ = 0;
  int padded_ = 0;  // n rounded up to a multiple of 4, at most N; N itself for small N
  // Small capacities sweep all N rows (the extra ones are zero): a compile-time trip count
  // the compiler unrolls.
  static constexpr int kFixedRows = 16;
  int rows() const { return N <= kFixedRows ? N : padded_; }

  /// Sets the starting basis (warm: the given complementary basis, cold: all w) and the
  /// z0 column -B 1. Returns false when the warm basis is singular.
  bool start_from(const Eigen::Ref<const Eigen::MatrixXd>& M, const Basis* warm) {
    n_ = static_cast<int>(M.rows());
    const int n = n_;
    // Loops over rows run to n rounded up to a multiple of 4 (the rows beyond n are kept at
    // zero in B^-1, x_B and every column), so they vectorise without remainder handling.
    padded_ = N <= kFixedRows ? N : std::min(N, (n + 3) / 4 * 4);
    for (int i = n; i < padded_; ++i) xb_[i] = col_[i] = 0.0;
    for (int i = 0; i < 2 * n + 1; ++i) row_of_[i] = -1;
    if (!warm) {
      for (int j = 0; j < n; ++j) {
        double* b = binv_col(j);
        for (int i = 0; i < padded_; ++i) b[i] = 0.0;
        b[j] = 1.0;
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

  // B^-1 is stored column-major, so that both O(n^2) loops of a pivot (the entering column
  // and the update) are contiguous axpy loops the compiler vectorises without reassociating
  // any sum: each entry still accumulates its terms in index order.
  /// basis_ = the columns of a complementary basis (-M_j for basic z_j, e_j for basic w_j),
  /// LU-factorised into lu_.
  void factor_complementary_basis(const Eigen::Ref<const Eigen::MatrixXd>& M, const Basis& b) {
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

  double& binv(int i, int j) { return binv_[static_cast<size_t>(j) * N + i]; }
  double* binv_col(int j) { return &binv_[static_cast<size_t>(j) * N]; }

  /// c = B^-1 (column of variable `var` in [I, -M, z0_col]).
  void entering_column(const Eigen::Ref<const Eigen::MatrixXd>& M, int var) {
    const int n = n_;
    const int np = rows();
    if (var < n) {
      const double* b = binv_col(var);
      for (int i = 0; i < np; ++i) col_[i] = b[i];
      return;
    }
    for (int i = 0; i < np; ++i) col_[i] = 0.0;
    const double* m = var < 2 * n ? M.data() + (var - n) * M.outerStride() : nullptr;  // column j of M (contiguous)
    for (int k = 0; k < n; ++k) {
      const double a = m ? -m[k] : z0_col_[k];
      if (a == 0.0) continue;  // contact LCPs are sparse
      const double* b = binv_col(k);
      for (int i = 0; i < np; ++i) col_[i] += b[i] * a;
    }
  }

  /// Lexicographic comparison of rows i and j of [x_B, B^-1], each divided by its pivot
  /// entry (ci, cj > 0 for the ratio test; the caller passes magnitudes for the first step).
  bool lex_less(int i, double ci, int j, double cj) {
    const int n = n_;
    const double ri = xb_[i] / ci, rj = xb_[j] / cj;
    if (!ties(ri, rj)) return ri < rj;
    for (int k = 0; k < n; ++k) {
      const double a = binv(i, k) / ci, b = binv(j, k) / cj;
      if (!ties(a, b)) return a < b;
    }
    return i < j;  // identical rows cannot occur in a nonsingular B^-1; keep a total order
  }
  /// Rows i and j of B^-1, each divided by its (positive) pivot-column entry, compared
  /// lexicographically: the tie-break once the ratios x_B / c are tied.
  bool lex_less_rows(int i, int j) {
    const double ci = col_[i], cj = col_[j];
    for (int k = 0; k < n_; ++k) {
      const double a = binv(i, k) / ci, b = binv(j, k) / cj;
      if (!ties(a, b)) return a < b;
    }
    return i < j;
  }
  static bool ties(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max({1.0, std::abs(a), std::abs(b)}); }

  void pivot(int r, int entering) {
    const int n = n_, np = rows();
    const double p = col_[r];
    xb_[r] /= p;
    // The pivot row's own factor is set to 0 for the sweeps, so one unsplit loop over all
    // rows leaves row r exactly as it is (x - 0 * y == x) and vectorises cleanly.
    col_[r] = 0.0;
    const double xr = xb_[r];
    for (int i = 0; i < np; ++i) xb_[i] -= col_[i] * xr;
    for (int k = 0; k < n; ++k) {
      double* b = binv_col(k);
      b[r] /= p;
      const double brk = b[r];
      if (brk == 0.0) continue;
      for (int i = 0; i < np; ++i) b[i] -= col_[i] * brk;
    }
    col_[r] = p;
    row_of_[basic_[r]] = -1;
    basic_[r] = entering;
    row_of_[entering] = r;
  }

  /// Runs Lemke from the basis set by start_from(); `pivots` receives the count.
  Status pivot_loop(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q, int limit,
                    const LemkeOptions& opt, Result& out, int& pivots) {
    const int n = n_;
    for (int i = 0; i < n; ++i) xb_[i] = 0.0;
    for (int k = 0; k < n; ++k) {
      const double* b = binv_col(k);
      for (int i = 0; i < n; ++i) xb_[i] += b[i] * q[k];
    }
    pivots = 0;
    // Roundoff-level negatives (e.g. a warm basis that is still optimal) count as feasible;
    // extract() clamps them and the residual check decides.
    const double zero = 1e-13 * std::max(1.0, q.cwiseAbs().maxCoeff());
    bool feasible = true;
    for (int i = 0; i < n; ++i) feasible = feasible && xb_[i] >= -zero;
    if (!feasible) {
      // z0 enters at the level that makes every basic variable >= 0: the row leaving is
      // the lexicographic minimum of [x_B, B^-1] (B^-1 z0-column = -1 by construction).
      entering_column(M, 2 * n);
      int r = -1;
      for (int i = 0; i < n; ++i)
        if (xb_[i] < 0 && (r < 0 || lex_less(i, 1.0, r, 1.0))) r = i;
      int leaving = basic_[r];
      pivot(r, 2 * n);
      ++pivots;
      while (true) {
        // z0 at level zero (degenerate): the almost-complementary point already solves the
        // LCP, since the missing pair is nonbasic. This also covers the borderline case
        // q'z = 0 for some z in SOL(0, M), where a lexicographic ray can follow it.
        if (xb_[row_of_[2 * n]] <= zero && extract(M, q, opt, out) == Status::solved) return Status::solved;
        const int entering = leaving < n ? leaving + n : leaving - n;  // the complement
        entering_column(M, entering);
        double cmax = 0;
        for (int i = 0; i < n; ++i) cmax = std::max(cmax, std::abs(col_[i]));
        const double tol = opt.pivot_tolerance * std::max(1.0, cmax);
        // Minimum ratio over the rows that block (entry > tol), each ratio computed once.
        r = -1;
        const int z0_row = row_of_[2 * n];
        double best = std::numeric_limits<double>::infinity();
        for (int i = 0; i < n; ++i) {
          ratio_[i] = col_[i] > tol ? xb_[i] / col_[i] : std::numeric_limits<double>::infinity();
          best = std::min(best, ratio_[i]);
        }
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
          // B^-1 divided by its pivot entry (CPS 4.4.6-4.4.9): never cycles.
          for (int i = 0; i < n; ++i)
            if (ratio_[i] != std::numeric_limits<double>::infinity() && ties(ratio_[i], best) &&
                (r < 0 || lex_less_rows(i, r)))
              r = i;
        }
        leaving = basic_[r];
        pivot(r, entering);
        if (++pivots >= limit && leaving != 2 * n) return Status::iteration_limit;
        if (leaving == 2 * n) break;
      }
    }
    return extract(M, q, opt, out);
  }


  /// z and w from the current basis (z0, if still basic, is dropped), checked against the
  /// data; the pivoting state is left unchanged.
  Status extract(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
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
    if (out.stats.residual > opt.tolerance) {
      // Refine: solve B x = q afresh for the same basis.
      factor_complementary_basis(M, out.basis);
      xref_ = lu_.solve(q);
      for (int j = 0; j < n; ++j) out.z[j] = out.basis.z_basic[j] ? std::max(0.0, xref_[j]) : 0.0;
      out.stats.residual = residual_of(M, q, out);
      if (!(out.stats.residual <= opt.tolerance)) return Status::numerical_failure;
    }
    return Status::solved;
  }

  /// w = M z + q into out.w (by contiguous columns, skipping z_j = 0) and the scaled
  /// natural residual of lcp_natural_residual, computed from that w.
  double residual_of(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                     Result& out) {
    const int n = n_;
    out.w = q;
    double zmax = 0;
    for (int j = 0; j < n; ++j) {
      const double zj = out.z[j];
      if (zj == 0.0) continue;
      zmax = std::max(zmax, zj);
      const double* m = M.data() + j * M.outerStride();
      for (int i = 0; i < n; ++i) out.w[i] += m[i] * zj;
    }
    double worst = 0;
    for (int i = 0; i < n; ++i) worst = std::max(worst, std::abs(std::min(out.z[i], out.w[i])));
    const double scale = std::max({1.0, q.cwiseAbs().maxCoeff(), m_abs_max_ * zmax});
    return worst / scale;
  }

  double m_abs_max_ = 0;  // |M|_inf of the problem being solved (set by solve)
  std::array<double, static_cast<size_t>(N) * N> binv_{};  // B^-1, column-major
  std::array<double, N> xb_{}, col_{}, z0_col_{}, ratio_{};
  std::array<int, N> basic_{};            // variable basic in each row
  std::array<int, 2 * N + 1> row_of_{};   // row of each basic variable, -1 when nonbasic
  // Factorisations and the mixed-LCP reduction (fixed capacity: no allocation).
  Matrix basis_, inv_, perm_, mp_;
  Vector qperm_ = Vector::Zero(N), qp_, xref_, eq_;
  std::array<int, N> order_{};
  std::array<bool, N> flags_{};
  Eigen::PartialPivLU<Matrix> lu_{N}, lu_small_{N};
  Eigen::ColPivHouseholderQR<Matrix> qr_{N, N};
  Result lcp_;
};

}  // namespace qs

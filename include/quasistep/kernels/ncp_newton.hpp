// Semismooth Newton for mixed nonlinear complementarity problems, on a compile-time
// capacity.
//
//   MNCP(F, n_free):  find x in R^n with
//       F_i(x) = 0                           i <  n_free   (equations, x_i free)
//       0 <= x_i  _|_  F_i(x) >= 0           i >= n_free   (complementarity pairs)
//
// The caller supplies F and its Jacobian J = dF/dx through one callback (below); the kernel
// knows no physics (Xie & Chakraborty 2021, eqs. (18)-(19) are one caller, core/formulations/ecp_ncp/ecp_ncp.cpp).
//
// Reformulation. Each pair becomes one equation with the Fischer-Burmeister function
//     phi(a, b) = sqrt(a^2 + b^2) - a - b,   phi = 0  <=>  a >= 0, b >= 0, a b = 0,
// optionally penalised as in Chen, Chen & Kanzow (Math. Prog. 88, 2000):
//     phi_lambda(a, b) = lambda phi(a, b) - (1 - lambda) max(a, 0) max(b, 0),
// (lambda = 1: plain FB). Phi(x) stacks the equations F_i and phi(x_i, F_i(x)); it is
// semismooth, and Psi = 1/2 |Phi|^2 is continuously differentiable with gradient H' Phi for
// any H in the generalized Jacobian (De Luca, Facchinei & Kanzow, Math. Prog. 75, 1996).
//
// Method (De Luca-Facchinei-Kanzow's globalisation, with a proximal safeguard):
//   1. Newton: H d = -Phi, H from the B-subdifferential (at a = b = 0, where phi is not
//      differentiable, the element with direction (1, 1)/sqrt(2) is used).
//   2. If H is (numerically) singular, d is not finite, or d fails the descent test
//      grad' d <= -rho |d|^p, or the line search along d fails: the proximal (Levenberg-
//      Marquardt) step (H'H + mu I) d = -H' Phi with mu = |Phi| (Fan & Yuan 2005), which
//      is a descent direction whenever grad != 0.
//   3. If that line search fails too: the steepest-descent step d = -grad.
//   Every step is accepted by an Armijo search on Psi: Psi(x + t d) <= Psi(x) + sigma t grad'd.
//
// Termination (the residual is the natural residual, never Psi):
//   residual = max( max_{i<n_free} |F_i|, max_{i>=n_free} |min(x_i, F_i)| )
//   solved             residual <= tolerance, re-checked at the returned x (F evaluated there)
//   not_found          grad Psi ~ 0 at a point that is not a solution (a stationary point of
//                      the merit function: options.stationary_tolerance), Psi stalls
//                      (options.stall_iterations), or no direction gives decrease
//   iteration_limit    max_iterations reached (SolverStats::has_point is false)
//   numerical_failure  the callback failed or returned NaN/Inf at the starting point
//   bad_input          n outside [1, N], n_free outside [0, n], x0 of the wrong size or not
//                      finite, nonsensical options
// The residual is absolute: scale the problem's rows so that the tolerance means something
// (quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp documents its scaling).
//
// Warm start: x0 is the starting point (a previous solution of a nearby problem). A start
// that is already a solution costs no iteration.
//
// Callback: any callable
//     bool eval(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> F,
//               Eigen::Ref<Eigen::MatrixXd> J)
// that writes F(x) (n entries) and J(x) (n x n, J(i, j) = dF_i / dx_j) and returns false
// when it cannot evaluate at x (the line search then treats x as a failed trial point).
//
// No function here allocates once the solver object exists; never throws, never prints.
#pragma once

#include "quasistep/kernels/eigen.hpp"  // first: it configures Eigen
#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "quasistep/kernels/lane.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

struct NcpNewtonOptions {
  int max_iterations = 100;      // accepted steps of any kind
  double tolerance = 1e-10;      // accepted natural residual (absolute)
  double fb_lambda = 1.0;        // in (0, 1]: 1 is plain Fischer-Burmeister, < 1 penalised FB
  double armijo_sigma = 1e-4;    // sufficient decrease
  double backtrack = 0.5;        // step reduction per failed trial
  double min_step = 1e-10;       // smallest trial step before a direction is given up
  double descent_rho = 1e-10;    // descent test grad'd <= -rho |d|^p for the Newton direction
  double descent_p = 2.1;
  double rcond_min = 1e-14;      // a Newton matrix with a smaller reciprocal condition is singular
                                 // (estimated only when its LU pivots are close to 0: kPivotRatioTrusted)
  /// A point with |grad Psi|_inf <= stationary_tolerance max(1, Psi) that is not a solution is
  /// a stationary point of the merit function: no descent method leaves it (not_found).
  double stationary_tolerance = 1e-13;
  /// ... and so is a point where `stall_iterations` accepted steps in a row each reduced Psi
  /// by less than a relative 1e-10 (near a stationary point the gradient itself only
  /// decreases to about sqrt(machine epsilon), where Armijo's test is decided by rounding).
  int stall_iterations = 10;
};

namespace ncp_detail {

/// phi_lambda(a, b) and an element (da, db) of its B-subdifferential.
inline double fischer_burmeister(double a, double b, double lambda, double& da, double& db) {
  const double r = std::hypot(a, b);
  double phi;
  if (r > 0) {
    phi = lambda * (r - a - b);
    da = lambda * (a / r - 1.0);
    db = lambda * (b / r - 1.0);
  } else {
    // The kink at the origin: the limit along the direction (1, 1)/sqrt(2).
    phi = 0.0;
    da = db = lambda * (M_SQRT1_2 - 1.0);
  }
  if (lambda < 1.0 && a > 0 && b > 0) {
    phi -= (1.0 - lambda) * a * b;
    da -= (1.0 - lambda) * b;
    db -= (1.0 - lambda) * a;
  }
  return phi;
}

}  // namespace ncp_detail

/// Natural residual of an MNCP at (x, F = F(x)): see the header comment.
double ncp_natural_residual(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& F,
                            int n_free);

template <int N>
class NcpNewton {
 public:
  /// LU pivots at least this far apart from zero, relative to the largest, skip the rcond()
  /// estimate (see solve()): such a matrix is taken as nonsingular. Its condition could still
  /// exceed 1 / rcond_min in contrived cases; the direction is then still checked for
  /// finiteness and descent, and a rejected one hands over to the proximal step. With 1e-14
  /// (no estimate at all) a falling box's near-singular matrices were accepted and the step
  /// failed; 1e-8 keeps every test's path and saves 40% of the desk's step.
  static constexpr double kPivotRatioTrusted = 1e-8;
  static constexpr int kCapacity = N;
  using Vector = Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, N, 1>;
  using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor, N, N>;

  struct Result {
    Status status = Status::not_run;
    /// iterations: accepted steps; residual: the natural residual at x.
    SolverStats stats;
    Vector x, F;            // (n) the returned point and F there (the best point when not solved)
    double merit = 0;       // Psi(x) = 1/2 |Phi(x)|^2
    int newton_steps = 0;   // accepted steps by kind
    int proximal_steps = 0;
    int gradient_steps = 0;
    int evaluations = 0;    // callback calls
  };

  template <class Eval>
  Status solve(int n, int n_free, Eval&& eval, const Eigen::Ref<const Eigen::VectorXd>& x0, Result& out,
               const NcpNewtonOptions& opt = {}) {
    out.status = Status::not_run;
    out.stats = SolverStats{};
    out.merit = 0;
    out.newton_steps = out.proximal_steps = out.gradient_steps = out.evaluations = 0;
    if (n < 1 || n > N || n_free < 0 || n_free > n || x0.size() != n || !x0.allFinite() || !options_ok(opt))
      return out.status = Status::bad_input;
    n_ = n;
    n_free_ = n_free;
    x_ = x0;
    F_.resize(n);
    J_.resize(n, n);
    ++out.evaluations;
    if (!eval(x_, F_, J_) || !F_.allFinite() || !J_.allFinite()) {
      out.x = x_;
      return out.status = Status::numerical_failure;
    }
    double merit = assemble(opt.fb_lambda);
    int stalled = 0;
    for (int it = 0;; ++it) {
      const double res = ncp_natural_residual(x_, F_, n_free_);
      if (res <= opt.tolerance) return finish(out, Status::solved, merit, res, it);
      if (it >= opt.max_iterations) return finish(out, Status::iteration_limit, merit, res, it);
      grad_.noalias() = H_.transpose() * phi_;
      if (!(grad_.cwiseAbs().maxCoeff() > opt.stationary_tolerance * std::max(1.0, merit)))
        return finish(out, Status::not_found, merit, res, it);
      const double g_norm = grad_.norm();
      const double merit_before = merit;
      // 1. Newton.
      bool accepted = false;
      // Eigen's rcond() estimate costs several triangular solves (a third of a small step);
      // U's pivot ratio bounds it from above (cond(H) >= max |u_ii| / min |u_ii|) and is free,
      // so the estimate is asked for only when the pivots are not comfortably apart from zero:
      // lu_direction() factorises, and only when it declines does Eigen's LU decide.
      bool have_direction = lu_direction();
      if (!have_direction) {
        lu_.compute(H_);
        const auto pivots = lu_.matrixLU().diagonal().cwiseAbs();
        const bool well_pivoted = pivots.minCoeff() > kPivotRatioTrusted * pivots.maxCoeff();
        if (well_pivoted || lu_.rcond() > opt.rcond_min) {
          d_.noalias() = lu_.solve(-phi_);
          have_direction = true;
        }
      }
      if (have_direction) {
        const double gd = grad_.dot(d_);
        if (d_.allFinite() && gd <= -opt.descent_rho * std::pow(d_.norm(), opt.descent_p)) {
          accepted = line_search(eval, opt, merit, gd, out);
          if (accepted) ++out.newton_steps;
        }
      }
      // 2. Proximal (Levenberg-Marquardt) step: a descent direction whenever grad != 0.
      if (!accepted) {
        const double mu = std::max(std::sqrt(2.0 * merit), 1e-12 * std::max(1.0, g_norm));
        hth_.noalias() = H_.transpose() * H_;
        hth_.diagonal().array() += mu;
        llt_.compute(hth_);
        if (llt_.info() == Eigen::Success) {
          d_.noalias() = llt_.solve(-grad_);
          const double gd = grad_.dot(d_);
          if (d_.allFinite() && gd < 0) {
            accepted = line_search(eval, opt, merit, gd, out);
            if (accepted) ++out.proximal_steps;
          }
        }
      }
      // 3. Steepest descent on Psi.
      if (!accepted) {
        d_ = -grad_;
        accepted = line_search(eval, opt, merit, -g_norm * g_norm, out);
        if (accepted) ++out.gradient_steps;
      }
      if (!accepted) return finish(out, Status::not_found, merit, res, it);
      stalled = merit > (1.0 - 1e-10) * merit_before ? stalled + 1 : 0;
      if (stalled >= opt.stall_iterations) {
        const double r = ncp_natural_residual(x_, F_, n_free_);
        if (r > opt.tolerance) return finish(out, Status::not_found, merit, r, it + 1);
      }
    }
  }

 private:
  static bool options_ok(const NcpNewtonOptions& o) {
    return o.max_iterations >= 0 && o.tolerance > 0 && o.fb_lambda > 0 && o.fb_lambda <= 1 && o.armijo_sigma > 0 &&
           o.armijo_sigma < 1 && o.backtrack > 0 && o.backtrack < 1 && o.min_step > 0 && o.min_step <= 1 &&
           o.descent_rho >= 0 && o.descent_p > 2 - 1e-12 && o.rcond_min >= 0 && o.stationary_tolerance >= 0 &&
           o.stall_iterations >= 1;
  }

  /// Phi and H at the current (x_, F_, J_); returns Psi.
  double assemble(double lambda) {
    phi_.resize(n_);
    H_.resize(n_, n_);
    for (int i = 0; i < n_; ++i) {
      if (i < n_free_) {
        phi_[i] = F_[i];
        H_.row(i) = J_.row(i);
      } else {
        double da, db;
        phi_[i] = ncp_detail::fischer_burmeister(x_[i], F_[i], lambda, da, db);
        H_.row(i) = db * J_.row(i);
        H_(i, i) += da;
      }
    }
    return 0.5 * phi_.squaredNorm();
  }

  /// Armijo backtracking along d_ from x_; on success x_, F_, J_, Phi, H and merit move to
  /// the accepted point.
  template <class Eval>
  bool line_search(Eval& eval, const NcpNewtonOptions& opt, double& merit, double gd, Result& out) {
    for (double t = 1.0; t >= opt.min_step; t *= opt.backtrack) {
      xt_ = x_ + t * d_;
      Ft_.resize(n_);
      Jt_.resize(n_, n_);
      ++out.evaluations;
      if (!eval(xt_, Ft_, Jt_) || !Ft_.allFinite() || !Jt_.allFinite()) continue;
      double trial = 0;
      for (int i = 0; i < n_; ++i) {
        double da, db;
        const double p = i < n_free_ ? Ft_[i] : ncp_detail::fischer_burmeister(xt_[i], Ft_[i], opt.fb_lambda, da, db);
        trial += 0.5 * p * p;
      }
      if (trial <= merit + opt.armijo_sigma * t * gd) {
        x_.swap(xt_);
        F_.swap(Ft_);
        J_.swap(Jt_);
        merit = assemble(opt.fb_lambda);
        return true;
      }
    }
    return false;
  }

  Status finish(Result& out, Status st, double merit, double residual, int iterations) {
    out.x = x_;
    out.F = F_;
    out.merit = merit;
    out.stats.iterations = iterations;
    out.stats.residual = residual;
    out.stats.has_point = false;
    return out.status = st;
  }

  /// d = -H^-1 phi by LU with partial pivoting on a copy of H (Doolittle, row swaps). False
  /// (nothing decided) when the pivots are not kPivotRatioTrusted apart from zero: the caller
  /// then asks Eigen's LU and its rcond() estimate. Written here rather than Eigen's LU for
  /// one answer on every instruction set: each entry of the factors and of d is updated by
  /// column operations (axpy) in the order of k, so its value does not depend on how many
  /// entries a vector register holds; Eigen's blocked LU, unvectorised for that reason
  /// (quasistep/kernels/eigen.hpp), cost the Xie & Chakraborty desk's step a third more.
  bool lu_direction() {
    const int n = n_;
    double* a = lu_a_.data();  // column-major, leading dimension kLd
    auto col = [&](int j) { return a + static_cast<std::size_t>(j) * kLd; };
    auto A = [&](int i, int j) -> double& { return col(j)[i]; };
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) A(i, j) = H_(i, j);
    double pmin = std::numeric_limits<double>::infinity(), pmax = 0;
    for (int k = 0; k < n; ++k) {
      int p = k;
      for (int i = k + 1; i < n; ++i)
        if (std::abs(A(i, k)) > std::abs(A(p, k))) p = i;
      lu_perm_[k] = p;
      if (p != k)
        for (int j = 0; j < n; ++j) std::swap(A(k, j), A(p, j));
      const double piv = A(k, k);
      pmin = std::min(pmin, std::abs(piv));
      pmax = std::max(pmax, std::abs(piv));
      if (piv == 0.0) return false;
      for (int i = k + 1; i < n; ++i) A(i, k) /= piv;
      for (int j = k + 1; j < n; ++j) subtract_scaled(col(j) + k + 1, col(k) + k + 1, A(k, j), n - k - 1);
    }
    if (!(pmin > kPivotRatioTrusted * pmax)) return false;
    d_.resize(n);
    for (int i = 0; i < n; ++i) d_[i] = -phi_[i];
    for (int k = 0; k < n; ++k) std::swap(d_[k], d_[lu_perm_[k]]);
    for (int k = 0; k < n; ++k) subtract_scaled(d_.data() + k + 1, col(k) + k + 1, d_[k], n - k - 1);
    for (int k = n - 1; k >= 0; --k) {
      d_[k] /= A(k, k);
      subtract_scaled(d_.data(), col(k), d_[k], k);
    }
    return true;
  }

  /// y_i -= x_i f, i < len, on explicit vectors (the build does not auto-vectorise): one
  /// multiply and one subtract per entry, as the plain loop, so bitwise its result.
  static void subtract_scaled(double* y, const double* x, double f, int len) {
    const NativeSimd fv(f);
    int i = 0;
    for (; i + kNativeWidth <= len; i += kNativeWidth) store_native(load_native(y + i) - load_native(x + i) * fv, y + i);
    for (; i < len; ++i) y[i] -= x[i] * f;
  }

  // The LU's column stride: whole AVX-512 vectors, so the class has one layout on every
  // instruction set (docs/architecture.md).
  static constexpr int kLd = (N + 7) / 8 * 8;
  alignas(64) std::array<double, static_cast<std::size_t>(kLd) * N> lu_a_{};
  std::array<int, N> lu_perm_{};
  int n_ = 0, n_free_ = 0;
  Vector x_, F_, phi_, grad_, d_, xt_, Ft_;
  Matrix J_, H_, Jt_, hth_;
  Eigen::PartialPivLU<Matrix> lu_{N};
  Eigen::LLT<Matrix> llt_{N};
};

}  // namespace qs

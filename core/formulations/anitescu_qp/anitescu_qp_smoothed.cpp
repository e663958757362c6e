// The smoothed Anitescu step (model.log_barrier_weight = kappa): Pang, Suh, Yang & Tedrake,
// "Global Planning for Contact-Rich Manipulation via Local Smoothing of Quasi-dynamic Contact
// Models", IEEE T-RO 2023, sec. "analytic smoothing". The step's QP (anitescu_qp.hpp)
//   minimise 1/2 v'Hv + c'v  subject to  s_r(v) = A_r v - b_r = phi_i / h + J_ij v >= 0
// is relaxed by its log barrier,
//   minimise f(v) = 1/2 v'Hv + c'v - (1/kappa) sum_r log s_r(v),
// the objective of their simulator's smoothed step (pangtao22/quasistatic_simulator,
// qsim/simulator.py, step_unconstrained: 1/2 v'Qv - tau_h'v - (1/t) sum log(phi/h + J v),
// t = log_barrier_weight; its C++ solver minimises kappa times the same). Its stationarity
//   g(v) = Hv + c - A' beta = 0,   beta_r = 1/(kappa s_r),
// is the QP's KKT system with complementarity beta_r s_r = 0 relaxed to 1/kappa: the QP's
// central path. Every row pushes, with an impulse that falls as 1/slack (contact at a
// distance), and v is a smooth function of the data wherever the set of active slots stays.
//
// Newton's method: kappa f is self-concordant (a convex quadratic plus -log of affine
// functions), so damped Newton with backtracking converges from any strictly feasible start
// and quadratically near the minimiser (Boyd & Vandenberghe, "Convex Optimization", 2004,
// sec. 9.5-9.6). Its decrement in those units, Lambda^2 = kappa g'G^-1 g with
// G = H + (1/kappa) sum A_r'A_r / s_r^2, bounds the slacks' errors relative to the slacks
// themselves: a test free of the DOFs' units and of kappa's scale.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>

#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/number_text.hpp"

#include "anitescu_qp_derivative_work.hpp"

namespace qs {

Status AnitescuQp::smoothed_start(const Model& m, double kappa) {
  const int n = nq_, rows = rows_;
  if (rows == 0) return Status::solved;  // no barrier: any v is inside
  // The unsmoothed answer v0 sits on the boundary of its pressed rows. On the central path a
  // row's slack is 1/(kappa beta_r): with the unsmoothed impulse as beta_r's estimate, those
  // are the slacks to start from (close to the answer when kappa is large); a row carrying
  // less than a tenth of the most loaded one, beta_top, is taken as carrying that tenth (its
  // own slack on the path is larger; Newton's method opens it), and no target is below 1e3
  // roundings of its slack, eps (|b_r| + |A_r| |v0|) (in slack_rate_ here). The start v0 + d
  // needs A_r d >= target_r - s_r(v0) on the rows below their target and keeps at least half
  // the slack of the others (A_r d >= -s_r(v0) / 2): a QP for d (the least |d|), solved by
  // the dense QP kernel, which also proves it infeasible (Farkas) when the rows leave no
  // interior. Its right-hand side is divided by the most a row must open (the QP is
  // homogeneous in it): the kernel's tolerances, absolute with floors of 1, then hold at any
  // kappa.
  double impulse_top = 0;
  for (int r = 0; r < rows; ++r) {
    double s = -b_[r], terms = std::abs(b_[r]);
    for (int e = 0; e < n; ++e) {
      s += A_(r, e) * v_[e];
      terms += std::abs(A_(r, e) * v_[e]);
    }
    slack_[r] = s;
    slack_rate_[r] = 1e3 * std::numeric_limits<double>::epsilon() * terms;
    impulse_top = std::max(impulse_top, beta_[r]);
  }
  if (!(impulse_top > 0))  // nothing pressed: the load's impulses instead
    for (int e = 0; e < n; ++e) impulse_top = std::max(impulse_top, std::abs(c_[e]));
  if (!(impulse_top > 0)) impulse_top = 1;
  auto d = newton_step_.head(n);
  // Targets smaller by 1e-4 and 1e-8 when the first leave no room (a body held between two
  // surfaces nearly touching both).
  for (double shrink : {1.0, 1e-4, 1e-8}) {
    double unit = 0;
    for (int r = 0; r < rows; ++r) {
      const double row_target =
          std::max(shrink / (kappa * std::max(beta_[r], 0.1 * impulse_top)), slack_rate_[r]);
      interior_b_[r] = slack_[r] < row_target ? row_target - slack_[r] : -0.5 * slack_[r];
      unit = std::max(unit, interior_b_[r]);  // the rows that must open set the scale
    }
    for (int r = 0; r < rows && !(unit > 0); ++r) unit = std::max(unit, std::abs(interior_b_[r]));
    if (!(unit > 0 && std::isfinite(unit))) unit = 1;
    interior_b_.head(rows) /= unit;
    const DenseQpProblem qp{interior_H_, interior_c_, A_eq_, b_eq_, A_.topLeftCorner(rows, n), interior_b_.head(rows),
                            no_bounds_, no_bounds_};
    const Status st = qp_->solve(qp);
    report_.pivots += qp_->phase1_pivots() + qp_->stats().iterations;
    if (st == Status::infeasible && shrink == 1e-8) {
      std::ostringstream detail;
      detail << std::setprecision(3)
             << "smoothed step: no velocity keeps every Anitescu row phi/h + J v' strictly positive, so the log "
                "barrier has no point to start from; Farkas multipliers";
      const auto u = qp_->farkas_in();
      const double top = u.size() ? u.cwiseAbs().maxCoeff() : 0.0;
      const char* sep = " ";
      for (int k = 0; k < rows; ++k)
        if (u[k] > 1e-9 * top) {
          detail << sep << contact_label(m, k) << ": " << u[k] / top;
          sep = ", ";
        }
      return fail(Status::infeasible, detail.str());
    }
    if (st != Status::solved) continue;
    d = qp_->x() * unit;
    bool inside = true;
    for (int r = 0; r < rows && inside; ++r) {
      double s = -b_[r];
      for (int e = 0; e < n; ++e) s += A_(r, e) * (v_[e] + d[e]);
      inside = s > 0;
    }
    if (!inside) continue;
    for (int e = 0; e < n; ++e) v_[e] += d[e];
    return Status::solved;
  }
  return fail(Status::numerical_failure,
              "smoothed step: found no velocity strictly inside the Anitescu rows to start Newton's method from");
}

Status AnitescuQp::solve_smoothed(const Model& m, const WorldParams& p, double kappa) {
  const bool quasi_dynamic = formulation_params_or_default<AnitescuQpParams>(m).quasi_dynamic;
  const int n = nq_, rows = rows_;
  // 1. The unsmoothed answer: a feasible point, and its verdicts are the smoothed step's (an
  // unbounded QP, a ray d with H d = 0, A d >= 0, c'd < 0, makes f unbounded too; an
  // infeasible one leaves the barrier no domain).
  Status st = quasi_dynamic ? solve_quasi_dynamic(m, p) : solve_quasistatic(m);
  if (st != Status::solved) return st;
  report_.problem_size = n;
  st = smoothed_start(m, kappa);
  if (st != Status::solved) return st;

  auto G = barrier_hessian_.topLeftCorner(n, n);
  if (!quasi_dynamic) {
    // f's Hessian G = H + (1/kappa) sum A_r'A_r / s_r^2 is singular exactly where a motion d
    // has H d = 0 and A d = 0, whatever the slacks: quasistatic objects with a motion no
    // contact row reaches (quasi-dynamically H is positive definite). f is flat or unbounded
    // along d (the QP's answer is not unique there, or the QP is unbounded). Tested on
    // H / max |H_ij| + sum_r A_r'A_r / |A_r|^2, which has G's null space but not the spread
    // of its slacks (at large kappa G's pivots span its condition number, about kappa).
    double top = 0;
    for (int e = 0; e < n; ++e)
      for (int f = 0; f < n; ++f) top = std::max(top, std::abs(H_(e, f)));
    for (int e = 0; e < n; ++e)
      for (int f = 0; f < n; ++f) G(e, f) = top > 0 ? H_(e, f) / top : 0.0;
    for (int r = 0; r < rows; ++r) {
      double norm2 = 0;
      for (int e = 0; e < n; ++e) norm2 += A_(r, e) * A_(r, e);
      if (!(norm2 > 0)) continue;
      for (int e = 0; e < n; ++e)
        for (int f = 0; f < n; ++f) G(e, f) += A_(r, e) * A_(r, f) / norm2;
    }
    if (const int k = barrier_cholesky(barrier_hessian_, barrier_factor_, n, kBarrierPivotTolerance); k >= 0)
      return fail(Status::infeasible,
                  "smoothed quasistatic step: the barrier problem's Hessian is singular at \"" + m.dofs[k].name +
                      "\": no contact row reaches that motion and the QP does not penalise it, so the smoothed step "
                      "has no unique answer (a load along it makes the unsmoothed QP unbounded too)");
  }

  // 2. Damped Newton on f from the start in v_.
  const double inv_kappa = 1.0 / kappa;
  auto v = v_.head(n);
  auto g = barrier_gradient_.head(n);
  auto dv = newton_step_.head(n);
  double decrement = 0, previous = std::numeric_limits<double>::infinity();  // kappa g'G^-1 g
  int step = 0;
  for (;; ++step) {
    // s, g = Hv + c - (1/kappa) sum A_r'/s_r, G = H + (1/kappa) sum A_r'A_r/s_r^2.
    for (int e = 0; e < n; ++e) {
      double ge = c_[e];
      for (int f = 0; f < n; ++f) {
        ge += H_(e, f) * v[f];
        G(e, f) = H_(e, f);
      }
      g[e] = ge;
    }
    // The rounding floor of the decrement: slack s_r carries an error of about
    // eps (|b_r| + |A_r| |v|), which moves Lambda by that over s_r. At a kappa so large that
    // the answer's slacks approach the rounding of phi/h (beyond 1e8 in the examples' units)
    // Newton's method stops there instead of at kNewtonTolerance.
    double floor = 0;
    for (int r = 0; r < rows; ++r) {
      double s = -b_[r], terms = std::abs(b_[r]);
      for (int e = 0; e < n; ++e) {
        s += A_(r, e) * v[e];
        terms += std::abs(A_(r, e) * v[e]);
      }
      slack_[r] = s;
      const double noise = std::numeric_limits<double>::epsilon() * terms / s;
      floor += noise * noise;
      const double w1 = inv_kappa / s, w2 = w1 / s;
      for (int e = 0; e < n; ++e) {
        g[e] -= w1 * A_(r, e);
        for (int f = 0; f < n; ++f) G(e, f) += w2 * A_(r, e) * A_(r, f);
      }
    }
    if (const int k = barrier_cholesky(barrier_hessian_, barrier_factor_, n, 0.0); k >= 0)
      return fail(Status::numerical_failure, "smoothed step: the barrier problem's Hessian lost its positive "
                                             "definiteness at \"" +
                                                 m.dofs[k].name + "\" during Newton's method");
    for (int e = 0; e < n; ++e) dv[e] = -g[e];
    barrier_solve(barrier_factor_, n, dv);
    double lambda2 = 0;  // g'G^-1 g
    for (int e = 0; e < n; ++e) lambda2 -= g[e] * dv[e];
    previous = decrement;
    decrement = kappa * lambda2;
    if (!std::isfinite(decrement))
      return fail(Status::numerical_failure,
                  "smoothed step: Newton's decrement is not finite (" + three_digits(decrement) + ")");
    // At the rounding floor (within 100 times it, the last step having gained less than a
    // factor 4: quadratic convergence is over) the answer is as exact as the data's rounding
    // lets it be.
    if (decrement > kNewtonTolerance && decrement <= 100 * floor && decrement > 0.25 * previous) break;
    if (step == kMaxNewtonSteps) {
      std::ostringstream detail;
      detail << std::setprecision(3) << "smoothed step: Newton's method did not converge in " << kMaxNewtonSteps
             << " steps (decrement " << decrement << "); the barrier problem may be unbounded along a motion the "
             << "rows only open";
      return fail(Status::iteration_limit, detail.str());
    }
    // The step's rates along dv: x_r = A_r dv / s_r.
    for (int r = 0; r < rows; ++r) {
      double rate = 0;
      for (int e = 0; e < n; ++e) rate += A_(r, e) * dv[e];
      slack_rate_[r] = rate / slack_[r];
    }
    const auto inside = [&](double t) {
      for (int r = 0; r < rows; ++r)
        if (!(1.0 + t * slack_rate_[r] > 0.0)) return false;
      return true;
    };
    double t = 1;
    if (decrement > 1e-2) {
      // Backtracking (alpha = 1/4, halving): first into the domain, then the Armijo test on
      //   f(v + t dv) - f(v) = -t g'G^-1 g + t^2/2 dv'H dv + (1/kappa) sum (t x_r - log(1 + t x_r)),
      // written without subtracting f's values (which would cancel).
      double dHd = 0;
      for (int e = 0; e < n; ++e)
        for (int f = 0; f < n; ++f) dHd += dv[e] * H_(e, f) * dv[f];
      while (t > 1e-30 && !inside(t)) t *= 0.5;
      for (; t > 1e-30; t *= 0.5) {
        double change = -t * lambda2 + 0.5 * t * t * dHd;
        for (int r = 0; r < rows; ++r) {
          const double x = t * slack_rate_[r];
          change += inv_kappa * (x - std::log1p(x));
        }
        if (inside(t) && change <= -0.25 * t * lambda2) break;
      }
      if (!(t > 1e-30))
        return fail(Status::numerical_failure, "smoothed step: the line search found no decrease (decrement " +
                                                   three_digits(decrement) + ")");
    } else if (!inside(1.0)) {
      // Near the minimiser the full step stays inside (self-concordance); rounding may not.
      if (decrement <= kNewtonTolerance) break;
      return fail(Status::numerical_failure, "smoothed step: Newton's full step left the barrier's domain near its "
                                             "minimiser (decrement " + three_digits(decrement) + ")");
    }
    for (int e = 0; e < n; ++e) v[e] += t * dv[e];
    // Converged: the step just taken from a decrement this small leaves an error of about
    // its square.
    if (decrement <= kNewtonTolerance) {
      ++step;
      break;
    }
  }
  newton_steps_ = step;
  report_.pivots += step;
  report_.complementarity_residual = decrement;
  // 3. The rows' impulses at the answer: beta_r = 1/(kappa s_r).
  for (int r = 0; r < rows; ++r) {
    double s = -b_[r];
    for (int e = 0; e < n; ++e) s += A_(r, e) * v[e];
    if (!(s > 0))
      return fail(Status::numerical_failure, "smoothed step: the answer left the barrier's domain (slack " +
                                                 three_digits(s) + " at " + contact_label(m, r) + ")");
    slack_[r] = s;
    beta_[r] = inv_kappa / s;
  }
  smoothed_ = true;
  return Status::solved;
}

Status AnitescuQp::differentiate_smoothed(const Model& m, const WorldParams& p, double kappa, StepDerivatives& d) {
  // The stationarity F(v; x, u) = Hv + c - (1/kappa) sum_r A_r'/s_r = 0 (Pang, Suh, Yang &
  // Tedrake, IEEE T-RO 2023, sec. "analytic smoothing": the smoothed step differentiated
  // through its optimality condition) at the answer, with s_r = A_r v - b_r, so that
  // ds_r = dA_r v - db_r + A_r dv. With beta_r = 1/(kappa s_r) and W_r = beta_r / s_r:
  //   dF = G dv + (dH v + dc - sum_r beta_r dA_r') - sum_r W_r A_r' (db_r - dA_r v) = 0,
  //   G = H + sum_r W_r A_r'A_r,   so   G dv = -R1 + A' W R2
  // with R1 and R2 the QP's right-hand sides (kkt_sensitivity.hpp) over every row. G is
  // positive definite at every solved step: the derivative always exists, and is two-sided.
  const int na = m.n_a, n = nq_, rows = rows_, cols = n + na;
  const double h = p.h, inv_kappa = 1.0 / kappa;
  DerivativeWork& w = *derivative_;
  for (int r = 0; r < rows; ++r) w.active_rows[r] = r;
  data_derivatives(m, p, rows);
  auto R1 = w.R1.leftCols(cols);
  auto R2 = w.R2.topLeftCorner(rows, cols);
  auto dv = w.dv.leftCols(cols);
  for (int e = 0; e < n; ++e)
    for (int f = 0; f < n; ++f) w.G(e, f) = H_(e, f);
  for (int j = 0; j < cols; ++j)
    for (int e = 0; e < n; ++e) dv(e, j) = -R1(e, j);
  for (int r = 0; r < rows; ++r) {
    const double W = inv_kappa / slack_[r] / slack_[r];
    for (int e = 0; e < n; ++e) {
      const double a = W * A_(r, e);
      for (int f = 0; f < n; ++f) w.G(e, f) += a * A_(r, f);
      for (int j = 0; j < cols; ++j) dv(e, j) += a * R2(r, j);
    }
  }
  if (const int k = barrier_cholesky(w.G, w.L, n, 0.0); k >= 0) {
    d.detail = "the smoothed step's Hessian is singular at \"" + m.dofs[k].name + "\", so it has no derivative";
    return Status::numerical_failure;
  }
  for (int j = 0; j < cols; ++j) barrier_solve(w.L, n, dv.col(j));
  d.degenerate = false;
  d.margin = 1;
  return velocity_derivatives_to_step(dv, n, na, h, d);
}

}  // namespace qs

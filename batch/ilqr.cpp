// Iterative LQR through contact: quasistep/batch/ilqr.hpp.
#include "quasistep/batch/ilqr.hpp"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <Eigen/Cholesky>

#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/stepper.hpp"

#include "thread_stepper.hpp"

namespace qs {

const char* to_string(IlqrDerivatives d) {
  switch (d) {
    case IlqrDerivatives::exact: return "exact";
    case IlqrDerivatives::smoothed: return "smoothed";
    case IlqrDerivatives::bundled: return "bundled";
  }
  return "?";
}

bool box_qp(const Eigen::MatrixXd& H, const Eigen::VectorXd& g, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi,
            const Eigen::VectorXd& start, Eigen::VectorXd& d, std::vector<char>& free, Eigen::MatrixXd& H_free_inverse) {
  const int n = static_cast<int>(g.size());
  d = start.cwiseMax(lo).cwiseMin(hi);
  free.assign(static_cast<std::size_t>(n), 1);
  const auto value = [&](const Eigen::VectorXd& x) { return 0.5 * x.dot(H * x) + g.dot(x); };
  for (int iteration = 0; iteration < 100; ++iteration) {
    const Eigen::VectorXd grad = g + H * d;
    H_free_inverse.setZero(n, n);
    // A limit is active when the gradient pushes against it (Tassa et al. 2014, eq. (8)).
    int n_free = 0;
    for (int i = 0; i < n; ++i) {
      const bool clamped = (d[i] <= lo[i] && grad[i] > 0) || (d[i] >= hi[i] && grad[i] < 0);
      free[static_cast<std::size_t>(i)] = clamped ? 0 : 1;
      n_free += clamped ? 0 : 1;
    }
    if (n_free == 0) return true;
    Eigen::MatrixXd Hff(n_free, n_free);
    Eigen::VectorXd gf(n_free);
    std::vector<int> index;
    for (int i = 0; i < n; ++i)
      if (free[static_cast<std::size_t>(i)]) index.push_back(i);
    for (int a = 0; a < n_free; ++a) {
      gf[a] = grad[index[a]];
      for (int b = 0; b < n_free; ++b) Hff(a, b) = H(index[a], index[b]);
    }
    const Eigen::LLT<Eigen::MatrixXd> llt(Hff);
    if (llt.info() != Eigen::Success) return false;
    const Eigen::MatrixXd inverse = llt.solve(Eigen::MatrixXd::Identity(n_free, n_free));
    for (int a = 0; a < n_free; ++a)
      for (int b = 0; b < n_free; ++b) H_free_inverse(index[a], index[b]) = inverse(a, b);
    if (gf.norm() < 1e-12 * (1 + g.norm())) return true;
    // The Newton step on the free entries, projected onto the box with an Armijo search.
    Eigen::VectorXd step = Eigen::VectorXd::Zero(n);
    const Eigen::VectorXd newton = -llt.solve(gf);
    for (int a = 0; a < n_free; ++a) step[index[a]] = newton[a];
    const double f0 = value(d);
    bool moved = false;
    for (double alpha = 1.0; alpha > 1e-10; alpha *= 0.5) {
      // Armijo's condition along the projected arc (Bertsekas 1982, as Tassa et al. 2014 use it).
      const Eigen::VectorXd candidate = (d + alpha * step).cwiseMax(lo).cwiseMin(hi);
      if (value(candidate) <= f0 + 0.1 * grad.dot(candidate - d)) {
        moved = (candidate - d).norm() > 1e-14 * (1 + d.norm());
        d = candidate;
        break;
      }
    }
    if (!moved) return true;
  }
  return false;  // not settled: the caller regularises and tries again
}

namespace {

// The Gauss-Newton derivatives of 1/2 |r|^2: l_x = rx' r, l_xx = rx' rx, ...
struct CostTerms {
  Eigen::VectorXd r, lx, lu;
  Eigen::MatrixXd rx, ru, lxx, luu, lux;
};

}  // namespace

struct Ilqr::Impl {
  Impl(const std::shared_ptr<const Model>& model, const std::shared_ptr<const Model>& linearised, const IlqrOptions& o)
      : arena(o.threads > 0 ? o.threads : tbb::task_arena::automatic),
        steppers([linearised] { return std::make_unique<ThreadStepper>(*linearised, StepperOptions{}); }),
        rollout(*model, StepperOptions{}),
        linearised_model(linearised) {
    if (o.derivatives == IlqrDerivatives::bundled) bundled = std::make_unique<BundledStep>(model, BatchOptions{.threads = o.threads});
  }
  tbb::task_arena arena;
  tbb::enumerable_thread_specific<std::unique_ptr<ThreadStepper>> steppers;  // the linearisation's
  ThreadStepper rollout;  // the Model's own steps
  std::shared_ptr<const Model> linearised_model;
  std::unique_ptr<BundledStep> bundled;
  std::vector<Eigen::MatrixXd> A, B;        // per step
  std::vector<Eigen::VectorXd> x;           // the accepted trajectory's x
  std::vector<Eigen::VectorXd> k;           // the feed-forward steps
  std::vector<State> candidate_states;
  Eigen::MatrixXd candidate_controls;
  std::vector<Eigen::VectorXd> candidate_x;
  std::vector<Status> link_status;
  std::vector<std::string> link_detail;
};

Ilqr::Ilqr(std::shared_ptr<const Model> model, IlqrOptions options) : model_(std::move(model)), options_(std::move(options)) {
  if (!model_) throw BatchError("ilqr: no model");
  const Model& m = *model_;
  if (!formulation_info(m.formulation).has_derivatives)
    throw BatchError("ilqr: " + std::string(to_string(m.formulation)) + " has no step derivatives");
  if (options_.horizon < 1) throw BatchError("ilqr: horizon must be at least 1 step");
  if (options_.max_iterations < 0) throw BatchError("ilqr: max_iterations must be >= 0");
  if (!(options_.tolerance >= 0) || !(options_.regularization >= 0) || !std::isfinite(options_.tolerance) ||
      !std::isfinite(options_.regularization))
    throw BatchError("ilqr: tolerance and regularization must be finite numbers >= 0");
  if (options_.threads < 0) throw BatchError("ilqr: threads must be >= 0 (0 = all)");
  n_x_ = derivative_state_size(m);
  n_u_ = m.n_a;
  if (n_u_ == 0) throw BatchError("ilqr: the model has no velocity-controlled joint to command");
  const bool limited = !options_.u_min.empty() || !options_.u_max.empty();
  if (limited) {
    if (options_.u_min.size() != static_cast<std::size_t>(n_u_) || options_.u_max.size() != static_cast<std::size_t>(n_u_))
      throw BatchError("ilqr: u_min and u_max need one entry per command (" + std::to_string(n_u_) + ")");
    for (int a = 0; a < n_u_; ++a)
      if (!(options_.u_min[a] <= options_.u_max[a]))
        throw BatchError("ilqr: command " + std::to_string(a) + "'s u_min exceeds its u_max, or is NaN");
  }
  std::shared_ptr<const Model> linearised = model_;
  if (options_.derivatives == IlqrDerivatives::smoothed) {
    if (m.formulation != Formulation::anitescu_qp)
      throw BatchError("ilqr: smoothed derivatives need the anitescu_qp formulation (got " +
                       std::string(to_string(m.formulation)) + ")");
    if (!(options_.log_barrier_weight > 0) || !std::isfinite(options_.log_barrier_weight))
      throw BatchError("ilqr: smoothed derivatives need a log_barrier_weight that is a finite number > 0");
    linearised = with_log_barrier_weight(m, options_.log_barrier_weight);
  }
  if (options_.derivatives == IlqrDerivatives::bundled &&
      (!(options_.bundled.sigma > 0) || !std::isfinite(options_.bundled.sigma) || options_.bundled.samples < n_u_ + 1))
    throw BatchError("ilqr: bundled derivatives need a finite sigma > 0 and at least n_u + 1 samples");
  impl_ = std::make_unique<Impl>(model_, linearised, options_);
}

Ilqr::~Ilqr() = default;

const IlqrResult& Ilqr::solve(const State& start, const Eigen::MatrixXd& initial, const IlqrCost& cost) {
  const Model& m = *model_;
  const int T = options_.horizon, nx = n_x_, nu = n_u_;
  const double inf = std::numeric_limits<double>::infinity();
  IlqrResult& r = result_;
  r.status = Status::not_run;
  r.detail.clear();
  r.converged = false;
  r.iterations = 0;
  r.steps = r.linearised = 0;
  r.initial_cost = r.cost = std::numeric_limits<double>::quiet_NaN();
  // Nothing of an earlier call survives: a refused call returns an empty trajectory.
  r.states.clear();
  r.controls.resize(0, 0);
  r.K.clear();
  if (initial.rows() != T || initial.cols() != nu) {
    r.status = Status::bad_input;
    r.detail = "ilqr: the initial controls must be " + std::to_string(T) + " x " + std::to_string(nu) + " (got " +
               std::to_string(initial.rows()) + " x " + std::to_string(initial.cols()) + ")";
    return r;
  }
  if (!initial.allFinite()) {
    r.status = Status::bad_input;
    r.detail = "ilqr: the initial controls must be finite numbers";
    return r;
  }
  if (start.q.size() != m.n_q() || start.memory.size() != step_memory_size(m)) {
    r.status = Status::bad_input;
    r.detail = "ilqr: the start state must have the model's " + std::to_string(m.n_q()) + " DOFs and " +
               std::to_string(step_memory_size(m)) + " memory entries (got " + std::to_string(start.q.size()) +
               " and " + std::to_string(start.memory.size()) + ")";
    return r;
  }
  if (!start.q.allFinite()) {
    r.status = Status::bad_input;
    r.detail = "ilqr: the start state's q must be finite numbers";
    return r;
  }
  Eigen::VectorXd lo = Eigen::VectorXd::Constant(nu, -inf), hi = Eigen::VectorXd::Constant(nu, inf);
  if (!options_.u_min.empty())
    for (int a = 0; a < nu; ++a) lo[a] = options_.u_min[a], hi[a] = options_.u_max[a];

  Impl& w = *impl_;
  const auto tsize = static_cast<std::size_t>(T);
  w.A.assign(tsize, Eigen::MatrixXd(nx, nx));
  w.B.assign(tsize, Eigen::MatrixXd(nx, nu));
  w.k.assign(tsize, Eigen::VectorXd::Zero(nu));
  r.K.assign(tsize, Eigen::MatrixXd::Zero(nu, nx));
  w.link_status.assign(tsize, Status::not_run);
  w.link_detail.assign(tsize, std::string());

  const int nr = cost.running_size(), nt = cost.terminal_size();
  CostTerms c;
  // Steps the Model from `start` under u_t = u_bar_t + alpha k_t + K_t (x_t - x_bar_t), clamped
  // to the limits (alpha < 0: u_bar alone); writes the states, x and the controls taken, and
  // returns the cost (inf when a step fails, with its status and detail in `failure`).
  Status failure = Status::solved;
  std::string failure_detail;
  const auto roll_out = [&](const Eigen::MatrixXd& u_bar, double alpha, std::vector<State>& states,
                            std::vector<Eigen::VectorXd>& xs, Eigen::MatrixXd& controls) {
    states.resize(tsize + 1);
    xs.resize(tsize + 1);
    controls.resize(T, nu);
    states[0] = start;
    derivative_state(m, states[0], xs[0]);
    ThreadStepper& s = w.rollout;
    s.params.commanded = true;
    s.params.command.resize(static_cast<std::size_t>(nu));
    double total = 0;
    for (int t = 0; t < T; ++t) {
      const auto ts = static_cast<std::size_t>(t);
      Eigen::VectorXd u = u_bar.row(t).transpose();
      if (alpha >= 0) u += alpha * w.k[ts] + r.K[ts] * (xs[ts] - w.x[ts]);
      u = u.cwiseMax(lo).cwiseMin(hi);
      controls.row(t) = u.transpose();
      c.r.setZero(nr);
      c.rx.setZero(nr, nx);
      c.ru.setZero(nr, nu);
      cost.running(t, xs[ts], u, c.r, c.rx, c.ru);
      total += 0.5 * c.r.squaredNorm();
      for (int a = 0; a < nu; ++a) s.params.command[static_cast<std::size_t>(a)] = u[a];
      states[ts + 1] = states[ts];
      ++r.steps;
      if (s.stepper->step(m, s.params, states[ts + 1]) != Status::solved) {
        failure = s.stepper->report().status;
        failure_detail = "step " + std::to_string(t + 1) + " of the rollout: " + s.stepper->report().detail;
        // Only the steps taken: the states up to the failed step and the commands before it.
        states.resize(ts + 1);
        xs.resize(ts + 1);
        controls.conservativeResize(t, nu);
        return inf;
      }
      derivative_state(m, states[ts + 1], xs[ts + 1]);
    }
    c.r.setZero(nt);
    c.rx.setZero(nt, nx);
    cost.terminal(xs[tsize], c.r, c.rx);
    total += 0.5 * c.r.squaredNorm();
    return std::isfinite(total) ? total : inf;
  };

  // The first rollout.
  r.initial_cost = r.cost = roll_out(initial, -1.0, r.states, w.x, r.controls);
  if (!std::isfinite(r.cost)) {
    r.initial_cost = r.cost = std::numeric_limits<double>::quiet_NaN();  // no trajectory has one
    r.status = failure == Status::solved ? Status::numerical_failure : failure;
    r.detail = "ilqr: " + (failure == Status::solved ? std::string("the cost of the first rollout is not finite")
                                                    : failure_detail);
    return r;
  }
  r.status = Status::solved;

  // Linearises the accepted trajectory: A_t, B_t at (states_t, controls_t).
  const auto linearise = [&]() -> bool {
    if (options_.derivatives == IlqrDerivatives::bundled) {
      WorldParams p(m);
      for (int t = 0; t < T; ++t) {
        const auto ts = static_cast<std::size_t>(t);
        p.commanded = true;
        p.command.resize(static_cast<std::size_t>(nu));
        for (int a = 0; a < nu; ++a) p.command[static_cast<std::size_t>(a)] = r.controls(t, a);
        // Each step's own stream of perturbations, the same at every iteration.
        BundledOptions o = options_.bundled;
        o.seed = options_.bundled.seed + static_cast<std::uint64_t>(t);
        const BundledDerivatives& b = w.bundled->compute(r.states[ts], p, o);
        r.linearised += o.samples;
        if (b.status != Status::solved) {
          w.link_status[ts] = b.status;
          w.link_detail[ts] = b.detail;
          return false;
        }
        w.link_status[ts] = Status::solved;
        w.A[ts] = b.A1;
        w.B[ts] = b.B1;
      }
      return true;
    }
    const Model& lm = *w.linearised_model;
    w.arena.execute([&] {
      tbb::parallel_for(0, T, [&](int t) {
        ThreadStepper& s = *w.steppers.local();
        const auto ts = static_cast<std::size_t>(t);
        s.params.commanded = true;
        s.params.command.resize(static_cast<std::size_t>(nu));  // sized once: no allocation
        for (int a = 0; a < nu; ++a) s.params.command[static_cast<std::size_t>(a)] = r.controls(t, a);
        s.state = r.states[ts];
        const Status st = s.stepper->step(lm, s.params, s.state, s.derivatives);
        w.link_status[ts] = st == Status::solved ? s.derivatives.status : st;
        if (w.link_status[ts] != Status::solved) {
          w.link_detail[ts] = st == Status::solved ? s.derivatives.detail : s.stepper->report().detail;
          return;
        }
        w.A[ts] = s.derivatives.A;
        w.B[ts] = s.derivatives.B;
      });
    });
    r.linearised += T;
    for (int t = 0; t < T; ++t)
      if (w.link_status[static_cast<std::size_t>(t)] != Status::solved) return false;
    return true;
  };

  double mu = options_.regularization;
  constexpr double kMaxRegularization = 1e10;
  std::vector<char> free;
  Eigen::VectorXd kt;
  Eigen::MatrixXd H_free_inverse;
  Eigen::MatrixXd controls_bar;
  bool need_linearisation = true;
  while (r.iterations < options_.max_iterations) {
    if (need_linearisation && !linearise()) {
      for (int t = 0; t < T; ++t)
        if (w.link_status[static_cast<std::size_t>(t)] != Status::solved) {
          r.status = w.link_status[static_cast<std::size_t>(t)];
          r.detail = "ilqr: iteration " + std::to_string(r.iterations + 1) + ", step " + std::to_string(t + 1) +
                     " has no " + to_string(options_.derivatives) + " derivative: " +
                     w.link_detail[static_cast<std::size_t>(t)];
          break;
        }
      return r;
    }
    need_linearisation = false;
    // Backward pass (Tassa et al. 2012, eqs. (5)-(11)), mu on V_xx so that the
    // regularisation acts in state space and the gains stay consistent.
    c.r.setZero(nt);
    c.rx.setZero(nt, nx);
    cost.terminal(w.x[tsize], c.r, c.rx);
    Eigen::VectorXd Vx = c.rx.transpose() * c.r;
    Eigen::MatrixXd Vxx = c.rx.transpose() * c.rx;
    double dV1 = 0, dV2 = 0;
    bool backward_ok = true;
    for (int t = T - 1; t >= 0; --t) {
      const auto ts = static_cast<std::size_t>(t);
      const Eigen::VectorXd u = r.controls.row(t).transpose();
      c.r.setZero(nr);
      c.rx.setZero(nr, nx);
      c.ru.setZero(nr, nu);
      cost.running(t, w.x[ts], u, c.r, c.rx, c.ru);
      const Eigen::MatrixXd& A = w.A[ts];
      const Eigen::MatrixXd& B = w.B[ts];
      const Eigen::VectorXd Qx = c.rx.transpose() * c.r + A.transpose() * Vx;
      const Eigen::VectorXd Qu = c.ru.transpose() * c.r + B.transpose() * Vx;
      const Eigen::MatrixXd Qxx = c.rx.transpose() * c.rx + A.transpose() * Vxx * A;
      // The regularised Q_uu and Q_ux (mu on V_xx, Tassa et al. 2012, eq. (10)) give the gains;
      // the value function and the expected decrease take the unregularised ones (eq. (11)).
      const Eigen::MatrixXd VxxB = Vxx * B;
      const Eigen::MatrixXd Qux = c.ru.transpose() * c.rx + VxxB.transpose() * A;
      Eigen::MatrixXd Quu = c.ru.transpose() * c.ru + B.transpose() * VxxB;
      Quu = 0.5 * (Quu + Quu.transpose()).eval();
      const Eigen::MatrixXd Qux_reg = Qux + mu * B.transpose() * A;
      Eigen::MatrixXd Quu_reg = Quu + mu * B.transpose() * B;
      // A small control-space floor keeps Q_uu definite where neither cost nor dynamics see u
      // (a command whose joint is out of every contact and out of the cost).
      Quu_reg.diagonal().array() += 1e-12 + mu * 1e-6;
      if (!box_qp(Quu_reg, Qu, lo - u, hi - u, w.k[ts], kt, free, H_free_inverse)) {
        backward_ok = false;
        break;
      }
      w.k[ts] = kt;
      r.K[ts] = -H_free_inverse * Qux_reg;  // zero rows where a limit is active
      const Eigen::MatrixXd& K = r.K[ts];
      Vx = Qx + K.transpose() * Quu * kt + K.transpose() * Qu + Qux.transpose() * kt;
      Vxx = Qxx + K.transpose() * Quu * K + K.transpose() * Qux + Qux.transpose() * K;
      Vxx = 0.5 * (Vxx + Vxx.transpose()).eval();
      dV1 += kt.dot(Qu);
      dV2 += 0.5 * kt.dot(Quu * kt);
    }
    if (!backward_ok) {
      mu = std::max(mu * 10, 1e-6);
      if (mu > kMaxRegularization) {
        r.detail = "ilqr: the backward pass found no descent direction at the largest regularisation";
        break;
      }
      continue;
    }
    ++r.iterations;
    // The expected decrease is -(alpha dV1 + alpha^2 dV2); when it is negligible the
    // trajectory is stationary for this model of the cost.
    if (-(dV1 + dV2) <= options_.tolerance * 1e-3 * std::max(r.cost, 1e-300)) {
      r.converged = true;
      break;
    }
    controls_bar = r.controls;
    bool accepted = false;
    for (double alpha = 1.0; alpha >= 1.0 / 1024; alpha *= 0.5) {
      failure = Status::solved;
      const double trial = roll_out(controls_bar, alpha, w.candidate_states, w.candidate_x, w.candidate_controls);
      const double expected = -(alpha * dV1 + alpha * alpha * dV2);
      if (std::isfinite(trial) && r.cost - trial > 1e-4 * expected) {
        const double decrease = r.cost - trial;
        r.cost = trial;
        std::swap(r.states, w.candidate_states);
        std::swap(w.x, w.candidate_x);
        std::swap(r.controls, w.candidate_controls);
        accepted = true;
        r.converged = decrease <= options_.tolerance * trial;
        break;
      }
    }
    if (accepted) {
      mu = std::max(mu / 10, options_.regularization);
      need_linearisation = true;
      if (r.converged) break;
    } else {
      mu = std::max(mu * 10, 1e-6);
      if (mu > kMaxRegularization) {
        r.detail = "ilqr: no step along the descent direction lowered the cost";
        break;
      }
    }
  }
  return r;
}

}  // namespace qs

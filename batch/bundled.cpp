// Randomized ("bundled") derivatives of a step: quasistep/batch/bundled.hpp.
#include "quasistep/batch/bundled.hpp"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <Eigen/Cholesky>

#include "quasistep/batch/sampling.hpp"
#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"

#include "thread_stepper.hpp"

namespace qs {

struct BundledStep::Workers {
  using Worker = ThreadStepper;
  Workers(std::shared_ptr<const Model> m, const BatchOptions& o)
      : arena(o.threads > 0 ? o.threads : tbb::task_arena::automatic),
        workers([m, so = StepperOptions{o.pgs}] { return std::make_unique<Worker>(*m, so); }),
        center(*m, StepperOptions{o.pgs}) {}
  tbb::task_arena arena;
  tbb::enumerable_thread_specific<std::unique_ptr<Worker>> workers;
  Worker center;  // the unperturbed step
};

BundledStep::BundledStep(std::shared_ptr<const Model> model, BatchOptions options) : model_(std::move(model)) {
  if (!model_) throw BatchError("bundled: no model");
  if (options.threads < 0) throw BatchError("bundled: threads must be >= 0 (0 = all)");
  if (!formulation_info(model_->formulation).has_derivatives)
    throw BatchError("bundled: " + std::string(to_string(model_->formulation)) + " has no step derivatives");
  workers_ = std::make_unique<Workers>(model_, options);
}

BundledStep::~BundledStep() = default;

const BundledDerivatives& BundledStep::compute(const State& state, const WorldParams& params,
                                               const BundledOptions& options) {
  const Model& m = *model_;
  const int nx = derivative_state_size(m), na = m.n_a, n = options.samples;
  BundledDerivatives& r = result_;
  r.used = r.failed = 0;
  const auto fail = [&](Status st, std::string why) -> const BundledDerivatives& {
    r.status = st;
    r.detail = std::move(why);
    // No estimate of this call, and none of an earlier one.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (Eigen::MatrixXd* e : {&r.A1, &r.B1, &r.A1_error, &r.B1_error, &r.B0, &r.B0_error}) e->fill(nan);
    r.next.fill(nan);
    return r;
  };
  if (na == 0) return fail(Status::bad_input, "bundled: the model has no velocity-controlled joint to perturb");
  if (!(n >= na + 1) || !(n >= 2))
    return fail(Status::bad_input, "bundled: samples must be at least n_a + 1 = " + std::to_string(std::max(na + 1, 2)) +
                                       " (got " + std::to_string(n) + ")");
  if (!(options.sigma > 0) || !std::isfinite(options.sigma))
    return fail(Status::bad_input, "bundled: sigma must be a finite number > 0");

  // The command u: the given one, or the schedules at the middle of the step.
  std::vector<double> u(static_cast<std::size_t>(na));
  for (const Joint& j : m.joints)
    if (j.control == Control::velocity) u[static_cast<std::size_t>(j.dof - m.n_u)] = params.velocity(m, j, state.t + 0.5 * params.h);

  // The unperturbed step f(x, u), the zeroth-order estimate's reference.
  Workers::Worker& c = workers_->center;
  c.params = params;
  c.params.commanded = true;
  c.params.command = u;
  c.state = state;
  if (c.stepper->step(m, c.params, c.state) != Status::solved)
    return fail(c.stepper->report().status, "bundled: the unperturbed step did not solve: " + c.stepper->report().detail);
  Eigen::VectorXd x0;
  derivative_state(m, c.state, x0);

  const auto sn = static_cast<std::size_t>(n);
  dx_.assign(sn * static_cast<std::size_t>(nx), 0.0);
  w_.assign(sn * static_cast<std::size_t>(na), 0.0);
  A_.assign(sn * static_cast<std::size_t>(nx * nx), 0.0);
  B_.assign(sn * static_cast<std::size_t>(nx * na), 0.0);
  ok_.assign(sn, 0);
  Distribution normal;
  normal.kind = Distribution::Kind::normal;
  normal.stddev = options.sigma;
  const auto one = [&](int i) {
    Workers::Worker& wk = *workers_->workers.local();
    wk.params = params;
    wk.params.commanded = true;
    wk.params.command = u;  // same size after the first: no allocation
    const auto at = static_cast<std::size_t>(i);
    for (int a = 0; a < na; ++a) {
      const double w = draw(normal, options.seed, i, a);  // the stream's sample i, command a
      w_[at * na + a] = w;
      wk.params.command[static_cast<std::size_t>(a)] += w;
    }
    wk.state = state;
    if (wk.stepper->step(m, wk.params, wk.state, wk.derivatives) != Status::solved ||
        wk.derivatives.status != Status::solved)
      return;
    ok_[at] = 1;
    for (int e = 0; e < nx; ++e) {
      dx_[at * nx + e] = (e < m.n_q() ? wk.state.q[e] : wk.state.memory[e - m.n_q()]) - x0[e];
      for (int f = 0; f < nx; ++f) A_[at * nx * nx + e * nx + f] = wk.derivatives.A(e, f);
      for (int a = 0; a < na; ++a) B_[at * nx * na + e * na + a] = wk.derivatives.B(e, a);
    }
  };
  workers_->arena.execute([&] { tbb::parallel_for(0, n, [&](int i) { one(i); }); });

  // Sums in sample order: the same bits for any thread count.
  int used = 0;
  for (int i = 0; i < n; ++i) used += ok_[static_cast<std::size_t>(i)];
  r.used = used;
  r.failed = n - used;
  if (used < na + 1)
    return fail(Status::numerical_failure, "bundled: only " + std::to_string(used) + " of " + std::to_string(n) +
                                               " perturbed steps solved with a derivative (at least n_a + 1 = " +
                                               std::to_string(na + 1) + " are needed)");
  const double N = used;
  // First order: means and standard errors of the mean (sample standard deviation / sqrt(N)).
  const auto mean_and_error = [&](const std::vector<double>& samples, int rows, int cols, Eigen::MatrixXd& mean,
                                  Eigen::MatrixXd& error) {
    mean.setZero(rows, cols);
    error.setZero(rows, cols);
    const int size = rows * cols;
    // Sample i's entry (r, c) at samples[i * size + r * cols + c]; each entry summed in
    // sample order.
    for (int i = 0; i < n; ++i) {
      if (!ok_[static_cast<std::size_t>(i)]) continue;
      const double* x = &samples[static_cast<std::size_t>(i) * size];
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) mean(r, c) += x[r * cols + c];
    }
    mean /= N;
    for (int i = 0; i < n; ++i) {
      if (!ok_[static_cast<std::size_t>(i)]) continue;
      const double* x = &samples[static_cast<std::size_t>(i) * size];
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
          const double d = x[r * cols + c] - mean(r, c);
          error(r, c) += d * d;
        }
    }
    error = (error / ((N - 1) * N)).cwiseSqrt();
  };
  mean_and_error(A_, nx, nx, r.A1, r.A1_error);
  mean_and_error(B_, nx, na, r.B1, r.B1_error);
  Eigen::MatrixXd next, next_error;
  mean_and_error(dx_, nx, 1, next, next_error);
  r.next = x0 + next.col(0);

  // Zeroth order: least squares dx_i = B w_i, B = (sum dx w') (sum w w')^-1; the standard
  // error of entry (e, a) is sqrt(s_e^2 [(W'W)^-1]_aa), s_e^2 row e's residual variance over
  // N - n_a degrees of freedom.
  Eigen::MatrixXd WW = Eigen::MatrixXd::Zero(na, na), XW = Eigen::MatrixXd::Zero(nx, na);
  for (int i = 0; i < n; ++i) {
    if (!ok_[static_cast<std::size_t>(i)]) continue;
    const Eigen::Map<const Eigen::VectorXd> w(&w_[static_cast<std::size_t>(i) * na], na);
    const Eigen::Map<const Eigen::VectorXd> dx(&dx_[static_cast<std::size_t>(i) * nx], nx);
    WW += w * w.transpose();
    XW += dx * w.transpose();
  }
  const Eigen::LLT<Eigen::MatrixXd> llt(WW);
  if (llt.info() != Eigen::Success)
    return fail(Status::numerical_failure, "bundled: the perturbations do not span the commands");
  const Eigen::MatrixXd WW_inv = llt.solve(Eigen::MatrixXd::Identity(na, na));
  r.B0 = XW * WW_inv;
  Eigen::VectorXd residual = Eigen::VectorXd::Zero(nx);
  for (int i = 0; i < n; ++i) {
    if (!ok_[static_cast<std::size_t>(i)]) continue;
    const Eigen::Map<const Eigen::VectorXd> w(&w_[static_cast<std::size_t>(i) * na], na);
    const Eigen::Map<const Eigen::VectorXd> dx(&dx_[static_cast<std::size_t>(i) * nx], nx);
    residual += (dx - r.B0 * w).cwiseAbs2();
  }
  residual /= N - na;
  r.B0_error.resize(nx, na);
  for (int e = 0; e < nx; ++e)
    for (int a = 0; a < na; ++a) r.B0_error(e, a) = std::sqrt(residual[e] * WW_inv(a, a));
  r.status = Status::solved;
  r.detail.clear();
  return r;
}

}  // namespace qs

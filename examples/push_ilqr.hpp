// Gradient-based model-predictive control that pushes a puck to a goal: at every replanning
// step, iterative LQR (quasistep/batch/ilqr.hpp) optimises the pusher's velocities over a
// short horizon from the current state, warm-started from the last plan, with the step's
// exact, bundled or smoothed derivatives, and the first few steps are executed. The worlds
// are examples/mpc_push.json (Halm & Posa 2018) and examples/anitescu_planar_push.json (the
// quasi-dynamic Anitescu step, gravity-free); examples/push_ilqr.cpp runs it and compares it
// with the sampling MPC of examples/push_mpc.hpp over many starts.
//
// Chosen here (no paper gives them): the goal, tolerance, 3 executed steps per replan and
// 200 replans at most are the sampling MPC's; the horizon is 30 steps (0.75 s: with the
// sampling MPC's 12 it needs about 40% more replans); each command is limited to
// |u| <= 0.07 m/s per axis, so the pusher is never faster than the sampling MPC's 0.1 m/s;
// at most 3 iLQR iterations per replan (a warm-started plan needs few). The cost is a sum of
// squared residuals (Gauss-Newton):
//   running:  w_goal (puck - goal), w_behind (pusher - behind(puck)), w_u u, and
//             w_clear a (c - |pusher - puck|) while the pusher is within c of the puck
//   terminal: 4 w_goal (puck - goal), w_behind (pusher - behind(puck))
// with behind(p) = p + d (p - goal) / |p - goal|_eps, the point where the pusher touches the
// puck on the far side from the goal (d = puck radius + pusher radius), |v|_eps =
// sqrt(|v|^2 + eps^2) (eps = 1 cm) a norm that stays smooth at the goal, c = d + 2 cm, and
// a = (1 - cos of the angle between pusher - puck and puck - goal) / 2, zero behind the puck:
// the clearance term sends the pusher around the puck rather than through it; w_goal = 1,
// w_behind = 0.5, w_u = 0.1, w_clear = 5 (m and m/s). The behind term gives the optimiser a
// gradient while the pusher is away from the puck, where the exact derivatives of the puck
// with respect to the commands are zero. Measured on the comparison's 100 starts of
// examples/mpc_push.json with exact derivatives: with the clearance term 99 reach the goal
// in 73 replans on average, without it 94 in 95 (docs/derivatives.md).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "quasistep/batch/ilqr.hpp"
#include "quasistep/core/model.hpp"

namespace qs::examples {

struct PushIlqrSettings {
  std::array<double, 2> goal{0.25, 0.10};  // puck x, y (m)
  double tolerance = 0.015;                // m
  double contact_distance = 0.05;          // puck radius + pusher radius (m): where behind(p) is
  int horizon = 30;
  int execute = 3;
  int max_replans = 200;
  int iterations = 3;                      // iLQR iterations per replan
  double speed = 0.07;                     // m/s, the limit of each command
  double w_goal = 1.0, w_behind = 0.5, w_u = 0.1, w_clear = 5.0, clearance = 0.02;
  IlqrDerivatives derivatives = IlqrDerivatives::exact;
  /// smoothed: kappa (1/J). kappa = 2 / (F_0 g_0) (docs/scene-format.md) makes a contact (its
  /// two rows) push with F_0 = 0.2 N, a tenth of the force that moves the puck at 0.1 m/s,
  /// across a gap of g_0 = 0.1 mm. Chosen by a sweep over 100 starts (docs/derivatives.md):
  /// kappa = 1e3 reached the goal from 97, 1e4 from 92, 1e5 and 1e6 from all, 1e5 at the
  /// lowest cost.
  double log_barrier_weight = 1e5;
  BundledOptions bundled{.samples = 32, .sigma = 0.02, .seed = 1};
};

struct PushIlqrResult {
  bool reached = false;
  int replans = 0;
  double final_error = 0.0;  // m
  /// The task's cost, the same for every controller: the puck's distance to the goal
  /// integrated over the run until it is reached (m s), sampled at each replan.
  double distance_time = 0.0;
  long long steps = 0, linearised = 0;  // steps taken by the optimiser (rollouts, derivatives)
  std::string failure;                  // why the loop stopped early, if it did
  std::vector<std::array<double, 2>> puck_path, pusher_path;  // after each replan
};

/// The cost above on x = [puck x, y, theta, pusher x, y, (references)].
class PushCost final : public IlqrCost {
 public:
  explicit PushCost(const PushIlqrSettings& s) : s_(s) {}
  int running_size() const override { return 7; }
  int terminal_size() const override { return 4; }
  void running(int, const Eigen::VectorXd& x, const Eigen::VectorXd& u, Eigen::VectorXd& r, Eigen::MatrixXd& rx,
               Eigen::MatrixXd& ru) const override {
    goal_and_behind(x, s_.w_goal, r, rx);
    for (int a = 0; a < 2; ++a) {
      r[4 + a] = s_.w_u * u[a];
      ru(4 + a, a) = s_.w_u;
    }
    clearance_residual(x, r, rx);
  }
  void terminal(const Eigen::VectorXd& x, Eigen::VectorXd& r, Eigen::MatrixXd& rx) const override {
    goal_and_behind(x, 4 * s_.w_goal, r, rx);
  }

 private:
  // Rows 0-1: w (puck - goal); rows 2-3: w_behind (pusher - behind(puck)) and their Jacobians.
  void goal_and_behind(const Eigen::VectorXd& x, double w, Eigen::VectorXd& r, Eigen::MatrixXd& rx) const {
    constexpr double eps = 0.01;
    const double dx = x[0] - s_.goal[0], dy = x[1] - s_.goal[1];
    const double rho = std::sqrt(dx * dx + dy * dy + eps * eps), d = s_.contact_distance;
    r[0] = w * dx;
    r[1] = w * dy;
    rx(0, 0) = rx(1, 1) = w;
    const double bx = x[0] + d * dx / rho, by = x[1] + d * dy / rho;
    r[2] = s_.w_behind * (x[3] - bx);
    r[3] = s_.w_behind * (x[4] - by);
    // d behind / d puck = I + d (I / rho - v v' / rho^3), v = puck - goal.
    const double r3 = rho * rho * rho;
    const double jxx = 1 + d * (1 / rho - dx * dx / r3), jyy = 1 + d * (1 / rho - dy * dy / r3),
                 jxy = -d * dx * dy / r3;
    rx(2, 0) = -s_.w_behind * jxx;
    rx(2, 1) = -s_.w_behind * jxy;
    rx(3, 0) = -s_.w_behind * jxy;
    rx(3, 1) = -s_.w_behind * jyy;
    rx(2, 3) = rx(3, 4) = s_.w_behind;
  }
  // Row 6: w_clear a (c - |e|) while |e| < c, e = pusher - puck, c = contact_distance +
  // clearance, a = (1 - cos(v, e)) / 2 with v = puck - goal: zero behind the puck, largest
  // on its goal side, so the pusher goes around the puck instead of through it.
  void clearance_residual(const Eigen::VectorXd& x, Eigen::VectorXd& r, Eigen::MatrixXd& rx) const {
    constexpr double eps = 0.01, delta = 1e-8;
    const double vx = x[0] - s_.goal[0], vy = x[1] - s_.goal[1], ex = x[3] - x[0], ey = x[4] - x[1];
    const double rho = std::sqrt(vx * vx + vy * vy + eps * eps), dist = std::sqrt(ex * ex + ey * ey + delta);
    const double c = s_.contact_distance + s_.clearance;
    if (dist >= c) return;  // r and its Jacobian stay zero
    const double k = vx * ex + vy * ey, D = rho * dist, a = (1 - k / D) / 2;
    r[6] = s_.w_clear * a * (c - dist);
    // Derivatives with respect to (puck x, puck y, pusher x, pusher y), x's entries 0, 1, 3, 4.
    const std::array<double, 4> dk{ex - vx, ey - vy, vx, vy}, drho{vx / rho, vy / rho, 0, 0},
        dd{-ex / dist, -ey / dist, ex / dist, ey / dist};
    const std::array<int, 4> entry{0, 1, 3, 4};
    for (int i = 0; i < 4; ++i) {
      const double dD = dist * drho[i] + rho * dd[i], da = -0.5 * (dk[i] * D - k * dD) / (D * D);
      rx(6, entry[i]) = s_.w_clear * (a * -dd[i] + (c - dist) * da);
    }
  }
  PushIlqrSettings s_;
};

/// Throws BatchError unless the model has the layout the cost reads: the DOFs puck x, y,
/// theta, pusher_x, pusher_y and two velocity commands (examples/mpc_push.json's).
inline void check_push_layout(const Model& m) {
  if (m.n_q() != 5 || m.n_a != 2 || m.dofs[3].name != "pusher_x" || m.dofs[4].name != "pusher_y")
    throw BatchError("the push example needs the DOFs puck x, y, theta, pusher_x, pusher_y (as "
                     "examples/mpc_push.json) and two velocity commands");
}

/// Runs the controller from `start` (the Model's initial state when null). Throws BatchError
/// for a scene of another layout (check_push_layout), or when the optimiser cannot be built
/// for this model and settings.
inline PushIlqrResult push_to_goal_ilqr(const std::shared_ptr<const Model>& model, const PushIlqrSettings& o,
                                        const State* start = nullptr) {
  const Model& m = *model;
  check_push_layout(m);
  IlqrOptions io;
  io.horizon = o.horizon;
  io.max_iterations = o.iterations;
  io.derivatives = o.derivatives;
  io.log_barrier_weight = o.log_barrier_weight;
  io.bundled = o.bundled;
  io.u_min.assign(2, -o.speed);
  io.u_max.assign(2, o.speed);
  io.threads = 1;  // one world: the linearisation's few steps are not worth a thread pool
  Ilqr ilqr(model, io);
  const PushCost cost(o);
  PushIlqrResult r;
  State current = start ? *start : initial_state(m);
  // The first plan: the pusher stands still (the optimiser moves it).
  Eigen::MatrixXd plan = Eigen::MatrixXd::Zero(o.horizon, 2);
  const auto error = [&](const State& s) { return std::hypot(s.q[0] - o.goal[0], s.q[1] - o.goal[1]); };
  const double dt = o.execute * m.step.h;
  for (r.replans = 0; r.replans < o.max_replans; ++r.replans) {
    r.puck_path.push_back({current.q[0], current.q[1]});
    r.pusher_path.push_back({current.q[3], current.q[4]});
    if (error(current) <= o.tolerance) break;
    r.distance_time += error(current) * dt;
    const IlqrResult& out = ilqr.solve(current, plan, cost);
    r.steps += out.steps;
    r.linearised += out.linearised;
    if (out.states.size() != static_cast<std::size_t>(o.horizon) + 1 || !std::isfinite(out.cost)) {
      r.failure = out.detail;
      break;  // not even the warm start could be rolled out: report where we are
    }
    // The plan is the Model's own steps: executing its first steps is stepping them.
    current = out.states[static_cast<std::size_t>(o.execute)];
    // Warm start: the rest of the plan, its last command repeated.
    for (int t = 0; t < o.horizon; ++t) plan.row(t) = out.controls.row(std::min(t + o.execute, o.horizon - 1));
  }
  r.final_error = error(current);
  r.reached = r.final_error <= o.tolerance;
  return r;
}

}  // namespace qs::examples

// Sampling MPC (random shooting) that pushes a puck to a goal position with the rollout API
// (quasistep/batch/rollout.hpp): at every replanning step it propagates `candidates` constant-velocity
// pusher actions over a short horizon from the current state in one batch, scores where each
// leaves the puck and the pusher, and executes the best for a few steps. The world is
// examples/mpc_push.json (Halm & Posa 2018). examples/push_mpc.cpp runs it; the test
// tests/batch/rollout_test.cpp checks that it reaches the goal from a fixed seed.
//
// Chosen here (no paper gives them): 128 candidates, a 12-step horizon (0.3 s at 40 Hz), 3
// executed steps per replan, pusher speed 0.1 m/s; half the candidates aim at the point
// behind the puck on the goal line (so the pusher gets around the puck), half point in
// uniformly random directions. Cost: the puck's distance to the goal, plus 0.3 x the
// pusher's distance to that "behind" point (keeps it ready for the next push).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include "quasistep/batch/rollout.hpp"
#include "quasistep/core/model.hpp"

namespace qs::examples {

struct PushMpcSettings {
  std::array<double, 2> goal{0.25, 0.10};  // puck x, y (m)
  double tolerance = 0.015;                // m
  int candidates = 128;
  int horizon = 12;                        // steps per candidate
  int execute = 3;                         // steps executed per replan
  int max_replans = 200;
  double speed = 0.1;                      // m/s
  std::uint64_t seed = 1;
};

struct PushMpcResult {
  bool reached = false;
  int replans = 0;
  double final_error = 0.0;                       // m
  std::vector<std::array<double, 2>> puck_path;   // after each replan
  std::vector<std::array<double, 2>> pusher_path;
};

namespace push_mpc_detail {
/// The puck's x, y and the pusher's x, y from a State of examples/mpc_push.json (DOF order:
/// puck x, y, theta, then pusher_x, pusher_y; the pusher point is at the joint positions).
inline std::array<double, 4> positions(const State& s) { return {s.q[0], s.q[1], s.q[3], s.q[4]}; }
}  // namespace push_mpc_detail

/// Runs the planner from `start` (the Model's initial state when null). Throws BatchError if
/// the rollout does.
inline PushMpcResult push_to_goal(const std::shared_ptr<const Model>& model, const PushMpcSettings& o,
                                  const State* start = nullptr) {
  using push_mpc_detail::positions;
  const Model& m = *model;
  const double h = m.step.h;
  Rollout planner(model), executor(model);
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> angle(-std::numbers::pi, std::numbers::pi);
  std::normal_distribution<double> jitter(0.0, 0.3);

  State current = start ? *start : initial_state(m);
  std::vector<State> starts(static_cast<std::size_t>(o.candidates), current);
  std::vector<double> actions(static_cast<std::size_t>(o.candidates) * o.horizon * 2);
  std::vector<std::array<double, 2>> velocity(static_cast<std::size_t>(o.candidates));
  std::vector<double> step_action(static_cast<std::size_t>(o.execute) * 2);
  PushMpcResult r;
  const auto error = [&](const std::array<double, 4>& p) { return std::hypot(p[0] - o.goal[0], p[1] - o.goal[1]); };
  const auto behind = [&](const std::array<double, 4>& p) {
    // 7 cm behind the puck's center on the line from the goal through the puck.
    const double dx = p[0] - o.goal[0], dy = p[1] - o.goal[1], d = std::max(std::hypot(dx, dy), 1e-9);
    return std::array<double, 2>{p[0] + 0.07 * dx / d, p[1] + 0.07 * dy / d};
  };

  for (r.replans = 0; r.replans < o.max_replans; ++r.replans) {
    const auto p = positions(current);
    r.puck_path.push_back({p[0], p[1]});
    r.pusher_path.push_back({p[2], p[3]});
    if (error(p) <= o.tolerance) break;
    // Candidates: toward the behind point (jittered), toward the goal, or anywhere.
    const auto b = behind(p);
    const double to_behind = std::atan2(b[1] - p[3], b[0] - p[2]);
    const double to_goal = std::atan2(o.goal[1] - p[1], o.goal[0] - p[0]);
    for (int k = 0; k < o.candidates; ++k) {
      const double a = k < o.candidates / 4 ? to_behind + jitter(rng)
                       : k < o.candidates / 2 ? to_goal + jitter(rng)
                                              : angle(rng);
      velocity[static_cast<std::size_t>(k)] = {o.speed * std::cos(a), o.speed * std::sin(a)};
      for (int l = 0; l < o.horizon; ++l) {
        actions[(static_cast<std::size_t>(k) * o.horizon + l) * 2] = velocity[static_cast<std::size_t>(k)][0];
        actions[(static_cast<std::size_t>(k) * o.horizon + l) * 2 + 1] = velocity[static_cast<std::size_t>(k)][1];
      }
      starts[static_cast<std::size_t>(k)] = current;  // same sizes: copies without allocating
    }
    const RolloutResult& out = planner.propagate(starts, actions, h, o.horizon);
    int best = -1;
    double best_cost = 0.0;
    for (int k = 0; k < o.candidates; ++k) {
      if (out.status[static_cast<std::size_t>(k)] != Status::solved) continue;
      const auto q = positions(out.next[static_cast<std::size_t>(k)]);
      const auto bk = behind(q);
      const double cost = error(q) + 0.3 * std::hypot(q[2] - bk[0], q[3] - bk[1]);
      if (best < 0 || cost < best_cost) {
        best = k;
        best_cost = cost;
      }
    }
    if (best < 0) break;  // every candidate failed: report where we are
    for (int l = 0; l < o.execute; ++l) {
      step_action[static_cast<std::size_t>(l) * 2] = velocity[static_cast<std::size_t>(best)][0];
      step_action[static_cast<std::size_t>(l) * 2 + 1] = velocity[static_cast<std::size_t>(best)][1];
    }
    const RolloutResult& moved = executor.propagate(std::span<const State>(&current, 1), step_action, h, o.execute);
    if (moved.status[0] != Status::solved) break;
    current = moved.next[0];
  }
  const auto p = positions(current);
  r.final_error = error(p);
  r.reached = r.final_error <= o.tolerance;
  return r;
}

}  // namespace qs::examples

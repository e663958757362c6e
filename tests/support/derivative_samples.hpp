// The states the derivatives are checked on, shared by the tests (tests/core/derivatives_test.cpp,
// tests/core/lcp_derivatives_test.cpp) and the NaN/Inf campaign (bench/derivative_campaign.cpp):
// the examples' variants (the other Anitescu mode, the perfect-velocity push, the pivot with a
// command), an example's trajectory, its commands, and a random state around it. No GoogleTest
// here: the campaign is a plain program.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/example_json.hpp"

namespace qs::test {

inline nlohmann::json example(const std::string& name) { return example_json(name + ".json"); }

inline nlohmann::json in_mode(nlohmann::json scene, const char* mode) {
  scene["model"]["mode"] = mode;
  return scene;
}
/// The scene with model.<key> set.
inline nlohmann::json with_model(nlohmann::json scene, const char* key, const nlohmann::json& value) {
  scene["model"][key] = value;
  return scene;
}
/// The box push quasi-dynamic: the 0.5 kg box of 0.1 m x 0.1 m gets its inertia m (a^2 + b^2) / 12.
inline nlohmann::json box_push_quasi_dynamic() {
  nlohmann::json scene = in_mode(example("anitescu_box_push"), "quasi_dynamic");
  scene["bodies"][1]["inertia"] = 0.5 * (0.01 + 0.01) / 12;
  return scene;
}
/// plan_pivot has no commands (its planner chooses them): here its finger starts at 0.085 m,
/// near the box's top, and pushes at 0.1 m/s in x, which tips the box (mu = 0.8 holds its
/// corner: pushed above 0.05 m / mu = 0.0625 m it tips before it slides).
inline nlohmann::json pivot_push() {
  nlohmann::json scene = example("plan_pivot");
  scene["joints"][0]["position"] = 0.085;
  scene["commands"] = {{"finger_x", {{"velocity", 0.1}}}, {"finger_y", {{"velocity", 0.0}}}};
  return scene;
}
/// A Halm-Posa scene under perfect velocity (Halm & Posa 2018, eqs. (13)-(14)): the same
/// scene without the feedback gain (c and B), which that formulation does not read.
inline nlohmann::json without_feedback(const nlohmann::json& scene) {
  nlohmann::json out = scene;
  nlohmann::json model = {{"formulation", "perfect_velocity_lcp"}};
  for (const auto& [key, value] : scene["model"].items())
    if (key != "formulation" && key != "c" && key != "B" && key != "note") model[key] = value;
  out["model"] = model;
  return out;
}
inline nlohmann::json push_perfect_velocity() { return without_feedback(example("halm_posa_push")); }

/// The example's trajectory (every row), stepped by the stepper's own path.
inline std::vector<State> trajectory(const Model& m) {
  auto stepper = make_stepper(m);
  std::vector<State> rows{initial_state(m)};
  State s = rows.back();
  for (int l = 0; l < m.step.steps && stepper->step(m, s) == Status::solved; ++l) rows.push_back(s);
  return rows;
}

/// The step's p with u held (commanded) at the scene's schedule at the middle of the step.
inline WorldParams commanded_params(const Model& m, const State& s) {
  WorldParams p(m);
  p.command.assign(static_cast<size_t>(m.n_a), 0.0);
  for (const Joint& j : m.joints)
    if (j.control == Control::velocity) p.command[static_cast<size_t>(j.dof - m.n_u)] = j.command(s.t + 0.5 * m.step.h);
  p.commanded = true;
  return p;
}

struct RandomState {
  State state;
  WorldParams params;
};

/// A random state around the trajectory `rows`: a row, its configuration moved by up to 2 cm
/// (lengths) and 0.2 rad (angles: DOFs named *.theta), which leaves bodies apart, touching
/// and interpenetrating, the memory that is state (Anitescu's references, the MIQP's phi_bar)
/// by up to 2 cm, and commands of up to 0.5 m/s either way. The randomness comes from
/// `row(n)` (an index in [0, n)) and `unit()` (uniform in [-1, 1)), called in this order: row,
/// then q's entries, the memory's, the commands'.
template <class Row, class Unit>
RandomState random_state(const Model& m, const std::vector<State>& rows, Row&& row, Unit&& unit) {
  State s = rows[row(rows.size())];
  for (int e = 0; e < m.n_q(); ++e) s.q[e] += (m.dofs[e].name.ends_with(".theta") ? 0.2 : 0.02) * unit();
  for (int a = 0; a < derivative_memory_size(m); ++a) s.memory[a] += 0.02 * unit();
  WorldParams p = commanded_params(m, s);
  for (double& u : p.command) u = 0.5 * unit();
  return {std::move(s), std::move(p)};
}

}  // namespace qs::test

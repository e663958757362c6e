// The scene reader's plan section (docs/scene-format.md, "plan"): bounds per DOF, control
// bounds per commanded joint, the goal region and keep-out boxes.

#include "scene_compiler.hpp"

#include "quasistep/core/json_node.hpp"
#include "quasistep/core/kinematics.hpp"
#include "quasistep/core/number_text.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <vector>

namespace qs {

using json_input::json_quote;
using json_input::Node;

// `plan` (docs/scene-format.md, "plan"): bounds per DOF, control bounds per commanded joint,
// the goal region and keep-out boxes; the initial state must be a valid start.
PlanSpec SceneCompiler::read_plan(const Model& m, const Node& n) {
  n.expect_object({"bounds", "control_bounds", "control_steps", "other_weight", "goal", "keep_out"});
  PlanSpec plan;
  const auto read_range = [](const Node& r) {
    const std::array<double, 2> v = r.fixed_vector<2>();
    if (!(v[0] < v[1])) r.fail("must be [low, high] with low < high");
    return v;
  };
  // Every object key must name something: a misspelt DOF would otherwise go unbounded.
  const auto read_named_ranges = [&](const Node& obj, const std::vector<std::string>& names,
                                     std::vector<std::array<double, 2>>& out, const char* what) {
    if (!obj.raw().is_object()) obj.fail("must be an object of " + std::string(what) + " name -> [low, high]");
    std::vector<char> seen(names.size(), 0);
    for (const auto& item : obj.raw().items()) {
      if (item.key() == "note") continue;
      const Node r = obj.child(item.key());
      const auto it = std::find(names.begin(), names.end(), item.key());
      if (it == names.end()) {
        std::string known;
        for (const std::string& k : names) known += (known.empty() ? "" : ", ") + k;
        r.fail(std::string("no ") + what + " of this name (expected one of: " + known + ")");
      }
      const auto i = static_cast<std::size_t>(it - names.begin());
      out[i] = read_range(r);
      seen[i] = 1;
    }
    return seen;
  };

  std::vector<std::string> dof_names;
  for (const Dof& d : m.dofs) dof_names.push_back(d.name);
  const double inf = std::numeric_limits<double>::infinity();
  plan.bounds.assign(m.dofs.size(), {-inf, inf});
  const Node bounds = n.at("bounds");
  const std::vector<char> bounded = read_named_ranges(bounds, dof_names, plan.bounds, "DOF");
  for (std::size_t i = 0; i < m.dofs.size(); ++i)
    if (!bounded[i] && m.dofs[i].kind != DofKind::body_theta)
      bounds.fail("missing " + json_quote(m.dofs[i].name) +
                  " (every DOF needs bounds, except a free body's theta, which may turn freely)");
  const State start = initial_state(m);
  for (std::size_t i = 0; i < m.dofs.size(); ++i) {
    const double q = start.q[static_cast<Eigen::Index>(i)];
    if (q < plan.bounds[i][0] || q > plan.bounds[i][1])
      bounds.child(m.dofs[i].name)
          .fail("the initial value " + shortest_text(q) + " lies outside [" + shortest_text(plan.bounds[i][0]) + ", " +
                shortest_text(plan.bounds[i][1]) + "]");
  }

  const std::vector<std::string> commands = command_names(m);
  if (commands.empty()) n.fail("the scene has no velocity-controlled joint to plan with");
  plan.control_bounds.assign(commands.size(), {0.0, 0.0});
  const Node controls = n.at("control_bounds");
  const std::vector<char> given = read_named_ranges(controls, commands, plan.control_bounds, "velocity-controlled joint");
  for (std::size_t i = 0; i < commands.size(); ++i)
    if (!given[i]) controls.fail("missing " + json_quote(commands[i]) + " (every velocity-controlled joint needs bounds)");

  if (auto c = n.get("control_steps")) {
    if (c->array() != 2) c->fail("must be [min, max]: the steps a sampled control is held");
    plan.min_control_steps = c->item(0).integer(1);
    plan.max_control_steps = c->item(1).integer(1);
    if (plan.max_control_steps < plan.min_control_steps) c->fail("must be [min, max] with min <= max");
    if (plan.max_control_steps > 10000) c->item(1).fail("must be <= 10000");
  }

  if (auto w = n.get("other_weight")) {
    plan.other_weight = w->positive();
    if (plan.other_weight > 1000) w->fail("must be <= 1000");
  }

  const Node goal = n.at("goal");
  goal.expect_object({"body", "center", "tolerance"});
  const Node body = goal.at("body");
  plan.goal_body = m.find_body(body.string());
  if (plan.goal_body < 0) body.fail("no body named " + json_quote(body.string()));
  if (m.bodies[plan.goal_body].kind != BodyKind::free) body.fail("must be a free body (the object)");
  plan.goal_center = goal.at("center").fixed_vector<3>();
  const Node tol = goal.at("tolerance");
  plan.goal_tolerance = tol.fixed_vector<3>();
  for (double t : plan.goal_tolerance)
    if (!(t > 0)) tol.fail("every entry must be > 0");
  // A goal the bounds exclude cannot be reached: say so now, not after a long search.
  const Body& gb = m.bodies[plan.goal_body];
  for (int k = 0; k < 2; ++k) {
    const int d = gb.dof[k];
    const double lo = d >= 0 ? plan.bounds[d][0] : gb.pose[k], hi = d >= 0 ? plan.bounds[d][1] : gb.pose[k];
    if (plan.goal_center[k] + plan.goal_tolerance[k] < lo || plan.goal_center[k] - plan.goal_tolerance[k] > hi)
      goal.child("center").fail(std::string("the goal's ") + (k == 0 ? "x" : "y") + " range lies outside " +
                                (d >= 0 ? "plan.bounds" : "the body's fixed pose"));
  }

  if (auto ko = n.get("keep_out")) {
    const std::size_t count = ko->array(1);
    std::vector<Pose2<double>> pose(m.bodies.size()), frame(m.joints.size());
    forward_kinematics(m, start.q.data(), pose.data(), frame.data());
    for (std::size_t i = 0; i < count; ++i) {
      const Node e = ko->item(i);
      e.expect_object({"body", "box", "margin"});
      PlanSpec::KeepOut k;
      const Node b = e.at("body");
      k.body = m.find_body(b.string());
      if (k.body < 0) b.fail("no body named " + json_quote(b.string()));
      if (m.bodies[k.body].kind == BodyKind::fixed) b.fail("must be a body that moves (free or linked)");
      const Node box = e.at("box");
      k.box = box.fixed_vector<4>();
      if (!(k.box[0] < k.box[2] && k.box[1] < k.box[3])) box.fail("must be [x_min, y_min, x_max, y_max] with min < max");
      if (auto mg = e.get("margin")) k.margin = mg->nonnegative();
      const Vec2<double> o = pose[k.body].translation;
      if (plan_keep_out_hit(k, o.x, o.y))
        e.fail("the body " + json_quote(m.bodies[k.body].name) + " starts inside this region");
      plan.keep_out.push_back(k);
    }
  }
  return plan;
}

}  // namespace qs

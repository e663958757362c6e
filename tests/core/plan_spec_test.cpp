// The scene's `plan` section (core/scene_plan.cpp, docs/scene-format.md "plan"): what it
// compiles into, and every error naming its field in one line. Read without OMPL: `validate`
// checks a plan section in any build.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "quasistep/core/scene.hpp"

namespace qs::plan_spec_test {
namespace {

using json = nlohmann::json;

json example(const char* name) {
  std::ifstream f(std::string(QUASISTEP_SOURCE_DIR "/examples/") + name);
  return json::parse(std::string(std::istreambuf_iterator<char>(f), {}));
}

/// The message of the SceneError parsing `doc` throws ("" when it parses).
std::string error_of(const json& doc) {
  try {
    parse_scene(doc.dump(), "s.json");
  } catch (const SceneError& e) {
    return e.what();
  }
  return "";
}

TEST(PlanSpec, PushExampleCompiles) {
  const Scene s = parse_scene(example("plan_push.json").dump(), "plan_push.json");
  ASSERT_TRUE(s.plan.has_value());
  const Model& m = *s.model;
  const PlanSpec& p = *s.plan;
  ASSERT_EQ(p.bounds.size(), static_cast<std::size_t>(m.n_q()));
  // DOF order: puck x, y, theta, then pusher_x, pusher_y. theta has no bounds: it turns freely.
  EXPECT_EQ(p.bounds[0], (std::array<double, 2>{-0.15, 0.45}));
  EXPECT_TRUE(std::isinf(p.bounds[2][0]) && std::isinf(p.bounds[2][1]));
  EXPECT_EQ(p.bounds[4], (std::array<double, 2>{-0.3, 0.3}));
  ASSERT_EQ(p.control_bounds.size(), 2u);
  EXPECT_EQ(p.control_bounds[1], (std::array<double, 2>{-0.1, 0.1}));
  EXPECT_EQ(p.min_control_steps, 2);
  EXPECT_EQ(p.max_control_steps, 16);
  EXPECT_EQ(m.bodies[p.goal_body].name, "puck");
  EXPECT_EQ(p.goal_center, (std::array<double, 3>{0.30, 0.10, 0.0}));
  ASSERT_EQ(p.keep_out.size(), 1u);
  EXPECT_EQ(p.keep_out[0].margin, 0.05);
  EXPECT_TRUE(plan_keep_out_hit(p.keep_out[0], 0.15, 0.1));
  EXPECT_TRUE(plan_keep_out_hit(p.keep_out[0], 0.07, -0.09));  // on the grown edge
  EXPECT_FALSE(plan_keep_out_hit(p.keep_out[0], 0.15, -0.0901));
  // A scene without the section has none; the pivot example has one.
  EXPECT_FALSE(parse_scene(example("mpc_push.json").dump()).plan.has_value());
  EXPECT_TRUE(parse_scene(example("plan_pivot.json").dump()).plan.has_value());
}

TEST(PlanSpec, DefaultsWhenOptionalFieldsAreLeftOut) {
  json d = example("plan_push.json");
  d["plan"].erase("control_steps");
  d["plan"].erase("keep_out");
  const Scene s = parse_scene(d.dump());
  EXPECT_EQ(s.plan->min_control_steps, 1);
  EXPECT_EQ(s.plan->max_control_steps, 10);
  EXPECT_EQ(s.plan->other_weight, 0.3);
  EXPECT_TRUE(s.plan->keep_out.empty());
}

TEST(PlanSpec, ErrorsNameTheField) {
  const json base = example("plan_push.json");
  struct Case {
    const char* pointer;
    json value;  // null: erase
    const char* expected;
  };
  const Case cases[] = {
      {"/plan/bounds/puck.y", nullptr, "plan.bounds: missing \"puck.y\" (every DOF needs bounds"},
      {"/plan/bounds/puck.z", json::array({0, 1}), "plan.bounds.puck.z: no DOF of this name (expected one of: puck.x"},
      {"/plan/bounds/pusher_x", json::array({0.1, -0.1}), "plan.bounds.pusher_x: must be [low, high] with low < high"},
      {"/plan/bounds/pusher_x", json::array({0.0, 0.5}),
       "plan.bounds.pusher_x: the initial value -0.1 lies outside [0, 0.5]"},
      {"/plan/bounds/puck.x", json::array({0, "a"}), "plan.bounds.puck.x[1]: must be a number"},
      {"/plan/bounds", json::array({1}), "plan.bounds: must be an object of DOF name -> [low, high]"},
      {"/plan/control_bounds/pusher_y", nullptr,
       "plan.control_bounds: missing \"pusher_y\" (every velocity-controlled joint needs bounds)"},
      {"/plan/control_bounds/puck.x", json::array({0, 1}),
       "plan.control_bounds.puck.x: no velocity-controlled joint of this name (expected one of: pusher_x, pusher_y)"},
      {"/plan/control_steps", json::array({5, 2}), "plan.control_steps: must be [min, max] with min <= max"},
      {"/plan/control_steps", json::array({0, 2}), "plan.control_steps[0]: must be >= 1"},
      {"/plan/control_steps", json::array({1, 20000}), "plan.control_steps[1]: must be <= 10000"},
      {"/plan/control_steps", json::array({1}), "plan.control_steps: must be [min, max]"},
      {"/plan/goal/body", "pusher", "plan.goal.body: must be a free body (the object)"},
      {"/plan/goal/body", "nobody", "plan.goal.body: no body named \"nobody\""},
      {"/plan/goal/tolerance", json::array({0.02, 0, 1}), "plan.goal.tolerance: every entry must be > 0"},
      {"/plan/goal/center", json::array({0.9, 0.1, 0}), "plan.goal.center: the goal's x range lies outside plan.bounds"},
      {"/plan/goal", nullptr, "plan.goal: missing (required)"},
      {"/plan/keep_out/0/box", json::array({-0.1, -0.1, 0.1, 0.1}),
       "plan.keep_out[0]: the body \"puck\" starts inside this region"},
      {"/plan/keep_out/0/box", json::array({0.2, 0, 0.1, 0.1}),
       "plan.keep_out[0].box: must be [x_min, y_min, x_max, y_max] with min < max"},
      {"/plan/keep_out/0/margin", -1, "plan.keep_out[0].margin: must be >= 0"},
      {"/plan/keep_out/0/body", "nobody", "plan.keep_out[0].body: no body named \"nobody\""},
      {"/plan/keep_out", json::array(), "plan.keep_out: must have at least 1 entries"},
      {"/plan/other_weight", 0, "plan.other_weight: must be > 0"},
      {"/plan/other_weight", 1001, "plan.other_weight: must be <= 1000"},
      {"/plan/speed", 1, "plan.speed: unknown field (expected one of: bounds, control_bounds"},
  };
  for (const Case& c : cases) {
    json d = base;
    const json::json_pointer ptr(c.pointer);
    if (c.value.is_null()) d[ptr.parent_pointer()].erase(ptr.back());
    else d[ptr] = c.value;
    const std::string e = error_of(d);
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.pointer << ": got \"" << e << "\"";
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST(PlanSpec, NeedsAVelocityControlledJoint) {
  // A box dropped on a table: no joint at all.
  json d = example("anitescu_drop.json");
  const Scene plain = parse_scene(d.dump());
  json bounds = json::object();
  for (std::size_t i = 0; i < plain.model->dofs.size(); ++i) {
    const double q = initial_state(*plain.model).q[static_cast<Eigen::Index>(i)];
    bounds[plain.model->dofs[i].name] = json::array({q - 1, q + 1});
  }
  d["plan"] = {{"bounds", bounds},
               {"control_bounds", json::object()},
               {"goal", {{"body", "box"}, {"center", {0, 0, 0}}, {"tolerance", {1, 1, 1}}}}};
  const std::string e = error_of(d);
  EXPECT_NE(e.find("plan: the scene has no velocity-controlled joint to plan with"), std::string::npos) << e;
}

TEST(PlanSpec, ABoundedThetaIsChecked) {
  json d = example("plan_pivot.json");
  d["plan"]["bounds"]["box.theta"] = json::array({0.1, 1.0});
  EXPECT_NE(error_of(d).find("plan.bounds.box.theta: the initial value 0 lies outside [0.1, 1]"), std::string::npos)
      << error_of(d);
}

}  // namespace
}  // namespace qs::plan_spec_test

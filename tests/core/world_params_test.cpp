// WorldParams (quasistep/core/world_params.hpp): one world's values beside the immutable Model, and the
// step pipeline (quasistep/core/stepper.hpp) that reads h from it once and integrates time once.
#include "quasistep/core/world_params.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/bitwise.hpp"
#include "tests/support/model_parameters.hpp"

namespace qs::world_params_test {
namespace {

Scene load(const char* rel) { return load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/" + rel); }
using test::same_bits;

TEST(WorldParams, HoldsTheScenesValuesAndSetsEachKind) {
  const Scene s = load("examples/anitescu_grasp.json");
  const Model& m = *s.model;
  WorldParams p(m);
  EXPECT_EQ(p.h, m.step.h);
  ASSERT_EQ(p.pair_friction.size(), m.pairs.size());
  for (size_t k = 0; k < m.pairs.size(); ++k) EXPECT_EQ(p.pair_friction[k], m.pairs[k].friction);
  for (size_t b = 0; b < m.bodies.size(); ++b) {
    EXPECT_EQ(p.body_mass[b], m.bodies[b].mass);
    EXPECT_EQ(p.body_pose[b], m.bodies[b].pose);
    EXPECT_EQ(p.body_scale[b], 1.0);
  }
  EXPECT_EQ(p.scales(), nullptr);
  ASSERT_EQ(p.joint_gain.size(), static_cast<size_t>(m.n_a));
  EXPECT_FALSE(p.commanded);

  const int cylinder = m.find_body("cylinder"), ground = m.find_body("ground");
  p.set(m, resolve_parameter(m, "bodies.cylinder.mass", "t"), 2.5);
  p.set(m, resolve_parameter(m, "bodies.ground.pose.y", "t"), -0.01);
  p.set(m, resolve_parameter(m, "pairs.ground/cylinder.friction", "t"), 0.9);
  p.set(m, resolve_parameter(m, "joints.x_l.stiffness", "t"), 123.0);
  p.set(m, resolve_parameter(m, "bodies.cylinder.pose.x", "t"), 0.3);  // a DOF's start: not a WorldParams value
  EXPECT_EQ(p.body_mass[cylinder], 2.5);
  EXPECT_EQ(p.body_pose[ground][1], -0.01);
  EXPECT_EQ(p.body_pose[cylinder][0], m.bodies[cylinder].pose[0]);
  const ParameterRef friction = resolve_parameter(m, "pairs.ground/cylinder.friction", "t");
  for (int k : friction.pairs) EXPECT_EQ(p.pair_friction[k], 0.9);
  EXPECT_EQ(p.joint_gain[0], 123.0);
  p.set(m, resolve_parameter(m, "bodies.cylinder.scale", "t"), 1.1);
  ASSERT_NE(p.scales(), nullptr);
  EXPECT_EQ(p.scales()[cylinder], 1.1);
  p.set(m, resolve_parameter(m, "bodies.cylinder.scale", "t"), 1.0);
  EXPECT_EQ(p.scales(), nullptr) << "every body at its scene size again";

  // Back to the scene's values (without allocating: tests/core/allocation_free_test.cpp).
  p.reset(m);
  EXPECT_EQ(p.body_mass[cylinder], m.bodies[cylinder].mass);
  EXPECT_EQ(p.body_pose[ground], m.bodies[ground].pose);
  EXPECT_EQ(p.joint_gain[0], (*formulation_params<AnitescuQpParams>(m).stiffness_Ka)[0]);
}

const char* const kExamples[] = {"examples/pang_tedrake_gripper.json", "examples/pang_tedrake_grasp.json",
                                 "examples/anitescu_grasp.json",      "examples/anitescu_box_push.json",
                                 "examples/halm_posa_push.json",      "examples/ecp_box_tip.json"};

TEST(StepPipeline, TheScenesParametersGiveTheSameStepAsStepWithoutThem) {
  for (const char* rel : kExamples) {
    const Scene s = load(rel);
    const Model& m = *s.model;
    const auto one = make_stepper(m), two = make_stepper(m);
    State a = initial_state(m), b = a;
    const WorldParams p(m);
    for (int k = 0; k < 5; ++k) {
      ASSERT_EQ(one->step(m, a), Status::solved) << rel << " step " << k;
      ASSERT_EQ(two->step(m, p, b), Status::solved) << rel << " step " << k;
    }
    EXPECT_EQ(a.step, 5) << rel;
    EXPECT_EQ(b.step, 5) << rel;
    EXPECT_TRUE(same_bits(a.t, b.t)) << rel;
    for (int i = 0; i < a.q.size(); ++i) EXPECT_TRUE(same_bits(a.q[i], b.q[i])) << rel;
  }
}

TEST(StepPipeline, HComesFromTheWorldsParametersAndTimeAdvancesByIt) {
  for (const char* rel : kExamples) {
    const Scene s = load(rel);
    Model doubled = *s.model;  // the scene compiled with step.h = 2 h
    doubled.step.h = 2 * s.model->step.h;
    WorldParams p(*s.model);
    p.h = doubled.step.h;
    const auto one = make_stepper(*s.model), two = make_stepper(doubled);
    State a = initial_state(*s.model), b = a;
    for (int k = 0; k < 3; ++k) {
      ASSERT_EQ(one->step(*s.model, p, a), Status::solved) << rel << " step " << k;
      ASSERT_EQ(two->step(doubled, b), Status::solved) << rel << " step " << k;
    }
    EXPECT_TRUE(same_bits(a.t, 3 * p.h) || std::abs(a.t - 3 * p.h) < 1e-15) << rel;
    EXPECT_TRUE(same_bits(a.t, b.t)) << rel;
    for (int i = 0; i < a.q.size(); ++i) EXPECT_TRUE(same_bits(a.q[i], b.q[i])) << rel;
  }
}

TEST(StepPipeline, ACommandVectorOfTheWrongSizeIsBadInputAndLeavesTheStateAlone) {
  for (const char* rel : kExamples) {
    const Scene s = load(rel);
    const Model& m = *s.model;
    const auto stepper = make_stepper(m);
    const State start = initial_state(m);
    for (int size : {m.n_a + 1, m.n_a == 0 ? 2 : m.n_a - 1}) {
      WorldParams p(m);
      p.commanded = true;
      p.command.assign(static_cast<std::size_t>(size), 0.0);
      State x = start;
      EXPECT_EQ(stepper->step(m, p, x), Status::bad_input) << rel << " size " << size;
      EXPECT_EQ(stepper->report().detail, "WorldParams::command has " + std::to_string(size) + " entries; the model has " +
                                              std::to_string(m.n_a) + " velocity-controlled joints (command_names)");
      EXPECT_EQ(x.step, 0) << rel;
      for (int i = 0; i < x.q.size(); ++i) EXPECT_TRUE(same_bits(x.q[i], start.q[i])) << rel;
    }
  }
}

TEST(StepPipeline, AnHThatIsNotAPositiveNumberIsBadInputAndLeavesTheStateAlone) {
  for (const char* rel : kExamples) {
    const Scene s = load(rel);
    const Model& m = *s.model;
    const auto stepper = make_stepper(m);
    const State start = initial_state(m);
    for (double h : {0.0, -0.01, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
      WorldParams p(m);
      p.h = h;
      State x = start;
      EXPECT_EQ(stepper->step(m, p, x), Status::bad_input) << rel << " h " << h;
      EXPECT_EQ(stepper->report().status, Status::bad_input) << rel;
      EXPECT_NE(stepper->report().detail.find("step.h must be a finite number > 0"), std::string::npos)
          << stepper->report().detail;
      EXPECT_EQ(x.step, 0) << rel;
      EXPECT_EQ(x.t, start.t) << rel;
      for (int i = 0; i < x.q.size(); ++i) EXPECT_TRUE(same_bits(x.q[i], start.q[i])) << rel;
    }
  }
}

TEST(StepPipeline, CommandsInTheParametersReplaceTheSchedules) {
  // A world's commands held over the step equal constant schedules of the same values.
  const Scene s = load("examples/pang_tedrake_gripper.json");
  const Model& m = *s.model;
  Model constant = m;
  WorldParams p(m);
  p.commanded = true;
  for (int a = 0; a < m.n_a; ++a) {
    p.command[a] = 0.01 * (a + 1);
    constant.joints[m.dofs[m.n_u + a].index].command.set_constant(p.command[a]);
  }
  const auto one = make_stepper(m), two = make_stepper(constant);
  State x = initial_state(m), y = x;
  for (int k = 0; k < 4; ++k) {
    ASSERT_EQ(one->step(m, p, x), Status::solved);
    ASSERT_EQ(two->step(constant, y), Status::solved);
  }
  for (int i = 0; i < x.q.size(); ++i) EXPECT_TRUE(same_bits(x.q[i], y.q[i]));
  // and the joints really moved by the commanded velocity (Trinkle: q_a += h u exactly).
  EXPECT_NEAR(x.q[m.n_u + 0] - initial_state(m).q[m.n_u + 0], 4 * m.step.h * p.command[0], 1e-15);
}

}  // namespace
}  // namespace qs::world_params_test

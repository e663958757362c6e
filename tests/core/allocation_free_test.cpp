// The per-step paths of core/ allocate nothing once their workspace exists.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/contacts.hpp"
#include "core/halm_posa_lcp.hpp"
#include "core/scene.hpp"
#include "core/trinkle_lcp.hpp"
#include "tests/support/allocation_counter.hpp"

namespace qs {
namespace {

TEST(AllocationCounter, SeesAllocations) {
  test::CountAllocations guard;
  auto v = std::make_unique<std::vector<double>>(100);
  Eigen::VectorXd x(50);
  EXPECT_GE(guard.count(), 3);  // the vector object, its buffer, Eigen's buffer
}

TEST(AllocationFree, ContactEvaluationAndExternalForce) {
  for (const char* rel : {"examples/pang_tedrake_gripper.json", "tests/scenes/peg_in_slot.json",
                          "tests/scenes/two_link_arms.json", "tests/scenes/two_finger_push.json"}) {
    const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/" + rel);
    const Model& m = *scene.model;
    ContactWorkspace ws(m);
    Eigen::VectorXd q = initial_state(m).q;
    std::vector<double> tau(m.n_q());
    test::CountAllocations guard;
    for (int i = 0; i < 10; ++i) {
      q[0] += 1e-3;
      ws.evaluate(m, q.data());
      generalized_external_force(m, ws.body_pose.data(), ws.joint_frame.data(), 0.01 * i, tau.data());
      for (const Joint& j : m.joints) tau[0] += j.command(0.01 * i);
    }
    EXPECT_EQ(guard.count(), 0) << rel;
  }
}

TEST(AllocationFree, TrinkleLcpStep) {
  const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/pang_tedrake_gripper.json");
  const Model& m = *scene.model;
  State s = initial_state(m);
  TrinkleLcp stepper(m);
  test::CountAllocations guard;
  for (int l = 0; l < 60; ++l) ASSERT_EQ(stepper.step(m, s), Status::solved);
  EXPECT_EQ(guard.count(), 0);
}

TEST(AllocationFree, HalmPosaLcpStepWithRelinearisation) {
  // The wall example exercises contact changes, the squeeze and the roll; relinearisation
  // exercises the repeated solves.
  const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/halm_posa_wall.json");
  Model m = *scene.model;
  m.params.relinearize_iterations = 2;
  State s = initial_state(m);
  HalmPosaLcp stepper(m);
  test::CountAllocations guard;
  for (int l = 0; l < m.step.steps; ++l) ASSERT_EQ(stepper.step(m, s), Status::solved);
  EXPECT_EQ(guard.count(), 0);
}

}  // namespace
}  // namespace qs

// Halm & Posa 2018, sec. 6.3 (Fig. 5): four two-link arms pinch a square on a table, each arm
// with its own velocity-feedback gain (bench/fidelity/scenes/halm_posa_pinch.json, the scene
// the full-dynamics comparison of docs/fidelity.md uses). Under perfect velocity control the
// pinch has no solution; with finite gains every step solves and the square moves toward the
// weaker arms and turns, as the paper's does ("causing the object to move in the +y_W
// direction and spin in response to the pinch"): the unequal gains move it, the pinwheel of
// the arms' elbows turns it.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/scene.hpp"
#include "tests/support/example_json.hpp"
#include "tests/support/halm_posa_checks.hpp"

namespace qs::halm_posa_pinch_test {
namespace {

using nlohmann::json;

json pinch_json() { return test::source_json("bench/fidelity/scenes/halm_posa_pinch.json"); }

TEST(HalmPosaPinch, HasNoPerfectVelocitySolution) {
  const Scene scene = parse_scene(test::perfect_velocity(pinch_json()).dump());
  const Model& m = *scene.model;
  HalmPosaLcp stepper(m);
  State s = initial_state(m);
  EXPECT_EQ(stepper.step(m, s), Status::infeasible) << stepper.report().detail;
  EXPECT_EQ(s.step, 0);
}

TEST(HalmPosaPinch, EveryFiniteGainStepIsAVerifiedSolution) {
  const test::HalmPosaRollout r = test::halm_posa_rollout(pinch_json());
  ASSERT_EQ(r.steps_solved, 80) << to_string(r.last) << ": " << r.detail;
  EXPECT_LE(r.worst_violation, kLcpTolerance);
  EXPECT_GE(r.worst_phi, -1e-6);
}

TEST(HalmPosaPinch, TheSquareMovesTowardTheWeakerArmsAndTurns) {
  const test::HalmPosaRollout r = test::halm_posa_rollout(pinch_json());
  ASSERT_EQ(r.steps_solved, 80);
  const Eigen::Vector3d end = r.object.back();
  // Bottom (gain 2.0) beats top (1.4): up; right (1.1) beats left (1.0): a little left.
  EXPECT_GT(end.y(), 0.0);
  EXPECT_LT(end.x(), 0.0);
  EXPECT_LT(std::abs(end.x()), end.y());
  // The pinwheel of elbows turns it counter-clockwise.
  EXPECT_GT(end.z(), 0.1);
}

// At small steps the tips need several steps to reach the faces: the first steps' LCPs have
// every contact open and their tangential rows tied by symmetry. Lemke, on the data scaled
// to unit size, solves them; the answer is the open-contact one (no impulse). (When Lemke
// failed on them, the stepper took that answer itself: the open-contact path, which stays
// as the fallback.)
TEST(HalmPosaPinch, SmallStepsCloseTheGapsAndGrip) {
  json s = pinch_json();
  s["step"]["h"] = 0.0025;
  const test::HalmPosaRollout r = test::halm_posa_rollout(s, 40);  // 0.1 s: the tips touch by step 8
  ASSERT_EQ(r.steps_solved, 40) << to_string(r.last) << ": " << r.detail;
  EXPECT_LE(r.worst_violation, kLcpTolerance);
  EXPECT_GE(r.worst_phi, -1e-6);
  EXPECT_GT(r.object.back().z(), 0.0);  // gripped and turning
}

// The first small step carries no impulse and solves its LCP; at the scene's own step the
// tips close in one step.
TEST(HalmPosaPinch, OpenContactStepsCarryNoImpulse) {
  json s = pinch_json();
  s["step"]["h"] = 0.0025;
  const Scene scene = parse_scene(s.dump());
  const Model& m = *scene.model;
  HalmPosaLcp stepper(m);
  State st = initial_state(m);
  ASSERT_EQ(stepper.step(m, st), Status::solved) << stepper.report().detail;
  const Eigen::VectorXd z = stepper.result().z;
  const auto w = stepper.lcp_vector();
  const Eigen::Index k = w.size() / 4;
  // No impulse (to rounding), in the scene's units (the LCP holds them times lcp_unit()).
  EXPECT_LE(z.head(3 * k).cwiseAbs().maxCoeff() / stepper.lcp_unit(), 1e-15);
  EXPECT_LE(test::lcp_violation(stepper), kLcpTolerance);
  const Scene own = parse_scene(pinch_json().dump());
  HalmPosaLcp s2(*own.model);
  State st2 = initial_state(*own.model);
  ASSERT_EQ(s2.step(*own.model, st2), Status::solved);
  EXPECT_GT(s2.result().z.head(3 * k).cwiseAbs().maxCoeff(), 0.0);
}

// The different gains move the square; the arms' pinwheel turns it, gains or not.
TEST(HalmPosaPinch, EqualGainsTurnTheSquareInPlace) {
  json s = pinch_json();
  s["model"].erase("B");  // B = I: every arm servoed alike
  const test::HalmPosaRollout r = test::halm_posa_rollout(s);
  ASSERT_EQ(r.steps_solved, 80) << r.detail;
  EXPECT_LE(r.object.back().head<2>().cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_GT(r.object.back().z(), 0.1);
}

}  // namespace
}  // namespace qs::halm_posa_pinch_test

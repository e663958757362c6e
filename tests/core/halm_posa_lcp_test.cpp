// Halm & Posa's time-stepping LCP and its perfect-velocity special case on the Halm & Posa 2018
// examples (sec. 6.1, Figs. 3-4): every step is checked against the LCP it posed, the
// finite-gain trajectory converges to the perfect-velocity one as c -> 0 (Theorem 4,
// Fig. 3 bottom), and the wall jams the perfect-velocity model with a proof while the
// finite-gain model runs through (Fig. 4 top).
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "quasistep/core/scene.hpp"
#include "tests/support/example_json.hpp"
#include "tests/support/halm_posa_checks.hpp"
#include "tests/support/lcp_check.hpp"

namespace qs::halm_posa_lcp_test {
namespace {

using nlohmann::json;
using test::lcp_violation;
using test::perfect_velocity;

json example(const std::string& name) { return test::example_json(name + ".json"); }

json with_c(json s, double c) {
  s["model"]["c"] = c;
  return s;
}

using Rollout = test::HalmPosaRollout;
using test::halm_posa_rollout;

Eigen::Vector3d object_pose(const State& s) { return s.q.head<3>(); }

/// The scene with A and B both times 2^k.
json with_common_scale(json s, int k) {
  for (const char* key : {"A", "B"}) {
    json& x = s["model"][key];
    if (x.is_number()) {
      x = std::ldexp(x.get<double>(), k);
    } else {
      for (json& row : x)
        for (json& v : row) v = std::ldexp(v.get<double>(), k);
    }
  }
  return s;
}

TEST(HalmPosaLcp, ACommonScaleOfAAndBTakesTheSameStepsBitForBit) {
  // Only the ratio of A to cB moves the object: a factor common to both is absorbed by the
  // impulses (k of Halm & Posa 2018, eq. (10)). The step holds both in the LCP's unit
  // (halm_posa_lcp_unit), so the LCP is the same at any common scale and the impulses are
  // reported in the scene's units. Before, the friction rows (eq. (36), entries of one) sat
  // beside rows 2^20 larger: at 2^20 a step was `solved` with friction and no normal impulse
  // (the disk moved 0.54 mm with the fingers 2.2 mm away), at 2^-80 one was `infeasible`.
  // Both paths: the fixed-layout template (step) and the compacted LCP (step_fallback).
  for (const char* name : {"halm_posa_push", "halm_posa_wall", "halm_posa_peg"}) {
    const json base = example(name);
    const Scene a_scene = parse_scene(base.dump());
    for (int k : {-80, -40, -20, -3, 5, 20, 40}) {
      const Scene b_scene = parse_scene(with_common_scale(base, k).dump());
      for (bool fallback : {false, true}) {
        SCOPED_TRACE(std::string(name) + " 2^" + std::to_string(k) + (fallback ? " fallback" : " template"));
        const Model &ma = *a_scene.model, &mb = *b_scene.model;
        HalmPosaLcp sa(ma), sb(mb);
        State xa = initial_state(ma), xb = initial_state(mb);
        const WorldParams pa(ma), pb(mb);
        int contact_steps = 0;
        for (int l = 1; l <= 60; ++l) {
          const Status ra = fallback ? sa.step_fallback(ma, pa, xa) : sa.step(ma, pa, xa);
          const Status rb = fallback ? sb.step_fallback(mb, pb, xb) : sb.step(mb, pb, xb);
          ASSERT_EQ(ra, rb) << "step " << l;
          if (ra != Status::solved) break;
          ASSERT_EQ(xa.q, xb.q) << "step " << l;
          for (size_t i = 0; i < sa.normal_impulse().size(); ++i) {
            // Impulses in units of 1 / A: times 2^-k, exactly.
            EXPECT_EQ(std::ldexp(sa.normal_impulse()[i], -k), sb.normal_impulse()[i]) << "step " << l;
            EXPECT_EQ(std::ldexp(sa.tangent_impulse()[i], -k), sb.tangent_impulse()[i]) << "step " << l;
          }
          contact_steps += sa.report().contacts > 0;
        }
        EXPECT_GT(contact_steps, 0);
      }
    }
  }
}

TEST(HalmPosaLcp, EveryPushStepIsAVerifiedSolution) {
  for (const char* name : {"halm_posa_push", "halm_posa_push_asymmetric", "halm_posa_push_semicircular"}) {
    SCOPED_TRACE(name);
    const Rollout r = halm_posa_rollout(example(name));
    EXPECT_EQ(r.steps_solved, 400);
    EXPECT_LE(r.worst_violation, 1e-9);
    EXPECT_GE(r.worst_phi, -1e-4);  // linearising a disk of radius 1 m over 2.5 mm steps
  }
}

TEST(HalmPosaLcp, SymmetricPushMovesTheDiskStraightUp) {
  const Rollout r = halm_posa_rollout(example("halm_posa_push"));
  const Eigen::Vector3d p = object_pose(r.final_state);
  // The fingers rise 1 m, the first 5 mm to reach the disk; with c = 0.01 the disk follows
  // to within the feedback lag. (Symmetric up to rounding: the order of the contacts in
  // the LCP breaks the tie between equivalent solutions at the 1e-6 level.)
  EXPECT_NEAR(p.x(), 0.0, 1e-6);
  EXPECT_NEAR(p.z(), 0.0, 1e-5);
  EXPECT_GT(p.y(), 0.95);
  EXPECT_LT(p.y(), 0.995);
}

TEST(HalmPosaLcp, PerfectVelocityPushIsFeasibleAndStraight) {
  const Rollout r = halm_posa_rollout(perfect_velocity(example("halm_posa_push")));
  ASSERT_EQ(r.steps_solved, 400);
  const Eigen::Vector3d p = object_pose(r.final_state);
  EXPECT_NEAR(p.x(), 0.0, 1e-9);
  EXPECT_NEAR(p.y(), 0.995, 1e-6);  // with the fingers, once they have closed the 5 mm gap
}

TEST(HalmPosaLcp, FiniteGainConvergesToPerfectVelocityAsCGoesToZero) {
  // Halm & Posa 2018, Theorem 4 and Fig. 3 bottom: e(c) = |q_o(10 s) - q_o,inf(10 s)| against c on a
  // log-log plot is roughly a line for high gains. Here it is a line of slope 1.
  for (const char* name : {"halm_posa_push", "halm_posa_push_asymmetric", "halm_posa_push_semicircular"}) {
    SCOPED_TRACE(name);
    const json s = example(name);
    const Rollout reference = halm_posa_rollout(perfect_velocity(s));
    ASSERT_EQ(reference.steps_solved, 400);
    const Eigen::Vector3d p_inf = object_pose(reference.final_state);
    std::vector<double> error;
    for (const double c : {1e-1, 1e-2, 1e-3, 1e-4}) {
      const Rollout r = halm_posa_rollout(with_c(s, c));
      ASSERT_EQ(r.steps_solved, 400) << c;
      error.push_back((object_pose(r.final_state) - p_inf).norm());
    }
    for (size_t i = 1; i < error.size(); ++i) EXPECT_LT(error[i], error[i - 1]);
    // The slope between c = 1e-3 and 1e-4: log10(e_3 / e_4).
    const double slope = std::log10(error[2] / error[3]);
    EXPECT_GT(slope, 0.8);
    EXPECT_LT(slope, 1.2);
    EXPECT_LT(error[3], 1e-4);
  }
}

TEST(HalmPosaLcp, WallJamsThePerfectVelocityModelWithAProof) {
  // Halm & Posa 2018, Fig. 4 top: "the perfect velocity tracking program terminates at the first
  // time-step at which the squeezing occurs".
  const json s = perfect_velocity(example("halm_posa_wall"));
  const Scene scene = parse_scene(s.dump());
  const Model& m = *scene.model;
  HalmPosaLcp stepper(m);
  State st = initial_state(m);
  const double advance = m.step.h * 0.1;  // the fingers' upward travel per step (m)
  int wall_slot = -1;
  for (int i = 0; i < m.n_slots(); ++i)
    if (m.pair_name(m.slots[i].pair) == "wall/disk") wall_slot = i;
  ASSERT_GE(wall_slot, 0);
  int failed = 0;
  for (int l = 1; l <= m.step.steps && !failed; ++l) {
    const Status status = stepper.step(m, st);
    // Every step before the failure had room to move the disk up by the fingers' travel.
    if (status == Status::solved) {
      ASSERT_GE(stepper.phi()[wall_slot], advance - 1e-12) << l;
      continue;
    }
    failed = l;
    EXPECT_EQ(status, Status::infeasible);
    // The squeeze: at the start of the failed step the wall is closer than one step's travel.
    EXPECT_LT(stepper.phi()[wall_slot], advance);
    const std::string& why = stepper.report().detail;
    EXPECT_NE(why.find("non-penetrating"), std::string::npos) << why;
    EXPECT_NE(why.find("wall/disk"), std::string::npos) << why;
    EXPECT_NE(why.find("finger1/disk"), std::string::npos) << why;
    EXPECT_NE(why.find("finger2/disk"), std::string::npos) << why;
    EXPECT_EQ(st.step, l - 1);  // the state is left at the last solved step
  }
  EXPECT_EQ(failed, 82);  // the disk (0.2 m below the wall, fingers 5 mm below it) at 2.5 mm per step
}

TEST(HalmPosaLcp, AFrictionJamIsProvenByExhaustingTheComplementarityTree) {
  // Pushed diagonally, the disk slides off one finger and jams between the other finger and
  // the wall: a displacement avoiding penetration exists (the LP cannot prove anything),
  // but friction forbids it. Lemke ends on a ray; the enumeration closes every branch.
  json s = perfect_velocity(example("halm_posa_wall"));
  s["commands"] = {{"finger1_x", {{"velocity", 0.1}}}, {"finger1_y", {{"velocity", 0.1}}},
                   {"finger2_x", {{"velocity", 0.1}}}, {"finger2_y", {{"velocity", 0.1}}}};
  const Rollout r = halm_posa_rollout(s);
  EXPECT_EQ(r.steps_solved, 74);
  EXPECT_EQ(r.last, Status::infeasible);
  EXPECT_NE(r.detail.find("closed all"), std::string::npos) << r.detail;
  EXPECT_LE(r.worst_violation, 1e-9);
}

TEST(HalmPosaLcp, WallFiniteGainRunsThroughAndRollsAlongTheWall) {
  const Rollout r = halm_posa_rollout(example("halm_posa_wall"));
  ASSERT_EQ(r.steps_solved, 400) << to_string(r.last) << ": " << r.detail;
  EXPECT_LE(r.worst_violation, 1e-9);
  EXPECT_GE(r.worst_phi, -1e-9);
  const Eigen::Vector3d p = object_pose(r.final_state);
  EXPECT_NEAR(p.y(), -1.0, 1e-6);   // held against the wall (radius 1 m, wall at y = 0)
  EXPECT_GT(p.x(), 0.3);            // moved along it from t = 3 s ...
  EXPECT_NEAR(p.z(), p.x(), 0.01);  // ... rolling: theta = x / R
}

TEST(HalmPosaLcp, RelinearisationMakesTheLinearisedGapTheTrueOne) {
  // Halm & Posa 2018, sec. 5: with r fixed-point iterations the last LCP is linearised about its own
  // predicted end state, so at convergence its end-of-step gap w_N is the true gap there.
  json s = example("halm_posa_push_asymmetric");
  s["step"] = {{"h", 0.5}, {"steps", 20}};
  auto worst_gap_mismatch = [&](int iterations) {
    s["model"]["relinearize"] = iterations;
    const Scene scene = parse_scene(s.dump());
    const Model& m = *scene.model;
    HalmPosaLcp stepper(m);
    ContactWorkspace ws(m);
    State st = initial_state(m);
    double worst = 0;
    for (int l = 1; l <= m.step.steps; ++l) {
      EXPECT_EQ(stepper.step(m, st), Status::solved);
      EXPECT_LE(lcp_violation(stepper), 1e-9);
      ws.evaluate(m, st.q.data());
      int k = 0;  // LCP contacts are the active slots in slot order
      for (int i = 0; i < m.n_slots(); ++i)
        if (stepper.active()[i]) worst = std::max(worst, std::abs(ws.frame[i].phi - stepper.result().w[k++]));
    }
    return worst;
  };
  const double plain = worst_gap_mismatch(0), relinearised = worst_gap_mismatch(10);
  EXPECT_GT(plain, 1e-4);  // 5 cm steps around a disk of radius 1 m
  EXPECT_LT(relinearised, plain * 1e-3);
}

TEST(HalmPosaLcp, NoContactMovesOnlyTheFingers) {
  json s = example("halm_posa_push");
  s["commands"] = {{"finger1_y", {{"velocity", -0.1}}}, {"finger2_y", {{"velocity", -0.1}}}};  // away from the disk
  const Rollout r = halm_posa_rollout(s, 10);
  ASSERT_EQ(r.steps_solved, 10);
  EXPECT_LT(object_pose(r.final_state).norm(), 1e-15);
  EXPECT_NEAR(r.final_state.q[4], -0.871025 - 0.025, 1e-12);  // finger1_y moved h * 0.1 * 10
}

TEST(HalmPosaLcp, TooManyActiveContactsIsBadInputNamingTheCause) {
  // 17 point fingers around the disk: more contacts than one step's LCP holds.
  json s = example("halm_posa_push");
  json bodies = json::array({s["bodies"][0]});
  json joints = json::array(), pairs = json::array();
  for (int i = 0; i < HalmPosaLcp::kMaxContacts + 1; ++i) {
    const double a = 2 * 3.14159265358979 * i / (HalmPosaLcp::kMaxContacts + 1);
    // (appended, not "f" + ...: GCC 12 warns falsely on that form, -Wrestrict)
    std::string f = "f";
    f += std::to_string(i);
    bodies.push_back({{"name", f}, {"kind", "linked"}, {"shapes", {{{"type", "point"}}}}});
    joints.push_back({{"name", f + "_x"}, {"type", "prismatic"}, {"parent", "world"}, {"child", f},
                      {"origin", {1.01 * std::cos(a), 1.01 * std::sin(a), 0}}});
    pairs.push_back({{"bodies", {f, "disk"}}});
  }
  s["bodies"] = bodies;
  s["joints"] = joints;
  s["contacts"]["pairs"] = pairs;
  s["commands"] = json::object();
  const Rollout r = halm_posa_rollout(s, 1);
  EXPECT_EQ(r.last, Status::bad_input);
  EXPECT_NE(r.detail.find("contact_margin"), std::string::npos) << r.detail;
}

}  // namespace
}  // namespace qs::halm_posa_lcp_test

// A step is accepted by tests in its own units: at a time step of 1e-11 s the load h m g of
// the gripper examples is 1e-10 N s, far below any absolute tolerance, and a step whose
// ground carried nothing was accepted as `solved`. Now every solved step must carry the
// weight on the ground (independently: the ground's normal impulse against m g h, while the
// fingers are still apart), or the step is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/ecp_step_checks.hpp"
#include "tests/support/example_json.hpp"
#include "tests/support/halm_posa_checks.hpp"
#include "tests/support/lcp_verify.hpp"

namespace qs::step_scale_test {
namespace {

/// Steps `file` at step h for `steps` steps; every solved step must have the ground's normal
/// impulse equal to m g h (the grippers' cylinder, 1 kg, rests on the ground; the fingers
/// start 0.02 m away and close at 0.1 m/s, so they cannot touch it in these steps; the
/// pushed box, 0.5 kg, is pushed sideways).
/// Every step with h >= solved_from must be taken.
void expect_ground_carries_the_weight(const std::string& file, double h, int steps, double mass = 1.0,
                                     double solved_from = 1e-3) {
  nlohmann::json j = test::example_json(file);
  j["step"]["h"] = h;
  j["step"]["steps"] = steps;
  const Scene scene = parse_scene(j.dump());
  const Model& m = *scene.model;
  auto stepper = make_stepper(m);
  ASSERT_TRUE(stepper);
  State s = initial_state(m);
  const double weight = mass * 9.81 * h;
  int solved = 0;
  for (int l = 1; l <= steps; ++l) {
    const Status st = stepper->step(m, s);
    if (st != Status::solved) {
      // Refused, never wrong: the shared status for lost precision.
      EXPECT_EQ(st, Status::numerical_failure) << file << " h " << h << " step " << l << ": "
                                               << stepper->report().detail;
      break;
    }
    ++solved;
    double ground = 0;
    for (size_t i = 0; i < m.slots.size(); ++i)
      if (m.pair_name(m.slots[i].pair).find("ground") != std::string::npos) ground += stepper->normal_impulse()[i];
    EXPECT_NEAR(ground, weight, 1e-6 * weight) << file << " h " << h << " step " << l;
  }
  // At unit-scale h (and down to solved_from) the steps are all taken.
  if (h >= solved_from) {
    EXPECT_EQ(solved, steps) << file;
  }
}

TEST(StepScale, TrinkleGripperCarriesTheWeightOrRefusesAtAnyStep) {
  // Up to h = 5e-2 (three steps close the fingers by 0.015 m of their 0.02 m).
  for (double h : {5e-2, 1e-2, 1e-5, 1e-8, 1e-9, 1e-11, 1e-13})
    expect_ground_carries_the_weight("pang_tedrake_gripper.json", h, 3, 1.0, 1e-9);
}

TEST(StepScale, MiqpGraspCarriesTheWeightOrRefusesAtAnyStep) {
  for (double h : {5e-2, 1e-2, 1e-5, 1e-8, 1e-9, 1e-11, 1e-13})
    expect_ground_carries_the_weight("pang_tedrake_grasp.json", h, 3, 1.0, 1e-9);
}

TEST(StepScale, AnitescuBoxCarriesTheWeightOrRefusesAtAnyStep) {
  // At h = 1e-11 the QP's KKT check (absolute) passed an answer with no ground impulse; the
  // step's force balance, row by row against its own terms, refuses it now.
  for (double h : {1e-1, 1e-2, 1e-5, 1e-8, 1e-9, 1e-11, 1e-13})
    expect_ground_carries_the_weight("anitescu_box_push.json", h, 3, 0.5, 1e-9);
}

TEST(StepScale, HalmPosaStepLcpsAreVerifiedAtAnyStep) {
  // Both Halm & Posa models: finite-gain feedback and perfect velocity tracking.
  // The pusher's LCP has q of order h u (displacements over the step): at h = 1e-11 it is
  // 1e-12 while the fingers are still 4 mm from the disk, inside the contact margin. Those
  // slots are out of the step's reach and stay out of the LCP (docs/steppers.md), so its
  // rows are all of one size. Every solved step's LCP answer must pass the verifier.
  for (bool perfect : {false, true})
  for (double h : {1.0, 2.5e-2, 1e-5, 1e-8, 1e-9, 1e-11, 1e-13}) {
    nlohmann::json j = test::example_json("halm_posa_push.json");
    if (perfect) j = test::perfect_velocity(j);
    j["step"]["h"] = h;
    const Scene scene = parse_scene(j.dump());
    const Model& m = *scene.model;
    HalmPosaLcp stepper(m);
    State s = initial_state(m);
    int solved = 0;
    for (int l = 1; l <= 20; ++l) {
      const Status st = stepper.step(m, s);
      if (st != Status::solved) {
        EXPECT_EQ(st, Status::numerical_failure) << (perfect ? "perfect velocity " : "") << "h " << h << " step " << l << ": " << stepper.report().detail;
        break;
      }
      ++solved;
      if (stepper.result().z.size() == 0) continue;  // no contact in this step
      const test::LcpVerdict v = test::verify_lcp(stepper.lcp_matrix(), stepper.lcp_vector(), stepper.result().z);
      EXPECT_TRUE(v.ok) << (perfect ? "perfect velocity " : "") << "h " << h << " step " << l << ": row " << v.row << " violation " << v.worst
                        << (stepper.report().by_enumeration ? " (by enumeration)" : "");
    }
    EXPECT_EQ(solved, 20) << (perfect ? "perfect velocity " : "") << "h " << h;
    // At h = 1e-11 the fingers move 2e-11 m in 20 steps: still 4 mm away, out of reach.
    if (h <= 1e-11) {
      EXPECT_EQ(stepper.report().contacts, 2);      // inside the margin: reported, impulse 0
      EXPECT_EQ(stepper.report().problem_size, 0);  // out of reach: not in the LCP
    }
  }
}

TEST(StepScale, HalmPosaPushInContactIsVerifiedAtAnyStep) {
  // The fingers start on the disk's edge (y = -sqrt(3)/2 at x = +-0.5) and push up into it:
  // every row of the LCP is then of order h u, 1e-12 at h = 1e-11, where a residual with a
  // floor of 1 accepted any point (the pusher passing through the disk). Every solved
  // step's answer must pass the verifier, and the contacts must push the disk up.
  for (bool perfect : {false, true})
  for (double h : {1.0, 2.5e-2, 1e-5, 1e-8, 1e-9, 1e-11, 1e-13}) {
    nlohmann::json j = test::example_json("halm_posa_push.json");
    if (perfect) j = test::perfect_velocity(j);
    j["step"]["h"] = h;
    for (nlohmann::json& joint : j["joints"])
      if (joint["name"] == "finger1_y" || joint["name"] == "finger2_y") joint["position"] = -std::sqrt(0.75);
    const Scene scene = parse_scene(j.dump());
    const Model& m = *scene.model;
    HalmPosaLcp stepper(m);
    State s = initial_state(m);
    const int disk_y = 1;  // the disk's dofs come first: x, y, theta
    ASSERT_EQ(m.dofs[disk_y].name, "disk.y");
    int solved = 0;
    for (int l = 1; l <= 20; ++l) {
      const double y0 = s.q[disk_y];
      const Status st = stepper.step(m, s);
      if (st != Status::solved) {
        EXPECT_EQ(st, Status::numerical_failure) << (perfect ? "perfect velocity " : "") << "h " << h << " step " << l << ": " << stepper.report().detail;
        break;
      }
      ++solved;
      ASSERT_GT(stepper.result().z.size(), 0) << (perfect ? "perfect velocity " : "") << "h " << h << " step " << l << ": the fingers touch the disk";
      const test::LcpVerdict v = test::verify_lcp(stepper.lcp_matrix(), stepper.lcp_vector(), stepper.result().z);
      EXPECT_TRUE(v.ok) << (perfect ? "perfect velocity " : "") << "h " << h << " step " << l << ": row " << v.row << " violation " << v.worst;
      EXPECT_GT(s.q[disk_y], y0) << (perfect ? "perfect velocity " : "") << "h " << h << " step " << l << ": the disk is pushed up";
    }
    EXPECT_EQ(solved, 20) << (perfect ? "perfect velocity " : "") << "h " << h;
  }
}

TEST(StepScale, EcpStepsBalanceTheirImpulsesAtAnyStep) {
  // The MNCP's natural residual is absolute (1e-10): at h = 1e-11 the box released on its edge
  // fell freely with p_n = 2e-21 N s and friction of 2e-13 N s (its Newton-Euler rows are of
  // order m g h = 1e-10, the friction ellipsoid's of (m g h)^2), and at h = 1e-6 it took
  // friction outside the cone. Every solved step must balance its impulses in its own units
  // (test::ecp_balance_violation, from the reported impulses); a step the stepper cannot
  // solve so is refused as numerical_failure. Steps at h down to `solved_from` are all
  // taken (5 here; 20 measured with `run`): every example to 1e-11 s, the box, the T-bar and
  // the rocking T-bar to 1e-13 s. (Once the T-bars stopped at 1e-6 and the dumbbell at 1e-3:
  // Newton's first point carried friction with no normal impulse, or 8 times mu p_n, whose
  // square the absolute residual does not see, and the re-solve in impulse units diverged
  // from it; now it starts inside the cone and works in velocity units too.)
  const std::vector<std::pair<std::string, double>> files = {{"ecp_box_tip.json", 1e-13},
                                                             {"ecp_desk.json", 1e-11},
                                                             {"ecp_dumbbell.json", 1e-11},
                                                             {"ecp_tbar.json", 1e-13},
                                                             {"ecp_tbar_rocking.json", 1e-13}};
  for (const auto& [file, solved_from] : files) {
    const nlohmann::json base = test::example_json(file);
    const double scene_h = base["step"]["h"];
    for (double h : {1.0, 1e-1, 1e-2, 1e-3, 1e-6, 1e-9, 1e-11, 1e-13}) {
      nlohmann::json j = base;
      j["step"]["h"] = h;
      const Scene scene = parse_scene(j.dump());
      const Model& m = *scene.model;
      EcpNcp stepper(m);
      State s = initial_state(m);
      int solved = 0;
      const int steps = 5;
      for (int l = 1; l <= steps; ++l) {
        const Eigen::VectorXd q0 = s.q;
        const double t0 = s.t;
        const Status st = stepper.step(m, s);
        if (st != Status::solved) {
          // Refused, never wrong: lost precision (the desk and the dumbbell at h = 1e-13), no
          // solution found, or the iteration limit (at h = 0.1 on the rocking bar, whose
          // landings need finer steps).
          EXPECT_TRUE(st == Status::numerical_failure || st == Status::not_found ||
                      (h > scene_h && st == Status::iteration_limit))
              << file << " h " << h << " step " << l << ": " << to_string(st) << ": " << stepper.report().detail;
          break;
        }
        ++solved;
        EXPECT_LE(test::ecp_balance_violation(m, stepper, q0, s.q, t0, h), kForceBalanceTolerance)
            << file << " h " << h << " step " << l << ": p_n " << stepper.p_n() << ", p_t " << stepper.p_t()
            << ", p_o " << stepper.p_o();
      }
      if (h >= solved_from && h <= scene_h) {
        EXPECT_EQ(solved, steps) << file << " h " << h;
      }
    }
  }
}

TEST(StepScale, EveryExampleTakesItsStepsDownToANanosecond) {
  // Every example that steps, at h = 1e-6 and 1e-9 (three steps each): all solved, under
  // each formulation's own acceptance (the tests above check the impulses independently).
  int examples = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(QUASISTEP_SOURCE_DIR) + "/examples")) {
    const std::string file = entry.path().filename().string();
    if (entry.path().extension() != ".json") continue;
    const nlohmann::json base = test::example_json(file);
    if (!base.contains("step")) continue;
    ++examples;
    for (double h : {1e-6, 1e-9}) {
      nlohmann::json j = base;
      j["step"]["h"] = h;
      const Scene scene = parse_scene(j.dump());
      const Model& m = *scene.model;
      auto stepper = make_stepper(m);
      ASSERT_TRUE(stepper) << file;
      State s = initial_state(m);
      for (int l = 1; l <= 3; ++l) {
        const Status st = stepper->step(m, s);
        ASSERT_EQ(st, Status::solved) << file << " h " << h << " step " << l << ": " << stepper->report().detail;
      }
    }
  }
  EXPECT_GE(examples, 20);
}

/// Steps `scene_json` with the scene's h and its joints' scheduled velocities given as
/// commands, and again with h times 2^c and every command times 2^-c (the same displacement
/// per step, in a time unit 2^c times longer), for `steps` steps or until either fails;
/// returns the largest difference of any configuration entry between the two (-1 when a
/// step's status differs) and, in `solved`, the steps both took.
double time_scaled_difference(const nlohmann::json& scene_json, int c, int steps, int& solved) {
  solved = 0;
  const Scene scene = parse_scene(scene_json.dump());
  const Model& m = *scene.model;
  auto a = make_stepper(m), b = make_stepper(m);
  State sa = initial_state(m), sb = initial_state(m);
  WorldParams pa(m), pb(m);
  pa.commanded = pb.commanded = true;
  pa.command.assign(static_cast<size_t>(m.n_a), 0.0);
  pb.command.assign(static_cast<size_t>(m.n_a), 0.0);
  pa.h = m.step.h;
  pb.h = std::ldexp(m.step.h, c);
  double worst = 0;
  for (int l = 0; l < steps; ++l) {
    for (const Joint& j : m.joints)
      if (j.control == Control::velocity) {
        const size_t a_index = static_cast<size_t>(j.dof - m.n_u);
        pa.command[a_index] = j.command(sa.t + 0.5 * m.step.h);
        pb.command[a_index] = std::ldexp(pa.command[a_index], -c);
      }
    const Status x = a->step(m, pa, sa), y = b->step(m, pb, sb);
    if (x != y) return -1;
    if (x != Status::solved) break;
    ++solved;
    for (int i = 0; i < m.n_q(); ++i) worst = std::max(worst, std::abs(sa.q[i] - sb.q[i]));
  }
  return worst;
}

TEST(StepUnits, ALongerTimeUnitTakesTheSameStepsBitForBit) {
  // The time unit scaled by 2^c: h times 2^c, velocities times 2^-c, impulses times 2^c. The
  // quasistatic models' configurations depend on h only through the displacements h u and
  // the impulses' common scale, and their solvers are scale-free (Lemke and the QP scale
  // their problems to unit size by powers of two): the same configurations bit for bit.
  // (The quasi-dynamic Anitescu step and the ECP's dynamics are not time-scale invariant
  // physically: inertia and gravity set a time scale of their own.)
  std::vector<std::pair<std::string, nlohmann::json>> scenes;
  for (const char* f : {"halm_posa_push.json", "halm_posa_wall.json", "halm_posa_peg.json", "pang_tedrake_grasp.json",
                        "anitescu_box_push.json", "plan_pivot.json"})
    scenes.emplace_back(f, test::example_json(f));
  scenes.emplace_back("halm_posa_push.json (perfect velocity)",
                      test::perfect_velocity(test::example_json("halm_posa_push.json")));
  // Halm & Posa's LCP is posed in displacements alone: any power of two. The others pose
  // impulses (m g h) beside displacements: 2^-20 ... 2^20 (h from 1e-7 s to 1e5 s here);
  // at h = 1e-13 s the MIQP and the QP refuse their steps (numerical_failure: the force
  // balance in its own units), and at 1e10 s the box push's QP takes another of its optima.
  for (const auto& [name, j] : scenes) {
    const bool displacements = name.rfind("halm_posa", 0) == 0;
    for (int c : {-40, -20, -3, 5, 20, 40}) {
      if (!displacements && std::abs(c) > 20) continue;
      int solved = 0;
      EXPECT_EQ(time_scaled_difference(j, c, 20, solved), 0.0) << name << " 2^" << c;
      EXPECT_EQ(solved, 20) << name << " 2^" << c;
    }
  }
}

TEST(StepUnits, TrinklesStepInALongerTimeUnitDiffersOnlyByRounding) {
  // Trinkle's LCP holds impulses (times 2^c) beside displacements (unchanged): its rows
  // scale by different powers of two, and Lemke's scaling is one factor for the whole
  // problem, so the pivots round differently; the configurations agree to rounding
  // (measured over 20 steps: 3.3e-11 m at 2^20, where the two kinds of rows are 2^20 apart).
  const nlohmann::json j = test::example_json("pang_tedrake_gripper.json");
  for (int c : {-20, -3, 5, 20}) {
    int solved = 0;
    const double d = time_scaled_difference(j, c, 20, solved);
    EXPECT_EQ(solved, 20) << "2^" << c;
    EXPECT_GE(d, 0.0) << "2^" << c << ": a status differs";
    EXPECT_LE(d, 1e-9) << "2^" << c;
  }
}

TEST(StepScale, RelativeBalanceJudgesTheStepInItsOwnUnits) {
  RelativeBalance none;
  none.row(0.0, 0.0);  // no terms at all
  EXPECT_TRUE(none.accepted());
  RelativeBalance weightless;
  weightless.row(9.81e-11, 9.81e-11);  // the load alone: nothing balances it
  weightless.row(0.0, 0.0);
  EXPECT_FALSE(weightless.accepted());
  EXPECT_EQ(weightless.worst(), 1.0);
  RelativeBalance balanced;
  balanced.row(1e-26, 2 * 9.81e-11);  // rounding of two equal and opposite terms
  balanced.row(4e-27, 4e-27);         // a row that carries nothing but rounding
  EXPECT_TRUE(balanced.accepted());
  RelativeBalance nan;
  nan.row(std::nan(""), 1.0);
  nan.row(0.0, 1.0);
  EXPECT_FALSE(nan.accepted());
}

}  // namespace
}  // namespace qs::step_scale_test

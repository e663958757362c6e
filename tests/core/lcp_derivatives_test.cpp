// The step derivatives of the complementarity steppers of a vertical world (quasistep/core/derivatives.hpp):
// Trinkle's LCP (trinkle_lcp), against central
// differences of the exact step on states sampled around every example's trajectory, as
// tests/core/derivatives_test.cpp checks the Anitescu step; the problem data's derivatives;
// analytic cases; no NaN or Inf over random states; bitwise repeatability.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "quasistep/core/contact_step_data.hpp"
#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/formulations/trinkle_lcp/trinkle_lcp.hpp"
#include "quasistep/core/jet.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/derivative_checks.hpp"
#include "tests/support/example_json.hpp"

namespace qs::lcp_derivatives_test {
namespace {

using nlohmann::json;
using test::Campaign;
using test::commanded_params;
using test::trajectory;

json example(const std::string& name) { return test::example_json(name + ".json"); }

/// Trinkle's step as the stepper takes it: Lemke's answer is a basis solve, exact to rounding.
bool trinkle_step(Stepper& stepper, const Model& m, const WorldParams& p, State& s) {
  return stepper.step(m, p, s) == Status::solved;
}

// ---- the problem data's derivatives --------------------------------------------------

TEST(Derivatives, JetDerivativesOfTheContactStepDataAreItsCentralDifferences) {
  // pose_contact_step_data at T = Jet against central differences of its T = double
  // evaluation, on states around the examples' trajectories.
  for (const char* name : {"pang_tedrake_gripper", "pang_tedrake_box_36"}) {
    SCOPED_TRACE(name);
    const Scene scene = parse_scene(example(name).dump());
    const Model& m = *scene.model;
    const std::vector<State> rows = trajectory(m);
    const int n = m.n_q();
    const WorldParams p(m);
    ContactStepData<Jet> jet(m);
    std::vector<Jet> qj(n);
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    double worst = 0;
    for (size_t r = 0; r < rows.size(); r += 5) {
      Eigen::VectorXd q = rows[r].q;
      for (int e = 0; e < n; ++e) q[e] += 1e-3 * unit(rng);
      const double t = rows[r].t + 0.5 * m.step.h;
      for (int first = 0; first < n; first += kJetWidth) {
        for (int e = 0; e < n; ++e) qj[e] = e >= first && e - first < kJetWidth ? Jet::variable(q[e], e - first) : Jet(q[e]);
        pose_contact_step_data<Jet>(m, p, qj.data(), t, jet);
        for (int k = 0; k < kJetWidth && first + k < n; ++k) {
          // Richardson's extrapolation of central differences at delta and delta / 2 (error
          // O(delta^4)): the box's pads have corners 0.7 mm from its chamfers, where a normal
          // turns at 1 / (0.7 mm) and a plain central difference errs by 1e-4.
          const double delta = 1e-6;
          const auto at = [&](double step, ContactStepData<double>& out) {
            Eigen::VectorXd qs = q;
            qs[first + k] += step;
            pose_contact_step_data<double>(m, p, qs.data(), t, out);
          };
          std::vector<ContactStepData<double>> ends(4, ContactStepData<double>(m));
          at(delta, ends[0]);
          at(-delta, ends[1]);
          at(0.5 * delta, ends[2]);
          at(-0.5 * delta, ends[3]);
          const auto compare = [&](const Jet& got, auto field, const char* what, size_t i) {
            const double wide = (field(ends[0]) - field(ends[1])) / (2 * delta);
            const double narrow = (field(ends[2]) - field(ends[3])) / delta;
            const double fd = (4 * narrow - wide) / 3;
            const double err = std::abs(got.d[k] - fd) / std::max(1.0, std::abs(fd));
            worst = std::max(worst, err);
            EXPECT_LE(err, 1e-6) << what << "[" << i << "] along q[" << first + k << "]: " << got.d[k] << " vs " << fd
                                 << " (row " << r << ")";
          };
          for (size_t i = 0; i < jet.jn.size(); ++i) {
            compare(jet.jn[i], [&](const ContactStepData<double>& e) { return e.jn[i]; }, "J_n", i);
            compare(jet.jt[i], [&](const ContactStepData<double>& e) { return e.jt[i]; }, "J_t", i);
          }
          for (size_t i = 0; i < jet.tau.size(); ++i)
            compare(jet.tau[i], [&](const ContactStepData<double>& e) { return e.tau[i]; }, "tau", i);
          for (size_t i = 0; i < static_cast<size_t>(m.n_slots()); ++i)
            compare(jet.frame[i].phi, [&](const ContactStepData<double>& e) { return e.frame[i].phi; }, "phi", i);
        }
      }
    }
    std::printf("%s: worst relative error of the data's derivatives %.2e\n", name, worst);
  }
}

TEST(Derivatives, TheContactStepDataAreBitwiseTheSteppersOwn) {
  // At T = double (and in the value part of T = Jet) the data are the ContactRecord's and
  // generalized_external_force's, bit for bit: the derivative is of the function stepped.
  const Scene scene = parse_scene(example("pang_tedrake_box_36").dump());
  const Model& m = *scene.model;
  const WorldParams p(m);
  ContactStepData<double> data(m);
  ContactStepData<Jet> jet(m);
  ContactWorkspace ws(m);
  std::vector<double> tau(m.n_q());
  for (const State& s : trajectory(m)) {
    const double t = s.t + 0.5 * m.step.h;
    pose_contact_step_data<double>(m, p, s.q.data(), t, data);
    std::vector<Jet> qj(s.q.data(), s.q.data() + m.n_q());
    pose_contact_step_data<Jet>(m, p, qj.data(), t, jet);
    ws.evaluate(m, p, s.q.data());
    generalized_external_force(m, p, ws.body_pose.data(), ws.joint_frame.data(), t, tau.data());
    for (int i = 0; i < m.n_slots(); ++i) {
      ASSERT_EQ(data.frame[i].phi, ws.frame[i].phi);
      ASSERT_EQ(jet.frame[i].phi.v, ws.frame[i].phi);
      for (int e = 0; e < m.n_q(); ++e) {
        ASSERT_EQ(data.jn[i * m.n_q() + e], ws.J_n(i, e));
        ASSERT_EQ(jet.jt[i * m.n_q() + e].v, ws.J_t(i, e));
      }
    }
    for (int e = 0; e < m.n_q(); ++e) {
      ASSERT_EQ(data.tau[e], tau[e]);
      ASSERT_EQ(jet.tau[e].v, tau[e]);
    }
  }
}

// ---- Trinkle's LCP -------------------------------------------------------------------

TEST(Derivatives, TrinkleMatchesCentralDifferences) {
  const Campaign c = test::check_against_differences(example("pang_tedrake_gripper"), 1000, 21, trinkle_step);
  std::printf("pang_tedrake_gripper (trinkle_lcp): %d samples, %d kept, %d at a switch, %d not solved; worst relative "
              "error A %.2e, B %.2e\n",
              c.samples, c.kept, c.degenerate, c.failed, c.worst_A, c.worst_B);
  EXPECT_GE(c.kept, c.samples / 3);
  EXPECT_LE(c.worst_A, 1e-6);
  EXPECT_LE(c.worst_B, 1e-6);
}

/// The gripper's first state with the cylinder raised 0.1 mm: the step sets it down on the
/// ground (the gap row closes, y+ = r whatever y was: dy+/dy = 0) and it sticks there in x
/// (nothing pushes sideways: dx+/dx = 1); the fingers, away from it, follow their commands
/// (q_a+ = q_a + h u: the identity in A, h I in B).
void expect_cylinder_lands_and_sticks(const json& scene_json) {
  const Scene scene = parse_scene(scene_json.dump());
  const Model& m = *scene.model;
  State s = initial_state(m);
  s.q[1] += 1e-4;
  auto stepper = make_stepper(m);
  StepDerivatives d;
  ASSERT_EQ(stepper->step(m, commanded_params(m, s), s, d), Status::solved);
  ASSERT_EQ(d.status, Status::solved) << d.detail;
  EXPECT_FALSE(d.degenerate);
  EXPECT_NEAR(s.q[1], 0.05, 1e-15);
  const int nu = m.n_u, n = m.n_q(), na = m.n_a;
  ASSERT_EQ(d.A.rows(), n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) EXPECT_NEAR(d.A(i, j), i == j && i != 1 ? 1.0 : 0.0, 1e-12) << i << ", " << j;
  for (int i = 0; i < n; ++i)
    for (int a = 0; a < na; ++a) EXPECT_NEAR(d.B(i, a), i == nu + a ? m.step.h : 0.0, 1e-12) << i << ", " << a;
}

TEST(Derivatives, TrinkleCylinderOnTheGroundLandsOnItAndSticks) {
  expect_cylinder_lands_and_sticks(example("pang_tedrake_gripper"));
}

/// The left finger exactly touching the cylinder (x_l = -0.05: phi = 0) and every command
/// zero: the contact has neither impulse nor gap. Moved away, the finger leaves the cylinder
/// where it is (dx_c+/dx_l = 0); moved in, it pushes it along (dx_c+/dx_l = 1, the cylinder
/// sliding on the ground). The derivative returned is the separating side's, flagged.
void expect_one_sided_at_a_touch(const json& scene_json) {
  const Scene scene = parse_scene(scene_json.dump());
  const Model& m = *scene.model;
  State s = initial_state(m);
  s.q[2] = -0.05;
  WorldParams p = commanded_params(m, s);
  std::fill(p.command.begin(), p.command.end(), 0.0);
  auto stepper = make_stepper(m);
  StepDerivatives d;
  State after = s;
  ASSERT_EQ(stepper->step(m, p, after, d), Status::solved);
  ASSERT_EQ(d.status, Status::solved) << d.detail;
  EXPECT_TRUE(d.degenerate);
  EXPECT_LE(d.margin, kSwitchMargin);
  EXPECT_NEAR(d.A(0, 2), 0.0, 1e-12) << d.A;
  const auto x_after = [&](double x_l) {
    State t = s;
    t.q[2] = x_l;
    EXPECT_EQ(stepper->step(m, p, t), Status::solved);
    return t.q[0];
  };
  const double delta = 1e-7, x0 = s.q[2];
  EXPECT_NEAR((x_after(x0) - x_after(x0 - delta)) / delta, d.A(0, 2), 1e-6);  // the side returned
  EXPECT_NEAR((x_after(x0 + delta) - x_after(x0)) / delta, 1.0, 1e-6);        // the other side
}

TEST(Derivatives, TrinkleAtASwitchTheDerivativeIsOneSidedAndSaysSo) {
  expect_one_sided_at_a_touch(example("pang_tedrake_gripper"));
}

/// States around an example's trajectory moved by up to 2 cm and 0.2 rad (bodies apart,
/// touching and interpenetrating), commands of up to 0.5 m/s either way: every solved step's
/// derivative is finite, or is a failure that says why. Returns the derivatives solved.
int finite_over_random_states(const json& scene_json, int samples, unsigned seed) {
  const Scene scene = parse_scene(scene_json.dump());
  const Model& m = *scene.model;
  const std::vector<State> rows = trajectory(m);
  auto stepper = make_stepper(m);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<size_t> row(0, rows.size() - 1);
  StepDerivatives d;
  int solved = 0, refused = 0, steps_failed = 0;
  for (int k = 0; k < samples; ++k) {
    State s = rows[row(rng)];
    for (int e = 0; e < m.n_q(); ++e) s.q[e] += (m.dofs[e].name.ends_with(".theta") ? 0.2 : 0.02) * unit(rng);
    for (int a = 0; a < derivative_memory_size(m); ++a) s.memory[a] += 0.02 * unit(rng);
    WorldParams p = commanded_params(m, s);
    for (double& u : p.command) u = 0.5 * unit(rng);
    if (stepper->step(m, p, s, d) != Status::solved) {
      ++steps_failed;
      EXPECT_NE(d.status, Status::solved);
      EXPECT_FALSE(d.detail.empty());
      continue;
    }
    if (d.status != Status::solved) {
      ++refused;
      EXPECT_FALSE(d.detail.empty());
      continue;
    }
    ++solved;
    EXPECT_TRUE(d.A.allFinite() && d.B.allFinite()) << scene_json.value("name", "?") << ", sample " << k;
    if (!d.A.allFinite() || !d.B.allFinite()) break;
  }
  std::printf("%s: %d derivatives, all finite; %d refused with a reason; %d steps did not solve\n",
              scene_json.value("name", "?").c_str(), solved, refused, steps_failed);
  return solved;
}

TEST(Derivatives, TrinkleNoNanOrInfOverRandomStates) {
  const int solved = finite_over_random_states(example("pang_tedrake_gripper"), 2000, 31);
  EXPECT_GT(solved, 500);
}

/// Derivatives of the trajectory's states every `stride` rows by two steppers, and by the
/// first again: bitwise the same.
void expect_bitwise_repeatable(const json& scene_json, size_t stride) {
  const Scene scene = parse_scene(scene_json.dump());
  const Model& m = *scene.model;
  const std::vector<State> rows = trajectory(m);
  auto first = make_stepper(m), second = make_stepper(m);
  StepDerivatives a, b, c;
  int compared = 0;
  for (size_t r = 0; r < rows.size(); r += stride) {
    State s1 = rows[r], s2 = rows[r], s3 = rows[r];
    const WorldParams p(m);
    ASSERT_EQ(first->step(m, p, s1, a), Status::solved);
    ASSERT_EQ(second->step(m, p, s2, b), Status::solved);
    ASSERT_EQ(first->step(m, p, s3, c), Status::solved);
    ASSERT_EQ(a.status, b.status);
    ASSERT_EQ(a.status, c.status);
    compared += a.status == Status::solved;
    EXPECT_TRUE(a.A == b.A && a.B == b.B && a.A == c.A && a.B == c.B) << scene_json.value("name", "?") << ", row " << r;
    EXPECT_TRUE(a.degenerate == b.degenerate && a.margin == b.margin && a.margin == c.margin);
  }
  EXPECT_GT(compared, 0);
}

TEST(Derivatives, TrinkleAreBitwiseTheSameFromAnyStepperAndOnRepeat) {
  expect_bitwise_repeatable(example("pang_tedrake_gripper"), 3);
}

}  // namespace
}  // namespace qs::lcp_derivatives_test

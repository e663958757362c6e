// The step derivatives of the complementarity steppers of a vertical world (quasistep/core/derivatives.hpp):
// Trinkle's LCP (trinkle_lcp) and Pang & Tedrake's MIQP (pang_tedrake_miqp), against central
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
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"
#include "quasistep/core/formulations/trinkle_lcp/trinkle_lcp.hpp"
#include "quasistep/core/jet.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/derivative_checks.hpp"
#include "tests/support/instrumented.hpp"

namespace qs::lcp_derivatives_test {
namespace {

/// A campaign's sample count: n, a tenth under the sanitizers (instrumented code is ten times
/// slower, and the MIQP's searches are the dearest steps), which still run every path.
constexpr int scaled(int n) { return test::kAddressSanitizer ? std::max(n / 10, 20) : n; }

using nlohmann::json;
using test::Campaign;
using test::commanded_params;
using test::example;
using test::trajectory;

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
  const Campaign c = test::check_against_differences(example("pang_tedrake_gripper"), scaled(1000), 21, trinkle_step);
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
    auto [s, p] = test::random_state(m, rows, [&](size_t) { return row(rng); }, [&] { return unit(rng); });
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
  const int solved = finite_over_random_states(example("pang_tedrake_gripper"), scaled(2000), 31);
  EXPECT_GT(solved, scaled(2000) / 4);
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

// ---- Pang & Tedrake's MIQP ----------------------------------------------------------

/// The MIQP's step solved exactly: the stepper's answer polished at its mode. The QPs' answers
/// are accepted at a KKT tolerance and carry errors of 1e-12 in dq, which a difference of 1e-6
/// would turn into errors of 1e-6; polished, they are exact to rounding. The polish, code
/// independent of the derivatives' own: every row of the answer's QP (PangTedrakeMiqp::view)
/// within 1e-9 of holding with equality at its own scale (1 + its terms, as the MIQP's own
/// check), and every impulse or Gamma within 1e-9 (1 + the impulse scale) of zero, taken as
/// equalities, and stage 1's KKT system there,
///   [H  -A_S'; A_S  0] [x; beta] = [-c; b_S],   H = 2 I on dq_a, c = -2 dqa_bar on dq_a,
/// solved by Eigen's complete orthogonal decomposition (rank-revealing: the impulses need not
/// be unique, dq is). Then q+ = q + dq and each active slot's phi_bar+ (eq. (21)).
bool miqp_step(Stepper& stepper, const Model& m, const WorldParams& p, State& s) {
  const Eigen::VectorXd q0 = s.q;
  if (stepper.step(m, p, s) != Status::solved) return false;
  const auto& miqp = dynamic_cast<const PangTedrakeMiqp&>(stepper);
  const PangTedrakeMiqp::View v = miqp.view();
  const Eigen::VectorXd& x = miqp.solution();
  const int nu = v.n_u, na = v.n_a, nc = v.contacts, nd = nu + na, n = nd + 4 * nc;
  Eigen::VectorXd dqa_bar(na);
  for (int a = 0; a < na; ++a) dqa_bar[a] = p.h * p.command[static_cast<size_t>(a)];
  // The active rows: the force balance, then the rows and variables at zero.
  double impulse_scale = v.qp.b_eq.head(nu).cwiseAbs().maxCoeff();
  for (int j = nd; j < n; ++j) impulse_scale = std::max(impulse_scale, std::abs(x[j]));
  std::vector<Eigen::VectorXd> rows;
  std::vector<double> rhs;
  for (int e = 0; e < nu; ++e) {
    rows.push_back(v.qp.A_eq.row(e).head(n).transpose());
    rhs.push_back(v.qp.b_eq[e]);
  }
  for (int r = 0; r < 5 * nc; ++r) {
    const Eigen::VectorXd a = v.qp.A_in.row(r).head(n).transpose();
    const double slack = a.dot(x.head(n)) - v.qp.b_in[r];
    const double terms = std::abs(v.qp.b_in[r]) + a.cwiseProduct(x.head(n)).cwiseAbs().sum();
    if (std::abs(slack) <= 1e-9 * (1 + terms)) {  // the MIQP's own scale (Problem::pair_violation)
      rows.push_back(a);
      rhs.push_back(v.qp.b_in[r]);
    }
  }
  for (int j = nd; j < n; ++j)
    if (std::abs(x[j]) <= 1e-9 * (1 + impulse_scale)) {
      rows.push_back(Eigen::VectorXd::Unit(n, j));
      rhs.push_back(0.0);
    }
  const int k = static_cast<int>(rows.size());
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(n + k, n + k);
  Eigen::VectorXd b = Eigen::VectorXd::Zero(n + k);
  for (int a = 0; a < na; ++a) {
    K(nu + a, nu + a) = 2.0;
    b[nu + a] = 2.0 * dqa_bar[a];
  }
  for (int r = 0; r < k; ++r) {
    K.block(n + r, 0, 1, n) = rows[r].transpose();
    K.block(0, n + r, n, 1) = -rows[r];
    b[n + r] = rhs[r];
  }
  // Solved for the correction of x (the residual of [x; 0] on the right, beta solved whole):
  // it is small, so its rounding is too, and its least norm moves the impulses that are not
  // unique least.
  Eigen::VectorXd x0 = Eigen::VectorXd::Zero(n + k);
  x0.head(n) = x.head(n);
  const Eigen::VectorXd residual = b - K * x0;
  const Eigen::VectorXd polished =
      x.head(n) + Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd>(K).solve(residual).head(n);
  s.q.head(nd) = q0.head(nd) + polished.head(nd);
  if (derivative_memory_size(m) > 0)
    for (int c = 0; c < nc; ++c) {  // phi_bar+ = phi + J_n^u dq_u + J_n^a dqa_bar, row pair_row(c, 0) = [J_n], b = -phi
      const int gap = v.pair_row(c, 0);
      double phi_bar = -v.qp.b_in[gap];
      for (int e = 0; e < nu; ++e) phi_bar += v.qp.A_in(gap, e) * polished[e];
      for (int a = 0; a < na; ++a) phi_bar += v.qp.A_in(gap, nu + a) * dqa_bar[a];
      s.memory[v.slots[static_cast<size_t>(c)]] = phi_bar;
    }
  return true;
}

TEST(Derivatives, PangTedrakeMiqpMatchesCentralDifferences) {
  // The two grasps (elastic_bound = current) at the campaign's 1 mm and 1 mrad, and the
  // 36-pair box (elastic_bound = previous: x holds phi_bar, its rows and columns checked here)
  // at 0.1 mm and 0.1 mrad, on fewer samples. The box's pads clear its chamfers by 0.7 mm and
  // its thumb rests on it without force along the trajectory, so at 1 mm the step itself
  // fails on most states (27 of the first 37: infeasible, or a node's QP fails), and each of
  // its samples costs 2 (n_x + n_a) ~ 46 MIQPs of 36 pairs, 0.1 s. (pang_tedrake_box_72: the
  // step fails on 64-98% of the states moved by 1e-6 to 1e-3, and the rest sit at switches;
  // it has the random-state and repeatability checks only.)
  struct Case {
    const char* name;
    int samples;
    double perturbation;
  };
  unsigned seed = 41;
  for (const Case& k : {Case{"pang_tedrake_grasp", 1000, 1e-3}, Case{"mc_grasp_miqp", 1000, 1e-3},
                        Case{"pang_tedrake_box_36", 50, 1e-4}}) {
    SCOPED_TRACE(k.name);
    const Campaign c =
        test::check_against_differences(example(k.name), scaled(k.samples), seed++, miqp_step, k.perturbation);
    std::printf("%s (pang_tedrake_miqp, %g): %d samples, %d kept, %d at a switch, %d not solved; worst relative "
                "error A %.2e, B %.2e\n",
                k.name, k.perturbation, c.samples, c.kept, c.degenerate, c.failed, c.worst_A, c.worst_B);
    EXPECT_GE(c.kept, c.samples / 3);
    EXPECT_LE(c.worst_A, 1e-6);
    EXPECT_LE(c.worst_B, 1e-6);
  }
}

TEST(Derivatives, PangTedrakeMiqpCylinderOnTheGroundLandsOnItAndSticks) {
  expect_cylinder_lands_and_sticks(example("pang_tedrake_grasp"));
}

TEST(Derivatives, PangTedrakeMiqpAtASwitchTheDerivativeIsOneSidedAndSaysSo) {
  expect_one_sided_at_a_touch(example("pang_tedrake_grasp"));
}

TEST(Derivatives, PangTedrakeMiqpNoNanOrInfOverRandomStates) {
  // 2,000 random states per example, 500 of the 72-pair box (its failing searches are the
  // dearest: 3.5 ms a state).
  unsigned seed = 51;
  int solved = 0;
  solved += finite_over_random_states(example("pang_tedrake_grasp"), scaled(2000), seed++);
  solved += finite_over_random_states(example("mc_grasp_miqp"), scaled(2000), seed++);
  solved += finite_over_random_states(example("pang_tedrake_box_36"), scaled(2000), seed++);
  solved += finite_over_random_states(example("pang_tedrake_box_72"), scaled(500), seed++);
  EXPECT_GT(solved, scaled(3000));
}

TEST(Derivatives, PangTedrakeMiqpMemoryIsThePreviousStepsPhiBar) {
  // Under elastic_bound = previous, x = [q; phi_bar] (one entry per slot); under current no
  // memory is state.
  {
    const Scene scene = parse_scene(example("pang_tedrake_box_36").dump());
    const Model& m = *scene.model;
    EXPECT_EQ(derivative_memory_size(m), m.n_slots());
    EXPECT_EQ(derivative_state_names(m)[static_cast<size_t>(m.n_q())], "slot0.phi_bar");
    // A slot inactive in the step (+inf whatever x was) has a zero row; one whose phi_bar
    // was +inf a zero column.
    const std::vector<State> rows = trajectory(m);
    auto stepper = make_stepper(m);
    StepDerivatives d;
    State s = rows[30];
    const State before = s;
    ASSERT_EQ(stepper->step(m, WorldParams(m), s, d), Status::solved);
    ASSERT_EQ(d.status, Status::solved) << d.detail;
    for (int i = 0; i < m.n_slots(); ++i) {
      const int row = m.n_q() + i;
      if (!std::isfinite(s.memory[i])) {
        EXPECT_EQ(d.A.row(row).norm() + d.B.row(row).norm(), 0.0) << i;
      }
      if (!std::isfinite(before.memory[i])) {
        EXPECT_EQ(d.A.col(row).norm(), 0.0) << i;
      }
    }
  }
  {
    const Scene scene = parse_scene(example("pang_tedrake_grasp").dump());
    EXPECT_EQ(derivative_memory_size(*scene.model), 0);
  }
}

TEST(Derivatives, PangTedrakeMiqpAreBitwiseTheSameFromAnyStepperAndOnRepeat) {
  expect_bitwise_repeatable(example("pang_tedrake_grasp"), 3);
  expect_bitwise_repeatable(example("pang_tedrake_box_36"), 5);
  expect_bitwise_repeatable(example("pang_tedrake_box_72"), 7);
}

}  // namespace
}  // namespace qs::lcp_derivatives_test

// Trinkle's LCP stepper on the Pang & Tedrake 2018 gripper (sec. V.A, Fig. 6): every step is a checked
// complementarity solution in force balance, and the test shows the paper's point: once the
// fingers touch and rise, both a zero-grip solution (the cylinder stays) and a lifting one
// satisfy the LCP, and Lemke's documented choice is the zero-grip one.
#include "quasistep/core/formulations/trinkle_lcp/trinkle_lcp.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "quasistep/core/scene.hpp"

namespace qs::trinkle_lcp_test {
namespace {

const std::string kGripper = std::string(QUASISTEP_SOURCE_DIR) + "/examples/pang_tedrake_gripper.json";

/// max violation of the mixed LCP (first k free): equalities, signs and complementarity.
double mixed_violation(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q, int k,
                       const Eigen::VectorXd& x) {
  const Eigen::VectorXd y = M * x + q;
  double v = y.head(k).cwiseAbs().maxCoeff();
  for (int i = k; i < x.size(); ++i) v = std::max(v, std::abs(std::min(x[i], y[i])));
  return v;
}

TEST(TrinkleLcp, AHeavyOrALightObjectTakesTheSameSteps) {
  // The quasistatic step has no inertia: an object's mass scales its impulses and nothing
  // else, so the gripper takes the same steps with the cylinder 2^k times heavier. The LCP
  // holds impulse rows beside displacement rows, and the LCP rule judges all against the
  // largest |q|: at 2^30 a step was solved with the cylinder moved 1.2 mm with nothing
  // pushing it, at 2^-40 refused. Each class of rows is now checked at its own scale and,
  // where it is not exact there, the LCP solved again with the impulses in the step's units.
  // Measured over the 60 steps: 5.1e-17 m apart at most (before: 3.3e-11 m at 2^20, 1.6e-8 m
  // at 2^29, answers within the rule's 2^-20 of the impulses' scale).
  std::ifstream f(kGripper);
  const nlohmann::json base = nlohmann::json::parse(f);
  const Scene a = parse_scene(base.dump());
  for (int k : {-40, -30, -20, 20, 30, 34, 40}) {
    nlohmann::json j = base;
    j["bodies"][1]["mass"] = std::ldexp(j["bodies"][1]["mass"].get<double>(), k);
    const Scene b = parse_scene(j.dump());
    TrinkleLcp sa(*a.model), sb(*b.model);
    State xa = initial_state(*a.model), xb = initial_state(*b.model);
    double worst = 0;
    for (int l = 1; l <= a.model->step.steps; ++l) {
      ASSERT_EQ(sa.step(*a.model, xa), Status::solved) << "2^" << k << " step " << l;
      ASSERT_EQ(sb.step(*b.model, xb), Status::solved) << "2^" << k << " step " << l << ": " << sb.report().detail;
      worst = std::max(worst, (xa.q - xb.q).cwiseAbs().maxCoeff());
    }
    EXPECT_LE(worst, 1e-15) << "2^" << k;
  }
}

TEST(TrinkleLcp, GripperFollowsSeed000Figure6) {
  const Scene scene = load_scene_file(kGripper);
  const Model& m = *scene.model;
  ASSERT_EQ(m.n_slots(), 3);
  State s = initial_state(m);
  TrinkleLcp stepper(m);
  ContactWorkspace ws(m);
  const double mgh = 1.0 * 9.81 * 0.01;
  for (int l = 1; l <= 60; ++l) {
    ASSERT_EQ(stepper.step(m, s), Status::solved) << "step " << l;
    EXPECT_EQ(s.step, l);
    EXPECT_NEAR(s.t, 0.01 * l, 1e-12);
    // Every solved step: force balance and non-penetration of the linearised step.
    EXPECT_LE(stepper.report().force_balance_residual, 1e-12) << l;
    EXPECT_GE(stepper.report().linearised_penetration, -1e-12) << l;
    EXPECT_LE(stepper.result().stats.residual, 1e-9) << l;
    // Actuated DOFs follow command (30) as the text reads it: squeeze for 20 steps, rise always.
    EXPECT_NEAR(s.q[2], -0.07 + 0.001 * std::min(l, 20), 1e-12) << l;
    EXPECT_NEAR(s.q[3], 0.07 - 0.001 * std::min(l, 20), 1e-12) << l;
    EXPECT_NEAR(s.q[4], 0.01 + 0.001 * l, 1e-12) << l;
    // The cylinder stays on the table (Fig. 6a, 6c) and the fingers carry nothing (Fig. 6b).
    EXPECT_NEAR(s.q[0], 0.0, 1e-12) << l;
    EXPECT_NEAR(s.q[1], 0.05, 1e-12) << l;
    EXPECT_NEAR(stepper.normal_impulse()[0], 0.0, 1e-12) << l;
    EXPECT_NEAR(stepper.normal_impulse()[1], 0.0, 1e-12) << l;
    EXPECT_NEAR(stepper.normal_impulse()[2], mgh, 1e-12) << l;
    // Contact holds from row 20 (the paper's "step 21") while the fingertips are below the
    // cylinder's center (the paper's assumption y_g < y_c, eq. 24). From row 41 the tips
    // have passed y_c = 0.05 and the true distance is tip-to-disk, which eq. (24) does not
    // model: phi = sqrt(r^2 + (y_g - y_c)^2) - r.
    ws.evaluate(m, s.q.data());
    if (l < 20) {
      EXPECT_GT(ws.frame[0].phi, 0.0) << l;
    } else if (l <= 40) {
      EXPECT_NEAR(ws.frame[0].phi, 0.0, 1e-12) << l;
      EXPECT_NEAR(ws.frame[1].phi, 0.0, 1e-12) << l;
    } else {
      const double r = 0.05, rise = s.q[4] - s.q[1];
      EXPECT_NEAR(ws.frame[0].phi, std::hypot(r, rise) - r, 1e-12) << l;
      EXPECT_NEAR(ws.frame[1].phi, std::hypot(r, rise) - r, 1e-12) << l;
    }
  }
}

TEST(TrinkleLcp, GripperStepInContactAdmitsBothZeroGripAndLifting) {
  const Scene scene = load_scene_file(kGripper);
  const Model& m = *scene.model;
  State s = initial_state(m);
  TrinkleLcp stepper(m);
  for (int l = 1; l <= 25; ++l) ASSERT_EQ(stepper.step(m, s), Status::solved);
  // Step 26: fingers touching (phi = 0), rising 1 mm. Layout: [dx_c, dy_c | P_n(3) |
  // P_t+(3) | P_t-(3) | Gamma(3)], contacts in slot order: left finger, right finger, ground.
  const Eigen::MatrixXd M = stepper.lcp_matrix();
  const Eigen::VectorXd q = stepper.lcp_vector();
  ASSERT_EQ(stepper.contacts_in_lcp(), 3);
  ASSERT_EQ(M.rows(), 14);
  const double mgh = 1.0 * 9.81 * 0.01, mu = 0.5;
  // Zero grip: the ground carries the weight impulse, the cylinder stays, and the fingers
  // slide 1 mm past it, so their slack Gamma equals that slip (eqs. 14-17).
  Eigen::VectorXd stay = Eigen::VectorXd::Zero(14);
  stay[2 + 2] = mgh;
  stay[11 + 0] = stay[11 + 1] = 0.001;
  // Lifting: the cylinder rises with the fingers, each finger's friction carries half the
  // weight at the edge of its cone (P_t = mu P_n), the ground lets go. Tangent directions:
  // left finger t = +y, right finger t = -y (t = perp(n), n into the cylinder).
  Eigen::VectorXd lift = Eigen::VectorXd::Zero(14);
  lift[1] = 0.001;                  // dy_c = dy_g
  lift[2 + 0] = lift[2 + 1] = mgh;  // P_n of both fingers: mu P_n = mgh / 2
  lift[5 + 0] = 0.5 * mgh;          // left finger: P_t+ along +y
  lift[8 + 1] = 0.5 * mgh;          // right finger: P_t- along -t = +y
  (void)mu;
  ASSERT_NO_FATAL_FAILURE(stepper.step(m, s));
  const Eigen::MatrixXd M26 = stepper.lcp_matrix();
  const Eigen::VectorXd q26 = stepper.lcp_vector();
  EXPECT_LE(mixed_violation(M26, q26, 2, stay), 1e-15);
  EXPECT_LE(mixed_violation(M26, q26, 2, lift), 1e-15);
  // Lemke's choice under the documented policy (docs/kernels.md): the zero-grip solution.
  Eigen::VectorXd got(14);
  got << stepper.result().u, stepper.result().z;
  EXPECT_LE(mixed_violation(M26, q26, 2, got), 1e-12);
  EXPECT_LT((got - stay).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(TrinkleLcp, SqueezingIntoTheCylinderIsProvenInfeasibleAndLeavesTheStateAlone) {
  // Command (29) keeps squeezing after contact: the fingers cannot both advance without
  // penetrating, so step 21 (row 20 -> 21) has no solution (Pang & Tedrake 2018, sec. IV-B), and an LP
  // proves it: the multipliers (1/2, 1/2) on the two finger contacts, 1 mm of penetration.
  std::string text;
  {
    std::ifstream in(kGripper);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto replace_once = [&text](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace_once(R"("x_l": {"velocity": {"breaks": [0.2], "values": [0.1, 0.0]}})", R"("x_l": {"velocity": 0.1})");
  replace_once(R"("x_r": {"velocity": {"breaks": [0.2], "values": [-0.1, 0.0]}})", R"("x_r": {"velocity": -0.1})");
  const Scene scene = parse_scene(text);
  const Model& m = *scene.model;
  State s = initial_state(m);
  TrinkleLcp stepper(m);
  for (int l = 1; l <= 20; ++l) ASSERT_EQ(stepper.step(m, s), Status::solved) << l;
  const State before = s;
  const Status st = stepper.step(m, s);
  EXPECT_EQ(st, Status::infeasible);
  const std::string& why = stepper.report().detail;
  EXPECT_NE(why.find("left_finger/cylinder"), std::string::npos) << why;
  EXPECT_NE(why.find("right_finger/cylinder"), std::string::npos) << why;
  EXPECT_NE(why.find("penetrates at least 0.001 m"), std::string::npos) << why;
  EXPECT_NE(why.find("0.5, 0.5"), std::string::npos) << why;
  EXPECT_EQ(s.step, before.step);
  EXPECT_EQ(s.q, before.q);
}

TEST(TrinkleLcp, AnObjectWithNothingUnderItIsProvenUnableToBalance) {
  // The cylinder 0.5 m up and a 1 cm contact margin: no contact is active, so no impulse
  // can balance gravity; the certificate is the virtual displacement straight down.
  std::string text;
  {
    std::ifstream in(kGripper);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const auto at = text.find(R"("pose": [0, 0.05, 0])");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 20, R"("pose": [0, 0.50, 0])");
  const auto contacts = text.find(R"("contacts": {)");
  ASSERT_NE(contacts, std::string::npos);
  text.insert(contacts + 13, R"("margin": 0.01, )");
  const Scene scene = parse_scene(text);
  const Model& m = *scene.model;
  State s = initial_state(m);
  TrinkleLcp stepper(m);
  EXPECT_EQ(stepper.step(m, s), Status::infeasible);
  EXPECT_EQ(stepper.report().contacts, 0);
  const std::string& why = stepper.report().detail;
  EXPECT_NE(why.find("cylinder.y"), std::string::npos) << why;
  EXPECT_EQ(s.step, 0);
}

TEST(TrinkleLcp, StackedObjectsStayInForceBalance) {
  // Several objects: two disks stacked on the ground, no manipulator. Every step solves,
  // balances each body's weight, and nothing moves.
  const Scene scene = parse_scene(R"({
    "format": 1, "world": {"type": "vertical"}, "model": {"formulation": "trinkle_lcp"},
    "step": {"h": 0.01, "steps": 10},
    "bodies": [
      {"name": "ground", "kind": "fixed", "shapes": [{"type": "half_plane", "normal": [0, 1]}]},
      {"name": "lower", "kind": "free", "dofs": ["x", "y"], "mass": 2, "pose": [0, 0.1, 0], "shapes": [{"type": "disk", "radius": 0.1}]},
      {"name": "upper", "kind": "free", "dofs": ["x", "y"], "mass": 1, "pose": [0, 0.3, 0], "shapes": [{"type": "disk", "radius": 0.1}]}
    ],
    "contacts": {"friction": 0.5}
  })");
  const Model& m = *scene.model;
  State s = initial_state(m);
  const Eigen::VectorXd q0 = s.q;
  TrinkleLcp stepper(m);
  for (int l = 1; l <= 10; ++l) {
    ASSERT_EQ(stepper.step(m, s), Status::solved) << stepper.report().detail;
    EXPECT_LE(stepper.report().force_balance_residual, 1e-12);
    EXPECT_LE(mixed_violation(stepper.lcp_matrix(), stepper.lcp_vector(), m.n_u,
                              (Eigen::VectorXd(m.n_u + stepper.result().z.size()) << stepper.result().u, stepper.result().z)
                                  .finished()),
              1e-12);
  }
  EXPECT_LT((s.q - q0).cwiseAbs().maxCoeff(), 1e-12);
  // The ground carries both weights, the upper disk rests on the lower one.
  const double h = m.step.h, g = m.world.gravity;
  double ground = 0, between = 0;
  for (int i = 0; i < m.n_slots(); ++i) {
    const std::string pair = m.pair_name(m.slots[i].pair);
    if (pair == "ground/lower") ground += stepper.normal_impulse()[i];
    if (pair == "lower/upper") between += stepper.normal_impulse()[i];
  }
  EXPECT_NEAR(ground, 3 * g * h, 1e-12);
  EXPECT_NEAR(between, 1 * g * h, 1e-12);
}

}  // namespace
}  // namespace qs::trinkle_lcp_test

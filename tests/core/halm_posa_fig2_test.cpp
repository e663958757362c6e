// Halm & Posa 2018, Fig. 2, as examples/halm_posa_fig2_squeeze.json and
// examples/halm_posa_fig2_graze.json: the two situations the perfect-velocity model (their
// eqs. (13)-(14), `perfect_velocity_lcp`) gets wrong and finite gains (eq. (17),
// `halm_posa_lcp`) resolve. Left: four fingers squeezing a square have no solution under
// perfect velocity control (reported `infeasible` with a proof), and with finite gains every
// step solves, the square held and then carried. Right: two fingers grazing a square admit
// several perfect-velocity solutions (the square stays, or it is carried up), and finite
// gains keep only one (the square stays: "it does disambiguate some grazing cases (such as
// in Figure 2)", sec. 7).
#include <gtest/gtest.h>

#include <Eigen/LU>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/scene.hpp"
#include "tests/support/example_json.hpp"
#include "tests/support/halm_posa_checks.hpp"
#include "tests/support/lcp_check.hpp"

namespace qs::halm_posa_fig2_test {
namespace {

using nlohmann::json;
using test::lcp_violation;
using test::perfect_velocity;

json example(const std::string& name) { return test::example_json(name + ".json"); }

using Rollout = test::HalmPosaRollout;
using test::halm_posa_rollout;

// ---- Fig. 2 left: the squeeze ---------------------------------------------------------

TEST(HalmPosaFig2, SqueezeHasNoPerfectVelocitySolution) {
  const Scene scene = parse_scene(perfect_velocity(example("halm_posa_fig2_squeeze")).dump());
  const Model& m = *scene.model;
  HalmPosaLcp stepper(m);
  State s = initial_state(m);
  EXPECT_EQ(stepper.step(m, s), Status::infeasible);
  EXPECT_EQ(s.step, 0);  // the state stays at the start
  // The geometric proof: no displacement of the square keeps all four fingers out of it.
  const std::string& why = stepper.report().detail;
  EXPECT_NE(why.find("non-penetrating"), std::string::npos) << why;
  for (const char* pair : {"left/square", "right/square", "bottom/square", "top/square"})
    EXPECT_NE(why.find(pair), std::string::npos) << pair << ": " << why;
}

TEST(HalmPosaFig2, SqueezeIsGraspedThenCarriedWithFiniteGains) {
  const Rollout r = halm_posa_rollout(example("halm_posa_fig2_squeeze"));
  ASSERT_EQ(r.steps_solved, 200) << to_string(r.last) << ": " << r.detail;
  EXPECT_LE(r.worst_violation, 1e-9);
  EXPECT_GE(r.worst_phi, -1e-9);
  // Held still while only squeezed (t < 2 s: 80 steps), by symmetry to rounding.
  for (int l = 0; l < 80; ++l) EXPECT_LE(r.object[l].cwiseAbs().maxCoeff(), 1e-9) << "step " << l + 1;
  // Then carried right with the fingers for 3 s at 0.1 m/s (less the feedback lag), not turned.
  const Eigen::Vector3d end = r.object.back();
  EXPECT_GT(end.x(), 0.25);
  EXPECT_LE(end.x(), 0.3 + 1e-9);
  EXPECT_NEAR(end.y(), 0.0, 1e-9);
  EXPECT_NEAR(end.z(), 0.0, 1e-9);
}

// ---- Fig. 2 right: the graze ----------------------------------------------------------

/// The layout of the step's LCP (halm_posa_lcp.hpp) over k contacts:
/// z = [Lambda_N (k) | Lambda_T+ (k) | Lambda_T- (k) | gamma (k)].
/// The stationary candidate: no impulse, every finger sliding (gamma = its tangential
/// command, the larger of -w_T+ and -w_T-).
Eigen::VectorXd stationary_candidate(const Eigen::VectorXd& w) {
  const Eigen::Index k = w.size() / 4;
  Eigen::VectorXd z = Eigen::VectorXd::Zero(w.size());
  for (Eigen::Index i = 0; i < k; ++i) z(3 * k + i) = std::max({0.0, -w(k + i), -w(2 * k + i)});
  return z;
}

/// A sticking candidate: normal impulse L on every contact, each contact's friction on one
/// of its two tangential directions (every sign pattern tried), gamma = 0, the friction
/// impulses solved from the tangential rows that must vanish (no sliding). Returns the best
/// pattern's violation and z.
std::pair<double, Eigen::VectorXd> best_sticking_candidate(const Eigen::MatrixXd& M, const Eigen::VectorXd& w,
                                                          double L) {
  const Eigen::Index k = w.size() / 4;
  std::pair<double, Eigen::VectorXd> best{INFINITY, Eigen::VectorXd()};
  for (int pattern = 0; pattern < (1 << k); ++pattern) {
    std::vector<Eigen::Index> rows;
    for (Eigen::Index i = 0; i < k; ++i) rows.push_back((pattern >> i & 1 ? 2 * k : k) + i);
    Eigen::VectorXd z = Eigen::VectorXd::Zero(w.size());
    z.head(k).setConstant(L);
    Eigen::MatrixXd S(k, k);
    Eigen::VectorXd rhs(k);
    for (Eigen::Index a = 0; a < k; ++a) {
      rhs(a) = -(w(rows[a]) + M.row(rows[a]).head(k).sum() * L);
      for (Eigen::Index b = 0; b < k; ++b) S(a, b) = M(rows[a], rows[b]);
    }
    const Eigen::VectorXd t = S.fullPivLu().solve(rhs);
    for (Eigen::Index a = 0; a < k; ++a) z(rows[a]) = t(a);
    const double v = test::lcp_violation(M, w, z);
    if (v < best.first) best = {v, z};
  }
  return best;
}

TEST(HalmPosaFig2, GrazeHasSeveralPerfectVelocitySolutions) {
  const Scene scene = parse_scene(perfect_velocity(example("halm_posa_fig2_graze")).dump());
  const Model& m = *scene.model;
  HalmPosaLcp stepper(m);
  State s = initial_state(m);
  ASSERT_EQ(stepper.step(m, s), Status::solved) << stepper.report().detail;
  EXPECT_LE(lcp_violation(stepper), 1e-9);
  const Eigen::MatrixXd M = stepper.lcp_matrix();
  const Eigen::VectorXd w = stepper.lcp_vector();
  ASSERT_EQ(w.size(), 8);  // both fingers in the LCP
  // The square stays (no impulse: A J_o' Lambda = 0, eq. (32)) ...
  const Eigen::VectorXd still = stationary_candidate(w);
  EXPECT_LE(test::lcp_violation(M, w, still), 1e-15);
  EXPECT_GT(still.tail(2).minCoeff(), 0.0);  // the fingers slide
  // ... or squeezing forces carry it up: no finger slides (gamma = 0, the tangential rows
  // vanish) and no gap opens, so the square moves with the fingers. With A = I3 each finger
  // must give a friction impulse h v / 2 = 1.25e-3, so any normal impulse L >= 1.25e-3 / mu
  // does; a smaller one cannot (the friction cone, eq. (9)).
  EXPECT_GT(best_sticking_candidate(M, w, 1e-3).first, 1e-6);
  for (const double L : {1.25e-3 + 1e-9, 1.0, 1e3}) {
    const auto [violation, carried] = best_sticking_candidate(M, w, L);
    EXPECT_LE(violation, 1e-12) << "L = " << L;
    EXPECT_GT(carried.segment(2, 4).cwiseAbs().maxCoeff(), 0.0);  // friction carries it
  }
}

TEST(HalmPosaFig2, GrazeWithFiniteGainsLeavesTheSquareStill) {
  const Rollout r = halm_posa_rollout(example("halm_posa_fig2_graze"));
  ASSERT_EQ(r.steps_solved, 160) << to_string(r.last) << ": " << r.detail;
  EXPECT_LE(r.worst_violation, 1e-9);
  EXPECT_GE(r.worst_phi, -1e-9);
  for (size_t l = 0; l < r.object.size(); ++l) EXPECT_LE(r.object[l].cwiseAbs().maxCoeff(), 1e-12) << "step " << l + 1;
  // The fingers went up as commanded: 0.4 m.
  const Scene scene = parse_scene(example("halm_posa_fig2_graze").dump());
  const Model& m = *scene.model;
  for (const char* joint : {"left_y", "right_y"}) {
    int dof = -1;
    for (int d = 0; d < m.n_q(); ++d)
      if (m.dofs[d].name == joint) dof = d;
    ASSERT_GE(dof, 0) << joint;
    EXPECT_NEAR(r.final_state.q(dof), 0.4, 1e-9) << joint;
  }
}

TEST(HalmPosaFig2, FiniteGainsRuleOutTheCarriedSolution) {
  // Eq. (16): a normal impulse pushes the finger back (cB J_m' Lambda), opening the gap, so a
  // squeeze with zero normal velocity is no longer a solution: only the square staying is.
  const Scene scene = parse_scene(example("halm_posa_fig2_graze").dump());
  const Model& m = *scene.model;
  HalmPosaLcp stepper(m);
  State s = initial_state(m);
  ASSERT_EQ(stepper.step(m, s), Status::solved) << stepper.report().detail;
  const Eigen::MatrixXd M = stepper.lcp_matrix();
  const Eigen::VectorXd w = stepper.lcp_vector();
  ASSERT_EQ(w.size(), 8);
  EXPECT_LE(test::lcp_violation(M, w, stationary_candidate(w)), 1e-15);
  for (const double L : {1.25e-3 + 1e-9, 1.0, 1e3}) EXPECT_GT(best_sticking_candidate(M, w, L).first, 1e-6) << "L = " << L;
}

TEST(HalmPosaFig2, AnInwardNudgeOfTheGrazeJamsOnlyPerfectVelocity) {
  // Sec. 4: "a small perturbation of the commanded velocities towards the inward normal of
  // the object surface could transform the command to an infeasible grasp". The grazing
  // command with both fingers also moving 1 mm/s into the faces: perfect velocity control has
  // no solution; finite gains solve every step.
  json s = example("halm_posa_fig2_graze");
  s["commands"]["left_x"] = {{"velocity", 1e-3}};
  s["commands"]["right_x"] = {{"velocity", -1e-3}};
  const Scene scene = parse_scene(perfect_velocity(s).dump());
  const Model& m = *scene.model;
  HalmPosaLcp stepper(m);
  State st = initial_state(m);
  EXPECT_EQ(stepper.step(m, st), Status::infeasible) << stepper.report().detail;
  const Rollout r = halm_posa_rollout(s);
  EXPECT_EQ(r.steps_solved, 160) << to_string(r.last) << ": " << r.detail;
  EXPECT_LE(r.worst_violation, 1e-9);
}

}  // namespace
}  // namespace qs::halm_posa_fig2_test

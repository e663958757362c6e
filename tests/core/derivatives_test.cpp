// The step's derivatives (quasistep/core/derivatives.hpp): A = dx+/dx and B = dx+/du against
// central finite differences of the step on states sampled around every example's
// trajectory; the one-sided derivative at a switch; no NaN or Inf over random states
// (touching, penetrating, far apart); the analytic cases; bitwise repeatability; and the
// formulations without derivatives saying so.
#include "quasistep/core/derivatives.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_lanes.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lanes.hpp"
#include "quasistep/core/jet.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/derivative_checks.hpp"
#include "tests/support/instrumented.hpp"

namespace qs::derivatives_test {
namespace {

using nlohmann::json;

using test::box_push_quasi_dynamic;
using test::Campaign;
using test::Differences;
using test::example;
using test::in_mode;
using test::pivot_push;
using test::push_perfect_velocity;
using test::trajectory;
using test::with_model;

/// The Anitescu QP's answer polished on its active set: the equality-constrained QP
///   [H  -A_S'; A_S  0] [v; beta_S] = [-c; b_S]
/// solved by Eigen's complete orthogonal decomposition (rank-revealing: pressed rows may be
/// dependent), code independent of the derivatives' own KKT solve. The kernels' answers are
/// accepted at a scaled KKT residual of 1e-9 and some carry errors of 1e-10 in v, which a
/// difference of 1e-6 would turn into errors of 1e-4; polished, they are exact to rounding.
Eigen::VectorXd polished_velocity(const AnitescuQp& stepper) {
  const DenseQpProblem qp = stepper.problem();
  const Eigen::VectorXd v = stepper.velocity();
  const Eigen::VectorXd beta = stepper.beta();
  const int n = static_cast<int>(v.size()), rows = static_cast<int>(beta.size());
  const Eigen::VectorXd slack = qp.A_in * v - qp.b_in;
  const double impulse_scale = std::max({beta.size() ? beta.maxCoeff() : 0.0, qp.c.cwiseAbs().maxCoeff(), 1e-300});
  const double velocity_scale =
      rows ? std::max(qp.b_in.cwiseAbs().maxCoeff() + (qp.A_in * v).cwiseAbs().maxCoeff(), 1e-300) : 1.0;
  std::vector<int> active;
  for (int k = 0; k < rows; ++k)
    if (beta[k] / impulse_scale > std::max(slack[k], 0.0) / velocity_scale) active.push_back(k);
  const int s = static_cast<int>(active.size());
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(n + s, n + s);
  Eigen::VectorXd rhs(n + s);
  K.topLeftCorner(n, n) = qp.H.topLeftCorner(n, n);
  rhs.head(n) = -qp.c.head(n);
  for (int r = 0; r < s; ++r) {
    K.block(n + r, 0, 1, n) = qp.A_in.row(active[r]);
    K.block(0, n + r, n, 1) = -qp.A_in.row(active[r]).transpose();
    rhs[n + r] = qp.b_in[active[r]];
  }
  return Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd>(K).solve(rhs).head(n);
}

/// One step of (s, p) solved exactly. Anitescu: the stepper's fallback path (Lemke on the dual
/// LCP, or the dense QP), direct solvers, their answer then polished on its active set
/// (polished_velocity), so that a central difference of 1e-6 resolves the derivative to
/// about 1e-9 (PGS stops at a residual of 1e-10, which a difference of 1e-6 would turn into
/// errors of 1e-4).
bool exact_step(Stepper& stepper, const Model& m, const WorldParams& p, State& s) {
  const Eigen::VectorXd q0 = s.q;
  if (const auto* qp = dynamic_cast<const AnitescuQp*>(&stepper)) {
    if (stepper.step_fallback(m, p, s) != Status::solved) return false;
    s.q = q0 + p.h * polished_velocity(*qp);
    return true;
  }
  // The LCP steppers' own path (Lemke's pivoting is exact): where an LCP has several
  // solutions, another path could pick another one, whose differences would be of another
  // function.
  return stepper.step(m, p, s) == Status::solved;
}

/// The shared campaign (tests/support/derivative_checks.hpp) with this file's exact step.
Campaign check_against_differences(const json& scene_json, int samples, unsigned seed, Differences differences = {}) {
  return test::check_against_differences(scene_json, samples, seed, exact_step, 1e-3, differences);
}

/// Samples per example: 1,000; a tenth under the sanitizers (instrumented code is ten times
/// slower), which still run every path.
constexpr int kSamples = test::kAddressSanitizer ? 100 : 1000;

void report(const char* name, const Campaign& c) {
  std::printf("%s: %d samples, %d kept, %d at a switch, %d across a kink, %d not solved; worst relative error A "
              "%.2e, B %.2e\n",
              name, c.samples, c.kept, c.degenerate, c.kinked, c.failed, c.worst_A, c.worst_B);
}

// ---- the problem data's derivatives --------------------------------------------------

TEST(Derivatives, JetDerivativesOfTheAnitescuProblemAreItsCentralDifferences) {
  // anitescu_pose_problem at T = Jet (the contact geometry's second derivatives included)
  // against central differences of its T = double evaluation, on states around the examples.
  for (const char* name : {"anitescu_box_push", "anitescu_grasp", "anitescu_drop"}) {
    SCOPED_TRACE(name);
    const Scene scene = parse_scene(example(name).dump());
    const Model& m = *scene.model;
    const std::vector<State> rows = trajectory(m);
    const int n = m.n_q(), na = m.n_a;
    const WorldParams p(m);
    AnitescuProblem<Jet> jet(m);
    AnitescuProblem<double> plus(m), minus(m);
    std::vector<Jet> qj(n), refj(std::max(na, 1)), muj(m.pairs.size());
    for (size_t k = 0; k < m.pairs.size(); ++k) muj[k] = Jet(p.pair_friction[k]);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    double worst = 0;
    for (size_t r = 0; r < rows.size(); r += 3) {
      Eigen::VectorXd q = rows[r].q;
      for (int e = 0; e < n; ++e) q[e] += 1e-3 * unit(rng);
      const double* ref = rows[r].memory.data();
      for (int a = 0; a < na; ++a) refj[a] = Jet(ref[a]);
      for (int first = 0; first < n; first += kJetWidth) {
        for (int e = 0; e < n; ++e) qj[e] = e >= first && e - first < kJetWidth ? Jet::variable(q[e], e - first) : Jet(q[e]);
        anitescu_pose_problem<Jet>(m, p, jet, qj.data(), refj.data(), muj.data(), nullptr, rows[r].t);
        for (int k = 0; k < kJetWidth && first + k < n; ++k) {
          const double delta = 1e-6;
          Eigen::VectorXd qp = q, qm = q;
          qp[first + k] += delta;
          qm[first + k] -= delta;
          anitescu_pose_problem<double>(m, p, plus, qp.data(), ref, p.pair_friction.data(), nullptr, rows[r].t);
          anitescu_pose_problem<double>(m, p, minus, qm.data(), ref, p.pair_friction.data(), nullptr, rows[r].t);
          const auto compare = [&](const std::vector<Jet>& got, const std::vector<double>& a, const std::vector<double>& b,
                                   const char* what) {
            for (size_t i = 0; i < got.size(); ++i) {
              const double fd = (a[i] - b[i]) / (2 * delta);
              const double err = std::abs(got[i].d[k] - fd) / std::max(1.0, std::abs(fd));
              worst = std::max(worst, err);
              EXPECT_LE(err, 1e-6) << what << "[" << i << "] along q[" << first + k << "]: " << got[i].d[k]
                                   << " vs " << fd << " (row " << r << ")";
            }
          };
          compare(jet.jn, plus.jn, minus.jn, "J_n");
          compare(jet.jt, plus.jt, minus.jt, "J_t");
          compare(jet.b, plus.b, minus.b, "b");
          compare(jet.c, plus.c, minus.c, "c");
          compare(jet.Mu, plus.Mu, minus.Mu, "M_u");
        }
      }
    }
    std::printf("%s: worst relative error of the data's derivatives %.2e\n", name, worst);
  }
}

TEST(Derivatives, JetDerivativesOfTheHalmPosaLcpAreItsCentralDifferences) {
  // halm_posa_detail::pose_about and fill_lcp at T = Jet (q0 = q_lin and u directions)
  // against central differences of their T = double evaluation.
  for (const char* name : {"halm_posa_push", "halm_posa_wall", "halm_posa_peg"}) {
    SCOPED_TRACE(name);
    const Scene scene = parse_scene(example(name).dump());
    const Model& m = *scene.model;
    const std::vector<State> rows = trajectory(m);
    const int n = m.n_q(), na = m.n_a;
    const WorldParams p(m);
    HalmPosaProblem<Jet> jet(m);
    HalmPosaProblem<double> plus(m), minus(m);
    std::vector<Jet> qj(n), muj(m.pairs.size());
    for (size_t k = 0; k < m.pairs.size(); ++k) muj[k] = Jet(p.pair_friction[k]);
    const HalmPosaParams& hp = formulation_params_or_default<HalmPosaParams>(m);
    const double c = p.model_gain / plus.lcp_unit;
    for (int a = 0; a < na; ++a)
      for (int b = 0; b < na; ++b) {
        plus.cB[a * na + b] = minus.cB[a * na + b] = c * (*hp.gain_B)(a, b);
        jet.cB[a * na + b] = Jet(c) * Jet((*hp.gain_B)(a, b));
      }
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    double worst = 0;
    for (size_t r = 0; r < rows.size(); r += 5) {
      Eigen::VectorXd q = rows[r].q;
      for (int e = 0; e < n; ++e) q[e] += 1e-3 * unit(rng);
      std::vector<double> u(na);
      for (int a = 0; a < na; ++a) u[a] = 0.1 * unit(rng);
      const int directions = n + na;
      for (int first = 0; first < directions; first += kJetWidth) {
        for (int e = 0; e < n; ++e)
          jet.q_lin[e] = qj[e] = e >= first && e - first < kJetWidth ? Jet::variable(q[e], e - first) : Jet(q[e]);
        for (int a = 0; a < na; ++a)
          jet.uh[a] = Jet(m.step.h) * (n + a >= first && n + a - first < kJetWidth ? Jet::variable(u[a], n + a - first) : Jet(u[a]));
        halm_posa_detail::pose_about(m, p, jet, qj.data());
        halm_posa_detail::fill_lcp(m, jet, muj.data());
        for (int k = 0; k < kJetWidth && first + k < directions; ++k) {
          const double delta = 1e-6;
          const int dir = first + k;
          for (HalmPosaProblem<double>* side : {&plus, &minus}) {
            const double sign = side == &plus ? 1.0 : -1.0;
            Eigen::VectorXd qs = q;
            std::vector<double> us = u;
            if (dir < n) qs[dir] += sign * delta; else us[dir - n] += sign * delta;
            for (int e = 0; e < n; ++e) side->q_lin[e] = qs[e];
            for (int a = 0; a < na; ++a) side->uh[a] = m.step.h * us[a];
            halm_posa_detail::pose_about(m, p, *side, qs.data());
            halm_posa_detail::fill_lcp(m, *side, p.pair_friction.data());
          }
          const auto compare = [&](const std::vector<Jet>& got, const std::vector<double>& a, const std::vector<double>& b,
                                   const char* what) {
            for (size_t i = 0; i < got.size(); ++i) {
              const double fd = (a[i] - b[i]) / (2 * delta);
              const double err = std::abs(got[i].d[k] - fd) / std::max(1.0, std::abs(fd));
              worst = std::max(worst, err);
              EXPECT_LE(err, 1e-6) << what << "[" << i << "] along direction " << dir << ": " << got[i].d[k] << " vs " << fd;
            }
          };
          // The rows of slots in the LCP (at T = Jet the others are neither reset nor filled).
          const int lcp = jet.n;
          for (int row = 0; row < lcp; ++row) {
            const int slot = row % jet.ns;
            if (!jet.active[slot] || jet.unreached[slot]) continue;
            for (int col = 0; col < lcp; ++col) {
              const double fd = (plus.M[row * lcp + col] - minus.M[row * lcp + col]) / (2 * delta);
              const double err = std::abs(jet.M[row * lcp + col].d[k] - fd) / std::max(1.0, std::abs(fd));
              worst = std::max(worst, err);
              EXPECT_LE(err, 1e-6) << "M[" << row << ", " << col << "] along direction " << dir;
            }
          }
          compare(jet.q_lcp, plus.q_lcp, minus.q_lcp, "q");
        }
      }
    }
    std::printf("%s: worst relative error of the LCP's derivatives %.2e\n", name, worst);
  }
}

// ---- the Anitescu step, both modes -----------------------------------------------------

TEST(Derivatives, AnitescuMatchesCentralDifferencesOnEveryExampleInBothModes) {
  struct Case {
    const char* name;
    json scene;
  };
  const std::vector<Case> cases{
      {"anitescu_box_push (quasistatic)", example("anitescu_box_push")},
      {"anitescu_box_push (quasi-dynamic)", box_push_quasi_dynamic()},
      {"plan_pivot (quasistatic)", pivot_push()},
      {"anitescu_drop (quasi-dynamic)", example("anitescu_drop")},
      {"anitescu_grasp (quasi-dynamic)", example("anitescu_grasp")},
      {"anitescu_grasp (quasistatic)", in_mode(example("anitescu_grasp"), "quasistatic")},
      {"anitescu_planar_push (quasi-dynamic, no gravity)", example("anitescu_planar_push")},
      {"anitescu_disk_push_quasi_dynamic", example("anitescu_disk_push_quasi_dynamic")},
  };
  unsigned seed = 1;
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    const Campaign c = check_against_differences(k.scene, kSamples, seed++);
    report(k.name, c);
    // A third of the samples at least are away from every switch: the check is not vacuous.
    EXPECT_GE(c.kept, c.samples / 3);
    EXPECT_LE(c.worst_A, 1e-6);
    EXPECT_LE(c.worst_B, 1e-6);
  }
}

// ---- Halm & Posa's LCP and its perfect-velocity case ---------------------------------------

TEST(Derivatives, HalmPosaMatchesCentralDifferencesOnEveryExample) {
  // The peg's answers carry errors of about 1e-12 (its LCPs are the largest, and Lemke stops
  // at a residual of 1e-12), which a difference of 1e-6 turns into 1e-6, and so do the
  // re-linearised wall's (three LCPs in a chain): their differences are taken at 1e-4 and
  // 1e-5, extrapolated (Richardson) to cancel the error of order delta^2 that the peg's
  // curvature makes 4e-5 at 1e-5.
  struct Case {
    const char* name;
    json scene;
    double delta = 1e-6;
    bool extrapolate = false;
  };
  const std::vector<Case> cases{
      {"halm_posa_push", example("halm_posa_push")},
      {"halm_posa_push_asymmetric", example("halm_posa_push_asymmetric")},
      {"halm_posa_push_semicircular", example("halm_posa_push_semicircular")},
      {"halm_posa_wall", example("halm_posa_wall")},
      {"halm_posa_wall, re-linearised twice", with_model(example("halm_posa_wall"), "relinearize", 2), 1e-5, true},
      {"halm_posa_peg", example("halm_posa_peg"), 1e-4, true},
      {"halm_posa_fig2_squeeze", example("halm_posa_fig2_squeeze")},
      {"halm_posa_fig2_graze", example("halm_posa_fig2_graze")},
      {"mpc_push", example("mpc_push")},
      {"halm_posa_push (perfect velocity)", push_perfect_velocity()},
  };
  unsigned seed = 101;
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    const Campaign c = check_against_differences(k.scene, kSamples, seed++, {k.delta, k.extrapolate});
    report(k.name, c);
    EXPECT_GE(c.kept, c.samples / 3);
    EXPECT_LE(c.worst_A, 1e-6);
    EXPECT_LE(c.worst_B, 1e-6);
  }
}

TEST(Derivatives, AtASwitchTheDerivativeIsOneSidedAndSaysSo) {
  // The drop's box held flat exactly g h^2 above the table: in one step it falls exactly
  // onto it (quasi-dynamic: from rest, v' = -g h), so its corners' rows have neither impulse
  // nor slack. Raised, the box falls freely (dy+/dy = 1); lowered, it lands early and stops
  // on the table (dy+/dy = 0). The derivative returned is the separating side's, flagged.
  const Scene scene = parse_scene(example("anitescu_drop").dump());
  const Model& m = *scene.model;
  const double h = m.step.h, g = m.world.gravity;
  State s = initial_state(m);
  s.q << 0.0, 0.03 + g * h * h, 0.0;
  auto stepper = make_stepper(m);
  StepDerivatives d;
  State after = s;
  ASSERT_EQ(stepper->step(m, WorldParams(m), after, d), Status::solved);
  ASSERT_EQ(d.status, Status::solved) << d.detail;
  EXPECT_TRUE(d.degenerate);
  EXPECT_LE(d.margin, kSwitchMargin);
  EXPECT_NEAR((d.A - Eigen::MatrixXd::Identity(3, 3)).norm(), 0.0, 1e-12) << d.A;
  const auto y_after = [&](double y) {
    State t = s;
    t.q[1] = y;
    EXPECT_EQ(stepper->step(m, t), Status::solved);
    return t.q[1];
  };
  const double delta = 1e-7, y0 = s.q[1];
  EXPECT_NEAR((y_after(y0 + delta) - y_after(y0)) / delta, d.A(1, 1), 1e-6);  // the side returned
  EXPECT_NEAR((y_after(y0) - y_after(y0 - delta)) / delta, 0.0, 1e-6);        // the other side
}

TEST(Derivatives, AnitescuJointsAwayFromContactFollowTheirReference) {
  // The grasp's first state: the fingers touch nothing, so each velocity-controlled joint
  // ends the step at its reference, q_a+ = q̄_a + h u: dq_a+/dq_a = 0, dq_a+/dq̄_a = 1,
  // dq_a+/du_a = h, exactly as the model says (no robot gravity acts: it is compensated).
  const Scene scene = parse_scene(example("anitescu_grasp").dump());
  const Model& m = *scene.model;
  State s = initial_state(m);
  auto stepper = make_stepper(m);
  StepDerivatives d;
  ASSERT_EQ(stepper->step(m, WorldParams(m), s, d), Status::solved);
  ASSERT_EQ(d.status, Status::solved) << d.detail;
  const int nu = m.n_u, n = m.n_q(), na = m.n_a;
  for (int a = 0; a < na; ++a) {
    SCOPED_TRACE(m.dofs[nu + a].name);
    for (int j = 0; j < n; ++j) EXPECT_NEAR(d.A(nu + a, j), 0.0, 1e-12);
    for (int b = 0; b < na; ++b) {
      EXPECT_NEAR(d.A(nu + a, n + b), a == b ? 1.0 : 0.0, 1e-12);
      EXPECT_NEAR(d.B(nu + a, b), a == b ? m.step.h : 0.0, 1e-12);
      // The reference itself: q̄_a+ = q̄_a + h u.
      EXPECT_EQ(d.A(n + a, n + b), a == b ? 1.0 : 0.0);
      EXPECT_EQ(d.B(n + a, b), a == b ? m.step.h : 0.0);
    }
  }
  EXPECT_EQ(derivative_state_names(m).back(), command_names(m).back() + ".reference");
}

TEST(Derivatives, NoNanOrInfOverRandomStatesTouchingPenetratingAndApart) {
  // 1,000 random states per example (10,000 in all): the trajectory's states moved by up to
  // 2 cm and 0.2 rad (bodies apart, touching and interpenetrating), the references alike, and
  // commands of up to 0.5 m/s either way. Every solved step's derivative is finite, or is a
  // failure that says why.
  int solved = 0, refused = 0, steps_failed = 0;
  std::map<std::string, int> reasons;
  unsigned seed = 11;
  for (const json& scene_json :
       {example("anitescu_box_push"), box_push_quasi_dynamic(), pivot_push(), example("anitescu_drop"),
        example("anitescu_grasp"), example("halm_posa_push"), example("halm_posa_wall"), example("halm_posa_peg"),
        example("halm_posa_fig2_squeeze"), push_perfect_velocity()}) {
    const Scene scene = parse_scene(scene_json.dump());
    const Model& m = *scene.model;
    const std::vector<State> rows = trajectory(m);
    auto stepper = make_stepper(m);
    std::mt19937_64 rng(seed++);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    std::uniform_int_distribution<size_t> row(0, rows.size() - 1);
    StepDerivatives d;
    for (int k = 0; k < kSamples; ++k) {
      auto [s, p] = test::random_state(m, rows, [&](size_t) { return row(rng); }, [&] { return unit(rng); });
      if (stepper->step(m, p, s, d) != Status::solved) {
        ++steps_failed;
        EXPECT_NE(d.status, Status::solved);
        EXPECT_FALSE(d.detail.empty());
        continue;
      }
      if (d.status != Status::solved) {
        ++refused;
        ++reasons[d.detail];
        EXPECT_FALSE(d.detail.empty());
        continue;
      }
      ++solved;
      ASSERT_TRUE(d.A.allFinite() && d.B.allFinite()) << "example " << scene.source << ", sample " << k;
    }
  }
  std::printf("%d derivatives, all finite; %d refused with a reason; %d steps did not solve\n", solved, refused,
              steps_failed);
  for (const auto& [reason, count] : reasons) std::printf("  %d: %s\n", count, reason.c_str());
  EXPECT_GT(solved, 9 * kSamples);
}

TEST(Derivatives, AreBitwiseTheSameFromAnyStepperAndOnRepeat) {
  const Scene scene = parse_scene(example("anitescu_grasp").dump());
  const Model& m = *scene.model;
  const std::vector<State> rows = trajectory(m);
  auto first = make_stepper(m), second = make_stepper(m);
  StepDerivatives a, b, c;
  for (size_t r = 0; r < rows.size(); r += 7) {
    State s1 = rows[r], s2 = rows[r], s3 = rows[r];
    const WorldParams p(m);
    ASSERT_EQ(first->step(m, p, s1, a), Status::solved);
    ASSERT_EQ(second->step(m, p, s2, b), Status::solved);
    ASSERT_EQ(first->step(m, p, s3, c), Status::solved);
    EXPECT_TRUE(a.A == b.A && a.B == b.B && a.A == c.A && a.B == c.B) << "row " << r;
  }
}

TEST(Derivatives, TheAnitescuStepReusesItsProblemsDerivativesOnlyForTheSameStateAndParameters) {
  // A stepper keeps the problem's derivatives along q for the next step from the same state
  // and parameters (a bundle's samples differ only in the command). Every step here, taken
  // by that one stepper in this order, must give what a fresh stepper gives, bitwise.
  const Scene scene = parse_scene(example("anitescu_grasp").dump());
  const Model& m = *scene.model;
  const std::vector<State> rows = trajectory(m);
  const State& at = rows[30];
  auto reused = make_stepper(m);
  const WorldParams base = test::commanded_params(m, at);
  struct Variant {
    const char* what;
    State state;
    WorldParams params;
  };
  std::vector<Variant> variants{{"first", at, base}};
  variants.push_back({"another command (reuses)", at, base});
  variants.back().params.command[0] += 0.01;
  variants.push_back({"another stiffness", at, base});
  variants.back().params.joint_gain[0] *= 2;
  variants.push_back({"another mass", at, base});
  variants.back().params.body_mass[0] *= 1.5;
  variants.push_back({"another friction (reuses)", at, base});
  variants.back().params.pair_friction[0] *= 0.5;
  variants.push_back({"a command that opens the grip (other active set)", at, base});
  for (double& u : variants.back().params.command) u = -u;
  variants.push_back({"another state", rows[31], base});
  variants.push_back({"another time", at, base});
  variants.back().state.t += 0.5 * m.step.h;
  for (const Variant& v : variants) {
    State s1 = v.state, s2 = v.state;
    StepDerivatives a, b;
    auto fresh = make_stepper(m);
    ASSERT_EQ(reused->step(m, v.params, s1, a), Status::solved) << v.what;
    ASSERT_EQ(fresh->step(m, v.params, s2, b), Status::solved) << v.what;
    ASSERT_EQ(a.status, Status::solved) << v.what << ": " << a.detail;
    EXPECT_TRUE(a.A == b.A && a.B == b.B) << v.what;
  }
}

TEST(Derivatives, AFailedStepOrAFormulationWithoutThemSaysWhy) {
  {
    const Scene scene = parse_scene(example("ecp_box_tip").dump());
    const Model& m = *scene.model;
    State s = initial_state(m);
    auto stepper = make_stepper(m);
    StepDerivatives d;
    ASSERT_EQ(stepper->step(m, WorldParams(m), s, d), Status::solved);
    EXPECT_EQ(d.status, Status::bad_input);
    EXPECT_EQ(d.detail, "ecp_ncp has no step derivatives");
  }
  {
    const Scene scene = parse_scene(example("anitescu_grasp").dump());
    const Model& m = *scene.model;
    State s = initial_state(m);
    auto stepper = make_stepper(m);
    WorldParams p(m);
    p.h = -1;
    StepDerivatives d;
    EXPECT_EQ(stepper->step(m, p, s, d), Status::bad_input);
    EXPECT_EQ(d.status, Status::bad_input);
    EXPECT_NE(d.detail.find("step.h must be a finite number > 0"), std::string::npos) << d.detail;
  }
}

}  // namespace
}  // namespace qs::derivatives_test

// Randomized (bundled) derivatives (quasistep/batch/bundled.hpp): the first-order estimate is
// the mean of the exact derivatives at the perturbed commands; the zeroth-order estimate
// agrees with it within three standard errors; both are bitwise the same at 1 and 2 threads;
// a small sigma away from switches gives the exact derivative; bad options are refused.
#include "quasistep/batch/bundled.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "quasistep/batch/sampling.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/batch_error.hpp"
#include "tests/support/example_json.hpp"

namespace qs::bundled_test {
namespace {

Scene load(const std::string& name) { return parse_scene(test::example_json(name + ".json").dump()); }

/// The example's state after `steps` steps, and the scene's commands at its next step.
struct Point {
  State state;
  WorldParams params;
};
Point after(const Model& m, int steps) {
  auto stepper = make_stepper(m);
  Point p{initial_state(m), WorldParams(m)};
  for (int l = 0; l < steps; ++l) EXPECT_EQ(stepper->step(m, p.state), Status::solved);
  p.params.commanded = true;
  p.params.command.assign(static_cast<std::size_t>(m.n_a), 0.0);
  for (const Joint& j : m.joints)
    if (j.control == Control::velocity) p.params.command[j.dof - m.n_u] = j.command(p.state.t + 0.5 * m.step.h);
  return p;
}

TEST(Bundled, FirstOrderIsTheMeanOfTheExactDerivativesAtThePerturbedCommands) {
  const Scene s = load("anitescu_grasp");
  const Model& m = *s.model;
  const Point p = after(m, 30);
  BundledStep bundled(s.model);
  const BundledOptions o{.samples = 64, .sigma = 0.02, .seed = 5};
  const BundledDerivatives& r = bundled.compute(p.state, p.params, o);
  ASSERT_EQ(r.status, Status::solved) << r.detail;
  ASSERT_EQ(r.used, 64);
  // The same draws, stepped one by one and summed in order.
  Distribution normal;
  normal.kind = Distribution::Kind::normal;
  normal.stddev = o.sigma;
  auto stepper = make_stepper(m);
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(r.A1.rows(), r.A1.cols()), B = Eigen::MatrixXd::Zero(r.B1.rows(), r.B1.cols());
  for (int i = 0; i < o.samples; ++i) {
    WorldParams q = p.params;
    for (int a = 0; a < m.n_a; ++a) q.command[a] += draw(normal, o.seed, i, a);
    State st = p.state;
    StepDerivatives d;
    ASSERT_EQ(stepper->step(m, q, st, d), Status::solved);
    for (int e = 0; e < A.rows(); ++e) {
      for (int f = 0; f < A.cols(); ++f) A(e, f) += d.A(e, f);
      for (int a = 0; a < B.cols(); ++a) B(e, a) += d.B(e, a);
    }
  }
  A /= o.samples;
  B /= o.samples;
  EXPECT_TRUE(A == r.A1) << A << "\n" << r.A1;
  EXPECT_TRUE(B == r.B1) << B << "\n" << r.B1;
}

TEST(Bundled, ZerothAndFirstOrderAgreeWithinThreeStandardErrorsWhereTheStepIsContinuous) {
  // N = 1,000 at a contact-rich point of each example, sigma a tenth of a typical command.
  // Both estimate the smoothed step's derivative E[dB(u + w)] when the step is continuous in
  // its command (Stein's lemma); the next test shows a step that is not.
  struct Case {
    const char* name;
    int steps;
    double sigma;
  };
  for (const Case c : {Case{"anitescu_grasp", 30, 0.01}, Case{"anitescu_box_push", 5, 0.01}, Case{"mpc_push", 30, 0.02}}) {
    SCOPED_TRACE(c.name);
    const Scene s = load(c.name);
    const Model& m = *s.model;
    const Point p = after(m, c.steps);
    BundledStep bundled(s.model);
    const BundledDerivatives& r = bundled.compute(p.state, p.params, {.samples = 1000, .sigma = c.sigma, .seed = 1});
    ASSERT_EQ(r.status, Status::solved) << r.detail;
    double worst = 0;
    for (int e = 0; e < r.B1.rows(); ++e)
      for (int a = 0; a < r.B1.cols(); ++a) {
        const double se = std::hypot(r.B1_error(e, a), r.B0_error(e, a));
        const double gap = std::abs(r.B1(e, a) - r.B0(e, a));
        // Entries both estimates know to rounding (a reference moving by exactly h u) agree
        // to rounding instead.
        const double allowed = 3 * se + 1e-12 * (1 + std::abs(r.B1(e, a)));
        if (gap > 1e-12 * (1 + std::abs(r.B1(e, a)))) worst = std::max(worst, gap / se);
        EXPECT_LE(gap, allowed) << "B[" << e << ", " << a << "] first order " << r.B1(e, a) << " +- " << r.B1_error(e, a)
                                << ", zeroth order " << r.B0(e, a) << " +- " << r.B0_error(e, a);
      }
    std::printf("%s: %d of 1000 samples used; largest gap %.2f standard errors\n", c.name, r.used, worst);
  }
}

TEST(Bundled, TheZerothOrderEstimateSeesAJumpTheFirstOrderMisses) {
  // Halm & Posa's two fingers under the disk, step 100: where the fingers' x velocities are
  // opposite (u_1x = -u_2x) the disk's turn flips, and theta+ jumps by about 1e-3 rad. The
  // first-order estimate (the mean of the exact derivatives on either side) cannot see the
  // jump; the zeroth-order one (least squares on the steps) does: the bias of the first
  // order that Suh, Pang & Tedrake (RA-L 2022) describe for discontinuous dynamics.
  const Scene s = load("halm_posa_push");
  const Model& m = *s.model;
  const Point p = after(m, 100);
  auto stepper = make_stepper(m);
  const auto theta_after = [&](double u1x, double u2x) {
    WorldParams q = p.params;
    q.command[0] += u1x;
    q.command[2] += u2x;
    State st = p.state;
    EXPECT_EQ(stepper->step(m, q, st), Status::solved);
    return st.q[2];
  };
  const double jump = theta_after(-0.02 + 1e-7, 0.02) - theta_after(-0.02 - 1e-7, 0.02);
  EXPECT_GT(std::abs(jump), 1e-4) << jump;
  BundledStep bundled(s.model);
  const BundledDerivatives& r = bundled.compute(p.state, p.params, {.samples = 4000, .sigma = 0.02, .seed = 1});
  ASSERT_EQ(r.status, Status::solved) << r.detail;
  const double gap = std::abs(r.B1(2, 0) - r.B0(2, 0)), se = std::hypot(r.B1_error(2, 0), r.B0_error(2, 0));
  std::printf("theta+ jumps by %.3g rad; dtheta+/du_1x: first order %.5f +- %.5f, zeroth order %.5f +- %.5f\n", jump,
              r.B1(2, 0), r.B1_error(2, 0), r.B0(2, 0), r.B0_error(2, 0));
  EXPECT_GT(gap, 5 * se);
}

TEST(Bundled, AreBitwiseTheSameAtOneAndTwoThreads) {
  const Scene s = load("halm_posa_push");
  const Model& m = *s.model;
  const Point p = after(m, 100);
  BundledStep one(s.model, {.threads = 1}), two(s.model, {.threads = 2});
  const BundledOptions o{.samples = 200, .sigma = 0.02, .seed = 9};
  const BundledDerivatives a = one.compute(p.state, p.params, o);
  const BundledDerivatives& b = two.compute(p.state, p.params, o);
  EXPECT_TRUE(a.B1 == b.B1 && a.A1 == b.A1 && a.B0 == b.B0 && a.B1_error == b.B1_error && a.B0_error == b.B0_error &&
              a.next == b.next);
}

TEST(Bundled, ASmallSigmaAwayFromSwitchesGivesTheExactDerivative) {
  const Scene s = load("mpc_push");
  const Model& m = *s.model;
  const Point p = after(m, 30);
  auto stepper = make_stepper(m);
  State st = p.state;
  StepDerivatives d;
  ASSERT_EQ(stepper->step(m, p.params, st, d), Status::solved);
  ASSERT_FALSE(d.degenerate);
  ASSERT_GT(d.margin, 1e-3);
  BundledStep bundled(s.model);
  const BundledDerivatives& r = bundled.compute(p.state, p.params, {.samples = 50, .sigma = 1e-7, .seed = 2});
  ASSERT_EQ(r.status, Status::solved) << r.detail;
  EXPECT_LE((r.B1 - d.B).norm(), 1e-9 * d.B.norm());
  EXPECT_LE((r.B0 - d.B).norm(), 1e-6 * d.B.norm());
}

TEST(Bundled, BadOptionsAndFormulationsWithoutDerivativesAreRefused) {
  const Scene s = load("anitescu_grasp");
  const Model& m = *s.model;
  BundledStep bundled(s.model);
  const Point p = after(m, 1);
  EXPECT_EQ(bundled.compute(p.state, p.params, {.samples = 3, .sigma = 0.1}).detail,
            "bundled: samples must be at least n_a + 1 = 4 (got 3)");
  EXPECT_EQ(bundled.compute(p.state, p.params, {.samples = 10, .sigma = 0}).detail,
            "bundled: sigma must be a finite number > 0");
  EXPECT_EQ(bundled.compute(p.state, p.params, {.samples = 10, .sigma = 0}).status, Status::bad_input);
  const Scene e = load("ecp_box_tip");
  EXPECT_EQ(test::error_of([&] { BundledStep b(e.model); }), "bundled: ecp_ncp has no step derivatives");
}

}  // namespace
}  // namespace qs::bundled_test

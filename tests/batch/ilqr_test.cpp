// Iterative LQR through contact (quasistep/batch/ilqr.hpp): on steps that are linear (the
// pusher away from the puck) one iteration reaches the LQR optimum, computed here by least
// squares; the box QP finds the best of every active set, and command limits hold; through
// contact the cost falls, the returned trajectory is the Model's own steps, the smoothed
// and bundled derivatives find a push from a standstill where the exact ones stop at the
// contact; results are bitwise the same at 1 and 2 threads; the push example reaches its
// goal and its cost's Jacobians are right; bad options and inputs are refused with a reason.
#include "quasistep/batch/ilqr.hpp"

#include <gtest/gtest.h>

#include <Eigen/LU>
#include <Eigen/QR>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "examples/push_ilqr.hpp"
#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/batch_error.hpp"
#include "tests/support/example_json.hpp"

namespace qs::ilqr_test {
namespace {

Scene load(const std::string& name) { return parse_scene(test::example_json(name + ".json").dump()); }

/// 1/2 |w_s (pusher - target)|^2 + 1/2 |w_u u|^2 per step, 1/2 |w_T (pusher - target)|^2 at the end.
class PusherToTarget final : public IlqrCost {
 public:
  PusherToTarget(double tx, double ty, double ws, double wu, double wt) : tx_(tx), ty_(ty), ws_(ws), wu_(wu), wt_(wt) {}
  int running_size() const override { return 4; }
  int terminal_size() const override { return 2; }
  void running(int, const Eigen::VectorXd& x, const Eigen::VectorXd& u, Eigen::VectorXd& r, Eigen::MatrixXd& rx,
               Eigen::MatrixXd& ru) const override {
    r << ws_ * (x[3] - tx_), ws_ * (x[4] - ty_), wu_ * u[0], wu_ * u[1];
    rx(0, 3) = rx(1, 4) = ws_;
    ru(2, 0) = ru(3, 1) = wu_;
  }
  void terminal(const Eigen::VectorXd& x, Eigen::VectorXd& r, Eigen::MatrixXd& rx) const override {
    r << wt_ * (x[3] - tx_), wt_ * (x[4] - ty_);
    rx(0, 3) = rx(1, 4) = wt_;
  }

 private:
  double tx_, ty_, ws_, wu_, wt_;
};

/// The optimum of PusherToTarget on s_t = s_0 + h sum_{tau < t} u_tau, by least squares over
/// the stacked commands (each axis separately: they do not interact).
Eigen::MatrixXd lqr_by_least_squares(double s0x, double s0y, double h, int T, double tx, double ty, double ws,
                                     double wu, double wt) {
  Eigen::MatrixXd U(T, 2);
  for (int axis = 0; axis < 2; ++axis) {
    const double s0 = axis == 0 ? s0x : s0y, target = axis == 0 ? tx : ty;
    // Rows: ws (s_t - target) for t = 1..T-1 (t = 0 does not depend on u), wu u_t, wt (s_T - target).
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(2 * T, T);
    Eigen::VectorXd b = Eigen::VectorXd::Zero(2 * T);
    for (int t = 1; t < T; ++t) {
      for (int tau = 0; tau < t; ++tau) M(t - 1, tau) = ws * h;
      b[t - 1] = -ws * (s0 - target);
    }
    for (int t = 0; t < T; ++t) M(T - 1 + t, t) = wu;
    for (int tau = 0; tau < T; ++tau) M(2 * T - 1, tau) = wt * h;
    b[2 * T - 1] = -wt * (s0 - target);
    U.col(axis) = M.colPivHouseholderQr().solve(b);
  }
  return U;
}

State pusher_at(const Model& m, double x, double y) {
  State s = initial_state(m);
  s.q[3] = x;
  s.q[4] = y;
  // The Anitescu step's impedance references start where the pusher is.
  for (int a = 0; a < derivative_memory_size(m); ++a) s.memory[a] = s.q[3 + a];
  return s;
}

TEST(Ilqr, OnLinearStepsOneIterationReachesTheLqrOptimum) {
  const Scene s = load("mpc_push");
  const Model& m = *s.model;
  IlqrOptions o;
  o.horizon = 10;
  o.max_iterations = 1;
  o.regularization = 0;
  Ilqr ilqr(s.model, o);
  // The pusher 40 cm from the puck, its target 5 cm away: no contact on the way.
  const State start = pusher_at(m, -0.4, -0.3);
  const PusherToTarget cost(-0.45, -0.28, 1.0, 0.1, 3.0);
  const IlqrResult& r = ilqr.solve(start, Eigen::MatrixXd::Zero(10, 2), cost);
  ASSERT_EQ(r.status, Status::solved) << r.detail;
  EXPECT_EQ(r.iterations, 1);
  const Eigen::MatrixXd expected = lqr_by_least_squares(-0.4, -0.3, m.step.h, 10, -0.45, -0.28, 1.0, 0.1, 3.0);
  EXPECT_LT((r.controls - expected).norm(), 1e-9 * expected.norm()) << r.controls << "\n\n" << expected;
  EXPECT_LT(r.cost, r.initial_cost);
}

TEST(Ilqr, BoxQpMatchesTheBestOfEveryActiveSet) {
  // Random definite 3 x 3 problems against enumeration: each entry free, at its lower or at
  // its upper limit; the best feasible stationary point of the 27 is the optimum. Every
  // fourth trial starts outside the box, every fifth has an entry's limits equal.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  int different_free_sets = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Eigen::MatrixXd M(3, 3);
    for (int i = 0; i < 9; ++i) M(i / 3, i % 3) = unit(rng);
    const Eigen::MatrixXd H = M * M.transpose() + 0.1 * Eigen::MatrixXd::Identity(3, 3);
    Eigen::VectorXd g(3), lo(3), hi(3);
    for (int i = 0; i < 3; ++i) {
      g[i] = 2 * unit(rng);
      lo[i] = -std::abs(unit(rng));
      hi[i] = std::abs(unit(rng));
    }
    if (trial % 5 == 0) lo[1] = hi[1] = 0.5 * unit(rng);
    Eigen::VectorXd start = Eigen::VectorXd::Zero(3).cwiseMax(lo).cwiseMin(hi);
    if (trial % 4 == 0) start << 3 * unit(rng), 3 * unit(rng), 3 * unit(rng);
    const auto value = [&](const Eigen::VectorXd& d) { return 0.5 * d.dot(H * d) + g.dot(d); };
    double best = std::numeric_limits<double>::infinity();
    std::vector<int> best_free;
    for (int code = 0; code < 27; ++code) {
      std::vector<int> side{code % 3, code / 3 % 3, code / 9};  // 0 free, 1 lower, 2 upper
      Eigen::VectorXd d = Eigen::VectorXd::Zero(3);
      std::vector<int> free_index;
      for (int i = 0; i < 3; ++i) {
        if (side[i] == 1) d[i] = lo[i];
        else if (side[i] == 2) d[i] = hi[i];
        else free_index.push_back(i);
      }
      const int nf = static_cast<int>(free_index.size());
      if (nf > 0) {
        Eigen::MatrixXd Hff(nf, nf);
        Eigen::VectorXd rhs(nf);
        for (int a = 0; a < nf; ++a) {
          rhs[a] = -g[free_index[a]];
          for (int j = 0; j < 3; ++j)
            if (side[j] != 0) rhs[a] -= H(free_index[a], j) * d[j];
          for (int b = 0; b < nf; ++b) Hff(a, b) = H(free_index[a], free_index[b]);
        }
        const Eigen::VectorXd df = Hff.llt().solve(rhs);
        for (int a = 0; a < nf; ++a) d[free_index[a]] = df[a];
      }
      if ((d.array() >= lo.array() - 1e-12).all() && (d.array() <= hi.array() + 1e-12).all() && value(d) < best) {
        best = value(d);
        best_free = free_index;
      }
    }
    Eigen::VectorXd d;
    std::vector<char> free;
    Eigen::MatrixXd H_free_inverse;
    ASSERT_TRUE(box_qp(H, g, lo, hi, start, d, free, H_free_inverse));
    EXPECT_TRUE((d.array() >= lo.array()).all() && (d.array() <= hi.array()).all());
    EXPECT_NEAR(value(d), best, 1e-10) << "trial " << trial;
    // The inverse on the free set is the feedback gain's: H's free block inverted, zero on
    // the clamped entries. The free set is the optimum's where that is unambiguous (an entry
    // free at its limit with a zero gradient may be reported either way).
    std::vector<int> free_index;
    for (int i = 0; i < 3; ++i)
      if (free[static_cast<std::size_t>(i)]) free_index.push_back(i);
    const int nf = static_cast<int>(free_index.size());
    Eigen::MatrixXd Hff(nf, nf);
    for (int a = 0; a < nf; ++a)
      for (int b = 0; b < nf; ++b) Hff(a, b) = H(free_index[a], free_index[b]);
    const Eigen::MatrixXd inverse = nf > 0 ? Eigen::MatrixXd(Hff.inverse()) : Eigen::MatrixXd();
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        const auto a = std::find(free_index.begin(), free_index.end(), i) - free_index.begin();
        const auto b = std::find(free_index.begin(), free_index.end(), j) - free_index.begin();
        const double want = a < nf && b < nf ? inverse(a, b) : 0.0;
        EXPECT_NEAR(H_free_inverse(i, j), want, 1e-9 * (1 + std::abs(want))) << "trial " << trial;
      }
    if (free_index != best_free) ++different_free_sets;
  }
  EXPECT_LE(different_free_sets, 4);  // only where an entry sits at its limit with zero gradient
}

TEST(Ilqr, CommandLimitsHoldAndBindWhereTheUnlimitedOptimumExceedsThem) {
  const Scene s = load("mpc_push");
  const Model& m = *s.model;
  IlqrOptions o;
  o.horizon = 10;
  o.max_iterations = 5;
  o.u_min = {-0.05, -0.02};
  o.u_max = {0.05, 0.02};
  Ilqr ilqr(s.model, o);
  const State start = pusher_at(m, -0.4, -0.3);
  const PusherToTarget cost(-0.45, -0.28, 1.0, 0.01, 3.0);  // the free optimum is faster than the limits
  const IlqrResult& r = ilqr.solve(start, Eigen::MatrixXd::Zero(10, 2), cost);
  ASSERT_EQ(r.status, Status::solved) << r.detail;
  EXPECT_LE(r.controls.col(0).maxCoeff(), 0.05);
  EXPECT_GE(r.controls.col(0).minCoeff(), -0.05);
  EXPECT_LE(r.controls.col(1).maxCoeff(), 0.02);
  EXPECT_GE(r.controls.col(1).minCoeff(), -0.02);
  EXPECT_EQ(r.controls(0, 0), -0.05);  // toward the target at the limit
  EXPECT_EQ(r.controls(0, 1), 0.02);
  EXPECT_LT(r.cost, r.initial_cost);
}

/// The states the Model's own stepper takes from `start` under `controls`.
std::vector<State> replay(const Model& m, const State& start, const Eigen::MatrixXd& controls) {
  auto stepper = make_stepper(m);
  WorldParams p(m);
  p.commanded = true;
  std::vector<State> states{start};
  for (int t = 0; t < controls.rows(); ++t) {
    p.command.assign({controls(t, 0), controls(t, 1)});
    State next = states.back();
    EXPECT_EQ(stepper->step(m, p, next), Status::solved);
    states.push_back(next);
  }
  return states;
}

struct Case {
  const char* scene;
  IlqrDerivatives derivatives;
};

class IlqrThroughContact : public ::testing::TestWithParam<Case> {};

TEST_P(IlqrThroughContact, LowersTheCostAlongTheModelsOwnStepsTheSameAtAnyThreadCount) {
  // The push example's cost from a standstill near the puck: the optimiser must find the
  // push through contact.
  const Scene s = load(GetParam().scene);
  const Model& m = *s.model;
  examples::PushIlqrSettings settings;
  settings.contact_distance = m.formulation == Formulation::anitescu_qp ? 0.06 : 0.05;
  const examples::PushCost cost(settings);
  IlqrOptions o;
  o.horizon = 30;
  o.max_iterations = 8;
  o.derivatives = GetParam().derivatives;
  o.log_barrier_weight = 1000;
  o.bundled = {.samples = 16, .sigma = 0.02, .seed = 2};
  o.u_min = {-0.07, -0.07};
  o.u_max = {0.07, 0.07};
  // The pusher 1 cm from the puck on the far side from the goal, standing still at first.
  const double gx = settings.goal[0], gy = settings.goal[1], g = std::hypot(gx, gy), d = settings.contact_distance + 0.01;
  const State start = pusher_at(m, -d * gx / g, -d * gy / g);
  const Eigen::MatrixXd initial = Eigen::MatrixXd::Zero(30, 2);
  o.threads = 1;
  Ilqr one(s.model, o);
  const IlqrResult r = one.solve(start, initial, cost);
  ASSERT_EQ(r.status, Status::solved) << r.detail;
  EXPECT_GE(r.iterations, 1);
  // The returned trajectory is the Model's own steps under the returned commands, bitwise.
  const std::vector<State> states = replay(m, start, r.controls);
  ASSERT_EQ(states.size(), r.states.size());
  for (std::size_t t = 0; t < states.size(); ++t) {
    EXPECT_EQ(states[t].q, r.states[t].q) << "step " << t;
    EXPECT_EQ(states[t].memory, r.states[t].memory) << "step " << t;
  }
  const State& end = r.states.back();
  if (GetParam().derivatives == IlqrDerivatives::exact) {
    // The exact derivatives bring the pusher to the puck and stop there: at the contact with
    // no force the derivative is the one-sided one of the separating side, in which the
    // puck does not move, so pushing has no gradient (Suh, Pang & Tedrake 2022 and Pang,
    // Suh, Yang & Tedrake 2023 start from this).
    EXPECT_TRUE(r.converged);
    EXPECT_LT(std::hypot(end.q[0], end.q[1]), 1e-3);
    EXPECT_LT(r.cost, r.initial_cost);
  } else {
    // The smoothed and bundled derivatives see the push before contact: the puck moves at
    // least 2 cm toward the goal, and the cost falls by more than a tenth.
    EXPECT_LT(std::hypot(end.q[0] - gx, end.q[1] - gy), g - 0.02);
    EXPECT_LT(r.cost, 0.9 * r.initial_cost);
  }
  o.threads = 2;
  Ilqr two(s.model, o);
  const IlqrResult& r2 = two.solve(start, initial, cost);
  EXPECT_EQ(r2.controls, r.controls);
  EXPECT_EQ(r2.cost, r.cost);
}

INSTANTIATE_TEST_SUITE_P(Derivatives, IlqrThroughContact,
                         ::testing::Values(Case{"mpc_push", IlqrDerivatives::exact},
                                           Case{"mpc_push", IlqrDerivatives::bundled},
                                           Case{"anitescu_planar_push", IlqrDerivatives::exact},
                                           Case{"anitescu_planar_push", IlqrDerivatives::smoothed},
                                           Case{"anitescu_planar_push", IlqrDerivatives::bundled}),
                         [](const auto& info) {
                           return std::string(info.param.scene) + "_" + to_string(info.param.derivatives);
                         });

TEST(Ilqr, ThePushExampleReachesItsGoalWithExactAndSmoothedDerivatives) {
  for (const Case c : {Case{"mpc_push", IlqrDerivatives::exact}, Case{"anitescu_planar_push", IlqrDerivatives::smoothed}}) {
    const Scene s = load(c.scene);
    examples::PushIlqrSettings settings;
    settings.contact_distance = s.model->formulation == Formulation::anitescu_qp ? 0.06 : 0.05;
    settings.derivatives = c.derivatives;
    const examples::PushIlqrResult r = examples::push_to_goal_ilqr(s.model, settings);
    EXPECT_TRUE(r.reached) << c.scene << ": " << r.final_error << " m from the goal; " << r.failure;
    EXPECT_LT(r.replans, 150) << c.scene;
  }
}

TEST(Ilqr, ThePushCostsJacobiansAreItsCentralDifferences) {
  examples::PushIlqrSettings settings;
  const examples::PushCost cost(settings);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  int clearance_active = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Eigen::VectorXd x(5), u(2);
    x << 0.1 * unit(rng), 0.1 * unit(rng), unit(rng), 0, 0;
    const double bearing = 3.2 * unit(rng), distance = 0.05 + 0.03 * std::abs(unit(rng));
    x[3] = x[0] + distance * std::cos(bearing);
    x[4] = x[1] + distance * std::sin(bearing);
    u << 0.07 * unit(rng), 0.07 * unit(rng);
    Eigen::VectorXd r(7), rp(7), rm(7);
    Eigen::MatrixXd rx = Eigen::MatrixXd::Zero(7, 5), ru = Eigen::MatrixXd::Zero(7, 2), scratch_x(7, 5), scratch_u(7, 2);
    r.setZero();
    cost.running(0, x, u, r, rx, ru);
    clearance_active += r[6] != 0;
    const double e = 1e-6;
    for (int j = 0; j < 7; ++j) {
      Eigen::VectorXd xp = x, xm = x, up = u, um = u;
      (j < 5 ? xp[j] : up[j - 5]) += e;
      (j < 5 ? xm[j] : um[j - 5]) -= e;
      rp.setZero();
      rm.setZero();
      scratch_x.setZero();
      scratch_u.setZero();
      cost.running(0, xp, up, rp, scratch_x, scratch_u);
      scratch_x.setZero();
      scratch_u.setZero();
      cost.running(0, xm, um, rm, scratch_x, scratch_u);
      const Eigen::VectorXd column = (rp - rm) / (2 * e);
      const Eigen::VectorXd analytic = j < 5 ? Eigen::VectorXd(rx.col(j)) : Eigen::VectorXd(ru.col(j - 5));
      EXPECT_LT((column - analytic).norm(), 1e-6) << "trial " << trial << ", entry " << j;
    }
  }
  EXPECT_GT(clearance_active, 50);
  // The terminal residuals (4 w_goal on the puck, the behind term).
  for (int trial = 0; trial < 50; ++trial) {
    Eigen::VectorXd x(5);
    x << 0.1 * unit(rng), 0.1 * unit(rng), unit(rng), 0.1 * unit(rng), 0.1 * unit(rng);
    Eigen::VectorXd r(4), rp(4), rm(4);
    Eigen::MatrixXd rx = Eigen::MatrixXd::Zero(4, 5), scratch(4, 5);
    cost.terminal(x, r, rx);
    const double e = 1e-6;
    for (int j = 0; j < 5; ++j) {
      Eigen::VectorXd xp = x, xm = x;
      xp[j] += e;
      xm[j] -= e;
      scratch.setZero();
      cost.terminal(xp, rp, scratch);
      scratch.setZero();
      cost.terminal(xm, rm, scratch);
      EXPECT_LT(((rp - rm) / (2 * e) - rx.col(j)).norm(), 1e-6) << "terminal, trial " << trial << ", entry " << j;
    }
  }
}

TEST(Ilqr, AFailedRolloutReportsItsStepAndKeepsOnlyTheStepsTaken) {
  // The quasistatic box push with the box lifted 5 cm, beyond the contact margin: nothing
  // holds it against gravity, so the quasistatic step has no answer.
  const Scene s = load("anitescu_box_push");
  const Model& m = *s.model;
  State start = initial_state(m);
  start.q[1] += 0.05;
  IlqrOptions o;
  o.horizon = 5;
  Ilqr ilqr(s.model, o);
  const Eigen::MatrixXd initial = Eigen::MatrixXd::Zero(5, m.n_a);
  class Zero final : public IlqrCost {
   public:
    int running_size() const override { return 1; }
    int terminal_size() const override { return 1; }
    void running(int, const Eigen::VectorXd&, const Eigen::VectorXd&, Eigen::VectorXd& r, Eigen::MatrixXd&,
                 Eigen::MatrixXd&) const override {
      r[0] = 0;
    }
    void terminal(const Eigen::VectorXd&, Eigen::VectorXd& r, Eigen::MatrixXd&) const override { r[0] = 0; }
  };
  const IlqrResult& r = ilqr.solve(start, initial, Zero());
  EXPECT_EQ(r.status, Status::infeasible) << r.detail;
  EXPECT_EQ(r.detail.rfind("ilqr: step 1 of the rollout: ", 0), 0u) << r.detail;
  ASSERT_EQ(r.states.size(), 1u);  // the start only: the first step failed
  EXPECT_EQ(r.states[0].q, start.q);
  EXPECT_EQ(r.controls.rows(), 0);
  EXPECT_TRUE(std::isnan(r.cost));
}

TEST(Ilqr, RefusesWhatItCannotOptimise) {
  const Scene push = load("mpc_push");
  IlqrOptions o;
  o.derivatives = IlqrDerivatives::smoothed;
  o.log_barrier_weight = 1000;
  EXPECT_EQ(test::error_of([&] { Ilqr(push.model, o); }),
            "ilqr: smoothed derivatives need the anitescu_qp formulation (got halm_posa_lcp)");
  const Scene anitescu = load("anitescu_planar_push");
  o.log_barrier_weight = 0;
  EXPECT_EQ(test::error_of([&] { Ilqr(anitescu.model, o); }),
            "ilqr: smoothed derivatives need a log_barrier_weight that is a finite number > 0");
  o = {};
  o.horizon = 0;
  EXPECT_EQ(test::error_of([&] { Ilqr(push.model, o); }), "ilqr: horizon must be at least 1 step");
  o = {};
  o.u_min = {-1};
  o.u_max = {1};
  EXPECT_EQ(test::error_of([&] { Ilqr(push.model, o); }), "ilqr: u_min and u_max need one entry per command (2)");
  o.u_min = {1, 0};
  o.u_max = {-1, 0};
  EXPECT_EQ(test::error_of([&] { Ilqr(push.model, o); }),
            "ilqr: command 0's u_min exceeds its u_max, or is NaN");
  o = {};
  o.derivatives = IlqrDerivatives::bundled;
  EXPECT_EQ(test::error_of([&] { Ilqr(push.model, o); }),
            "ilqr: bundled derivatives need a finite sigma > 0 and at least n_u + 1 samples");
  o = {};
  o.regularization = std::numeric_limits<double>::infinity();
  EXPECT_EQ(test::error_of([&] { Ilqr(push.model, o); }),
            "ilqr: tolerance and regularization must be finite numbers >= 0");
  const Scene ecp = load("ecp_desk");
  EXPECT_EQ(test::error_of([&] { Ilqr(ecp.model, {}); }), "ilqr: ecp_ncp has no step derivatives");

  o = {};
  o.horizon = 4;
  Ilqr ilqr(push.model, o);
  const PusherToTarget cost(0, 0, 1, 1, 1);
  const IlqrResult& wrong = ilqr.solve(initial_state(*push.model), Eigen::MatrixXd::Zero(3, 2), cost);
  EXPECT_EQ(wrong.status, Status::bad_input);
  EXPECT_EQ(wrong.detail, "ilqr: the initial controls must be 4 x 2 (got 3 x 2)");
  Eigen::MatrixXd nan = Eigen::MatrixXd::Zero(4, 2);
  nan(1, 1) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(ilqr.solve(initial_state(*push.model), nan, cost).detail, "ilqr: the initial controls must be finite numbers");
  State short_memory = initial_state(*anitescu.model);
  short_memory.memory.resize(0);
  Ilqr anitescu_ilqr(anitescu.model, o);
  const IlqrResult& refused = anitescu_ilqr.solve(short_memory, Eigen::MatrixXd::Zero(4, 2), cost);
  EXPECT_EQ(refused.status, Status::bad_input);
  EXPECT_NE(refused.detail.find("memory entries (got 5 and 0)"), std::string::npos) << refused.detail;
  EXPECT_TRUE(refused.states.empty());  // nothing of an earlier call
  State far = initial_state(*push.model);
  far.q[0] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ilqr.solve(far, Eigen::MatrixXd::Zero(4, 2), cost).detail, "ilqr: the start state's q must be finite numbers");
}

}  // namespace
}  // namespace qs::ilqr_test

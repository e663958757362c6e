// The uncoupled complementarity problem of Pang, Trinkle & Lo 1996: construction of X and Y, recovery and
// the check of eqs. (2)-(10), the paper's bilinear algorithm on its data sets 1-3, the exact
// branch-and-bound's proof for data set 4, and the enumeration of contact modes.
#include "quasistep/core/ucp_problem_file.hpp"
#include "quasistep/core/formulations/ucp/ucp_scene.hpp"
#include "tests/support/random_problems.hpp"
#include "quasistep/kernels/ucp.hpp"

#include <gtest/gtest.h>

#include <Eigen/LU>
#include <Eigen/QR>
#include <cmath>
#include <iostream>
#include <random>
#include <sstream>
#include <string>

#include "quasistep/core/model.hpp"
#include "quasistep/core/scene.hpp"

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

namespace qs::ucp_test {
namespace {

UcpData data_set(int k) {
  return load_ucp_problem(std::string(QUASISTEP_SOURCE_DIR) + "/tests/data/ucp/data_set_" + std::to_string(k) +
                               ".json");
}

Ucp built(const UcpData& d) {
  Ucp u;
  EXPECT_EQ(u.build(d), Status::solved) << u.error_field() << ": " << u.error_message();
  return u;
}

/// Every (x, y) pair of X x Y with x'y = 0 at a complementary pair of vertices, checked by
/// brute force over the contact modes (4^n_c LP pairs): true when one exists.
bool brute_force_solvable(const Ucp& u) {
  const int nc = u.n_c(), n = u.n();
  const double inf = std::numeric_limits<double>::infinity();
  DenseLpCapacity cx, cy;
  cx.rows = std::max(1, static_cast<int>(u.A_x().rows()));
  cx.cols = n;
  cy.rows = static_cast<int>(u.A_y().rows());
  cy.cols = n;
  DenseLp lx(cx), ly(cy);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
  long combos = 1;
  for (int i = 0; i < nc; ++i) combos *= 4;
  for (long c = 0; c < combos; ++c) {
    Eigen::VectorXd hx = Eigen::VectorXd::Constant(n, inf), hy = hx;
    long code = c;
    for (int i = 0; i < nc; ++i, code /= 4) {
      switch (code % 4) {
        case 0: hy[i] = hy[nc + i] = hy[2 * nc + i] = 0; break;
        case 1: hx[i] = hx[nc + i] = hx[2 * nc + i] = 0; break;
        case 2: hx[i] = hx[2 * nc + i] = hy[nc + i] = 0; break;
        default: hx[i] = hx[nc + i] = hy[2 * nc + i] = 0; break;
      }
    }
    if (lx.solve(DenseLpProblem{u.A_x(), u.b_x(), zero, zero, hx}) != Status::solved) continue;
    if (ly.solve(DenseLpProblem{u.A_y(), u.b_y(), zero, zero, hy}) == Status::solved) return true;
  }
  return false;
}

// ---- construction ----------------------------------------------------------------------

TEST(UcpBuild, DataSet1HasThePaperShapes) {
  const Ucp u = built(data_set(1));
  EXPECT_EQ(u.n_c(), 3);
  EXPECT_EQ(u.n_q(), 3);
  EXPECT_EQ(u.n_theta(), 6);
  EXPECT_EQ(u.rank(), 3);
  EXPECT_TRUE(u.abar().empty());
  EXPECT_EQ(u.A_x().rows(), 3);  // 2 n_c - rank(P)
  EXPECT_EQ(u.A_x().cols(), 9);
  EXPECT_EQ(u.A_y().rows(), 6);  // n_c + n_q + |abar|
  EXPECT_EQ(u.A_y().cols(), 9);
  EXPECT_DOUBLE_EQ(u.b_y()[4], 1.0);  // b_y = -d: the unit weight
}

TEST(UcpBuild, ZSpansTheLeftNullSpaceOfP) {
  const UcpData d = data_set(2);
  const Ucp u = built(d);
  // Z P = 0 and Z Z' = I: Z a = 0 exactly for a in col(P).
  EXPECT_LT((u.Z() * d.P).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((u.Z() * u.Z().transpose() - Eigen::MatrixXd::Identity(3, 3)).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(UcpBuild, WithWnWtSquareZIsThePapersClosedFormUpToRowOperations) {
  // Sec. 2: with W_n, W_t nonsingular and abar empty, Z = [W_n^-T  -W_t^-T] works; ours
  // must have the same null space, i.e. each row of one is a combination of the other's.
  const UcpData d = data_set(1);
  const Ucp u = built(d);
  const Eigen::Matrix3d Wn = d.P.topRows(3).transpose(), Wt = d.P.bottomRows(3).transpose();
  Eigen::MatrixXd Zp(3, 6);
  Zp << Wn.transpose().inverse(), -Wt.transpose().inverse();
  EXPECT_LT((Zp * d.P).cwiseAbs().maxCoeff(), 1e-12);
  const Eigen::MatrixXd T = u.Z() * Zp.transpose() * (Zp * Zp.transpose()).inverse();  // Z = T Zp
  EXPECT_LT((T * Zp - u.Z()).cwiseAbs().maxCoeff(), 1e-10);
}

TEST(UcpBuild, RankDeficientPDropsRowsOfZ) {
  UcpData d = data_set(1);
  d.P.col(2) = d.P.col(0) + d.P.col(1);  // rank 2: Z has 4 rows
  const Ucp u = built(d);
  EXPECT_EQ(u.rank(), 2);
  EXPECT_EQ(u.Z().rows(), 4);
  EXPECT_LT((u.Z() * d.P).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(UcpBuild, EffortControlledJointsEnterPAndD) {
  // Joint 5 (contact 3's tangential motion) effort-controlled: P = [W' J_abar] has a 4th
  // column, d a 7th entry (g_man - tau)_5, and the recovered theta_dot_5 is an unknown.
  UcpData d = data_set(1);
  d.alpha = std::vector<int>{0, 1, 2, 3, 4};
  Eigen::MatrixXd P(6, 4);
  P << d.P, Eigen::VectorXd::Unit(6, 5);
  d.P = P;
  d.d.reset();
  d.g_obj = Eigen::Vector3d(0, -1, 0);
  d.g_man = Eigen::VectorXd::Zero(6);
  d.tau = Eigen::VectorXd::Zero(6);
  d.tau[5] = 0.05;
  const Ucp u = built(d);
  EXPECT_EQ(u.abar(), std::vector<int>{5});
  EXPECT_EQ(u.A_y().rows(), 7);
  EXPECT_DOUBLE_EQ(u.d()[6], -0.05);
  // The tangential force at contact 3 must carry the joint's effort (eq. (3)): c_t3 = 0.05.
  UcpExact ex(u);
  const UcpExactResult& r = ex.solve();
  ASSERT_EQ(r.status, Status::solved) << r.check.worst << " eq " << r.check.equation << " at " << r.check.index;
  UcpMotion m = u.make_motion();
  u.recover(r.x, r.y, m);
  EXPECT_NEAR(m.c_t[2], 0.05, 1e-9);
  EXPECT_NEAR(m.tau[5], 0.05, 0);
  EXPECT_LE(u.check(m).worst, 1e-9);
}

TEST(UcpBuild, GivenLoadsEqualD) {
  UcpData a = data_set(2), b = a;
  b.d.reset();
  b.g_obj = Eigen::Vector3d(0, -1, 0);
  const Ucp ua = built(a), ub = built(b);
  EXPECT_EQ(ua.d(), ub.d());
}

TEST(UcpBuild, RejectsMalformedDataNamingTheField) {
  struct Case {
    const char* field;
    void (*edit)(UcpData&);
  };
  const Case cases[] = {
      {"P", [](UcpData& d) { d.P = d.P.topRows(5).eval(); }},
      {"J_n", [](UcpData& d) { d.J_n = d.J_n.topRows(2).eval(); }},
      {"J_t", [](UcpData& d) { d.J_t = d.J_t.leftCols(5).eval(); }},
      {"theta_dot", [](UcpData& d) { d.theta_dot = d.theta_dot.head(5).eval(); }},
      {"mu", [](UcpData& d) { d.mu = d.mu.head(2).eval(); }},
      {"mu[1]", [](UcpData& d) { d.mu[1] = -0.1; }},
      {"P[2][1]", [](UcpData& d) { d.P(2, 1) = std::nan(""); }},
      {"theta_dot[3]", [](UcpData& d) { d.theta_dot[3] = std::numeric_limits<double>::infinity(); }},
      {"alpha[1]", [](UcpData& d) { d.alpha = std::vector<int>{0, 6}; }},
      {"alpha[2]", [](UcpData& d) { d.alpha = std::vector<int>{0, 1, 1}; }},
      {"P", [](UcpData& d) { d.alpha = std::vector<int>{0, 1, 2, 3, 4}; }},  // P lacks J_abar's column
      {"d", [](UcpData& d) { d.d = Eigen::VectorXd::Zero(5); }},
      {"d[0]", [](UcpData& d) { (*d.d)[0] = 1; }},
      {"d", [](UcpData& d) { d.g_obj = Eigen::Vector3d(0, -1, 0); }},
      {"g_obj", [](UcpData& d) { d.d.reset(); }},
      {"g_obj", [](UcpData& d) {
         d.d.reset();
         d.g_obj = Eigen::Vector2d(0, -1);
       }},
  };
  for (const Case& c : cases) {
    UcpData d = data_set(1);
    c.edit(d);
    Ucp u;
    EXPECT_EQ(u.build(d), Status::bad_input) << c.field;
    EXPECT_EQ(u.error_field(), c.field) << u.error_message();
    EXPECT_FALSE(u.error_message().empty());
  }
  {
    // P's J_abar block must be [J_n; J_t]'s abar columns.
    UcpData d = data_set(1);
    d.alpha = std::vector<int>{0, 1, 2, 3, 4};
    Eigen::MatrixXd P(6, 4);
    P << d.P, Eigen::VectorXd::Unit(6, 4);  // column of joint 4, not 5
    d.P = P;
    d.d = Eigen::VectorXd::Zero(7);
    (*d.d)[4] = -1;
    Ucp u;
    EXPECT_EQ(u.build(d), Status::bad_input);
    EXPECT_EQ(u.error_field(), "P");
  }
}

// ---- recovery and the check --------------------------------------------------------------

TEST(UcpRecover, RoundTripsAConstructedMotion) {
  // Build loads and velocities from a chosen motion (sec. 5's recipe), then check that
  // (x, y) from it recovers the motion and satisfies eqs. (2)-(10), with the sign
  // v = W' q_dot - J theta_dot on an effort-controlled joint.
  UcpData d = data_set(1);
  d.alpha = std::vector<int>{0, 1, 2, 3, 4};
  Eigen::MatrixXd P(6, 4);
  P << d.P, Eigen::VectorXd::Unit(6, 5);
  d.P = P;
  const Eigen::Vector3d q_dot(0.3, -0.2, 0.1);
  Eigen::VectorXd theta(6);
  theta << 0.1, 0.2, -0.3, 0.4, 0.05, -0.6;
  // Make contact 0 breaking, contact 1 rolling, contact 2 sliding: choose theta so that
  // v = W' q_dot - J theta has v_n = (0.5, 0, 0), v_t = (., 0, 0.7).
  const Eigen::MatrixXd WT = d.P.leftCols(3);
  Eigen::MatrixXd J(6, 6);
  J << d.J_n, d.J_t;
  Eigen::VectorXd v(6);
  v << 0.5, 0, 0, -0.2, 0, 0.7;
  theta = J.colPivHouseholderQr().solve(WT * q_dot - v);  // J is a permutation
  d.theta_dot = theta;
  // Forces: c = (0, 0, 0 | 2, -0.5, -0.3 * 2) at the cone's edge for contact 2 sliding +.
  Eigen::VectorXd cn(3), ct(3);
  cn << 0, 2, 2;
  ct << 0, -0.5, -0.6;
  Eigen::VectorXd c(6);
  c << cn, ct;
  d.d.reset();
  d.g_obj = -(WT.transpose() * c);
  d.g_man = Eigen::VectorXd::Zero(6);
  d.tau = J.transpose() * c;  // tau - g_man = J' c, eq. (3)
  const Ucp u = built(d);
  Eigen::VectorXd x(9), y(9);
  x << v.head(3), v.tail(3).cwiseMax(0), (-v.tail(3)).cwiseMax(0);
  y << cn, (ct + d.mu.cwiseProduct(cn)), (d.mu.cwiseProduct(cn) - ct);  // s+ = c_t + U c_n, s- = U c_n - c_t
  EXPECT_LT((u.A_x() * x - u.b_x()).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((u.A_y() * y - u.b_y()).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_NEAR(x.dot(y), 0, 1e-15);
  UcpMotion m = u.make_motion();
  u.recover(x, y, m);
  EXPECT_LT((m.q_dot - q_dot).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_NEAR(m.theta_dot[5], theta[5], 1e-12);  // the unknown joint velocity, sign included
  EXPECT_LT((m.c_t - ct).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((m.tau - d.tau).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LE(u.check(m).worst, 1e-12);

  // Each equation's violation is caught and named.
  UcpMotion bad = m;
  bad.c_t[2] = 0.5;  // friction pushing with the slip: eqs. (2), (3) and (10)
  EXPECT_GT(u.check(bad).worst, 0.05);
  bad = m;
  bad.v_n[0] = -0.1;  // penetration: (4) and (6)
  EXPECT_GT(u.check(bad).worst, 0.05);
  // A narrower cone at contact 1 (|c_t| = 0.5 > 0.2 c_n): only eq. (7) fails.
  UcpData narrow = d;
  narrow.mu[1] = 0.2;
  const Ucp un = built(narrow);
  const UcpCheck c7 = un.check(m);
  EXPECT_EQ(c7.equation, 7);
  EXPECT_EQ(c7.index, 1);
  EXPECT_GT(c7.worst, 0.005);
}

// ---- the bilinear algorithm on the paper's data sets --------------------------------------

class UcpPaper : public ::testing::TestWithParam<int> {};

TEST_P(UcpPaper, BilinearSolvesWithAtMostTwoPairs) {
  // Sec. 5: "We successfully solved all of them with x'y = 0 by finding no more than two
  // (x, y) pairs (a total of 6 linear programs, including the two initial ones)".
  const Ucp u = built(data_set(GetParam()));
  UcpBilinear b(u);
  const UcpBilinearResult& r = b.solve();
  ASSERT_EQ(r.status, Status::solved);
  EXPECT_LE(r.pairs, 2);
  EXPECT_LE(r.lps, 6);
  EXPECT_LE(r.product, 1e-10);
  EXPECT_LE(r.check.worst, 1e-9);
  // The exact method agrees that a solution exists.
  UcpExact ex(u);
  EXPECT_EQ(ex.solve().status, Status::solved);
  EXPECT_TRUE(brute_force_solvable(u));
}

INSTANTIATE_TEST_SUITE_P(UcpDataSets1To3, UcpPaper, ::testing::Values(1, 2, 3));

TEST(UcpPaperDataSet4, ExactProvesNoSolution) {
  const Ucp u = built(data_set(4));
  UcpExact ex(u);
  const UcpExactResult& r = ex.solve();
  EXPECT_EQ(r.status, Status::infeasible);
  EXPECT_EQ(r.empty_side, 0);  // X and Y are both nonempty: the complementarity is what fails
  EXPECT_GT(r.stats.nodes, 1);
  EXPECT_EQ(r.stats.leaves, 0);
  // Cross-checks: brute force over the 64 mode combinations, and the enumeration.
  EXPECT_FALSE(brute_force_solvable(u));
  const UcpEnumerationResult e = ucp_enumerate_modes(u);
  EXPECT_EQ(e.status, Status::solved);
  EXPECT_TRUE(e.solutions.empty());
  // The bilinear algorithm cannot tell: it cycles (the paper: "the algorithm terminated due
  // to cycling"), restarting from random adjacent pairs until its limit.
  UcpBilinear b(u);
  const UcpBilinearResult& rb = b.solve();
  EXPECT_EQ(rb.status, Status::not_found);
  EXPECT_EQ(rb.restarts, 20);
  EXPECT_GE(rb.step3, 20);
  EXPECT_EQ(rb.products.size(), static_cast<size_t>(rb.pairs) + 1);
  EXPECT_GT(rb.product, 1.0);  // the best x'y it reached (1.1495)
  // Step 1 solves two LPs per pair, Step 3 none; the last Step 3 ends the run without a pair.
  EXPECT_EQ(rb.lps, 2 + 2 * (rb.pairs - (rb.step3 - 1)));
  // Deterministic for a seed; the paper's full Step 3 (every adjacent extreme point) stalls too.
  const std::vector<double> first = rb.products;
  EXPECT_EQ(b.solve().products, first);
  UcpBilinearOptions full;
  full.full_adjacency = true;
  UcpBilinear bf(u, full);
  EXPECT_EQ(bf.solve().status, Status::not_found);
  UcpBilinearOptions few;
  few.max_restarts = 2;
  UcpBilinear b2(u, few);
  EXPECT_EQ(b2.solve().restarts, 2);
}

// Sec. 4's original algorithm repeats Step 3 from the random pair; sec. 5's modification (the
// default) goes back to Step 1 from it. On data set 4 (no solution) both stall; they agree up
// to the first random pair, after which only the modification solves LPs.
TEST(UcpPaperDataSet4, OriginalRestartRepeatsStep3WithoutLps) {
  const Ucp u = built(data_set(4));
  UcpBilinearOptions none;
  none.max_restarts = 0;
  UcpBilinear b0(u, none);
  const UcpBilinearResult r0 = b0.solve();  // ends at the first stationary pair's Step 3
  ASSERT_EQ(r0.status, Status::not_found);
  ASSERT_EQ(r0.restarts, 0);
  const int k = r0.pairs + 1;  // the random pair's number
  UcpBilinearOptions mod, orig;
  mod.max_restarts = orig.max_restarts = 1;
  mod.max_pairs = orig.max_pairs = k + 1;  // one step past the random pair
  orig.restart = UcpRestart::step3;
  UcpBilinear bm(u, mod), bo(u, orig);
  const UcpBilinearResult rm = bm.solve(), ro = bo.solve();
  ASSERT_EQ(rm.restarts, 1);
  ASSERT_EQ(ro.restarts, 1);
  ASSERT_GE(rm.products.size(), static_cast<size_t>(k) + 1);
  ASSERT_GE(ro.products.size(), static_cast<size_t>(k) + 1);
  for (int i = 0; i <= k; ++i) EXPECT_EQ(rm.products[static_cast<size_t>(i)], ro.products[static_cast<size_t>(i)]) << i;
  EXPECT_EQ(rm.lps, r0.lps + 2);  // Step 1 from the random pair
  EXPECT_EQ(ro.lps, r0.lps);      // Step 3 from it: adjacent extreme points, no LP
  EXPECT_EQ(ro.step3, r0.step3 + 1);
  // A full run of the original stalls too, after its 20 random pairs, deterministically.
  UcpBilinearOptions full;
  full.restart = UcpRestart::step3;
  UcpBilinear bf(u, full);
  const UcpBilinearResult rf = bf.solve();
  EXPECT_EQ(rf.status, Status::not_found);
  EXPECT_EQ(rf.restarts, 20);
  EXPECT_EQ(bf.solve().products, rf.products);
}

// ---- the exact method: limits, determinism, agreement with brute force -----------------

TEST(UcpExact, NodeLimitGivesIterationLimit) {
  const Ucp u = built(data_set(4));
  UcpExactOptions o;
  o.max_nodes = 2;
  UcpExact ex(u, o);
  const UcpExactResult& r = ex.solve();
  EXPECT_EQ(r.status, Status::iteration_limit);
  EXPECT_EQ(r.stats.nodes, 2);
}

TEST(UcpExact, SameTreeOnAnyThreadCountAndInSerial) {
  const Ucp u = built(data_set(4));
  UcpExactOptions serial;
  serial.parallel = false;
  UcpExact a(u, serial), b(u);
  const UcpExactResult ra = a.solve(), rb = b.solve();
  EXPECT_EQ(ra.status, Status::infeasible);
  EXPECT_EQ(ra.stats.nodes, rb.stats.nodes);
  EXPECT_EQ(ra.stats.infeasible, rb.stats.infeasible);
  EXPECT_EQ(ra.stats.max_depth, rb.stats.max_depth);
}

TEST(UcpExact, EmptySidesAreReportedNotCrashed) {
  // Two opposed fingers both advancing on a 1-DOF object: v_n1 + v_n2 = -2 whatever the
  // object does, so no motion keeps v_n >= 0 (eq. (6)): X is empty.
  UcpData squeeze;
  squeeze.P.resize(4, 1);
  squeeze.P << 1, -1, 0, 0;
  squeeze.J_n = Eigen::MatrixXd::Zero(2, 4);
  squeeze.J_t = Eigen::MatrixXd::Zero(2, 4);
  squeeze.J_n(0, 0) = squeeze.J_n(1, 2) = 1;
  squeeze.J_t(0, 1) = squeeze.J_t(1, 3) = 1;
  squeeze.theta_dot = Eigen::Vector4d(1, 0, 1, 0);  // both fingers advance: v_n1 + v_n2 = -2
  squeeze.d = Eigen::VectorXd::Zero(3);
  squeeze.mu = Eigen::Vector2d(0.5, 0.5);
  const Ucp u = built(squeeze);
  UcpExact ex(u);
  EXPECT_EQ(ex.solve().status, Status::infeasible);
  EXPECT_EQ(ex.result().empty_side, 'X');
  UcpBilinear b(u);
  EXPECT_EQ(b.solve().status, Status::infeasible);
  EXPECT_EQ(b.result().empty_side, 'X');

  // A load that only a pulling contact could balance: c_n + 1 = 0 (eq. (2)), Y is empty.
  UcpData pull;
  pull.P.resize(2, 1);
  pull.P << 1, 0;
  pull.J_n = Eigen::MatrixXd::Zero(1, 2);
  pull.J_t = Eigen::MatrixXd::Zero(1, 2);
  pull.J_n(0, 0) = pull.J_t(0, 1) = 1;
  pull.theta_dot = Eigen::Vector2d(0, 0);
  pull.d = Eigen::Vector2d(0, 1);
  pull.mu = Eigen::VectorXd::Constant(1, 0.5);
  const Ucp v = built(pull);
  UcpExact ey(v);
  EXPECT_EQ(ey.solve().status, Status::infeasible);
  EXPECT_EQ(ey.result().empty_side, 'Y');
  UcpBilinear by(v);
  EXPECT_EQ(by.solve().status, Status::infeasible);
  EXPECT_EQ(by.result().empty_side, 'Y');
}

TEST(UcpRandom, GeneratorFollowsTable1Settings) {
  UcpRandomSpec spec;
  spec.n_c = 15;
  spec.mu_max = 1.2;
  spec.n_abar = 1;  // Table 1 row 4
  const UcpData d = ucp_random_problem(spec, 7);
  const Ucp u = built(d);
  EXPECT_EQ(u.n_c(), 15);
  EXPECT_EQ(u.n_theta(), 30);
  EXPECT_EQ(u.alpha().size(), 29u);
  EXPECT_EQ(u.abar().size(), 1u);
  EXPECT_LE(d.mu.maxCoeff(), 1.2);
  // Both polyhedra nonempty by construction.
  DenseLp lx(std::max(1, static_cast<int>(u.A_x().rows())), u.n()), ly(static_cast<int>(u.A_y().rows()), u.n());
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(u.n()), inf = Eigen::VectorXd::Constant(u.n(), 1e300 * 1e300);
  EXPECT_EQ(lx.solve(DenseLpProblem{u.A_x(), u.b_x(), zero, zero, inf}), Status::solved);
  EXPECT_EQ(ly.solve(DenseLpProblem{u.A_y(), u.b_y(), zero, zero, inf}), Status::solved);
  // Deterministic in the seed.
  const UcpData again = ucp_random_problem(spec, 7);
  EXPECT_EQ(again.P, d.P);
  EXPECT_EQ(again.tau, d.tau);
}

// Table 1 of Pang, Trinkle & Lo 1996: (n_c, mu_max, |abar|).
struct Table1Setting {
  int n_c;
  double mu_max;
  int n_abar;
};
constexpr Table1Setting kTable1Settings[20] = {
    {3, 1.0, 0},   {10, 1.0, 0}, {10, 2.0, 0}, {15, 1.2, 1},  {18, 0.8, 9},  {20, 1.0, 0}, {20, 1.5, 0},
    {20, 1.2, 0},  {20, 1.0, 10}, {20, 1.0, 10}, {20, 1.0, 0}, {30, 1.0, 0}, {30, 0.5, 15}, {30, 0.6, 15},
    {40, 1.0, 0},  {40, 1.0, 0}, {10, 1.3, 5}, {15, 1.2, 6},  {30, 0.6, 15}, {40, 1.0, 20}};

TEST(UcpTable1Construction, WitnessesSatisfyXAndYOnEveryRow) {
  // Sec. 5: "twenty feasible problems", X and Y nonempty by construction. For every row
  // (the effort-controlled ones included), three seeds and both finger-joint layouts, the
  // constructed x and y must satisfy X's and Y's constraints as Ucp builds them, and the
  // constructed motion and forces eqs. (2)-(5) and (7) on the raw data.
  for (int row = 1; row <= 20; ++row) {
    const Table1Setting& t = kTable1Settings[row - 1];
    for (const UcpFingerJoints joints : {UcpFingerJoints::world_xy, UcpFingerJoints::contact_frame}) {
      for (std::uint64_t seed = 0; seed < 3; ++seed) {
        UcpTable1Spec spec;
        spec.n_c = t.n_c;
        spec.mu_max = t.mu_max;
        spec.n_abar = t.n_abar;
        spec.joints = joints;
        const UcpTable1Instance in = ucp_table1_problem(spec, 1000 * static_cast<std::uint64_t>(row) + seed);
        const UcpData& d = in.data;
        const Ucp u = built(d);
        const std::string where = "row " + std::to_string(row) + " seed " + std::to_string(seed) +
                                  (joints == UcpFingerJoints::world_xy ? " world_xy" : " contact_frame");
        ASSERT_EQ(u.n_c(), t.n_c) << where;
        ASSERT_EQ(u.n_theta(), 2 * t.n_c) << where;
        ASSERT_EQ(static_cast<int>(u.abar().size()), t.n_abar) << where;
        ASSERT_EQ(in.x.size(), u.n()) << where;
        ASSERT_EQ(in.y.size(), u.n()) << where;
        // X and Y (sec. 2) as the solvers see them.
        EXPECT_GE(in.x.minCoeff(), 0.0) << where;
        EXPECT_GE(in.y.minCoeff(), 0.0) << where;
        EXPECT_LE((u.A_x() * in.x - u.b_x()).cwiseAbs().maxCoeff(), 1e-10 * std::max(1.0, u.x_scale())) << where;
        EXPECT_LE((u.A_y() * in.y - u.b_y()).cwiseAbs().maxCoeff(), 1e-10 * std::max(1.0, u.y_scale())) << where;
        // The raw equations: (2) W c + g_obj = 0, (3) J' c = tau - g_man, (4)-(5) v = W' q_dot
        // - J theta_dot, (6) v_n >= 0, (7) |c_t| <= mu c_n with c_n > 0.
        const Eigen::MatrixXd WT = d.P.leftCols(3);
        Eigen::MatrixXd J(2 * t.n_c, 2 * t.n_c);
        J << d.J_n, d.J_t;
        Eigen::VectorXd c(2 * t.n_c), v(2 * t.n_c);
        c << in.c_n, in.c_t;
        v << in.v_n, in.v_t;
        EXPECT_LE((WT.transpose() * c + d.g_obj).cwiseAbs().maxCoeff(), 1e-12) << where;
        EXPECT_LE((J.transpose() * c - (d.tau - d.g_man)).cwiseAbs().maxCoeff(), 1e-12) << where;
        EXPECT_LE((WT * in.q_dot - J * d.theta_dot - v).cwiseAbs().maxCoeff(), 1e-12) << where;
        EXPECT_GE(in.v_n.minCoeff(), 0.0) << where;
        EXPECT_GT(in.c_n.minCoeff(), 0.0) << where;
        for (int i = 0; i < t.n_c; ++i) {
          EXPECT_LE(std::abs(in.c_t[i]), d.mu[i] * in.c_n[i]) << where << " contact " << i;
          EXPECT_LE(d.mu[i], t.mu_max) << where;
        }
        // The recovered motion of the witnesses is the constructed one (Proposition 1):
        // q_dot, the given theta_dot on alpha and the forces.
        UcpMotion m = u.make_motion();
        u.recover(in.x, in.y, m);
        EXPECT_LE((m.q_dot - in.q_dot).cwiseAbs().maxCoeff(), 1e-9) << where;
        EXPECT_LE((m.theta_dot - d.theta_dot).cwiseAbs().maxCoeff(), 1e-9) << where;
        EXPECT_LE((m.c_t - in.c_t).cwiseAbs().maxCoeff(), 1e-12) << where;
      }
    }
  }
}

TEST(UcpTable1Construction, RollingContactsStopAndLeaveTheOtherDrawsAlone) {
  UcpTable1Spec spec;
  spec.n_c = 20;
  spec.n_abar = 17;
  const UcpTable1Instance a = ucp_table1_problem(spec, 7004, 7004);
  spec.rolling = 10;
  const UcpTable1Instance b = ucp_table1_problem(spec, 7004, 7004);
  for (int i = 0; i < 20; ++i) {
    if (i < 10) {
      EXPECT_EQ(b.v_n[i], 0.0) << i;
      EXPECT_EQ(b.v_t[i], 0.0) << i;
    } else {
      EXPECT_EQ(b.v_n[i], a.v_n[i]) << i;
      EXPECT_EQ(b.v_t[i], a.v_t[i]) << i;
    }
  }
  EXPECT_EQ(b.q_dot, a.q_dot);
  EXPECT_EQ(b.data.mu, a.data.mu);
  EXPECT_EQ(b.c_n, a.c_n);
  EXPECT_EQ(b.data.alpha, a.data.alpha);
  // Only the rolling fingers' commands change; the witness is still in X.
  EXPECT_EQ(b.data.theta_dot.tail(20), a.data.theta_dot.tail(20));
  EXPECT_NE(b.data.theta_dot.head(20), a.data.theta_dot.head(20));
  const Ucp u = built(b.data);
  EXPECT_LE((u.A_x() * b.x - u.b_x()).cwiseAbs().maxCoeff(), 1e-10 * std::max(1.0, u.x_scale()));
}

// Sec. 5's larger data set (n_c = 20, |alpha| = 23): "a complementary pair (x, y) was
// identified after running a single iteration", and in three versions with g_obj, g_man and
// mu changed, each again in one iteration with the same x, "rather degenerate with nine basic
// variables at value zero". bench_ucp's LargerDataSet geometry seed 4 with 10 of the 20
// contacts rolling in the constructed motion reproduces all of it.
TEST(UcpPaperLargerDataSet, OnePairAndTheSameDegenerateXInFourVersions) {
  UcpTable1Spec spec;
  spec.n_c = 20;
  spec.mu_max = 1.0;
  spec.n_abar = 17;
  spec.rolling = 10;
  Eigen::VectorXd x0;
  for (std::uint64_t v = 0; v < 4; ++v) {
    const Ucp u = built(ucp_table1_problem(spec, 7004, 7004 + 100 * v).data);
    ASSERT_EQ(u.alpha().size(), 23u);
    UcpBilinear b(u);
    const UcpBilinearResult& r = b.solve();
    ASSERT_EQ(r.status, Status::solved) << "version " << v;
    EXPECT_EQ(r.pairs, 1) << "version " << v;
    EXPECT_LE(r.check.worst, 1e-7) << "version " << v;
    if (v == 0) {
      x0 = r.x;
      const double tol = 1e-9 * std::max(1.0, x0.cwiseAbs().maxCoeff());
      EXPECT_EQ(u.A_x().rows(), 20);
      EXPECT_EQ((x0.array() > tol).count(), 11);  // 20 basic variables, 9 of them at zero
    } else {
      EXPECT_LE((r.x - x0).cwiseAbs().maxCoeff(), 1e-9) << "version " << v;
    }
  }
}

TEST(UcpTable1Construction, LoadSeedChangesOnlyY) {
  // The n_c = 20 study's versions (sec. 5): new mu, g_obj and g_man, the same X.
  UcpTable1Spec spec;
  spec.n_c = 20;
  spec.n_abar = 17;
  const UcpTable1Instance a = ucp_table1_problem(spec, 5, 5), b = ucp_table1_problem(spec, 5, 6);
  const Ucp ua = built(a.data), ub = built(b.data);
  EXPECT_EQ(ua.A_x(), ub.A_x());
  EXPECT_EQ(ua.b_x(), ub.b_x());
  EXPECT_EQ(a.x, b.x);
  EXPECT_NE(a.data.mu, b.data.mu);
  EXPECT_NE(ua.b_y(), ub.b_y());
  // Deterministic in the seeds.
  const UcpTable1Instance again = ucp_table1_problem(spec, 5, 6);
  EXPECT_EQ(again.data.P, b.data.P);
  EXPECT_EQ(again.data.g_man, b.data.g_man);
  EXPECT_EQ(again.y, b.y);
}

TEST(UcpRandom, ExactAndEnumerationAgreeWithBruteForce) {
  // Small random problems: the exact method settles each (never the node limit), and its
  // verdict, the enumeration's and brute force over the 4^n_c modes are the same. The
  // bilinear algorithm never claims a solution the others deny.
  int solvable = 0, unsolvable = 0, bilinear_solved = 0;
  for (int k = 0; k < 60; ++k) {
    UcpRandomSpec spec;
    spec.n_c = 2 + k % 3;
    spec.mu_max = (k % 4 == 0) ? 2.0 : 1.0;
    spec.n_abar = k % 3;
    const Ucp u = built(ucp_random_problem(spec, 1000 + static_cast<std::uint64_t>(k)));
    const bool truth = brute_force_solvable(u);
    UcpExact ex(u);
    const UcpExactResult& r = ex.solve();
    ASSERT_TRUE(r.status == Status::solved || r.status == Status::infeasible) << k;
    EXPECT_EQ(r.status == Status::solved, truth) << k;
    if (r.status == Status::solved) {
      EXPECT_LE(r.check.worst, 1e-9) << k;
    }
    const UcpEnumerationResult e = ucp_enumerate_modes(u);
    EXPECT_EQ(e.status, Status::solved);
    EXPECT_EQ(!e.solutions.empty(), truth) << k;
    for (const UcpModeSolution& s : e.solutions) {
      UcpMotion m = u.make_motion();
      u.recover(s.x, s.y, m);
      EXPECT_LE(u.check(m).worst, 1e-8) << k;
    }
    UcpBilinear b(u);
    const Status bs = b.solve().status;
    EXPECT_TRUE(bs == Status::solved || bs == Status::not_found) << k;
    if (bs == Status::solved) {
      EXPECT_TRUE(truth) << k;
      ++bilinear_solved;
    }
    (truth ? solvable : unsolvable) += 1;
  }
  // Both kinds occur, so the agreement above means something.
  EXPECT_GT(solvable, 5);
  EXPECT_GT(unsolvable, 0);
  std::cout << "random n_c 2-4: " << solvable << " solvable (" << bilinear_solved << " by bilinear), " << unsolvable
            << " proven without solution\n";
}

TEST(UcpRandom, PlantedSolutionsAreFoundWithEffortControlledJoints) {
  // Sec. 5's geometry with a planted complementary motion (a mode per contact, forces and
  // velocities to match, then loads and joint velocities from eqs. (2)-(5)): a solution
  // exists, with up to half the joints effort-controlled, and the exact method must find one.
  int bilinear_solved = 0, total = 0;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> U(0, 1);
  for (int k = 0; k < 24; ++k) {
    UcpRandomSpec spec;
    spec.n_c = 4 + k % 12;
    spec.mu_max = 1.0;
    spec.n_abar = (k % 4) * spec.n_c / 3;
    UcpData d = ucp_random_problem(spec, 77 + static_cast<std::uint64_t>(k));
    const int nc = spec.n_c;
    Eigen::VectorXd cn(nc), ct(nc), vn(nc), vt(nc);
    for (int i = 0; i < nc; ++i) {
      const int mode = static_cast<int>(U(rng) * 4);
      const double mu = d.mu[i];
      cn[i] = mode == 0 ? 0 : U(rng);
      ct[i] = mode == 1 ? (2 * U(rng) - 1) * mu * cn[i] : mode == 2 ? -mu * cn[i] : mode == 3 ? mu * cn[i] : 0;
      vn[i] = mode == 0 ? U(rng) : 0;
      vt[i] = mode == 0 ? 2 * U(rng) - 1 : mode == 2 ? U(rng) : mode == 3 ? -U(rng) : 0;
    }
    const Eigen::MatrixXd WT = d.P.leftCols(3);
    const Eigen::Vector3d q_dot(2 * U(rng) - 1, 2 * U(rng) - 1, 2 * U(rng) - 1);
    Eigen::VectorXd c(2 * nc);
    c << cn, ct;
    for (int i = 0; i < nc; ++i) {  // J_n, J_t select joints 2i and 2i+1 (eq. (4)-(5))
      d.theta_dot[2 * i] = WT.row(i).dot(q_dot) - vn[i];
      d.theta_dot[2 * i + 1] = WT.row(nc + i).dot(q_dot) - vt[i];
    }
    Eigen::MatrixXd J(2 * nc, 2 * nc);
    J << d.J_n, d.J_t;
    d.g_obj = -(WT.transpose() * c);
    d.tau = d.g_man + J.transpose() * c;
    const Ucp u = built(d);
    UcpExact ex(u);
    const UcpExactResult& r = ex.solve();
    EXPECT_EQ(r.status, Status::solved) << k << " n_c " << nc << " abar " << spec.n_abar;
    UcpBilinear b(u);
    bilinear_solved += b.solve().status == Status::solved;
    ++total;
  }
  std::cout << "planted: bilinear solved " << bilinear_solved << " of " << total << "\n";
}

// ---- enumeration -----------------------------------------------------------------------

TEST(UcpEnumerate, DataSet1HasThreeModeCombinations) {
  const Ucp u = built(data_set(1));
  const UcpEnumerationResult e = ucp_enumerate_modes(u);
  ASSERT_EQ(e.status, Status::solved);
  ASSERT_EQ(e.solutions.size(), 3u);
  for (const UcpModeSolution& s : e.solutions) {
    EXPECT_TRUE(Ucp::complementary(s.x, s.y, 1e-12));
    UcpMotion m = u.make_motion();
    u.recover(s.x, s.y, m);
    EXPECT_LE(u.check(m).worst, 1e-9);
  }
  // The bilinear algorithm's answer is one of them: contact 1 sliding-, 2 rolling, 3 breaking.
  EXPECT_EQ(e.solutions[1].modes,
            (std::vector<ContactMode>{ContactMode::sliding_negative, ContactMode::rolling, ContactMode::breaking}));
  EXPECT_EQ(e.nodes, ucp_enumerate_modes(u).nodes);  // deterministic
  EXPECT_EQ(ucp_enumerate_modes(u, 3).status, Status::iteration_limit);
}

/// The data with every load (d, or g_obj, g_man and tau) times s.
UcpData loads_scaled(UcpData d, double s) {
  if (d.d) *d.d *= s;
  d.g_obj *= s;
  d.g_man *= s;
  d.tau *= s;
  return d;
}

TEST(UcpScale, EnumerationFindsTheSameModesAtAnyLoadScale) {
  // Y = { y >= 0 : C y + d = 0 } is a cone section: loads times s scale its points by s. With
  // loads of 1e-9 every mode combination used to pass, its zero forces meeting C y = -d to
  // the LP kernel's absolute feasibility floor.
  const Ucp u1 = built(data_set(1));
  const UcpEnumerationResult e1 = ucp_enumerate_modes(u1);
  ASSERT_EQ(e1.status, Status::solved);
  ASSERT_EQ(e1.solutions.size(), 3u);
  for (double s : {1e-12, 1e-9, 1e-6, 1e6, 1e9, 1e12}) {
    SCOPED_TRACE(s);
    const Ucp u = built(loads_scaled(data_set(1), s));
    const UcpEnumerationResult e = ucp_enumerate_modes(u);
    ASSERT_EQ(e.status, Status::solved);
    ASSERT_EQ(e.solutions.size(), e1.solutions.size());
    for (size_t k = 0; k < e.solutions.size(); ++k) {
      EXPECT_EQ(e.solutions[k].modes, e1.solutions[k].modes);
      UcpMotion m = u.make_motion();
      u.recover(e.solutions[k].x, e.solutions[k].y, m);
      EXPECT_LE(u.check(m).worst, 1e-9);
      EXPECT_GT(m.c_n.cwiseAbs().maxCoeff(), 0.0);  // the contacts carry the load
    }
  }
}

TEST(UcpScale, BilinearAndExactAreVerifiedAtAnyLoadScale) {
  for (int k = 1; k <= 3; ++k) {
    for (double s : {1e-12, 1e-9, 1.0, 1e9, 1e12}) {
      SCOPED_TRACE("data set " + std::to_string(k) + " loads x " + std::to_string(s));
      const Ucp u = built(loads_scaled(data_set(k), s));
      UcpBilinear bilinear(u);
      const UcpBilinearResult& b = bilinear.solve();
      EXPECT_EQ(b.status, Status::solved);
      if (b.status == Status::solved) {
        EXPECT_LE(b.check.worst, 1e-9);
        EXPECT_LE(b.product, 1e-10 * b.x.cwiseAbs().maxCoeff() * b.y.cwiseAbs().maxCoeff());
      }
      UcpExact exact(u);
      const UcpExactResult& x = exact.solve();
      EXPECT_EQ(x.status, Status::solved);
      if (x.status == Status::solved) {
        EXPECT_LE(x.check.worst, 1e-9);
      }
    }
  }
}

// ---- from a scene at a configuration ---------------------------------------------------

/// The Pang & Tedrake 2018 gripper (examples/pang_tedrake_gripper.json) as a `ucp` scene, its fingers
/// optionally effort-controlled with a squeeze of `squeeze` N each.
std::shared_ptr<const Model> gripper(bool effort_fingers, double squeeze = 0) {
  std::ifstream in(std::string(QUASISTEP_SOURCE_DIR) + "/examples/pang_tedrake_gripper.json");
  nlohmann::json j = nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
  j["model"]["formulation"] = "ucp";
  if (effort_fingers) {
    j["joints"][0]["control"] = "effort";
    j["joints"][1]["control"] = "effort";
    j["commands"]["x_l"] = {{"effort", squeeze}};  // axis +x: pushes the left finger right
    j["commands"]["x_r"] = {{"effort", -squeeze}};
  }
  return parse_scene(j.dump()).model;
}

/// q with the cylinder at (0, 0.05) on the ground and the fingers at x = -+half_gap.
State gripper_state(const Model& m, double half_gap, double t) {
  State s = initial_state(m);
  s.t = t;
  for (const Dof& d : m.dofs) {
    const int k = static_cast<int>(&d - m.dofs.data());
    if (d.name == "x_l") s.q[k] = -half_gap;
    if (d.name == "x_r") s.q[k] = half_gap;
  }
  return s;
}

TEST(UcpScene, CylinderOnTheGroundRestsOnIt) {
  // Fingers 2 cm away: only the ground touches; the unique motion is rest, c_n = m g.
  const auto m = gripper(false);
  UcpScene sc;
  std::string why;
  ASSERT_EQ(ucp_from_scene(*m, gripper_state(*m, 0.07, 0), sc, why), Status::solved) << why;
  EXPECT_EQ(sc.slots.size(), 1u);
  EXPECT_EQ(sc.object_dofs.size(), 2u);  // the cylinder's x, y (no theta in this model)
  const Ucp u = built(sc.data);
  EXPECT_EQ(u.n_theta(), 3);
  UcpExact ex(u);
  ASSERT_EQ(ex.solve().status, Status::solved);
  UcpMotion mo = u.make_motion();
  u.recover(ex.result().x, ex.result().y, mo);
  EXPECT_NEAR(mo.c_n[0], 9.81, 1e-9);
  EXPECT_NEAR(mo.c_t[0], 0, 1e-9);
  EXPECT_LT(mo.q_dot.cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_EQ(ucp_enumerate_modes(u).solutions.size(), 1u);
}

TEST(UcpScene, RigidSqueezeHasNoMotionAndLiftingHasSome) {
  const auto m = gripper(false);
  UcpScene sc;
  std::string why;
  // t = 0.1 s: both fingers close at 0.1 m/s on the touching cylinder: X is empty.
  ASSERT_EQ(ucp_from_scene(*m, gripper_state(*m, 0.05, 0.1), sc, why), Status::solved) << why;
  EXPECT_EQ(sc.slots.size(), 3u);
  const Ucp squeeze = built(sc.data);
  UcpExact a(squeeze);
  EXPECT_EQ(a.solve().status, Status::infeasible);
  EXPECT_EQ(a.result().empty_side, 'X');
  // t = 0.3 s: the squeeze has stopped and the carriage rises at 0.1 m/s.
  ASSERT_EQ(ucp_from_scene(*m, gripper_state(*m, 0.05, 0.3), sc, why), Status::solved) << why;
  const Ucp lift = built(sc.data);
  UcpBilinear b(lift);
  EXPECT_EQ(b.solve().status, Status::solved);
  EXPECT_LE(b.result().check.worst, 1e-9);
}

TEST(UcpScene, EffortControlledFingersLiftOnlyWhenFrictionCarriesTheWeight) {
  // Pang & Tedrake's (2018) grasp as an instantaneous problem: fingers squeezing with f N each can carry
  // 2 mu f = f N of the 9.81 N weight. With f = 20 the cylinder rises with the carriage
  // (0.1 m/s); with f = 5 the fingers slide up and the ground carries 9.81 - 5 N.
  for (const double f : {20.0, 5.0}) {
    const auto m = gripper(true, f);
    UcpScene sc;
    std::string why;
    ASSERT_EQ(ucp_from_scene(*m, gripper_state(*m, 0.05, 0.3), sc, why), Status::solved) << why;
    const Ucp u = built(sc.data);
    EXPECT_EQ(u.abar(), (std::vector<int>{0, 1}));
    const UcpEnumerationResult e = ucp_enumerate_modes(u);
    ASSERT_EQ(e.status, Status::solved);
    ASSERT_FALSE(e.solutions.empty()) << f;
    for (const UcpModeSolution& sol : e.solutions) {
      UcpMotion mo = u.make_motion();
      u.recover(sol.x, sol.y, mo);
      EXPECT_LE(u.check(mo).worst, 1e-9);
      const int ground = 2;  // slots in pair order: left finger, right finger, ground
      EXPECT_NEAR(mo.c_n[0], f, 1e-9);  // the squeeze is what the effort sets
      EXPECT_NEAR(mo.c_n[1], f, 1e-9);
      EXPECT_NEAR(mo.tau[0], f, 1e-9);
      if (f == 20.0) {
        EXPECT_NEAR(mo.q_dot[1], 0.1, 1e-9) << "lifts with the carriage";
        EXPECT_NEAR(mo.c_n[ground], 0, 1e-9);
      } else {
        EXPECT_NEAR(mo.q_dot[1], 0, 1e-9) << "stays on the ground";
        EXPECT_NEAR(mo.c_n[ground], 9.81 - 5, 1e-9);
      }
    }
  }
}

TEST(UcpScene, RejectsScenesOutsideTheModel) {
  const auto m = gripper(false);
  State s = gripper_state(*m, 0.07, 0);
  s.q[1] = 0.5;  // the cylinder in the air: nothing touches it
  UcpScene sc;
  std::string why;
  EXPECT_EQ(ucp_from_scene(*m, s, sc, why), Status::bad_input);
  EXPECT_NE(why.find("nothing touches"), std::string::npos) << why;
}

// ---- the friction sweep over data set 2 (sec. 5: 56 combinations, 12 jammed) ----------------

TEST(UcpFrictionSweep, DataSet2EveryFrictionSettingIsSettled) {
  // Our grid: mu_i in {0.1, 0.3, 0.5, 0.7, 0.9} for each contact, 125 settings. Every one is
  // settled by the exact method (solved, or proven jammed), and the enumeration agrees.
  const double grid[] = {0.1, 0.3, 0.5, 0.7, 0.9};
  const UcpData base = data_set(2);
  int jammed = 0, bilinear = 0, with_step3 = 0;
  std::string list;
  for (double m0 : grid)
    for (double m1 : grid)
      for (double m2 : grid) {
        UcpData d = base;
        d.mu = Eigen::Vector3d(m0, m1, m2);
        const Ucp u = built(d);
        UcpExact ex(u);
        const Status st = ex.solve().status;
        ASSERT_TRUE(st == Status::solved || st == Status::infeasible);
        const UcpEnumerationResult e = ucp_enumerate_modes(u);
        EXPECT_EQ(e.solutions.empty(), st == Status::infeasible);
        UcpBilinear b(u);
        const Status bs = b.solve().status;
        if (bs == Status::solved) ++bilinear;
        if (bs == Status::solved && b.result().step3 > 0) ++with_step3;
        if (st == Status::infeasible) {
          EXPECT_EQ(bs, Status::not_found);
          ++jammed;
          std::ostringstream o;
          o << " (" << m0 << ", " << m1 << ", " << m2 << ")";
          list += o.str();
        }
      }
  // The paper's data set 4 setting (0.7, 0.9, 0.9) is on the grid and jammed; (0.1, 0.4,
  // 0.3) of data set 2 is not on it but its neighbours with small friction solve.
  EXPECT_NE(list.find("(0.7, 0.9, 0.9)"), std::string::npos);
  EXPECT_EQ(list.find("(0.1, 0.3, 0.3)"), std::string::npos);
  std::cout << "data set 2 sweep: " << jammed << " of 125 jammed (proven), " << bilinear
            << " solved by bilinear (" << with_step3 << " after Step 3); jammed:" << list << "\n";
}

}  // namespace
}  // namespace qs::ucp_test

// Semismooth Newton (quasistep/kernels/ncp_newton.hpp) on textbook NCPs, on LCPs and mixed LCPs
// cross-checked against Lemke, and on the failure paths: every answer is re-checked here
// from the data, independently of the solver's own residual.
#include "quasistep/kernels/ncp_newton.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <memory>
#include <random>

#include "quasistep/kernels/lemke.hpp"

namespace qs::ncp_newton_test {
namespace {

using Solver = NcpNewton<32>;
using Ref = Eigen::Ref<const Eigen::VectorXd>;
using VecRef = Eigen::Ref<Eigen::VectorXd>;
using MatRef = Eigen::Ref<Eigen::MatrixXd>;

/// Kojima & Shindo (1986), the 4-variable NCP of MCPLIB "kojshin": two solutions,
/// (1, 0, 3, 0) and the degenerate (sqrt(6)/2, 0, 0, 1/2).
bool kojima_shindo(const Ref& x, VecRef F, MatRef J) {
  F[0] = 3 * x[0] * x[0] + 2 * x[0] * x[1] + 2 * x[1] * x[1] + x[2] + 3 * x[3] - 6;
  F[1] = 2 * x[0] * x[0] + x[0] + x[1] * x[1] + 10 * x[2] + 2 * x[3] - 2;
  F[2] = 3 * x[0] * x[0] + x[0] * x[1] + 2 * x[1] * x[1] + 2 * x[2] + 9 * x[3] - 9;
  F[3] = x[0] * x[0] + 3 * x[1] * x[1] + 2 * x[2] + 3 * x[3] - 3;
  J << 6 * x[0] + 2 * x[1], 2 * x[0] + 4 * x[1], 1, 3,  //
      4 * x[0] + 1, 2 * x[1], 10, 2,                    //
      6 * x[0] + x[1], x[0] + 4 * x[1], 2, 9,           //
      2 * x[0], 6 * x[1], 2, 3;
  return true;
}

/// Josephy (1979), MCPLIB "josephy": the unique solution (sqrt(6)/2, 0, 0, 1/2), nondegenerate.
bool josephy(const Ref& x, VecRef F, MatRef J) {
  F[0] = 3 * x[0] * x[0] + 2 * x[0] * x[1] + 2 * x[1] * x[1] + x[2] + 3 * x[3] - 6;
  F[1] = 2 * x[0] * x[0] + x[0] + x[1] * x[1] + 3 * x[2] + 2 * x[3] - 2;
  F[2] = 3 * x[0] * x[0] + x[0] * x[1] + 2 * x[1] * x[1] + 2 * x[2] + 3 * x[3] - 1;
  F[3] = x[0] * x[0] + 3 * x[1] * x[1] + 2 * x[2] + 3 * x[3] - 3;
  J << 6 * x[0] + 2 * x[1], 2 * x[0] + 4 * x[1], 1, 3,  //
      4 * x[0] + 1, 2 * x[1], 3, 2,                     //
      6 * x[0] + x[1], x[0] + 4 * x[1], 2, 3,           //
      2 * x[0], 6 * x[1], 2, 3;
  return true;
}

/// The check every `solved` answer must pass, from F recomputed here.
template <class Fun>
void expect_ncp_solution(Fun&& f, const Solver::Result& r, int n_free, double tol) {
  ASSERT_EQ(r.status, Status::solved);
  const int n = static_cast<int>(r.x.size());
  Eigen::VectorXd F(n);
  Eigen::MatrixXd J(n, n);
  const Eigen::VectorXd x = r.x;
  ASSERT_TRUE(f(x, F, J));
  for (int i = 0; i < n; ++i) {
    if (i < n_free) {
      EXPECT_LE(std::abs(F[i]), tol) << i;
    } else {
      EXPECT_GE(x[i], -tol) << i;
      EXPECT_GE(F[i], -tol) << i;
      EXPECT_LE(std::abs(std::min(x[i], F[i])), tol) << i;
    }
  }
  EXPECT_LE(r.stats.residual, tol);
  EXPECT_DOUBLE_EQ(r.stats.residual, ncp_natural_residual(x, F, n_free));
}

TEST(NcpNewton, JosephyFromSeveralStartsReachesItsUniqueSolution) {
  auto s = std::make_unique<Solver>();
  Solver::Result r;
  const Eigen::Vector4d want(std::sqrt(6.0) / 2, 0, 0, 0.5);
  for (const Eigen::Vector4d& x0 : {Eigen::Vector4d(0, 0, 0, 0), Eigen::Vector4d(1, 1, 1, 1),
                                    Eigen::Vector4d(3, -2, 5, 0.1), Eigen::Vector4d(-1, 2, 0, 4)}) {
    ASSERT_EQ(s->solve(4, 0, josephy, x0, r), Status::solved) << x0.transpose();
    expect_ncp_solution(josephy, r, 0, 1e-10);
    EXPECT_LE((Eigen::Vector4d(r.x) - want).cwiseAbs().maxCoeff(), 1e-9) << x0.transpose();
    EXPECT_LE(r.stats.iterations, 30);
  }
}

TEST(NcpNewton, KojimaShindoReachesOneOfItsTwoSolutions) {
  auto s = std::make_unique<Solver>();
  Solver::Result r;
  const Eigen::Vector4d a(1, 0, 3, 0), b(std::sqrt(6.0) / 2, 0, 0, 0.5);
  for (const Eigen::Vector4d& x0 : {Eigen::Vector4d(0, 0, 0, 0), Eigen::Vector4d(1, 1, 1, 1),
                                    Eigen::Vector4d(1, 0, 3, 0.5), Eigen::Vector4d(2, 2, 2, 2)}) {
    ASSERT_EQ(s->solve(4, 0, kojima_shindo, x0, r), Status::solved) << x0.transpose();
    expect_ncp_solution(kojima_shindo, r, 0, 1e-10);
    const Eigen::Vector4d x = r.x;
    EXPECT_LE(std::min((x - a).cwiseAbs().maxCoeff(), (x - b).cwiseAbs().maxCoeff()), 1e-6) << x.transpose();
  }
}

TEST(NcpNewton, PenalisedFischerBurmeisterSolvesJosephyToo) {
  auto s = std::make_unique<Solver>();
  Solver::Result r;
  NcpNewtonOptions o;
  o.fb_lambda = 0.8;
  ASSERT_EQ(s->solve(4, 0, josephy, Eigen::Vector4d(1, 1, 1, 1), r, o), Status::solved);
  expect_ncp_solution(josephy, r, 0, 1e-10);
}

TEST(NcpNewton, FischerBurmeisterIsZeroExactlyOnComplementaryPairs) {
  double da, db;
  EXPECT_EQ(ncp_detail::fischer_burmeister(0, 3, 1, da, db), 0);
  EXPECT_EQ(ncp_detail::fischer_burmeister(2, 0, 1, da, db), 0);
  EXPECT_EQ(ncp_detail::fischer_burmeister(0, 0, 1, da, db), 0);
  EXPECT_GT(std::abs(ncp_detail::fischer_burmeister(1, 1, 1, da, db)), 0.5);   // both positive
  EXPECT_GT(std::abs(ncp_detail::fischer_burmeister(-1, 2, 1, da, db)), 0.5);  // x negative
  EXPECT_GT(std::abs(ncp_detail::fischer_burmeister(2, -1, 1, da, db)), 0.5);  // F negative
  // Its gradient against central differences away from the kink, penalised or not.
  for (double lambda : {1.0, 0.7}) {
    for (auto [a, b] : {std::pair{0.3, 0.7}, std::pair{-0.4, 1.1}, std::pair{2.0, -0.5}}) {
      ncp_detail::fischer_burmeister(a, b, lambda, da, db);
      double d1, d2;
      const double e = 1e-6;
      const double fa = (ncp_detail::fischer_burmeister(a + e, b, lambda, d1, d2) -
                         ncp_detail::fischer_burmeister(a - e, b, lambda, d1, d2)) / (2 * e);
      const double fb = (ncp_detail::fischer_burmeister(a, b + e, lambda, d1, d2) -
                         ncp_detail::fischer_burmeister(a, b - e, lambda, d1, d2)) / (2 * e);
      EXPECT_NEAR(da, fa, 1e-8);
      EXPECT_NEAR(db, fb, 1e-8);
    }
  }
}

/// A random LCP with a positive definite (not symmetric) M: a P-matrix, so the solution is
/// unique and Lemke's answer must be Newton's.
void random_pd_lcp(std::mt19937& rng, int n, Eigen::MatrixXd& M, Eigen::VectorXd& q) {
  std::uniform_real_distribution<double> u(-1, 1);
  Eigen::MatrixXd A(n, n), S(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) A(i, j) = u(rng), S(i, j) = u(rng);
  M = A.transpose() * A + (S - S.transpose()) + 0.1 * Eigen::MatrixXd::Identity(n, n);
  q.resize(n);
  for (int i = 0; i < n; ++i) q[i] = 2 * u(rng);
}

TEST(NcpNewton, LcpsAgreeWithLemke) {
  std::mt19937 rng(42);
  auto s = std::make_unique<Solver>();
  auto lemke = std::make_unique<Lemke<32>>();
  Solver::Result r;
  Lemke<32>::Result lr;
  int worst_iterations = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 2 + trial % 19;
    Eigen::MatrixXd M;
    Eigen::VectorXd q;
    random_pd_lcp(rng, n, M, q);
    auto f = [&](const Ref& x, VecRef F, MatRef J) {
      F = M * x + q;
      J = M;
      return true;
    };
    ASSERT_EQ(lemke->solve(M, q, lr), Status::solved) << trial;
    ASSERT_EQ(s->solve(n, 0, f, Eigen::VectorXd::Zero(n), r), Status::solved) << trial;
    expect_ncp_solution(f, r, 0, 1e-10);
    EXPECT_LE((Eigen::VectorXd(r.x) - Eigen::VectorXd(lr.z)).cwiseAbs().maxCoeff(), 1e-8) << trial;
    worst_iterations = std::max(worst_iterations, r.stats.iterations);
    // Warm start from the solution: no iteration at all.
    ASSERT_EQ(s->solve(n, 0, f, Eigen::VectorXd(r.x), r), Status::solved);
    EXPECT_EQ(r.stats.iterations, 0);
  }
  EXPECT_LE(worst_iterations, 40);
}

TEST(NcpNewton, MixedLcpsAgreeWithLemke) {
  std::mt19937 rng(7);
  auto s = std::make_unique<Solver>();
  auto lemke = std::make_unique<Lemke<32>>();
  Solver::Result r;
  Lemke<32>::MixedResult lr;
  for (int trial = 0; trial < 100; ++trial) {
    const int n = 3 + trial % 12, k = 1 + trial % (n - 1);
    Eigen::MatrixXd M;
    Eigen::VectorXd q;
    random_pd_lcp(rng, n, M, q);
    auto f = [&](const Ref& x, VecRef F, MatRef J) {
      F = M * x + q;
      J = M;
      return true;
    };
    ASSERT_EQ(lemke->solve_mixed(M, q, k, lr), Status::solved) << trial;
    ASSERT_EQ(s->solve(n, k, f, Eigen::VectorXd::Zero(n), r), Status::solved) << trial;
    expect_ncp_solution(f, r, k, 1e-10);
    Eigen::VectorXd lx(n);
    lx << lr.u, lr.z;
    EXPECT_LE((Eigen::VectorXd(r.x) - lx).cwiseAbs().maxCoeff(), 1e-8) << trial;
  }
}

TEST(NcpNewton, SingularNewtonMatrixFallsBackToTheProximalStep) {
  // F = (x0^2, x1 - 1), both equations: at (0, 5) the Jacobian [[0, 0], [0, 1]] is singular
  // but the merit's gradient is not zero; the Levenberg-Marquardt step solves x1.
  auto f = [](const Ref& x, VecRef F, MatRef J) {
    F << x[0] * x[0], x[1] - 1;
    J << 2 * x[0], 0, 0, 1;
    return true;
  };
  auto s = std::make_unique<Solver>();
  Solver::Result r;
  ASSERT_EQ(s->solve(2, 2, f, Eigen::Vector2d(0, 5), r), Status::solved);
  EXPECT_GE(r.proximal_steps, 1);
  EXPECT_NEAR(r.x[1], 1, 1e-10);
}

TEST(NcpNewton, NonDescentNewtonDirectionIsReplaced) {
  // x^3 - 2x + 2 = 0 from x = 0: undamped Newton cycles 0 -> 1 -> 0. The globalised method
  // must never report `solved` at a point that is not a root; here it stalls at the local
  // minimum of |F| near x = sqrt(2/3) and says not_found.
  auto f = [](const Ref& x, VecRef F, MatRef J) {
    F[0] = x[0] * x[0] * x[0] - 2 * x[0] + 2;
    J(0, 0) = 3 * x[0] * x[0] - 2;
    return true;
  };
  auto s = std::make_unique<Solver>();
  Solver::Result r;
  const Status st = s->solve(1, 1, f, Eigen::VectorXd::Zero(1), r);
  EXPECT_EQ(st, Status::not_found);
  EXPECT_NEAR(r.x[0], std::sqrt(2.0 / 3.0), 1e-4);
  EXPECT_GT(r.stats.residual, 0.5);
  // From the other side of the local minimum it finds the root -1.7693.
  ASSERT_EQ(s->solve(1, 1, f, Eigen::VectorXd::Constant(1, -1.0), r), Status::solved);
  EXPECT_NEAR(r.x[0], -1.76929235423863, 1e-9);
}

TEST(NcpNewton, StationaryMeritPointIsNotFound) {
  // x^2 + 4 = 0 has no real root; at x = 0 the merit's gradient vanishes.
  auto f = [](const Ref& x, VecRef F, MatRef J) {
    F[0] = x[0] * x[0] + 4;
    J(0, 0) = 2 * x[0];
    return true;
  };
  auto s = std::make_unique<Solver>();
  Solver::Result r;
  EXPECT_EQ(s->solve(1, 1, f, Eigen::VectorXd::Zero(1), r), Status::not_found);
  EXPECT_EQ(r.stats.iterations, 0);
  EXPECT_DOUBLE_EQ(r.stats.residual, 4.0);
}

TEST(NcpNewton, InfeasibleNcpIsNeverSolved) {
  // 0 <= x _|_ -1 - x >= 0 has no solution (F < 0 wherever x >= 0).
  auto f = [](const Ref& x, VecRef F, MatRef J) {
    F[0] = -1 - x[0];
    J(0, 0) = -1;
    return true;
  };
  auto s = std::make_unique<Solver>();
  Solver::Result r;
  const Status st = s->solve(1, 0, f, Eigen::VectorXd::Constant(1, 0.5), r);
  EXPECT_NE(st, Status::solved);
  EXPECT_GT(r.stats.residual, 0.1);
}

TEST(NcpNewton, IterationLimitReturnsTheLastPoint) {
  auto s = std::make_unique<Solver>();
  Solver::Result r;
  NcpNewtonOptions o;
  o.max_iterations = 1;
  EXPECT_EQ(s->solve(4, 0, josephy, Eigen::Vector4d(3, 3, 3, 3), r, o), Status::iteration_limit);
  EXPECT_EQ(r.stats.iterations, 1);
  EXPECT_FALSE(r.stats.has_point);
  EXPECT_GT(r.stats.residual, o.tolerance);
  EXPECT_EQ(r.x.size(), 4);
}

TEST(NcpNewton, BadInputAndFailingCallbacks) {
  auto s = std::make_unique<NcpNewton<4>>();
  NcpNewton<4>::Result r;
  EXPECT_EQ(s->solve(5, 0, josephy, Eigen::VectorXd::Zero(5), r), Status::bad_input);  // over capacity
  EXPECT_EQ(s->solve(0, 0, josephy, Eigen::VectorXd::Zero(0), r), Status::bad_input);
  EXPECT_EQ(s->solve(4, 5, josephy, Eigen::VectorXd::Zero(4), r), Status::bad_input);
  EXPECT_EQ(s->solve(4, -1, josephy, Eigen::VectorXd::Zero(4), r), Status::bad_input);
  EXPECT_EQ(s->solve(4, 0, josephy, Eigen::VectorXd::Zero(3), r), Status::bad_input);
  EXPECT_EQ(s->solve(4, 0, josephy, Eigen::Vector4d(0, NAN, 0, 0), r), Status::bad_input);
  NcpNewtonOptions o;
  o.tolerance = 0;
  EXPECT_EQ(s->solve(4, 0, josephy, Eigen::Vector4d::Zero(), r, o), Status::bad_input);
  o = {};
  o.fb_lambda = 1.5;
  EXPECT_EQ(s->solve(4, 0, josephy, Eigen::Vector4d::Zero(), r, o), Status::bad_input);
  auto refuses = [](const Ref&, VecRef, MatRef) { return false; };
  EXPECT_EQ(s->solve(4, 0, refuses, Eigen::Vector4d::Zero(), r), Status::numerical_failure);
  auto nan = [](const Ref&, VecRef F, MatRef J) {
    F.setConstant(NAN);
    J.setZero();
    return true;
  };
  EXPECT_EQ(s->solve(4, 0, nan, Eigen::Vector4d::Zero(), r), Status::numerical_failure);
}

TEST(NcpNewton, TrialPointsTheCallbackRejectsAreBacktrackedFrom) {
  // F(x) = log(x) - 1 + ... defined only for x > 0: the full Newton step from x = 0.1
  // overshoots to negative x, which the callback refuses; the search backtracks.
  auto f = [](const Ref& x, VecRef F, MatRef J) {
    if (!(x[0] > 0)) return false;
    F[0] = std::log(x[0]) - 1;
    J(0, 0) = 1 / x[0];
    return true;
  };
  auto s = std::make_unique<Solver>();
  Solver::Result r;
  ASSERT_EQ(s->solve(1, 1, f, Eigen::VectorXd::Constant(1, 20.0), r), Status::solved);
  EXPECT_NEAR(r.x[0], std::exp(1.0), 1e-9);
  EXPECT_GT(r.evaluations, r.stats.iterations + 1);  // some trial points were refused
}

}  // namespace
}  // namespace qs::ncp_newton_test

// Lemke on textbook, degenerate, unsolvable, contact and mixed LCPs. Answers are checked
// independently of the solver: by brute-force enumeration of complementary bases where the
// problem is small, and by recomputing residuals from the data.
#include "quasistep/kernels/lemke.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <memory>
#include <random>
#include <vector>

#include "tests/support/random_problems.hpp"

namespace qs::lemke_test {
namespace {

using Solver = Lemke<64>;

/// Every solution of LCP(M, q) found by trying all 2^n complementary bases (n <= 12).
std::vector<Eigen::VectorXd> enumerate_solutions(const Eigen::MatrixXd& M, const Eigen::VectorXd& q) {
  const int n = static_cast<int>(q.size());
  std::vector<Eigen::VectorXd> out;
  for (int mask = 0; mask < (1 << n); ++mask) {
    std::vector<int> s;
    for (int i = 0; i < n; ++i)
      if (mask >> i & 1) s.push_back(i);
    Eigen::VectorXd z = Eigen::VectorXd::Zero(n);
    if (!s.empty()) {
      Eigen::MatrixXd Mss(s.size(), s.size());
      Eigen::VectorXd qs(s.size());
      for (size_t a = 0; a < s.size(); ++a) {
        qs[a] = q[s[a]];
        for (size_t b = 0; b < s.size(); ++b) Mss(a, b) = M(s[a], s[b]);
      }
      Eigen::FullPivLU<Eigen::MatrixXd> lu(Mss);
      if (lu.rank() < static_cast<int>(s.size())) continue;
      const Eigen::VectorXd zs = lu.solve(-qs);
      for (size_t a = 0; a < s.size(); ++a) z[s[a]] = zs[a];
    }
    const Eigen::VectorXd w = M * z + q;
    if (z.minCoeff() >= -1e-10 && w.minCoeff() >= -1e-10) out.push_back(z.cwiseMax(0.0));
  }
  return out;
}

/// The independent check every `solved` answer must pass.
void expect_solution(const Eigen::MatrixXd& M, const Eigen::VectorXd& q, const Solver::Result& r, double tol = 1e-9) {
  ASSERT_EQ(r.status, Status::solved);
  const Eigen::VectorXd z = r.z;
  const Eigen::VectorXd w = M * z + q;
  const double scale = std::max({1.0, q.cwiseAbs().maxCoeff(), M.cwiseAbs().maxCoeff() * z.cwiseAbs().maxCoeff()});
  EXPECT_GE(z.minCoeff(), 0.0);
  EXPECT_GE(w.minCoeff(), -tol * scale);
  for (int i = 0; i < q.size(); ++i) EXPECT_LE(std::abs(std::min(z[i], w[i])), tol * scale) << i;
  EXPECT_LE((r.w - w).cwiseAbs().maxCoeff(), 1e-12 * scale);
}

class LemkeTest : public ::testing::Test {
 protected:
  std::unique_ptr<Solver> solver = std::make_unique<Solver>();
  Solver::Result r;
};

TEST_F(LemkeTest, NonnegativeQIsSolvedByZeroWithoutPivots) {
  Eigen::MatrixXd M(2, 2);
  M << 1, -1, 3, 2;
  Eigen::VectorXd q(2);
  q << 0.5, 0;
  EXPECT_EQ(solver->solve(M, q, r), Status::solved);
  EXPECT_EQ(r.stats.iterations, 0);
  EXPECT_EQ(r.z, Eigen::VectorXd::Zero(2));
  expect_solution(M, q, r);
}

TEST_F(LemkeTest, CottlePangStoneExample) {
  // A 3x3 positive definite LCP with its solution by hand: z = (1/2, 0, 1/2)... checked
  // against enumeration rather than trusted.
  Eigen::MatrixXd M(3, 3);
  M << 2, 1, 0, 1, 2, 1, 0, 1, 2;
  Eigen::VectorXd q(3);
  q << -1, 1, -1;
  ASSERT_EQ(solver->solve(M, q, r), Status::solved);
  expect_solution(M, q, r);
  const auto all = enumerate_solutions(M, q);
  ASSERT_EQ(all.size(), 1u);  // positive definite: a P-matrix, one solution
  EXPECT_LT((r.z - all[0]).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_NEAR(r.z[0], 0.5, 1e-14);
  EXPECT_NEAR(r.z[2], 0.5, 1e-14);
}

TEST_F(LemkeTest, RandomPMatricesMatchTheUniqueSolution) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> g;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + trial % 10;
    Eigen::MatrixXd A(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) A(i, j) = g(rng);
    // Positive definite (not symmetric): a P-matrix.
    Eigen::MatrixXd M = A * A.transpose() + 0.1 * Eigen::MatrixXd::Identity(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < i; ++j) {
        const double s = g(rng);
        M(i, j) += s;
        M(j, i) -= s;
      }
    Eigen::VectorXd q(n);
    for (int i = 0; i < n; ++i) q[i] = g(rng);
    ASSERT_EQ(solver->solve(M, q, r), Status::solved) << trial;
    expect_solution(M, q, r);
    const auto all = enumerate_solutions(M, q);
    ASSERT_EQ(all.size(), 1u) << trial;
    EXPECT_LT((r.z - all[0]).cwiseAbs().maxCoeff(), 1e-8) << trial;
  }
}

TEST_F(LemkeTest, MurtyExponentialExampleTakesTwoToTheNPivots) {
  // Murty's example: lower triangular with 1 on the diagonal and 2 below, q = -1. A
  // P-matrix (one solution), on which Lemke visits 2^n - 1 almost-complementary bases after
  // the first pivot of z0: 2^n pivots in all (measured, and stable, for n = 2..10).
  auto murty = [](int n) {
    Eigen::MatrixXd M = Eigen::MatrixXd::Identity(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < i; ++j) M(i, j) = 2;
    return M;
  };
  for (int n = 2; n <= 10; ++n) {
    const Eigen::MatrixXd M = murty(n);
    const Eigen::VectorXd q = -Eigen::VectorXd::Ones(n);
    ASSERT_EQ(solver->solve(M, q, r), Status::solved) << n;
    expect_solution(M, q, r);
    EXPECT_EQ(r.stats.iterations, 1 << n) << n;
    const auto all = enumerate_solutions(M, q);
    ASSERT_EQ(all.size(), 1u);
    EXPECT_LT((r.z - all[0]).cwiseAbs().maxCoeff(), 1e-12);
  }
  // The pivot limit stops it honestly.
  LemkeOptions opt;
  opt.max_pivots = 100;
  EXPECT_EQ(solver->solve(murty(8), -Eigen::VectorXd::Ones(8), r, nullptr, opt), Status::iteration_limit);
  EXPECT_EQ(r.stats.iterations, 100);
}

TEST_F(LemkeTest, DegenerateTiesDoNotCycle) {
  // Identical rows and ratios tied exactly: the lexicographic rule must still terminate.
  Eigen::MatrixXd M(4, 4);
  M << 1, 1, 0, 0,  //
      1, 1, 0, 0,   //
      0, 0, 1, 1,   //
      0, 0, 1, 1;
  Eigen::VectorXd q = -Eigen::VectorXd::Ones(4);
  ASSERT_EQ(solver->solve(M, q, r), Status::solved);
  expect_solution(M, q, r);
  EXPECT_NEAR(r.z[0] + r.z[1], 1.0, 1e-12);
}

TEST_F(LemkeTest, RandomIntegerDegenerateProblemsAreNeverWronglySolved) {
  // Small integer data gives many exact ties. Whatever Lemke answers, `solved` must be a
  // solution; and on copositive-plus matrices (here: positive semidefinite) with a solution
  // it must find one (CPS Theorem 4.4.13).
  std::mt19937_64 rng(2);
  std::uniform_int_distribution<int> small(-2, 2);
  int solved = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const int n = 2 + trial % 6;
    Eigen::MatrixXd A(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) A(i, j) = small(rng);
    const bool psd = trial % 2 == 0;
    const Eigen::MatrixXd M = psd ? Eigen::MatrixXd(A * A.transpose()) : A;
    Eigen::VectorXd q(n);
    for (int i = 0; i < n; ++i) q[i] = small(rng);
    const Status s = solver->solve(M, q, r);
    const auto all = enumerate_solutions(M, q);
    if (s == Status::solved) {
      ++solved;
      expect_solution(M, q, r);
    } else {
      EXPECT_NE(s, Status::numerical_failure) << trial;
      if (psd) {
        EXPECT_TRUE(all.empty()) << "trial " << trial << ": PSD LCP with a solution not solved: " << to_string(s);
      }
    }
  }
  // Both outcomes occur in this family (general integer matrices often have no solution).
  EXPECT_GT(solved, 100);
  EXPECT_LT(solved, 600);
}

TEST_F(LemkeTest, NoSolutionEndsOnASecondaryRay) {
  Eigen::MatrixXd M(1, 1);
  M << -1;
  Eigen::VectorXd q(1);
  q << -1;  // w = -z - 1 < 0 for every z >= 0
  EXPECT_EQ(solver->solve(M, q, r), Status::not_found);
  EXPECT_TRUE(enumerate_solutions(M, q).empty());
  // A copositive-plus example with no solution: M = [[0, 1], [-1, 0]] (skew), q = (-1, -1).
  Eigen::MatrixXd S(2, 2);
  S << 0, 1, -1, 0;
  Eigen::VectorXd qs(2);
  qs << -1, -1;
  EXPECT_TRUE(enumerate_solutions(S, qs).empty());
  EXPECT_EQ(solver->solve(S, qs, r), Status::not_found);
}

TEST_F(LemkeTest, HalmPosaContactLcpsAreAllSolved) {
  // Halm & Posa 2018, Theorem 1: M(cB) is copositive and every instance has a solution. Small c
  // (stiff feedback) makes M nearly singular and degenerate: c = 1e-4 is where less stable
  // basis updates were seen to lose the path.
  for (int k : {1, 2, 4, 8, 16}) {
    for (std::uint64_t seed = 0; seed < 60; ++seed) {
      for (double c : {1.0, 0.01, 1e-4}) {
        const LcpInstance p = halm_posa_disk_lcp(k, seed, c);
        ASSERT_EQ(solver->solve(p.M, p.q, r), Status::solved) << "k " << k << " seed " << seed << " c " << c;
        expect_solution(p.M, p.q, r);
      }
    }
  }
}

template <int N>
void expect_same_as_capacity_64(int k) {
  auto small = std::make_unique<Lemke<N>>();
  auto big = std::make_unique<Lemke<64>>();
  auto rs = std::make_unique<typename Lemke<N>::Result>();
  auto rb = std::make_unique<Lemke<64>::Result>();
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    for (double c : {1.0, 0.01, 1e-4}) {
      const LcpInstance p = halm_posa_disk_lcp(k, seed, c);
      ASSERT_EQ(small->solve(p.M, p.q, *rs), Status::solved) << "N " << N << " k " << k << " seed " << seed;
      ASSERT_EQ(big->solve(p.M, p.q, *rb), Status::solved);
      EXPECT_EQ(rs->stats.iterations, rb->stats.iterations);
      for (int i = 0; i < p.q.size(); ++i) EXPECT_EQ(rs->z[i], rb->z[i]) << i;  // the same path, the same numbers
    }
  }
}

TEST_F(LemkeTest, SmallCapacitiesSweepFixedRowsAndGiveTheSameAnswers) {
  // Capacities up to 16 sweep all N rows (zero padding beyond n) with compile-time bounds.
  expect_same_as_capacity_64<8>(1);
  expect_same_as_capacity_64<8>(2);
  expect_same_as_capacity_64<16>(3);
  expect_same_as_capacity_64<16>(4);
  expect_same_as_capacity_64<32>(8);
}

TEST_F(LemkeTest, WarmStartFromTheSolutionBasisTakesNoPivots) {
  const LcpInstance p = halm_posa_disk_lcp(8, 3);
  ASSERT_EQ(solver->solve(p.M, p.q, r), Status::solved);
  ASSERT_GT(r.stats.iterations, 0);
  const Solver::Basis basis = r.basis;
  const Eigen::VectorXd z = r.z;
  ASSERT_EQ(solver->solve(p.M, p.q, r, &basis), Status::solved);
  EXPECT_EQ(r.stats.iterations, 0);
  EXPECT_TRUE(r.warm_start_used);
  EXPECT_LT((r.z - z).cwiseAbs().maxCoeff(), 1e-12);
  // A small change of q keeps the mode: still no pivot, and a correct answer.
  Eigen::VectorXd q2 = p.q;
  q2 *= 1.001;
  ASSERT_EQ(solver->solve(p.M, q2, r, &basis), Status::solved);
  EXPECT_EQ(r.stats.iterations, 0);
  expect_solution(p.M, q2, r);
}

TEST_F(LemkeTest, WarmStartFromAStaleBasisStillSolves) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const LcpInstance a = halm_posa_disk_lcp(6, seed), b = halm_posa_disk_lcp(6, seed + 1000);
    ASSERT_EQ(solver->solve(a.M, a.q, r), Status::solved);
    const Solver::Basis stale = r.basis;
    ASSERT_EQ(solver->solve(b.M, b.q, r, &stale), Status::solved) << seed;
    expect_solution(b.M, b.q, r);
  }
}

// A warm basis can be exactly singular and still pass the rcond() estimate (here a zero
// pivot with rcond() 4.5e-6): x_B is then NaN and no row can leave. This once indexed row
// -1; now the warm run reports numerical_failure and the cold start solves.
TEST_F(LemkeTest, WarmStartFromASingularBasisFallsBackToTheColdStart) {
  const LcpInstance p = halm_posa_disk_lcp(4, 7, 1e-4);
  ASSERT_EQ(solver->solve(p.M, p.q, r), Status::solved);
  const Solver::Basis basis = r.basis;
  Eigen::VectorXd q2 = 1.01 * p.q;
  q2[0] += 1e-3;
  ASSERT_EQ(solver->solve(p.M, q2, r, &basis), Status::solved);
  expect_solution(p.M, q2, r);
  // The warm run stopped (the old code indexed row -1 and reported its 1-pivot run as used).
  EXPECT_FALSE(r.warm_start_used);
  // Neighbouring perturbations (some have no solution Lemke can reach): the warm start
  // solves whatever the cold start solves, and every `solved` is checked.
  int solved = 0;
  for (int i = 0; i < p.q.size(); ++i)
    for (const double d : {-1e-3, 1e-6, 1e-3}) {
      Eigen::VectorXd q3 = 1.01 * p.q;
      q3[i] += d;
      const Status cold = solver->solve(p.M, q3, r);
      const Status warm = solver->solve(p.M, q3, r, &basis);
      if (cold == Status::solved) {
        EXPECT_EQ(warm, Status::solved) << i << " " << d;
      }
      if (warm == Status::solved) {
        expect_solution(p.M, q3, r);
        ++solved;
      }
    }
  EXPECT_GT(solved, 20);
}

TEST_F(LemkeTest, BadInputIsReportedNotThrown) {
  Eigen::MatrixXd M = Eigen::MatrixXd::Identity(3, 3);
  Eigen::VectorXd q = -Eigen::VectorXd::Ones(3);
  EXPECT_EQ(solver->solve(Eigen::MatrixXd::Identity(3, 2), q, r), Status::bad_input);
  EXPECT_EQ(solver->solve(M, Eigen::VectorXd::Ones(2), r), Status::bad_input);
  EXPECT_EQ(solver->solve(Eigen::MatrixXd(0, 0), Eigen::VectorXd(0), r), Status::bad_input);
  Eigen::MatrixXd bad = M;
  bad(1, 2) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(solver->solve(bad, q, r), Status::bad_input);
  bad(1, 2) = std::numeric_limits<double>::infinity();
  EXPECT_EQ(solver->solve(bad, q, r), Status::bad_input);
  Eigen::VectorXd qn = q;
  qn[0] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(solver->solve(M, qn, r), Status::bad_input);
  EXPECT_EQ(solver->solve(Eigen::MatrixXd::Identity(65, 65), -Eigen::VectorXd::Ones(65), r), Status::bad_input);
  Solver::MixedResult mr;
  EXPECT_EQ(solver->solve_mixed(M, q, 4, mr), Status::bad_input);
  EXPECT_EQ(solver->solve_mixed(M, q, -1, mr), Status::bad_input);
}

// ---- mixed LCPs --------------------------------------------------------------------------

/// Trinkle's step for the Pang & Tedrake 2018 gripper (sec. V.A, eqs. 23a-23b and 24-28) as a mixed
/// LCP: u = dq_u = (dx_c, dy_c) free with the force-balance rows, then
/// z = (P_n (3), P_f (6), Gamma (3)) against (phi^{l+1}, rho, s).
struct GripperStep {
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(14, 14);
  Eigen::VectorXd q = Eigen::VectorXd::Zero(14);
};

GripperStep gripper_step(const Eigen::Vector3d& phi, const Eigen::Vector3d& dqa_bar) {
  const double m = 1.0, g = 9.81, h = 0.01, mu = 0.5;
  Eigen::Matrix<double, 3, 2> Jnu;
  Jnu << 1, 0, -1, 0, 0, 1;
  Eigen::Matrix3d Jna;
  Jna << -1, 0, 0, 0, 1, 0, 0, 0, 0;
  Eigen::Matrix<double, 6, 2> Jfu;
  Jfu << 0, 1, 0, -1, 0, 1, 0, -1, 1, 0, -1, 0;
  Eigen::Matrix<double, 6, 3> Jfa;
  Jfa << 0, 0, -1, 0, 0, 1, 0, 0, -1, 0, 0, 1, 0, 0, 0, 0, 0, 0;
  Eigen::Matrix<double, 6, 3> E = Eigen::Matrix<double, 6, 3>::Zero();
  for (int i = 0; i < 3; ++i) E(2 * i, i) = E(2 * i + 1, i) = 1;
  GripperStep s;
  // (23a): J_n^uT P_n + J_f^uT P_f + h tau_u = 0, tau_u = (0, -m g)
  s.M.block(0, 2, 2, 3) = Jnu.transpose();
  s.M.block(0, 5, 2, 6) = Jfu.transpose();
  s.q(1) = -h * m * g;
  // (13): phi^{l+1} = phi + J_n^u du + J_n^a dqa_bar
  s.M.block(2, 0, 3, 2) = Jnu;
  s.q.segment(2, 3) = phi + Jna * dqa_bar;
  // (16): rho = J_f^u du + J_f^a dqa_bar + E Gamma
  s.M.block(5, 0, 6, 2) = Jfu;
  s.M.block(5, 11, 6, 3) = E;
  s.q.segment(5, 6) = Jfa * dqa_bar;
  // (17): s = U P_n - E^T P_f
  s.M.block(11, 2, 3, 3) = mu * Eigen::Matrix3d::Identity();
  s.M.block(11, 5, 3, 6) = -E.transpose();
  return s;
}

void expect_mixed_solution(const Eigen::MatrixXd& M, const Eigen::VectorXd& q, int k, const Solver::MixedResult& r) {
  ASSERT_EQ(r.status, Status::solved);
  const int m = static_cast<int>(q.size()) - k;
  Eigen::VectorXd x(q.size());
  x << r.u, r.z;
  const Eigen::VectorXd y = M * x + q;
  EXPECT_LE(y.head(k).cwiseAbs().maxCoeff(), 1e-9);  // equalities (force balance)
  EXPECT_GE(r.z.minCoeff(), 0.0);
  for (int i = 0; i < m; ++i) {
    EXPECT_GE(y[k + i], -1e-9);
    EXPECT_LE(std::abs(std::min(r.z[i], y[k + i])), 1e-9);
  }
}

TEST_F(LemkeTest, MixedGripperStepBeforeContactLeavesTheCylinderOnTheGround) {
  // Step 1 of eq. (30): fingers 20 mm away squeeze by 1 mm and rise by 1 mm.
  const GripperStep s = gripper_step({0.02, 0.02, 0.0}, {0.001, -0.001, 0.001});
  Solver::MixedResult mr;
  ASSERT_EQ(solver->solve_mixed(s.M, s.q, 2, mr), Status::solved);
  expect_mixed_solution(s.M, s.q, 2, mr);
  EXPECT_NEAR(mr.u[0], 0.0, 1e-12);
  EXPECT_NEAR(mr.u[1], 0.0, 1e-12);
  EXPECT_NEAR(mr.z[2], 1.0 * 9.81 * 0.01, 1e-12);  // the ground carries the weight impulse
  EXPECT_NEAR(mr.z[0], 0.0, 1e-12);
  EXPECT_NEAR(mr.z[1], 0.0, 1e-12);
}

TEST_F(LemkeTest, MixedGripperStepInContactWhileRising) {
  // After the squeeze (eq. 30, l > 20): fingers touch (phi = 0) and rise 1 mm.
  const GripperStep s = gripper_step({0.0, 0.0, 0.0}, {0.0, 0.0, 0.001});
  Solver::MixedResult mr;
  ASSERT_EQ(solver->solve_mixed(s.M, s.q, 2, mr), Status::solved);
  expect_mixed_solution(s.M, s.q, 2, mr);
}

TEST_F(LemkeTest, MixedGripperSqueezeIntoTheCylinderIsNotSolved) {
  // Command (29) at contact: the fingers are driven into the cylinder from both sides.
  // No dq_u can keep both phi >= 0 (Pang & Tedrake 2018, sec. IV-B): the LCP has no solution and Lemke
  // must not claim one.
  const GripperStep s = gripper_step({0.0, 0.0, 0.0}, {0.001, -0.001, 0.001});
  Solver::MixedResult mr;
  const Status st = solver->solve_mixed(s.M, s.q, 2, mr);
  EXPECT_NE(st, Status::solved);
  EXPECT_EQ(st, Status::not_found);
}

TEST_F(LemkeTest, MixedWithInvertibleFreeBlockUsesTheSchurComplement) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g;
  for (int trial = 0; trial < 100; ++trial) {
    const int k = 1 + trial % 3, m = 2 + trial % 5, n = k + m;
    Eigen::MatrixXd R(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) R(i, j) = g(rng);
    const Eigen::MatrixXd M = R * R.transpose() + 0.5 * Eigen::MatrixXd::Identity(n, n);  // PD: A invertible
    Eigen::VectorXd q(n);
    for (int i = 0; i < n; ++i) q[i] = g(rng);
    Solver::MixedResult mr;
    ASSERT_EQ(solver->solve_mixed(M, q, k, mr), Status::solved) << trial;
    expect_mixed_solution(M, q, k, mr);
  }
}

TEST_F(LemkeTest, MixedWithZeroFreeBlockMatchesEliminationByHand) {
  // 0 = z1 - z2 + a (free u has a zero block), w1 = u + z1 + b1, w2 = -u + z2 + b2.
  Eigen::MatrixXd M(3, 3);
  M << 0, 1, -1,  //
      1, 1, 0,    //
      -1, 0, 1;
  Eigen::VectorXd q(3);
  q << -1, 0.5, 0.25;
  Solver::MixedResult mr;
  ASSERT_EQ(solver->solve_mixed(M, q, 1, mr), Status::solved);
  expect_mixed_solution(M, q, 1, mr);
  EXPECT_NEAR(mr.z[0] - mr.z[1], 1.0, 1e-12);
}

TEST_F(LemkeTest, MixedWhoseFreeVariablesNoRowDeterminesIsNotFound) {
  // u appears in no row: the method cannot pivot it in, and says so.
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(3, 3);
  M(1, 1) = M(2, 2) = 1;
  Eigen::VectorXd q(3);
  q << 0, -1, -1;
  Solver::MixedResult mr;
  EXPECT_EQ(solver->solve_mixed(M, q, 1, mr), Status::not_found);
}

}  // namespace
}  // namespace qs::lemke_test

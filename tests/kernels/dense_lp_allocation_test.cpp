// The dense LP kernel allocates nothing once the solver object exists: cold, warm,
// infeasible and unbounded solves, the certificate checks, and the adjacency walks.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <random>

#include "quasistep/kernels/dense_lp.hpp"
#include "tests/support/allocation_counter.hpp"

namespace qs::dense_lp_allocation_test {
namespace {

TEST(DenseLpAllocationFree, SolvesChecksAndAdjacency) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const int m = 40, n = 120;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1), pos(0, 1);
  // A feasible bounded LP: b = A x0 with x0 >= 0, c = A'y0 + z with z > 0.
  Eigen::MatrixXd A(m, n);
  Eigen::VectorXd x0(n), y0(m), z(n), lo = Eigen::VectorXd::Zero(n), up(n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) A(i, j) = u(rng);
  for (int j = 0; j < n; ++j) {
    x0[j] = pos(rng);
    z[j] = 0.1 + pos(rng);
    up[j] = j % 4 == 0 ? 2.0 : inf;
  }
  for (int i = 0; i < m; ++i) y0[i] = u(rng);
  const Eigen::VectorXd b = A * x0;
  const Eigen::VectorXd c = A.transpose() * y0 + z;
  // Row 1 repeats row 0 with another right-hand side: infeasible.
  Eigen::MatrixXd A_bad = A;
  A_bad.row(1) = A.row(0);
  Eigen::VectorXd b_bad = b;
  b_bad[1] = b[0] + 1;
  Eigen::VectorXd c_unb = -Eigen::VectorXd::Ones(n);
  const Eigen::VectorXd up_inf = Eigen::VectorXd::Constant(n, inf);
  // x_0 - x_1 = 0 (the other rows zero) with c < 0: the ray (1, 1, 0, ...).
  Eigen::MatrixXd A_unb = Eigen::MatrixXd::Zero(m, n);
  A_unb(0, 0) = 1;
  A_unb(0, 1) = -1;
  const Eigen::VectorXd b_unb = Eigen::VectorXd::Zero(m);

  auto solver = std::make_unique<DenseLp>(DenseLpCapacity{64, 128});
  const DenseLpProblem p{A, b, c, lo, up};
  const DenseLpProblem p_bad{A_bad, b_bad, c, lo, up};
  const DenseLpProblem p_unb{A_unb, b_unb, c_unb, lo, up_inf};
  // The first solve before the guard: the caller's basis copy is made outside it.
  ASSERT_EQ(solver->solve(p), Status::solved);
  const auto basis = std::make_unique<LpBasis>(solver->basis());
  int neighbours = 0;
  const auto visit = [&neighbours](const LpNeighbour&) {
    ++neighbours;
    return true;
  };

  test::CountAllocations guard;
  ASSERT_EQ(solver->solve(p), Status::solved);
  ASSERT_EQ(solver->solve(p, *basis), Status::solved);
  EXPECT_EQ(solver->stats().iterations, 0);
  ASSERT_EQ(solver->solve(p_bad, *basis), Status::infeasible);  // warm start falls back
  EXPECT_TRUE(verify_farkas(p_bad, solver->farkas()));
  ASSERT_EQ(solver->solve(p_unb), Status::unbounded);
  EXPECT_TRUE(verify_ray(p_unb, solver->ray()));
  EXPECT_EQ(solver->for_each_adjacent_basis(p, *basis, visit), Status::solved);
  EXPECT_EQ(solver->for_each_adjacent_vertex(p, *basis, visit), Status::solved);
  EXPECT_EQ(guard.count(), 0);
  EXPECT_GT(neighbours, 0);
}

}  // namespace
}  // namespace qs::dense_lp_allocation_test

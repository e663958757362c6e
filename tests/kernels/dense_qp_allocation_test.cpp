// The dense QP kernel allocates nothing once the solver object exists: cold and warm solves
// (accepted, repaired child, rejected), semidefinite Hessians with temporary constraints,
// infeasible, unbounded, iteration-limit and bad-input solves, and the checking functions.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <random>

#include "quasistep/kernels/dense_qp.hpp"
#include "tests/support/allocation_counter.hpp"

namespace qs::dense_qp_allocation_test {
namespace {

TEST(DenseQpAllocationFree, SolvesAndChecks) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const int n = 60, me = 4, mi = 80;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1), pos(0, 1);
  // A feasible QP: rank-5 H on all variables, rows tight or slack at x0, a box.
  Eigen::MatrixXd J(5, n), A_eq(me, n), A_in(mi, n);
  Eigen::VectorXd c(n), x0(n);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < n; ++j) J(i, j) = u(rng);
  for (int i = 0; i < me; ++i)
    for (int j = 0; j < n; ++j) A_eq(i, j) = u(rng);
  for (int i = 0; i < mi; ++i)
    for (int j = 0; j < n; ++j) A_in(i, j) = u(rng);
  for (int j = 0; j < n; ++j) {
    c[j] = u(rng);
    x0[j] = u(rng);
  }
  const Eigen::MatrixXd H = J.transpose() * J;
  const Eigen::VectorXd b_eq = A_eq * x0;
  Eigen::VectorXd b_in = A_in * x0;
  for (int i = 0; i < mi; ++i) b_in[i] -= i % 3 ? pos(rng) : 0.0;
  const Eigen::VectorXd lo = Eigen::VectorXd::Constant(n, -2), up = Eigen::VectorXd::Constant(n, 2);
  // A child: variable 3 fixed.
  Eigen::VectorXd lo_child = lo, up_child = up;
  // Infeasible: the box [-2, 2] cannot meet sum x = 1000.
  Eigen::MatrixXd A_bad = Eigen::MatrixXd::Ones(1, n);
  const Eigen::VectorXd b_bad = Eigen::VectorXd::Constant(1, 1000.0);
  // Unbounded: free variables, H touching only x_0: min x_0^2 - x_1 with x_1 - x_2 <= 1.
  Eigen::MatrixXd H_unb = Eigen::MatrixXd::Zero(n, n);
  H_unb(0, 0) = 1;
  Eigen::VectorXd c_unb = Eigen::VectorXd::Zero(n);
  c_unb[1] = -1;
  Eigen::MatrixXd A_unb = Eigen::MatrixXd::Zero(1, n);
  A_unb(0, 1) = -1;
  A_unb(0, 2) = 1;
  const Eigen::VectorXd b_unb = Eigen::VectorXd::Constant(1, -1.0);
  const Eigen::VectorXd no_bounds(0);
  const Eigen::MatrixXd none(0, n);
  const Eigen::VectorXd none_b(0);
  Eigen::MatrixXd H_bad = H;
  H_bad(0, 1) += 1.0;  // not symmetric

  auto solver = std::make_unique<DenseQp>(DenseQpCapacity{64, 8, 96});
  const DenseQpProblem p{H, c, A_eq, b_eq, A_in, b_in, lo, up};
  const DenseQpProblem p_bad{H, c, A_bad, b_bad, A_in, b_in, lo, up};
  const DenseQpProblem p_unb{H_unb, c_unb, none, none_b, A_unb, b_unb, no_bounds, no_bounds};
  const DenseQpProblem p_asym{H_bad, c, A_eq, b_eq, A_in, b_in, lo, up};
  // The first solve before the guard: the caller's working-set copies are made outside it.
  ASSERT_EQ(solver->solve(p), Status::solved);
  const auto ws = std::make_unique<QpWorkingSet>(solver->working_set());
  const auto stale = std::make_unique<QpWorkingSet>(solver->working_set());
  for (int i = 0; i < stale->rows; ++i) stale->active[i] = 1;
  stale->has_point = false;
  lo_child[3] = up_child[3] = std::round(ws->x[3]);
  const DenseQpProblem p_child{H, c, A_eq, b_eq, A_in, b_in, lo_child, up_child};

  test::CountAllocations guard;
  ASSERT_EQ(solver->solve(p), Status::solved);
  EXPECT_GT(solver->stats().iterations, 0);
  EXPECT_LE(qp_kkt_residual(p, solver->x(), solver->y(), solver->z(), solver->bound_multipliers()), 1e-9);
  ASSERT_EQ(solver->solve(p, *ws), Status::solved);
  EXPECT_EQ(solver->warm_start(), QpWarmStart::accepted);
  EXPECT_EQ(solver->stats().iterations, 0);
  ASSERT_EQ(solver->solve(p_child, *ws), Status::solved);
  EXPECT_EQ(solver->warm_start(), QpWarmStart::accepted);
  // Hot: back to the parent from the child's own factorization (equality rows unchanged).
  const int eq_map[] = {0, 1, 2, 3, 4, 5, 6, 7};
  ASSERT_EQ(solver->solve_hot(p, *ws, eq_map), Status::solved);
  EXPECT_EQ(solver->warm_start(), QpWarmStart::hot);
  ASSERT_EQ(solver->solve(p, *stale), Status::solved);
  EXPECT_EQ(solver->warm_start(), QpWarmStart::rejected_infeasible);
  ASSERT_EQ(solver->solve(p_bad, *ws), Status::infeasible);
  EXPECT_TRUE(verify_qp_farkas(p_bad, solver->farkas_eq(), solver->farkas_in()));
  ASSERT_EQ(solver->solve(p_unb), Status::unbounded);
  EXPECT_TRUE(verify_qp_ray(p_unb, solver->ray()));
  EXPECT_GT(solver->temporary_constraints(), 0);
  solver->options().max_iterations = 3;
  EXPECT_EQ(solver->solve(p), Status::iteration_limit);
  solver->options().max_iterations = 0;
  EXPECT_EQ(solver->solve(p_asym), Status::bad_input);
  EXPECT_EQ(guard.count(), 0);
  EXPECT_GT(inf, 0);
}

}  // namespace
}  // namespace qs::dense_qp_allocation_test

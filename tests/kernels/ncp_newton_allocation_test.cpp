// The semismooth Newton kernel allocates nothing once the solver object exists, including
// its fallback steps.
#include <gtest/gtest.h>

#include <memory>

#include "quasistep/kernels/ncp_newton.hpp"
#include "tests/support/allocation_counter.hpp"

namespace qs::ncp_newton_allocation_test {
namespace {

bool josephy(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> F, Eigen::Ref<Eigen::MatrixXd> J) {
  F[0] = 3 * x[0] * x[0] + 2 * x[0] * x[1] + 2 * x[1] * x[1] + x[2] + 3 * x[3] - 6;
  F[1] = 2 * x[0] * x[0] + x[0] + x[1] * x[1] + 3 * x[2] + 2 * x[3] - 2;
  F[2] = 3 * x[0] * x[0] + x[0] * x[1] + 2 * x[1] * x[1] + 2 * x[2] + 3 * x[3] - 1;
  F[3] = x[0] * x[0] + 3 * x[1] * x[1] + 2 * x[2] + 3 * x[3] - 3;
  J << 6 * x[0] + 2 * x[1], 2 * x[0] + 4 * x[1], 1, 3, 4 * x[0] + 1, 2 * x[1], 3, 2, 6 * x[0] + x[1],
      x[0] + 4 * x[1], 2, 3, 2 * x[0], 6 * x[1], 2, 3;
  return true;
}

bool singular_start(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> F,
                    Eigen::Ref<Eigen::MatrixXd> J) {
  F << x[0] * x[0], x[1] - 1;
  J << 2 * x[0], 0, 0, 1;
  return true;
}

TEST(NcpNewtonAllocationFree, NewtonAndProximalSteps) {
  auto solver = std::make_unique<NcpNewton<64>>();
  auto result = std::make_unique<NcpNewton<64>::Result>();
  const Eigen::Vector4d x0(1, 1, 1, 1);
  const Eigen::Vector2d y0(0, 5);
  test::CountAllocations guard;
  ASSERT_EQ(solver->solve(4, 0, josephy, x0, *result), Status::solved);
  ASSERT_EQ(solver->solve(2, 2, singular_start, y0, *result), Status::solved);
  EXPECT_GE(result->proximal_steps, 1);
  EXPECT_EQ(guard.count(), 0);
}

}  // namespace
}  // namespace qs::ncp_newton_allocation_test

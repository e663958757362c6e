// Lemke allocates nothing once the solver object exists: cold and warm solves, and the
// mixed-LCP reduction.
#include <gtest/gtest.h>

#include <memory>

#include "quasistep/kernels/lemke.hpp"
#include "tests/support/allocation_counter.hpp"
#include "tests/support/random_problems.hpp"

namespace qs::lemke_allocation_test {
namespace {

TEST(LemkeAllocationFree, StandardWarmAndMixedSolves) {
  auto solver = std::make_unique<Lemke<64>>();
  auto result = std::make_unique<Lemke<64>::Result>();
  auto mixed = std::make_unique<Lemke<64>::MixedResult>();
  const LcpInstance p = halm_posa_disk_lcp(16, 11);  // n = 64
  // A mixed problem with a zero free block: 0 = z1 - z2 + a, w = [u; -u] + z + b.
  Eigen::MatrixXd Mm(3, 3);
  Mm << 0, 1, -1, 1, 1, 0, -1, 0, 1;
  Eigen::VectorXd qm(3);
  qm << -1, 0.5, 0.25;
  test::CountAllocations guard;
  ASSERT_EQ(solver->solve(p.M, p.q, *result), Status::solved);
  const Lemke<64>::Basis basis = result->basis;
  ASSERT_EQ(solver->solve(p.M, p.q, *result, &basis), Status::solved);
  ASSERT_EQ(solver->solve_mixed(Mm, qm, 1, *mixed), Status::solved);
  EXPECT_EQ(guard.count(), 0);
}

}  // namespace
}  // namespace qs::lemke_allocation_test

// PGS allocates nothing once the solver object exists, for one world (T = double) and for a
// lane group (T = Lane), converged, at the iteration limit and on bad input.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "quasistep/kernels/lane.hpp"
#include "quasistep/kernels/pgs.hpp"
#include "tests/support/allocation_counter.hpp"

namespace qs::pgs_allocation_test {
namespace {

constexpr int kN = 12;

/// M = B'B and q = phi - B'c (the Anitescu slides' (Pang & Tedrake) dual with J = B', Q = I: solvable), B 6 x 12 so M
/// is singular; world `seed`.
void make_problem(unsigned seed, std::vector<double>& M, std::vector<double>& q) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> B(6 * kN), c(6);
  for (double& b : B) b = normal(rng);
  for (double& v : c) v = normal(rng);
  M.assign(kN * kN, 0.0);
  q.resize(kN);
  for (int i = 0; i < kN; ++i) {
    q[i] = 0.1 * unit(rng);
    for (int r = 0; r < 6; ++r) q[i] -= B[r * kN + i] * c[r];
    for (int j = 0; j < kN; ++j)
      for (int r = 0; r < 6; ++r) M[i * kN + j] += B[r * kN + i] * B[r * kN + j];
  }
}

TEST(PgsAllocationFree, DoubleAndLaneSolves) {
  std::vector<double> Md, qd;
  make_problem(1, Md, qd);
  std::vector<Lane> Ml(kN * kN), ql(kN), zl(kN, Lane(0.0));
  for (int l = 0; l < kLaneWidth; ++l) {
    std::vector<double> M, q;
    make_problem(static_cast<unsigned>(l + 1), M, q);
    for (int e = 0; e < kN * kN; ++e) Ml[e].set(l, M[e]);
    for (int i = 0; i < kN; ++i) ql[i].set(l, q[i]);
  }
  std::vector<double> zd(kN, 0.0);
  Pgs<double> pd(kN);
  Pgs<Lane> pl(kN);
  PgsResult<double> rd;
  PgsResult<Lane> rl;
  PgsSettings s;
  s.max_iterations = 100000;
  PgsSettings limited = s;
  limited.max_iterations = 3;

  bool solved_d = false, solved_l = false, rejected = false;
  long allocations = 0;
  {
    test::CountAllocations guard;  // nothing that may allocate (gtest's failure messages) inside
    solved_d = pd.solve(kN, Md, qd, zd, s, rd);
    solved_l = pl.solve(kN, Ml, ql, zl, s, rl);
    pd.solve(kN, Md, qd, zd, limited, rd);  // warm
    pl.solve(kN, Ml, ql, zl, limited, rl);
    rejected = !pd.solve(kN + 1, Md, qd, zd, s, rd) && rd.status[0] == Status::bad_input;
    allocations = guard.count();
  }
  EXPECT_TRUE(solved_d);
  EXPECT_TRUE(solved_l);
  EXPECT_TRUE(rejected);
  EXPECT_EQ(allocations, 0);
}

}  // namespace
}  // namespace qs::pgs_allocation_test

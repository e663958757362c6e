// LemkeLanes allocates nothing once the solver object exists (the header's promise), for one
// world (T = double) and a lane group (T = Lane), on every way a solve can end: solved,
// solved without pivots, a ray, the pivot limit, bad data in one lane, a size over the
// capacity, and with excluded-row masks.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "quasistep/kernels/lane.hpp"
#include "quasistep/kernels/lemke_lanes.hpp"
#include "tests/support/allocation_counter.hpp"

namespace qs::lemke_lanes_allocation_test {
namespace {

constexpr int kN = 12;

/// World `seed`'s problem, row-major: B'B + 0.1 I (positive definite) for most seeds,
/// all-nonpositive M with q_0 < 0 (no solution: a ray) for seeds 3 mod 4.
void make_problem(unsigned seed, std::vector<double>& M, std::vector<double>& q) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  M.assign(kN * kN, 0.0);
  q.resize(kN);
  for (double& v : q) v = normal(rng);
  if (seed % 4 == 3) {
    for (double& v : M) v = -std::abs(normal(rng));
    q[0] = -1.0;
    return;
  }
  std::vector<double> B(kN * kN);
  for (double& b : B) b = normal(rng);
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kN; ++j) {
      double s = i == j ? 0.1 : 0.0;
      for (int r = 0; r < kN; ++r) s += B[r * kN + i] * B[r * kN + j];
      M[i * kN + j] = s;
    }
}

TEST(LemkeLanesAllocationFree, DoubleAndLaneSolves) {
  std::vector<double> Md, qd;
  make_problem(1, Md, qd);
  // z and w have room for kN + 1 entries: the over-capacity solves below pass n = kN + 1, and
  // GCC cannot see that the solver returns before writing them (-Wstringop-overflow).
  std::vector<Lane> Ml(kN * kN), ql(kN), zl(kN + 1), wl(kN + 1);
  std::vector<Mask> excluded(kN);
  for (int l = 0; l < kLaneWidth; ++l) {
    std::vector<double> M, q;
    make_problem(static_cast<unsigned>(l + 1), M, q);
    if (l == 1) M[5] = std::numeric_limits<double>::quiet_NaN();  // that lane alone is bad_input
    if (l == 0)
      for (double& v : q) v = std::abs(v);  // solved by z = 0
    for (int e = 0; e < kN * kN; ++e) Ml[e].set(l, M[e]);
    for (int i = 0; i < kN; ++i) ql[i].set(l, q[i]);
  }
  // Masks for a masked solve: row (l mod kN) of lane l, with its row and column zeroed there.
  std::vector<Lane> Mx = Ml, qx = ql;
  for (int l = 0; l < kLaneWidth; ++l) {
    const int r = l % kN;
    excluded[r].set(l, true);
    for (int j = 0; j < kN; ++j) {
      Mx[r * kN + j].set(l, 0.0);
      Mx[j * kN + r].set(l, 0.0);
    }
    qx[r].set(l, 1.0);
  }
  std::vector<double> zd(kN + 1), wd(kN + 1);
  LemkeLanes<double> sd(kN);
  LemkeLanes<Lane> sl(kN);
  LemkeLanesResult<double> rd;
  LemkeLanesResult<Lane> rl;
  const LemkeOptions opt;
  LemkeOptions limited;
  limited.max_pivots = 2;
  // Warm-up: one solve of each, outside the count.
  sd.solve(kN, Md.data(), qd.data(), nullptr, zd.data(), wd.data(), opt, rd);
  sl.solve(kN, Ml.data(), ql.data(), nullptr, zl.data(), wl.data(), opt, rl);

  Status solved_d = Status::not_run, limit_d = Status::not_run, over_d = Status::not_run;
  std::array<Status, kLaneWidth> lanes{}, masked{};
  long allocations = 0;
  {
    test::CountAllocations guard;  // nothing that may allocate (gtest's failure messages) inside
    sd.solve(kN, Md.data(), qd.data(), nullptr, zd.data(), wd.data(), opt, rd);
    solved_d = rd.status[0];
    sd.solve(kN, Md.data(), qd.data(), nullptr, zd.data(), wd.data(), limited, rd);
    limit_d = rd.status[0];
    sd.solve(kN + 1, Md.data(), qd.data(), nullptr, zd.data(), wd.data(), opt, rd);
    over_d = rd.status[0];
    sd.solve(0, Md.data(), qd.data(), nullptr, zd.data(), wd.data(), opt, rd);
    sl.solve(kN, Ml.data(), ql.data(), nullptr, zl.data(), wl.data(), opt, rl);
    lanes = rl.status;
    sl.solve(kN, Mx.data(), qx.data(), excluded.data(), zl.data(), wl.data(), opt, rl);
    masked = rl.status;
    sl.solve(kN, Ml.data(), ql.data(), nullptr, zl.data(), wl.data(), limited, rl);
    sl.solve(kN + 1, Ml.data(), ql.data(), nullptr, zl.data(), wl.data(), opt, rl);
    allocations = guard.count();
  }
  EXPECT_EQ(allocations, 0);
  EXPECT_EQ(solved_d, Status::solved);
  EXPECT_EQ(limit_d, Status::iteration_limit);
  EXPECT_EQ(over_d, Status::bad_input);
  // The lane group really ended in several ways (kLaneWidth 8: lanes 0..7 = seeds 1..8).
  for (int l = 0; l < kLaneWidth; ++l) {
    const Status expected = l == 1 ? Status::bad_input : (l + 1) % 4 == 3 ? Status::not_found : Status::solved;
    EXPECT_EQ(lanes[l], expected) << l;
    EXPECT_EQ(masked[l], expected) << l;
  }
}

}  // namespace
}  // namespace qs::lemke_lanes_allocation_test

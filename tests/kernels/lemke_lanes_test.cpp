// LemkeLanes<T>: lexicographic Lemke written once on T. At T = double it is checked like any
// LCP solver (textbook problems with known answers, an independent complementarity check,
// agreement with the scalar Lemke<64> it mirrors). At T = Lane the promise under test is the
// header's: each lane's status, pivot count, residual, z and w are bitwise those of the
// T = double solve of that lane's problem alone, whatever the other lanes hold.
#include "quasistep/kernels/lemke_lanes.hpp"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "quasistep/kernels/lane.hpp"
#include "quasistep/kernels/lemke.hpp"
#include "tests/support/bitwise.hpp"
#include "tests/support/random_problems.hpp"
#include "tests/support/lcp_check.hpp"

namespace qs::lemke_lanes_test {
namespace {

constexpr int kCapacity = 24;
const double kNaN = std::numeric_limits<double>::quiet_NaN();
// z and w start at this value in every lane, so that "left untouched" (statuses without a
// point) is part of every bitwise comparison rather than a separate case.
constexpr double kSentinel = -12345.5;

/// One LCP: M row-major n x n, q (n), excluded rows (empty: none).
struct Problem {
  int n = 0;
  std::vector<double> M, q;
  std::vector<int> excluded;
  double& m(int i, int j) { return M[static_cast<std::size_t>(i) * n + j]; }
  double m(int i, int j) const { return M[static_cast<std::size_t>(i) * n + j]; }
};

Problem empty_problem(int n) {
  Problem p;
  p.n = n;
  p.M.assign(static_cast<std::size_t>(n) * n, 0.0);
  p.q.assign(n, 0.0);
  return p;
}

Eigen::MatrixXd eigen_M(const Problem& p) {
  Eigen::MatrixXd M(p.n, p.n);
  for (int i = 0; i < p.n; ++i)
    for (int j = 0; j < p.n; ++j) M(i, j) = p.m(i, j);
  return M;
}
Eigen::VectorXd eigen_q(const Problem& p) { return Eigen::Map<const Eigen::VectorXd>(p.q.data(), p.n); }

/// What a T = double solve reports.
struct Answer {
  Status status = Status::not_run;
  int pivots = 0;
  double residual = 0;
  std::vector<double> z, w;
};

Answer solve_one(LemkeLanes<double>& solver, const Problem& p, const LemkeOptions& opt = {}) {
  Answer a;
  const std::size_t n = static_cast<std::size_t>(std::max(p.n, 0));
  a.z.assign(n, kSentinel);
  a.w.assign(n, kSentinel);
  std::array<bool, 64> excluded{};
  for (std::size_t i = 0; i < p.excluded.size(); ++i) excluded[i] = p.excluded[i] != 0;
  LemkeLanesResult<double> r;
  solver.solve(p.n, p.M.data(), p.q.data(), p.excluded.empty() ? nullptr : excluded.data(), a.z.data(), a.w.data(),
               opt, r);
  a.status = r.status[0];
  a.pivots = r.pivots[0];
  a.residual = r.residual[0];
  return a;
}

/// kLaneWidth problems of one size solved together as Lane.
struct LaneRun {
  LemkeLanesResult<Lane> result;
  std::vector<Lane> z, w;
};

LaneRun solve_lanes(LemkeLanes<Lane>& solver, const std::vector<Problem>& ps, const LemkeOptions& opt = {}) {
  const int n = ps.at(0).n;
  const std::size_t nn = static_cast<std::size_t>(n) * n;
  std::vector<Lane> M(nn), q(n);
  std::vector<Mask> excluded(n);
  bool any_excluded = false;
  for (int l = 0; l < kLaneWidth; ++l) {
    const Problem& p = ps.at(l);
    EXPECT_EQ(p.n, n);
    for (std::size_t e = 0; e < nn; ++e) M[e].set(l, p.M[e]);
    for (int i = 0; i < n; ++i) q[i].set(l, p.q[i]);
    for (std::size_t i = 0; i < p.excluded.size(); ++i) {
      excluded[i].set(l, p.excluded[i] != 0);
      any_excluded = true;
    }
  }
  LaneRun run;
  run.z.assign(n, Lane(kSentinel));
  run.w.assign(n, Lane(kSentinel));
  solver.solve(n, M.data(), q.data(), any_excluded ? excluded.data() : nullptr, run.z.data(), run.w.data(), opt,
               run.result);
  return run;
}

/// Lane l of a Lane solve against the T = double answer of that lane's problem: every bit.
void expect_lane_is(const LaneRun& run, int l, const Answer& ref, const std::string& what) {
  SCOPED_TRACE(what + ", lane " + std::to_string(l));
  EXPECT_EQ(run.result.status[l], ref.status) << to_string(run.result.status[l]) << " vs " << to_string(ref.status);
  EXPECT_EQ(run.result.pivots[l], ref.pivots);
  EXPECT_TRUE(test::same_bits(run.result.residual[l], ref.residual))
      << run.result.residual[l] << " vs " << ref.residual;
  for (std::size_t i = 0; i < ref.z.size(); ++i) {
    EXPECT_TRUE(test::same_bits(run.z[i][l], ref.z[i])) << "z " << i << ": " << run.z[i][l] << " vs " << ref.z[i];
    EXPECT_TRUE(test::same_bits(run.w[i][l], ref.w[i])) << "w " << i << ": " << run.w[i][l] << " vs " << ref.w[i];
  }
}

/// The independent check of a `solved` answer: z >= 0, w >= 0, z'w = 0 (relative to |q|, the
/// kernels' acceptance rule, from the data alone), and the reported w is M z + q.
void expect_solution(const Problem& p, const Answer& a, double tol = kLcpTolerance) {
  ASSERT_EQ(a.status, Status::solved);
  const Eigen::MatrixXd M = eigen_M(p);
  const Eigen::VectorXd q = eigen_q(p);
  const Eigen::VectorXd z = Eigen::Map<const Eigen::VectorXd>(a.z.data(), p.n);
  EXPECT_LE(test::lcp_violation(M, q, z), tol);
  EXPECT_LE(a.residual, tol);
  const Eigen::VectorXd w = M * z + q;
  const double scale = std::max({1.0, q.cwiseAbs().maxCoeff(), M.cwiseAbs().maxCoeff() * z.cwiseAbs().maxCoeff()});
  for (int i = 0; i < p.n; ++i) {
    EXPECT_GE(a.z[i], 0.0) << i;
    EXPECT_NEAR(a.w[i], w[i], 1e-12 * scale) << i;
  }
}

// ---- problem families --------------------------------------------------------------------

/// B'B + d I plus a skew part: positive definite, not symmetric, so a P-matrix (one solution
/// for every q); q standard normal.
Problem p_matrix_lcp(int n, std::mt19937_64& rng, double diag = 0.05) {
  std::normal_distribution<double> g;
  Problem p = empty_problem(n);
  std::vector<double> B(static_cast<std::size_t>(n) * n);
  for (double& b : B) b = g(rng);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = i == j ? diag : 0.0;
      for (int k = 0; k < n; ++k) s += B[k * n + i] * B[k * n + j];
      p.m(i, j) = s;
    }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j) {
      const double s = 0.5 * g(rng);
      p.m(i, j) += s;
      p.m(j, i) -= s;
    }
  for (double& v : p.q) v = g(rng);
  return p;
}

/// The friction structure of Halm & Posa's (2018) M(cB) for k contacts, n = 4k, laid out as
/// [lambda_N (k) | lambda_T+ (k) | lambda_T- (k) | gamma (k)]:
///   M = [ G    E ]   G = Jo Jo' + c Jm Jm' (3k x 3k, rows N, T+, T- with T- = -T+),
///       [ mu  -E' 0 ]
/// with random object and manipulator Jacobians, gaps >= 0 and random tangential motion.
/// Copositive, and (with phi >= 0) solvable, but not copositive-plus.
Problem friction_lcp(int k, std::mt19937_64& rng, double c) {
  std::normal_distribution<double> g;
  std::uniform_real_distribution<double> gap(0.0, 0.01), mu(0.2, 1.0);
  const int n = 4 * k, r = 3 * k;
  Problem p = empty_problem(n);
  Eigen::MatrixXd Jo(r, 3), Jm = Eigen::MatrixXd::Zero(r, 2 * k);
  for (int i = 0; i < k; ++i) {
    for (int d = 0; d < 3; ++d) {
      Jo(i, d) = g(rng);
      Jo(k + i, d) = g(rng);
      Jo(2 * k + i, d) = -Jo(k + i, d);
    }
    for (int d = 0; d < 2; ++d) {
      Jm(i, 2 * i + d) = g(rng);
      Jm(k + i, 2 * i + d) = g(rng);
      Jm(2 * k + i, 2 * i + d) = -Jm(k + i, 2 * i + d);
    }
  }
  const Eigen::MatrixXd G = Jo * Jo.transpose() + c * Jm * Jm.transpose();
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < r; ++j) p.m(i, j) = G(i, j);
  for (int i = 0; i < k; ++i) {
    p.m(k + i, 3 * k + i) = 1.0;      // E
    p.m(2 * k + i, 3 * k + i) = 1.0;
    p.m(3 * k + i, i) = mu(rng);      // mu
    p.m(3 * k + i, k + i) = -1.0;     // -E'
    p.m(3 * k + i, 2 * k + i) = -1.0;
  }
  for (int i = 0; i < k; ++i) {
    const double t = 0.05 * g(rng);
    p.q[i] = gap(rng) + 0.05 * g(rng);
    p.q[k + i] = t;
    p.q[2 * k + i] = -t;
  }
  return p;
}

/// Halm-Posa's disk with k fingers (tests/support): the real contact LCP, n = 4k.
Problem disk_lcp(int k, std::uint64_t seed, double c) {
  const LcpInstance inst = halm_posa_disk_lcp(k, seed, c);
  Problem p = empty_problem(4 * k);
  for (int i = 0; i < p.n; ++i) {
    p.q[i] = inst.q[i];
    for (int j = 0; j < p.n; ++j) p.m(i, j) = inst.M(i, j);
  }
  return p;
}

/// Small integers give exact ties in the ratio test: A A' (PSD, so copositive-plus: Lemke
/// solves it whenever it has a solution) with q in {-2..2}.
Problem integer_psd_lcp(int n, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> small(-2, 2);
  Problem p = empty_problem(n);
  std::vector<int> A(static_cast<std::size_t>(n) * n);
  for (int& a : A) a = small(rng);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      int s = 0;
      for (int k = 0; k < n; ++k) s += A[i * n + k] * A[j * n + k];
      p.m(i, j) = s;
    }
  for (double& v : p.q) v = small(rng);
  return p;
}

/// No solution: every entry of M is <= 0 and q_0 < 0, so w_0 = q_0 + (M z)_0 < 0 for all
/// z >= 0. Lemke must end on a secondary ray.
Problem ray_lcp(int n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> neg(-2.0, 0.0);
  std::normal_distribution<double> g;
  Problem p = empty_problem(n);
  for (double& v : p.M) v = neg(rng);
  for (double& v : p.q) v = g(rng);
  p.q[0] = -1.0 - std::abs(g(rng));
  return p;
}

/// Murty's example: lower triangular, 1 on the diagonal and 2 below, q = -1 (a P-matrix on
/// which Lemke takes 2^n pivots).
Problem murty_lcp(int n) {
  Problem p = empty_problem(n);
  for (int i = 0; i < n; ++i) {
    p.m(i, i) = 1.0;
    for (int j = 0; j < i; ++j) p.m(i, j) = 2.0;
    p.q[i] = -1.0;
  }
  return p;
}

/// A problem whose path passes the degenerate exit: z0 is left at 1e-12 by a pivot that is
/// not a tie (ratios 1 - 1e-12 against z0's 1), and since q_0 = 100 the zero level
/// 1e-13 |q|_inf is 1e-11, so the next step tries the basis point without z0. That point
/// (0, 1 - 1e-12, 0) has residual ~1e-12 / 100 and is accepted after 2 pivots; the exact
/// solution would be (0, 1, 5e-13). (q_0 stays inside the band of data used as given,
/// 2^-20 ... 2^20: data beyond it are scaled to unit size first.) Rows 3.. (n > 3) are
/// identity rows with q = 1, which stay basic and change nothing.
Problem degenerate_exit_lcp(int n) {
  Problem p = empty_problem(n);
  for (int i = 0; i < n; ++i) {
    p.m(i, i) = 1.0;
    p.q[i] = 1.0;
  }
  p.m(2, 1) = 0.5;
  p.q[0] = 100;
  p.q[1] = -1.0;
  p.q[2] = -0.5 - 0.5e-12;
  return p;
}

/// Two pairs of identical rows, q = -1: every ratio test is an exact tie.
Problem tied_rows_lcp() {
  Problem p = empty_problem(4);
  p.M = {1, 1, 0, 0,  //
         1, 1, 0, 0,  //
         0, 0, 1, 1,  //
         0, 0, 1, 1};
  p.q = {-1, -1, -1, -1};
  return p;
}

/// The same problem padded to size n (n >= p.n) with tied-rows blocks: a degenerate lane
/// filler of any size.
Problem degenerate_lcp(int n) {
  Problem p = empty_problem(n);
  for (int b = 0; b + 1 < n; b += 2) p.m(b, b) = p.m(b, b + 1) = p.m(b + 1, b) = p.m(b + 1, b + 1) = 1.0;
  if (n % 2) p.m(n - 1, n - 1) = 1.0;
  for (double& v : p.q) v = -1.0;
  return p;
}

// ---- T = double on textbook LCPs ---------------------------------------------------------

class LemkeLanesDouble : public ::testing::Test {
 protected:
  LemkeLanes<double> solver{kCapacity};
};

TEST_F(LemkeLanesDouble, PositiveDefiniteProblemsHaveTheirKnownSolutions) {
  // 3 x 3 tridiagonal: z = (1/2, 0, 1/2), w = (0, 2, 0) (rows 1 and 3 active; row 2 gets
  // 1 + 1/2 + 1/2). Halves are exact in binary, so only roundoff in the pivots remains.
  Problem a = empty_problem(3);
  a.M = {2, 1, 0, 1, 2, 1, 0, 1, 2};
  a.q = {-1, 1, -1};
  const Answer ra = solve_one(solver, a);
  expect_solution(a, ra);
  EXPECT_NEAR(ra.z[0], 0.5, 1e-12);
  EXPECT_NEAR(ra.z[1], 0.0, 1e-12);
  EXPECT_NEAR(ra.z[2], 0.5, 1e-12);
  EXPECT_NEAR(ra.w[0], 0.0, 1e-12);
  EXPECT_NEAR(ra.w[1], 2.0, 1e-12);
  EXPECT_NEAR(ra.w[2], 0.0, 1e-12);
  EXPECT_GT(ra.pivots, 0);

  // 2 x 2 with both rows active: z = M^-1 (5, 6) = (4/3, 7/3), w = 0.
  Problem b = empty_problem(2);
  b.M = {2, 1, 1, 2};
  b.q = {-5, -6};
  const Answer rb = solve_one(solver, b);
  expect_solution(b, rb);
  EXPECT_NEAR(rb.z[0], 4.0 / 3.0, 1e-12);
  EXPECT_NEAR(rb.z[1], 7.0 / 3.0, 1e-12);
  EXPECT_NEAR(rb.w[0], 0.0, 1e-12);
  EXPECT_NEAR(rb.w[1], 0.0, 1e-12);
}

TEST_F(LemkeLanesDouble, NonnegativeQIsSolvedByZeroWithoutPivots) {
  Problem p = empty_problem(2);
  p.M = {1, -1, 3, 2};
  p.q = {0.5, 0.0};
  const Answer r = solve_one(solver, p);
  expect_solution(p, r);
  EXPECT_EQ(r.pivots, 0);
  EXPECT_TRUE(test::same_bits(r.residual, 0.0));
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(test::same_bits(r.z[i], 0.0)) << i;  // +0, not -0
    EXPECT_EQ(r.w[i], p.q[i]) << i;
  }
}

TEST_F(LemkeLanesDouble, UnsolvableProblemsEndOnASecondaryRay) {
  // w = -z - 1 < 0 for every z >= 0. After z0 enters (1 pivot), z is the entering variable
  // and its column never blocks: a ray. The ray's point (z = 0, w = q) is written, with
  // residual about 1 (w = -1 against |q| = 1, widened by its rounding bound).
  Problem a = empty_problem(1);
  a.M = {-1};
  a.q = {-1};
  const Answer ra = solve_one(solver, a);
  EXPECT_EQ(ra.status, Status::not_found);
  EXPECT_EQ(ra.pivots, 1);
  EXPECT_EQ(ra.z[0], 0.0);
  EXPECT_EQ(ra.w[0], -1.0);
  EXPECT_NEAR(ra.residual, 1.0, 1e-15);
  EXPECT_GE(ra.residual, 1.0);

  // Skew (copositive-plus) with no solution: z'(Mz + q) = q'z < 0 for any nonzero z >= 0,
  // and z = 0 is not feasible.
  Problem b = empty_problem(2);
  b.M = {0, 1, -1, 0};
  b.q = {-1, -1};
  const Answer rb = solve_one(solver, b);
  EXPECT_EQ(rb.status, Status::not_found);
  EXPECT_GT(rb.residual, 1e-9);

  // All-nonpositive M with q_0 < 0, several sizes.
  std::mt19937_64 rng(11);
  for (int n = 1; n <= 12; ++n) {
    const Answer r = solve_one(solver, ray_lcp(n, rng));
    EXPECT_EQ(r.status, Status::not_found) << n;
    EXPECT_GT(r.residual, 1e-9) << n;
  }
}

TEST_F(LemkeLanesDouble, DegenerateTiesDoNotCycle) {
  const Problem p = tied_rows_lcp();
  const Answer r = solve_one(solver, p);
  expect_solution(p, r, 1e-12);
  EXPECT_NEAR(r.z[0] + r.z[1], 1.0, 1e-12);
  EXPECT_NEAR(r.z[2] + r.z[3], 1.0, 1e-12);

  // Padded versions of every size (odd sizes end with a 1 x 1 block).
  for (int n = 1; n <= kCapacity; ++n) {
    const Problem d = degenerate_lcp(n);
    const Answer rd = solve_one(solver, d);
    expect_solution(d, rd, 1e-12);
  }

  // Murty's example: the exponential path, with the pivot count Lemke<N>'s test measured.
  for (int n = 2; n <= 10; ++n) {
    const Problem m = murty_lcp(n);
    const Answer rm = solve_one(solver, m);
    expect_solution(m, rm, 1e-12);
    EXPECT_EQ(rm.pivots, 1 << n) << n;
    EXPECT_NEAR(rm.z[0], 1.0, 1e-12) << n;  // the unique solution is z = e_1
    for (int i = 1; i < n; ++i) EXPECT_NEAR(rm.z[i], 0.0, 1e-12) << n;
  }

  // Integer PSD data with many exact ties: whatever is `solved` is a solution, and PSD
  // problems are solved or end on a ray (no numerical failures, no limit).
  std::mt19937_64 rng(3);
  int solved = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const Problem ip = integer_psd_lcp(2 + trial % 7, rng);
    const Answer ri = solve_one(solver, ip);
    if (ri.status == Status::solved) {
      ++solved;
      expect_solution(ip, ri);
    } else {
      EXPECT_EQ(ri.status, Status::not_found) << trial;
    }
  }
  EXPECT_GT(solved, 50);
}

TEST_F(LemkeLanesDouble, ANearTieLetsZ0LeaveAndThePointIsCheckedAgainstTheRule) {
  // z0 sits 1e-12 above zero after two pivots; on the data scaled to unit size its ratio ties
  // with the blocking row's, so z0 leaves (the lexicographic rule's preference) and the
  // point is z = (0, 1, 0), whose w_2 = -5e-13 is 5e-15 of |q|: solved. Lemke<N> takes the
  // same path.
  const Problem p = degenerate_exit_lcp(3);
  const Answer r = solve_one(solver, p);
  expect_solution(p, r);
  EXPECT_EQ(r.pivots, 2);
  EXPECT_EQ(r.z[1], 1.0);
  EXPECT_EQ(r.z[2], 0.0);
  EXPECT_LE(r.residual, 1e-14);
  auto ref = std::make_unique<Lemke<64>>();
  auto rr = std::make_unique<Lemke<64>::Result>();
  ASSERT_EQ(ref->solve(eigen_M(p), eigen_q(p), *rr), Status::solved);
  EXPECT_EQ(rr->stats.iterations, 2);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r.z[i], rr->z[i]) << i;
  // A tolerance that point does not meet: never `solved`.
  LemkeOptions tight;
  tight.tolerance = 1e-16;
  const Answer rt = solve_one(solver, p, tight);
  EXPECT_NE(rt.status, Status::solved);
  EXPECT_NE(rt.status, Status::iteration_limit);
}

TEST_F(LemkeLanesDouble, PivotLimitStopsTheRunWithoutAPoint) {
  // Murty n = 8 needs 256 pivots. max_pivots = 1: the z0 pivot is not checked against the
  // limit (neither is it in Lemke<N>), the first complementary pivot is, so the run stops
  // after 2 pivots.
  const Problem p = murty_lcp(8);
  LemkeOptions opt;
  opt.max_pivots = 1;
  const Answer r = solve_one(solver, p, opt);
  EXPECT_EQ(r.status, Status::iteration_limit);
  EXPECT_EQ(r.pivots, 2);
  EXPECT_TRUE(std::isnan(r.residual));
  for (int i = 0; i < p.n; ++i) {
    EXPECT_EQ(r.z[i], kSentinel) << i;  // no point: z and w are left as they were
    EXPECT_EQ(r.w[i], kSentinel) << i;
  }
  opt.max_pivots = 100;
  const Answer r100 = solve_one(solver, p, opt);
  EXPECT_EQ(r100.status, Status::iteration_limit);
  EXPECT_EQ(r100.pivots, 100);
  // The same counts as the scalar kernel at the same limits.
  auto ref = std::make_unique<Lemke<64>>();
  auto rr = std::make_unique<Lemke<64>::Result>();
  for (int limit : {1, 2, 100}) {
    opt.max_pivots = limit;
    EXPECT_EQ(ref->solve(eigen_M(p), eigen_q(p), *rr, nullptr, opt), Status::iteration_limit);
    EXPECT_EQ(solve_one(solver, p, opt).pivots, rr->stats.iterations) << limit;
  }
  // A limit the path fits under changes nothing.
  opt.max_pivots = 256;
  const Answer full = solve_one(solver, p, opt);
  EXPECT_EQ(full.status, Status::solved);
  EXPECT_EQ(full.pivots, 256);
}

TEST_F(LemkeLanesDouble, SizeZeroAndSizesOutsideTheCapacity) {
  const Answer r0 = solve_one(solver, empty_problem(0));
  EXPECT_EQ(r0.status, Status::solved);
  EXPECT_EQ(r0.pivots, 0);
  EXPECT_EQ(r0.residual, 0.0);
  LemkeLanes<double> none(0);
  EXPECT_EQ(none.capacity(), 0);
  EXPECT_EQ(solve_one(none, empty_problem(0)).status, Status::solved);
  EXPECT_EQ(solve_one(none, murty_lcp(1)).status, Status::bad_input);
  const Answer big = solve_one(solver, murty_lcp(kCapacity + 1));
  EXPECT_EQ(big.status, Status::bad_input);
  EXPECT_EQ(big.z[0], kSentinel);
  EXPECT_EQ(solve_one(solver, degenerate_lcp(kCapacity)).status, Status::solved);  // the capacity itself fits
  // A negative size is bad input too (M and q are never read).
  LemkeLanesResult<double> r;
  double z = kSentinel, w = kSentinel;
  solver.solve(-1, nullptr, nullptr, nullptr, &z, &w, LemkeOptions{}, r);
  EXPECT_EQ(r.status[0], Status::bad_input);
}

TEST_F(LemkeLanesDouble, NonFiniteDataIsBadInput) {
  for (double bad : {kNaN, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
    Problem p = murty_lcp(3);
    p.m(1, 2) = bad;
    const Answer rm = solve_one(solver, p);
    EXPECT_EQ(rm.status, Status::bad_input);
    EXPECT_EQ(rm.z[0], kSentinel);
    EXPECT_TRUE(std::isnan(rm.residual));
    p = murty_lcp(3);
    p.q[2] = bad;
    EXPECT_EQ(solve_one(solver, p).status, Status::bad_input);
  }
}

// ---- agreement with the scalar Lemke<64> -------------------------------------------------

TEST(LemkeLanesAgreement, MatchesLemke64OnRandomContactLikeProblems) {
  // The method is Lemke<N>'s without warm start and refinement, so on well-conditioned data
  // it follows the same path: same status and pivot count, and z to roundoff. P-matrices
  // have one solution (z must agree); the other families may have several, so each answer
  // is also verified on its own and w compared only where z agrees.
  LemkeLanes<double> lanes(kCapacity);
  auto ref = std::make_unique<Lemke<64>>();
  auto rr = std::make_unique<Lemke<64>::Result>();
  std::mt19937_64 rng(20240601);
  int solved = 0, rays = 0, z_equal = 0, compared = 0;
  for (int trial = 0; trial < 200; ++trial) {
    Problem p;
    bool unique = false;
    switch (trial % 5) {
      case 0:
      case 1:
        p = p_matrix_lcp(1 + trial % kCapacity, rng);
        unique = true;
        break;
      case 2:
        p = friction_lcp(1 + (trial / 5) % 6, rng, trial % 2 ? 1.0 : 1e-3);
        break;
      case 3:
        p = disk_lcp(1 + (trial / 5) % 6, static_cast<std::uint64_t>(trial), (trial / 5) % 3 == 0 ? 1e-4 : 1.0);
        break;
      default:
        p = (trial / 5) % 2 ? integer_psd_lcp(2 + (trial / 5) % 9, rng) : ray_lcp(1 + (trial / 5) % kCapacity, rng);
        break;
    }
    SCOPED_TRACE("trial " + std::to_string(trial) + " n " + std::to_string(p.n));
    const Answer a = solve_one(lanes, p);
    const Status s = ref->solve(eigen_M(p), eigen_q(p), *rr);
    ASSERT_EQ(a.status, s) << to_string(a.status) << " vs " << to_string(s);
    EXPECT_EQ(a.pivots, rr->stats.iterations);
    if (s == Status::not_found) ++rays;
    if (s != Status::solved) continue;
    ++solved;
    expect_solution(p, a);
    const double zmax = std::max(1.0, rr->z.cwiseAbs().maxCoeff());
    double dz = 0, dw = 0;
    for (int i = 0; i < p.n; ++i) {
      dz = std::max(dz, std::abs(a.z[i] - rr->z[i]));
      dw = std::max(dw, std::abs(a.w[i] - rr->w[i]));
    }
    ++compared;
    if (unique) {
      EXPECT_LE(dz, 1e-9 * zmax);
    }
    if (dz <= 1e-9 * zmax) {
      ++z_equal;
      EXPECT_LE(dw, 1e-9 * std::max(1.0, rr->w.cwiseAbs().maxCoeff()));
    }
  }
  // Every family contributed, and both outcomes occurred.
  EXPECT_GT(solved, 120);
  EXPECT_GT(rays, 10);
  // Same path, same point: observed for every solved trial (not only the P-matrices).
  EXPECT_EQ(z_equal, compared);
}

// ---- lanes: bitwise the T = double solve -------------------------------------------------

class LemkeLanesLanes : public ::testing::Test {
 protected:
  LemkeLanes<Lane> lanes{kCapacity};
  LemkeLanes<double> one{kCapacity};

  /// Solves the lane group and checks every lane against its problem solved alone.
  LaneRun expect_bitwise(const std::vector<Problem>& ps, const std::string& what, const LemkeOptions& opt = {}) {
    const LaneRun run = solve_lanes(lanes, ps, opt);
    for (int l = 0; l < kLaneWidth; ++l) expect_lane_is(run, l, solve_one(one, ps[l], opt), what);
    return run;
  }
};

TEST_F(LemkeLanesLanes, EachLaneOfAMixedGroupIsItsOwnScalarSolve) {
  // Eight different kinds of problem in the eight lanes, rotated by the seed so each kind
  // visits each lane: solvable, friction, degenerate, a ray, NaN data, q >= 0, a long path,
  // a nearly singular contact problem, the degenerate exit (nine kinds, so the mix changes
  // with the seed). The statuses are checked too, so the mix is real. Murty's 2^n path
  // exceeds the default limit 1000 + 100 n from n = 12: an iteration_limit lane.
  enum Kind { kPd, kFriction, kDegenerate, kRay, kNan, kFeasible, kMurty, kDisk, kExit, kKinds };
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    const int k = 1 + static_cast<int>(seed % 4);  // contacts: n = 4, 8, 12, 16
    const int n = 4 * k;
    std::mt19937_64 rng(1000 + seed);
    std::vector<Problem> ps(kLaneWidth);
    std::vector<int> kind(kLaneWidth);
    for (int l = 0; l < kLaneWidth; ++l) {
      kind[l] = static_cast<int>((l + seed) % kKinds);
      switch (kind[l]) {
        case kPd: ps[l] = p_matrix_lcp(n, rng); break;
        case kFriction: ps[l] = friction_lcp(k, rng, 0.01); break;
        case kDegenerate: ps[l] = degenerate_lcp(n); break;
        case kRay: ps[l] = ray_lcp(n, rng); break;
        case kNan:
          ps[l] = p_matrix_lcp(n, rng);
          ps[l].m(n - 1, 0) = kNaN;
          break;
        case kFeasible:
          ps[l] = p_matrix_lcp(n, rng);
          for (double& v : ps[l].q) v = std::abs(v);
          break;
        case kMurty: ps[l] = murty_lcp(n); break;
        case kExit: ps[l] = degenerate_exit_lcp(n); break;
        default: ps[l] = disk_lcp(k, seed, 1e-4); break;
      }
    }
    const LaneRun run = expect_bitwise(ps, "seed " + std::to_string(seed));
    const int limit = 1000 + 100 * n;
    for (int l = 0; l < kLaneWidth; ++l) {
      const Status s = run.result.status[l];
      switch (kind[l]) {
        case kRay: EXPECT_EQ(s, Status::not_found) << l; break;
        case kNan: EXPECT_EQ(s, Status::bad_input) << l; break;
        case kFeasible:
          EXPECT_EQ(s, Status::solved) << l;
          EXPECT_EQ(run.result.pivots[l], 0) << l;
          break;
        case kMurty:
          EXPECT_EQ(s, (1 << n) <= limit ? Status::solved : Status::iteration_limit) << l;
          EXPECT_EQ(run.result.pivots[l], std::min(1 << n, limit)) << l;
          break;
        case kExit:
          EXPECT_EQ(s, Status::solved) << l;
          EXPECT_EQ(run.result.pivots[l], 2) << l;
          break;
        default: EXPECT_EQ(s, Status::solved) << "lane " << l << " kind " << kind[l]; break;
      }
    }
    // A tolerance almost nothing meets: numerical failures, declined degenerate exits, rays
    // whose points are rejected; still each lane exactly as alone.
    LemkeOptions tight;
    tight.tolerance = 1e-17;
    expect_bitwise(ps, "tight, seed " + std::to_string(seed), tight);
  }
}

TEST_F(LemkeLanesLanes, MixedSizesOfRandomProblemsInEveryLane) {
  // All lanes random (P-matrix, integer PSD with ties, ray) at every size 1..24: a lane that
  // finishes early must freeze while the others keep pivoting.
  std::mt19937_64 rng(77);
  for (int n = 1; n <= kCapacity; ++n) {
    std::vector<Problem> ps(kLaneWidth);
    for (int l = 0; l < kLaneWidth; ++l) {
      const int kind = static_cast<int>(rng() % 3);
      ps[l] = kind == 0 ? p_matrix_lcp(n, rng) : kind == 1 ? integer_psd_lcp(n, rng) : ray_lcp(n, rng);
    }
    expect_bitwise(ps, "n " + std::to_string(n));
  }
}

TEST_F(LemkeLanesLanes, TheSameProblemInEveryLaneGivesTheSameBitsInEveryLane) {
  for (std::uint64_t seed = 0; seed < 4; ++seed) {
    const Problem p = disk_lcp(3 + static_cast<int>(seed), seed, seed % 2 ? 1e-4 : 1.0);
    const std::vector<Problem> ps(kLaneWidth, p);
    const LaneRun run = expect_bitwise(ps, "disk seed " + std::to_string(seed));
    EXPECT_EQ(run.result.status[0], Status::solved);
  }
  const std::vector<Problem> murty(kLaneWidth, murty_lcp(6));
  expect_bitwise(murty, "murty");
}

TEST_F(LemkeLanesLanes, OneProblemAmongGarbageNeighboursKeepsItsBits) {
  // Garbage: finite but wild (large and tiny magnitudes, signed zeros, exact zeros), so the
  // neighbours take other pivot rows, other entering variables, other path lengths, and stop
  // at other times. The problem under test must not notice, in any lane position.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> expo(-8, 8), pick(0, 9);
  auto garbage = [&](int n) {
    Problem g = empty_problem(n);
    auto value = [&]() {
      switch (pick(rng)) {
        case 0: return 0.0;
        case 1: return -0.0;
        case 2: return 1.0;
        default: return u(rng) * std::ldexp(1.0, 2 * expo(rng));
      }
    };
    for (double& v : g.M) v = value();
    for (double& v : g.q) v = value();
    return g;
  };
  std::mt19937_64 prng(6);
  const std::vector<Problem> tests = {disk_lcp(4, 9, 1e-4), friction_lcp(3, prng, 0.01), p_matrix_lcp(16, prng),
                                      murty_lcp(7), degenerate_lcp(9), ray_lcp(10, prng)};
  for (std::size_t t = 0; t < tests.size(); ++t) {
    const Problem& p = tests[t];
    const Answer alone = solve_one(one, p);
    for (int target = 0; target < kLaneWidth; ++target) {
      std::vector<Problem> ps(kLaneWidth);
      for (int l = 0; l < kLaneWidth; ++l) ps[l] = l == target ? p : garbage(p.n);
      const LaneRun run = solve_lanes(lanes, ps);
      expect_lane_is(run, target, alone, "problem " + std::to_string(t));
      // The neighbours are themselves their own scalar solves.
      for (int l = 0; l < kLaneWidth; ++l)
        if (l != target) expect_lane_is(run, l, solve_one(one, ps[l]), "garbage next to problem " + std::to_string(t));
    }
  }
}

TEST(LemkeLanesDegenerateExit, OnlyTheLanesAtTheZeroLevelMayTakeIt) {
  // The degenerate exit evaluates candidate points of the lanes whose z0 is at the zero
  // level; the others must keep pivoting even if some point would pass the residual test
  // for them. Here the other lanes hold Murty's problem scaled to q = -1e-10: z = 0 already
  // has residual 1e-10 (within the tolerance), but their z0 stays far above the zero level
  // 1e-13, so alone they follow the full path to z0 leaving. Next to lanes that take the
  // exit at their second pivot they must do the same. A fresh solver, so no earlier solve
  // has left candidate points behind.
  Problem tiny = murty_lcp(4);
  for (double& v : tiny.q) v = -1e-10;
  LemkeLanes<double> one(4);
  const Answer alone = solve_one(one, tiny);
  ASSERT_EQ(alone.status, Status::solved);
  ASSERT_GT(alone.pivots, 2);
  const Answer exit_alone = solve_one(one, degenerate_exit_lcp(4));
  ASSERT_EQ(exit_alone.pivots, 2);
  LemkeLanes<Lane> lanes(4);
  std::vector<Problem> ps(kLaneWidth, tiny);
  for (int l = 0; l < kLaneWidth; l += 2) ps[l] = degenerate_exit_lcp(4);
  const LaneRun run = solve_lanes(lanes, ps);
  for (int l = 0; l < kLaneWidth; ++l) expect_lane_is(run, l, l % 2 ? alone : exit_alone, "exit next to tiny");
}

TEST_F(LemkeLanesLanes, PivotLimitAndOptionsApplyPerLane) {
  // One limit for the group; lanes with short paths finish, long ones stop at the limit,
  // each exactly as alone.
  LemkeOptions opt;
  opt.max_pivots = 40;
  std::mt19937_64 rng(8);
  std::vector<Problem> ps(kLaneWidth);
  for (int l = 0; l < kLaneWidth; ++l) ps[l] = l % 2 ? murty_lcp(8) : p_matrix_lcp(8, rng);
  const LaneRun run = expect_bitwise(ps, "limit 40", opt);
  for (int l = 1; l < kLaneWidth; l += 2) {
    EXPECT_EQ(run.result.status[l], Status::iteration_limit) << l;
    EXPECT_EQ(run.result.pivots[l], 40) << l;
  }
  opt.max_pivots = 1;
  const LaneRun run1 = expect_bitwise(ps, "limit 1", opt);
  for (int l = 0; l < kLaneWidth; ++l) EXPECT_EQ(run1.result.status[l], Status::iteration_limit) << l;
}

TEST_F(LemkeLanesLanes, SizeZeroAndSizesOutsideTheCapacityInEveryLane) {
  LemkeLanesResult<Lane> r;
  std::vector<Lane> M(static_cast<std::size_t>(kCapacity + 1) * (kCapacity + 1), Lane(1.0)), q(kCapacity + 1, Lane(-1.0));
  std::vector<Lane> z(kCapacity + 1, Lane(kSentinel)), w(kCapacity + 1, Lane(kSentinel));
  lanes.solve(0, M.data(), q.data(), nullptr, z.data(), w.data(), LemkeOptions{}, r);
  for (int l = 0; l < kLaneWidth; ++l) {
    EXPECT_EQ(r.status[l], Status::solved) << l;
    EXPECT_EQ(r.pivots[l], 0) << l;
  }
  for (int n : {kCapacity + 1, -1}) {
    lanes.solve(n, M.data(), q.data(), nullptr, z.data(), w.data(), LemkeOptions{}, r);
    for (int l = 0; l < kLaneWidth; ++l) {
      EXPECT_EQ(r.status[l], Status::bad_input) << n << " lane " << l;
      EXPECT_EQ(r.pivots[l], 0);
      EXPECT_TRUE(std::isnan(r.residual[l]));
    }
    for (const Lane& v : z)
      for (int l = 0; l < kLaneWidth; ++l) EXPECT_EQ(v[l], kSentinel);
  }
}

TEST_F(LemkeLanesLanes, ReusingTheSolverAcrossSizesLeavesNoTrace) {
  // Solves of different sizes in a row on one object: the n = 5 group after an n = 24 group
  // is bitwise the n = 5 group on a fresh object.
  std::mt19937_64 rng(9);
  std::vector<Problem> small(kLaneWidth), large(kLaneWidth);
  for (int l = 0; l < kLaneWidth; ++l) {
    small[l] = l % 3 ? p_matrix_lcp(5, rng) : ray_lcp(5, rng);
    large[l] = p_matrix_lcp(kCapacity, rng);
  }
  LemkeLanes<Lane> fresh(kCapacity);
  const LaneRun a = solve_lanes(fresh, small);
  solve_lanes(lanes, large);
  const LaneRun b = solve_lanes(lanes, small);
  for (int l = 0; l < kLaneWidth; ++l) {
    EXPECT_EQ(a.result.status[l], b.result.status[l]);
    EXPECT_EQ(a.result.pivots[l], b.result.pivots[l]);
    EXPECT_TRUE(test::same_bits(a.result.residual[l], b.result.residual[l]));
    for (int i = 0; i < 5; ++i) {
      EXPECT_TRUE(test::same_bits(a.z[i][l], b.z[i][l]));
      EXPECT_TRUE(test::same_bits(a.w[i][l], b.w[i][l]));
    }
  }
}

// ---- excluded rows -----------------------------------------------------------------------

/// p (size m) embedded in size n at the rows `kept` (increasing); the other rows and columns
/// zero, excluded, with q = q_out.
Problem embed(const Problem& p, int n, const std::vector<int>& kept, const std::vector<double>& q_out) {
  Problem e = empty_problem(n);
  e.excluded.assign(n, 1);
  e.q = q_out;
  for (int a = 0; a < p.n; ++a) {
    e.excluded[kept[a]] = 0;
    e.q[kept[a]] = p.q[a];
    for (int b = 0; b < p.n; ++b) e.m(kept[a], kept[b]) = p.m(a, b);
  }
  return e;
}

TEST_F(LemkeLanesLanes, ExcludedRowsGiveTheAnswerOfTheSmallerProblem) {
  // Each lane: its own size-m problem at its own random subset of rows of an n = 16 layout.
  // Same status and pivots as the size-m problem; z and w on the kept rows equal to it, z = 0
  // and w = q on the excluded rows. Rounds 0-9 put q = 1 on the excluded rows (the usual
  // layout); rounds 10-19 put anything there (0, negative, large): the header says excluded
  // rows take no part, so neither the ratio test, nor the start, nor the zero level and
  // residual scale may see them.
  //
  // Equality is exact, not just 1e-12: the excluded rows only ever add terms b * 0 = +-0 to
  // sums that are nonzero or +0, divide zeros in the lexicographic test, and never block, so
  // the kept rows see the same operations on the same values. The test asserts same_bits on
  // z and the residual, and on w too, though for w it is a property of this data: the
  // embedded w_i = q_i + M_ij z_j also adds the +-0 terms of the excluded j, which would flip
  // a partial sum of -0 (possible only with q_i = -0, which no problem here has).
  constexpr int n = 16;
  std::mt19937_64 rng(12);
  const std::array<double, 5> odd_q = {1.0, 0.0, -0.5, -1e3, 1e3};
  int exact_w = 0, total_w = 0;
  for (int round = 0; round < 20; ++round) {
    // Sizes 3..12; multiples of 4 every third round, for the friction structure.
    const int rr = round % 10;
    const int m = rr % 3 == 0 ? std::min(12, 4 * (1 + rr / 3)) : 2 + rr;
    std::vector<Problem> small(kLaneWidth), big(kLaneWidth);
    std::vector<std::vector<int>> kept(kLaneWidth);
    for (int l = 0; l < kLaneWidth; ++l) {
      switch ((l + round) % 5) {
        case 0: small[l] = p_matrix_lcp(m, rng); break;
        case 1: small[l] = m % 4 == 0 ? friction_lcp(m / 4, rng, 0.01) : integer_psd_lcp(m, rng); break;
        case 2: small[l] = ray_lcp(m, rng); break;
        case 3: small[l] = degenerate_lcp(m); break;
        default:
          small[l] = p_matrix_lcp(m, rng);
          for (double& v : small[l].q) v = std::abs(v);
          break;
      }
      std::vector<int> rows(n);
      for (int i = 0; i < n; ++i) rows[i] = i;
      std::shuffle(rows.begin(), rows.end(), rng);
      kept[l].assign(rows.begin(), rows.begin() + m);
      std::sort(kept[l].begin(), kept[l].end());
      std::vector<double> q_out(n, 1.0);
      if (round >= 10)
        for (double& v : q_out) v = odd_q[rng() % odd_q.size()];
      big[l] = embed(small[l], n, kept[l], q_out);
    }
    // Lanes against each lane's embedded problem alone (masks included in the promise).
    const LaneRun run = expect_bitwise(big, "excluded round " + std::to_string(round));
    for (int l = 0; l < kLaneWidth; ++l) {
      SCOPED_TRACE("round " + std::to_string(round) + " lane " + std::to_string(l) + " m " + std::to_string(m));
      const Answer ref = solve_one(one, small[l]);
      ASSERT_EQ(run.result.status[l], ref.status);
      EXPECT_EQ(run.result.pivots[l], ref.pivots);
      EXPECT_TRUE(test::same_bits(run.result.residual[l], ref.residual));
      if (ref.status == Status::iteration_limit || ref.status == Status::bad_input) continue;
      std::vector<bool> is_kept(n, false);
      for (int a = 0; a < m; ++a) {
        const int i = kept[l][a];
        is_kept[i] = true;
        EXPECT_NEAR(run.z[i][l], ref.z[a], 1e-12);
        EXPECT_NEAR(run.w[i][l], ref.w[a], 1e-12);
        EXPECT_TRUE(test::same_bits(run.z[i][l], ref.z[a])) << a;
        EXPECT_EQ(run.w[i][l], ref.w[a]) << a;
        ++total_w;
        exact_w += test::same_bits(run.w[i][l], ref.w[a]);
      }
      for (int i = 0; i < n; ++i) {
        if (is_kept[i]) continue;
        EXPECT_TRUE(test::same_bits(run.z[i][l], 0.0)) << i;
        EXPECT_EQ(run.w[i][l], big[l].q[i]) << i;
      }
    }
  }
  EXPECT_GT(total_w, 0);
  EXPECT_EQ(exact_w, total_w);
}

TEST_F(LemkeLanesLanes, ExcludingNothingIsTheSameAsNoMasks) {
  // All-false masks take the masked code paths (select on is_excluded) without changing a bit.
  std::mt19937_64 rng(13);
  std::vector<Problem> ps(kLaneWidth);
  for (int l = 0; l < kLaneWidth; ++l) ps[l] = l % 2 ? friction_lcp(2, rng, 0.01) : p_matrix_lcp(8, rng);
  const LaneRun plain = solve_lanes(lanes, ps);
  for (Problem& p : ps) p.excluded.assign(p.n, 0);
  const LaneRun masked = expect_bitwise(ps, "all-false masks");
  for (int l = 0; l < kLaneWidth; ++l) {
    EXPECT_EQ(plain.result.status[l], masked.result.status[l]);
    EXPECT_EQ(plain.result.pivots[l], masked.result.pivots[l]);
    for (int i = 0; i < 8; ++i) {
      EXPECT_TRUE(test::same_bits(plain.z[i][l], masked.z[i][l]));
      EXPECT_TRUE(test::same_bits(plain.w[i][l], masked.w[i][l]));
    }
  }
}

}  // namespace
}  // namespace qs::lemke_lanes_test

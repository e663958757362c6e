// The acceptance rule is scale-free (quasistep/kernels/lcp_acceptance.hpp), and Lemke solves
// every LCP at unit scale (lcp_scaling_exponents): multiplying the data by a power of two
// changes no bit of any ratio, so the verdict and the answer must not change either. Random
// problems (P-matrix, dense, small-integer degenerate with infeasible ones among them,
// mixed) are solved as given and with M and q together, q alone and M alone multiplied by
// 2^k, k = -40 ... 40: the status must be the same and the answer bitwise the scaled one.
// Every `solved` answer is also held to the rule by the tests' own long-double verifier.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "quasistep/kernels/lcp_acceptance.hpp"
#include "quasistep/kernels/lemke.hpp"
#include "quasistep/kernels/lemke_lanes.hpp"
#include "tests/support/lcp_check.hpp"

namespace qs::lcp_invariance_test {
namespace {

struct Problem {
  Eigen::MatrixXd M;
  Eigen::VectorXd q;
};

Problem p_matrix(int n, std::mt19937_64& rng) {
  std::normal_distribution<double> g(0, 1);
  Eigen::MatrixXd A(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) A(i, j) = g(rng);
  Problem p{A * A.transpose() + 0.1 * Eigen::MatrixXd::Identity(n, n), Eigen::VectorXd(n)};
  for (int i = 0; i < n; ++i) p.q[i] = g(rng);
  return p;
}

Problem dense(int n, std::mt19937_64& rng) {
  std::normal_distribution<double> g(0, 1);
  Problem p{Eigen::MatrixXd(n, n), Eigen::VectorXd(n)};
  for (int i = 0; i < n; ++i) {
    p.q[i] = g(rng);
    for (int j = 0; j < n; ++j) p.M(i, j) = g(rng);
  }
  return p;
}

/// Small integers: exact ties everywhere, many degenerate and many infeasible problems.
Problem integer(int n, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> d(-2, 2);
  Problem p{Eigen::MatrixXd(n, n), Eigen::VectorXd(n)};
  for (int i = 0; i < n; ++i) {
    p.q[i] = d(rng);
    for (int j = 0; j < n; ++j) p.M(i, j) = d(rng);
  }
  return p;
}

/// The problem where a wrong `solved` was first seen: z about 1.1e14, its own w_0 = -2560.
Problem reported() {
  Problem p{Eigen::MatrixXd(5, 5), Eigen::VectorXd(5)};
  p.M << 65536, 8192, -73728, -8192, -49152, 8192, 139264, -49152, 81920, -49152, -73728, -49152, 106496, -24576,
      65536, -8192, 81920, -24576, 81920, -40960, -49152, -49152, 65536, -40960, 73728;
  p.q << 8192, 16384, -16384, 0, -16384;
  return p;
}

class LcpInvariance : public ::testing::Test {
 protected:
  std::unique_ptr<Lemke<64>> solver = std::make_unique<Lemke<64>>();
  std::unique_ptr<Lemke<64>::Result> base = std::make_unique<Lemke<64>::Result>();
  std::unique_ptr<Lemke<64>::Result> scaled = std::make_unique<Lemke<64>::Result>();

  /// Solves p as given and at every power of two, three ways; returns the base status.
  Status expect_invariant(const Problem& p, const char* what, int index) {
    const Status s0 = solver->solve(p.M, p.q, *base);
    if (s0 == Status::solved) {
      EXPECT_LE(test::lcp_violation(p.M, p.q, base->z), kLcpTolerance) << what << " " << index;
    }
    for (int k = -40; k <= 40; k += 10) {
      if (k == 0) continue;
      const double s = std::ldexp(1.0, k);
      // (sM, sq): the same z, w times s.
      Eigen::MatrixXd M = p.M * s;
      Eigen::VectorXd q = p.q * s;
      EXPECT_EQ(solver->solve(M, q, *scaled), s0) << what << " " << index << " (sM, sq) k " << k;
      if (s0 == Status::solved && scaled->status == Status::solved) {
        for (Eigen::Index i = 0; i < p.q.size(); ++i) {
          EXPECT_EQ(scaled->z[i], base->z[i]) << what << " " << index << " k " << k;
          EXPECT_EQ(scaled->w[i], base->w[i] * s) << what << " " << index << " k " << k;
        }
      }
      // (M, sq): z times s.
      EXPECT_EQ(solver->solve(p.M, q, *scaled), s0) << what << " " << index << " (M, sq) k " << k;
      if (s0 == Status::solved && scaled->status == Status::solved) {
        for (Eigen::Index i = 0; i < p.q.size(); ++i) EXPECT_EQ(scaled->z[i], base->z[i] * s) << what << " " << index;
      }
      // (sM, q): z over s.
      EXPECT_EQ(solver->solve(M, p.q, *scaled), s0) << what << " " << index << " (sM, q) k " << k;
      if (s0 == Status::solved && scaled->status == Status::solved) {
        for (Eigen::Index i = 0; i < p.q.size(); ++i) EXPECT_EQ(scaled->z[i], base->z[i] / s) << what << " " << index;
      }
    }
    return s0;
  }
};

TEST_F(LcpInvariance, PMatrixProblemsOfSizeEightKeepTheirAnswerAtEveryPowerOfTwo) {
  std::mt19937_64 rng(8);
  int solved = 0;
  for (int t = 0; t < 40; ++t) solved += expect_invariant(p_matrix(8, rng), "p-matrix", t) == Status::solved;
  EXPECT_EQ(solved, 40);  // a P-matrix LCP has exactly one solution, and Lemke finds it
}

TEST_F(LcpInvariance, DenseProblemsOfSizeFortyKeepTheirVerdictAtEveryPowerOfTwo) {
  std::mt19937_64 rng(40);
  for (int t = 0; t < 6; ++t) expect_invariant(dense(40, rng), "dense 40", t);
}

TEST_F(LcpInvariance, DegenerateIntegerProblemsKeepTheirVerdictAtEveryPowerOfTwo) {
  std::mt19937_64 rng(2);
  int solved = 0, other = 0;
  for (int t = 0; t < 120; ++t) {
    const Status s = expect_invariant(integer(2 + t % 6, rng), "integer", t);
    (s == Status::solved ? solved : other)++;
  }
  EXPECT_GT(solved, 20);  // both verdicts occur
  EXPECT_GT(other, 20);
}

TEST_F(LcpInvariance, TheReportedProblemIsNeverSolvedWithItsWeightUnsupported) {
  const Problem p = reported();
  const Status s = expect_invariant(p, "reported", 0);
  EXPECT_NE(s, Status::solved);  // no solution exists (an LP says so); z ~ 1e14 with w_0 = -2560 was accepted
  Problem small{p.M / 8192, p.q / 8192};
  EXPECT_EQ(solver->solve(small.M, small.q, *scaled), s);
}

TEST_F(LcpInvariance, MixedProblemsKeepTheirAnswerAtEveryPowerOfTwo) {
  // Trinkle-like: free variables whose block A is zero or invertible, beside a P-matrix block.
  std::mt19937_64 rng(5);
  auto mixed = std::make_unique<Lemke<64>::MixedResult>();
  auto mixed_s = std::make_unique<Lemke<64>::MixedResult>();
  int solved = 0;
  for (int t = 0; t < 30; ++t) {
    Problem p = p_matrix(6, rng);
    const int free = 1 + t % 2;
    if (t % 3 == 0) p.M.topLeftCorner(free, free).setZero();
    const Status s0 = solver->solve_mixed(p.M, p.q, free, *mixed);
    solved += s0 == Status::solved;
    for (int k = -40; k <= 40; k += 20) {
      const double s = std::ldexp(1.0, k);
      EXPECT_EQ(solver->solve_mixed(p.M * s, p.q * s, free, *mixed_s), s0) << t << " k " << k;
      if (s0 != Status::solved || mixed_s->status != Status::solved) continue;
      for (Eigen::Index i = 0; i < mixed->u.size(); ++i) EXPECT_EQ(mixed_s->u[i], mixed->u[i]) << t;
      for (Eigen::Index i = 0; i < mixed->z.size(); ++i) EXPECT_EQ(mixed_s->z[i], mixed->z[i]) << t;
    }
  }
  EXPECT_GT(solved, 20);
}

TEST_F(LcpInvariance, LanesKeepTheirAnswerAtEveryPowerOfTwo) {
  // One lane group of LemkeLanes<double> (the contact steps' kernel) against itself scaled.
  std::mt19937_64 rng(11);
  constexpr int n = 8;
  LemkeLanes<double> lanes(n);
  LemkeLanesResult<double> r0, r1;
  std::vector<double> M(n * n), Ms(n * n), q(n), qs(n), z0(n), w0(n), z1(n), w1(n);
  for (int t = 0; t < 30; ++t) {
    const Problem p = t % 2 ? p_matrix(n, rng) : integer(n, rng);
    for (int i = 0; i < n; ++i) {
      q[i] = p.q[i];
      for (int j = 0; j < n; ++j) M[i * n + j] = p.M(i, j);  // row-major
    }
    lanes.solve(n, M.data(), q.data(), nullptr, z0.data(), w0.data(), LemkeOptions{}, r0);
    for (int k = -40; k <= 40; k += 20) {
      const double s = std::ldexp(1.0, k);
      for (int i = 0; i < n * n; ++i) Ms[i] = M[i] * s;
      for (int i = 0; i < n; ++i) qs[i] = q[i] * s;
      lanes.solve(n, Ms.data(), qs.data(), nullptr, z1.data(), w1.data(), LemkeOptions{}, r1);
      EXPECT_EQ(r1.status[0], r0.status[0]) << t << " k " << k;
      if (r0.status[0] != Status::solved) continue;
      for (int i = 0; i < n; ++i) {
        EXPECT_EQ(z1[i], z0[i]) << t << " k " << k;
        EXPECT_EQ(w1[i], w0[i] * s) << t << " k " << k;
      }
    }
  }
}

TEST(LcpAcceptance, TheRuleIsRelativeToQAndCertified) {
  Eigen::MatrixXd M(1, 1);
  M << 1;
  Eigen::VectorXd q(1), z(1);
  q << -1;
  z << 1;  // w = 0 exactly: only the rounding bound of its two terms remains
  EXPECT_LE(lcp_certified_residual(M, q, z), 1e-14);
  z << 1 + 1e-9;  // w = 1e-9 beside z > 0: within 2^-20 |q|
  EXPECT_LE(lcp_certified_residual(M, q, z), kLcpTolerance);
  z << 1 + 1e-5;  // w = 1e-5: beyond it
  EXPECT_GT(lcp_certified_residual(M, q, z), kLcpTolerance);
  z << -1e-300;  // a negative z is never accepted
  EXPECT_EQ(lcp_certified_residual(M, q, z), INFINITY);
  // q = 0: only an exact solution passes, and z = 0 is one with no rounding at all.
  q << 0;
  z << 0;
  EXPECT_EQ(lcp_certified_residual(M, q, z), 0.0);
  z << 1;  // w = 1 beside z = 1: z'w = 1 > tol |z| = 0
  EXPECT_EQ(lcp_certified_residual(M, q, z), INFINITY);
  // w = 0 exactly, from terms far larger than q: z = (2^13 + 2^-20, 2^13) for
  // M = [[1, -1], [-1, 1]], q = (-2^-20, 2^-20). The terms are 2^34 |q|: the double bound
  // (about 2^-16 |q|) cannot certify the rows, the long-double one (2^-27 |q|) can.
  Eigen::MatrixXd M2(2, 2);
  M2 << 1, -1, -1, 1;
  Eigen::VectorXd q2(2), z2(2);
  q2 << -0x1p-20, 0x1p-20;
  z2 << 0x1p13 + 0x1p-20, 0x1p13;
  EXPECT_LE(lcp_certified_residual(M2, q2, z2), kLcpTolerance);
  EXPECT_GT(lcp_certified_residual(M2, q2, z2), 0.0);
  // Terms 2^51 |q|: even long double cannot tell w_i from zero to 2^-20 |q|: refused.
  z2 << 0x1p30 + 0x1p-20, 0x1p30;
  EXPECT_GT(lcp_certified_residual(M2, q2, z2), kLcpTolerance);
}

}  // namespace
}  // namespace qs::lcp_invariance_test

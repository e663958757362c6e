// The exact LCP fallback: against brute force over all complementary bases on random
// small LCPs (including ones where Lemke's method ends on a ray although a solution
// exists), proofs of infeasibility, free variables, and determinism across threads.
#include "quasistep/kernels/lcp_enumeration.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <random>
#include <utility>
#include <tbb/global_control.h>

#include "quasistep/kernels/lemke.hpp"

namespace qs::lcp_enumeration_test {
namespace {

/// Whether LCP(M, q) has a solution, by trying every complementary basis (nondegenerate
/// data: random continuous entries).
bool brute_force_solvable(const Eigen::MatrixXd& M, const Eigen::VectorXd& q) {
  const int n = static_cast<int>(q.size());
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    std::vector<int> basic;
    for (int i = 0; i < n; ++i)
      if (mask >> i & 1u) basic.push_back(i);
    Eigen::VectorXd z = Eigen::VectorXd::Zero(n);
    if (!basic.empty()) {
      Eigen::MatrixXd Mb(basic.size(), basic.size());
      Eigen::VectorXd qb(basic.size());
      for (size_t a = 0; a < basic.size(); ++a) {
        qb[a] = -q[basic[a]];
        for (size_t b = 0; b < basic.size(); ++b) Mb(a, b) = M(basic[a], basic[b]);
      }
      Eigen::FullPivLU<Eigen::MatrixXd> lu(Mb);
      if (!lu.isInvertible()) continue;
      const Eigen::VectorXd zb = lu.solve(qb);
      for (size_t a = 0; a < basic.size(); ++a) z[basic[a]] = zb[a];
    }
    const Eigen::VectorXd w = M * z + q;
    if (z.minCoeff() >= -1e-10 && w.minCoeff() >= -1e-10) return true;
  }
  return false;
}

/// A random LCP of size n, entries uniform in (-1, 1), drawn row by row (q_i, then M_i.).
std::pair<Eigen::MatrixXd, Eigen::VectorXd> random_lcp(std::mt19937_64& rng, int n) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::MatrixXd M(n, n);
  Eigen::VectorXd q(n);
  for (int i = 0; i < n; ++i) {
    q[i] = u(rng);
    for (int j = 0; j < n; ++j) M(i, j) = u(rng);
  }
  return {M, q};
}

TEST(LcpEnumeration, AgreesWithBruteForceAndSolvesWhereLemkeFails) {
  std::mt19937_64 rng(2026);
  Lemke<8> lemke;
  Lemke<8>::Result lr;
  LcpEnumeration exact(8);
  int solvable = 0, unsolvable = 0, lemke_missed = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const int n = 2 + trial % 4;
    const auto [M, q] = random_lcp(rng, n);
    const bool truth = brute_force_solvable(M, q);
    const auto& r = exact.solve(M, q, 0);
    if (truth) {
      ++solvable;
      ASSERT_EQ(r.status, Status::solved) << "trial " << trial;
      EXPECT_LE(r.residual, 1e-9);
      EXPECT_GE(r.x.minCoeff(), -1e-9);
      EXPECT_GE(r.w.minCoeff(), -1e-9);
      if (lemke.solve(M, q, lr) != Status::solved) ++lemke_missed;
    } else {
      ++unsolvable;
      EXPECT_EQ(r.status, Status::infeasible) << "trial " << trial;
    }
  }
  // The sample must exercise all three cases.
  EXPECT_GT(solvable, 100);
  EXPECT_GT(unsolvable, 10);
  EXPECT_GT(lemke_missed, 5);
}

// The verdict does not depend on the data's scale: the LPs' tolerances have an absolute
// floor, and a q of 1e-9 (a step of nanometres) used to end in numerical_failure on about
// every other problem. Scales that are not powers of two included.
TEST(LcpEnumeration, SameVerdictAtAnyScaleOfTheData) {
  std::mt19937_64 rng(31);
  LcpEnumeration exact(8);
  int solvable = 0, unsolvable = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const int n = 2 + trial % 4;
    const auto [M, q] = random_lcp(rng, n);
    const bool truth = brute_force_solvable(M, q);
    (truth ? solvable : unsolvable)++;
    for (const double sm : {1e-3, 1.0, 3e3})
      for (const double sq : {3e-10, 1e-6, 1.0, 7e4}) {
        const auto& r = exact.solve(sm * M, sq * q, 0);
        if (truth) {
          ASSERT_EQ(r.status, Status::solved) << "trial " << trial << ", M x " << sm << ", q x " << sq;
          EXPECT_LE(r.residual, 1e-9);
        } else {
          EXPECT_EQ(r.status, Status::infeasible) << "trial " << trial << ", M x " << sm << ", q x " << sq;
        }
      }
  }
  EXPECT_GT(solvable, 30);
  EXPECT_GT(unsolvable, 5);
}

TEST(LcpEnumeration, ProvesTheOneDimensionalInfeasibleLcp) {
  LcpEnumeration exact(4);
  const Eigen::MatrixXd M = Eigen::MatrixXd::Constant(1, 1, -1.0);
  const Eigen::VectorXd q = Eigen::VectorXd::Constant(1, -1.0);  // w = -z - 1 < 0
  const auto& r = exact.solve(M, q, 0);
  EXPECT_EQ(r.status, Status::infeasible);
  EXPECT_EQ(r.stats.nodes, 1);  // the root LP is already empty
}

TEST(LcpEnumeration, FreeVariablesWithZeroFreeBlock) {
  // Trinkle's shape: u free, its row an equality with a zero diagonal block.
  //   0 = z1 - z2 - 1 (u row);  w1 = u + 1 >= 0;  w2 = -u + 1 >= 0.
  Eigen::MatrixXd M(3, 3);
  M << 0, 1, -1, 1, 0, 0, -1, 0, 0;
  const Eigen::Vector3d q(-1, 1, 1);
  LcpEnumeration exact(4);
  const auto& r = exact.solve(M, q, 1);
  ASSERT_EQ(r.status, Status::solved);
  EXPECT_NEAR(r.w[0], 0.0, 1e-12);
  EXPECT_NEAR(r.x[1] - r.x[2], 1.0, 1e-12);
  EXPECT_NEAR(r.x[1] * r.w[1], 0.0, 1e-12);
  EXPECT_NEAR(r.x[2] * r.w[2], 0.0, 1e-12);
}

TEST(LcpEnumeration, SameAnswerOnAnyThreadCount) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int n = 6;
  Eigen::MatrixXd M(n, n);
  Eigen::VectorXd q(n);
  for (int i = 0; i < n; ++i) {
    q[i] = u(rng);
    for (int j = 0; j < n; ++j) M(i, j) = u(rng);
  }
  Eigen::VectorXd reference;
  Status status0 = Status::not_run;
  for (const int threads : {1, 2, 8}) {
    tbb::global_control g(tbb::global_control::max_allowed_parallelism, threads);
    LcpEnumeration exact(8);
    const auto& r = exact.solve(M, q, 0);
    if (threads == 1) {
      status0 = r.status;
      reference = r.x;
    } else {
      EXPECT_EQ(r.status, status0);
      EXPECT_EQ(r.x, reference);
    }
  }
}

TEST(LcpEnumeration, BadInputAndNodeLimit) {
  LcpEnumeration exact(2);
  EXPECT_EQ(exact.solve(Eigen::MatrixXd::Identity(3, 3), Eigen::VectorXd::Ones(3), 0).status, Status::bad_input);
  EXPECT_EQ(exact.solve(Eigen::MatrixXd::Identity(2, 2), Eigen::VectorXd::Ones(2), 3).status, Status::bad_input);
  LcpEnumerationOptions o;
  o.max_nodes = 1;
  LcpEnumeration tiny(8, o);
  // -I with q = -1: every pair needs branching; one node cannot settle it.
  const auto& r = tiny.solve(-Eigen::MatrixXd::Identity(4, 4) + Eigen::MatrixXd::Constant(4, 4, 0.1), -Eigen::VectorXd::Ones(4), 0);
  EXPECT_TRUE(r.status == Status::iteration_limit || r.status == Status::infeasible) << to_string(r.status);
}


TEST(LcpEnumeration, CertificateIsOptionalAndLeavesTheSearchAsItIs) {
  // An infeasible LCP whose proof needs 31 nodes (16 leaves), small integer data.
  Eigen::MatrixXd M(8, 8);
  M << 2, 3, -1, -1, -1, -2, -1, -1, -3, 2, 2, -1, 3, -2, 0, 2, 3, 1, 0, -2, 1, 2, 3, -1, 2, 0, -1, -1, -1, -3, 1, 3,
      3, 3, -3, -2, 2, -2, -3, 2, -1, 3, -3, -1, 3, 3, -3, 2, 3, -2, 1, 3, -3, -3, -2, 2, -2, 1, -1, 2, -3, -2, -3, 1;
  Eigen::VectorXd q(8);
  q << 0, 3, 3, -3, 3, 0, 2, 1;
  LcpEnumeration plain(8);
  const auto r0 = plain.solve(M, q, 0);
  ASSERT_EQ(r0.status, Status::infeasible);
  EXPECT_TRUE(r0.certificate.empty());
  LcpEnumerationOptions o;
  o.record_certificate = true;
  for (const int threads : {1, 2}) {
    tbb::global_control g(tbb::global_control::max_allowed_parallelism, threads);
    LcpEnumeration recorded(8, o);
    const auto& r = recorded.solve(M, q, 0);
    ASSERT_EQ(r.status, Status::infeasible);
    EXPECT_EQ(r.stats.nodes, r0.stats.nodes);
    EXPECT_EQ(r.stats.nodes, 31);
    ASSERT_EQ(static_cast<long>(r.certificate.size()), r.stats.infeasible);
    EXPECT_EQ(r.certificate.size(), 16u);
    for (const LcpLeafCertificate& leaf : r.certificate) {
      EXPECT_TRUE(leaf.exact);
      EXPECT_TRUE(lcp_leaf_certificate_exact(M, q, 0, leaf));
    }
    // Tampered: a negated vector is refused.
    LcpLeafCertificate bad = r.certificate.back();
    bad.y = -bad.y;
    EXPECT_FALSE(lcp_leaf_certificate_exact(M, q, 0, bad));
  }
  // A solvable problem keeps no certificate.
  LcpEnumeration recorded(8, o);
  EXPECT_EQ(recorded.solve(Eigen::MatrixXd::Identity(3, 3), -Eigen::VectorXd::Ones(3), 0).status, Status::solved);
  EXPECT_TRUE(recorded.solve(Eigen::MatrixXd::Identity(3, 3), -Eigen::VectorXd::Ones(3), 0).certificate.empty());
}

TEST(LcpEnumeration, ExactDotSignSeesWhatRoundingHides) {
  // (1e16 + 1) - 1e16 rounds to 0 in double; exactly it is 1.
  EXPECT_EQ(exact_dot_sign(Eigen::Vector3d(1e16, 1, -1e16), Eigen::Vector3d(1, 1, 1)), 1);
  EXPECT_EQ(exact_dot_sign(Eigen::Vector3d(1e16, -1, -1e16), Eigen::Vector3d(1, 1, 1)), -1);
  EXPECT_EQ(exact_dot_sign(Eigen::Vector3d(0.5, 0.25, -0.75), Eigen::Vector3d(1, 1, 1)), 0);
  // The double nearest 0.1, times 3, exceeds the double nearest 0.3; x - x is 0.
  EXPECT_EQ(exact_dot_sign(Eigen::Vector2d(0.1, -0.3), Eigen::Vector2d(3, 1)), 1);
  EXPECT_EQ(exact_dot_sign(Eigen::Vector2d(0.1, -1), Eigen::Vector2d(1, 0.1)), 0);
  // Products whose rounding error is not representable: unknown.
  EXPECT_EQ(exact_dot_sign(Eigen::Vector2d(1e300, 1), Eigen::Vector2d(1e300, 1)), 2);
  EXPECT_EQ(exact_dot_sign(Eigen::Vector2d(1e-300, 1), Eigen::Vector2d(1e-300, 0)), 2);
  // A sum that overflows: unknown, whatever the signs.
  EXPECT_EQ(exact_dot_sign(Eigen::Vector3d(1.7e308, 1.7e308, -1), Eigen::Vector3d(1, 1, 1)), 2);
}

TEST(LcpEnumeration, CertificatesOfGeneralDataAreExactToo) {
  // Random data in (-1, 1): the LP's vector is exact only to rounding; the widest-margin
  // vector keeps each inequality clear of it.
  std::mt19937_64 rng(91);
  LcpEnumerationOptions o;
  o.record_certificate = true;
  LcpEnumeration exact(8, o);
  int proved = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const auto [M, q] = random_lcp(rng, 3 + trial % 4);
    const auto& r = exact.solve(M, q, 0);
    if (r.status != Status::infeasible) continue;
    ++proved;
    for (const LcpLeafCertificate& leaf : r.certificate) EXPECT_TRUE(leaf.exact && lcp_leaf_certificate_exact(M, q, 0, leaf)) << trial;
  }
  EXPECT_GT(proved, 10);
}

}  // namespace
}  // namespace qs::lcp_enumeration_test

// The UCP's verdicts do not depend on the units of its loads or of its commanded velocities,
// and an `infeasible` answer rests on certificates checked apart from the LP kernel
// (Pang, Trinkle & Lo 1996; docs/ucp.md, "Scale" and "Certificates").
//
// X and Y are sections of cones: multiplying the loads (d, or g_obj, g_man and tau) by s
// maps Y's points y -> s y, and multiplying the commanded joint velocities by s maps X's
// x -> s x. Every method poses its LPs on the right-hand sides scaled to unit size by a power
// of two, so for s a power of two the LPs are the same bit for bit: the same verdict from
// every method, and the same answer times s exactly. Before, data were scaled only outside
// 2^-20 ... 2^20, and at exactly 2^-20 times the loads and velocities of some problems the
// exact method answered numerical_failure where it solved the problem itself.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "quasistep/core/ucp_problem_file.hpp"
#include "quasistep/kernels/ucp.hpp"
#include "tests/support/random_problems.hpp"

namespace qs::ucp_invariance_test {
namespace {

/// The same problem with its loads times sy and its commanded joint velocities times sx.
UcpData scaled(UcpData d, double sy, double sx) {
  if (d.d) *d.d *= sy;
  d.g_obj *= sy;
  d.g_man *= sy;
  d.tau *= sy;
  d.theta_dot *= sx;
  return d;
}

/// v == 2^k w entry by entry, bit for bit.
bool scaled_bitwise(const Eigen::VectorXd& v, const Eigen::VectorXd& w, int k) {
  if (v.size() != w.size()) return false;
  for (Eigen::Index i = 0; i < v.size(); ++i)
    if (!(v[i] == std::ldexp(w[i], k))) return false;
  return true;
}

struct Answers {
  Status exact, bilinear, all;
  Eigen::VectorXd x, y;       // the exact method's pair when solved
  Eigen::VectorXd bx, by;     // the bilinear algorithm's
  size_t modes = 0;           // solutions listed by the enumeration
};

Answers solve_all(const UcpData& d) {
  Ucp u;
  EXPECT_EQ(u.build(d), Status::solved) << u.error_message();
  Answers a;
  UcpExactOptions eo;
  eo.parallel = false;
  UcpExact ex(u, eo);
  a.exact = ex.solve().status;
  a.x = ex.result().x;
  a.y = ex.result().y;
  UcpBilinear b(u);
  a.bilinear = b.solve().status;
  a.bx = b.result().x;
  a.by = b.result().y;
  const UcpEnumerationResult e = ucp_enumerate_modes(u);
  a.all = e.status;
  a.modes = e.solutions.size();
  // Independent of the verdicts' agreement across scales: the exact method proves no
  // solution exactly when the enumeration lists none.
  if (a.exact == Status::infeasible) {
    EXPECT_EQ(a.modes, 0u);
  }
  if (a.exact == Status::solved && e.status == Status::solved) {
    EXPECT_GT(a.modes, 0u);
  }
  return a;
}

TEST(UcpInvariance, LoadsAndVelocitiesScaledByPowersOfTwoGiveTheSameVerdictsAndScaledAnswers) {
  int problems = 0, infeasible = 0, solved = 0;
  for (int nc : {2, 3})
    for (int na : {0, 1})
      for (int table1 = 0; table1 < 2; ++table1)
        for (std::uint64_t seed = 0; seed < 4; ++seed) {
          const UcpData base = table1 ? ucp_table1_problem({nc, 0.8, na, UcpFingerJoints::world_xy}, seed).data
                                      : ucp_random_problem({nc, 0.8, na}, seed);
          const Answers a = solve_all(base);
          ++problems;
          infeasible += a.exact == Status::infeasible;
          solved += a.exact == Status::solved;
          for (int k : {-40, -20, -1, 1, 20, 40})
            for (int side = 0; side < 3; ++side) {  // 0: both, 1: loads only, 2: velocities only
              const int ky = side != 2 ? k : 0, kx = side != 1 ? k : 0;
              const Answers s = solve_all(scaled(base, std::ldexp(1.0, ky), std::ldexp(1.0, kx)));
              const std::string at = "nc " + std::to_string(nc) + " abar " + std::to_string(na) + " table1 " +
                                     std::to_string(table1) + " seed " + std::to_string(seed) + " k " +
                                     std::to_string(k) + " side " + std::to_string(side);
              EXPECT_EQ(s.exact, a.exact) << at;
              EXPECT_EQ(s.bilinear, a.bilinear) << at;
              EXPECT_EQ(s.all, a.all) << at;
              EXPECT_EQ(s.modes, a.modes) << at;
              if (s.exact == Status::solved && a.exact == Status::solved) {
                EXPECT_TRUE(scaled_bitwise(s.x, a.x, kx) && scaled_bitwise(s.y, a.y, ky)) << at;
              }
              if (s.bilinear == Status::solved && a.bilinear == Status::solved) {
                EXPECT_TRUE(scaled_bitwise(s.bx, a.bx, kx) && scaled_bitwise(s.by, a.by, ky)) << at;
              }
            }
        }
  // Both verdicts occur among these problems.
  EXPECT_GT(infeasible, 0);
  EXPECT_GT(solved, 0);
  EXPECT_EQ(problems, 32);
}

TEST(UcpInvariance, PaperDataSetsKeepTheirVerdictsAtEveryPowerOfTwo) {
  for (int k = 1; k <= 4; ++k) {
    const UcpData base = load_ucp_problem(std::string(QUASISTEP_SOURCE_DIR) + "/tests/data/ucp/data_set_" +
                                          std::to_string(k) + ".json");
    const Answers a = solve_all(base);
    for (int e : {-40, -30, -20, -10, 10, 20, 30, 40}) {
      const Answers s = solve_all(scaled(base, std::ldexp(1.0, e), std::ldexp(1.0, e)));
      EXPECT_EQ(s.exact, a.exact) << "data set " << k << " 2^" << e;
      EXPECT_EQ(s.bilinear, a.bilinear) << "data set " << k << " 2^" << e;
      EXPECT_EQ(s.modes, a.modes) << "data set " << k << " 2^" << e;
    }
  }
}

// ---- certificates -----------------------------------------------------------------------

TEST(UcpCertificate, AFarkasVectorProvesASetEmptyOnlyWhenItsCheckHolds) {
  const double inf = std::numeric_limits<double>::infinity();
  // { z >= 0 : z1 + z2 = -1 }: empty; f = -1 gives g = (-1, -1) <= 0 and f'b = 1 > 0.
  Eigen::MatrixXd A(1, 2);
  A << 1, 1;
  Eigen::VectorXd b(1), f(1), upper(2);
  b << -1;
  upper << inf, inf;
  f << -1;
  EXPECT_TRUE(farkas_certifies_empty(A, b, upper, f));
  f << 1;  // the wrong sign: f'b < 0
  EXPECT_FALSE(farkas_certifies_empty(A, b, upper, f));
  f << 0;
  EXPECT_FALSE(farkas_certifies_empty(A, b, upper, f));
  f << std::nan("");
  EXPECT_FALSE(farkas_certifies_empty(A, b, upper, f));
  // { z >= 0 : -z1 + eps z2 = 1 } is not empty (z2 = 1 / eps): f = 1 has g = (-1, eps) > 0
  // in its second column, and measured in that column's own units (eps z2) the point is of
  // size 1: no proof, however small eps (the units of a column change nothing).
  for (double eps : {1e-12, 1e-8, 1.0, 1e8}) {
    A << -1, eps;
    b << 1;
    f << 1;
    EXPECT_FALSE(farkas_certifies_empty(A, b, upper, f)) << eps;
  }
  // Fixing z2 = 0 takes its column out: empty outright.
  upper << inf, 0;
  EXPECT_TRUE(farkas_certifies_empty(A, b, upper, f));
  // ... and a fixed column counts for nothing in the scale either: { z2 = 1e10 } with z1
  // fixed is not empty.
  A << 1, 1e-10;
  upper << 0, inf;
  EXPECT_FALSE(farkas_certifies_empty(A, b, upper, f));
  upper << inf, inf;
  // A certificate whose g_j is slightly positive: { z >= 0 : z = 1, -z = 0 } is empty, and
  // f = (1, 1 - 2^-53) has g = 2^-53 > 0 with f'b = 1, so it rules out every z below 2^53
  // (its column's largest entry is 1), beyond 2^30 times max|b| = 1: accepted.
  Eigen::MatrixXd A2(2, 1);
  A2 << 1, -1;
  Eigen::VectorXd b2(2), f2(2), up1(1);
  b2 << 1, 0;
  up1 << inf;
  f2 << 1, 1 - 0x1p-53;
  EXPECT_TRUE(farkas_certifies_empty(A2, b2, up1, f2));
  // The same in other units of the variable: the same verdict.
  EXPECT_TRUE(farkas_certifies_empty(A2 * 0x1p-30, b2, up1, f2));
  f2 << 1, 1 - 0x1p-20;  // g = 2^-20: only z below 2^20 ruled out, not a proof
  EXPECT_FALSE(farkas_certifies_empty(A2, b2, up1, f2));
  EXPECT_FALSE(farkas_certifies_empty(A2 * 0x1p30, b2, up1, f2));
  // Sizes that do not fit are no proof.
  EXPECT_FALSE(farkas_certifies_empty(A2, b2, upper, f2));
}

TEST(UcpCertificate, AJammedGraspIsProvedByCheckedCertificates) {
  // Pang, Trinkle & Lo 1996, data set 4: friction (0.7, 0.9, 0.9) jams the grasp.
  const UcpData d = load_ucp_problem(std::string(QUASISTEP_SOURCE_DIR) + "/tests/data/ucp/data_set_4.json");
  Ucp u;
  ASSERT_EQ(u.build(d), Status::solved);
  UcpExact ex(u);
  const UcpExactResult& r = ex.solve();
  ASSERT_EQ(r.status, Status::infeasible);
  EXPECT_GT(r.stats.infeasible, 0);  // nodes closed, each by a certificate the check accepted
  EXPECT_EQ(ucp_enumerate_modes(u).solutions.size(), 0u);
}

}  // namespace
}  // namespace qs::ucp_invariance_test

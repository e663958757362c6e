// Projected Gauss-Seidel / SOR (quasistep/kernels/pgs.hpp) on random semidefinite LCPs of the shape of
// the Anitescu slides' (Pang & Tedrake) dual (M = J Q^-1 J', q = phi/h - J Q^-1 c): answers checked against Lemke's w
// (unique for a PSD LCP, whereas z need not be) and against the data; the stopping rule,
// warm start, limits and bad input; and the batch promise: every lane of a Lane group equals
// the T = double solve of its world bitwise, whatever its neighbours.
#include "quasistep/kernels/pgs.hpp"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "quasistep/kernels/lane.hpp"
#include "quasistep/kernels/lemke.hpp"
#include "tests/support/bitwise.hpp"

namespace qs::pgs_test {
namespace {

struct Problem {
  int n = 0;
  std::vector<double> M;  // row-major n x n
  std::vector<double> q;
};

Eigen::MatrixXd matrix_of(const Problem& p) {
  Eigen::MatrixXd M(p.n, p.n);
  for (int i = 0; i < p.n; ++i)
    for (int j = 0; j < p.n; ++j) M(i, j) = p.M[i * p.n + j];
  return M;
}
Eigen::VectorXd vector_of(const std::vector<double>& v, int n) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), n);
}

/// M = J Q^-1 J' and q = phi/h - J Q^-1 c (the Anitescu slides' (Pang & Tedrake) dual) with J m x k, so M is singular
/// when m > k. `cond` spreads Q's eigenvalues over [1, cond]. Contacts touching (phi = 0)
/// about half the time.
Problem random_spsd_lcp(std::mt19937_64& rng, int k, int m, double cond = 10.0, double h = 0.1) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const Eigen::MatrixXd A = Eigen::MatrixXd::NullaryExpr(k, k, [&] { return normal(rng); });
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(A);
  const Eigen::MatrixXd U = qr.householderQ();
  Eigen::VectorXd eig(k);
  for (int i = 0; i < k; ++i) eig[i] = std::pow(cond, k == 1 ? 0.0 : static_cast<double>(i) / (k - 1));
  const Eigen::MatrixXd Q = U * eig.asDiagonal() * U.transpose();
  const Eigen::MatrixXd J = Eigen::MatrixXd::NullaryExpr(m, k, [&] { return normal(rng); });
  Eigen::VectorXd phi(m), c(k);
  for (int i = 0; i < m; ++i) phi[i] = unit(rng) < 0.5 ? 0.0 : 0.05 * unit(rng);
  for (int i = 0; i < k; ++i) c[i] = normal(rng);
  const Eigen::LLT<Eigen::MatrixXd> llt(Q);
  const Eigen::MatrixXd QinvJt = llt.solve(J.transpose());
  const Eigen::MatrixXd M = J * QinvJt;
  const Eigen::VectorXd q = phi / h - J * llt.solve(c);
  Problem p;
  p.n = m;
  p.M.resize(m * m);
  p.q.resize(m);
  for (int i = 0; i < m; ++i) {
    p.q[i] = q[i];
    for (int j = 0; j < m; ++j) p.M[i * m + j] = M(i, j);
  }
  return p;
}

/// The header's stopping quantity, recomputed here with Eigen.
double scaled_residual(const Problem& p, const std::vector<double>& z) {
  const Eigen::MatrixXd M = matrix_of(p);
  const Eigen::VectorXd q = vector_of(p.q, p.n), zz = vector_of(z, p.n);
  const Eigen::VectorXd w = M * zz + q;
  double r = 0, s = 0;
  for (int i = 0; i < p.n; ++i) {
    if (!(M(i, i) > 0)) continue;
    const double d = std::sqrt(M(i, i));
    r = std::max(r, std::abs(std::min(d * zz[i], w[i] / d)));
    s = std::max(s, std::abs(q[i]) / d);
  }
  return r / s;
}

struct DoubleSolve {
  std::vector<double> z;
  PgsResult<double> result;
};

DoubleSolve solve_double(const Problem& p, const PgsSettings& s, std::vector<double> z0 = {}, int capacity = 64) {
  Pgs<double> pgs(capacity);
  DoubleSolve out;
  out.z = z0.empty() ? std::vector<double>(p.n, 0.0) : z0;
  pgs.solve(p.n, p.M, p.q, out.z, s, out.result);
  return out;
}

using test::same_bits;

// ---------------------------------------------------------------------------------------

TEST(Pgs, AgreesWithLemkeOnRandomSemidefiniteLcps) {
  std::mt19937_64 rng(2024);
  std::uniform_int_distribution<int> kdist(2, 8);
  auto lemke = std::make_unique<Lemke<64>>();
  Lemke<64>::Result lr;
  int singular = 0;
  for (int t = 0; t < 150; ++t) {
    const int k = kdist(rng);
    const int m = std::uniform_int_distribution<int>(std::max(1, k / 2), 2 * k)(rng);
    singular += m > k;
    const Problem p = random_spsd_lcp(rng, k, m, 10.0);
    const Eigen::MatrixXd M = matrix_of(p);
    const Eigen::VectorXd q = vector_of(p.q, p.n);
    ASSERT_EQ(lemke->solve(M, q, lr), Status::solved) << t;
    for (double omega : {1.0, 1.3}) {
      PgsSettings s;
      s.omega = omega;
      s.tolerance = 1e-10;
      s.max_iterations = 1000000;  // one instance (nearly parallel rows, z ~ 80) takes 78k-142k sweeps
      const DoubleSolve d = solve_double(p, s);
      ASSERT_EQ(d.result.status[0], Status::solved) << t << " omega " << omega;
      const Eigen::VectorXd z = vector_of(d.z, p.n);
      const Eigen::VectorXd w = M * z + q;
      const double scale = 1 + q.cwiseAbs().maxCoeff();
      EXPECT_GE(z.minCoeff(), 0.0);
      EXPECT_LE(d.result.residual[0], 1e-10);
      EXPECT_NEAR(scaled_residual(p, d.z), d.result.residual[0], 1e-14);
      EXPECT_LE((w - lr.w).cwiseAbs().maxCoeff(), 1e-7 * scale) << t << " omega " << omega;
      EXPECT_LE(std::abs(z.dot(w)), 1e-8 * scale * (1 + z.cwiseAbs().maxCoeff())) << t;
    }
  }
  EXPECT_GT(singular, 50);
}

/// the Anitescu slides' (Pang & Tedrake) dual with friction row pairs: for contact i, rows J_n,i + mu J_t,i and
/// J_n,i - mu J_t,i (nearly parallel when mu is small), M = A Q^-1 A', q = phi/h - A Q^-1 c.
Problem anitescu_pairs_lcp(std::mt19937_64& rng, int k, int contacts, double mu) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Eigen::MatrixXd Q = Eigen::MatrixXd::Identity(k, k);
  for (int i = 0; i < k; ++i) Q(i, i) = 1.0 + 9.0 * unit(rng);
  Eigen::MatrixXd A(2 * contacts, k);
  Eigen::VectorXd phi(2 * contacts), c(k);
  for (int i = 0; i < contacts; ++i) {
    const Eigen::VectorXd jn = Eigen::VectorXd::NullaryExpr(k, [&] { return normal(rng); });
    const Eigen::VectorXd jt = Eigen::VectorXd::NullaryExpr(k, [&] { return normal(rng); });
    A.row(2 * i) = (jn + mu * jt).transpose();
    A.row(2 * i + 1) = (jn - mu * jt).transpose();
    phi[2 * i] = phi[2 * i + 1] = unit(rng) < 0.5 ? 0.0 : 0.02 * unit(rng);
  }
  for (int i = 0; i < k; ++i) c[i] = normal(rng);
  const Eigen::MatrixXd Qinv = Q.inverse();
  const Eigen::MatrixXd M = A * Qinv * A.transpose();
  const Eigen::VectorXd q = phi / 0.01 - A * Qinv * c;
  Problem p;
  p.n = 2 * contacts;
  for (int i = 0; i < p.n; ++i) {
    p.q.push_back(q[i]);
    for (int j = 0; j < p.n; ++j) p.M.push_back(M(i, j));
  }
  return p;
}

TEST(Pgs, PairBlocksAgreeWithLemkeAndSettleOneContactAtTheFirstCheck) {
  std::mt19937_64 rng(99);
  auto lemke = std::make_unique<Lemke<64>>();
  Lemke<64>::Result lr;
  long plain_sweeps = 0, block_sweeps = 0;  // over the one-contact problems
  for (int t = 0; t < 60; ++t) {
    const double mu = t % 3 == 0 ? 0.02 : t % 3 == 1 ? 0.1 : 0.5;
    const int k = 3 + t % 4, contacts = 1 + t % 3;
    const Problem p = anitescu_pairs_lcp(rng, k, contacts, mu);
    const Eigen::MatrixXd M = matrix_of(p);
    const Eigen::VectorXd q = vector_of(p.q, p.n);
    ASSERT_EQ(lemke->solve(M, q, lr), Status::solved) << t;
    for (bool blocks : {false, true}) {
      PgsSettings s;
      s.tolerance = 1e-10;
      s.max_iterations = 1000000;
      s.pair_blocks = blocks;
      const DoubleSolve d = solve_double(p, s);
      ASSERT_EQ(d.result.status[0], Status::solved) << t << " blocks " << blocks;
      if (contacts == 1) {
        (blocks ? block_sweeps : plain_sweeps) += d.result.iterations[0];
        // One contact is one block, solved exactly: settled at the first check.
        if (blocks) {
          EXPECT_LE(d.result.iterations[0], s.check_every) << t;
        }
      }
      const Eigen::VectorXd z = vector_of(d.z, p.n);
      const Eigen::VectorXd w = M * z + q;
      const double scale = 1 + q.cwiseAbs().maxCoeff();
      EXPECT_GE(z.minCoeff(), 0.0);
      EXPECT_NEAR(scaled_residual(p, d.z), d.result.residual[0], 1e-14);
      EXPECT_LE((w - lr.w).cwiseAbs().maxCoeff(), 1e-6 * scale) << t << " blocks " << blocks;
    }
  }
  // (Random one-contact problems are mostly sliding or separating, where plain Gauss-Seidel
  // is quick too; the gain is on sticking contacts: the grasp's mean sweeps fall from 17 to
  // 6.7, docs/anitescu.md.)
  EXPECT_LE(block_sweeps, plain_sweeps);
}

TEST(Pgs, PairBlocksNeedOmegaOne) {
  std::mt19937_64 rng(5);
  const Problem p = anitescu_pairs_lcp(rng, 3, 2, 0.3);
  PgsSettings s;
  s.pair_blocks = true;
  s.omega = 1.2;
  EXPECT_EQ(solve_double(p, s).result.status[0], Status::bad_input);
  s.omega = 1.0;
  EXPECT_EQ(solve_double(p, s).result.status[0], Status::solved);
}

TEST(Pgs, ConvergesForOmegaOneAndOnePointThree) {
  std::mt19937_64 rng(11);
  const Problem p = random_spsd_lcp(rng, 10, 20, 100.0);  // rank 10 of 20
  for (double omega : {1.0, 1.3}) {
    PgsSettings s;
    s.omega = omega;
    s.max_iterations = 100000;
    const DoubleSolve d = solve_double(p, s);
    EXPECT_EQ(d.result.status[0], Status::solved) << omega;
    EXPECT_LE(d.result.residual[0], s.tolerance);
    EXPECT_EQ(d.result.iterations[0] % s.check_every, 0);
    EXPECT_GT(d.result.iterations[0], 0);
  }
}

/// Two sweeps written out plainly (left-to-right sum), to check the point kept at the limit.
std::vector<double> reference_sweeps(const Problem& p, std::vector<double> z, int sweeps, double omega) {
  for (int k = 0; k < sweeps; ++k)
    for (int i = 0; i < p.n; ++i) {
      double g = p.q[i];
      for (int j = 0; j < p.n; ++j) g += p.M[i * p.n + j] * z[j];
      z[i] = std::max(0.0, z[i] - omega * g / p.M[i * p.n + i]);
    }
  return z;
}

TEST(Pgs, IterationLimitKeepsTheLastIterate) {
  std::mt19937_64 rng(5);
  const Problem p = random_spsd_lcp(rng, 8, 16, 1e4);
  PgsSettings s;
  s.omega = 1.3;
  s.max_iterations = 2;
  const DoubleSolve d = solve_double(p, s);
  EXPECT_EQ(d.result.status[0], Status::iteration_limit);
  EXPECT_EQ(d.result.iterations[0], 2);
  const std::vector<double> ref = reference_sweeps(p, std::vector<double>(p.n, 0.0), 2, 1.3);
  double zmax = 0;
  for (double v : ref) zmax = std::max(zmax, std::abs(v));
  for (int i = 0; i < p.n; ++i) EXPECT_NEAR(d.z[i], ref[i], 1e-12 * zmax) << i;
  EXPECT_GT(d.result.residual[0], s.tolerance);
  EXPECT_NEAR(d.result.residual[0], scaled_residual(p, d.z), 1e-12);
  // max_iterations = 0 only evaluates the warm start.
  s.max_iterations = 0;
  const DoubleSolve e = solve_double(p, s, d.z);
  EXPECT_EQ(e.result.status[0], Status::iteration_limit);
  EXPECT_EQ(e.result.iterations[0], 0);
  EXPECT_EQ(e.z, d.z);
  EXPECT_EQ(e.result.residual[0], d.result.residual[0]);
}

TEST(Pgs, WarmStartFromTheSolutionConvergesAtTheFirstCheck) {
  std::mt19937_64 rng(9);
  const Problem p = random_spsd_lcp(rng, 8, 14, 100.0);
  PgsSettings s;
  s.max_iterations = 100000;
  const DoubleSolve cold = solve_double(p, s);
  ASSERT_EQ(cold.result.status[0], Status::solved);
  EXPECT_GT(cold.result.iterations[0], 4 * s.check_every);
  const DoubleSolve warm = solve_double(p, s, cold.z);
  EXPECT_EQ(warm.result.status[0], Status::solved);
  EXPECT_EQ(warm.result.iterations[0], s.check_every);
  EXPECT_LE(warm.result.residual[0], cold.result.residual[0]);
}

TEST(Pgs, ResidualIsInvariantUnderScalingOfTheProblem) {
  // Jacobi-scaled and relative: (a M, a q), (M, b q) and (D M D, D q) give the same residual
  // (up to roundoff) at the corresponding iterates (PGS itself is invariant under them).
  std::mt19937_64 rng(3);
  const Problem p = random_spsd_lcp(rng, 6, 10, 100.0);
  PgsSettings s;
  s.max_iterations = 7;
  const double r0 = solve_double(p, s).result.residual[0];
  std::vector<double> D(p.n);
  for (int i = 0; i < p.n; ++i) D[i] = std::pow(10.0, (i % 5) - 2.0);
  Problem a = p, b = p, c = p;
  for (int i = 0; i < p.n; ++i) {
    a.q[i] *= 1e-6;
    b.q[i] *= 1e4;
    c.q[i] *= D[i];
    for (int j = 0; j < p.n; ++j) {
      a.M[i * p.n + j] *= 1e-6;
      c.M[i * p.n + j] *= D[i] * D[j];
    }
  }
  for (const Problem* x : {&a, &b, &c}) {
    const DoubleSolve d = solve_double(*x, s);
    EXPECT_EQ(d.result.status[0], Status::iteration_limit);
    EXPECT_NEAR(d.result.residual[0], r0, 1e-9 * r0);
  }
}

TEST(Pgs, ZeroRowsAndTrivialProblems) {
  // A 3x3 problem whose row/column 1 is zero (an inactive slot): q_1 >= 0 gives z_1 = 0.
  Problem p;
  p.n = 3;
  p.M = {2, 0, 1, 0, 0, 0, 1, 0, 2};
  p.q = {-1, 0.5, -1};
  PgsSettings s;
  s.max_iterations = 10000;
  const DoubleSolve d = solve_double(p, s, {1, 7, 1});
  EXPECT_EQ(d.result.status[0], Status::solved);
  EXPECT_EQ(d.z[1], 0.0);
  EXPECT_NEAR(d.z[0], 1.0 / 3, 1e-8);
  EXPECT_NEAR(d.z[2], 1.0 / 3, 1e-8);
  // q_1 < 0 on the zero row: w_1 = q_1 < 0 for every z, infeasible; z untouched.
  p.q[1] = -0.5;
  const DoubleSolve e = solve_double(p, s, {1, 7, 1});
  EXPECT_EQ(e.result.status[0], Status::infeasible);
  EXPECT_EQ(e.result.iterations[0], 0);
  EXPECT_EQ(e.result.residual[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(e.z, (std::vector<double>{1, 7, 1}));
  // q = 0 where M_ii > 0: z = 0 solves it, without a sweep. The zero problem (lane padding) too.
  p.q = {0, 3, 0};
  const DoubleSolve f = solve_double(p, s, {1, 7, 1});
  EXPECT_EQ(f.result.status[0], Status::solved);
  EXPECT_EQ(f.result.iterations[0], 0);
  EXPECT_EQ(f.result.residual[0], 0.0);
  EXPECT_EQ(f.z, (std::vector<double>{0, 0, 0}));
  Problem zero;
  zero.n = 4;
  zero.M.assign(16, 0.0);
  zero.q.assign(4, 0.0);
  EXPECT_EQ(solve_double(zero, s).result.status[0], Status::solved);
  // n = 0.
  Pgs<double> pgs(4);
  PgsResult<double> r;
  EXPECT_TRUE(pgs.solve(0, {}, {}, {}, s, r));
}

TEST(Pgs, BadInput) {
  std::mt19937_64 rng(1);
  const Problem good = random_spsd_lcp(rng, 4, 6);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const PgsSettings s;
  const auto status_of = [](const Problem& p, const PgsSettings& st, std::vector<double> z0 = {}, int capacity = 64) {
    const std::vector<double> z_in = z0.empty() ? std::vector<double>(p.n, 0.0) : z0;
    const DoubleSolve d = solve_double(p, st, z_in, capacity);
    if (d.result.status[0] == Status::bad_input) {
      EXPECT_TRUE(std::isnan(d.result.residual[0]));
      EXPECT_EQ(d.result.iterations[0], 0);
      if (p.n >= 0 && static_cast<int>(z_in.size()) >= p.n) {
        EXPECT_EQ(std::memcmp(d.z.data(), z_in.data(), z_in.size() * sizeof(double)), 0);  // untouched
      }
    }
    return d.result.status[0];
  };
  EXPECT_EQ(status_of(good, s), Status::solved);
  EXPECT_EQ(status_of(good, s, {}, 5), Status::bad_input);  // n > capacity
  {
    Pgs<double> pgs(8);
    PgsResult<double> r;
    std::vector<double> z(6, 0.0);
    pgs.solve(-1, good.M, good.q, z, s, r);
    EXPECT_EQ(r.status[0], Status::bad_input);
    pgs.solve(6, std::span<const double>(good.M.data(), 35), good.q, z, s, r);  // M too short
    EXPECT_EQ(r.status[0], Status::bad_input);
    pgs.solve(6, good.M, good.q, std::span<double>(z.data(), 5), s, r);  // z too short
    EXPECT_EQ(r.status[0], Status::bad_input);
  }
  for (double bad : {nan, inf, -inf}) {
    Problem p = good;
    p.M[7] = bad;
    EXPECT_EQ(status_of(p, s), Status::bad_input);
    p = good;
    p.q[2] = bad;
    EXPECT_EQ(status_of(p, s), Status::bad_input);
    std::vector<double> z0(6, 0.0);
    z0[3] = bad;
    EXPECT_EQ(status_of(good, s, z0), Status::bad_input);
  }
  {
    Problem p = good;
    p.M[2 * 6 + 2] = -1e-3;  // negative diagonal
    EXPECT_EQ(status_of(p, s), Status::bad_input);
    p = good;
    p.M[2 * 6 + 2] = 0;  // zero diagonal, nonzero row: not PSD
    EXPECT_EQ(status_of(p, s), Status::bad_input);
    for (int j = 0; j < 6; ++j) p.M[2 * 6 + j] = 0;  // zero row, column still nonzero
    EXPECT_EQ(status_of(p, s), Status::bad_input);
  }
  for (double omega : {0.0, 2.0, -1.0, nan}) {
    PgsSettings t;
    t.omega = omega;
    EXPECT_EQ(status_of(good, t), Status::bad_input) << omega;
  }
  for (double tol : {-1e-9, nan, inf}) {
    PgsSettings t;
    t.tolerance = tol;
    EXPECT_EQ(status_of(good, t), Status::bad_input) << tol;
  }
  PgsSettings t;
  t.check_every = 0;
  EXPECT_EQ(status_of(good, t), Status::bad_input);
  t = PgsSettings{};
  t.max_iterations = -1;
  EXPECT_EQ(status_of(good, t), Status::bad_input);
}

// --- Determinism: lanes against T = double ---------------------------------------------

constexpr int kDetN = 12;

/// Worlds of one size and very different difficulty and outcome.
std::vector<std::pair<Problem, std::vector<double>>> determinism_worlds() {
  std::mt19937_64 rng(77);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<std::pair<Problem, std::vector<double>>> out;
  const auto add = [&out](Problem p, std::vector<double> z0 = {}) {
    if (z0.empty()) z0.assign(p.n, 0.0);
    out.emplace_back(std::move(p), std::move(z0));
  };
  add(random_spsd_lcp(rng, 12, 12, 2.0));  // easy, definite
  add(random_spsd_lcp(rng, 8, 12, 30.0));
  add(random_spsd_lcp(rng, 6, 12, 1e3));     // singular, slower
  add(random_spsd_lcp(rng, 3, 12, 1e6));     // hits the limit
  {
    Problem p = random_spsd_lcp(rng, 5, 12, 10.0);
    std::vector<double> z0(kDetN);
    for (double& v : z0) v = unit(rng);  // a warm start
    add(p, z0);
  }
  {
    // 8 active rows and 4 inactive slots (zero rows, q > 0), interleaved.
    const Problem small = random_spsd_lcp(rng, 4, 8, 10.0);
    Problem p;
    p.n = kDetN;
    p.M.assign(kDetN * kDetN, 0.0);
    p.q.assign(kDetN, 0.0);
    const int rows[8] = {0, 1, 3, 4, 6, 7, 9, 10};
    for (int a = 0; a < 8; ++a) {
      p.q[rows[a]] = small.q[a];
      for (int b = 0; b < 8; ++b) p.M[rows[a] * kDetN + rows[b]] = small.M[a * 8 + b];
    }
    p.q[2] = p.q[5] = p.q[8] = p.q[11] = 3.0;
    add(p, std::vector<double>(kDetN, 0.5));
  }
  {
    Problem p;  // the zero problem (lane padding)
    p.n = kDetN;
    p.M.assign(kDetN * kDetN, 0.0);
    p.q.assign(kDetN, 0.0);
    add(p);
  }
  {
    Problem p = random_spsd_lcp(rng, 6, 12, 10.0);
    p.M[5 * kDetN + 6] = std::numeric_limits<double>::quiet_NaN();  // bad input
    add(p);
  }
  {
    Problem p = out[5].first;
    p.q[8] = -1.0;  // a zero row with q < 0: infeasible
    add(p);
  }
  {
    // Not PSD (off-diagonal 10 on a unit diagonal): the iterates grow 100x per sweep until
    // they overflow: numerical_failure.
    Problem p = random_spsd_lcp(rng, 12, 12, 2.0);
    for (double& v : p.M) v = 0.0;
    for (int i = 0; i < kDetN; ++i) {
      p.M[i * kDetN + i] = 1.0;
      p.q[i] = -1.0;
    }
    p.M[0 * kDetN + 1] = p.M[1 * kDetN + 0] = -10.0;
    add(p);
  }
  add(random_spsd_lcp(rng, 10, 12, 1e4));
  return out;
}

PgsSettings determinism_settings() {
  PgsSettings s;
  s.omega = 1.3;
  s.tolerance = 1e-10;
  s.max_iterations = 600;
  s.check_every = 3;
  return s;
}

TEST(PgsDeterminism, WorldsCoverEveryOutcomeAndManyIterationCounts) {
  const auto worlds = determinism_worlds();
  std::set<Status> statuses;
  std::set<int> solved_iterations;
  for (const auto& [p, z0] : worlds) {
    const DoubleSolve d = solve_double(p, determinism_settings(), z0);
    statuses.insert(d.result.status[0]);
    if (d.result.status[0] == Status::solved) solved_iterations.insert(d.result.iterations[0]);
  }
  EXPECT_EQ(statuses, (std::set<Status>{Status::solved, Status::iteration_limit, Status::bad_input,
                                         Status::infeasible, Status::numerical_failure}));
  EXPECT_GE(solved_iterations.size(), 5u);
}

void expect_every_lane_equals_the_double_solve(const PgsSettings& s) {
  const auto worlds = determinism_worlds();
  const int count = static_cast<int>(worlds.size());
  std::vector<DoubleSolve> alone;
  for (const auto& [p, z0] : worlds) alone.push_back(solve_double(p, s, z0, kDetN));

  Pgs<Lane> pgs(kDetN);
  std::vector<Lane> M(kDetN * kDetN), q(kDetN), z(kDetN);
  PgsResult<Lane> r;
  std::mt19937_64 rng(123);
  // Groups: rotations of the world list (each world in every lane, next to different
  // neighbours), a few shuffles, and groups of one world repeated.
  std::vector<std::vector<int>> groups;
  for (int shift = 0; shift < count; ++shift) {
    std::vector<int> g(kLaneWidth);
    for (int l = 0; l < kLaneWidth; ++l) g[l] = (l + shift) % count;
    groups.push_back(g);
  }
  for (int t = 0; t < 8; ++t) {
    std::vector<int> g(kLaneWidth);
    for (int& w : g) w = std::uniform_int_distribution<int>(0, count - 1)(rng);
    groups.push_back(g);
  }
  for (int w = 0; w < count; ++w) groups.push_back(std::vector<int>(kLaneWidth, w));

  for (const auto& g : groups) {
    for (int l = 0; l < kLaneWidth; ++l) {
      const auto& [p, z0] = worlds[g[l]];
      for (int e = 0; e < kDetN * kDetN; ++e) M[e].set(l, p.M[e]);
      for (int i = 0; i < kDetN; ++i) {
        q[i].set(l, p.q[i]);
        z[i].set(l, z0[i]);
      }
    }
    pgs.solve(kDetN, M, q, z, s, r);
    for (int l = 0; l < kLaneWidth; ++l) {
      const DoubleSolve& a = alone[g[l]];
      SCOPED_TRACE(testing::Message() << "world " << g[l] << " lane " << l);
      EXPECT_EQ(r.status[l], a.result.status[0]);
      EXPECT_EQ(r.iterations[l], a.result.iterations[0]);
      EXPECT_TRUE(same_bits(r.residual[l], a.result.residual[0])) << r.residual[l] << " vs " << a.result.residual[0];
      for (int i = 0; i < kDetN; ++i) {
        const double zl = lane_of(z[i], l);
        EXPECT_TRUE(same_bits(zl, a.z[i])) << "z[" << i << "] " << zl << " vs " << a.z[i];
      }
    }
  }
}

TEST(PgsDeterminism, EveryLaneEqualsTheDoubleSolveBitwise) { expect_every_lane_equals_the_double_solve(determinism_settings()); }

TEST(PgsDeterminism, EveryLaneEqualsTheDoubleSolveBitwiseWithPairBlocks) {
  PgsSettings s = determinism_settings();
  s.omega = 1.0;
  s.pair_blocks = true;
  expect_every_lane_equals_the_double_solve(s);
}

}  // namespace
}  // namespace qs::pgs_test

// The dense LP kernel on textbook, degenerate, unbounded, infeasible, warm-started, random
// and UCP-sized problems, plus adjacent extreme points and bad input. Every `solved` answer
// is re-checked here from the data (primal feasibility, dual feasibility, complementary
// slackness, strong duality), independently of the solver's own check.
#include "quasistep/kernels/dense_lp.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

namespace qs::dense_lp_test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// An LP owning its data: minimize c'x, A x = b, lo <= x <= up.
struct Lp {
  Eigen::MatrixXd A;
  Eigen::VectorXd b, c, lo, up;
  DenseLpProblem view() const { return {A, b, c, lo, up}; }
  int m() const { return static_cast<int>(A.rows()); }
  int n() const { return static_cast<int>(A.cols()); }
};

/// minimize c'x  s.t.  row_lo <= G x <= row_up,  lo <= x <= up, through the slack helper.
Lp from_rows(const Eigen::MatrixXd& G, const Eigen::VectorXd& row_lo, const Eigen::VectorXd& row_up,
             const Eigen::VectorXd& c, const Eigen::VectorXd& lo, const Eigen::VectorXd& up) {
  const Eigen::Index m = G.rows(), n = G.cols();
  Lp lp{Eigen::MatrixXd(m, n + m), Eigen::VectorXd(m), Eigen::VectorXd(n + m),
        Eigen::VectorXd(n + m), Eigen::VectorXd(n + m)};
  EXPECT_EQ(row_bounds_to_standard_form(G, row_lo, row_up, c, lo, up, lp.A, lp.b, lp.c, lp.lo, lp.up),
            Status::solved);
  return lp;
}

/// G x <= h, x >= 0 (the textbook form), minimize c'x.
Lp from_leq(const Eigen::MatrixXd& G, const Eigen::VectorXd& h, const Eigen::VectorXd& c) {
  const Eigen::Index m = G.rows(), n = G.cols();
  return from_rows(G, Eigen::VectorXd::Constant(m, -kInf), h, c, Eigen::VectorXd::Zero(n),
                   Eigen::VectorXd::Constant(n, kInf));
}

Eigen::VectorXd vec(std::initializer_list<double> v) {
  Eigen::VectorXd out(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double e : v) out[i++] = e;
  return out;
}

/// Independent optimality check of the solver's (x, y): primal feasibility, dual
/// feasibility and complementary slackness of d = c - A'y against where x sits, and
/// equality of the primal and dual objectives.
void expect_kkt(const Lp& lp, const DenseLp& s, double tol = 1e-8) {
  ASSERT_EQ(s.status(), Status::solved);
  const Eigen::VectorXd x = s.x();
  const Eigen::VectorXd y = s.duals();
  ASSERT_EQ(x.size(), lp.n());
  ASSERT_EQ(y.size(), lp.m());
  const double xmax = x.cwiseAbs().maxCoeff();
  const double amax = lp.m() ? lp.A.cwiseAbs().maxCoeff() : 0.0;
  const double bmax = lp.m() ? lp.b.cwiseAbs().maxCoeff() : 0.0;
  const double pscale = 1 + bmax + amax * xmax;
  if (lp.m()) {
    EXPECT_LE((lp.A * x - lp.b).cwiseAbs().maxCoeff(), tol * pscale);
  }
  for (int j = 0; j < lp.n(); ++j) {
    EXPECT_GE(x[j], lp.lo[j] - tol * pscale) << j;
    EXPECT_LE(x[j], lp.up[j] + tol * pscale) << j;
  }
  const Eigen::VectorXd d = lp.c - lp.A.transpose() * y;
  EXPECT_LE((d - s.reduced_costs()).cwiseAbs().maxCoeff(), 1e-9 * (1 + d.cwiseAbs().maxCoeff()));
  const double ymax = lp.m() ? y.cwiseAbs().maxCoeff() : 0.0;
  const double dscale = 1 + lp.c.cwiseAbs().maxCoeff() + amax * ymax;
  double dual_obj = lp.m() ? lp.b.dot(y) : 0.0;
  for (int j = 0; j < lp.n(); ++j) {
    const bool at_lo = x[j] <= lp.lo[j] + tol * pscale;
    const bool at_up = x[j] >= lp.up[j] - tol * pscale;
    if (!at_lo) {
      EXPECT_LE(d[j], tol * dscale) << "x_" << j << " above its lower bound";
    }
    if (!at_up) {
      EXPECT_GE(d[j], -tol * dscale) << "x_" << j << " below its upper bound";
    }
    // The dual objective's bound terms: d_j+ lo_j - d_j- up_j (zero where d_j is).
    if (d[j] > 0 && std::isfinite(lp.lo[j])) dual_obj += d[j] * lp.lo[j];
    if (d[j] < 0 && std::isfinite(lp.up[j])) dual_obj += d[j] * lp.up[j];
  }
  EXPECT_NEAR(lp.c.dot(x), dual_obj, tol * (1 + std::abs(lp.c.dot(x))) * dscale * pscale);
  EXPECT_NEAR(s.objective(), lp.c.dot(x), 1e-9 * (1 + std::abs(s.objective())));
  EXPECT_LE(s.stats().residual, 1e-9);
}

/// The unbounded ray, checked from the data.
void expect_ray(const Lp& lp, const DenseLp& s) {
  ASSERT_EQ(s.status(), Status::unbounded);
  const Eigen::VectorXd d = s.ray();
  ASSERT_GT(d.cwiseAbs().maxCoeff(), 0.0);
  if (lp.m()) {
    EXPECT_LE((lp.A * d).cwiseAbs().maxCoeff(), 1e-9 * d.cwiseAbs().maxCoeff());
  }
  for (int j = 0; j < lp.n(); ++j) {
    if (std::isfinite(lp.up[j])) {
      EXPECT_LE(d[j], 0.0) << j;
    }
    if (std::isfinite(lp.lo[j])) {
      EXPECT_GE(d[j], 0.0) << j;
    }
  }
  EXPECT_LT(lp.c.dot(d), 0.0);
  EXPECT_TRUE(verify_ray(lp.view(), d));
  // The ray starts at a feasible point.
  const Eigen::VectorXd x = s.x();
  if (lp.m()) {
    EXPECT_LE((lp.A * x - lp.b).cwiseAbs().maxCoeff(), 1e-9 * (1 + x.cwiseAbs().maxCoeff()));
  }
}

/// The Farkas certificate, checked by verify_farkas and by hand for x >= 0 problems.
void expect_certificate(const Lp& lp, const DenseLp& s) {
  ASSERT_EQ(s.status(), Status::infeasible);
  const Eigen::VectorXd y = s.farkas();
  ASSERT_EQ(y.size(), lp.m());
  EXPECT_TRUE(verify_farkas(lp.view(), y));
  // Recompute y'b - max{y'A x : lo <= x <= up} here.
  const Eigen::VectorXd g = lp.A.transpose() * y;
  double max_term = 0;
  for (int j = 0; j < lp.n(); ++j) {
    if (std::abs(g[j]) <= 1e-12 * y.cwiseAbs().sum()) continue;
    const double bound = g[j] > 0 ? lp.up[j] : lp.lo[j];
    ASSERT_TRUE(std::isfinite(bound)) << "certificate unbounded in column " << j;
    max_term += g[j] * bound;
  }
  EXPECT_GT(lp.b.dot(y) - max_term, 1e-9 * y.cwiseAbs().maxCoeff());
  // Flipping the certificate must not verify.
  EXPECT_FALSE(verify_farkas(lp.view(), -y));
}

// ---- textbook problems ----------------------------------------------------------------------

TEST(DenseLpTextbook, ChvatalChapter2) {
  // Chvatal (1983) sec. 2: max 5x1 + 4x2 + 3x3 s.t. 2x1+3x2+x3 <= 5, 4x1+x2+2x3 <= 11,
  // 3x1+4x2+2x3 <= 8, x >= 0: z* = 13 at x = (2, 0, 1).
  Eigen::MatrixXd G(3, 3);
  G << 2, 3, 1, 4, 1, 2, 3, 4, 2;
  const Lp lp = from_leq(G, vec({5, 11, 8}), vec({-5, -4, -3}));
  DenseLp s(16, 16);
  ASSERT_EQ(s.solve(lp.view()), Status::solved);
  expect_kkt(lp, s);
  EXPECT_NEAR(s.objective(), -13.0, 1e-12);
  EXPECT_NEAR(s.x()[0], 2.0, 1e-12);
  EXPECT_NEAR(s.x()[1], 0.0, 1e-12);
  EXPECT_NEAR(s.x()[2], 1.0, 1e-12);
  EXPECT_GT(s.stats().iterations, 0);
}

TEST(DenseLpTextbook, TwoVariablesByHand) {
  // Hillier & Lieberman's Wyndor Glass: max 3x + 5y s.t. x <= 4 (a bound), 2y <= 12,
  // 3x + 2y <= 18. Vertices (0,0) 0, (4,0) 12, (4,3) 27, (2,6) 36, (0,6) 30: z* = 36.
  Eigen::MatrixXd G(2, 2);
  G << 0, 2, 3, 2;
  const Lp lp = from_rows(G, vec({-kInf, -kInf}), vec({12, 18}), vec({-3, -5}), vec({0, 0}),
                          vec({4, kInf}));
  DenseLp s(8, 8);
  ASSERT_EQ(s.solve(lp.view()), Status::solved);
  expect_kkt(lp, s);
  EXPECT_NEAR(s.objective(), -36.0, 1e-12);
  EXPECT_NEAR(s.x()[0], 2.0, 1e-12);
  EXPECT_NEAR(s.x()[1], 6.0, 1e-12);
  // Shadow prices (Hillier & Lieberman): 3/2 for 2y <= 12, 1 for 3x + 2y <= 18. Minimizing
  // -z, the multipliers are their negatives, and so are the reduced costs of the slacks
  // (columns 2 and 3, d = 0 - (-1) y, nonpositive at their upper bounds).
  EXPECT_NEAR(s.duals()[0], -1.5, 1e-12);
  EXPECT_NEAR(s.duals()[1], -1.0, 1e-12);
  EXPECT_NEAR(s.reduced_costs()[2], -1.5, 1e-12);
  EXPECT_NEAR(s.reduced_costs()[3], -1.0, 1e-12);
}

TEST(DenseLpTextbook, EqualitiesBoundsAndFreeVariables) {
  {
    // min x2 s.t. x1 - x2 = 3, 0 <= x1 <= 2, x2 free: x2 = x1 - 3, best at x1 = 0.
    Lp lp{Eigen::MatrixXd(1, 2), vec({3}), vec({0, 1}), vec({0, -kInf}), vec({2, kInf})};
    lp.A << 1, -1;
    DenseLp s(4, 4);
    ASSERT_EQ(s.solve(lp.view()), Status::solved);
    expect_kkt(lp, s);
    EXPECT_NEAR(s.objective(), -3.0, 1e-12);
  }
  {
    // min t s.t. t >= |x - 2| (two rows), x in [-1, 1], t free: t* = 1 at x = 1.
    Eigen::MatrixXd G(2, 2);
    G << -1, 1, 1, 1;  // columns (x, t): t - x >= -2, t + x >= 2
    const Lp lp = from_rows(G, vec({-2, 2}), vec({kInf, kInf}), vec({0, 1}), vec({-1, -kInf}),
                            vec({1, kInf}));
    DenseLp s(4, 8);
    ASSERT_EQ(s.solve(lp.view()), Status::solved);
    expect_kkt(lp, s);
    EXPECT_NEAR(s.objective(), 1.0, 1e-12);
    EXPECT_NEAR(s.x()[0], 1.0, 1e-12);
  }
  {
    // Upper and lower bounds, negative values, and a fixed variable:
    // min -x1 - 2 x2 + x3 s.t. x1 + x2 + x3 = 1, x1 - x2 = 0.5 (equalities),
    // x1 in [-3, 3], x2 in [-2, 0.5], x3 = -1 (fixed). Then x1 + x2 = 2, x1 - x2 = 0.5:
    // x = (1.25, 0.75, -1) violates x2 <= 0.5 ... so the equalities leave no freedom but x2:
    // x1 = x2 + 0.5 and 2 x2 + 0.5 = 2 -> x2 = 0.75 > 0.5: infeasible. Use x3 in [-1, 1]
    // instead: x1 = x2 + 0.5, x3 = 0.5 - 2 x2, objective -3 x2 - 0.5 + 0.5 - 2 x2 = -5 x2:
    // best x2 = min(0.5, (0.5 + 1)/2 = 0.75) = 0.5 -> x = (1, 0.5, -0.5), z* = -2.5.
    Lp lp{Eigen::MatrixXd(2, 3), vec({1, 0.5}), vec({-1, -2, 1}), vec({-3, -2, -1}),
          vec({3, 0.5, 1})};
    lp.A << 1, 1, 1, 1, -1, 0;
    DenseLp s(4, 4);
    ASSERT_EQ(s.solve(lp.view()), Status::solved);
    expect_kkt(lp, s);
    EXPECT_NEAR(s.objective(), -2.5, 1e-12);
    EXPECT_NEAR(s.x()[0], 1.0, 1e-12);
    EXPECT_NEAR(s.x()[1], 0.5, 1e-12);
    EXPECT_NEAR(s.x()[2], -0.5, 1e-12);
    // The same with x3 fixed at -0.5: the same point.
    lp.lo[2] = lp.up[2] = -0.5;
    ASSERT_EQ(s.solve(lp.view()), Status::solved);
    expect_kkt(lp, s);
    EXPECT_NEAR(s.objective(), -2.5, 1e-12);
  }
}

TEST(DenseLpTextbook, NoRowsIsABoxProblem) {
  // m = 0: each variable goes to the bound its cost prefers; a zero cost leaves a free
  // variable at 0.
  Lp lp{Eigen::MatrixXd(0, 4), Eigen::VectorXd(0), vec({1, -2, 0, 0.5}), vec({-1, 0, -kInf, -3}),
        vec({1, 4, kInf, kInf})};
  DenseLp s(4, 4);
  ASSERT_EQ(s.solve(lp.view()), Status::solved);
  expect_kkt(lp, s);
  EXPECT_NEAR(s.objective(), -1 - 8 - 1.5, 1e-12);
  EXPECT_EQ(s.x()[2], 0.0);
}

TEST(DenseLpTextbook, RedundantRows) {
  // The second row is twice the first: the basis keeps a logical column for it.
  Lp lp{Eigen::MatrixXd(3, 3), vec({1, 2, 0.25}), vec({-1, -1, 0}), Eigen::VectorXd::Zero(3),
        Eigen::VectorXd::Constant(3, kInf)};
  lp.A << 1, 1, 1, 2, 2, 2, 0, 1, 0;  // x1 + x2 + x3 = 1, x2 = 0.25
  DenseLp s(4, 4);
  ASSERT_EQ(s.solve(lp.view()), Status::solved);
  expect_kkt(lp, s);
  EXPECT_NEAR(s.objective(), -1.0, 1e-12);
  // A logical (column n + i) is basic for the dependent row, and the basis warm-starts.
  const LpBasis& basis = s.basis();
  EXPECT_TRUE(std::any_of(basis.head.begin(), basis.head.begin() + 3, [](int h) { return h >= 3; }));
  const LpBasis copy = basis;
  ASSERT_EQ(s.solve(lp.view(), copy), Status::solved);
  EXPECT_TRUE(s.warm_started());
  EXPECT_EQ(s.stats().iterations, 0);
  // Dependent but inconsistent rows: infeasible, with a certificate.
  lp.b[1] = 2.5;
  ASSERT_EQ(s.solve(lp.view()), Status::infeasible);
  expect_certificate(lp, s);
}

TEST(DenseLpTextbook, InfeasibleWithinTheToleranceLeavesTheRemainderInItsRow) {
  // x1 + x2 = -v with x >= 0 is infeasible by v = 5e-10, inside the feasibility tolerance:
  // phase 1 ends with its artificial at v. Pivoting x1 in for it with the artificial set to
  // 0 would put x1 = -v and, through the second row, x3 = 100 x1 = -5e-8 (a bound violation
  // 100 times the tolerance, once a numerical failure). The artificial leaves at v instead:
  // the remainder stays in row 0, x does not move.
  const double v = 5e-10;
  Lp lp{Eigen::MatrixXd(2, 3), vec({-v, 0}), vec({0, 0, 0}), Eigen::VectorXd::Zero(3),
        Eigen::VectorXd::Constant(3, kInf)};
  lp.A << 1, 1, 0,  //
      100, 0, -1;
  DenseLp s(2, 3);
  ASSERT_EQ(s.solve(lp.view()), Status::solved);
  expect_kkt(lp, s);
  EXPECT_EQ(s.x().cwiseAbs().maxCoeff(), 0.0);
  // Its basis records the artificial's column at 0: a warm start from it meets the
  // amplified remainder, fails its check, and falls back to the cold start (found in
  // review: the UCP solvers warm-start from basis()).
  const LpBasis basis = s.basis();
  ASSERT_EQ(s.solve(lp.view(), basis), Status::solved);
  expect_kkt(lp, s);
  EXPECT_FALSE(s.warm_started());
  // A genuine infeasibility, 1e4 times the tolerance, is still reported as one.
  lp.b[0] = -1e-5;
  ASSERT_EQ(s.solve(lp.view()), Status::infeasible);
  expect_certificate(lp, s);
}

// ---- degeneracy -----------------------------------------------------------------------------

/// Beale (1955): min -3/4 x4 + 150 x5 - 1/50 x6 + 6 x7 s.t.
///   1/4 x4 - 60 x5 - 1/25 x6 + 9 x7 + x1 = 0,  1/2 x4 - 90 x5 - 1/50 x6 + 3 x7 + x2 = 0,
///   x6 + x3 = 1,  x >= 0.  Optimum -1/20 at x4 = 1/25, x6 = 1, x1 = 3/100 (others 0):
///   rows 0.01 - 0.04 + 0.03 = 0, 0.02 - 0.02 = 0, 1 = 1; objective -0.03 - 0.02.
/// The textbook rule (largest coefficient, smallest subscript among tied ratios) cycles
/// from the slack basis with period 6 (Chvatal ch. 3).
Lp beale_1955() {
  Lp lp{Eigen::MatrixXd::Zero(3, 7), vec({0, 0, 1}), vec({0, 0, 0, -0.75, 150, -0.02, 6}),
        Eigen::VectorXd::Zero(7), Eigen::VectorXd::Constant(7, kInf)};
  lp.A.row(0) << 1, 0, 0, 0.25, -60, -1.0 / 25, 9;
  lp.A.row(1) << 0, 1, 0, 0.5, -90, -1.0 / 50, 3;
  lp.A.row(2) << 0, 0, 1, 0, 0, 1, 0;
  return lp;
}

TEST(DenseLpDegenerate, Beale1955TerminatesAtMinusOneTwentieth) {
  const Lp lp = beale_1955();
  for (int k : {10, 1, 0}) {  // Bland after k degenerate pivots (0: always)
    DenseLpOptions opt;
    opt.degenerate_pivots_before_bland = k;
    DenseLp s(8, 8, opt);
    ASSERT_EQ(s.solve(lp.view()), Status::solved) << k;
    expect_kkt(lp, s);
    EXPECT_NEAR(s.objective(), -0.05, 1e-12) << k;
    EXPECT_NEAR(s.x()[3], 0.04, 1e-12);
    EXPECT_NEAR(s.x()[5], 1.0, 1e-12);
    EXPECT_NEAR(s.x()[0], 0.03, 1e-12);
    EXPECT_LT(s.stats().iterations, 20) << k;
  }
}

/// Hall & McKinnon, "The simplest examples where the simplex method cycles and conditions
/// where EXPAND fails to prevent cycling", Math. Prog. 100 (2004), eq. (1):
/// max 2.3 x1 + 2.15 x2 - 13.55 x3 - 0.4 x4 s.t.
///   0.4 x1 + 0.2 x2 - 1.4 x3 - 0.2 x4 <= 0,  -7.8 x1 - 1.4 x2 + 7.8 x3 + 0.4 x4 <= 0,  x >= 0.
/// Every ratio test has a single candidate row, so the largest-coefficient rule cycles
/// (period 6) whatever the tie-breaking, all the while at x = 0. The LP is in fact
/// unbounded: d = (0, 1, 0, 3.5) has G d = (-0.5, 0) <= 0 and objective 2.15 - 1.4 > 0, which
/// the solver finds once the fallback to Bland's rule breaks the cycle.
Lp hall_mckinnon() {
  Eigen::MatrixXd G(2, 4);
  G << 0.4, 0.2, -1.4, -0.2, -7.8, -1.4, 7.8, 0.4;
  return from_leq(G, vec({0, 0}), vec({-2.3, -2.15, 13.55, 0.4}));
}

TEST(DenseLpDegenerate, HallMcKinnonCyclesOnlyWithoutProtection) {
  const Lp lp = hall_mckinnon();
  {
    DenseLpOptions opt;
    opt.degenerate_pivots_before_bland = std::numeric_limits<int>::max();  // protection off
    opt.max_iterations = 200;
    opt.scale = false;  // the cycle is for these exact coefficients
    DenseLp s(4, 8, opt);
    EXPECT_EQ(s.solve(lp.view()), Status::iteration_limit);
    EXPECT_EQ(s.stats().iterations, 200);
    EXPECT_TRUE(s.stats().has_point);
  }
  for (int k : {10, 1, 0}) {
    DenseLpOptions opt;
    opt.degenerate_pivots_before_bland = k;
    DenseLp s(4, 8, opt);
    ASSERT_EQ(s.solve(lp.view()), Status::unbounded) << k;
    expect_ray(lp, s);
    EXPECT_LT(s.stats().iterations, 40) << k;
  }
}

TEST(DenseLpDegenerate, BertsimasTsitsiklisVariant) {
  // The variant with 20 x5, -8 x5, -12 x5, -x6, -1/2 x6 (Bertsimas & Tsitsiklis ex. 3.6):
  // min -3/4 x4 + 20 x5 - 1/2 x6 + 6 x7; its optimum is -5/4 at x4 = 1, x6 = 1 (row 2
  // 1/2 - 1/2 = 0 tight, row 1 1/4 - 1 <= 0), not -1/20.
  Lp lp{Eigen::MatrixXd::Zero(3, 7), vec({0, 0, 1}), vec({0, 0, 0, -0.75, 20, -0.5, 6}),
        Eigen::VectorXd::Zero(7), Eigen::VectorXd::Constant(7, kInf)};
  lp.A.row(0) << 1, 0, 0, 0.25, -8, -1, 9;
  lp.A.row(1) << 0, 1, 0, 0.5, -12, -0.5, 3;
  lp.A.row(2) << 0, 0, 1, 0, 0, 1, 0;
  DenseLp s(8, 8);
  ASSERT_EQ(s.solve(lp.view()), Status::solved);
  expect_kkt(lp, s);
  EXPECT_NEAR(s.objective(), -1.25, 1e-12);
  EXPECT_NEAR(s.x()[3], 1.0, 1e-12);
  EXPECT_NEAR(s.x()[5], 1.0, 1e-12);
}

TEST(DenseLpDegenerate, ManyConstraintsThroughOnePoint) {
  // A highly degenerate vertex: 30 random constraints a_i'x <= a_i'x0 all tight at x0,
  // maximize a direction in their cone's dual: the optimum is x0 (every row tight).
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  const int k = 30, n = 5;
  Eigen::MatrixXd G(k, n);
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < n; ++j) G(i, j) = u(rng);
  const Eigen::VectorXd x0 = Eigen::VectorXd::Constant(n, 0.5);
  Eigen::VectorXd w = Eigen::VectorXd::Zero(k);
  for (int i = 0; i < k; i += 3) w[i] = 1 + i;  // c = -G'w: the optimum is x0
  const Eigen::VectorXd c = -G.transpose() * w;
  const Lp lp = from_rows(G, Eigen::VectorXd::Constant(k, -kInf), G * x0, c,
                          Eigen::VectorXd::Constant(n, -kInf), Eigen::VectorXd::Constant(n, kInf));
  DenseLp s(32, 64);
  ASSERT_EQ(s.solve(lp.view()), Status::solved);
  expect_kkt(lp, s);
  EXPECT_NEAR(s.objective(), c.dot(x0), 1e-9);
  EXPECT_LE((s.x().head(n) - x0).cwiseAbs().maxCoeff(), 1e-9);
}

// ---- unbounded and infeasible -----------------------------------------------------------------

TEST(DenseLpUnbounded, RayIsChecked) {
  {
    // min -x1 - x2 s.t. x1 - x2 <= 1, -x1 + 2 x2 <= 4 ... unbounded along (2, 1) and more.
    Eigen::MatrixXd G(2, 2);
    G << 1, -1, -1, 1;
    const Lp lp = from_leq(G, vec({1, 4}), vec({-1, -1}));
    DenseLp s(4, 8);
    ASSERT_EQ(s.solve(lp.view()), Status::unbounded);
    expect_ray(lp, s);
  }
  {
    // A free variable with no rows: min x, x free.
    Lp lp{Eigen::MatrixXd(0, 1), Eigen::VectorXd(0), vec({1}), vec({-kInf}), vec({kInf})};
    DenseLp s(2, 2);
    ASSERT_EQ(s.solve(lp.view()), Status::unbounded);
    expect_ray(lp, s);
    EXPECT_LT(s.ray()[0], 0.0);
  }
  {
    // Bounded below in x1, unbounded through the free x3 on an equality row:
    // x1 + x2 - x3 = 1, x1 in [0, 1], x2 >= 0, x3 free, min x1 - x3 + x2 ... -x3 wins.
    Lp lp{Eigen::MatrixXd(1, 3), vec({1}), vec({1, 0.5, -1}), vec({0, 0, -kInf}),
          vec({1, kInf, kInf})};
    lp.A << 1, 1, -1;
    DenseLp s(2, 4);
    ASSERT_EQ(s.solve(lp.view()), Status::unbounded);
    expect_ray(lp, s);
  }
  // verify_ray rejects a non-ray.
  Eigen::MatrixXd G(1, 1);
  G << 1;
  const Lp lp = from_leq(G, vec({1}), vec({-1}));
  EXPECT_FALSE(verify_ray(lp.view(), vec({1, 1})));   // c'd < 0 but d_slack > 0 with s <= 0
  EXPECT_FALSE(verify_ray(lp.view(), vec({1, -1})));  // in the cone? A d = 1 + 1 != 0
  EXPECT_FALSE(verify_ray(lp.view(), vec({0, 0})));
}

TEST(DenseLpInfeasible, FarkasCertificateNonnegativeVariables) {
  // x1 + x2 <= 1 and x1 + x2 >= 3 with x >= 0.
  Eigen::MatrixXd G(2, 2);
  G << 1, 1, 1, 1;
  const Lp lp = from_rows(G, vec({-kInf, 3}), vec({1, kInf}), vec({1, 1}), vec({0, 0}),
                          vec({kInf, kInf}));
  DenseLp s(4, 8);
  ASSERT_EQ(s.solve(lp.view()), Status::infeasible);
  expect_certificate(lp, s);
  // Plain standard form, A x = b, x >= 0: x1 + x2 = -1.
  Lp lp2{Eigen::MatrixXd(1, 2), vec({-1}), vec({0, 0}), vec({0, 0}), vec({kInf, kInf})};
  lp2.A << 1, 1;
  ASSERT_EQ(s.solve(lp2.view()), Status::infeasible);
  expect_certificate(lp2, s);
  const double y = s.farkas()[0];
  EXPECT_LT(y, 0.0);  // y'A <= 0 and y'b > 0
}

TEST(DenseLpInfeasible, FarkasCertificateGeneralBounds) {
  {
    // x in [0, 1]^2, x1 + x2 = 3: infeasible only through the upper bounds.
    Lp lp{Eigen::MatrixXd(1, 2), vec({3}), vec({1, 0}), vec({0, 0}), vec({1, 1})};
    lp.A << 1, 1;
    DenseLp s(2, 4);
    ASSERT_EQ(s.solve(lp.view()), Status::infeasible);
    expect_certificate(lp, s);
  }
  {
    // x - y = 0 with x in [2, 5] and y <= 1 (y has no lower bound), plus a free z row.
    Lp lp{Eigen::MatrixXd(2, 3), vec({0, 4}), vec({0, 0, 0}), vec({2, -kInf, -kInf}),
          vec({5, 1, kInf})};
    lp.A << 1, -1, 0, 0, 1, 1;
    DenseLp s(2, 4);
    ASSERT_EQ(s.solve(lp.view()), Status::infeasible);
    expect_certificate(lp, s);
    // A feasible variant (y <= 3) solves.
    Lp ok = lp;
    ok.up[1] = 3;
    ASSERT_EQ(s.solve(ok.view()), Status::solved);
    expect_kkt(ok, s);
  }
  {
    // Random boxes around an infeasible system: A x = b with b far outside A*box.
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-1, 1);
    Lp lp{Eigen::MatrixXd(8, 20), Eigen::VectorXd(8), Eigen::VectorXd::Zero(20),
          Eigen::VectorXd(20), Eigen::VectorXd(20)};
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 20; ++j) lp.A(i, j) = u(rng);
    for (int j = 0; j < 20; ++j) {
      lp.lo[j] = -1 - u(rng);
      lp.up[j] = 1 + u(rng) + 1;
    }
    lp.b.setConstant(0.0);
    lp.b[0] = 100;  // |row 0 . x| <= 20 * 3
    DenseLp s(8, 20);
    ASSERT_EQ(s.solve(lp.view()), Status::infeasible);
    expect_certificate(lp, s);
  }
}

TEST(DenseLpInfeasible, VerifyFarkasRejectsBadCertificates) {
  Lp lp{Eigen::MatrixXd(1, 2), vec({3}), vec({0, 0}), vec({0, 0}), vec({1, 1})};
  lp.A << 1, 1;
  EXPECT_TRUE(verify_farkas(lp.view(), vec({1})));    // 3 > max(x1 + x2) = 2
  EXPECT_FALSE(verify_farkas(lp.view(), vec({-1})));  // -3 > max(-x1 - x2) = 0? no
  EXPECT_FALSE(verify_farkas(lp.view(), vec({0})));
  EXPECT_FALSE(verify_farkas(lp.view(), vec({kInf})));
  EXPECT_FALSE(verify_farkas(lp.view(), vec({1, 1})));  // wrong size
  lp.up[1] = kInf;  // now feasible: x2 can be anything >= 0
  EXPECT_FALSE(verify_farkas(lp.view(), vec({1})));
  // Found by fuzzing: -x0 - x1 - s0 = 0, x2 - s1 = 0, x0, x1, s0 >= 0, s1 >= 0.1, x2 free
  // (feasible: x2 = s1 = 1). y = (1, 1e-17) has a gap of 1e-18 and so has every term of it
  // (b = 0): rounding, not a proof.
  Lp homogeneous{Eigen::MatrixXd(2, 5), vec({0, 0}), Eigen::VectorXd::Zero(5), vec({0, 0, -kInf, 0, 0.1}),
                 Eigen::VectorXd::Constant(5, kInf)};
  homogeneous.A << -1, -1, 0, -1, 0,  //
      0, 0, 1, 0, -1;
  EXPECT_FALSE(verify_farkas(homogeneous.view(), vec({1, 1e-17})));
}

// ---- warm start -----------------------------------------------------------------------------

TEST(DenseLpWarmStart, OptimalBasisTakesZeroPivots) {
  Eigen::MatrixXd G(3, 3);
  G << 2, 3, 1, 4, 1, 2, 3, 4, 2;
  Lp lp = from_leq(G, vec({5, 11, 8}), vec({-5, -4, -3}));
  DenseLp s(16, 16);
  ASSERT_EQ(s.solve(lp.view()), Status::solved);
  EXPECT_FALSE(s.warm_started());
  const Eigen::VectorXd x_cold = s.x();
  const LpBasis basis = s.basis();
  ASSERT_EQ(s.solve(lp.view(), basis), Status::solved);
  EXPECT_TRUE(s.warm_started());
  EXPECT_EQ(s.stats().iterations, 0);
  EXPECT_LE((s.x() - x_cold).cwiseAbs().maxCoeff(), 1e-12);
  // Passing the solver's own basis object back works too (it aliases the workspace).
  ASSERT_EQ(s.solve(lp.view(), s.basis()), Status::solved);
  EXPECT_TRUE(s.warm_started());
  EXPECT_EQ(s.stats().iterations, 0);

  // A new objective: the old basis is still feasible, phase 2 continues from it.
  lp.c.head(3) = vec({-1, -4, -1});
  ASSERT_EQ(s.solve(lp.view(), basis), Status::solved);
  EXPECT_TRUE(s.warm_started());
  expect_kkt(lp, s);
  const double warm_objective = s.objective();
  ASSERT_EQ(s.solve(lp.view()), Status::solved);
  EXPECT_NEAR(s.objective(), warm_objective, 1e-12);
}

TEST(DenseLpWarmStart, InfeasibleOrInvalidBasisFallsBackToColdStart) {
  Eigen::MatrixXd G(3, 3);
  G << 2, 3, 1, 4, 1, 2, 3, 4, 2;
  Lp lp = from_leq(G, vec({5, 11, 8}), vec({-5, -4, -3}));
  DenseLp s(16, 16);
  ASSERT_EQ(s.solve(lp.view()), Status::solved);
  const LpBasis basis = s.basis();
  // Tighten the first row so that x = (2, 0, 1) is cut off: the old basis is infeasible.
  lp.up[3] = 3;  // slack bound of row 1 (row_upper): 2x1 + 3x2 + x3 <= 3
  ASSERT_EQ(s.solve(lp.view(), basis), Status::solved);
  EXPECT_FALSE(s.warm_started());
  expect_kkt(lp, s);
  const double objective = s.objective();
  DenseLp cold(16, 16);
  ASSERT_EQ(cold.solve(lp.view()), Status::solved);
  EXPECT_NEAR(objective, cold.objective(), 1e-12);

  // Malformed bases: wrong size, repeated column, out-of-range column, singular.
  LpBasis bad = basis;
  bad.rows = 2;
  ASSERT_EQ(s.solve(lp.view(), bad), Status::solved);
  EXPECT_FALSE(s.warm_started());
  bad = basis;
  bad.head[1] = bad.head[0];
  ASSERT_EQ(s.solve(lp.view(), bad), Status::solved);
  EXPECT_FALSE(s.warm_started());
  bad = basis;
  bad.head[0] = 99;
  ASSERT_EQ(s.solve(lp.view(), bad), Status::solved);
  EXPECT_FALSE(s.warm_started());
  expect_kkt(lp, s);
}

// ---- adjacent extreme points ------------------------------------------------------------------

struct Found {
  std::vector<Eigen::VectorXd> points;
  std::vector<Eigen::VectorXd> rays;
  int degenerate = 0;
  int calls = 0;
};

template <class F>
Found collect(DenseLp& s, const Lp& lp, const LpBasis& basis, bool vertices, Status expect, F&& extra) {
  Found f;
  const auto visit = [&](const LpNeighbour& nb) {
    ++f.calls;
    extra(nb);
    if (nb.unbounded) f.rays.push_back(nb.edge);
    else if (nb.degenerate) ++f.degenerate;
    else f.points.push_back(nb.point);
    return true;
  };
  const Status st = vertices ? s.for_each_adjacent_vertex(lp.view(), basis, visit)
                             : s.for_each_adjacent_basis(lp.view(), basis, visit);
  EXPECT_EQ(st, expect);
  return f;
}

bool contains(const std::vector<Eigen::VectorXd>& pts, const Eigen::VectorXd& p, int n) {
  return std::any_of(pts.begin(), pts.end(), [&](const Eigen::VectorXd& q) {
    return (q.head(n) - p).cwiseAbs().maxCoeff() < 1e-9;
  });
}

/// The neighbour's basis reproduces its point: re-solving from it as a warm start is feasible.
void expect_basis_of_point(const Lp& lp, const LpNeighbour& nb) {
  if (nb.unbounded) return;
  DenseLp t(16, 16);
  ASSERT_EQ(t.solve(lp.view(), nb.basis), Status::solved);
  EXPECT_TRUE(t.warm_started());
  // Phase 2 from that basis: its starting point is nb.point; compare with a 0-cost LP.
  Lp zero = lp;
  zero.c.setZero();
  ASSERT_EQ(t.solve(zero.view(), nb.basis), Status::solved);
  EXPECT_EQ(t.stats().iterations, 0);
  EXPECT_LE((t.x() - nb.point).cwiseAbs().maxCoeff(), 1e-9);
}

TEST(DenseLpAdjacent, UnitSquareWithSlacks) {
  // x1 + s1 = 1, x2 + s2 = 1, all >= 0: the unit square. At (0, 0) (slack basis) the
  // neighbours are (1, 0) and (0, 1).
  const Lp lp = from_leq(Eigen::MatrixXd::Identity(2, 2), vec({1, 1}), vec({1, 1}));
  DenseLp s(4, 8);
  ASSERT_EQ(s.solve(lp.view()), Status::solved);  // the optimum (0, 0)
  const LpBasis basis = s.basis();
  EXPECT_TRUE(s.x().head(2).isZero());
  const Found f = collect(s, lp, basis, false, Status::solved,
                          [&](const LpNeighbour& nb) { expect_basis_of_point(lp, nb); });
  ASSERT_EQ(f.points.size(), 2u);
  EXPECT_TRUE(contains(f.points, Eigen::Vector2d(1, 0), 2));
  EXPECT_TRUE(contains(f.points, Eigen::Vector2d(0, 1), 2));
  EXPECT_EQ(f.degenerate, 0);
}

TEST(DenseLpAdjacent, UnitCubeHasThreeNeighbours) {
  // The cube as bounds only (m = 0: every move is a bound flip) and with slack rows.
  {
    Lp lp{Eigen::MatrixXd(0, 3), Eigen::VectorXd(0), vec({-1, 1, -1}), Eigen::VectorXd::Zero(3),
          Eigen::VectorXd::Ones(3)};
    DenseLp s(4, 4);
    ASSERT_EQ(s.solve(lp.view()), Status::solved);  // the vertex (1, 0, 1)
    const LpBasis basis = s.basis();
    for (bool vertices : {false, true}) {
      const Found f = collect(s, lp, basis, vertices, Status::solved, [&](const LpNeighbour& nb) {
        EXPECT_EQ(nb.leaving, nb.entering);  // bound flips
        EXPECT_DOUBLE_EQ(nb.step, 1.0);
      });
      ASSERT_EQ(f.points.size(), 3u);
      EXPECT_TRUE(contains(f.points, Eigen::Vector3d(0, 0, 1), 3));
      EXPECT_TRUE(contains(f.points, Eigen::Vector3d(1, 1, 1), 3));
      EXPECT_TRUE(contains(f.points, Eigen::Vector3d(1, 0, 0), 3));
    }
  }
  {
    const Lp lp = from_leq(Eigen::MatrixXd::Identity(3, 3), vec({1, 1, 1}), vec({-1, -1, -1}));
    DenseLp s(4, 8);
    ASSERT_EQ(s.solve(lp.view()), Status::solved);  // (1, 1, 1)
    const LpBasis basis = s.basis();
    for (bool vertices : {false, true}) {
      const Found f = collect(s, lp, basis, vertices, Status::solved,
                              [&](const LpNeighbour& nb) { expect_basis_of_point(lp, nb); });
      ASSERT_EQ(f.points.size(), 3u);
      EXPECT_TRUE(contains(f.points, Eigen::Vector3d(0, 1, 1), 3));
      EXPECT_TRUE(contains(f.points, Eigen::Vector3d(1, 0, 1), 3));
      EXPECT_TRUE(contains(f.points, Eigen::Vector3d(1, 1, 0), 3));
    }
  }
}

TEST(DenseLpAdjacent, DegeneratePyramidApex) {
  // Square pyramid: base [0,1]^2 at z = 0, apex (1/2, 1/2, 1). Four facets meet at the apex
  // (z <= 2x, z <= 2(1-x), z <= 2y, z <= 2(1-y)) in 3D: a degenerate vertex. x, y free,
  // z >= 0. Maximizing z gives the apex; its neighbours are the four base corners.
  Eigen::MatrixXd G(4, 3);
  G << -2, 0, 1,  //
      2, 0, 1,    //
      0, -2, 1,   //
      0, 2, 1;
  const Lp lp = from_rows(G, Eigen::VectorXd::Constant(4, -kInf), vec({0, 2, 0, 2}), vec({0, 0, -1}),
                          vec({-kInf, -kInf, 0}), vec({kInf, kInf, kInf}));
  DenseLp s(4, 8);
  ASSERT_EQ(s.solve(lp.view()), Status::solved);
  expect_kkt(lp, s);
  ASSERT_LE((s.x().head(3) - Eigen::Vector3d(0.5, 0.5, 1)).cwiseAbs().maxCoeff(), 1e-12);
  const LpBasis basis = s.basis();
  // One pivot per nonbasic slack: some are degenerate (same point, new basis) and the
  // others reach some, not all, of the corners.
  const Found one = collect(s, lp, basis, false, Status::solved, [&](const LpNeighbour& nb) {
    if (nb.degenerate) {
      EXPECT_EQ(nb.step, 0.0);
      EXPECT_LE((nb.point.head(3) - Eigen::Vector3d(0.5, 0.5, 1)).cwiseAbs().maxCoeff(), 1e-12);
    }
    expect_basis_of_point(lp, nb);
  });
  EXPECT_EQ(one.calls, 3);  // 3 nonbasic slacks, one basic at 0
  EXPECT_GE(one.degenerate, 1);
  EXPECT_LT(one.points.size(), 4u);
  // The vertex walk finds the four corners, each once.
  const Found all = collect(s, lp, basis, true, Status::solved,
                            [&](const LpNeighbour& nb) { expect_basis_of_point(lp, nb); });
  ASSERT_EQ(all.points.size(), 4u);
  for (const Eigen::Vector3d& corner :
       {Eigen::Vector3d(0, 0, 0), Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(0, 1, 0), Eigen::Vector3d(1, 1, 0)})
    EXPECT_TRUE(contains(all.points, corner, 3)) << corner.transpose();
  EXPECT_EQ(all.degenerate, 0);
  EXPECT_TRUE(all.rays.empty());
}

TEST(DenseLpAdjacent, RedundantConstraintThroughAVertex) {
  // Unit square plus x + y <= 2, tight at (1, 1) only: that vertex is degenerate in 2D
  // (three tight constraints) and still has exactly the two neighbours (1, 0) and (0, 1).
  Eigen::MatrixXd G(3, 2);
  G << 1, 0, 0, 1, 1, 1;
  const Lp lp = from_leq(G, vec({1, 1, 2}), vec({-1, -1}));
  DenseLp s(4, 8);
  ASSERT_EQ(s.solve(lp.view()), Status::solved);
  const LpBasis basis = s.basis();
  const Found all = collect(s, lp, basis, true, Status::solved, [](const LpNeighbour&) {});
  ASSERT_EQ(all.points.size(), 2u);
  EXPECT_TRUE(contains(all.points, Eigen::Vector2d(1, 0), 2));
  EXPECT_TRUE(contains(all.points, Eigen::Vector2d(0, 1), 2));
}

TEST(DenseLpAdjacent, UnboundedEdgesAndEarlyStop) {
  // The quadrant x, y >= 0 with x - y <= 1: at (0, 0) one edge ends at the vertex (1, 0),
  // the other is the ray (0, 1).
  Eigen::MatrixXd G(1, 2);
  G << 1, -1;
  const Lp lp = from_leq(G, vec({1}), vec({1, 1}));
  DenseLp s(2, 4);
  ASSERT_EQ(s.solve(lp.view()), Status::solved);  // the optimum (0, 0)
  const LpBasis basis = s.basis();
  const Found f = collect(s, lp, basis, true, Status::solved, [](const LpNeighbour&) {});
  ASSERT_EQ(f.points.size(), 1u);
  EXPECT_TRUE(contains(f.points, Eigen::Vector2d(1, 0), 2));
  ASSERT_EQ(f.rays.size(), 1u);
  EXPECT_EQ(f.rays[0][0], 0.0);
  EXPECT_GT(f.rays[0][1], 0.0);
  // A visitor returning false stops the enumeration.
  int calls = 0;
  EXPECT_EQ(s.for_each_adjacent_basis(lp.view(), basis, [&](const LpNeighbour&) { return ++calls < 1; }),
            Status::solved);
  EXPECT_EQ(calls, 1);
}

TEST(DenseLpAdjacent, KeepsTheLastSolveResults) {
  // Walking the neighbours of the solver's own basis leaves x(), basis() and the sizes of
  // the last solve as they were.
  Eigen::MatrixXd G(3, 2);
  G << 1, 0, 0, 1, 1, 1;
  const Lp lp = from_leq(G, vec({1, 1, 2}), vec({-1, -1}));
  const Lp other = from_leq(Eigen::MatrixXd::Identity(2, 2), vec({1, 1}), vec({1, 1}));
  DenseLp s(4, 8);
  ASSERT_EQ(s.solve(lp.view()), Status::solved);
  const Eigen::VectorXd x = s.x();
  const LpBasis basis = s.basis();
  int calls = 0;
  EXPECT_EQ(s.for_each_adjacent_vertex(lp.view(), s.basis(), [&](const LpNeighbour&) { return ++calls > 0; }),
            Status::solved);
  EXPECT_EQ(calls, 2);
  // A walk on another problem (other sizes) from a basis of that problem.
  DenseLp t(4, 8);
  ASSERT_EQ(t.solve(other.view()), Status::solved);
  EXPECT_EQ(s.for_each_adjacent_basis(other.view(), t.basis(), [](const LpNeighbour&) { return true; }),
            Status::solved);
  EXPECT_EQ(s.x(), x);
  EXPECT_EQ(s.basis().rows, basis.rows);
  EXPECT_EQ(s.basis().cols, basis.cols);
  EXPECT_TRUE(std::equal(basis.head.begin(), basis.head.begin() + basis.rows, s.basis().head.begin()));
  EXPECT_EQ(s.status(), Status::solved);
  expect_kkt(lp, s);
}

TEST(DenseLpAdjacent, BadBasisIsBadInput) {
  const Lp lp = from_leq(Eigen::MatrixXd::Identity(2, 2), vec({1, 1}), vec({0, 0}));
  DenseLp s(4, 8);
  ASSERT_EQ(s.solve(lp.view()), Status::solved);
  const auto ignore = [](const LpNeighbour&) { return true; };
  LpBasis b = s.basis();
  // x1 and x2 basic with the slacks at 0: the point (1, 1) is feasible; with x1, s1 basic
  // the basis is singular ([1 1; 0 0]).
  b.head[0] = 0;
  b.head[1] = 2;
  for (int j = 0; j < 4; ++j) b.state[j] = LpVarState::at_lower;
  b.state[0] = b.state[2] = LpVarState::basic;
  EXPECT_EQ(s.for_each_adjacent_basis(lp.view(), b, ignore), Status::bad_input);
  // An infeasible basis: x1, x2 basic with the slacks at 0 on b = (-1, 1).
  Lp neg = lp;
  neg.b[0] = -2;  // x1 - s1 = -2 with s1 at its upper bound 1: x1 = -1 < 0
  b.head[1] = 1;
  b.state[2] = LpVarState::at_lower;
  b.state[1] = LpVarState::basic;
  EXPECT_EQ(s.for_each_adjacent_basis(neg.view(), b, ignore), Status::bad_input);
  b.rows = 3;
  EXPECT_EQ(s.for_each_adjacent_vertex(lp.view(), b, ignore), Status::bad_input);
}

// ---- bad input ------------------------------------------------------------------------------

TEST(DenseLpBadInput, MalformedProblems) {
  Eigen::MatrixXd G(2, 2);
  G << 2, 3, 4, 1;
  const Lp good = from_leq(G, vec({5, 11}), vec({-5, -4}));
  DenseLp s(4, 8);
  ASSERT_EQ(s.solve(good.view()), Status::solved);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto expect_bad = [&](const Lp& lp, const char* what) {
    EXPECT_EQ(s.solve(lp.view()), Status::bad_input) << what;
    EXPECT_EQ(s.status(), Status::bad_input) << what;
    EXPECT_EQ(s.x().size(), 0) << what;
  };
  Lp lp = good;
  lp.A(0, 1) = nan;
  expect_bad(lp, "NaN in A");
  lp = good;
  lp.A(1, 0) = kInf;
  expect_bad(lp, "Inf in A");
  lp = good;
  lp.b[1] = nan;
  expect_bad(lp, "NaN in b");
  lp = good;
  lp.b[0] = -kInf;
  expect_bad(lp, "Inf in b");
  lp = good;
  lp.c[2] = kInf;
  expect_bad(lp, "Inf in c");
  lp = good;
  lp.c[0] = nan;
  expect_bad(lp, "NaN in c");
  lp = good;
  lp.lo[1] = nan;
  expect_bad(lp, "NaN in lower");
  lp = good;
  lp.lo[1] = 2, lp.up[1] = 1;
  expect_bad(lp, "lower > upper");
  lp = good;
  lp.lo[0] = kInf;
  expect_bad(lp, "lower = +inf");
  lp = good;
  lp.up[0] = -kInf;
  expect_bad(lp, "upper = -inf");
  lp = good;
  lp.b = vec({1, 2, 3});
  expect_bad(lp, "b size");
  lp = good;
  lp.c = vec({1});
  expect_bad(lp, "c size");
  lp = good;
  lp.lo = vec({0, 0});
  expect_bad(lp, "lower size");
  lp = good;
  lp.up = Eigen::VectorXd::Zero(7);
  expect_bad(lp, "upper size");
  expect_bad(Lp{Eigen::MatrixXd(0, 0), Eigen::VectorXd(0), Eigen::VectorXd(0), Eigen::VectorXd(0),
                Eigen::VectorXd(0)},
             "empty problem");
  expect_bad(Lp{Eigen::MatrixXd(2, 0), Eigen::VectorXd::Zero(2), Eigen::VectorXd(0),
                Eigen::VectorXd(0), Eigen::VectorXd(0)},
             "no columns");
  // Over capacity (rows, then columns).
  DenseLp small(1, 8);
  EXPECT_EQ(small.solve(good.view()), Status::bad_input);
  DenseLp narrow(4, 3);
  EXPECT_EQ(narrow.solve(good.view()), Status::bad_input);
  // The helper rejects mismatched outputs.
  Eigen::MatrixXd A(2, 3);
  Eigen::VectorXd b(2), c(4), l(4), u(4);
  EXPECT_EQ(row_bounds_to_standard_form(G, vec({0, 0}), vec({1, 1}), vec({1, 1}), vec({0, 0}), vec({1, 1}),
                                        A, b, c, l, u),
            Status::bad_input);
  // And the solver still works afterwards.
  ASSERT_EQ(s.solve(good.view()), Status::solved);
  expect_kkt(good, s);
}

TEST(DenseLpBadInput, IterationLimit) {
  Eigen::MatrixXd G(3, 3);
  G << 2, 3, 1, 4, 1, 2, 3, 4, 2;
  const Lp lp = from_leq(G, vec({5, 11, 8}), vec({-5, -4, -3}));
  DenseLpOptions opt;
  opt.max_iterations = 1;
  DenseLp s(4, 8, opt);
  EXPECT_EQ(s.solve(lp.view()), Status::iteration_limit);
  EXPECT_EQ(s.stats().iterations, 1);
  EXPECT_TRUE(s.stats().has_point);
}

// ---- random families ------------------------------------------------------------------------

/// A random LP with a feasible point x0 and a dual feasible (y0, z) built in, so it has an
/// optimum: columns 0..24 in [0, inf), 25..34 in [-1, 2], 35..39 free (z = 0 there).
Lp random_bounded_lp(std::mt19937& rng, int m, int n) {
  std::uniform_real_distribution<double> u(-1, 1), pos(0, 1);
  Lp lp{Eigen::MatrixXd(m, n), Eigen::VectorXd(m), Eigen::VectorXd(n), Eigen::VectorXd(n),
        Eigen::VectorXd(n)};
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) lp.A(i, j) = u(rng);
  Eigen::VectorXd x0(n), z(n), y0(m);
  const int n_pos = n * 5 / 8, n_box = n / 4;
  for (int j = 0; j < n; ++j) {
    if (j < n_pos) {
      lp.lo[j] = 0, lp.up[j] = kInf, x0[j] = pos(rng), z[j] = pos(rng);
      if (j % 3 == 0) x0[j] = 0;  // some degeneracy
    } else if (j < n_pos + n_box) {
      lp.lo[j] = -1, lp.up[j] = 2, x0[j] = u(rng), z[j] = 3 * u(rng);
    } else {
      lp.lo[j] = -kInf, lp.up[j] = kInf, x0[j] = 3 * u(rng), z[j] = 0;
    }
  }
  for (int i = 0; i < m; ++i) y0[i] = u(rng);
  lp.b = lp.A * x0;
  lp.c = lp.A.transpose() * y0 + z;
  return lp;
}

TEST(DenseLpRandom, FeasibleFamilySatisfiesKkt) {
  std::mt19937 rng(20240611);
  DenseLp s(20, 40);
  DenseLpOptions bland_opt;
  bland_opt.degenerate_pivots_before_bland = 0;
  DenseLp bland(20, 40, bland_opt);
  int total_pivots = 0;
  for (int k = 0; k < 50; ++k) {
    const Lp lp = random_bounded_lp(rng, 20, 40);
    ASSERT_EQ(s.solve(lp.view()), Status::solved) << k;
    expect_kkt(lp, s);
    total_pivots += s.stats().iterations;
    // Bland's rule throughout reaches the same optimal value.
    ASSERT_EQ(bland.solve(lp.view()), Status::solved) << k;
    expect_kkt(lp, bland);
    EXPECT_NEAR(bland.objective(), s.objective(), 1e-8 * (1 + std::abs(s.objective()))) << k;
    // And the optimal basis warm-starts with no pivot.
    const LpBasis basis = s.basis();
    ASSERT_EQ(s.solve(lp.view(), basis), Status::solved);
    EXPECT_EQ(s.stats().iterations, 0) << k;
  }
  std::printf("[ DenseLp ] 50 random 20x40 LPs: %.1f pivots on average\n", total_pivots / 50.0);
}

TEST(DenseLpRandom, BadlyScaledFamily) {
  // The random family with rows and columns scaled by 10^[-3, 3]: A' = R A S, b' = R b,
  // c' = S c, bounds / S. The optimal value does not change (x' = S^-1 x).
  std::mt19937 rng(31);
  std::uniform_real_distribution<double> e(-3, 3);
  DenseLp s(20, 40);
  for (int k = 0; k < 20; ++k) {
    const Lp lp = random_bounded_lp(rng, 20, 40);
    ASSERT_EQ(s.solve(lp.view()), Status::solved) << k;
    const double reference = s.objective();
    Lp scaled = lp;
    for (int i = 0; i < 20; ++i) {
      const double r = std::pow(10.0, e(rng));
      scaled.A.row(i) *= r;
      scaled.b[i] *= r;
    }
    for (int j = 0; j < 40; ++j) {
      const double f = std::pow(10.0, e(rng));
      scaled.A.col(j) *= f;
      scaled.c[j] *= f;
      scaled.lo[j] /= f;
      scaled.up[j] /= f;
    }
    ASSERT_EQ(s.solve(scaled.view()), Status::solved) << k;
    expect_kkt(scaled, s);
    EXPECT_NEAR(s.objective(), reference, 1e-7 * (1 + std::abs(reference))) << k;
  }
}

TEST(DenseLpRandom, DegenerateIntegerFamilyAllStatuses) {
  // Small-integer data (highly degenerate), random bounds, some right-hand sides perturbed:
  // solved, infeasible and unbounded problems. Dantzig-then-Bland and Bland throughout agree
  // on the status and the optimal value, and every answer passes its independent check.
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> small(-3, 3);
  DenseLp s(24, 48);
  DenseLpOptions bland_opt;
  bland_opt.degenerate_pivots_before_bland = 0;
  DenseLp bland(24, 48, bland_opt);
  int count[3] = {0, 0, 0};
  for (int k = 0; k < 300; ++k) {
    const int m = 1 + static_cast<int>(rng() % 24), n = 1 + static_cast<int>(rng() % 48);
    Lp lp{Eigen::MatrixXd(m, n), Eigen::VectorXd(m), Eigen::VectorXd(n), Eigen::VectorXd(n),
          Eigen::VectorXd(n)};
    Eigen::VectorXd x0(n);
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < m; ++i) lp.A(i, j) = small(rng);
      lp.c[j] = small(rng);
      switch (rng() % 4) {
        case 0: lp.lo[j] = 0, lp.up[j] = kInf; break;
        case 1: lp.lo[j] = -1, lp.up[j] = 2; break;
        case 2: lp.lo[j] = -kInf, lp.up[j] = 1; break;
        default: lp.lo[j] = -kInf, lp.up[j] = kInf; break;
      }
      x0[j] = std::isfinite(lp.lo[j]) ? lp.lo[j] : (std::isfinite(lp.up[j]) ? lp.up[j] : small(rng));
      if (rng() % 2 && std::isfinite(lp.up[j])) x0[j] = lp.up[j];
    }
    lp.b = lp.A * x0;
    if (rng() % 4 == 0) lp.b[rng() % m] += small(rng);
    const Status st = s.solve(lp.view());
    ASSERT_EQ(bland.solve(lp.view()), st) << k;
    switch (st) {
      case Status::solved:
        ++count[0];
        expect_kkt(lp, s);
        expect_kkt(lp, bland);
        EXPECT_NEAR(s.objective(), bland.objective(), 1e-9 * (1 + std::abs(s.objective()))) << k;
        break;
      case Status::infeasible:
        ++count[1];
        expect_certificate(lp, s);
        expect_certificate(lp, bland);
        break;
      case Status::unbounded:
        ++count[2];
        expect_ray(lp, s);
        expect_ray(lp, bland);
        break;
      default: ADD_FAILURE() << k << ": " << to_string(st);
    }
  }
  std::printf("[ DenseLp ] 300 integer LPs: %d solved, %d infeasible, %d unbounded\n", count[0], count[1],
              count[2]);
  EXPECT_GT(count[0], 30);
  EXPECT_GT(count[1], 10);
  EXPECT_GT(count[2], 30);
}

TEST(DenseLpRandom, InfeasibleFamilyHasCertificates) {
  std::mt19937 rng(99);
  DenseLp s(20, 40);
  for (int k = 0; k < 20; ++k) {
    Lp lp = random_bounded_lp(rng, 20, 40);
    // Make it infeasible: a row that is the sum of two others, with an inconsistent b.
    lp.A.row(19) = lp.A.row(3) + lp.A.row(7);
    lp.b[19] = lp.b[3] + lp.b[7] + 1.0 + k;
    ASSERT_EQ(s.solve(lp.view()), Status::infeasible) << k;
    expect_certificate(lp, s);
  }
}

TEST(DenseLpRandom, UcpSizedProblem) {
  // 40 contacts, 3 variables each: 120 structural variables (normal force and two friction
  // directions per contact, all >= 0, some capped), 60 equality rows plus 40 friction-cone
  // rows mu lambda_n - lambda_t1 - lambda_t2 >= 0 through slacks: 100 rows, 160 columns.
  std::mt19937 rng(40);
  std::uniform_real_distribution<double> u(-1, 1), pos(0, 1);
  const int contacts = 40, n = 3 * contacts, m_eq = 60;
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(m_eq + contacts, n);
  Eigen::VectorXd row_lo(m_eq + contacts), row_up(m_eq + contacts), lo(n), up(n), x0(n);
  for (int i = 0; i < m_eq; ++i)
    for (int j = 0; j < n; ++j) G(i, j) = u(rng);
  for (int k = 0; k < contacts; ++k) {
    G(m_eq + k, 3 * k) = 0.5;
    G(m_eq + k, 3 * k + 1) = -1;
    G(m_eq + k, 3 * k + 2) = -1;
    row_lo[m_eq + k] = 0;
    row_up[m_eq + k] = kInf;
    x0[3 * k] = 2 * pos(rng);
    x0[3 * k + 1] = 0.2 * pos(rng) * x0[3 * k];
    x0[3 * k + 2] = 0.2 * pos(rng) * x0[3 * k];
  }
  for (int j = 0; j < n; ++j) {
    lo[j] = 0;
    up[j] = j % 7 == 0 ? 10.0 : kInf;
  }
  row_lo.head(m_eq) = row_up.head(m_eq) = G.topRows(m_eq) * x0;
  // c = G_eq' y0 + z with z > 0: c'x = y0'b_eq + z'x is bounded below on x >= 0.
  Eigen::VectorXd y0(m_eq), z(n);
  for (int i = 0; i < m_eq; ++i) y0[i] = u(rng);
  for (int j = 0; j < n; ++j) z[j] = 0.1 + pos(rng);
  const Eigen::VectorXd c = G.topRows(m_eq).transpose() * y0 + z;
  const Lp lp = from_rows(G, row_lo, row_up, c, lo, up);
  ASSERT_EQ(lp.n(), 220);
  DenseLpOptions opt;
  opt.timing = true;
  DenseLp s(DenseLpCapacity{128, 256}, opt);
  ASSERT_EQ(s.solve(lp.view()), Status::solved);
  expect_kkt(lp, s);
  EXPECT_GT(s.stats().seconds, 0.0);
  const int pivots = s.stats().iterations;
  // Time it over a few repetitions (printed, not asserted).
  const int reps = 20;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) s.solve(lp.view());
  const double per_solve =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  const LpBasis basis = s.basis();
  const auto t1 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) s.solve(lp.view(), basis);
  const double per_warm =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count() / reps;
  EXPECT_EQ(s.stats().iterations, 0);
  std::printf("[ DenseLp ] UCP-sized LP (%d rows x %d cols, 120 structural): %d pivots, "
              "cold %.3f ms, warm (optimal basis) %.3f ms\n",
              lp.m(), lp.n(), pivots, 1e3 * per_solve, 1e3 * per_warm);
  // And its vertex has adjacent extreme points, each of which is feasible.
  int neighbours = 0;
  const Status st = s.for_each_adjacent_basis(lp.view(), basis, [&](const LpNeighbour& nb) {
    if (!nb.unbounded) {
      EXPECT_LE((lp.A * nb.point - lp.b).cwiseAbs().maxCoeff(), 1e-8);
      EXPECT_GE(nb.objective, s.objective() - 1e-8);  // an optimal vertex: no better neighbour
    }
    ++neighbours;
    return true;
  });
  EXPECT_EQ(st, Status::solved);
  EXPECT_GT(neighbours, 0);
}

TEST(DenseLpRandom, CapacityLimits) {
  // 128 rows and 256 columns at full capacity: a random feasible bounded LP.
  std::mt19937 rng(128);
  const Lp lp = random_bounded_lp(rng, 128, 256);
  DenseLp s(DenseLpCapacity{128, 256});
  ASSERT_EQ(s.solve(lp.view()), Status::solved);
  expect_kkt(lp, s, 1e-7);
  std::printf("[ DenseLp ] 128 x 256 random LP: %d pivots\n", s.stats().iterations);
}

}  // namespace
}  // namespace qs::dense_lp_test

// The dense QP kernel on textbook problems (Nocedal & Wright ex. 16.2 and 16.4), LPs (H = 0,
// against DenseLp), semidefinite Hessians (most rows zero, non-unique optima), degenerate
// vertices and redundant equalities, infeasible and unbounded problems, bad input, warm
// starts, random problems of 10-96 variables and a brute-force cross-check on tiny ones.
// Every `solved` answer is re-checked here from the data (primal feasibility, stationarity,
// signs, complementarity), independently of the solver's own check; for a convex QP these
// conditions prove optimality.
#include "quasistep/kernels/dense_qp.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <numbers>
#include <random>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "quasistep/kernels/dense_lp.hpp"

namespace qs::dense_qp_test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A QP owning its data.
struct Qp {
  Eigen::MatrixXd H;
  Eigen::VectorXd c;
  Eigen::MatrixXd A_eq;
  Eigen::VectorXd b_eq;
  Eigen::MatrixXd A_in;
  Eigen::VectorXd b_in;
  Eigen::VectorXd lo, up;
  DenseQpProblem view() const { return {H, c, A_eq, b_eq, A_in, b_in, lo, up}; }
  int n() const { return static_cast<int>(c.size()); }
  double objective(const Eigen::VectorXd& x) const { return 0.5 * x.dot(H * x) + c.dot(x); }
};

/// n variables, no constraints, no bounds.
Qp empty_qp(int n) {
  return Qp{Eigen::MatrixXd::Zero(n, n), Eigen::VectorXd::Zero(n), Eigen::MatrixXd(0, n),
            Eigen::VectorXd(0),          Eigen::MatrixXd(0, n),    Eigen::VectorXd(0),
            Eigen::VectorXd(0),          Eigen::VectorXd(0)};
}

Eigen::VectorXd vec(std::initializer_list<double> v) {
  Eigen::VectorXd out(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double e : v) out[i++] = e;
  return out;
}

double lower(const Qp& qp, int j) { return qp.lo.size() ? qp.lo[j] : -kInf; }
double upper(const Qp& qp, int j) { return qp.up.size() ? qp.up[j] : kInf; }

/// Independent KKT check of the solver's answer (tolerances relative to the data's scale).
void expect_kkt(const Qp& qp, const DenseQp& s, double tol = 1e-8) {
  ASSERT_EQ(s.status(), Status::solved);
  const Eigen::VectorXd x = s.x(), y = s.y(), z = s.z(), w = s.bound_multipliers();
  const int n = qp.n();
  ASSERT_EQ(x.size(), n);
  ASSERT_EQ(y.size(), qp.A_eq.rows());
  ASSERT_EQ(z.size(), qp.A_in.rows());
  const double scale = 1 + x.cwiseAbs().maxCoeff() + qp.c.cwiseAbs().maxCoeff() +
                       (qp.H.size() ? qp.H.cwiseAbs().maxCoeff() : 0.0) * x.cwiseAbs().maxCoeff() +
                       (y.size() ? y.cwiseAbs().maxCoeff() : 0.0) + (z.size() ? z.cwiseAbs().maxCoeff() : 0.0) +
                       w.cwiseAbs().maxCoeff();
  if (qp.A_eq.rows()) {
    EXPECT_LE((qp.A_eq * x - qp.b_eq).cwiseAbs().maxCoeff(), tol * scale);
  }
  Eigen::VectorXd r_in = qp.A_in.rows() ? Eigen::VectorXd(qp.A_in * x - qp.b_in) : Eigen::VectorXd(0);
  for (Eigen::Index i = 0; i < r_in.size(); ++i) {
    EXPECT_GE(r_in[i], -tol * scale) << "row " << i;
    EXPECT_GE(z[i], 0.0) << "row " << i;
    EXPECT_LE(std::abs(z[i] * r_in[i]), tol * scale * scale) << "row " << i;
  }
  for (int j = 0; j < n; ++j) {
    EXPECT_GE(x[j], lower(qp, j) - tol * scale) << j;
    EXPECT_LE(x[j], upper(qp, j) + tol * scale) << j;
    if (w[j] > 0) {
      ASSERT_TRUE(std::isfinite(lower(qp, j))) << j;
      EXPECT_LE(w[j] * (x[j] - lower(qp, j)), tol * scale * scale) << j;
    }
    if (w[j] < 0) {
      ASSERT_TRUE(std::isfinite(upper(qp, j))) << j;
      EXPECT_LE(-w[j] * (upper(qp, j) - x[j]), tol * scale * scale) << j;
    }
  }
  Eigen::VectorXd stat = qp.H * x + qp.c - w;
  if (qp.A_eq.rows()) stat -= qp.A_eq.transpose() * y;
  if (qp.A_in.rows()) stat -= qp.A_in.transpose() * z;
  EXPECT_LE(stat.cwiseAbs().maxCoeff(), tol * scale);
  EXPECT_NEAR(s.objective(), qp.objective(x), 1e-9 * (1 + std::abs(s.objective())));
  EXPECT_LE(s.stats().residual, 1e-9);
  const double residual = qp_kkt_residual(qp.view(), x, y, z, w);
  EXPECT_LE(residual, 1e-9);
  // The kernel's own check (over the rows' nonzeros, cached scales) is the same measure.
  EXPECT_NEAR(s.stats().residual, residual, 1e-13);
}

/// The unbounded ray, checked from the data.
void expect_ray(const Qp& qp, const DenseQp& s) {
  ASSERT_EQ(s.status(), Status::unbounded);
  const Eigen::VectorXd d = s.ray(), x = s.x();
  ASSERT_NEAR(d.cwiseAbs().maxCoeff(), 1.0, 1e-12);
  if (qp.A_eq.rows()) {
    EXPECT_LE((qp.A_eq * d).cwiseAbs().maxCoeff(), 1e-9);
  }
  if (qp.A_in.rows()) {
    EXPECT_GE((qp.A_in * d).minCoeff(), -1e-9);
  }
  for (int j = 0; j < qp.n(); ++j) {
    if (std::isfinite(upper(qp, j))) {
      EXPECT_LE(d[j], 1e-12) << j;
    }
    if (std::isfinite(lower(qp, j))) {
      EXPECT_GE(d[j], -1e-12) << j;
    }
  }
  EXPECT_LE((qp.H * d).cwiseAbs().maxCoeff(), 1e-6 * (1 + qp.H.cwiseAbs().maxCoeff()));
  EXPECT_LT(qp.c.dot(d), -1e-9);
  EXPECT_TRUE(verify_qp_ray(qp.view(), d));
  // A feasible start, and the objective does decrease along the ray.
  if (qp.A_eq.rows()) {
    EXPECT_LE((qp.A_eq * x - qp.b_eq).cwiseAbs().maxCoeff(), 1e-9 * (1 + x.cwiseAbs().maxCoeff()));
  }
  if (qp.A_in.rows()) {
    EXPECT_GE((qp.A_in * x - qp.b_in).minCoeff(), -1e-9 * (1 + x.cwiseAbs().maxCoeff()));
  }
  for (int j = 0; j < qp.n(); ++j) {
    EXPECT_GE(x[j], lower(qp, j) - 1e-12);
    EXPECT_LE(x[j], upper(qp, j) + 1e-12);
  }
  EXPECT_LT(qp.objective(x + 1e3 * d), qp.objective(x) - 1.0 * std::abs(qp.c.dot(d)));
  EXPECT_FALSE(verify_qp_ray(qp.view(), -d));
}

/// The Farkas certificate, checked by verify_qp_farkas and by hand (finite bounds).
void expect_certificate(const Qp& qp, const DenseQp& s) {
  ASSERT_EQ(s.status(), Status::infeasible);
  const Eigen::VectorXd ue = s.farkas_eq(), ui = s.farkas_in();
  EXPECT_TRUE(verify_qp_farkas(qp.view(), ue, ui));
  if (ui.size()) {
    EXPECT_GE(ui.minCoeff(), 0.0);
  }
  Eigen::VectorXd g = Eigen::VectorXd::Zero(qp.n());
  double gap = 0;
  if (ue.size()) {
    g += qp.A_eq.transpose() * ue;
    gap += qp.b_eq.dot(ue);
  }
  if (ui.size()) {
    g += qp.A_in.transpose() * ui;
    gap += qp.b_in.dot(ui);
  }
  const double umax = std::max(ue.size() ? ue.cwiseAbs().maxCoeff() : 0.0, ui.size() ? ui.cwiseAbs().maxCoeff() : 0.0);
  for (int j = 0; j < qp.n(); ++j) {
    if (std::abs(g[j]) <= 1e-12 * umax) continue;
    const double b = g[j] > 0 ? upper(qp, j) : lower(qp, j);
    ASSERT_TRUE(std::isfinite(b)) << j;
    gap -= g[j] * b;
  }
  EXPECT_GT(gap, 1e-9 * umax);
  EXPECT_FALSE(verify_qp_farkas(qp.view(), -ue, -ui));
}

// ---- textbook problems ------------------------------------------------------------------------

TEST(DenseQpTextbook, NocedalWrightExample16_2) {
  // N&W (2006) ex. 16.2: min 3x1^2 + 2x1x2 + x1x3 + 2.5x2^2 + 2x2x3 + 2x3^2 - 8x1 - 3x2 - 3x3
  // s.t. x1 + x3 = 3, x2 + x3 = 0: x* = (2, -1, 1), lambda* = (3, -2).
  Qp qp = empty_qp(3);
  qp.H << 6, 2, 1, 2, 5, 2, 1, 2, 4;
  qp.c = vec({-8, -3, -3});
  qp.A_eq = Eigen::MatrixXd(2, 3);
  qp.A_eq << 1, 0, 1, 0, 1, 1;
  qp.b_eq = vec({3, 0});
  DenseQp s(DenseQpCapacity{4, 4, 4});
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  expect_kkt(qp, s);
  EXPECT_LE((s.x() - vec({2, -1, 1})).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LE((s.y() - vec({3, -2})).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_NEAR(s.objective(), qp.objective(vec({2, -1, 1})), 1e-12);
}

TEST(DenseQpTextbook, NocedalWrightExample16_4) {
  // N&W ex. 16.4: min (x1 - 1)^2 + (x2 - 2.5)^2 s.t. x1 - 2x2 + 2 >= 0, -x1 - 2x2 + 6 >= 0,
  // -x1 + 2x2 + 2 >= 0, x1 >= 0, x2 >= 0: x* = (1.4, 1.7), only the first row active,
  // multiplier 0.8. (The constant 1 + 6.25 is left out of the objective.)
  Qp qp = empty_qp(2);
  qp.H = 2 * Eigen::MatrixXd::Identity(2, 2);
  qp.c = vec({-2, -5});
  qp.A_in = Eigen::MatrixXd(5, 2);
  qp.A_in << 1, -2, -1, -2, -1, 2, 1, 0, 0, 1;
  qp.b_in = vec({-2, -6, -2, 0, 0});
  DenseQp s(DenseQpCapacity{4, 4, 8});
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  expect_kkt(qp, s);
  EXPECT_LE((s.x() - vec({1.4, 1.7})).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LE((s.z() - vec({0.8, 0, 0, 0, 0})).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_EQ(s.working_set().active[0], 1);
  // The same with x >= 0 as bounds instead of rows.
  Qp qb = qp;
  qb.A_in = qp.A_in.topRows(3);
  qb.b_in = qp.b_in.head(3);
  qb.lo = vec({0, 0});
  qb.up = vec({kInf, kInf});
  ASSERT_EQ(s.solve(qb.view()), Status::solved);
  expect_kkt(qb, s);
  EXPECT_LE((s.x() - vec({1.4, 1.7})).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_EQ(s.bound_multipliers().cwiseAbs().maxCoeff(), 0.0);
}

TEST(DenseQpTextbook, BoxConstrainedAndFixedVariables) {
  // min |x - (3, 3, -1)|^2 over [0, 2] x [0, 2] x [-5, 5] with x3 fixed at 0.5:
  // x* = (2, 2, 0.5), w = g = 2 (x* - target) = (-2, -2, 3).
  Qp qp = empty_qp(3);
  qp.H = 2 * Eigen::MatrixXd::Identity(3, 3);
  qp.c = vec({-6, -6, 2});
  qp.lo = vec({0, 0, 0.5});
  qp.up = vec({2, 2, 0.5});
  DenseQp s(DenseQpCapacity{4, 2, 2});
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  expect_kkt(qp, s);
  EXPECT_LE((s.x() - vec({2, 2, 0.5})).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LE((s.bound_multipliers() - vec({-2, -2, 3})).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_EQ(s.working_set().bound[0], QpBoundState::at_upper);
  EXPECT_EQ(s.working_set().bound[2], QpBoundState::at_lower);  // fixed
}

TEST(DenseQpTextbook, UnconstrainedStrictlyConvex) {
  // No constraints at all: x* = -H^-1 c.
  Qp qp = empty_qp(3);
  qp.H << 4, 1, 0, 1, 3, 1, 0, 1, 2;
  qp.c = vec({1, -2, 3});
  DenseQp s(DenseQpCapacity{3, 0, 0});
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  expect_kkt(qp, s);
  const Eigen::VectorXd ref = -qp.H.ldlt().solve(qp.c);
  EXPECT_LE((s.x() - ref).cwiseAbs().maxCoeff(), 1e-12);
}

// ---- semidefinite Hessians ----------------------------------------------------------------------

TEST(DenseQpSemidefinite, ZeroHessianIsTheLp) {
  // H = 0: the QP is an LP; the optimum must equal DenseLp's (Chvatal sec. 2, plus random
  // LPs with rows >= and bounds).
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1, 1), pos(0, 1);
  DenseQp s(DenseQpCapacity{30, 4, 40});
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 5 + trial, mi = 10 + trial;
    Qp qp = empty_qp(n);
    qp.A_in = Eigen::MatrixXd(mi, n);
    for (int i = 0; i < mi; ++i)
      for (int j = 0; j < n; ++j) qp.A_in(i, j) = u(rng);
    Eigen::VectorXd x0(n);
    for (int j = 0; j < n; ++j) x0[j] = u(rng);
    qp.b_in = qp.A_in * x0;
    for (int i = 0; i < mi; ++i) qp.b_in[i] -= i % 3 == 0 ? 0.0 : pos(rng);
    qp.lo = Eigen::VectorXd::Constant(n, -2);
    qp.up = Eigen::VectorXd::Constant(n, 2);
    for (int j = 0; j < n; ++j) qp.c[j] = u(rng);
    ASSERT_EQ(s.solve(qp.view()), Status::solved) << trial;
    expect_kkt(qp, s);
    const double obj = s.objective();
    // With the LP's objective in phase 1 the LP's vertex is already optimal.
    s.options().phase1_minimizes_c = true;
    ASSERT_EQ(s.solve(qp.view()), Status::solved) << trial;
    s.options().phase1_minimizes_c = false;
    expect_kkt(qp, s);
    EXPECT_NEAR(s.objective(), obj, 1e-9 * (1 + std::abs(obj)));
    EXPECT_LE(s.stats().iterations, 2);
    // The LP: rows -> slacks.
    Eigen::MatrixXd A(mi, n + mi);
    Eigen::VectorXd b(mi), c(n + mi), lo(n + mi), up(n + mi);
    ASSERT_EQ(row_bounds_to_standard_form(qp.A_in, qp.b_in, Eigen::VectorXd::Constant(mi, kInf), qp.c, qp.lo,
                                          qp.up, A, b, c, lo, up),
              Status::solved);
    DenseLp lp(mi, n + mi);
    ASSERT_EQ(lp.solve({A, b, c, lo, up}), Status::solved);
    EXPECT_NEAR(s.objective(), lp.objective(), 1e-9 * (1 + std::abs(lp.objective()))) << trial;
  }
}

TEST(DenseQpSemidefinite, HessianWithMostRowsZero) {
  // The MIQP shape: ||x_a - x_bar||^2 on 4 of 60 variables, the rest only in constraints
  // and a linear term; with rows, equalities and bounds.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1), pos(0, 1);
  const int n = 60, me = 5, mi = 50;
  Qp qp = empty_qp(n);
  for (int j = 0; j < 4; ++j) qp.H(10 + j, 10 + j) = 2.0;
  qp.H(10, 11) = qp.H(11, 10) = 0.5;
  for (int j = 0; j < n; ++j) qp.c[j] = j >= 10 && j < 14 ? -2.0 * u(rng) : 0.1 * pos(rng);
  Eigen::VectorXd x0(n);
  for (int j = 0; j < n; ++j) x0[j] = pos(rng);
  qp.A_eq = Eigen::MatrixXd(me, n);
  qp.A_in = Eigen::MatrixXd(mi, n);
  for (int i = 0; i < me; ++i)
    for (int j = 0; j < n; ++j) qp.A_eq(i, j) = u(rng);
  for (int i = 0; i < mi; ++i)
    for (int j = 0; j < n; ++j) qp.A_in(i, j) = u(rng);
  qp.b_eq = qp.A_eq * x0;
  qp.b_in = qp.A_in * x0 - Eigen::VectorXd::Constant(mi, 0.2);
  qp.lo = Eigen::VectorXd::Zero(n);
  qp.up = Eigen::VectorXd::Constant(n, 3);
  DenseQp s(DenseQpCapacity{64, 8, 64});
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  expect_kkt(qp, s);
  // Warm start from the optimum: no iteration.
  const QpWorkingSet ws = s.working_set();
  ASSERT_EQ(s.solve(qp.view(), ws), Status::solved);
  EXPECT_EQ(s.warm_start(), QpWarmStart::accepted);
  EXPECT_EQ(s.stats().iterations, 0);
  expect_kkt(qp, s);
}

TEST(DenseQpSemidefinite, ZeroCurvatureStepsFromAnInteriorStart) {
  // min (x1 + x2 - 1)^2 + x3 s.t. x3 >= x1 - 4, x3 >= -x2 - 4, box [-10, 10]: H has rank 1,
  // the linear term pushes x3 down until the rows block; the reduced Hessian is singular
  // along the way. Optimum value: x1 + x2 = 1 and x3 = max(x1 - 4, -x2 - 4) minimal:
  // x1 - 4 = -x2 - 4 -> x1 = -x2 contradicts x1 + x2 = 1 unless ... minimize over the line:
  // x3 = max(x1, 1 - x1 ... ) - 4 with x2 = 1 - x1: max(x1, x1 - 1) - 4 = x1 - 4 -> x1 = -10
  // is allowed (x2 = 11 is not): x2 <= 10 -> x1 >= -9; objective -13 at x = (-9, 10, -13)?
  // x3 >= -x2 - 4 = -14 and x3 >= x1 - 4 = -13: x3 = -13 within [-10, 10]? No: x3 >= -10.
  // So the box binds x3 = -10 and any (x1, x2) with x1 + x2 = 1, x1 <= -6, x2 <= 6 is
  // optimal with value -10: a non-unique optimum.
  Qp qp = empty_qp(3);
  qp.H << 2, 2, 0, 2, 2, 0, 0, 0, 0;
  qp.c = vec({-2, -2, 1});
  qp.A_in = Eigen::MatrixXd(2, 3);
  qp.A_in << -1, 0, 1, 0, 1, 1;
  qp.b_in = vec({-4, -4});
  qp.lo = Eigen::VectorXd::Constant(3, -10);
  qp.up = Eigen::VectorXd::Constant(3, 10);
  DenseQp s(DenseQpCapacity{3, 0, 2});
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  expect_kkt(qp, s);
  EXPECT_NEAR(s.objective() + 1.0, -10.0, 1e-12);  // (x1 + x2 - 1)^2 - 1 = x'Hx/2 + c'x
  EXPECT_NEAR(s.x()[0] + s.x()[1], 1.0, 1e-12);
  EXPECT_NEAR(s.x()[2], -10.0, 1e-12);
}

TEST(DenseQpSemidefinite, NonUniqueOptimumIsOptimalAndDeterministic) {
  // min (x1 + x2 - 1)^2 + (x3 - x4)^2 over [0, 1]^4 with x1 + x3 >= 0.2: a 3-dimensional
  // face of optima with value 0. Whatever point is returned must be optimal, and the same
  // point, bit for bit, on every run (fresh solver, reused solver, after another problem).
  Qp qp = empty_qp(4);
  qp.H << 2, 2, 0, 0, 2, 2, 0, 0, 0, 0, 2, -2, 0, 0, -2, 2;
  qp.c = vec({-2, -2, 0, 0});
  qp.A_in = Eigen::MatrixXd(1, 4);
  qp.A_in << 1, 0, 1, 0;
  qp.b_in = vec({0.2});
  qp.lo = Eigen::VectorXd::Zero(4);
  qp.up = Eigen::VectorXd::Ones(4);
  DenseQp a(DenseQpCapacity{4, 0, 2});
  ASSERT_EQ(a.solve(qp.view()), Status::solved);
  expect_kkt(qp, a);
  EXPECT_NEAR(a.objective(), -1.0, 1e-12);
  const Eigen::VectorXd first = a.x();
  for (int run = 0; run < 3; ++run) {
    DenseQp b(DenseQpCapacity{4, 0, 2});
    ASSERT_EQ(b.solve(qp.view()), Status::solved);
    EXPECT_EQ(b.x(), first);
    Qp other = empty_qp(2);
    other.H = Eigen::MatrixXd::Identity(2, 2);
    other.c = vec({1, 1});
    ASSERT_EQ(a.solve(other.view()), Status::solved);
    ASSERT_EQ(a.solve(qp.view()), Status::solved);
    EXPECT_EQ(a.x(), first);
  }
}

TEST(DenseQpSemidefinite, RankOneDenseHessian) {
  // H = v v' (dense, rank 1): zero-curvature directions are not coordinate directions.
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> u(-1, 1);
  const int n = 12;
  Qp qp = empty_qp(n);
  Eigen::VectorXd v(n);
  for (int j = 0; j < n; ++j) v[j] = u(rng);
  qp.H = v * v.transpose();
  for (int j = 0; j < n; ++j) qp.c[j] = u(rng);
  qp.lo = Eigen::VectorXd::Constant(n, -1);
  qp.up = Eigen::VectorXd::Constant(n, 1);
  qp.A_in = Eigen::MatrixXd(3, n);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < n; ++j) qp.A_in(i, j) = u(rng);
  qp.b_in = Eigen::VectorXd::Constant(3, -0.5);
  DenseQp s(DenseQpCapacity{n, 0, 4});
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  expect_kkt(qp, s);
}

// ---- degeneracy ---------------------------------------------------------------------------------

TEST(DenseQpDegenerate, ManyActiveConstraintsAtTheOptimalVertex) {
  // min |x - (2, 2)|^2 s.t. x1 <= 1, x2 <= 1, x1 + x2 <= 2, 2x1 + x2 <= 3, x1 + 2x2 <= 3:
  // all five rows meet at the optimum (1, 1).
  Qp qp = empty_qp(2);
  qp.H = 2 * Eigen::MatrixXd::Identity(2, 2);
  qp.c = vec({-4, -4});
  qp.A_in = Eigen::MatrixXd(5, 2);
  qp.A_in << -1, 0, 0, -1, -1, -1, -2, -1, -1, -2;
  qp.b_in = vec({-1, -1, -2, -3, -3});
  for (int k : {10, 1, 0}) {
    DenseQpOptions opt;
    opt.degenerate_steps_before_bland = k;
    DenseQp s(DenseQpCapacity{2, 0, 5}, opt);
    ASSERT_EQ(s.solve(qp.view()), Status::solved) << k;
    expect_kkt(qp, s);
    EXPECT_LE((s.x() - vec({1, 1})).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_NEAR(s.objective(), -6.0, 1e-12);
  }
}

TEST(DenseQpDegenerate, RedundantEqualities) {
  // x1 + x2 + x3 = 1 three times (scaled), x2 - x3 = 0 and its sum with the first:
  // min x'x -> x = (1/3, 1/3, 1/3).
  Qp qp = empty_qp(3);
  qp.H = 2 * Eigen::MatrixXd::Identity(3, 3);
  qp.A_eq = Eigen::MatrixXd(5, 3);
  qp.A_eq << 1, 1, 1, 2, 2, 2, -1, -1, -1, 0, 1, -1, 1, 2, 0;
  qp.b_eq = vec({1, 2, -1, 0, 1});
  qp.A_in = Eigen::MatrixXd(1, 3);
  qp.A_in << 1, 0, 0;
  qp.b_in = vec({0});
  DenseQp s(DenseQpCapacity{3, 5, 1});
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  expect_kkt(qp, s);
  EXPECT_LE((s.x() - Eigen::VectorXd::Constant(3, 1.0 / 3)).cwiseAbs().maxCoeff(), 1e-12);
  // Inconsistent copies: infeasible, with a certificate.
  qp.b_eq[1] = 2.5;
  ASSERT_EQ(s.solve(qp.view()), Status::infeasible);
  expect_certificate(qp, s);
}

/// Beale (1955), the LP on which the textbook simplex cycles (see dense_lp_test), as a QP
/// with H = 0 and its equality rows, started (warm) at the degenerate vertex x = 0 with every
/// bound in the working set, so that phase 2 itself walks the degenerate vertex.
TEST(DenseQpDegenerate, BealeFromTheDegenerateVertex) {
  Qp qp = empty_qp(7);
  qp.c = vec({0, 0, 0, -0.75, 150, -0.02, 6});
  qp.A_eq = Eigen::MatrixXd::Zero(3, 7);
  qp.A_eq.row(0) << 1, 0, 0, 0.25, -60, -1.0 / 25, 9;
  qp.A_eq.row(1) << 0, 1, 0, 0.5, -90, -1.0 / 50, 3;
  qp.A_eq.row(2) << 0, 0, 1, 0, 0, 1, 0;
  qp.b_eq = vec({0, 0, 1});
  qp.lo = Eigen::VectorXd::Zero(7);
  qp.up = Eigen::VectorXd::Constant(7, kInf);
  // x = (0, 0, 1, 0, 0, 0, 0) is a degenerate vertex; every lower bound but x3's held.
  QpWorkingSet ws(0, 7);
  for (int j = 0; j < 7; ++j) ws.bound[j] = j == 2 ? QpBoundState::inactive : QpBoundState::at_lower;
  ws.x = vec({0, 0, 1, 0, 0, 0, 0});
  ws.has_point = true;
  for (int k : {10, 1, 0}) {
    DenseQpOptions opt;
    opt.degenerate_steps_before_bland = k;
    DenseQp s(DenseQpCapacity{7, 3, 0}, opt);
    ASSERT_EQ(s.solve(qp.view(), ws), Status::solved) << k;
    EXPECT_EQ(s.warm_start(), QpWarmStart::accepted);
    expect_kkt(qp, s);
    EXPECT_NEAR(s.objective(), -0.05, 1e-12) << k;
    EXPECT_LT(s.stats().iterations, 40) << k;
  }
}

// ---- infeasible and unbounded -------------------------------------------------------------------

TEST(DenseQpInfeasible, CertificateIsChecked) {
  {
    // x1 + x2 >= 3 on [0, 1]^2.
    Qp qp = empty_qp(2);
    qp.H = Eigen::MatrixXd::Identity(2, 2);
    qp.A_in = Eigen::MatrixXd(1, 2);
    qp.A_in << 1, 1;
    qp.b_in = vec({3});
    qp.lo = Eigen::VectorXd::Zero(2);
    qp.up = Eigen::VectorXd::Ones(2);
    DenseQp s(DenseQpCapacity{2, 1, 1});
    ASSERT_EQ(s.solve(qp.view()), Status::infeasible);
    expect_certificate(qp, s);
  }
  {
    // x1 - x2 = 1, x2 - x1 >= 0, free variables.
    Qp qp = empty_qp(2);
    qp.A_eq = Eigen::MatrixXd(1, 2);
    qp.A_eq << 1, -1;
    qp.b_eq = vec({1});
    qp.A_in = Eigen::MatrixXd(1, 2);
    qp.A_in << -1, 1;
    qp.b_in = vec({0});
    DenseQp s(DenseQpCapacity{2, 1, 1});
    ASSERT_EQ(s.solve(qp.view()), Status::infeasible);
    expect_certificate(qp, s);
  }
}

TEST(DenseQpInfeasible, RoundingLevelDataInAFreeColumn) {
  // x1 + cos(pi/2) x2 = 1 and x1 = 0 with x2 free (and x2 >= -5): the certificate (1, -1)
  // leaves g_2 = cos(pi/2) = 6e-17 on an unbounded variable, zero to rounding relative to
  // the column (the rule of verify_farkas). Seen with the Pang-Tedrake MIQP's data.
  Qp qp = empty_qp(2);
  qp.A_eq = Eigen::MatrixXd(2, 2);
  qp.A_eq << 1, std::cos(std::numbers::pi / 2), 1, 0;
  qp.b_eq = vec({1, 0});
  qp.A_in = Eigen::MatrixXd(1, 2);
  qp.A_in << 0, 1;
  qp.b_in = vec({-5});
  ASSERT_NE(qp.A_eq(0, 1), 0.0);
  DenseQp s(DenseQpCapacity{2, 2, 1});
  ASSERT_EQ(s.solve(qp.view()), Status::infeasible);
  expect_certificate(qp, s);
}

TEST(DenseQpInfeasible, VerifyRejectsCertificatesOfFeasibleProblemsThatOnlyRoundingPasses) {
  // Both found by fuzzing, each accepted before for a problem with a feasible point.
  {
    // x0, x1 >= 0, x2 free: -x0 - x1 >= 0, x2 >= 0.1 (x = (0, 0, 1) is feasible). With
    // u = (1, 1e-17) the gap is 1e-18 and so is every term of it: gap > tol * noise holds,
    // but it is rounding on the rows' scale. (A DenseQp repair walk produced such a u.)
    Qp qp = empty_qp(3);
    qp.A_in = Eigen::MatrixXd(2, 3);
    qp.A_in << -1, -1, 0, 0, 0, 1;
    qp.b_in = vec({0, 0.1});
    qp.lo = vec({0, 0, -kInf});
    qp.up = Eigen::VectorXd::Constant(3, kInf);
    EXPECT_FALSE(verify_qp_farkas(qp.view(), Eigen::VectorXd(0), vec({1, 1e-17})));
  }
  {
    // x free: x1 - e x0 >= v, -x1 >= 0, 100 x0 >= -1e6 (e = 1e-9, v = 1e-8; x = (-5000, 0)
    // is feasible). u = (1, 1, 0) leaves g_0 = -e on a free column: zero to tol relative to
    // the whole column (the 100 of the row u leaves out), but not rounding.
    const double e = 1e-9, v = 1e-8;
    Qp qp = empty_qp(2);
    qp.A_in = Eigen::MatrixXd(3, 2);
    qp.A_in << -e, 1, 0, -1, 100, 0;
    qp.b_in = vec({v, 0, -1e6});
    EXPECT_FALSE(verify_qp_farkas(qp.view(), Eigen::VectorXd(0), vec({1, 1, 0})));
    // Nor when the row with the 100 carries a multiplier of rounding size (found in review).
    EXPECT_FALSE(verify_qp_farkas(qp.view(), Eigen::VectorXd(0), vec({1, 1, 1e-17})));
    // The kernel does not call it infeasible. (Its phase-1 duals cannot see a reduced cost
    // of -e either: it ends numerical_failure, which it may on so ill-posed a problem.)
    DenseQp s(DenseQpCapacity{2, 0, 3});
    EXPECT_NE(s.solve(qp.view()), Status::infeasible);
    const Eigen::Vector2d x(-5000, 0);
    EXPECT_GE((qp.A_in * x - qp.b_in).minCoeff(), 0.0);
  }
}

TEST(DenseQpUnbounded, TheRaysStartIsCheckedRowByRow) {
  // qp_primal_residual, which an unbounded result's start point must pass as a solved point
  // does: x0 = 1e7 far out must not excuse x1 >= 1e-3 violated by 1e-3 (against a scale
  // from |x|_inf the violation is 1e-10, under the tolerance; found by fuzzing: an
  // infeasible problem reported unbounded from such a start).
  Qp qp = empty_qp(2);
  qp.A_in = Eigen::MatrixXd::Identity(2, 2);
  qp.b_in = vec({0, 1e-3});
  EXPECT_NEAR(qp_primal_residual(qp.view(), Eigen::Vector2d(1e7, 0)), 1e-3 / (1 + 1e-3), 1e-15);
  EXPECT_EQ(qp_primal_residual(qp.view(), Eigen::Vector2d(1e7, 1e-3)), 0.0);
  EXPECT_EQ(qp_primal_residual(qp.view(), Eigen::Vector3d(1, 1, 1)), std::numeric_limits<double>::infinity());
}

TEST(DenseQpUnbounded, RayIsChecked) {
  {
    // H = diag(1, 0, 0), c = (0, -1, 0), x2 - x3 <= 1: the ray (0, 1, 1).
    Qp qp = empty_qp(3);
    qp.H(0, 0) = 1;
    qp.c = vec({0, -1, 0});
    qp.A_in = Eigen::MatrixXd(1, 3);
    qp.A_in << 0, -1, 1;
    qp.b_in = vec({-1});
    DenseQp s(DenseQpCapacity{3, 0, 1});
    ASSERT_EQ(s.solve(qp.view()), Status::unbounded);
    expect_ray(qp, s);
    EXPECT_NEAR(s.ray()[1], 1.0, 1e-12);
    EXPECT_NEAR(s.ray()[2], 1.0, 1e-12);
  }
  {
    // Dense rank-one H = [1 1; 1 1], c = (1, -1), x2 >= 0: ray (-1, 1) with H d = 0.
    Qp qp = empty_qp(2);
    qp.H << 1, 1, 1, 1;
    qp.c = vec({1, -1});
    qp.lo = vec({-kInf, 0});
    qp.up = vec({kInf, kInf});
    DenseQp s(DenseQpCapacity{2, 0, 0});
    ASSERT_EQ(s.solve(qp.view()), Status::unbounded);
    expect_ray(qp, s);
  }
  {
    // H = 0 with a bounded-below LP direction blocked and another one open.
    Qp qp = empty_qp(2);
    qp.c = vec({-1, -1});
    qp.A_in = Eigen::MatrixXd(2, 2);
    qp.A_in << -1, 1, 1, -1;
    qp.b_in = vec({-1, -4});
    qp.lo = vec({0, 0});
    qp.up = vec({kInf, kInf});
    DenseQp s(DenseQpCapacity{2, 0, 2});
    ASSERT_EQ(s.solve(qp.view()), Status::unbounded);
    expect_ray(qp, s);
  }
  {
    // Bounded in the curved variables, unbounded in a variable H does not touch, reached
    // only after the curved part is optimal: min (x1-1)^2 - x3 s.t. x3 <= 2 x2, x2 free.
    Qp qp = empty_qp(3);
    qp.H(0, 0) = 2;
    qp.c = vec({-2, 0, -1});
    qp.A_in = Eigen::MatrixXd(1, 3);
    qp.A_in << 0, 2, -1;
    qp.b_in = vec({0});
    DenseQp s(DenseQpCapacity{3, 0, 1});
    ASSERT_EQ(s.solve(qp.view()), Status::unbounded);
    expect_ray(qp, s);
  }
}

TEST(DenseQpUnbounded, ARayIsJudgedInAnyUnitsOfTheVariables) {
  // min y s.t. y >= k theta, y >= -k theta (a box on its two corners, lever arms k): bounded,
  // at y = 0. Pushing it down, d = (-1, 0), violates both rows by 1; against the rows'
  // largest entries (k = 2^40 * 0.05 in lengths 2^40) that was rounding, and d passed for
  // a ray. Judged with each variable in units where its column is near 1, in no units.
  for (int a : {0, 20, 40}) {
    const double k = std::ldexp(0.05, a);
    Qp qp = empty_qp(2);
    qp.c = vec({1, 0});
    qp.A_in = Eigen::MatrixXd(2, 2);
    qp.A_in << 1, -k, 1, k;
    qp.b_in = vec({0, 0});
    EXPECT_FALSE(verify_qp_ray(qp.view(), vec({-1, 0}))) << "2^" << a;
    DenseQp s(DenseQpCapacity{2, 0, 2});
    const Status st = s.solve(qp.view());
    // Never `unbounded`. (In lengths 2^40 the kernel's own ratio test, Euclidean, does not
    // see the rows block d and it refuses the problem: AnitescuQp solves it in scaled
    // variables then.)
    EXPECT_TRUE(st == Status::solved || (a == 40 && st == Status::numerical_failure)) << "2^" << a << ": " << to_string(st);
  }
  // A ray stays one in any units: H = diag(1, 0, 0), c = (0, -1, 0), x2 - x3 <= 1, ray
  // (0, 1, 1), with x2 in units 2^-40 and 2^40 times as large.
  for (int a : {-40, 0, 40}) {
    const double f = std::ldexp(1.0, a);
    Qp qp = empty_qp(3);
    qp.H(0, 0) = 1;
    qp.c = vec({0, -1 / f, 0});
    qp.A_in = Eigen::MatrixXd(1, 3);
    qp.A_in << 0, -1 / f, 1;
    qp.b_in = vec({-1});
    EXPECT_TRUE(verify_qp_ray(qp.view(), vec({0, f, 1}))) << "2^" << a;
    EXPECT_FALSE(verify_qp_ray(qp.view(), vec({0, -f, -1}))) << "2^" << a;
    EXPECT_FALSE(verify_qp_ray(qp.view(), vec({0, f, 0}))) << "2^" << a;  // leaves the row
  }
}

// ---- bad input ----------------------------------------------------------------------------------

TEST(DenseQpBadInput, SizesValuesCapacityAndHessian) {
  Qp qp = empty_qp(2);
  qp.H = Eigen::MatrixXd::Identity(2, 2);
  qp.A_in = Eigen::MatrixXd(1, 2);
  qp.A_in << 1, 1;
  qp.b_in = vec({0});
  DenseQp s(DenseQpCapacity{2, 1, 1});
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  const auto bad = [&](Qp q) {
    EXPECT_EQ(s.solve(q.view()), Status::bad_input);
    EXPECT_EQ(s.status(), Status::bad_input);
    EXPECT_EQ(s.x().size(), 0);
  };
  {
    Qp q = qp;
    q.c = vec({1, 2, 3});
    bad(q);
  }
  {
    Qp q = qp;
    q.b_in = vec({0, 1});
    bad(q);
  }
  {
    Qp q = qp;
    q.A_in = Eigen::MatrixXd::Ones(1, 3);
    bad(q);
  }
  {
    Qp q = qp;
    q.lo = vec({0});
    q.up = vec({1});
    bad(q);
  }
  {
    Qp q = qp;
    q.H(0, 1) = std::numeric_limits<double>::quiet_NaN();
    bad(q);
  }
  {
    Qp q = qp;
    q.c[1] = kInf;
    bad(q);
  }
  {
    Qp q = qp;
    q.b_in[0] = std::numeric_limits<double>::quiet_NaN();
    bad(q);
  }
  {
    Qp q = qp;
    q.lo = vec({0, 2});
    q.up = vec({1, 1});  // lower > upper
    bad(q);
  }
  {
    Qp q = qp;
    q.lo = vec({kInf, 0});
    q.up = vec({kInf, 1});
    bad(q);
  }
  {
    Qp q = qp;
    q.H(0, 1) = 0.5;  // not symmetric
    bad(q);
  }
  {
    Qp q = qp;
    q.H << 1, 2, 2, 1;  // symmetric, indefinite
    bad(q);
  }
  {
    Qp q = qp;
    q.H << 0, 1, 1, 0;  // zero diagonal, indefinite
    bad(q);
  }
  {
    Qp q = qp;
    q.H << -1, 0, 0, 0;
    bad(q);
  }
  {
    Qp q = empty_qp(3);  // over the capacity
    bad(q);
  }
  {
    Qp q = qp;
    q.A_in = Eigen::MatrixXd::Ones(2, 2);
    q.b_in = vec({0, 0});
    bad(q);
  }
  {
    Qp q = empty_qp(0);
    bad(q);
  }
  // The PSD check can be turned off; the matrix is still checked for symmetry.
  s.options().check_psd = false;
  Qp q = qp;
  q.H(0, 1) = 0.5;
  bad(q);
}

// ---- warm starts --------------------------------------------------------------------------------

/// A random feasible, bounded QP (all variables boxed) with PSD H of the given rank.
Qp random_qp(std::mt19937_64& rng, int n, int me, int mi, int rank, bool box = true) {
  std::uniform_real_distribution<double> u(-1, 1), pos(0, 1);
  Qp qp = empty_qp(n);
  Eigen::MatrixXd J(rank, n);
  for (int i = 0; i < rank; ++i)
    for (int j = 0; j < n; ++j) J(i, j) = u(rng);
  qp.H = J.transpose() * J;
  qp.H = 0.5 * (qp.H + qp.H.transpose()).eval();
  for (int j = 0; j < n; ++j) qp.c[j] = u(rng);
  Eigen::VectorXd x0(n);
  for (int j = 0; j < n; ++j) x0[j] = u(rng);
  qp.A_eq = Eigen::MatrixXd(me, n);
  qp.A_in = Eigen::MatrixXd(mi, n);
  for (int i = 0; i < me; ++i)
    for (int j = 0; j < n; ++j) qp.A_eq(i, j) = u(rng);
  for (int i = 0; i < mi; ++i)
    for (int j = 0; j < n; ++j) qp.A_in(i, j) = u(rng);
  qp.b_eq = qp.A_eq * x0;
  qp.b_in = qp.A_in * x0;
  for (int i = 0; i < mi; ++i) qp.b_in[i] -= i % 4 == 0 ? 0.0 : pos(rng);  // some tight at x0
  if (box) {
    qp.lo = Eigen::VectorXd::Constant(n, -2);
    qp.up = Eigen::VectorXd::Constant(n, 2);
  }
  return qp;
}

TEST(DenseQpKkt, OneHugeEntryDoesNotExcuseAViolationElsewhere) {
  // min 0 s.t. x0 + x1 = 1, x2 >= 1, x0 free, x1, x2 >= 0. At x = (1e13, 1 - 1e13, 0.7)
  // the equality holds, but x1 >= 0 fails by 1e13 and x2 >= 1 by 0.3 in a row without the
  // huge entries: a scale from |x|_inf (2e13) would call that point feasible to 1e-14.
  // (Found in review: a QP that drifted along a cost-free variable reported such a point as
  // solved.)
  Qp qp = empty_qp(3);
  qp.A_eq = Eigen::MatrixXd{{1, 1, 0}};
  qp.b_eq = Eigen::VectorXd::Ones(1);
  qp.A_in = Eigen::MatrixXd{{0, 0, 1}};
  qp.b_in = Eigen::VectorXd::Ones(1);
  const double inf = std::numeric_limits<double>::infinity();
  qp.lo = vec({-inf, 0, 0});
  qp.up = vec({inf, inf, inf});
  const Eigen::VectorXd y = Eigen::VectorXd::Zero(1), z = Eigen::VectorXd::Zero(1), w = Eigen::VectorXd::Zero(3);
  EXPECT_LE(qp_kkt_residual(qp.view(), vec({0.25, 0.75, 1.0}), y, z, w), 1e-15);
  EXPECT_GE(qp_kkt_residual(qp.view(), vec({0.25, 0.75, 0.7}), y, z, w), 0.1);
  EXPECT_GE(qp_kkt_residual(qp.view(), vec({1e13, 1.0 - 1e13, 1.0}), y, z, w), 1.0);   // the bound
  EXPECT_GE(qp_kkt_residual(qp.view(), vec({1e13, 1.0 - 1e13, 0.7}), y, z, w), 0.1);   // and the row
  // x0 = 1e13 with x1 = 0 breaks the equality by 1e13 - 1, relative to its own terms ~1.
  EXPECT_GE(qp_kkt_residual(qp.view(), vec({1e13, 0.0, 1.0}), y, z, w), 0.5);
}

TEST(DenseQpWarmStart, SameProblemChildAndStaleSets) {
  std::mt19937_64 rng(21);
  const Qp qp = random_qp(rng, 40, 4, 60, 6);
  DenseQp s(DenseQpCapacity{40, 8, 64});
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  EXPECT_EQ(s.warm_start(), QpWarmStart::not_requested);
  expect_kkt(qp, s);
  const double cold_obj = s.objective();
  const int cold_iterations = s.stats().iterations;
  const QpWorkingSet opt_set = s.working_set();
  const Eigen::VectorXd xopt = s.x();

  // The same problem from its optimal set: accepted, no iteration, the same point.
  ASSERT_EQ(s.solve(qp.view(), opt_set), Status::solved);
  EXPECT_EQ(s.warm_start(), QpWarmStart::accepted);
  EXPECT_EQ(s.stats().iterations, 0);
  EXPECT_EQ(s.phase1_pivots(), 0);
  expect_kkt(qp, s);
  EXPECT_LE((s.x() - xopt).cwiseAbs().maxCoeff(), 1e-10);

  // A child: one more equality row fixing a variable between its bounds, and a fixed bound.
  // Whatever the warm start's fate, the answer must be the child's optimum (cross-checked
  // against a cold solve of the child).
  int fix = 0;
  for (int j = 0; j < qp.n(); ++j)
    if (std::abs(xopt[j]) < 1.9) fix = j;
  Qp child = qp;
  child.A_eq.conservativeResize(qp.A_eq.rows() + 1, Eigen::NoChange);
  child.A_eq.row(qp.A_eq.rows()).setZero();
  child.A_eq(qp.A_eq.rows(), fix) = 1.0;
  child.b_eq.conservativeResize(qp.b_eq.size() + 1);
  child.b_eq[qp.b_eq.size()] = std::round(xopt[fix]);
  ASSERT_EQ(s.solve(child.view()), Status::solved);
  const double child_obj = s.objective();
  const int child_cold_iterations = s.stats().iterations + s.phase1_pivots();
  ASSERT_EQ(s.solve(child.view(), opt_set), Status::solved);
  expect_kkt(child, s);
  EXPECT_NEAR(s.objective(), child_obj, 1e-9 * (1 + std::abs(child_obj)));
  EXPECT_GE(s.objective(), cold_obj - 1e-9);
  EXPECT_EQ(s.warm_start(), QpWarmStart::accepted);
  EXPECT_EQ(s.phase1_pivots(), 0);
  EXPECT_LT(s.stats().iterations, child_cold_iterations);
  // The same child by bounds (lower = upper) instead of a row.
  Qp child_b = qp;
  child_b.lo[fix] = child_b.up[fix] = std::round(xopt[fix]);
  ASSERT_EQ(s.solve(child_b.view(), opt_set), Status::solved);
  expect_kkt(child_b, s);
  EXPECT_NEAR(s.objective(), child_obj, 1e-9 * (1 + std::abs(child_obj)));
  EXPECT_EQ(s.warm_start(), QpWarmStart::accepted);

  // A stale set without a point, holding every row active at once: its equality-QP point
  // violates the problem, so the solve falls back to a cold start.
  QpWorkingSet stale = opt_set;
  for (int i = 0; i < stale.rows; ++i) stale.active[i] = 1;
  stale.has_point = false;
  ASSERT_EQ(s.solve(qp.view(), stale), Status::solved);
  EXPECT_EQ(s.warm_start(), QpWarmStart::rejected_infeasible);
  EXPECT_GT(s.phase1_pivots(), 0);
  expect_kkt(qp, s);
  EXPECT_NEAR(s.objective(), cold_obj, 1e-9 * (1 + std::abs(cold_obj)));
  // The same with its point: the rows not active there are ignored, the rest is the optimum.
  stale.has_point = true;
  ASSERT_EQ(s.solve(qp.view(), stale), Status::solved);
  EXPECT_EQ(s.warm_start(), QpWarmStart::accepted);
  EXPECT_EQ(s.stats().iterations, 0);
  expect_kkt(qp, s);
  // Infeasible children (sum x = +-1000, or sum x >= 1000, in the box [-2, 2]^n): the
  // repair walk meets the upper (lower) bounds until the new row's normal depends on them
  // with multipliers of the wrong sign. That is the proof: no phase-1 LP, and the Farkas
  // vector passes the same check as the LP's.
  for (const double target : {1000.0, -1000.0}) {
    Qp bad = qp;
    bad.A_eq.conservativeResize(qp.A_eq.rows() + 1, Eigen::NoChange);
    bad.A_eq.row(qp.A_eq.rows()).setOnes();
    bad.b_eq.conservativeResize(qp.b_eq.size() + 1);
    bad.b_eq[qp.b_eq.size()] = target;
    ASSERT_EQ(s.solve(bad.view(), opt_set), Status::infeasible);
    EXPECT_EQ(s.warm_start(), QpWarmStart::rejected_infeasible);
    EXPECT_EQ(s.phase1_pivots(), 0);
    expect_certificate(bad, s);
    // The same from a cold start: the LP proves it.
    ASSERT_EQ(s.solve(bad.view()), Status::infeasible);
    EXPECT_GT(s.phase1_pivots(), 0);
    expect_certificate(bad, s);
  }
  {
    Qp bad = qp;
    bad.A_in.conservativeResize(qp.A_in.rows() + 1, Eigen::NoChange);
    bad.A_in.row(qp.A_in.rows()).setOnes();
    bad.b_in.conservativeResize(qp.b_in.size() + 1);
    bad.b_in[qp.b_in.size()] = 1000;
    ASSERT_EQ(s.solve(bad.view(), opt_set), Status::infeasible);
    EXPECT_EQ(s.phase1_pivots(), 0);
    expect_certificate(bad, s);
  }
  // A set for another problem size: rejected, cold start.
  QpWorkingSet other(10, 10);
  ASSERT_EQ(s.solve(qp.view(), other), Status::solved);
  EXPECT_EQ(s.warm_start(), QpWarmStart::rejected_invalid);
  EXPECT_NEAR(s.objective(), cold_obj, 1e-9 * (1 + std::abs(cold_obj)));
  // A set without a point (the origin is projected onto W).
  QpWorkingSet no_point = opt_set;
  no_point.has_point = false;
  ASSERT_EQ(s.solve(qp.view(), no_point), Status::solved);
  expect_kkt(qp, s);
  EXPECT_NEAR(s.objective(), cold_obj, 1e-9 * (1 + std::abs(cold_obj)));
  EXPECT_GE(cold_iterations, 0);
}

TEST(DenseQpWarmStart, AGuessedPointFromMovedDataKeepsItsWholeSet) {
  // The last time step's answer in this step's data (the MIQP's warm root): the active rows'
  // right-hand sides moved a little, so the old point leaves some of them slack. As a plain
  // point, those rows are not active there and are left out of W (phase 2 must find them
  // again); as a guess (point_is_guess) every listed row joins W and the point is projected
  // onto W: the new optimum at once, when the active set did not change.
  std::mt19937_64 rng(7);
  const Qp qp = random_qp(rng, 40, 4, 60, 6);
  DenseQp s(DenseQpCapacity{40, 8, 64});
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  const QpWorkingSet opt_set = s.working_set();
  int loosened = 0;
  Qp moved = qp;
  for (int i = 0; i < opt_set.rows; ++i) {
    if (!opt_set.active[i]) continue;
    moved.b_in[i] -= 1e-4 * (1 + i % 3);  // the old point is now strictly inside these rows
    ++loosened;
  }
  ASSERT_GT(loosened, 0);
  ASSERT_EQ(s.solve(moved.view()), Status::solved);
  const double cold_obj = s.objective();
  const Eigen::VectorXd cold_x = s.x();

  QpWorkingSet plain = opt_set;  // has_point: the old optimum
  ASSERT_TRUE(plain.has_point);
  ASSERT_EQ(s.solve(moved.view(), plain), Status::solved);
  EXPECT_EQ(s.warm_start(), QpWarmStart::accepted);
  const int plain_iterations = s.stats().iterations;
  EXPECT_GE(plain_iterations, loosened);  // each dropped row joins W again by an iteration
  expect_kkt(moved, s);

  QpWorkingSet guess = opt_set;
  guess.point_is_guess = true;
  ASSERT_EQ(s.solve(moved.view(), guess), Status::solved);
  EXPECT_EQ(s.warm_start(), QpWarmStart::accepted);
  EXPECT_EQ(s.stats().iterations, 0);
  EXPECT_EQ(s.phase1_pivots(), 0);
  expect_kkt(moved, s);
  EXPECT_NEAR(s.objective(), cold_obj, 1e-9 * (1 + std::abs(cold_obj)));
  EXPECT_LE((s.x() - cold_x).cwiseAbs().maxCoeff(), 1e-8);

  // A guess far off (every row listed active): neither its projection nor the minimizer on
  // that W is feasible, so the usual warm start follows (rows the point does not hold are
  // left out), and the answer is still the optimum.
  QpWorkingSet far = opt_set;
  for (int i = 0; i < far.rows; ++i) far.active[i] = 1;
  far.point_is_guess = true;
  ASSERT_EQ(s.solve(moved.view(), far), Status::solved);
  EXPECT_EQ(s.warm_start(), QpWarmStart::accepted);
  EXPECT_EQ(s.stats().iterations, plain_iterations);  // the plain start's path, not the guess's
  expect_kkt(moved, s);
  EXPECT_NEAR(s.objective(), cold_obj, 1e-9 * (1 + std::abs(cold_obj)));
}

TEST(DenseQpWarmStart, AGuessedStartMustHoldEveryRowAsTheFinalCheckMeasuresIt) {
  // Found by fuzzing the guess: row 0 (0 >= 6e-5) makes the problem empty, but against the
  // global scale (rows up to 6e3, |x| ~ 100) a violation of 6e-5 passed, the guess's start
  // was accepted and phase 2 cycled to the iteration limit. Row by row the start is
  // rejected, and the answer is the cold solve's: infeasible, with a valid certificate.
  const double inf = kInf;
  Qp qp = empty_qp(6);
  const double upper_h[6][6] = {{0.008, -5e-6, 1e-4, 1, -0.03, -10},  {0, 1.3e-4, -4e-5, -1, 0.007, 2},
                                {0, 0, 9.2e-5, -0.2, -0.007, 1},       {0, 0, 0, 3e5, 80, -1e5},
                                {0, 0, 0, 0, 2.4, 200},                {0, 0, 0, 0, 0, 8e5}};
  for (int i = 0; i < 6; ++i)
    for (int j = i; j < 6; ++j) qp.H(i, j) = qp.H(j, i) = upper_h[i][j];
  qp.c = vec({-0.1, 0, 0, 0, 0, 0});
  qp.A_in = Eigen::MatrixXd{{0, 0, 0, 0, 0, 0}, {-0.9, 0.06, 0.1, 6000, -10, 6000}, {0.03, 0.007, 0.007, 400, 1, -200}};
  qp.b_in = vec({6e-5, -60, -5});
  qp.lo = vec({-inf, -inf, -inf, -inf, -4, -inf});
  qp.up = vec({inf, inf, inf, inf, 4, inf});
  DenseQp s(DenseQpCapacity{6, 0, 3});
  ASSERT_EQ(s.solve(qp.view()), Status::infeasible);
  QpWorkingSet guess(3, 6);
  guess.x.head(6) = vec({-40, 100, -60, -0.006, -3, -0.004});
  guess.has_point = true;
  guess.point_is_guess = true;
  s.options().max_iterations = 100000;  // not a slow phase 2: a cycling one
  ASSERT_EQ(s.solve(qp.view(), guess), Status::infeasible);
  expect_certificate(qp, s);
  EXPECT_LT(s.stats().iterations, 100);
}

TEST(DenseQpWarmStart, AWarmPhase2AtTheIterationLimitIsRetriedCold) {
  // Phase 2 from a warm start that cycles to the limit gets the cold attempt a final check's
  // failure gets (here the limit is simply small, so the cold attempt stops there too).
  std::mt19937_64 rng(5);
  const Qp qp = random_qp(rng, 30, 0, 40, 30);
  DenseQp s(DenseQpCapacity{30, 0, 40});
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  const QpWorkingSet opt_set = s.working_set();
  Qp turned = qp;  // the same constraints, the cost turned around: the optimum is far off
  turned.c = -qp.c;
  ASSERT_EQ(s.solve(turned.view(), opt_set), Status::solved);
  ASSERT_EQ(s.warm_start(), QpWarmStart::accepted);
  ASSERT_GT(s.stats().iterations, 2);
  s.options().max_iterations = 2;
  ASSERT_EQ(s.solve(turned.view(), opt_set), Status::iteration_limit);
  EXPECT_EQ(s.warm_start(), QpWarmStart::abandoned);
  EXPECT_TRUE(s.stats().has_point);
  EXPECT_GE((turned.A_in * s.x() - turned.b_in).minCoeff(), -1e-9);
}

TEST(DenseQpWarmStart, TheColdRetryAfterACyclingPhase2HasItsOwnIterationBudget) {
  // Found by fuzzing the guess (tests/data/dense_qp/guess_cycles.json): from this guessed
  // start phase 2 cycles to the iteration limit. The cold retry solves it, but only with
  // a budget of its own: it used to inherit the spent count and stop at once.
  std::ifstream in(std::string(QUASISTEP_SOURCE_DIR) + "/tests/data/dense_qp/guess_cycles.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json j = nlohmann::json::parse(in);
  const int n = static_cast<int>(j["c"].size()), mi = static_cast<int>(j["b_in"].size());
  Qp qp = empty_qp(n);
  qp.A_in = Eigen::MatrixXd(mi, n);
  qp.b_in = Eigen::VectorXd(mi);
  for (int r = 0; r < n; ++r) {
    qp.c[r] = j["c"][r].get<double>();
    for (int k = 0; k < n; ++k) qp.H(r, k) = j["H"][r][k].get<double>();
  }
  for (int i = 0; i < mi; ++i) {
    qp.b_in[i] = j["b_in"][i].get<double>();
    for (int k = 0; k < n; ++k) qp.A_in(i, k) = j["A_in"][i][k].get<double>();
  }
  QpWorkingSet guess(mi, n);
  for (int k = 0; k < n; ++k) guess.x[k] = j["x"][k].get<double>();
  for (const auto& i : j["active"]) guess.active[i.get<int>()] = 1;
  guess.has_point = true;
  guess.point_is_guess = true;
  DenseQp s(DenseQpCapacity{n, 0, mi});
  ASSERT_EQ(s.solve(qp.view(), guess), Status::solved);
  EXPECT_EQ(s.warm_start(), QpWarmStart::abandoned);  // the cold retry's answer
  expect_kkt(qp, s);
  const double expected = j["objective"].get<double>();
  EXPECT_NEAR(s.objective(), expected, 1e-9 * std::abs(expected));
}

TEST(DenseQpWarmStart, SemidefiniteOptimumWithTemporaryConstraints) {
  // A rank-2 H on 30 free variables with few rows: the optimum's working set leaves Z'HZ
  // singular, so a warm start needs temporary constraints at the given point, and still
  // takes no iteration.
  std::mt19937_64 rng(4);
  Qp qp = random_qp(rng, 30, 2, 6, 2, false);
  qp.lo = Eigen::VectorXd::Constant(30, -5);
  qp.up = Eigen::VectorXd::Constant(30, 5);
  for (int j = 0; j < 30; j += 2) qp.c[j] = 0;  // half the variables: flat directions
  DenseQp s(DenseQpCapacity{30, 2, 6});
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  expect_kkt(qp, s);
  const QpWorkingSet ws = s.working_set();
  const double obj = s.objective();
  ASSERT_EQ(s.solve(qp.view(), ws), Status::solved);
  EXPECT_EQ(s.warm_start(), QpWarmStart::accepted);
  EXPECT_LE(s.stats().iterations, 2);
  expect_kkt(qp, s);
  EXPECT_NEAR(s.objective(), obj, 1e-9 * (1 + std::abs(obj)));
}

TEST(DenseQpWarmStart, RepairOfAnEqualityAlreadyHeldIsNotAWalk) {
  // A node of the Pang & Tedrake 2018 cylinder grasp's MIQP (examples/pang_tedrake_grasp.json, stage
  // 1), exact to the bit: its new fixing upper_14 = 0 makes Gamma of contact 0 a fixed
  // variable, at 1e-3 in the parent's point.
  // The repair walk reaches it at rounding level while it depends on the working set; it
  // used to step back into the inequality it had just given up, re-add it and give it up
  // again until the step limit, then start cold (a third of the MIQP's warm starts).
  const auto sparse = [](int rows, int cols, std::initializer_list<std::tuple<int, int, double>> entries) {
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(rows, cols);
    for (const auto& [i, j, v] : entries) M(i, j) = v;
    return M;
  };
  Qp qp;
  qp.H = sparse(17, 17, {{2, 2, 0x1p+1}, {3, 3, 0x1p+1}, {4, 4, 0x1p+1}});
  qp.c = vec({0x0p+0,0x0p+0,-0x1.0624dd2f1a9fcp-9,0x1.0624dd2f1a9fcp-9,-0x1.0624dd2f1a9fcp-9,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0});
  qp.A_eq = sparse(2, 17, {{0, 5, 0x1p+0}, {0, 6, -0x1p+0}, {0, 10, -0x1p+0}, {0, 13, 0x1p+0}, {1, 7, 0x1p+0}, {1, 8, 0x1p+0}, {1, 9, -0x1p+0}, {1, 11, -0x1p+0}, {1, 12, 0x1p+0}});
  qp.b_eq = vec({-0x0p+0,0x1.91d14e3bcd35bp-4});
  qp.A_in = sparse(15, 17, {{0, 0, 0x1p+0}, {0, 2, -0x1p+0}, {1, 0, -0x1p+0}, {1, 3, 0x1p+0}, {2, 1, 0x1p+0}, {3, 1, 0x1p+0}, {3, 4, -0x1p+0}, {3, 14, 0x1p+0}, {4, 1, -0x1p+0}, {4, 4, 0x1p+0}, {4, 15, 0x1p+0}, {5, 0, -0x1p+0}, {5, 16, 0x1p+0}, {6, 1, -0x1p+0}, {6, 4, 0x1p+0}, {6, 14, 0x1p+0}, {7, 1, 0x1p+0}, {7, 4, -0x1p+0}, {7, 15, 0x1p+0}, {8, 0, 0x1p+0}, {8, 16, 0x1p+0}, {9, 5, 0x1p-1}, {9, 8, -0x1p+0}, {9, 11, -0x1p+0}, {10, 6, 0x1p-1}, {10, 9, -0x1p+0}, {10, 12, -0x1p+0}, {11, 7, 0x1p-1}, {11, 10, -0x1p+0}, {11, 13, -0x1p+0}, {12, 0, 0x1p+0}, {12, 5, 0x1.47ae147ae147bp-7}, {13, 0, -0x1p+0}, {13, 6, 0x1.47ae147ae147bp-7}, {14, 1, 0x1p+0}, {14, 7, 0x1.47ae147ae147bp-7}});
  qp.b_in = vec({-0x0p+0,-0x0p+0,-0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x1.0624dd2f1a9fcp-10,0x1.0624dd2f1a9fcp-10,-0x0p+0});
  qp.lo = vec({-kInf,-kInf,-kInf,-kInf,-kInf,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0});
  qp.up = vec({kInf,kInf,kInf,kInf,kInf,kInf,kInf,kInf,kInf,kInf,kInf,kInf,kInf,kInf,0x0p+0,kInf,kInf});
  // The parent's answer: its point and working set.
  QpWorkingSet ws(15, 17);
  const std::vector<int> active = {1,1,0,1,0,0,0,1,0,0,0,0,1,1,0};
  const std::vector<int> bound = {0,0,0,0,0,0,0,0,1,1,1,1,1,1,0,0,1};
  for (int i = 0; i < 15; ++i) ws.active[i] = static_cast<std::uint8_t>(active[i]);
  for (int j = 0; j < 17; ++j) ws.bound[j] = static_cast<QpBoundState>(bound[j]);
  ws.x = vec({0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x1.0624dd2f1a9fdp-10,0x1.999999999999ap-4,0x1.999999999999ap-4,0x1.91d14e3bcd35bp-4,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x0p+0,0x1.0624dd2f1a9fdp-10,0x1.0624dd2f1a9fcp-10,0x0p+0});
  ws.has_point = true;

  DenseQp s(DenseQpCapacity{17, 2, 15});
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  const double cold = s.objective();
  ASSERT_EQ(s.solve(qp.view(), ws), Status::solved);
  EXPECT_EQ(s.warm_start(), QpWarmStart::accepted);
  EXPECT_EQ(s.phase1_pivots(), 0);
  expect_kkt(qp, s);
  EXPECT_NEAR(s.objective(), cold, 1e-12);
}

// ---- random problems ----------------------------------------------------------------------------

// ---- hot start -----------------------------------------------------------------------------------

/// A branch-and-bound child of qp: inequality row i held as an equality (appended after the
/// equalities), or variable j fixed at its lower bound.
Qp with_row_fixed(const Qp& qp, int i) {
  Qp c = qp;
  c.A_eq.conservativeResize(qp.A_eq.rows() + 1, Eigen::NoChange);
  c.A_eq.row(qp.A_eq.rows()) = qp.A_in.row(i);
  c.b_eq.conservativeResize(qp.b_eq.size() + 1);
  c.b_eq[qp.b_eq.size()] = qp.b_in[i];
  return c;
}
Qp with_var_fixed(const Qp& qp, int j) {
  Qp c = qp;
  c.up[j] = c.lo[j];
  return c;
}

/// Solves child hot on `hot` (whose last solve was the problem the map refers to) and cold
/// on a fresh solver: the same status, and when solved the same optimum, both checked.
void expect_hot_as_cold(DenseQp& hot, const Qp& child, const QpWarmStart& expected, const std::vector<int>& eq_map,
                        const QpWorkingSet& parent_ws) {
  DenseQp cold(DenseQpCapacity{96, 16, 200});
  const Status sc = cold.solve(child.view());
  const Status sh = hot.solve_hot(child.view(), parent_ws, eq_map.data());
  ASSERT_EQ(sh, sc);
  if (sc != Status::solved) return;  // infeasible: proved by the hot repair walk or cold
  EXPECT_EQ(hot.warm_start(), expected);
  expect_kkt(child, hot);
  EXPECT_NEAR(hot.objective(), cold.objective(), 1e-9 * (1 + std::abs(cold.objective())));
}

TEST(DenseQpHotStart, ChildrenAndSiblingsFromTheLastFactorization) {
  // A parent, its child holding row i, then the sibling fixing variable j instead (the row
  // gone: map -1), each started hot from the solver's previous solve.
  std::mt19937_64 rng(20261124);
  int hot_used = 0;
  for (int n : {8, 17, 40}) {
    for (int trial = 0; trial < 6; ++trial) {
      SCOPED_TRACE(testing::Message() << "n " << n << " trial " << trial);
      const int me = trial % 3 == 0 ? 0 : 2, mi = n + 10;
      const Qp parent = random_qp(rng, n, me, mi, trial % 2 ? n : n / 3);
      DenseQp qp(DenseQpCapacity{96, 16, 200});
      ASSERT_EQ(qp.solve(parent.view()), Status::solved);
      const QpWorkingSet ws = qp.working_set();
      // Fix an inactive row (the point must move) and a variable off its bound.
      int i = 0, j = 0;
      for (int k = 0; k < mi; ++k)
        if (!ws.active[k]) i = k;
      for (int k = 0; k < n; ++k)
        if (ws.bound[k] == QpBoundState::inactive) j = k;
      std::vector<int> identity(me + 1);
      for (int k = 0; k <= me; ++k) identity[k] = k;
      const Qp child = with_row_fixed(parent, i);
      expect_hot_as_cold(qp, child, QpWarmStart::hot, identity, ws);
      if (qp.status() != Status::solved) continue;
      ++hot_used;
      // The sibling: the child's appended row is gone, variable j is fixed instead.
      std::vector<int> drop_last = identity;
      drop_last[me] = -1;
      expect_hot_as_cold(qp, with_var_fixed(parent, j), QpWarmStart::hot, drop_last, ws);
    }
  }
  EXPECT_GE(hot_used, 12);
}

TEST(DenseQpHotStart, SiblingsOfEmptyChildrenStartWhereTheProofStopped) {
  // A branch-and-bound's empty child (here: variable j held by an equality row beyond its
  // box) is proved so by the hot repair walk; its sibling (row i fixed instead) then
  // starts hot from where that walk stopped, and agrees with a cold solve.
  std::mt19937_64 rng(99);
  int proved = 0, hot_after = 0;
  for (int n : {8, 17, 40}) {
    for (int trial = 0; trial < 6; ++trial) {
      SCOPED_TRACE(testing::Message() << "n " << n << " trial " << trial);
      const int mi = n + 10;
      const Qp parent = random_qp(rng, n, 0, mi, trial % 2 ? n : n / 3);
      DenseQp qp(DenseQpCapacity{96, 16, 200});
      ASSERT_EQ(qp.solve(parent.view()), Status::solved);
      const QpWorkingSet ws = qp.working_set();
      Qp empty = parent;
      const int j = trial % n;
      empty.A_eq = Eigen::MatrixXd::Zero(1, n);
      empty.A_eq(0, j) = 1.0;
      empty.b_eq = vec({3.0});  // the box is [-2, 2]
      ASSERT_EQ(qp.solve_hot(empty.view(), ws, nullptr), Status::infeasible);
      const bool by_repair = qp.warm_start() == QpWarmStart::rejected_infeasible;
      proved += by_repair;
      const std::vector<int> gone{-1};
      int i = 0;
      for (int k = 0; k < mi; ++k)
        if (!ws.active[k]) i = k;
      expect_hot_as_cold(qp, with_row_fixed(parent, i), by_repair ? QpWarmStart::hot : QpWarmStart::accepted, gone,
                         ws);
      hot_after += qp.warm_start() == QpWarmStart::hot;
    }
  }
  EXPECT_GE(proved, 12);
  EXPECT_GE(hot_after, 12);
}

TEST(DenseQpHotStart, AnEqualityShadowedByAnInequalityOfWTakesItsPlace) {
  // min x0 + x1/2 on the box [-2, 2]^2 with x0 >= 0: row 0 active at (0, -2). The child
  // holds row 0 as an equality, whose normal the hot W already has as that inequality: the
  // equality must replace it, or the next node (cost -x0 instead of x0: the inequality's
  // multiplier turns negative) drops it and walks off x0 = 0. Likewise a variable fixed at
  // the upper bound W holds. (Found in review: the check caught it, three refactorizations
  // and a cold start later.)
  Qp parent = empty_qp(2);
  parent.c = vec({1.0, 0.5});
  parent.A_in = Eigen::MatrixXd{{1.0, 0.0}};
  parent.b_in = vec({0.0});
  parent.lo = vec({-2.0, -2.0});
  parent.up = vec({2.0, 2.0});
  DenseQp qp(DenseQpCapacity{4, 4, 4});
  ASSERT_EQ(qp.solve(parent.view()), Status::solved);
  QpWorkingSet ws = qp.working_set();
  Qp child = with_row_fixed(parent, 0);
  ASSERT_EQ(qp.solve_hot(child.view(), ws, nullptr), Status::solved);  // no equality rows before
  EXPECT_EQ(qp.warm_start(), QpWarmStart::hot);
  ws = qp.working_set();
  child.c = vec({-1.0, 0.5});
  const int same[] = {0};
  ASSERT_EQ(qp.solve_hot(child.view(), ws, same), Status::solved);
  EXPECT_EQ(qp.warm_start(), QpWarmStart::hot);
  EXPECT_EQ(qp.stats().iterations, 0);
  expect_kkt(child, qp);
  EXPECT_EQ(qp.x()[0], 0.0);

  Qp box = empty_qp(2);
  box.c = vec({-1.0, 0.5});
  box.lo = vec({-2.0, -2.0});
  box.up = vec({2.0, 2.0});
  ASSERT_EQ(qp.solve(box.view()), Status::solved);  // x0 at its upper bound 2
  ws = qp.working_set();
  Qp fixed = with_var_fixed(box, 0);
  fixed.lo[0] = fixed.up[0] = 2.0;
  fixed.c = vec({1.0, 0.5});
  ASSERT_EQ(qp.solve_hot(fixed.view(), ws, nullptr), Status::solved);
  EXPECT_EQ(qp.warm_start(), QpWarmStart::hot);
  EXPECT_EQ(qp.stats().iterations, 0);
  expect_kkt(fixed, qp);
  EXPECT_EQ(qp.x()[0], 2.0);
}

TEST(DenseQpHotStart, AfterASolvedOrRepairProvenProblemAndABrokenPromiseCostsNoWrongAnswer) {
  std::mt19937_64 rng(7);
  const int n = 12, mi = 20;
  const Qp parent = random_qp(rng, n, 0, mi, n);
  DenseQp qp(DenseQpCapacity{96, 16, 200});
  ASSERT_EQ(qp.solve(parent.view()), Status::solved);
  const QpWorkingSet ws = qp.working_set();
  // An infeasible child: x_0 held at -2 and at +2 by two equality rows. Started hot, its
  // repair walk proves it (no phase-1 LP).
  Qp bad = parent;
  bad.A_eq = Eigen::MatrixXd::Zero(2, n);
  bad.A_eq(0, 0) = bad.A_eq(1, 0) = 1.0;
  bad.b_eq = vec({-2.0, 2.0});
  ASSERT_EQ(qp.solve_hot(bad.view(), ws, nullptr), Status::infeasible);
  ASSERT_EQ(qp.warm_start(), QpWarmStart::rejected_infeasible);
  // Its sibling starts hot from where that walk stopped (both rows gone).
  const Qp child = with_row_fixed(parent, 3);
  const std::vector<int> gone{-1, -1};
  ASSERT_EQ(qp.solve_hot(child.view(), ws, gone.data()), Status::solved);
  EXPECT_EQ(qp.warm_start(), QpWarmStart::hot);
  expect_kkt(child, qp);
  DenseQp fresh(DenseQpCapacity{96, 16, 200});
  ASSERT_EQ(fresh.solve(child.view()), Status::solved);
  EXPECT_NEAR(qp.objective(), fresh.objective(), 1e-9 * (1 + std::abs(fresh.objective())));
  // After a phase-1 LP proved a problem infeasible there is no factorization to start from:
  // the warm start.
  ASSERT_EQ(qp.solve(bad.view()), Status::infeasible);
  ASSERT_EQ(qp.warm_start(), QpWarmStart::not_requested);
  ASSERT_EQ(qp.solve_hot(child.view(), ws, gone.data()), Status::solved);
  EXPECT_EQ(qp.warm_start(), QpWarmStart::accepted);
  expect_kkt(child, qp);
  // A promise broken: every inequality row changed while the map says nothing moved. The
  // answer is still the optimum of the data given (the final check is on that data).
  Qp other = random_qp(rng, n, 1, mi, n);
  DenseQp cold(DenseQpCapacity{96, 16, 200});
  const Status sc = cold.solve(other.view());
  const std::vector<int> zero{0};
  const Status sh = qp.solve_hot(other.view(), ws, zero.data());
  ASSERT_EQ(sh, sc);
  if (sc == Status::solved) {
    expect_kkt(other, qp);
    EXPECT_NEAR(qp.objective(), cold.objective(), 1e-9 * (1 + std::abs(cold.objective())));
  }
}

/// The relaxed problem of optimal_when_relaxed: equality rows flagged in relax_eq move to
/// the inequalities (appended to A_in), fixed variables flagged in relax_fixed lose their
/// upper bound; and the multipliers of the solver's outputs in its layout.
struct Relaxed {
  Qp qp;
  Eigen::VectorXd y, z, w;
};
Relaxed relaxed_of(const Qp& qp, const DenseQp& s, const std::vector<std::uint8_t>& relax_eq,
                   const std::vector<std::uint8_t>& relax_fixed) {
  Relaxed r{qp, {}, {}, {}};
  std::vector<int> keep, moved;
  for (int k = 0; k < qp.A_eq.rows(); ++k) (relax_eq.size() && relax_eq[k] ? moved : keep).push_back(k);
  const int mi = static_cast<int>(qp.A_in.rows());
  r.qp.A_eq.resize(static_cast<Eigen::Index>(keep.size()), qp.n());
  r.qp.b_eq.resize(static_cast<Eigen::Index>(keep.size()));
  r.y.resize(static_cast<Eigen::Index>(keep.size()));
  for (size_t k = 0; k < keep.size(); ++k) {
    r.qp.A_eq.row(k) = qp.A_eq.row(keep[k]);
    r.qp.b_eq[k] = qp.b_eq[keep[k]];
    r.y[k] = s.y()[keep[k]];
  }
  r.qp.A_in.conservativeResize(mi + static_cast<Eigen::Index>(moved.size()), Eigen::NoChange);
  r.qp.b_in.conservativeResize(mi + static_cast<Eigen::Index>(moved.size()));
  r.z.resize(mi + static_cast<Eigen::Index>(moved.size()));
  r.z.head(mi) = s.z();
  for (size_t k = 0; k < moved.size(); ++k) {
    r.qp.A_in.row(mi + k) = qp.A_eq.row(moved[k]);
    r.qp.b_in[mi + k] = qp.b_eq[moved[k]];
    r.z[mi + k] = s.y()[moved[k]];
  }
  for (int j = 0; j < qp.n(); ++j)
    if (relax_fixed.size() && relax_fixed[j]) r.qp.up[j] = kInf;
  r.w = s.bound_multipliers();
  return r;
}

TEST(DenseQpRelaxed, TwoRowsPinningAVariableFromBothSides) {
  // Pang & Tedrake's (2018) lift steps in miniature: x (the object) is held by x - a1 = 0 and a2 - x = 0
  // with a1 = a2 = 0 (the fingers, fixed). The second row depends on the others and stays
  // out of W; maximising x gives the first a multiplier of -1, the wrong sign once both
  // rows are relaxed to >= 0. But x = 0 is still optimal then (a2 - x >= 0 stops it), and
  // one exchange finds the multipliers that show it: 0 on the first row, 1 on the second.
  Qp qp = empty_qp(3);
  qp.c = vec({-1, 0, 0});
  qp.A_eq = Eigen::MatrixXd::Zero(4, 3);
  qp.A_eq(0, 1) = 1;                        // a1 = 0
  qp.A_eq(1, 2) = 1;                        // a2 = 0
  qp.A_eq(2, 0) = 1, qp.A_eq(2, 1) = -1;    // x - a1 = 0
  qp.A_eq(3, 0) = -1, qp.A_eq(3, 2) = 1;    // a2 - x = 0
  qp.b_eq = Eigen::VectorXd::Zero(4);
  qp.lo = Eigen::VectorXd::Constant(3, -kInf);
  qp.up = Eigen::VectorXd::Constant(3, kInf);
  DenseQp s(DenseQpCapacity{8, 8, 8});
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  ASSERT_LT(s.y()[2], -0.5);  // the degenerate choice this test is about
  const std::vector<std::uint8_t> relax{0, 0, 1, 1};
  ASSERT_TRUE(s.optimal_when_relaxed(qp.view(), relax.data(), nullptr));
  EXPECT_NEAR(s.y()[2], 0.0, 1e-12);
  EXPECT_NEAR(s.y()[3], 1.0, 1e-12);
  EXPECT_EQ(s.x().norm(), 0.0);
  const Relaxed r = relaxed_of(qp, s, relax, {});
  EXPECT_LE(qp_kkt_residual(r.qp.view(), s.x(), r.y, r.z, r.w), 1e-12);
  // Relaxing only the first row (the second stays an equality) needs no exchange.
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  const std::vector<std::uint8_t> first{0, 0, 1, 0};
  EXPECT_TRUE(s.optimal_when_relaxed(qp.view(), first.data(), nullptr));
  // Without the second row, x = 0 is not optimal once the first is relaxed (x -> 5).
  Qp loose = qp;
  loose.A_eq.conservativeResize(3, Eigen::NoChange);
  loose.b_eq.conservativeResize(3);
  loose.up[0] = 5;
  ASSERT_EQ(s.solve(loose.view()), Status::solved);
  EXPECT_FALSE(s.optimal_when_relaxed(loose.view(), first.data(), nullptr));
  // Nor after any status but solved.
  Qp empty = qp;
  empty.b_eq[0] = 1;
  empty.b_eq[1] = -1;  // x >= 1 and x <= -1
  ASSERT_EQ(s.solve(empty.view()), Status::infeasible);
  EXPECT_FALSE(s.optimal_when_relaxed(empty.view(), relax.data(), nullptr));
}

TEST(DenseQpRelaxed, AFixedVariableBecomesALowerBound) {
  // v fixed at 0 with its objective pushing it up: fixed, its bound multiplier is -1. As
  // v >= 0 it is optimal only while the row -v >= 0 holds it down.
  Qp qp = empty_qp(2);
  qp.c = vec({1, -1});
  qp.A_in = Eigen::MatrixXd::Zero(1, 2);
  qp.A_in(0, 1) = -1;  // -v >= 0
  qp.b_in = Eigen::VectorXd::Zero(1);
  qp.lo = vec({0, 0});
  qp.up = vec({1, 0});
  const std::vector<std::uint8_t> fixed{0, 1};
  DenseQp s(DenseQpCapacity{4, 4, 4});
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  ASSERT_TRUE(s.optimal_when_relaxed(qp.view(), nullptr, fixed.data()));
  const Relaxed r = relaxed_of(qp, s, {}, fixed);
  EXPECT_GE(r.w[1], 0.0);
  EXPECT_LE(qp_kkt_residual(r.qp.view(), s.x(), r.y, r.z, r.w), 1e-12);
  // Without the row, v >= 0 is unbounded above: not optimal. The exchange is undone: the
  // solver starts hot from its solve as before, and is at the optimum at once.
  Qp free = qp;
  free.A_in.resize(0, 2);
  free.b_in.resize(0);
  ASSERT_EQ(s.solve(free.view()), Status::solved);
  const QpWorkingSet free_ws = s.working_set();
  EXPECT_FALSE(s.optimal_when_relaxed(free.view(), nullptr, fixed.data()));
  ASSERT_EQ(s.solve_hot(free.view(), free_ws, nullptr), Status::solved);
  EXPECT_EQ(s.warm_start(), QpWarmStart::hot);
  EXPECT_EQ(s.stats().iterations, 0);
  expect_kkt(free, s);
  // The solver goes on as usual: the next solve starts warm, not hot from the relaxed W.
  ASSERT_EQ(s.solve(qp.view()), Status::solved);
  const QpWorkingSet ws = s.working_set();
  ASSERT_TRUE(s.optimal_when_relaxed(qp.view(), nullptr, fixed.data()));
  ASSERT_EQ(s.solve_hot(qp.view(), ws, nullptr), Status::solved);
  EXPECT_NE(s.warm_start(), QpWarmStart::hot);
  expect_kkt(qp, s);
}

TEST(DenseQpRelaxed, AfterAJoinXMustStillMinimizeOnW) {
  // Found in review: with H != 0, a constraint that joins at step length zero can leave x
  // off the minimizer on the new W; multipliers computed there have the right signs and
  // mean nothing. The child holds row 1 as an equality (multiplier -1); relaxed, it is the
  // parent, whose optimum (-13/3 at (-5/3, -5/3, -2)) is below the child's (-4 at
  // (-1, -2, -2)): the answer must be false.
  Qp parent = empty_qp(3);
  parent.H.resize(3, 3);
  parent.H << 2, 1, -1, 1, 2, -3, -1, -3, 6;
  parent.c = vec({3, -1, 4});
  parent.A_in.resize(4, 3);
  parent.A_in << 0, 0, -1, -1, 0, 1, -1, 0, 0, 0, 0, -1;
  parent.b_in = vec({1.5, -1, 1, 2});
  parent.lo = Eigen::VectorXd::Constant(3, -5);
  parent.up = Eigen::VectorXd::Constant(3, 5);
  const Qp child = with_row_fixed(parent, 1);
  DenseQp s(DenseQpCapacity{4, 4, 4}), f(DenseQpCapacity{4, 4, 4});
  ASSERT_EQ(s.solve(child.view()), Status::solved);
  ASSERT_EQ(f.solve(parent.view()), Status::solved);
  ASSERT_NEAR(s.objective(), -4.0, 1e-12);
  ASSERT_NEAR(f.objective(), -13.0 / 3.0, 1e-12);
  const std::vector<std::uint8_t> relax{1};
  EXPECT_FALSE(s.optimal_when_relaxed(child.view(), relax.data(), nullptr));
  // Undone: the child re-solves hot at once.
  const std::vector<int> same{0};
  ASSERT_EQ(s.solve_hot(child.view(), s.working_set(), same.data()), Status::solved);
  EXPECT_EQ(s.warm_start(), QpWarmStart::hot);
  EXPECT_EQ(s.stats().iterations, 0);
  // The 2-variable case of the review: min 1/2|x|^2 - x_1 with x_1 = 0 (relaxed: x_1 >=
  // 0, optimum x_1 = 1) and -x_1 + x_2 >= 0.
  Qp two = empty_qp(2);
  two.H = Eigen::MatrixXd::Identity(2, 2);
  two.c = vec({-1, 0});
  two.A_eq = Eigen::MatrixXd(1, 2);
  two.A_eq << 1, 0;
  two.b_eq = vec({0});
  two.A_in = Eigen::MatrixXd(1, 2);
  two.A_in << -1, 1;
  two.b_in = vec({0});
  two.lo = Eigen::VectorXd::Constant(2, -10);
  two.up = Eigen::VectorXd::Constant(2, 10);
  for (const bool warm : {false, true}) {
    DenseQp t(DenseQpCapacity{4, 4, 4});
    QpWorkingSet ws(1, 2);
    ws.x.setZero();
    ws.has_point = true;
    ASSERT_EQ(warm ? t.solve(two.view(), ws) : t.solve(two.view()), Status::solved);
    EXPECT_FALSE(t.optimal_when_relaxed(two.view(), relax.data(), nullptr)) << warm;
  }
}

TEST(DenseQpRelaxed, RandomChildrenWhoseRelaxationIsTheParent) {
  // A branch-and-bound child holding some rows of its parent as equalities (copies of
  // inequality rows, as the MIQP's "first" fixings are) and some variables fixed at their
  // lower bound 0: relaxed, it is the parent. Even trials fix rows and variables that hold
  // at the parent's optimum (the child's optimum is then the parent's, and the answer must
  // be true); odd trials also fix a row that does not (then mostly false). True must mean
  // the multipliers pass the parent's KKT check and the objectives agree; a parent optimum
  // below the child's must give false. Every third parent also holds the negation of a row
  // active at its optimum (the row is then pinned from both sides, as by the fingers: a
  // degenerate optimum).
  std::mt19937_64 rng(20261124);
  int yes = 0, no = 0;
  for (int trial = 0; trial < 60; ++trial) {
    SCOPED_TRACE(testing::Message() << "trial " << trial);
    const int n = 6 + trial % 10, mi = n + 4;
    Qp parent = random_qp(rng, n, 1, mi, trial % 3 ? n / 2 : 0);
    parent.lo.head(n / 2).setZero();  // variables that may be fixed at 0
    DenseQp s(DenseQpCapacity{32, 16, 64});
    if (s.solve(parent.view()) != Status::solved) continue;
    Eigen::VectorXd xp = s.x();
    int pinned = -1;  // a row held from both sides (by its negation): the child fixes it first
    if (trial % 3 == 0) {
      for (int i = 0; i < mi; ++i) {
        if (std::abs(parent.A_in.row(i).dot(xp) - parent.b_in[i]) > 1e-9) continue;
        pinned = mi;  // the negation: the objective pushes against row i, so the child's
                      // copy of it gets a multiplier of the wrong sign
        parent.A_in.conservativeResize(mi + 1, Eigen::NoChange);
        parent.b_in.conservativeResize(mi + 1);
        parent.A_in.row(mi) = -parent.A_in.row(i);
        parent.b_in[mi] = -parent.b_in[i];
        break;
      }
      ASSERT_EQ(s.solve(parent.view()), Status::solved);
      xp = s.x();
    }
    const double parent_cost = s.objective();
    Qp child = parent;
    std::vector<std::uint8_t> relax_eq{0};  // the parent's own equality stays
    std::vector<std::uint8_t> relax_fixed(n, 0);
    int rows = 0, vars = 0, loose = -1;
    if (pinned >= 0) {
      child = with_row_fixed(child, pinned);
      relax_eq.push_back(1);
      ++rows;
    }
    for (int i = 0; i < parent.A_in.rows(); ++i) {
      const bool active = std::abs(parent.A_in.row(i).dot(xp) - parent.b_in[i]) <= 1e-9;
      if (active && rows < 3 && i != pinned) {
        child = with_row_fixed(child, i);
        relax_eq.push_back(1);
        ++rows;
      } else if (!active && loose < 0 && trial % 2 == 1) {
        loose = i;
      }
    }
    if (loose >= 0) {
      child = with_row_fixed(child, loose);
      relax_eq.push_back(1);
    }
    for (int j = 0; j < n / 2 && vars < 2; ++j) {
      if (xp[j] != 0.0) continue;
      child.up[j] = 0.0;
      relax_fixed[j] = 1;
      ++vars;
    }
    if (s.solve(child.view()) != Status::solved) continue;
    const double child_cost = s.objective();
    const Eigen::VectorXd xc = s.x();
    const bool verdict = s.optimal_when_relaxed(child.view(), relax_eq.data(), relax_fixed.data());
    if (loose < 0) {
      EXPECT_TRUE(verdict) << rows << " rows, " << vars << " variables";
    }
    if (verdict) {
      ++yes;
      const Relaxed r = relaxed_of(child, s, relax_eq, relax_fixed);
      EXPECT_LE(qp_kkt_residual(r.qp.view(), xc, r.y, r.z, r.w), 1e-9);
      EXPECT_NEAR(child_cost, parent_cost, 1e-8 * (1 + std::abs(parent_cost)));
    } else {
      ++no;
      // Its exchanges undone, the solver re-solves the child hot, at once.
      std::vector<int> same_rows(relax_eq.size());
      for (size_t k = 0; k < same_rows.size(); ++k) same_rows[k] = static_cast<int>(k);
      ASSERT_EQ(s.solve_hot(child.view(), s.working_set(), same_rows.data()), Status::solved);
      EXPECT_EQ(s.warm_start(), QpWarmStart::hot);
      EXPECT_EQ(s.stats().iterations, 0);
      EXPECT_NEAR(s.objective(), child_cost, 1e-9 * (1 + std::abs(child_cost)));
    }
    if (child_cost > parent_cost + 1e-6 * (1 + std::abs(parent_cost))) {
      EXPECT_FALSE(verdict);
    }
  }
  EXPECT_GE(yes, 20);
  EXPECT_GE(no, 10);
}

TEST(DenseQpReuse, ASolverOverChangingProblemsAnswersAsAFreshOne) {
  // One solver over a random walk of problems, as a branch-and-bound hands them over:
  // equality rows added and dropped (the inequality rows kept from the last problem move),
  // bounds and right-hand sides changed, one entry of A_in or H changed, an indefinite H,
  // a NaN, another size. Each answer is bitwise a fresh solver's (cold starts: the same
  // data must give the same arithmetic), and bad data is still bad_input after good data
  // of the same shape.
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> pick(0, 7);
  std::uniform_real_distribution<double> u(-1, 1);
  DenseQp reused(DenseQpCapacity{40, 24, 64});
  int compared = 0, rejected = 0;
  for (int walk = 0; walk < 6; ++walk) {
    Qp base = random_qp(rng, 12 + 4 * walk, 2, 30, 4 + walk);
    Qp q = base;
    for (int step = 0; step < 40; ++step) {
      SCOPED_TRACE(testing::Message() << "walk " << walk << " step " << step);
      const int n = q.n(), mi = static_cast<int>(q.A_in.rows());
      switch (pick(rng)) {
        case 0:  // a child: one more equality row
          if (q.A_eq.rows() < 20) q = with_row_fixed(q, static_cast<int>(rng() % mi));
          break;
        case 1:  // back to the base's equalities (rows dropped)
          q.A_eq = base.A_eq;
          q.b_eq = base.b_eq;
          break;
        case 2:  // a fixing and a right-hand side
          q = with_var_fixed(q, static_cast<int>(rng() % n));
          q.b_in[static_cast<Eigen::Index>(rng() % mi)] -= 0.1;
          break;
        case 3:  // one entry of A_in
          q.A_in(static_cast<Eigen::Index>(rng() % mi), static_cast<Eigen::Index>(rng() % n)) += 0.25 * u(rng);
          break;
        case 4: {  // H, kept PSD
          const Eigen::Index i = static_cast<Eigen::Index>(rng() % n);
          q.H(i, i) += 0.5;
          break;
        }
        case 5: {  // H indefinite: bad_input, then the walk goes on from the good one
          Qp bad = q;
          bad.H(0, 0) = -1.0;
          EXPECT_EQ(reused.solve(bad.view()), Status::bad_input);
          ++rejected;
          break;
        }
        case 6: {  // a NaN in A_in
          Qp bad = q;
          bad.A_in(0, 0) = std::numeric_limits<double>::quiet_NaN();
          EXPECT_EQ(reused.solve(bad.view()), Status::bad_input);
          ++rejected;
          break;
        }
        default:  // the same problem again
          break;
      }
      const Status st = reused.solve(q.view());
      DenseQp fresh(DenseQpCapacity{40, 24, 64});
      ASSERT_EQ(st, fresh.solve(q.view()));
      if (st != Status::solved) continue;
      ++compared;
      for (int j = 0; j < n; ++j) ASSERT_EQ(reused.x()[j], fresh.x()[j]) << j;
      ASSERT_EQ(reused.objective(), fresh.objective());
      expect_kkt(q, reused, 1e-9);
    }
  }
  EXPECT_GE(compared, 100);
  EXPECT_GE(rejected, 20);
}

TEST(DenseQpRandom, KktOnFeasibleProblemsOf10To96Variables) {
  std::mt19937_64 rng(20240611);
  DenseQp s(DenseQpCapacity{96, 16, 200});
  int solved = 0, unbounded = 0, temporaries = 0;
  const int sizes[] = {10, 17, 25, 40, 64, 96};
  for (int n : sizes) {
    for (int trial = 0; trial < 4; ++trial) {
      const int me = trial % 2 ? n / 10 : 0;
      const int mi = std::min(200, n + 20 * trial);
      const int rank = trial == 0 ? n : trial == 1 ? n / 3 : trial == 2 ? 3 : 0;
      const bool box = trial != 3 || n % 2 == 0;
      const Qp qp = random_qp(rng, n, me, mi, rank, box);
      const Status st = s.solve(qp.view());
      SCOPED_TRACE(testing::Message() << "n " << n << " trial " << trial);
      temporaries += s.temporary_constraints();
      if (st == Status::unbounded) {
        ASSERT_FALSE(box);
        expect_ray(qp, s);
        ++unbounded;
        continue;
      }
      ASSERT_EQ(st, Status::solved);
      expect_kkt(qp, s);
      ++solved;
      // Warm re-solve: accepted, nothing to do.
      const QpWorkingSet ws = s.working_set();
      const double obj = s.objective();
      ASSERT_EQ(s.solve(qp.view(), ws), Status::solved);
      EXPECT_EQ(s.warm_start(), QpWarmStart::accepted);
      EXPECT_LE(s.stats().iterations, 1);
      EXPECT_NEAR(s.objective(), obj, 1e-9 * (1 + std::abs(obj)));
    }
  }
  EXPECT_GE(solved, 20);
  RecordProperty("unbounded", unbounded);
  RecordProperty("temporaries", temporaries);
}

// ---- brute force --------------------------------------------------------------------------------

/// The best KKT point over all subsets S of the inequality rows held active: each
/// equality-constrained QP  [H -A_S'; A_S 0] [x; l] = [-c; b_S]  solved by complete
/// orthogonal decomposition (any solution when singular), kept when it is feasible with
/// l_S >= 0 and it solves the system. Convex: every KKT point is optimal, so all kept
/// values agree; returns +inf when there is none. Only |S| + me <= n is tried: some KKT
/// multiplier vector is supported on linearly independent normals (Caratheodory).
double brute_force(const Qp& qp) {
  const int n = qp.n(), me = static_cast<int>(qp.A_eq.rows()), mi = static_cast<int>(qp.A_in.rows());
  double best = kInf;
  for (int mask = 0; mask < (1 << mi); ++mask) {
    std::vector<int> act;
    for (int i = 0; i < mi; ++i)
      if (mask & (1 << i)) act.push_back(i);
    const int k = me + static_cast<int>(act.size());
    if (k > n) continue;
    Eigen::MatrixXd K = Eigen::MatrixXd::Zero(n + k, n + k);
    Eigen::VectorXd rhs(n + k);
    K.topLeftCorner(n, n) = qp.H;
    rhs.head(n) = -qp.c;
    for (int r = 0; r < k; ++r) {
      const Eigen::VectorXd a =
          r < me ? Eigen::VectorXd(qp.A_eq.row(r).transpose()) : Eigen::VectorXd(qp.A_in.row(act[r - me]).transpose());
      K.block(0, n + r, n, 1) = -a;
      K.block(n + r, 0, 1, n) = a.transpose();
      rhs[n + r] = r < me ? qp.b_eq[r] : qp.b_in[act[r - me]];
    }
    const Eigen::VectorXd sol = K.completeOrthogonalDecomposition().solve(rhs);
    if ((K * sol - rhs).cwiseAbs().maxCoeff() > 1e-9) continue;
    const Eigen::VectorXd x = sol.head(n);
    bool ok = true;
    for (int r = me; r < k && ok; ++r) ok = sol[n + r] >= -1e-9;
    if (mi && ok) ok = (qp.A_in * x - qp.b_in).minCoeff() >= -1e-9;
    if (!ok) continue;
    best = std::min(best, qp.objective(x));
  }
  return best;
}

TEST(DenseQpBruteForce, TinyProblemsAgreeWithActiveSetEnumeration) {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> u(-1, 1), pos(0, 1);
  DenseQp s(DenseQpCapacity{4, 1, 12});
  int compared = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 2 + trial % 3;
    const int rank = trial % 4 == 0 ? 0 : 1 + trial % n;
    const int me = trial % 5 == 0 ? 1 : 0;
    // Random rows plus a box as rows (bounded), 2n + 2..4 rows.
    const int extra = 2 + trial % 3;
    Qp qp = empty_qp(n);
    Eigen::MatrixXd J(rank, n);
    for (int i = 0; i < rank; ++i)
      for (int j = 0; j < n; ++j) J(i, j) = u(rng);
    qp.H = J.transpose() * J;
    for (int j = 0; j < n; ++j) qp.c[j] = 2 * u(rng);
    Eigen::VectorXd x0(n);
    for (int j = 0; j < n; ++j) x0[j] = 0.5 * u(rng);
    qp.A_eq = Eigen::MatrixXd(me, n);
    for (int j = 0; j < n; ++j)
      if (me) qp.A_eq(0, j) = u(rng);
    qp.b_eq = qp.A_eq * x0;
    qp.A_in = Eigen::MatrixXd::Zero(2 * n + extra, n);
    for (int j = 0; j < n; ++j) {
      qp.A_in(2 * j, j) = 1;
      qp.A_in(2 * j + 1, j) = -1;
    }
    for (int i = 2 * n; i < 2 * n + extra; ++i)
      for (int j = 0; j < n; ++j) qp.A_in(i, j) = u(rng);
    qp.b_in = qp.A_in * x0;
    for (int i = 0; i < 2 * n; ++i) qp.b_in[i] -= 1;  // box [-1, 1] around x0
    for (int i = 2 * n; i < 2 * n + extra; ++i) qp.b_in[i] -= trial % 2 ? 0.0 : 0.3 * pos(rng);
    ASSERT_EQ(s.solve(qp.view()), Status::solved) << trial;
    expect_kkt(qp, s);
    const double ref = brute_force(qp);
    ASSERT_TRUE(std::isfinite(ref)) << trial;
    EXPECT_NEAR(s.objective(), ref, 1e-8 * (1 + std::abs(ref))) << trial;
    ++compared;
  }
  EXPECT_EQ(compared, 200);
}

// ---- limits -------------------------------------------------------------------------------------

TEST(DenseQpLimits, IterationLimitReturnsAFeasiblePoint) {
  std::mt19937_64 rng(5);
  const Qp qp = random_qp(rng, 30, 0, 40, 30);
  DenseQpOptions opt;
  opt.max_iterations = 2;
  DenseQp s(DenseQpCapacity{30, 0, 40}, opt);
  ASSERT_EQ(s.solve(qp.view()), Status::iteration_limit);
  EXPECT_TRUE(s.stats().has_point);
  EXPECT_EQ(s.stats().iterations, 2);
  const Eigen::VectorXd x = s.x();
  EXPECT_GE((qp.A_in * x - qp.b_in).minCoeff(), -1e-9);
  // Continuing from the limit's working set finishes the job.
  const QpWorkingSet ws = s.working_set();
  s.options().max_iterations = 0;
  ASSERT_EQ(s.solve(qp.view(), ws), Status::solved);
  expect_kkt(qp, s);
}

}  // namespace
}  // namespace qs::dense_qp_test

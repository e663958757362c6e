// The ellipsoidal limit surface computed from the support (core/limit_surface.cpp): the
// closed-form area integrals against hand values and brute-force quadrature, the move of
// the ellipsoid from the pressure center to the body origin, and the errors; then the exact
// limit surface of a support pressure distribution and Halm & Posa's (2018, sec. 3.4) sequence
// of programs with A the Hessian of H at the previous solution.
#include "quasistep/core/limit_surface.hpp"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/scene.hpp"
#include "tests/support/lcp_check.hpp"

namespace qs::limit_surface_test {
namespace {

using V = Vec2<double>;
constexpr double kPi = std::numbers::pi;

// ---- fixtures ---------------------------------------------------------------------------

Shape disk(double r, V center = {}) {
  Shape s;
  s.type = ShapeType::disk;
  s.core = ShapeCore::point;
  s.radius = r;
  s.points = {center};
  return s;
}
Shape polygon(std::vector<V> ccw) {
  Shape s;
  s.type = ShapeType::polygon;
  s.core = ShapeCore::polygon;
  s.points = std::move(ccw);
  return s;
}
/// A box of size w x h placed by pose (x, y, theta) in the body frame, as the reader does.
Shape box(double w, double h, double x = 0, double y = 0, double theta = 0) {
  const Pose2<double> p = Pose2<double>::from_xytheta(x, y, theta);
  Shape s = polygon({p.apply({-w / 2, -h / 2}), p.apply({w / 2, -h / 2}), p.apply({w / 2, h / 2}), p.apply({-w / 2, h / 2})});
  s.type = ShapeType::box;
  return s;
}
Shape segment(V a, V b, double radius = 0) {
  Shape s;
  s.type = radius > 0 ? ShapeType::capsule : ShapeType::segment;
  s.core = ShapeCore::segment;
  s.radius = radius;
  s.points = {a, b};
  return s;
}
Shape point(V c) {
  Shape s;
  s.points = {c};
  return s;
}
Shape half_plane() {
  Shape s;
  s.type = ShapeType::half_plane;
  s.core = ShapeCore::half_plane;
  s.points = {{0, 0}};
  s.normal = {0, 1};
  return s;
}

/// A model whose body 0 ("object", free, `mass`) carries `shapes`.
Model body_with(std::vector<Shape> shapes, double mass = 1.0) {
  Model m;
  Body b;
  b.name = "object";
  b.kind = BodyKind::free;
  b.mass = mass;
  for (Shape& s : shapes) {
    s.body = 0;
    b.shapes.push_back(static_cast<int>(m.shapes.size()));
    m.shapes.push_back(std::move(s));
  }
  m.bodies.push_back(std::move(b));
  return m;
}

/// Midpoint rule on an n x n grid over [x0, x1] x [y0, y1] of |r - c|.
double rectangle_quadrature(double x0, double x1, double y0, double y1, V c, int n) {
  const double hx = (x1 - x0) / n, hy = (y1 - y0) / n;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const double dx = x0 + (i + 0.5) * hx - c.x;
    for (int j = 0; j < n; ++j) {
      const double dy = y0 + (j + 0.5) * hy - c.y;
      sum += std::sqrt(dx * dx + dy * dy);
    }
  }
  return sum * hx * hy;
}

/// Midpoint rule over a triangle through the collapsed square p = v0 + u (v1 - v0 + w (v2 - v1)).
double triangle_quadrature(V v0, V v1, V v2, V c, int n) {
  const double jac = std::abs(cross(v1 - v0, v2 - v1));
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const double u = (i + 0.5) / n;
    for (int j = 0; j < n; ++j) {
      const double w = (j + 0.5) / n;
      const V p = v0 + u * ((v1 - v0) + w * (v2 - v1));
      sum += norm(p - c) * u;
    }
  }
  return sum * jac / (double(n) * n);
}

/// Midpoint rule in polar coordinates about the disk's center, the point c at distance D.
double disk_quadrature(double R, double D, int n) {
  std::vector<double> cosine(n);
  for (int j = 0; j < n; ++j) cosine[j] = std::cos((j + 0.5) * 2 * kPi / n);
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const double r = (i + 0.5) * R / n;
    for (int j = 0; j < n; ++j) sum += r * std::sqrt(std::max(0.0, r * r + D * D - 2 * r * D * cosine[j]));
  }
  return sum * (R / n) * (2 * kPi / n);
}

/// T of the header: F_c = T F moves the torque from the body origin to c.
Eigen::Matrix3d to_center(V c) {
  Eigen::Matrix3d T = Eigen::Matrix3d::Identity();
  T(2, 0) = c.y;
  T(2, 1) = -c.x;
  return T;
}

::testing::AssertionResult ThrowsAtModelA(const Model& m, double mu, double g, const std::string& fragment) {
  try {
    (void)limit_surface_from_support(m, 0, mu, g);
  } catch (const SceneError& e) {
    const std::string what = e.what();
    if (e.path() != "model.A") return ::testing::AssertionFailure() << "path is \"" << e.path() << "\": " << what;
    if (what.find(fragment) == std::string::npos)
      return ::testing::AssertionFailure() << "what() lacks \"" << fragment << "\": " << what;
    if (what.find("cannot compute the limit surface of body \"object\"") == std::string::npos ||
        what.find("give model.A") == std::string::npos)
      return ::testing::AssertionFailure() << "what() does not name the body and the way out: " << what;
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

constexpr double kMu = 0.4, kG = 9.81;

// ---- the integrals ----------------------------------------------------------------------

TEST(LimitSurface, DiskAboutItsCenterIsExact) {
  const double m = 2.0, R = 0.05;
  const LimitSurfaceFromSupport ls = limit_surface_from_support(body_with({disk(R)}, m), 0, kMu, kG);
  const double f = kMu * m * kG;
  EXPECT_EQ(ls.f_max, f);
  EXPECT_DOUBLE_EQ(ls.m_max, f * 2 * R / 3);
  EXPECT_EQ(ls.pressure_center.x, 0.0);
  EXPECT_EQ(ls.pressure_center.y, 0.0);
  const Eigen::Matrix3d expected = Eigen::Vector3d(1 / (f * f), 1 / (f * f), 1 / (ls.m_max * ls.m_max)).asDiagonal();
  EXPECT_TRUE(ls.A.isApprox(expected, 1e-15)) << ls.A;
  EXPECT_EQ(ls.A(0, 2), 0.0);
}

TEST(LimitSurface, SquareMeanDistanceClosedForm) {
  // Mean distance from the center of a square of side s: s/6 (sqrt 2 + ln(1 + sqrt 2)).
  const double s = 0.2;
  const LimitSurfaceFromSupport ls = limit_surface_from_support(body_with({box(s, s)}), 0, kMu, kG);
  const double mean = s / 6 * (std::sqrt(2.0) + std::log(1 + std::sqrt(2.0)));
  EXPECT_NEAR(mean / s, 0.3826, 5e-5);
  EXPECT_NEAR(ls.m_max, kMu * kG * mean, 1e-14 * ls.m_max);
}

TEST(LimitSurface, RectangleMatchesQuadrature) {
  const double w = 0.3, h = 0.1;
  const LimitSurfaceFromSupport ls = limit_surface_from_support(body_with({box(w, h)}), 0, kMu, kG);
  const double brute = rectangle_quadrature(-w / 2, w / 2, -h / 2, h / 2, {0, 0}, 3000) / (w * h);
  EXPECT_NEAR(ls.m_max / (kMu * kG), brute, 1e-6 * brute);
}

TEST(LimitSurface, PolygonIntegralAboutAPointOutsideMatchesQuadrature) {
  // The signed fan holds for c outside the polygon too (needed for several shapes).
  const std::vector<V> square{{0, 0}, {0.1, 0}, {0.1, 0.1}, {0, 0.1}};
  for (V c : {V{0.25, -0.1}, V{0.05, 0.3}, V{0.1, 0.05}, V{0.03, 0.04}}) {
    const double brute = rectangle_quadrature(0, 0.1, 0, 0.1, c, 3000);
    EXPECT_NEAR(polygon_distance_integral(square, c), brute, 1e-6 * brute) << c.x << ", " << c.y;
  }
  const V a{0.1, 0.05}, b{0.3, 0.0}, d{0.2, 0.25};
  for (V c : {V{0.2, 0.1}, V{-0.2, 0.4}, V{0.2, 0.0}}) {
    const double brute = triangle_quadrature(a, b, d, c, 3000);
    EXPECT_NEAR(polygon_distance_integral({a, b, d}, c), brute, 1e-6 * brute) << c.x << ", " << c.y;
  }
}

TEST(LimitSurface, DiskIntegralOffCenterMatchesQuadrature) {
  const double R = 0.5;
  // Inside, on the rim, outside near and far, and on both sides of the switch at m = 1/4
  // (D = 2R) between the two outside forms.
  for (double D : {0.1, 0.35, 0.499, 0.5, 0.501, 0.8, 0.999, 1.001, 1.6, 5.0, 60.0}) {
    const double brute = disk_quadrature(R, D, 4000);
    EXPECT_NEAR(disk_distance_integral(R, D), brute, 1e-6 * brute) << "D = " << D;
  }
  // Far away the disk acts as its area at distance D: pi R^2 D (1 + R^2 / (8 D^2) + ...).
  const double D = 1e4;
  EXPECT_NEAR(disk_distance_integral(R, D), kPi * R * R * D * (1 + R * R / (8 * D * D)), 1e-13 * kPi * R * R * D);
  // Continuous across the rim (32 R^3 / 9 exactly on it).
  EXPECT_EQ(disk_distance_integral(R, R), 32 * R * R * R / 9);
  EXPECT_NEAR(disk_distance_integral(R, R * (1 - 1e-9)), 32 * R * R * R / 9, 1e-7 * R * R * R);
  EXPECT_NEAR(disk_distance_integral(R, R * (1 + 1e-9)), 32 * R * R * R / 9, 1e-7 * R * R * R);
}

TEST(LimitSurface, DiskIntegralMatchesEllipticReferenceValues) {
  // The closed forms evaluated in 30-digit arithmetic (mpmath ellipk/ellipe), on both sides
  // of the rim and of the switch at D = 2R, and far out (the small-m form).
  struct Case {
    double R, D, value;
  };
  for (const Case& k : {Case{1, 0.3, 2.2349654621150084927}, Case{1, 0.999999, 3.5555528888895555606},
                        Case{1, 1.2, 4.108247826088853013}, Case{1, 1.999, 6.4786443637113501641},
                        Case{1, 2.001, 6.4847245236088049529}, Case{0.5, 3, 2.364385239829103225},
                        Case{0.5, 60, 47.124298866573977311}})
    EXPECT_NEAR(disk_distance_integral(k.R, k.D), k.value, 1e-14 * k.value) << "R = " << k.R << ", D = " << k.D;
}

// ---- the body origin --------------------------------------------------------------------

TEST(LimitSurface, TriangleOffTheOriginMovesTheEllipsoidToTheOrigin) {
  const V a{0.1, 0.05}, b{0.3, 0.0}, d{0.2, 0.25};
  const double m = 0.7;
  const LimitSurfaceFromSupport ls = limit_surface_from_support(body_with({polygon({a, b, d})}, m), 0, kMu, kG);
  const V c{(a.x + b.x + d.x) / 3, (a.y + b.y + d.y) / 3};
  EXPECT_NEAR(ls.pressure_center.x, c.x, 1e-15);
  EXPECT_NEAR(ls.pressure_center.y, c.y, 1e-15);
  const double area = std::abs(cross(b - a, d - a)) / 2;
  const double f = kMu * m * kG;
  EXPECT_NEAR(ls.m_max, f * triangle_quadrature(a, b, d, c, 3000) / area, 1e-6 * ls.m_max);

  const Eigen::Matrix3d A_c = Eigen::Vector3d(1 / (f * f), 1 / (f * f), 1 / (ls.m_max * ls.m_max)).asDiagonal();
  const Eigen::Matrix3d T = to_center(c);
  EXPECT_TRUE(ls.A.isApprox(T.transpose() * A_c * T, 1e-14)) << ls.A;
  EXPECT_TRUE(ls.A.isApprox(ls.A.transpose(), 0.0));
  EXPECT_NE(ls.A(0, 2), 0.0);  // the offset couples force and torque at the origin

  // H is one ellipsoid: a wrench at the origin and the same wrench moved to c agree.
  for (const Eigen::Vector3d& F : {Eigen::Vector3d(1.0, -2.0, 0.3), Eigen::Vector3d(-0.5, 0.1, -0.7),
                                  Eigen::Vector3d(0.0, 0.0, 1.0)}) {
    const double tau_c = F(2) - (c.x * F(1) - c.y * F(0));  // torque about c
    const Eigen::Vector3d F_c(F(0), F(1), tau_c);
    const double H_origin = F.dot(ls.A * F), H_c = F_c.dot(A_c * F_c);
    EXPECT_NEAR(H_origin, H_c, 1e-13 * H_c);
  }
  // A pure force through c needs no torque about c: H = |f|^2 / f_max^2.
  const Eigen::Vector3d through_c(f, 0, -c.y * f);  // tau_O = c x f with f = (f, 0)
  EXPECT_NEAR(through_c.dot(ls.A * through_c), 1.0, 1e-13);
}

TEST(LimitSurface, BoxWithAnOffset) {
  const double w = 0.2, h = 0.1, x = 0.05, y = -0.02;
  const LimitSurfaceFromSupport centered = limit_surface_from_support(body_with({box(w, h)}), 0, kMu, kG);
  const LimitSurfaceFromSupport placed = limit_surface_from_support(body_with({box(w, h, x, y, 0.3)}), 0, kMu, kG);
  EXPECT_NEAR(placed.pressure_center.x, x, 1e-15);
  EXPECT_NEAR(placed.pressure_center.y, y, 1e-15);
  EXPECT_NEAR(placed.m_max, centered.m_max, 1e-14 * centered.m_max);  // rotation and translation leave m_max
  const Eigen::Matrix3d A_c = Eigen::Vector3d(1 / (placed.f_max * placed.f_max), 1 / (placed.f_max * placed.f_max),
                                              1 / (placed.m_max * placed.m_max))
                                  .asDiagonal();
  const Eigen::Matrix3d T = to_center({x, y});
  EXPECT_TRUE(placed.A.isApprox(T.transpose() * A_c * T, 1e-14)) << placed.A;
  EXPECT_NEAR(placed.A(2, 2), centered.A(2, 2), 1e-14 * centered.A(2, 2));  // the torque entry does not move
  EXPECT_NEAR(placed.A(0, 2), y * centered.A(2, 2), 1e-14 * centered.A(2, 2));
  EXPECT_NEAR(placed.A(1, 2), -x * centered.A(2, 2), 1e-14 * centered.A(2, 2));
}

TEST(LimitSurface, SeveralAreaShapesCombineAboutTheUnionCentroid) {
  // A box with a disk beside it (touching, not overlapping), plus a point and a segment,
  // which carry no area and change nothing.
  const double w = 0.2, h = 0.1, R = 0.05;
  const V p{0.15, 0.0};
  const Model m = body_with({box(w, h), disk(R, p), point({0.3, 0.3}), segment({0, 0}, {0.4, 0})});
  const LimitSurfaceFromSupport ls = limit_surface_from_support(m, 0, kMu, kG);
  const double a_box = w * h, a_disk = kPi * R * R, area = a_box + a_disk;
  const V c{a_disk * p.x / area, 0.0};
  EXPECT_NEAR(ls.pressure_center.x, c.x, 1e-15);
  EXPECT_NEAR(ls.pressure_center.y, c.y, 1e-15);
  const double integral = rectangle_quadrature(-w / 2, w / 2, -h / 2, h / 2, c, 3000) +
                          disk_quadrature(R, norm(p - c), 3000);
  EXPECT_NEAR(ls.m_max, kMu * kG * integral / area, 1e-6 * ls.m_max);
  const LimitSurfaceFromSupport without_extras =
      limit_surface_from_support(body_with({box(w, h), disk(R, p)}), 0, kMu, kG);
  EXPECT_EQ(ls.A, without_extras.A);
}

TEST(LimitSurface, ScalesWithMassFrictionAndGravity) {
  const Model light = body_with({box(0.2, 0.1, 0.01, 0.02)}, 1.0), heavy = body_with({box(0.2, 0.1, 0.01, 0.02)}, 3.0);
  const LimitSurfaceFromSupport a = limit_surface_from_support(light, 0, kMu, kG);
  const LimitSurfaceFromSupport b = limit_surface_from_support(heavy, 0, 2 * kMu, kG);
  EXPECT_TRUE((a.A / 36).isApprox(b.A, 1e-14));  // Ã ∝ 1/(mu m g)^2
}

// ---- errors -----------------------------------------------------------------------------

TEST(LimitSurface, Errors) {
  EXPECT_TRUE(ThrowsAtModelA(body_with({segment({0, 0}, {0.1, 0}, 0.02)}), kMu, kG,
                             "bodies[0].shapes[0] is a capsule, whose support area is not modelled"));
  EXPECT_TRUE(ThrowsAtModelA(body_with({box(0.1, 0.1), segment({0, 0}, {0.1, 0}, 0.02)}), kMu, kG,
                             "bodies[0].shapes[1] is a capsule"));
  EXPECT_TRUE(ThrowsAtModelA(body_with({half_plane()}), kMu, kG, "bodies[0].shapes[0] is a half_plane"));
  EXPECT_TRUE(ThrowsAtModelA(body_with({point({0, 0}), segment({0, 0}, {0.1, 0})}), kMu, kG,
                             "it has no shape with area (points and segments have none)"));
  EXPECT_TRUE(ThrowsAtModelA(body_with({}), kMu, kG, "it has no shapes"));
  EXPECT_TRUE(ThrowsAtModelA(body_with({box(0.1, 0.1)}, 0.0), kMu, kG, "bodies[0].mass must be > 0"));
  EXPECT_TRUE(ThrowsAtModelA(body_with({box(0.1, 0.1)}), 0.0, kG, "world.support_friction must be > 0"));
  EXPECT_TRUE(ThrowsAtModelA(body_with({box(0.1, 0.1)}), kMu, 0.0, "world.gravity must be > 0"));
}

// ---- the limit surface of a pressure distribution (Halm & Posa 2018, sec. 3.4) ----------

Eigen::Vector3d axis(int k) { return Eigen::Vector3d::Unit(k); }

TEST(SupportPressure, UniformDiskMeetsTheEllipsoidOnItsAxes) {
  // The ellipsoid (Lee & Cutkosky) is built from the true surface's axis ends: pure
  // translation (f_max) and pure rotation about c (m_max). The discretised distribution has
  // f_max to rounding (60,000 weights summed) and m_max to the midpoint error of ∫|r - c| dA,
  // O(1/n²) (3.4e-6 at n = 100).
  const double R = 0.1, mass = 2.0;
  const Model m = body_with({disk(R)}, mass);
  const LimitSurfaceFromSupport ell = limit_surface_from_support(m, 0, kMu, kG);
  const SupportPressure sp = support_pressure_uniform(m, 0, kMu, kG, 100);
  EXPECT_EQ(sp.points.size(), 6u * 100 * 100);
  const SupportAxes ax = support_axes(sp);
  EXPECT_NEAR(ax.f_max, ell.f_max, 1e-12 * ell.f_max);
  EXPECT_NEAR(ax.m_max, ell.m_max, 1e-5 * ell.m_max);
  EXPECT_LT(ax.m_max, ell.m_max);  // sectors' centroids lie inside their cells: the sum is below the integral
  EXPECT_NEAR(ax.pressure_center.x, 0.0, 1e-15);
  EXPECT_NEAR(ax.pressure_center.y, 0.0, 1e-15);
  // The ellipsoid's axis ends lie on the true surface: H = 1 there.
  EXPECT_NEAR(limit_surface_at(sp, ell.f_max * axis(0)).H, 1.0, 1e-11);
  EXPECT_NEAR(limit_surface_at(sp, ell.f_max * axis(1)).H, 1.0, 1e-11);
  EXPECT_NEAR(limit_surface_at(sp, ell.m_max * axis(2)).H, 1.0, 2e-5);  // (m_max / m_max,discrete)²
}

TEST(SupportPressure, UniformBoxOffTheOriginMeetsTheEllipsoidOnItsAxes) {
  const double w = 0.3, h = 0.1, x = 0.05, y = -0.02;
  const Model m = body_with({box(w, h, x, y, 0.3)}, 0.7);
  const LimitSurfaceFromSupport ell = limit_surface_from_support(m, 0, kMu, kG);
  const SupportPressure sp = support_pressure_uniform(m, 0, kMu, kG, 100);
  const SupportAxes ax = support_axes(sp);
  EXPECT_NEAR(ax.f_max, ell.f_max, 1e-12 * ell.f_max);
  EXPECT_NEAR(ax.m_max, ell.m_max, 1e-4 * ell.m_max);  // O(1/n²): 2.4e-5 at n = 100
  EXPECT_NEAR(ax.pressure_center.x, x, 1e-13);
  EXPECT_NEAR(ax.pressure_center.y, y, 1e-13);
  // A pure force through c, and a pure torque about c (both expressed at the origin).
  const Eigen::Vector3d through_c(0, ell.f_max, x * ell.f_max);
  EXPECT_NEAR(limit_surface_at(sp, through_c).H, 1.0, 1e-11);
  EXPECT_NEAR(limit_surface_at(sp, ell.m_max * axis(2)).H, 1.0, 2e-4);
}

TEST(SupportPressure, UniformDiskHessianMatchesItsClosedForms) {
  // Ã(F) = [∇²Φ(V)]⁻¹ (header). For a uniform disk, f = mu m g, m = 2 f R / 3:
  //   pure translation (V = (v, 0, 0)):  Ã = diag(1/f², 1/f², 4/(f² R²))   [∫x² dA / Area = R²/4]
  //   pure rotation (V = (0, 0, w)):     Ã = diag(3/(2f²), 3/(2f²), 1/m²)  [∫ dA/r / Area = 2/R]
  // So the surface is not the ellipsoid, whose Ã = diag(1/f², 1/f², 9/(4 f² R²)) is the same
  // everywhere: the true one is more curved at both ends. The ∫ dA/r entry converges as O(1/n)
  // (the 1/r singularity in the central cell: 2.8e-3 at n = 100), the others as O(1/n²).
  const double R = 0.1, mass = 2.0;
  const SupportPressure sp = support_pressure_uniform(body_with({disk(R)}, mass), 0, kMu, kG, 100);
  const double f = kMu * mass * kG, mm = 2 * f * R / 3;
  const LimitSurfacePoint t = limit_surface_at(sp, f * axis(0));
  EXPECT_TRUE(t.converged);
  EXPECT_NEAR(t.A(0, 0) * f * f, 1.0, 1e-10);
  EXPECT_NEAR(t.A(1, 1) * f * f, 1.0, 1e-10);
  EXPECT_NEAR(t.A(2, 2) * f * f * R * R, 4.0, 4 * 1e-4);
  EXPECT_NEAR(t.A(1, 2) * f * f * R, 0.0, 1e-10);
  const LimitSurfacePoint r = limit_surface_at(sp, mm * axis(2));
  EXPECT_TRUE(r.converged);
  EXPECT_NEAR(r.A(0, 0) * f * f, 1.5, 1.5 * 5e-3);
  EXPECT_NEAR(r.A(1, 1) * f * f, 1.5, 1.5 * 5e-3);
  EXPECT_NEAR(r.A(2, 2) * mm * mm, 1.0, 2e-5);
  EXPECT_GT(r.A(0, 0) * f * f, 1.5);  // the central cell's centroid is nearer than the mean 1/r
}

TEST(SupportPressure, SolutionSatisfiesItsEquations) {
  // Residual checks of the Newton solve, at wrenches in every direction on an off-center
  // box: ∇Φ(V) = F, H = F·V is 2-homogeneous, ∇H = 2V and ∇²H / 2 = ∂V/∂F = Ã (finite
  // differences), Ã F = V (Euler: ∇²Ψ F = ∇Ψ), Ã symmetric positive definite.
  const Model m = body_with({box(0.2, 0.1, 0.03, 0.01, 0.4)}, 1.3);
  const SupportPressure sp = support_pressure_uniform(m, 0, kMu, kG, 30);
  const SupportAxes ax = support_axes(sp);
  const Eigen::Vector3d D(ax.f_max, ax.f_max, ax.m_max);
  for (const Eigen::Vector3d& dir : {Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(0.3, -0.8, 0.5),
                                     Eigen::Vector3d(-0.2, 0.1, 0.97), Eigen::Vector3d(0.7, 0.7, -0.1)}) {
    const Eigen::Vector3d F = 0.8 * D.cwiseProduct(dir);
    SCOPED_TRACE(::testing::Message() << F.transpose());
    const LimitSurfacePoint p = limit_surface_at(sp, F);
    ASSERT_TRUE(p.converged) << p.residual;
    EXPECT_LE(p.residual, 1e-10);
    EXPECT_LE(p.newton_iterations, 20);
    EXPECT_NEAR(limit_surface_at(sp, 2 * F).H, 4 * p.H, 1e-9 * p.H);
    EXPECT_TRUE((p.A * F).isApprox(p.V, 1e-9)) << (p.A * F).transpose() << " vs " << p.V.transpose();
    EXPECT_TRUE(p.A.isApprox(p.A.transpose(), 0.0));
    EXPECT_EQ(p.A.llt().info(), Eigen::Success);
    for (int k = 0; k < 3; ++k) {
      const double d = 1e-5 * D(k);
      const LimitSurfacePoint up = limit_surface_at(sp, F + d * axis(k), 1e-13),
                              down = limit_surface_at(sp, F - d * axis(k), 1e-13);
      EXPECT_NEAR((up.H - down.H) / (2 * d), 2 * p.V(k), 1e-6 * std::abs(2 * p.V.dot(F)) / D(k)) << k;
      const Eigen::Vector3d column = (up.V - down.V) / (2 * d);
      EXPECT_TRUE(column.isApprox(p.A.col(k), 1e-5)) << k << ": " << column.transpose() << " vs "
                                                     << p.A.col(k).transpose();
    }
  }
}

TEST(SupportPressure, NewtonConvergesAtRandomWrenches) {
  // Near the solution Φ(V) - F·V decreases by O(residual²), below its rounding: a line search
  // on it alone stalled near a residual of 1e-8 on about a fifth of these wrenches.
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  for (const Model& m : {body_with({box(0.2, 0.1, 0.03, 0.01, 0.4)}, 1.3), body_with({disk(0.1)}, 2.0)}) {
    const SupportPressure sp = support_pressure_uniform(m, 0, kMu, kG, 30);
    const SupportAxes ax = support_axes(sp);
    for (int k = 0; k < 200; ++k) {
      const Eigen::Vector3d F(normal(rng) * ax.f_max, normal(rng) * ax.f_max, normal(rng) * ax.m_max);
      const LimitSurfacePoint p = limit_surface_at(sp, F);
      EXPECT_TRUE(p.converged) << k << ": residual " << p.residual;
      EXPECT_LE(p.newton_iterations, 12) << k;
    }
  }
}

TEST(SupportPressure, NonUniformPressureMovesTheSurfaceTheExpectedWay) {
  const double w = 0.2, h = 0.2;
  const Model m = body_with({box(w, h)});
  const SupportPressure uniform = support_pressure_uniform(m, 0, kMu, kG, 40);
  const SupportAxes u = support_axes(uniform);

  // Pressure rising linearly to the +x edge, p ∝ 1 + a x: the pressure center moves to
  // c_x = a ∫x² dA / Area = a w²/12, and a force along +y through the body origin (left of c)
  // turns the body clockwise; under uniform pressure it only translates it.
  const double a = 5.0;  // 1/m: p is 1.5 times the mean at the +x edge, 0.5 times at -x
  SupportPressure leaning = uniform;
  for (size_t i = 0; i < leaning.points.size(); ++i) leaning.weights[i] *= 1 + a * leaning.points[i].x;
  const SupportAxes l = support_axes(leaning);
  EXPECT_NEAR(l.f_max, u.f_max, 1e-12 * u.f_max);  // ∫x dA = 0: the total is unchanged
  // The cells' centroids miss each cell's own second moment: O(1/n²), 4e-4 at n = 40.
  EXPECT_NEAR(l.pressure_center.x, a * w * w / 12, 1e-3 * a * w * w / 12);
  EXPECT_LT(l.pressure_center.x, a * w * w / 12);
  // The fan of triangles is not symmetric in y: its cells' x y moments leave c_y = O(1/n²).
  EXPECT_NEAR(l.pressure_center.y, 0.0, 1e-3 * l.pressure_center.x);
  const Eigen::Vector3d push(0, 0.5 * u.f_max, 0);
  EXPECT_NEAR(limit_surface_at(uniform, push).V(2), 0.0, 1e-12 * limit_surface_at(uniform, push).V(1));
  const LimitSurfacePoint lp = limit_surface_at(leaning, push);
  EXPECT_LT(lp.V(2), 0.0);
  EXPECT_GT(lp.V(1), 0.0);

  // All the pressure on the rim of a disk: every point slides at R omega, so m_max = f R,
  // 3/2 times the uniform disk's (and the ellipsoid's) 2 f R / 3: torque is cheaper to
  // resist in H, Ã's torque entry smaller.
  const double R = 0.1;
  const Model dm = body_with({disk(R)});
  const SupportPressure disk_uniform = support_pressure_uniform(dm, 0, kMu, kG, 40);
  SupportPressure rim;
  const int n = 360;
  for (int i = 0; i < n; ++i) {
    const double t = 2 * kPi * (i + 0.5) / n;
    rim.points.push_back({R * std::cos(t), R * std::sin(t)});
    rim.weights.push_back(kMu * kG / n);
  }
  const SupportAxes ra = support_axes(rim);
  const LimitSurfaceFromSupport ell = limit_surface_from_support(dm, 0, kMu, kG);
  EXPECT_NEAR(ra.m_max, kMu * kG * R, 1e-12);
  EXPECT_GT(ra.m_max, 1.4 * ell.m_max);
  const double torque = 0.5 * ell.m_max;
  EXPECT_LT(limit_surface_at(rim, torque * axis(2)).H, limit_surface_at(disk_uniform, torque * axis(2)).H);
}

TEST(SupportPressure, UniformErrorsAreTheEllipsoids) {
  EXPECT_THROW((void)support_pressure_uniform(body_with({segment({0, 0}, {0.1, 0}, 0.02)}), 0, kMu, kG, 10),
               SceneError);
  EXPECT_THROW((void)support_pressure_uniform(body_with({box(0.1, 0.1)}), 0, kMu, kG, 0), std::invalid_argument);
  EXPECT_THROW((void)limit_surface_at(support_pressure_uniform(body_with({box(0.1, 0.1)}), 0, kMu, kG, 4),
                                      Eigen::Vector3d::Zero()),
               std::invalid_argument);
}

/// A 0.2 m square box on the support (mu_s 0.5, 1 kg) pushed up at 0.1 m/s by a point finger
/// 5 cm right of its bottom face's middle, starting in contact: it translates and turns.
constexpr const char* kOffCenterPush = R"({
  "format": 1, "name": "off_center_push",
  "world": {"type": "tabletop", "gravity": 9.81, "support_friction": 0.5},
  "model": {"formulation": "halm_posa_lcp", "B": 1.0, "c": 1e-4},
  "step": {"h": 0.025, "steps": 1},
  "bodies": [
    {"name": "box", "kind": "free", "dofs": ["x", "y", "theta"], "mass": 1.0, "pose": [0, 0, 0],
     "shapes": [{"type": "box", "size": [0.2, 0.2]}]},
    {"name": "carriage", "kind": "linked"},
    {"name": "finger", "kind": "linked", "shapes": [{"type": "point"}]}
  ],
  "joints": [
    {"name": "finger_x", "type": "prismatic", "parent": "world", "child": "carriage", "axis": [1, 0], "position": 0.05},
    {"name": "finger_y", "type": "prismatic", "parent": "carriage", "child": "finger", "axis": [0, 1], "position": -0.1}
  ],
  "contacts": {"friction": 0.3, "pairs": [{"bodies": ["finger", "box"]}]},
  "commands": {"finger_y": {"velocity": 0.1}}
})";

TEST(SupportPressure, HalmPosaSequenceOfProgramsConvergesToTheTrueSurface) {
  // Halm & Posa 2018, sec. 3.4: the first program takes the ellipsoid, the j-th the Hessian of
  // H at the (j-1)-th solution. At the fixed point the step's twist V and wrench F = Ã⁻¹ V
  // satisfy eq. (10) with the true H (V parallel to ∇H(F)); with the ellipsoid they do not.
  const Scene scene = parse_scene(kOffCenterPush, "off_center_push");
  const Model base = *scene.model;
  ASSERT_TRUE(formulation_params<HalmPosaParams>(base).limit_surface_computed);
  const SupportPressure sp = support_pressure_uniform(base, 0, 0.5, 9.81, 60);
  double worst_violation = 0.0;
  std::vector<Eigen::Vector3d> twists;
  auto solve = [&](const Eigen::Matrix3d& A_body) {
    Model m = base;
    formulation_params<HalmPosaParams>(m).limit_surface_A = A_body;
    HalmPosaLcp stepper(m);
    State s = initial_state(m);
    EXPECT_EQ(stepper.step(m, s), Status::solved) << stepper.report().detail;
    worst_violation = std::max(worst_violation, test::lcp_violation(stepper.lcp_matrix(), stepper.lcp_vector(),
                                                                    stepper.result().z));
    twists.push_back(stepper.object_displacement());  // theta = 0: the body frame is the world's
    return twists.back();
  };
  const LimitSurfaceIteration it = iterate_limit_surface(sp, *formulation_params<HalmPosaParams>(base).limit_surface_A, solve);
  ASSERT_TRUE(it.converged) << it.programs << " programs, last change " << it.change;
  EXPECT_LE(it.programs, 20);
  EXPECT_LE(worst_violation, 1e-9);
  EXPECT_GT(std::abs(it.V(2)) * 0.1, 0.1 * std::abs(it.V(1)));  // it turns: omega at the edge >= 10% of v

  auto cosine = [&](const Eigen::Vector3d& V, const Eigen::Matrix3d& A) {
    // V against the true ∇H at F = Ã⁻¹ V, in the axes' units (f_max, m_max).
    const SupportAxes ax = support_axes(sp);
    const Eigen::Vector3d F = A.ldlt().solve(V);
    const Eigen::Vector3d normal = limit_surface_at(sp, F).V;
    const Eigen::Vector3d s(ax.f_max, ax.f_max, ax.m_max);
    const Eigen::Vector3d a = V.cwiseProduct(s), b = normal.cwiseProduct(s);
    return a.dot(b) / (a.norm() * b.norm());
  };
  EXPECT_GT(cosine(it.V, it.A), 1 - 1e-12);
  EXPECT_LT(cosine(twists.front(), *formulation_params<HalmPosaParams>(base).limit_surface_A), 1 - 1e-6);  // the ellipsoid's step
  // The object's motion changes measurably from the first (ellipsoid) step.
  EXPECT_GT((twists.front() - it.V).norm(), 1e-3 * it.V.norm());
}

}  // namespace
}  // namespace qs::limit_surface_test

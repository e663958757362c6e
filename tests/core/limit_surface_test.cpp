// The ellipsoidal limit surface computed from the support (core/limit_surface.cpp): the
// closed-form area integrals against hand values and brute-force quadrature, the move of
// the ellipsoid from the pressure center to the body origin, and the errors.
#include "quasistep/core/limit_surface.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "quasistep/core/scene.hpp"

namespace qs {
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

}  // namespace
}  // namespace qs

// Point queries against every shape core, checked against hand-computed answers.
#include "quasistep/core/geometry.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace qs::geometry::geometry_test {
namespace {

using V = Vec2<double>;

void expect_vec(const V& a, const V& b, double tol = 1e-14) {
  EXPECT_NEAR(a.x, b.x, tol);
  EXPECT_NEAR(a.y, b.y, tol);
}

TEST(GeometryPoint, DistanceAndDirection) {
  const auto q = point_to_point(V{3, 4}, V{0, 0});
  EXPECT_DOUBLE_EQ(q.distance, 5.0);
  expect_vec(q.direction, {0.6, 0.8});
  expect_vec(q.closest, {0, 0});
}

TEST(GeometryPoint, CoincidentFallsBackToPlusX) {
  const auto q = point_to_point(V{1, 1}, V{1, 1});
  EXPECT_EQ(q.distance, 0.0);
  expect_vec(q.direction, {1, 0});
}

TEST(GeometrySegment, InteriorEndpointAndOnSegment) {
  const V a{0, 0}, b{2, 0};
  const auto mid = point_to_segment(V{1, 3}, a, b);
  EXPECT_DOUBLE_EQ(mid.distance, 3.0);
  expect_vec(mid.closest, {1, 0});
  expect_vec(mid.direction, {0, 1});

  const auto beyond = point_to_segment(V{5, 4}, a, b);  // nearest is the end b
  EXPECT_DOUBLE_EQ(beyond.distance, 5.0);
  expect_vec(beyond.closest, b);
  expect_vec(beyond.direction, {0.6, 0.8});

  const auto on = point_to_segment(V{0.5, 0}, a, b);  // on the segment: left normal
  EXPECT_EQ(on.distance, 0.0);
  expect_vec(on.direction, {0, 1});
  const auto on_reversed = point_to_segment(V{0.5, 0}, b, a);
  expect_vec(on_reversed.direction, {0, -1});
}

TEST(GeometryHalfPlane, SignedDistanceAboveAndBelow) {
  const V origin{0, 1}, n{0, 1};
  const auto above = point_to_half_plane(V{2, 3}, origin, n);
  EXPECT_DOUBLE_EQ(above.distance, 2.0);
  expect_vec(above.closest, {2, 1});
  const auto below = point_to_half_plane(V{2, 0.5}, origin, n);
  EXPECT_DOUBLE_EQ(below.distance, -0.5);
  expect_vec(below.closest, {2, 1});
  expect_vec(below.direction, n);
}

class GeometryPolygon : public ::testing::Test {
 protected:
  // The square [-1, 1]^2, counter-clockwise.
  const V sq[4] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
};

TEST_F(GeometryPolygon, OutsideFacingAnEdge) {
  const auto q = point_to_polygon(V{3, 0.5}, sq, 4);
  EXPECT_DOUBLE_EQ(q.distance, 2.0);
  expect_vec(q.closest, {1, 0.5});
  expect_vec(q.direction, {1, 0});
}

TEST_F(GeometryPolygon, RoundingOffAnEdgeKeepsTheEdgeNormal) {
  // A point that complementarity left 1e-16 off an edge (or exactly on its line, outside by
  // a hair of rounding) must get the edge's normal, not 0/0 or the rounding's direction.
  const V tilted[3] = {{0, 0}, {1, 0.3}, {0.2, 1}};
  const V a = tilted[0], b = tilted[1];
  const V outward = (1.0 / norm(b - a)) * V{b.y - a.y, a.x - b.x};
  for (const double off : {0.0, 1e-17, 1e-16, 3e-16, 1e-13}) {
    const V p = a + 0.37 * (b - a) + off * outward;
    const auto q = point_to_polygon(p, tilted, 3);
    EXPECT_TRUE(std::isfinite(q.direction.x) && std::isfinite(q.direction.y)) << off;
    EXPECT_NEAR(q.direction.x, outward.x, 1e-15) << off;
    EXPECT_NEAR(q.direction.y, outward.y, 1e-15) << off;
    EXPECT_NEAR(q.distance, off, 1e-15) << off;
  }
  // At a vertex, below 1e-12 m the deepest edge's normal stands in for the noise.
  const auto v = point_to_polygon(V{1 + 1e-17, 1 + 1e-17}, sq, 4);
  EXPECT_TRUE(std::isfinite(v.direction.x) && std::isfinite(v.direction.y));
  EXPECT_NEAR(norm(v.direction), 1.0, 1e-15);
}

TEST_F(GeometryPolygon, OutsideFacingAVertex) {
  const auto q = point_to_polygon(V{4, 5}, sq, 4);
  EXPECT_DOUBLE_EQ(q.distance, 5.0);
  expect_vec(q.closest, {1, 1});
  expect_vec(q.direction, {0.6, 0.8});
}

TEST_F(GeometryPolygon, InsideTakesTheShallowestEdge) {
  const auto q = point_to_polygon(V{0.25, 0.9}, sq, 4);
  EXPECT_NEAR(q.distance, -0.1, 1e-15);
  expect_vec(q.closest, {0.25, 1});
  expect_vec(q.direction, {0, 1});
}

TEST_F(GeometryPolygon, OnTheBoundaryIsZeroWithTheEdgeNormal) {
  const auto q = point_to_polygon(V{-1, 0.3}, sq, 4);
  EXPECT_EQ(q.distance, 0.0);
  expect_vec(q.direction, {-1, 0});
}

TEST_F(GeometryPolygon, TriangleMatchesSegmentDistance) {
  const V tri[3] = {{0, 0}, {4, 0}, {0, 3}};
  // Outside the hypotenuse: the distance is the point-to-line distance.
  const V p{4, 3};
  const auto q = point_to_polygon(p, tri, 3);
  const auto s = point_to_segment(p, tri[1], tri[2]);
  EXPECT_NEAR(q.distance, s.distance, 1e-15);
  EXPECT_NEAR(q.distance, 12.0 / 5.0, 1e-15);  // |3*4 + 4*3 - 12| / 5
  expect_vec(q.direction, {0.6, 0.8});
}

TEST_F(GeometryPolygon, ContinuousAcrossTheBoundary) {
  // phi changes sign smoothly when a point crosses an edge.
  for (double x : {0.999, 1.0, 1.001}) {
    const auto q = point_to_polygon(V{x, 0.2}, sq, 4);
    EXPECT_NEAR(q.distance, x - 1.0, 1e-15) << x;
    // Outside, the direction is (p - c) / |p - c| with |p - c| = 1e-3: roundoff ~ 1e-16 / 1e-3.
    expect_vec(q.direction, {1, 0}, 1e-12);
  }
}

}  // namespace
}  // namespace qs::geometry::geometry_test

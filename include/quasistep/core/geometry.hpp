// Signed distance from a point to the core of a planar shape. Every contact slot of the
// Model is "a feature point of one shape against the core of another" (see contacts.hpp),
// so these four queries are all the narrow phase there is. They are templates on the
// scalar type and branch-free (select instead of if) so a lane type can run them for
// several worlds at once with the same operations in the same order.
#pragma once

#include "quasistep/core/vec2.hpp"

namespace qs::geometry {

/// Result of a point query against a shape core.
///   distance  signed distance from the core to the point (negative inside a polygon or
///             below a half-plane; never negative for a point or segment core)
///   closest   the point of the core's boundary nearest to the query point
///   direction unit vector from the core toward the query point (the outward normal of
///             the core at `closest`); a documented fallback where it is undefined
template <class T>
struct PointQuery {
  T distance{};
  Vec2<T> closest{};
  Vec2<T> direction{};
};

/// Query point p against a single point c (the core of a disk or a point finger).
/// When p == c the direction is undefined; +x is returned.
template <class T>
PointQuery<T> point_to_point(const Vec2<T>& p, const Vec2<T>& c) {
  const Vec2<T> d = p - c;
  const T len = norm(d);
  const auto degenerate = len <= T(0);
  const T safe = select(degenerate, T(1), len);
  const Vec2<T> dir = select(degenerate, Vec2<T>{T(1), T(0)}, Vec2<T>{d.x / safe, d.y / safe});
  return {len, c, dir};
}

/// Query point p against the segment [a, b] (the core of a segment or capsule).
/// On the segment itself the direction is the left normal perp(b - a) / |b - a|.
template <class T>
PointQuery<T> point_to_segment(const Vec2<T>& p, const Vec2<T>& a, const Vec2<T>& b) {
  const Vec2<T> ab = b - a;
  const T len2 = dot(ab, ab);
  const T s = clamp(dot(p - a, ab) / len2, T(0), T(1));
  const Vec2<T> c = a + s * ab;
  const Vec2<T> d = p - c;
  const T len = norm(d);
  const auto degenerate = len <= T(0);
  const T safe = select(degenerate, T(1), len);
  const T inv_ab = T(1) / sqrt(len2);
  const Vec2<T> left = inv_ab * perp(ab);
  const Vec2<T> dir = select(degenerate, left, Vec2<T>{d.x / safe, d.y / safe});
  return {len, c, dir};
}

/// Query point p against the half-plane {x : dot(normal, x - origin) <= 0}; `normal` is
/// the unit outward normal of its boundary line.
template <class T>
PointQuery<T> point_to_half_plane(const Vec2<T>& p, const Vec2<T>& origin, const Vec2<T>& normal) {
  const T dist = dot(normal, p - origin);
  return {dist, p - dist * normal, normal};
}

/// One edge [a, b] of a convex polygon (CCW) seen from p: the signed distance of p above
/// the edge's line (plane) with the edge's outward normal, and the edge's nearest point c
/// to p with its squared distance and min(s, 1 - s) of its parameter (> 0 inside the edge).
template <class T>
struct PolygonEdge {
  T plane{};
  Vec2<T> outward{};
  Vec2<T> c{};
  T dist2{};
  T interior{};
};
template <class T>
PolygonEdge<T> polygon_edge(const Vec2<T>& p, const Vec2<T>& a, const Vec2<T>& b) {
  const Vec2<T> e = b - a;
  const T inv_len = T(1) / norm(e);
  const Vec2<T> outward{e.y * inv_len, -e.x * inv_len};  // right of a CCW edge
  const T plane = dot(outward, p - a);
  const T s = clamp(dot(p - a, e) / dot(e, e), T(0), T(1));
  const Vec2<T> c = a + s * e;
  const Vec2<T> d = p - c;
  return {plane, outward, c, dot(d, d), min(s, T(1) - s)};
}

/// Query point p against a convex polygon with `n` >= 3 vertices in counter-clockwise
/// order. Outside: the Euclidean distance to the nearest edge point. Inside or on the
/// boundary: minus the depth below the nearest edge, whose outward normal is the direction
/// (the shallowest way out, which makes phi continuous across the boundary).
template <class T>
PointQuery<T> point_to_polygon(const Vec2<T>& p, const Vec2<T>* v, int n) {
  // Deepest-edge search (inside) and nearest-edge search (outside), both over all edges.
  PolygonEdge<T> deepest, nearest;
  if constexpr (carries_derivatives<T>) {
    // With derivatives (T = Jet, quasistep/core/jet.hpp) the searches run on the values
    // alone and only the two winning edges are evaluated in T: the values are the same
    // operations on the same numbers, so the same edges win as in the branch-free search
    // below, and each winner's derivative is the one its select would keep; the losing
    // edges' derivatives (most of a polygon's cost in T) are never formed.
    const auto value = [](const Vec2<T>& x) { return Vec2<double>{x.x.v, x.y.v}; };
    const Vec2<double> pv = value(p);
    int deep = 0, near = 0;
    double best_plane = 0, best_dist2 = 0;
    for (int i = 0; i < n; ++i) {
      const PolygonEdge<double> e = polygon_edge(pv, value(v[i]), value(v[i + 1 == n ? 0 : i + 1]));
      if (i == 0 || e.plane > best_plane) {
        best_plane = e.plane;
        deep = i;
      }
      if (i == 0 || e.dist2 < best_dist2) {
        best_dist2 = e.dist2;
        near = i;
      }
    }
    deepest = polygon_edge(p, v[deep], v[deep + 1 == n ? 0 : deep + 1]);
    nearest = near == deep ? deepest : polygon_edge(p, v[near], v[near + 1 == n ? 0 : near + 1]);
  } else {
    for (int i = 0; i < n; ++i) {
      const PolygonEdge<T> e = polygon_edge(p, v[i], v[i + 1 == n ? 0 : i + 1]);
      if (i == 0) {
        deepest = nearest = e;
      } else {
        const auto better_plane = e.plane > deepest.plane;
        deepest.plane = select(better_plane, e.plane, deepest.plane);
        deepest.outward = select(better_plane, e.outward, deepest.outward);
        const auto nearer = e.dist2 < nearest.dist2;
        nearest.dist2 = select(nearer, e.dist2, nearest.dist2);
        nearest.c = select(nearer, e.c, nearest.c);
        nearest.outward = select(nearer, e.outward, nearest.outward);
        nearest.interior = select(nearer, e.interior, nearest.interior);
      }
    }
  }
  const auto inside = deepest.plane <= T(0);
  const T out_dist = sqrt(nearest.dist2);
  // Outside, the direction from the nearest point: where that point lies inside an edge it
  // is the edge's outward normal, exactly (dividing the tiny offset of a point that complementarity
  // left 1e-16 off the edge by its own length gave rounding noise, or 0/0); at a vertex it is
  // the offset's direction, unless the offset is below 1e-12 m, where that direction is noise
  // too and the deepest edge's normal stands in.
  const auto on_edge = nearest.interior > T(0);
  const auto measurable = out_dist > T(1e-12);
  const T safe = select(measurable, out_dist, T(1));
  const Vec2<T> vertex_dir{(p.x - nearest.c.x) / safe, (p.y - nearest.c.y) / safe};
  const Vec2<T> out_dir = select(on_edge, nearest.outward, select(measurable, vertex_dir, deepest.outward));
  const Vec2<T> in_closest = p - deepest.plane * deepest.outward;
  return {select(inside, deepest.plane, out_dist), select(inside, in_closest, nearest.c),
          select(inside, deepest.outward, out_dir)};
}

}  // namespace qs::geometry

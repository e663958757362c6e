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

/// Query point p against a convex polygon with `n` >= 3 vertices in counter-clockwise
/// order. Outside: the Euclidean distance to the nearest edge point. Inside or on the
/// boundary: minus the depth below the nearest edge, whose outward normal is the direction
/// (the shallowest way out, which makes phi continuous across the boundary).
template <class T>
PointQuery<T> point_to_polygon(const Vec2<T>& p, const Vec2<T>* v, int n) {
  // Deepest-edge search (inside) and nearest-edge search (outside), both over all edges.
  T best_plane = T(0);
  Vec2<T> best_plane_normal{};
  T best_edge = T(0);
  Vec2<T> best_edge_point{};
  Vec2<T> best_edge_normal{};
  T best_edge_interior = T(0);  // min(s, 1 - s) of the nearest point: > 0 inside the edge
  for (int i = 0; i < n; ++i) {
    const Vec2<T>& a = v[i];
    const Vec2<T>& b = v[i + 1 == n ? 0 : i + 1];
    const Vec2<T> e = b - a;
    const T inv_len = T(1) / norm(e);
    const Vec2<T> outward{e.y * inv_len, -e.x * inv_len};  // right of a CCW edge
    const T plane = dot(outward, p - a);
    const T s = clamp(dot(p - a, e) / dot(e, e), T(0), T(1));
    const Vec2<T> c = a + s * e;
    const Vec2<T> d = p - c;
    const T dist2 = dot(d, d);
    const T interior = min(s, T(1) - s);
    if (i == 0) {
      best_plane = plane;
      best_plane_normal = outward;
      best_edge = dist2;
      best_edge_point = c;
      best_edge_normal = outward;
      best_edge_interior = interior;
    } else {
      const auto better_plane = plane > best_plane;
      best_plane = select(better_plane, plane, best_plane);
      best_plane_normal = select(better_plane, outward, best_plane_normal);
      const auto nearer = dist2 < best_edge;
      best_edge = select(nearer, dist2, best_edge);
      best_edge_point = select(nearer, c, best_edge_point);
      best_edge_normal = select(nearer, outward, best_edge_normal);
      best_edge_interior = select(nearer, interior, best_edge_interior);
    }
  }
  const auto inside = best_plane <= T(0);
  const T out_dist = sqrt(best_edge);
  // Outside, the direction from the nearest point: where that point lies inside an edge it
  // is the edge's outward normal, exactly (dividing the tiny offset of a point that complementarity
  // left 1e-16 off the edge by its own length gave rounding noise, or 0/0); at a vertex it is
  // the offset's direction, unless the offset is below 1e-12 m, where that direction is noise
  // too and the deepest edge's normal stands in.
  const auto on_edge = best_edge_interior > T(0);
  const auto measurable = out_dist > T(1e-12);
  const T safe = select(measurable, out_dist, T(1));
  const Vec2<T> vertex_dir{(p.x - best_edge_point.x) / safe, (p.y - best_edge_point.y) / safe};
  const Vec2<T> out_dir = select(on_edge, best_edge_normal, select(measurable, vertex_dir, best_plane_normal));
  const Vec2<T> in_closest = p - best_plane * best_plane_normal;
  return {select(inside, best_plane, out_dist), select(inside, in_closest, best_edge_point),
          select(inside, best_plane_normal, out_dir)};
}

}  // namespace qs::geometry

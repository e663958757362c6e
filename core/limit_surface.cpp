#include "quasistep/core/limit_surface.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "quasistep/core/json_node.hpp"

namespace qs {
namespace {

/// K(m) and the tail T = Σ_{n>=1} 2^(n-1) c_n² of the arithmetic-geometric mean, parameter
/// m = k² in [0, 1) (Abramowitz & Stegun 17.6). E(m) = K (1 - m/2 - T). c_{n+1} is taken as
/// c_n² / (4 a_{n+1}) rather than (a_n - b_n)/2, which cancels when m is small.
struct Agm {
  double m = 0.0;
  double K = 0.0;
  double T = 0.0;
  double E() const { return K * (1.0 - m / 2 - T); }
};

Agm agm(double m) {
  double a = 1.0, b = std::sqrt(1.0 - m), c2 = m;  // c_0² = m
  double tail = 0.0, weight = 0.5;                  // 2^(n-1)
  for (int n = 1; n < 64; ++n) {
    const double a1 = (a + b) / 2;
    const double c = c2 / (4 * a1);
    b = std::sqrt(a * b);
    a = a1;
    c2 = c * c;
    weight *= 2;
    tail += weight * c2;
    if (c2 <= 1e-34 * a * a) break;
  }
  Agm r;
  r.K = std::numbers::pi / (2 * a);
  r.T = tail;
  r.m = m;
  return r;
}

[[noreturn]] void cannot(const Model& m, int body, const std::string& why) {
  throw JsonInputError("model.A", "cannot compute the limit surface of body \"" + m.bodies[body].name + "\": " + why +
                                      "; give model.A");
}

}  // namespace

// In polar coordinates about c the disk is, along the direction s from the line c -> p,
// the chord rho in [D cos s - w, D cos s + w], w = sqrt(R² - D² sin² s); integrating
// rho² drho ds gives complete elliptic integrals (checked against quadrature in the tests):
//   D <= R:  (4R³/9) [(7 + m) E(m) - 4 (1 - m) K(m)],            m = (D/R)²
//   D >  R:  (4D/9) [(D² + 7R²) E(m) - (1 - m)(D² + 3R²) K(m)],   m = (R/D)²
// The second cancels as m -> 0; there it is rewritten with the AGM tail T as
//   (4 D R²/9) K(m) [9/2 - m/2 - 7T - T/m]   (T = O(m²), so nothing cancels).
double disk_distance_integral(double R, double D) {
  if (D == 0) return 2 * std::numbers::pi * R * R * R / 3;  // mean distance 2R/3
  if (D == R) return 32 * R * R * R / 9;                     // E(1) = 1, (1 - m) K -> 0
  if (D < R) {
    const Agm g = agm((D / R) * (D / R));
    return 4 * R * R * R / 9 * ((7 + g.m) * g.E() - 4 * (1 - g.m) * g.K);
  }
  const Agm g = agm((R / D) * (R / D));
  if (g.m >= 0.25) return 4 * D / 9 * ((D * D + 7 * R * R) * g.E() - (1 - g.m) * (D * D + 3 * R * R) * g.K);
  return 4 * D * R * R / 9 * g.K * (4.5 - g.m / 2 - 7 * g.T - g.T / g.m);
}

// Fan of signed triangles (c, v_i, v_i+1); each is swept by rays from c between the edge
// angles psi, measured from the foot of the perpendicular (distance d) to the edge line:
// ∫ |r| dA = ∫ rho³/3 dpsi, rho = d / cos psi, and with t = d tan psi the position along the
// edge, ∫ d³ sec³(psi)/3 dpsi = F(t) = (d t sqrt(d² + t²) + d³ asinh(t / d)) / 6.
double polygon_distance_integral(const std::vector<Vec2<double>>& v, const Vec2<double>& c) {
  double sum = 0.0;
  const size_t n = v.size();
  for (size_t i = 0; i < n; ++i) {
    const Vec2<double> a = v[i] - c, b = v[(i + 1) % n] - c;
    const Vec2<double> e = b - a;
    const double len = norm(e);
    const double area2 = cross(a, b);  // twice the signed area of the triangle
    const double d = std::abs(area2) / len;
    if (!(d * d * d > 0)) continue;  // c on the edge line: the triangle has no area
    const Vec2<double> u{e.x / len, e.y / len};
    auto F = [d](double t) { return (d * t * std::sqrt(d * d + t * t) + d * d * d * std::asinh(t / d)) / 6; };
    const double piece = F(dot(b, u)) - F(dot(a, u));
    sum += area2 > 0 ? piece : -piece;
  }
  return sum;
}

LimitSurfaceFromSupport limit_surface_from_support(const Model& m, int body, double support_friction, double gravity) {
  const Body& B = m.bodies[body];
  const std::string where = "bodies[" + std::to_string(body) + "]";
  if (!(B.mass > 0)) cannot(m, body, where + ".mass must be > 0");
  if (!(support_friction > 0)) cannot(m, body, "world.support_friction must be > 0");
  if (!(gravity > 0)) cannot(m, body, "world.gravity must be > 0");

  // The support patch: area shapes only. Points and segments carry no pressure.
  struct Piece {
    const Shape* shape;
    double area;
    Vec2<double> centroid;
  };
  std::vector<Piece> pieces;
  double area = 0.0;
  Vec2<double> moment{};
  for (size_t j = 0; j < B.shapes.size(); ++j) {
    const Shape& s = m.shapes[B.shapes[j]];
    const std::string at = where + ".shapes[" + std::to_string(j) + "]";
    Piece p{&s, 0.0, {}};
    switch (s.core) {
      case ShapeCore::half_plane: cannot(m, body, at + " is a half_plane, whose area is unbounded");
      case ShapeCore::segment:
        if (s.radius > 0) cannot(m, body, at + " is a capsule, whose support area is not modelled");
        continue;
      case ShapeCore::point:
        if (!(s.radius > 0)) continue;
        p.area = std::numbers::pi * s.radius * s.radius;
        p.centroid = s.points[0];
        break;
      case ShapeCore::polygon: {
        double a2 = 0.0, cx = 0.0, cy = 0.0;  // shoelace, about the first vertex for accuracy
        const Vec2<double> o = s.points[0];
        for (size_t i = 1; i + 1 < s.points.size(); ++i) {
          const Vec2<double> p1 = s.points[i] - o, p2 = s.points[i + 1] - o;
          const double t = cross(p1, p2);
          a2 += t;
          cx += t * (p1.x + p2.x);
          cy += t * (p1.y + p2.y);
        }
        p.area = a2 / 2;
        p.centroid = {o.x + cx / (3 * a2), o.y + cy / (3 * a2)};
        break;
      }
    }
    area += p.area;
    moment = moment + p.area * p.centroid;
    pieces.push_back(p);
  }
  if (pieces.empty())
    cannot(m, body, B.shapes.empty() ? "it has no shapes" : "it has no shape with area (points and segments have none)");

  const Vec2<double> c{moment.x / area, moment.y / area};
  double integral = 0.0;  // ∫ |r - c| dA over the patch
  for (const Piece& p : pieces) {
    if (p.shape->core == ShapeCore::point) integral += disk_distance_integral(p.shape->radius, norm(p.centroid - c));
    else integral += polygon_distance_integral(p.shape->points, c);
  }

  LimitSurfaceFromSupport out;
  out.pressure_center = c;
  out.f_max = support_friction * B.mass * gravity;
  out.m_max = out.f_max * integral / area;
  const Eigen::Vector3d diag_c(1 / (out.f_max * out.f_max), 1 / (out.f_max * out.f_max), 1 / (out.m_max * out.m_max));
  Eigen::Matrix3d T = Eigen::Matrix3d::Identity();
  T(2, 0) = c.y;
  T(2, 1) = -c.x;
  const Eigen::Matrix3d A = T.transpose() * diag_c.asDiagonal() * T;
  out.A = (A + A.transpose()) / 2;  // symmetric to the last bit
  return out;
}

}  // namespace qs

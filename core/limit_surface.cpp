#include "quasistep/core/limit_surface.hpp"

#include <Eigen/Cholesky>
#include <Eigen/LU>

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
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

// ---- The limit surface of a support pressure distribution -----------------------------------

SupportPressure support_pressure_uniform(const Model& m, int body, double support_friction, double gravity, int n) {
  // The same validation (and errors) as the ellipsoid: area shapes only, mass, mu, g > 0.
  (void)limit_surface_from_support(m, body, support_friction, gravity);
  if (n < 1) throw std::invalid_argument("support_pressure_uniform: n must be >= 1");
  const Body& B = m.bodies[body];
  SupportPressure out;
  std::vector<double> areas;
  for (const int k : B.shapes) {
    const Shape& s = m.shapes[k];
    if (s.core == ShapeCore::point && s.radius > 0) {
      // Ring j spans radii [j, j+1] R/n and has area (2j+1) pi (R/n)²: 6 (2j+1) sectors of one
      // area pi R² / (6 n²); an annular sector's centroid is at
      // (2/3) (r2³ - r1³) / (r2² - r1²) sin(a) / a from the center, a its half-angle.
      const double R = s.radius;
      const double cell = std::numbers::pi * R * R / (6.0 * n * n);
      for (int j = 0; j < n; ++j) {
        const double r1 = R * j / n, r2 = R * (j + 1) / n;
        const int sectors = 6 * (2 * j + 1);
        const double a = std::numbers::pi / sectors;
        const double rho = 2.0 / 3.0 * (r2 * r2 * r2 - r1 * r1 * r1) / (r2 * r2 - r1 * r1) * std::sin(a) / a;
        for (int k2 = 0; k2 < sectors; ++k2) {
          const double phi = (2 * k2 + 1) * a;
          out.points.push_back({s.points[0].x + rho * std::cos(phi), s.points[0].y + rho * std::sin(phi)});
          areas.push_back(cell);
        }
      }
    } else if (s.core == ShapeCore::polygon) {
      // Fan of triangles (v0, v_i, v_i+1), each cut into n² similar triangles (n(n+1)/2 upright,
      // n(n-1)/2 inverted) of equal area, at their centroids.
      const Vec2<double> o = s.points[0];
      for (size_t i = 1; i + 1 < s.points.size(); ++i) {
        const Vec2<double> e1 = s.points[i] - o, e2 = s.points[i + 1] - o;
        const double cell = cross(e1, e2) / 2 / (double(n) * n);
        for (int a = 0; a < n; ++a)
          for (int b = 0; a + b < n; ++b) {
            out.points.push_back(o + ((a + 1.0 / 3) / n) * e1 + ((b + 1.0 / 3) / n) * e2);
            areas.push_back(cell);
            if (a + b + 1 < n) {
              out.points.push_back(o + ((a + 2.0 / 3) / n) * e1 + ((b + 2.0 / 3) / n) * e2);
              areas.push_back(cell);
            }
          }
      }
    }
  }
  double total = 0.0;
  for (const double a : areas) total += a;
  const double f = support_friction * B.mass * gravity;
  out.weights.reserve(areas.size());
  for (const double a : areas) out.weights.push_back(f * a / total);
  return out;
}

SupportAxes support_axes(const SupportPressure& s) {
  SupportAxes ax;
  Vec2<double> moment{};
  for (size_t i = 0; i < s.points.size(); ++i) {
    ax.f_max += s.weights[i];
    moment = moment + s.weights[i] * s.points[i];
  }
  ax.pressure_center = {moment.x / ax.f_max, moment.y / ax.f_max};
  for (size_t i = 0; i < s.points.size(); ++i) ax.m_max += s.weights[i] * norm(s.points[i] - ax.pressure_center);
  return ax;
}

namespace {

/// Φ(V) = P(V)²/2 with its gradient P ∇P and Hessian ∇P ∇P' + P ∇²P (header comment).
struct Dissipation {
  double phi;
  Eigen::Vector3d grad;
  Eigen::Matrix3d hess;
};

Dissipation dissipation(const SupportPressure& s, const Eigen::Vector3d& V, double eps2, bool with_hessian) {
  double P = 0.0;
  Eigen::Vector3d dP = Eigen::Vector3d::Zero();
  Eigen::Matrix3d d2P = Eigen::Matrix3d::Zero();
  for (size_t i = 0; i < s.points.size(); ++i) {
    const double x = s.points[i].x, y = s.points[i].y, w = s.weights[i];
    const double vx = V(0) - V(2) * y, vy = V(1) + V(2) * x;  // v_i = G_i V
    const double speed = std::sqrt(vx * vx + vy * vy + eps2);
    P += w * speed;
    const double ux = vx / speed, uy = vy / speed;
    dP += w * Eigen::Vector3d(ux, uy, x * uy - y * ux);  // G_i' v̂_i
    if (with_hessian) {
      // (I - v̂ v̂') is (eps² excepted) the projector on the unit normal n = (-uy, ux); G_i' n:
      const Eigen::Vector3d g(-uy, ux, x * ux + y * uy);
      d2P += (w / speed) * g * g.transpose();
    }
  }
  Dissipation d;
  d.phi = P * P / 2;
  d.grad = P * dP;
  if (with_hessian) d.hess = dP * dP.transpose() + P * d2P;
  return d;
}

}  // namespace

LimitSurfacePoint limit_surface_at(const SupportPressure& s, const Eigen::Vector3d& F, double tolerance) {
  const SupportAxes ax = support_axes(s);
  const Eigen::Vector3d D(1 / ax.f_max, 1 / ax.f_max, 1 / ax.m_max);
  const double f_norm = D.cwiseProduct(F).norm();
  if (!(f_norm > 0)) throw std::invalid_argument("limit_surface_at: F must be nonzero");
  const double L = ax.m_max / ax.f_max;  // the distribution's radius

  // Start from the ellipsoid's twist V = Ã_ell F (about c, moved to the origin as in
  // limit_surface_from_support).
  const double tau_c = F(2) - (ax.pressure_center.x * F(1) - ax.pressure_center.y * F(0));
  const double omega = tau_c / (ax.m_max * ax.m_max);
  Eigen::Vector3d V(F(0) / (ax.f_max * ax.f_max) + omega * ax.pressure_center.y,
                    F(1) / (ax.f_max * ax.f_max) - omega * ax.pressure_center.x, omega);

  auto eps2_of = [&](const Eigen::Vector3d& v) {
    const double speed = std::hypot(v(0), v(1)) + std::abs(v(2)) * L;
    return 1e-24 * speed * speed;
  };
  LimitSurfacePoint out;
  double eps2 = eps2_of(V);
  Dissipation d = dissipation(s, V, eps2, true);
  double best = std::numeric_limits<double>::infinity();
  int stalled = 0;
  for (int it = 0; it < 100; ++it) {
    out.residual = D.cwiseProduct(d.grad - F).norm() / f_norm;
    if (out.residual <= tolerance) {
      out.converged = true;
      break;
    }
    // Rounding in the sums over the points bounds the attainable residual: stop once Newton
    // no longer reduces it (quadratic convergence gets there in a few iterations).
    if (out.residual < best) {
      best = out.residual;
      stalled = 0;
    } else if (++stalled == 3) {
      break;
    }
    const Eigen::Vector3d g = d.grad - F;
    const Eigen::Vector3d step = -d.hess.ldlt().solve(g);
    // Backtracking on Φ(V) - F·V (convex; Armijo), or on the residual once the objective's
    // decrease, O(residual²), is below its rounding: Newton's full step near the solution.
    const double f0 = d.phi - F.dot(V), slope = g.dot(step);
    double t = 1.0;
    Eigen::Vector3d trial = V + step;
    for (int k = 0; k < 60; ++k) {
      trial = V + t * step;
      const Dissipation dt = dissipation(s, trial, eps2, false);
      if (dt.phi - F.dot(trial) <= f0 + 1e-4 * t * slope) break;
      if (D.cwiseProduct(dt.grad - F).norm() / f_norm < (1 - 1e-4 * t) * out.residual) break;
      t /= 2;
    }
    V = trial;
    eps2 = eps2_of(V);
    d = dissipation(s, V, eps2, true);
    out.newton_iterations = it + 1;
  }
  if (!out.converged) out.residual = D.cwiseProduct(d.grad - F).norm() / f_norm;
  const Eigen::Matrix3d A = d.hess.inverse();
  out.A = (A + A.transpose()) / 2;
  out.V = V;
  out.H = F.dot(V);
  return out;
}

LimitSurfaceIteration iterate_limit_surface(const SupportPressure& s, const Eigen::Matrix3d& A0,
                                            const std::function<Eigen::Vector3d(const Eigen::Matrix3d&)>& solve,
                                            int max_programs, double tolerance) {
  LimitSurfaceIteration it;
  it.A = A0;
  for (;;) {
    it.V = solve(it.A);
    ++it.programs;
    if (it.V.squaredNorm() == 0.0) {  // the object does not move: eq. (10) with k = 0
      it.F.setZero();
      it.converged = true;
      return it;
    }
    it.F = it.A.ldlt().solve(it.V);  // eq. (11): V = k Ã F, any k > 0
    if (it.programs >= max_programs) return it;
    const Eigen::Matrix3d next = limit_surface_at(s, it.F).A;  // the Hessian at the solution
    it.change = (next - it.A).norm() / next.norm();
    it.A = next;
    if (it.change < tolerance) {
      it.V = solve(it.A);  // the program at the converged Ã
      ++it.programs;
      it.F = it.A.ldlt().solve(it.V);
      it.converged = true;
      return it;
    }
  }
}

}  // namespace qs

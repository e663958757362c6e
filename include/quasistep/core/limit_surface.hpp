// The ellipsoidal limit surface of a body sliding on the tabletop support, computed from
// its mass, the support friction and the area of its shapes (used when a tabletop scene
// gives no model.A).
//
// Halm & Posa 2018, sec. 3.3-3.4 (Halm & Posa) takes H(F) = F' Ã F over the body-axis friction
// wrench F (eq. (11)) and A = R Ã R' in the world (eq. (12)); it leaves Ã to the user.
// Here Ã is the standard ellipsoidal approximation for a uniform pressure distribution
// (Lee & Cutkosky 1991, "Fixture planning with friction", J. Eng. Ind. 113(3); used by
// Zhou et al. 2018, Halm & Posa's (2018) ref. [31], and by Hogan & Rodriguez): about the pressure
// center c, the area centroid of the support patch,
//   f_max = mu_s m g                                  (pure translation),
//   m_max = mu_s m g (1/Area) ∫ |r - c| dA           (pure rotation about c),
//   Ã_c   = diag(1/f_max², 1/f_max², 1/m_max²).
// F = [f_x, f_y, tau] has tau about the BODY ORIGIN, so Ã = T' Ã_c T with F_c = T F,
//   T = [[1, 0, 0], [0, 1, 0], [c_y, -c_x, 1]]   (tau_c = tau - (c_x f_y - c_y f_x)),
// and H(F) = F_c' Ã_c F_c: the same ellipsoid, expressed at the origin.
//
// The patch is the union of the body's area shapes (disks, boxes, polygons), assumed not
// to overlap; the integrals are exact closed forms (polygons: fan of triangles from c;
// disks: complete elliptic integrals when c is not the disk's center). Points and
// segments have no area and are ignored next to area shapes. Capsules (not modelled) and
// half-planes (unbounded) are rejected. The body's `com` is not used: uniform pressure
// puts the pressure center at the area centroid.
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <functional>
#include <vector>

#include "quasistep/core/model.hpp"
#include "quasistep/core/vec2.hpp"

namespace qs {

struct LimitSurfaceFromSupport {
  Eigen::Matrix3d A;              // Ã in the body frame, torque about the body origin
  double f_max = 0.0;             // N, mu_s m g
  double m_max = 0.0;             // N m, about the pressure center
  Vec2<double> pressure_center{};  // c, body frame (the area centroid)
};

/// Ã of body `body` of `m` (shapes in the body frame, m.bodies[body].mass) on a support of
/// friction coefficient `support_friction` under `gravity`. Throws SceneError at path
/// "model.A" ("cannot compute the limit surface of body "NAME": <reason>; give model.A")
/// when the mass, friction or gravity is not > 0 or the body has no usable support area.
LimitSurfaceFromSupport limit_surface_from_support(const Model& m, int body, double support_friction, double gravity);

/// ∫ |r - c| dA over the disk of center p and radius R, where D = |p - c| (exact; exposed
/// for tests).
double disk_distance_integral(double radius, double center_distance);

/// ∫ |r - c| dA over a convex polygon (vertices counter-clockwise); c anywhere (exact;
/// exposed for tests).
double polygon_distance_integral(const std::vector<Vec2<double>>& vertices, const Vec2<double>& c);


// ---- The limit surface of a support pressure distribution (Halm & Posa 2018, sec. 3.3-3.4) ----
//
// Halm & Posa 2018, sec. 3.4: "For non-quadratic descriptions of H(F) ... one may solve a
// sequence of programs such that A in the j-th program is equal to the Hessian of H evaluated
// at a solution of the (j-1)-th program." Here H is the exact limit surface of a pressure
// distribution discretised into support points r_i carrying friction weights
// w_i = mu_s p_i a_i (N): a body twist V = [v_x, v_y, omega] (body frame, about the body
// origin) moves r_i at v_i = G_i V, G_i = [[1, 0, -y_i], [0, 1, x_i]], and
//   P(V) = Σ w_i |v_i|                    (power dissipated by the support),
//   F(V) = ∇P(V) = Σ w_i G_i' v_i/|v_i|   (the wrench that keeps the body sliding at V)
// traces the limit surface (Goyal, Ruina & Papadopoulos 1991): P is its support function.
// H(F) = g(F)², g its gauge, is the scale-invariant H of eq. (10) (H = 1 on the surface, as
// F' Ã F is for the ellipsoid). With Φ(V) = P(V)²/2, the convex conjugate of H/2, the twist
// solving ∇Φ(V) = F satisfies
//   H(F) = F·V,   ∇H(F) = 2V   (so V is eq. (10)'s k ∇H(F) with k = 1/2),
//   Ã(F) = ∇²H(F)/2 = [∇²Φ(V)]⁻¹,   ∇²Φ = ∇P ∇P' + P Σ (w_i/|v_i|) G_i' (I - v̂_i v̂_i') G_i,
// the body-frame Ã the stepper takes (eq. (11); the 1/2 matches H = F' Ã F for an ellipsoid).
// For an ellipsoid Ã(F) is Ã everywhere; for a real pressure distribution it depends on F.

/// A support pressure distribution: points in the body frame and their friction weights
/// w_i = mu_s p_i a_i (N), all > 0. Build one with support_pressure_uniform() or fill it.
struct SupportPressure {
  std::vector<Vec2<double>> points;
  std::vector<double> weights;
};

/// The area shapes of body `body` (disks, boxes, polygons: as limit_surface_from_support)
/// under a uniform pressure, discretised into points of total weight mu_s m g: each
/// polygon's triangles (a fan from its first vertex) into n² similar triangles at their
/// centroids, each disk into n rings (ring j: 6 (2j+1) equal sectors) at their centroids.
/// Every piece keeps its exact area, so the discrete pressure center is the area centroid.
/// Throws as limit_surface_from_support does, and std::invalid_argument when n < 1.
SupportPressure support_pressure_uniform(const Model& m, int body, double support_friction, double gravity, int n);

/// The ends of the limit surface's axes about the pressure center c = Σ w_i r_i / Σ w_i:
/// f_max = Σ w_i (pure translation), m_max = Σ w_i |r_i - c| (pure rotation about c), the
/// points where the ellipsoidal approximation (limit_surface_from_support) meets the surface.
struct SupportAxes {
  double f_max = 0.0;
  double m_max = 0.0;
  Vec2<double> pressure_center{};
};
SupportAxes support_axes(const SupportPressure& s);

/// The limit surface at one wrench F (body frame, torque about the body origin, F != 0).
struct LimitSurfacePoint {
  Eigen::Matrix3d A;   // Ã(F) = ∇²H(F)/2, symmetric positive definite (eq. (11))
  Eigen::Vector3d V;   // the twist with ∇Φ(V) = F: ∇H(F) = 2V (eq. (10))
  double H = 0.0;      // H(F) = F·V; 1 on the limit surface
  double residual = 0.0;  // |D (∇Φ(V) - F)| / |D F|, D = diag(1/f_max, 1/f_max, 1/m_max)
  int newton_iterations = 0;
  bool converged = false;
};

/// Solves ∇Φ(V) = F by Newton's method from the ellipsoid's twist, backtracking on
/// Φ(V) - F·V (strictly convex away from twists whose rotation center is a support point)
/// or, once its decrease is below rounding, on the residual; stops at a residual below
/// `tolerance` (converged) or when Newton no longer reduces it (converged stays false). A
/// support point the twist leaves (nearly) at rest is smoothed, |v_i| as
/// sqrt(|v_i|² + eps²) with eps 1e-12 of the twist's speed at the distribution's radius
/// m_max / f_max: there the limit surface has an edge. Throws std::invalid_argument when F = 0.
LimitSurfacePoint limit_surface_at(const SupportPressure& s, const Eigen::Vector3d& F, double tolerance = 1e-10);

/// The paper's sequence of programs (Halm & Posa 2018, sec. 3.4): `solve(Ã)` solves the program
/// with body-frame Ã and returns the object's body twist V (up to the positive factor k of
/// eq. (10): any scale); then F = Ã⁻¹ V (eq. (11)), and the next program takes Ã(F). Stops
/// when the relative change of Ã (Frobenius) is below `tolerance`, when the object does not
/// move (V = 0: eq. (10) holds with k = 0 whatever Ã), or after `max_programs`.
struct LimitSurfaceIteration {
  Eigen::Matrix3d A;      // Ã of the last program solved
  Eigen::Vector3d V;      // its twist
  Eigen::Vector3d F;      // its wrench Ã⁻¹ V (scale of V)
  int programs = 0;       // programs solved
  double change = 0.0;    // relative change of Ã at the last update
  bool converged = false;
};
LimitSurfaceIteration iterate_limit_surface(const SupportPressure& s, const Eigen::Matrix3d& A0,
                                            const std::function<Eigen::Vector3d(const Eigen::Matrix3d&)>& solve,
                                            int max_programs = 20, double tolerance = 1e-9);

}  // namespace qs

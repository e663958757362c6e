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

}  // namespace qs

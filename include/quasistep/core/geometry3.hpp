// 3D geometry of the body_on_plane world (Xie & Chakraborty 2021, secs. 3-4): unit
// quaternions [w, x, y, z] (body to world) and the quaternion time step of their eq. (7); the
// convex hull of a point set (their Conv(F)) and the faces of a Body3's hull: planes, and the
// curved side of a cylinder hull. Used by the scene reader and the ECP stepper
// (core/formulations/ecp_ncp/).
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <Eigen/Geometry>  // cross products of the quaternion helpers
#include <string>
#include <vector>

#include "quasistep/core/model.hpp"

namespace qs {

namespace geometry3 {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Quat = Eigen::Vector4d;  // [w, x, y, z]

inline Quat qmul(const Quat& a, const Quat& b) {
  const Vec3 av = a.tail<3>(), bv = b.tail<3>();
  Quat r;
  r[0] = a[0] * b[0] - av.dot(bv);
  r.tail<3>() = a[0] * bv + b[0] * av + av.cross(bv);
  return r;
}

inline Quat pure(const Vec3& w) { return Quat(0, w[0], w[1], w[2]); }
inline Quat conj(const Quat& q) { return Quat(q[0], -q[1], -q[2], -q[3]); }

inline Mat3 skew(const Vec3& a) {
  Mat3 s;
  s << 0, -a[2], a[1], a[2], 0, -a[0], -a[1], a[0], 0;
  return s;
}

// Xie & Chakraborty 2021, eq. (7) in the quaternion chart, then the projection onto unit quaternions.
// Returns the unnormalised Q (its norm is needed for the derivative).
inline Quat advance_quaternion(const Quat& q0, const Vec3& w, double h) { return q0 + 0.5 * h * qmul(pure(w), q0); }

/// d theta / d w for the update above: a change dw of w rotates the end pose by the spatial
/// angle Jth dw, i.e. R(w + dw) = (I + [Jth dw]x) R(w) to first order.
inline Mat3 rotation_jacobian(const Quat& q0, const Quat& Q, double h) {
  const double qn = Q.norm();
  const Quat qh = Q / qn;
  Mat3 Jth;
  for (int j = 0; j < 3; ++j) {
    const Quat dQ = 0.5 * h * qmul(pure(Vec3::Unit(j)), q0);
    const Quat dqh = (dQ - qh * qh.dot(dQ)) / qn;
    Jth.col(j) = 2.0 * qmul(dqh, conj(qh)).tail<3>();
  }
  return Jth;
}

inline Vec3 state_position(const Eigen::Ref<const Eigen::VectorXd>& q) { return q.segment<3>(0); }
inline Quat state_quaternion(const Eigen::Ref<const Eigen::VectorXd>& q) {
  Quat Q = q.segment<4>(3);
  return Q / Q.norm();
}

}  // namespace geometry3

/// Largest point list a body_on_plane hull is computed from.
constexpr int kEcpMaxHullPoints = 64;
/// Largest hull (faces) a body_on_plane body may have: the ECP step (core/formulations/ecp_ncp/) has 18 + faces unknowns on the kernel's capacity 64.
constexpr int kEcpMaxHullFaces = 46;

struct Hull3 {
  std::vector<Eigen::Vector3d> vertices;  // the extreme points, in the order given
  std::vector<Eigen::Vector3d> normals;   // outward unit normals, one per facet plane
  std::vector<double> offsets;
  int dropped = 0;  // given points that are not extreme points (interior, on a face or an edge, repeated)
};

/// Computes the hull of 4..kEcpMaxHullPoints points; false (with the reason in `why`) when
/// they do not span a solid (all coplanar). Brute force over point triples, exact enough for
/// the few dozen points of a scene; coplanar facets merge into one plane.
bool convex_hull_3d(const std::vector<Eigen::Vector3d>& points, Hull3& out, std::string& why);

// ---- the hull's geometry (planes, and the side of a cylinder hull) ---------------------

/// Faces of a body_on_plane hull: its planes, then the side of a cylinder hull.
int hull_face_count(const Body3& b);
/// f_i at the body-frame point x: n_i' x - d_i for a plane; (|P (x - center)|^2 - radius^2) /
/// (2 radius) for a cylinder's side (P removes the axis component): 0 on the side, where its
/// gradient has unit length, < 0 inside.
double hull_face_value(const Body3& b, int i, const Eigen::Vector3d& x);
/// The outward unit normal (world frame) of face i at the world point p, body at (R, c).
Eigen::Vector3d hull_face_normal(const Body3& b, int i, const Eigen::Matrix3d& R, const Eigen::Vector3d& c,
                                 const Eigen::Vector3d& p);
/// The height of the hull's lowest points with the body at (R, c), and (when centroid is
/// given) the centroid of the points within tol of it: a vertex, an edge's or a face's
/// centroid; for a cylinder a point of a cap's rim, the midpoint of its lowest line when it
/// lies level, or a cap's centre when it stands on it.
double hull_lowest(const Body3& b, const Eigen::Matrix3d& R, const Eigen::Vector3d& c, double tol,
                   Eigen::Vector3d* centroid = nullptr);
/// The hull's largest distance from the body origin (m): a length scale for tolerances.
double hull_extent(const Body3& b);

/// Unit quaternion [w, x, y, z] -> rotation matrix (body to world).
Eigen::Matrix3d ecp_rotation(const Eigen::Vector4d& q);

}  // namespace qs

// Contact frames and Jacobians for every contact slot of a Model.
//
// A slot is a feature point F of one shape queried against the core of the other shape O
// (geometry.hpp). With u the unit direction from O's core toward F and d their distance:
//   phi = d - r_F - r_O,   witness points  p_O = c + r_O u,  p_F = F - r_F u,
// and the normal n points from the pair's body A toward body B (n = u when F is on B,
// n = -u when F is on A), so that phi_dot = n . (v_B(p_B) - v_A(p_A)) (Pang & Tedrake 2018, eqs. 1-3).
// The tangent is t = perp(n) (n x t = +z, Pang, Trinkle & Lo 1996, sec. 2); the polyhedral friction basis
// of Pang & Tedrake 2018, eq. (4) is {t, -t}. Jacobian rows are over q = [q_u | q_a]:
//   J_n = n^T (J_B(p_B) - J_A(p_A)),   J_t = t^T (J_B(p_B) - J_A(p_A)),
// exact derivatives of phi and of the tangential displacement (tested against finite
// differences in tests/core/contacts_test.cpp).
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <array>
#include <type_traits>
#include <vector>

#include "quasistep/core/geometry.hpp"
#include "quasistep/core/kinematics.hpp"
#include "quasistep/core/model.hpp"

namespace qs {

template <class T>
struct ContactFrame {
  T phi{};            // signed distance (m); negative is penetration
  Vec2<T> normal{};   // unit, from A toward B
  Vec2<T> tangent{};  // perp(normal)
  Vec2<T> point_a{};  // witness point on A (world)
  Vec2<T> point_b{};  // witness point on B (world)
};

namespace detail {

/// A body-frame point p of a shape in the world, scaled by `scale` about the body origin
/// first. S = double: one scale per body (null, as loaded: no multiplication then, so a
/// scene's own geometry is used exactly as compiled). S = a lane type: each lane's scale of
/// every body (the batch engine's lanes, whose worlds vary a size), the same products per
/// lane as S = double's.
template <class T>
Vec2<T> to_world(const Pose2<T>& pose, const Vec2<double>& p) {
  return pose.apply(Vec2<T>{T(p.x), T(p.y)});
}
template <class T, class S>
Vec2<T> scaled_to_world(const Pose2<T>& pose, const Vec2<double>& p, const S* scale, int body) {
  if (!scale) return to_world(pose, p);
  if constexpr (std::is_same_v<S, double>) {
    return to_world(pose, scale[body] * p);
  } else {
    return pose.apply(Vec2<T>{scale[body] * T(p.x), scale[body] * T(p.y)});
  }
}
/// A shape's rounding radius r scaled as its points (as T).
template <class T, class S>
T scaled_radius(double r, const S* scale, int body) {
  if (!scale) return T(r);
  if constexpr (std::is_same_v<S, double>) {
    return T(r * scale[body]);
  } else {
    return T(r) * scale[body];
  }
}

/// The query of world point p against the core of shape `s` of a body at `pose`.
template <class T, class S>
geometry::PointQuery<T> query_core(const Shape& s, const Pose2<T>& pose, const Vec2<T>& p, const S* scale) {
  switch (s.core) {
    case ShapeCore::point:
      return geometry::point_to_point(p, scaled_to_world(pose, s.points[0], scale, s.body));
    case ShapeCore::segment:
      return geometry::point_to_segment(p, scaled_to_world(pose, s.points[0], scale, s.body),
                                        scaled_to_world(pose, s.points[1], scale, s.body));
    case ShapeCore::half_plane:
      return geometry::point_to_half_plane(p, scaled_to_world(pose, s.points[0], scale, s.body),
                                           pose.rotate(Vec2<T>{T(s.normal.x), T(s.normal.y)}));
    case ShapeCore::polygon:
    default: {
      std::array<Vec2<T>, kMaxPolygonVertices> v;
      const int n = static_cast<int>(s.points.size());
      for (int i = 0; i < n; ++i) v[i] = scaled_to_world(pose, s.points[i], scale, s.body);
      return geometry::point_to_polygon(p, v.data(), n);
    }
  }
}

}  // namespace detail

/// The frame of one slot from body poses (forward_kinematics). `body_scale` (bodies.size(),
/// WorldParams::scales, or a lane type's per-lane scales) scales each body's shapes; null:
/// as the scene gives them.
template <class T, class S = double>
ContactFrame<T> contact_frame(const Model& m, int slot, const Pose2<T>* body_pose, const S* body_scale = nullptr) {
  const ContactSlot& cs = m.slots[slot];
  const Shape& f = m.shapes[cs.feature_shape];
  const Shape& o = m.shapes[cs.other_shape];
  const Vec2<T> pf = detail::scaled_to_world(body_pose[f.body], f.points[cs.feature_index], body_scale, f.body);
  const geometry::PointQuery<T> qr = detail::query_core(o, body_pose[o.body], pf, body_scale);
  const Vec2<T>& u = qr.direction;
  const T r_f = detail::scaled_radius<T>(f.radius, body_scale, f.body);
  const T r_o = detail::scaled_radius<T>(o.radius, body_scale, o.body);
  ContactFrame<T> out;
  out.phi = qr.distance - r_f - r_o;
  const Vec2<T> p_other = qr.closest + r_o * u;
  const Vec2<T> p_feature = pf - r_f * u;
  out.normal = cs.feature_on_b ? u : -u;
  out.point_a = cs.feature_on_b ? p_other : p_feature;
  out.point_b = cs.feature_on_b ? p_feature : p_other;
  out.tangent = perp(out.normal);
  return out;
}

/// Jacobian rows of one slot: jn, jt have n_q entries each and are overwritten.
template <class T>
void contact_jacobian_rows(const Model& m, int slot, const ContactFrame<T>& cf, const Pose2<T>* body_pose,
                           const Pose2<T>* joint_frame, T* jn, T* jt) {
  const ContactPair& pair = m.pairs[m.slots[slot].pair];
  for (int k = 0; k < m.n_q(); ++k) jn[k] = jt[k] = T(0);
  // One walk per body fills both rows: + for B's witness point, then - for A's.
  auto both_rows = [&](const T& sign) {
    return [&, sign](int dof, const Vec2<T>& column) {
      jn[dof] = jn[dof] + sign * dot(cf.normal, column);
      jt[dof] = jt[dof] + sign * dot(cf.tangent, column);
    };
  };
  visit_point_jacobian(m, pair.body_b, cf.point_b, body_pose, joint_frame, both_rows(T(1)));
  visit_point_jacobian(m, pair.body_a, cf.point_a, body_pose, joint_frame, both_rows(T(-1)));
}

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Everything one world needs to evaluate its contacts, sized once from the Model so that
/// evaluate() allocates nothing (the single-world path; the batch engine has its own SoA
/// storage and calls the same templates).
struct ContactWorkspace {
  std::vector<Pose2<double>> body_pose;    // (n_bodies)
  std::vector<Pose2<double>> joint_frame;  // (n_joints)
  std::vector<ContactFrame<double>> frame; // (n_slots)
  RowMatrix J_n;                           // (n_slots x n_q), columns [u | a]
  RowMatrix J_t;                           // (n_slots x n_q), columns [u | a]

  explicit ContactWorkspace(const Model& m);
  /// Poses, frames and Jacobians of every slot at configuration q (n_q entries), with one
  /// world's poses and sizes (p), or with the scene's own.
  void evaluate(const Model& m, const WorldParams& p, const double* q);
  void evaluate(const Model& m, const double* q);
  bool active(const Model& m, int slot) const { return frame[slot].phi <= m.contact_margin; }

  auto J_n_u(const Model& m) const { return J_n.leftCols(m.n_u); }
  auto J_n_a(const Model& m) const { return J_n.rightCols(m.n_a); }
  auto J_t_u(const Model& m) const { return J_t.leftCols(m.n_u); }
  auto J_t_a(const Model& m) const { return J_t.rightCols(m.n_a); }

 private:
  void evaluate_with(const Model& m, const double* q, const std::array<double, 3>* pose, const double* scale);
};

/// Stages 1-2 of a step, the contact record the step pipeline (quasistep/core/stepper.hpp) computes
/// once per step at the step's start configuration and hands to the formulation: every
/// slot's frame, gap and Jacobian rows, and the active slots (phi <= contacts.margin) in slot
/// order. A slot's friction coefficient is the world's: WorldParams::slot_friction.
struct ContactRecord {
  ContactWorkspace geometry;    // body poses, joint frames, every slot's frame, J_n, J_t
  std::vector<int> slots;       // (n_slots) the active slots' indices, in slot order: the first `count`
  int count = 0;                // active slots

  explicit ContactRecord(const Model& m) : geometry(m), slots(m.n_slots()) {}
  /// The record at configuration q with one world's parameters p; per slot whether it is
  /// active and its phi also into active[i] and phi[i] (n_slots each: the StepReport's).
  void scan(const Model& m, const WorldParams& p, const double* q, char* active, double* phi);
};

}  // namespace qs

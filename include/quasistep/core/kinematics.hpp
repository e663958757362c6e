// Forward kinematics and Jacobians of the planar multibody model, templated on the scalar
// type (a lane type reuses them for several worlds at once). All functions write into
// caller-provided storage and allocate nothing.
#pragma once

#include <array>

#include "quasistep/core/model.hpp"
#include "quasistep/core/world_params.hpp"

namespace qs {

/// Body poses (bodies.size()) and joint frames (joints.size(), the world pose of each
/// joint's frame before its own motion: parent pose composed with the joint origin).
/// `given_pose` (bodies.size(), WorldParams::body_pose) places fixed bodies and the free
/// bodies' components that are not DOFs; null: where the scene put them (Body::pose).
template <class T>
void forward_kinematics(const Model& m, const T* q, Pose2<T>* body_pose, Pose2<T>* joint_frame,
                        const std::array<double, 3>* given_pose = nullptr) {
  for (int b : m.body_order) {
    const Body& body = m.bodies[b];
    const std::array<double, 3>& pose = given_pose ? given_pose[b] : body.pose;
    switch (body.kind) {
      case BodyKind::fixed:
        body_pose[b] = Pose2<T>::from_xytheta(T(pose[0]), T(pose[1]), T(pose[2]));
        break;
      case BodyKind::free: {
        T c[3];
        for (int k = 0; k < 3; ++k) c[k] = body.dof[k] >= 0 ? q[body.dof[k]] : T(pose[k]);
        body_pose[b] = Pose2<T>::from_xytheta(c[0], c[1], c[2]);
        break;
      }
      case BodyKind::linked: {
        const Joint& j = m.joints[body.parent_joint];
        const Pose2<T> origin{{T(j.origin.translation.x), T(j.origin.translation.y)}, T(j.origin.c), T(j.origin.s)};
        const Pose2<T> frame = j.parent < 0 ? origin : body_pose[j.parent].compose(origin);
        joint_frame[body.parent_joint] = frame;
        const T qj = q[j.dof];
        const Pose2<T> motion = j.type == JointType::prismatic
                                    ? Pose2<T>{{T(j.axis.x) * qj, T(j.axis.y) * qj}, T(1), T(0)}
                                    : Pose2<T>::from_xytheta(T(0), T(0), qj);
        body_pose[b] = frame.compose(motion);
        break;
      }
    }
  }
}

/// forward_kinematics with one world's poses (WorldParams::body_pose).
template <class T>
void forward_kinematics(const Model& m, const WorldParams& p, const T* q, Pose2<T>* body_pose, Pose2<T>* joint_frame) {
  forward_kinematics(m, q, body_pose, joint_frame, p.body_pose.data());
}

/// Calls visit(dof, column) with column = dp/dq_dof for every coordinate that moves the
/// material point of `body` at world position p (the one walk up the kinematic chain that
/// every Jacobian in the project uses). Fixed bodies have none.
template <class T, class Visit>
void visit_point_jacobian(const Model& m, int body, const Vec2<T>& p, const Pose2<T>* body_pose,
                          const Pose2<T>* joint_frame, Visit&& visit) {
  while (body >= 0) {
    const Body& b = m.bodies[body];
    if (b.kind == BodyKind::fixed) return;
    if (b.kind == BodyKind::free) {
      if (b.dof[0] >= 0) visit(b.dof[0], Vec2<T>{T(1), T(0)});
      if (b.dof[1] >= 0) visit(b.dof[1], Vec2<T>{T(0), T(1)});
      // d p / d theta = perp(p - origin) for a point fixed in the body.
      if (b.dof[2] >= 0) visit(b.dof[2], perp(p - body_pose[body].translation));
      return;
    }
    const Joint& j = m.joints[b.parent_joint];
    const Pose2<T>& f = joint_frame[b.parent_joint];
    visit(j.dof, j.type == JointType::prismatic ? f.rotate(Vec2<T>{T(j.axis.x), T(j.axis.y)})
                                                : perp(p - f.translation));
    body = j.parent;
  }
}

/// row += sign * dir^T dp/dq, for the material point of `body` at world position p:
/// the derivative of dot(dir, p) with respect to every coordinate that moves the body.
/// `row` has n_q entries.
template <class T>
void add_point_jacobian(const Model& m, int body, const Vec2<T>& p, const Vec2<T>& dir, const T& sign,
                        const Pose2<T>* body_pose, const Pose2<T>* joint_frame, T* row) {
  visit_point_jacobian(m, body, p, body_pose, joint_frame,
                       [&](int dof, const Vec2<T>& column) { row[dof] = row[dof] + sign * dot(dir, column); });
}

/// row += sign * d(theta_body)/dq: the angular velocity Jacobian of a body.
template <class T>
void add_angular_jacobian(const Model& m, int body, const T& sign, T* row) {
  while (body >= 0) {
    const Body& b = m.bodies[body];
    if (b.kind == BodyKind::fixed) return;
    if (b.kind == BodyKind::free) {
      if (b.dof[2] >= 0) row[b.dof[2]] = row[b.dof[2]] + sign;
      return;
    }
    const Joint& j = m.joints[b.parent_joint];
    if (j.type == JointType::revolute) row[j.dof] = row[j.dof] + sign;
    body = j.parent;
  }
}

/// Generalized external force (n_q) at time t: gravity (vertical world: -y at each body's
/// center of mass), the scene's loads, and the efforts of effort-controlled joints. This is
/// tau(q) of Pang & Tedrake 2018, eq. (8) and, on the object and joints, -g_obj and (tau - g_man) of
/// Pang, Trinkle & Lo 1996, eqs. (2)-(3) with the sign convention that a positive entry pushes q up.
/// `out` is overwritten; poses come from forward_kinematics at the same q; masses from p.
/// Written on T: T = double is the steppers' (the function below), T = Jet (quasistep/core/jet.hpp)
/// gives its exact q-derivatives for the step derivatives; the same operations in the same
/// order, so the double instance is the function it always was.
template <class T>
void generalized_external_force(const Model& m, const WorldParams& p, const Pose2<T>* body_pose,
                                const Pose2<T>* joint_frame, double t, T* out) {
  for (int k = 0; k < m.n_q(); ++k) out[k] = T(0.0);
  // Gravity in the plane exists only in the vertical world (tabletop: it presses the
  // object onto the support and enters through the limit surface instead).
  if (m.world.type == WorldType::vertical) {
    for (size_t b = 0; b < m.bodies.size(); ++b) {
      const Body& body = m.bodies[b];
      const double mass = p.body_mass[b];
      if (body.kind == BodyKind::fixed || mass == 0.0) continue;
      const Vec2<T> com = body_pose[b].apply(Vec2<T>{T(body.com.x), T(body.com.y)});
      add_point_jacobian(m, static_cast<int>(b), com, Vec2<T>{T(0.0), T(-1.0)}, T(mass * m.world.gravity), body_pose,
                         joint_frame, out);
    }
  }
  for (const Load& load : m.loads) {
    const Pose2<T>& pose = body_pose[load.body];
    Vec2<T> f{T(load.force[0](t)), T(load.force[1](t))};
    if (load.body_frame) f = pose.rotate(f);
    const T fn = norm(f);
    if (fn > T(0.0)) {
      // dot(f, dp/dq) = |f| dot(f/|f|, dp/dq): one Jacobian pass along the force direction.
      add_point_jacobian(m, load.body, pose.apply(Vec2<T>{T(load.point.x), T(load.point.y)}),
                         Vec2<T>{f.x / fn, f.y / fn}, fn, body_pose, joint_frame, out);
    }
    const double torque = load.torque(t);
    if (torque != 0.0) add_angular_jacobian(m, load.body, T(torque), out);
  }
  for (const Joint& j : m.joints)
    if (j.control == Control::effort) out[j.dof] = out[j.dof] + T(j.command(t));
}
void generalized_external_force(const Model& m, const WorldParams& p, const Pose2<double>* body_pose,
                                const Pose2<double>* joint_frame, double t, double* out);

/// The commanded displacement of every velocity-controlled joint over a step of p.h, h u(t)
/// with u (WorldParams::velocity) sampled at t (the middle of the step), into
/// out[dof - n_u] (n_a entries; entries of effort-controlled joints are left alone).
void commanded_displacements(const Model& m, const WorldParams& p, double t, double* out);

}  // namespace qs

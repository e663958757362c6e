#include "quasistep/core/kinematics.hpp"

namespace qs {

void generalized_external_force(const Model& m, const WorldParams& p, const Pose2<double>* body_pose,
                                const Pose2<double>* joint_frame, double t, double* out) {
  for (int k = 0; k < m.n_q(); ++k) out[k] = 0.0;
  // Gravity in the plane exists only in the vertical world (tabletop: it presses the
  // object onto the support and enters through the limit surface instead).
  if (m.world.type == WorldType::vertical) {
    for (size_t b = 0; b < m.bodies.size(); ++b) {
      const Body& body = m.bodies[b];
      const double mass = p.body_mass[b];
      if (body.kind == BodyKind::fixed || mass == 0.0) continue;
      const Vec2<double> com = body_pose[b].apply(body.com);
      add_point_jacobian(m, static_cast<int>(b), com, Vec2<double>{0.0, -1.0}, mass * m.world.gravity,
                         body_pose, joint_frame, out);
    }
  }
  for (const Load& load : m.loads) {
    const Pose2<double>& pose = body_pose[load.body];
    Vec2<double> f{load.force[0](t), load.force[1](t)};
    if (load.body_frame) f = pose.rotate(f);
    const double fn = norm(f);
    if (fn > 0.0) {
      // dot(f, dp/dq) = |f| dot(f/|f|, dp/dq): one Jacobian pass along the force direction.
      add_point_jacobian(m, load.body, pose.apply(load.point), Vec2<double>{f.x / fn, f.y / fn}, fn, body_pose,
                         joint_frame, out);
    }
    const double torque = load.torque(t);
    if (torque != 0.0) add_angular_jacobian(m, load.body, torque, out);
  }
  for (const Joint& j : m.joints)
    if (j.control == Control::effort) out[j.dof] += j.command(t);
}

void commanded_displacements(const Model& m, const WorldParams& p, double t, double* out) {
  for (const Joint& j : m.joints)
    if (j.control == Control::velocity) out[j.dof - m.n_u] = p.h * p.velocity(m, j, t);
}

}  // namespace qs

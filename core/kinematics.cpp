#include "quasistep/core/kinematics.hpp"

namespace qs {

void generalized_external_force(const Model& m, const WorldParams& p, const Pose2<double>* body_pose,
                                const Pose2<double>* joint_frame, double t, double* out) {
  generalized_external_force<double>(m, p, body_pose, joint_frame, t, out);
}

void commanded_displacements(const Model& m, const WorldParams& p, double t, double* out) {
  for (const Joint& j : m.joints)
    if (j.control == Control::velocity) out[j.dof - m.n_u] = p.h * p.velocity(m, j, t);
}

}  // namespace qs

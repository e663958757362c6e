// What a vertical world's complementarity step is posed from at a configuration q (Trinkle's
// LCP and Pang & Tedrake's MIQP, Pang & Tedrake 2018, eqs. (12)-(23)): every slot's frame (its
// gap phi) and Jacobian rows J_n, J_t, and the generalized external force tau at the middle
// of the step, written once on T. The steppers compute the same in double through their
// ContactRecord (contact_frame, contact_jacobian_rows) and generalized_external_force, the
// same templates; at T = Jet (quasistep/core/jet.hpp) with q's directions set, every entry
// carries its exact derivative along them, the contact geometry's second derivatives
// included: the data's derivatives of the step derivatives (quasistep/core/derivatives.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/kinematics.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/world_params.hpp"

namespace qs {

template <class T>
struct ContactStepData {
  std::vector<Pose2<T>> body_pose, joint_frame;
  std::vector<ContactFrame<T>> frame;  // (n_slots)
  std::vector<T> jn, jt;               // (n_slots x n_q) row-major
  std::vector<T> tau;                  // (n_q)

  explicit ContactStepData(const Model& m)
      : body_pose(m.bodies.size()),
        joint_frame(std::max<std::size_t>(m.joints.size(), 1)),
        frame(std::max<std::size_t>(m.slots.size(), 1)),
        jn(sz(m.n_slots() * m.n_q())),
        jt(sz(m.n_slots() * m.n_q())),
        tau(sz(m.n_q())) {}

 private:
  static std::size_t sz(int n) { return static_cast<std::size_t>(std::max(n, 1)); }
};

/// The data at configuration q (n_q values) with one world's poses, sizes and masses (p),
/// tau at time t_mid (the middle of the step). Allocates nothing.
template <class T>
void pose_contact_step_data(const Model& m, const WorldParams& p, const T* q, double t_mid, ContactStepData<T>& d) {
  const int n = m.n_q();
  forward_kinematics(m, p, q, d.body_pose.data(), d.joint_frame.data());
  for (int i = 0; i < m.n_slots(); ++i) {
    d.frame[i] = contact_frame(m, i, d.body_pose.data(), p.scales());
    contact_jacobian_rows(m, i, d.frame[i], d.body_pose.data(), d.joint_frame.data(), &d.jn[i * n], &d.jt[i * n]);
  }
  generalized_external_force(m, p, d.body_pose.data(), d.joint_frame.data(), t_mid, d.tau.data());
}

}  // namespace qs

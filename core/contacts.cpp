#include "quasistep/core/contacts.hpp"

namespace qs {

ContactWorkspace::ContactWorkspace(const Model& m)
    : body_pose(m.bodies.size()),
      joint_frame(m.joints.size()),
      frame(m.slots.size()),
      J_n(m.n_slots(), m.n_q()),
      J_t(m.n_slots(), m.n_q()) {}

void ContactRecord::scan(const Model& m, const WorldParams& p, const double* q, char* active, double* phi) {
  geometry.evaluate(m, p, q);
  count = 0;
  for (int i = 0; i < m.n_slots(); ++i) {
    active[i] = geometry.active(m, i);
    phi[i] = geometry.frame[i].phi;
    if (active[i]) slots[count++] = i;
  }
}

void ContactWorkspace::evaluate(const Model& m, const double* q) { evaluate_with(m, q, nullptr, nullptr); }

void ContactWorkspace::evaluate(const Model& m, const WorldParams& p, const double* q) {
  evaluate_with(m, q, p.body_pose.data(), p.scales());
}

void ContactWorkspace::evaluate_with(const Model& m, const double* q, const std::array<double, 3>* pose,
                                     const double* scale) {
  forward_kinematics(m, q, body_pose.data(), joint_frame.data(), pose);
  for (int i = 0; i < m.n_slots(); ++i) {
    frame[i] = contact_frame(m, i, body_pose.data(), scale);
    contact_jacobian_rows(m, i, frame[i], body_pose.data(), joint_frame.data(), J_n.row(i).data(), J_t.row(i).data());
  }
}

}  // namespace qs

#include "quasistep/core/formulations/ucp/ucp_scene.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/kinematics.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/stepper.hpp"
#include "quasistep/core/ucp_problem_file.hpp"

namespace qs {

Status ucp_from_scene(const Model& m, const State& s, UcpScene& out, std::string& why, double contact_tolerance) {
  why.clear();
  const auto bad = [&](std::string message) {
    why = std::move(message);
    return Status::bad_input;
  };
  if (m.world.type != WorldType::vertical) return bad("world.type: the UCP is posed in the vertical world");
  int object = -1, free_bodies = 0;
  for (size_t b = 0; b < m.bodies.size(); ++b)
    if (m.bodies[b].kind == BodyKind::free) {
      object = static_cast<int>(b);
      ++free_bodies;
    }
  if (free_bodies != 1)
    return bad("bodies: the UCP needs exactly one free body (the grasped object), found " + std::to_string(free_bodies));
  if (s.q.size() != m.n_q()) return bad("state: q has the wrong size");
  out = UcpScene{};
  for (int k : m.bodies[static_cast<size_t>(object)].dof)
    if (k >= 0) out.object_dofs.push_back(k);
  ContactWorkspace ws(m);
  ws.evaluate(m, s.q.data());
  for (int i = 0; i < m.n_slots(); ++i) {
    if (!(ws.frame[static_cast<size_t>(i)].phi <= contact_tolerance)) continue;
    const ContactPair& pair = m.pairs[static_cast<size_t>(m.slots[static_cast<size_t>(i)].pair)];
    if (pair.body_a != object && pair.body_b != object)
      return bad("contacts: slot " + std::to_string(i) + " (" + m.pair_name(m.slots[static_cast<size_t>(i)].pair) +
                 ") touches but does not involve the object " + m.bodies[static_cast<size_t>(object)].name);
    out.slots.push_back(i);
  }
  const int nc = static_cast<int>(out.slots.size()), nq = static_cast<int>(out.object_dofs.size());
  const int nth = static_cast<int>(m.joints.size());
  if (nc == 0) return bad("contacts: nothing touches the object " + m.bodies[static_cast<size_t>(object)].name);

  const WorldParams scene(m);  // the scene's own values: the UCP is one instant of the scene
  Eigen::VectorXd F(m.n_q());
  generalized_external_force(m, scene, ws.body_pose.data(), ws.joint_frame.data(), s.t, F.data());
  UcpData& d = out.data;
  Eigen::MatrixXd WT(2 * nc, nq);
  d.J_n.setZero(nc, nth);
  d.J_t.setZero(nc, nth);
  d.mu.resize(nc);
  for (int i = 0; i < nc; ++i) {
    const int slot = out.slots[static_cast<size_t>(i)];
    for (int k = 0; k < nq; ++k) {
      WT(i, k) = ws.J_n(slot, out.object_dofs[static_cast<size_t>(k)]);
      WT(nc + i, k) = ws.J_t(slot, out.object_dofs[static_cast<size_t>(k)]);
    }
    for (int j = 0; j < nth; ++j) {
      const int dof = m.joints[static_cast<size_t>(j)].dof;
      d.J_n(i, j) = -ws.J_n(slot, dof);  // eqs. (4)-(5): the joints enter with a minus sign
      d.J_t(i, j) = -ws.J_t(slot, dof);
    }
    d.mu[i] = scene.slot_friction(m, slot);
  }
  std::vector<int> alpha, abar;
  d.theta_dot.setZero(nth);
  d.g_man.setZero(nth);
  d.tau.setZero(nth);
  for (int j = 0; j < nth; ++j) {
    const Joint& joint = m.joints[static_cast<size_t>(j)];
    const double command = joint.command(s.t);
    const bool effort = joint.control == Control::effort;
    (effort ? abar : alpha).push_back(j);
    if (effort) d.tau[j] = command;
    else d.theta_dot[j] = command;
    d.g_man[j] = -(F[joint.dof] - (effort ? command : 0.0));
  }
  d.alpha = alpha;
  d.g_obj.resize(nq);
  for (int k = 0; k < nq; ++k) d.g_obj[k] = F[out.object_dofs[static_cast<size_t>(k)]];
  Eigen::MatrixXd J(2 * nc, nth);
  J << d.J_n, d.J_t;
  d.P.resize(2 * nc, nq + static_cast<int>(abar.size()));
  d.P.leftCols(nq) = WT;
  for (size_t k = 0; k < abar.size(); ++k) d.P.col(nq + static_cast<Eigen::Index>(k)) = J.col(abar[k]);
  return Status::solved;
}

std::string solve_scene_ucp_to_json(const Model& m, const UcpSolveOptions& options) {
  UcpScene us;
  std::string why;
  if (ucp_from_scene(m, initial_state(m), us, why) != Status::solved) throw std::invalid_argument(why);
  return solve_ucp_to_json(us.data, options);
}

}  // namespace qs

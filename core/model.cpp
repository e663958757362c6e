#include "core/model.hpp"

#include <limits>

#include "core/contacts.hpp"
#include "core/kinematics.hpp"
#include "core/pang_tedrake_miqp.hpp"

namespace qs {

std::string_view to_string(WorldType w) {
  switch (w) {
    case WorldType::vertical: return "vertical";
    case WorldType::tabletop: return "tabletop";
    case WorldType::body_on_plane: return "body_on_plane";
  }
  return "?";
}

std::string_view to_string(Formulation f) {
  switch (f) {
    case Formulation::trinkle_lcp: return "trinkle_lcp";
    case Formulation::perfect_velocity_lcp: return "perfect_velocity_lcp";
    case Formulation::halm_posa_lcp: return "halm_posa_lcp";
    case Formulation::pang_tedrake_miqp: return "pang_tedrake_miqp";
    case Formulation::anitescu_qp: return "anitescu_qp";
    case Formulation::ucp: return "ucp";
    case Formulation::ecp_ncp: return "ecp_ncp";
  }
  return "?";
}

bool formulation_applies(Formulation f, WorldType w) {
  switch (f) {
    case Formulation::trinkle_lcp:
    case Formulation::pang_tedrake_miqp:
    case Formulation::anitescu_qp:
    case Formulation::ucp: return w == WorldType::vertical;
    case Formulation::perfect_velocity_lcp:
    case Formulation::halm_posa_lcp: return w == WorldType::tabletop;
    case Formulation::ecp_ncp: return w == WorldType::body_on_plane;
  }
  return false;
}

std::string_view to_string(ShapeType t) {
  switch (t) {
    case ShapeType::point: return "point";
    case ShapeType::disk: return "disk";
    case ShapeType::segment: return "segment";
    case ShapeType::capsule: return "capsule";
    case ShapeType::box: return "box";
    case ShapeType::polygon: return "polygon";
    case ShapeType::half_plane: return "half_plane";
  }
  return "?";
}

std::string_view to_string(BodyKind k) {
  switch (k) {
    case BodyKind::fixed: return "fixed";
    case BodyKind::free: return "free";
    case BodyKind::linked: return "linked";
  }
  return "?";
}

std::string_view to_string(JointType t) { return t == JointType::prismatic ? "prismatic" : "revolute"; }
std::string_view to_string(Control c) { return c == Control::velocity ? "velocity" : "effort"; }

int Model::find_body(std::string_view n) const {
  for (size_t i = 0; i < bodies.size(); ++i)
    if (bodies[i].name == n) return static_cast<int>(i);
  return -1;
}

int Model::find_joint(std::string_view n) const {
  for (size_t i = 0; i < joints.size(); ++i)
    if (joints[i].name == n) return static_cast<int>(i);
  return -1;
}

std::string Model::pair_name(int pair) const {
  return bodies[pairs[pair].body_a].name + "/" + bodies[pairs[pair].body_b].name;
}

int step_memory_size(const Model& m) {
  if (m.formulation == Formulation::anitescu_qp && m.params.quasi_dynamic) return 2 * m.n_slots();
  if (m.formulation == Formulation::pang_tedrake_miqp) return PangTedrakeMiqp::memory_size(m);
  // ecp_ncp: [valid, k, the last step's MNCP solution (18 + hull faces)] (core/ecp_ncp.hpp).
  if (m.formulation == Formulation::ecp_ncp && m.body3)
    return 2 + 18 + static_cast<int>(m.body3->hull_normals.size()) + (m.body3->cylinder ? 1 : 0);
  return 0;
}

State initial_state(const Model& m) {
  State s;
  s.q.setZero(m.n_q());
  for (const Dof& d : m.dofs) {
    const int i = static_cast<int>(&d - m.dofs.data());
    switch (d.kind) {
      case DofKind::body_x: s.q[i] = m.bodies[d.index].pose[0]; break;
      case DofKind::body_y: s.q[i] = m.bodies[d.index].pose[1]; break;
      case DofKind::body_theta: s.q[i] = m.bodies[d.index].pose[2]; break;
      case DofKind::joint: s.q[i] = m.joints[d.index].initial_position; break;
      case DofKind::body3: s.q[i] = m.body3->initial[d.index]; break;  // seed 003 (core/ecp_ncp.hpp)
    }
  }
  // seed 002: the impedance reference starts where the actuated joints are, q̄_a(0) = q_a(0).
  if (m.formulation == Formulation::anitescu_qp) s.q_a_ref = s.q.tail(m.n_a);
  // The memory's start: a cold PGS start (zeros), no previous elastic bound (+inf).
  if (m.formulation == Formulation::pang_tedrake_miqp)
    s.memory.setConstant(step_memory_size(m), std::numeric_limits<double>::infinity());
  else
    s.memory.setZero(step_memory_size(m));
  return s;
}

void generalized_external_force(const Model& m, const Pose2<double>* body_pose, const Pose2<double>* joint_frame,
                                double t, double* out) {
  for (int k = 0; k < m.n_q(); ++k) out[k] = 0.0;
  // Gravity in the plane exists only in the vertical world (tabletop: it presses the
  // object onto the support and enters through the limit surface instead).
  if (m.world.type == WorldType::vertical) {
    for (size_t b = 0; b < m.bodies.size(); ++b) {
      const Body& body = m.bodies[b];
      if (body.kind == BodyKind::fixed || body.mass == 0.0) continue;
      const Vec2<double> com = body_pose[b].apply(body.com);
      add_point_jacobian(m, static_cast<int>(b), com, Vec2<double>{0.0, -1.0}, body.mass * m.world.gravity,
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

ContactWorkspace::ContactWorkspace(const Model& m)
    : body_pose(m.bodies.size()),
      joint_frame(m.joints.size()),
      frame(m.slots.size()),
      J_n(m.n_slots(), m.n_q()),
      J_t(m.n_slots(), m.n_q()) {}

void ContactWorkspace::evaluate(const Model& m, const double* q) {
  forward_kinematics(m, q, body_pose.data(), joint_frame.data());
  for (int i = 0; i < m.n_slots(); ++i) {
    frame[i] = contact_frame(m, i, body_pose.data());
    contact_jacobian_rows(m, i, frame[i], body_pose.data(), joint_frame.data(), J_n.row(i).data(), J_t.row(i).data());
  }
}

}  // namespace qs

#include "quasistep/core/world_params.hpp"

#include "quasistep/core/formulation_table.hpp"

namespace qs {

bool is_start_parameter(const Model& m, const ParameterRef& r) {
  using K = ParameterRef::Kind;
  switch (r.kind) {
    case K::joint_position: return true;
    case K::body_pose_x:
    case K::body_pose_y:
    case K::body_pose_theta: {
      const Body& b = m.bodies[r.index];
      return b.kind == BodyKind::free && b.dof[static_cast<int>(r.kind) - static_cast<int>(K::body_pose_x)] >= 0;
    }
    default: return false;
  }
}

double scene_value(const Model& m, const ParameterRef& r) {
  using K = ParameterRef::Kind;
  switch (r.kind) {
    case K::body_mass: return m.bodies[r.index].mass;
    case K::body_pose_x: return m.bodies[r.index].pose[0];
    case K::body_pose_y: return m.bodies[r.index].pose[1];
    case K::body_pose_theta: return m.bodies[r.index].pose[2];
    case K::body_scale: return 1.0;
    case K::joint_position: return m.joints[r.index].initial_position;
    case K::pair_friction: return r.pairs.empty() ? 0.0 : m.pairs[r.pairs.front()].friction;
    case K::model_gain:
    case K::joint_gain: {
      const WorldParams scene(m);
      return r.kind == K::model_gain ? scene.model_gain : scene.joint_gain[static_cast<std::size_t>(r.index)];
    }
  }
  return 0.0;
}

void WorldParams::reset(const Model& m) {
  h = m.step.h;
  pair_friction.resize(m.pairs.size());
  for (size_t p = 0; p < m.pairs.size(); ++p) pair_friction[p] = m.pairs[p].friction;
  body_mass.resize(m.bodies.size());
  body_pose.resize(m.bodies.size());
  body_scale.resize(m.bodies.size());
  for (size_t b = 0; b < m.bodies.size(); ++b) {
    body_mass[b] = m.bodies[b].mass;
    body_pose[b] = m.bodies[b].pose;
    body_scale[b] = 1.0;
  }
  scaled = false;
  model_gain = 0.0;
  joint_gain.clear();
  if (const auto gains = formulation_info(m.formulation).scene_gains) gains(m, model_gain, joint_gain);
  command.assign(static_cast<size_t>(m.n_a), 0.0);
  commanded = false;
}

void WorldParams::set(const Model& m, const ParameterRef& r, double value) {
  using K = ParameterRef::Kind;
  switch (r.kind) {
    case K::body_mass: body_mass[r.index] = value; break;
    case K::body_pose_x:
    case K::body_pose_y:
    case K::body_pose_theta:
      // A fixed body's pose is a parameter, and so is a free body's pose component that is
      // not a DOF (it stays at Body::pose); a DOF's is only its start.
      if (!is_start_parameter(m, r))
        body_pose[r.index][static_cast<int>(r.kind) - static_cast<int>(K::body_pose_x)] = value;
      break;
    case K::body_scale:
      body_scale[r.index] = value;
      scaled = false;
      for (double s : body_scale) scaled = scaled || s != 1.0;
      break;
    case K::joint_position: break;  // the start only
    case K::pair_friction:
      for (int p : r.pairs) pair_friction[p] = value;
      break;
    case K::model_gain: model_gain = value; break;
    case K::joint_gain: joint_gain[static_cast<std::size_t>(r.index)] = value; break;
  }
}

}  // namespace qs

#include "quasistep/core/model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "quasistep/core/formulation_table.hpp"

namespace qs {

std::string_view to_string(WorldType w) {
  switch (w) {
    case WorldType::vertical: return "vertical";
    case WorldType::tabletop: return "tabletop";
    case WorldType::body_on_plane: return "body_on_plane";
  }
  return "?";
}

std::string_view to_string(Formulation f) { return formulation_info(f).name; }

bool formulation_applies(Formulation f, WorldType w) { return formulation_info(f).world == w; }

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

void throw_formulation_params_mismatch(const Model& m) {
  throw std::logic_error("formulation_params: the model's formulation " + std::string(to_string(m.formulation)) +
                         (m.params.has_value() ? " holds parameters of another type" : " holds no parameters"));
}

double largest_shape_size(const Model& m) {
  double size = 0;
  for (const Shape& s : m.shapes) {
    if (s.core == ShapeCore::half_plane) continue;
    double diameter = 0;
    for (const Vec2<double>& a : s.points)
      for (const Vec2<double>& b : s.points) diameter = std::max(diameter, std::hypot(a.x - b.x, a.y - b.y));
    size = std::max(size, diameter + 2 * s.radius);
  }
  return size;
}

bool dof_is_length(const Model& m, int e) {
  const Dof& d = m.dofs[static_cast<size_t>(e)];
  return d.kind == DofKind::body_x || d.kind == DofKind::body_y ||
         (d.kind == DofKind::joint && m.joints[static_cast<size_t>(d.index)].type == JointType::prismatic);
}

std::vector<double> balance_row_lengths(const Model& m) {
  const double size = largest_shape_size(m);
  std::vector<double> out(static_cast<size_t>(m.n_q()), 1.0);
  for (int e = 0; e < m.n_q(); ++e)
    if (!dof_is_length(m, e) && size > 0) out[static_cast<size_t>(e)] = size;
  return out;
}

int step_memory_size(const Model& m) { return formulation_info(m.formulation).memory_size(m); }

std::vector<std::string> command_names(const Model& m) {
  std::vector<std::string> names(m.n_a);
  for (const Joint& j : m.joints)
    if (j.control == Control::velocity) names[j.dof - m.n_u] = j.name;
  return names;
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
      case DofKind::body3: s.q[i] = m.body3->initial[d.index]; break;  // Xie & Chakraborty 2021 (quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp)
    }
  }
  const FormulationInfo& f = formulation_info(m.formulation);
  // The memory's start: e.g. an impedance reference where the joints are, a cold PGS start
  // (zeros), no previous elastic bound (+inf).
  s.memory.resize(f.memory_size(m));
  f.start_memory(m, s.q.data(), s.memory.data());
  return s;
}

}  // namespace qs

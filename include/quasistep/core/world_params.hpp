// The values of one world that a batch may vary, as data beside the immutable Model.
//
// The Model (quasistep/core/model.hpp) is compiled once from a scene and never changes afterwards.
// What may differ from world to world (a Monte Carlo sample's friction, a planner's
// commands, a rollout's step size) is a WorldParams: every stepper reads these values from
// it, never from the Model. `WorldParams(m)` holds the scene's own values; a batch keeps one
// per thread and writes a world's varied values into it (set(), allocation-free) before it
// steps that world. Its layout is plain doubles and vectors: it does not depend on the lane
// width or the instruction set.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "quasistep/core/model.hpp"

namespace qs {

/// A per-world parameter that overrides and uncertainty sections may change, addressed by
/// a path such as `bodies.cylinder.mass` (see docs/scene-format.md, "Parameter paths").
/// quasistep/core/scene.hpp resolve_parameter builds it from a path.
struct ParameterRef {
  enum class Kind {
    body_mass, body_pose_x, body_pose_y, body_pose_theta, body_scale, joint_position, pair_friction,
    model_gain,  // the formulation's model gain, `model.<FormulationInfo::model_gain>` (e.g. halm_posa_lcp's c)
    joint_gain   // its gain of one velocity-controlled joint, `joints.NAME.<FormulationInfo::joint_gain>`
  };
  Kind kind = Kind::body_mass;
  int index = -1;  // the body or joint (joint_gain: its actuated-DOF index a); pair_friction: body A of the pair
  int other = -1;  // pair_friction: body B
  /// pair_friction: the Model's pairs (ContactPair indices, ascending) that it sets, every
  /// shape pair of bodies A and B, resolved once by resolve_parameter.
  std::vector<int> pairs;
  std::string path;
  /// Two paths name the same parameter (e.g. pairs.A/B and pairs.B/A).
  bool same_as(const ParameterRef& o) const {
    if (kind != o.kind) return false;
    return kind == Kind::pair_friction ? pairs == o.pairs : index == o.index;
  }
};

/// The parameter sets only a world's start (WorldBatch::reset): a joint position, or a free
/// body's pose component that is one of its DOFs. The others are WorldParams values.
bool is_start_parameter(const Model& m, const ParameterRef& r);
/// The scene's own value of a parameter (1 for a body's scale).
double scene_value(const Model& m, const ParameterRef& r);

struct WorldParams {
  double h = 0.0;                                // s, the step size
  std::vector<double> pair_friction;             // (pairs) Coulomb coefficient mu of each ContactPair
  std::vector<double> body_mass;                 // (bodies) kg
  /// (bodies) x, y (m), theta (rad): a fixed body's pose, and the components of a free body
  /// that are not DOFs (Body::pose).
  std::vector<std::array<double, 3>> body_pose;
  /// (bodies) a uniform size factor of the body's shapes about its frame's origin (core
  /// points and roundings); 1 as loaded.
  std::vector<double> body_scale;
  bool scaled = false;                           // some body_scale differs from 1
  /// The formulation's gains (FormulationInfo::scene_gains gives the scene's): its model
  /// gain (halm_posa_lcp's c, pang_tedrake_miqp's stiffness K in N/m; 0 when it has none),
  /// and its gain per velocity-controlled joint ((n_a) anitescu_qp's impedance K_a; empty
  /// when it has none).
  double model_gain = 0.0;
  std::vector<double> joint_gain;
  /// (n_a) this step's velocity of every velocity-commanded joint (held over the step),
  /// when `commanded`; otherwise the joints' scheduled commands.
  std::vector<double> command;
  bool commanded = false;

  WorldParams() = default;
  /// The scene's own values.
  explicit WorldParams(const Model& m) { reset(m); }
  /// Back to the scene's own values; allocates nothing when already sized for m.
  void reset(const Model& m);
  /// Sets parameter r (not a start parameter: those are the State's) to value.
  void set(const Model& m, const ParameterRef& r, double value);

  /// body_scale for contact_frame: null while every body has its scene size.
  const double* scales() const { return scaled ? body_scale.data() : nullptr; }
  /// The friction coefficient of contact slot i: its pair's.
  double slot_friction(const Model& m, int slot) const { return pair_friction[m.slots[slot].pair]; }
  /// The velocity command of velocity-controlled joint j at time t (m/s or rad/s).
  double velocity(const Model& m, const Joint& j, double t) const {
    return commanded ? command[j.dof - m.n_u] : j.command(t);
  }
};

}  // namespace qs

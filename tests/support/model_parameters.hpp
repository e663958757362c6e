// A test oracle for per-world parameters: a parameter written into a copy of the Model, the
// way a scene file with that value compiles. A stepper stepped on the copy with its own
// parameters (Stepper::step(m, s)) is the independent single-world reference that the batch
// (which writes the value into a WorldParams instead) must reproduce bit for bit.
#pragma once

#include "quasistep/core/formulations/anitescu_qp/anitescu_qp_params.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp_params.hpp"
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp_params.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/world_params.hpp"

namespace qs::test {

/// Writes parameter r = value into m, a copy of `base` (a body's scale scales base's shapes).
/// Start parameters change only the start: nothing here.
inline void apply_parameter(Model& m, const Model& base, const ParameterRef& r, double value) {
  using K = ParameterRef::Kind;
  switch (r.kind) {
    case K::body_mass: m.bodies[r.index].mass = value; break;
    case K::body_pose_x:
    case K::body_pose_y:
    case K::body_pose_theta:
      if (!is_start_parameter(m, r))
        m.bodies[r.index].pose[static_cast<int>(r.kind) - static_cast<int>(K::body_pose_x)] = value;
      break;
    case K::body_scale:
      for (int s : m.bodies[r.index].shapes) {
        m.shapes[s].radius = base.shapes[s].radius * value;
        for (size_t i = 0; i < base.shapes[s].points.size(); ++i) m.shapes[s].points[i] = value * base.shapes[s].points[i];
      }
      break;
    case K::joint_position: break;
    case K::pair_friction:
      for (int p : r.pairs) m.pairs[p].friction = value;
      break;
    case K::model_gain:
      // The library's formulations with a model gain: halm_posa_lcp's c, pang_tedrake_miqp's K.
      if (auto* hp = std::any_cast<HalmPosaParams>(&m.params)) hp->feedback_scale_c = value;
      else formulation_params<PangTedrakeMiqpParams>(m).stiffness_K = value;
      break;
    case K::joint_gain: (*formulation_params<AnitescuQpParams>(m).stiffness_Ka)[r.index] = value; break;
  }
}

}  // namespace qs::test

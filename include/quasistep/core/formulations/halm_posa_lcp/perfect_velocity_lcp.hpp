// The perfect-velocity formulation `perfect_velocity_lcp`: Zhou et al.'s quasistatic model in
// the time-stepping form of Halm & Posa 2018, eqs. (13)-(14): the velocity-commanded joints
// follow their commands exactly, which is Halm & Posa's LCP (eqs. (31)-(38)) with B = 0 in
// eq. (33). It shares every line of the Halm-Posa step but the feedback term cB, so one class
// steps both (halm_posa_lcp.hpp, and halm_posa_lanes.hpp in the batch engine); the Model's
// formulation selects cB = 0. Without feedback a command that squeezes or jams the object has
// no solution: the step then reports `infeasible` with a certificate (halm_posa_lcp.hpp).
#pragma once

#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"

namespace qs {

/// The stepper of a Model whose formulation is perfect_velocity_lcp.
using PerfectVelocityLcp = HalmPosaLcp;

namespace json_input {
class Node;
}
/// Reads the "model" section of a scene whose formulation is perfect_velocity_lcp into m.params (the
/// world, bodies, joints and contacts are read); throws SceneError naming the field.
void read_perfect_velocity_lcp_params(const json_input::Node& model, Model& m);

}  // namespace qs

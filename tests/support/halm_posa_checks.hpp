// Shared by the Halm & Posa tests: a scene under the perfect-velocity model, and the
// independent check of a step's LCP.
#pragma once

#include <nlohmann/json.hpp>

#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "tests/support/lcp_check.hpp"

namespace qs::test {

/// The same scene under the perfect-velocity model (Halm & Posa 2018, eqs. (13)-(14): B = 0,
/// so no B and no c).
inline nlohmann::json perfect_velocity(nlohmann::json s) {
  s["model"]["formulation"] = "perfect_velocity_lcp";
  s["model"].erase("B");
  s["model"].erase("c");
  return s;
}

/// The last step's LCP violation, checked independently of the solver (tests/support/lcp_check.hpp).
inline double lcp_violation(const HalmPosaLcp& st) {
  return lcp_violation(st.lcp_matrix(), st.lcp_vector(), st.result().z);
}

}  // namespace qs::test

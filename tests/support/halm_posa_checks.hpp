// Shared by the Halm & Posa tests: a scene under the perfect-velocity model, the
// independent check of a step's LCP, and a rollout that checks every step it takes.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/kernels/lcp_acceptance.hpp"
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

struct HalmPosaRollout {
  int steps_solved = 0;
  Status last = Status::not_run;
  std::string detail;
  State final_state;
  double worst_violation = 0;           // of any solved step's LCP
  double worst_phi = 0;                 // most negative true gap of any slot at any state
  std::vector<Eigen::Vector3d> object;  // the object's pose (x, y, theta) after each solved step
  int open_contact_steps = 0;           // steps taken as the open-contact solution (report().open_contacts)
};

/// Steps the scene (`steps`, or the scene's own count when negative) with Halm & Posa's
/// stepper, checking every solved step's residual; stops at the first failure.
inline HalmPosaRollout halm_posa_rollout(const nlohmann::json& scene_json, int steps = -1) {
  const Scene scene = parse_scene(scene_json.dump());
  const Model& m = *scene.model;
  HalmPosaLcp stepper(m);
  ContactWorkspace ws(m);
  HalmPosaRollout r;
  State s = initial_state(m);
  const int n = steps < 0 ? m.step.steps : steps;
  for (int l = 1; l <= n; ++l) {
    r.last = stepper.step(m, s);
    if (r.last != Status::solved) {
      r.detail = stepper.report().detail;
      break;
    }
    ++r.steps_solved;
    r.open_contact_steps += stepper.report().open_contacts;
    r.worst_violation = std::max(r.worst_violation, lcp_violation(stepper));
    EXPECT_LE(stepper.report().complementarity_residual, kLcpTolerance) << "step " << l;
    ws.evaluate(m, s.q.data());
    for (int i = 0; i < m.n_slots(); ++i) r.worst_phi = std::min(r.worst_phi, ws.frame[i].phi);
    r.object.push_back(s.q.head<3>());
  }
  r.final_state = s;
  return r;
}

}  // namespace qs::test

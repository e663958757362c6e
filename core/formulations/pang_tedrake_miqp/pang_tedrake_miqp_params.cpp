// The pang_tedrake_miqp section of a scene's "model" (docs/scene-format.md).
#include <algorithm>
#include <string>

#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"
#include "quasistep/core/scene.hpp"

namespace qs {

void read_pang_tedrake_miqp_params(const json_input::Node& n, Model& m) {
  PangTedrakeMiqpParams& p = m.params.emplace<PangTedrakeMiqpParams>();
  n.expect_object({"formulation", "stiffness", "elastic_bound", "round_width"});
  p.stiffness_K = n.at("stiffness").positive();
  if (auto e = n.get("elastic_bound"))
    p.elastic_bound_previous = e->choice<bool>({{"current", false}, {"previous", true}});
  if (auto r = n.get("round_width")) {
    p.search_round_width = r->integer(1);
    if (p.search_round_width > kMaxSearchRoundWidth) r->fail("must be <= " + std::to_string(kMaxSearchRoundWidth));
  }
}

void pang_tedrake_miqp_scene_gains(const Model& m, double& model_gain, std::vector<double>&) {
  model_gain = formulation_params_or_default<PangTedrakeMiqpParams>(m).stiffness_K;
}

void pang_tedrake_miqp_stepper_buffers(const Model& m, double slots, std::vector<StepperBuffer>& out) {
  const double nq = m.n_q(), d = sizeof(double);
  const double k = std::min(slots, static_cast<double>(PangTedrakeMiqp::kMaxContacts));
  out.push_back({(5 * slots + 2 * k * (nq + 4) + 3 * nq) * d, "pang_tedrake_miqp's step memory"});
}

}  // namespace qs

// The pang_tedrake_miqp section of a scene's "model" (docs/scene-format.md).
#include <string>

#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"
#include "quasistep/core/scene.hpp"

namespace qs {

void read_pang_tedrake_miqp_params(const json_input::Node& n, Model& m) {
  FormulationParams& p = m.params;
  n.expect_object({"formulation", "stiffness", "elastic_bound", "round_width"});
  p.stiffness_K = n.at("stiffness").positive();
  if (auto e = n.get("elastic_bound"))
    p.elastic_bound_previous = e->choice<bool>({{"current", false}, {"previous", true}});
  if (auto r = n.get("round_width")) {
    p.search_round_width = r->integer(1);
    if (p.search_round_width > kMaxSearchRoundWidth) r->fail("must be <= " + std::to_string(kMaxSearchRoundWidth));
  }
}

}  // namespace qs

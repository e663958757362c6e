// The ecp_ncp section of a scene's "model" (docs/scene-format.md).
#include "quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp"
#include "quasistep/core/scene.hpp"

namespace qs {

void read_ecp_ncp_params(const json_input::Node& n, Model& m) {
  // Xie & Chakraborty 2021, eq. (5): the friction ellipsoid (mu is world.support_friction).
  EcpNcpParams& p = m.params.emplace<EcpNcpParams>();
  n.expect_object({"formulation", "e_t", "e_o", "e_r"});
  if (auto e = n.get("e_t")) p.ellipsoid_e_t = e->positive();
  if (auto e = n.get("e_o")) p.ellipsoid_e_o = e->positive();
  p.ellipsoid_e_r = n.at("e_r").positive();
}

}  // namespace qs

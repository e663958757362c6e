// The parameters of ecp_ncp (Xie & Chakraborty 2021), read from a scene's "model" by
// core/formulations/ecp_ncp/ecp_ncp_params.cpp and held by the Model (Model::params,
// formulation_params).
#pragma once

namespace qs {

/// Xie & Chakraborty 2021, eq. (5): the friction ellipsoid's semi-axes; e_t, e_o
/// dimensionless, e_r in m. Its mu is world.support_friction.
struct EcpNcpParams {
  double ellipsoid_e_t = 1.0, ellipsoid_e_o = 1.0, ellipsoid_e_r = 0.0;
};

}  // namespace qs

// The checks every solved step of an ECP reproduction must pass (Xie & Chakraborty 2021 examples, issue 8):
// the MNCP's residual within 1e-9, no hull point below the plane, and, while the body is in
// contact, a positive normal impulse with the ECP on the plane.
#pragma once

#include <gtest/gtest.h>

#include "quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp"

namespace qs::test {

inline void expect_valid_ecp_step(const EcpNcp& ecp, int step, bool in_contact) {
  EXPECT_LE(ecp.report().complementarity_residual, 1e-9) << "step " << step;
  EXPECT_GE(ecp.lowest_vertex(), -1e-9) << "step " << step;  // no penetration
  EXPECT_GE(ecp.p_n(), -1e-9) << "step " << step;            // an impulse: >= 0 to the residual
  if (in_contact) {
    EXPECT_GT(ecp.p_n(), 0.0) << "step " << step;
    EXPECT_NEAR(ecp.ecp()[2], 0.0, 1e-9) << "step " << step;  // the ECP's height
  }
}

}  // namespace qs::test

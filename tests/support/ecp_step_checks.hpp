// The checks every solved step of an ECP reproduction must pass (Xie & Chakraborty 2021
// examples): the MNCP's residual within 1e-9, no hull point below the plane, and, while the
// body is in contact, a positive normal impulse with the ECP on the plane; and, in the
// step's own units, Newton-Euler's balance of the impulses (ecp_balance_violation).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

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

/// The step from q0 (at time t, step h) to q1 re-checked from the stepper's reported
/// impulses, apart from the stepper's own residual: Xie & Chakraborty 2021, eq. (6) with
/// M^u (eq. (18)'s first block),
///   m (v1 - v0) = p_contact + p_ext,   I_w (w1 - w0) = (a1 - c1) x p_contact + p_r e_z + p_ext_ang,
/// row by row, as the largest residual over the largest sum of a row's term magnitudes, the
/// angular rows divided by the body's size (hull_extent) so that all are impulses
/// (RelativeBalance's measure: the same at any h and in any units), and the
/// friction ellipsoid (eq. (5)) and p_n >= 0 against the step's largest linear impulse (to
/// kEcpConeTolerance, scaled to kForceBalanceTolerance in the result). A step taken as
/// substeps reports the last substep's ECP and the summed p_n: only p_n >= 0 is checked then
/// (the caller counts such steps: EcpNcp::substeps()).
inline double ecp_balance_violation(const Model& m, const EcpNcp& ecp, const Eigen::VectorXd& q0,
                                    const Eigen::VectorXd& q1, double t, double h) {
  if (ecp.substeps() != 1) return ecp.p_n() >= 0 ? 0.0 : 1.0;
  const Body3& b = *m.body3;
  const double mass = m.bodies[b.body].mass;
  const Eigen::Matrix<double, 6, 1> p_ext = ecp_external_impulse(m, q0, t, h);
  const Eigen::Vector3d v0 = q0.segment<3>(7), w0 = q0.segment<3>(10), v1 = q1.segment<3>(7), w1 = q1.segment<3>(10);
  const Eigen::Vector3d c1 = q1.head<3>();
  Eigen::Vector4d qu = q0.segment<4>(3);
  qu /= qu.norm();
  const Eigen::Matrix3d R0 = ecp_rotation(qu);
  const Eigen::Matrix3d Iw = R0 * b.inertia * R0.transpose();
  const Eigen::Vector3d pc(ecp.p_t(), ecp.p_o(), ecp.p_n());
  const Eigen::Vector3d r = ecp.ecp() - c1;
  const Eigen::Vector3d dl = mass * (v1 - v0), dw = Iw * (w1 - w0), moment = r.cross(pc);
  const Eigen::Vector3d spin(0, 0, ecp.p_r());
  // The angular rows (N m s) over the body's size, so that all six rows are impulses.
  const double size = hull_extent(b);
  double worst = 0, terms_max = 0;
  for (int i = 0; i < 3; ++i) {
    const double res_l = dl[i] - pc[i] - p_ext[i];
    const double terms_l = std::abs(dl[i]) + std::abs(pc[i]) + std::abs(p_ext[i]);
    // I_w (w1 - w0) sums three products: its terms are |I_w| |w1 - w0|, not |I_w (w1 - w0)|.
    const double terms_dw = (Iw.row(i).cwiseAbs() * (w1 - w0).cwiseAbs())(0);
    const double terms_m = std::abs(r[(i + 1) % 3] * pc[(i + 2) % 3]) + std::abs(r[(i + 2) % 3] * pc[(i + 1) % 3]);
    const double res_a = dw[i] - moment[i] - spin[i] - p_ext[3 + i];
    const double terms_a = terms_dw + terms_m + std::abs(spin[i]) + std::abs(p_ext[3 + i]);
    if (std::isnan(res_l) || std::isnan(res_a)) return 1.0;
    worst = std::max({worst, std::abs(res_l), std::abs(res_a) / size});
    terms_max = std::max({terms_max, terms_l, terms_a / size});
  }
  const double v = worst == 0 ? 0.0 : worst / terms_max;
  // Eq. (5): (p_t / e_t)^2 + (p_o / e_o)^2 + (p_r / e_r)^2 <= (mu p_n)^2, and p_n >= 0.
  const EcpNcpParams& e = formulation_params_or_default<EcpNcpParams>(m);
  const double mu_pn = m.world.support_friction * ecp.p_n();
  const double cone = std::hypot(ecp.p_t() / e.ellipsoid_e_t, ecp.p_o() / e.ellipsoid_e_o, ecp.p_r() / e.ellipsoid_e_r);
  // Against the step's largest linear impulse, contact or applied.
  const double impulse = std::max({pc.cwiseAbs().maxCoeff(), p_ext.head<3>().cwiseAbs().maxCoeff(), 1e-300});
  // The cone to kEcpConeTolerance (the ellipsoid's row is quadratic in the impulses), on the
  // balance's scale.
  const double outside = std::max((cone - mu_pn) / impulse, -ecp.p_n() / impulse);
  return std::max(v, outside * (kForceBalanceTolerance / kEcpConeTolerance));
}

}  // namespace qs::test

// A reference model for the ECP stepper of Xie & Chakraborty 2021 (ecp_ncp.hpp): planar
// sliding of a flat-bottomed body with an ellipsoidal friction model, as its own reduced
// MNCP. Used by the tests and benchmarks to check the ECP step against it.
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <string>

#include "quasistep/core/model.hpp"
#include "quasistep/kernels/ncp_newton.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

/// The planar-sliding reference (after ref. [13] of Xie & Chakraborty 2021): the body stays flat
/// on its face, 3 DOF (v_x, v_y, w_z), the same ellipsoidal friction (eq. (8)) at an ECP that
/// follows from the moment balance about the horizontal axes (docs/ecp.md derives it):
///   r_x = (r_z p_t + A_y) / p_n,   r_y = (r_z p_o - A_x) / p_n,   r_z = -(CM height),
///   A = applied moment impulse + gyroscopic impulse - (I_w dw) (x and y components),
///   p_n = m g h - (applied vertical impulse).
/// Unknowns [v_x, v_y, w_z, p_t, p_o, p_r | sigma]; the same kernel. It requires a flat start
/// (v_z = w_x = w_y = 0, rotation about z only) and keeps it; the pose moves exactly as in
/// the ECP stepper (eq. (7) with the normalised quaternion).
class PlanarSlidingReference {
 public:
  explicit PlanarSlidingReference(const Model& m);
  /// bad_input (detail()) when the state is not flat or the body would lift (p_n <= 0).
  Status step(const Model& m, State& s);
  const Eigen::Vector3d& ecp() const { return ecp_; }
  double p_n() const { return pn_; }
  const NcpNewton<8>::Result& result() const { return res_; }
  const std::string& detail() const { return detail_; }

  /// F and J of the reduced MNCP for the data of the last setup (public for tests).
  bool operator()(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> F,
                  Eigen::Ref<Eigen::MatrixXd> J) const;
  /// Fixes a step's data (as step() does); false when the state is not flat.
  bool setup(const Model& m, const Eigen::Ref<const Eigen::VectorXd>& q, double t);

 private:
  NcpNewton<8> newton_;
  NcpNewton<8>::Result res_;
  Eigen::Matrix<double, 7, 1> x0_ = Eigen::Matrix<double, 7, 1>::Zero();
  bool have_prev_ = false;
  double h_ = 0, mass_ = 0, mu_ = 0, et_ = 1, eo_ = 1, er_ = 1, pn_ = 0, rz_ = 0;
  Eigen::Vector3d v0_, w0_, ecp_ = Eigen::Vector3d::Zero();
  Eigen::Matrix3d Iw_;
  Eigen::Matrix<double, 6, 1> p_ext_;
  std::string detail_;
};

}  // namespace qs

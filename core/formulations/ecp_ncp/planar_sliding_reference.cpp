#include "quasistep/core/formulations/ecp_ncp/planar_sliding_reference.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <limits>

#include "quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp"
#include "quasistep/core/geometry3.hpp"
#include "quasistep/core/number_text.hpp"

namespace qs {

using namespace geometry3;

PlanarSlidingReference::PlanarSlidingReference(const Model&) {}

bool PlanarSlidingReference::setup(const Model& m, const Eigen::Ref<const Eigen::VectorXd>& q, double t) {
  const Body3& b = *m.body3;
  const Quat Q = state_quaternion(q);
  v0_ = q.segment<3>(7);
  w0_ = q.segment<3>(10);
  // Flat: a rotation about z only, no vertical or tilting velocity.
  if (std::abs(Q[1]) > 1e-12 || std::abs(Q[2]) > 1e-12 || std::abs(v0_[2]) > 1e-12 || std::abs(w0_[0]) > 1e-12 ||
      std::abs(w0_[1]) > 1e-12) {
    detail_ = "the planar-sliding reference needs a flat body (rotation about z only, v_z = w_x = w_y = 0)";
    return false;
  }
  h_ = m.step.h;
  mass_ = m.bodies[b.body].mass;
  mu_ = m.world.support_friction;
  const EcpNcpParams& ellipsoid = formulation_params_or_default<EcpNcpParams>(m);
  et_ = ellipsoid.ellipsoid_e_t;
  eo_ = ellipsoid.ellipsoid_e_o;
  er_ = ellipsoid.ellipsoid_e_r;
  const Mat3 R = ecp_rotation(Q);
  Iw_ = R * b.inertia * R.transpose();
  p_ext_ = ecp_external_impulse(m, q, t, h_);
  // Vertical balance with v_z = 0 before and after (Xie & Chakraborty 2021, eq. (6), z row).
  pn_ = -p_ext_[2];
  rz_ = -q[2];  // the ECP is on the plane, the CM at height q_z
  if (!(pn_ > 0)) {
    detail_ = "the body would lift off (the applied loads carry its weight): no sliding contact";
    return false;
  }
  return true;
}

bool PlanarSlidingReference::operator()(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> F,
                                        Eigen::Ref<Eigen::MatrixXd> J) const {
  J.setZero();
  const double vx = x[0], vy = x[1], wz = x[2], pt = x[3], po = x[4], pr = x[5], sig = x[6];
  const double dw = wz - w0_[2];
  // The moment balance about x and y (the rows of eq. (6) whose angular velocities stay 0)
  // places the ECP: r_x = (r_z p_t + A_y) / p_n, r_y = (r_z p_o - A_x) / p_n.
  const double Ax = p_ext_[3] - Iw_(0, 2) * dw, Ay = p_ext_[4] - Iw_(1, 2) * dw;
  const double rx = (rz_ * pt + Ay) / pn_, ry = (rz_ * po - Ax) / pn_;
  const double drx_dpt = rz_ / pn_, drx_dwz = -Iw_(1, 2) / pn_;
  const double dry_dpo = rz_ / pn_, dry_dwz = Iw_(0, 2) / pn_;
  F[0] = -mass_ * (vx - v0_[0]) + pt + p_ext_[0];
  J(0, 0) = -mass_;
  J(0, 3) = 1;
  F[1] = -mass_ * (vy - v0_[1]) + po + p_ext_[1];
  J(1, 1) = -mass_;
  J(1, 4) = 1;
  F[2] = -Iw_(2, 2) * dw + rx * po - ry * pt + pr + p_ext_[5];
  J(2, 2) = -Iw_(2, 2) + po * drx_dwz - pt * dry_dwz;
  J(2, 3) = po * drx_dpt - ry;
  J(2, 4) = rx - pt * dry_dpo;
  J(2, 5) = 1;
  // Eq. (8) at the ECP: u = v + w x r, so u_x = v_x - w_z r_y, u_y = v_y + w_z r_x.
  const double ct = et_ * et_ * mu_ * pn_, co = eo_ * eo_ * mu_ * pn_, cr = er_ * er_ * mu_ * pn_;
  F[3] = ct * (vx - wz * ry) + pt * sig;
  J(3, 0) = ct;
  J(3, 2) = ct * (-ry - wz * dry_dwz);
  J(3, 4) = ct * (-wz * dry_dpo);
  J(3, 3) = sig;
  J(3, 6) = pt;
  F[4] = co * (vy + wz * rx) + po * sig;
  J(4, 1) = co;
  J(4, 2) = co * (rx + wz * drx_dwz);
  J(4, 3) = co * (wz * drx_dpt);
  J(4, 4) = sig;
  J(4, 6) = po;
  F[5] = cr * wz + pr * sig;
  J(5, 2) = cr;
  J(5, 5) = sig;
  J(5, 6) = pr;
  F[6] = (mu_ * pn_) * (mu_ * pn_) - (pt / et_) * (pt / et_) - (po / eo_) * (po / eo_) - (pr / er_) * (pr / er_);
  J(6, 3) = -2 * pt / (et_ * et_);
  J(6, 4) = -2 * po / (eo_ * eo_);
  J(6, 5) = -2 * pr / (er_ * er_);
  return F.allFinite();
}

Status PlanarSlidingReference::step(const Model& m, State& s) {
  detail_.clear();
  if (!m.body3 || s.q.size() != 13 || !(m.step.h > 0) || !(formulation_params_or_default<EcpNcpParams>(m).ellipsoid_e_r > 0)) {
    detail_ = "the sliding reference needs a body_on_plane model";
    return Status::bad_input;
  }
  if (!setup(m, s.q, s.t)) return Status::bad_input;
  if (!have_prev_) {
    x0_.setZero();
    x0_.head<2>() = v0_.head<2>();
    x0_[2] = w0_[2];
  }
  NcpNewtonOptions opt;
  opt.tolerance = 1e-10;
  opt.max_iterations = 60;
  const Status st = newton_.solve(7, 6, *this, x0_, res_, opt);
  if (st != Status::solved) {
    detail_ = "Newton ended " + std::string(to_string(st)) + " with natural residual " + three_digits(res_.stats.residual);
    return st;
  }
  x0_ = res_.x;
  have_prev_ = true;
  const double vx = res_.x[0], vy = res_.x[1], wz = res_.x[2], pt = res_.x[3], po = res_.x[4];
  const double dw = wz - w0_[2];
  const double Ax = p_ext_[3] - Iw_(0, 2) * dw, Ay = p_ext_[4] - Iw_(1, 2) * dw;
  // The same kinematic map as the ECP stepper (eq. (7), then normalisation).
  const Vec3 v(vx, vy, 0), w(0, 0, wz);
  s.q.segment<3>(0) += h_ * v;
  // r is measured from the CM at the end of the step, as r = a1 - q^{u+1} in eq. (2).
  ecp_ = Vec3(s.q[0] + (rz_ * pt + Ay) / pn_, s.q[1] + (rz_ * po - Ax) / pn_, 0.0);
  Quat Q = advance_quaternion(state_quaternion(s.q), w, h_);
  s.q.segment<4>(3) = Q / Q.norm();
  s.q.segment<3>(7) = v;
  s.q.segment<3>(10) = w;
  s.t += h_;
  s.step += 1;
  return Status::solved;
}

}  // namespace qs

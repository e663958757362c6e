#include "quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "quasistep/core/number_text.hpp"
#include "quasistep/kernels/unit_scale.hpp"

namespace qs {

using namespace geometry3;

// ---- the applied impulse --------------------------------------------------------------

Eigen::Matrix<double, 6, 1> ecp_external_impulse(const Model& m, const Eigen::Ref<const Eigen::VectorXd>& q, double t,
                                                 double h) {
  const Body3& b = *m.body3;
  const Mat3 R = ecp_rotation(state_quaternion(q));
  const Vec3 w = q.segment<3>(10);
  const double t_mid = t + 0.5 * h;  // docs/scene-format.md, "Sampling convention"
  Vec3 f(0, 0, -m.bodies[b.body].mass * m.world.gravity), tau = Vec3::Zero();
  for (const Load3& l : b.loads) {
    Vec3 fl(l.force[0](t_mid), l.force[1](t_mid), l.force[2](t_mid));
    Vec3 tl(l.torque[0](t_mid), l.torque[1](t_mid), l.torque[2](t_mid));
    if (l.body_frame) {
      fl = R * fl;
      tl = R * tl;
    }
    f += fl;
    tau += tl + (R * l.point).cross(fl);
  }
  // Xie & Chakraborty 2021, eq. (6): p_vp, the gyroscopic impulse of Euler's equations in the world frame.
  const Mat3 Iw = R * b.inertia * R.transpose();
  Eigen::Matrix<double, 6, 1> p;
  p.head<3>() = h * f;
  p.tail<3>() = h * tau - h * w.cross(Iw * w);
  return p;
}

// ---- the step's MNCP ------------------------------------------------------------------

void EcpStepProblem::setup(const Model& m, const Eigen::Ref<const Eigen::VectorXd>& q, double t, int k, double h) {
  body_ = &*m.body3;
  planes_ = static_cast<int>(body_->hull_normals.size());
  side_ = body_->cylinder.has_value();
  faces_ = planes_ + (side_ ? 1 : 0);
  if (side_) {
    axis_ = body_->cylinder->axis;
    center_ = body_->cylinder->center;
    radius_ = body_->cylinder->radius;
  }
  k_ = k;
  h_ = h;
  mass_ = m.bodies[body_->body].mass;
  size_ = hull_extent(*body_);
  mu_ = m.world.support_friction;
  const EcpNcpParams& ellipsoid = formulation_params_or_default<EcpNcpParams>(m);
  et_ = ellipsoid.ellipsoid_e_t;
  eo_ = ellipsoid.ellipsoid_e_o;
  er_ = ellipsoid.ellipsoid_e_r;
  c0_ = state_position(q);
  q0_ = state_quaternion(q);
  v0_ = q.segment<3>(7);
  w0_ = q.segment<3>(10);
  const Mat3 R0 = ecp_rotation(q0_);
  // Xie & Chakraborty 2021, eq. (18) uses M^u: the world inertia at the start of the step.
  Iw_ = R0 * body_->inertia * R0.transpose();
  p_ext_ = ecp_external_impulse(m, q, t, h_);
  for (int i = 0; i < planes_; ++i) {
    nb_[i] = body_->hull_normals[i];
    d_[i] = body_->hull_offsets[i];
  }
}

void EcpStepProblem::end_pose(const Eigen::Ref<const Eigen::VectorXd>& x, Vec3& c, Quat& q) const {
  c = c0_ + h_ * x.segment<3>(kV);
  q = advance_quaternion(q0_, x.segment<3>(kW), h_);
  q /= q.norm();
}

double EcpStepProblem::face_value(const Eigen::Ref<const Eigen::VectorXd>& x, int i, const Vec3& p) const {
  Vec3 c;
  Quat q;
  end_pose(x, c, q);
  return hull_face_value(*body_, i, ecp_rotation(q).transpose() * (p - c));
}

void EcpStepProblem::cold_start(Eigen::Ref<Eigen::VectorXd> x) const {
  x.setZero();
  x.segment<3>(kV) = v0_;
  x.segment<3>(kW) = w0_;
  // The ECP guess: the centroid of the lowest hull vertices at the pose the body would reach
  // without contact (the free flight of this step): the lowest face's centre when it rests
  // on a face, the vertex or edge it is about to land on otherwise (an impact moves the ECP
  // across the body within one step). A corner would put several complementarity pairs of
  // eq. (19) at (0, 0), where the FB function has its kink.
  const Vec3 v_free = v0_ + p_ext_.head<3>() / mass_;
  const Vec3 w_free = w0_ + Iw_.ldlt().solve(Vec3(p_ext_.tail<3>()));
  const Vec3 c_free = c0_ + h_ * v_free;
  Quat q_free = advance_quaternion(q0_, w_free, h_);
  const Mat3 R1 = ecp_rotation(q_free / q_free.norm());
  Vec3 low;
  hull_lowest(*body_, R1, c_free, 1e-6 * size_, &low);
  const Vec3 low_free = low;
  low[2] = std::max(low[2], 0.0);
  x.segment<3>(kA1) = low;
  x.segment<3>(kA2) = Vec3(low[0], low[1], 0);
  const double nkz = hull_face_normal(*body_, k_, ecp_rotation(q0_), c0_, low_free)[2];
  // Eq. (14) with only face k: n_k + l_2 e_z = 0 in its vertical part.
  x[l2()] = std::max(-nkz, 1e-3);
  // Eq. (13) when separated: a1 - a2 = l_k l_2 e_z (vertically).
  x[l1(k_)] = std::max(low[2], 0.0) / x[l2()];
  if (low[2] > 1e-9 * size_) return;
  // Touching: the weight's impulse, and the friction of eq. (8) for the sliding velocity at
  // the guessed ECP, which in closed form is p_j = -e_j^2 mu p_n s_j / sigma with
  // sigma = sqrt(sum e_j^2 s_j^2) (zeta = 0).
  const double p_n = std::max(-p_ext_[2], 0.0);
  x[pn()] = p_n;
  const Vec3 u = v0_ + w0_.cross(low - c0_);
  const Vec3 e(et_, eo_, er_), sv(u[0], u[1], w0_[2]);
  const double sig = std::sqrt((e.array() * sv.array()).square().sum());
  if (sig > 1e-12 * size_ / h_) {
    x[sigma()] = sig;
    for (int j = 0; j < 3; ++j) x[kPt + j] = -e[j] * e[j] * mu_ * p_n * sv[j] / sig;
  }
}

void EcpStepProblem::set_units(double impulse, double velocity, double length, double v_unit, double w_unit) {
  const int n = size();
  const auto col = [&](int c) -> double& { return col_unit_[static_cast<size_t>(c)]; };
  const auto row = [&](int r) -> double& { return row_unit_[static_cast<size_t>(r)]; };
  for (int c = 0; c < n; ++c) col(c) = 1.0;  // the weights l_i (i != k) and l_2
  for (int j = 0; j < 3; ++j) {
    col(kV + j) = v_unit;
    col(kW + j) = w_unit;
    col(kA1 + j) = col(kA2 + j) = length;
  }
  col(kPt) = col(kPo) = col(pn()) = impulse;
  col(kPr) = impulse * length;
  col(kLk) = length;  // a gap over l_2
  col(sigma()) = velocity;
  for (int r = 0; r < n; ++r) row(r) = length;  // eq. (13), -f_i(a1), -g(a2), l_k: lengths
  for (int r = 0; r < 3; ++r) {
    row(r) = impulse;
    row(3 + r) = impulse * length;
    row(9 + r) = 1.0;  // eq. (14): gradients
  }
  row(12) = row(13) = impulse * velocity;
  row(14) = impulse * length * velocity;
  row(sigma()) = impulse * impulse;
  unit_ = true;
  for (int c = 0; c < n; ++c) unit_ = unit_ && col(c) == 1.0 && row(c) == 1.0;
}

void EcpStepProblem::to_units(Eigen::Ref<Eigen::VectorXd> x) const {
  if (!unit_)
    for (int c = 0; c < size(); ++c) x[c] /= col_unit_[static_cast<size_t>(c)];
}

void EcpStepProblem::to_physical(Eigen::Ref<Eigen::VectorXd> x) const {
  if (!unit_)
    for (int c = 0; c < size(); ++c) x[c] *= col_unit_[static_cast<size_t>(c)];
}

void EcpStepProblem::project_onto_cone(Eigen::Ref<Eigen::VectorXd> x) const {
  const double friction = std::hypot(x[kPt] / et_, x[kPo] / eo_, x[kPr] / er_);
  const double bound = mu_ * std::max(x[pn()], 0.0);
  if (!(friction > bound)) return;
  const double shrink = bound / friction;
  x[kPt] *= shrink;
  x[kPo] *= shrink;
  x[kPr] *= shrink;
}

double EcpStepProblem::impulse_unit(const Eigen::Ref<const Eigen::VectorXd>& x) const {
  const double p = std::max({p_ext_.head<3>().cwiseAbs().maxCoeff(), std::abs(x[kPt]), std::abs(x[kPo]),
                             std::abs(x[pn()])});
  return unit_power(p);
}

double EcpStepProblem::velocity_unit(const Eigen::Ref<const Eigen::VectorXd>& x) const {
  const Vec3 v_free = v0_ + p_ext_.head<3>() / mass_;
  return unit_power(std::max({x.segment<3>(kV).cwiseAbs().maxCoeff(), std::abs(x[sigma()]), v_free.cwiseAbs().maxCoeff()}));
}

double EcpStepProblem::impulse_violation(const Eigen::Ref<const Eigen::VectorXd>& x) const {
  const Vec3 v = x.segment<3>(kV), w = x.segment<3>(kW), a1 = x.segment<3>(kA1);
  const Vec3 Fc(x[kPt], x[kPo], x[pn()]);
  const Vec3 r = a1 - (c0_ + h_ * v);
  const Vec3 dl = mass_ * (v - v0_), dw = Iw_ * (w - w0_), moment = r.cross(Fc);
  // The rows of operator() (eq. (18), first block), each against the magnitudes of its
  // terms; the angular rows (N m s) divided by the body's size (m), so that all six are
  // impulses and the measure is the same in any length unit.
  RelativeBalance rows;
  for (int i = 0; i < 3; ++i) {
    rows.row(-dl[i] + Fc[i] + p_ext_[i], std::abs(dl[i]) + std::abs(Fc[i]) + std::abs(p_ext_[i]));
    const double spin = i == 2 ? x[kPr] : 0.0;
    const double turn = Iw_.row(i).cwiseAbs().dot((w - w0_).cwiseAbs());
    const int a = (i + 1) % 3, b = (i + 2) % 3;
    const double arm = std::abs(r[a] * Fc[b]) + std::abs(r[b] * Fc[a]);
    rows.row((-dw[i] + moment[i] + spin + p_ext_[3 + i]) / size_,
             (turn + arm + std::abs(spin) + std::abs(p_ext_[3 + i])) / size_);
  }
  const double balance = rows.worst();
  // Eq. (5), the friction ellipsoid, and p_n >= 0, against the step's linear impulse scale;
  // on the balance's scale (see kEcpConeTolerance).
  const double unit = std::max(Fc.cwiseAbs().maxCoeff(), p_ext_.head<3>().cwiseAbs().maxCoeff());
  if (!(unit > 0)) return balance;
  const double friction = std::hypot(x[kPt] / et_, x[kPo] / eo_, x[kPr] / er_);
  const double cone = std::max(friction - mu_ * x[pn()], -x[pn()]) / unit;
  if (std::isnan(cone)) return std::numeric_limits<double>::infinity();
  return std::max(balance, cone * (kForceBalanceTolerance / kEcpConeTolerance));
}

bool EcpStepProblem::operator()(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> F,
                                Eigen::Ref<Eigen::MatrixXd> J) const {
  if (unit_) return evaluate(x, F, J);
  // x~ -> x, evaluate, then F~ = F / row unit and J~ = J col unit / row unit (powers of two:
  // exact).
  const int n = size();
  Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, EcpNcp::kCapacity, 1> xp = x;
  to_physical(xp);
  const bool ok = evaluate(xp, F, J);
  for (int c = 0; c < n; ++c) J.col(c) *= col_unit_[static_cast<size_t>(c)];
  for (int r = 0; r < n; ++r) {
    const double inv = 1.0 / row_unit_[static_cast<size_t>(r)];
    F[r] *= inv;
    J.row(r) *= inv;
  }
  return ok && F.allFinite();
}

bool EcpStepProblem::evaluate(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> F,
                              Eigen::Ref<Eigen::MatrixXd> J) const {
  J.setZero();
  const Vec3 v = x.segment<3>(kV), w = x.segment<3>(kW), a1 = x.segment<3>(kA1), a2 = x.segment<3>(kA2);
  const double pt = x[kPt], po = x[kPo], pr = x[kPr], lam2 = x[l2()], p_n = x[pn()], sig = x[sigma()];
  const double lk = x[l1(k_)];
  const Vec3 c = c0_ + h_ * v;
  const Quat Q = advance_quaternion(q0_, w, h_);
  const double qn = Q.norm();
  if (!(qn > 1e-12) || !std::isfinite(qn)) return false;
  const Mat3 R = ecp_rotation(Q / qn);
  const Mat3 Jth = rotation_jacobian(q0_, Q, h_);
  const Vec3 r = a1 - c;
  // Each face's gradient at a1 (world frame): a plane's normal R n_i; the cylinder side's
  // g = R P (R'r - center) / radius (unit on the side), whose derivative in a1 is
  // H = R P R' / radius and which also turns with the body. f_i(a1) for eq. (19).
  std::array<Vec3, kEcpMaxHullFaces> grad;
  std::array<double, kEcpMaxHullFaces> fval;
  for (int i = 0; i < planes_; ++i) {
    grad[i] = R * nb_[i];
    fval[i] = grad[i].dot(r) - d_[i];
  }
  Mat3 H = Mat3::Zero();
  if (side_) {
    const Vec3 y = R.transpose() * r - center_;
    const Vec3 py = y - y.dot(axis_) * axis_;
    grad[planes_] = R * py / radius_;
    fval[planes_] = (py.squaredNorm() - radius_ * radius_) / (2 * radius_);
    const Vec3 aw = R * axis_;
    H = (Mat3::Identity() - aw * aw.transpose()) / radius_;
  }
  // grad C(F, a1) of eqs. (13)-(14): grad f_k + sum_{i != k} l_i grad f_i.
  Vec3 gradC = grad[k_];
  for (int i = 0; i < faces_; ++i)
    if (i != k_) gradC += x[l1(i)] * grad[i];
  // The weight of the side's gradient in grad C (1 when it is face k): its share of the
  // a1-, v- and w-derivatives beyond the rigid turn of every gradient.
  const double side_weight = !side_ ? 0.0 : k_ == planes_ ? 1.0 : x[l1(planes_)];
  const Vec3 Fc(pt, po, p_n);  // contact impulse in the world frame: t = e_x, o = e_y, n = e_z
  const Mat3 I3 = Mat3::Identity();

  // Xie & Chakraborty 2021, eq. (18), first block (Newton-Euler, eq. (6) with M^u).
  F.segment<3>(0) = -mass_ * (v - v0_) + Fc + p_ext_.head<3>();
  J.block<3, 3>(0, kV) = -mass_ * I3;
  J(0, kPt) = 1;
  J(1, kPo) = 1;
  J(2, pn()) = 1;
  F.segment<3>(3) = -Iw_ * (w - w0_) + r.cross(Fc) + Vec3(0, 0, pr) + p_ext_.tail<3>();
  J.block<3, 3>(3, kW) = -Iw_;
  J.block<3, 3>(3, kA1) = -skew(Fc);
  J.block<3, 3>(3, kV) = h_ * skew(Fc);
  J.block<3, 1>(3, kPt) = Vec3(0, r[2], -r[1]);
  J.block<3, 1>(3, kPo) = Vec3(-r[2], 0, r[0]);
  J.block<3, 1>(3, pn()) = Vec3(r[1], -r[0], 0);
  J(5, kPr) = 1;

  // d grad C: every gradient turns with the body (-[grad C]x Jth); the side's also moves with
  // a1 relative to the body (H, and through r = a1 - c also with v and the turn).
  const Mat3 dgradC_da1 = side_weight * H;
  const Mat3 dgradC_dv = -h_ * dgradC_da1;
  const Mat3 dgradC_dw = (-skew(gradC) + dgradC_da1 * skew(r)) * Jth;

  // Eq. (13): a1 - a2 + l_k grad C = 0.
  F.segment<3>(6) = a1 - a2 + lk * gradC;
  J.block<3, 3>(6, kA1) = I3 + lk * dgradC_da1;
  J.block<3, 3>(6, kA2) = -I3;
  J.block<3, 3>(6, kV) = lk * dgradC_dv;
  J.block<3, 1>(6, l1(k_)) = gradC;
  for (int i = 0; i < faces_; ++i)
    if (i != k_) J.block<3, 1>(6, l1(i)) = lk * grad[i];
  J.block<3, 3>(6, kW) = lk * dgradC_dw;

  // Eq. (14): grad C + l_2 grad g(a2) = 0, grad g = e_z.
  F.segment<3>(9) = gradC + Vec3(0, 0, lam2);
  for (int i = 0; i < faces_; ++i)
    if (i != k_) J.block<3, 1>(9, l1(i)) = grad[i];
  J(11, l2()) = 1;
  J.block<3, 3>(9, kA1) = dgradC_da1;
  J.block<3, 3>(9, kV) = dgradC_dv;
  J.block<3, 3>(9, kW) = dgradC_dw;

  // Eq. (8): e^2 mu p_n W'v + p sigma = 0, W'v the ECP's velocity u = v + w x r (t, o
  // components) and w_z (the spin about the normal).
  const Vec3 u = v + w.cross(r);
  const Mat3 du_dv = I3 - h_ * skew(w), du_dw = -skew(r), du_da1 = skew(w);
  const double ct = et_ * et_ * mu_, co = eo_ * eo_ * mu_, cr = er_ * er_ * mu_;
  for (int row = 0; row < 2; ++row) {
    const int e = 12 + row;
    const double cc = row == 0 ? ct : co;
    const double p = row == 0 ? pt : po;
    const int pcol = row == 0 ? kPt : kPo;
    F[e] = cc * p_n * u[row] + p * sig;
    J.block<1, 3>(e, kV) = cc * p_n * du_dv.row(row);
    J.block<1, 3>(e, kW) = cc * p_n * du_dw.row(row);
    J.block<1, 3>(e, kA1) = cc * p_n * du_da1.row(row);
    J(e, pn()) = cc * u[row];
    J(e, pcol) = sig;
    J(e, sigma()) = p;
  }
  F[14] = cr * p_n * w[2] + pr * sig;
  J(14, kW + 2) = cr * p_n;
  J(14, pn()) = cr * w[2];
  J(14, kPr) = sig;
  J(14, sigma()) = pr;

  // Eq. (19): 0 <= l_i _|_ -f_i(a1) >= 0 (f_k(a1) = 0 for face k). For a plane and for the
  // side alike, df_i = grad_i' (da1 - h dv) + (grad_i x r)' Jth dw.
  for (int i = 0; i < faces_; ++i) {
    const int e = l1(i);
    F[e] = -fval[i];
    J.block<1, 3>(e, kA1) = -grad[i].transpose();
    J.block<1, 3>(e, kV) = h_ * grad[i].transpose();
    J.block<1, 3>(e, kW) = -(grad[i].cross(r)).transpose() * Jth;
  }
  // 0 <= l_2 _|_ -g(a2) >= 0.
  F[l2()] = -a2[2];
  J(l2(), kA2 + 2) = -1;
  // 0 <= p_n _|_ l_k >= 0 in place of eq. (19)'s max_i f_i(a2) (see the header): with
  // f_k(a1) = 0 and grad C in the normal cone at a1, l_k l_2 = a1_z - a2_z is the gap.
  F[pn()] = lk;
  J(pn(), kLk) = 1;
  // 0 <= sigma _|_ zeta >= 0, the friction ellipsoid of eq. (5) in impulses.
  F[sigma()] = (mu_ * p_n) * (mu_ * p_n) - (pt / et_) * (pt / et_) - (po / eo_) * (po / eo_) - (pr / er_) * (pr / er_);
  J(sigma(), pn()) = 2 * mu_ * mu_ * p_n;
  J(sigma(), kPt) = -2 * pt / (et_ * et_);
  J(sigma(), kPo) = -2 * po / (eo_ * eo_);
  J(sigma(), kPr) = -2 * pr / (er_ * er_);
  return F.allFinite();
}

// ---- the stepper ----------------------------------------------------------------------

EcpNcp::EcpNcp(const Model& m) : Stepper(m) {}

std::vector<std::string> EcpNcp::extra_columns() const { return {"ecp_x", "ecp_y", "ecp_z", "p_n"}; }

void EcpNcp::extra_values(std::vector<double>& out) const {
  out.insert(out.end(), {a1_[0], a1_[1], a1_[2], pn_});
}

EcpNcp::BodyUnits EcpNcp::body_units_of(const Model& m, double h) {
  const Body3& b = *m.body3;
  return {2 * unit_power(hull_extent(b)), 128 * unit_power(h), unit_power(m.bodies[b.body].mass)};
}

bool EcpNcp::far_from_body_units(const Model& m, double h) {
  const BodyUnits u = body_units_of(m, h);
  // Time: the time the body takes to fall its size, sqrt(size / g) (its square scales as
  // size / g, so it follows every change of units exactly), in [1/8, 1/4) of a unit that is
  // 1 s for the examples in SI units. Not h, which is small at a small step in any units;
  // only a scene without gravity has no other time, and is judged by h.
  const double size = hull_extent(*m.body3), g = m.world.gravity;
  const double time = g > 0 ? 8 * unit_power(std::sqrt(size / g)) : u.time;
  const auto far = [](double unit) { return std::abs(std::ilogb(unit)) > 4; };
  return far(u.length) || far(u.mass) || far(time);
}

Status EcpNcp::advance(const Model& m, const WorldParams& p, State& s) {
  report_ = StepReport{};
  attempts_ = 0;
  substeps_ = 1;
  body_units_ = false;
  if (!m.body3 || m.world.type != WorldType::body_on_plane || s.q.size() != 13)
    return fail(Status::bad_input, "the ECP stepper needs a body_on_plane world (one 3D body, a 13-entry state)");
  const Body3& b = *m.body3;
  const int faces = hull_face_count(b);
  if (faces < 1 || faces > kEcpMaxHullFaces || !(formulation_params_or_default<EcpNcpParams>(m).ellipsoid_e_r > 0))
    return fail(Status::bad_input, "the body's hull or model.e_r is out of range");
  if (!s.q.allFinite()) return fail(Status::bad_input, "the state is not finite");

  const double h = p.h, t0 = s.t;
  start_q_ = s.q;
  // The warm start travels with the State (State::memory: [valid, k, x]), so a world stepped
  // by any stepper object (a batch's thread) continues exactly as alone. A State without it
  // (sized otherwise) starts cold.
  const int n = EcpStepProblem::kFree + faces + 2;
  const bool has_memory = s.memory.size() == kMemorySolution + n;
  have_prev_ = has_memory && s.memory[kMemoryValid] == 1.0;
  // Nothing of another world's steps may reach this one's (a batch's stepper steps many).
  prev_k_ = -1;
  if (have_prev_) {
    prev_k_ = static_cast<int>(s.memory[kMemoryFace]);
    prev_.resize(n);
    prev_ = s.memory.segment(kMemorySolution, n);
  }
  auto accept = [&](bool in_body_units) {
    body_units_ = in_body_units;
    if (has_memory) {
      s.memory[kMemoryValid] = 1.0;
      s.memory[kMemoryFace] = prev_k_;
      s.memory.segment(kMemorySolution, n) = prev_;
    }
    return report_.status = Status::solved;
  };
  // Each pass starts from the step's own warm start (a substep of the first pass moves it).
  const bool had_prev = have_prev_;
  const int had_k = prev_k_;
  if (had_prev) start_prev_ = prev_;
  // The whole step, then (when no face k gave an accepted solution for it) the same step as
  // 2, 4, then 8 equal substeps, each a full solve_step from the previous substep's end:
  // seen at hard landings of a rocking body (a T-bar rotating through flat within one step,
  // docs/ecp.md "Substeps, and Newton in the body's own units"), where the one-step MNCP's
  // Newton stalls and the halves solve. All of it in the scene's units, then once more with
  // Newton in the body's own units (body_units_of): the semismooth Newton's merit mixes
  // impulses, lengths and velocities, and a step it does not solve in one set of units can
  // solve in another. Where the body's units are far from the scene's, they go first: a
  // scene in such units would otherwise pay a failing solve in its own units on every step.
  Status whole_status = Status::not_run;
  std::string whole_detail;
  int pivots = 0, attempts = 0;
  const bool body_first = far_from_body_units(m, h);
  for (int pass = 0; pass < 2; ++pass) {
    const bool in_body_units = (pass == 1) != body_first;
    s.q = start_q_;
    have_prev_ = had_prev;
    prev_k_ = had_k;
    if (had_prev) prev_ = start_prev_;
    Status st = solve_step(m, s.q, t0, h, in_body_units);
    pivots += report_.pivots;
    attempts += attempts_;
    if (st == Status::solved) {
      report_.pivots = pivots;
      attempts_ = attempts;
      return accept(in_body_units);
    }
    if (pass == 0) {  // the first units' verdict is the one reported
      whole_status = st;
      whole_detail = report_.detail;
    }
    for (int parts = 2; parts <= kEcpMaxSubsteps; parts *= 2) {
      s.q = start_q_;
      have_prev_ = false;  // the whole step's candidates changed nothing; restart cleanly
      double pn_sum = 0;
      st = Status::solved;
      for (int part = 0; part < parts && st == Status::solved; ++part) {
        st = solve_step(m, s.q, t0 + h * part / parts, h / parts, in_body_units);
        pivots += report_.pivots;
        attempts += attempts_;
        pn_sum += pn_;
      }
      if (st == Status::solved) {
        pn_ = pn_sum;  // the normal impulse over the whole step
        substeps_ = parts;
        report_.substeps = parts;
        report_.pivots = pivots;
        attempts_ = attempts;
        report_.contacts = pn_ > 0 ? 1 : 0;
        return accept(in_body_units);
      }
    }
  }
  s.q = start_q_;
  have_prev_ = false;
  attempts_ = attempts;
  report_ = StepReport{};
  report_.pivots = pivots;
  return fail(whole_status, whole_detail + "; nor as 2, 4 or " + std::to_string(kEcpMaxSubsteps) + " substeps, in " +
                                (body_first ? "the body's own units or the scene's" : "the scene's units or the body's own"));
}

Status EcpNcp::solve_step(const Model& m, Eigen::VectorXd& q_state, double t, double h, bool in_body_units) {
  report_ = StepReport{};
  attempts_ = 0;
  const Body3& b = *m.body3;
  const int faces = hull_face_count(b);
  const BodyUnits body = body_units_of(m, h);
  // Candidates for k (see the class comment): faces touching the lowest point at the start
  // of the step, then the other downward faces; each group most downward first (a face's
  // normal taken at that point: for a cylinder's side, the radial direction there).
  const Mat3 R0 = ecp_rotation(state_quaternion(q_state));
  const Vec3 c0 = state_position(q_state);
  Vec3 low;
  hull_lowest(b, R0, c0, 0.0, &low);
  const Vec3 low_body = R0.transpose() * (low - c0);
  const double scale = hull_extent(b);
  int count = 0;
  std::array<double, kEcpMaxHullFaces> key{};
  for (int i = 0; i < faces; ++i) {
    const double nz = hull_face_normal(b, i, R0, c0, low)[2];
    if (!(nz < -1e-12)) continue;
    const bool touches = std::abs(hull_face_value(b, i, low_body)) <= 1e-9 * scale;
    key[i] = (touches ? -2.0 : 0.0) + nz;
    order_[count++] = i;
  }
  std::stable_sort(order_.begin(), order_.begin() + count, [&](int a, int c) { return key[a] < key[c]; });
  // The previous step's k first, when it is still a candidate.
  for (int j = 0; j < count; ++j)
    if (order_[j] == prev_k_) std::rotate(order_.begin(), order_.begin() + j, order_.begin() + j + 1);
  if (count == 0) return fail(Status::numerical_failure, "no face of the hull faces the plane");

  NcpNewtonOptions opt;
  opt.tolerance = 1e-10;
  opt.max_iterations = 60;
  Status first_status = Status::not_run;
  double first_residual = 0;
  std::string rejected;
  bool unbalanced = false;  // a candidate solved the MNCP but its impulses failed the check
  std::array<char, kEcpMaxHullFaces> tried{};
  for (int pos = 0; pos < count; ++pos) {
    const int k = order_[pos];
    if (tried[k]) continue;
    tried[k] = 1;
    bool accepted = false;
    // From the previous step's solution (State::memory),
    // then from the cold start.
    for (int start_kind = 0; start_kind < 2 && !accepted; ++start_kind) {
      if (start_kind == 0 && !have_prev_) continue;
      prob_.setup(m, q_state, t, k, h);
      const int n = prob_.size();
      x0_.resize(n);
      if (start_kind == 0) {
        x0_ = prev_;
        if (prev_k_ != k) {
          // l_k is a distance and the other l_i weights only for a given k: restart them.
          Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, kCapacity, 1> cold(n);
          prob_.cold_start(cold);
          for (int i = 0; i < prob_.faces(); ++i) x0_[prob_.l1(i)] = cold[prob_.l1(i)];
          x0_[prob_.l2()] = cold[prob_.l2()];
        }
      } else {
        prob_.cold_start(x0_);
      }
      ++attempts_;
      if (in_body_units) {
        // In the body's own units (powers of two): the same body in any units poses Newton
        // the same numbers.
        prob_.set_units(body.mass * body.length / body.time, body.length / body.time, body.length,
                        body.length / body.time, 1.0 / body.time);
        prob_.to_units(x0_);
      }
      const Status st = newton_.solve(n, EcpStepProblem::kFree, prob_, x0_, res_, opt);
      if (in_body_units) {
        prob_.to_physical(res_.x);
        prob_.set_units(1, 1, 1, 1, 1);
      }
      report_.pivots += res_.stats.iterations;
      if (attempts_ == 1) {
        first_status = st;
        first_residual = res_.stats.residual;
      }
      // Newton aims at 1e-10; where its merit stalls (not_found) or its iterations run out on
      // rounding just above that, the point is accepted up to kEcpAcceptedResidual, the bar
      // every step must meet (then checked in the step's own units below).
      const auto newton_accepts = [&](Status ended) {
        return ended == Status::solved ||
               ((ended == Status::not_found || ended == Status::iteration_limit) && res_.stats.residual <= kEcpAcceptedResidual);
      };
      if (!newton_accepts(st)) continue;
      // The natural residual is absolute: at a small h (impulses of m g h = 1e-12 N s at
      // h = 1e-13 s) it is met with the impulses unbalanced. Such a point is solved once more,
      // in units of the step's own impulse and velocity, where the same residual is relative.
      const double first_off = prob_.impulse_violation(res_.x);
      bool ok = first_off <= kForceBalanceTolerance;
      if (!ok) {
        // From the point with its friction shrunk into the cone: outside it (a friction
        // impulse on a contact that carries none, whose square the absolute residual does
        // not see) Newton in the step's units diverged from it.
        x0_ = res_.x;
        prob_.project_onto_cone(x0_);
        // (In the body's units, lengths stay in those: the re-solve changes only the
        // impulses' and velocities' units.)
        const double V = prob_.velocity_unit(res_.x), L = in_body_units ? body.length : 1.0;
        prob_.set_units(prob_.impulse_unit(res_.x), V, L, in_body_units ? V : 1.0, in_body_units ? V / L : 1.0);
        prob_.to_units(x0_);
        const Status again = newton_.solve(n, EcpStepProblem::kFree, prob_, x0_, res_, opt);
        prob_.to_physical(res_.x);
        prob_.set_units(1, 1, 1, 1, 1);
        report_.pivots += res_.stats.iterations;
        // The MNCP was solved but its impulses were not balanced, and solving again did not
        // mend that: the candidate is refused for lost precision (the residual reported is of
        // the re-solved point when Newton accepted it, else of the first one).
        const double off = newton_accepts(again) ? prob_.impulse_violation(res_.x) : first_off;
        ok = newton_accepts(again) && off <= kForceBalanceTolerance;
        unbalanced = unbalanced || !ok;
        if (!ok && rejected.empty())
          rejected = "k = " + std::to_string(k) +
                     " gave a solution whose impulses do not balance or leave the friction cone (relative residual " +
                     three_digits(off) + ")";
      }
      if (!ok) continue;
      // Defensive (Proposition 2 excludes it): no hull vertex below the plane at the new pose.
      Vec3 c;
      Quat q;
      prob_.end_pose(res_.x, c, q);
      const double z_min = hull_lowest(b, ecp_rotation(q), c, 0.0);
      if (z_min >= -1e-9 * scale) {
        accepted = true;
        z_min_ = z_min;
      } else if (rejected.empty()) {
        rejected = "k = " + std::to_string(k) + " gave a solution whose lowest vertex is at z = " + three_digits(z_min);
      }
    }
    if (!accepted) continue;
    const int n = prob_.size();
    const Vec3 a1 = res_.x.segment<3>(EcpStepProblem::kA1);
    Vec3 c;
    Quat q;
    prob_.end_pose(res_.x, c, q);
    const double z_min = z_min_;
    // Accepted: write the new state.
    prev_ = res_.x;
    have_prev_ = true;
    prev_k_ = k;
    k_ = k;
    a1_ = a1;
    a2_ = res_.x.segment<3>(EcpStepProblem::kA2);
    pt_ = res_.x[EcpStepProblem::kPt];
    po_ = res_.x[EcpStepProblem::kPo];
    pr_ = res_.x[EcpStepProblem::kPr];
    pn_ = res_.x[prob_.pn()];
    sigma_ = res_.x[prob_.sigma()];
    z_min_ = z_min;
    q_state.segment<3>(0) = c;
    q_state.segment<4>(3) = q;
    q_state.segment<3>(7) = res_.x.segment<3>(EcpStepProblem::kV);
    q_state.segment<3>(10) = res_.x.segment<3>(EcpStepProblem::kW);
    report_.status = Status::solved;
    report_.contacts = pn_ > 0 ? 1 : 0;
    report_.problem_size = n;
    report_.complementarity_residual = res_.stats.residual;
    report_.linearised_penetration = std::min(0.0, z_min);  // the exact gap: the model is geometrically implicit
    return Status::solved;
  }
  std::string why = "no choice of the active face k of Xie & Chakraborty, eq. (13), gave an accepted solution (" +
                    std::to_string(attempts_) + " tried); the first ended " + std::string(to_string(first_status)) +
                    " with natural residual " + three_digits(first_residual);
  if (!rejected.empty()) why += "; " + rejected;
  // A solution of the MNCP whose impulses do not balance, even solved again in the step's
  // own units, is the step's data beyond what its arithmetic resolves (at h = 1e-13 s a body
  // at rest moves 1e-21 m, far below the spacing of doubles at a position of 5 cm): lost
  // precision, the shared status for it.
  if (unbalanced) return fail(Status::numerical_failure, why);
  return fail(first_status == Status::solved ? Status::not_found : first_status, why);
}

}  // namespace qs

#include "core/trinkle_lcp.hpp"

#include <algorithm>
#include <cmath>

namespace qs {

TrinkleLcp::TrinkleLcp(const Model& m)
    : ws_(m),
      solver_(std::make_unique<Solver>()),
      result_(std::make_unique<Solver::MixedResult>()),
      M_(kCapacity, kCapacity),
      q_(kCapacity),
      tau_(m.n_q()),
      dqa_(m.n_a),
      slot_(m.n_slots()),
      active_(m.n_slots(), 0),
      p_n_(m.n_slots(), 0.0),
      p_t_(m.n_slots(), 0.0) {}

Status TrinkleLcp::step(const Model& m, State& s) {
  *result_ = Solver::MixedResult{};
  if (m.world.type != WorldType::vertical || !(m.step.h > 0)) return result_->status = Status::bad_input;
  const double h = m.step.h;
  const double t_mid = s.t + 0.5 * h;
  const int nu = m.n_u, na_dofs = m.n_a;

  // 1-2: contacts and Jacobians at the start of the step.
  ws_.evaluate(m, s.q.data());
  int nc = 0;
  for (int i = 0; i < m.n_slots(); ++i) {
    active_[i] = ws_.active(m, i);
    if (active_[i]) slot_[nc++] = i;
  }
  const int n = nu + 4 * nc;
  if (n > kCapacity || n == 0) return result_->status = Status::bad_input;
  size_ = n;
  contacts_ = nc;

  // The step's inputs: tau_u and dqa_bar at the middle of the step.
  generalized_external_force(m, ws_.body_pose.data(), ws_.joint_frame.data(), t_mid, tau_.data());
  for (const Joint& j : m.joints)
    if (j.control == Control::velocity) dqa_[j.dof - nu] = h * j.command(t_mid);

  // 3: the mixed LCP, layout [dq_u (nu) | P_n | P_t+ | P_t- | Gamma] (nc each).
  auto M = M_.topLeftCorner(n, n);
  auto q = q_.head(n);
  M.setZero();
  q.setZero();
  const int pn = nu, pp = nu + nc, pm = nu + 2 * nc, pg = nu + 3 * nc;
  for (int e = 0; e < nu; ++e) q[e] = h * tau_[e];
  for (int c = 0; c < nc; ++c) {
    const int i = slot_[c];
    const double mu = m.pairs[m.slots[i].pair].friction;
    double jna_dqa = 0, jta_dqa = 0;
    for (int a = 0; a < na_dofs; ++a) {
      jna_dqa += ws_.J_n(i, nu + a) * dqa_[a];
      jta_dqa += ws_.J_t(i, nu + a) * dqa_[a];
    }
    for (int e = 0; e < nu; ++e) {
      const double jn = ws_.J_n(i, e), jt = ws_.J_t(i, e);
      M(e, pn + c) = jn;   // (23a)
      M(e, pp + c) = jt;
      M(e, pm + c) = -jt;
      M(pn + c, e) = jn;   // (13)
      M(pp + c, e) = jt;   // (15)
      M(pm + c, e) = -jt;
    }
    q[pn + c] = ws_.frame[i].phi + jna_dqa;
    q[pp + c] = jta_dqa;
    q[pm + c] = -jta_dqa;
    M(pp + c, pg + c) = 1.0;  // + Gamma (16)
    M(pm + c, pg + c) = 1.0;
    M(pg + c, pn + c) = mu;   // (17)
    M(pg + c, pp + c) = -1.0;
    M(pg + c, pm + c) = -1.0;
  }

  // 4: solve. The kernel checks complementarity and the equalities before `solved`.
  const Status st = solver_->solve_mixed(M, q, nu, *result_);
  if (st != Status::solved) return st;

  // What the step produced, per slot, and its own residuals.
  std::fill(p_n_.begin(), p_n_.end(), 0.0);
  std::fill(p_t_.begin(), p_t_.end(), 0.0);
  penetration_ = 0;
  for (int c = 0; c < nc; ++c) {
    const int i = slot_[c];
    const auto& z = result_->z;  // [P_n | P_t+ | P_t- | Gamma]
    p_n_[i] = z[c];
    p_t_[i] = z[nc + c] - z[2 * nc + c];
    penetration_ = std::min(penetration_, result_->w[c]);  // linearised phi^{l+1}
  }
  balance_ = 0;
  for (int e = 0; e < nu; ++e) {
    double r = h * tau_[e];
    for (int c = 0; c < nc; ++c) {
      const int i = slot_[c];
      r += ws_.J_n(i, e) * p_n_[i] + ws_.J_t(i, e) * p_t_[i];
    }
    balance_ = std::max(balance_, std::abs(r));
  }

  // 5: integrate.
  for (int e = 0; e < nu; ++e) s.q[e] += result_->u[e];
  for (int a = 0; a < na_dofs; ++a) s.q[nu + a] += dqa_[a];
  s.t += h;
  ++s.step;
  return st;
}

}  // namespace qs

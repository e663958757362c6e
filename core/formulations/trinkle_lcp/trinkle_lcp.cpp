#include "quasistep/core/formulations/trinkle_lcp/trinkle_lcp.hpp"

#include <algorithm>
#include <cmath>

namespace qs {

TrinkleLcp::TrinkleLcp(const Model& m)
    : Stepper(m),
      solver_(std::make_unique<Solver>()),
      result_(std::make_unique<Solver::MixedResult>()),
      certifier_(std::make_unique<StepCertifier>(kCapacity / 4, m.n_u)),
      enumeration_(std::make_unique<LcpEnumeration>(kCapacity)),
      M_(kCapacity, kCapacity),
      q_(kCapacity),
      tau_(m.n_q()),
      dqa_(m.n_a) {}

Status TrinkleLcp::advance(const Model& m, const WorldParams& p, State& s) {
  *result_ = Solver::MixedResult{};
  report_ = StepReport{};
  std::fill(p_n_.begin(), p_n_.end(), 0.0);  // a failed step reports no impulses
  std::fill(p_t_.begin(), p_t_.end(), 0.0);
  if (m.world.type != WorldType::vertical) return fail(Status::bad_input, "trinkle_lcp steps a vertical world");
  const double h = p.h;
  const double t_mid = s.t + 0.5 * h;
  const int nu = m.n_u, na_dofs = m.n_a;

  // 1-2: contacts and Jacobians at the start of the step.
  const ContactRecord& rec = contact_record(m, p, s);
  const ContactWorkspace& g = rec.geometry;
  const int nc = rec.count;
  const int n = nu + 4 * nc;
  size_ = n;
  contacts_ = nc;
  report_.contacts = nc;
  report_.problem_size = n;
  if (n > kCapacity)
    return fail(Status::bad_input, "the step's LCP needs " + std::to_string(n) + " variables (" + std::to_string(nc) +
                                       " active contacts), more than the capacity " + std::to_string(kCapacity) +
                                       "; set contact_margin to keep distant slots out");

  // The step's inputs: tau_u and dqa_bar at the middle of the step.
  generalized_external_force(m, p, g.body_pose.data(), g.joint_frame.data(), t_mid, tau_.data());
  commanded_displacements(m, p, t_mid, dqa_.data());

  // 3: the mixed LCP, layout [dq_u (nu) | P_n | P_t+ | P_t- | Gamma] (nc each).
  auto M = M_.topLeftCorner(n, n);
  auto q = q_.head(n);
  M.setZero();
  q.setZero();
  const int pn = nu, pp = nu + nc, pm = nu + 2 * nc, pg = nu + 3 * nc;
  for (int e = 0; e < nu; ++e) q[e] = h * tau_[e];
  for (int c = 0; c < nc; ++c) {
    const int i = rec.slots[c];
    const double mu = p.slot_friction(m, i);
    double jna_dqa = 0, jta_dqa = 0;
    for (int a = 0; a < na_dofs; ++a) {
      jna_dqa += g.J_n(i, nu + a) * dqa_[a];
      jta_dqa += g.J_t(i, nu + a) * dqa_[a];
    }
    for (int e = 0; e < nu; ++e) {
      const double jn = g.J_n(i, e), jt = g.J_t(i, e);
      M(e, pn + c) = jn;   // (23a)
      M(e, pp + c) = jt;
      M(e, pm + c) = -jt;
      M(pn + c, e) = jn;   // (13)
      M(pp + c, e) = jt;   // (15)
      M(pm + c, e) = -jt;
    }
    q[pn + c] = g.frame[i].phi + jna_dqa;
    q[pp + c] = jta_dqa;
    q[pm + c] = -jta_dqa;
    M(pp + c, pg + c) = 1.0;  // + Gamma (16)
    M(pm + c, pg + c) = 1.0;
    M(pg + c, pn + c) = mu;   // (17)
    M(pg + c, pp + c) = -1.0;
    M(pg + c, pm + c) = -1.0;
  }

  // 4: solve. The kernel checks complementarity and the equalities before `solved`.
  // Nothing to solve when no object moves and no contact is active.
  const Status st = n == 0 ? (result_->status = Status::solved) : solver_->solve_mixed(M, q, nu, *result_);
  report_.pivots = result_->stats.iterations;
  report_.complementarity_residual = result_->stats.residual;
  if (st != Status::solved && after_lemke_failed(m, p, st) != Status::solved) return report_.status;

  // What the step produced, per slot, and its own residuals.
  std::fill(p_n_.begin(), p_n_.end(), 0.0);
  std::fill(p_t_.begin(), p_t_.end(), 0.0);
  double penetration = 0;
  for (int c = 0; c < nc; ++c) {
    const int i = rec.slots[c];
    const auto& z = result_->z;  // [P_n | P_t+ | P_t- | Gamma]
    p_n_[i] = z[c];
    p_t_[i] = z[nc + c] - z[2 * nc + c];
    penetration = std::min(penetration, result_->w[c]);  // linearised phi^{l+1}
  }
  report_.linearised_penetration = penetration;
  double balance = 0;
  RelativeBalance relative;
  for (int e = 0; e < nu; ++e) {
    double r = h * tau_[e], terms = std::abs(h * tau_[e]);
    for (int c = 0; c < nc; ++c) {
      const int i = rec.slots[c];
      r += g.J_n(i, e) * p_n_[i] + g.J_t(i, e) * p_t_[i];
      terms += std::abs(g.J_n(i, e) * p_n_[i]) + std::abs(g.J_t(i, e) * p_t_[i]);
    }
    balance = std::max(balance, std::abs(r));
    relative.row(r, terms);
  }
  report_.force_balance_residual = balance;
  // Each balance row against its own terms (quasistep/core/stepper.hpp): the LCP's check weighs its
  // rows against whole blocks of the solution, this one against the impulses of the row.
  if (!relative.accepted())
    return fail(Status::numerical_failure, "the answer failed its force-balance check (relative residual " +
                                               std::to_string(relative.worst()) + ")");

  // 5: integrate.
  for (int e = 0; e < nu; ++e) s.q[e] += result_->u[e];
  for (int a = 0; a < na_dofs; ++a) s.q[nu + a] += dqa_[a];
  return report_.status = Status::solved;
}

Status TrinkleLcp::after_lemke_failed(const Model& m, const WorldParams& p, Status st) {
  if (st != Status::not_found && st != Status::iteration_limit && st != Status::numerical_failure)
    return fail(st, "");
  const int nu = m.n_u, nc = contacts_;
  // Rows of the active contacts: J_n^u, J_t^u, mu, and the known part of phi^{l+1}.
  Eigen::MatrixXd Jn(nc, nu), Jt(nc, nu);
  Eigen::VectorXd offset(nc), mu(nc), h_tau(nu);
  std::vector<std::string> labels;
  for (int c = 0; c < nc; ++c) {
    const int i = record_.slots[c];
    Jn.row(c) = record_.geometry.J_n.row(i).head(nu);
    Jt.row(c) = record_.geometry.J_t.row(i).head(nu);
    offset[c] = q_[nu + c];  // phi + J_n^a dqa_bar (the P_n rows of the LCP)
    mu[c] = p.slot_friction(m, i);
    labels.push_back("slot " + std::to_string(i) + " (" + m.pair_name(m.slots[i].pair) + ")");
  }
  for (int e = 0; e < nu; ++e) h_tau[e] = q_[e];
  std::vector<std::string> dofs;
  for (int e = 0; e < nu; ++e) dofs.push_back(m.dofs[e].name);
  StepCertificate cert;
  if (certifier_->penetration(Jn, offset, cert) == Status::infeasible) return fail(Status::infeasible, cert.describe(labels, dofs));
  if (certifier_->equilibrium(Jn, Jt, mu, h_tau, cert) == Status::infeasible)
    return fail(Status::infeasible, cert.describe(labels, dofs));
  const LcpEnumeration::Result& ex = enumeration_->solve(M_.topLeftCorner(size_, size_), q_.head(size_), nu);
  if (record_enumeration(ex) != Status::solved) return report_.status;
  result_->status = Status::solved;
  result_->u = ex.x.head(nu);
  result_->z = ex.x.tail(size_ - nu);
  result_->w = ex.w.tail(size_ - nu);
  result_->stats.residual = ex.residual;
  return Status::solved;
}

}  // namespace qs

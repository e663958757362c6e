// Pang & Tedrake 2018's MIQP step: the problem built for the model and for each step. The
// memory between steps is in pang_tedrake_miqp_memory.cpp, the two stages and the step in
// pang_tedrake_miqp_stages.cpp, the node relaxation in pang_tedrake_miqp_problem.hpp.
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "pang_tedrake_miqp_derivative_work.hpp"
#include "pang_tedrake_miqp_problem.hpp"

namespace qs {

PangTedrakeMiqp::PangTedrakeMiqp(const Model& m, const BnbOptions& options)
    : Stepper(m), problem_(std::make_unique<Problem>()), options_(options),
      phi_bar_(m.n_slots(), std::numeric_limits<double>::infinity()),
      tau_(m.n_q()),
      dqa_bar_(m.n_a),
      dqa_star_(m.n_a),
      stage1_answer_(5 * std::min(kMaxContacts, m.n_slots()), answer_capacity(m)),
      root_warm_(stage1_answer_),
      memory_(MemoryLayout::of(m)),
      key_(key_capacity(m)) {
  Problem& p = *problem_;
  p.n_slots = m.n_slots();
  p.nu = m.n_u;
  p.na = m.n_a;
  p.contact_of_slot.assign(m.n_slots(), -1);
  p.shape_size = largest_shape_size(m);
  p.length_dof.resize(static_cast<size_t>(m.n_q()));
  for (int e = 0; e < m.n_q(); ++e) p.length_dof[static_cast<size_t>(e)] = dof_is_length(m, e);
  const int max_nc = std::min(kMaxContacts, m.n_slots());
  p.max_n = m.n_q() + 4 * max_nc;
  p.max_eq = m.n_u + m.n_a;  // force balance; stage 2 adds dq_a = dq_a*
  p.max_in = 5 * max_nc;
  p.H = Eigen::MatrixXd::Zero(p.max_n, p.max_n);
  p.A_eq = Eigen::MatrixXd::Zero(p.max_eq, p.max_n);
  p.A_in = Eigen::MatrixXd::Zero(std::max(p.max_in, 1), p.max_n);
  p.c = Eigen::VectorXd::Zero(p.max_n);
  p.b_eq = Eigen::VectorXd::Zero(p.max_eq);
  p.b_in = Eigen::VectorXd::Zero(std::max(p.max_in, 1));
  p.lower = Eigen::VectorXd::Zero(p.max_n);
  p.upper = Eigen::VectorXd::Zero(p.max_n);
  x_ = Eigen::VectorXd::Zero(p.max_n);
  hint_x_ = Eigen::VectorXd::Zero(p.max_n);
  x1_ = Eigen::VectorXd::Zero(p.max_n);
  bnb_ = std::make_unique<BranchAndBound<Problem>>(p, options_);
  root_probe_ = std::make_unique<RootProbe>(RootProbe{p.make_workspace(), p.make_warm(), p.make_solution(),
                                                      std::vector<Side>(static_cast<size_t>(p.disjunctions())),
                                                      p.make_warm(), p.make_solution(), p.make_warm(),
                                                      p.make_solution()});
  free_fixings_.assign(static_cast<size_t>(p.disjunctions()), Side::free);
}

PangTedrakeMiqp::~PangTedrakeMiqp() = default;

Status PangTedrakeMiqp::build(const Model& m, const WorldParams& wp, const State& s) {
  report_ = StepReport{};
  stage1_ = stage2_ = BnbStats{};
  if (m.world.type != WorldType::vertical || !(wp.h > 0) || !(wp.model_gain > 0))
    return fail(Status::bad_input, "pang_tedrake_miqp steps a vertical world with h > 0 and stiffness K > 0");
  Problem& p = *problem_;
  ++p.generation;  // new rows: no workspace's factorization carries over
  p.hint = nullptr;
  const double h = wp.h, K = wp.model_gain, t_mid = s.t + 0.5 * h;
  const int nu = m.n_u, na = m.n_a;

  // Contacts at the start of the step (all active slots counted, so every slot's outputs
  // describe this step).
  forget_contacts();  // build() may be called outside a step, on any state
  const int nc = contact_record(m, wp, s).count;
  for (int i = 0; i < m.n_slots(); ++i) {
    p_n_[i] = p_t_[i] = 0;
    p.contact_of_slot[i] = -1;
  }
  for (int c = 0; c < std::min(nc, kMaxContacts); ++c) p.contact_of_slot[record_.slots[c]] = c;
  if (nc > kMaxContacts) {
    p.nc = p.n = p.m_eq = p.m_in = 0;  // nothing built
    return fail(Status::bad_input, std::to_string(nc) + " active contacts in one step, more than " +
                                       std::to_string(kMaxContacts) + "; set contact_margin to keep distant slots out");
  }
  p.nc = nc;
  p.n = nu + na + 4 * nc;
  p.m_eq = nu;
  p.m_in = 5 * nc;
  report_.contacts = nc;
  report_.problem_size = p.n;
  const int n = p.n;

  // Commands and loads at the middle of the step.
  Eigen::VectorXd& tau = tau_;
  Eigen::VectorXd& dqa_bar = dqa_bar_;
  generalized_external_force(m, wp, record_.geometry.body_pose.data(), record_.geometry.joint_frame.data(), t_mid, tau.data());
  commanded_displacements(m, wp, t_mid, dqa_bar.data());

  // Stage 1: min |dq_a - dqa_bar|^2 = dq_a' dq_a - 2 dqa_bar' dq_a + |dqa_bar|^2.
  p.H.topLeftCorner(n, n).setZero();
  p.c.head(n).setZero();
  for (int a = 0; a < na; ++a) {
    p.H(nu + a, nu + a) = 2.0;
    p.c[nu + a] = -2.0 * dqa_bar[a];
  }
  p.constant = dqa_bar.squaredNorm();
  // Bounds: displacements free, impulses and Gamma >= 0.
  const double inf = std::numeric_limits<double>::infinity();
  for (int e = 0; e < nu + na; ++e) {
    p.lower[e] = -inf;
    p.upper[e] = inf;
  }
  for (int e = nu + na; e < n; ++e) {
    p.lower[e] = 0;
    p.upper[e] = inf;
  }
  // (23a) force balance on the unactuated DOFs.
  p.A_eq.topLeftCorner(nu, n).setZero();
  for (int e = 0; e < nu; ++e) {
    p.b_eq[e] = -h * tau[e];
    for (int c = 0; c < nc; ++c) {
      const int i = record_.slots[c];
      p.A_eq(e, p.pair_var(c, 0)) = record_.geometry.J_n(i, e);
      p.A_eq(e, p.pair_var(c, 1)) = record_.geometry.J_t(i, e);
      p.A_eq(e, p.pair_var(c, 2)) = -record_.geometry.J_t(i, e);
    }
  }
  // Left sides of the pairs (rows 0 .. 4 nc - 1) and the elastic bounds (4 nc .. 5 nc - 1).
  p.A_in.topLeftCorner(p.m_in, n).setZero();
  for (int c = 0; c < nc; ++c) {
    const int i = record_.slots[c];
    const double mu = wp.slot_friction(m, i);
    double jna_bar = 0;
    for (int a = 0; a < na; ++a) jna_bar += record_.geometry.J_n(i, nu + a) * dqa_bar[a];
    for (int e = 0; e < nu + na; ++e) {
      p.A_in(p.pair_row(c, 0), e) = record_.geometry.J_n(i, e);   // phi^+ (13)
      p.A_in(p.pair_row(c, 1), e) = record_.geometry.J_t(i, e);   // rho+ (15)
      p.A_in(p.pair_row(c, 2), e) = -record_.geometry.J_t(i, e);  // rho-
    }
    p.b_in[p.pair_row(c, 0)] = -record_.geometry.frame[i].phi;
    p.b_in[p.pair_row(c, 1)] = 0;
    p.b_in[p.pair_row(c, 2)] = 0;
    p.A_in(p.pair_row(c, 1), p.pair_var(c, 3)) = 1.0;  // + Gamma (16)
    p.A_in(p.pair_row(c, 2), p.pair_var(c, 3)) = 1.0;
    p.A_in(p.pair_row(c, 3), p.pair_var(c, 0)) = mu;   // s = mu P_n - P_t+ - P_t- (17)
    p.A_in(p.pair_row(c, 3), p.pair_var(c, 1)) = -1.0;
    p.A_in(p.pair_row(c, 3), p.pair_var(c, 2)) = -1.0;
    p.b_in[p.pair_row(c, 3)] = 0;
    // (23f): P_n >= -h K phi_bar, phi_bar = phi + J_n^u dq_u + J_n^a dqa_bar (21), i.e.
    // P_n + h K J_n^u dq_u >= -h K (phi + J_n^a dqa_bar).
    const int r = 4 * nc + c;
    p.A_in(r, p.pair_var(c, 0)) = 1.0;
    if (formulation_params_or_default<PangTedrakeMiqpParams>(m).elastic_bound_previous) {
      // sec. V.B: the bound from the previous step's phi_bar, kept in State::memory (none
      // where it was inactive, nor in a State without memory).
      const double prev = s.memory.size() == memory_.size ? s.memory[memory_.phi_bar + i] : std::numeric_limits<double>::infinity();
      p.b_in[r] = std::isfinite(prev) ? -h * K * prev : 0.0;
    } else {
      // Divided by h K: P_n / (h K) + J_n^u dq_u >= -(phi + J_n^a dqa_bar), the same set with
      // coefficients of order one.
      const double s = 1.0 / (h * K);
      p.A_in(r, p.pair_var(c, 0)) = s;
      for (int e = 0; e < nu; ++e) p.A_in(r, e) = record_.geometry.J_n(i, e);
      p.b_in[r] = -(record_.geometry.frame[i].phi + jna_bar);
    }
  }
  p.tolerance = 1e-9;
  p.hK = h * K;
  return Status::solved;
}

double PangTedrakeMiqp::fixed_pattern_cost(const std::vector<Side>& fixings) {
  Problem& p = *problem_;
  if (static_cast<int>(fixings.size()) != p.disjunctions()) return std::numeric_limits<double>::quiet_NaN();
  if (!probe_) probe_ = std::make_unique<Probe>(Probe{p.make_workspace()});
  Problem::Warm warm = p.make_warm();
  Problem::Solution x = p.make_solution();
  const BnbEvaluation e = p.evaluate(fixings.data(), nullptr, probe_->ws, warm, x);
  if (e.status == Status::infeasible) return std::numeric_limits<double>::infinity();
  return e.status == Status::solved ? e.bound : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace qs

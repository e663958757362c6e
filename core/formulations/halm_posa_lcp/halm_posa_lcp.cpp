#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "halm_posa_derivative_work.hpp"

namespace qs {

HalmPosaLcp::HalmPosaLcp(const Model& m)
    : Stepper(m),
      perfect_(m.formulation == Formulation::perfect_velocity_lcp),
      support_(formulation_params_or_default<HalmPosaParams>(m).support),
      A_body_(formulation_params_or_default<HalmPosaParams>(m).limit_surface_A.value_or(Eigen::Matrix3d::Zero())),
      cB_(Eigen::MatrixXd::Zero(m.n_a, m.n_a)),
      ws_(m),
      solver_(std::make_unique<Solver>()),
      result_(std::make_unique<Solver::Result>()),
      certifier_(std::make_unique<StepCertifier>(kMaxContacts, 3)),
      enumeration_(std::make_unique<LcpEnumeration>(kCapacity)),
      M_(kCapacity, kCapacity),
      w_(kCapacity),
      Jo_(2 * kMaxContacts, 3),
      Jm_(2 * kMaxContacts, m.n_a),
      AJo_(3, 2 * kMaxContacts),
      BJm_(m.n_a, 2 * kMaxContacts),
      u_h_(m.n_a),
      q_lin_(m.n_q()),
      q_end_(m.n_q()),
      cert_J_(kMaxContacts, 3),
      cert_offset_(kMaxContacts),
      slot_(m.n_slots()),
      gap_(m.n_slots()),
      slide_(m.n_slots()),
      unreached_(m.n_slots()),
      linearisations_(static_cast<size_t>(formulation_params_or_default<HalmPosaParams>(m).relinearize_iterations) + 1,
                      Linearisation{std::vector<char>(m.n_slots()), std::vector<double>(4 * m.n_slots()),
                                    std::vector<double>(4 * m.n_slots())}) {
  lcp_unit_ = halm_posa_lcp_unit(formulation_params_or_default<HalmPosaParams>(m));
  A_body_ /= lcp_unit_;
  A_start_ = A_body_;
  if (support_) {
    const SupportAxes ax = support_axes(*support_);
    support_radius_ = ax.m_max / ax.f_max;
  }
  q_start_.resize(m.n_q());
  for (size_t b = 0; b < m.bodies.size(); ++b)
    if (m.bodies[b].kind == BodyKind::free) object_ = static_cast<int>(b);
  if (object_ >= 0)
    for (int k = 0; k < 3; ++k) dof_o_[k] = m.bodies[object_].dof[k];
  if (halm_posa_template_applies(m)) template_ = std::make_unique<HalmPosaStepWorkspace<double>>(m);
}

HalmPosaLcp::~HalmPosaLcp() = default;  // here: DerivativeWork is complete

Status HalmPosaLcp::advance(const Model& m, const WorldParams& p, State& s) {
  if (support_) return advance_sequence(m, p, s, false);
  programs_ = 1;
  return advance_once(m, p, s);
}

Status HalmPosaLcp::advance_fallback(const Model& m, const WorldParams& p, State& s) {
  if (support_) return advance_sequence(m, p, s, true);
  programs_ = 1;
  return fallback_once(m, p, s);
}

// Halm & Posa 2018, sec. 3.4: "one may solve a sequence of programs such that A in the j-th
// program is equal to the Hessian of H evaluated at a solution of (j - 1)-th program"
// (iterate_limit_surface's loop, on this stepper's own step).
Status HalmPosaLcp::advance_sequence(const Model& m, const WorldParams& p, State& s, bool fallback) {
  const HalmPosaParams& params = formulation_params_or_default<HalmPosaParams>(m);
  q_start_ = s.q;  // sized at construction: no allocation
  double commanded = 0;  // the largest joint displacement commanded over the step
  for (const Joint& j : m.joints) commanded = std::max(commanded, std::abs(p.h * p.velocity(m, j, s.t + 0.5 * p.h)));
  A_body_ = A_start_;
  F_body_.setZero();
  change_ = 0;
  programs_ = 0;
  int pivots = 0;
  bool converged = false;
  // A sequence that cannot go on leaves the state and the impulses as they were, keeping the
  // pivots spent, and says why.
  auto refuse = [&](Status status, const std::string& reason) {
    s.q = q_start_;
    std::fill(p_n_.begin(), p_n_.end(), 0.0);
    std::fill(p_t_.begin(), p_t_.end(), 0.0);
    report_ = StepReport{};
    report_.pivots = pivots;
    return fail(status, reason);
  };
  for (;;) {
    if (template_) template_->A_body = A_body_;
    s.q = q_start_;
    const Status st = fallback ? fallback_once(m, p, s) : advance_once(m, p, s);
    ++programs_;
    pivots += report_.pivots;
    report_.pivots = pivots;
    if (st != Status::solved) {
      s.q = q_start_;
      return st;
    }
    // The object's body twist V = R' dq_o (A = R Ã R' at the last linearisation, eq. (12)).
    const Eigen::Vector3d V(lin_c_ * dq_o_[0] + lin_s_ * dq_o_[1], -lin_s_ * dq_o_[0] + lin_c_ * dq_o_[1], dq_o_[2]);
    // The object does not move: eq. (10) with k = 0, any Ã. A twist below 2^-40 of the step's
    // commanded displacement is the LCP's rounding (a finger that just touches moves the
    // object 1e-19 m in a direction of nothing but rounding): the object does not move either.
    if (std::hypot(V[0], V[1]) + std::abs(V[2]) * support_radius_ <= 0x1p-40 * commanded) {
      F_body_.setZero();
      return Status::solved;
    }
    F_body_ = A_body_.ldlt().solve(V);  // eq. (11): V = k Ã F, any k > 0 (F in the LCP's unit)
    if (converged) return Status::solved;
    if (!F_body_.allFinite())  // Ã singular in doubles: no next program (never throw from a step)
      return refuse(Status::numerical_failure,
                    "the exact limit surface's wrench is not finite (model.support: Ã singular in doubles)");
    if (programs_ >= params.support_max_programs)
      return refuse(Status::iteration_limit,
                    "the exact limit surface's sequence of LCPs (Halm & Posa 2018, sec. 3.4) did not settle in " +
                        std::to_string(programs_) + " programs (model.support.max_programs): A still changed by " +
                        std::to_string(change_) + " (relative)");
    // The Hessian at the solution (scale-free in F), in the LCP's unit.
    const LimitSurfacePoint at = limit_surface_at(*support_, F_body_);
    if (!at.converged) {
      // Where the twist turns about a support point the surface has an edge and H no Hessian
      // (a distribution of few points pivots so): no program follows.
      return refuse(Status::numerical_failure,
                    "the exact limit surface (model.support) has no Hessian at program " + std::to_string(programs_) +
                        "'s wrench (Newton's residual " + std::to_string(at.residual) +
                        "): the object would turn about a support point, where the surface has an edge");
    }
    const Eigen::Matrix3d next = at.A / lcp_unit_;
    change_ = (next - A_body_).norm() / next.norm();
    A_body_ = next;
    converged = change_ < params.support_tolerance;  // one more program, at the settled Ã
  }
}

Status HalmPosaLcp::advance_once(const Model& m, const WorldParams& p, State& s) {
  by_template_ = false;
  // The template's Model conditions are those of the input check below, so a Model it
  // applies to is never one step_fallback would refuse; the per-step data (commands) is
  // checked by both.
  if (template_ && halm_posa_template_applies(m) && s.q.size() == m.n_q()) {
    HalmPosaStepWorkspace<double>& w = *template_;
    // While the step is differentiated, each linearisation's answer in the fixed layout.
    const auto record = [&](int it) {
      if (!differentiating()) return;
      Linearisation& rec = linearisations_[static_cast<size_t>(it)];
      for (int i = 0; i < w.ns; ++i) rec.in_lcp[i] = w.active[i] && !w.unreached[i];
      std::copy(w.z.begin(), w.z.begin() + w.n, rec.z.begin());
      std::copy(w.w.begin(), w.w.begin() + w.n, rec.w.begin());
    };
    halm_posa_template_step<double>(m, p, w, s.q.data(), p.pair_friction.data(), nullptr, nullptr, s.t, record);
    if (w.ok) {
      const Pose2<double>& pose = w.body_pose[w.object];  // the last linearisation's
      lin_c_ = pose.c;
      lin_s_ = pose.s;
      record_template_step(s.q);
      for (int e = 0; e < m.n_q(); ++e) s.q[e] = w.q_end[e];
      by_template_ = true;
      return report_.status = Status::solved;
    }
  }
  return fallback_once(m, p, s);
}

void HalmPosaLcp::record_template_step(const Eigen::VectorXd& q0) {
  const HalmPosaStepWorkspace<double>& w = *template_;
  report_ = StepReport{};
  *result_ = Solver::Result{};
  const int ns = w.ns, n = w.n;
  int nc = 0, n_active = 0;
  for (int i = 0; i < ns; ++i) {
    active_[i] = w.active[i];
    phi_[i] = w.frame[i].phi;
    p_n_[i] = active_[i] ? w.z[i] / lcp_unit_ : 0.0;  // the LCP's impulses in the scene's units
    p_t_[i] = active_[i] ? (w.z[ns + i] - w.z[2 * ns + i]) / lcp_unit_ : 0.0;
    n_active += active_[i];
    if (active_[i] && !w.unreached[i]) slot_[nc++] = i;
  }
  // The compacted LCP (lcp_matrix(), lcp_vector(), result()): the template's rows and
  // columns of the slots in the LCP (active, within reach), in the same block order.
  const int nn = 4 * nc;
  auto full = [&](int k) { return (k / nc) * ns + slot_[k % nc]; };
  for (int i = 0; i < nn; ++i) {
    for (int j = 0; j < nn; ++j) M_(i, j) = w.M[full(i) * n + full(j)];
    w_[i] = w.q_lcp[full(i)];
  }
  size_ = nn;
  result_->status = Status::solved;
  result_->z.resize(nn);
  result_->w.resize(nn);
  for (int i = 0; i < nn; ++i) {
    result_->z[i] = w.z[full(i)];
    result_->w[i] = w.w[full(i)];
  }
  result_->stats.iterations = w.pivots[0];
  result_->stats.residual = w.residual[0];
  for (int e = 0; e < 3; ++e) dq_o_[e] = w.q_end[dof_o_[e]] - q0[dof_o_[e]];
  report_.status = Status::solved;
  report_.contacts = n_active;
  report_.problem_size = nn;
  report_.pivots = w.pivots[0];
  report_.complementarity_residual = w.residual[0];
  report_.linearised_penetration = w.linearised_penetration;
}

Status HalmPosaLcp::fallback_once(const Model& m, const WorldParams& p, State& s) {
  by_template_ = false;
  report_ = StepReport{};
  *result_ = Solver::Result{};
  const HalmPosaParams& params = formulation_params_or_default<HalmPosaParams>(m);
  if (m.world.type != WorldType::tabletop || object_ < 0 || dof_o_[2] < 0 || !params.limit_surface_A || m.n_u != 3)
    return fail(Status::bad_input, "the tabletop models step one free object (x, y, theta) with a limit surface");
  const double h = p.h;
  // Halm & Posa 2018, eq. (37), with this world's c (same size: no allocation).
  // In the LCP's unit (halm_posa_lcp_unit), as A.
  if (!perfect_ && params.gain_B) cB_.noalias() = (p.model_gain / lcp_unit_) * *params.gain_B;
  const double t_mid = s.t + 0.5 * h;
  for (const Joint& j : m.joints) u_h_[j.dof - m.n_u] = h * p.velocity(m, j, t_mid);  // all velocity-commanded

  q_lin_ = s.q;
  int pivots = 0;
  for (int it = 0; it <= params.relinearize_iterations; ++it) {
    linearisation_ = it;
    const Status st = solve_about(m, p, s.q, q_lin_, q_end_);
    pivots += result_->stats.iterations;
    report_.pivots = pivots;
    if (st != Status::solved) return st;  // solve_about filled the report
    q_lin_ = q_end_;
  }
  s.q = q_end_;
  return report_.status = Status::solved;
}

Status HalmPosaLcp::solve_about(const Model& m, const WorldParams& p, const Eigen::VectorXd& q0,
                                const Eigen::VectorXd& q_lin,
                                Eigen::VectorXd& q_end, bool keep_unreached) {
  const int nu = m.n_u, na = m.n_a;
  ws_.evaluate(m, p, q_lin.data());
  // Each slot's rows of data: phi^+ linearised about q_lin for a step from q0,
  // phi(q_lin) + J_n(q_lin) (q0 - q_lin) + J_n h u, and J_t h u (Halm & Posa 2018, eq. (31), sec. 5
  // for the re-linearisation); and the slots out of the step's reach (kHalmPosaUnreachable).
  double reach = 0;
  for (int i = 0; i < m.n_slots(); ++i) {
    double jn_u = 0, jt_u = 0;  // J_m h u
    for (int a = 0; a < na; ++a) {
      jn_u += ws_.J_n(i, nu + a) * u_h_[a];
      jt_u += ws_.J_t(i, nu + a) * u_h_[a];
    }
    double back = 0;
    for (int e = 0; e < m.n_q(); ++e) back += ws_.J_n(i, e) * (q0[e] - q_lin[e]);
    gap_[i] = ws_.frame[i].phi + back + jn_u;
    slide_[i] = jt_u;
    active_[i] = ws_.active(m, i);
    if (active_[i]) reach = std::max(reach, std::abs(jn_u) + std::abs(jt_u) + std::max(0.0, -gap_[i]));
  }
  const double far = keep_unreached ? std::numeric_limits<double>::infinity() : kHalmPosaUnreachable * reach;
  // An unreached slot stays active (reported, counted) but is not in the LCP.
  int nc = 0, n_active = 0;
  for (int i = 0; i < m.n_slots(); ++i) {
    unreached_[i] = active_[i] && gap_[i] > far;
    phi_[i] = ws_.frame[i].phi;
    p_n_[i] = p_t_[i] = 0.0;
    n_active += active_[i];
    if (active_[i] && !unreached_[i] && nc < kMaxContacts) slot_[nc++] = i;
  }
  if (n_active > kMaxContacts)
    return fail(Status::bad_input, std::to_string(n_active) + " active contacts in one step, more than " +
                                       std::to_string(kMaxContacts) + "; set contact_margin to keep distant slots out");
  const int n = 4 * nc;
  size_ = n;
  report_.contacts = n_active;
  report_.problem_size = n;

  // Rows of J (normal rows 0..nc-1, tangent rows nc..2nc-1) split into object and
  // manipulator columns; A rotated to the linearisation point's theta (Halm & Posa 2018, eq. (12)).
  const double th = q_lin[dof_o_[2]];
  const double c = std::cos(th), sn = std::sin(th);
  Eigen::Matrix3d R;
  R << c, -sn, 0, sn, c, 0, 0, 0, 1;
  const Eigen::Matrix3d A = R * A_body_ * R.transpose();
  lin_c_ = c;
  lin_s_ = sn;
  for (int k = 0; k < nc; ++k) {
    const int i = slot_[k];
    for (int e = 0; e < 3; ++e) {
      Jo_(k, e) = ws_.J_n(i, dof_o_[e]);
      Jo_(nc + k, e) = ws_.J_t(i, dof_o_[e]);
    }
    for (int a = 0; a < na; ++a) {
      Jm_(k, a) = ws_.J_n(i, nu + a);
      Jm_(nc + k, a) = ws_.J_t(i, nu + a);
    }
  }
  const int r = 2 * nc;
  for (int j = 0; j < r; ++j) {
    for (int e = 0; e < 3; ++e) AJo_(e, j) = A(e, 0) * Jo_(j, 0) + A(e, 1) * Jo_(j, 1) + A(e, 2) * Jo_(j, 2);
    for (int a = 0; a < na; ++a) {
      double v = 0;
      for (int b = 0; b < na; ++b) v += cB_(a, b) * Jm_(j, b);
      BJm_(a, j) = v;
    }
  }

  // The LCP, layout [Lambda_N | Lambda_T+ | Lambda_T- | gamma] (nc each).
  auto M = M_.topLeftCorner(n, n);
  auto w = w_.head(n);
  M.setZero();
  w.setZero();
  const int pn = 0, pp = nc, pm = 2 * nc, pg = 3 * nc;
  // Row/column of each J row in the LCP: normal k -> pn + k; tangent k -> pp + k (and its
  // negation at pm + k).
  auto lcp_index = [&](int j) { return j < nc ? pn + j : pp + (j - nc); };
  for (int i = 0; i < r; ++i) {
    for (int j = 0; j < r; ++j) {
      // Halm & Posa 2018, eq. (17): J_o A J_o' + J_m cB J_m'
      double g = Jo_(i, 0) * AJo_(0, j) + Jo_(i, 1) * AJo_(1, j) + Jo_(i, 2) * AJo_(2, j);
      for (int a = 0; a < na; ++a) g += Jm_(i, a) * BJm_(a, j);
      const int I = lcp_index(i), J = lcp_index(j);
      M(I, J) = g;
      if (i >= nc) M(I + nc, J) = -g;                  // -t row
      if (j >= nc) M(I, J + nc) = -g;                  // -t column
      if (i >= nc && j >= nc) M(I + nc, J + nc) = g;   // both negated
    }
  }
  for (int k = 0; k < nc; ++k) {
    const int i = slot_[k];
    w[pn + k] = gap_[i];
    w[pp + k] = slide_[i];  // tangential displacement over the step, from q0
    w[pm + k] = -slide_[i];
    M(pp + k, pg + k) = 1.0;  // E gamma (eq. (35))
    M(pm + k, pg + k) = 1.0;
    M(pg + k, pn + k) = p.slot_friction(m, i);  // mu Lambda_N - E' Lambda_T (eq. (36))
    M(pg + k, pp + k) = -1.0;
    M(pg + k, pm + k) = -1.0;
  }

  Status st = Status::solved;
  if (n > 0) st = solver_->solve(M, w, *result_);
  else result_->status = Status::solved;
  report_.complementarity_residual = result_->stats.residual;
  if (st != Status::solved) {
    if (st != Status::not_found && st != Status::iteration_limit && st != Status::numerical_failure)
      return fail(st, "");
    std::vector<std::string> labels;
    for (int k = 0; k < nc; ++k)
      labels.push_back("slot " + std::to_string(slot_[k]) + " (" + m.pair_name(m.slots[slot_[k]].pair) + ")");
    if (perfect_) {
      // Is there any object displacement that keeps every active contact open?
      auto J = cert_J_.topRows(nc);
      auto offset = cert_offset_.head(nc);
      for (int k = 0; k < nc; ++k) {
        for (int e = 0; e < 3; ++e) J(k, e) = Jo_(k, e);
        offset[k] = w[pn + k];
      }
      StepCertificate cert;
      if (certifier_->penetration(J, offset, cert) == Status::infeasible)
        return fail(Status::infeasible, cert.describe(labels));
    }
    if (w.head(nc).minCoeff() >= 0) {
      // No active contact closes under the commanded motion alone: the contacts stay open
      // and carry nothing, z = [0; 0; 0; gamma] with gamma_k = max(0, -w_T+k, -w_T-k) (rows
      // (34)-(36) hold exactly). Lemke can fail here (a ray, or a refinement that does not
      // reach the tolerance) when the tangential rows tie: four arms closing on a square
      // symmetrically at small h; the exact search's root LP failed on the same problems.
      result_->z.setZero(n);
      for (int k = 0; k < nc; ++k) result_->z[pg + k] = std::max({0.0, -w[pp + k], -w[pm + k]});
      result_->w = w;
      result_->w.noalias() += M * result_->z;
      result_->status = Status::solved;
      result_->stats.residual = report_.complementarity_residual = 0;
      report_.open_contacts = true;
    } else {
      const LcpEnumeration::Result& ex = enumeration_->solve(M, w, 0);
      if (record_enumeration(ex) != Status::solved) return report_.status;
      result_->status = Status::solved;
      result_->z = ex.x;
      result_->w = ex.w;
      result_->stats.residual = ex.residual;
    }
  }

  // The step: dq_o = A J_o' Lambda (eq. (32)), dq_m = cB J_m' Lambda + h u (eq. (33)).
  const auto& z = result_->z;
  double lin_pen = 0;
  Eigen::Vector3d dq_o = Eigen::Vector3d::Zero();
  q_end = q0;
  for (int k = 0; k < nc; ++k) {
    const int i = slot_[k];
    const double ln = z[pn + k], lt = z[pp + k] - z[pm + k];
    p_n_[i] = ln / lcp_unit_;  // the LCP's impulses in the scene's units
    p_t_[i] = lt / lcp_unit_;
    lin_pen = std::min(lin_pen, result_->w[pn + k]);
    for (int e = 0; e < 3; ++e) dq_o[e] += AJo_(e, k) * ln + AJo_(e, nc + k) * lt;
    for (int a = 0; a < na; ++a) q_end[nu + a] += BJm_(a, k) * ln + BJm_(a, nc + k) * lt;
  }
  for (int a = 0; a < na; ++a) q_end[nu + a] += u_h_[a];
  for (int e = 0; e < 3; ++e) q_end[dof_o_[e]] += dq_o[e];
  // A slot left out must stay open at the end of the step (its linearised gap
  // phi + J_n (q_end - q_lin)); then the LCP with it has this solution with its Lambda = 0.
  // Otherwise the linearisation is solved again with every slot.
  for (int i = 0; i < m.n_slots(); ++i) {
    if (!unreached_[i]) continue;
    double end = ws_.frame[i].phi;
    for (int e = 0; e < m.n_q(); ++e) end += ws_.J_n(i, e) * (q_end[e] - q_lin[e]);
    if (!(end >= 0)) return solve_about(m, p, q0, q_lin, q_end, true);
  }
  dq_o_ = dq_o;
  report_.linearised_penetration = lin_pen;
  if (differentiating()) record_linearisation(nc);
  return Status::solved;
}

void HalmPosaLcp::record_linearisation(int nc) {
  Linearisation& rec = linearisations_[static_cast<size_t>(linearisation_)];
  const int ns = static_cast<int>(rec.in_lcp.size());
  std::fill(rec.in_lcp.begin(), rec.in_lcp.end(), 0);
  std::fill(rec.z.begin(), rec.z.end(), 0.0);
  std::fill(rec.w.begin(), rec.w.end(), 1.0);
  for (int k = 0; k < nc; ++k) {
    rec.in_lcp[slot_[k]] = 1;
    for (int b = 0; b < 4; ++b) {
      rec.z[b * ns + slot_[k]] = result_->z[b * nc + k];
      rec.w[b * ns + slot_[k]] = result_->w[b * nc + k];
    }
  }
}

}  // namespace qs

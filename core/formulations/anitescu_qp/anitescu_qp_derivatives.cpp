// The Anitescu step's derivatives (docs/derivatives.md): implicit differentiation of its QP
//   min 1/2 v'Hv + c'v  s.t.  A v >= b     (anitescu_qp.hpp; Pang & Tedrake's Anitescu slides)
// at the step's answer, as Pang, Suh, Yang & Tedrake (IEEE T-RO 2023, sec. IV) differentiate
// the same quasi-dynamic step. The data depend on the state and the commands as
//   H = diag(M_u(q) or 0, h^2 K_a),   c = -h [tau_u(q); K_a (q̄_a + h u - q_a) + tau_a(q) - tau_g,a(q)],
//   A_i1,2 = J_n,i(q) ± mu_i J_t,i(q),   b_i = -phi_i(q) / h,
// so dq̄_a and du enter through c alone (dc_a = -h K_a dq̄_a, -h^2 K_a du: dv/du = h dv/dq̄_a,
// one column each for q̄_a and u), and every q
// derivative comes from anitescu_pose_problem at T = Jet: the exact derivatives of the masses'
// Jacobians, the loads and the contact frames (second derivatives of the geometry included).
// Then q+ = q + h v, q̄_a+ = q̄_a + h u:
//   A = [I + h dv/dq, h dv/dq̄_a; 0, I],   B = [h dv/du; h I].
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/number_text.hpp"

#include "anitescu_qp_derivative_work.hpp"

namespace qs {

std::vector<std::string> anitescu_qp_derivative_memory(const Model& m) {
  std::vector<std::string> names = command_names(m);
  for (std::string& name : names) name += ".reference";
  return names;
}

void AnitescuQp::data_derivatives(const Model& m, const WorldParams& p, int rows) {
  //   R1 = dH v + dc - dA_S' beta_S,   R2 = db_S - dA_S v   (kkt_sensitivity.hpp).
  const int nu = m.n_u, na = m.n_a, n = nq_;
  const double h = p.h;
  const bool quasi_dynamic = formulation_params_or_default<AnitescuQpParams>(m).quasi_dynamic;
  DerivativeWork& w = *derivative_;
  const int cols = n + na;
  auto R1 = w.R1.leftCols(cols);
  auto R2 = w.R2.topLeftCorner(rows, cols);
  R1.setZero();
  R2.setZero();
  const double* q0 = step_start_q().data();

  // The problem's derivatives along q: anitescu_pose_problem at T = Jet, for the slots of the
  // rows read below (the others are not posed). They depend on the state and the parameters
  // but not on the commands (u moves only c's value, through q̄_a'), so a step from the same
  // state under the same parameters reuses them: BundledStep's samples differ only in u.
  const bool same = w.same_problem(m, q0, step_start_t(), p);
  bool posed = same;
  for (int r = 0; r < rows && posed; ++r) posed = w.posed[static_cast<size_t>(slot_[w.active_rows[r] / 2])] != 0;
  if (!posed) {
    if (!same) std::fill(w.posed.begin(), w.posed.end(), 0);
    for (int r = 0; r < rows; ++r) w.posed[static_cast<size_t>(slot_[w.active_rows[r] / 2])] = 1;
    const double* memory0 = step_start_memory().data();
    for (int a = 0; a < na; ++a) w.reference[a] = Jet(memory0[kMemoryReference + a]);
    for (size_t pair = 0; pair < m.pairs.size(); ++pair) w.mu[pair] = Jet(p.pair_friction[pair]);
    AnitescuProblem<Jet>& pr = w.problem;
    for (int i = 0; i < pr.ns; ++i) pr.unposed[i] = !w.posed[static_cast<size_t>(i)];
    for (int first = 0; first < n; first += kJetWidth) {
      const int width = std::min(kJetWidth, n - first);
      for (int e = 0; e < n; ++e) w.q[e] = e >= first && e < first + width ? Jet::variable(q0[e], e - first) : Jet(q0[e]);
      anitescu_pose_problem<Jet>(m, p, pr, w.q.data(), w.reference.data(), w.mu.data(), nullptr, step_start_t());
      for (int k = 0; k < width; ++k) {
        const int col = first + k;
        for (int e = 0; e < n; ++e) w.dc(e, col) = pr.c[e].d[k];
        for (int e = 0; e < nu * nu; ++e) w.dMu(e, col) = pr.Mu[e].d[k];
        for (int i = 0; i < pr.ns; ++i) {
          if (!w.posed[static_cast<size_t>(i)]) continue;
          for (int e = 0; e < n; ++e) {
            w.djn(i * n + e, col) = pr.jn[i * n + e].d[k];
            w.djt(i * n + e, col) = pr.jt[i * n + e].d[k];
          }
          w.db(i, col) = pr.b[2 * i].d[k];
        }
      }
    }
    w.cached = true;
    w.model = &m;
    w.t = step_start_t();
    for (int e = 0; e < n; ++e) w.q_key[static_cast<size_t>(e)] = q0[e];
    w.params.h = p.h;
    w.params.scaled = p.scaled;
    w.params.body_mass = p.body_mass;  // same sizes after the first: no allocation
    w.params.body_pose = p.body_pose;
    w.params.body_scale = p.body_scale;
    w.params.joint_gain = p.joint_gain;
  }

  for (int col = 0; col < n; ++col) {
    for (int e = 0; e < n; ++e) R1(e, col) = w.dc(e, col);
    if (quasi_dynamic)
      for (int e = 0; e < nu; ++e)
        for (int f = 0; f < nu; ++f) R1(e, col) += w.dMu(e * nu + f, col) * v_[f];
    for (int r = 0; r < rows; ++r) {
      // Compact row k of slot slot_[k / 2]: J_n + mu J_t (+t) or J_n - mu J_t (-t).
      const int row = w.active_rows[r], slot = slot_[row / 2];
      const double mu = p.slot_friction(m, slot), sign = row % 2 ? -1.0 : 1.0;
      double dA_v = 0;
      for (int e = 0; e < n; ++e) {
        const double dA = w.djn(slot * n + e, col) + sign * mu * w.djt(slot * n + e, col);
        R1(e, col) -= dA * beta_[row];
        dA_v += dA * v_[e];
      }
      R2(r, col) = w.db(slot, col) - dA_v;
    }
  }
  for (int a = 0; a < na; ++a) {
    const double K = p.joint_gain[a];
    R1(nu + a, n + a) = -h * K;  // dc_a / dq̄_a (and h times it, dc_a / du_a)
  }
}

Status AnitescuQp::differentiate(const Model& m, const WorldParams& p, StepDerivatives& d) {
  const int na = m.n_a, n = nq_;
  const double h = p.h;
  // The reference moves by h u whatever the contacts do.
  for (int a = 0; a < na; ++a) d.B(n + a, a) = h;
  if (!derivative_) derivative_ = std::make_unique<DerivativeWork>(m);
  if (smoothed_) {  // the smoothed step (anitescu_qp_smoothed.cpp): no active set, no switch
    const double kappa = *formulation_params_or_default<AnitescuQpParams>(m).log_barrier_weight;
    return differentiate_smoothed(m, p, kappa, d);
  }
  DerivativeWork& w = *derivative_;

  // 1. The active set of the answer: row k is pressed when its impulse, relative to the
  // step's impulses, exceeds its slack relative to its velocities. A row with neither (within
  // kSwitchMargin) is at its switch ("weak"): rows 0..s-1 of A_S are the pressed rows, then
  // the weak ones.
  double impulse_scale = 0, velocity_scale = 0;
  for (int k = 0; k < rows_; ++k) impulse_scale = std::max(impulse_scale, beta_[k]);
  for (int e = 0; e < n; ++e) impulse_scale = std::max(impulse_scale, std::abs(c_[e]));
  for (int k = 0; k < rows_; ++k) {
    double terms = std::abs(b_[k]);
    for (int e = 0; e < n; ++e) terms += std::abs(A_(k, e) * v_[e]);
    velocity_scale = std::max(velocity_scale, terms);
  }
  if (!(impulse_scale > 0)) impulse_scale = 1;
  if (!(velocity_scale > 0)) velocity_scale = 1;
  int s = 0, weak = 0;
  double weak_margin = 1;
  const auto add_row = [&](int at, int k) {
    w.active_rows[at] = k;
    for (int e = 0; e < n; ++e) w.A_S(at, e) = A_(k, e);
  };
  for (int pass = 0; pass < 2; ++pass)  // pressed rows first, then the weak ones
    for (int k = 0; k < rows_; ++k) {
      double slack = -b_[k];
      for (int e = 0; e < n; ++e) slack += A_(k, e) * v_[e];
      const double impulse = beta_[k] / impulse_scale, gap = std::max(slack, 0.0) / velocity_scale;
      const double margin = std::max(impulse, gap);
      if (pass == 0 && margin > kSwitchMargin) {
        d.margin = std::min(d.margin, margin);
        if (impulse > gap) add_row(s++, k);
      } else if (pass == 1 && margin <= kSwitchMargin) {
        weak_margin = std::min(weak_margin, margin);
        add_row(s + weak++, k);
      }
    }

  // 2. The KKT system at that active set: H is the step's (M_u or 0, h^2 K_a). A weak row
  // that depends on the pressed rows (a box's corner resting flat beside another, whose
  // impulses the solver may split any way) keeps its slack at zero in every direction when
  // its right-hand sides agree with theirs: the derivative is two-sided, with the weak rows
  // taken as pressed. Otherwise the step is at a switch and the derivative one-sided: the
  // weak rows are taken inactive (the side on which they separate or stop pushing), unless
  // the motion without them is not unique (a quasistatic box with nothing under it): then
  // they are taken pressed (the side on which they push).
  const auto factor = [&](int rows) {
    return w.kkt.factor(H_.topLeftCorner(n, n), w.A_S.topRows(rows)) == Status::solved;
  };
  const bool pressed_alone = factor(s);
  const int pressed_rank = w.kkt.rank();
  enum class Weak { none, pressed_two_sided, pressed_one_sided, inactive } weak_rows = Weak::none;
  if (weak > 0) {
    weak_rows = Weak::inactive;
    if (factor(s + weak) && (!pressed_alone || w.kkt.rank() == pressed_rank))
      weak_rows = pressed_alone ? Weak::pressed_two_sided : Weak::pressed_one_sided;
    else if (pressed_alone)
      factor(s);
  }
  if (!pressed_alone && (weak_rows == Weak::none || weak_rows == Weak::inactive)) {
    d.detail = "the step's velocity is not unique at its active set (a direction that keeps every pressed contact "
               "row moves nothing the QP penalises), so it has no derivative";
    return Status::numerical_failure;
  }

  // 3. Right-hand sides, one column per direction: q (by Jets), then q̄_a (and u with it).
  data_derivatives(m, p, s + weak);
  const int cols = n + na;
  auto R1 = w.R1.leftCols(cols);
  auto R2 = w.R2.topLeftCorner(s + weak, cols);

  // 4. dv, then A and B.
  auto dv = w.dv.leftCols(cols);
  if (weak_rows == Weak::pressed_two_sided || weak_rows == Weak::pressed_one_sided) {
    w.kkt.solve(R1, R2, dv);
    if (weak_rows == Weak::pressed_two_sided && w.kkt.inconsistency() > kSwitchMargin) {
      weak_rows = Weak::inactive;  // their right-hand sides move apart from the pressed rows'
      factor(s);
    }
  }
  if (weak_rows == Weak::none || weak_rows == Weak::inactive) w.kkt.solve(R1, R2.topRows(s), dv);
  if (weak_rows == Weak::pressed_one_sided || weak_rows == Weak::inactive) {
    d.degenerate = true;
    d.margin = std::min(d.margin, weak_margin);
  }
  // Dependent pressed rows whose right-hand sides move apart: some must leave the active set.
  if (w.kkt.inconsistency() > kSwitchMargin) d.degenerate = true;
  return velocity_derivatives_to_step(dv, n, na, h, d);
}

}  // namespace qs

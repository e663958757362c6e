// The MIQP step's derivatives (docs/derivatives.md), at the optimal mode the search found.
//
// With every complementarity pair fixed to the side the answer x takes, the step is convex
// (pang_tedrake_miqp.hpp): stage 1, the QP
//   minimise |dq_a - dqa_bar|^2  s.t.  (23a), the mode's pair rows, (23f)       (Pang & Tedrake 2018, eq. (23))
// whose optimal dq_a* is unique (its objective is strictly convex in dq_a) while its dq_u and
// impulses need not be; and stage 2, which picks among stage 1's optima (dq_a = dq_a*) the
// least grip sum P_n, an LP, whose answer is x. So stage 1 determines dq_a, and stage 2 which
// of stage 1's optimal points is the step: dq_u (and the impulses) at the vertex of stage 2's
// LP that x is. Both are the one system differentiated here: stage 1's KKT conditions at x
// with every row active at x (the stage-1 rows active at x and the stage-2 rows that pin x
// among stage 1's optima, e.g. a finger's elastic bound, which stage 1 is indifferent to):
//   H dv - A_S' dbeta = -(dc - dA_S' beta),   A_S dv = db_S - dA_S x,
//   H = diag(0, 2 I, 0) on [dq_u | dq_a | P, Gamma],   c = [0; -2 dqa_bar; 0],
// with beta stage 1's multipliers at x (A_S' beta = H x + c). Its dq_a comes from stage 1's
// stationarity; its dq_u from the active rows, which determine it once dq_a is known (else
// the step's motion is not unique: numerical_failure). The impulses need not be unique (two
// fingers sharing a weight by friction): quasistep/kernels/partial_kkt_sensitivity.hpp
// differentiates the part the system determines, dq = [dq_u; dq_a]. Valid while the active
// set stays (stage 2's LP keeps its vertex); the pairs' switches are judged by the margins
// below, the rows' multipliers are not.
//
// The active rows, contact by contact, are those of core/formulations/contact_basis.hpp
// (open; closed and sticking or sliding; weak contacts taken on both sides when consistent,
// else one-sided with d.degenerate), plus each elastic bound (23f) whose slack is within
// kSwitchMargin of zero (its relative slack otherwise counts in d.margin).
//
// The data depend on the state and the commands through J_n(q), J_t(q), phi(q), tau_u(q)
// (pose_contact_step_data at T = Jet, quasistep/core/contact_step_data.hpp) and dqa_bar = h u.
// Then q+ = q + [dq_u; dq_a]:  A = I + d dq/dq,  B = d dq/du.
//
// Memory (FormulationInfo::derivative_memory). Under elastic_bound = previous (Pang & Tedrake
// 2018, sec. V.B) the bound is P_n >= -h K phi_bar with phi_bar the last step's, kept in
// State::memory: it is state, and x = [q; phi_bar] (one entry per slot). The step writes
// phi_bar+ = phi + J_n^u dq_u + J_n^a dqa_bar (eq. (21)) for the slots active in it and +inf
// for the others. An entry that is +inf (its slot was inactive, or no step has run) has no
// derivative: its column is zero (the bound of an active slot without one is 0, a
// constant), and so is the row of a slot inactive in this step (+inf whatever x was).
// Under `current` the memory holds only the search's warm starts and its memo, which do not
// change the answer: no memory is state.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"
#include "quasistep/core/number_text.hpp"

#include "pang_tedrake_miqp_derivative_work.hpp"
#include "pang_tedrake_miqp_problem.hpp"

namespace qs {

std::vector<std::string> pang_tedrake_miqp_derivative_memory(const Model& m) {
  std::vector<std::string> names;
  if (formulation_params_or_default<PangTedrakeMiqpParams>(m).elastic_bound_previous)
    for (int i = 0; i < m.n_slots(); ++i) names.push_back("slot" + std::to_string(i) + ".phi_bar");
  return names;
}

namespace {
/// Stage 1's stationarity at the answer with its active rows, H x + c = A_S' beta, holds to
/// this (relative): the QPs' KKT tolerance, with room.
constexpr double kStationarityTolerance = 1e-6;
}  // namespace

Status PangTedrakeMiqp::differentiate(const Model& m, const WorldParams& wp, StepDerivatives& d) {
  const Problem& p = *problem_;
  const int nu = m.n_u, na = m.n_a, nq = m.n_q(), nc = p.nc, n = p.n, nd = nu + na;
  const bool previous = formulation_params_or_default<PangTedrakeMiqpParams>(m).elastic_bound_previous;
  const int nm = previous ? m.n_slots() : 0, col_u = nq + nm;
  const double h = wp.h, hK = h * wp.model_gain;
  if (!derivative_) derivative_ = std::make_unique<DerivativeWork>(m);
  DerivativeWork& w = *derivative_;
  const int cols = w.cols;
  const Eigen::VectorXd& x = x_;
  const auto in_row = [&](int r) {  // A_in row r's value at x: its slack
    double v = -p.b_in[r];
    for (int j = 0; j < n; ++j) v += p.A_in(r, j) * x[j];
    return v;
  };

  // 1. Scales: impulses (h tau_u, the impulses) and displacements (the length rows' terms).
  double impulse_scale = 0, displacement_scale = 0;
  for (int e = 0; e < nu; ++e) impulse_scale = std::max(impulse_scale, std::abs(p.b_eq[e]));
  for (int c = 0; c < nc; ++c) {
    for (int t = 0; t < 3; ++t) {
      impulse_scale = std::max(impulse_scale, x[p.pair_var(c, t)]);
      const int r = p.pair_row(c, t);
      double terms = std::abs(p.b_in[r]);
      for (int j = 0; j < n; ++j) terms += std::abs(p.A_in(r, j) * x[j]);
      displacement_scale = std::max(displacement_scale, terms);
    }
  }
  if (!(impulse_scale > 0)) impulse_scale = 1;
  if (!(displacement_scale > 0)) displacement_scale = 1;

  // 2. Each contact's state (contact_basis.hpp; rows pair_row(c, t) of A_in, variables
  // pair_var(c, t)) and whether its elastic bound holds with equality (a length row under
  // `current`, an impulse row under `previous`).
  double weak_margin = 1;
  bool any_weak = false;
  for (int c = 0; c < nc; ++c) {
    ContactPairs& cp = w.pairs[c];
    cp.mu = wp.slot_friction(m, record_.slots[c]);
    for (int t = 0; t < 4; ++t) {
      cp.var[t] = p.pair_var(c, t);
      cp.row[t] = p.pair_row(c, t);
      cp.var_value[t] = x[cp.var[t]];
      cp.row_value[t] = in_row(cp.row[t]);
    }
    w.state[c] = classify_contact(cp, impulse_scale, displacement_scale);
    if (w.state[c].weak()) {
      any_weak = true;
      weak_margin = std::min(weak_margin, w.state[c].margin);
    } else {
      d.margin = std::min(d.margin, w.state[c].margin);
    }
    const double slack = std::max(in_row(4 * nc + c), 0.0) / (previous ? impulse_scale : displacement_scale);
    w.elastic_active[c] = slack <= kSwitchMargin;
    if (!w.elastic_active[c]) d.margin = std::min(d.margin, slack);
  }

  // 3. The active rows for one choice of the weak contacts' sides, and stage 1's multipliers.
  for (int j = 0; j < n; ++j) w.h[j] = j >= nu && j < nd ? 2.0 : 0.0;
  int s = 0;
  double stationarity = 0;
  const auto build = [&](ContactSide side) {
    s = 0;
    for (int e = 0; e < nu; ++e) w.rows[s++] = {DerivativeWork::Kind::balance, e};  // (23a)
    for (int c = 0; c < nc; ++c) {
      contact_rows(
          w.state[c], side, [&](int t) { w.rows[s++] = {DerivativeWork::Kind::inequality, w.pairs[c].row[t]}; },
          [&](int t) { w.rows[s++] = {DerivativeWork::Kind::variable, w.pairs[c].var[t]}; });
      // (23f). A contact that touches without pushing has its bound at zero too: on its
      // separating side the bound lets go with it (phi_bar > 0 there).
      const bool lets_go = w.state[c].normal == ContactNormal::weak && side == ContactSide::separating;
      if (w.elastic_active[c] && !lets_go) w.rows[s++] = {DerivativeWork::Kind::inequality, 4 * nc + c};
    }
    for (int r = 0; r < s; ++r) {
      const DerivativeWork::Row& row = w.rows[r];
      for (int j = 0; j < n; ++j)
        w.A_S(r, j) = row.kind == DerivativeWork::Kind::balance      ? p.A_eq(row.index, j)
                      : row.kind == DerivativeWork::Kind::inequality ? p.A_in(row.index, j)
                                                                     : (j == row.index ? 1.0 : 0.0);
    }
    if (w.kkt.factor(w.h.head(n), w.A_S.topLeftCorner(s, n), nd) != Status::solved) return false;
    // Stage 1's multipliers: H x + c = A_S' beta, c_a = -2 dqa_bar.
    for (int j = 0; j < n; ++j) w.g[j] = j >= nu && j < nd ? 2.0 * (x[j] - dqa_bar_[j - nu]) : 0.0;
    // Relative to the objective's gradient scale 2 max(|dq_a|, |dqa_bar|) (H x + c itself
    // vanishes when the command is tracked).
    double scale = 0;
    for (int a = 0; a < na; ++a) scale = std::max({scale, 2 * std::abs(x[nu + a]), 2 * std::abs(dqa_bar_[a])});
    stationarity = w.kkt.multipliers(w.g.head(n), w.beta.head(s));
    if (stationarity > 0) stationarity /= scale;
    return true;
  };

  // 4. Right-hand sides, one column per direction: q, then phi_bar (previous), then u.
  //   R1 = dc - dA_S' beta,   R2 = db_S - dA_S x   (each row's Jets with x held).
  const double t_mid = step_start_t() + 0.5 * h;
  const bool has_memory = step_start_memory().size() == memory_.size;
  const double* memory0 = step_start_memory().data();
  const auto right_hand_sides = [&] {
    auto R1 = w.R1.topLeftCorner(n, cols);
    auto R2 = w.R2.topLeftCorner(s, cols);
    R1.setZero();
    R2.setZero();
    w.phi_bar.topLeftCorner(nc, cols).setZero();
    const double* q0 = step_start_q().data();
    const ContactStepData<Jet>& g = w.data;
    // The Jet directions: q's (columns 0 .. nq - 1) and u's (columns col_u ..).
    const int directions = nq + na;
    for (int first = 0; first < directions; first += kJetWidth) {
      const int width = std::min(kJetWidth, directions - first);
      const auto column = [&](int k) { return first + k < nq ? first + k : col_u + first + k - nq; };
      const auto direction = [&](int dir) { return dir >= first && dir < first + width; };
      for (int e = 0; e < nq; ++e) w.q[e] = direction(e) ? Jet::variable(q0[e], e - first) : Jet(q0[e]);
      for (int a = 0; a < na; ++a) {
        w.dqa[a] = Jet(dqa_bar_[a]);
        if (direction(nq + a)) w.dqa[a].d[nq + a - first] = h;  // dqa_bar = h u
      }
      pose_contact_step_data<Jet>(m, wp, w.q.data(), t_mid, w.data);
      // Adds row r's term coef * x_j (a Jet coefficient) to its R2 and, weighted by its
      // multiplier, to R1; rhs: the row's b.
      for (int r = 0; r < s; ++r) {
        const DerivativeWork::Row& row = w.rows[r];
        if (row.kind == DerivativeWork::Kind::variable) continue;  // constant
        const auto term = [&](int j, const Jet& coef) {
          for (int k = 0; k < width; ++k) {
            R2(r, column(k)) -= coef.d[k] * x[j];
            R1(j, column(k)) -= w.beta[r] * coef.d[k];
          }
        };
        const auto rhs = [&](const Jet& b) {
          for (int k = 0; k < width; ++k) R2(r, column(k)) += b.d[k];
        };
        if (row.kind == DerivativeWork::Kind::balance) {  // (23a): J_n^u' P_n + J_t^u' (P_t+ - P_t-) = -h tau_u
          const int e = row.index;
          for (int c = 0; c < nc; ++c) {
            const int i = record_.slots[c];
            term(p.pair_var(c, 0), g.jn[i * nq + e]);
            term(p.pair_var(c, 1), g.jt[i * nq + e]);
            term(p.pair_var(c, 2), -g.jt[i * nq + e]);
          }
          rhs(Jet(-h) * g.tau[e]);
          continue;
        }
        const int c = row.index % nc, kind = row.index / nc, i = record_.slots[c];
        if (kind == 0) {  // gap (13): J_n dq >= -phi
          for (int j = 0; j < nd; ++j) term(j, g.jn[i * nq + j]);
          rhs(-g.frame[i].phi);
        } else if (kind == 1 || kind == 2) {  // rho+- (15)-(16): Gamma +- J_t dq >= 0
          for (int j = 0; j < nd; ++j) term(j, kind == 1 ? g.jt[i * nq + j] : -g.jt[i * nq + j]);
        } else if (kind == 4 && !previous) {
          // (23f) divided by h K: P_n / (h K) + J_n^u dq_u >= -(phi + J_n^a dqa_bar).
          for (int e = 0; e < nu; ++e) term(e, g.jn[i * nq + e]);
          Jet b = g.frame[i].phi;
          for (int a = 0; a < na; ++a) b = b + g.jn[i * nq + nu + a] * w.dqa[a];
          rhs(-b);
        }  // the cone rows (17) and the bound under `previous` are constant in q and u
      }
      // phi_bar+ = phi + J_n^u dq_u + J_n^a dqa_bar (21) with the answer held.
      for (int c = 0; c < nc; ++c) {
        const int i = record_.slots[c];
        Jet v = g.frame[i].phi;
        for (int e = 0; e < nu; ++e) v = v + g.jn[i * nq + e] * Jet(x[e]);
        for (int a = 0; a < na; ++a) v = v + g.jn[i * nq + nu + a] * w.dqa[a];
        for (int k = 0; k < width; ++k) w.phi_bar(c, column(k)) = v.d[k];
      }
    }
    // dc: c_a = -2 dqa_bar_a = -2 h u_a.
    for (int a = 0; a < na; ++a) R1(nu + a, col_u + a) += -2.0 * h;
    // Under `previous`: the bound P_n >= -h K phi_bar of a slot whose phi_bar is finite.
    if (previous)
      for (int r = 0; r < s; ++r) {
        const DerivativeWork::Row& row = w.rows[r];
        if (row.kind != DerivativeWork::Kind::inequality || row.index < 4 * nc) continue;
        const int i = record_.slots[row.index - 4 * nc];
        if (has_memory && std::isfinite(memory0[memory_.phi_bar + i])) R2(r, nq + i) = -hK;
      }
    w.kkt.solve(R1, R2, w.dv.topLeftCorner(n, cols));
  };

  // 5. Two-sided where the weak contacts stay consistent, else one-sided: the separating
  // side, or the holding one, whichever is stage 1's optimum (stationary).
  bool solved = false;
  if (any_weak && build(ContactSide::both)) {
    right_hand_sides();
    solved = w.kkt.inconsistency() <= kSwitchMargin && stationarity <= kStationarityTolerance;
  }
  if (!solved && any_weak) d.degenerate = true;
  bool unique = solved;
  for (const ContactSide side : {ContactSide::separating, ContactSide::holding}) {
    if (solved || (side == ContactSide::holding && !any_weak) || !build(side)) continue;
    unique = true;
    if (stationarity <= kStationarityTolerance) {
      right_hand_sides();
      solved = true;
    }
  }
  if (!unique) {
    d.detail = "the step's motion is not unique at its mode (some motion of the objects keeps every active row, "
               "the force balance and dq_a), so it has no derivative";
    return Status::numerical_failure;
  }
  if (!solved) {
    d.detail = "the answer is not stationary for stage 1 with its active rows (relative residual " +
               three_digits(stationarity) + "), so they are not its mode's";
    return Status::numerical_failure;
  }
  if (d.degenerate) d.margin = std::min(d.margin, weak_margin);
  if (w.kkt.inconsistency() > kSwitchMargin) d.degenerate = true;
  const auto dv = w.dv.topLeftCorner(n, cols);
  for (int i = 0; i < nd; ++i)
    for (int j = 0; j < cols; ++j)
      if (!std::isfinite(dv(i, j))) {
        d.detail = "the derivative is not finite (" + three_digits(dv(i, j)) + ")";
        return Status::numerical_failure;
      }

  // 6. q+ = q + dq: A = I + d dq/dx, B = d dq/du; phi_bar+ of each slot (previous).
  for (int i = 0; i < nq; ++i) {
    for (int j = 0; j < nq + nm; ++j) d.A(i, j) += dv(i, j);
    for (int a = 0; a < na; ++a) d.B(i, a) = dv(i, col_u + a);
  }
  if (previous) {
    for (int i = 0; i < nm; ++i) {
      d.A.row(nq + i).setZero();  // +inf, whatever x was, unless its slot is active below
      d.B.row(nq + i).setZero();
    }
    for (int c = 0; c < nc; ++c) {
      const int i = record_.slots[c];
      for (int j = 0; j < cols; ++j) {
        double v = w.phi_bar(c, j);
        for (int e = 0; e < nu; ++e) v += record_.geometry.J_n(i, e) * dv(e, j);
        if (j < col_u) d.A(nq + i, j) = v;
        else d.B(nq + i, j - col_u) = v;
      }
    }
  }
  return Status::solved;
}

}  // namespace qs

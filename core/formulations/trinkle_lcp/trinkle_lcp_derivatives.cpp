// Trinkle's step's derivatives (docs/derivatives.md): the mixed LCP of trinkle_lcp.hpp,
//   0 = M_f x + q_f   (force balance, Pang & Tedrake 2018, eq. (23a)),
//   0 <= z _|_ w = M_z x + q_z >= 0   (eqs. (12)-(17)),   x = [dq_u; P_n; P_t+; P_t-; Gamma],
// differentiated at the answer's basis: the rows that hold with equality there (force
// balance, w_i = 0 where z_i is basic, z_i = 0 where w_i is) keep holding under a small
// change of the data, so dx solves the basis system
//   M_S dx = -(dM_S x + dq_S)     (z_i = 0 rows: dz_i = 0)
// in the entries it determines (quasistep/kernels/partial_kkt_sensitivity.hpp with H = 0,
// the implicit differentiation of quasistep/kernels/linear_solve.hpp's basis solve, but
// tolerating what a plain solve of M_aa cannot: impulses that are not unique (a weight
// shared by friction) and rows that are dependent (a sticking contact's two slide rows)).
// The data depend on the state and the commands through J_n(q), J_t(q), phi(q), tau_u(q)
// and dqa_bar = h u, all from pose_contact_step_data at T = Jet (quasistep/core/contact_step_data.hpp),
// second derivatives of the contact geometry included. Then q_u+ = q_u + dq_u and
// q_a+ = q_a + h u (trinkle_lcp.cpp, step 5):
//   A = [I + d dq_u/dq; 0 I],   B = [d dq_u/du; h I].
//
// The basis is chosen contact by contact (core/formulations/contact_basis.hpp: open, closed
// and sticking or sliding, each with its rows), which keeps a sticking contact regular though
// its pairs are degenerate one by one. A contact within kSwitchMargin of a switch is taken on
// both sides at once, the two-sided derivative when those rows stay consistent; else the
// derivative is one-sided (d.degenerate): the contact taken open or sliding (the side on
// which it lets go, as the Anitescu step's convention), or sticking where the motion would
// otherwise not be unique.
#include <algorithm>
#include <cmath>
#include <string>

#include "quasistep/core/formulations/trinkle_lcp/trinkle_lcp.hpp"
#include "quasistep/core/number_text.hpp"

#include "../contact_basis.hpp"

#include "trinkle_lcp_derivative_work.hpp"

namespace qs {

Status TrinkleLcp::differentiate(const Model& m, const WorldParams& p, StepDerivatives& d) {
  const int nu = m.n_u, na = m.n_a, nq = m.n_q(), nc = contacts_, n = size_;
  const double h = p.h;
  for (int a = 0; a < na; ++a) d.B(nu + a, a) = h;  // q_a+ = q_a + h u, whatever the contacts do
  if (nu == 0) return Status::solved;
  if (!derivative_) derivative_ = std::make_unique<DerivativeWork>(m);
  DerivativeWork& w = *derivative_;
  const auto M = M_.topLeftCorner(n, n);
  const auto q = q_.head(n);
  const int pn = nu, pp = nu + nc, pm = nu + 2 * nc, pg = nu + 3 * nc;

  // 1. The answer x = [dq_u; z] and its w = M x + q; the impulse and displacement scales.
  for (int e = 0; e < nu; ++e) w.x[e] = result_->u[e];
  for (int k = nu; k < n; ++k) w.x[k] = result_->z[k - nu];
  double impulse_scale = 0, displacement_scale = 0;
  for (int r = 0; r < n; ++r) {
    double v = q[r], terms = std::abs(q[r]);
    for (int k = 0; k < n; ++k) {
      v += M(r, k) * w.x[k];
      terms += std::abs(M(r, k) * w.x[k]);
    }
    w.w[r] = v;
    if (r < nu) impulse_scale = std::max(impulse_scale, std::abs(q[r]));  // h tau_u
    else if (r < pg) displacement_scale = std::max(displacement_scale, terms);
  }
  for (int k = pn; k < pg; ++k) impulse_scale = std::max(impulse_scale, w.x[k]);
  if (!(impulse_scale > 0)) impulse_scale = 1;
  if (!(displacement_scale > 0)) displacement_scale = 1;

  // 2. Each contact's state (contact_basis.hpp): its pairs are (P_n, gap), (P_t+, rho+),
  // (P_t-, rho-), (Gamma, cone), LCP rows and variables pn + c, pp + c, pm + c, pg + c.
  double weak_margin = 1;
  bool any_weak = false;
  for (int c = 0; c < nc; ++c) {
    ContactPairs& cp = w.pairs[c];
    cp.mu = p.slot_friction(m, record_.slots[c]);
    for (int t = 0; t < 4; ++t) {
      cp.var[t] = cp.row[t] = nu + t * nc + c;
      cp.var_value[t] = w.x[nu + t * nc + c];
      cp.row_value[t] = w.w[nu + t * nc + c];
    }
    w.state[c] = classify_contact(cp, impulse_scale, displacement_scale);
    if (w.state[c].weak()) {
      any_weak = true;
      weak_margin = std::min(weak_margin, w.state[c].margin);
    } else {
      d.margin = std::min(d.margin, w.state[c].margin);
    }
  }

  // 3. The basis system's rows for one choice of the weak contacts' sides: the force
  // balance (23a), then each contact's.
  int s = 0;
  const auto build = [&](ContactSide side) {
    s = 0;
    for (int e = 0; e < nu; ++e) w.rows[s++] = {true, e};
    for (int c = 0; c < nc; ++c)
      contact_rows(
          w.state[c], side, [&](int t) { w.rows[s++] = {true, w.pairs[c].row[t]}; },
          [&](int t) { w.rows[s++] = {false, w.pairs[c].var[t]}; });
    for (int r = 0; r < s; ++r) {
      const DerivativeWork::Row& row = w.rows[r];
      if (row.lcp) {
        for (int k = 0; k < n; ++k) w.A_S(r, k) = M(row.index, k);
      } else {
        for (int k = 0; k < n; ++k) w.A_S(r, k) = k == row.index ? 1.0 : 0.0;
      }
    }
    return w.kkt.factor(w.h.head(n), w.A_S.topLeftCorner(s, n), nu) == Status::solved;
  };

  // 4. Right-hand sides, one column per direction, q then u: R2 = -(dM_S x + dq_S) on LCP
  // rows (the rows' w at T = Jet with x held), 0 on z_i = 0 rows; R1 = 0.
  const int cols = nq + na;
  const double t_mid = step_start_t() + 0.5 * h;
  const auto right_hand_sides = [&] {
    auto R2 = w.R2.topLeftCorner(s, cols);
    R2.setZero();
    const double* q0 = step_start_q().data();
    const ContactStepData<Jet>& g = w.data;
    for (int first = 0; first < cols; first += kJetWidth) {
      const int width = std::min(kJetWidth, cols - first);
      const auto direction = [&](int col) { return col >= first && col < first + width; };
      for (int e = 0; e < nq; ++e) w.q[e] = direction(e) ? Jet::variable(q0[e], e - first) : Jet(q0[e]);
      for (int a = 0; a < na; ++a) {
        w.dqa[a] = Jet(dqa_[a]);
        if (direction(nq + a)) w.dqa[a].d[nq + a - first] = h;  // dqa_bar = h u
      }
      pose_contact_step_data<Jet>(m, p, w.q.data(), t_mid, w.data);
      for (int r = 0; r < s; ++r) {
        const DerivativeWork::Row& row = w.rows[r];
        if (!row.lcp || row.index >= pg) continue;  // z_i = 0, or a cone row (constant)
        Jet v;
        if (row.index < nu) {  // force balance (23a): J_n^u' P_n + J_t^u' (P_t+ - P_t-) + h tau_u
          const int e = row.index;
          v = Jet(h) * g.tau[e];
          for (int c = 0; c < nc; ++c) {
            const int i = record_.slots[c];
            v = v + g.jn[i * nq + e] * Jet(w.x[pn + c]) + g.jt[i * nq + e] * Jet(w.x[pp + c] - w.x[pm + c]);
          }
        } else {  // a gap (13) or slide (15)-(16) row: phi or 0, + J^u dq_u + J^a dqa_bar
          const int c = (row.index - nu) % nc, kind = (row.index - nu) / nc, i = record_.slots[c];
          const std::vector<Jet>& J = kind == 0 ? g.jn : g.jt;
          v = kind == 0 ? g.frame[i].phi : Jet(0.0);
          for (int e = 0; e < nu; ++e) v = v + J[i * nq + e] * Jet(w.x[e]);
          for (int a = 0; a < na; ++a) v = v + J[i * nq + nu + a] * w.dqa[a];
          if (kind == 2) v = -v;
        }
        for (int k = 0; k < width; ++k) R2(r, first + k) = -v.d[k];
      }
    }
    auto dv = w.dv.topLeftCorner(n, cols);
    w.kkt.solve(w.R1.topLeftCorner(n, cols), R2, dv);
  };

  // 5. Two-sided where the weak contacts stay consistent, else one-sided.
  bool solved = false;
  if (any_weak && build(ContactSide::both)) {
    right_hand_sides();
    solved = w.kkt.inconsistency() <= kSwitchMargin;
  }
  if (!solved && any_weak) d.degenerate = true;
  if (!solved && build(ContactSide::separating)) {
    right_hand_sides();
    solved = true;
  }
  if (!solved && any_weak && build(ContactSide::holding)) {
    right_hand_sides();
    solved = true;
  }
  if (!solved) {
    d.detail = "the step's motion is not unique at its basis (some motion of the objects keeps every active contact "
               "row and the force balance), so it has no derivative";
    return Status::numerical_failure;
  }
  if (d.degenerate) d.margin = std::min(d.margin, weak_margin);
  // Dependent rows whose right-hand sides move apart: some row must leave the basis.
  if (w.kkt.inconsistency() > kSwitchMargin) d.degenerate = true;
  for (int e = 0; e < nu; ++e)
    for (int j = 0; j < cols; ++j)
      if (!std::isfinite(w.dv(e, j))) {
        d.detail = "the derivative is not finite (" + three_digits(w.dv(e, j)) + ")";
        return Status::numerical_failure;
      }
  for (int e = 0; e < nu; ++e) {
    for (int j = 0; j < nq; ++j) d.A(e, j) += w.dv(e, j);
    for (int a = 0; a < na; ++a) d.B(e, a) = w.dv(e, nq + a);
  }
  return Status::solved;
}

}  // namespace qs

// The Halm-Posa (and perfect-velocity) step's derivatives (docs/derivatives.md). Each
// linearisation solves the LCP 0 <= z _|_ M z + q >= 0 of Halm & Posa 2018, eqs. (35)-(38),
// whose data depend on the step's start q0, its linearisation point q_lin and the commands
// u; its answer's basic variables b solve M_bb z_b = -q_b, so at a fixed basis
//   dz_b = -M_bb^-1 (dM_bb z_b + dq_b),
// and the step q+ = q0 + E z + h u with E z = [A J_o' Lambda; cB J_m' Lambda] (eqs.
// (32)-(33)), so dq+ = dq0 + dE z + E dz + h du. The data's derivatives along q come from
// replaying the linearisation in Jets (quasistep/core/jet.hpp), with its basis taken from
// the answer the step recorded: the geometry and the rotated limit surface A(theta) (eq.
// (12)) carry their exact derivatives. The commands enter the data only through h u, and
// linearly: in the linearised gaps and slides (J_n,m h u, J_t,m h u, eq. (31)) and in the
// end state (h u, eq. (33)), so their columns are written directly rather than carried by
// Jets; but with re-linearisation (sec. 5) each linearisation's point is the previous one's
// end state, which moves with q0 and u alike, so then u's directions ride the Jets too and
// the chain through the re-linearisations is differentiated. M_bb is factorised once per
// basis (quasistep/kernels/linear_solve.hpp) for z_b and every direction.
//
// A complementarity pair with z and w both within kSwitchMargin of zero is weak: its row
// may be basic or not. When both choices give a nonsingular basis and different
// derivatives, the step is at a switch: the derivative returned is the one with the row
// nonbasic (its impulse stays zero: the contact separates or stops pushing), flagged
// degenerate. When only one choice is nonsingular (a contact without normal impulse has a
// slip pair with w = 0 that fixes gamma; its other side leaves gamma undetermined) that one
// is the step's only local basis, and the derivative is two-sided.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cmath>
#include <string>

#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/number_text.hpp"
#include "quasistep/kernels/linear_solve.hpp"

#include "halm_posa_derivative_work.hpp"

namespace qs {
namespace {

/// Weak rows (both sides at zero) the derivative resolves, at most (one bit each of a mask).
constexpr int kMaxWeak = 64;
/// A basis matrix is singular where Gaussian elimination's pivot falls to this fraction of
/// its largest entry (linear_solve.hpp's default).
constexpr double kSingularPivot = 1e-13;

/// The answer's basis of one linearisation: rows in its LCP whose z is basic, and the weak
/// ones. Each pair (z_r, w_r) is judged in its own units: the normal and slip rows' z are
/// impulses and their w lengths, gamma's row the other way round (Halm & Posa 2018, eq. (38)).
/// Returns the smallest margin of a pair that is not weak.
double classify(const HalmPosaProblem<Jet>& P, const std::vector<double>& z, const std::vector<double>& w,
                std::vector<int>& basis, int& n_basis, std::vector<int>& weak, int& n_weak) {
  const int ns = P.ns, n = P.n;
  double impulse = 0, length = 0;
  for (int r = 0; r < n; ++r) {
    if (P.excluded[r]) continue;
    const bool gamma = r / ns == 3;
    impulse = std::max(impulse, gamma ? std::abs(w[r]) : z[r]);
    // Lengths: the rows' own gaps and slides too (where every contact is pressed and sticks,
    // every w and gamma is zero to rounding, and their 1e-19 is no scale).
    length = std::max({length, gamma ? z[r] : std::abs(w[r]), gamma ? 0.0 : std::abs(P.q_lcp[r].v)});
  }
  if (!(impulse > 0)) impulse = 1;
  if (!(length > 0)) length = 1;
  double smallest = 1;
  n_basis = n_weak = 0;
  for (int r = 0; r < n; ++r) {
    if (P.excluded[r]) continue;
    const bool gamma = r / ns == 3;
    const double zr = z[r] / (gamma ? length : impulse), wr = std::max(w[r], 0.0) / (gamma ? impulse : length);
    const double margin = std::max(zr, wr);
    if (margin <= kSwitchMargin) {
      weak[n_weak++] = r;
    } else {
      smallest = std::min(smallest, margin);
      if (zr > wr) basis[n_basis++] = r;
    }
  }
  return smallest;
}

using Choice = HalmPosaLcp::DerivativeWork::Choice;

/// The basis of the answer with the weak rows of `mask` (bit i: weak row i) basic too, in
/// w.basis[0..size): returns its size.
int set_basis(HalmPosaLcp::DerivativeWork& w, const Choice& c, std::uint64_t mask) {
  int k = 0;
  for (int i = 0; i < c.n_basis; ++i) w.basis[k++] = c.basis[i];
  for (int i = 0; i < c.n_weak; ++i)
    if (mask >> i & 1u) w.basis[k++] = c.weak[i];
  return k;
}

/// That basis (set_basis), and how many short of full rank its matrix is (judged on the
/// values, by Gaussian elimination with complete pivoting; 0: nonsingular).
int basis_deficiency(HalmPosaLcp::DerivativeWork& w, const Choice& c, std::uint64_t mask) {
  const HalmPosaProblem<Jet>& P = w.problem;
  const int n = P.n;
  const int k = set_basis(w, c, mask);
  double* a = w.values.data();
  double top = 0;
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) {
      a[i * k + j] = P.M[w.basis[i] * n + w.basis[j]].v;
      top = std::max(top, std::abs(a[i * k + j]));
    }
  const double floor = kSingularPivot * top;
  int rank = 0;
  for (; rank < k; ++rank) {
    int pr = rank, pc = rank;
    double best = -1;
    for (int i = rank; i < k; ++i)
      for (int j = rank; j < k; ++j)
        if (std::abs(a[i * k + j]) > best) {
          best = std::abs(a[i * k + j]);
          pr = i;
          pc = j;
        }
    if (!(best > floor)) break;
    for (int j = 0; j < k; ++j) std::swap(a[rank * k + j], a[pr * k + j]);
    for (int i = 0; i < k; ++i) std::swap(a[i * k + rank], a[i * k + pc]);
    for (int i = rank + 1; i < k; ++i) {
      const double f = a[i * k + rank] / a[rank * k + rank];
      for (int j = rank + 1; j < k; ++j) a[i * k + j] -= f * a[rank * k + j];
    }
  }
  return k - rank;
}

/// The linearisation's end state at the basis w.basis[0..size) (basis_deficiency 0), in
/// w.q_end, and its derivative along columns [first, first + width) of dq (n_q + n_a
/// columns: q0, then u), where column c < lanes rides Jet lane c - first, plus, in the pass
/// with first == 0, the columns [lanes, n_q + n_a) (u's, when no Jet carries them).
void end_state_at_basis(HalmPosaLcp::DerivativeWork& w, int size, int first, int width, int lanes, double h,
                        Eigen::MatrixXd& dq) {
  HalmPosaProblem<Jet>& P = w.problem;
  const int n = P.n, ns = P.ns, nq = P.nq, nu = P.nu, na = P.na, r = 2 * ns, k = size;
  // z_b from M_bb z_b = -q_b at the values (nonsingular: basis_deficiency said so).
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) w.lu[i * k + j] = P.M[w.basis[i] * n + w.basis[j]].v;
    w.z[i] = -P.q_lcp[w.basis[i]].v;
  }
  lu_factor_in_place(k, w.lu.data(), k, w.pivot.data());
  lu_solve(k, w.lu.data(), k, w.pivot.data(), w.z.data());
  // dM_bb z_b + dq_b along every lane at once (Jet's lanes as one vector, jet.hpp).
  for (int i = 0; i < k; ++i) {
    const int row = w.basis[i];
    jet_detail::Lanes v = jet_detail::load(P.q_lcp[row]);
    for (int j = 0; j < k; ++j) v = v + jet_detail::load(P.M[row * n + w.basis[j]]) * jet_detail::Lanes(w.z[j]);
    v.copy_to(w.lane_rhs[static_cast<size_t>(i)].data(), stdx::element_aligned);
  }
  // The end state with z held: its values, and along the lanes dq0 + dE z (finish_about at
  // T = Jet reads the rows of the slots in the LCP alone).
  for (int slot = 0; slot < ns; ++slot)
    if (P.active[slot] && !P.unreached[slot])
      for (int row = slot; row < n; row += ns) P.z[row] = P.w[row] = Jet(0.0);
  for (int i = 0; i < k; ++i) P.z[w.basis[i]] = Jet(w.z[i]);
  halm_posa_detail::finish_about(P, w.q0.data());
  for (int e = 0; e < nq; ++e) w.q_end[e] = P.q_end[e].v;
  // Each basic row's slot and block of the layout [Lambda_N | Lambda_T+ | Lambda_T- | gamma]
  // (once: the loops below would divide for every entry).
  for (int i = 0; i < k; ++i) {
    w.slot_of[i] = w.basis[i] % ns;
    w.block_of[i] = w.basis[i] / ns;
  }
  // This pass's columns.
  int nc = 0;
  for (int c = first; c < nq + na; ++c) {
    const int lane = c < lanes ? c - first : -1;
    if (lane < width && (lane >= 0 || first == 0)) w.columns[nc++] = c;
  }
  // dz_b = -M_bb^-1 (dM_bb z_b + dq_b), a column each (w.dz: k x nc, row-major): dM and dq
  // along the column's lane, and u's direct part, the LCP's rows [gap | slide | -slide | 0]
  // of slot `slot` (fill_lcp): d/du_a of J_n,m h u and J_t,m h u.
  for (int i = 0; i < k; ++i) {
    const int slot = w.slot_of[i], block = w.block_of[i];
    for (int j = 0; j < nc; ++j) {
      const int c = w.columns[j], lane = c < lanes ? c - first : -1, a = c - nq;
      double v = lane >= 0 ? w.lane_rhs[static_cast<size_t>(i)][static_cast<size_t>(lane)] : 0.0;
      if (a >= 0 && block < 3) {
        const double J = block == 0 ? P.jn[slot * nq + nu + a].v : P.jt[slot * nq + nu + a].v;
        v += block == 2 ? -h * J : h * J;
      }
      w.dz[i * nc + j] = -v;
    }
  }
  lu_solve(k, w.lu.data(), k, w.pivot.data(), w.dz.data(), nc, nc);
  // dq+ = (dq0 + dE z along the lane) + E dz + h du (finish_about's products).
  for (int j = 0; j < nc; ++j) {
    const int c = w.columns[j], lane = c < lanes ? c - first : -1, a = c - nq;
    for (int e = 0; e < nq; ++e) dq(e, c) = lane >= 0 ? P.q_end[e].d[lane] : 0.0;
    if (a >= 0) dq(nu + a, c) += h;
    for (int i = 0; i < k; ++i) {
      const int slot = w.slot_of[i], block = w.block_of[i];
      if (block == 3) continue;  // gamma moves nothing
      const int col = block == 0 ? slot : ns + slot;
      const double sign = block == 2 ? -1.0 : 1.0, dzi = sign * w.dz[i * nc + j];
      for (int e = 0; e < 3; ++e) dq(P.dof_o[e], c) += P.AJo[e * r + col].v * dzi;
      for (int b = 0; b < na; ++b) dq(nu + b, c) += P.BJm[b * r + col].v * dzi;
    }
  }
}

}  // namespace

Status HalmPosaLcp::differentiate(const Model& m, const WorldParams& p, StepDerivatives& d) {
  // The sequence of programs moves Ã with the step's own answer (sec. 3.4): its derivative
  // would need dÃ/dF through limit_surface_at, which is not implemented.
  if (support_) {
    d.detail = "the exact limit surface (model.support) has no step derivatives; give model.A (an ellipsoid)";
    return Status::bad_input;
  }
  const HalmPosaParams& params = formulation_params_or_default<HalmPosaParams>(m);
  const int nq = m.n_q(), nu = m.n_u, na = m.n_a;
  if (!derivative_) derivative_ = std::make_unique<DerivativeWork>(m);
  DerivativeWork& w = *derivative_;
  HalmPosaProblem<Jet>& P = w.problem;
  const double h = p.h, t_mid = step_start_t() + 0.5 * h;
  const double* q0 = step_start_q().data();
  // cB as the step poses it (eq. (37)), in the LCP's unit; zero for perfect velocity.
  const Jet c = Jet(p.model_gain) / Jet(P.lcp_unit);
  for (int a = 0; a < na; ++a)
    for (int b = 0; b < na; ++b)
      P.cB[a * na + b] = !perfect_ && params.gain_B ? c * Jet((*params.gain_B)(a, b)) : Jet(0.0);
  for (size_t k = 0; k < m.pairs.size(); ++k) w.mu[k] = Jet(p.pair_friction[k]);
  for (const Joint& j : m.joints) P.uh[j.dof - nu] = Jet(h * p.velocity(m, j, t_mid));  // u's columns: direct

  // Columns q0, then u; Jet lanes for q0's, and for u's only when a re-linearisation's point
  // depends on u.
  const int cols = nq + na, lanes = params.relinearize_iterations > 0 ? cols : nq;
  for (int first = 0; first < lanes; first += kJetWidth) {
    const int width = std::min(kJetWidth, lanes - first);
    for (int e = 0; e < nq; ++e)
      w.q0[e] = P.q_lin[e] = e >= first && e < first + width ? Jet::variable(q0[e], e - first) : Jet(q0[e]);
    for (int it = 0; it <= params.relinearize_iterations; ++it) {
      const Linearisation& rec = linearisations_[static_cast<size_t>(it)];
      for (int i = 0; i < P.ns; ++i) P.unposed[i] = rec.in_lcp[i] == 0;  // only the slots in the step's LCP
      halm_posa_detail::pose_about(m, p, P, w.q0.data());
      for (int i = 0; i < P.ns; ++i) {  // the slots the step's LCP had
        P.active[i] = rec.in_lcp[i] != 0;
        P.unreached[i] = false;
      }
      halm_posa_detail::fill_lcp(m, P, w.mu.data());
      // The weak rows' sides, judged on the values (the same in every pass: once, in the
      // first). First the fewest weak rows basic that make the basis nonsingular (each kept
      // where it lowers the basis' rank deficiency): a sticking contact's idle slip row or an
      // unpressed contact's slip row that fixes gamma is needed there, and is no switch. Then
      // each other weak row taken basic too: where that is a basis with another derivative,
      // the step is at a switch (the first one is returned: those rows' impulses stay zero,
      // the separating side).
      Choice& choice = w.choices[static_cast<size_t>(it)];
      if (first == 0) {
        d.margin = std::min(d.margin, classify(P, rec.z, rec.w, choice.basis, choice.n_basis, choice.weak, choice.n_weak));
        const int n_weak = choice.n_weak;
        if (n_weak > kMaxWeak) {
          d.detail = "the step's LCP has " + std::to_string(n_weak) + " complementarity pairs at zero on both sides, "
                     "more than the derivative resolves (" + std::to_string(kMaxWeak) + ")";
          return Status::numerical_failure;
        }
        std::uint64_t chosen = 0;
        int deficiency = basis_deficiency(w, choice, chosen);
        // Passes until one adds nothing: a row that does not help at first may once others are in.
        for (bool added = true; added && deficiency > 0;) {
          added = false;
          for (int i = 0; i < n_weak && deficiency > 0; ++i) {
            if (chosen >> i & 1u) continue;
            const int with = basis_deficiency(w, choice, chosen | std::uint64_t{1} << i);
            if (with < deficiency) {
              chosen |= std::uint64_t{1} << i;
              deficiency = with;
              added = true;
            }
          }
        }
        if (deficiency > 0) {
          d.detail = "the step's LCP is singular at the basis of its answer, so the step has no derivative";
          return Status::numerical_failure;
        }
        choice.chosen = chosen;
        choice.others = 0;
        for (int i = 0; i < n_weak; ++i)
          if (!(chosen >> i & 1u) && basis_deficiency(w, choice, chosen | std::uint64_t{1} << i) == 0)
            choice.others |= std::uint64_t{1} << i;
      }
      end_state_at_basis(w, set_basis(w, choice, choice.chosen), first, width, lanes, h, w.dq_end);
      // The next linearisation's point: this one's end state, with its derivative along the lanes.
      for (int e = 0; e < nq; ++e) {
        P.q_lin[e] = Jet(w.q_end[e]);
        for (int k = 0; k < width; ++k) P.q_lin[e].d[k] = w.dq_end(e, first + k);
      }
      for (int i = 0; i < choice.n_weak && !d.degenerate; ++i) {
        if (!(choice.others >> i & 1u)) continue;
        end_state_at_basis(w, set_basis(w, choice, choice.chosen | std::uint64_t{1} << i), first, width, lanes, h,
                           w.dq_other);
        for (int col = first; col < cols; ++col) {
          if (col >= first + width && (col < lanes || first > 0)) continue;  // another pass's column
          for (int e = 0; e < nq; ++e)
            if (std::abs(w.dq_other(e, col) - w.dq_end(e, col)) > 1e-8 * (1 + std::abs(w.dq_end(e, col)))) {
              d.degenerate = true;
              d.margin = 0;
            }
        }
      }
    }
  }
  for (int e = 0; e < nq; ++e)
    for (int col = 0; col < cols; ++col) {
      const double value = w.dq_end(e, col);
      if (!std::isfinite(value)) {
        d.detail = "the derivative is not finite (" + three_digits(value) + ")";
        return Status::numerical_failure;
      }
      if (col < nq) d.A(e, col) = value;
      else d.B(e, col - nq) = value;
    }
  return Status::solved;
}

}  // namespace qs

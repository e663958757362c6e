// The Halm-Posa (and perfect-velocity) step's derivatives (docs/derivatives.md). Each
// linearisation solves the LCP 0 <= z _|_ M z + q >= 0 of Halm & Posa 2018, eqs. (35)-(38),
// whose data depend on the step's start q0, its linearisation point q_lin and the commands
// u; its answer's basic variables b solve M_bb z_b = -q_b, so at a fixed basis
//   dz_b = -M_bb^-1 (dM_bb z_b + dq_b),
// and the step q+ = q0 + [A J_o' Lambda; cB J_m' Lambda + h u] (eqs. (32)-(33)). Rather than
// write those products out, the step is replayed in Jets (quasistep/core/jet.hpp) along q0
// and u, with each linearisation's basis taken from the answer the step recorded: the
// geometry, the rotated limit surface A(theta) (eq. (12)) and the basis solve
// (quasistep/kernels/linear_solve.hpp) carry their exact derivatives, and a re-linearisation's
// point (the previous one's end state) carries its own, so the chain through Halm & Posa's
// re-linearisations (sec. 5) is differentiated too.
//
// A complementarity pair with z and w both within kSwitchMargin of zero is weak: its row
// may be basic or not. When both choices give a nonsingular basis and different
// derivatives, the step is at a switch: the derivative returned is the one with the row
// nonbasic (its impulse stays zero: the contact separates or stops pushing), flagged
// degenerate. When only one choice is nonsingular (a contact without normal impulse has a
// slip pair with w = 0 that fixes gamma; its other side leaves gamma undetermined) that one
// is the step's only local basis, and the derivative is two-sided.
#include <algorithm>
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

/// The basis of the answer with the weak rows of `mask` (bit i: weak row i) basic too, in
/// w.basis[0..size): how many short of full rank its matrix is (judged on the values, by
/// Gaussian elimination with complete pivoting; 0: nonsingular). Writes its size.
int basis_deficiency(HalmPosaLcp::DerivativeWork& w, int n_basis, int n_weak, std::uint64_t mask, int& size) {
  const HalmPosaProblem<Jet>& P = w.problem;
  const int n = P.n;
  int k = n_basis;
  for (int i = 0; i < n_weak; ++i)
    if (mask >> i & 1u) w.basis[k++] = w.weak_rows[i];
  size = k;
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

/// The linearisation's step in Jets at the basis w.basis[0..size) (basis_deficiency 0): P.z
/// from the basis system, then finish_about's q_end.
void solve_at_basis(HalmPosaLcp::DerivativeWork& w, int size) {
  HalmPosaProblem<Jet>& P = w.problem;
  const int n = P.n, k = size;
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) w.M[i * k + j] = P.M[w.basis[i] * n + w.basis[j]];
    w.rhs[i] = -P.q_lcp[w.basis[i]];
  }
  solve_linear_in_place(k, w.M.data(), k, w.rhs.data());  // nonsingular: its values pivot alike
  for (int r = 0; r < n; ++r) P.z[r] = P.w[r] = Jet(0.0);
  for (int i = 0; i < k; ++i) P.z[w.basis[i]] = w.rhs[i];
  halm_posa_detail::finish_about(P, w.q0.data());
}

}  // namespace

Status HalmPosaLcp::differentiate(const Model& m, const WorldParams& p, StepDerivatives& d) {
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

  const int directions = nq + na;  // q0, then u
  for (int first = 0; first < directions; first += kJetWidth) {
    const int width = std::min(kJetWidth, directions - first);
    const auto along = [&](int direction, double value) {
      return direction >= first && direction < first + width ? Jet::variable(value, direction - first) : Jet(value);
    };
    for (int e = 0; e < nq; ++e) w.q0[e] = P.q_lin[e] = along(e, q0[e]);
    for (const Joint& j : m.joints) {
      const int a = j.dof - nu;
      P.uh[a] = Jet(h) * along(nq + a, p.velocity(m, j, t_mid));
    }
    for (int it = 0; it <= params.relinearize_iterations; ++it) {
      const Linearisation& rec = linearisations_[static_cast<size_t>(it)];
      halm_posa_detail::pose_about(m, p, P, w.q0.data());
      for (int i = 0; i < P.ns; ++i) {  // the slots the step's LCP had
        P.active[i] = rec.in_lcp[i] != 0;
        P.unreached[i] = false;
      }
      halm_posa_detail::fill_lcp(m, P, w.mu.data());
      int n_basis = 0, n_weak = 0;
      d.margin = std::min(d.margin, classify(P, rec.z, rec.w, w.basis, n_basis, w.weak_rows, n_weak));
      // The weak rows' sides. First the fewest weak rows basic that make the basis
      // nonsingular (each kept where it lowers the basis' rank deficiency): a sticking
      // contact's idle slip row or an unpressed contact's slip row that fixes gamma is needed
      // there, and is no switch. Then each other weak row taken basic too: where that is a
      // basis with another derivative, the step is at a switch (the first one is returned:
      // those rows' impulses stay zero, the separating side).
      if (n_weak > kMaxWeak) {
        d.detail = "the step's LCP has " + std::to_string(n_weak) + " complementarity pairs at zero on both sides, "
                   "more than the derivative resolves (" + std::to_string(kMaxWeak) + ")";
        return Status::numerical_failure;
      }
      std::uint64_t chosen = 0;
      int size = 0;
      int deficiency = basis_deficiency(w, n_basis, n_weak, chosen, size);
      // Passes until one adds nothing: a row that does not help at first may once others are in.
      for (bool added = true; added && deficiency > 0;) {
        added = false;
        for (int i = 0; i < n_weak && deficiency > 0; ++i) {
          if (chosen >> i & 1u) continue;
          const int with = basis_deficiency(w, n_basis, n_weak, chosen | std::uint64_t{1} << i, size);
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
      basis_deficiency(w, n_basis, n_weak, chosen, size);
      solve_at_basis(w, size);
      for (int e = 0; e < nq; ++e) w.q_end[e] = P.q_end[e];
      for (int i = 0; i < n_weak; ++i) {
        if (chosen >> i & 1u) continue;
        if (basis_deficiency(w, n_basis, n_weak, chosen | std::uint64_t{1} << i, size) > 0) continue;
        solve_at_basis(w, size);
        for (int e = 0; e < nq; ++e)
          for (int k = 0; k < width; ++k)
            if (std::abs(P.q_end[e].d[k] - w.q_end[e].d[k]) > 1e-8 * (1 + std::abs(w.q_end[e].d[k]))) {
              d.degenerate = true;
              d.margin = 0;
            }
      }
      for (int e = 0; e < nq; ++e) P.q_end[e] = w.q_end[e];  // the first piece's
      for (int e = 0; e < nq; ++e) P.q_lin[e] = P.q_end[e];
    }
    for (int k = 0; k < width; ++k) {
      const int direction = first + k;
      for (int e = 0; e < nq; ++e) {
        const double value = P.q_end[e].d[k];
        if (!std::isfinite(value)) {
          d.detail = "the derivative is not finite (" + three_digits(value) + ")";
          return Status::numerical_failure;
        }
        if (direction < nq) d.A(e, direction) = value;
        else d.B(e, direction - nq) = value;
      }
    }
  }
  return Status::solved;
}

}  // namespace qs

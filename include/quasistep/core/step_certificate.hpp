// LP certificates that a quasistatic time step has no solution.
//
// When Lemke's method ends on a ray for a step's LCP (Trinkle's, Pang & Tedrake 2018, eq. 23 as set up
// in core/formulations/trinkle_lcp/trinkle_lcp.cpp, or the perfect-velocity time-stepping of Halm & Posa 2018, eqs. 13-14),
// that is not a proof that the step has no solution. This file proves it, by linear
// programming, whenever one of two necessary conditions of every LCP solution fails:
//
// (a) Penetration. Every active contact must end non-penetrating (Pang & Tedrake 2018, eqs. 12-13):
//     some dq_u (free, n_u entries) must satisfy
//         offset + J dq_u >= 0,      J = J_n^u (n_c x n_u),  offset = phi + J_n^a dqa_bar.
//     By Farkas' lemma (Schrijver, "Theory of Linear and Integer Programming", cor. 7.1e:
//     A x <= b has no solution iff y >= 0, y'A = 0, y'b < 0 has one) it has none iff some
//         y >= 0 (n_c):   J' y = 0   and   offset' y < 0.
//     Physically: put fictitious normal forces y_c on the contacts. J' y = 0 says they
//     balance on the free DOFs, so no motion of the free bodies changes the y-weighted sum of
//     the contact gaps; offset' y < 0 says that sum is negative already, whatever dq_u is.
//     With y scaled to sum 1 the sum is a weighted average, so every dq_u leaves some contact
//     with y_c > 0 penetrating by at least gap = -offset' y (metres). Typical causes: fingers
//     driven into each other, or an object squeezed by velocity commands from both sides.
//
// (b) Equilibrium (Trinkle's model only). The contact impulses must balance the load, seed
//     000 eq. 23a, with each impulse in its polyhedral friction cone (eqs. 4, 17): some
//         P_n, P_t+, P_t- >= 0 (n_c each),   mu P_n - P_t+ - P_t- >= 0,
//         J_n^u' P_n + J_t^u' (P_t+ - P_t-) + h tau_u = 0.
//     With a slack on each cone row this is {A x = b, x >= 0}, and by Farkas' lemma
//     (Schrijver cor. 7.1d: it is empty iff y'A >= 0, y'b < 0 for some y; v is the part of
//     y on the balance rows) it has none iff some virtual displacement v (n_u) has
//         J_n^u v >= mu |J_t^u v|   (each contact row)   and   h tau_u' v > 0.
//     Physically: along v every contact opens at least mu times as fast as it slides, so any
//     impulse in a friction cone does non-negative work along v (P_n J_n v + P_t J_t v >=
//     P_n (J_n v - mu |J_t v|) >= 0): the contacts cannot resist a motion along v, while the
//     load does positive work along it. Then (J' P + h tau_u)' v > 0 for every admissible P,
//     so the balance cannot hold. With |v|_2 = 1 (Cauchy-Schwarz) every admissible P leaves
//     an unbalanced generalized impulse of norm at least gap = h tau_u' v (N s for
//     translational DOFs). Examples: a body with no contact under gravity (v = down), a
//     block on a slope steeper than atan(mu) (v = downhill, tilted off the slope).
//
// Each LP is posed in the bounded standard form of quasistep/kernels/dense_lp.hpp with
// row_bounds_to_standard_form, and its Farkas vector (DenseLp::farkas(), already checked by
// verify_farkas on the LP) is turned into y or v above, normalised, and checked again on the
// original data by the verify_* functions below, so a certificate never rests on trust in
// the LP. A feasible LP proves nothing (the conditions are necessary, not sufficient): the
// step may still have no solution for other reasons (complementarity).
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <span>
#include <string>

#include "quasistep/kernels/dense_lp.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

/// Which necessary condition of a step fails, and the verified proof.
struct StepCertificate {
  enum class Kind { none, penetration, equilibrium };
  Kind kind = Kind::none;
  /// penetration: the Farkas multipliers per contact (n_c), y >= 0, sum 1;
  /// equilibrium: the virtual displacement v of the free DOFs (n_u), |v|_2 = 1.
  Eigen::VectorXd y;
  /// The Farkas gap (> 0): penetration, -offset' y, the penetration (m) that some contact
  /// with y_c > 0 keeps under every dq_u; equilibrium, h tau_u' v, a lower bound on the norm
  /// of the unbalanced impulse (N s) under every admissible contact impulse.
  double gap = 0;

  /// One line for logs and error messages. `contact_labels` names the contact rows (e.g.
  /// slot names), `dof_labels` the free DOFs; either may be empty (indices are printed).
  std::string describe(std::span<const std::string> contact_labels = {},
                       std::span<const std::string> dof_labels = {}) const;
};

/// Checks a penetration certificate on the original data (y any positive multiple of the
/// certificate): sizes, y >= 0 and not all zero, and with y scaled to sum 1
///   |(J' y)_j| <= tol * sum_c |J_cj| y_c   for every column j,
///   -offset' y >  tol * sum_c |offset_c| y_c.
bool verify_penetration_certificate(Eigen::Ref<const Eigen::MatrixXd> J, Eigen::Ref<const Eigen::VectorXd> offset,
                                    Eigen::Ref<const Eigen::VectorXd> y, double tol = 1e-9);

/// Checks an equilibrium certificate on the original data (v any positive multiple): sizes,
/// v != 0, and with v scaled to |v|_2 = 1, for every contact c
///   J_n,c v - mu_c |J_t,c v| >= -tol * (sum_j |J_n,cj v_j| + mu_c sum_j |J_t,cj v_j|),
/// and  h_tau_u' v > tol * sum_j |h_tau_u,j v_j|.
bool verify_equilibrium_certificate(Eigen::Ref<const Eigen::MatrixXd> Jn_u, Eigen::Ref<const Eigen::MatrixXd> Jt_u,
                                    Eigen::Ref<const Eigen::VectorXd> mu, Eigen::Ref<const Eigen::VectorXd> h_tau_u,
                                    Eigen::Ref<const Eigen::VectorXd> v, double tol = 1e-9);

/// Poses and solves the two LPs. Owns a DenseLp and its problem buffers, sized once for at
/// most max_contacts contacts and max_free free DOFs; the calls allocate nothing beyond
/// resizing cert.y. Not for a hot loop: call it after a step failed, to explain why.
class StepCertifier {
 public:
  StepCertifier(int max_contacts, int max_free, double tol = 1e-9);

  /// Condition (a): J is n_c x n_u (J_n^u of the active contacts), offset has n_c entries.
  /// infeasible: proven, cert filled (kind penetration); solved: some dq_u keeps every
  /// contact non-penetrating (no proof, cert.kind none; also when n_c = 0); bad_input: sizes
  /// that do not match or exceed the capacity, NaN/Inf; numerical_failure /
  /// iteration_limit: the LP failed, or its certificate failed the check on the data.
  Status penetration(Eigen::Ref<const Eigen::MatrixXd> J, Eigen::Ref<const Eigen::VectorXd> offset,
                     StepCertificate& cert);

  /// Condition (b): Jn_u, Jt_u are n_c x n_u, mu (>= 0) has n_c entries, h_tau_u = h tau_u
  /// has n_u. Statuses as above (kind equilibrium). With n_u = 0 nothing needs balancing
  /// (solved); with n_c = 0 the step is infeasible iff h_tau_u != 0, and v = h_tau_u / |h_tau_u|.
  Status equilibrium(Eigen::Ref<const Eigen::MatrixXd> Jn_u, Eigen::Ref<const Eigen::MatrixXd> Jt_u,
                     Eigen::Ref<const Eigen::VectorXd> mu, Eigen::Ref<const Eigen::VectorXd> h_tau_u,
                     StepCertificate& cert);

  /// The LP of the last call that reached it (for inspection).
  const DenseLp& lp() const { return lp_; }

 private:
  int max_contacts_, max_free_;
  double tol_;
  DenseLp lp_;
  // Inequality form (equilibrium's A_in; the bounds of both), then the standard form.
  Eigen::MatrixXd a_in_;
  Eigen::VectorXd row_lo_, row_hi_, c_in_, lo_in_, hi_in_;
  Eigen::MatrixXd a_;
  Eigen::VectorXd b_, c_, lo_, hi_;
};

}  // namespace qs

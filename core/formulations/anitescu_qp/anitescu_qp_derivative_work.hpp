// AnitescuQp::differentiate's workspace (anitescu_qp_derivatives.cpp), sized once from the
// Model; private to the stepper (anitescu_qp.cpp destroys it).
#pragma once

#include <cmath>
#include <vector>

#include "quasistep/core/formulations/anitescu_qp/anitescu_lanes.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/jet.hpp"
#include "quasistep/core/number_text.hpp"
#include "quasistep/kernels/kkt_sensitivity.hpp"

namespace qs {

struct AnitescuQp::DerivativeWork {
  explicit DerivativeWork(const Model& m)
      : problem(m),
        q(static_cast<std::size_t>(m.n_q())),
        reference(static_cast<std::size_t>(std::max(m.n_a, 1))),
        mu(std::max<std::size_t>(m.pairs.size(), 1)),
        kkt(std::max(m.n_q(), 1), 2 * kMaxContacts, m.n_q() + m.n_a),
        A_S(Eigen::MatrixXd::Zero(2 * kMaxContacts, std::max(m.n_q(), 1))),
        R1(Eigen::MatrixXd::Zero(std::max(m.n_q(), 1), m.n_q() + m.n_a)),
        R2(Eigen::MatrixXd::Zero(2 * kMaxContacts, m.n_q() + m.n_a)),
        dv(R1),
        G(Eigen::MatrixXd::Zero(std::max(m.n_q(), 1), std::max(m.n_q(), 1))),
        L(G),
        active_rows(2 * kMaxContacts),
        dc(Eigen::MatrixXd::Zero(std::max(m.n_q(), 1), std::max(m.n_q(), 1))),
        dMu(Eigen::MatrixXd::Zero(std::max(m.n_u * m.n_u, 1), std::max(m.n_q(), 1))),
        djn(Eigen::MatrixXd::Zero(std::max(m.n_slots() * m.n_q(), 1), std::max(m.n_q(), 1))),
        djt(djn),
        db(Eigen::MatrixXd::Zero(std::max(m.n_slots(), 1), std::max(m.n_q(), 1))),
        posed(static_cast<std::size_t>(std::max(m.n_slots(), 1)), 0),
        q_key(static_cast<std::size_t>(m.n_q())) {}
  AnitescuProblem<Jet> problem;    // the step's problem with derivatives along q
  std::vector<Jet> q, reference, mu;
  KktSensitivity kkt;
  Eigen::MatrixXd A_S;             // (active rows x n_q)
  Eigen::MatrixXd R1, R2, dv;      // (n_q x k), (active rows x k), (n_q x k); k = n_q + n_a
  Eigen::MatrixXd G, L;            // the smoothed step: the barrier problem's Hessian, its Cholesky factor
  std::vector<int> active_rows;    // the compact rows (AnitescuQp::problem()) in A_S
  // The problem's derivatives along q (columns: q's directions), kept for a step from the
  // same state and parameters (AnitescuQp::data_derivatives): dc, dM_u (row-major entries),
  // dJ_n and dJ_t (slot-major rows of n_q), db of each slot's rows, for the slots posed.
  Eigen::MatrixXd dc, dMu, djn, djt, db;
  std::vector<char> posed;
  bool cached = false;             // the above hold for model, q_key, t and params
  const Model* model = nullptr;
  std::vector<double> q_key;
  double t = 0;
  WorldParams params;              // h, scaled, body_mass, body_pose, body_scale, joint_gain

  /// The inputs of those derivatives but the slots posed are the step's: the model, q, the
  /// time and every parameter the problem reads but the commands (and the friction, which
  /// they do not contain: dA is formed from dJ_n and dJ_t).
  bool same_problem(const Model& m, const double* q, double t_start, const WorldParams& p) const {
    if (!cached || model != &m || t != t_start || params.h != p.h || params.scaled != p.scaled) return false;
    for (int e = 0; e < m.n_q(); ++e)
      if (q_key[static_cast<std::size_t>(e)] != q[e]) return false;
    return params.body_mass == p.body_mass && params.body_pose == p.body_pose && params.body_scale == p.body_scale &&
           params.joint_gain == p.joint_gain;
  }
};

/// The step's A and B from the velocity's derivative dv (n x (n + n_a): along q, then q̄_a),
/// for q+ = q + h v and q̄_a+ = q̄_a + h u: A = [I + h dv/dq, h dv/dq̄_a; 0, I],
/// B = [h dv/du; h I] (d.A enters as I, d.B with its h I). The commands need no columns of
/// their own: u enters the problem only through q̄_a' = q̄_a + h u (c's reference term), so
/// dv/du = h dv/dq̄_a. numerical_failure, with the reason, where dv is not finite.
inline Status velocity_derivatives_to_step(const Eigen::Ref<const Eigen::MatrixXd>& dv, int n, int na, double h,
                                           StepDerivatives& d) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n + na; ++j)
      if (!std::isfinite(dv(i, j))) {
        d.detail = "the derivative is not finite (" + three_digits(dv(i, j)) + ")";
        return Status::numerical_failure;
      }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) d.A(i, j) += h * dv(i, j);
    for (int a = 0; a < na; ++a) {
      d.A(i, n + a) = h * dv(i, n + a);
      d.B(i, a) = h * (h * dv(i, n + a));
    }
  }
  return Status::solved;
}

/// The Cholesky factor L (lower triangle) of the symmetric G's leading n x n block, in place
/// of L's; a pivot not above `tolerance` times its own diagonal entry G_kk (a ratio free of
/// the DOFs' units, as AnitescuQp::mass_matrix's) makes G singular there: its index, else -1.
inline int barrier_cholesky(const Eigen::MatrixXd& G, Eigen::MatrixXd& L, int n, double tolerance) {
  for (int k = 0; k < n; ++k) {
    double d = G(k, k);
    for (int p = 0; p < k; ++p) d -= L(k, p) * L(k, p);
    if (!(d > tolerance * G(k, k))) return k;
    d = std::sqrt(d);
    L(k, k) = d;
    for (int i = k + 1; i < n; ++i) {
      double s = G(i, k);
      for (int p = 0; p < k; ++p) s -= L(i, p) * L(k, p);
      L(i, k) = s / d;
    }
  }
  return -1;
}
/// x := G^-1 x for the factor of barrier_cholesky (forward, then back substitution).
template <class Vector>
void barrier_solve(const Eigen::MatrixXd& L, int n, Vector&& x) {
  for (int i = 0; i < n; ++i) {
    double s = x[i];
    for (int p = 0; p < i; ++p) s -= L(i, p) * x[p];
    x[i] = s / L(i, i);
  }
  for (int i = n - 1; i >= 0; --i) {
    double s = x[i];
    for (int p = i + 1; p < n; ++p) s -= L(p, i) * x[p];
    x[i] = s / L(i, i);
  }
}

}  // namespace qs

// Internal to the MIQP step's files (pang_tedrake_miqp*.cpp): the node relaxation both
// stages search over, and what a probe and the root evaluation keep.
#pragma once

#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

namespace qs {

// The node relaxation of both stages. Complementarity pairs are numbered per model slot,
// pair 4 i + t for slot i and type t (0: phi^+/P_n, 1: rho+/P_t+, 2: rho-/P_t-, 3: s/Gamma),
// so the branch-and-bound is sized once; pairs of inactive slots are never branched on.
// The QP's inequality rows are the 4 nc left sides, then the nc elastic bounds; a pair
// fixed "first" (left side = 0) adds its row to the equalities, a pair fixed "second"
// (variable = 0) sets the variable's upper bound to 0.
struct PangTedrakeMiqp::Problem {
  struct Workspace {
    std::unique_ptr<DenseQp> qp;
    Eigen::MatrixXd A_eq;
    Eigen::VectorXd b_eq, upper;
    // The last node this workspace solved, for a hot start (DenseQp::solve_hot): the
    // problem's generation then, its fixings and the label of each of its equality rows
    // (-1 - r: row r of the stage's own equalities; d >= 0: pair d fixed "first").
    long generation = -1;
    std::vector<Side> fixings;
    std::vector<int> labels, row_of_label, eq_map;
    int rows = 0;
    // root_optimal_at()'s scratch: which equality rows and fixed variables it relaxes, and
    // the root relaxation's multipliers it checks.
    std::vector<std::uint8_t> relax_eq, relax_fixed;
    Eigen::VectorXd y, z, w;
  };
  using Warm = QpWorkingSet;
  /// A leaf's point and its QP's final working set: stage 1's answer warm-starts stage 2's
  /// root (the same constraints plus dq_a = dq_a*, which that point satisfies).
  struct Solution {
    Eigen::VectorXd x;
    QpWorkingSet ws;
  };

  int n_slots = 0;
  int nu = 0, na = 0, nc = 0, n = 0, m_eq = 0, m_in = 0;
  std::vector<int> contact_of_slot;  // (n_slots) index among the active contacts, -1 inactive
  std::vector<char> length_dof;      // (n_q) the DOF is a length (a body's x, y; a prismatic joint)
  double shape_size = 0;             // largest_shape_size of the model (m)
  double hK = 0;                     // h K of the step (N s / m: an impulse per length)
  Eigen::MatrixXd H, A_eq, A_in;     // sized for the largest problem; top-left blocks used
  Eigen::VectorXd c, b_eq, b_in, lower, upper;
  double constant = 0;               // added to the QP objective to make the stage's cost
  double tolerance = 1e-9;
  int max_n = 0, max_eq = 0, max_in = 0;
  /// Stage 2: stage 1's answer (a point satisfying every pair) and its stage-2 cost. A node
  /// whose fixings it satisfies and whose relaxation cannot beat it (cost >= hint_cost - the
  /// search's tolerance) is a leaf at that point: it is an optimal point of the node's
  /// relaxation to the tolerance, and a complementary one. (null in stage 1)
  const Eigen::VectorXd* hint = nullptr;
  double hint_cost = 0, hint_abs = 0, hint_rel = 0;
  /// Changes whenever the rows of A_in do (every build()): a workspace's last factorization
  /// serves a hot start only within one generation. (Stage 2 keeps A_in.)
  long generation = 0;
  /// A node whose fixings differ from the workspace's last node's in at most this many
  /// pairs (its parent, sibling or a near cousin) starts hot from that factorization.
  static constexpr int kHotDistance = 2;

  int disjunctions() const { return 4 * n_slots; }
  Workspace make_workspace() const {
    Workspace w;
    DenseQpCapacity cap;
    cap.vars = max_n;
    cap.eq_rows = max_eq + 4 * kMaxContacts;
    cap.in_rows = max_in;
    w.qp = std::make_unique<DenseQp>(cap);
    w.A_eq = Eigen::MatrixXd::Zero(cap.eq_rows, max_n);
    w.b_eq = Eigen::VectorXd::Zero(cap.eq_rows);
    w.upper = Eigen::VectorXd::Zero(max_n);
    w.fixings.assign(static_cast<size_t>(disjunctions()), Side::free);
    w.labels.assign(static_cast<size_t>(cap.eq_rows), 0);
    w.row_of_label.assign(static_cast<size_t>(disjunctions() + max_eq), -1);
    w.eq_map.assign(static_cast<size_t>(cap.eq_rows), -1);
    w.relax_eq.assign(static_cast<size_t>(cap.eq_rows), 0);
    w.relax_fixed.assign(static_cast<size_t>(max_n), 0);
    w.y = Eigen::VectorXd::Zero(max_eq);
    w.z = Eigen::VectorXd::Zero(std::max(max_in, 1));
    w.w = Eigen::VectorXd::Zero(max_n);
    return w;
  }
  Warm make_warm() const { return QpWorkingSet(max_in, max_n); }
  Solution make_solution() const { return {Eigen::VectorXd::Zero(max_n), QpWorkingSet(max_in, max_n)}; }

  /// The root relaxation of the stage as built (no fixings), and a node's relaxation with
  /// the first `rows` equality rows and the bounds evaluate() wrote into ws.
  DenseQpProblem root_problem() const {
    return {H.topLeftCorner(n, n), c.head(n),         A_eq.topLeftCorner(m_eq, n), b_eq.head(m_eq),
            A_in.topLeftCorner(m_in, n), b_in.head(m_in), lower.head(n),               upper.head(n)};
  }
  DenseQpProblem node_problem(const Workspace& ws, int rows) const {
    return {H.topLeftCorner(n, n),       c.head(n),        ws.A_eq.topLeftCorner(rows, n), ws.b_eq.head(rows),
            A_in.topLeftCorner(m_in, n), b_in.head(m_in), lower.head(n),                  ws.upper.head(n)};
  }

  int pair_row(int c, int t) const { return t * nc + c; }           // row of A_in
  int pair_var(int c, int t) const { return nu + na + t * nc + c; }  // P_n, P_t+, P_t-, Gamma

  BnbEvaluation evaluate(const Side* fix, const Warm* parent, Workspace& ws, Warm& warm_out, Solution& sol) const {
    // Where each label's row lands in this node (for mapping the last node's rows).
    const int K = disjunctions();
    std::fill(ws.row_of_label.begin(), ws.row_of_label.end(), -1);
    for (int r = 0; r < m_eq; ++r) ws.row_of_label[static_cast<size_t>(K + r)] = r;
    int rows = m_eq;
    ws.A_eq.topLeftCorner(m_eq, n) = A_eq.topLeftCorner(m_eq, n);
    ws.b_eq.head(m_eq) = b_eq.head(m_eq);
    ws.upper.head(n) = upper.head(n);
    for (int i = 0; i < n_slots; ++i) {
      const int c = contact_of_slot[i];
      if (c < 0) continue;
      for (int t = 0; t < 4; ++t) {
        const Side f = fix[4 * i + t];
        if (f == Side::first) {
          ws.A_eq.row(rows).head(n) = A_in.row(pair_row(c, t)).head(n);
          ws.row_of_label[static_cast<size_t>(4 * i + t)] = rows;
          ws.b_eq[rows++] = b_in[pair_row(c, t)];
        } else if (f == Side::second) {
          ws.upper[pair_var(c, t)] = 0.0;
        }
      }
    }
    const DenseQpProblem p = node_problem(ws, rows);
    const bool parent_ok = parent && parent->rows == m_in && parent->cols == n;
    int distance = 0;
    for (int d = 0; d < K; ++d) distance += fix[d] != ws.fixings[static_cast<size_t>(d)];
    Status st;
    if (parent_ok && ws.generation == generation && distance <= kHotDistance) {
      // The last node's equality row k (label l) is this node's row row_of_label[l].
      for (int k = 0; k < ws.rows; ++k) {
        const int l = ws.labels[static_cast<size_t>(k)];
        ws.eq_map[static_cast<size_t>(k)] = ws.row_of_label[static_cast<size_t>(l >= 0 ? l : K + (-1 - l))];
      }
      st = ws.qp->solve_hot(p, *parent, ws.eq_map.data());
    } else {
      st = parent_ok ? ws.qp->solve(p, *parent) : ws.qp->solve(p);
    }
    // This node is now the workspace's last.
    ws.generation = generation;
    std::copy(fix, fix + K, ws.fixings.begin());
    ws.rows = rows;
    for (int r = 0; r < m_eq; ++r) ws.labels[static_cast<size_t>(r)] = -1 - r;
    for (int d = 0; d < K; ++d)
      if (ws.row_of_label[static_cast<size_t>(d)] >= 0)
        ws.labels[static_cast<size_t>(ws.row_of_label[static_cast<size_t>(d)])] = d;
    if (st == Status::infeasible) return {Status::infeasible, 0, -1};
    if (st != Status::solved) return {st == Status::unbounded ? Status::numerical_failure : st, 0, -1};
    warm_out = ws.qp->working_set();
    Eigen::VectorXd& x = sol.x;
    x.head(n) = ws.qp->x();
    // Branch on the most violated free pair, each against its own row's terms.
    int branch = -1;
    double worst = tolerance;
    for (int i = 0; i < n_slots; ++i) {
      const int c = contact_of_slot[i];
      if (c < 0) continue;
      for (int t = 0; t < 4; ++t) {
        if (fix[4 * i + t] != Side::free) continue;
        const double v = pair_violation(c, t, x);
        if (v > worst) {
          worst = v;
          branch = 4 * i + t;
        }
      }
    }
    double cost = ws.qp->objective() + constant;
    if (branch >= 0 && hint && hint_cost <= cost + hint_abs + hint_rel * std::abs(cost) && hint_satisfies(fix)) {
      sol.x.head(n) = hint->head(n);
      branch = -1;
      cost = std::max(cost, hint_cost);  // the returned point's own cost
    }
    if (branch < 0) sol.ws = warm_out;
    return {Status::solved, cost, branch};
  }

  /// |min(left, right)| of pair (c, t) relative to 1 + |b_i| + sum_j |A_ij x_j| (the row's
  /// own terms, as the QP kernel's primal check: a scale from |x|_inf would let one large
  /// entry excuse every other pair).
  double pair_violation(int c, int t, const Eigen::VectorXd& x) const {
    double scale;
    const double left = pair_left(c, t, x, scale);
    return std::abs(std::min(left, x[pair_var(c, t)])) / scale;
  }

  /// The left side of pair (c, t) at x, and its row's scale 1 + |b_i| + sum_j |A_ij x_j|
  /// (and, where asked for, its terms |b_i| + sum_j |A_ij x_j| without the floor of 1).
  double pair_left(int c, int t, const Eigen::VectorXd& x, double& scale, double* terms = nullptr) const {
    const int i = pair_row(c, t);
    double left = -b_in[i];
    scale = 1.0 + std::abs(b_in[i]);
    double sum = std::abs(b_in[i]);
    for (int j = 0; j < n; ++j) {
      left += A_in(i, j) * x[j];
      scale += std::abs(A_in(i, j) * x[j]);
      sum += std::abs(A_in(i, j) * x[j]);
    }
    if (terms) *terms = sum;
    return left;
  }

  /// The side of pair (c, t) that x satisfies best: the one nearer zero (first: the left
  /// side, second: the variable), the polish's fixing for it.
  Side side_at(int c, int t, const Eigen::VectorXd& x) const {
    double scale;
    return std::abs(pair_left(c, t, x, scale)) <= std::abs(x[pair_var(c, t)]) ? Side::first : Side::second;
  }

  /// After evaluate(fix, ..., ws, ...) solved a stage-2 node: whether its optimum is also the
  /// root relaxation's (the node's KKT point with the fixings released: a pair row fixed
  /// "first" back to >= 0, a variable fixed "second" back to >= 0).
  ///  - When every fixing's multiplier has the sign of the inequality it fixes, by the QP
  ///    solver's own test (DenseQpOptions::multiplier_tol on the gradient c, |c|_inf = 1),
  ///    the node's multipliers are the root's.
  ///  - Otherwise the optimum may be degenerate, the multipliers one choice among many: on
  ///    Pang & Tedrake's (2018) lift steps both fingers' normal rows pin the cylinder from the two sides,
  ///    one of them is left out of the working set as dependent, and the other's multiplier
  ///    is -200 N s/m. DenseQp::optimal_when_relaxed makes the degenerate exchanges at the
  ///    point, and the multipliers it ends with are checked against the root's own data
  ///    (qp_kkt_residual, the kernel's tolerance): the fixing rows' multipliers go to their
  ///    pair rows. (One QP instead of two on three of those steps in four; see
  ///    stage_two() for the fourth.) `exchanged` says that this second way was taken.
  bool root_optimal_at(const Side* fix, Workspace& ws, bool& exchanged) const {
    exchanged = false;
    DenseQp& qp = *ws.qp;
    const double tol = qp.options().multiplier_tol * (1.0 + c.head(n).cwiseAbs().maxCoeff());
    bool signs = true;
    for (int k = 0; k < ws.rows && signs; ++k) {
      const int d = ws.labels[static_cast<size_t>(k)];
      if (d < 0) continue;  // the stage's own equalities
      const int cc = contact_of_slot[d / 4];
      signs = qp.y()[k] * A_in.row(pair_row(cc, d % 4)).head(n).norm() >= -tol;
    }
    for (int i = 0; i < n_slots && signs; ++i) {
      const int cc = contact_of_slot[i];
      if (cc < 0) continue;
      for (int t = 0; t < 4; ++t)
        if (fix[4 * i + t] == Side::second && qp.bound_multipliers()[pair_var(cc, t)] < -tol) signs = false;
    }
    if (signs) return true;
    exchanged = true;
    // The degenerate exchanges, on the node's problem as evaluate() posed it.
    for (int k = 0; k < ws.rows; ++k) ws.relax_eq[static_cast<size_t>(k)] = ws.labels[static_cast<size_t>(k)] >= 0;
    std::fill(ws.relax_fixed.begin(), ws.relax_fixed.begin() + n, 0);
    for (int i = 0; i < n_slots; ++i) {
      const int cc = contact_of_slot[i];
      if (cc < 0) continue;
      for (int t = 0; t < 4; ++t)
        if (fix[4 * i + t] == Side::second) ws.relax_fixed[static_cast<size_t>(pair_var(cc, t))] = 1;
    }
    if (!qp.optimal_when_relaxed(node_problem(ws, ws.rows), ws.relax_eq.data(), ws.relax_fixed.data())) return false;
    // The root's multipliers: its own equalities', the rows' plus the fixing rows' (as
    // their pair rows'), the bounds'.
    ws.y.head(m_eq) = qp.y().head(m_eq);
    ws.z.head(m_in) = qp.z();
    for (int k = m_eq; k < ws.rows; ++k) {
      const int d = ws.labels[static_cast<size_t>(k)];
      ws.z[pair_row(contact_of_slot[d / 4], d % 4)] += qp.y()[k];
    }
    ws.w.head(n) = qp.bound_multipliers();
    return qp_kkt_residual(root_problem(), qp.x(), ws.y.head(m_eq), ws.z.head(m_in), ws.w.head(n)) <= qp.options().kkt_tol;
  }

  /// The hint holds each fixing's side: left side = 0 (first) or variable = 0 (second), to
  /// the tolerance of pair_violation.
  bool hint_satisfies(const Side* fix) const {
    const Eigen::VectorXd& x = *hint;
    for (int i = 0; i < n_slots; ++i) {
      const int c = contact_of_slot[i];
      if (c < 0) continue;
      for (int t = 0; t < 4; ++t) {
        const Side f = fix[4 * i + t];
        if (f == Side::free) continue;
        double scale;
        const double left = pair_left(c, t, x, scale);
        const double v = f == Side::first ? left : x[pair_var(c, t)];
        if (std::abs(v) / scale > tolerance) return false;
      }
    }
    return true;
  }

  /// The largest pair_violation over all pairs: the check of the accepted answer.
  double complementarity(const Eigen::VectorXd& x) const {
    double r = 0;
    for (int c = 0; c < nc; ++c)
      for (int t = 0; t < 4; ++t) r = std::max(r, pair_violation(c, t, x));
    return r;
  }

  /// The pairs judged in the step's own units, the check pair_violation's floor of 1 cannot
  /// make: in a scene whose lengths are 2^-20 m a finger 1 mm inside the cylinder with no
  /// impulse is a violation of 9.5e-10 length units, below any absolute tolerance of order
  /// 1e-9. Each side of each pair is divided by its own unit: a length row (phi^+, rho+-)
  /// by its terms plus the step's length L, the friction row (s) by its terms plus the
  /// step's impulse P; an impulse variable by P, Gamma (a displacement) by L. L is the
  /// largest of the model's shape size, |phi| of the step's contacts, |dq| of its length
  /// DOFs and Gamma; P the largest of |h tau| in the force balance, the impulses and h K
  /// times the shape size (the elastic bound's impulse for that length; P_n / (h K) is a
  /// length). Each bounds its own variables, so a ratio's denominator is 0 only where its
  /// numerator is.
  /// The result, max |min(left, variable)| over the pairs, no change of units alters.
  double unit_complementarity(const Eigen::VectorXd& x) const {
    double L = shape_size, P = hK * shape_size;
    for (int c = 0; c < nc; ++c) L = std::max(L, std::abs(b_in[pair_row(c, 0)]));
    for (int j = 0; j < nu + na; ++j)
      if (length_dof[static_cast<size_t>(j)]) L = std::max(L, std::abs(x[j]));
    for (int e = 0; e < nu; ++e) P = std::max(P, std::abs(b_eq[e]));  // h tau (stage 2 adds dq_a rows)
    for (int c = 0; c < nc; ++c) {
      for (int t = 0; t < 3; ++t) P = std::max(P, std::abs(x[pair_var(c, t)]));
      L = std::max(L, std::abs(x[pair_var(c, 3)]));  // Gamma, a length
    }
    // a / b with 0 / 0 = 0 (a row whose terms are all zero sums to exactly zero).
    const auto ratio = [](double a, double b) { return a == 0 ? 0.0 : a / b; };
    double worst = 0;
    for (int c = 0; c < nc; ++c)
      for (int t = 0; t < 4; ++t) {
        double scale, terms;
        const double left = pair_left(c, t, x, scale, &terms);
        const double row_unit = t == 3 ? P : L, var_unit = t == 3 ? L : P;
        const double v = std::abs(std::min(ratio(left, terms + row_unit), ratio(x[pair_var(c, t)], var_unit)));
        worst = std::isnan(v) ? std::numeric_limits<double>::infinity() : std::max(worst, v);
      }
    return worst;
  }
};

struct PangTedrakeMiqp::Probe {
  Problem::Workspace ws;
};

struct PangTedrakeMiqp::RootProbe {
  Problem::Workspace ws;
  Problem::Warm warm;
  Problem::Solution solution;
  // Stage 2's polish (stage_two()): its fixings, the QP's working set and point.
  std::vector<Side> polish_fixings;
  Problem::Warm polish_warm;
  Problem::Solution polish;
  // Stage 2's root, evaluated before the search (stage_two()).
  Problem::Warm root2_warm;
  Problem::Solution root2;
};

}  // namespace qs

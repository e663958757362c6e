#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

namespace qs {

namespace {
// Stage 2's tolerance (the search's and the hint's): absolute in N s, and relative.
constexpr double kStage2Gap = 1e-12;
constexpr double kStage2Relative = 1e-9;
constexpr double kInf = std::numeric_limits<double>::infinity();
// Searching steps without a polish after one that failed to settle stage 2's root.
constexpr double kPolishRetry = 3.0;
// Streak steps settled by a polish certified through degenerate exchanges before stage 2's
// root goes first again (stage_two()).
constexpr double kCertifiedStreak = 3.0;
}  // namespace

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

  /// The left side of pair (c, t) at x, and its row's scale 1 + |b_i| + sum_j |A_ij x_j|.
  double pair_left(int c, int t, const Eigen::VectorXd& x, double& scale) const {
    const int i = pair_row(c, t);
    double left = -b_in[i];
    scale = 1.0 + std::abs(b_in[i]);
    for (int j = 0; j < n; ++j) {
      left += A_in(i, j) * x[j];
      scale += std::abs(A_in(i, j) * x[j]);
    }
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
  if (m.world.type != WorldType::vertical || !(wp.h > 0) || !(wp.model_stiffness > 0))
    return fail(Status::bad_input, "pang_tedrake_miqp steps a vertical world with h > 0 and stiffness K > 0");
  Problem& p = *problem_;
  ++p.generation;  // new rows: no workspace's factorization carries over
  p.hint = nullptr;
  const double h = wp.h, K = wp.model_stiffness, t_mid = s.t + 0.5 * h;
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
    const double mu = record_.friction[i];
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
    if (m.params.elastic_bound_previous) {
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

int PangTedrakeMiqp::active_contacts() const { return problem_->nc; }

int PangTedrakeMiqp::answer_capacity(const Model& m) { return m.n_q() + 4 * std::min(kMaxContacts, m.n_slots()); }

int PangTedrakeMiqp::key_capacity(const Model& m) {
  return 4 + std::min(kMaxContacts, m.n_slots()) * (4 + 2 * m.n_q()) + m.n_q() + m.n_a;
}

PangTedrakeMiqp::MemoryLayout PangTedrakeMiqp::MemoryLayout::of(const Model& m) {
  const int k = std::min(kMaxContacts, m.n_slots()), cap = answer_capacity(m);
  MemoryLayout l;
  l.phi_bar = 0;
  l.warm_count = l.phi_bar + m.n_slots();
  l.warm_slots = l.warm_count + 1;
  l.warm_active = l.warm_slots + k;
  l.warm_bound = l.warm_active + 5 * k;
  l.warm_point = l.warm_bound + cap;
  l.memo_length = l.warm_point + cap;
  l.memo_key = l.memo_length + 1;
  l.memo_answer = l.memo_key + key_capacity(m);
  l.memo_cost = l.memo_answer + cap;
  l.sides = l.memo_cost + 1;
  l.polish = l.sides + 4 * m.n_slots();
  l.size = l.polish + 1;
  return l;
}

int PangTedrakeMiqp::memory_size(const Model& m) { return MemoryLayout::of(m).size; }

void PangTedrakeMiqp::start_memory(const Model& m, const double*, double* memory) {
  std::fill(memory, memory + memory_size(m), std::numeric_limits<double>::infinity());
}

int PangTedrakeMiqp::memo_key(const Model& m, const WorldParams& wp) {
  // Everything build() poses the step's problem from (and stage 2 reads): h, K, the bound's
  // variant, per active contact its slot, friction, gap, elastic bound (under `previous`
  // from the memory) and Jacobian rows, the generalized force and the command.
  const Problem& p = *problem_;
  double* k = key_.data();
  int len = 0;
  k[len++] = wp.h;
  k[len++] = wp.model_stiffness;
  k[len++] = m.params.elastic_bound_previous ? 1.0 : 0.0;
  k[len++] = p.nc;
  for (int c = 0; c < p.nc; ++c) {
    const int i = record_.slots[c];
    k[len++] = i;
    k[len++] = record_.friction[i];
    k[len++] = record_.geometry.frame[i].phi;
    k[len++] = p.b_in[4 * p.nc + c];
    for (int e = 0; e < m.n_q(); ++e) k[len++] = record_.geometry.J_n(i, e);
    for (int e = 0; e < m.n_q(); ++e) k[len++] = record_.geometry.J_t(i, e);
  }
  for (int e = 0; e < m.n_q(); ++e) k[len++] = tau_[e];
  for (int a = 0; a < m.n_a; ++a) k[len++] = dqa_bar_[a];
  return len;
}

bool PangTedrakeMiqp::memo_matches(const State& s) const {
  const int len = key_length_;
  if (s.memory.size() != memory_.size) return false;
  const double* memory = s.memory.data();
  // Bitwise (memcmp: -0.0 is not 0.0 here), so the problem is exactly the same one.
  return memory[memory_.memo_length] == static_cast<double>(len) &&
         std::memcmp(memory + memory_.memo_key, key_.data(), static_cast<std::size_t>(len) * sizeof(double)) == 0;
}

bool PangTedrakeMiqp::load_root_warm(const Model& m, const State& s) {
  const Problem& p = *problem_;
  if (s.memory.size() != memory_.size || p.nc == 0) return false;
  const int k = std::min(kMaxContacts, m.n_slots()), nd = m.n_u + m.n_a;
  const double* memory = s.memory.data();
  const double count = memory[memory_.warm_count];
  if (!(count >= 1 && count <= k)) return false;  // none (+inf)
  const int prev_nc = static_cast<int>(count);
  const double* slots = memory + memory_.warm_slots;
  const double* active = memory + memory_.warm_active;
  const double* bound = memory + memory_.warm_bound;
  const double* x = memory + memory_.warm_point;
  const auto state = [](double v) { return static_cast<QpBoundState>(static_cast<int>(v)); };
  // Mapped by slot: a contact of both steps takes its rows, bounds and impulses from the
  // last step; a new one starts with its rows inactive and its impulses at zero.
  QpWorkingSet& ws = root_warm_;
  ws.rows = p.m_in;
  ws.cols = p.n;
  for (int j = 0; j < nd; ++j) {
    ws.bound[j] = state(bound[j]);
    ws.x[j] = x[j];
  }
  int shared = 0;
  for (int c = 0; c < p.nc; ++c) {
    int pc = -1;
    for (int d = 0; d < prev_nc && pc < 0; ++d)
      if (slots[d] == static_cast<double>(record_.slots[c])) pc = d;
    for (int t = 0; t < 4; ++t) {
      const int var = p.pair_var(c, t), prev_var = nd + t * prev_nc + pc;
      ws.active[p.pair_row(c, t)] = pc >= 0 && active[t * prev_nc + pc] != 0.0;
      ws.bound[var] = pc >= 0 ? state(bound[prev_var]) : QpBoundState::at_lower;
      ws.x[var] = pc >= 0 ? x[prev_var] : 0.0;
    }
    ws.active[4 * p.nc + c] = pc >= 0 && active[4 * prev_nc + pc] != 0.0;  // elastic bound
    shared += pc >= 0;
  }
  ws.has_point = true;
  ws.point_is_guess = true;  // the last step's point, in this step's moved data
  return shared > 0;
}

void PangTedrakeMiqp::store_memory(const Model& m, State& s) {
  const Problem& p = *problem_;
  const MemoryLayout& l = memory_;
  if (s.memory.size() != l.size) s.memory.setConstant(l.size, std::numeric_limits<double>::infinity());  // once
  double* memory = s.memory.data();
  for (int i = 0; i < m.n_slots(); ++i) memory[l.phi_bar + i] = phi_bar_[i];
  memory[l.polish] = polish_record_;
  // The answer's side of each pair (0: slot inactive), for the next step's polish.
  double* sides = memory + l.sides;
  for (int i = 0; i < m.n_slots(); ++i) {
    const int c = p.contact_of_slot[i];
    for (int t = 0; t < 4; ++t)
      sides[4 * i + t] = c < 0 ? 0.0 : static_cast<double>(static_cast<int>(p.side_at(c, t, x_)));
  }
  // This step's key and answer, for the next step (memo_matches()).
  const int len = key_length_;  // this step's key (step())
  memory[l.memo_length] = len;
  std::copy(key_.data(), key_.data() + len, memory + l.memo_key);
  std::copy(x_.data(), x_.data() + p.n, memory + l.memo_answer);
  memory[l.memo_cost] = cost_;
  const QpWorkingSet& ws = stage1_answer_;
  if (!ws.has_point || ws.rows != p.m_in || ws.cols != p.n) {
    memory[l.warm_count] = std::numeric_limits<double>::infinity();  // nothing to hand on
    return;
  }
  memory[l.warm_count] = p.nc;
  for (int c = 0; c < p.nc; ++c) memory[l.warm_slots + c] = record_.slots[c];
  double* active = memory + l.warm_active;
  double* bound = memory + l.warm_bound;
  double* x = memory + l.warm_point;
  for (int i = 0; i < p.m_in; ++i) active[i] = ws.active[i] ? 1.0 : 0.0;
  for (int j = 0; j < p.n; ++j) {
    bound[j] = static_cast<double>(static_cast<int>(ws.bound[j]));
    x[j] = ws.x[j];
  }
}

PangTedrakeMiqp::View PangTedrakeMiqp::view() const {
  const Problem& p = *problem_;
  return View{p.root_problem(), p.constant, p.nu, p.na, p.nc, record_.slots};
}

Status PangTedrakeMiqp::stage_two(double x1_grip, double last_record, const double* last_sides) {
  Problem& p = *problem_;
  const bool polish = !(last_record < 0.0);
  RootProbe& rp = *root_probe_;
  // Stage 2's root is evaluated on the root probe's workspace, hot from stage 1's root
  // there when that was a leaf (the same constraints, stage 2's equalities), and then
  // trades places with the search's workspace 0, where the search expects the root's
  // factorization (its children start hot from it). A polish goes on whichever of the two
  // does not hold a root.
  Problem::Workspace* polish_ws = &bnb_->workspace(0);
  const int n = p.n;
  stage2_ = BnbStats{};
  // x1 is the hint: a node it fits and whose relaxation cannot beat it is a leaf at x1.
  x1_.head(n) = hint_x_.head(n);
  const Eigen::VectorXd& x1 = x1_;
  p.hint = &hint_x_;
  p.hint_cost = x1_grip;
  p.hint_abs = kStage2Gap;
  p.hint_rel = kStage2Relative;
  long polished = 0;
  bool hint_polished = false;  // the hint is a polish's point, not x1
  const auto settled = [&](long qps) {
    p.hint = nullptr;
    polish_record_ = 1.0;
    stage2_.nodes = qps;
    stage2_.leaves = stage2_.rounds = 1;
    x_.head(n) = hint_x_.head(n);
    return Status::solved;
  };
  // A polish: every pair fixed to a side and stage 2's QP solved there, with the sides of
  // the last step's answer (where its slot was active then; a grip that slips goes on
  // slipping) or with the sides x1 satisfies (the one nearer zero; x1 is feasible there).
  // A solved polish is a complementary point: the hint when it grips less. False when the
  // pattern is the one just tried.
  bool exchanged = false;  // the last polish's root_optimal_at took degenerate exchanges
  const auto run_polish = [&](bool last, bool& root_optimal) {
    root_optimal = false;
    bool differs = polished == 0;
    for (int i = 0; i < p.n_slots; ++i) {
      const int c = p.contact_of_slot[i];
      for (int t = 0; t < 4; ++t) {
        const size_t d = static_cast<size_t>(4 * i + t);
        Side side = Side::free;
        if (c >= 0) {
          side = p.side_at(c, t, x1);
          const double l = last && last_sides ? last_sides[d] : 0.0;
          if (l == 1.0 || l == 2.0) side = static_cast<Side>(static_cast<int>(l));
        }
        differs = differs || side != rp.polish_fixings[d];
        rp.polish_fixings[d] = side;
      }
    }
    if (!differs) return false;
    const Eigen::VectorXd* hint = p.hint;
    p.hint = nullptr;  // the polish is a plain QP
    const BnbEvaluation e = p.evaluate(rp.polish_fixings.data(), &stage1_answer_, *polish_ws, rp.polish_warm, rp.polish);
    p.hint = hint;
    ++polished;
    const double g = p.c.head(n).dot(rp.polish.x.head(n));  // stage 2's cost (H = 0)
    if (e.status != Status::solved || p.complementarity(rp.polish.x) > p.tolerance) return true;
    root_optimal = p.root_optimal_at(rp.polish_fixings.data(), *polish_ws, exchanged);
    if (g < p.hint_cost || root_optimal) {
      hint_x_.head(n) = rp.polish.x.head(n);
      p.hint_cost = g;
      hint_polished = true;
    }
    return true;
  };
  // On a streak the polish settled (last_record 1 .. kCertifiedStreak), the last answer's
  // sides come first: when that polish's optimum is also the root relaxation's
  // (root_optimal_at: the fixings' multipliers have their signs, or do after degenerate
  // exchanges), the root is a leaf at it without being solved (1 QP). A certificate by
  // exchanges counts up the record: such a streak may go on where the root alone, hot
  // from stage 1's root and cheaper than the warm polish, would be a leaf too (the old
  // sign test sent those steps to the root), so every kCertifiedStreak + 1-th step of it
  // the root goes first again and the streak ends if the root settles alone (in the
  // Monte Carlo grasp study the polish-first streak was 4% slower than the root; on seed
  // 000's lift steps the root is not a leaf and the probe costs a QP in four steps).
  bool root_optimal = false, tried_last = false;
  if (polish && last_record >= 1.0 && last_record <= kCertifiedStreak && last_sides) {
    tried_last = run_polish(true, root_optimal);
    if (root_optimal) {
      const Status st = settled(1);
      if (exchanged) polish_record_ = last_record + 1.0;
      return st;
    }
  }
  // The root: mostly a leaf (the relaxation's own point, or the hint).
  const BnbEvaluation root =
      p.evaluate(free_fixings_.data(), &stage1_answer_, rp.ws, rp.root2_warm, rp.root2);
  std::swap(rp.ws, bnb_->workspace(0));  // moves: no copy, no allocation
  polish_ws = &rp.ws;
  if (root.status == Status::solved && root.branch < 0) {
    p.hint = nullptr;
    if (hint_polished && rp.root2.x.head(n) == hint_x_.head(n)) polish_record_ = 1.0;  // the streak goes on
    stage2_.nodes = 1 + polished;
    stage2_.leaves = stage2_.rounds = 1;
    x_.head(n) = rp.root2.x.head(n);
    return Status::solved;
  }
  // Not a leaf: the root's relaxation grips less than the hint. Polish (the last answer's
  // sides unless tried above, then x1's): when a polish's grip is down to the root's bound
  // the root is a leaf at it (the Pang & Tedrake 2018 lift steps: x1 grips with 0.39 N s, the root and
  // the answer with 0.2); else the search goes on with the best hint.
  if (polish && root.status == Status::solved) {
    polish_record_ = -kPolishRetry;  // unless a polish settles the root, below
    const auto down_to_root = [&] {
      return p.hint_cost <= root.bound + kStage2Gap + kStage2Relative * std::abs(root.bound);  // evaluate's rule
    };
    for (const bool last : {true, false}) {
      if (last && tried_last) continue;
      if (run_polish(last, root_optimal) && down_to_root()) return settled(1 + polished);
    }
  }
  if (!polish) polish_record_ = last_record + 1.0;  // one step nearer the next try
  const BranchAndBound<Problem>::Root evaluated{root, &rp.root2_warm, &rp.root2};
  const auto& r2 = bnb_->solve(p, &stage1_answer_, &evaluated);
  p.hint = nullptr;
  stage2_ = r2.stats;
  stage2_.nodes += polished;
  if (r2.status != Status::solved) {
    const bool node_limit = r2.status == Status::iteration_limit && r2.stats.nodes >= options_.max_nodes;
    std::string what = "stage 2 (least normal impulse at the optimal dq_a) ended ";
    what += node_limit ? std::string("at the node limit (") + std::to_string(r2.stats.nodes) + " nodes)"
                       : std::string(to_string(r2.status));
    return fail(node_limit ? Status::iteration_limit : Status::numerical_failure, what);
  }
  x_.head(n) = r2.solution.x.head(n);
  return Status::solved;
}

Status PangTedrakeMiqp::solve_stages(const Model& m, const State& s) {
  Problem& p = *problem_;
  const int nu = m.n_u, na = m.n_a, nc = p.nc, n = p.n;
  // Costs are m^2 (|dqa_bar|^2 ~ 1e-6 for the gripper): ties within 1e-9 of that scale.
  bnb_->set_tolerance(1e-9 * std::max(p.constant, 1e-12), 1e-9);
  // First the root warm-started from the last step's stage-1 answer (kept in State::memory,
  // so a batch keeps it per world; mapped onto this step's contacts by slot). Mostly the
  // contact mode goes on and that root is a leaf: it is then the whole tree, and the answer
  // (the 36-pair box: 1.9 instead of 20 nodes per step). Otherwise that root is the
  // search's root (moved into workspace 0, where the search expects it): the cold root it
  // saves is the dearest node (a phase-1 LP). Its vertex shapes the tree differently from a
  // cold root's, neither always smaller: 6% fewer QPs in the Monte Carlo grasp study, 12%
  // fewer nodes on the 36-pair box, 6 more on the Pang & Tedrake 2018 grasp's 60 steps. A warm root
  // that failed leaves a cold search.
  bool root_leaf = false, warm_root = false;
  BnbEvaluation warm_root_eval{};
  if (load_root_warm(m, s)) {
    RootProbe& rp = *root_probe_;
    const BnbEvaluation e = p.evaluate(free_fixings_.data(), &root_warm_, rp.ws, rp.warm, rp.solution);
    root_leaf = e.status == Status::solved && e.branch < 0;
    if (!root_leaf && e.status == Status::solved) {
      warm_root = true;
      warm_root_eval = e;
      std::swap(rp.ws, bnb_->workspace(0));  // moves: no copy, no allocation
    }
    if (root_leaf) {
      stage1_ = BnbStats{};
      stage1_.nodes = stage1_.leaves = 1;
      stage1_.rounds = 1;
      cost_ = e.bound;
    }
  }
  const BranchAndBound<Problem>::Root evaluated{warm_root_eval, &root_probe_->warm, &root_probe_->solution};
  const auto& r1 = root_leaf ? bnb_->result() : warm_root ? bnb_->solve(p, &root_warm_, &evaluated) : bnb_->solve(p);
  if (!root_leaf) stage1_ = r1.stats;
  if (!root_leaf && r1.status != Status::solved) {
    if (r1.status == Status::infeasible)
      return fail(Status::infeasible, "the step's MIQP has no feasible point: branch-and-bound closed all " +
                                          std::to_string(r1.stats.nodes) + " nodes, each by an infeasible QP");
    // The B&B passes a relaxation's own failure through: a node QP's iteration limit is
    // not the search's node limit.
    if (r1.status == Status::iteration_limit && r1.stats.nodes >= options_.max_nodes)
      return fail(r1.status, "node limit reached (" + std::to_string(r1.stats.nodes) + " nodes); best cost " +
                                 (r1.has_solution ? std::to_string(r1.cost) : std::string("none")) +
                                 ", lower bound " + std::to_string(r1.bound));
    std::string what = "stage 1: a node's QP ended ";
    what += to_string(r1.status);
    what += " after " + std::to_string(r1.stats.nodes) + " nodes";
    return fail(r1.status == Status::iteration_limit ? Status::numerical_failure : r1.status, what);
  }
  if (!root_leaf) cost_ = r1.cost;
  const Problem::Solution& answer1 = root_leaf ? root_probe_->solution : r1.solution;
  dqa_star_ = answer1.x.segment(nu, na);
  const Eigen::VectorXd& dqa_star = dqa_star_;

  // Stage 2: dq_a = dq_a*, minimise sum P_n (H = 0).
  p.H.topLeftCorner(n, n).setZero();
  p.c.head(n).setZero();
  // Only the manipulator's contacts (a normal row with an actuated column) count: the
  // least total grip. Counting every contact (the table too) lets friction mu >= 1 trade
  // grip against table support at no cost, and a grip far above the elastic bound could
  // then lift what the bound cannot (found in review: mu = 2, K = 10 N/m lifted).
  // The least grip any point of stage 2's root can have: each grip P_n >= 0, and under
  // elastic_bound = previous also >= its row's constant bound (P_n alone in that row; under
  // `current` the row holds dq_u, so no constant bound follows from it).
  double least_grip = 0, grip_here = 0;
  for (int c = 0; c < nc; ++c) {
    bool grip = false;
    for (int a = 0; a < na; ++a) grip = grip || record_.geometry.J_n(record_.slots[c], nu + a) != 0.0;
    if (!grip) continue;
    p.c[p.pair_var(c, 0)] = 1.0;
    grip_here += answer1.x[p.pair_var(c, 0)];
    if (m.params.elastic_bound_previous) least_grip += std::max(0.0, p.b_in[4 * nc + c]);
  }
  p.constant = 0;
  p.m_eq = nu + na;
  p.A_eq.block(nu, 0, na, n).setZero();
  for (int a = 0; a < na; ++a) {
    p.A_eq(nu + a, nu + a) = 1.0;
    p.b_eq[nu + a] = dqa_star[a];
  }
  bnb_->set_tolerance(kStage2Gap, kStage2Relative);
  stage1_answer_ = answer1.ws;
  // Stage 1's answer x1 settles stage 2 without a search when its grip is already the least
  // possible: x1 is feasible for stage 2's root (dq_a = dq_a*), satisfies every pair (a
  // stage-1 leaf) and is within the tolerance of the optimum, so the root, whose key is the
  // smallest, is a leaf of the answer's cost. (Mostly: no grip, as before contact and after
  // the release.) Otherwise stage_two(): the root warm-started from x1 (copied: the search
  // overwrites its result), x1's polish, the search.
  hint_x_.head(n) = answer1.x.head(n);
  // Whether stage 2 polishes x1 (stage_two) follows the last step's record, the last entry
  // of State::memory.
  const bool has_memory = s.memory.size() == memory_.size;
  const double last_record = has_memory ? s.memory[memory_.polish] : kInf;
  const double* last_sides = has_memory ? s.memory.data() + memory_.sides : nullptr;
  polish_record_ = kInf;
  if (grip_here <= least_grip + kStage2Gap) {
    stage2_ = BnbStats{};
    x_.head(n) = hint_x_.head(n);
  } else if (const Status st2 = stage_two(grip_here, last_record, last_sides); st2 != Status::solved) {
    return st2;
  }
  return Status::solved;
}

Status PangTedrakeMiqp::advance(const Model& m, const WorldParams& wp, State& s) {
  if (build(m, wp, s) != Status::solved) return report_.status;
  Problem& p = *problem_;
  const int nu = m.n_u, na = m.n_a, nc = p.nc, n = p.n;
  // A step whose data are bitwise those of the last solved step (memo_key(): a finger
  // sliding along an object at rest) is the same problem: that
  // step's answer is its answer. Kept per world in State::memory, so a batch world is still
  // bitwise its single-world run.
  key_length_ = memo_key(m, wp);
  reused_ = reuse_ && memo_matches(s);
  if (reused_) {
    const double* x = s.memory.data() + memory_.memo_answer;
    for (int j = 0; j < n; ++j) x_[j] = x[j];
    cost_ = s.memory[memory_.memo_cost];
  } else if (const Status st = solve_stages(m, s); st != Status::solved) {
    return st;
  }
  report_.pivots = static_cast<int>(stage1_.nodes + stage2_.nodes);
  report_.complementarity_residual = p.complementarity(x_);
  if (report_.complementarity_residual > 1e-9) return fail(Status::numerical_failure, "the answer failed its complementarity check");

  // Per slot, residuals, integration.
  double lin = 0, balance = 0;
  for (int c = 0; c < nc; ++c) {
    const int i = record_.slots[c];
    p_n_[i] = x_[p.pair_var(c, 0)];
    p_t_[i] = x_[p.pair_var(c, 1)] - x_[p.pair_var(c, 2)];
    lin = std::min(lin, p.A_in.row(p.pair_row(c, 0)).head(n).dot(x_.head(n)) - p.b_in[p.pair_row(c, 0)]);
  }
  RelativeBalance relative;
  for (int e = 0; e < nu; ++e) {
    const double r = p.A_eq.row(e).head(n).dot(x_.head(n)) - p.b_eq[e];
    balance = std::max(balance, std::abs(r));
    double terms = std::abs(p.b_eq[e]);
    for (int j = 0; j < n; ++j) terms += std::abs(p.A_eq(e, j) * x_[j]);
    relative.row(r, terms);
  }
  report_.linearised_penetration = lin;
  report_.force_balance_residual = balance;
  // The QP's equality tolerance is absolute; at a small enough h the whole load h tau fits
  // inside it (a step that ignored the ground's impulse was accepted at h = 1e-11).
  if (!relative.accepted())
    return fail(Status::numerical_failure, "the answer failed its force-balance check (relative residual " +
                                               std::to_string(relative.worst()) + ")");
  // phi_bar^{l+1} = phi + J_n^u dq_u + J_n^a dqa_bar (eq. (21)) of this step, for the next.
  std::fill(phi_bar_.begin(), phi_bar_.end(), std::numeric_limits<double>::infinity());
  for (int c = 0; c < nc; ++c) {
    const int i = record_.slots[c];
    double v = record_.geometry.frame[i].phi;
    for (int e = 0; e < nu; ++e) v += record_.geometry.J_n(i, e) * x_[e];
    for (int a = 0; a < na; ++a) v += record_.geometry.J_n(i, nu + a) * dqa_bar_[a];
    phi_bar_[i] = v;
  }
  if (!reused_) store_memory(m, s);  // a reused answer leaves the memory as it was
  for (int e = 0; e < nu + na; ++e) s.q[e] += x_[e];
  return report_.status = Status::solved;
}

}  // namespace qs

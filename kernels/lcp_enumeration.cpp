#include "quasistep/kernels/lcp_enumeration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "quasistep/kernels/branch_and_bound.hpp"
#include "quasistep/kernels/dense_lp.hpp"
#include "quasistep/kernels/lcp_acceptance.hpp"
#include "quasistep/kernels/lemke.hpp"
#include <Eigen/LU>
#include <vector>

namespace qs {

// One node's LP, in the bounded standard form of dense_lp.hpp: columns [x (n) | s (m)],
// rows  M x - [0; s] = -q  (the k free rows have no slack: M_u x = -q_u).
struct LcpEnumeration::Relaxation {
  struct Workspace {
    std::unique_ptr<DenseLp> lp;
    Eigen::MatrixXd A;
    Eigen::VectorXd b, c, lo, hi;
  };
  struct Warm {};
  using Solution = Eigen::VectorXd;  // [x (n) | s (m)]

  Eigen::MatrixXd M;
  Eigen::VectorXd q;
  int n = 0, k = 0, m = 0;  // variables, free ones, pairs (m = n - k)
  // A node's point is a leaf when its scaled natural residual is below this (the search's
  // own test; the answer is then held to the shared acceptance rule).
  double tolerance = 1e-9;

  int disjunctions() const { return m; }
  Workspace make_workspace() const {
    Workspace w;
    w.lp = std::make_unique<DenseLp>(std::max(n, 1), std::max(n + m, 1));
    w.A = Eigen::MatrixXd::Zero(n, n + m);
    w.b.resize(n);
    w.c.resize(n + m);
    w.lo.resize(n + m);
    w.hi.resize(n + m);
    return w;
  }

  BnbEvaluation evaluate(const Side* fix, const Warm*, Workspace& ws, Warm&, Solution& sol) const {
    const double inf = std::numeric_limits<double>::infinity();
    ws.A.leftCols(n) = M;
    ws.A.rightCols(m).setZero();
    for (int i = 0; i < m; ++i) ws.A(k + i, n + i) = -1.0;
    ws.b = -q;
    for (int j = 0; j < k; ++j) {
      ws.lo[j] = -inf;
      ws.hi[j] = inf;
      ws.c[j] = 0;
    }
    for (int i = 0; i < m; ++i) {
      const int z = k + i, s = n + i;
      const bool z_zero = fix[i] == Side::first, s_zero = fix[i] == Side::second;
      ws.lo[z] = 0;
      ws.hi[z] = z_zero ? 0.0 : inf;
      ws.lo[s] = 0;
      ws.hi[s] = s_zero ? 0.0 : inf;
      const bool open = fix[i] == Side::free;
      ws.c[z] = open ? 1.0 : 0.0;  // steer unfixed pairs toward z_i + s_i = 0
      ws.c[s] = open ? 1.0 : 0.0;
    }
    const Status st = ws.lp->solve(DenseLpProblem{ws.A, ws.b, ws.c, ws.lo, ws.hi});
    if (st == Status::infeasible) return {Status::infeasible, 0, -1};
    if (st != Status::solved) return {st == Status::unbounded ? Status::numerical_failure : st, 0, -1};
    sol = ws.lp->x();
    // Branch on the most violated unfixed pair; a leaf when the whole point passes the
    // residual check (fixed pairs are complementary by their bounds).
    int branch = -1;
    double worst = 0;
    for (int i = 0; i < m; ++i) {
      if (fix[i] != Side::free) continue;
      const double v = std::min(sol[k + i], sol[n + i]);
      if (v > worst) {
        worst = v;
        branch = i;
      }
    }
    if (branch >= 0) {
      Eigen::VectorXd x = sol.head(n);
      if (lcp_residual(x) > tolerance) return {Status::solved, ws.lp->objective(), branch};
    }
    return {Status::solved, ws.lp->objective(), -1};
  }

  /// The scaled natural residual of x as a mixed LCP (free rows must vanish).
  double lcp_residual(const Eigen::VectorXd& x) const {
    const Eigen::VectorXd w = M * x + q;
    const double scale = std::max({1.0, q.cwiseAbs().maxCoeff(), M.cwiseAbs().maxCoeff() * x.cwiseAbs().maxCoeff()});
    double r = 0;
    for (int j = 0; j < k; ++j) r = std::max(r, std::abs(w[j]));
    for (int i = 0; i < m; ++i) r = std::max(r, std::abs(std::min(x[k + i], w[k + i])));
    return r / scale;
  }
};

/// The point whose basic variables (the free ones, and each z_i that x holds larger than
/// its w_i, z_i against |z|_inf and w_i against |q_i| + sum_j |M_ij x_j|) solve
/// M_BB x_B = -q_B exactly (LU), the others zero; empty when that block is singular.
static Eigen::VectorXd polish(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                              const Eigen::VectorXd& x, int k) {
  const int n = static_cast<int>(q.size());
  const double zmax = n > k ? x.tail(n - k).cwiseAbs().maxCoeff() : 0.0;
  const Eigen::VectorXd w = M * x + q;
  std::vector<int> basic;
  for (int i = 0; i < n; ++i) {
    if (i < k) {
      basic.push_back(i);
      continue;
    }
    const double s = std::abs(q[i]) + M.row(i).cwiseAbs().dot(x.cwiseAbs());
    const double zrel = zmax > 0 ? x[i] / zmax : 0.0, wrel = s > 0 ? std::abs(w[i]) / s : 0.0;
    if (x[i] > 0 && zrel > wrel) basic.push_back(i);
  }
  Eigen::VectorXd out = Eigen::VectorXd::Zero(n);
  if (basic.empty()) return out;
  const Eigen::Index b = static_cast<Eigen::Index>(basic.size());
  Eigen::MatrixXd mb(b, b);
  Eigen::VectorXd qb(b);
  for (Eigen::Index i = 0; i < b; ++i) {
    qb[i] = -q[basic[static_cast<std::size_t>(i)]];
    for (Eigen::Index j = 0; j < b; ++j) mb(i, j) = M(basic[static_cast<std::size_t>(i)], basic[static_cast<std::size_t>(j)]);
  }
  const Eigen::FullPivLU<Eigen::MatrixXd> lu(mb);
  if (!lu.isInvertible()) return Eigen::VectorXd();
  const Eigen::VectorXd xb = lu.solve(qb);
  for (Eigen::Index i = 0; i < b; ++i) out[basic[static_cast<std::size_t>(i)]] = xb[i];
  return out;
}

LcpEnumeration::LcpEnumeration(int capacity, const LcpEnumerationOptions& options)
    : capacity_(capacity), opt_(options), relax_(std::make_unique<Relaxation>()) {}

LcpEnumeration::~LcpEnumeration() = default;

const LcpEnumeration::Result& LcpEnumeration::solve(const Eigen::Ref<const Eigen::MatrixXd>& M,
                                                    const Eigen::Ref<const Eigen::VectorXd>& q, int free) {
  result_ = Result{};
  if (check_lcp_input(M, q, capacity_) != Status::solved || free < 0 || free > q.size()) {
    result_.status = Status::bad_input;
    return result_;
  }
  Relaxation& r = *relax_;
  // The LPs' tolerances have an absolute floor (dense_lp.hpp: 1 + max|b| + ...), so a problem
  // whose q is far below 1 (a step of nanometres) passes points that ignore q, at the root
  // LP or at a leaf. Solve it scaled by powers of two (exact) to max|M| and max|q| of about
  // 1: M' = M / a, q' = q / s, whose solution is x' = x a / s.
  const double m_max = M.cwiseAbs().maxCoeff(), q_max = q.cwiseAbs().maxCoeff();
  const double a = m_max > 0 ? std::exp2(std::round(std::log2(m_max))) : 1.0;
  const double s = q_max > 0 ? std::exp2(std::round(std::log2(q_max))) : 1.0;
  r.M = M / a;
  r.q = q / s;
  r.n = static_cast<int>(q.size());
  r.k = free;
  r.m = r.n - free;
  BnbOptions bo;
  bo.max_nodes = opt_.max_nodes;
  bo.round_width = opt_.round_width;
  bo.stop_at_first_leaf = true;
  // Built per solve: the number of disjunctions is the problem's. This path allocates; it
  // is the fallback after Lemke failed, not the per-step path.
  bnb_ = std::make_unique<BranchAndBound<Relaxation>>(r, bo, 1);
  const auto& out = bnb_->solve(r);
  result_.stats = out.stats;
  result_.status = out.status;
  if (out.status == Status::solved) {
    result_.x = out.solution.head(r.n) * (s / a);
    // The acceptance rule every LCP solver shares (lcp_acceptance.hpp), on the caller's data.
    // An LP point is complementary only to the LP's tolerance (a z_i of 1e-17 beside a
    // positive w_i); where it fails the rule, it is polished once: the side of each pair
    // that the point holds at zero (relatively, as the node's test reads it) is set to
    // zero and the others solved for exactly, and the better of the two points is kept.
    result_.residual = lcp_certified_residual(M, q, result_.x, free, opt_.tolerance);
    if (!(result_.residual <= opt_.tolerance)) {
      const Eigen::VectorXd polished = polish(M, q, result_.x, free);
      const double rp = polished.size() ? lcp_certified_residual(M, q, polished, free, opt_.tolerance)
                                        : std::numeric_limits<double>::infinity();
      if (rp < result_.residual) {
        result_.x = polished;
        result_.residual = rp;
      }
    }
    result_.w = M * result_.x + q;
    if (!(result_.residual <= opt_.tolerance)) result_.status = Status::numerical_failure;
  }
  return result_;
}

}  // namespace qs

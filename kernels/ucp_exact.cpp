// The UCP's exact method: a branch-and-bound over the complementary pairs, each node's
// relaxation two LPs (Pang, Trinkle & Lo 1996).
#include "quasistep/kernels/ucp.hpp"

#include <algorithm>
#include <cmath>

#include "ucp_internal.hpp"

namespace qs {

using ucp_internal::kInf;

// A node fixes pairs: "first" is x_i = 0, "second" is y_i = 0. Its relaxation is the two LPs
// { x in X, fixed x_i = 0 } and { y in Y, fixed y_i = 0 }: independent, so the node is empty
// exactly when one of them is (a Farkas certificate, verified by the LP kernel). Within a
// nonempty node a few bilinear steps (eqs. (14)-(15), restricted to the node) look for a
// complementary pair, starting from the parent's y; a node whose pair is complementary is a
// leaf. Every complementary pair of a node lies in one of its two children (x_i y_i = 0 means
// x_i = 0 or y_i = 0), so closing every node proves that none exists; a node is closed only
// when Ucp::certifies_empty verifies the LP's Farkas vector, else the answer is
// numerical_failure.
struct UcpExact::Relaxation {
  struct Workspace {
    std::unique_ptr<DenseLp> lx, ly;
    Eigen::VectorXd lo, hx, hy, c, x, y;
  };
  struct Warm {
    Eigen::VectorXd y;
    LpBasis bx, by;
    bool has = false;
  };
  using Solution = Eigen::VectorXd;  // [x; y]

  const Ucp* u = nullptr;
  int n = 0;
  double tolerance = 1e-10;
  int inner_steps = 4;
  DenseLpCapacity cap_x, cap_y;

  int disjunctions() const { return n; }
  Workspace make_workspace() const {
    Workspace w;
    w.lx = std::make_unique<DenseLp>(cap_x);
    w.ly = std::make_unique<DenseLp>(cap_y);
    w.lo.setZero(n);
    w.hx.setZero(n);
    w.hy.setZero(n);
    w.c.setZero(n);
    w.x.setZero(n);
    w.y.setZero(n);
    return w;
  }
  Warm make_warm() const {
    Warm w;
    w.y.setZero(n);
    w.bx = LpBasis(cap_x.rows, cap_x.cols);  // the kernel's own basis storage size
    w.by = LpBasis(cap_y.rows, cap_y.cols);
    return w;
  }
  Solution make_solution() const { return Eigen::VectorXd::Zero(2 * n); }

  static Status failure(Status st) { return st == Status::unbounded ? Status::numerical_failure : st; }

  BnbEvaluation evaluate(const Side* fix, const Warm* parent, Workspace& ws, Warm& warm_out, Solution& sol) const {
    for (int i = 0; i < n; ++i) {
      ws.hx[i] = fix[i] == Side::first ? 0.0 : kInf;
      ws.hy[i] = fix[i] == Side::second ? 0.0 : kInf;
    }
    const bool warm = parent && parent->has;
    const DenseLpProblem px{u->A_x(), u->b_x_lp(), ws.c, ws.lo, ws.hx};
    const DenseLpProblem py{u->A_y(), u->b_y_lp(), ws.c, ws.lo, ws.hy};
    // X, minimising x'y_parent (0 at the root).
    if (warm) ws.c = parent->y;
    else ws.c.setZero();
    // A node closes as empty only on a certificate checked apart from the LP kernel.
    const auto empty = [&](char side, const DenseLp& lp, const Eigen::VectorXd& upper) -> BnbEvaluation {
      if (u->certifies_empty(side, upper, lp.farkas())) return {Status::infeasible, 0, -1};
      return {Status::numerical_failure, 0, -1};
    };
    Status st = warm ? ws.lx->solve(px, parent->bx) : ws.lx->solve(px);
    if (st == Status::infeasible) return empty('X', *ws.lx, ws.hx);
    if (st != Status::solved) return {failure(st), 0, -1};
    ws.x = ws.lx->x();
    ws.c = ws.x;
    st = warm ? ws.ly->solve(py, parent->by) : ws.ly->solve(py);
    if (st == Status::infeasible) return empty('Y', *ws.ly, ws.hy);
    if (st != Status::solved) return {failure(st), 0, -1};
    ws.y = ws.ly->x();
    // A few bilinear steps inside the node while x'y decreases.
    for (int k = 0; k < inner_steps && !Ucp::complementary(ws.x, ws.y, tolerance); ++k) {
      const double p = ws.x.dot(ws.y);
      ws.c = ws.y;
      if (ws.lx->solve(px, ws.lx->basis()) != Status::solved) break;
      ws.c = ws.lx->x();
      if (ws.ly->solve(py, ws.ly->basis()) != Status::solved) break;
      const double q = ws.lx->x().dot(ws.ly->x());
      if (!(q < p)) break;
      ws.x = ws.lx->x();
      ws.y = ws.ly->x();
    }
    warm_out.y = ws.y;
    warm_out.bx = ws.lx->basis();
    warm_out.by = ws.ly->basis();
    warm_out.has = true;
    sol.head(n) = ws.x;
    sol.tail(n) = ws.y;
    if (Ucp::complementary(ws.x, ws.y, tolerance)) return {Status::solved, 0, -1};
    // Branch on the free pair with the largest product.
    int branch = -1;
    double worst = 0;
    for (int i = 0; i < n; ++i) {
      if (fix[i] != Side::free) continue;
      const double v = ws.x[i] * ws.y[i];
      if (v > worst) {
        worst = v;
        branch = i;
      }
    }
    return {Status::solved, 0, branch};  // branch -1: the product is rounding in fixed pairs
  }
};

UcpExact::UcpExact(const Ucp& ucp, const UcpExactOptions& options)
    : ucp_(&ucp), opt_(options), relax_(std::make_unique<Relaxation>()) {
  Relaxation& r = *relax_;
  r.u = &ucp;
  r.n = ucp.n();
  r.tolerance = options.tolerance;
  r.inner_steps = options.inner_steps;
  r.cap_x.rows = std::max(1, static_cast<int>(ucp.A_x().rows()));
  r.cap_x.cols = ucp.n();
  r.cap_y.rows = std::max(1, static_cast<int>(ucp.A_y().rows()));
  r.cap_y.cols = ucp.n();
  BnbOptions bo;
  bo.max_nodes = options.max_nodes;
  bo.round_width = options.round_width;
  bo.parallel = options.parallel;
  bo.stop_at_first_leaf = true;  // a feasibility problem: every leaf is an answer
  bnb_ = std::make_unique<BranchAndBound<Relaxation>>(r, bo, 1);
  root_x_ = std::make_unique<DenseLp>(r.cap_x);
  root_y_ = std::make_unique<DenseLp>(r.cap_y);
  zero_.setZero(ucp.n());
  inf_.setConstant(ucp.n(), kInf);
  result_.x.setZero(ucp.n());
  result_.y.setZero(ucp.n());
  motion_ = ucp.make_motion();
  ws_ = ucp.make_workspace();
}

UcpExact::~UcpExact() = default;

const UcpExactResult& UcpExact::solve() {
  UcpExactResult& r = result_;
  r.status = Status::not_run;
  r.empty_side = 0;
  r.check = UcpCheck{};
  const Ucp& u = *ucp_;
  // Which side is empty, when one is: the reason no motion exists at all.
  const Status sx = root_x_->solve(DenseLpProblem{u.A_x(), u.b_x_lp(), zero_, zero_, inf_});
  const Status sy = root_y_->solve(DenseLpProblem{u.A_y(), u.b_y_lp(), zero_, zero_, inf_});
  if (sx == Status::infeasible || sy == Status::infeasible) {
    r.empty_side = sx == Status::infeasible ? 'X' : 'Y';
    const DenseLp& lp = sx == Status::infeasible ? *root_x_ : *root_y_;
    r.status = u.certifies_empty(r.empty_side, inf_, lp.farkas()) ? Status::infeasible : Status::numerical_failure;
    r.stats = BnbStats{};
    return r;
  }
  const auto& out = bnb_->solve(*relax_);
  r.stats = out.stats;
  r.status = out.status;
  if (out.status == Status::solved) {
    r.x = out.solution.head(u.n());
    r.y = out.solution.tail(u.n());
    u.from_lp_units(r.x, r.y);
    u.recover(r.x, r.y, motion_, ws_);
    r.check = u.check(motion_, ws_);
    if (!(r.check.worst <= opt_.check_tolerance)) r.status = Status::numerical_failure;
  }
  return r;
}
}  // namespace qs

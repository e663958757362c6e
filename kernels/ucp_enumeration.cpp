// The UCP's enumeration of the contact modes (every mode of every contact, for small problems).
#include "quasistep/kernels/ucp.hpp"

#include <algorithm>
#include <cmath>

#include "ucp_internal.hpp"

namespace qs {

using ucp_internal::kInf;

const char* to_string(ContactMode m) {
  switch (m) {
    case ContactMode::breaking: return "breaking";
    case ContactMode::rolling: return "rolling";
    case ContactMode::sliding_positive: return "sliding+";
    case ContactMode::sliding_negative: return "sliding-";
  }
  return "unknown";
}

UcpEnumerationResult ucp_enumerate_modes(const Ucp& u, long max_nodes) {
  UcpEnumerationResult r;
  const int nc = u.n_c(), n = u.n();
  DenseLpCapacity cx, cy;
  cx.rows = std::max(1, static_cast<int>(u.A_x().rows()));
  cx.cols = n;
  cy.rows = std::max(1, static_cast<int>(u.A_y().rows()));
  cy.cols = n;
  DenseLp lx(cx), ly(cy);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
  // Per depth: the upper bounds after fixing contacts 0..depth-1, and a point of each side.
  std::vector<Eigen::VectorXd> hx(static_cast<size_t>(nc) + 1, Eigen::VectorXd::Constant(n, kInf)), hy = hx;
  std::vector<Eigen::VectorXd> xs(static_cast<size_t>(nc) + 1, zero), ys = xs;
  std::vector<ContactMode> modes(static_cast<size_t>(nc), ContactMode::breaking);
  std::vector<int> next(static_cast<size_t>(nc) + 1, 0);  // the next mode to try at each depth
  // A side is empty only on a certificate checked apart from the LP kernel
  // (Ucp::certifies_empty); an unchecked one fails the enumeration (numerical_failure).
  const auto solve_side = [&](char side, DenseLp& lp, const Eigen::VectorXd& hi, Eigen::VectorXd& point) {
    ++r.lps;
    const bool x_side = side == 'X';
    const Status st =
        lp.solve(DenseLpProblem{x_side ? u.A_x() : u.A_y(), x_side ? u.b_x_lp() : u.b_y_lp(), zero, zero, hi});
    if (st == Status::solved) point = lp.x();
    if (st == Status::infeasible && !u.certifies_empty(side, hi, lp.farkas())) return Status::numerical_failure;
    return st;
  };
  // The root: both sides must be nonempty.
  Status st = solve_side('X', lx, hx[0], xs[0]);
  if (st == Status::solved) st = solve_side('Y', ly, hy[0], ys[0]);
  if (st == Status::infeasible) {
    r.status = Status::solved;  // complete: no solution
    return r;
  }
  if (st != Status::solved) {
    r.status = st == Status::unbounded ? Status::numerical_failure : st;
    return r;
  }
  UcpMotion motion = u.make_motion();
  UcpWorkspace ws = u.make_workspace();
  int depth = 0;
  while (depth >= 0) {
    if (depth == nc) {
      r.solutions.push_back({modes, xs[static_cast<size_t>(nc)], ys[static_cast<size_t>(nc)]});
      UcpModeSolution& found = r.solutions.back();
      u.from_lp_units(found.x, found.y);
      // Every listed solution passes the check the other methods' answers pass (Pang,
      // Trinkle & Lo 1996, eqs. (2)-(10), on the recovered motion): one that does not (the
      // data beyond what doubles resolve, a motion that is not finite) fails the whole list.
      u.recover(found.x, found.y, motion, ws);
      if (!(u.check(motion, ws).worst <= kUcpEnumerationCheckTolerance)) {
        r.solutions.clear();
        r.status = Status::numerical_failure;
        return r;
      }
      --depth;
      continue;
    }
    const size_t dk = static_cast<size_t>(depth);
    if (next[dk] == 4) {
      next[dk] = 0;
      --depth;
      continue;
    }
    if (r.nodes >= max_nodes) {
      r.status = Status::iteration_limit;
      return r;
    }
    ++r.nodes;
    const auto mode = static_cast<ContactMode>(next[dk]++);
    modes[dk] = mode;
    hx[dk + 1] = hx[dk];
    hy[dk + 1] = hy[dk];
    xs[dk + 1] = xs[dk];
    ys[dk + 1] = ys[dk];
    const int in = depth, ip = nc + depth, im = 2 * nc + depth;  // pairs n, t+, t-
    bool change_x = true, change_y = true;
    switch (mode) {
      case ContactMode::breaking:
        hy[dk + 1][in] = hy[dk + 1][ip] = hy[dk + 1][im] = 0;
        change_x = false;
        break;
      case ContactMode::rolling:
        hx[dk + 1][in] = hx[dk + 1][ip] = hx[dk + 1][im] = 0;
        change_y = false;
        break;
      case ContactMode::sliding_positive:
        hx[dk + 1][in] = hx[dk + 1][im] = 0;
        hy[dk + 1][ip] = 0;
        break;
      case ContactMode::sliding_negative:
        hx[dk + 1][in] = hx[dk + 1][ip] = 0;
        hy[dk + 1][im] = 0;
        break;
    }
    Status sx = Status::solved, sy = Status::solved;
    if (change_x) sx = solve_side('X', lx, hx[dk + 1], xs[dk + 1]);
    if (sx == Status::solved && change_y) sy = solve_side('Y', ly, hy[dk + 1], ys[dk + 1]);
    if (sx == Status::infeasible || sy == Status::infeasible) continue;  // this mode is empty
    if (sx != Status::solved || sy != Status::solved) {
      const Status bad = sx != Status::solved ? sx : sy;
      r.status = bad == Status::unbounded ? Status::numerical_failure : bad;
      return r;
    }
    ++depth;
  }
  r.status = Status::solved;
  return r;
}
}  // namespace qs

// The UCP's bilinear algorithm (Pang, Trinkle & Lo 1996, sec. 4, with sec. 5's restart): LPs over X and Y
// in turn, each from the other's point.
#include "quasistep/kernels/ucp.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>

#include "quasistep/kernels/splitmix64.hpp"
#include "ucp_internal.hpp"

namespace qs {

using ucp_internal::elapsed;
using ucp_internal::kInf;

struct UcpBilinear::Impl {
  const Ucp& u;
  UcpBilinearOptions opt;
  int n;
  DenseLp lp_x, lp_y;
  Eigen::VectorXd lo, hi, zero, x, y, best_x, best_y;
  LpBasis bx, by;
  // Step 3's adjacent extreme points E(x), E(y), with their bases (capacity of the kernel).
  Eigen::MatrixXd ex, ey;
  std::vector<LpBasis> bex, bey;
  int nex = 0, ney = 0;
  UcpMotion motion;  // the solution's, for the check
  UcpWorkspace ws;

  static DenseLpCapacity capacity(int rows, int cols) {
    DenseLpCapacity c;
    c.rows = std::max(rows, 1);
    c.cols = cols;
    return c;
  }
  Impl(const Ucp& ucp, const UcpBilinearOptions& o)
      : u(ucp), opt(o), n(ucp.n()),
        lp_x(capacity(static_cast<int>(ucp.A_x().rows()), ucp.n())),
        lp_y(capacity(static_cast<int>(ucp.A_y().rows()), ucp.n())) {
    lo.setZero(n);
    hi.setConstant(n, kInf);
    zero.setZero(n);
    x.setZero(n);
    y.setZero(n);
    best_x.setZero(n);
    best_y.setZero(n);
    bx = lp_x.basis();
    by = lp_y.basis();
    const int kx = lp_x.capacity().vertex_neighbours, ky = lp_y.capacity().vertex_neighbours;
    ex.setZero(n, kx);
    ey.setZero(n, ky);
    bex.assign(static_cast<size_t>(kx), lp_x.basis());
    bey.assign(static_cast<size_t>(ky), lp_y.basis());
    motion = ucp.make_motion();
    ws = ucp.make_workspace();
  }

  DenseLpProblem px(const Eigen::VectorXd& c) const { return {u.A_x(), u.b_x_lp(), c, lo, hi}; }
  DenseLpProblem py(const Eigen::VectorXd& c) const { return {u.A_y(), u.b_y_lp(), c, lo, hi}; }

  /// The distinct bounded neighbours of a vertex (rays carry no pair to evaluate).
  Status neighbours(DenseLp& lp, const DenseLpProblem& p, const LpBasis& b, Eigen::MatrixXd& pts,
                    std::vector<LpBasis>& bases, int& count) {
    count = 0;
    const auto keep = [&](const LpNeighbour& nb) {
      if (nb.unbounded || nb.degenerate || count >= static_cast<int>(bases.size())) return true;
      pts.col(count) = nb.point;
      bases[static_cast<size_t>(count)] = nb.basis;
      ++count;
      return true;
    };
    const Status s = opt.full_adjacency ? lp.for_each_adjacent_vertex(p, b, keep) : lp.for_each_adjacent_basis(p, b, keep);
    return s == Status::iteration_limit ? Status::solved : s;  // a partial list is still genuine
  }
};

UcpBilinear::UcpBilinear(const Ucp& ucp, const UcpBilinearOptions& options)
    : impl_(std::make_unique<Impl>(ucp, options)) {
  result_.x.setZero(ucp.n());
  result_.y.setZero(ucp.n());
  // The initial pair, then up to max_pairs + 1 (a Step 3 pair may follow the Step 1 pair
  // that reached max_pairs): visit() then never reallocates.
  result_.products.reserve(static_cast<size_t>(std::max(0, options.max_pairs)) + 2);
}

UcpBilinear::~UcpBilinear() = default;

const UcpBilinearResult& UcpBilinear::solve() {
  const auto start = std::chrono::steady_clock::now();
  Impl& s = *impl_;
  UcpBilinearResult& r = result_;
  r.status = Status::not_run;
  r.empty_side = 0;
  r.pairs = r.lps = r.step3 = r.restarts = 0;
  r.products.clear();
  r.check = UcpCheck{};
  std::uint64_t rng = s.opt.seed;
  double best = kInf;
  const auto finish = [&](Status st) -> const UcpBilinearResult& {
    r.status = st;
    r.x = s.best_x;
    r.y = s.best_y;
    s.u.from_lp_units(r.x, r.y);
    r.product = std::ldexp(best, -(s.u.x_exponent() + s.u.y_exponent()));
    if (st == Status::solved) {
      s.u.recover(r.x, r.y, s.motion, s.ws);
      r.check = s.u.check(s.motion, s.ws);
      if (!(r.check.worst <= s.opt.check_tolerance)) r.status = Status::numerical_failure;
    }
    r.seconds = elapsed(start);
    return r;
  };
  const auto lp_failure = [](Status st) { return st == Status::unbounded ? Status::numerical_failure : st; };
  // Records the current pair; true when it is complementary.
  const auto visit = [&]() {
    const double p = s.x.dot(s.y);
    r.products.push_back(std::ldexp(p, -(s.u.x_exponent() + s.u.y_exponent())));  // X's and Y's units
    if (p < best) {
      best = p;
      s.best_x = s.x;
      s.best_y = s.y;
    }
    return Ucp::complementary(s.x, s.y, s.opt.tolerance);
  };

  // Step 0: a vertex of each polyhedron (the paper: two LPs with a zero objective).
  Status st = s.lp_x.solve(s.px(s.zero));
  ++r.lps;
  if (st == Status::infeasible) {
    r.empty_side = 'X';
    return finish(s.u.certifies_empty('X', s.hi, s.lp_x.farkas()) ? Status::infeasible : Status::numerical_failure);
  }
  if (st != Status::solved) return finish(lp_failure(st));
  s.x = s.lp_x.x();
  s.bx = s.lp_x.basis();
  st = s.lp_y.solve(s.py(s.zero));
  ++r.lps;
  if (st == Status::infeasible) {
    r.empty_side = 'Y';
    return finish(s.u.certifies_empty('Y', s.hi, s.lp_y.farkas()) ? Status::infeasible : Status::numerical_failure);
  }
  if (st != Status::solved) return finish(lp_failure(st));
  s.y = s.lp_y.x();
  s.by = s.lp_y.basis();
  if (visit()) return finish(Status::solved);
  double current = s.x.dot(s.y);

  // The stationarity test's rounding allowance, of the current pair.
  const auto allowance = [&] {
    return s.opt.tolerance * std::max(1.0, s.x.cwiseAbs().maxCoeff() * s.y.cwiseAbs().maxCoeff());
  };
  bool repeat_step3 = false;  // the original algorithm: Step 3 again from the random pair
  while (true) {
    if (r.pairs >= s.opt.max_pairs) return finish(Status::not_found);
    double noise = 0;
    if (repeat_step3) {
      noise = allowance();
    } else {
      // Step 1: x <- argmin { x'y : x in X }, then y <- argmin { y'x : y in Y } (eqs. (14), (15)).
      st = s.lp_x.solve(s.px(s.y), s.bx);
      ++r.lps;
      if (st != Status::solved) return finish(lp_failure(st));
      s.x = s.lp_x.x();
      s.bx = s.lp_x.basis();
      st = s.lp_y.solve(s.py(s.x), s.by);
      ++r.lps;
      if (st != Status::solved) return finish(lp_failure(st));
      s.y = s.lp_y.x();
      s.by = s.lp_y.basis();
      ++r.pairs;
      // Step 2: complementary, a strict decrease (back to Step 1), or stationary (eq. (16)).
      if (visit()) return finish(Status::solved);
      const double p = s.x.dot(s.y);
      noise = allowance();
      if (p < current - noise) {
        current = p;
        continue;
      }
      current = p;
    }
    repeat_step3 = false;
    // Step 3: the best pair of adjacent extreme points E(x) x E(y).
    ++r.step3;
    st = s.neighbours(s.lp_x, s.px(s.zero), s.bx, s.ex, s.bex, s.nex);
    if (st != Status::solved) return finish(lp_failure(st));
    st = s.neighbours(s.lp_y, s.py(s.zero), s.by, s.ey, s.bey, s.ney);
    if (st != Status::solved) return finish(lp_failure(st));
    if (s.nex == 0 || s.ney == 0) return finish(Status::not_found);  // nowhere to go
    int bi = 0, bj = 0;
    double bp = kInf;
    for (int i = 0; i < s.nex; ++i)
      for (int j = 0; j < s.ney; ++j) {
        const double q = s.ex.col(i).dot(s.ey.col(j));
        if (q < bp) {
          bp = q;
          bi = i;
          bj = j;
        }
      }
    if (!(bp < current - noise)) {
      // No improving neighbour pair: a random one, accepting an increase of x'y. Sec. 5's
      // modification goes back to Step 1 from it; sec. 4's original repeats Step 3 from it.
      if (r.restarts >= s.opt.max_restarts) return finish(Status::not_found);
      ++r.restarts;
      bi = static_cast<int>(splitmix64_next(rng) % static_cast<std::uint64_t>(s.nex));
      bj = static_cast<int>(splitmix64_next(rng) % static_cast<std::uint64_t>(s.ney));
      repeat_step3 = s.opt.restart == UcpRestart::step3;
    }
    s.x = s.ex.col(bi);
    s.y = s.ey.col(bj);
    s.bx = s.bex[static_cast<size_t>(bi)];
    s.by = s.bey[static_cast<size_t>(bj)];
    ++r.pairs;
    if (visit()) return finish(Status::solved);
    current = s.x.dot(s.y);
  }
}
}  // namespace qs

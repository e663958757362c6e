// PGS (quasistep/kernels/pgs.hpp) on contact-like semidefinite LCPs, one world at a time (T = double)
// against a lane group of kLaneWidth worlds (T = Lane), n = 8, 16, 32 rows.
//
// Instances: the Anitescu slides' (Pang & Tedrake) dual, M = J Q^-1 J' and q = phi/h - J Q^-1 c. Each box (3 DOF) rests
// on the ground at two corners and is squeezed by two point fingers (2 DOF each, impedance
// h^2 K in Q as in the Anitescu slides' (Pang & Tedrake) quasistatic QP); every contact gives Anitescu's two planar
// friction-cone rows J_n +- mu J_t. 4 contacts (8 rows) per box: n = 8, 16, 32 is 1, 2, 4
// boxes; M has rank <= 7 per box, so it is singular.
//
// Two modes: "fixed" runs 50 sweeps (tolerance 0, one residual check at the end), the pure
// cost of a sweep; "tol" runs to the scaled natural residual 1e-6 (check every 4 sweeps),
// where a lane group runs until its slowest lane is done. Time is reported per world
// (`world` = seconds per world solved; items_per_second = worlds per second). `sweeps` is the
// mean number of sweeps a world (double) or a group (Lane) ran; `solved` the fraction solved.
#include <benchmark/benchmark.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "quasistep/kernels/lane.hpp"
#include "quasistep/kernels/pgs.hpp"

namespace {

constexpr int kWorlds = 64;  // a multiple of every lane width
constexpr int kFixedSweeps = 50;

struct Instance {
  int n = 0;
  std::vector<double> M, q;  // row-major
};

Instance contact_lcp(int boxes, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double h = 0.1, g = 9.81;
  const int dofs = 7 * boxes, rows = 8 * boxes;
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(rows, dofs);
  Eigen::VectorXd qdiag(dofs), c(dofs), phi(rows);
  int r = 0;
  for (int b = 0; b < boxes; ++b) {
    const int o = 7 * b, f1 = o + 3, f2 = o + 5;  // box (x, y, theta), finger 1, finger 2
    const double mass = 0.5 + 1.5 * u(rng), w = 0.05 + 0.05 * u(rng), hgt = 0.05 + 0.05 * u(rng);
    const double mu = 0.3 + 0.7 * u(rng);
    qdiag.segment(o, 3) << mass, mass, mass * (w * w + hgt * hgt) / 3;
    const double k1 = 100 + 900 * u(rng), k2 = 100 + 900 * u(rng);
    qdiag.segment(f1, 2).setConstant(h * h * k1);
    qdiag.segment(f2, 2).setConstant(h * h * k2);
    // c = -h [gravity on the box; K (commanded - current) for the fingers], squeezing inward.
    c.segment(o, 3) << 0, h * mass * g, 0;
    c.segment(f1, 2) << -h * k1 * 0.01 * u(rng), -h * k1 * 0.002 * (u(rng) - 0.5);
    c.segment(f2, 2) << h * k2 * 0.01 * u(rng), -h * k2 * 0.002 * (u(rng) - 0.5);
    // Contacts: ground at (-w, -hgt) and (w, -hgt); fingers on the left and right faces.
    struct Contact {
      double px, py, nx, ny;
      int finger;
    };
    const double tilt = 0.1 * (u(rng) - 0.5);
    const Contact cs[4] = {{-w, -hgt, 0, 1, -1},
                           {w, -hgt, 0, 1, -1},
                           {-w, hgt * (u(rng) - 0.5), std::cos(tilt), std::sin(tilt), f1},
                           {w, hgt * (u(rng) - 0.5), -std::cos(tilt), std::sin(-tilt), f2}};
    for (const Contact& ct : cs) {
      const double tx = -ct.ny, ty = ct.nx;
      Eigen::VectorXd jn = Eigen::VectorXd::Zero(dofs), jt = Eigen::VectorXd::Zero(dofs);
      // Relative velocity of the box point along n (box minus finger).
      jn.segment(o, 3) << ct.nx, ct.ny, ct.px * ct.ny - ct.py * ct.nx;
      jt.segment(o, 3) << tx, ty, ct.px * ty - ct.py * tx;
      if (ct.finger >= 0) {
        jn.segment(ct.finger, 2) << -ct.nx, -ct.ny;
        jt.segment(ct.finger, 2) << -tx, -ty;
      }
      const double gap = u(rng) < 0.5 ? 0.0 : 0.005 * u(rng);
      for (double s : {1.0, -1.0}) {
        J.row(r) = (jn + s * mu * jt).transpose();
        phi[r++] = gap;
      }
    }
  }
  const Eigen::VectorXd qinv = qdiag.cwiseInverse();
  const Eigen::MatrixXd M = J * qinv.asDiagonal() * J.transpose();
  const Eigen::VectorXd q = phi / h - J * qinv.asDiagonal() * c;
  Instance p;
  p.n = rows;
  p.M.resize(rows * rows);
  p.q.resize(rows);
  for (int i = 0; i < rows; ++i) {
    p.q[i] = q[i];
    for (int j = 0; j < rows; ++j) p.M[i * rows + j] = M(i, j);
  }
  return p;
}

const std::vector<Instance>& instances(int n) {
  static std::vector<Instance> cache[33];
  auto& v = cache[n];
  if (v.empty()) {
    std::mt19937_64 rng(1000 + n);
    for (int i = 0; i < kWorlds; ++i) v.push_back(contact_lcp(n / 8, rng));
  }
  return v;
}

qs::PgsSettings settings(bool fixed) {
  qs::PgsSettings s;
  s.omega = 1.0;
  if (fixed) {
    s.tolerance = 0;
    s.max_iterations = kFixedSweeps;
    s.check_every = kFixedSweeps;
  } else {
    s.tolerance = 1e-6;
    s.max_iterations = 100000;
    s.check_every = 4;
  }
  return s;
}

void BM_PgsDouble(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const bool fixed = state.range(1) == 1;
  const auto& set = instances(n);
  const qs::PgsSettings s = settings(fixed);
  qs::Pgs<double> pgs(n);
  qs::PgsResult<double> r;
  std::vector<double> z(n);
  double sweeps = 0, solved = 0;
  for (const Instance& p : set) {
    std::fill(z.begin(), z.end(), 0.0);
    pgs.solve(n, p.M, p.q, z, s, r);
    sweeps += r.iterations[0];
    solved += r.status[0] == qs::Status::solved;
  }
  size_t i = 0;
  for (auto _ : state) {
    const Instance& p = set[i++ % set.size()];
    std::fill(z.begin(), z.end(), 0.0);
    benchmark::DoNotOptimize(pgs.solve(n, p.M, p.q, z, s, r));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["world"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                               benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["sweeps"] = sweeps / set.size();
  state.counters["solved"] = solved / set.size();
}

void BM_PgsLane(benchmark::State& state) {
  using qs::Lane;
  const int n = static_cast<int>(state.range(0));
  const bool fixed = state.range(1) == 1;
  const auto& set = instances(n);
  const qs::PgsSettings s = settings(fixed);
  const int groups = kWorlds / qs::kLaneWidth;
  std::vector<std::vector<Lane>> M(groups, std::vector<Lane>(n * n)), q(groups, std::vector<Lane>(n));
  for (int g = 0; g < groups; ++g)
    for (int l = 0; l < qs::kLaneWidth; ++l) {
      const Instance& p = set[g * qs::kLaneWidth + l];
      for (int e = 0; e < n * n; ++e) M[g][e].set(l, p.M[e]);
      for (int i = 0; i < n; ++i) q[g][i].set(l, p.q[i]);
    }
  qs::Pgs<Lane> pgs(n);
  qs::PgsResult<Lane> r;
  std::vector<Lane> z(n);
  double sweeps = 0, solved = 0;
  for (int g = 0; g < groups; ++g) {
    std::fill(z.begin(), z.end(), Lane(0.0));
    pgs.solve(n, M[g], q[g], z, s, r);
    sweeps += *std::max_element(r.iterations.begin(), r.iterations.end());
    for (qs::Status st : r.status) solved += st == qs::Status::solved;
  }
  size_t i = 0;
  for (auto _ : state) {
    const size_t g = i++ % groups;
    std::fill(z.begin(), z.end(), Lane(0.0));
    benchmark::DoNotOptimize(pgs.solve(n, M[g], q[g], z, s, r));
    benchmark::ClobberMemory();
  }
  const double worlds = static_cast<double>(state.iterations()) * qs::kLaneWidth;
  state.SetItemsProcessed(static_cast<int64_t>(worlds));
  state.counters["world"] = benchmark::Counter(worlds, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["lanes"] = qs::kLaneWidth;
  state.counters["sweeps"] = sweeps / groups;
  state.counters["solved"] = solved / set.size();
}

// Args: n, fixed (1: 50 sweeps; 0: to tolerance 1e-6).
#define QS_PGS_ARGS ->ArgsProduct({{8, 16, 32}, {1, 0}})->ArgNames({"n", "fixed"})->Unit(benchmark::kMicrosecond)
BENCHMARK(BM_PgsDouble) QS_PGS_ARGS;
BENCHMARK(BM_PgsLane) QS_PGS_ARGS;
#undef QS_PGS_ARGS

}  // namespace

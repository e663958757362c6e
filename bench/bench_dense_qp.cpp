// The dense QP kernel on random 96-variable PSD QPs with 200 inequality rows, 4 equality
// rows and a box on every variable, in two shapes:
//   miqp   H = 2 I on 6 of the 96 variables (the MIQP's ||dq_a - dq_a_bar||^2), the rest
//          of the variables only in rows and in a small linear term;
//   dense  H = J'J with J 48 x 96: rank 48, every variable touched.
// Timed: a cold solve (phase-1 LP + active set); a warm re-solve from the optimal working
// set; a branch-and-bound child (one variable fixed at a rounded optimal value) solved cold
// and warm from the parent's set. Every answer is checked outside the timed loop
// (qp_kkt_residual <= 1e-9) and counted as `verified`; iterations are per solve.
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "quasistep/kernels/dense_qp.hpp"

namespace {

constexpr int kN = 96, kMe = 4, kMi = 200, kInstances = 20;

struct Instance {
  Eigen::MatrixXd H, A_eq, A_in;
  Eigen::VectorXd c, b_eq, b_in, lo, up, lo_child, up_child;
  qs::DenseQpProblem view() const { return {H, c, A_eq, b_eq, A_in, b_in, lo, up}; }
  qs::DenseQpProblem child() const { return {H, c, A_eq, b_eq, A_in, b_in, lo_child, up_child}; }
  std::unique_ptr<qs::QpWorkingSet> optimal;  // the parent's optimal working set
};

Instance make(bool dense, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1), pos(0, 1);
  Instance p;
  p.H = Eigen::MatrixXd::Zero(kN, kN);
  p.c.resize(kN);
  if (dense) {
    Eigen::MatrixXd J(48, kN);
    for (int i = 0; i < 48; ++i)
      for (int j = 0; j < kN; ++j) J(i, j) = u(rng);
    p.H = J.transpose() * J;
    p.H = (0.5 * (p.H + p.H.transpose())).eval();
    for (int j = 0; j < kN; ++j) p.c[j] = u(rng);
  } else {
    for (int j = 0; j < 6; ++j) p.H(j, j) = 2.0;
    for (int j = 0; j < kN; ++j) p.c[j] = j < 6 ? -2.0 * u(rng) : 0.1 * u(rng);
  }
  Eigen::VectorXd x0(kN);
  for (int j = 0; j < kN; ++j) x0[j] = u(rng);
  p.A_eq.resize(kMe, kN);
  p.A_in.resize(kMi, kN);
  for (int i = 0; i < kMe; ++i)
    for (int j = 0; j < kN; ++j) p.A_eq(i, j) = u(rng);
  for (int i = 0; i < kMi; ++i)
    for (int j = 0; j < kN; ++j) p.A_in(i, j) = u(rng);
  p.b_eq = p.A_eq * x0;
  p.b_in = p.A_in * x0;
  for (int i = 0; i < kMi; ++i) p.b_in[i] -= pos(rng);
  p.lo = Eigen::VectorXd::Constant(kN, -2);
  p.up = Eigen::VectorXd::Constant(kN, 2);
  return p;
}

const std::vector<Instance>& instances(bool dense) {
  static std::vector<Instance> cache[2];
  auto& v = cache[dense];
  if (v.empty()) {
    auto solver = std::make_unique<qs::DenseQp>(qs::DenseQpCapacity{kN, kMe, kMi});
    for (int s = 0; s < kInstances; ++s) {
      Instance p = make(dense, 500 + s);
      solver->solve(p.view());
      p.optimal = std::make_unique<qs::QpWorkingSet>(solver->working_set());
      // The child fixes the variable farthest from its bounds at its rounded value.
      int fix = 0;
      for (int j = 0; j < kN; ++j)
        if (std::abs(solver->x()[j]) < std::abs(solver->x()[fix])) fix = j;
      p.lo_child = p.lo;
      p.up_child = p.up;
      p.lo_child[fix] = p.up_child[fix] = std::round(solver->x()[fix] + 0.5);
      v.push_back(std::move(p));
    }
  }
  return v;
}

enum Mode { cold, warm_same, child_cold, child_warm };

void BM_DenseQp(benchmark::State& state) {
  const bool dense = state.range(0) != 0;
  const Mode mode = static_cast<Mode>(state.range(1));
  const auto& set = instances(dense);
  auto solver = std::make_unique<qs::DenseQp>(qs::DenseQpCapacity{kN, kMe, kMi});
  const auto solve = [&](const Instance& p) {
    switch (mode) {
      case cold: return solver->solve(p.view());
      case warm_same: return solver->solve(p.view(), *p.optimal);
      case child_cold: return solver->solve(p.child());
      case child_warm: return solver->solve(p.child(), *p.optimal);
    }
    return qs::Status::not_run;
  };
  int verified = 0, accepted = 0;
  long iterations = 0, pivots = 0;
  for (const auto& p : set) {
    const qs::Status s = solve(p);
    const qs::DenseQpProblem q = mode == child_cold || mode == child_warm ? p.child() : p.view();
    if (s == qs::Status::solved &&
        qs::qp_kkt_residual(q, solver->x(), solver->y(), solver->z(), solver->bound_multipliers()) <= 1e-9)
      ++verified;
    accepted += solver->warm_start() == qs::QpWarmStart::accepted;
    iterations += solver->stats().iterations;
    pivots += solver->phase1_pivots();
  }
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(solve(set[i++ % set.size()]));
  state.counters["verified"] = verified;
  state.counters["warm_accepted"] = accepted;
  state.counters["iterations"] = static_cast<double>(iterations) / set.size();
  state.counters["lp_pivots"] = static_cast<double>(pivots) / set.size();
}
BENCHMARK(BM_DenseQp)
    ->ArgNames({"dense", "mode"})
    ->ArgsProduct({{0, 1}, {cold, warm_same, child_cold, child_warm}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

// Lemke on Halm-Posa contact LCPs (a disk touched by k point fingers, Halm & Posa 2018, eqs. 17 and
// 38; tests/support/random_problems.hpp), k = 2, 4, 8, 16 (n = 8, 16, 32, 64). Every answer is
// checked outside the timed loop against the data (scaled natural residual <= 1e-9, the
// kernel's own acceptance test, recomputed here independently), and counted:
//   verified       solved and the check passes
//   failed         the solver reported no solution
//   wrong_success  the solver reported success but the check fails
// When Debian's libsiconos-numerics-dev is installed the same instances go to Siconos'
// lcp_lexicolemke in the same run (BM_SiconosLexicoLemke).
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <vector>

#include "quasistep/kernels/lemke.hpp"
#include "tests/support/random_problems.hpp"

#ifdef QUASISTEP_HAVE_SICONOS
#include <LCP_Solvers.h>
#include <LinearComplementarityProblem.h>
#include <NumericsMatrix.h>
#include <SolverOptions.h>
#include <lcp_cst.h>
#endif

namespace {

constexpr int kInstances = 300;

const std::vector<qs::LcpInstance>& instances(int k) {
  static std::vector<qs::LcpInstance> cache[17];
  auto& v = cache[k];
  if (v.empty()) {
    const double c[3] = {1.0, 0.1, 0.01};
    for (int s = 0; s < kInstances; ++s) v.push_back(qs::halm_posa_disk_lcp(k, 1000 + s, c[s % 3]));
  }
  return v;
}

bool verified(const qs::LcpInstance& p, const Eigen::VectorXd& z) {
  return z.allFinite() && z.minCoeff() >= 0 && qs::lcp_certified_residual(p.M, p.q, z) <= qs::kLcpTolerance;
}

void report(benchmark::State& state, int ok, int failed, int wrong) {
  state.counters["verified"] = ok;
  state.counters["failed"] = failed;
  state.counters["wrong_success"] = wrong;
  state.counters["n"] = 4 * static_cast<int>(state.range(0));
}

/// quasistep's Lemke with capacity N = n (the compile-time capacity a caller picks for its
/// problem size).
template <int N>
void BM_QuasistepLemke(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const auto& set = instances(k);
  auto solver = std::make_unique<qs::Lemke<N>>();
  auto r = std::make_unique<typename qs::Lemke<N>::Result>();
  int ok = 0, failed = 0, wrong = 0;
  long pivots = 0;
  for (const auto& p : set) {
    const qs::Status s = solver->solve(p.M, p.q, *r);
    pivots += r->stats.iterations;
    if (s != qs::Status::solved) ++failed;
    else if (verified(p, r->z)) ++ok;
    else ++wrong;
  }
  size_t i = 0;
  for (auto _ : state) {
    const auto& p = set[i++ % set.size()];
    benchmark::DoNotOptimize(solver->solve(p.M, p.q, *r));
  }
  report(state, ok, failed, wrong);
  state.counters["pivots"] = static_cast<double>(pivots) / set.size();
}
BENCHMARK_TEMPLATE(BM_QuasistepLemke, 8)->Arg(2)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_QuasistepLemke, 16)->Arg(4)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_QuasistepLemke, 32)->Arg(8)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_QuasistepLemke, 64)->Arg(16)->Unit(benchmark::kMicrosecond);

#ifdef QUASISTEP_HAVE_SICONOS
void BM_SiconosLexicoLemke(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const auto& set = instances(k);
  const int n = 4 * k;
  // Siconos takes column-major dense data, as Eigen stores it.
  std::vector<NumericsMatrix*> mats;
  for (const auto& p : set) {
    NumericsMatrix* m = NM_create(NM_DENSE, n, n);
    std::memcpy(m->matrix0, p.M.data(), sizeof(double) * n * n);
    mats.push_back(m);
  }
  SolverOptions* options = solver_options_create(SICONOS_LCP_LEMKE);  // lcp_lexicolemke;
  Eigen::VectorXd z(n), w(n);
  auto solve = [&](size_t idx) {
    LinearComplementarityProblem problem;
    problem.size = n;
    problem.M = mats[idx];
    problem.q = const_cast<double*>(set[idx].q.data());
    int info = 0;
    z.setZero();
    w.setZero();
    lcp_lexicolemke(&problem, z.data(), w.data(), &info, options);
    return info;
  };
  int ok = 0, failed = 0, wrong = 0;
  for (size_t idx = 0; idx < set.size(); ++idx) {
    if (solve(idx) != 0) ++failed;
    else if (verified(set[idx], z)) ++ok;
    else ++wrong;
  }
  size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(solve(i++ % set.size()));
  report(state, ok, failed, wrong);
  solver_options_delete(options);
  for (NumericsMatrix* m : mats) NM_free(m);
}
BENCHMARK(BM_SiconosLexicoLemke)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Unit(benchmark::kMicrosecond);
#endif

}  // namespace

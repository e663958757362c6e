// The UCP methods of Pang, Trinkle & Lo 1996 (kernels/ucp.hpp):
//   DataSet/k          the bilinear algorithm on the paper's data sets 1-3 (target <= 20 us)
//   DataSet4Proof      the exact method's proof that data set 4 has no solution (<= 1 ms)
//   Random/method/n_c  sec. 5's random problems (mu in (0, 1), |abar| = 0), 20 instances
//                      cycled through; counters: solved / settled fractions
//   Table1/row         Table 1's twenty settings, 5 instances each, run once: how many each
//                      method solves, how many the exact method settles within its node
//                      limit, and the node counts (median, max)
// Problem construction is outside the timed loops; every solve is a full run of the method.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "quasistep/core/formulations/ucp/ucp_problem_file.hpp"
#include "quasistep/core/random_problems.hpp"
#include "quasistep/kernels/ucp.hpp"

namespace {

qs::UcpData data_set(int k) {
  return qs::load_ucp_problem(std::string(QUASISTEP_SOURCE_DIR) + "/tests/data/ucp/data_set_" +
                                   std::to_string(k) + ".json");
}

void DataSet(benchmark::State& state) {
  qs::Ucp u;
  u.build(data_set(static_cast<int>(state.range(0))));
  qs::UcpBilinear b(u);
  int pairs = 0;
  bool ok = true;
  for (auto _ : state) {
    const qs::UcpBilinearResult& r = b.solve();
    ok = ok && r.status == qs::Status::solved;
    pairs = r.pairs;
  }
  state.counters["pairs"] = pairs;
  state.counters["solved"] = ok;
}
BENCHMARK(DataSet)->DenseRange(1, 3)->Unit(benchmark::kMicrosecond);

void DataSet4Proof(benchmark::State& state) {
  qs::Ucp u;
  u.build(data_set(4));
  qs::UcpExactOptions o;
  o.parallel = state.range(0) != 0;
  qs::UcpExact ex(u, o);
  long nodes = 0;
  bool ok = true;
  for (auto _ : state) {
    const qs::UcpExactResult& r = ex.solve();
    ok = ok && r.status == qs::Status::infeasible;
    nodes = r.stats.nodes;
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["proven"] = ok;
}
BENCHMARK(DataSet4Proof)->ArgName("parallel")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

constexpr int kInstances = 20;

/// The median of per-solve times (each instance's solves weigh equally when the loop ran
/// whole cycles), in ms.
double median_ms(std::vector<double> t) {
  if (t.empty()) return 0;
  std::nth_element(t.begin(), t.begin() + static_cast<long>(t.size() / 2), t.end());
  return 1e3 * t[t.size() / 2];
}

struct Instances {
  std::vector<std::unique_ptr<qs::Ucp>> problems;
  explicit Instances(const qs::UcpRandomSpec& spec, int count, std::uint64_t seed0) {
    for (int k = 0; k < count; ++k) {
      auto u = std::make_unique<qs::Ucp>();
      u->build(qs::ucp_random_problem(spec, seed0 + static_cast<std::uint64_t>(k)));
      problems.push_back(std::move(u));
    }
  }
};

void RandomBilinear(benchmark::State& state) {
  qs::UcpRandomSpec spec;
  spec.n_c = static_cast<int>(state.range(0));
  const Instances in(spec, kInstances, 500);
  std::vector<std::unique_ptr<qs::UcpBilinear>> solvers;
  for (const auto& u : in.problems) solvers.push_back(std::make_unique<qs::UcpBilinear>(*u));
  long runs = 0, solved = 0;
  size_t k = 0;
  std::vector<double> times;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    solved += solvers[k]->solve().status == qs::Status::solved;
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    ++runs;
    k = (k + 1) % solvers.size();
  }
  state.counters["solved"] = static_cast<double>(solved) / static_cast<double>(runs);
  state.counters["median_ms"] = median_ms(times);
}
BENCHMARK(RandomBilinear)->ArgName("n_c")->Arg(3)->Arg(10)->Arg(20)->Arg(30)->Arg(40)->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);

void RandomExact(benchmark::State& state) {
  qs::UcpRandomSpec spec;
  spec.n_c = static_cast<int>(state.range(0));
  const Instances in(spec, kInstances, 500);
  qs::UcpExactOptions o;
  o.max_nodes = 2000;
  std::vector<std::unique_ptr<qs::UcpExact>> solvers;
  for (const auto& u : in.problems) solvers.push_back(std::make_unique<qs::UcpExact>(*u, o));
  long runs = 0, settled = 0, nodes = 0;
  size_t k = 0;
  std::vector<double> times;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const qs::UcpExactResult& r = solvers[k]->solve();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    settled += r.status == qs::Status::solved || r.status == qs::Status::infeasible;
    nodes += r.stats.nodes;
    ++runs;
    k = (k + 1) % solvers.size();
  }
  state.counters["settled"] = static_cast<double>(settled) / static_cast<double>(runs);
  state.counters["nodes"] = static_cast<double>(nodes) / static_cast<double>(runs);
  state.counters["median_ms"] = median_ms(times);
}
BENCHMARK(RandomExact)->ArgName("n_c")->Arg(3)->Arg(10)->Arg(20)->Arg(30)->Arg(40)->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);

// Table 1 of Pang, Trinkle & Lo 1996: (n_c, mu_max, |abar|); |alpha| = 2 n_c - |abar|.
struct Row {
  int n_c;
  double mu_max;
  int n_abar;
};
constexpr Row kTable1[20] = {{3, 1.0, 0},   {10, 1.0, 0},  {10, 2.0, 0},  {15, 1.2, 1},  {18, 0.8, 9},
                             {20, 1.0, 0},  {20, 1.5, 0},  {20, 1.2, 0},  {20, 1.0, 10}, {20, 1.0, 10},
                             {20, 1.0, 0},  {30, 1.0, 0},  {30, 0.5, 15}, {30, 0.6, 15}, {40, 1.0, 0},
                             {40, 1.0, 0},  {10, 1.3, 5},  {15, 1.2, 6},  {30, 0.6, 15}, {40, 1.0, 20}};
constexpr int kPerRow = 5;

void Table1(benchmark::State& state) {
  const Row& row = kTable1[state.range(0) - 1];
  qs::UcpRandomSpec spec{row.n_c, row.mu_max, row.n_abar};
  const long node_limit = state.range(1);
  int bil = 0, ex_solved = 0, ex_infeasible = 0, ex_limit = 0;
  std::vector<long> nodes;
  double bil_s = 0, ex_s = 0, ex_max_s = 0;
  for (auto _ : state) {
    for (int k = 0; k < kPerRow; ++k) {
      qs::Ucp u;
      u.build(qs::ucp_random_problem(spec, 1000 * static_cast<std::uint64_t>(state.range(0)) + k));
      qs::UcpBilinear b(u);
      auto t0 = std::chrono::steady_clock::now();
      bil += b.solve().status == qs::Status::solved;
      bil_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      qs::UcpExactOptions o;
      o.max_nodes = node_limit;
      qs::UcpExact e(u, o);
      t0 = std::chrono::steady_clock::now();
      const qs::UcpExactResult& r = e.solve();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ex_s += s;
      ex_max_s = std::max(ex_max_s, s);
      ex_solved += r.status == qs::Status::solved;
      ex_infeasible += r.status == qs::Status::infeasible;
      ex_limit += r.status == qs::Status::iteration_limit;
      nodes.push_back(r.stats.nodes);
    }
  }
  std::sort(nodes.begin(), nodes.end());
  state.counters["n_c"] = row.n_c;
  state.counters["abar"] = row.n_abar;
  state.counters["bil_solved"] = bil;
  state.counters["ex_solved"] = ex_solved;
  state.counters["ex_infeas"] = ex_infeasible;
  state.counters["ex_limit"] = ex_limit;
  state.counters["nodes_med"] = static_cast<double>(nodes[nodes.size() / 2]);
  state.counters["nodes_max"] = static_cast<double>(nodes.back());
  state.counters["bil_ms"] = 1e3 * bil_s / kPerRow;
  state.counters["ex_ms"] = 1e3 * ex_s / kPerRow;
  state.counters["ex_max_ms"] = 1e3 * ex_max_s;
}
BENCHMARK(Table1)->ArgNames({"row", "limit"})->ArgsProduct({benchmark::CreateDenseRange(1, 20, 1), {2000}})
    ->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

// The UCP methods of Pang, Trinkle & Lo 1996 (quasistep/kernels/ucp.hpp):
//   DataSet/k          the bilinear algorithm on the paper's data sets 1-3 (target <= 20 us)
//   DataSet4Proof      the exact method's proof that data set 4 has no solution (<= 1 ms)
//   Random/method/n_c  the project's first random problems (ucp_random_problem; mu in (0, 1),
//                      |abar| = 0), 20 instances cycled through; counters: solved / settled
//                      fractions
//   Table1/row         Table 1's twenty settings, 5 instances each of the paper's
//                      construction (ucp_table1_problem), run once: per instance the bilinear
//                      algorithm's verdict, pairs and best x'y, the exact method's verdict and
//                      nodes (joints:1, the same with contact-frame finger joints)
//   LargerDataSet      sec. 5's n_c = 20, |alpha| = 23 study: one X, four load versions
//   Enumeration        ucp_enumerate_modes' counts at n_c = 8, 20 and 40 (node limit 200000)
// Problem construction is outside the timed loops; every solve is a full run of the method.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "quasistep/core/ucp_problem_file.hpp"
#include "tests/support/random_problems.hpp"
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

/// A per-instance counter's name, NAME_k (snprintf: GCC 12's -Wrestrict misfires on
/// std::string concatenation here).
std::string counter(const char* name, int k) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s_%d", name, k);
  return buf;
}

/// Table 1's row `row` (1-based), instance k: the paper's construction (ucp_table1_problem).
qs::UcpTable1Instance table1_instance(int row, int k, qs::UcpFingerJoints joints) {
  const Row& r = kTable1[row - 1];
  qs::UcpTable1Spec spec;
  spec.n_c = r.n_c;
  spec.mu_max = r.mu_max;
  spec.n_abar = r.n_abar;
  spec.joints = joints;
  return qs::ucp_table1_problem(spec, 1000 * static_cast<std::uint64_t>(row) + static_cast<std::uint64_t>(k));
}

/// Table1/row/limit/joints: one row's 5 instances, each solved once by both methods. Per
/// instance k (counters ending in _k): bil_k 1 when the bilinear algorithm solved it, pairs_k
/// the (x, y) pairs it found (the paper's "No. of pairs (x, y) found"), best_k the least x'y
/// it reached (the paper's "Best x'y"), orig_k 1 when sec. 4's original algorithm
/// (UcpRestart::step3) solved it, ex_k the exact method's verdict (0 solved,
/// 1 proven none, 2 node limit), nodes_k its nodes. empty: instances with X or Y empty (the
/// construction makes both nonempty, so 0). joints 0: fingers on world x-y joints (the
/// rebuilt table), 1: on contact-frame joints.
void Table1(benchmark::State& state) {
  const int row_no = static_cast<int>(state.range(0));
  const Row& row = kTable1[row_no - 1];
  const long node_limit = state.range(1);
  const auto joints = state.range(2) == 0 ? qs::UcpFingerJoints::world_xy : qs::UcpFingerJoints::contact_frame;
  int bil = 0, orig = 0, ex_solved = 0, ex_infeasible = 0, ex_limit = 0, empty = 0;
  std::vector<long> nodes;
  double bil_s = 0, ex_s = 0, ex_max_s = 0;
  for (auto _ : state) {
    for (int k = 0; k < kPerRow; ++k) {
      qs::Ucp u;
      u.build(table1_instance(row_no, k, joints).data);
      qs::UcpBilinear b(u);
      auto t0 = std::chrono::steady_clock::now();
      const qs::UcpBilinearResult& br = b.solve();
      bil_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const bool bil_ok = br.status == qs::Status::solved;
      bil += bil_ok;
      state.counters[counter("bil", k)] = bil_ok;
      state.counters[counter("pairs", k)] = br.pairs;
      state.counters[counter("best", k)] = bil_ok ? 0.0 : br.product;
      // Sec. 4's original algorithm (Step 3 repeated from a random pair, not Step 1).
      qs::UcpBilinearOptions oo;
      oo.restart = qs::UcpRestart::step3;
      qs::UcpBilinear ob(u, oo);
      const bool orig_ok = ob.solve().status == qs::Status::solved;
      orig += orig_ok;
      state.counters[counter("orig", k)] = orig_ok;
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
      empty += r.empty_side != 0 || br.status == qs::Status::infeasible;
      state.counters[counter("ex", k)] = r.status == qs::Status::solved ? 0 : r.status == qs::Status::infeasible ? 1 : 2;
      state.counters[counter("nodes", k)] = static_cast<double>(r.stats.nodes);
      nodes.push_back(r.stats.nodes);
    }
  }
  std::sort(nodes.begin(), nodes.end());
  state.counters["n_c"] = row.n_c;
  state.counters["abar"] = row.n_abar;
  state.counters["bil_solved"] = bil;
  state.counters["orig_solved"] = orig;
  state.counters["ex_solved"] = ex_solved;
  state.counters["ex_infeas"] = ex_infeasible;
  state.counters["ex_limit"] = ex_limit;
  state.counters["empty"] = empty;
  state.counters["nodes_med"] = static_cast<double>(nodes[nodes.size() / 2]);
  state.counters["nodes_max"] = static_cast<double>(nodes.back());
  state.counters["bil_ms"] = 1e3 * bil_s / kPerRow;
  state.counters["ex_ms"] = 1e3 * ex_s / kPerRow;
  state.counters["ex_max_ms"] = 1e3 * ex_max_s;
}
BENCHMARK(Table1)->ArgNames({"row", "limit", "joints"})
    ->ArgsProduct({benchmark::CreateDenseRange(1, 20, 1), {2000}, {0, 1}})
    ->Iterations(1)->Unit(benchmark::kMillisecond);

/// The basic variables at value zero of a vertex x of X: a basis has one basic variable per
/// row of A_x (its rows are independent), and all of x's positive entries are basic.
int degenerate_basics(const qs::Ucp& u, const Eigen::VectorXd& x) {
  const double tol = 1e-9 * std::max(1.0, x.cwiseAbs().maxCoeff());
  return static_cast<int>(u.A_x().rows()) - static_cast<int>((x.array() > tol).count());
}

/// Whether Y has a point complementary to x (y_i = 0 wherever x_i > 0): whether x solves
/// this version too. One LP over Y (in its LP units) with those entries fixed at 0.
bool complements(const qs::Ucp& u, const Eigen::VectorXd& x) {
  const int n = u.n();
  qs::DenseLpCapacity cap;
  cap.rows = std::max(1, static_cast<int>(u.A_y().rows()));
  cap.cols = n;
  qs::DenseLp lp(cap);
  const double tol = 1e-9 * std::max(1.0, x.cwiseAbs().maxCoeff());
  const Eigen::VectorXd lo = Eigen::VectorXd::Zero(n), c = Eigen::VectorXd::Zero(n);
  Eigen::VectorXd hi = Eigen::VectorXd::Constant(n, std::numeric_limits<double>::infinity());
  for (int i = 0; i < n; ++i)
    if (x[i] > tol) hi[i] = 0;
  return lp.solve({u.A_y(), u.b_y_lp(), c, lo, hi}) == qs::Status::solved;
}

/// Sec. 5's larger data set (n_c = 20, n_theta = 40, |alpha| = 23; the paper's data are not
/// given): one geometry and motion (seed), four load versions (load seeds: mu, g_obj and g_man
/// redrawn, X unchanged), as the paper's original and "three versions". Per version v:
/// bil_v (solved), pairs_v, ex_v (0 solved, 1 proven none, 2 limit), same_x_v: 1 when the
/// bilinear algorithm's x equals version 0's (the paper found it identical in all three),
/// fits_v: 1 when version 0's x solves version v too (some y of its Y complements it), and
/// zeros: the basic variables at zero in version 0's x (the paper's had nine).
void LargerDataSet(benchmark::State& state) {
  qs::UcpTable1Spec spec;
  spec.n_c = 20;
  spec.mu_max = 1.0;
  spec.n_abar = 17;
  spec.rolling = static_cast<int>(state.range(1));
  const auto seed = static_cast<std::uint64_t>(state.range(0));
  for (auto _ : state) {
    Eigen::VectorXd x0;
    for (int v = 0; v < 4; ++v) {
      qs::Ucp u;
      u.build(qs::ucp_table1_problem(spec, 7000 + seed, 7000 + seed + 100 * static_cast<std::uint64_t>(v)).data);
      qs::UcpBilinear b(u);
      const qs::UcpBilinearResult& r = b.solve();
      const bool ok = r.status == qs::Status::solved;
      state.counters[counter("bil", v)] = ok;
      state.counters[counter("pairs", v)] = r.pairs;
      if (v == 0 && ok) {
        x0 = r.x;
        state.counters["zeros"] = degenerate_basics(u, x0);
      }
      if (v > 0) {
        state.counters[counter("same_x", v)] = ok && x0.size() > 0 && (r.x - x0).cwiseAbs().maxCoeff() <= 1e-9;
        state.counters[counter("fits", v)] = x0.size() > 0 && complements(u, x0);
      }
      qs::UcpExactOptions o;
      o.max_nodes = 2000;
      qs::UcpExact e(u, o);
      const qs::Status es = e.solve().status;
      state.counters[counter("ex", v)] = es == qs::Status::solved ? 0 : es == qs::Status::infeasible ? 1 : 2;
    }
  }
}
BENCHMARK(LargerDataSet)->ArgNames({"seed", "rolling"})
    ->ArgsProduct({benchmark::CreateDenseRange(1, 5, 1), {0, 5, 10, 15}})->Iterations(1)->Unit(benchmark::kMillisecond);

/// The enumerative count: sec. 5 quotes Trinkle & Zeng's enumeration testing 1107 (x, y)
/// pairs at n_c = 8 with |alpha| = 2 n_c and 377,379,369 at n_c = 20. Ours (ucp_enumerate_modes) on 5 such problems of
/// the construction above: nodes (partial mode assignments), LPs, solution mode
/// combinations, against the bilinear algorithm's pairs. limit: complete when not reached.
void Enumeration(benchmark::State& state) {
  qs::UcpTable1Spec spec;
  spec.n_c = static_cast<int>(state.range(0));
  spec.mu_max = 1.0;
  spec.n_abar = 0;
  for (auto _ : state) {
    for (int k = 0; k < kPerRow; ++k) {
      qs::Ucp u;
      u.build(qs::ucp_table1_problem(spec, 9000 + static_cast<std::uint64_t>(100 * spec.n_c + k)).data);
      const qs::UcpEnumerationResult e = qs::ucp_enumerate_modes(u, state.range(1));
      qs::UcpBilinear b(u);
      const qs::UcpBilinearResult& r = b.solve();
      state.counters[counter("complete", k)] = e.status == qs::Status::solved;
      state.counters[counter("nodes", k)] = static_cast<double>(e.nodes);
      state.counters[counter("lps", k)] = static_cast<double>(e.lps);
      state.counters[counter("modes", k)] = static_cast<double>(e.solutions.size());
      state.counters[counter("bil", k)] = r.status == qs::Status::solved;
      state.counters[counter("pairs", k)] = r.pairs;
    }
  }
}
BENCHMARK(Enumeration)->ArgNames({"n_c", "limit"})->Args({8, 200000})->Args({20, 200000})->Args({40, 200000})->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

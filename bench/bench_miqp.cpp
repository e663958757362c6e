// Issue 5 item 6: the MIQP step (Pang & Tedrake 2018, eq. (23)) per step over whole trajectories, for a
// Table-I-style comparison: mean, worst and standard deviation of the step time, and the
// branch-and-bound nodes (both stages) per step, on 1 and 2 threads.
//
// Each benchmark iteration steps the example's whole trajectory from its initial state and
// times every step alone (steady_clock around step()), so "worst" is a single step, not an
// average. The thread count is TBB's (tbb::global_control): the search itself is identical
// on any count (quasistep/kernels/branch_and_bound.hpp), only the evaluation of a round's nodes is
// spread. speedup_bound_2 is the most two threads can give a trajectory whose nodes all cost
// the same (its steps' searches are what can be spread, a round's nodes side by side).
// Pang & Tedrake's (2018) Table I (3D, Gurobi) is context, not a like-for-like ratio:
//   cylinder, 36 binaries: 2.7 ms mean, 11.8 ms worst;  rounded box, 72: 6.6 ms, 118.7 ms.
#include <benchmark/benchmark.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"
#include "quasistep/core/scene.hpp"

namespace {

void miqp_trajectory(benchmark::State& state, const char* example) {
  const int threads = static_cast<int>(state.range(0));
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
  const qs::Scene scene = qs::load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" + example + ".json");
  const qs::Model& m = *scene.model;
  qs::PangTedrakeMiqp stepper(m);
  const qs::WorldParams params(m);  // as `quasistep run` steps a scene
  std::vector<double> us;
  long nodes = 0, max_nodes = 0, failures = 0, pairs = 0, live = 0;
  // The least node evaluations in sequence on 2 threads: per stage, a round's nodes can
  // run side by side and the rounds cannot, so at least max(rounds, ceil(nodes / 2)).
  // nodes / that is the most 2 threads can give if every node cost the same (stage 2's
  // polishes, which run in sequence, are counted as if they could pair up: still a bound).
  long sequence_2 = 0;
  const auto least_in_sequence = [](const qs::BnbStats& st) { return std::max<long>(st.rounds, (st.nodes + 1) / 2); };
  for (auto _ : state) {
    qs::State s = qs::initial_state(m);
    for (int l = 0; l < m.step.steps; ++l) {
      const auto t0 = std::chrono::steady_clock::now();
      const qs::Status st = stepper.step(m, params, s);
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      if (st != qs::Status::solved) {
        ++failures;
        break;
      }
      const long n = stepper.stage1_stats().nodes + stepper.stage2_stats().nodes;
      nodes += n;
      max_nodes = std::max(max_nodes, n);
      sequence_2 += least_in_sequence(stepper.stage1_stats()) + least_in_sequence(stepper.stage2_stats());
      pairs += stepper.stage1_stats().branched;  // distinct pairs stage 1 split
      live += 4 * stepper.active_contacts();     // pairs in the step's MIQP
    }
  }
  double mean = 0, worst = 0, var = 0;
  for (const double t : us) {
    mean += t;
    worst = std::max(worst, t);
  }
  mean /= static_cast<double>(us.size());
  for (const double t : us) var += (t - mean) * (t - mean);
  const double steps = static_cast<double>(us.size());
  state.counters["mean_us"] = mean;
  state.counters["worst_us"] = worst;
  state.counters["std_us"] = std::sqrt(var / steps);
  state.counters["nodes_mean"] = static_cast<double>(nodes) / steps;
  state.counters["nodes_max"] = static_cast<double>(max_nodes);
  state.counters["branched_pairs_mean"] = static_cast<double>(pairs) / steps;
  state.counters["live_pairs_mean"] = static_cast<double>(live) / steps;
  state.counters["failures"] = static_cast<double>(failures);
  state.counters["speedup_bound_2"] = sequence_2 > 0 ? static_cast<double>(nodes) / static_cast<double>(sequence_2) : 1.0;
}

// Pang & Tedrake 2018, sec. V.A: 3 contacts, 12 pairs (target: mean <= 10 us on one core).
void BM_MiqpCylinderGrasp(benchmark::State& s) { miqp_trajectory(s, "pang_tedrake_grasp"); }
BENCHMARK(BM_MiqpCylinderGrasp)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond);
// >= 36 live pairs (target: mean <= 270 us, worst <= 1.2 ms on one core).
void BM_MiqpBox36(benchmark::State& s) { miqp_trajectory(s, "pang_tedrake_box_36"); }
BENCHMARK(BM_MiqpBox36)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->Iterations(1);
// >= 72 live pairs (target: mean <= 660 us, worst <= 12 ms; 2 threads >= 1.5x).
void BM_MiqpBox72(benchmark::State& s) { miqp_trajectory(s, "pang_tedrake_box_72"); }
BENCHMARK(BM_MiqpBox72)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

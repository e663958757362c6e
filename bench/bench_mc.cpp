// Monte Carlo trials per second, the study's world-step rate against the batch engine's on
// the same worlds, and rollout propagations per second.
//
// BM_Study runs `samples` samples of a study scene (examples/mc_*.json; the whole study, all
// steps, judging included) on 1 or 2 threads; items_per_second is trials per second.
//   grasp: mc_grasp.json, the Anitescu impedance grasp, 60 steps of 0.01 s (target 30,000/s
//          on 2 threads)
//   push:  mc_push.json, the Halm-Posa push, 80 steps at 40 Hz, goal region (target 30,000/s)
//   miqp:  mc_grasp_miqp.json, the same grasp under Pang & Tedrake's (2018) MIQP (target 3,000/s)
// BM_Rollout propagates 1024 (state, 12-step action) pairs of mpc_push.json from the
// initial state with fresh random actions each call, as the sampling-MPC example does;
// items_per_second is pair-propagations (12 steps each) per second.
#include <benchmark/benchmark.h>
#include <tbb/global_control.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "quasistep/batch/batch_stepper.hpp"
#include "quasistep/batch/monte_carlo.hpp"
#include "quasistep/batch/sampling.hpp"
#include "quasistep/batch/world_batch.hpp"
#include "quasistep/batch/rollout.hpp"
#include "quasistep/core/scene.hpp"

namespace {

qs::Scene load(const char* name) {
  return qs::load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" + name);
}

void BM_Study(benchmark::State& state, const char* scene_file, long samples) {
  const qs::Scene s = load(scene_file);
  qs::McOptions o;
  o.samples = samples;
  o.seed = 1;
  o.threads = static_cast<int>(state.range(0));
  o.trajectories = 0;
  double rate = 0;
  for (auto _ : state) {
    const qs::McRun run = qs::run_monte_carlo(s, o);
    rate = qs::summarize(run.study, run.records).rate;
    benchmark::DoNotOptimize(rate);
  }
  state.SetItemsProcessed(state.iterations() * samples);
  state.counters["success_rate"] = rate;
}
BENCHMARK_CAPTURE(BM_Study, grasp, "mc_grasp.json", 16384)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Study, push, "mc_push.json", 16384)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Study, miqp, "mc_grasp_miqp.json", 2048)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

/// mc's world-steps per second against the batch engine stepping the same worlds alone (the
/// study's first `samples` samples, its steps, the same threads): what the study adds to the
/// stepping (sampling, judging, records). The counters: mc_world_steps_per_s,
/// throughput_world_steps_per_s and their ratio (1: the study costs only its steps).
void BM_StudyVsThroughput(benchmark::State& state, const char* scene_file, long samples) {
  const qs::Scene s = load(scene_file);
  const int threads = static_cast<int>(state.range(0)), steps = s.model->step.steps;
  qs::McOptions o;
  o.samples = samples;
  o.seed = 1;
  o.threads = threads;
  o.trajectories = 0;
  // The same worlds in one batch, stepped without judging; reset before each timing.
  qs::WorldBatch batch = qs::sample_batch(s, o.seed, 0, static_cast<int>(samples));
  qs::BatchStepper stepper(batch, {.threads = threads});
  double mc_seconds = 0, tp_seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const qs::McRun run = qs::run_monte_carlo(s, o);
    mc_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    benchmark::DoNotOptimize(run.records.outcome.data());
    state.PauseTiming();
    qs::fill_samples(batch, s, o.seed, 0);
    const auto t0 = std::chrono::steady_clock::now();
    stepper.run(batch, steps);
    tp_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.ResumeTiming();
  }
  const double world_steps = static_cast<double>(state.iterations()) * static_cast<double>(samples) * steps;
  state.counters["mc_world_steps_per_s"] = world_steps / mc_seconds;
  state.counters["throughput_world_steps_per_s"] = world_steps / tp_seconds;
  state.counters["ratio"] = tp_seconds / mc_seconds;
}
BENCHMARK_CAPTURE(BM_StudyVsThroughput, grasp, "mc_grasp.json", 16384)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_StudyVsThroughput, push, "mc_push.json", 16384)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_StudyVsThroughput, miqp, "mc_grasp_miqp.json", 2048)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Rollout(benchmark::State& state) {
  const qs::Scene s = load("mpc_push.json");
  const qs::Model& m = *s.model;
  const int pairs = 1024, steps = 12;
  qs::Rollout r(s.model, {.threads = static_cast<int>(state.range(0))});
  std::vector<qs::State> states(pairs, qs::initial_state(m));
  std::vector<double> actions(static_cast<std::size_t>(pairs) * steps * m.n_a);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> v(-0.1, 0.1);
  for (auto _ : state) {
    state.PauseTiming();
    for (double& a : actions) a = v(rng);
    state.ResumeTiming();
    benchmark::DoNotOptimize(r.propagate(states, actions, m.step.h, steps).next.data());
  }
  state.SetItemsProcessed(state.iterations() * pairs);
}
BENCHMARK(BM_Rollout)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

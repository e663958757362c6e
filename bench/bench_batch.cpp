// Issue 7 item 8: batch throughput in world-steps per second.
//
// First this machine's own 2-thread scaling on a trivially parallel, compute-bound loop
// (BM_MachineScaling: the ceiling any batch code can reach here), then N = 1, 64, 1024 and
// 16384 worlds of halm_posa_push and anitescu_grasp on 1 and 2 threads, lanes and scalar
// (args: worlds, threads, scalar; "lanes" reports the width that ran: 1 on the per-world path).
// halm_posa_push runs Lemke in lanes (quasistep/core/formulations/halm_posa_lcp/halm_posa_lanes.hpp), anitescu_grasp PGS. One benchmark
// iteration steps every world of the batch once; items_per_second is world-steps per second.
// The batch is reset (untimed) when it reaches the scene's step count, so the worlds always
// run the scenario they were written for.
#include <benchmark/benchmark.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <cmath>
#include <string>
#include <vector>

#include "quasistep/batch/batch_stepper.hpp"
#include "quasistep/batch/rollout.hpp"
#include "quasistep/batch/world_batch.hpp"
#include "quasistep/core/scene.hpp"

namespace {

/// A loop with no shared data and no memory traffic: each element iterates a cheap map.
void BM_MachineScaling(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  constexpr int kItems = 1 << 14;
  std::vector<double> out(kItems);
  tbb::task_arena arena(threads);
  for (auto _ : state) {
    arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<int>(0, kItems), [&](const tbb::blocked_range<int>& r) {
        for (int i = r.begin(); i != r.end(); ++i) {
          double x = 1.0 + 1e-6 * i;
          for (int k = 0; k < 200; ++k) x = x * 0.999 + 1.0 / (1.0 + x);
          out[i] = x;
        }
      });
    });
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kItems);
}
BENCHMARK(BM_MachineScaling)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

void batch_throughput(benchmark::State& state, const char* example) {
  const int worlds = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  const bool scalar = state.range(2) != 0;
  const qs::Scene scene = qs::load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" + example + ".json");
  qs::WorldBatch batch = qs::WorldBatch::from_scene(scene, worlds);
  qs::BatchStepper stepper(batch, {.threads = threads, .scalar = scalar});
  const int steps = scene.model->step.steps;
  int taken = 0;
  for (auto _ : state) {
    if (taken == steps) {
      state.PauseTiming();
      batch.reset();
      taken = 0;
      state.ResumeTiming();
    }
    stepper.step(batch);
    ++taken;
  }
  state.SetItemsProcessed(state.iterations() * worlds);
  state.counters["failed"] = batch.failed_count();
  state.counters["lanes"] = stepper.lanes() ? batch.lane_width() : 1;
  state.counters["fallbacks"] = static_cast<double>(stepper.fallback_count());
}

void sizes(benchmark::internal::Benchmark* b) {
  for (int scalar : {0, 1})
    for (int threads : {1, 2})
      for (int n : {1, 64, 1024, 16384}) b->Args({n, threads, scalar});
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(batch_throughput, halm_posa_push, "halm_posa_push")->Apply(sizes);
BENCHMARK_CAPTURE(batch_throughput, anitescu_grasp, "anitescu_grasp")->Apply(sizes);

/// A planner's call: Rollout::propagate of `worlds` pairs x `steps` steps with every state
/// kept (args: worlds, steps, threads; 0 = all). The commands are rollout_command(i, l, a), the
/// same that bench/python_rollout.py passes to quasistep.rollout from Python, which compares
/// its time per call with this one's (the Python layer's overhead).
double rollout_command(int i, int l, int a) { return 0.05 * std::sin(0.1 * l + 0.7 * a + 0.013 * i); }

void rollout(benchmark::State& state, const char* example) {
  const int worlds = static_cast<int>(state.range(0)), steps = static_cast<int>(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  const qs::Scene scene = qs::load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" + example + ".json");
  const qs::Model& m = *scene.model;
  const std::vector<qs::State> starts(static_cast<std::size_t>(worlds), qs::initial_state(m));
  std::vector<double> actions(static_cast<std::size_t>(worlds) * steps * m.n_a);
  for (int i = 0; i < worlds; ++i)
    for (int l = 0; l < steps; ++l)
      for (int a = 0; a < m.n_a; ++a)
        actions[(static_cast<std::size_t>(i) * steps + l) * m.n_a + a] = rollout_command(i, l, a);
  qs::Rollout r(scene.model, {.threads = threads});
  int failed = 0;
  for (auto _ : state) {
    const qs::RolloutResult& result = r.propagate(starts, actions, m.step.h, steps, qs::RolloutRecord::every_step);
    failed = 0;
    for (qs::Status s : result.status) failed += s != qs::Status::solved;
    benchmark::DoNotOptimize(result.trajectory.data());
  }
  state.SetItemsProcessed(state.iterations() * worlds * steps);
  state.counters["failed"] = failed;
}

BENCHMARK_CAPTURE(rollout, mpc_push, "mpc_push")
    ->Args({1024, 100, 0})
    ->Args({1024, 100, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(rollout, anitescu_grasp, "anitescu_grasp")
    ->Args({1024, 100, 0})
    ->Args({1024, 100, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

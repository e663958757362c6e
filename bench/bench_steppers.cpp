// Per-step time of the steppers (contacts + formulation + solve + integrate), one world,
// one core. The state is reset to a saved copy outside the timed region every 60 steps,
// so the loop always steps the same trajectory (as MuJoCo's step benchmark does).
#include <benchmark/benchmark.h>

#include <string>

#include "core/scene.hpp"
#include "core/trinkle_lcp.hpp"

namespace {

void BM_TrinkleGripperStep(benchmark::State& state) {
  const qs::Scene scene =
      qs::load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/pang_tedrake_gripper.json");
  const qs::Model& m = *scene.model;
  const qs::State start = qs::initial_state(m);
  qs::State s = start;
  qs::TrinkleLcp stepper(m);
  int failures = 0;
  for (auto _ : state) {
    if (s.step == m.step.steps) {
      state.PauseTiming();
      s = start;
      state.ResumeTiming();
    }
    failures += stepper.step(m, s) != qs::Status::solved;
  }
  state.counters["failures"] = failures;
}
BENCHMARK(BM_TrinkleGripperStep)->Unit(benchmark::kMicrosecond);

}  // namespace

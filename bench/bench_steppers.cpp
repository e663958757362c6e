// Per-step time of the steppers (contacts + formulation + solve + integrate), one world,
// one core. The state is reset to a saved copy outside the timed region at the end of the
// scene's horizon, so the loop always steps the same trajectory (as MuJoCo's step
// benchmark does) and the figure is the mean over the whole example.
#include <benchmark/benchmark.h>

#include <string>

#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"

namespace {

void step_example(benchmark::State& state, const char* example) {
  const qs::Scene scene = qs::load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" + example + ".json");
  const qs::Model& m = *scene.model;
  const qs::State start = qs::initial_state(m);
  qs::State s = start;
  const std::unique_ptr<qs::Stepper> stepper = qs::make_stepper(m);
  const qs::WorldParams params(m);  // as `quasistep run` steps a scene
  int failures = 0;
  for (auto _ : state) {
    if (s.step == m.step.steps) {
      state.PauseTiming();
      s = start;
      state.ResumeTiming();
    }
    failures += stepper->step(m, params, s) != qs::Status::solved;
  }
  state.counters["failures"] = failures;
}

// Pang & Tedrake 2018, sec. V.A: 3 contacts, mixed LCP of 14.
void BM_TrinkleGripperStep(benchmark::State& state) { step_example(state, "pang_tedrake_gripper"); }
BENCHMARK(BM_TrinkleGripperStep)->Unit(benchmark::kMicrosecond);

// Pang & Tedrake 2018, sec. V.A with the MIQP and command (29): 3 contacts, 12 complementarity pairs,
// two branch-and-bound stages per step (the target: mean <= 10 us).
void BM_PangTedrakeGraspStep(benchmark::State& state) { step_example(state, "pang_tedrake_grasp"); }
BENCHMARK(BM_PangTedrakeGraspStep)->Unit(benchmark::kMicrosecond);

// Halm & Posa 2018, sec. 6.1: 2 contacts, LCP of 8 (the target: <= 2 us).
void BM_HalmPosaPushStep(benchmark::State& state) { step_example(state, "halm_posa_push"); }
BENCHMARK(BM_HalmPosaPushStep)->Unit(benchmark::kMicrosecond);
void BM_HalmPosaSemicircularPushStep(benchmark::State& state) { step_example(state, "halm_posa_push_semicircular"); }
BENCHMARK(BM_HalmPosaSemicircularPushStep)->Unit(benchmark::kMicrosecond);
// 3 contacts, LCP of 12.
void BM_HalmPosaWallStep(benchmark::State& state) { step_example(state, "halm_posa_wall"); }
BENCHMARK(BM_HalmPosaWallStep)->Unit(benchmark::kMicrosecond);

// Halm & Posa 2018, sec. 6.2 re-created: 64 slots, at most 6 active (LCP of up to 24).
void BM_HalmPosaPegStep(benchmark::State& state) { step_example(state, "halm_posa_peg"); }
BENCHMARK(BM_HalmPosaPegStep)->Unit(benchmark::kMicrosecond);

}  // namespace

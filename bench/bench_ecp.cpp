// Per-step time and Newton iterations of Xie & Chakraborty's (2021) ECP stepper (quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp) and of
// the planar-sliding reference, one world, one core. As in bench_steppers.cpp the state is
// reset (outside the timed region) at the end of the scene's horizon, so each figure is the
// mean over the whole example; a reset state starts cold (its State::memory holds no warm
// start), as the example's own first step does.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp"
#include "quasistep/core/formulations/ecp_ncp/planar_sliding_reference.hpp"
#include "quasistep/core/scene.hpp"

namespace {

qs::Scene load(const char* example) {
  return qs::load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" + example + ".json");
}

void ecp_example(benchmark::State& state, const char* example) {
  const qs::Scene scene = load(example);
  const qs::Model& m = *scene.model;
  const qs::State start = qs::initial_state(m);
  qs::State s = start;
  qs::EcpNcp stepper(m);
  const qs::WorldParams params(m);  // as `quasistep run` steps a scene
  long steps = 0, iterations = 0, failures = 0;
  for (auto _ : state) {
    if (s.step == m.step.steps) {
      state.PauseTiming();
      s = start;
      state.ResumeTiming();
    }
    failures += stepper.step(m, params, s) != qs::Status::solved;
    iterations += stepper.newton_iterations();
    ++steps;
  }
  state.counters["newton_per_step"] = static_cast<double>(iterations) / static_cast<double>(steps);
  state.counters["failures"] = static_cast<double>(failures);
}

// Xie & Chakraborty 2021, sec. 5.1: the four-legged desk, 6 hull faces, an MNCP of 24 (target <= 20 us;
// the paper: 5.3 ms per step in MATLAB).
void BM_EcpDeskStep(benchmark::State& state) { ecp_example(state, "ecp_desk"); }
BENCHMARK(BM_EcpDeskStep)->Unit(benchmark::kMicrosecond);

// A box tipping from an edge onto its face (examples/ecp_box_tip.json): impacts, cold
// restarts of k.
void BM_EcpBoxTipStep(benchmark::State& state) { ecp_example(state, "ecp_box_tip"); }
BENCHMARK(BM_EcpBoxTipStep)->Unit(benchmark::kMicrosecond);

// Xie & Chakraborty 2021, sec. 5.2: the T-bar (8 hull faces, an MNCP of 26): tilting, rocking, sliding.
void BM_EcpTbarStep(benchmark::State& state) { ecp_example(state, "ecp_tbar"); }
BENCHMARK(BM_EcpTbarStep)->Unit(benchmark::kMicrosecond);

// Xie & Chakraborty 2021, sec. 5.3: the dumbbell (a cylinder hull: 2 caps and the side, an MNCP of 21):
// toppling, then rolling.
void BM_EcpDumbbellStep(benchmark::State& state) { ecp_example(state, "ecp_dumbbell"); }
BENCHMARK(BM_EcpDumbbellStep)->Unit(benchmark::kMicrosecond);

// The planar-sliding reference on the desk: an MNCP of 7 (target <= 2 us; the paper's
// sliding-only model: 2.2 ms).
void BM_SlidingReferenceDeskStep(benchmark::State& state) {
  const qs::Scene scene = load("ecp_desk");
  const qs::Model& m = *scene.model;
  const qs::State start = qs::initial_state(m);
  qs::State s = start;
  qs::PlanarSlidingReference ref(m);
  long steps = 0, iterations = 0, failures = 0;
  for (auto _ : state) {
    if (s.step == m.step.steps) {
      state.PauseTiming();
      s = start;
      state.ResumeTiming();
    }
    failures += ref.step(m, s) != qs::Status::solved;
    iterations += ref.result().stats.iterations;
    ++steps;
  }
  state.counters["newton_per_step"] = static_cast<double>(iterations) / static_cast<double>(steps);
  state.counters["failures"] = static_cast<double>(failures);
}
BENCHMARK(BM_SlidingReferenceDeskStep)->Unit(benchmark::kMicrosecond);

}  // namespace

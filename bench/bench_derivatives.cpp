// The step's derivatives against the step alone (docs/derivatives.md, "Cost"): each example's
// trajectory replayed from its states, one step per iteration, with and without A and B.
// The ratio of the two times is the cost of the derivatives in units of a step.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "quasistep/batch/bundled.hpp"
#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"

namespace {

struct Replay {
  qs::Scene scene;
  std::vector<qs::State> rows;  // every state of the example's trajectory but the last
};

Replay replay(const std::string& name) {
  Replay r{qs::load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" + name + ".json"), {}};
  const qs::Model& m = *r.scene.model;
  auto stepper = qs::make_stepper(m);
  qs::State s = qs::initial_state(m);
  for (int l = 0; l < m.step.steps; ++l) {
    r.rows.push_back(s);
    if (stepper->step(m, s) != qs::Status::solved) break;
  }
  return r;
}

void step(benchmark::State& state, const std::string& name, bool derivatives) {
  const Replay r = replay(name);
  const qs::Model& m = *r.scene.model;
  auto stepper = qs::make_stepper(m);
  const qs::WorldParams p(m);
  qs::StepDerivatives d;
  qs::State s = r.rows[0];
  std::size_t k = 0;
  if (derivatives) stepper->step(m, p, s, d);  // its workspace, built by the first call
  for (auto _ : state) {
    s = r.rows[k];
    if (++k == r.rows.size()) k = 0;
    const qs::Status st = derivatives ? stepper->step(m, p, s, d) : stepper->step(m, p, s);
    benchmark::DoNotOptimize(st);
    benchmark::DoNotOptimize(d.A.data());
  }
  state.counters["steps/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

/// Bundled derivatives (quasistep/batch/bundled.hpp) of N = 100 samples at the example's
/// state after 30 steps, on one thread: bundles per second per core.
void bundled(benchmark::State& state, const std::string& name) {
  const Replay r = replay(name);
  const qs::Model& m = *r.scene.model;
  qs::BundledStep b(r.scene.model, {.threads = 1});
  const qs::State& s = r.rows[std::min<std::size_t>(30, r.rows.size() - 1)];
  const qs::WorldParams p(m);
  const qs::BundledOptions o{.samples = 100, .sigma = 0.01, .seed = 1};
  b.compute(s, p, o);
  for (auto _ : state) benchmark::DoNotOptimize(b.compute(s, p, o).B1.data());
  state.counters["bundles/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK_CAPTURE(bundled, anitescu_grasp_N100, std::string("anitescu_grasp"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(bundled, mpc_push_N100, std::string("mpc_push"))->Unit(benchmark::kMicrosecond);

#define QS_DERIVATIVE_BENCH(name)                                                                       \
  BENCHMARK_CAPTURE(step, name##_step, std::string(#name), false)->Unit(benchmark::kMicrosecond);       \
  BENCHMARK_CAPTURE(step, name##_with_derivatives, std::string(#name), true)->Unit(benchmark::kMicrosecond)

QS_DERIVATIVE_BENCH(anitescu_grasp);
QS_DERIVATIVE_BENCH(anitescu_box_push);
QS_DERIVATIVE_BENCH(anitescu_drop);
QS_DERIVATIVE_BENCH(halm_posa_push);
QS_DERIVATIVE_BENCH(halm_posa_wall);
QS_DERIVATIVE_BENCH(mpc_push);
QS_DERIVATIVE_BENCH(halm_posa_peg);

// Contact detection + Jacobian assembly for one world (ContactWorkspace::evaluate): the
// first two stages of every step. Scenes: the Pang & Tedrake 2018 gripper (3 slots), the peg in a
// slot fixture (58 slots, polygons) and the all-shapes fixture of the tests.
#include <benchmark/benchmark.h>

#include <string>

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/scene.hpp"

namespace {

void evaluate_contacts(benchmark::State& state, const std::string& rel) {
  const qs::Scene scene = qs::load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/" + rel);
  const qs::Model& m = *scene.model;
  qs::ContactWorkspace ws(m);
  Eigen::VectorXd q = qs::initial_state(m).q;
  double sink = 0;
  for (auto _ : state) {
    q[0] += 1e-9;  // a new configuration each time, so nothing is hoisted out of the loop
    ws.evaluate(m, q.data());
    sink += ws.frame[0].phi;
  }
  benchmark::DoNotOptimize(sink);
  state.counters["slots"] = m.n_slots();
  state.counters["slots/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * m.n_slots(),
                                                 benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(evaluate_contacts, gripper, std::string("examples/pang_tedrake_gripper.json"));
BENCHMARK_CAPTURE(evaluate_contacts, peg_in_slot, std::string("tests/scenes/peg_in_slot.json"));
BENCHMARK_CAPTURE(evaluate_contacts, two_link_arms, std::string("tests/scenes/two_link_arms.json"));

}  // namespace

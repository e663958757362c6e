// Planning through the quasistatic models with OMPL (quasistep/planning/ompl_adapter.hpp,
// docs/planning.md).
//
// BM_RawStep/scene: one world stepped by the scalar stepper under random piecewise-constant
//   velocities (a control held 1 to 16 steps, back to the initial state every 64 steps):
//   items_per_second is steps per second.
// BM_OmplPropagate/scene: the same controls through OMPL's propagateWhileValid (the
//   adapter's propagator, view and exact-state copies, the validity check after every step):
//   items_per_second is steps per second, the raw rate less the adapter's overhead.
// BM_Plan/scene/planner/sampler/threads/seeds: `seeds` plans (seeds 1..seeds, 10 s each at
//   most) of RRT (planner 0), SST (1) or KPIECE1 (2); RRT with OMPL's single-control sampler
//   (sampler 0) or the batched sampler (sampler 1, 32 controls, its batch engine on `threads`
//   threads). Counters: solved (fraction of seeds), median_s (median wall time of all seeds,
//   an unsolved one counting as 10 s), steps_per_s (steps stepped per second of planning).
//   Every BM_Plan run takes up to seeds x 10 s: run them on an idle machine.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <ompl/control/spaces/RealVectorControlSpace.h>
#include <ompl/util/Console.h>

#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "quasistep/planning/ompl_adapter.hpp"

namespace {

namespace oc = ompl::control;

const char* const kScenes[] = {"plan_push.json", "plan_pivot.json"};

qs::Scene load(int i) { return qs::load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" + kScenes[i]); }

/// The random controls both propagation benchmarks apply: (velocities, steps held).
struct Controls {
  std::vector<std::vector<double>> u;
  std::vector<int> steps;
  Controls(const qs::PlanSpec& p, int count) {
    std::mt19937_64 rng(5);
    for (int i = 0; i < count; ++i) {
      std::vector<double> v;
      for (const auto& b : p.control_bounds) v.push_back(std::uniform_real_distribution<double>(b[0], b[1])(rng));
      u.push_back(v);
      steps.push_back(std::uniform_int_distribution<int>(1, 16)(rng));
    }
  }
};

void BM_RawStep(benchmark::State& state) {
  const qs::Scene scene = load(static_cast<int>(state.range(0)));
  const qs::Model& m = *scene.model;
  const Controls c(*scene.plan, 256);
  auto stepper = qs::make_stepper(m);
  qs::WorldParams p(m);
  p.commanded = true;
  const qs::State start = qs::initial_state(m);
  qs::State s = start;
  long steps = 0;
  std::size_t k = 0;
  for (auto _ : state) {
    p.command = c.u[k % c.u.size()];
    for (int l = 0; l < c.steps[k % c.steps.size()]; ++l) {
      if (s.step >= 64 || stepper->step(m, p, s) != qs::Status::solved) s = start;
      ++steps;
    }
    ++k;
  }
  state.SetItemsProcessed(steps);
  state.SetLabel(kScenes[state.range(0)]);
}
BENCHMARK(BM_RawStep)->DenseRange(0, 1);

void BM_OmplPropagate(benchmark::State& state) {
  const qs::Scene scene = load(static_cast<int>(state.range(0)));
  auto space = qs::planning::PlanningSpace::create(scene, 1);
  const auto& si = space->space_information();
  const Controls c(*scene.plan, 256);
  ompl::base::State* start = si->allocState();
  ompl::base::State* s = si->allocState();
  oc::Control* u = si->allocControl();
  space->to_ompl(qs::initial_state(space->model()), qs::Status::solved, start);
  si->copyState(s, start);
  long steps = 0, since_start = 0;
  std::size_t k = 0;
  for (auto _ : state) {
    const std::vector<double>& v = c.u[k % c.u.size()];
    std::copy(v.begin(), v.end(), u->as<oc::RealVectorControlSpace::ControlType>()->values);
    const int n = c.steps[k % c.steps.size()];
    const unsigned int valid = si->propagateWhileValid(s, u, n, s);
    steps += n;
    since_start += n;
    if (static_cast<int>(valid) < n || since_start >= 64) {
      si->copyState(s, start);
      since_start = 0;
    }
    ++k;
  }
  state.SetItemsProcessed(steps);
  state.SetLabel(kScenes[state.range(0)]);
  si->freeState(start);
  si->freeState(s);
  si->freeControl(u);
}
BENCHMARK(BM_OmplPropagate)->DenseRange(0, 1);

void BM_Plan(benchmark::State& state) {
  ompl::msg::setLogLevel(ompl::msg::LOG_NONE);
  const qs::Scene scene = load(static_cast<int>(state.range(0)));
  const int seeds = static_cast<int>(state.range(4));
  qs::planning::PlanOptions o;
  const qs::planning::PlannerKind kinds[] = {qs::planning::PlannerKind::rrt, qs::planning::PlannerKind::sst,
                                             qs::planning::PlannerKind::kpiece};
  o.planner = kinds[state.range(1)];
  o.sampling = state.range(2) ? qs::planning::ControlSampling::batched : qs::planning::ControlSampling::single;
  o.threads = static_cast<int>(state.range(3));
  o.time_limit = 10.0;
  int solved = 0;
  double seconds = 0, steps = 0;
  std::vector<double> times;
  for (auto _ : state) {
    solved = 0;
    seconds = steps = 0;
    times.clear();
    for (int seed = 1; seed <= seeds; ++seed) {
      o.seed = static_cast<std::uint64_t>(seed);
      const qs::planning::PlanResult r = qs::planning::plan(scene, o);
      seconds += r.seconds;
      steps += static_cast<double>(r.propagations);
      solved += r.solved;
      times.push_back(r.solved ? r.seconds : o.time_limit);
    }
  }
  std::sort(times.begin(), times.end());
  state.counters["solved"] = static_cast<double>(solved) / seeds;
  state.counters["median_s"] = times.empty() ? 0.0 : times[times.size() / 2];
  state.counters["steps_per_s"] = seconds > 0 ? steps / seconds : 0.0;
  state.SetLabel(kScenes[state.range(0)]);
}
BENCHMARK(BM_Plan)
    ->ArgNames({"scene", "planner", "sampler", "threads", "seeds"})
    ->Args({0, 0, 0, 1, 20})
    ->Args({0, 0, 1, 1, 20})
    ->Args({0, 0, 1, 2, 20})
    ->Args({0, 1, 0, 1, 20})
    ->Args({0, 2, 0, 1, 20})
    ->Args({1, 0, 0, 1, 20})
    ->Args({1, 0, 1, 1, 20})
    ->Args({1, 0, 1, 2, 20})
    ->Args({1, 1, 0, 1, 20})
    ->Args({1, 2, 0, 1, 20})
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

}  // namespace

// The OMPL adapter (quasistep/planning/ompl_adapter.hpp): the planner's view and the exact state, one
// OMPL propagation step = one quasistep step (bitwise `run`'s), motions that end before an
// invalid state (bounds, keep-out, a step the solver cannot solve), the batched control
// sampler against single propagation (stepper memory included), the goal region, the space's
// lifetime, and plans that are the same for a seed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <numbers>
#include <string>

#include <ompl/base/spaces/SE2StateSpace.h>
#include <ompl/control/spaces/RealVectorControlSpace.h>

#include "quasistep/batch/monte_carlo.hpp"
#include "quasistep/core/stepper.hpp"
#include "quasistep/planning/ompl_adapter.hpp"

namespace qs::planning::ompl_adapter_test {
namespace {

namespace ob = ompl::base;
namespace oc = ompl::control;

Scene example(const char* name) { return load_scene_file(std::string(QUASISTEP_SOURCE_DIR "/examples/") + name); }

bool same(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

/// Steps `steps` times from `s` with one velocity command, as `quasistep run --commands` does.
Status step_with(const Model& m, State& s, const std::vector<double>& u, int steps) {
  auto stepper = make_stepper(m);
  WorldParams p(m);
  p.commanded = true;
  p.command = u;
  for (int l = 0; l < steps; ++l) {
    const Status st = stepper->step(m, p, s);
    if (st != Status::solved) return st;
  }
  return Status::solved;
}

struct Fixture {
  std::shared_ptr<PlanningSpace> space;
  oc::SpaceInformationPtr si;
  ob::State* a;
  ob::State* b;
  oc::Control* c;
  explicit Fixture(const char* name, std::uint64_t seed = 1)
      : space(PlanningSpace::create(example(name), seed)), si(space->space_information()), a(si->allocState()),
        b(si->allocState()), c(si->allocControl()) {
    space->to_ompl(initial_state(space->model()), Status::solved, a);
  }
  ~Fixture() {
    si->freeState(a);
    si->freeState(b);
    si->freeControl(c);
  }
  void set_control(std::initializer_list<double> u) {
    std::copy(u.begin(), u.end(), c->as<oc::RealVectorControlSpace::ControlType>()->values);
  }
};

TEST(OmplAdapter, ViewIsWrappedAndTheExactStateIsKept) {
  Fixture f("plan_pivot.json");
  const Model& m = f.space->model();
  State s = initial_state(m);
  s.q[2] = 7.0;  // box.theta beyond pi
  s.q[3] = 0.0123456789;
  s.memory[0] = 0.25;
  s.t = 1.75;
  s.step = 35;
  f.space->to_ompl(s, Status::solved, f.a);
  State back;
  f.space->from_ompl(f.a, back);
  EXPECT_TRUE(same(back.q, s.q));
  EXPECT_TRUE(same(back.memory, s.memory));
  EXPECT_EQ(back.t, s.t);
  EXPECT_EQ(back.step, s.step);
  EXPECT_EQ(f.space->status_of(f.a), Status::solved);
  // The planner sees the box as an SE2 with the angle in [-pi, pi].
  const auto* box = f.a->as<ob::CompoundState>()->components[0]->as<ob::SE2StateSpace::StateType>();
  EXPECT_EQ(box->getYaw(), std::remainder(7.0, 2 * std::numbers::pi));
  EXPECT_EQ(box->getX(), s.q[0]);
  // Two states that differ only in the exact part (memory) are at distance 0.
  s.memory[0] = 0.5;
  f.space->to_ompl(s, Status::solved, f.b);
  EXPECT_EQ(f.si->distance(f.a, f.b), 0.0);
}

TEST(OmplAdapter, OnePropagationStepIsOneStepOfRun) {
  Fixture f("plan_pivot.json");
  const Model& m = f.space->model();
  f.set_control({0.1, 0.04});  // finger_y, finger_x in joint order
  const unsigned int n = f.si->propagateWhileValid(f.a, f.c, 30, f.b);
  ASSERT_EQ(n, 30u);
  State expected = initial_state(m);
  ASSERT_EQ(step_with(m, expected, {0.1, 0.04}, 30), Status::solved);
  State got;
  f.space->from_ompl(f.b, got);
  EXPECT_TRUE(same(got.q, expected.q));
  EXPECT_TRUE(same(got.memory, expected.memory));  // the impedance reference
  EXPECT_EQ(got.t, expected.t);
  EXPECT_EQ(got.step, 30);
  EXPECT_EQ(f.space->propagations().load(), 30);
}

/// The number of steps after which the pusher-driven state first leaves the admissible set.
int first_inadmissible(const PlanningSpace& space, const std::vector<double>& u, int limit) {
  const Model& m = space.model();
  State s = initial_state(m);
  for (int l = 1; l <= limit; ++l) {
    if (step_with(m, s, u, 1) != Status::solved || !space.admissible(s.q.data())) return l;
  }
  return -1;
}

TEST(OmplAdapter, AMotionEndsBeforeItLeavesTheBounds) {
  Fixture f("plan_push.json");
  // The pusher backs away in -x: pusher_x leaves [-0.25, 0.5] after 0.15 m at 2.5 mm a step.
  f.set_control({-0.1, 0.0});
  const int bad = first_inadmissible(*f.space, {-0.1, 0.0}, 200);
  ASSERT_GT(bad, 50);
  EXPECT_EQ(f.si->propagateWhileValid(f.a, f.c, 200, f.b), static_cast<unsigned int>(bad - 1));
  State expected = initial_state(f.space->model());
  step_with(f.space->model(), expected, {-0.1, 0.0}, bad - 1);
  State got;
  f.space->from_ompl(f.b, got);
  EXPECT_TRUE(same(got.q, expected.q));
  EXPECT_TRUE(f.si->isValid(f.b));
}

TEST(OmplAdapter, AMotionEndsBeforeTheKeepOutRegion) {
  Fixture f("plan_push.json");
  // Straight along +x: the pusher pushes the puck into the keep-out box (puck x >= 0.07 there).
  f.set_control({0.1, 0.0});
  const int bad = first_inadmissible(*f.space, {0.1, 0.0}, 400);
  ASSERT_GT(bad, 0);
  const unsigned int n = f.si->propagateWhileValid(f.a, f.c, 400, f.b);
  EXPECT_EQ(n, static_cast<unsigned int>(bad - 1));
  State got;
  f.space->from_ompl(f.b, got);
  EXPECT_GT(got.q[0], 0.03);  // the puck was pushed ...
  EXPECT_LT(got.q[0], 0.07);  // ... up to the grown box
}

TEST(OmplAdapter, AStepTheSolverCannotSolveIsNeverValid) {
  Fixture f("plan_push.json");
  f.set_control({std::numeric_limits<double>::quiet_NaN(), 0.0});
  f.space->propagations() = 0;
  f.si->getStatePropagator()->propagate(f.a, f.c, f.si->getPropagationStepSize(), f.b);
  EXPECT_NE(f.space->status_of(f.b), Status::solved);
  EXPECT_FALSE(f.si->isValid(f.b));
  EXPECT_EQ(f.si->propagateWhileValid(f.a, f.c, 10, f.b), 0u);
  // The motion ends at its start.
  EXPECT_TRUE(f.si->equalStates(f.a, f.b));
  // A failed state is not stepped from again.
  ob::State* next = f.si->allocState();
  f.space->to_ompl(initial_state(f.space->model()), Status::numerical_failure, f.b);
  f.set_control({0.1, 0.0});
  const long before = f.space->propagations().load();
  f.si->getStatePropagator()->propagate(f.b, f.c, f.si->getPropagationStepSize(), next);
  EXPECT_EQ(f.space->propagations().load(), before);
  EXPECT_FALSE(f.si->isValid(next));
  f.si->freeState(next);
}

TEST(OmplAdapter, BatchedSamplerMatchesSinglePropagation) {
  // From a pusher near its -x bound, aiming beyond it: many candidates end early. Every answer
  // must be the motion single propagation takes with that control for that many steps.
  Fixture f("plan_push.json");
  const Model& m = f.space->model();
  State s = initial_state(m);
  s.q[3] = -0.24;
  f.space->to_ompl(s, Status::solved, f.a);
  BatchedDirectedControlSampler sampler(f.si.get(), f.space, 16, 2);
  ob::State* target = f.si->allocState();
  ob::State* single = f.si->allocState();
  int early = 0;
  for (int call = 0; call < 40; ++call) {
    f.space->to_ompl(s, Status::solved, target);
    f.space->set_view(target, 3, -0.4 + 0.01 * call);  // beyond the bound, and moving
    f.space->set_view(target, 4, 0.2 - 0.01 * call);
    f.si->copyState(f.b, target);
    const unsigned int n = sampler.sampleTo(f.c, f.a, f.b);
    ASSERT_GE(n, 0u);
    ASSERT_EQ(f.si->propagateWhileValid(f.a, f.c, static_cast<int>(n), single), n);
    State from_sampler, from_single;
    f.space->from_ompl(f.b, from_sampler);
    f.space->from_ompl(single, from_single);
    EXPECT_TRUE(same(from_sampler.q, from_single.q)) << "call " << call;
    EXPECT_EQ(from_sampler.t, from_single.t);
    EXPECT_EQ(from_sampler.step, from_single.step);
    EXPECT_TRUE(f.si->isValid(f.b));
    if (f.si->propagateWhileValid(f.a, f.c, static_cast<int>(n) + 1, single) == n) ++early;
  }
  EXPECT_GT(early, 0);  // the early-end path was taken
  f.si->freeState(target);
  f.si->freeState(single);
}

TEST(OmplAdapter, BatchedSamplerKeepsTheNearestOfItsCandidates) {
  // Two spaces of one seed: the batched sampler in the first, and in the second a control
  // sampler drawn at the same place in the seed sequence, which proposes the same candidates
  // and duration. Each candidate propagated alone by OMPL: the sampler must keep the nearest
  // (the first of equals), with that candidate's steps and state.
  Fixture f("plan_push.json", 7), twin("plan_push.json", 7);
  constexpr int kK = 8;
  BatchedDirectedControlSampler sampler(f.si.get(), f.space, kK, 1);
  const oc::ControlSamplerPtr twin_sampler = twin.si->allocControlSampler();
  ob::State* target = f.si->allocState();
  std::vector<oc::Control*> candidates;
  std::vector<ob::State*> ends;
  for (int k = 0; k < kK; ++k) {
    candidates.push_back(twin.si->allocControl());
    ends.push_back(twin.si->allocState());
  }
  const auto values = [](const oc::Control* c) { return c->as<oc::RealVectorControlSpace::ControlType>()->values; };
  for (int call = 0; call < 6; ++call) {
    State goal = initial_state(f.space->model());
    goal.q[0] = 0.05 * call;  // puck and pusher targets that move from call to call
    goal.q[3] = 0.1 - 0.05 * call;
    goal.q[4] = 0.2 - 0.08 * call;
    f.space->to_ompl(goal, Status::solved, target);
    f.si->copyState(f.b, target);
    const unsigned int n = sampler.sampleTo(f.c, f.a, f.b);

    for (oc::Control* c : candidates) twin_sampler->sample(c, twin.a);
    const unsigned int steps = twin_sampler->sampleStepCount(twin.si->getMinControlDuration(), twin.si->getMaxControlDuration());
    int best = -1;
    double best_d = 0;
    std::vector<unsigned int> valid(kK);
    for (int k = 0; k < kK; ++k) {
      valid[static_cast<std::size_t>(k)] = twin.si->propagateWhileValid(twin.a, candidates[static_cast<std::size_t>(k)],
                                                                        static_cast<int>(steps), ends[static_cast<std::size_t>(k)]);
      const double d = twin.si->distance(ends[static_cast<std::size_t>(k)], target);
      if (best < 0 || d < best_d) {
        best = k;
        best_d = d;
      }
    }
    ASSERT_EQ(n, valid[static_cast<std::size_t>(best)]) << "call " << call;
    for (int a = 0; a < 2; ++a) EXPECT_EQ(values(f.c)[a], values(candidates[static_cast<std::size_t>(best)])[a]);
    State got, want;
    f.space->from_ompl(f.b, got);
    twin.space->from_ompl(ends[static_cast<std::size_t>(best)], want);
    EXPECT_TRUE(same(got.q, want.q)) << "call " << call;
    EXPECT_EQ(f.si->distance(f.b, target), best_d);
  }
  for (int k = 0; k < kK; ++k) {
    twin.si->freeControl(candidates[static_cast<std::size_t>(k)]);
    twin.si->freeState(ends[static_cast<std::size_t>(k)]);
  }
  f.si->freeState(target);
}

TEST(OmplAdapter, GoalIsTheGoalRegion) {
  const Scene scene = example("plan_push.json");
  auto space = PlanningSpace::create(scene, 3);
  PlanGoal goal(space);
  const auto& si = space->space_information();
  ob::State* st = si->allocState();
  State s = initial_state(space->model());
  const PlanSpec& p = *scene.plan;
  for (double dx : {0.0, 0.019, 0.021, -0.021}) {
    s.q[0] = p.goal_center[0] + dx;
    s.q[1] = p.goal_center[1];
    space->to_ompl(s, Status::solved, st);
    double d = -1;
    EXPECT_EQ(goal.isSatisfied(st, &d), std::abs(dx) <= 0.02) << dx;
    EXPECT_EQ(d, std::max(0.0, std::abs(s.q[0] - p.goal_center[0]) / 0.02 - 1.0));
  }
  // A failed state never satisfies it.
  s.q[0] = p.goal_center[0];
  space->to_ompl(s, Status::not_found, st);
  EXPECT_FALSE(goal.isSatisfied(st));
  // Goal samples place the puck in the region in the planner's view.
  for (int i = 0; i < 100; ++i) {
    goal.sampleGoal(st);
    const auto* puck = st->as<ob::CompoundState>()->components[0]->as<ob::SE2StateSpace::StateType>();
    EXPECT_LE(std::abs(puck->getX() - p.goal_center[0]), p.goal_tolerance[0]);
    EXPECT_LE(std::abs(puck->getY() - p.goal_center[1]), p.goal_tolerance[1]);
  }
  si->freeState(st);
}

TEST(OmplAdapter, BatchedSamplerCarriesTheStepperMemory) {
  // The pivot (Anitescu's QP keeps the impedance reference in State::memory): every answer of
  // the batched sampler, early-ended candidates included, is single propagation's state, memory too.
  Fixture f("plan_pivot.json", 3);
  BatchedDirectedControlSampler sampler(f.si.get(), f.space, 16, 1);
  ob::State* target = f.si->allocState();
  ob::State* single = f.si->allocState();
  int early = 0;
  for (int call = 0; call < 30; ++call) {
    State goal = initial_state(f.space->model());
    goal.q[3] = 0.05 * (call % 5) - 0.01;  // finger_y, some below its bound 0
    goal.q[4] = -0.2 + 0.02 * call;        // finger_x
    f.space->to_ompl(goal, Status::solved, target);
    f.si->copyState(f.b, target);
    const unsigned int n = sampler.sampleTo(f.c, f.a, f.b);
    ASSERT_EQ(f.si->propagateWhileValid(f.a, f.c, static_cast<int>(n), single), n);
    State from_sampler, from_single;
    f.space->from_ompl(f.b, from_sampler);
    f.space->from_ompl(single, from_single);
    EXPECT_TRUE(same(from_sampler.q, from_single.q)) << "call " << call;
    EXPECT_TRUE(same(from_sampler.memory, from_single.memory)) << "call " << call;
    if (f.si->propagateWhileValid(f.a, f.c, static_cast<int>(n) + 1, single) == n) ++early;
  }
  EXPECT_GT(early, 0);
  f.si->freeState(target);
  f.si->freeState(single);
}

TEST(OmplAdapter, ASpaceIsFreedWhenItsLastOwnerGoes) {
  // The propagator, checker and allocators point back to the space without owning it.
  std::weak_ptr<PlanningSpace> weak;
  {
    auto space = PlanningSpace::create(example("plan_pivot.json"), 1);
    weak = space;
    PlanGoal goal(space);
    BatchedDirectedControlSampler sampler(space->space_information().get(), space, 4, 1);
  }
  EXPECT_TRUE(weak.expired());
}

TEST(OmplAdapter, PlanIsTheSameForASeedInOneProcess) {
  // Without the CLI's process-wide OMPL seed: the adapter's own seeding makes it repeatable.
  const Scene scene = example("plan_pivot.json");
  for (const PlannerKind kind : {PlannerKind::rrt, PlannerKind::sst, PlannerKind::kpiece}) {
    PlanOptions o;
    o.planner = kind;
    o.seed = 11;
    o.max_propagations = 200000;
    o.time_limit = 600;
    const PlanResult a = plan(scene, o), b = plan(scene, o);
    ASSERT_TRUE(a.solved);
    EXPECT_EQ(a.commands, b.commands);
    EXPECT_TRUE(same(a.final_state.q, b.final_state.q));
    EXPECT_EQ(a.propagations, b.propagations);
  }
}

TEST(OmplAdapter, AStateOfTheWrongSizeIsRefused) {
  Fixture f("plan_pivot.json");
  State s = initial_state(f.space->model());
  s.memory.resize(0);
  EXPECT_THROW(f.space->to_ompl(s, Status::solved, f.b), PlanningError);
  s = initial_state(f.space->model());
  s.q.resize(2);
  EXPECT_THROW(f.space->to_ompl(s, Status::solved, f.b), PlanningError);
}

TEST(OmplAdapter, ASceneWithoutAPlanSectionIsRefused) {
  try {
    PlanningSpace::create(example("mpc_push.json"), 1);
    FAIL() << "no error";
  } catch (const PlanningError& e) {
    EXPECT_NE(std::string(e.what()).find("no plan section"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace qs::planning::ompl_adapter_test

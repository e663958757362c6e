// The batch engine allocates nothing per step after its first (which builds each thread's
// workspace): the allocation-counting guard over further steps of a batch.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quasistep/batch/batch_stepper.hpp"
#include "quasistep/batch/rollout.hpp"
#include "quasistep/batch/world_batch.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_lanes.hpp"
#include "quasistep/core/scene.hpp"
#include "tests/support/allocation_counter.hpp"

namespace qs::batch_allocation_test {
namespace {

TEST(BatchAllocation, StepsAfterTheFirstAllocateNothing) {
  for (const char* rel : {"examples/halm_posa_push.json", "examples/pang_tedrake_gripper.json"}) {
    const Scene s = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/" + rel);
    const Model& m = *s.model;
    // Per-world parameters and commands take the paths that write into the thread's Model.
    std::vector<ParameterRef> varied = {resolve_parameter(m, "pairs." + m.pair_name(0) + ".friction", "test")};
    WorldBatch b(s.model, 11, varied);
    for (int w = 0; w < 11; ++w) b.set_parameter(0, w, 0.3 + 0.01 * w);
    std::vector<double> u(static_cast<size_t>(m.n_a) * b.padded_size(), 0.01);
    // One thread: the guard counts the calling thread, which then runs every world.
    BatchStepper st(b, {.threads = 1});
    st.step(b, {u.data(), b.padded_size()});
    long allocations = 0;
    {
      test::CountAllocations guard;
      st.run(b, 5, {u.data(), b.padded_size()});
      allocations = guard.count();
    }
    EXPECT_EQ(allocations, 0) << rel;
    EXPECT_EQ(b.failed_count(), 0) << rel;
    EXPECT_EQ(b.world_step()[10], 6) << rel;  // the steps were really taken
  }
}

TEST(BatchAllocation, AnitescuLanePathStepsAfterTheFirstAllocateNothing) {
  // The lane path (anitescu_qp quasi-dynamic): per-world friction and commands in lanes, and
  // a sweep limit low enough that some lanes take the per-world fallback too (the PGS is
  // warm-started from the previous step, so the grip must change inside the guard).
  const Scene s = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/anitescu_grasp.json");
  const Model& m = *s.model;
  std::vector<ParameterRef> varied = {resolve_parameter(m, "pairs.left_finger/cylinder.friction", "test")};
  WorldBatch b(s.model, 11, varied);
  for (int w = 0; w < 11; ++w) b.set_parameter(0, w, 0.3 + 0.02 * w);
  std::vector<double> u(static_cast<size_t>(m.n_a) * b.padded_size(), 0.05);
  for (int w = 0; w < b.padded_size(); ++w) u[static_cast<size_t>(b.padded_size()) + w] = -0.05;
  PgsSettings pgs = anitescu_pgs_settings();
  pgs.max_iterations = 4;
  BatchStepper st(b, {.threads = 1, .pgs = pgs});
  ASSERT_TRUE(st.lanes()) << st.path();
  st.run(b, 20, {u.data(), b.padded_size()});  // the first step builds the workspace; the fingers close in
  long allocations = 0;
  const long fallbacks_before = st.fallback_count();
  for (double& v : u) v *= 1.5;  // faster: the fingers reach the cylinder inside the guard
  {
    test::CountAllocations guard;
    st.run(b, 30, {u.data(), b.padded_size()});
    allocations = guard.count();
  }
  EXPECT_EQ(allocations, 0);
  EXPECT_GT(st.fallback_count(), fallbacks_before);  // the fallback ran inside the guard
  EXPECT_EQ(b.failed_count(), 0);
  EXPECT_EQ(b.world_step()[10], 50);
}

TEST(BatchAllocation, RolloutCallsAfterTheFirstAllocateNothing) {
  // A planner's loop: the same number of pairs every call, new states and actions.
  const Scene s = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/mpc_push.json");
  const Model& m = *s.model;
  Rollout r(s.model, {.threads = 1});
  std::vector<State> states(13, initial_state(m));
  std::vector<double> actions(13 * 8 * 2, 0.1);
  r.propagate(states, actions, m.step.h, 8);
  long allocations = 0;
  {
    test::CountAllocations guard;
    for (int call = 0; call < 3; ++call) {
      const RolloutResult& out = r.propagate(states, actions, m.step.h, 8);
      for (int i = 0; i < 13; ++i) states[i] = out.next[i];  // same sizes: no allocation
    }
    allocations = guard.count();
  }
  EXPECT_EQ(allocations, 0);
  EXPECT_EQ(states[12].step, 24);  // three calls of 8 steps, chained

  // Keeping every step: after the first call of that shape, none either.
  r.propagate(states, actions, m.step.h, 8, RolloutRecord::every_step);
  {
    test::CountAllocations guard;
    for (int call = 0; call < 3; ++call) {
      const RolloutResult& out = r.propagate(states, actions, m.step.h, 8, RolloutRecord::every_step);
      for (int i = 0; i < 13; ++i) states[i] = out.next[i];
    }
    allocations = guard.count();
  }
  EXPECT_EQ(allocations, 0);
  EXPECT_EQ(states[12].step, 48);  // the warm-up call above is not chained

  // Per-pair parameters and the contacts record (one stepper per thread): the same.
  std::vector<double> friction(13, 0.4);
  const std::vector<RolloutParameter> params = {{"pairs.pusher/puck.friction", friction}};
  for (RolloutRecord record : {RolloutRecord::final_state, RolloutRecord::every_step_and_contacts}) {
    r.propagate(states, actions, m.step.h, 8, record, {}, params);
    {
      test::CountAllocations guard;
      for (int call = 0; call < 3; ++call) {
        friction[call] = 0.1 * call;
        const RolloutResult& out = r.propagate(states, actions, m.step.h, 8, record, {}, params);
        for (int i = 0; i < 13; ++i) states[i] = out.next[i];
      }
      allocations = guard.count();
    }
    EXPECT_EQ(allocations, 0);
  }
  EXPECT_EQ(states[12].step, 96);  // 48, then three chained calls of 8 per record

  // Every step's derivatives (one stepper per thread, as the contacts record): the same.
  r.propagate(states, actions, m.step.h, 8, RolloutRecord::every_step, {}, params, RolloutDerivatives::every_step);
  {
    test::CountAllocations guard;
    for (int call = 0; call < 3; ++call) {
      const RolloutResult& out =
          r.propagate(states, actions, m.step.h, 8, RolloutRecord::every_step, {}, params, RolloutDerivatives::every_step);
      for (int i = 0; i < 13; ++i) states[i] = out.next[i];
    }
    allocations = guard.count();
  }
  EXPECT_EQ(allocations, 0);
}

}  // namespace
}  // namespace qs::batch_allocation_test

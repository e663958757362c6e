// The batch engine's storage and stepper: layout, per-world parameters, bad input, failure
// marking, and the determinism promise (a world's trajectory is bitwise the single-world
// run's, at any thread count and in any batch split).
#include "quasistep/batch/batch_stepper.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <functional>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "quasistep/kernels/lane.hpp"
#include "quasistep/batch/world_batch.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/model_parameters.hpp"
#include "tests/support/bitwise.hpp"
#include "tests/support/batch_error.hpp"
#include "tests/support/example_json.hpp"

namespace qs::batch_stepper_test {
namespace {

Scene load(const char* rel) { return load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/" + rel); }

using test::same_bits;

using test::error_of;

/// The push with the finger-disk friction of world w (global index) = 0.2 + 0.05 (w mod 17):
/// worlds that really differ.
double friction_of(int w) { return 0.2 + 0.05 * (w % 17); }

std::vector<ParameterRef> push_varied(const Model& m) {
  return {resolve_parameter(m, "pairs.finger1/disk.friction", "test"),
          resolve_parameter(m, "pairs.finger2/disk.friction", "test")};
}

/// Worlds [first, first + count) of the push study, as one batch.
WorldBatch push_batch(const Scene& s, int first, int count) {
  WorldBatch b(s.model, count, push_varied(*s.model));
  for (int w = 0; w < count; ++w)
    for (int k = 0; k < 2; ++k) b.set_parameter(k, w, friction_of(first + w));
  b.reset();
  return b;
}

/// World w of the push study the way `quasistep run` steps one world: one stepper, one State.
State single_world_run(const Scene& s, int w, int steps) {
  Model m = *s.model;
  for (const ParameterRef& r : push_varied(m)) test::apply_parameter(m, *s.model, r, friction_of(w));
  auto stepper = make_stepper(m);
  State st = initial_state(m);
  for (int k = 0; k < steps; ++k) EXPECT_EQ(stepper->step(m, st), Status::solved) << "world " << w << " step " << k;
  return st;
}

TEST(WorldBatch, RowsAreAnOddNumberOfCacheLinesApart) {
  // One world's values lie a row apart: rows of 2^k lines would put them all in one cache
  // set (the MIQP study ran 8-10% slower with 2048 worlds than with 2000). Whatever the
  // count, rows are an odd number of 64-byte lines apart, aligned, and hold padded_size()
  // worlds without overlapping the next row.
  const Scene s = load("examples/mc_grasp_miqp.json");
  for (const int worlds : {1, 8, 13, 16, 1000, 1024, 2048, 4096}) {
    WorldBatch b(s.model, worlds);
    const int stride = b.row_stride();
    EXPECT_GE(stride, b.padded_size()) << worlds;
    EXPECT_EQ(stride % 8, 0) << worlds;
    EXPECT_EQ(stride / 8 % 2, 1) << worlds;
    EXPECT_LE(stride, b.padded_size() + 8) << worlds;
    ASSERT_GT(b.memory_rows(), 1);
    EXPECT_EQ(b.world_memory(1) - b.world_memory(0), stride) << worlds;
    EXPECT_EQ(b.world_q(1) - b.world_q(0), stride) << worlds;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.world_memory(b.memory_rows() - 1)) % kLaneAlignment, 0u) << worlds;
    // The last world of each row and the first of the next are distinct storage.
    b.world_memory(0)[worlds - 1] = 7.0;
    b.world_memory(1)[0] = 9.0;
    EXPECT_EQ(b.world_memory(0)[worlds - 1], 7.0) << worlds;
  }
}

TEST(WorldBatch, StorageIsPaddedToWholeLaneGroupsAndAligned) {
  const Scene s = load("examples/halm_posa_push.json");
  WorldBatch b(s.model, 13);
  EXPECT_EQ(b.size(), 13);
  EXPECT_EQ(b.padded_size() % kLaneWidth, 0);
  EXPECT_GE(b.padded_size(), 13);
  EXPECT_EQ(b.padded_size() % 8, 0);  // whole 64-byte rows
  EXPECT_LT(b.padded_size(), 13 + std::max(kLaneWidth, 8));
  EXPECT_EQ(b.group_count() * b.lane_width(), b.padded_size());
  for (int i = 0; i < s.model->n_q(); ++i)
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.world_q(i)) % kLaneAlignment, 0u) << "row " << i;
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.world_time()) % kLaneAlignment, 0u);
  // Every world, padding included, starts at the Model's initial state.
  const State s0 = initial_state(*s.model);
  for (int w = 0; w < b.padded_size(); ++w) {
    for (int i = 0; i < s.model->n_q(); ++i) EXPECT_EQ(b.world_q(i)[w], s0.q[i]);
    EXPECT_EQ(b.world_status()[w], Status::not_run);
    EXPECT_EQ(b.world_failed_step()[w], -1);
  }
  EXPECT_EQ(WorldBatch::bytes_needed(*s.model, 13, 0) % (b.row_stride() * sizeof(double)), 0u);  // whole rows
}

TEST(WorldBatch, RefusesBadSizesAndParametersWithTheCause) {
  const Scene s = load("examples/halm_posa_push.json");
  EXPECT_NE(error_of([&] { WorldBatch b(s.model, 0); }).find("at least 1 (got 0)"), std::string::npos);
  EXPECT_NE(error_of([&] { WorldBatch b(s.model, -5); }).find("at least 1"), std::string::npos);
  // INT_MAX worlds: the estimate is refused before anything is allocated, with the number.
  const std::string huge = error_of([&] { WorldBatch b(s.model, INT_MAX); });
  EXPECT_NE(huge.find("GiB"), std::string::npos) << huge;
  EXPECT_NE(huge.find(std::to_string(INT_MAX) + " worlds need"), std::string::npos) << huge;

  const ParameterRef f1 = resolve_parameter(*s.model, "pairs.finger1/disk.friction", "test");
  const ParameterRef f1b = resolve_parameter(*s.model, "pairs.disk/finger1.friction", "test");
  EXPECT_NE(error_of([&] { WorldBatch b(s.model, 4, {f1, f1b}); }).find("varied twice"), std::string::npos);

  WorldBatch b(s.model, 4, {f1});
  const std::string nan = error_of([&] { b.set_parameter(0, 2, std::nan("")); });
  EXPECT_NE(nan.find("world 2, parameter \"pairs.finger1/disk.friction\": not a finite number"), std::string::npos) << nan;
  EXPECT_NE(error_of([&] { b.set_parameter(0, 1, -0.1); }).find("must be >= 0"), std::string::npos);
  EXPECT_NE(error_of([&] { b.set_parameter(0, 4, 0.5); }).find("no such world"), std::string::npos);
}

TEST(WorldBatch, FromSceneCyclesTheOverrideEntries) {
  Scene s = load("examples/halm_posa_push.json");
  const ParameterRef f1 = resolve_parameter(*s.model, "pairs.finger1/disk.friction", "test");
  const ParameterRef x0 = resolve_parameter(*s.model, "joints.finger1_x.position", "test");
  s.overrides = {{{f1, 0.3}}, {{x0, -0.2}}, {}};
  const WorldBatch b = WorldBatch::from_scene(s, 7);
  ASSERT_EQ(b.varied_count(), 2);
  const double mu = s.model->pairs[0].friction;
  const int dof = s.model->joints[s.model->find_joint("finger1_x")].dof;
  const double x_model = s.model->joints[s.model->find_joint("finger1_x")].initial_position;
  for (int w = 0; w < 7; ++w) {
    EXPECT_EQ(b.param_value(0)[w], w % 3 == 0 ? 0.3 : mu) << w;
    EXPECT_EQ(b.world_q(dof)[w], w % 3 == 1 ? -0.2 : x_model) << w;  // an initial position is the start
  }
}

TEST(BatchStepper, RefusesFormulationsItCannotStepYet) {
  // ucp is an instantaneous problem, not a time-stepping model.
  const Scene ucp = load("tests/scenes/two_link_arms.json");
  WorldBatch b(ucp.model, 2);
  const std::string e = error_of([&] { BatchStepper st(b); });
  EXPECT_NE(e.find("cannot step formulation ucp"), std::string::npos) << e;
  const Scene push = load("examples/halm_posa_push.json");
  WorldBatch ok(push.model, 2);
  EXPECT_NE(error_of([&] { BatchStepper st(ok, {.threads = -1}); }).find("threads"), std::string::npos);
}

TEST(BatchStepper, EveryWorldIsBitwiseTheSingleWorldRunAtAnyThreadCountAndSplit) {
  const Scene s = load("examples/halm_posa_push.json");
  const int n = 2 * kLaneWidth + 3, steps = 60;  // not a whole number of lane groups
  std::vector<State> single;
  for (int w = 0; w < n; ++w) single.push_back(single_world_run(s, w, steps));

  auto check = [&](const WorldBatch& b, int first, const std::string& how) {
    for (int w = 0; w < b.size(); ++w) {
      EXPECT_EQ(b.world_status()[w], Status::solved) << how << " world " << first + w;
      EXPECT_EQ(b.world_step()[w], steps);
      EXPECT_TRUE(same_bits(b.world_time()[w], single[first + w].t));
      for (int i = 0; i < s.model->n_q(); ++i)
        EXPECT_TRUE(same_bits(b.world_q(i)[w], single[first + w].q[i])) << how << " world " << first + w << " dof " << i;
    }
  };
  std::uint64_t hash = 0;
  for (int threads : {1, 2, 8}) {
    WorldBatch b = push_batch(s, 0, n);
    BatchStepper st(b, {.threads = threads});
    st.run(b, steps);
    check(b, 0, "threads " + std::to_string(threads));
    if (threads == 1) hash = b.hash();
    EXPECT_EQ(b.hash(), hash) << "threads " << threads;
  }
  // Splits: the same worlds as batches [0, 1), [1, 1 + kLaneWidth), [1 + kLaneWidth, n).
  for (auto [first, count] : {std::pair{0, 1}, std::pair{1, kLaneWidth}, std::pair{1 + kLaneWidth, n - 1 - kLaneWidth}}) {
    WorldBatch b = push_batch(s, first, count);
    BatchStepper st(b, {.threads = 2});
    st.run(b, steps);
    check(b, first, "split at " + std::to_string(first));
  }
  // The friction really differs between worlds: so do their ends.
  EXPECT_FALSE(same_bits(single[0].q[0], single[1].q[0]) && same_bits(single[0].q[1], single[1].q[1]) &&
               same_bits(single[0].q[2], single[1].q[2]));
}

TEST(BatchStepper, MiqpWorldsAreBitwiseTheSingleWorldRunInBothElasticModes) {
  // Pang & Tedrake's (2018) grasp under the MIQP: one branch-and-bound per world, run inside the batch's
  // parallel loop (its own rounds isolated). Per-world finger friction makes the worlds
  // differ; under elastic_bound = previous each world carries its phi_bar in State::memory.
  for (const char* mode : {"current", "previous"}) {
    nlohmann::json j = test::example_json("pang_tedrake_grasp.json");
    j["model"]["elastic_bound"] = mode;
    j["overrides"] = nlohmann::json::parse(R"({"worlds": [
      {"pairs.left_finger/cylinder.friction": 0.5}, {"pairs.left_finger/cylinder.friction": 0.3},
      {"pairs.left_finger/cylinder.friction": 0.8}]})");
    const Scene s = parse_scene(j.dump(), "test");
    const int n = 5, steps = 30;
    std::uint64_t hash = 0;
    for (int threads : {1, 2}) {
      WorldBatch b = WorldBatch::from_scene(s, n);
      BatchStepper st(b, {.threads = threads});
      st.run(b, steps);
      for (int w = 0; w < n; ++w) {
        // The single-world run of world w's parameters.
        Model m = *s.model;
        for (int k = 0; k < b.varied_count(); ++k) test::apply_parameter(m, *s.model, b.varied(k), b.param_value(k)[w]);
        const auto stepper = make_stepper(m);
        State x = initial_state(m);
        for (int l = 0; l < steps; ++l) ASSERT_EQ(stepper->step(m, x), Status::solved) << mode << " world " << w;
        EXPECT_EQ(b.world_status()[w], Status::solved) << mode;
        for (int i = 0; i < m.n_q(); ++i) EXPECT_TRUE(same_bits(b.world_q(i)[w], x.q[i])) << mode << " world " << w;
        State y;
        b.load_state(w, y);
        ASSERT_EQ(y.memory.size(), x.memory.size()) << mode;
        for (int r = 0; r < x.memory.size(); ++r) EXPECT_TRUE(same_bits(y.memory[r], x.memory[r])) << mode;
      }
      if (threads == 1) hash = b.hash();
      EXPECT_EQ(b.hash(), hash) << mode;
    }
  }
}

TEST(BatchStepper, EcpWorldsAreBitwiseTheSingleWorldRunWithTheirWarmStartInTheState) {
  // The T-bar of Xie & Chakraborty 2021, sec. 5.2 with a different initial spin per world. The ECP stepper's
  // warm start is in State::memory: worlds interleaved on shared steppers, and a single world
  // stepped by two stepper objects in turn, give the one-stepper run's bits.
  const Scene s = load("examples/ecp_tbar.json");
  const Model& m = *s.model;
  const int n = 5, steps = 60;
  auto spin = [](int w) { return 0.1 * w; };  // w_z, rad/s
  std::vector<State> single;
  for (int w = 0; w < n; ++w) {
    State st = initial_state(m);
    st.q[12] = spin(w);
    auto a = make_stepper(m), b = make_stepper(m);
    for (int k = 0; k < steps; ++k) ASSERT_EQ((k % 2 ? a : b)->step(m, st), Status::solved) << w << " " << k;
    single.push_back(st);
  }
  {
    // The same world with one stepper: the memory makes the alternation invisible.
    State st = initial_state(m);
    st.q[12] = spin(3);
    auto a = make_stepper(m);
    for (int k = 0; k < steps; ++k) ASSERT_EQ(a->step(m, st), Status::solved);
    for (int i = 0; i < m.n_q(); ++i) EXPECT_TRUE(same_bits(st.q[i], single[3].q[i])) << i;
  }
  for (int threads : {1, 2}) {
    WorldBatch b(s.model, n);
    for (int w = 0; w < n; ++w) b.world_q(12)[w] = spin(w);
    BatchStepper st(b, {.threads = threads});
    st.run(b, steps);
    for (int w = 0; w < n; ++w) {
      EXPECT_EQ(b.world_status()[w], Status::solved);
      for (int i = 0; i < m.n_q(); ++i)
        EXPECT_TRUE(same_bits(b.world_q(i)[w], single[w].q[i])) << "threads " << threads << " world " << w << " dof " << i;
      for (int r = 0; r < b.memory_rows(); ++r) EXPECT_TRUE(same_bits(b.world_memory(r)[w], single[w].memory[r]));
    }
  }
  EXPECT_NE(single[0].q[12], single[4].q[12]);  // the worlds really differ
}

TEST(BatchStepper, PerWorldGainsEqualScenesWithThoseGains) {
  // Each gain parameter, overridden per world, against a scene that has that gain: Anitescu's
  // K_a of one joint, the MIQP's K, Halm-Posa's c.
  struct Case {
    const char* example;
    const char* path;
    double value;
    std::function<void(nlohmann::json&)> edit;  // the same gain written into the scene
    int steps;
  };
  const std::vector<Case> cases = {
      {"anitescu_grasp.json", "joints.x_l.stiffness", 800.0,
       [](nlohmann::json& j) { j["model"]["stiffness"] = {800.0, 2000.0, 10000.0}; }, 40},
      {"pang_tedrake_grasp.json", "model.stiffness", 2.0e4, [](nlohmann::json& j) { j["model"]["stiffness"] = 2.0e4; },
       25},
      {"halm_posa_push.json", "model.c", 0.3, [](nlohmann::json& j) { j["model"]["c"] = 0.3; }, 60},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    nlohmann::json base = test::example_json(c.example);
    nlohmann::json varied = base;
    varied["overrides"] = {{"worlds", nlohmann::json::array({nlohmann::json::object(), {{c.path, c.value}}})}};
    nlohmann::json edited = base;
    c.edit(edited);
    WorldBatch b = WorldBatch::from_scene(parse_scene(varied.dump(), "varied"), 2);
    BatchStepper st(b, {.threads = 2});
    st.run(b, c.steps);
    for (int w = 0; w < 2; ++w) {
      const Scene ref = parse_scene((w == 0 ? base : edited).dump(), "ref");
      const auto stepper = make_stepper(*ref.model);
      State x = initial_state(*ref.model);
      for (int l = 0; l < c.steps; ++l) ASSERT_EQ(stepper->step(*ref.model, x), Status::solved) << "world " << w;
      for (int i = 0; i < ref.model->n_q(); ++i) EXPECT_TRUE(same_bits(b.world_q(i)[w], x.q[i])) << "world " << w << " dof " << i;
    }
    // The gain changed the trajectory.
    bool differ = false;
    for (int i = 0; i < b.model().n_q(); ++i) differ = differ || !same_bits(b.world_q(i)[0], b.world_q(i)[1]);
    EXPECT_TRUE(differ);
  }
}

TEST(WorldBatch, GainPathsAreRefusedWhereTheModelHasNoSuchGain) {
  const auto error = [](const char* example, const char* path, double value) {
    nlohmann::json j = test::example_json(example);
    j["overrides"] = {{"worlds", nlohmann::json::array({{{path, value}}})}};
    try {
      parse_scene(j.dump(), "t");
    } catch (const SceneError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(error("halm_posa_push.json", "joints.finger1_x.stiffness", 1.0).find("anitescu_qp only"), std::string::npos);
  // The message lists the formulation table's gains (a formulation the program registered
  // too: the test suite registers one, tests/core/registered_formulation_test.cpp).
  for (const std::string& message :
       {error("anitescu_grasp.json", "model.c", 1.0), error("halm_posa_push.json", "model.stiffness", 1.0)}) {
    EXPECT_NE(message.find("a model parameter is c (halm_posa_lcp) or stiffness (pang_tedrake_miqp)"),
              std::string::npos) << message;
    EXPECT_NE(message.find("per joint: joints.NAME.stiffness of anitescu_qp"), std::string::npos) << message;
  }
  EXPECT_NE(error("anitescu_grasp.json", "joints.x_l.stiffness", -5.0).find("must be > 0"), std::string::npos);
  EXPECT_NE(error("halm_posa_push.json", "model.c", 0.0).find("must be > 0"), std::string::npos);
  EXPECT_EQ(error("pang_tedrake_grasp.json", "model.stiffness", 5e3), "(accepted)");
}

TEST(BatchStepper, PerWorldCommandsEqualTheSameConstantSchedules) {
  Scene s = load("examples/halm_posa_push.json");
  const Model& m = *s.model;
  WorldBatch b(s.model, 3);
  std::vector<double> u(static_cast<size_t>(m.n_a) * b.padded_size(), 0.0);
  for (int a = 0; a < m.n_a; ++a)
    for (int w = 0; w < 3; ++w) u[a * b.padded_size() + w] = 0.02 * (a + 1) * (w + 1) * (a % 2 ? 1 : -1);
  BatchStepper st(b);
  st.run(b, 20, {u.data(), b.padded_size()});
  for (int w = 0; w < 3; ++w) {
    Model mw = m;
    for (int a = 0; a < m.n_a; ++a) mw.joints[m.dofs[m.n_u + a].index].command = Schedule::constant(u[a * b.padded_size() + w]);
    auto single = make_stepper(mw);
    State x = initial_state(mw);
    for (int k = 0; k < 20; ++k) ASSERT_EQ(single->step(mw, x), Status::solved);
    for (int i = 0; i < m.n_q(); ++i) EXPECT_TRUE(same_bits(b.world_q(i)[w], x.q[i])) << "world " << w << " dof " << i;
  }
  // Back to the scene's schedules after a commanded step: equal to a fresh batch's world.
  WorldBatch fresh(s.model, 1);
  BatchStepper st_fresh(fresh);
  WorldBatch again(s.model, 1);
  st.step(again, {u.data(), b.padded_size()});
  again.reset();
  st.run(again, 5);
  st_fresh.run(fresh, 5);
  EXPECT_EQ(again.hash(), fresh.hash());
}

/// AfterStep (the Monte Carlo study judges worlds with it): every real world is handed over
/// once per step, after its own step, in ranges that do not overlap, on either path and any
/// number of threads; the worlds' numbers do not change.
TEST(BatchStepper, AfterStepSeesEveryWorldOnceRightAfterItsStep) {
  const Scene s = load("examples/halm_posa_push.json");
  for (bool scalar : {false, true})
    for (int threads : {1, 2}) {
      const int n = 37;  // not a whole number of lane groups
      WorldBatch b = push_batch(s, 0, n), plain = push_batch(s, 0, n);
      BatchStepper stepper(b, {.threads = threads, .scalar = scalar}), reference(plain, {.threads = threads, .scalar = scalar});
      for (int l = 1; l <= 5; ++l) {
        std::vector<std::atomic<int>> seen(static_cast<std::size_t>(n));
        std::vector<double> x_after(static_cast<std::size_t>(n));
        stepper.step(b, {}, [&](int begin, int end) {
          ASSERT_LE(0, begin);
          ASSERT_LE(end, n);
          for (int w = begin; w < end; ++w) {
            seen[static_cast<std::size_t>(w)].fetch_add(1);
            x_after[static_cast<std::size_t>(w)] = b.world_q(0)[w];  // already this step's
          }
        });
        reference.step(plain);
        for (int w = 0; w < n; ++w) {
          EXPECT_EQ(seen[static_cast<std::size_t>(w)].load(), 1) << "world " << w << " step " << l;
          EXPECT_TRUE(same_bits(x_after[static_cast<std::size_t>(w)], plain.world_q(0)[w])) << "world " << w;
        }
      }
    }
}

TEST(BatchStepper, AFailedWorldIsMarkedAndTheOthersGoOn) {
  const Scene s = load("examples/halm_posa_push.json");
  const Model& m = *s.model;
  WorldBatch b(s.model, 5);
  std::vector<double> u(static_cast<size_t>(m.n_a) * b.padded_size(), 0.05);
  u[0 * b.padded_size() + 3] = std::nan("");  // world 3's first joint
  BatchStepper st(b);
  st.step(b);  // one ordinary step first
  st.run(b, 4, {u.data(), b.padded_size()});
  EXPECT_EQ(b.failed_count(), 1);
  EXPECT_EQ(b.world_status()[3], Status::bad_input);
  EXPECT_EQ(b.world_failed_step()[3], 1);
  EXPECT_EQ(b.world_step()[3], 1);  // stopped where it failed
  EXPECT_NE(b.failure_detail(3).find("is not finite"), std::string::npos) << b.failure_detail(3);
  for (int w : {0, 1, 2, 4}) {
    EXPECT_EQ(b.world_status()[w], Status::solved);
    EXPECT_EQ(b.world_step()[w], 5);
    EXPECT_TRUE(b.failure_detail(w).empty());
  }
  const std::string stride = error_of([&] { st.step(b, {u.data(), 2}); });
  EXPECT_NE(stride.find("stride 2 is less than the 5 worlds"), std::string::npos) << stride;
}

// One pipeline: a lane group's worlds pass the same stage 0 as one world's step (h and the
// commands, Stepper::step), so a batch whose scene has no step.h refuses every world with
// the stepper's own reason on the lane path as on the per-world path.
TEST(BatchStepper, ABadStepSizeIsRefusedByTheSameStageOnBothPaths) {
  for (const char* example : {"halm_posa_push.json", "anitescu_grasp.json"}) {
    nlohmann::json j = test::example_json(example);
    j.erase("step");
    const Scene s = parse_scene(j.dump(), "t");
    ASSERT_EQ(s.model->step.h, 0.0);
    std::string details[2];
    for (const bool scalar : {false, true}) {
      WorldBatch b(s.model, 5);
      BatchStepper st(b, BatchOptions{.scalar = scalar});
      EXPECT_EQ(st.lanes(), !scalar) << example << ": " << st.path();
      st.step(b);
      EXPECT_EQ(b.failed_count(), 5) << example;
      for (int w = 0; w < 5; ++w) {
        EXPECT_EQ(b.world_status()[w], Status::bad_input);
        EXPECT_EQ(b.world_step()[w], 0);
        EXPECT_EQ(b.world_time()[w], 0.0);
        EXPECT_EQ(b.failure_detail(w), b.failure_detail(0));
      }
      details[scalar] = b.failure_detail(0);
    }
    EXPECT_EQ(details[0], details[1]) << example;
    EXPECT_NE(details[0].find("step.h must be a finite number > 0 (got 0)"), std::string::npos) << details[0];
  }
}

// Every kind of per-world value a batch may vary (a mass, a fixed body's pose, a body's size,
// a friction, a formulation's stiffness) reaches the stepper through its WorldParams: each
// world ends bitwise where the scene compiled with that value ends (the value written into a
// copy of the Model, one stepper, one State), and the Model itself is left as loaded.
TEST(BatchStepper, EveryKindOfParameterStepsAsTheSceneWithThatValue) {
  struct Case {
    const char* scene;
    int steps;
    std::vector<std::string> paths;
    std::vector<std::vector<double>> worlds;  // one value per path
  };
  const std::vector<Case> cases = {
      {"examples/pang_tedrake_gripper.json", 40,
       {"bodies.cylinder.mass", "bodies.ground.pose.y", "bodies.cylinder.scale", "pairs.left_finger/cylinder.friction"},
       {{1.0, 0.0, 1.0, 0.5}, {1.3, -0.002, 0.97, 0.4}, {0.8, 0.001, 0.99, 0.7}}},
      {"examples/pang_tedrake_grasp.json", 12,
       {"bodies.cylinder.mass", "model.stiffness", "bodies.cylinder.scale"},
       {{1.0, 1000.0, 1.0}, {1.2, 1500.0, 0.98}, {0.9, 800.0, 1.01}}},
      {"examples/anitescu_grasp.json", 40,
       {"bodies.cylinder.mass", "joints.y_g.stiffness", "bodies.ground.pose.y", "bodies.cylinder.scale"},
       {{1.0, 10000.0, 0.0, 1.0}, {1.4, 8000.0, -0.001, 0.97}, {0.7, 12000.0, 0.002, 1.03}}},
  };
  for (const Case& c : cases) {
    const Scene s = load(c.scene);
    const Model before = *s.model;
    std::vector<ParameterRef> refs;
    for (const std::string& p : c.paths) refs.push_back(resolve_parameter(*s.model, p, "test"));
    const int n = static_cast<int>(c.worlds.size());
    WorldBatch b(s.model, n, refs);
    for (int w = 0; w < n; ++w)
      for (int k = 0; k < b.varied_count(); ++k) b.set_parameter(k, w, c.worlds[w][k]);
    b.reset();
    BatchStepper st(b, {.threads = 2});
    st.run(b, c.steps);
    for (int w = 0; w < n; ++w) {
      Model m = *s.model;
      for (int k = 0; k < b.varied_count(); ++k) test::apply_parameter(m, *s.model, refs[k], c.worlds[w][k]);
      const auto stepper = make_stepper(m);
      State x = initial_state(m);
      for (int l = 0; l < c.steps; ++l) ASSERT_EQ(stepper->step(m, x), Status::solved) << c.scene << " world " << w << " step " << l;
      ASSERT_EQ(b.world_status()[w], Status::solved) << c.scene << " world " << w << ": " << b.failure_detail(w);
      for (int i = 0; i < m.n_q(); ++i) EXPECT_TRUE(same_bits(b.world_q(i)[w], x.q[i])) << c.scene << " world " << w;
      EXPECT_TRUE(same_bits(b.world_time()[w], x.t)) << c.scene;
    }
    // The varied worlds went elsewhere than the scene's own (the values took effect).
    EXPECT_FALSE(same_bits(b.world_q(0)[1], b.world_q(0)[0]) && same_bits(b.world_q(1)[1], b.world_q(1)[0])) << c.scene;
    // The shared Model is as loaded.
    const Model& after = *s.model;
    EXPECT_EQ(after.bodies[1].mass, before.bodies[1].mass) << c.scene;
    EXPECT_EQ(after.bodies[0].pose, before.bodies[0].pose) << c.scene;
    for (size_t p = 0; p < after.pairs.size(); ++p) EXPECT_EQ(after.pairs[p].friction, before.pairs[p].friction) << c.scene;
  }
}

}  // namespace
}  // namespace qs::batch_stepper_test

// The batch engine's lane path for anitescu_qp's quasi-dynamic step (quasistep/batch/batch_stepper.hpp,
// quasistep/core/formulations/anitescu_qp/anitescu_lanes.hpp): a world's final q, memory (q̄_a, warm start), t, step and status are bitwise those of
// a single-world AnitescuQp run, in any lane, batch split and thread count, with --scalar, and
// when PGS stops at its sweep limit and the scalar fallback finishes the step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "quasistep/batch/batch_stepper.hpp"
#include "quasistep/kernels/lane.hpp"
#include "quasistep/batch/world_batch.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/scene.hpp"
#include <nlohmann/json.hpp>
#include "tests/support/model_parameters.hpp"
#include "tests/support/bitwise.hpp"

namespace qs::anitescu_lanes_test {
namespace {

Scene load(const std::string& name) {
  return load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" + name + ".json");
}

using test::same_bits;

/// The varied frictions of a study: the grasp's finger pairs (low values let the cylinder
/// slip out and drop), the drop's table/box pair.
std::vector<std::string> varied_paths(const std::string& name) {
  if (name == "anitescu_grasp") return {"pairs.left_finger/cylinder.friction", "pairs.right_finger/cylinder.friction"};
  return {"pairs.table/box.friction"};
}
double friction_of(int w) { return 0.1 + 0.06 * (w % 11); }

struct Final {
  State s;
  Status status = Status::not_run;
  int failed_step = -1;
};

/// World w the way `quasistep run` steps it: one AnitescuQp, one State, stopping at a failure.
Final single_world(const Scene& sc, const std::string& name, int w, int steps, const PgsSettings& pgs) {
  Model m = *sc.model;
  for (const std::string& p : varied_paths(name)) test::apply_parameter(m, *sc.model, resolve_parameter(m, p, "test"), friction_of(w));
  AnitescuQp stepper(m);
  stepper.set_pgs_settings(pgs);
  Final f;
  f.s = initial_state(m);
  for (int k = 0; k < steps; ++k) {
    const int step = f.s.step;
    f.status = stepper.step(m, f.s);
    if (f.status != Status::solved) {
      f.failed_step = step;
      break;
    }
  }
  return f;
}

/// Worlds [first, first + count) of the study as one batch.
WorldBatch study_batch(const Scene& sc, const std::string& name, int first, int count) {
  std::vector<ParameterRef> varied;
  for (const std::string& p : varied_paths(name)) varied.push_back(resolve_parameter(*sc.model, p, "test"));
  WorldBatch b(sc.model, count, varied);
  for (int w = 0; w < count; ++w)
    for (int k = 0; k < b.varied_count(); ++k) b.set_parameter(k, w, friction_of(first + w));
  b.reset();
  return b;
}

/// Every world of b (global index first + w) against its single-world run, bit for bit.
void expect_same_as_single(const WorldBatch& b, int first, const std::vector<Final>& single, const char* what) {
  const Model& m = b.model();
  for (int w = 0; w < b.size(); ++w) {
    const Final& f = single[first + w];
    SCOPED_TRACE(std::string(what) + ", world " + std::to_string(first + w));
    int diff = 0;
    for (int i = 0; i < m.n_q(); ++i) diff += !same_bits(b.world_q(i)[w], f.s.q[i]);
    for (int r = 0; r < b.memory_rows(); ++r) diff += !same_bits(b.world_memory(r)[w], f.s.memory[r]);  // q̄_a, warm start
    diff += !same_bits(b.world_time()[w], f.s.t);
    EXPECT_EQ(diff, 0);
    EXPECT_EQ(b.world_step()[w], f.s.step);
    EXPECT_EQ(b.world_status()[w], f.status);
    EXPECT_EQ(b.world_failed_step()[w], f.failed_step);
  }
}

void check_study_of(const Scene& sc, const std::string& name, const PgsSettings& pgs, int steps, bool expect_fallbacks) {
  SCOPED_TRACE(name);
  const int n = 2 * kLaneWidth + 3;
  std::vector<Final> single;
  for (int w = 0; w < n; ++w) single.push_back(single_world(sc, name, w, steps, pgs));
  // The whole study at 1 and 2 threads, and --scalar.
  for (int threads : {1, 2}) {
    WorldBatch b = study_batch(sc, name, 0, n);
    BatchStepper st(b, {.threads = threads, .pgs = pgs});
    ASSERT_TRUE(st.lanes()) << st.path();
    st.run(b, steps);
    expect_same_as_single(b, 0, single, threads == 1 ? "lanes, 1 thread" : "lanes, 2 threads");
    if (expect_fallbacks) {
      EXPECT_GT(st.fallback_count(), 0);
    }
    std::printf("%s, %d thread(s): %ld lane world-steps took the fallback, %d of %d worlds failed\n", name.c_str(),
                threads, st.fallback_count(), b.failed_count(), n);
  }
  {
    WorldBatch b = study_batch(sc, name, 0, n);
    BatchStepper st(b, {.threads = 2, .scalar = true, .pgs = pgs});
    EXPECT_FALSE(st.lanes());
    EXPECT_NE(st.path().find("--scalar"), std::string::npos) << st.path();
    st.run(b, steps);
    expect_same_as_single(b, 0, single, "--scalar");
  }
  // Two other splits: worlds shift lanes (5 and n - 5 worlds; kLaneWidth - 1 and the rest).
  for (int cut : {5, kLaneWidth - 1}) {
    if (cut <= 0 || cut >= n) continue;
    WorldBatch a = study_batch(sc, name, 0, cut), c = study_batch(sc, name, cut, n - cut);
    BatchStepper sa(a, {.threads = 2, .pgs = pgs}), sc2(c, {.threads = 1, .pgs = pgs});
    sa.run(a, steps);
    sc2.run(c, steps);
    expect_same_as_single(a, 0, single, "split, first part");
    expect_same_as_single(c, cut, single, "split, second part");
  }
}

void check_study(const std::string& name, const PgsSettings& pgs, int steps, bool expect_fallbacks) {
  check_study_of(load(name), name, pgs, steps, expect_fallbacks);
}

TEST(AnitescuLanes, GraspWorldsAreBitwiseTheSingleWorldRuns) {
  check_study("anitescu_grasp", anitescu_pgs_settings(), 80, false);
}

TEST(AnitescuLanes, DropWorldsAreBitwiseTheSingleWorldRuns) {
  check_study("anitescu_drop", anitescu_pgs_settings(), 200, false);
}

TEST(AnitescuLanes, DropInLengths2ToTheMinus20IsBitwiseTheSingleWorldRuns) {
  // The mass matrix's pivot test is the same on both paths and free of units: in lengths
  // 2^-20 (inertia 2^-40 times, beside the same mass) the lanes and the scalar path step the
  // drop alike, where a test against the largest diagonal entry refused it.
  std::ifstream in(std::string(QUASISTEP_SOURCE_DIR) + "/examples/anitescu_drop.json");
  nlohmann::json j = nlohmann::json::parse(in);
  const auto small = [](nlohmann::json& x) { x = std::ldexp(x.get<double>(), -20); };
  small(j["world"]["gravity"]);
  small(j["contacts"]["margin"]);
  for (nlohmann::json& b : j["bodies"]) {
    small(b["pose"][0]);
    small(b["pose"][1]);
    for (nlohmann::json& x : b["shapes"][0]["size"]) small(x);
    if (b.contains("com"))
      for (nlohmann::json& x : b["com"]) small(x);
    if (b.contains("inertia")) b["inertia"] = std::ldexp(b["inertia"].get<double>(), -40);
  }
  const Scene sc = parse_scene(j.dump());
  const Final f = single_world(sc, "anitescu_drop", 0, 200, anitescu_pgs_settings());
  EXPECT_EQ(f.status, Status::solved);
  EXPECT_EQ(f.s.step, 200);
  check_study_of(sc, "anitescu_drop", anitescu_pgs_settings(), 200, false);
}

TEST(AnitescuLanes, WorldsWhosePgsHitsItsLimitTakeTheFallbackAndStillMatch) {
  PgsSettings pgs = anitescu_pgs_settings();
  pgs.max_iterations = 6;  // most contact steps stop at iteration_limit: Lemke finishes them
  check_study("anitescu_grasp", pgs, 80, true);
  check_study("anitescu_drop", pgs, 120, true);
}

TEST(AnitescuLanes, SomeGraspWorldsDropTheCylinder) {
  // The study really differs per lane: with low finger friction the cylinder slips out.
  const Scene sc = load("anitescu_grasp");
  const int n = 2 * kLaneWidth + 3;
  WorldBatch b = study_batch(sc, "anitescu_grasp", 0, n);
  BatchStepper st(b, {.threads = 2});
  st.run(b, 39);  // to the top of the lift
  int lifted = 0, dropped = 0;
  for (int w = 0; w < n; ++w) (b.world_q(1)[w] > 0.06 ? lifted : dropped) += 1;
  EXPECT_GT(lifted, 0);
  EXPECT_GT(dropped, 0);
}

TEST(AnitescuLanes, PerWorldCommandsRunInLanesWithTheNumbersOfThePerWorldPath) {
  const Scene sc = load("anitescu_grasp");
  const Model& m = *sc.model;
  const int n = 2 * kLaneWidth + 3;
  WorldBatch lanes = study_batch(sc, "anitescu_grasp", 0, n), scalar = study_batch(sc, "anitescu_grasp", 0, n);
  std::vector<double> u(static_cast<size_t>(m.n_a) * lanes.padded_size());
  BatchStepper sl(lanes, {.threads = 2}), ss(scalar, {.threads = 1, .scalar = true});
  ASSERT_TRUE(sl.lanes());
  for (int k = 0; k < 40; ++k) {
    for (int w = 0; w < n; ++w) {
      const double sgn = k < 30 ? 1.0 : -1.0;
      u[0 * lanes.padded_size() + w] = sgn * (0.08 + 0.002 * w);
      u[1 * lanes.padded_size() + w] = -sgn * (0.08 + 0.002 * w);
      u[2 * lanes.padded_size() + w] = k < 30 ? 0.1 : 0.0;
    }
    if (k == 12) u[2 * lanes.padded_size() + 3] = std::nan("");  // world 3 fails with bad_input
    sl.step(lanes, {u.data(), lanes.padded_size()});
    ss.step(scalar, {u.data(), lanes.padded_size()});
  }
  EXPECT_EQ(lanes.hash(), scalar.hash());
  EXPECT_EQ(lanes.world_status()[3], Status::bad_input);
  EXPECT_EQ(lanes.failure_detail(3), scalar.failure_detail(3));
  EXPECT_EQ(lanes.failed_count(), 1);
}

TEST(AnitescuLanes, VariedMassesSizesAndStiffnessesRunInTheLanesBitwiseAsOneWorld) {
  // The grasp study with the cylinder's mass and size varied (and the left finger's
  // friction and size, the right finger's stiffness K_a), and the left finger's mass zero in some worlds and not in others: a
  // lane group holding both steps world by world (the scalar step skips a massless body),
  // the others in lanes.
  const Scene sc = load("anitescu_grasp");
  const Model& m = *sc.model;
  const std::vector<std::string> paths = {"bodies.cylinder.mass", "pairs.left_finger/cylinder.friction",
                                          "bodies.left_finger.mass", "bodies.cylinder.scale",
                                          "bodies.left_finger.scale", "joints.x_r.stiffness"};
  const int np = static_cast<int>(paths.size());
  const int n = 3 * kLaneWidth + 1, steps = 60;
  const auto value = [&](int k, int w) {
    if (k == 0) return 0.5 + 0.25 * (w % 7);           // kg
    if (k == 1) return 0.15 + 0.05 * (w % 5);
    if (k == 3) return w % 4 == 0 ? 1.0 : 0.9 + 0.05 * (w % 4);  // the cylinder's radius 4.5 to 5.5 cm
    if (k == 4) return 1.0 + 0.1 * (w % 2);
    if (k == 5) return 1000.0 + 500.0 * (w % 5);  // N/m, the scene's 2000 among them
    if (w < 2 * kLaneWidth) return w < kLaneWidth ? 0.0 : 0.2;  // a group all zero, one all 0.2 kg,
    return w % 3 == 0 ? 0.0 : 0.2;                               // then mixed groups
  };
  std::vector<ParameterRef> refs;
  for (const std::string& p : paths) refs.push_back(resolve_parameter(m, p, "test"));
  for (int threads : {1, 2}) {
    WorldBatch b(sc.model, n, refs);
    for (int w = 0; w < n; ++w)
      for (int k = 0; k < np; ++k) b.set_parameter(k, w, value(k, w));
    b.reset();
    BatchStepper st(b, {.threads = threads});
    ASSERT_TRUE(st.lanes()) << st.path();
    EXPECT_NE(st.path().find("masses, sizes, stiffnesses"), std::string::npos) << st.path();
    st.run(b, steps);
    double lowest = 1e9, highest = -1e9;
    for (int w = 0; w < n; ++w) {
      SCOPED_TRACE("world " + std::to_string(w));
      WorldParams p(m);
      for (int k = 0; k < np; ++k) p.set(m, refs[k], value(k, w));
      AnitescuQp one(m);
      State s = initial_state(m);
      Status status = Status::solved;
      for (int l = 0; l < steps && status == Status::solved; ++l) status = one.step(m, p, s);
      EXPECT_EQ(b.world_status()[w], status);
      int diff = 0;
      for (int i = 0; i < m.n_q(); ++i) diff += !same_bits(b.world_q(i)[w], s.q[i]);
      for (int r = 0; r < b.memory_rows(); ++r) diff += !same_bits(b.world_memory(r)[w], s.memory[r]);
      EXPECT_EQ(diff, 0);
      lowest = std::min(lowest, s.q[1]), highest = std::max(highest, s.q[1]);
    }
    EXPECT_GT(highest - lowest, 1e-3) << "the masses changed nothing: the test would not see them ignored";
  }
}

TEST(AnitescuLanes, OtherVariedParametersUseThePerWorldPath) {
  const Scene sc = load("anitescu_drop");
  WorldBatch b(sc.model, 3, {resolve_parameter(*sc.model, "bodies.table.pose.y", "test")});
  BatchStepper st(b, {.threads = 1});
  EXPECT_FALSE(st.lanes());
  EXPECT_NE(st.path().find("parameter \"bodies.table.pose.y\" varies per world and only friction, masses, sizes, "
                           "joint stiffness, and start poses run in lanes"),
            std::string::npos)
      << st.path();
}

}  // namespace
}  // namespace qs::anitescu_lanes_test

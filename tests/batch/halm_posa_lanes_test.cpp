// The batch engine's lane path for Halm & Posa's step (quasistep/core/formulations/halm_posa_lcp/halm_posa_lanes.hpp,
// quasistep/kernels/lemke_lanes.hpp): a world's final q, t, step and status are bitwise those of a
// single-world HalmPosaLcp run (what `quasistep run` does), in any lane, batch split and
// thread count, with per-world friction, c, start poses and commands in lanes; lanes whose
// Lemke does not solve finish on the compacted scalar fallback and still match; and the
// template answers the same LCP as the compacted solver it replaced on the primary path.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "quasistep/batch/batch_stepper.hpp"
#include "quasistep/kernels/lane.hpp"
#include "quasistep/batch/world_batch.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lanes.hpp"
#include "quasistep/core/scene.hpp"
#include "tests/support/model_parameters.hpp"
#include "tests/support/bitwise.hpp"
#include "tests/support/example_json.hpp"
#include "tests/support/lcp_check.hpp"

namespace qs::halm_posa_lanes_test {
namespace {

using nlohmann::json;
using test::same_bits;

Scene scene_of(const json& j) { return parse_scene(j.dump()); }
json example(const std::string& name) { return test::example_json(name + ".json"); }

/// The per-world values of a study: each world differs in both fingers' friction, c and the
/// disk's start x (all in lanes).
struct Study {
  std::vector<std::string> paths;
  std::vector<double> (*values)(int w);
};

std::vector<double> push_values(int w) {
  return {0.2 + 0.05 * (w % 17), 0.3 + 0.04 * (w % 13), 0.005 + 0.002 * (w % 7), -0.02 + 0.004 * (w % 11)};
}
const Study kPush{{"pairs.finger1/disk.friction", "pairs.finger2/disk.friction", "model.c", "bodies.disk.pose.x"},
                  push_values};

struct Final {
  State s;
  Status status = Status::not_run;
  int failed_step = -1;
};

/// World w the way `quasistep run` steps it: one HalmPosaLcp on a Model with the world's
/// values, stopping at the first failure.
Final single_world(const Scene& sc, const Study& study, int w, int steps) {
  Model m = *sc.model;
  const std::vector<double> v = study.values(w);
  State s;
  {
    // Start parameters change the initial state: take them from a one-world batch.
    std::vector<ParameterRef> refs;
    for (const std::string& p : study.paths) refs.push_back(resolve_parameter(m, p, "test"));
    WorldBatch one(sc.model, 1, refs);
    for (size_t k = 0; k < refs.size(); ++k) {
      one.set_parameter(static_cast<int>(k), 0, v[k]);
      test::apply_parameter(m, *sc.model, refs[k], v[k]);
    }
    one.reset();
    s = initial_state(m);
    one.load_state(0, s);
  }
  HalmPosaLcp stepper(m);
  Final f;
  for (int k = 0; k < steps; ++k) {
    const int step = s.step;
    f.status = stepper.step(m, s);
    if (f.status != Status::solved) {
      f.failed_step = step;
      break;
    }
  }
  f.s = s;
  return f;
}

WorldBatch study_batch(const Scene& sc, const Study& study, int first, int count) {
  std::vector<ParameterRef> refs;
  for (const std::string& p : study.paths) refs.push_back(resolve_parameter(*sc.model, p, "test"));
  WorldBatch b(sc.model, count, refs);
  for (int w = 0; w < count; ++w) {
    const std::vector<double> v = study.values(first + w);
    for (size_t k = 0; k < refs.size(); ++k) b.set_parameter(static_cast<int>(k), w, v[k]);
  }
  b.reset();
  return b;
}

void expect_matches(const WorldBatch& b, const std::vector<Final>& single, int first, const std::string& how) {
  const int nq = b.model().n_q();
  for (int w = 0; w < b.size(); ++w) {
    const Final& f = single[first + w];
    const std::string where = how + " world " + std::to_string(first + w);
    EXPECT_EQ(b.world_failed_step()[w], f.failed_step) << where;
    if (f.failed_step >= 0) {
      EXPECT_EQ(b.world_status()[w], f.status) << where;
      continue;
    }
    EXPECT_EQ(b.world_status()[w], Status::solved) << where;
    EXPECT_EQ(b.world_step()[w], f.s.step) << where;
    EXPECT_TRUE(same_bits(b.world_time()[w], f.s.t)) << where;
    for (int i = 0; i < nq; ++i) EXPECT_TRUE(same_bits(b.world_q(i)[w], f.s.q[i])) << where << " dof " << i;
  }
}

/// Every world of `study` on `scene` against its single-world run: 1, 2 and 8 threads,
/// --scalar, and three batch splits (one world alone; a group that starts mid-group).
void check_bitwise(const json& scene, const Study& study, int steps, long* fallbacks = nullptr) {
  const Scene sc = scene_of(scene);
  const int n = 2 * kLaneWidth + 3;  // not a whole number of lane groups
  std::vector<Final> single;
  for (int w = 0; w < n; ++w) single.push_back(single_world(sc, study, w, steps));
  for (int threads : {1, 2, 8}) {
    WorldBatch b = study_batch(sc, study, 0, n);
    BatchStepper st(b, {.threads = threads});
    ASSERT_TRUE(st.lanes()) << st.path();
    st.run(b, steps);
    expect_matches(b, single, 0, "threads " + std::to_string(threads));
    if (fallbacks && threads == 1) *fallbacks = st.fallback_count();
  }
  {
    WorldBatch b = study_batch(sc, study, 0, n);
    BatchStepper st(b, {.threads = 2, .scalar = true});
    EXPECT_FALSE(st.lanes());
    st.run(b, steps);
    expect_matches(b, single, 0, "--scalar");
  }
  for (auto [first, count] : {std::pair{0, 1}, std::pair{1, kLaneWidth}, std::pair{1 + kLaneWidth, n - 1 - kLaneWidth}}) {
    WorldBatch b = study_batch(sc, study, first, count);
    BatchStepper st(b, {.threads = 2});
    st.run(b, steps);
    expect_matches(b, single, first, "split at " + std::to_string(first));
  }
}

TEST(HalmPosaLanes, PushWorldsAreBitwiseTheSingleWorldRuns) {
  long fallbacks = -1;
  check_bitwise(example("halm_posa_push"), kPush, 120, &fallbacks);
  EXPECT_EQ(fallbacks, 0);  // every push step solves in the template
}

TEST(HalmPosaLanes, PushWithALimitSurfaceFarFromOneIsBitwiseTheSingleWorldRuns) {
  // A and B 2^20 times the example's: the step holds them in the LCP's unit (2^20 here, not
  // 1), on the lanes and on the scalar path alike.
  json j = example("halm_posa_push");
  for (json& row : j["model"]["A"])
    for (json& v : row) v = std::ldexp(v.get<double>(), 20);
  j["model"]["B"] = std::ldexp(j["model"]["B"].get<double>(), 20);
  ASSERT_EQ(halm_posa_lcp_unit(formulation_params<HalmPosaParams>(*scene_of(j).model)), std::ldexp(1.0, 20));
  long fallbacks = -1;
  check_bitwise(j, kPush, 120, &fallbacks);
  EXPECT_EQ(fallbacks, 0);
}

TEST(HalmPosaLanes, PerfectVelocityPushWorldsAreBitwiseTheSingleWorldRuns) {
  json j = example("halm_posa_push");
  j["model"] = {{"formulation", "perfect_velocity_lcp"}, {"A", j["model"]["A"]}};
  const Study study{{"pairs.finger1/disk.friction", "bodies.disk.pose.x"},
                    [](int w) { return std::vector<double>{0.2 + 0.05 * (w % 17), -0.02 + 0.004 * (w % 11)}; }};
  check_bitwise(j, study, 120);
}

TEST(HalmPosaLanes, AsymmetricPushWithContactsComingAndGoingIsBitwiseTheSingleWorldRuns) {
  // One finger leads: contacts open and close, so lanes of one group hold different active
  // sets of the fixed layout (excluded rows) and pivot differently.
  json j = example("halm_posa_push_asymmetric");
  j["contacts"]["margin"] = 0.01;
  check_bitwise(j, kPush, 200);
  // The premise: the active set changes along the way.
  const Scene sc = scene_of(j);
  HalmPosaLcp stepper(*sc.model);
  State s = initial_state(*sc.model);
  int fewer = 0, all = 0;
  for (int k = 0; k < 200; ++k) {
    ASSERT_EQ(stepper.step(*sc.model, s), Status::solved);
    (stepper.report().contacts < sc.model->n_slots() ? fewer : all) += 1;
  }
  EXPECT_GT(fewer, 0);
  EXPECT_GT(all, 0);
}

TEST(HalmPosaLanes, WallJamFallsBackToTheCertifiedScalarPathInEveryLane) {
  // Halm & Posa 2018, Fig. 4 top: under perfect velocity the wall jams the disk; Lemke in lanes ends
  // on a ray, the compacted fallback proves the step infeasible. Friction varies per world,
  // so worlds jam at their own steps.
  json j = example("halm_posa_wall");
  j["model"] = {{"formulation", "perfect_velocity_lcp"}, {"A", j["model"]["A"]}};
  const Study study{{"pairs.finger1/disk.friction"}, [](int w) { return std::vector<double>{0.3 + 0.1 * (w % 9)}; }};
  long fallbacks = -1;
  check_bitwise(j, study, 400, &fallbacks);
  EXPECT_GT(fallbacks, 0);
  const Scene sc = scene_of(j);
  const Final f = single_world(sc, study, 0, 400);
  EXPECT_EQ(f.status, Status::infeasible);  // the jam, proven (not a lane artefact)
}

TEST(HalmPosaLanes, FiniteGainWallIsBitwiseTheSingleWorldRuns) {
  const Study study{{"pairs.finger1/disk.friction", "model.c"},
                    [](int w) { return std::vector<double>{0.3 + 0.1 * (w % 9), 0.005 + 0.003 * (w % 5)}; }};
  check_bitwise(example("halm_posa_wall"), study, 400);
}

TEST(HalmPosaLanes, PerWorldCommandsRunInLanesWithThePerWorldNumbers) {
  const Scene sc = scene_of(example("halm_posa_push"));
  const Model& m = *sc.model;
  const int n = kLaneWidth + 5;
  auto run = [&](bool scalar) {
    WorldBatch b(sc.model, n);
    BatchStepper st(b, {.threads = 2, .scalar = scalar});
    EXPECT_EQ(st.lanes(), !scalar);
    std::vector<double> u(static_cast<size_t>(m.n_a) * b.padded_size());
    for (int k = 0; k < 40; ++k) {
      for (int a = 0; a < m.n_a; ++a)
        for (int w = 0; w < n; ++w) u[a * static_cast<size_t>(b.padded_size()) + w] = 0.02 * (a + 1) + 0.01 * ((w + k) % 5);
      st.step(b, {u.data(), b.padded_size()});
    }
    return b.hash();
  };
  EXPECT_EQ(run(false), run(true));
}

TEST(HalmPosaLanes, AWorldThrownBeyondTheStateRangeFailsAloneOnBothPaths) {
  // One world's command of 1e308 m/s would move its disk 1.24e306 m: stage 5's range check
  // refuses that step on the lane path as on the per-world path, leaves the world where it
  // was, and the group's other worlds step on.
  const Scene sc = scene_of(example("halm_posa_push"));
  const Model& m = *sc.model;
  const int n = kLaneWidth + 3, thrown = 2;
  auto run = [&](bool scalar) {
    WorldBatch b(sc.model, n);
    BatchStepper st(b, {.threads = 1, .scalar = scalar});
    std::vector<double> u(static_cast<size_t>(m.n_a) * b.padded_size(), 0.1);
    u[thrown] = 1e308;  // joint 0 (finger1_x) of world `thrown`
    st.step(b, {u.data(), b.padded_size()});
    EXPECT_EQ(b.world_status()[thrown], Status::numerical_failure) << (scalar ? "per world" : "lanes");
    EXPECT_NE(b.failure_detail(thrown).find("beyond"), std::string::npos) << b.failure_detail(thrown);
    const State start = initial_state(m);
    for (int i = 0; i < m.n_q(); ++i) EXPECT_EQ(b.world_q(i)[thrown], start.q[i]) << i;
    for (int w = 0; w < n; ++w) {
      if (w != thrown) {
        EXPECT_EQ(b.world_status()[w], Status::solved) << w;
      }
    }
    return b.hash();
  };
  EXPECT_EQ(run(false), run(true));
}

TEST(HalmPosaLanes, OtherVariedParametersAndLargeModelsUseThePerWorldPath) {
  // A fixed body's pose is a Model parameter the template reads from the Model: per world.
  const Scene wall = scene_of(example("halm_posa_wall"));
  WorldBatch moved(wall.model, 4, {resolve_parameter(*wall.model, "bodies.wall.pose.x", "test")});
  BatchStepper a(moved);
  EXPECT_FALSE(a.lanes());
  EXPECT_NE(a.path().find("\"bodies.wall.pose.x\" varies per world"), std::string::npos) << a.path();
  const Scene peg = scene_of(example("halm_posa_peg"));
  WorldBatch pegs(peg.model, 2);
  BatchStepper b(pegs);
  EXPECT_FALSE(b.lanes());
  EXPECT_NE(b.path().find("contact slots, more than the lane template's 16"), std::string::npos) << b.path();
  EXPECT_FALSE(halm_posa_template_applies(*peg.model));
}

/// The template (HalmPosaLcp::step's primary path) and the compacted solver
/// (step_fallback) pose the same LCP: every step of every example agrees to rounding, and
/// the template's record of the LCP passes an independent complementarity check.
TEST(HalmPosaLanes, TemplateAndCompactedSolverTakeTheSameSteps) {
  for (const char* name : {"halm_posa_push", "halm_posa_push_asymmetric", "halm_posa_push_semicircular",
                           "halm_posa_wall"}) {
    const Scene sc = scene_of(example(name));
    const Model& m = *sc.model;
    HalmPosaLcp primary(m), compacted(m);
    State a = initial_state(m);
    int by_template = 0;
    double worst = 0, worst_violation = 0;
    for (int k = 0; k < m.step.steps; ++k) {
      State b = a;
      ASSERT_EQ(primary.step(m, a), Status::solved) << name << " step " << k;
      by_template += primary.by_template();
      worst_violation = std::max(
          worst_violation, test::lcp_violation(primary.lcp_matrix(), primary.lcp_vector(), primary.result().z));
      ASSERT_EQ(compacted.step_fallback(m, WorldParams(m), b), Status::solved) << name << " step " << k;
      EXPECT_EQ(primary.report().contacts, compacted.report().contacts) << name << " step " << k;
      for (int i = 0; i < m.n_q(); ++i) worst = std::max(worst, std::abs(a.q[i] - b.q[i]));
      a = b;  // both continue from the compacted step, so differences do not accumulate
    }
    EXPECT_EQ(by_template, m.step.steps) << name;
    EXPECT_LE(worst, 1e-12) << name;
    EXPECT_LE(worst_violation, 1e-9) << name;
  }
}

}  // namespace
}  // namespace qs::halm_posa_lanes_test

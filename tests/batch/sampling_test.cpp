// Monte Carlo sampling (quasistep/batch/sampling.hpp): the counter-based stream gives the same value
// for a (seed, sample, parameter) in any batch split; the distributions have the right
// moments (tolerances computed from the sample size; fixed seeds, so nothing can flake);
// the truncated normal stays in bounds and terminates in far tails; bad input is refused.
#include "quasistep/batch/sampling.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "quasistep/batch/monte_carlo.hpp"
#include "quasistep/batch/world_batch.hpp"
#include "quasistep/core/kinematics.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/bitwise.hpp"
#include "tests/support/batch_error.hpp"
#include "tests/support/distributions.hpp"

namespace qs::sampling_test {
namespace {

using nlohmann::json;

json grasp_json() {
  std::ifstream in(std::string(QUASISTEP_SOURCE_DIR) + "/examples/anitescu_grasp.json");
  return json::parse(in);
}

// anitescu_grasp with four uncertain parameters, one of each kind of effect.
Scene uncertain_grasp() {
  json j = grasp_json();
  j["uncertainty"] = json::parse(R"({"parameters": [
    {"parameter": "bodies.cylinder.mass", "distribution": "truncated_normal", "mean": 1.0, "stddev": 0.1, "low": 0.8, "high": 1.2},
    {"parameter": "pairs.ground/cylinder.friction", "distribution": "uniform", "low": 0.3, "high": 0.7},
    {"parameter": "bodies.cylinder.pose.x", "distribution": "normal", "mean": 0.0, "stddev": 0.002},
    {"parameter": "joints.x_l.position", "distribution": "uniform", "low": -0.06, "high": -0.05}]})");
  return parse_scene(j.dump(), "uncertain_grasp");
}

using test::same_bits;

using test::error_of;

constexpr int kN = 20000;

struct Moments {
  double mean = 0, var = 0, min = 0, max = 0;
};

Moments moments(const Distribution& d, std::uint64_t seed, int parameter = 0) {
  std::vector<double> x(kN);
  for (int i = 0; i < kN; ++i) x[i] = draw(d, seed, i, parameter);
  Moments m{0, 0, x[0], x[0]};
  for (double v : x) {
    m.mean += v;
    m.min = std::min(m.min, v);
    m.max = std::max(m.max, v);
  }
  m.mean /= kN;
  for (double v : x) m.var += (v - m.mean) * (v - m.mean);
  m.var /= (kN - 1);
  return m;
}

using test::normal;
using test::truncated;
using test::uniform;

TEST(Sampling, Uniform01IsOpenAndExact) {
  EXPECT_EQ(uniform01(0), 0x1p-53);
  EXPECT_EQ(uniform01(~std::uint64_t{0}), 1.0 - 0x1p-53);
  EXPECT_EQ(uniform01(std::uint64_t{1} << 63), 0.5 + 0x1p-53);
}

TEST(Sampling, SameValuesInAnyBatchSplit) {
  const Scene s = uncertain_grasp();
  const WorldBatch all = sample_batch(s, 42, 0, 100);
  const WorldBatch first = sample_batch(s, 42, 0, 37);
  const WorldBatch rest = sample_batch(s, 42, 37, 63);
  ASSERT_EQ(all.varied_count(), 4);
  for (int k = 0; k < 4; ++k) {
    const Distribution& d = s.uncertainty[static_cast<std::size_t>(k)].distribution;
    for (int i = 0; i < 100; ++i) {
      const double v = all.param_value(k)[i];
      const double w = i < 37 ? first.param_value(k)[i] : rest.param_value(k)[i - 37];
      EXPECT_TRUE(same_bits(v, w)) << "parameter " << k << " sample " << i;
      EXPECT_TRUE(same_bits(v, draw(d, 42, i, k))) << "parameter " << k << " sample " << i;
    }
  }
}

TEST(Sampling, ResetAppliesInitialPoseAndJointPosition) {
  const Scene s = uncertain_grasp();
  const WorldBatch b = sample_batch(s, 7, 5, 20);
  const Model& m = b.model();
  const int x_dof = m.bodies[static_cast<std::size_t>(m.find_body("cylinder"))].dof[0];
  const int j_dof = m.joints[static_cast<std::size_t>(m.find_joint("x_l"))].dof;
  ASSERT_GE(x_dof, 0);
  ASSERT_GE(j_dof, 0);
  for (int w = 0; w < 20; ++w) {
    EXPECT_TRUE(same_bits(b.world_q(x_dof)[w], b.param_value(2)[w])) << w;
    EXPECT_TRUE(same_bits(b.world_q(j_dof)[w], b.param_value(3)[w])) << w;
  }
}

TEST(Sampling, SeedsAndParametersAreDistinctStreams) {
  const Distribution d = uniform(0, 1);
  int same_seed = 0, same_param = 0;
  double sxy = 0;
  for (int i = 0; i < kN; ++i) {
    const double a = draw(d, 1, i, 0), b = draw(d, 2, i, 0), c = draw(d, 1, i, 1);
    same_seed += a == b;
    same_param += a == c;
    sxy += (a - 0.5) * (c - 0.5);
  }
  EXPECT_EQ(same_seed, 0);
  EXPECT_EQ(same_param, 0);
  // Correlation of two parameters' streams: standard error 1/sqrt(N); allow 5 of them.
  const double corr = (sxy / kN) / (1.0 / 12.0);
  EXPECT_LT(std::abs(corr), 5 / std::sqrt(double(kN)));
  // Neighbouring samples are independent too.
  EXPECT_NE(draw(d, 1, 0, 0), draw(d, 1, 1, 0));
}

TEST(Sampling, UniformMoments) {
  const double low = 0.3, high = 0.7, w = high - low;
  const Moments m = moments(uniform(low, high), 12345);
  EXPECT_GE(m.min, low);
  EXPECT_LT(m.max, high);
  const double var = w * w / 12;
  EXPECT_NEAR(m.mean, (low + high) / 2, 5 * std::sqrt(var / kN));
  // Var of the sample variance: (mu4 - sigma^4) / N with mu4 = w^4 / 80.
  EXPECT_NEAR(m.var, var, 5 * std::sqrt((std::pow(w, 4) / 80 - var * var) / kN));
}

TEST(Sampling, UniformStaysBelowHigh) {
  // A range one ulp wide: low + (high - low) u rounds to high for u > 1/2.
  const double low = 1.0, high = std::nextafter(1.0, 2.0);
  for (int i = 0; i < 200; ++i) {
    const double v = draw(uniform(low, high), 3, i, 0);
    EXPECT_GE(v, low);
    EXPECT_LT(v, high);
  }
}

TEST(Sampling, NormalMoments) {
  const double mean = -2.0, sd = 0.5;
  const Moments m = moments(normal(mean, sd), 999);
  EXPECT_NEAR(m.mean, mean, 5 * sd / std::sqrt(double(kN)));
  EXPECT_NEAR(std::sqrt(m.var), sd, 5 * sd / std::sqrt(2.0 * kN));
}

double phi(double z) { return std::exp(-z * z / 2) / std::sqrt(2 * std::numbers::pi); }
double Phi(double z) { return 0.5 * (1 + std::erf(z / std::numbers::sqrt2)); }

// Truncated-normal mean: mu + sigma (phi(a) - phi(b)) / Z; Z by erfc in the upper tail
// (1 - erf cancels there).
double truncated_mean(double mu, double sd, double low, double high) {
  const double a = (low - mu) / sd, b = (high - mu) / sd;
  const double z = a > 0 ? 0.5 * (std::erfc(a / std::numbers::sqrt2) - std::erfc(b / std::numbers::sqrt2))
                   : b < 0 ? 0.5 * (std::erfc(-b / std::numbers::sqrt2) - std::erfc(-a / std::numbers::sqrt2))
                           : Phi(b) - Phi(a);
  return mu + sd * (phi(a) - phi(b)) / z;
}

void check_truncated(double mu, double sd, double low, double high, std::uint64_t seed) {
  const Moments m = moments(truncated(mu, sd, low, high), seed);
  EXPECT_GE(m.min, low);
  EXPECT_LE(m.max, high);
  EXPECT_NEAR(m.mean, truncated_mean(mu, sd, low, high), 5 * std::sqrt(m.var / kN))
      << "mu " << mu << " sd " << sd << " [" << low << ", " << high << "]";
}

TEST(Sampling, TruncatedNormalBranches) {
  check_truncated(1.0, 0.1, 0.8, 1.2, 11);        // rejection from the normal
  check_truncated(0.0, 1.0, 0.5, 50.0, 12);       // rejection from the normal, one-sided
  check_truncated(0.0, 1.0, -0.2, 0.3, 13);       // mass < 1/4 around the mean: uniform proposal
  check_truncated(0.0, 1.0, 1.5, 2.0, 14);        // narrow, one side: uniform proposal
  check_truncated(5.0, 2.0, 5.0 - 2.0 * 2.3, 5.0 - 2.0 * 1.9, 15);  // same, lower side (mirrored)
}

TEST(Sampling, TruncatedNormalFarTails) {
  // low = mean + 4 sd: exponential proposal (mass 3e-5, where rejection from the normal
  // would need ~30000 attempts per value).
  check_truncated(1.0, 0.1, 1.4, 2.0, 21);
  check_truncated(1.0, 0.1, 0.0, 0.6, 22);       // the mirrored lower tail
  check_truncated(0.0, 1.0, 4.0, 4.1, 23);       // far and narrow: uniform proposal
  check_truncated(0.0, 1.0, 30.0, 31.0, 24);     // mass 5e-198
  check_truncated(0.0, 1.0, 30.0, 1e6, 25);
}

TEST(Sampling, BadInput) {
  const Scene s = uncertain_grasp();
  EXPECT_EQ(error_of([&] { (void)sample_batch(s, 1, 0, 0); }), "sampling: sample count 0 must be >= 1");
  EXPECT_EQ(error_of([&] { (void)sample_batch(s, 1, -1, 4); }), "sampling: first sample -1 must be >= 0");
  Scene both = s;
  both.overrides = {{{s.uncertainty[0].parameter, 1.0}}};
  EXPECT_NE(error_of([&] { (void)sample_batch(both, 1, 0, 4); }).find("both overrides and uncertainty"),
            std::string::npos);
  Scene none = s;
  none.uncertainty.clear();
  EXPECT_EQ(error_of([&] { (void)sample_batch(none, 1, 0, 4); }),
            "sampling: the scene has no uncertainty parameters");
  EXPECT_EQ(error_of([&] { (void)draw(uniform(0, 1), 1, -3, 0); }), "sampling: sample index -3 must be >= 0");
  EXPECT_EQ(error_of([&] { (void)draw(uniform(0, 1), 1, 0, -1); }), "sampling: parameter index -1 must be >= 0");
  EXPECT_NE(error_of([&] { (void)draw(uniform(1, 1), 1, 0, 0); }).find("low < high"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)draw(normal(0, 0), 1, 0, 0); }).find("stddev > 0"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)draw(truncated(0, 1e-300, -1e300, 1e300), 1, 0, 0); }).find("too far"),
            std::string::npos);
  // A value the batch refuses still fails with the batch's message (a hand-built scene;
  // the reader refuses normal for a friction).
  Scene neg = s;
  neg.uncertainty.resize(2);
  neg.uncertainty[1].distribution = normal(0.0, 1.0);
  EXPECT_NE(error_of([&] { (void)sample_batch(neg, 1, 0, 64); }).find("must be >= 0"), std::string::npos);
}

TEST(Sampling, ReaderRefusesNormalForBoundedParameter) {
  json j = grasp_json();
  j["uncertainty"] = json::parse(
      R"({"parameters": [{"parameter": "pairs.ground/cylinder.friction", "distribution": "normal", "mean": 0.5, "stddev": 0.1}]})");
  EXPECT_THROW((void)parse_scene(j.dump()), SceneError);
}

}  // namespace
}  // namespace qs::sampling_test

namespace qs::sampling_test {
namespace {

/// sample_world: a study's sample stepped alone by the scene's Stepper ends bitwise where
/// the Monte Carlo run left it (the report's replays rely on it).
TEST(Sampling, ASampleWorldStepsAsTheStudyRanIt) {
  for (const char* example : {"mc_grasp.json", "mc_push.json", "mc_grasp_miqp.json"}) {
    const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" + example);
    const Model& m = *scene.model;
    McOptions o;
    o.samples = 40;
    o.seed = 7;
    o.threads = 1;
    const McRun run = run_monte_carlo(scene, o);
    const int object = scene.success->body;
    for (long i : {0L, 13L, 39L}) {
      SampleWorld w = sample_world(scene, 7, i);
      const auto stepper = make_stepper(m);
      for (int l = 1; l <= m.step.steps; ++l)
        if (stepper->step(m, w.params, w.start) != Status::solved) break;
      std::vector<Pose2<double>> pose(m.bodies.size()), frame(m.joints.size());
      forward_kinematics(m, w.params, w.start.q.data(), pose.data(), frame.data());
      const Pose2<double>& p = pose[static_cast<std::size_t>(object)];
      const auto& expected = run.records.final_pose[static_cast<std::size_t>(i)];
      EXPECT_TRUE(test::same_bits(p.translation.x, expected[0])) << example << " sample " << i;
      EXPECT_TRUE(test::same_bits(p.translation.y, expected[1])) << example << " sample " << i;
    }
  }
}

}  // namespace
}  // namespace qs::sampling_test

// The smoothed Anitescu step (model.log_barrier_weight = kappa; Pang, Suh, Yang & Tedrake,
// "Global Planning for Contact-Rich Manipulation via Local Smoothing of Quasi-dynamic Contact
// Models", IEEE T-RO 2023, sec. "analytic smoothing") and its exact derivatives: the scene
// field; the step tending to the unsmoothed one as kappa grows; A and B against central
// differences of the smoothed step; the smoothed derivatives tending to the exact ones away
// from switches; contact at a distance; no NaN over random states; the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/lane_step.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/derivative_samples.hpp"
#include "tests/support/example_json.hpp"
#include "tests/support/instrumented.hpp"

namespace qs::smoothed_derivatives_test {
namespace {

using nlohmann::json;

json example(const std::string& name) { return test::example_json(name + ".json"); }
json with_kappa(json scene, double kappa) {
  scene["model"]["log_barrier_weight"] = kappa;
  return scene;
}

/// x = [q; the reference q̄_a] of s.
Eigen::VectorXd state_x(const Model& m, const State& s) {
  Eigen::VectorXd x;
  derivative_state(m, s, x);
  return x;
}
void set_x(const Model& m, State& s, const Eigen::VectorXd& x) {
  const int nq = m.n_q(), nm = derivative_memory_size(m);
  s.q = x.head(nq);
  s.memory.head(nm) = x.tail(nm);
}

using test::commanded_params;
using test::trajectory;

double relative_frobenius(const Eigen::MatrixXd& got, const Eigen::MatrixXd& want) {
  const double scale = want.norm();
  return scale > 0 ? (got - want).norm() / scale : got.norm();
}

struct Differences {
  Eigen::MatrixXd A, B;
  bool ok = false;
  /// Forward and backward differences agree to 1e-3 (1 + |central|) in every entry: no slot
  /// crosses contacts.margin and no kink of the geometry lies within delta.
  bool smooth = true;
};

/// Central differences of the smoothed step (its own path: Newton's method to 1e-14).
Differences central_differences(Stepper& stepper, const Model& m, const WorldParams& p, const State& s,
                                double delta) {
  Differences fd;
  const Eigen::VectorXd x0 = state_x(m, s);
  const int nx = static_cast<int>(x0.size()), na = m.n_a;
  fd.A.resize(nx, nx);
  fd.B.resize(nx, na);
  const auto end_state = [&](const Eigen::VectorXd& x, const WorldParams& pp, Eigen::VectorXd& out) {
    State t = s;
    set_x(m, t, x);
    if (stepper.step(m, pp, t) != Status::solved) return false;
    out = state_x(m, t);
    return true;
  };
  Eigen::VectorXd plus, minus, center;
  if (!end_state(x0, p, center)) return fd;
  const auto difference = [&](auto column) {
    column = (plus - minus) / (2 * delta);
    const Eigen::VectorXd forward = (plus - center) / delta, backward = (center - minus) / delta;
    for (Eigen::Index i = 0; i < forward.size(); ++i)
      if (std::abs(forward[i] - backward[i]) > 1e-3 * (1 + std::abs(column[i]))) fd.smooth = false;
  };
  for (int j = 0; j < nx; ++j) {
    Eigen::VectorXd x = x0;
    x[j] += delta;
    if (!end_state(x, p, plus)) return fd;
    x[j] = x0[j] - delta;
    if (!end_state(x, p, minus)) return fd;
    difference(fd.A.col(j));
  }
  for (int a = 0; a < na; ++a) {
    WorldParams pp = p;
    pp.command[static_cast<size_t>(a)] += delta;
    if (!end_state(x0, pp, plus)) return fd;
    pp.command[static_cast<size_t>(a)] = p.command[static_cast<size_t>(a)] - delta;
    if (!end_state(x0, pp, minus)) return fd;
    difference(fd.B.col(a));
  }
  fd.ok = true;
  return fd;
}

/// Richardson's extrapolation (4 D(delta / 2) - D(delta)) / 3: the barrier's curvature makes
/// the error of order delta^2 of a central difference large where a row's slack is small.
Differences extrapolated_differences(Stepper& stepper, const Model& m, const WorldParams& p, const State& s,
                                     double delta) {
  Differences wide = central_differences(stepper, m, p, s, delta);
  const Differences narrow = central_differences(stepper, m, p, s, delta / 2);
  wide.ok = wide.ok && narrow.ok;
  wide.smooth = wide.smooth && narrow.smooth;
  if (wide.ok) {
    wide.A = (4 * narrow.A - wide.A) / 3;
    wide.B = (4 * narrow.B - wide.B) / 3;
  }
  return wide;
}

/// A state of the trajectory moved by up to 1 mm (lengths) and 1 mrad (angles), the reference
/// alike, and its commands by up to 10%.
struct Sample {
  State s;
  WorldParams p;
};
Sample perturbed(const Model& m, const std::vector<State>& rows, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<size_t> row(0, rows.size() - 1);
  State s = rows[row(rng)];
  for (int e = 0; e < m.n_q(); ++e) s.q[e] += 1e-3 * unit(rng);
  for (int a = 0; a < derivative_memory_size(m); ++a) s.memory[a] += 1e-3 * unit(rng);
  WorldParams p = commanded_params(m, s);
  for (double& u : p.command) u *= 1.0 + 0.1 * unit(rng);
  return {s, p};
}

/// The examples: the quasistatic box push, the quasi-dynamic grasp and drop.
const char* const kExamples[] = {"anitescu_box_push", "anitescu_grasp", "anitescu_drop"};

/// Samples per example: a fifth under the sanitizers (instrumented code is ten times slower).
constexpr int kSamples = test::kAddressSanitizer ? 50 : 250;

// ---- the scene field ---------------------------------------------------------------------

void expect_scene_error(const json& scene, const std::string& message) {
  try {
    parse_scene(scene.dump());
    ADD_FAILURE() << "accepted " << scene["model"].dump();
  } catch (const SceneError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST(SmoothedAnitescu, SceneFieldIsReadInBothModesAndValidated) {
  for (const char* name : {"anitescu_box_push", "anitescu_grasp"}) {
    SCOPED_TRACE(name);
    const Scene scene = parse_scene(with_kappa(example(name), 2500).dump());
    EXPECT_EQ(formulation_params<AnitescuQpParams>(*scene.model).log_barrier_weight, 2500.0);
    const Scene plain = parse_scene(example(name).dump());
    EXPECT_FALSE(formulation_params<AnitescuQpParams>(*plain.model).log_barrier_weight.has_value());
    expect_scene_error(with_kappa(example(name), 0), "model.log_barrier_weight: must be > 0");
    expect_scene_error(with_kappa(example(name), -10), "model.log_barrier_weight: must be > 0");
    json nan = example(name);
    nan["model"]["log_barrier_weight"] = std::numeric_limits<double>::quiet_NaN();  // JSON writes null
    expect_scene_error(nan, "model.log_barrier_weight: must be a number");
    json text = example(name);
    text["model"]["log_barrier_weight"] = "1e3";
    expect_scene_error(text, "model.log_barrier_weight: must be a number");
  }
}

TEST(SmoothedAnitescu, TheBatchStepsSmoothedWorldsOneAtATime) {
  const Scene scene = parse_scene(with_kappa(example("anitescu_grasp"), 1e4).dump());
  const LaneEntry* lanes = formulation_info(scene.model->formulation).lanes;
  ASSERT_NE(lanes, nullptr);
  const std::string why = lanes->mode_refusal(*scene.model);
  EXPECT_NE(why.find("log_barrier_weight"), std::string::npos) << why;
  const Scene plain = parse_scene(example("anitescu_grasp").dump());
  EXPECT_EQ(lanes->mode_refusal(*plain.model), "");
}

// ---- (a) the step tends to the unsmoothed one -----------------------------------------------

TEST(SmoothedAnitescu, StepTendsToTheUnsmoothedOneAsKappaGrows) {
  // From every state of each example's trajectory: max |q+(kappa) - q+| over the DOFs and the
  // states (m or rad), q+ the unsmoothed step. Kappa in 1/J (the examples' SI units).
  const std::vector<double> kappas{1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
  std::printf("max |q+(kappa) - q+ unsmoothed| over each trajectory's states (m, rad)\n%-20s", "kappa (1/J)");
  for (double k : kappas) std::printf(" %9.0e", k);
  std::printf("\n");
  for (const char* name : kExamples) {
    SCOPED_TRACE(name);
    const Scene plain = parse_scene(example(name).dump());
    const Model& m0 = *plain.model;
    const std::vector<State> rows = trajectory(m0);
    auto exact = make_stepper(m0);
    std::vector<double> worst(kappas.size(), 0.0);
    for (size_t k = 0; k < kappas.size(); ++k) {
      const Scene scene = parse_scene(with_kappa(example(name), kappas[k]).dump());
      const Model& m = *scene.model;
      auto smooth = make_stepper(m);
      for (size_t r = 0; r + 1 < rows.size(); ++r) {
        State a = rows[r], b = rows[r];
        ASSERT_EQ(exact->step(m0, a), Status::solved);
        ASSERT_EQ(smooth->step(m, b), Status::solved) << "row " << r << ": " << smooth->report().detail;
        worst[k] = std::max(worst[k], (a.q - b.q).cwiseAbs().maxCoeff());
      }
    }
    std::printf("%-20s", name);
    for (double w : worst) std::printf(" %9.2e", w);
    std::printf("\n");
    // Decreasing (up to the unsmoothed answers' own solver tolerance), and by orders of
    // magnitude over the range.
    for (size_t k = 1; k < kappas.size(); ++k) EXPECT_LE(worst[k], 1.05 * worst[k - 1] + 1e-9) << kappas[k];
    EXPECT_LE(worst.back(), 1e-3 * worst.front());
  }
}

// ---- (b) the derivatives against central differences ---------------------------------------

struct Campaign {
  int samples = 0, kept = 0, kinked = 0, failed = 0;
  double worst_A = 0, worst_B = 0;
};

Campaign check_against_differences(const json& plain_json, double kappa, int samples, unsigned seed, double delta) {
  const Scene scene = parse_scene(with_kappa(plain_json, kappa).dump());
  const Model& m = *scene.model;
  const Scene plain = parse_scene(plain_json.dump());
  const std::vector<State> rows = trajectory(*plain.model);
  auto stepper = make_stepper(m);
  auto reference = make_stepper(m);
  std::mt19937_64 rng(seed);
  StepDerivatives d;
  Campaign c;
  for (int k = 0; k < samples; ++k) {
    const Sample sample = perturbed(m, rows, rng);
    ++c.samples;
    State after = sample.s;
    if (stepper->step(m, sample.p, after, d) != Status::solved || d.status != Status::solved) {
      ++c.failed;
      continue;
    }
    EXPECT_FALSE(d.degenerate);
    EXPECT_EQ(d.margin, 1.0);
    const Differences fd = extrapolated_differences(*reference, m, sample.p, sample.s, delta);
    if (!fd.ok) {
      ++c.failed;
      continue;
    }
    if (!fd.smooth) {
      ++c.kinked;
      continue;
    }
    ++c.kept;
    const double eA = relative_frobenius(d.A, fd.A), eB = relative_frobenius(d.B, fd.B);
    c.worst_A = std::max(c.worst_A, eA);
    c.worst_B = std::max(c.worst_B, eB);
    if (eA > 1e-6 || eB > 1e-6) {
      ADD_FAILURE() << "sample " << k << " at t = " << sample.s.t << ": |A - A_fd| / |A_fd| = " << eA
                    << ", |B - B_fd| / |B_fd| = " << eB << "\nA =\n" << d.A << "\nA_fd =\n" << fd.A << "\nB =\n"
                    << d.B << "\nB_fd =\n" << fd.B;
      return c;
    }
  }
  return c;
}

TEST(SmoothedAnitescu, DerivativesMatchCentralDifferencesOfTheSmoothedStep) {
  // Two kappas per example, each where the barrier is felt: a row's slack at the answer is
  // 1/(kappa beta), and a difference of 1e-6 in q moves it by 1e-6 / h (m/s). Richardson's
  // extrapolation cancels the error of order delta^2.
  struct Case {
    const char* name;
    json scene;
    double kappa;
  };
  json grasp_quasistatic = example("anitescu_grasp");
  grasp_quasistatic["model"]["mode"] = "quasistatic";
  const std::vector<Case> cases{{"anitescu_box_push", example("anitescu_box_push"), 1e2},
                                {"anitescu_box_push", example("anitescu_box_push"), 1e4},
                                {"anitescu_grasp", example("anitescu_grasp"), 1e2},
                                {"anitescu_grasp", example("anitescu_grasp"), 1e4},
                                {"anitescu_drop", example("anitescu_drop"), 1e2},
                                {"anitescu_drop", example("anitescu_drop"), 1e4},
                                {"anitescu_grasp (quasistatic)", grasp_quasistatic, 1e3}};
  unsigned seed = 31;
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(k.name) + ", kappa " + std::to_string(k.kappa));
    const Campaign c = check_against_differences(k.scene, k.kappa, kSamples, seed++, 1e-6);
    std::printf("%s, kappa %.0e: %d samples, %d kept, %d across a kink, %d not solved; worst relative error A %.2e, "
                "B %.2e\n",
                k.name, k.kappa, c.samples, c.kept, c.kinked, c.failed, c.worst_A, c.worst_B);
    EXPECT_GE(c.kept, 200 * kSamples / 250);
    EXPECT_LE(c.worst_A, 1e-6);
    EXPECT_LE(c.worst_B, 1e-6);
  }
}

// ---- (c) the smoothed derivatives tend to the exact ones away from switches -----------------

TEST(SmoothedAnitescu, DerivativesTendToTheExactOnesAwayFromSwitches) {
  // Samples whose unsmoothed step is far from every switch (StepDerivatives::margin > 0.02:
  // each row's impulse or slack is at least 2% of its scale) and has a contact that pushes:
  // the exact derivatives there are those of one smooth piece, and the smoothed ones tend to
  // them as kappa grows.
  const std::vector<double> kappas{1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
  std::printf("median (max) of |[A B](kappa) - [A B] exact| / |[A B] exact| over samples away from switches\n%-20s",
              "kappa (1/J)");
  for (double k : kappas) std::printf(" %19.0e", k);
  std::printf("\n");
  unsigned seed = 71;
  for (const char* name : kExamples) {
    SCOPED_TRACE(name);
    const Scene plain = parse_scene(example(name).dump());
    const Model& m0 = *plain.model;
    const std::vector<State> rows = trajectory(m0);
    std::vector<std::unique_ptr<Scene>> scenes;
    std::vector<std::unique_ptr<Stepper>> smooth;
    for (double k : kappas) {
      scenes.push_back(std::make_unique<Scene>(parse_scene(with_kappa(example(name), k).dump())));
      smooth.push_back(make_stepper(*scenes.back()->model));
    }
    auto exact = make_stepper(m0);
    std::mt19937_64 rng(seed++);
    std::vector<std::vector<double>> errors(kappas.size());
    StepDerivatives d0, d;
    for (int k = 0; k < 4 * kSamples; ++k) {
      const Sample sample = perturbed(m0, rows, rng);
      State a = sample.s;
      if (exact->step(m0, sample.p, a, d0) != Status::solved || d0.status != Status::solved || d0.degenerate ||
          d0.margin < 0.02)
        continue;
      // Some contact pushes (the drop's box in the air moves alike with and without smoothing).
      const std::vector<double>& pushed = exact->normal_impulse();
      if (*std::max_element(pushed.begin(), pushed.end()) <= 0) continue;
      Eigen::MatrixXd exact_AB(d0.A.rows(), d0.A.cols() + d0.B.cols());
      exact_AB << d0.A, d0.B;
      bool all = true;
      std::vector<double> e(kappas.size());
      for (size_t i = 0; i < kappas.size() && all; ++i) {
        State b = sample.s;
        const Model& m = *scenes[i]->model;
        all = smooth[i]->step(m, sample.p, b, d) == Status::solved && d.status == Status::solved;
        Eigen::MatrixXd AB(d.A.rows(), d.A.cols() + d.B.cols());
        AB << d.A, d.B;
        e[i] = relative_frobenius(AB, exact_AB);
      }
      if (!all) continue;
      for (size_t i = 0; i < kappas.size(); ++i) errors[i].push_back(e[i]);
    }
    ASSERT_GE(errors[0].size(), kSamples / 10u) << "too few samples away from switches";
    std::vector<double> median(kappas.size());
    std::printf("%-20s", (std::string(name) + " (" + std::to_string(errors[0].size()) + ")").c_str());
    for (size_t i = 0; i < kappas.size(); ++i) {
      std::vector<double> v = errors[i];
      std::sort(v.begin(), v.end());
      median[i] = v[v.size() / 2];
      std::printf(" %9.2e (%7.1e)", median[i], v.back());
    }
    std::printf("\n");
    for (size_t i = 1; i < kappas.size(); ++i) EXPECT_LT(median[i], median[i - 1]) << kappas[i];
    EXPECT_LE(median.back(), 1e-4);
    EXPECT_LE(median.back(), 0.02 * median[median.size() - 3]);  // about 1/kappa
  }
}

// ---- (d) contact at a distance -----------------------------------------------------------

TEST(SmoothedAnitescu, AFingerOneMillimetreFromTheBoxMovesItOnlyWhenSmoothed) {
  // The box push with the finger held (no command) 1 mm left of the box's face: the QP's
  // finger rows have slack, so nothing moves; the barrier's rows push at that distance with
  // 1/(kappa s), s = 1 mm / h = 0.01 m/s: 1 N s per row at kappa = 100 (at the start), eight
  // times what the ground's friction holds for both (mu m g h = 0.25 N s), and the box slides
  // away from the finger.
  json j = example("anitescu_box_push");
  j["joints"][1]["position"] = -0.05 - 0.01 - 0.001;
  j["commands"] = {{"finger_x", {{"velocity", 0.0}}}, {"finger_y", {{"velocity", 0.0}}}};
  const Scene plain = parse_scene(j.dump());
  const Scene smoothed = parse_scene(with_kappa(j, 100).dump());
  const Model& m0 = *plain.model;
  const Model& m = *smoothed.model;
  const int box_x = 0;
  ASSERT_EQ(m.dofs[box_x].name, "box.x");
  State a = initial_state(m0), b = initial_state(m);
  auto exact = make_stepper(m0), smooth = make_stepper(m);
  StepDerivatives d0, d;
  ASSERT_EQ(exact->step(m0, WorldParams(m0), a, d0), Status::solved) << exact->report().detail;
  ASSERT_EQ(smooth->step(m, WorldParams(m), b, d), Status::solved) << smooth->report().detail;
  ASSERT_EQ(d.status, Status::solved) << d.detail;
  std::printf("box.x after one step from 1 mm: unsmoothed %.3e m, kappa = 100 %.3e m\n", a.q[box_x], b.q[box_x]);
  EXPECT_NEAR(a.q[box_x], 0.0, 1e-12);
  EXPECT_GT(b.q[box_x], 1e-3);
  // The finger's row pushes: the smoothed step's box feels the finger's command
  // (d box.x+ / d u_finger_x > 0), the unsmoothed step's does not.
  const int finger_x = 1;  // commands in joint order: finger_y, finger_x
  EXPECT_EQ(d0.B(box_x, finger_x), 0.0);
  EXPECT_GT(d.B(box_x, finger_x), 0.0);
  EXPECT_GT(smooth->normal_impulse()[1] + smooth->normal_impulse()[2], 0.0);
}

// ---- (e) no NaN -------------------------------------------------------------------------

TEST(SmoothedAnitescu, NoNanOrInfOverRandomStatesTouchingPenetratingAndApart) {
  // The trajectories' states moved by up to 2 cm and 0.2 rad (bodies apart, touching,
  // interpenetrating), references alike, commands up to 0.5 m/s either way, at kappas from
  // 1e-2 (contacts felt metres away) to 1e9 (slacks near the rounding of phi/h, where Newton's
  // method may stop at the rounding floor instead of kNewtonTolerance): every solved step has
  // finite derivatives; every failure says why.
  int solved = 0, steps_failed = 0, samples = 0, newton_total = 0, newton_most = 0;
  std::map<std::string, int> reasons;
  unsigned seed = 91;
  for (const char* name : kExamples)
    for (const double kappa : {1e-2, 1e3, 1e6, 1e9}) {
      const Scene scene = parse_scene(with_kappa(example(name), kappa).dump());
      const Model& m = *scene.model;
      const Scene plain = parse_scene(example(name).dump());
      const std::vector<State> rows = trajectory(*plain.model);
      auto stepper = make_stepper(m);
      std::mt19937_64 rng(seed++);
      std::uniform_real_distribution<double> unit(-1.0, 1.0);
      std::uniform_int_distribution<size_t> row(0, rows.size() - 1);
      StepDerivatives d;
      for (int k = 0; k < kSamples; ++k) {
        ++samples;
        State s = rows[row(rng)];
        for (int e = 0; e < m.n_q(); ++e) s.q[e] += (m.dofs[e].name.ends_with(".theta") ? 0.2 : 0.02) * unit(rng);
        for (int a = 0; a < derivative_memory_size(m); ++a) s.memory[a] += 0.02 * unit(rng);
        WorldParams p = commanded_params(m, s);
        for (double& u : p.command) u = 0.5 * unit(rng);
        const State before = s;
        if (stepper->step(m, p, s, d) != Status::solved) {
          ++steps_failed;
          ++reasons[stepper->report().detail.substr(0, 90)];
          EXPECT_FALSE(stepper->report().detail.empty());
          EXPECT_EQ(s.q, before.q);  // a failed step leaves the State
          continue;
        }
        ASSERT_EQ(d.status, Status::solved) << d.detail;
        ++solved;
        const AnitescuQp& qp = dynamic_cast<const AnitescuQp&>(*stepper);
        EXPECT_TRUE(qp.smoothed());
        if (kappa <= 1e6) {
          EXPECT_LE(stepper->report().complementarity_residual, AnitescuQp::kNewtonTolerance);
        }
        const int steps = qp.newton_steps();
        newton_total += steps;
        newton_most = std::max(newton_most, steps);
        ASSERT_TRUE(s.q.allFinite() && d.A.allFinite() && d.B.allFinite()) << name << ", sample " << k;
      }
    }
  std::printf("%d of %d smoothed steps solved (Newton steps: %.1f on average, %d at most), derivatives all finite; "
              "%d steps failed with a reason\n",
              solved, samples, static_cast<double>(newton_total) / std::max(solved, 1), newton_most, steps_failed);
  for (const auto& [reason, count] : reasons) std::printf("  %d: %s\n", count, reason.c_str());
  EXPECT_GT(solved, samples * 8 / 10);
}

// ---- refusals ------------------------------------------------------------------------------

TEST(SmoothedAnitescu, QuasistaticMotionNoRowReachesIsRefused) {
  // The box on frictionless ground, the finger far (outside contacts.margin): nothing reaches
  // box.x and the quasistatic QP does not penalise it. The unsmoothed step takes one of its
  // many answers; the barrier problem's Hessian is singular, and the smoothed step says so.
  json j = example("anitescu_box_push");
  j["contacts"]["pairs"][0]["friction"] = 0.0;
  j["commands"] = {{"finger_x", {{"velocity", 0.0}}}, {"finger_y", {{"velocity", 0.0}}}};
  const Scene scene = parse_scene(with_kappa(j, 1e4).dump());
  const Model& m = *scene.model;
  auto stepper = make_stepper(m);
  State s = initial_state(m);
  const State s0 = s;
  EXPECT_EQ(stepper->step(m, s), Status::infeasible);
  const std::string& why = stepper->report().detail;
  EXPECT_NE(why.find("singular at \"box.x\""), std::string::npos) << why;
  EXPECT_EQ(s.q, s0.q);
}

TEST(SmoothedAnitescu, AQuasistaticBoxWithoutSupportFailsAsTheUnsmoothedStep) {
  json j = example("anitescu_box_push");
  j["contacts"]["pairs"] = json::array({json{{"bodies", {"finger", "box"}}, {"friction", 0.5}}});
  const Scene scene = parse_scene(with_kappa(j, 1e4).dump());
  const Model& m = *scene.model;
  auto stepper = make_stepper(m);
  State s = initial_state(m);
  EXPECT_EQ(stepper->step(m, s), Status::infeasible);
  EXPECT_NE(stepper->report().detail.find("unbounded"), std::string::npos) << stepper->report().detail;
}

TEST(SmoothedAnitescu, ABoxHeldExactlyBetweenTwoSurfacesHasNoInteriorAndSaysWhy) {
  // The drop's box flat on the table under a ceiling exactly touching its top: the rows need
  // v_y >= 0 and v_y <= 0, the QP's only answers have v_y = 0 on both rows' boundaries, and
  // the barrier has no strictly feasible point.
  json j = example("anitescu_drop");
  // Lengths in powers of two, so that both gaps are exactly 0.
  j["bodies"][1]["pose"] = json::array({0.0, 0.03125, 0.0});
  j["bodies"][1]["shapes"][0]["size"] = json::array({0.125, 0.0625});
  j["bodies"].push_back(json{{"name", "ceiling"},
                             {"kind", "fixed"},
                             {"pose", json::array({0.0, 0.09375, 0.0})},
                             {"shapes", json::array({json{{"type", "box"}, {"size", json::array({0.5, 0.0625})}}})}});
  j["contacts"]["pairs"] = json::array({json{{"bodies", {"table", "box"}}}, json{{"bodies", {"ceiling", "box"}}}});
  const Scene scene = parse_scene(with_kappa(j, 1e4).dump());
  const Model& m = *scene.model;
  auto stepper = make_stepper(m);
  State s = initial_state(m);
  const Status st = stepper->step(m, s);
  std::printf("box between table and ceiling: %s: %s\n", std::string(to_string(st)).c_str(),
              stepper->report().detail.c_str());
  EXPECT_EQ(st, Status::infeasible);
  EXPECT_NE(stepper->report().detail.find("strictly positive"), std::string::npos) << stepper->report().detail;
}

}  // namespace
}  // namespace qs::smoothed_derivatives_test

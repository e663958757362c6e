// The rollout API (quasistep/batch/rollout.hpp): each (state, action sequence) pair steps exactly as a
// single world commanded with those velocities, whatever else is in the batch; h replaces
// the model's; failures are per pair; bad input is refused; and the sampling-MPC example
// built on it pushes the puck to its goal from a fixed seed.
#include "quasistep/batch/rollout.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_lanes.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "examples/push_mpc.hpp"
#include "tests/support/batch_error.hpp"
#include "tests/support/bitwise.hpp"
#include "tests/support/example_json.hpp"

namespace qs::rollout_test {
namespace {

using test::error_of;

Scene load(const std::string& example) {
  return load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" + example);
}

/// Pair i's trajectory the way `quasistep run` takes it: one stepper on a Model whose
/// commands are set to the pair's velocities step by step.
State single_world(const Model& base, State s, const double* actions, double h, int steps) {
  Model m = base;
  m.step.h = h;
  const auto stepper = make_stepper(m);
  for (int l = 0; l < steps; ++l) {
    for (int a = 0; a < m.n_a; ++a) m.joints[m.dofs[m.n_u + a].index].command.set_constant(actions[l * m.n_a + a]);
    EXPECT_EQ(stepper->step(m, s), Status::solved) << "step " << l + 1;
  }
  return s;
}

/// 37 pairs (not a whole number of lane groups) from a few start states, each with its own
/// sequence of pusher velocities.
struct Batch {
  std::vector<State> states;
  std::vector<double> actions;
};

Batch varied_pairs(const Model& m, int n, int steps) {
  Batch b;
  State s0 = initial_state(m);
  for (int i = 0; i < n; ++i) {
    State s = s0;
    s.q[m.n_u] += 0.002 * (i % 5);  // pusher x: 5 different starts
    b.states.push_back(s);
    for (int l = 0; l < steps; ++l)
      for (int a = 0; a < m.n_a; ++a) b.actions.push_back(a == 0 ? 0.1 : 0.02 * std::sin(0.7 * i + 0.3 * l));
  }
  return b;
}

TEST(Rollout, EachPairStepsAsASingleWorldWhateverTheBatch) {
  for (const char* example : {"mpc_push.json", "anitescu_grasp.json"}) {
    const Scene s = load(example);
    const Model& m = *s.model;
    const int n = 37, steps = 24;
    const Batch b = varied_pairs(m, n, steps);
    Rollout r(s.model);
    const RolloutResult& out = r.propagate(b.states, b.actions, m.step.h, steps);
    ASSERT_EQ(out.size(), n);
    for (int i : {0, 1, 17, 36}) {
      const State ref = single_world(m, b.states[i], &b.actions[static_cast<std::size_t>(i) * steps * m.n_a], m.step.h, steps);
      EXPECT_EQ(out.status[i], Status::solved) << example;
      EXPECT_EQ(out.failed_step[i], -1);
      for (int k = 0; k < m.n_q(); ++k) EXPECT_TRUE(test::same_bits(out.next[i].q[k], ref.q[k])) << example << " pair " << i;
      EXPECT_EQ(out.next[i].step, steps);
      EXPECT_DOUBLE_EQ(out.next[i].t, steps * m.step.h);
    }
    // Pair 17 alone: the same bits as inside the batch.
    Rollout alone(s.model, {.threads = 1});
    const std::vector<State> one = {b.states[17]};
    const std::vector<double> seq(b.actions.begin() + 17 * steps * m.n_a, b.actions.begin() + 18 * steps * m.n_a);
    const RolloutResult& a = alone.propagate(one, seq, m.step.h, steps);
    for (int k = 0; k < m.n_q(); ++k) EXPECT_TRUE(test::same_bits(a.next[0].q[k], r.propagate(b.states, b.actions, m.step.h, steps).next[17].q[k]));
  }
}

TEST(Rollout, EveryStepKeepsEachStateAsASingleWorldTakesIt) {
  for (const char* example : {"mpc_push.json", "anitescu_grasp.json"}) {
    const Scene s = load(example);
    const Model& m = *s.model;
    const int n = 37, steps = 12, nq = m.n_q();
    const Batch b = varied_pairs(m, n, steps);
    Rollout r(s.model), final_only(s.model);
    const RolloutResult& out = r.propagate(b.states, b.actions, m.step.h, steps, RolloutRecord::every_step);
    ASSERT_EQ(out.trajectory.size(), static_cast<std::size_t>(n) * (steps + 1) * nq);
    ASSERT_EQ(out.step_status.size(), static_cast<std::size_t>(n) * steps);
    EXPECT_EQ(out.steps, steps);
    EXPECT_EQ(out.n_q, nq);
    for (int i : {0, 17, 36}) {
      const double* seq = &b.actions[static_cast<std::size_t>(i) * steps * m.n_a];
      for (int l = 0; l <= steps; ++l) {
        const State ref = single_world(m, b.states[i], seq, m.step.h, l);
        const std::span<const double> row = out.state(i, l);
        for (int k = 0; k < nq; ++k) EXPECT_TRUE(test::same_bits(row[k], ref.q[k])) << example << " pair " << i << " step " << l;
      }
      for (int l = 0; l < steps; ++l) EXPECT_EQ(out.step_status[static_cast<std::size_t>(i) * steps + l], Status::solved);
    }
    // Keeping every step changes no number: the last rows are the final states of a
    // final_state call.
    const RolloutResult& last = final_only.propagate(b.states, b.actions, m.step.h, steps);
    EXPECT_TRUE(last.trajectory.empty());
    EXPECT_TRUE(last.step_status.empty());
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < nq; ++k) {
        EXPECT_TRUE(test::same_bits(out.state(i, steps)[k], last.next[i].q[k])) << example << " pair " << i;
        EXPECT_TRUE(test::same_bits(out.next[i].q[k], last.next[i].q[k]));
      }
  }
}

TEST(Rollout, EveryStepMarksAFailedPairsLaterStepsNotRunAndItsStatesNaN) {
  const Scene s = load("mpc_push.json");
  const Model& m = *s.model;
  const int steps = 6;
  std::vector<State> states(2, initial_state(m));
  std::vector<double> actions(2 * steps * 2, 0.05);
  actions[(1 * steps + 2) * 2] = std::numeric_limits<double>::infinity();  // pair 1, step 3
  Rollout r(s.model);
  const RolloutResult& out = r.propagate(states, actions, m.step.h, steps, RolloutRecord::every_step);
  EXPECT_EQ(out.failed_step[1], 3);
  const Status expected[steps] = {Status::solved, Status::solved, Status::bad_input,
                                  Status::not_run, Status::not_run, Status::not_run};
  for (int l = 0; l < steps; ++l) {
    EXPECT_EQ(out.step_status[steps + l], expected[l]) << "step " << l + 1;
    EXPECT_EQ(out.step_status[l], Status::solved) << "pair 0 goes on";
  }
  for (int l = 0; l <= steps; ++l)
    for (double v : out.state(1, l)) EXPECT_EQ(std::isnan(v), l >= 3) << "row " << l;
  // Row 2 is the state before the failed step: the pair's `next`.
  for (int k = 0; k < m.n_q(); ++k) EXPECT_TRUE(test::same_bits(out.state(1, 2)[k], out.next[1].q[k]));
}

TEST(Rollout, TrajectoryOutReceivesEveryStateInsteadOfTheResult) {
  const Scene s = load("mpc_push.json");
  const Model& m = *s.model;
  const int n = 37, steps = 12, nq = m.n_q();
  Batch b = varied_pairs(m, n, steps);
  b.actions[(5 * steps + 4) * m.n_a] = std::numeric_limits<double>::infinity();  // pair 5 fails at step 5
  Rollout kept(s.model), given(s.model);
  const std::vector<double> reference =
      kept.propagate(b.states, b.actions, m.step.h, steps, RolloutRecord::every_step).trajectory;
  std::vector<double> out(reference.size(), 7.0);  // overwritten, NaN where the result has NaN
  const RolloutResult& r = given.propagate(b.states, b.actions, m.step.h, steps, RolloutRecord::every_step, out);
  EXPECT_TRUE(r.trajectory.empty());
  EXPECT_EQ(r.step_status.size(), static_cast<std::size_t>(n) * steps);
  ASSERT_EQ(out.size(), static_cast<std::size_t>(n) * (steps + 1) * nq);
  for (std::size_t k = 0; k < out.size(); ++k) EXPECT_TRUE(test::same_bits(out[k], reference[k])) << k;
  EXPECT_TRUE(std::isnan(out[(5 * static_cast<std::size_t>(steps + 1) + 6) * nq]));
  // The wrong size, or a final_state call, is refused.
  std::vector<double> small(out.size() - 1);
  EXPECT_NE(error_of([&] { given.propagate(b.states, b.actions, m.step.h, steps, RolloutRecord::every_step, small); })
                .find("trajectory_out has"),
            std::string::npos);
  EXPECT_NE(error_of([&] { given.propagate(b.states, b.actions, m.step.h, steps, RolloutRecord::final_state, out); })
                .find("it is for RolloutRecord::every_step"),
            std::string::npos);
}

TEST(Rollout, ASceneWithoutAStepSectionStillRunsInLanes) {
  // The rollout's h is the batch's step size before its engine chooses a path: a scene with
  // no step.h (h = 0 in the Model) still takes the lane kernel, with the numbers of a scene
  // whose step.h is the rollout's h.
  nlohmann::json j = nlohmann::json::parse(std::ifstream(std::string(QUASISTEP_SOURCE_DIR) + "/examples/mpc_push.json"));
  const double h = j["step"]["h"].get<double>();
  j.erase("step");
  const Scene no_step = parse_scene(j.dump(), "no_step");
  ASSERT_EQ(no_step.model->step.h, 0.0);
  const Scene s = load("mpc_push.json");
  const Batch b = varied_pairs(*s.model, 9, 10);
  Rollout r(no_step.model), with_step(s.model);
  const RolloutResult& out = r.propagate(b.states, b.actions, h, 10);
  EXPECT_EQ(r.path().rfind("lanes", 0), 0u) << r.path();
  const RolloutResult& ref = with_step.propagate(b.states, b.actions, h, 10);
  for (int i = 0; i < 9; ++i)
    for (int k = 0; k < s.model->n_q(); ++k) EXPECT_TRUE(test::same_bits(out.next[i].q[k], ref.next[i].q[k]));
}

TEST(Rollout, HReplacesTheModelsStep) {
  const Scene s = load("mpc_push.json");
  const Model& m = *s.model;
  const Batch b = varied_pairs(m, 9, 10);
  Rollout r(s.model);
  const State ref = single_world(m, b.states[4], &b.actions[4 * 10 * m.n_a], 0.01, 10);
  const RolloutResult& out = r.propagate(b.states, b.actions, 0.01, 10);
  for (int k = 0; k < m.n_q(); ++k) EXPECT_TRUE(test::same_bits(out.next[4].q[k], ref.q[k]));
  // And back: a call with the model's h after one with another.
  const State ref2 = single_world(m, b.states[4], &b.actions[4 * 10 * m.n_a], m.step.h, 10);
  const RolloutResult& out2 = r.propagate(b.states, b.actions, m.step.h, 10);
  for (int k = 0; k < m.n_q(); ++k) EXPECT_TRUE(test::same_bits(out2.next[4].q[k], ref2.q[k]));
}

TEST(Rollout, ContactSummaryAndPerPairFailures) {
  const Scene s = load("mpc_push.json");
  const Model& m = *s.model;
  // Pusher straight at the puck for 1 s: it arrives after 0.5 s and keeps pushing (touching);
  // pair 1 moves away (not touching); pair 2 has a NaN velocity at its third step.
  const int steps = 40;
  std::vector<State> states(3, initial_state(m));
  std::vector<double> actions(3 * steps * 2, 0.0);
  for (int l = 0; l < steps; ++l) {
    actions[(0 * steps + l) * 2] = 0.1;
    actions[(1 * steps + l) * 2] = -0.1;
    actions[(2 * steps + l) * 2] = 0.1;
  }
  actions[(2 * steps + 2) * 2 + 1] = std::numeric_limits<double>::quiet_NaN();
  Rollout r(s.model);
  const RolloutResult& out = r.propagate(states, actions, m.step.h, steps);
  EXPECT_EQ(out.status[0], Status::solved);
  EXPECT_GE(out.contacts[0].touching, 1);
  EXPECT_LE(out.contacts[0].min_distance, kRolloutTouchDistance);
  EXPECT_GT(out.next[0].q[0], 0.04);  // the puck moved along x
  EXPECT_EQ(out.contacts[1].touching, 0);
  EXPECT_NEAR(out.contacts[1].min_distance, 0.05 + 0.1 * steps * m.step.h, 1e-9);
  EXPECT_EQ(out.status[2], Status::bad_input);
  EXPECT_EQ(out.failed_step[2], 3);
  EXPECT_EQ(out.next[2].step, 2);  // the state before the failed step
  // The next call starts afresh: no failure carried over.
  for (double& v : actions)
    if (std::isnan(v)) v = 0.0;
  EXPECT_EQ(r.propagate(states, actions, m.step.h, steps).status[2], Status::solved);
}

TEST(Rollout, BadInputIsRefused) {
  const Scene s = load("mpc_push.json");
  const Model& m = *s.model;
  Rollout r(s.model);
  const std::vector<State> states(2, initial_state(m));
  const std::vector<double> actions(2 * 5 * 2, 0.0);
  EXPECT_NE(error_of([&] { r.propagate(states, std::span<const double>(actions).first(19), m.step.h, 5); })
                .find("actions has 19 entries, expected states x steps x n_a = 2 x 5 x 2"),
            std::string::npos);
  EXPECT_NE(error_of([&] { r.propagate(states, actions, 0.0, 5); }).find("h must be"), std::string::npos);
  EXPECT_NE(error_of([&] { r.propagate(states, actions, std::nan(""), 5); }).find("h must be"), std::string::npos);
  EXPECT_NE(error_of([&] { r.propagate(states, {}, m.step.h, -1); }).find("steps must be >= 0"), std::string::npos);
  EXPECT_NE(error_of([&] { r.propagate(states, {}, m.step.h, std::numeric_limits<int>::max()); })
                .find("steps must be < 2147483647"),
            std::string::npos);
  EXPECT_NE(error_of([&] { r.propagate({}, {}, m.step.h, 5); }).find("no states"), std::string::npos);
  std::vector<State> bad = states;
  bad[1].q.resize(3);
  EXPECT_NE(error_of([&] { r.propagate(bad, actions, m.step.h, 5); }).find("state 1 does not fit"), std::string::npos);
  const Scene ucp = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/tests/scenes/two_link_arms.json");
  EXPECT_NE(error_of([&] { Rollout x(ucp.model); }).find("cannot step formulation ucp"), std::string::npos);
  EXPECT_NE(error_of([&] { Rollout x(s.model, {.threads = -1}); }).find("rollout: threads must be >= 0"),
            std::string::npos);
  // Zero steps: the states come back unchanged.
  const RolloutResult& none = r.propagate(states, {}, m.step.h, 0);
  EXPECT_EQ(none.next[0].q, states[0].q);
  EXPECT_EQ(none.status[0], Status::solved);
}

/// One world on its own stepper with WorldParams p (its commands set step by step), as
/// `quasistep run --forces` records it: each step's gap of every active slot, and its
/// impulses when solved (NaN elsewhere). States after each step in `rows`.
struct OneWorld {
  std::vector<double> rows, phi, normal, tangent;
  Status status = Status::solved;
};
OneWorld one_world(const Model& m, WorldParams p, State s, const double* actions, int steps) {
  OneWorld w;
  const auto stepper = make_stepper(m);
  const int ns = m.n_slots();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  w.phi.assign(static_cast<std::size_t>(steps * ns), nan);
  w.normal = w.tangent = w.phi;
  p.commanded = true;
  p.command.assign(static_cast<std::size_t>(m.n_a), 0.0);
  w.rows.assign(s.q.data(), s.q.data() + s.q.size());
  for (int l = 0; l < steps; ++l) {
    for (int a = 0; a < m.n_a; ++a) p.command[a] = actions[l * m.n_a + a];
    const Status st = stepper->step(m, p, s);
    for (int k = 0; k < ns; ++k) {
      if (!stepper->active()[k]) continue;
      w.phi[l * ns + k] = stepper->phi()[k];
      if (st != Status::solved) continue;
      w.normal[l * ns + k] = stepper->normal_impulse()[k];
      w.tangent[l * ns + k] = stepper->tangent_impulse()[k];
    }
    if (st != Status::solved) {
      w.status = st;
      break;
    }
    w.rows.insert(w.rows.end(), s.q.data(), s.q.data() + s.q.size());
  }
  return w;
}

/// The grasp's commands for every pair of b: the fingers close at `close` m/s each (pair i's
/// left finger `spread` * i faster), then the gripper rises at 0.1 m/s from step `lift_from`.
void squeeze_then_lift(const Model& m, Batch& b, int steps, int lift_from, double spread = 0.0) {
  const int n = static_cast<int>(b.states.size());
  for (int i = 0; i < n; ++i)
    for (int l = 0; l < steps; ++l) {
      double* u = &b.actions[(static_cast<std::size_t>(i) * steps + l) * m.n_a];
      u[0] = 0.1 + spread * i, u[1] = -0.1, u[2] = l < lift_from ? 0.0 : 0.1;
    }
}

/// Every entry the same bits (NaN where the other is NaN).
void expect_same(std::span<const double> got, std::span<const double> want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t k = 0; k < got.size(); ++k) EXPECT_TRUE(test::same_bits(got[k], want[k])) << what << " [" << k << "]";
}

TEST(Rollout, ContactsAreWhatRunForcesWritesAndTheStatesStayBitwise) {
  for (const char* example : {"anitescu_grasp.json", "mpc_push.json", "halm_posa_push.json"}) {
    SCOPED_TRACE(example);
    const Scene s = load(example);
    const Model& m = *s.model;
    const int n = 9, steps = 30, ns = m.n_slots();
    Batch b = varied_pairs(m, n, steps);
    if (std::string(example) == "anitescu_grasp.json") squeeze_then_lift(m, b, steps, 15, 0.01);  // as the scene does
    Rollout plain(s.model), with_contacts(s.model, BatchOptions{.threads = 2});
    const std::vector<double> lanes =
        plain.propagate(b.states, b.actions, m.step.h, steps, RolloutRecord::every_step).trajectory;
    const RolloutResult& r =
        with_contacts.propagate(b.states, b.actions, m.step.h, steps, RolloutRecord::every_step_and_contacts);
    expect_same(r.trajectory, lanes, "states against the batch engine's");
    ASSERT_EQ(r.n_slots, ns);
    EXPECT_EQ(r.impulses_scaled_by_k, m.formulation == Formulation::halm_posa_lcp);
    int touching = 0;
    for (int i = 0; i < n; ++i) {
      const OneWorld w = one_world(m, WorldParams(m), b.states[i], &b.actions[i * steps * m.n_a], steps);
      EXPECT_EQ(r.status[i], w.status);
      const std::size_t at = static_cast<std::size_t>(i) * steps * ns, len = static_cast<std::size_t>(steps) * ns;
      expect_same(std::span(r.contact_phi).subspan(at, len), w.phi, "phi");
      expect_same(std::span(r.normal_impulse).subspan(at, len), w.normal, "normal");
      expect_same(std::span(r.tangent_impulse).subspan(at, len), w.tangent, "tangent");
      for (std::size_t k = at; k < at + len; ++k) touching += r.normal_impulse[k] > 0;
    }
    EXPECT_GT(touching, 0) << "no step pressed: the test would not see impulses";
    // A later plain call records no contacts.
    EXPECT_TRUE(with_contacts.propagate(b.states, b.actions, m.step.h, steps).contact_phi.empty());
  }
}

TEST(Rollout, DerivativesAreEachStepsAsOneStepperComputesThem) {
  // Anitescu (x = [q; references]) and Halm & Posa (x = q): every pair's every step's A and B
  // are those of Stepper::step with derivatives, bitwise; the states stay the lanes'.
  for (const char* example : {"anitescu_grasp.json", "halm_posa_push.json"}) {
    SCOPED_TRACE(example);
    const Scene s = load(example);
    const Model& m = *s.model;
    const int n = 6, steps = 30, nx = derivative_state_size(m), na = m.n_a;
    Batch b = varied_pairs(m, n, steps);
    if (std::string(example) == "anitescu_grasp.json") squeeze_then_lift(m, b, steps, 15, 0.01);
    Rollout plain(s.model), with_derivatives(s.model, BatchOptions{.threads = 2});
    const std::vector<double> lanes =
        plain.propagate(b.states, b.actions, m.step.h, steps, RolloutRecord::every_step).trajectory;
    const RolloutResult& r = with_derivatives.propagate(b.states, b.actions, m.step.h, steps, RolloutRecord::every_step,
                                                        {}, {}, RolloutDerivatives::every_step);
    expect_same(r.trajectory, lanes, "states against the batch engine's");
    ASSERT_EQ(r.n_x, nx);
    ASSERT_EQ(r.A.size(), static_cast<std::size_t>(n * steps * nx * nx));
    ASSERT_EQ(r.B.size(), static_cast<std::size_t>(n * steps * nx * na));
    EXPECT_TRUE(r.contact_phi.empty());
    int compared = 0;
    for (int i = 0; i < n; ++i) {
      auto stepper = make_stepper(m);
      WorldParams p(m);
      p.commanded = true;
      p.command.assign(static_cast<std::size_t>(na), 0.0);
      State st = b.states[i];
      StepDerivatives d;
      for (int l = 0; l < steps; ++l) {
        for (int a = 0; a < na; ++a) p.command[a] = b.actions[(i * steps + l) * na + a];
        const Status status = stepper->step(m, p, st, d);
        EXPECT_EQ(r.step_status[i * steps + l], status);
        if (status != Status::solved) break;
        const std::size_t at = static_cast<std::size_t>(i * steps + l);
        for (int row = 0; row < nx; ++row) {
          for (int c = 0; c < nx; ++c)
            EXPECT_TRUE(test::same_bits(r.A[at * nx * nx + row * nx + c], d.A(row, c))) << i << " " << l;
          for (int c = 0; c < na; ++c)
            EXPECT_TRUE(test::same_bits(r.B[at * nx * na + row * na + c], d.B(row, c))) << i << " " << l;
        }
        EXPECT_EQ(r.one_sided[at], d.degenerate ? 1 : 0);
        ++compared;
      }
    }
    EXPECT_GT(compared, n * steps / 2);
    // A later call without derivatives keeps none.
    EXPECT_TRUE(with_derivatives.propagate(b.states, b.actions, m.step.h, steps, RolloutRecord::every_step).A.empty());
  }
}

TEST(Rollout, DerivativesNeedEveryStepAndAFormulationThatHasThem) {
  const Scene s = load("anitescu_grasp.json");
  const Model& m = *s.model;
  Batch b = varied_pairs(m, 2, 3);
  Rollout r(s.model);
  EXPECT_NE(error_of([&] {
              r.propagate(b.states, b.actions, m.step.h, 3, RolloutRecord::final_state, {}, {},
                          RolloutDerivatives::every_step);
            }).find("rollout: derivatives are kept per step: they need RolloutRecord::every_step"),
            std::string::npos);
  const Scene e = load("ecp_box_tip.json");  // no velocity-controlled joint: no actions
  Rollout ecp(e.model);
  const std::vector<State> starts(2, initial_state(*e.model));
  EXPECT_EQ(error_of([&] {
              ecp.propagate(starts, {}, e.model->step.h, 3, RolloutRecord::every_step, {}, {},
                            RolloutDerivatives::every_step);
            }),
            "rollout: ecp_ncp has no step derivatives");
}

TEST(Rollout, TheContactsRecordStepsWithTheBatchsPgsSettings) {
  // A sweep limit of 3 sends most grasp steps to the fallback: both records must agree.
  const Scene s = load("anitescu_grasp.json");
  const Model& m = *s.model;
  const int n = 5, steps = 40;
  Batch b = varied_pairs(m, n, steps);
  squeeze_then_lift(m, b, steps, 20);
  PgsSettings few = anitescu_pgs_settings();
  few.max_iterations = 3;
  Rollout plain(s.model, {.pgs = few}), with_contacts(s.model, {.pgs = few}), default_pgs(s.model);
  const std::vector<double> lanes =
      plain.propagate(b.states, b.actions, m.step.h, steps, RolloutRecord::every_step).trajectory;
  expect_same(with_contacts.propagate(b.states, b.actions, m.step.h, steps, RolloutRecord::every_step_and_contacts)
                  .trajectory,
              lanes, "with the same PGS settings");
  const std::vector<double> other =
      default_pgs.propagate(b.states, b.actions, m.step.h, steps, RolloutRecord::every_step).trajectory;
  int differ = 0;
  for (std::size_t k = 0; k < other.size(); ++k) differ += !test::same_bits(other[k], lanes[k]);
  EXPECT_GT(differ, 0) << "the sweep limit changed nothing: the test would not see it ignored";
}

TEST(Rollout, ParametersVaryPerPairAsASingleWorldWithThoseValues) {
  const Scene s = load("anitescu_grasp.json");
  const Model& m = *s.model;
  const int n = 11, steps = 40;
  Batch b = varied_pairs(m, n, steps);
  squeeze_then_lift(m, b, steps, 20);
  std::vector<double> friction(n), mass(n);
  for (int i = 0; i < n; ++i) friction[i] = 0.05 + 0.05 * i, mass[i] = 0.5 + 0.1 * i;
  const std::vector<RolloutParameter> params = {{"pairs.left_finger/cylinder.friction", friction},
                                                {"bodies.cylinder.mass", mass}};
  for (RolloutRecord record : {RolloutRecord::every_step, RolloutRecord::every_step_and_contacts}) {
    Rollout r(s.model);
    const RolloutResult& out = r.propagate(b.states, b.actions, m.step.h, steps, record, {}, params);
    double lowest = 1e9, highest = -1e9;
    for (int i = 0; i < n; ++i) {
      WorldParams p(m);
      p.set(m, resolve_parameter(m, params[0].path, "test"), friction[i]);
      p.set(m, resolve_parameter(m, params[1].path, "test"), mass[i]);
      const OneWorld w = one_world(m, p, b.states[i], &b.actions[i * steps * m.n_a], steps);
      const std::size_t len = static_cast<std::size_t>(steps + 1) * m.n_q();
      expect_same(std::span(out.trajectory).subspan(i * len, len), w.rows, "pair " + std::to_string(i));
      lowest = std::min(lowest, out.next[i].q[1]), highest = std::max(highest, out.next[i].q[1]);
    }
    EXPECT_GT(highest - lowest, 0.002) << "the values changed nothing: the test would not see them ignored";
    // The same paths again: no new batch, the new values used.
    std::vector<double> same_friction(n, friction[0]), same_mass(n, mass[0]);
    const std::vector<RolloutParameter> again = {{params[0].path, same_friction}, {params[1].path, same_mass}};
    const RolloutResult& out2 = r.propagate(b.states, b.actions, m.step.h, steps, record, {}, again);
    for (int i = 1; i < n; ++i)
      for (int k = 0; k < m.n_q(); ++k) EXPECT_TRUE(test::same_bits(out2.next[i].q[k], out2.next[0].q[k]));
  }
}

TEST(Rollout, TheContactSummaryMeasuresEachPairWithItsOwnSizes) {
  // The grasp's fingers 2 cm from the cylinder (radius 5 cm), scaled per pair: the gap
  // follows the cylinder's radius (its disk grows about its center, the body's origin).
  const Scene s = load("anitescu_grasp.json");
  const Model& m = *s.model;
  Rollout r(s.model);
  const std::vector<State> states(3, initial_state(m));
  const std::vector<double> scale = {1.0, 1.2, 0.8};
  const std::vector<RolloutParameter> params = {{"bodies.cylinder.scale", scale}};
  const RolloutResult& out = r.propagate(states, {}, m.step.h, 0, RolloutRecord::final_state, {}, params);
  WorldParams p(m);
  p.set(m, resolve_parameter(m, "bodies.cylinder.scale", "test"), 1.2);
  ContactWorkspace ws(m);
  ws.evaluate(m, p, states[1].q.data());
  double expected = std::numeric_limits<double>::infinity();
  for (int k = 0; k < m.n_slots(); ++k) expected = std::min(expected, ws.frame[k].phi);
  EXPECT_TRUE(test::same_bits(out.contacts[1].min_distance, expected));
  // The ground touches the cylinder in every pair; the fingers' gap is the smallest positive.
  EXPECT_EQ(out.contacts[0].touching, 1);
  EXPECT_LT(out.contacts[1].min_distance, -0.009);  // the larger cylinder sinks 1 cm into the table
  EXPECT_GT(out.contacts[2].min_distance, 0.009);   // the smaller one floats 1 cm above it
}

TEST(Rollout, BadParametersAreRefusedNamingThePathAndThePair) {
  const Scene s = load("anitescu_grasp.json");
  const Model& m = *s.model;
  Rollout r(s.model);
  const std::vector<State> states(2, initial_state(m));
  const std::vector<double> actions(2 * 3 * m.n_a, 0.0), two = {0.3, 0.4}, three = {1, 2, 3}, negative = {0.3, -1};
  const auto refusal = [&](std::vector<RolloutParameter> p) {
    return error_of([&] { r.propagate(states, actions, m.step.h, 3, RolloutRecord::final_state, {}, p); });
  };
  EXPECT_NE(refusal({{"bodies.nothing.mass", two}}).find("rollout: parameters: parameter \"bodies.nothing.mass\": no body named \"nothing\""),
            std::string::npos);
  EXPECT_NE(refusal({{"bodies.cylinder.pose.x", two}}).find("sets a world's start"), std::string::npos);
  EXPECT_NE(refusal({{"pairs.left_finger/cylinder.friction", two}, {"pairs.cylinder/left_finger.friction", two}})
                .find("name the same value"),
            std::string::npos);
  EXPECT_NE(refusal({{"bodies.cylinder.mass", three}}).find("has 3 values for 2 pairs"), std::string::npos);
  EXPECT_NE(refusal({{"bodies.cylinder.mass", negative}})
                .find("rollout: pair 1, parameter \"bodies.cylinder.mass\": a free body's mass must be > 0"),
            std::string::npos);
  // After a refusal the Rollout still works.
  EXPECT_EQ(r.propagate(states, actions, m.step.h, 3).status[1], Status::solved);
  // A parameter the batch cannot vary under this formulation: the batch's reason, as the rollout's.
  const Scene push = load("mpc_push.json");
  Rollout pr(push.model);
  const std::vector<State> starts(2, initial_state(*push.model));
  const std::vector<double> none(2 * 3 * push.model->n_a, 0.0);
  const std::vector<RolloutParameter> puck = {{"bodies.puck.scale", two}};
  EXPECT_NE(error_of([&] { pr.propagate(starts, none, push.model->step.h, 3, RolloutRecord::final_state, {}, puck); })
                .find("rollout: parameter \"bodies.puck.scale\" cannot vary per world"),
            std::string::npos);
}

TEST(PushMpc, ReachesTheGoalFromAFixedSeed) {
  const Scene s = load("mpc_push.json");
  examples::PushMpcSettings o;  // goal (0.25, 0.10), 1.5 cm, seed 1
  const examples::PushMpcResult r = examples::push_to_goal(s.model, o);
  EXPECT_TRUE(r.reached) << "error " << r.final_error << " after " << r.replans << " replans";
  EXPECT_LE(r.final_error, o.tolerance);
  EXPECT_LT(r.replans, o.max_replans);
  // The puck really travelled: from the origin to about 27 cm away.
  EXPECT_NEAR(std::hypot(r.puck_path.back()[0], r.puck_path.back()[1]), std::hypot(0.25, 0.10), 0.02);
  // Deterministic: the same seed, the same plan.
  const examples::PushMpcResult again = examples::push_to_goal(s.model, o);
  EXPECT_EQ(again.replans, r.replans);
  EXPECT_TRUE(test::same_bits(again.final_error, r.final_error));
}

}  // namespace
}  // namespace qs::rollout_test

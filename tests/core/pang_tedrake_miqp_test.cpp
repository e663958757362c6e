// Pang & Tedrake's MIQP step on the Pang & Tedrake 2018 gripper (sec. V.A, Fig. 5) with command (29):
// the fingers touch after 20 steps, the x command is then not followed (no penetration),
// the y command is, the squeezed cylinder rises with the fingers, and after the release it
// is back on the table. With mu = 0.45 at the fingers the grasp slips instead.
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/instrumented.hpp"

namespace qs::pang_tedrake_miqp_test {
namespace {

using nlohmann::json;

json grasp_scene() {
  std::ifstream in(std::string(QUASISTEP_SOURCE_DIR) + "/examples/pang_tedrake_grasp.json");
  return json::parse(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
}

struct Row {
  double xc, yc, xl, xr, yg;
};

std::vector<Row> run(const json& s, std::vector<double>* finger_normal = nullptr) {
  const Scene scene = parse_scene(s.dump());
  const Model& m = *scene.model;
  PangTedrakeMiqp stepper(m);
  State st = initial_state(m);
  std::vector<Row> rows{{st.q[0], st.q[1], st.q[2], st.q[3], st.q[4]}};
  for (int l = 1; l <= m.step.steps; ++l) {
    const Status status = stepper.step(m, st);
    EXPECT_EQ(status, Status::solved) << "step " << l << ": " << stepper.report().detail;
    if (status != Status::solved) break;
    EXPECT_LE(stepper.report().complementarity_residual, 1e-9) << l;
    EXPECT_LE(stepper.report().force_balance_residual, 1e-9) << l;
    EXPECT_GE(stepper.report().linearised_penetration, -1e-9) << l;
    if (finger_normal) finger_normal->push_back(stepper.normal_impulse()[0] + stepper.normal_impulse()[1]);
    rows.push_back({st.q[0], st.q[1], st.q[2], st.q[3], st.q[4]});
  }
  return rows;
}

TEST(PangTedrakeMiqp, GripperSqueezesLiftsAndReleasesTheCylinder) {
  const double r = 0.05;
  std::vector<double> grip;
  const std::vector<Row> rows = run(grasp_scene(), &grip);
  ASSERT_EQ(rows.size(), 61u);
  // Row 20 (the paper's "step 21"): both fingers touch.
  EXPECT_NEAR(rows[20].xc - rows[20].xl - r, 0.0, 1e-9);
  EXPECT_NEAR(rows[20].xr - rows[20].xc - r, 0.0, 1e-9);
  for (int l = 1; l <= 39; ++l) {
    EXPECT_NEAR(rows[l].yg - rows[l - 1].yg, 0.001, 1e-12) << l;  // y followed exactly
    EXPECT_GE(rows[l].xc - rows[l].xl - r, -1e-9) << l;            // no penetration
    EXPECT_GE(rows[l].xr - rows[l].xc - r, -1e-9) << l;
    if (l > 20) {
      EXPECT_NEAR(rows[l].xl, rows[20].xl, 1e-9) << l;  // x not followed while squeezing
      EXPECT_GT(grip[l - 1], 0.0) << l;
      EXPECT_NEAR(rows[l].yc - rows[l - 1].yc, 0.001, 1e-9) << l;  // rises with the fingers
    }
  }
  EXPECT_GT(rows[39].yc, r + 0.015);
  // After the release the cylinder is back on the table.
  EXPECT_NEAR(rows[60].yc, r, 1e-9);
}

TEST(PangTedrakeMiqp, EveryStepsOptimumEqualsBruteForceOverAllPatterns) {
  // Each of the 60 steps: the branch-and-bound's stage-1 optimum against the least cost
  // over all 2^(4 nc) = 4096 patterns of the three contacts' complementarity pairs
  // (every 4th step under the sanitizers: approach, contact, lift and release all stay in).
  const Scene scene = parse_scene(grasp_scene().dump());
  const Model& m = *scene.model;
  PangTedrakeMiqp stepper(m), probe(m);
  State st = initial_state(m);
  const int pairs = 4 * m.n_slots();
  std::vector<Side> fix(pairs);
  for (int l = 1; l <= m.step.steps; ++l) {
    ASSERT_EQ(probe.build(m, st), Status::solved);
    ASSERT_EQ(probe.active_contacts(), m.n_slots());  // no margin: every slot is in every step
    if (!test::exhaustive_case(l, 4)) {
      ASSERT_EQ(stepper.step(m, st), Status::solved) << l;
      continue;
    }
    double best = std::numeric_limits<double>::infinity();
    for (unsigned mask = 0; mask < (1u << pairs); ++mask) {
      for (int k = 0; k < pairs; ++k) fix[k] = (mask >> k & 1u) ? Side::second : Side::first;
      const double c = probe.fixed_pattern_cost(fix);
      ASSERT_FALSE(std::isnan(c)) << "step " << l << ", pattern " << mask;
      best = std::min(best, c);
    }
    ASSERT_EQ(stepper.step(m, st), Status::solved) << l;
    EXPECT_NEAR(stepper.tracking_cost(), best, 1e-12 + 1e-9 * best) << "step " << l;
  }
}

/// The least grip (sum of the fingers' P_n) over every complementarity pattern of a built
/// stage-1 problem with dq_a fixed at dqa: stage 2 by brute force, each pattern an LP
/// (+inf when none is feasible).
double least_grip_by_brute_force(const PangTedrakeMiqp& probe, const Model& m, const Eigen::VectorXd& dqa) {
  const PangTedrakeMiqp::View v = probe.view();
  const int n = static_cast<int>(v.qp.c.size()), me = static_cast<int>(v.qp.A_eq.rows()), nc = v.contacts;
  const int na = m.n_a, nu = m.n_u, pairs = 4 * nc;
  const Eigen::MatrixXd H = Eigen::MatrixXd::Zero(n, n);
  Eigen::VectorXd c = Eigen::VectorXd::Zero(n);
  for (int k = 0; k < nc; ++k)
    if (v.slots[k] < 2) c[v.pair_var(k, 0)] = 1.0;  // slots 0, 1: the fingers
  Eigen::MatrixXd A_eq(me + na + pairs, n);
  Eigen::VectorXd b_eq(me + na + pairs), upper = v.qp.upper;
  A_eq.topRows(me) = v.qp.A_eq;
  b_eq.head(me) = v.qp.b_eq;
  A_eq.middleRows(me, na).setZero();
  for (int a = 0; a < na; ++a) {
    A_eq(me + a, nu + a) = 1.0;
    b_eq[me + a] = dqa[a];
  }
  DenseQp qp(DenseQpCapacity{n, me + na + pairs, static_cast<int>(v.qp.A_in.rows())});
  double best = std::numeric_limits<double>::infinity();
  for (unsigned mask = 0; mask < (1u << pairs); ++mask) {
    int rows = me + na;
    upper = v.qp.upper;
    for (int k = 0; k < nc; ++k)
      for (int t = 0; t < 4; ++t) {
        if (mask >> (4 * k + t) & 1u) {
          upper[v.pair_var(k, t)] = 0.0;  // the variable side
        } else {
          A_eq.row(rows) = v.qp.A_in.row(v.pair_row(k, t));  // the row side
          b_eq[rows++] = v.qp.b_in[v.pair_row(k, t)];
        }
      }
    const Status st = qp.solve(DenseQpProblem{H, c, A_eq.topRows(rows), b_eq.head(rows), v.qp.A_in, v.qp.b_in,
                                              v.qp.lower, upper});
    if (st == Status::solved) best = std::min(best, qp.objective());
    else EXPECT_EQ(st, Status::infeasible) << "pattern " << mask;
  }
  return best;
}

TEST(PangTedrakeMiqp, StageTwosLeastGripEqualsBruteForceOverAllPatterns) {
  // Stage 2 (least grip at the optimal dq_a) on the squeezed steps, against all 4096
  // patterns; with the nominal friction and with less of it at one finger (different
  // trees: the hint of stage 1's answer, skipped searches and dominated nodes all occur).
  for (const double mu_left : {0.5, 0.3}) {
    SCOPED_TRACE(mu_left);
    json s = grasp_scene();
    s["contacts"]["pairs"][0]["friction"] = mu_left;
    const Scene scene = parse_scene(s.dump());
    const Model& m = *scene.model;
    PangTedrakeMiqp stepper(m), probe(m);
    State st = initial_state(m);
    for (int l = 1; l <= 26; ++l) {
      ASSERT_EQ(probe.build(m, st), Status::solved) << l;
      ASSERT_EQ(stepper.step(m, st), Status::solved) << l;
      if (l < 20) continue;  // before contact the grip is 0 (the skip test covers it)
      if (!test::exhaustive_case(l - 20, 3)) continue;  // steps 20, 23, 26 under the sanitizers
      const double grip = stepper.normal_impulse()[0] + stepper.normal_impulse()[1];
      const double best = least_grip_by_brute_force(probe, m, stepper.solution().segment(m.n_u, m.n_a));
      EXPECT_NEAR(grip, best, 1e-12 + 1e-9 * best) << "step " << l;
    }
  }
}

TEST(PangTedrakeMiqp, PolishingStageOnesAnswerSettlesTheLiftStepsAtTheRoot) {
  // On the squeezed lift steps stage 1's answer grips with more than the bound; its
  // polish (the least grip in its own pattern) is down to the root's bound. On the first
  // (step 21) stage 2 takes the root and two polishes (the last step's sides, on the table,
  // then x1's): 3 QPs, as many as the search. On the streak after it, the polish with the
  // last answer's sides alone: 1 QP where the search takes 3. (Its optimum is degenerate:
  // the left finger's fixing has multiplier -200, and the degenerate exchanges of
  // DenseQp::optimal_when_relaxed find the root's multipliers at the same point; the
  // record counts those certificates 2, 3, 4.) Every fourth step of such a streak the root
  // goes first (record 4): here it is not a leaf alone, the polish settles it (2 QPs) and
  // the count starts over (1). The same step with the polish turned off (the record a
  // failed polish leaves in State::memory's last entry) searches, and finds the same grip
  // and the same motion.
  const Scene scene = parse_scene(grasp_scene().dump());
  const Model& m = *scene.model;
  PangTedrakeMiqp polished(m), searched(m);
  State st = initial_state(m);
  const Eigen::Index record = st.memory.size() - 1;
  int settled = 0, probes = 0, polish_alone = 0;
  for (int l = 1; l <= m.step.steps; ++l) {
    State off = st;
    off.memory[record] = -3.0;
    const double before = st.memory[record];
    ASSERT_EQ(searched.step(m, off), Status::solved) << l;
    ASSERT_EQ(polished.step(m, st), Status::solved) << l;
    const double grip_p = polished.normal_impulse()[0] + polished.normal_impulse()[1];
    const double grip_s = searched.normal_impulse()[0] + searched.normal_impulse()[1];
    EXPECT_NEAR(grip_p, grip_s, 1e-12 + 1e-9 * grip_s) << "step " << l;
    EXPECT_LT((st.q - off.q).cwiseAbs().maxCoeff(), 1e-12) << "step " << l;
    const double after = st.memory[record];
    if (after >= 1.0 && after <= 4.0) {
      ++settled;
      if (l == 21) {
        EXPECT_EQ(polished.stage2_stats().nodes, 3) << "step " << l;
      } else if (before == 4.0) {
        ++probes;
        EXPECT_EQ(polished.stage2_stats().nodes, 2) << "step " << l;  // the root, then the polish
        EXPECT_EQ(after, 1.0) << "step " << l;
      } else {
        ++polish_alone;
        EXPECT_EQ(polished.stage2_stats().nodes, 1) << "step " << l;
        EXPECT_EQ(after, before + 1.0) << "step " << l;  // certified by exchanges
      }
      EXPECT_EQ(searched.stage2_stats().nodes, 3) << "step " << l;
      EXPECT_EQ(off.memory[record], -2.0) << "step " << l;  // one step nearer a new try
    }
  }
  EXPECT_EQ(settled, 19);  // steps 21-39: squeezed and lifted
  EXPECT_EQ(probes, 4);    // steps 25, 29, 33, 37
  EXPECT_EQ(polish_alone, 14);
}

// Less friction at one finger and the cylinder off centre: from step 17 the cylinder slips
// on the table under the least grip, and from step 27 the fingers slide up along it.
json slipping_grasp_scene() {
  json s = grasp_scene();
  s["contacts"]["pairs"][0]["friction"] = 0.3;
  s["contacts"]["pairs"][1]["friction"] = 0.55;
  s["bodies"][1]["pose"][0] = 0.004;
  return s;
}

TEST(PangTedrakeMiqp, APolishThatFailsIsRetriedOnTheFourthSearchingStep) {
  // slipping_grasp_scene(): from step 17 the cylinder slips on the table under the least
  // grip. Neither stage 1's answer (lifted) nor the
  // last step's answer (before the squeeze) has a pattern whose polish reaches the root's
  // bound: the failure records -3, the next three searching steps skip the polish (-2, -1,
  // 0), the fourth tries again. Once the last step's answer slips, the polish with its
  // sides settles every step (1): with the root and the polish (2 QPs) on the first, with
  // the polish alone (1 QP) on the next ones, where its multipliers certify it as the
  // root's optimum too. The grip is the least one (all 4096 patterns) either way. (With
  // reuse off: from step 27 the steps repeat bitwise and would reuse the answer.)
  const Scene scene = parse_scene(slipping_grasp_scene().dump());
  const Model& m = *scene.model;
  PangTedrakeMiqp stepper(m), probe(m);
  stepper.set_reuse(false);
  State st = initial_state(m);
  const Eigen::Index record = st.memory.size() - 1;
  int failed = 0, skipped = 0, settled_alone = 0;
  for (int l = 1; l <= m.step.steps; ++l) {
    ASSERT_EQ(probe.build(m, st), Status::solved) << l;
    const double before = st.memory[record];
    ASSERT_EQ(stepper.step(m, st), Status::solved) << l;
    const double after = st.memory[record];
    if (l == 17 || l == 18 || l == 21 || (l >= 25 && l <= 28)) {
      const double grip = stepper.normal_impulse()[0] + stepper.normal_impulse()[1];
      const double best = least_grip_by_brute_force(probe, m, stepper.solution().segment(m.n_u, m.n_a));
      EXPECT_NEAR(grip, best, 1e-12 + 1e-9 * best) << "step " << l;
    }
    if (std::isinf(after)) continue;  // stage 2 needed no search: the count starts over
    if (before < 0) {  // skipped the polish: a search, one step nearer the next try
      ++skipped;
      EXPECT_EQ(after, before + 1.0) << "step " << l;
    } else if (after == -3.0) {  // polished, failed, searched
      ++failed;
    } else {
      ASSERT_EQ(after, 1.0) << "step " << l;
      EXPECT_EQ(stepper.stage2_stats().nodes, before == 1.0 ? 1 : 2) << "step " << l;
      settled_alone += before == 1.0;
    }
  }
  EXPECT_EQ(failed, 2);    // steps 17 and 21
  EXPECT_EQ(skipped, 6);   // 18-20, 22-24
  EXPECT_GE(settled_alone, 12);  // most of steps 26-41
}

TEST(PangTedrakeMiqp, AStepWhoseDataRepeatBitwiseReusesTheLastAnswer) {
  // slipping_grasp_scene(): from step 27 the fingers slide up the resting cylinder and
  // every step poses bitwise the same problem (gaps, Jacobians, loads and command do not
  // change). Such a step takes the last step's answer: no search, the memory unchanged,
  // from any stepper (the memo is the state's). That answer agrees with the optimum a cold
  // search finds from the same state, and a changed datum (friction, stiffness, the
  // command, gravity, the cylinder's position) is a new problem. In both elastic modes.
  for (const char* bound : {"current", "previous"}) {
    SCOPED_TRACE(bound);
    json js = slipping_grasp_scene();
    js["model"]["elastic_bound"] = bound;
    // (Under `previous` the off-centre grasp's steps do not repeat bitwise; centred, 16 do.)
    if (std::string(bound) == "previous") js["bodies"][1]["pose"][0] = 0.0;
    const Scene scene = parse_scene(js.dump());
    const Model& m = *scene.model;
    PangTedrakeMiqp stepper(m), other(m);
    State st = initial_state(m);
    Eigen::VectorXd last_x;
    int reused = 0;
    for (int l = 1; l <= m.step.steps; ++l) {
      const State before = st;
      ASSERT_EQ(stepper.step(m, st), Status::solved) << l;
      const int n = stepper.report().problem_size;
      const Eigen::VectorXd x = stepper.solution().head(n);
      if (!stepper.reused_answer()) {
        last_x = x;
        continue;
      }
      ++reused;
      EXPECT_EQ(stepper.report().pivots, 0) << l;
      ASSERT_EQ(last_x.size(), n) << l;
      EXPECT_TRUE((x.array() == last_x.array()).all()) << "step " << l;
      EXPECT_TRUE((st.memory.array() == before.memory.array()).all()) << "step " << l;
      State again = before;
      ASSERT_EQ(other.step(m, again), Status::solved) << l;
      EXPECT_TRUE(other.reused_answer()) << l;
      EXPECT_TRUE((again.q.array() == st.q.array()).all()) << "step " << l;
      // A cold search from the same state: the same optimum.
      State cold = before;
      cold.memory.tail(cold.memory.size() - m.n_slots()).setConstant(std::numeric_limits<double>::infinity());
      ASSERT_EQ(other.step(m, cold), Status::solved) << l;
      EXPECT_FALSE(other.reused_answer()) << l;
      EXPECT_NEAR(other.tracking_cost(), stepper.tracking_cost(), 1e-15) << "step " << l;
      EXPECT_NEAR(other.normal_impulse()[0] + other.normal_impulse()[1],
                  stepper.normal_impulse()[0] + stepper.normal_impulse()[1], 1e-12)
          << "step " << l;
      EXPECT_LT((cold.q - st.q).cwiseAbs().maxCoeff(), 1e-12) << "step " << l;
      // Any datum changed: solved anew.
      for (int variant = 0; variant < 5; ++variant) {
        Model changed = m;
        if (variant == 0) changed.pairs[0].friction *= 1.001;
        if (variant == 1) formulation_params<PangTedrakeMiqpParams>(changed).stiffness_K *= 1.001;
        const double t_mid = before.t + 0.5 * m.step.h;
        if (variant == 2)
          for (Joint& j : changed.joints)
            if (j.control == Control::velocity) j.command.set_constant(j.command(t_mid) + 1e-4);
        if (variant == 3) changed.world.gravity *= 1.001;
        State v = before;
        if (variant == 4) v.q[0] += 1e-6;  // the cylinder 1 um to the side
        ASSERT_EQ(other.step(changed, v), Status::solved) << l << " variant " << variant;
        EXPECT_FALSE(other.reused_answer()) << "step " << l << " variant " << variant;
      }
    }
    EXPECT_GE(reused, 10);
  }
}

TEST(PangTedrakeMiqp, TheRootStartsFromTheLastStepsAnswerWithoutChangingTheOptimum) {
  // Each step twice from the same state: with the last step's answer in State::memory (the
  // warm root) and with it cleared (a cold search). Same optimum (stage 1's tracking cost,
  // stage 2's least grip); the warm root settles most steps at the root.
  const Scene scene = parse_scene(grasp_scene().dump());
  const Model& m = *scene.model;
  PangTedrakeMiqp warm(m), cold(m);
  State st = initial_state(m);
  ASSERT_EQ(st.memory.size(), PangTedrakeMiqp::memory_size(m));
  long warm_nodes = 0, cold_nodes = 0;
  int settled_at_root = 0;
  for (int l = 1; l <= m.step.steps; ++l) {
    State c = st;
    c.memory.tail(c.memory.size() - m.n_slots()).setConstant(std::numeric_limits<double>::infinity());
    ASSERT_EQ(cold.step(m, c), Status::solved) << l;
    ASSERT_EQ(warm.step(m, st), Status::solved) << l;
    EXPECT_NEAR(warm.tracking_cost(), cold.tracking_cost(), 1e-15) << "step " << l;
    double grip_w = 0, grip_c = 0;
    for (int i = 0; i < 2; ++i) {  // slots 0 and 1: the fingers
      grip_w += warm.normal_impulse()[i];
      grip_c += cold.normal_impulse()[i];
    }
    EXPECT_NEAR(grip_w, grip_c, 1e-12) << "step " << l;
    EXPECT_LT((st.q - c.q).cwiseAbs().maxCoeff(), 1e-12) << "step " << l;
    warm_nodes += warm.stage1_stats().nodes;
    cold_nodes += cold.stage1_stats().nodes;
    settled_at_root += l > 1 && warm.stage1_stats().nodes == 1;
    // The next step's warm start: this step's stage-1 answer, for these three contacts.
    EXPECT_EQ(st.memory[m.n_slots()], 3.0) << l;
  }
  EXPECT_GE(settled_at_root, 50);
  EXPECT_LT(warm_nodes, cold_nodes);
}

TEST(PangTedrakeMiqp, StageTwoIsSkippedOnlyWhenStageOnesGripIsTheLeast) {
  // A step whose stage 2 took no node returned stage 1's answer as the least grip. Checked
  // against stage 2's root relaxation solved here from the step's own data (the stage-1
  // problem with dq_a = dq_a* added, min sum of the fingers' P_n, every pair free): its
  // optimum bounds every leaf's grip from below, so the answer's grip may not exceed it.
  // Both elastic bounds: `current` (the bound holds dq_u, only P_n >= 0 certifies) and
  // `previous` (a constant bound per finger).
  for (const char* bound : {"current", "previous"}) {
    SCOPED_TRACE(bound);
    json s = grasp_scene();
    s["model"]["elastic_bound"] = bound;
    const Scene scene = parse_scene(s.dump());
    const Model& m = *scene.model;
    PangTedrakeMiqp stepper(m), probe(m);
    State st = initial_state(m);
    const int nu = m.n_u, na = m.n_a;
    int skipped = 0, searched = 0;
    for (int l = 1; l <= m.step.steps; ++l) {
      ASSERT_EQ(probe.build(m, st), Status::solved) << l;
      const PangTedrakeMiqp::View v = probe.view();
      ASSERT_EQ(stepper.step(m, st), Status::solved) << l;
      const double grip = stepper.normal_impulse()[0] + stepper.normal_impulse()[1];  // slots 0, 1: fingers
      if (stepper.stage2_stats().nodes > 0) {
        ++searched;
        continue;
      }
      ++skipped;
      const int n = static_cast<int>(v.qp.c.size()), me = static_cast<int>(v.qp.A_eq.rows());
      Eigen::MatrixXd H = Eigen::MatrixXd::Zero(n, n), A_eq(me + na, n);
      Eigen::VectorXd c = Eigen::VectorXd::Zero(n), b_eq(me + na);
      A_eq.topRows(me) = v.qp.A_eq;
      b_eq.head(me) = v.qp.b_eq;
      A_eq.bottomRows(na).setZero();
      for (int a = 0; a < na; ++a) {
        A_eq(me + a, nu + a) = 1.0;
        b_eq[me + a] = stepper.solution()[nu + a];
      }
      for (int k = 0; k < v.contacts; ++k)
        if (v.slots[k] < 2) c[v.pair_var(k, 0)] = 1.0;
      DenseQp qp(DenseQpCapacity{n, me + na, static_cast<int>(v.qp.A_in.rows())});
      ASSERT_EQ(qp.solve(DenseQpProblem{H, c, A_eq, b_eq, v.qp.A_in, v.qp.b_in, v.qp.lower, v.qp.upper}),
                Status::solved)
          << l;
      EXPECT_LE(grip, qp.objective() + 1e-12) << "step " << l;
    }
    if (std::string(bound) == "current") {
      // No grip before contact and after the release (41 steps); a search while squeezed.
      EXPECT_GE(skipped, 35) << searched;
      EXPECT_GE(searched, 15) << skipped;
    } else {
      // Every grip sits on its constant bound, the squeezed steps' too.
      EXPECT_EQ(skipped, m.step.steps);
    }
  }
}

TEST(PangTedrakeMiqp, PreviousStepElasticBoundLiftsOneStepLater) {
  // Pang & Tedrake 2018, sec. V.B: the bound from the previous step's phi_bar delays the grip by one
  // step; the grasp then lifts as before.
  json s = grasp_scene();
  s["model"]["elastic_bound"] = "previous";
  const std::vector<Row> current = run(grasp_scene()), previous = run(s);
  ASSERT_EQ(previous.size(), 61u);
  EXPECT_NEAR(current[21].yc, 0.051, 1e-9);   // lifts on step 21 ...
  EXPECT_NEAR(previous[21].yc, 0.050, 1e-9);  // ... or, delayed, on step 22
  EXPECT_NEAR(previous[22].yc, 0.051, 1e-9);
  EXPECT_NEAR(previous[39].yc, 0.068, 1e-9);
  EXPECT_NEAR(previous[60].yc, 0.05, 1e-9);
}

TEST(PangTedrakeMiqp, TheElasticBoundIsTheGripEvenWithHighFriction) {
  // mu = 2 at the fingers but K = 10 N/m: the bound's grip (2 mu h K h |v| = 4e-4 N s per
  // step) cannot carry m g h = 0.0981 N s, so the cylinder must stay on the table. A stage 2
  // counting the table's impulse too would lift it with a grip 245 times the bound.
  json s = grasp_scene();
  s["model"]["stiffness"] = 10.0;
  s["contacts"]["pairs"][0]["friction"] = 2.0;
  s["contacts"]["pairs"][1]["friction"] = 2.0;
  const std::vector<Row> rows = run(s);
  ASSERT_EQ(rows.size(), 61u);
  for (const Row& row : rows) EXPECT_NEAR(row.yc, 0.05, 1e-9);
}

TEST(PangTedrakeMiqp, LessFingerFrictionLetsTheGraspSlip) {
  json s = grasp_scene();
  s["contacts"]["pairs"][0]["friction"] = 0.45;
  s["contacts"]["pairs"][1]["friction"] = 0.45;
  const std::vector<Row> rows = run(s);
  ASSERT_EQ(rows.size(), 61u);
  for (const Row& row : rows) EXPECT_NEAR(row.yc, 0.05, 1e-9);  // stays on the table
}

TEST(PangTedrakeMiqp, AnUnsupportedCylinderIsAnInfeasibleStepAndTheStateIsKept) {
  // Lifted 0.5 m above the table and the fingers with a contact margin of 0.1 m: no contact
  // is active, so nothing can balance gravity in a quasistatic step (23a): the MIQP has no
  // feasible point.
  json s = grasp_scene();
  s["bodies"][1]["pose"] = json::array({0.0, 0.55, 0.0});
  s["contacts"]["margin"] = 0.1;
  const Scene scene = parse_scene(s.dump());
  const Model& m = *scene.model;
  PangTedrakeMiqp stepper(m);
  State st = initial_state(m);
  const State before = st;
  EXPECT_EQ(stepper.step(m, st), Status::infeasible);
  EXPECT_EQ(stepper.report().status, Status::infeasible);
  EXPECT_NE(stepper.report().detail.find("no feasible point"), std::string::npos) << stepper.report().detail;
  EXPECT_EQ(st.q, before.q);
  EXPECT_EQ(st.step, before.step);
}

TEST(PangTedrakeMiqp, TheModelsRoundWidthFixesTheSearch) {
  // model.round_width sets how many open nodes a round of the search evaluates. Width 1
  // explores one node a round (none speculatively: what a batch, parallel over worlds,
  // wants); width 8 lets one world's search use several threads. Each fixes its own search
  // (and the answer among tied optima) on any thread count; both answers are optimal: the
  // same tracking cost and grip, and the same motion to rounding.
  json wide = grasp_scene(), narrow = grasp_scene();
  narrow["model"]["round_width"] = 1;
  const Scene sw = parse_scene(wide.dump()), sn = parse_scene(narrow.dump());
  const Model &mw = *sw.model, &mn = *sn.model;
  ASSERT_EQ(formulation_params<PangTedrakeMiqpParams>(mw).search_round_width, 8);
  ASSERT_EQ(PangTedrakeMiqp::default_options(mn).round_width, 1);
  const auto w = make_stepper(mw), n = make_stepper(mn);
  auto& pw = dynamic_cast<PangTedrakeMiqp&>(*w);
  auto& pn = dynamic_cast<PangTedrakeMiqp&>(*n);
  State a = initial_state(mw), b = initial_state(mn);
  int searched = 0;
  for (int l = 1; l <= mw.step.steps; ++l) {
    ASSERT_EQ(pw.step(mw, a), Status::solved) << l;
    ASSERT_EQ(pn.step(mn, b), Status::solved) << l;
    EXPECT_NEAR(pw.tracking_cost(), pn.tracking_cost(), 1e-15) << l;
    EXPECT_NEAR(pw.normal_impulse()[0] + pw.normal_impulse()[1], pn.normal_impulse()[0] + pn.normal_impulse()[1], 1e-12)
        << l;
    EXPECT_LT((a.q - b.q).cwiseAbs().maxCoeff(), 1e-12) << l;
    if (pn.stage1_stats().nodes > 1) {
      ++searched;
      EXPECT_EQ(pn.stage1_stats().rounds, pn.stage1_stats().nodes) << l;  // one node a round
      EXPECT_LT(pw.stage1_stats().rounds, pw.stage1_stats().nodes) << l;
    }
  }
  EXPECT_GE(searched, 2);
}

TEST(PangTedrakeMiqp, NodeLimitReportsTheBestIncumbentAndBound) {
  // Step 21 (the first squeeze) needs more than two nodes in stage 1.
  const Scene scene = parse_scene(grasp_scene().dump());
  const Model& m = *scene.model;
  BnbOptions o = PangTedrakeMiqp::default_options(m);
  PangTedrakeMiqp full(m, o);
  o.max_nodes = 2;
  PangTedrakeMiqp limited(m, o);
  State st = initial_state(m);
  for (int l = 1; l <= 20; ++l) ASSERT_EQ(full.step(m, st), Status::solved) << l;
  State a = st, b = st;
  ASSERT_EQ(full.step(m, a), Status::solved);
  ASSERT_GT(full.stage1_stats().nodes, 2);
  EXPECT_EQ(limited.step(m, b), Status::iteration_limit);
  const std::string& detail = limited.report().detail;
  EXPECT_NE(detail.find("node limit reached (2 nodes)"), std::string::npos) << detail;
  EXPECT_NE(detail.find("lower bound"), std::string::npos) << detail;
  EXPECT_EQ(b.q, st.q);  // no fake step
}

}  // namespace
}  // namespace qs::pang_tedrake_miqp_test

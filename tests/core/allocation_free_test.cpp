// The per-step paths of core/ allocate nothing once their workspace exists.
#include <gtest/gtest.h>

#include <algorithm>

#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_qp_params.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/formulations/trinkle_lcp/trinkle_lcp.hpp"
#include "quasistep/core/ucp_problem_file.hpp"
#include "quasistep/core/formulations/ucp/ucp_scene.hpp"
#include "quasistep/kernels/ucp.hpp"
#include "tests/support/allocation_counter.hpp"

namespace qs::allocation_free_test {
namespace {

TEST(AllocationCounter, SeesAllocations) {
  test::CountAllocations guard;
  auto v = std::make_unique<std::vector<double>>(100);
  Eigen::VectorXd x(50);
  EXPECT_GE(guard.count(), 3);  // the vector object, its buffer, Eigen's buffer
}

TEST(AllocationFree, WorldParamsResetAndSet) {
  // A batch thread writes every world's values into one WorldParams: no allocation.
  const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/anitescu_grasp.json");
  const Model& m = *scene.model;
  WorldParams p(m);
  const ParameterRef mass = resolve_parameter(m, "bodies.cylinder.mass", "t");
  const ParameterRef friction = resolve_parameter(m, "pairs.ground/cylinder.friction", "t");
  const ParameterRef scale = resolve_parameter(m, "bodies.cylinder.scale", "t");
  test::CountAllocations guard;
  for (int i = 0; i < 10; ++i) {
    p.set(m, mass, 1.0 + 0.1 * i);
    p.set(m, friction, 0.3 + 0.01 * i);
    p.set(m, scale, 1.0 + 0.01 * i);
    p.reset(m);
  }
  EXPECT_EQ(guard.count(), 0);
}

TEST(AllocationFree, ContactEvaluationAndExternalForce) {
  for (const char* rel : {"examples/pang_tedrake_gripper.json", "tests/scenes/peg_in_slot.json",
                          "tests/scenes/two_link_arms.json", "tests/scenes/two_finger_push.json"}) {
    const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/" + rel);
    const Model& m = *scene.model;
    ContactWorkspace ws(m);
    Eigen::VectorXd q = initial_state(m).q;
    std::vector<double> tau(m.n_q());
    const WorldParams p(m);
    test::CountAllocations guard;
    for (int i = 0; i < 10; ++i) {
      q[0] += 1e-3;
      ws.evaluate(m, p, q.data());
      generalized_external_force(m, p, ws.body_pose.data(), ws.joint_frame.data(), 0.01 * i, tau.data());
      for (const Joint& j : m.joints) tau[0] += j.command(0.01 * i);
    }
    EXPECT_EQ(guard.count(), 0) << rel;
  }
}

TEST(AllocationFree, TrinkleLcpStep) {
  const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/pang_tedrake_gripper.json");
  const Model& m = *scene.model;
  State s = initial_state(m);
  TrinkleLcp stepper(m);
  test::CountAllocations guard;
  for (int l = 0; l < 60; ++l) ASSERT_EQ(stepper.step(m, s), Status::solved);
  EXPECT_EQ(guard.count(), 0);
}

TEST(AllocationFree, PangTedrakeMiqpStep) {
  // Serial branch-and-bound, so this thread evaluates every node (the counter sees this
  // thread only). The first pass over the Pang & Tedrake 2018 grasp and the 36-pair box (searches,
  // polishes, workspaces traded between the root probe and the search) may allocate; the
  // second, over the same steps, must not.
  for (const char* rel : {"examples/pang_tedrake_grasp.json", "examples/pang_tedrake_box_36.json"}) {
    const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/" + rel);
    const Model& m = *scene.model;
    BnbOptions o = PangTedrakeMiqp::default_options(m);
    o.parallel = false;
    PangTedrakeMiqp stepper(m, o);
    long count = 0, stepped = 0;
    for (int pass = 0; pass < 2; ++pass) {
      State s = initial_state(m);
      test::CountAllocations guard;
      for (int l = 0; l < m.step.steps; ++l) {
        ASSERT_EQ(stepper.step(m, s), Status::solved) << rel << " step " << l + 1;
        stepped += pass;
      }
      count = guard.count();
    }
    EXPECT_EQ(count, 0) << rel;
    EXPECT_GT(stepped, 50) << rel;
  }
}

TEST(AllocationFree, HalmPosaLcpStepWithRelinearisation) {
  // The wall example exercises contact changes, the squeeze and the roll; relinearisation
  // exercises the repeated solves.
  const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/halm_posa_wall.json");
  Model m = *scene.model;
  formulation_params<HalmPosaParams>(m).relinearize_iterations = 2;
  State s = initial_state(m);
  HalmPosaLcp stepper(m);
  test::CountAllocations guard;
  for (int l = 0; l < m.step.steps; ++l) ASSERT_EQ(stepper.step(m, s), Status::solved);
  EXPECT_EQ(guard.count(), 0);
}

TEST(AllocationFree, HalmPosaExactLimitSurfaceSequence) {
  // model.support: each step is a sequence of LCPs with a Newton solve for the Hessian of H
  // between them (Halm & Posa 2018, sec. 3.4), with and without re-linearisation.
  for (int rel : {0, 1}) {
    const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/halm_posa_push_ring.json");
    Model m = *scene.model;
    formulation_params<HalmPosaParams>(m).relinearize_iterations = rel;
    State s = initial_state(m);
    HalmPosaLcp stepper(m);
    int most = 0;
    test::CountAllocations guard;
    for (int l = 0; l < 200; ++l) {
      ASSERT_EQ(stepper.step(m, s), Status::solved) << stepper.report().detail;
      most = std::max(most, stepper.limit_surface_programs());
    }
    EXPECT_EQ(guard.count(), 0) << rel;
    EXPECT_GE(most, 3) << rel;
  }
}

TEST(AllocationFree, AnitescuStepWithDerivativesAfterTheFirst) {
  // Both modes: the quasi-dynamic grasp (PGS, then the template's problem at T = Jet) and
  // the quasistatic box push (the dense QP). The first derivative call builds its workspace.
  for (const char* file : {"anitescu_grasp.json", "anitescu_box_push.json"}) {
    const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" + file);
    const Model& m = *scene.model;
    const WorldParams p(m);
    State s = initial_state(m);
    auto stepper = make_stepper(m);
    StepDerivatives d;
    ASSERT_EQ(stepper->step(m, p, s, d), Status::solved);
    test::CountAllocations guard;
    for (int l = 1; l < m.step.steps; ++l) {
      ASSERT_EQ(stepper->step(m, p, s, d), Status::solved) << file;
      ASSERT_EQ(d.status, Status::solved) << file << ": " << d.detail;
    }
    EXPECT_EQ(guard.count(), 0) << file;
  }
}

TEST(AllocationFree, SmoothedAnitescuStepWithDerivativesAfterTheFirst) {
  // The smoothed step (model.log_barrier_weight), both modes: the unsmoothed start (the dense
  // QP, or Lemke), the start's QP, Newton's method, and its derivatives.
  for (const char* file : {"anitescu_grasp.json", "anitescu_box_push.json", "anitescu_drop.json"}) {
    const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" + file);
    Model m = *scene.model;
    formulation_params<AnitescuQpParams>(m).log_barrier_weight = 1e4;
    const WorldParams p(m);
    State s = initial_state(m);
    auto stepper = make_stepper(m);
    StepDerivatives d;
    ASSERT_EQ(stepper->step(m, p, s, d), Status::solved) << file << ": " << stepper->report().detail;
    test::CountAllocations guard;
    for (int l = 1; l < m.step.steps; ++l) {
      ASSERT_EQ(stepper->step(m, p, s, d), Status::solved) << file << ": " << stepper->report().detail;
      ASSERT_EQ(d.status, Status::solved) << file << ": " << d.detail;
    }
    EXPECT_EQ(guard.count(), 0) << file;
  }
}

TEST(AllocationFree, HalmPosaStepWithDerivativesAfterTheFirst) {
  // The push on the template path, and the wall re-linearised twice (a chain of LCPs).
  for (const int relinearize : {0, 2}) {
    const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" +
                                        (relinearize ? "halm_posa_wall.json" : "halm_posa_push.json"));
    Model m = *scene.model;
    formulation_params<HalmPosaParams>(m).relinearize_iterations = relinearize;
    const WorldParams p(m);
    State s = initial_state(m);
    HalmPosaLcp stepper(m);
    StepDerivatives d;
    ASSERT_EQ(stepper.step(m, p, s, d), Status::solved);
    test::CountAllocations guard;
    for (int l = 1; l < m.step.steps; ++l) {
      ASSERT_EQ(stepper.step(m, p, s, d), Status::solved);
      ASSERT_EQ(d.status, Status::solved) << d.detail;
    }
    EXPECT_EQ(guard.count(), 0) << relinearize;
  }
}

TEST(AllocationFree, TrinkleAndMiqpStepsWithDerivativesAfterTheFirst) {
  // Trinkle's LCP on the gripper: the first derivative call builds its workspace.
  {
    const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/examples/pang_tedrake_gripper.json");
    const Model& m = *scene.model;
    const WorldParams p(m);
    State s = initial_state(m);
    TrinkleLcp stepper(m);
    StepDerivatives d;
    ASSERT_EQ(stepper.step(m, p, s, d), Status::solved);
    test::CountAllocations guard;
    for (int l = 1; l < m.step.steps; ++l) {
      ASSERT_EQ(stepper.step(m, p, s, d), Status::solved);
      ASSERT_EQ(d.status, Status::solved) << d.detail;
    }
    EXPECT_EQ(guard.count(), 0);
  }
  // The MIQP, its branch-and-bound serial (as PangTedrakeMiqpStep): the first pass over the
  // grasp and the 36-pair box (elastic_bound = previous: phi_bar in the derivatives' state)
  // may allocate, the second must not.
  for (const char* rel : {"examples/pang_tedrake_grasp.json", "examples/pang_tedrake_box_36.json"}) {
    const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/" + rel);
    const Model& m = *scene.model;
    const WorldParams p(m);
    BnbOptions o = PangTedrakeMiqp::default_options(m);
    o.parallel = false;
    PangTedrakeMiqp stepper(m, o);
    StepDerivatives d;
    long count = 0, differentiated = 0;
    for (int pass = 0; pass < 2; ++pass) {
      State s = initial_state(m);
      test::CountAllocations guard;
      for (int l = 0; l < m.step.steps; ++l) {
        ASSERT_EQ(stepper.step(m, p, s, d), Status::solved) << rel << " step " << l + 1;
        differentiated += pass && d.status == Status::solved;
      }
      count = guard.count();
    }
    EXPECT_EQ(count, 0) << rel;
    EXPECT_GT(differentiated, 50) << rel;
  }
}

// ---- the UCP solvers (Pang, Trinkle & Lo 1996): a repeated solve -------------------------------------------
// ucp_enumerate_modes (`quasistep ucp --all`) is left out: it returns a list of every mode
// combination with a solution, which grows with the answer, and is a one-shot search for
// small problems (it builds its LP solvers per call), not a kernel that is solved repeatedly.

/// tests/data/ucp/data_set_K.json, through the problem-file reader (its allocations are
/// outside the counted solves).
UcpData ucp_data_set(int k) {
  return load_ucp_problem(std::string(QUASISTEP_SOURCE_DIR) + "/tests/data/ucp/data_set_" + std::to_string(k) + ".json");
}

/// The Pang & Tedrake 2018 gripper as a `ucp` scene (as tests/core/ucp_test.cpp builds it): the cylinder
/// on the ground, the fingers at x = -+half_gap, at time t; with squeeze > 0 the fingers are
/// effort-controlled, pushing with squeeze N each.
UcpData gripper_ucp(double half_gap, double t, double squeeze = 0) {
  std::ifstream in(std::string(QUASISTEP_SOURCE_DIR) + "/examples/pang_tedrake_gripper.json");
  nlohmann::json j = nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
  j["model"]["formulation"] = "ucp";
  if (squeeze > 0) {
    j["joints"][0]["control"] = "effort";
    j["joints"][1]["control"] = "effort";
    j["commands"]["x_l"] = {{"effort", squeeze}};
    j["commands"]["x_r"] = {{"effort", -squeeze}};
  }
  const Scene scene = parse_scene(j.dump());
  const Model& m = *scene.model;
  State s = initial_state(m);
  s.t = t;
  for (size_t k = 0; k < m.dofs.size(); ++k) {
    if (m.dofs[k].name == "x_l") s.q[static_cast<Eigen::Index>(k)] = -half_gap;
    if (m.dofs[k].name == "x_r") s.q[static_cast<Eigen::Index>(k)] = half_gap;
  }
  UcpScene sc;
  std::string why;
  EXPECT_EQ(ucp_from_scene(m, s, sc, why), Status::solved) << why;
  return sc.data;
}

struct UcpCase {
  std::string name;
  UcpData data;
  Status bilinear, exact;  // the expected answers (so that a status change cannot hide)
};

std::vector<UcpCase> ucp_cases() {
  return {
      {"data set 1", ucp_data_set(1), Status::solved, Status::solved},
      {"data set 4", ucp_data_set(4), Status::not_found, Status::infeasible},
      {"gripper at rest", gripper_ucp(0.07, 0), Status::solved, Status::solved},
      {"gripper rigid squeeze (X empty)", gripper_ucp(0.05, 0.1), Status::infeasible, Status::infeasible},
      {"gripper lift", gripper_ucp(0.05, 0.3), Status::solved, Status::solved},
      {"gripper lift, effort-controlled fingers", gripper_ucp(0.05, 0.3, 20), Status::solved, Status::solved},
  };
}

TEST(AllocationFree, UcpBilinearRepeatedSolve) {
  for (const UcpCase& c : ucp_cases()) {
    Ucp u;
    ASSERT_EQ(u.build(c.data), Status::solved) << c.name << ": " << u.error_message();
    UcpBilinear solver(u);
    const UcpBilinearResult first = solver.solve();  // the warm-up may allocate
    ASSERT_EQ(first.status, c.bilinear) << c.name;
    long count = 0;
    {
      test::CountAllocations guard;
      solver.solve();
      count = guard.count();
    }
    EXPECT_EQ(count, 0) << c.name;
    const UcpBilinearResult& second = solver.result();
    EXPECT_EQ(second.status, first.status) << c.name;
    EXPECT_EQ(second.empty_side, first.empty_side) << c.name;
    EXPECT_EQ(second.x, first.x) << c.name;
    EXPECT_EQ(second.y, first.y) << c.name;
    EXPECT_EQ(second.products, first.products) << c.name;
    EXPECT_EQ(second.pairs, first.pairs) << c.name;
    EXPECT_EQ(second.lps, first.lps) << c.name;
    EXPECT_EQ(second.restarts, first.restarts) << c.name;
    EXPECT_EQ(second.check.worst, first.check.worst) << c.name;
  }
}

TEST(AllocationFree, UcpExactRepeatedSolve) {
  // The counter sees this thread only: serially it sees every node's evaluation; in parallel
  // TBB's workers evaluate some (and TBB may allocate its task storage, branch_and_bound.hpp).
  for (const bool parallel : {false, true}) {
    for (const UcpCase& c : ucp_cases()) {
      const std::string name = c.name + (parallel ? ", parallel" : ", serial");
      Ucp u;
      ASSERT_EQ(u.build(c.data), Status::solved) << name << ": " << u.error_message();
      UcpExactOptions o;
      o.parallel = parallel;
      UcpExact solver(u, o);
      const UcpExactResult first = solver.solve();  // the warm-up may allocate
      ASSERT_EQ(first.status, c.exact) << name;
      long count = 0;
      {
        test::CountAllocations guard;
        solver.solve();
        count = guard.count();
      }
      EXPECT_EQ(count, 0) << name;
      const UcpExactResult& second = solver.result();
      EXPECT_EQ(second.status, first.status) << name;
      EXPECT_EQ(second.empty_side, first.empty_side) << name;
      EXPECT_EQ(second.stats.nodes, first.stats.nodes) << name;
      EXPECT_EQ(second.check.worst, first.check.worst) << name;
      if (first.status == Status::solved) {
        EXPECT_EQ(second.x, first.x) << name;
        EXPECT_EQ(second.y, first.y) << name;
      }
    }
  }
}

}  // namespace
}  // namespace qs::allocation_free_test

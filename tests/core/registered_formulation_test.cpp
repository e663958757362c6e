// A formulation the library does not know, added from outside it: this file registers a
// test-only formulation (a frictionless projection) with one row, its own parameters type
// and a gain a batch varies per world, and steps scenes that name it alone, in a batch and
// through the CLI, touching no file of the library (quasistep/core/formulation_table.hpp,
// register_formulation).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "quasistep/batch/batch_stepper.hpp"
#include "quasistep/batch/world_batch.hpp"
#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp_params.hpp"
#include "quasistep/core/json_node.hpp"
#include "quasistep/core/kinematics.hpp"
#include "quasistep/core/lane_step.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/cli_run.hpp"

namespace qs::registered_formulation_test {
namespace {

/// The projection's own parameters (its scene's "model"): the sweeps it may take, and the
/// relaxation factor omega of every correction (successive over-relaxation, 0 < omega < 2;
/// 1: each correction closes its gap exactly), a gain a batch may vary per world as
/// "model.relaxation".
struct ProjectionParams {
  int sweeps = 100;
  double relaxation = 1.0;
};

void read_projection_params(const json_input::Node& n, Model& m) {
  ProjectionParams& p = m.params.emplace<ProjectionParams>();
  n.expect_object({"formulation", "sweeps", "relaxation"});
  if (auto sweeps = n.get("sweeps")) p.sweeps = sweeps->integer(1);
  if (auto omega = n.get("relaxation")) {
    p.relaxation = omega->positive();
    if (!(p.relaxation < 2)) omega->fail("must be < 2");
  }
}

void projection_gains(const Model& m, double& relaxation, std::vector<double>&) {
  relaxation = formulation_params_or_default<ProjectionParams>(m).relaxation;
}

/// Not a model of any paper, and not quasistatic: the velocity-commanded joints follow their
/// command over the step, and the free bodies make the smallest move (in q_u) that opens
/// every active contact's linearised gap again, by projecting onto one contact's half-space
/// at a time until none is violated (frictionless, forceless: a position-based projection
/// as in Müller, Heidelberger, Hennix & Ratcliff 2007, "Position based dynamics", sec. 3.3).
class FrictionlessProjection final : public Stepper {
 public:
  explicit FrictionlessProjection(const Model& m) : Stepper(m), dq_(m.n_q()) {}

 protected:
  Status advance(const Model& m, const WorldParams& p, State& s) override {
    report_ = StepReport{};
    const ContactRecord& rec = contact_record(m, p, s);
    const ContactWorkspace& g = rec.geometry;
    dq_.setZero();
    commanded_displacements(m, p, s.t + 0.5 * p.h, dq_.data() + m.n_u);
    report_.contacts = rec.count;
    const int sweeps = formulation_params_or_default<ProjectionParams>(m).sweeps;
    const double omega = p.model_gain;  // this world's relaxation
    for (int sweep = 0; sweep < sweeps; ++sweep) {
      double worst = 0;  // the deepest linearised penetration met in this sweep
      for (int c = 0; c < rec.count; ++c) {
        const auto row = g.J_n.row(rec.slots[c]);
        const double gap = g.frame[rec.slots[c]].phi + row.dot(dq_);
        if (gap >= 0) continue;
        worst = std::max(worst, -gap);
        const double norm2 = row.head(m.n_u).squaredNorm();
        if (norm2 > 0) dq_.head(m.n_u) -= (omega * gap / norm2) * row.head(m.n_u).transpose();
      }
      if (worst <= kTolerance) {
        s.q += dq_;
        report_.status = Status::solved;
        return Status::solved;
      }
    }
    return fail(Status::not_found, "the projection left a contact closed after " + std::to_string(sweeps) + " sweeps");
  }

 private:
  static constexpr double kTolerance = 1e-12;
  Eigen::VectorXd dq_;
};

std::unique_ptr<Stepper> make_projection(const Model& m, const StepperOptions&) {
  return std::make_unique<FrictionlessProjection>(m);
}

// The whole plug-in: one row, registered when the test program starts.
const FormulationRegistration kProjection{{.name = "test_frictionless_projection",
                                           .world = WorldType::vertical,
                                           .reference = "Müller et al. 2007 (a test of the formulation table)",
                                           .model_gain = "relaxation",
                                           .scene_gains = projection_gains,
                                           .make_stepper = make_projection,
                                           .read_params = read_projection_params}};

/// A disk resting on the ground, touched on its left by a pusher that moves right at 0.1 m/s.
std::string push_scene(const std::string& formulation = "test_frictionless_projection") {
  return R"({"format": 1, "name": "projection_push",
    "world": {"type": "vertical", "gravity": 9.81},
    "model": {"formulation": ")" +
         formulation + R"("},
    "step": {"h": 0.01, "steps": 10},
    "bodies": [
      {"name": "ground", "kind": "fixed", "shapes": [{"type": "half_plane", "normal": [0, 1]}]},
      {"name": "disk", "kind": "free", "dofs": ["x", "y"], "mass": 1.0, "pose": [0, 0.05, 0],
       "shapes": [{"type": "disk", "radius": 0.05}]},
      {"name": "pusher", "kind": "linked", "shapes": [{"type": "segment", "a": [0, 0], "b": [0, 0.1]}]}],
    "joints": [{"name": "x_p", "type": "prismatic", "parent": "world", "child": "pusher", "axis": [1, 0],
                "position": -0.05}],
    "contacts": {"friction": 0.5, "pairs": [{"bodies": ["pusher", "disk"]}, {"bodies": ["ground", "disk"]}]},
    "commands": {"x_p": {"velocity": 0.1}}})";
}

TEST(RegisteredFormulation, TakesTheNextRowAfterTheLibrarysOwn) {
  const auto table = formulation_table();
  ASSERT_GT(table.size(), static_cast<std::size_t>(Formulation::ecp_ncp) + 1);
  const FormulationInfo& row = formulation_info(kProjection.id);
  EXPECT_GT(static_cast<int>(kProjection.id), static_cast<int>(Formulation::ecp_ncp));
  EXPECT_EQ(row.id, kProjection.id);
  EXPECT_EQ(row.name, "test_frictionless_projection");
  EXPECT_EQ(to_string(kProjection.id), "test_frictionless_projection");
  EXPECT_TRUE(formulation_applies(kProjection.id, WorldType::vertical));
  EXPECT_FALSE(formulation_applies(kProjection.id, WorldType::tabletop));
  ASSERT_NE(row.memory_size, nullptr);  // null in the row given: no memory
  EXPECT_EQ(row.model_gain, "relaxation");
}

TEST(RegisteredFormulation, ScenesNameItAndItStepsThemAsTheLibrarysOwn) {
  const Scene scene = parse_scene(push_scene());
  const Model& m = *scene.model;
  ASSERT_EQ(m.formulation, kProjection.id);
  State s = initial_state(m);
  EXPECT_EQ(s.memory.size(), 0);
  const std::unique_ptr<Stepper> st = make_stepper(m);
  ASSERT_NE(st, nullptr);
  ContactWorkspace ws(m);
  for (int l = 1; l <= m.step.steps; ++l) {
    ASSERT_EQ(st->step(m, s), Status::solved) << st->report().detail;
    EXPECT_EQ(st->report().contacts, 2);
    EXPECT_EQ(s.step, l);
    EXPECT_NEAR(s.t, l * 0.01, 1e-15);
    // The pusher moved by h v; the disk by the same in x (the contact's normal), not in y.
    EXPECT_NEAR(s.q[2], -0.05 + l * 0.001, 1e-15);
    EXPECT_NEAR(s.q[0], l * 0.001, 1e-12);
    EXPECT_NEAR(s.q[1], 0.05, 1e-15);
    ws.evaluate(m, s.q.data());
    for (int i = 0; i < m.n_slots(); ++i) EXPECT_GE(ws.frame[i].phi, -1e-12) << "slot " << i << " at step " << l;
  }
}

/// push_scene() with `fields` ("\"sweeps\": 40, ") at the start of its "model" object.
std::string with_model_fields(const std::string& fields) {
  std::string s = push_scene();
  s.replace(s.find(R"("model": {)"), 10, R"("model": {)" + fields);
  return s;
}

TEST(RegisteredFormulation, ItsParametersAreItsOwnAndItsWorldIsChecked) {
  // Its own parameters type, read by its own reader, with the defaults when absent.
  const Scene given = parse_scene(with_model_fields(R"("sweeps": 40, "relaxation": 0.5, )"));
  EXPECT_EQ(formulation_params<ProjectionParams>(*given.model).sweeps, 40);
  EXPECT_EQ(formulation_params<ProjectionParams>(*given.model).relaxation, 0.5);
  EXPECT_EQ(WorldParams(*given.model).model_gain, 0.5) << "the scene's value of its gain";
  const Scene defaults = parse_scene(push_scene());
  EXPECT_EQ(formulation_params<ProjectionParams>(*defaults.model).sweeps, 100);
  EXPECT_THROW((void)formulation_params<HalmPosaParams>(*defaults.model), std::logic_error);
  for (const auto& [fields, path] : {std::pair<std::string, std::string>{R"("sweeps": 0, )", "model.sweeps"},
                                     {R"("relaxation": 2, )", "model.relaxation"},
                                     {R"("relaxation": -1, )", "model.relaxation"}}) {
    try {
      parse_scene(with_model_fields(fields));
      ADD_FAILURE() << "accepted " << fields;
    } catch (const SceneError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
  // Keys it does not know are refused.
  std::string extra = push_scene();
  extra.replace(extra.find(R"("model": {)"), 10, R"("model": {"stiffness": 1, )");
  try {
    parse_scene(extra);
    FAIL() << "an unknown model key was accepted";
  } catch (const SceneError& e) {
    EXPECT_NE(std::string(e.what()).find("stiffness"), std::string::npos) << e.what();
  }
  std::string tabletop = push_scene();
  tabletop.replace(tabletop.find(R"("type": "vertical")"), 18, R"("type": "tabletop")");
  EXPECT_THROW(parse_scene(tabletop), SceneError);
}

TEST(RegisteredFormulation, TheBatchStepsItPerWorldAsTheStepperAlone) {
  const Scene scene = parse_scene(push_scene());
  EXPECT_EQ(batch_unsupported_reason(*scene.model), "");
  WorldBatch batch = WorldBatch::from_scene(scene, 5);
  BatchStepper(batch).run(batch);
  State alone = initial_state(*scene.model);
  const std::unique_ptr<Stepper> st = make_stepper(*scene.model);
  for (int l = 0; l < scene.model->step.steps; ++l) ASSERT_EQ(st->step(*scene.model, alone), Status::solved);
  for (int w = 0; w < batch.size(); ++w) {
    EXPECT_FALSE(batch.failed(w));
    for (int d = 0; d < scene.model->n_q(); ++d)
      EXPECT_EQ(batch.world_q(d)[w], alone.q[d]) << "world " << w << ", DOF " << d;  // bitwise
  }
}

TEST(RegisteredFormulation, ABatchVariesItsGainPerWorldAsTheStepperAlone) {
  const Scene scene = parse_scene(with_model_fields(R"("sweeps": 60, )"));
  const Model& m = *scene.model;
  const ParameterRef relaxation = resolve_parameter(m, "model.relaxation", "test");
  EXPECT_EQ(relaxation.kind, ParameterRef::Kind::model_gain);
  const double values[] = {1.0, 0.5, 1.5};
  WorldBatch batch(scene.model, 3, {relaxation});
  for (int w = 0; w < 3; ++w) batch.set_parameter(0, w, values[w]);
  BatchStepper(batch).run(batch);
  for (int w = 0; w < 3; ++w) {
    WorldParams p(m);
    p.model_gain = values[w];
    State alone = initial_state(m);
    const std::unique_ptr<Stepper> st = make_stepper(m);
    for (int l = 0; l < m.step.steps; ++l) ASSERT_EQ(st->step(m, p, alone), Status::solved) << st->report().detail;
    ASSERT_FALSE(batch.failed(w));
    for (int d = 0; d < m.n_q(); ++d) EXPECT_EQ(batch.world_q(d)[w], alone.q[d]) << "world " << w << ", DOF " << d;
  }
  // Over-relaxed, the disk moves further than the exact projection moves it; under-relaxed,
  // it ends where the exact projection puts it, within the projection's tolerance.
  EXPECT_GT(batch.world_q(0)[2], batch.world_q(0)[0]);
  EXPECT_NEAR(batch.world_q(0)[1], batch.world_q(0)[0], 1e-9);
}

class RegisteredFormulationCli : public test::TempDirTest {
 protected:
  RegisteredFormulationCli() : TempDirTest("qs_registered_formulation_") {}
};

TEST_F(RegisteredFormulationCli, TheCommandLineRunsIt) {
  const test::CliResult r = test::run_cli({"run", file("push.json", push_scene())});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("10 of 10 steps of test_frictionless_projection"), std::string::npos) << r.err;
}

TEST(RegisteredFormulation, ARowIsRefusedWithTheReason) {
  const auto refused = [](const FormulationInfo& row, const std::string& why) {
    try {
      register_formulation(row);
      ADD_FAILURE() << "registered: " << row.name;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  const std::size_t rows = formulation_table().size();
  refused({.name = "trinkle_lcp", .reference = "r", .make_stepper = make_projection}, "the name is taken");
  refused({.name = "test_frictionless_projection", .reference = "r", .make_stepper = make_projection},
          "the name is taken");
  refused({.name = "", .reference = "r", .make_stepper = make_projection}, "needs a name");
  refused({.name = "no_reference", .make_stepper = make_projection}, "needs a reference");
  refused({.name = "no_stepper", .reference = "r"}, "needs make_stepper");
  const LaneEntry lane_step{};
  refused({.name = "lanes", .reference = "r", .lanes = &lane_step, .make_stepper = make_projection}, "lane steps");
  refused({.name = "gain", .reference = "r", .model_gain = "c", .make_stepper = make_projection}, "scene_gains");
  EXPECT_EQ(formulation_table().size(), rows);
}

}  // namespace
}  // namespace qs::registered_formulation_test

// A scene's model.support: the tabletop object's exact limit surface, taken in the step of
// halm_posa_lcp (and perfect_velocity_lcp) by Halm & Posa's (2018, sec. 3.4) sequence of LCPs.
// Every solved step is checked against its LCP and for force balance (the contact impulses'
// wrench is the support's, F = Ã⁻¹ V); the step's final Ã is the library's limit_surface_at
// at that wrench and the twist is normal to the exact surface there; where the wrench is on
// an axis of the surface (pure translation, pure rotation about the pressure center) the
// step moves as the ellipsoid through those axis ends does. Then the scene's errors, the
// program limit, and `info`.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numbers>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "quasistep/batch/batch_stepper.hpp"
#include "quasistep/batch/world_batch.hpp"
#include "quasistep/core/contacts.hpp"
#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/limit_surface.hpp"
#include "quasistep/core/scene.hpp"
#include "tests/support/example_json.hpp"
#include "tests/support/halm_posa_checks.hpp"

namespace qs::halm_posa_support_test {
namespace {

using nlohmann::json;

json example(const std::string& name) { return test::example_json(name + ".json"); }

/// The ellipsoid through the axis ends of the scene's support (its first program's Ã), as a
/// model.A in place of model.support.
json with_ellipsoid(json s) {
  const Scene scene = parse_scene(s.dump());
  const Eigen::Matrix3d A = *formulation_params<HalmPosaParams>(*scene.model).limit_surface_A;
  s["model"].erase("support");
  s["model"]["A"] = json::array();
  for (int i = 0; i < 3; ++i) s["model"]["A"].push_back({A(i, 0), A(i, 1), A(i, 2)});
  return s;
}

/// The contact impulses' wrench on the object in its body frame (torque about the body
/// origin), from the step's impulses and the Jacobian at its start (relinearize = 0).
Eigen::Vector3d contact_wrench(const Model& m, const HalmPosaLcp& st, const Eigen::VectorXd& q0) {
  ContactWorkspace ws(m);
  ws.evaluate(m, q0.data());
  int object = -1;
  for (size_t b = 0; b < m.bodies.size(); ++b)
    if (m.bodies[b].kind == BodyKind::free) object = static_cast<int>(b);
  const auto& dof = m.bodies[object].dof;
  Eigen::Vector3d Fw = Eigen::Vector3d::Zero();
  for (int i = 0; i < m.n_slots(); ++i)
    for (int e = 0; e < 3; ++e)
      Fw[e] += ws.J_n(i, dof[e]) * st.normal_impulse()[i] + ws.J_t(i, dof[e]) * st.tangent_impulse()[i];
  const double c = std::cos(q0[dof[2]]), s = std::sin(q0[dof[2]]);
  return {c * Fw[0] + s * Fw[1], -s * Fw[0] + c * Fw[1], Fw[2]};
}

struct Checked {
  int steps = 0;
  int max_programs = 0;
  double worst_lcp = 0, worst_balance = 0, worst_A = 0, worst_normal = 0;
  Eigen::VectorXd q;
};

/// Steps the scene `steps` times, checking every step of the exact surface.
Checked run_checked(const json& s, int steps) {
  const Scene scene = parse_scene(s.dump());
  const Model& m = *scene.model;
  const HalmPosaParams& hp = formulation_params<HalmPosaParams>(m);
  HalmPosaLcp stepper(m);
  State st = initial_state(m);
  Checked out;
  for (int l = 0; l < steps; ++l) {
    const Eigen::VectorXd q0 = st.q;
    const Status status = stepper.step(m, st);
    EXPECT_EQ(status, Status::solved) << "step " << l << ": " << stepper.report().detail;
    if (status != Status::solved) break;
    ++out.steps;
    out.max_programs = std::max(out.max_programs, stepper.limit_surface_programs());
    out.worst_lcp = std::max(out.worst_lcp, test::lcp_violation(stepper));
    const Eigen::Vector3d F = stepper.limit_surface_wrench();
    if (F.norm() == 0) continue;  // the object did not move
    // Force balance: the support's wrench F = Ã⁻¹ V is the contact impulses' (eq. (11)).
    const Eigen::Vector3d Fc = contact_wrench(m, stepper, q0);
    out.worst_balance = std::max(out.worst_balance, (Fc - F).norm() / F.norm());
    // A twist of rounding (1e-19 m when a finger just touches) has no direction to check.
    if (!hp.support || (st.q - q0).head<3>().norm() < 1e-12) continue;
    // The final Ã is the exact surface's Hessian at the step's wrench ...
    const LimitSurfacePoint at = limit_surface_at(*hp.support, F);
    out.worst_A = std::max(out.worst_A, (stepper.limit_surface_A() - at.A).norm() / at.A.norm());
    // ... and the twist V = Ã F is normal to the exact surface there (parallel to ∇H(F) = 2 at.V),
    // in the axes' units.
    const SupportAxes ax = support_axes(*hp.support);
    const Eigen::Vector3d u(ax.f_max, ax.f_max, ax.m_max);
    const Eigen::Vector3d V = (stepper.limit_surface_A() * F).cwiseProduct(u), N = at.V.cwiseProduct(u);
    out.worst_normal = std::max(out.worst_normal, 1 - V.dot(N) / (V.norm() * N.norm()));
  }
  out.q = st.q;
  return out;
}

TEST(HalmPosaSupport, RingExampleSolvesEveryStepOnTheExactSurface) {
  const json s = example("halm_posa_push_ring");
  const Checked c = run_checked(s, 120);
  ASSERT_EQ(c.steps, 120);
  EXPECT_GE(c.max_programs, 3);  // the surface is not the ellipsoid: Ã moves
  EXPECT_LE(c.max_programs, 20);
  EXPECT_LE(c.worst_lcp, 1e-9);
  EXPECT_LE(c.worst_balance, 1e-9);
  EXPECT_LE(c.worst_A, 1e-7);
  EXPECT_LE(c.worst_normal, 1e-12);
  // The ellipsoid through the ring's axis ends moves the disk otherwise (a turning push).
  const Checked e = run_checked(with_ellipsoid(s), 120);
  ASSERT_EQ(e.steps, 120);
  EXPECT_LE(e.worst_balance, 1e-9);
  EXPECT_GT((c.q.head<3>() - e.q.head<3>()).norm(), 1e-3);
}

TEST(HalmPosaSupport, ThreePointsAndUniformSupportSolveOnTheExactSurface) {
  json s = example("halm_posa_push_ring");
  s["model"]["support"] = {{"type", "points"}, {"points", {{0.0, 0.9}, {-0.78, -0.45}, {0.78, -0.45}}}, {"weights", {2, 1, 1}}};
  Checked c = run_checked(s, 40);
  EXPECT_EQ(c.steps, 40);
  EXPECT_LE(c.worst_lcp, 1e-9);
  EXPECT_LE(c.worst_balance, 1e-9);
  EXPECT_LE(c.worst_A, 1e-7);
  EXPECT_LE(c.worst_normal, 1e-12);
  s["model"]["support"] = {{"type", "uniform"}, {"subdivisions", 4}};
  c = run_checked(s, 20);
  EXPECT_EQ(c.steps, 20);
  EXPECT_LE(c.worst_lcp, 1e-9);
  EXPECT_LE(c.worst_balance, 1e-9);
  EXPECT_LE(c.worst_A, 1e-7);
  EXPECT_LE(c.worst_normal, 1e-12);
}

TEST(HalmPosaSupport, PureTranslationMovesAsTheEllipsoidThroughTheAxisEnds) {
  // A central push: the finger's wrench passes through the ring's center, the disk
  // translates, the wrench is on the surface's force axis, where the ellipsoid through the
  // axis ends touches it with the same normal: the same LCP solution, bitwise or to rounding.
  json s = example("halm_posa_push_ring");
  // One finger pushes at x = 0 (a unique LCP solution; with two fingers pushing side by side
  // the LCP has turning solutions too, and the sequence flips between two mirror ones), the
  // other stays 3 m away.
  s["joints"][0]["position"] = 0.0;
  s["joints"][1]["position"] = -1.0062;
  s["joints"][2]["position"] = 3.0;
  const Checked c = run_checked(s, 60), e = run_checked(with_ellipsoid(s), 60);
  ASSERT_EQ(c.steps, 60);
  ASSERT_EQ(e.steps, 60);
  EXPECT_LE(c.max_programs, 3);
  EXPECT_GT(c.q[1], 0.1);  // it moved
  EXPECT_LT(std::abs(c.q[2]), 1e-12);
  EXPECT_LT((c.q - e.q).lpNorm<Eigen::Infinity>(), 1e-12);
}

TEST(HalmPosaSupport, PureRotationAboutThePressureCenterMovesAsTheEllipsoid) {
  // Two fingers on opposite sides of the disk pushing in opposite directions: a couple about
  // the ring's center, the disk turns in place; the wrench is on the surface's moment axis.
  json s = example("halm_posa_push_ring");
  // Each finger 5 mm outside the edge, radially: (x, y) = 1.005 (cos a, sin a), the two
  // diametrically opposite.
  const double a1 = 5 * std::numbers::pi / 6, a2 = -std::numbers::pi / 6;
  s["joints"][0]["position"] = 1.005 * std::cos(a1);
  s["joints"][1]["position"] = 1.005 * std::sin(a1);
  s["joints"][2]["position"] = 1.005 * std::cos(a2);
  s["joints"][3]["position"] = 1.005 * std::sin(a2);
  // Each moves 0.1 m/s along the disk's clockwise tangent (sin a, -cos a) and 0.05 m/s inward.
  s["commands"] = {{"finger1_x", {{"velocity", 0.1 * std::sin(a1) - 0.05 * std::cos(a1)}}},
                   {"finger1_y", {{"velocity", -0.1 * std::cos(a1) - 0.05 * std::sin(a1)}}},
                   {"finger2_x", {{"velocity", 0.1 * std::sin(a2) - 0.05 * std::cos(a2)}}},
                   {"finger2_y", {{"velocity", -0.1 * std::cos(a2) - 0.05 * std::sin(a2)}}}};
  const Checked c = run_checked(s, 20), e = run_checked(with_ellipsoid(s), 20);
  ASSERT_EQ(c.steps, 20);
  ASSERT_EQ(e.steps, 20);
  EXPECT_GT(std::abs(c.q[2]), 1e-3);                // it turned
  EXPECT_LT(c.q.head<2>().norm(), 1e-12);           // about its center
  EXPECT_LE(c.worst_balance, 1e-9);
  EXPECT_LT((c.q - e.q).lpNorm<Eigen::Infinity>(), 1e-12);
}

TEST(HalmPosaSupport, PerfectVelocityTakesTheExactSurfaceToo) {
  json s = example("halm_posa_push_ring");
  s["model"] = {{"formulation", "perfect_velocity_lcp"}, {"support", s["model"]["support"]}};
  const Checked c = run_checked(s, 40);
  EXPECT_EQ(c.steps, 40);
  EXPECT_GE(c.max_programs, 3);
  EXPECT_LE(c.worst_lcp, 1e-9);
  EXPECT_LE(c.worst_balance, 1e-9);
  EXPECT_LE(c.worst_A, 1e-7);
  EXPECT_LE(c.worst_normal, 1e-12);
}

TEST(HalmPosaSupport, ProgramLimitIsIterationLimitWithTheStateUnchanged) {
  json s = example("halm_posa_push_ring");
  s["model"]["support"]["max_programs"] = 2;
  const Scene scene = parse_scene(s.dump());
  const Model& m = *scene.model;
  HalmPosaLcp stepper(m);
  State st = initial_state(m);
  Status status = Status::solved;
  int l = 0;
  Eigen::VectorXd before;
  for (; l < 120 && status == Status::solved; ++l) {
    before = st.q;
    status = stepper.step(m, st);
  }
  ASSERT_EQ(status, Status::iteration_limit) << "every step settled within 2 programs";
  EXPECT_EQ(stepper.limit_surface_programs(), 2);
  EXPECT_NE(stepper.report().detail.find("model.support.max_programs"), std::string::npos) << stepper.report().detail;
  EXPECT_EQ(st.q, before);
  for (double p : stepper.normal_impulse()) EXPECT_EQ(p, 0.0);
}

TEST(HalmPosaSupport, DerivativesAreRefusedNamingTheField) {
  const Scene scene = parse_scene(example("halm_posa_push_ring").dump());
  const Model& m = *scene.model;
  HalmPosaLcp stepper(m);
  State st = initial_state(m);
  StepDerivatives d;
  EXPECT_EQ(stepper.step(m, WorldParams(m), st, d), Status::solved);
  EXPECT_EQ(d.status, Status::bad_input);
  EXPECT_NE(d.detail.find("model.support"), std::string::npos) << d.detail;
}

TEST(HalmPosaSupport, BatchStepsTheWorldsOneAtATimeAsRun) {
  // The lanes share one Ã; such worlds take the per-world path and step bitwise as alone.
  const Scene scene = parse_scene(example("halm_posa_push_ring").dump());
  const Model& m = *scene.model;
  HalmPosaLcp stepper(m);
  State alone = initial_state(m);
  for (int l = 0; l < 80; ++l) ASSERT_EQ(stepper.step(m, alone), Status::solved);
  WorldBatch b(scene.model, 5);
  BatchStepper st(b, {.threads = 2});
  EXPECT_FALSE(st.lanes());
  EXPECT_NE(st.path().find("model.support"), std::string::npos) << st.path();
  st.run(b, 80);
  for (int w = 0; w < 5; ++w) {
    EXPECT_EQ(b.world_status()[w], Status::solved) << w;
    for (int e = 0; e < m.n_q(); ++e) EXPECT_EQ(b.world_q(e)[w], alone.q[e]) << w << " " << e;
  }
}

TEST(HalmPosaSupport, SceneErrorsNameTheField) {
  const json base = example("halm_posa_push_ring");
  auto error = [&](const std::function<void(json&)>& edit) {
    json s = base;
    edit(s);
    try {
      (void)parse_scene(s.dump());
    } catch (const SceneError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto has = [](const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos ? ::testing::AssertionSuccess()
                                                : ::testing::AssertionFailure() << text;
  };
  EXPECT_TRUE(has(error([](json& s) { s["model"]["A"] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}; }),
                  "model.support: give model.A"));
  EXPECT_TRUE(has(error([](json& s) { s["model"]["support"]["type"] = "annulus"; }), "model.support.type: must be one of"));
  EXPECT_TRUE(has(error([](json& s) { s["model"]["support"].erase("type"); }), "model.support.type: missing"));
  EXPECT_TRUE(has(error([](json& s) { s["model"]["support"]["radius"] = -1; }), "model.support.radius: must be > 0"));
  EXPECT_TRUE(has(error([](json& s) { s["model"]["support"]["points"] = 2; }), "model.support.points: must be >= 3"));
  EXPECT_TRUE(has(error([](json& s) { s["model"]["support"]["center"] = {0}; }), "model.support.center"));
  EXPECT_TRUE(has(error([](json& s) { s["model"]["support"]["weights"] = {1}; }), "model.support.weights: unknown field"));
  EXPECT_TRUE(has(error([](json& s) { s["model"]["support"]["max_programs"] = 1; }),
                  "model.support.max_programs: must be >= 2"));
  EXPECT_TRUE(has(error([](json& s) { s["world"].erase("support_friction"); }), "model.support: the support of body"));
  EXPECT_TRUE(has(error([](json& s) { s["bodies"][0]["mass"] = 0; }), "mass"));
  EXPECT_TRUE(has(error([](json& s) { s["model"]["support"] = 1; }), "model.support: must be an object"));
  EXPECT_TRUE(has(error([](json& s) {
                    s["model"]["support"] = {{"type", "points"}, {"points", {{0, 0}, {1, 0}}}, {"weights", {1, 0}}};
                  }),
                  "model.support.weights[1]: must be > 0"));
  EXPECT_TRUE(has(error([](json& s) {
                    s["model"]["support"] = {{"type", "points"}, {"points", {{0, 0}, {1, 0}}}, {"weights", {1}}};
                  }),
                  "model.support.weights: must have one entry per point"));
  EXPECT_TRUE(has(error([](json& s) {
                    s["model"]["support"] = {{"type", "points"}, {"points", {{0.2, 0.1}, {0.2, 0.1}}}};
                  }),
                  "concentrated at one point"));
  EXPECT_TRUE(has(error([](json& s) { s["model"]["support"] = {{"type", "points"}, {"points", {{0, 0}, {1}}}}; }),
                  "model.support.points[1]: must have at least 2 entries"));
  EXPECT_TRUE(has(error([](json& s) { s["model"]["support"] = {{"type", "uniform"}, {"subdivisions", 0}}; }),
                  "model.support.subdivisions: must be >= 1"));
  EXPECT_TRUE(has(error([](json& s) {
                    s["model"]["support"] = {{"type", "uniform"}};
                    s["bodies"][0]["shapes"] = {{{"type", "point"}}};
                  }),
                  "model.support.type: cannot compute the limit surface"));
}

TEST(HalmPosaSupport, InfoNamesTheExactSurface) {
  const Scene ring = parse_scene(example("halm_posa_push_ring").dump());
  std::ostringstream out;
  tabletop_describe(*ring.model, out);
  EXPECT_NE(out.str().find("exact, of model.support (ring, 36 points"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("sec. 3.4"), std::string::npos) << out.str();
  std::ostringstream plain;
  tabletop_describe(*parse_scene(example("halm_posa_push").dump()).model, plain);
  EXPECT_EQ(plain.str().find("model.support"), std::string::npos) << plain.str();
  EXPECT_NE(plain.str().find("given (model.A)"), std::string::npos) << plain.str();
}

}  // namespace
}  // namespace qs::halm_posa_support_test

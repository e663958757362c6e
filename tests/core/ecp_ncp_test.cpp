// Xie & Chakraborty's (2021) ECP stepper (core/formulations/ecp_ncp/, quasistep/core/geometry3.hpp): the hull, the step's MNCP against finite
// differences, the four-legged desk against the planar-sliding reference (sec. 5.1: within
// 1e-8 over 4 s), falling and tipping bodies (no penetration, contact modes), bad input.
#include "quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp"
#include "quasistep/core/formulations/ecp_ncp/planar_sliding_reference.hpp"

#include <gtest/gtest.h>

#include <Eigen/Geometry>

#include <cmath>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "quasistep/core/scene.hpp"
#include "tools/cli/cli.hpp"

namespace qs::ecp_ncp_test {
namespace {

using json = nlohmann::json;
const std::string kDesk = std::string(QUASISTEP_SOURCE_DIR) + "/examples/ecp_desk.json";

json desk_json() {
  std::ifstream in(kDesk);
  return json::parse(in);
}

std::shared_ptr<const Model> model_of(const json& j) { return parse_scene(j.dump(), "test").model; }

/// A box of half-sizes (a, b, c) as 8 corner points.
json box_points(double a, double b, double c) {
  json pts = json::array();
  for (int i = 0; i < 8; ++i) pts.push_back({i & 1 ? a : -a, i & 2 ? b : -b, i & 4 ? c : -c});
  return pts;
}

/// A 1 kg box (0.2 x 0.1 x 0.05 m) on the plane, no loads unless given.
json box_scene(const json& pose3, const json& velocity = {0, 0, 0}, const json& omega = {0, 0, 0}) {
  const double a = 0.1, b = 0.05, c = 0.025, m = 1.0;
  return json{{"format", 1},
              {"world", {{"type", "body_on_plane"}, {"gravity", 9.8}, {"support_friction", 0.3}}},
              {"model", {{"formulation", "ecp_ncp"}, {"e_r", 0.05}}},
              {"step", {{"h", 0.01}, {"steps", 100}}},
              {"bodies",
               {{{"name", "box"},
                 {"kind", "free"},
                 {"mass", m},
                 {"inertia", {m / 3 * (b * b + c * c), m / 3 * (a * a + c * c), m / 3 * (a * a + b * b)}},
                 {"pose3", pose3},
                 {"velocity", velocity},
                 {"angular_velocity", omega},
                 {"hull", {{"vertices", box_points(a, b, c)}}}}}}};
}

// ---- hull --------------------------------------------------------------------------------

TEST(EcpHull, DeskPointsGiveTheBoxAndDropTheNonExtremeOnes) {
  const std::shared_ptr<const Model> m = model_of(desk_json());
  const Body3& b = *m->body3;
  EXPECT_EQ(b.given_points, 24);
  EXPECT_EQ(b.hull_vertices.size(), 8u);
  EXPECT_EQ(b.dropped_points, 16);
  ASSERT_EQ(b.hull_normals.size(), 6u);
  // Every given point is inside or on the hull; every plane touches 4 extreme points.
  for (size_t f = 0; f < 6; ++f) {
    int on = 0;
    for (const Eigen::Vector3d& v : b.hull_vertices) {
      EXPECT_LE(b.hull_normals[f].dot(v) - b.hull_offsets[f], 1e-12);
      on += std::abs(b.hull_normals[f].dot(v) - b.hull_offsets[f]) < 1e-12;
    }
    EXPECT_EQ(on, 4);
  }
}

TEST(EcpHull, TetrahedronAndDegenerateSets) {
  Hull3 h;
  std::string why;
  std::vector<Eigen::Vector3d> tet = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.1, 0.1, 0.1}, {1, 0, 0}};
  ASSERT_TRUE(convex_hull_3d(tet, h, why));
  EXPECT_EQ(h.normals.size(), 4u);
  EXPECT_EQ(h.vertices.size(), 4u);
  EXPECT_EQ(h.dropped, 2);  // the interior point and the repeated vertex
  std::vector<Eigen::Vector3d> flat = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}};
  EXPECT_FALSE(convex_hull_3d(flat, h, why));
  EXPECT_NE(why.find("coplanar"), std::string::npos);
  EXPECT_FALSE(convex_hull_3d({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, h, why));
}

// ---- the step's MNCP --------------------------------------------------------------------

/// The analytic Jacobian of Xie & Chakraborty 2021, eqs. (18)-(19) against central differences.
void expect_jacobian_matches(const Model& m, const Eigen::VectorXd& q, int k, unsigned seed) {
  EcpStepProblem p;
  p.setup(m, q, 0.3, k);
  const int n = p.size();
  Eigen::VectorXd x(n);
  p.cold_start(x);
  for (int i = 0; i < n; ++i) x[i] += 0.05 * std::sin(1.7 * i + seed);  // a generic point
  Eigen::VectorXd F(n), Fp(n), Fm(n);
  Eigen::MatrixXd J(n, n), Jd(n, n);
  ASSERT_TRUE(p(x, F, J));
  double worst = 0;
  for (int j = 0; j < n; ++j) {
    Eigen::VectorXd xp = x, xm = x;
    const double e = 1e-6;
    xp[j] += e;
    xm[j] -= e;
    ASSERT_TRUE(p(xp, Fp, Jd));
    ASSERT_TRUE(p(xm, Fm, Jd));
    const Eigen::VectorXd col = (Fp - Fm) / (2 * e);
    for (int i = 0; i < n; ++i) {
      if (i == p.pn()) continue;  // the max row is piecewise: checked separately below
      worst = std::max(worst, std::abs(col[i] - J(i, j)) / (1 + std::abs(J(i, j))));
    }
  }
  EXPECT_LE(worst, 1e-7);
}

TEST(EcpStepProblem, JacobianMatchesFiniteDifferences) {
  json s = box_scene({0, 0, 0.025, 1, 0, 0, 0}, {0.3, -0.1, 0.05}, {0.2, -0.4, 1.0});
  s["loads"] = {{{"body", "box"}, {"force", {1, 2, 3}}, {"torque", {0.1, -0.2, 0.3}}, {"point", {0.05, 0, 0.02}}}};
  const std::shared_ptr<const Model> m = model_of(s);
  const Eigen::VectorXd q = initial_state(*m).q;
  for (int k = 0; k < 6; ++k) expect_jacobian_matches(*m, q, k, k);
  // A tilted, spinning pose.
  Eigen::VectorXd q2 = q;
  q2.segment<4>(3) = Eigen::Vector4d(0.9, 0.3, -0.2, 0.25).normalized();
  q2[2] = 0.2;
  for (int k = 0; k < 6; ++k) expect_jacobian_matches(*m, q2, k, 10 + k);
}

TEST(EcpStepProblem, InUnitsItIsTheSameProblemRowByRow) {
  // set_units: x~ = x / (column unit), F~ = F / (row unit), J~ = J (column unit) / (row
  // unit), exactly (powers of two). Each unit below re-derived from eqs. (5)-(19)'s
  // dimensions: impulse P, sliding speed V, length L, and the unknowns v and w in Vv, W.
  json s = box_scene({0, 0, 0.025, 1, 0, 0, 0}, {0.3, -0.1, 0.05}, {0.2, -0.4, 1.0});
  const std::shared_ptr<const Model> m = model_of(s);
  const Eigen::VectorXd q = initial_state(*m).q;
  EcpStepProblem p;
  p.setup(*m, q, 0.3, 0);
  const int n = p.size();
  Eigen::VectorXd x(n);
  p.cold_start(x);
  for (int i = 0; i < n; ++i) x[i] += 0.05 * std::sin(1.7 * i);
  Eigen::VectorXd F(n), Fu(n);
  Eigen::MatrixXd J(n, n), Ju(n, n);
  ASSERT_TRUE(p(x, F, J));
  const double P = 0x1p-7, V = 0x1p3, L = 0x1p-2, Vv = 0x1p5, W = 0x1p-3;
  std::vector<double> col(static_cast<size_t>(n), 1.0), row(static_cast<size_t>(n), L);
  for (int j = 0; j < 3; ++j) {
    col[EcpStepProblem::kV + j] = Vv;
    col[EcpStepProblem::kW + j] = W;
    col[EcpStepProblem::kA1 + j] = col[EcpStepProblem::kA2 + j] = L;
    row[j] = P;          // Newton-Euler, linear: impulses
    row[3 + j] = P * L;  // angular: impulse x length
    row[9 + j] = 1;      // eq. (14): unit gradients
  }
  col[EcpStepProblem::kPt] = col[EcpStepProblem::kPo] = col[static_cast<size_t>(p.pn())] = P;
  col[EcpStepProblem::kPr] = P * L;  // p_r / e_r is an impulse, e_r a length
  col[EcpStepProblem::kLk] = L;      // a gap over the unitless l_2
  col[static_cast<size_t>(p.sigma())] = V;
  row[12] = row[13] = P * V;        // e^2 mu p_n u + p sigma
  row[14] = P * L * V;              // e_r^2 mu p_n w_z + p_r sigma
  row[static_cast<size_t>(p.sigma())] = P * P;  // the friction ellipsoid
  p.set_units(P, V, L, Vv, W);
  Eigen::VectorXd xu = x;
  p.to_units(xu);
  for (int j = 0; j < n; ++j) EXPECT_EQ(xu[j], x[j] / col[static_cast<size_t>(j)]) << j;
  ASSERT_TRUE(p(xu, Fu, Ju));
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(Fu[i], F[i] / row[static_cast<size_t>(i)]) << "row " << i;
    for (int j = 0; j < n; ++j)
      EXPECT_EQ(Ju(i, j), J(i, j) * col[static_cast<size_t>(j)] / row[static_cast<size_t>(i)]) << i << ", " << j;
  }
  p.to_physical(xu);
  EXPECT_TRUE((xu.array() == x.array()).all());
  // Units of 1 again: the problem as posed.
  p.set_units(1, 1, 1, 1, 1);
  ASSERT_TRUE(p(x, Fu, Ju));
  EXPECT_TRUE((Fu.array() == F.array()).all());
}

TEST(EcpStepProblem, FrictionIsShrunkOntoTheEllipsoid) {
  const std::shared_ptr<const Model> m = model_of(box_scene({0, 0, 0.025, 1, 0, 0, 0}));  // e_t = e_o = 1
  EcpStepProblem p;
  p.setup(*m, initial_state(*m).q, 0, 0);
  const double mu = m->world.support_friction;
  Eigen::VectorXd x = Eigen::VectorXd::Zero(p.size());
  x[p.pn()] = 2.0;
  x[EcpStepProblem::kPt] = 3.0 * mu;  // |(p_t, p_o, p_r / e_r)| = 5 mu against mu p_n = 2 mu
  x[EcpStepProblem::kPo] = -4.0 * mu;
  p.project_onto_cone(x);
  EXPECT_NEAR(std::hypot(x[EcpStepProblem::kPt], x[EcpStepProblem::kPo]), 2.0 * mu, 1e-15);
  EXPECT_NEAR(x[EcpStepProblem::kPt] / x[EcpStepProblem::kPo], -0.75, 1e-15);  // the direction kept
  const Eigen::VectorXd inside = x;
  p.project_onto_cone(x);  // on the ellipsoid: unchanged
  EXPECT_TRUE((x.array() == inside.array()).all());
  x[p.pn()] = -1e-20;  // no normal impulse: no friction
  x[EcpStepProblem::kPr] = 0.01;
  p.project_onto_cone(x);
  EXPECT_EQ(x[EcpStepProblem::kPt], 0.0);
  EXPECT_EQ(x[EcpStepProblem::kPo], 0.0);
  EXPECT_EQ(x[EcpStepProblem::kPr], 0.0);
}

/// A 1 kg cylinder (radius 0.05 m, length 0.2 m along body axis `axis`, its centre offset
/// from the CM by `center`) on the plane.
json cylinder_scene(const json& pose3, const json& axis = {1, 0, 0}, const json& center = {0, 0, 0}) {
  json s = box_scene(pose3);
  s["bodies"][0]["hull"] = {{"cylinder", {{"radius", 0.05}, {"length", 0.2}, {"axis", axis}, {"center", center}}}};
  return s;
}

TEST(EcpStepProblem, JacobianMatchesFiniteDifferencesOnACylinderSide) {
  // The side's gradient depends on a1 and turns with the body: both terms are checked, with
  // the side as face k and as one of the other faces (caps as k), at generic poses.
  const double s2 = std::sqrt(0.5);
  json s = cylinder_scene({0, 0, 0.05, 1, 0, 0, 0}, {s2, s2, 0}, {0.01, -0.02, 0.005});
  s["bodies"][0]["velocity"] = {0.3, -0.1, 0.05};
  s["bodies"][0]["angular_velocity"] = {0.2, -0.4, 1.0};
  s["loads"] = {{{"body", "box"}, {"force", {1, 2, 3}}, {"torque", {0.1, -0.2, 0.3}}}};
  const std::shared_ptr<const Model> m = model_of(s);
  ASSERT_TRUE(m->body3->cylinder);
  EXPECT_EQ(hull_face_count(*m->body3), 3);
  Eigen::VectorXd q = initial_state(*m).q;
  q[2] = 0.3;  // off the plane: a generic point for every term
  for (int k = 0; k < 3; ++k) expect_jacobian_matches(*m, q, k, 20 + k);
  q.segment<4>(3) = Eigen::Vector4d(0.9, 0.3, -0.2, 0.25).normalized();
  for (int k = 0; k < 3; ++k) expect_jacobian_matches(*m, q, k, 30 + k);
}

TEST(EcpHull, CylinderFacesAndLowestPoints) {
  const json s = cylinder_scene({0, 0, 0.05, 1, 0, 0, 0});
  const std::shared_ptr<const Model> m = model_of(s);
  const Body3& b = *m->body3;
  // Caps x = +-0.1 and the side |(y, z)| = 0.05; f is the signed distance's first-order
  // equivalent on the side: 0 on it, negative inside, gradient of unit length on it.
  EXPECT_NEAR(hull_face_value(b, 0, Eigen::Vector3d(0.1, 0, 0)), 0, 1e-15);
  EXPECT_NEAR(hull_face_value(b, 1, Eigen::Vector3d(-0.1, 0, 0)), 0, 1e-15);
  EXPECT_NEAR(hull_face_value(b, 2, Eigen::Vector3d(0.03, 0, -0.05)), 0, 1e-15);
  EXPECT_LT(hull_face_value(b, 2, Eigen::Vector3d(0, 0.01, 0.01)), 0);
  const Eigen::Matrix3d I = Eigen::Matrix3d::Identity();
  const Eigen::Vector3d c(0, 0, 0.05);
  EXPECT_TRUE(hull_face_normal(b, 2, I, c, Eigen::Vector3d(0.03, 0, 0)).isApprox(Eigen::Vector3d(0, 0, -1)));
  // Lying level: the lowest points are the line under the axis; centroid at its middle.
  Eigen::Vector3d low;
  EXPECT_NEAR(hull_lowest(b, I, c, 1e-9, &low), 0, 1e-15);
  EXPECT_TRUE(low.isApprox(Eigen::Vector3d(0, 0, 0), 1e-12) || low.norm() < 1e-15) << low.transpose();
  // Standing on its -x cap (axis up): the cap's centre; tilted: a rim point of the lower cap.
  const double th = 0.3;
  Eigen::Matrix3d Ry;  // body x toward world z, then tilted by th
  Ry = Eigen::AngleAxisd(-M_PI / 2 + th, Eigen::Vector3d::UnitY());
  const Eigen::Vector3d lower_centre = c + Ry * Eigen::Vector3d(-0.1, 0, 0);
  const double z = hull_lowest(b, Ry, c, 1e-9, &low);
  const Eigen::Vector3d axis_w = Ry * Eigen::Vector3d::UnitX();
  EXPECT_NEAR(z, lower_centre[2] - 0.05 * std::sqrt(1 - axis_w[2] * axis_w[2]), 1e-15);
  EXPECT_NEAR((low - lower_centre).norm(), 0.05, 1e-15);        // on the rim
  EXPECT_NEAR((low - lower_centre).dot(axis_w), 0, 1e-15);      // in the cap's plane
  Ry = Eigen::AngleAxisd(-M_PI / 2, Eigen::Vector3d::UnitY());
  hull_lowest(b, Ry, c, 1e-9, &low);
  EXPECT_TRUE(low.isApprox(c + Ry * Eigen::Vector3d(-0.1, 0, 0)));
}

TEST(EcpScene, CylinderHullInputIsChecked) {
  EXPECT_NO_THROW(model_of(cylinder_scene({0, 0, 0.05, 1, 0, 0, 0})));
  json both = cylinder_scene({0, 0, 0.05, 1, 0, 0, 0});
  both["bodies"][0]["hull"]["vertices"] = box_points(0.1, 0.05, 0.05);
  EXPECT_THROW(model_of(both), SceneError);
  EXPECT_THROW(model_of(cylinder_scene({0, 0, 0.05, 1, 0, 0, 0}, {1, 1, 0})), SceneError);  // not unit
  json r0 = cylinder_scene({0, 0, 0.05, 1, 0, 0, 0});
  r0["bodies"][0]["hull"]["cylinder"]["radius"] = 0;
  EXPECT_THROW(model_of(r0), SceneError);
  EXPECT_THROW(model_of(cylinder_scene({0, 0, 0.04, 1, 0, 0, 0})), SceneError);  // starts 1 cm into the plane
  json extra = cylinder_scene({0, 0, 0.05, 1, 0, 0, 0});
  extra["bodies"][0]["hull"]["cylinder"]["height"] = 1;
  EXPECT_THROW(model_of(extra), SceneError);
}

TEST(EcpCylinder, RollsWithItsAxisLevelAndItsCentreAtTheRadius) {
  // Lying on its side with a spin about its axis and a push across it: it rolls (line
  // contact, the ECP on the line under the axis) with the CM height equal to the radius.
  json s = cylinder_scene({0, 0, 0.05, 1, 0, 0, 0});
  s["bodies"][0]["velocity"] = {0, 0.5, 0};
  s["bodies"][0]["angular_velocity"] = {-10, 0, 0};  // rolling without slip: w_x = -v_y / r
  const std::shared_ptr<const Model> m = model_of(s);
  EcpNcp ecp(*m);
  State st = initial_state(*m);
  for (int l = 1; l <= 100; ++l) {
    ASSERT_EQ(ecp.step(*m, st), Status::solved) << l << ": " << ecp.report().detail;
    EXPECT_LE(ecp.report().complementarity_residual, 1e-9) << l;
    EXPECT_NEAR(st.q[2], 0.05, 1e-9) << l;               // CM height = radius
    EXPECT_NEAR(ecp.ecp()[2], 0, 1e-9) << l;
    EXPECT_NEAR(ecp.ecp()[1], st.q[1], 1e-9) << l;       // the contact line is under the axis
    EXPECT_GE(ecp.lowest_vertex(), -1e-9) << l;
  }
  EXPECT_GT(st.q[1], 0.2);  // it rolled on in y (0.5 m/s, slowed only by rolling friction: none)
}

// ---- the desk of sec. 5.1 ---------------------------------------------------------------

TEST(EcpDesk, AgreesWithThePlanarSlidingReferenceWithin1e8Over4s) {
  const std::shared_ptr<const Model> m = model_of(desk_json());
  EcpNcp ecp(*m);
  PlanarSlidingReference ref(*m);
  State a = initial_state(*m), b = a;
  ASSERT_EQ(m->step.steps, 400);
  double worst_v = 0, worst_w = 0, worst_res = 0, worst_ecp = 0, worst_flat = 0;
  int iterations = 0, max_iterations = 0;
  bool slid = false, shifted = false;
  for (int l = 1; l <= 400; ++l) {
    ASSERT_EQ(ecp.step(*m, a), Status::solved) << "step " << l << ": " << ecp.report().detail;
    ASSERT_EQ(ref.step(*m, b), Status::solved) << "step " << l << ": " << ref.detail();
    worst_v = std::max({worst_v, std::abs(a.q[7] - b.q[7]), std::abs(a.q[8] - b.q[8])});
    worst_w = std::max(worst_w, std::abs(a.q[12] - b.q[12]));
    worst_res = std::max(worst_res, ecp.report().complementarity_residual);
    worst_ecp = std::max(worst_ecp, (ecp.ecp() - ref.ecp()).cwiseAbs().maxCoeff());
    // It stays flat: no vertical or tilting velocity, the CM at H, the ECP on the plane.
    worst_flat = std::max({worst_flat, std::abs(a.q[9]), std::abs(a.q[10]), std::abs(a.q[11]),
                           std::abs(a.q[2] - 0.45), std::abs(ecp.ecp()[2])});
    EXPECT_NEAR(ecp.p_n(), 15 * 9.8 * 0.01, 1e-9);
    // The ECP is in the support's hull, the 0.5 m square (no toppling).
    const Eigen::Vector3d r = ecp.ecp() - a.q.head<3>();
    EXPECT_LE(std::max(std::abs(r[0]), std::abs(r[1])), 0.25 * std::sqrt(2.0));
    slid = slid || ecp.sigma() > 1e-6;
    // The friction moment shifts the ECP by about H |F_t| / p_n (up to 0.45 * 0.22 = 0.1 m).
    shifted = shifted || std::hypot(r[0], r[1]) > 0.08;
    iterations += ecp.newton_iterations();
    // The first step starts cold; the others from the previous step's solution.
    if (l > 1) max_iterations = std::max(max_iterations, ecp.newton_iterations());
    EXPECT_EQ(ecp.k_attempts(), 1);
  }
  EXPECT_LE(worst_v, 1e-8);
  EXPECT_LE(worst_w, 1e-8);
  EXPECT_LE(worst_ecp, 1e-8);
  EXPECT_LE(worst_res, 1e-9);
  EXPECT_LE(worst_flat, 1e-9);
  EXPECT_TRUE(slid);
  EXPECT_TRUE(shifted);
  EXPECT_LE(max_iterations, 10);
  EXPECT_LE(iterations, 4 * 400);
  RecordProperty("worst_v_difference", std::to_string(worst_v));
  RecordProperty("worst_w_difference", std::to_string(worst_w));
  RecordProperty("mean_newton_iterations", std::to_string(iterations / 400.0));
  std::cout << "desk: |dv| <= " << worst_v << ", |dw_z| <= " << worst_w << ", |d ecp| <= " << worst_ecp
            << ", worst residual " << worst_res << ", Newton iterations " << iterations / 400.0 << " mean, "
            << max_iterations << " max after the first step\n";
}

TEST(EcpDesk, TheEcpShiftIsTheMomentBalanceOfTheDerivation) {
  // One step by hand: r_x = (r_z p_t + A_y) / p_n with A_y the applied moment impulse (the
  // desk's inertia is diagonal and it does not tilt), r_z = -0.45.
  const std::shared_ptr<const Model> m = model_of(desk_json());
  EcpNcp ecp(*m);
  State s = initial_state(*m);
  const Eigen::Matrix<double, 6, 1> pe = ecp_external_impulse(*m, s.q, 0, 0.01);
  ASSERT_EQ(ecp.step(*m, s), Status::solved);
  const Eigen::Vector3d r = ecp.ecp() - Eigen::Vector3d(s.q[0], s.q[1], s.q[2]);
  EXPECT_NEAR(r[0], (-0.45 * ecp.p_t() + pe[4]) / ecp.p_n(), 1e-12);
  EXPECT_NEAR(r[1], (-0.45 * ecp.p_o() - pe[3]) / ecp.p_n(), 1e-12);
  // The applied force (f_x, f_y) at 0.05 m above the CM has the moment (-0.05 f_y, 0.05 f_x).
  EXPECT_NEAR(pe[3], -0.05 * (22.5 + 22.5 * std::cos(2 * M_PI * 0.005)) * 0.01, 1e-12);
  EXPECT_NEAR(pe[4], 0.05 * (22.5 + 22.5 * std::sin(2 * M_PI * 0.005)) * 0.01, 1e-12);
}

// ---- falling, tipping -------------------------------------------------------------------

TEST(EcpBox, FallsLandsAndRestsWithoutPenetration) {
  const std::shared_ptr<const Model> m = model_of(box_scene({0, 0, 0.045, 1, 0, 0, 0}));  // 2 cm up
  EcpNcp ecp(*m);
  State s = initial_state(*m);
  int airborne = 0;
  for (int l = 1; l <= 60; ++l) {
    ASSERT_EQ(ecp.step(*m, s), Status::solved) << l << ": " << ecp.report().detail;
    EXPECT_GE(ecp.lowest_vertex(), -1e-9);
    EXPECT_LE(ecp.report().complementarity_residual, 1e-9);
    if (ecp.p_n() == 0) {
      ++airborne;
      // Separated: a1 on the body above a2 on the plane (eq. (13)), a2 on the plane.
      EXPECT_GT(ecp.ecp()[2], ecp.ecp_on_plane()[2]);
    }
    EXPECT_NEAR(ecp.ecp_on_plane()[2], 0, 1e-12);
  }
  EXPECT_GE(airborne, 3);  // 2 cm of free fall take about 0.064 s
  EXPECT_NEAR(s.q[2], 0.025, 1e-9);  // resting on its face
  EXPECT_NEAR(s.q[9], 0, 1e-9);
  EXPECT_NEAR(ecp.p_n(), 9.8 * 0.01, 1e-9);
}

TEST(EcpBox, TippedOnAnEdgeFallsFlatThroughPointLineAndFaceContact) {
  // Rotated 25 degrees about x and resting on its lowest edge: gravity tips it back onto a
  // face. The ECP is on the edge while it pivots, then anywhere in the face.
  const double th = 25 * M_PI / 180;
  const double b = 0.05, c = 0.025;
  const double z = b * std::sin(th) + c * std::cos(th);  // lowest edge on the plane
  const std::shared_ptr<const Model> m =
      model_of(box_scene({0, 0, z, std::cos(th / 2), std::sin(th / 2), 0, 0}));
  EcpNcp ecp(*m);
  State s = initial_state(*m);
  for (int l = 1; l <= 100; ++l) {
    ASSERT_EQ(ecp.step(*m, s), Status::solved) << l << ": " << ecp.report().detail;
    EXPECT_GE(ecp.lowest_vertex(), -1e-9) << l;
    EXPECT_LE(ecp.report().complementarity_residual, 1e-9) << l;
    EXPECT_NEAR(ecp.ecp()[2], 0, 1e-9) << l;  // in contact throughout (plastic impacts)
  }
  EXPECT_NEAR(s.q[2], c, 1e-6);             // flat on its face
  EXPECT_NEAR(std::abs(s.q[3]), 1, 1e-6);   // orientation back to identity (up to sign)
  EXPECT_LE(s.q.tail<6>().cwiseAbs().maxCoeff(), 1e-6);
}

// ---- scene input ------------------------------------------------------------------------

/// Parsing fails at `path` with a message containing `what`.
::testing::AssertionResult Fails(const json& j, const std::string& path, const std::string& what) {
  try {
    parse_scene(j.dump(), "test");
  } catch (const SceneError& e) {
    const std::string msg = e.what();
    if (e.path() == path && msg.find(what) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "failed with \"" << msg << "\" at " << e.path();
  }
  return ::testing::AssertionFailure() << "parsed";
}

json with(json j, const std::string& pointer, const json& value) {
  j[json::json_pointer(pointer)] = value;
  return j;
}

TEST(EcpScene, BadInputNamesTheField) {
  const json s = box_scene({0, 0, 0.025, 1, 0, 0, 0});
  EXPECT_NO_THROW(parse_scene(s.dump()));
  EXPECT_TRUE(Fails(with(s, "/bodies/0/pose3/2", 0.02), "bodies[0].pose3", "starts below the plane"));
  EXPECT_TRUE(Fails(with(s, "/bodies/0/mass", 0), "bodies[0].mass", "must be > 0"));
  EXPECT_TRUE(Fails(with(s, "/bodies/0/inertia/1", -1), "bodies[0].inertia", "must be > 0"));
  EXPECT_TRUE(Fails(with(s, "/bodies/0/inertia", {1, 1, 5}), "bodies[0].inertia", "triangle inequality"));
  EXPECT_TRUE(Fails(with(s, "/bodies/0/inertia", {{1, 0, 0}, {0, -1, 0}, {0, 0, 1}}), "bodies[0].inertia",
                    "positive definite"));
  EXPECT_TRUE(Fails(with(s, "/bodies/0/pose3", {0, 0, 0.025, 1, 0.1, 0, 0}), "bodies[0].pose3",
                    "must be a unit quaternion"));
  EXPECT_TRUE(Fails(with(s, "/bodies/0/hull/vertices", {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}),
                    "bodies[0].hull.vertices", "coplanar"));
  EXPECT_TRUE(Fails(with(s, "/bodies/0/pose", {0, 0, 0}), "bodies[0].pose", "unknown field"));
  EXPECT_TRUE(Fails(with(s, "/joints", json::array()), "joints", "has no joints"));
  EXPECT_TRUE(Fails(with(s, "/contacts", {{"friction", 0.3}}), "contacts", "world.support_friction"));
  EXPECT_TRUE(Fails(with(s, "/bodies/1", s["bodies"][0]), "bodies", "exactly one body"));
  json no_er = s;
  no_er["model"].erase("e_r");
  EXPECT_TRUE(Fails(no_er, "model.e_r", "missing"));
  EXPECT_TRUE(Fails(with(s, "/model/e_t", 0), "model.e_t", "must be > 0"));
  EXPECT_TRUE(Fails(with(s, "/loads", {{{"body", "desk"}}}), "loads[0].body", "no body named \"desk\""));
  EXPECT_TRUE(Fails(with(s, "/loads", {{{"body", "box"}, {"force", {1, 2}}}}), "loads[0].force", "3 components"));
  EXPECT_TRUE(Fails(with(s, "/model/formulation", "trinkle_lcp"), "model.formulation",
                    "does not apply in a body_on_plane world"));
  // A slightly unnormalised quaternion (rounding) is normalised.
  const std::shared_ptr<const Model> m = model_of(with(s, "/bodies/0/pose3", {0, 0, 0.025, 1 + 1e-9, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(m->body3->initial[3], 1.0);
}

TEST(EcpStepper, BadStateIsRefusedAndLeftAlone) {
  const std::shared_ptr<const Model> m = model_of(box_scene({0, 0, 0.025, 1, 0, 0, 0}));
  EcpNcp ecp(*m);
  State s = initial_state(*m);
  s.q[0] = NAN;
  const Eigen::VectorXd before = s.q;
  EXPECT_EQ(ecp.step(*m, s), Status::bad_input);
  EXPECT_FALSE(ecp.report().detail.empty());
  EXPECT_TRUE(s.q.segment(1, 12) == before.segment(1, 12));
  EXPECT_EQ(s.step, 0);
  // The reference refuses a tilted body.
  PlanarSlidingReference ref(*m);
  State t = initial_state(*m);
  t.q[11] = 0.1;
  EXPECT_EQ(ref.step(*m, t), Status::bad_input);
  EXPECT_NE(ref.detail().find("flat"), std::string::npos);
}

// ---- quasistep run ----------------------------------------------------------------------

TEST(EcpCli, RunWritesTheThirteenStateColumnsThenTheEcpAndNormalImpulse) {
  const std::string out = ::testing::TempDir() + "/ecp_desk_traj.csv";
  std::vector<const char*> argv = {"quasistep", "run", kDesk.c_str(), "--steps", "20", "--out", out.c_str()};
  std::ostringstream o, e;
  ASSERT_EQ(cli::main(static_cast<int>(argv.size()), argv.data(), o, e), cli::kOk) << e.str();
  std::ifstream in(out);
  std::string provenance, header, row;
  std::getline(in, provenance);
  std::getline(in, header);
  EXPECT_EQ(header, "step,t,desk.x,desk.y,desk.z,desk.qw,desk.qx,desk.qy,desk.qz,desk.vx,desk.vy,desk.vz,desk.wx,"
                    "desk.wy,desk.wz,ecp_x,ecp_y,ecp_z,p_n");
  int rows = 0;
  while (std::getline(in, row)) ++rows;
  EXPECT_EQ(rows, 21);
  EXPECT_NE(e.str().find("20 of 20 steps of ecp_ncp"), std::string::npos) << e.str();
}

}  // namespace
}  // namespace qs::ecp_ncp_test

// Forward kinematics by hand, and the generalized external force checked by virtual work.
#include "quasistep/core/kinematics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "quasistep/core/scene.hpp"

namespace qs::kinematics_test {
namespace {

constexpr const char* kArm = R"({
  "format": 1,
  "world": {"type": "vertical", "gravity": 10},
  "model": {"formulation": "ucp"},
  "bodies": [
    {"name": "ball", "kind": "free", "mass": 2, "dofs": ["x", "y", "theta"], "pose": [1, 2, 0.3],
     "com": [0.1, 0], "shapes": [{"type": "disk", "radius": 0.1}]},
    {"name": "upper", "kind": "linked", "mass": 1.5, "com": [0.5, 0], "shapes": [{"type": "segment", "a": [0, 0], "b": [1, 0]}]},
    {"name": "slider", "kind": "linked", "mass": 0.5, "shapes": [{"type": "point"}]},
    {"name": "lower", "kind": "linked", "mass": 0.25, "com": [0.4, 0.1], "shapes": [{"type": "segment", "a": [0, 0], "b": [0.8, 0]}]}
  ],
  "joints": [
    {"name": "shoulder", "type": "revolute", "parent": "world", "child": "upper", "origin": [0, 1, 0.2], "position": 0.5},
    {"name": "extend", "type": "prismatic", "parent": "upper", "child": "slider", "origin": [1, 0, 0], "axis": [0, 2], "position": 0.3},
    {"name": "elbow", "type": "revolute", "parent": "slider", "child": "lower", "origin": [0, 0, -0.1], "position": -0.7, "control": "effort"}
  ],
  "contacts": {"friction": 0.5},
  "loads": [
    {"body": "ball", "force": [3, -1], "torque": 0.5, "point": [0, 0.1]},
    {"body": "lower", "force": [{"values": [1]}, 0], "point": [0.8, 0], "frame": "body"}
  ],
  "commands": {"elbow": {"effort": 1.25}}
})";

TEST(Kinematics, ForwardKinematicsMatchesHandComputation) {
  const Scene scene = parse_scene(kArm);
  const Model& m = *scene.model;
  ASSERT_EQ(m.n_q(), 6);  // ball x, y, theta, elbow (effort, unactuated), shoulder, extend
  EXPECT_EQ(m.dofs[3].name, "elbow");
  EXPECT_EQ(m.dofs[4].name, "shoulder");
  const Eigen::VectorXd q = initial_state(m).q;
  std::vector<Pose2<double>> body(m.bodies.size()), joint(m.joints.size());
  forward_kinematics(m, q.data(), body.data(), joint.data());

  // upper: origin (0, 1) rotated by 0.2 + 0.5
  const double a1 = 0.7;
  EXPECT_NEAR(body[1].translation.x, 0.0, 1e-15);
  EXPECT_NEAR(body[1].translation.y, 1.0, 1e-15);
  EXPECT_NEAR(body[1].angle(), a1, 1e-15);
  // slider: 1 along upper's x, then 0.3 along the axis (0, 2), normalized to (0, 1)
  const double sx = std::cos(a1) - 0.3 * std::sin(a1), sy = 1 + std::sin(a1) + 0.3 * std::cos(a1);
  EXPECT_NEAR(body[2].translation.x, sx, 1e-15);
  EXPECT_NEAR(body[2].translation.y, sy, 1e-15);
  // lower: at the slider, angle a1 - 0.1 - 0.7
  EXPECT_NEAR(body[3].translation.x, sx, 1e-15);
  EXPECT_NEAR(body[3].angle(), a1 - 0.8, 1e-15);
  EXPECT_NEAR(joint[2].angle(), a1 - 0.1, 1e-15);
}

TEST(Kinematics, GeneralizedForceDoesTheVirtualWorkOfTheLoads) {
  const Scene scene = parse_scene(kArm);
  const Model& m = *scene.model;
  const Eigen::VectorXd q0 = initial_state(m).q;
  std::vector<Pose2<double>> body(m.bodies.size()), joint(m.joints.size());
  forward_kinematics(m, q0.data(), body.data(), joint.data());
  std::vector<double> tau(m.n_q());
  generalized_external_force(m, WorldParams(m), body.data(), joint.data(), 0.0, tau.data());

  // Potential-free check: tau_k = sum over loads of f . dp/dq_k (+ torques), by central
  // differences of the application points with the forces held fixed.
  const double eps = 1e-6;
  auto points = [&](const Eigen::VectorXd& q) {
    std::vector<Pose2<double>> b(m.bodies.size()), j(m.joints.size());
    forward_kinematics(m, q.data(), b.data(), j.data());
    return b;
  };
  for (int k = 0; k < m.n_q(); ++k) {
    Eigen::VectorXd qp = q0, qm = q0;
    qp[k] += eps;
    qm[k] -= eps;
    const auto bp = points(qp), bm = points(qm);
    auto d = [&](int b, Vec2<double> local) {
      const Vec2<double> a = bp[b].apply(local), c = bm[b].apply(local);
      return Vec2<double>{(a.x - c.x) / (2 * eps), (a.y - c.y) / (2 * eps)};
    };
    auto dtheta = [&](int b) { return (bp[b].angle() - bm[b].angle()) / (2 * eps); };
    double expected = 0;
    // gravity, g = 10 along -y, at each body's center of mass
    for (int b = 0; b < 4; ++b) expected += -m.bodies[b].mass * 10 * d(b, m.bodies[b].com).y;
    // load 1: world force (3, -1) at (0, 0.1) on the ball, torque 0.5
    expected += dot(Vec2<double>{3, -1}, d(0, {0, 0.1})) + 0.5 * dtheta(0);
    // load 2: body-frame force (1, 0) at the tip of the lower link
    expected += dot(body[3].rotate({1, 0}), d(3, {0.8, 0}));
    // the elbow's effort
    if (m.dofs[k].name == "elbow") expected += 1.25;
    EXPECT_NEAR(tau[k], expected, 1e-8) << m.dofs[k].name;
  }
}

TEST(Kinematics, TabletopHasNoInPlaneGravity) {
  const Scene scene = parse_scene(R"({
    "format": 1, "world": {"type": "tabletop", "support_friction": 0.4},
    "model": {"formulation": "halm_posa_lcp"},
    "bodies": [{"name": "puck", "kind": "free", "mass": 3, "shapes": [{"type": "disk", "radius": 0.1}]}]})");
  const Model& m = *scene.model;
  const Eigen::VectorXd q = initial_state(m).q;
  std::vector<Pose2<double>> body(1);
  forward_kinematics(m, q.data(), body.data(), static_cast<Pose2<double>*>(nullptr));
  std::vector<double> tau(3, 7.0);
  generalized_external_force(m, WorldParams(m), body.data(), nullptr, 0.0, tau.data());
  for (double v : tau) EXPECT_EQ(v, 0.0);
}

}  // namespace
}  // namespace qs::kinematics_test

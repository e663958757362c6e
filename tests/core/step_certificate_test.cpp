// LP certificates that a step has no solution (quasistep/core/step_certificate.hpp): hand-built
// contact configurations whose Farkas multipliers / virtual displacements are known in
// closed form, the feasible counterparts, the empty sizes, and the squeeze of Pang & Tedrake 2018
// command (29) on the gripper, where Trinkle's LCP has no solution.
#include "quasistep/core/step_certificate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <numbers>
#include <string>
#include <vector>

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/kinematics.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/formulations/trinkle_lcp/trinkle_lcp.hpp"

namespace qs::step_certificate_test {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using Kind = StepCertificate::Kind;

constexpr double kTol = 1e-12;
constexpr double kMgh = 1.0 * 9.81 * 0.01;  // weight impulse of 1 kg over h = 0.01 s

MatrixXd rows(int r, int c, std::initializer_list<double> v) {
  MatrixXd m(r, c);
  auto it = v.begin();
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) m(i, j) = *it++;
  return m;
}

VectorXd vec(std::initializer_list<double> v) {
  VectorXd out(static_cast<Eigen::Index>(v.size()));
  int i = 0;
  for (double x : v) out[i++] = x;
  return out;
}

// ---- (a) penetration ------------------------------------------------------------------

TEST(StepCertificate, PointSqueezedBetweenTwoWalls) {
  // A point free in x between two walls, each driven 1 mm toward it. The normals point from
  // each wall (A) into the point (B): J = [+1; -1]. Whatever dx is, gap_left + gap_right =
  // offset_1 + offset_2 = -2 mm: y = (1/2, 1/2), and one gap is at most -1 mm.
  StepCertifier cert_lp(4, 3);
  StepCertificate cert;
  const MatrixXd J = rows(2, 1, {1, -1});
  ASSERT_EQ(cert_lp.penetration(J, vec({-0.001, -0.001}), cert), Status::infeasible);
  EXPECT_EQ(cert.kind, Kind::penetration);
  ASSERT_EQ(cert.y.size(), 2);
  EXPECT_NEAR(cert.y[0], 0.5, kTol);
  EXPECT_NEAR(cert.y[1], 0.5, kTol);
  EXPECT_NEAR(cert.gap, 0.001, kTol);
  EXPECT_TRUE(verify_penetration_certificate(J, vec({-0.001, -0.001}), cert.y));
  // Unequal pushes: the multipliers are the same (J'y = 0 fixes them), the gap is the mean.
  ASSERT_EQ(cert_lp.penetration(J, vec({-0.001, -0.003}), cert), Status::infeasible);
  EXPECT_NEAR(cert.y[0], 0.5, kTol);
  EXPECT_NEAR(cert.y[1], 0.5, kTol);
  EXPECT_NEAR(cert.gap, 0.002, kTol);
  const std::vector<std::string> names{"left wall", "right wall"};
  EXPECT_EQ(cert.describe(names),
            "no displacement of the free DOFs keeps contacts {left wall, right wall} non-penetrating: one of them "
            "penetrates at least 0.002 m whatever the free DOFs do (Farkas multipliers 0.5, 0.5)");
}

TEST(StepCertificate, PointBetweenWallsWithRoomToMoveIsNotCertified) {
  StepCertifier cert_lp(4, 3);
  StepCertificate cert;
  const MatrixXd J = rows(2, 1, {1, -1});
  // The left wall advances 1 mm, the right one is 3 mm away: dx in [1, 3] mm works.
  EXPECT_EQ(cert_lp.penetration(J, vec({-0.001, 0.003}), cert), Status::solved);
  EXPECT_EQ(cert.kind, Kind::none);
  // Exactly enough room: dx = 1 mm touches both (the LP is feasible at a single point).
  EXPECT_EQ(cert_lp.penetration(J, vec({-0.001, 0.001}), cert), Status::solved);
  EXPECT_EQ(cert.kind, Kind::none);
  // A certificate for the wrong data is rejected by the independent check.
  EXPECT_FALSE(verify_penetration_certificate(J, vec({-0.001, 0.003}), vec({0.5, 0.5})));
  EXPECT_FALSE(verify_penetration_certificate(J, vec({-0.001, -0.001}), vec({0.6, 0.4})));   // J'y != 0
  EXPECT_FALSE(verify_penetration_certificate(J, vec({-0.001, -0.001}), vec({-0.5, -0.5})));  // y < 0
}

TEST(StepCertificate, TwoFingersClosingOnEachOther) {
  // Two actuated fingers and no free DOF (n_u = 0): the contact's offset is all there is.
  // Left finger (A) moves +1 mm, right finger (B) -1 mm, normal +x from A to B, so
  // J_n^a = [-1, +1] and offset = phi + J_n^a dqa_bar = 0.5 mm - 2 mm.
  StepCertifier cert_lp(4, 3);
  StepCertificate cert;
  const MatrixXd J(1, 0);
  const double offset = 0.0005 + (-1.0 * 0.001 + 1.0 * -0.001);
  ASSERT_EQ(cert_lp.penetration(J, vec({offset}), cert), Status::infeasible);
  ASSERT_EQ(cert.y.size(), 1);
  EXPECT_EQ(cert.y[0], 1.0);
  EXPECT_NEAR(cert.gap, 0.0015, kTol);
  EXPECT_EQ(cert.describe(), "no displacement of the free DOFs keeps contacts {0} non-penetrating: one of them "
                             "penetrates at least 0.0015 m whatever the free DOFs do (Farkas multipliers 1)");
  // Closing by less than the gap is fine.
  EXPECT_EQ(cert_lp.penetration(J, vec({0.0005 - 0.0004}), cert), Status::solved);
}

/// A 2 m x 1 m block (DOFs x, y, theta about its center) with its left side against a wall
/// (corners (-1, -0.5) and (-1, 0.5)) and a pusher on its right side at (1, py), both with
/// the normal along the wall's normal. Rows of J_n^u: n . (v + omega x p).
MatrixXd block_against_wall(double py) {
  return rows(3, 3, {1, 0, 0.5,      // wall, lower corner: n = +x, p = (-1, -0.5)
                     1, 0, -0.5,     // wall, upper corner: p = (-1, 0.5)
                     -1, 0, py});    // pusher (A) into the block (B): n = -x, p = (1, py)
}

TEST(StepCertificate, BlockPushedAgainstAWall) {
  StepCertifier cert_lp(4, 3);
  StepCertificate cert;
  // The pusher advances 1 mm through its line of action at the block's center: the wall's
  // corners share its force equally, y = (1/4, 1/4, 1/2), and the best dq_u (dx = -0.5 mm)
  // leaves all three contacts 0.5 mm deep.
  const VectorXd offset = vec({0, 0, -0.001});
  ASSERT_EQ(cert_lp.penetration(block_against_wall(0), offset, cert), Status::infeasible);
  EXPECT_NEAR(cert.y[0], 0.25, kTol);
  EXPECT_NEAR(cert.y[1], 0.25, kTol);
  EXPECT_NEAR(cert.y[2], 0.5, kTol);
  EXPECT_NEAR(cert.gap, 0.0005, kTol);
  // Off center (py = 0.3): the lever rule, y_1 + y_2 = y_3 and 0.5 (y_1 - y_2) + 0.3 y_3 = 0,
  // puts 4/5 of the pusher's share on the upper corner, near its line of action.
  ASSERT_EQ(cert_lp.penetration(block_against_wall(0.3), offset, cert), Status::infeasible);
  EXPECT_NEAR(cert.y[0], 0.1, kTol);
  EXPECT_NEAR(cert.y[1], 0.4, kTol);
  EXPECT_NEAR(cert.y[2], 0.5, kTol);
  EXPECT_NEAR(cert.gap, 0.0005, kTol);
  // With 2 mm between the block and the wall, the block just moves.
  EXPECT_EQ(cert_lp.penetration(block_against_wall(0.3), vec({0.002, 0.002, -0.001}), cert), Status::solved);
  EXPECT_EQ(cert.kind, Kind::none);
}

// ---- (b) equilibrium ------------------------------------------------------------------

TEST(StepCertificate, NoContactUnderGravity) {
  // A free body (x, y, theta) and no contact: nothing balances its weight; v = down.
  StepCertifier cert_lp(4, 3);
  StepCertificate cert;
  const MatrixXd none(0, 3);
  const VectorXd no_mu(0);
  ASSERT_EQ(cert_lp.equilibrium(none, none, no_mu, vec({0, -kMgh, 0}), cert), Status::infeasible);
  EXPECT_EQ(cert.kind, Kind::equilibrium);
  EXPECT_EQ(cert.y, vec({0, -1, 0}));
  EXPECT_NEAR(cert.gap, kMgh, kTol);
  const std::vector<std::string> dofs{"block.x", "block.y", "block.theta"};
  EXPECT_EQ(cert.describe({}, dofs),
            "no contact impulse in the friction cones balances the load: along the virtual displacement (block.y: -1) "
            "every contact opens at least mu times as fast as it slides, so cannot resist, and the load does positive "
            "work; unbalanced impulse at least 0.0981 N s");
  EXPECT_NE(cert.describe().find("(dq_u[1]: -1)"), std::string::npos) << cert.describe();
  // No load, no contact: balanced by P = (empty).
  EXPECT_EQ(cert_lp.equilibrium(none, none, no_mu, vec({0, 0, 0}), cert), Status::solved);
  EXPECT_EQ(cert.kind, Kind::none);
}

/// The block of block_against_wall resting on a floor on its two lower corners (-1, -0.5)
/// and (1, -0.5): n = +y, t = perp(n) = -x.
struct FloorContacts {
  MatrixXd Jn = rows(2, 3, {0, 1, -1, 0, 1, 1});
  MatrixXd Jt = rows(2, 3, {-1, 0, -0.5, -1, 0, -0.5});
  VectorXd mu = vec({0.5, 0.5});
};

TEST(StepCertificate, BlockOnAFlatFloor) {
  StepCertifier cert_lp(4, 3);
  StepCertificate cert;
  const FloorContacts f;
  EXPECT_EQ(cert_lp.equilibrium(f.Jn, f.Jt, f.mu, vec({0, -kMgh, 0}), cert), Status::solved);
  EXPECT_EQ(cert.kind, Kind::none);
  // A sideways push of 0.4 m g is held by friction (mu = 0.5) ...
  EXPECT_EQ(cert_lp.equilibrium(f.Jn, f.Jt, f.mu, vec({0.4 * kMgh, -kMgh, 0}), cert), Status::solved);
  // ... one of 0.6 m g is not: the certificate moves the block with the push.
  ASSERT_EQ(cert_lp.equilibrium(f.Jn, f.Jt, f.mu, vec({0.6 * kMgh, -kMgh, 0}), cert), Status::infeasible);
  EXPECT_TRUE(verify_equilibrium_certificate(f.Jn, f.Jt, f.mu, vec({0.6 * kMgh, -kMgh, 0}), cert.y));
  EXPECT_GT(cert.y[0], 0);
  EXPECT_GT(cert.gap, 0);
  // The load pulls the block off the floor: v = up works for any mu.
  EXPECT_EQ(cert_lp.equilibrium(f.Jn, f.Jt, f.mu, vec({0, kMgh, 0}), cert), Status::infeasible);
  EXPECT_GT(cert.y[1], 0);
}

/// A point mass (x, y) on a slope rising to the right at angle `a`: n = (-sin a, cos a),
/// t = perp(n) = (-cos a, -sin a) points downhill.
struct Slope {
  explicit Slope(double a) : Jn(rows(1, 2, {-std::sin(a), std::cos(a)})), Jt(rows(1, 2, {-std::cos(a), -std::sin(a)})) {}
  Slope(double nx, double ny) {
    const double s = std::hypot(nx, ny);
    Jn = rows(1, 2, {nx / s, ny / s});
    Jt = rows(1, 2, {-ny / s, nx / s});
  }
  MatrixXd Jn, Jt;
};

TEST(StepCertificate, SlopeSteeperThanTheFrictionAngle) {
  StepCertifier cert_lp(4, 3);
  StepCertificate cert;
  const double a = std::numbers::pi / 6, mu = 0.5;  // tan(30 deg) = 0.577 > 0.5
  const Slope s(a);
  const VectorXd load = vec({0, -kMgh});
  ASSERT_EQ(cert_lp.equilibrium(s.Jn, s.Jt, vec({mu}), load, cert), Status::infeasible);
  // v = cos(b) t + sin(b) n: downhill, lifted off the slope by an angle b. It must open the
  // contact at least mu times as fast as it slides (tan b >= mu) and gravity must do positive
  // work on it (m g sin(a - b) > 0): b in [atan mu, a).
  const double along = s.Jt.row(0).dot(cert.y), off = s.Jn.row(0).dot(cert.y);
  EXPECT_NEAR(std::hypot(along, off), 1.0, kTol);
  EXPECT_GT(along, 0);  // downhill
  const double b = std::atan2(off, along);
  EXPECT_GE(b, std::atan(mu) - 1e-12);
  EXPECT_LT(b, a);
  EXPECT_NEAR(cert.gap, kMgh * std::sin(a - b), kTol);
  // The best bound is sin(a - atan mu) m g h: the distance from the load to the cone.
  EXPECT_LE(cert.gap, kMgh * std::sin(a - std::atan(mu)) + kTol);
  EXPECT_TRUE(verify_equilibrium_certificate(s.Jn, s.Jt, vec({mu}), load, cert.y));
  // Frictionless, any slope slides.
  EXPECT_EQ(cert_lp.equilibrium(Slope(0.01).Jn, Slope(0.01).Jt, vec({0.0}), load, cert), Status::infeasible);
  // Gentler than atan(mu): held.
  EXPECT_EQ(cert_lp.equilibrium(Slope(0.4).Jn, Slope(0.4).Jt, vec({mu}), load, cert), Status::solved);
}

TEST(StepCertificate, SlopeAtExactlyTheFrictionBound) {
  // Slope with tan a = mu (n = (-mu, 1) / |.|): the impulse sits on the edge of the cone.
  StepCertifier cert_lp(4, 3);
  StepCertificate cert;
  const double mu = 0.5;
  const VectorXd load = vec({0, -kMgh});
  const Slope edge(-mu, 1.0);
  EXPECT_EQ(cert_lp.equilibrium(edge.Jn, edge.Jt, vec({mu}), load, cert), Status::solved);
  EXPECT_EQ(cert.kind, Kind::none);
  // One part in a million steeper is already proven to slide.
  const Slope steeper(-mu * (1 + 1e-6), 1.0);
  ASSERT_EQ(cert_lp.equilibrium(steeper.Jn, steeper.Jt, vec({mu}), load, cert), Status::infeasible);
  EXPECT_GT(cert.gap, 0);
  EXPECT_LT(cert.gap, 1e-7);
}

// ---- sizes and inputs -----------------------------------------------------------------

TEST(StepCertificate, EmptySizes) {
  StepCertifier cert_lp(4, 3);
  StepCertificate cert;
  // No contact: nothing can penetrate, with or without free DOFs.
  EXPECT_EQ(cert_lp.penetration(MatrixXd(0, 3), VectorXd(0), cert), Status::solved);
  EXPECT_EQ(cert_lp.penetration(MatrixXd(0, 0), VectorXd(0), cert), Status::solved);
  EXPECT_EQ(cert.kind, Kind::none);
  // No free DOF: nothing to balance, whatever the contacts.
  EXPECT_EQ(cert_lp.equilibrium(MatrixXd(2, 0), MatrixXd(2, 0), vec({0.5, 0.5}), VectorXd(0), cert), Status::solved);
  EXPECT_EQ(cert_lp.equilibrium(MatrixXd(0, 0), MatrixXd(0, 0), VectorXd(0), VectorXd(0), cert), Status::solved);
  // No contact: infeasible iff there is a load; any load direction is its own certificate.
  ASSERT_EQ(cert_lp.equilibrium(MatrixXd(0, 2), MatrixXd(0, 2), VectorXd(0), vec({3e-30, -4e-30}), cert),
            Status::infeasible);
  EXPECT_NEAR(cert.y[0], 0.6, kTol);
  EXPECT_NEAR(cert.y[1], -0.8, kTol);
  EXPECT_NEAR(cert.gap, 5e-30, 1e-42);
  // A certifier with zero capacity handles the trivial cases.
  StepCertifier empty(0, 0);
  EXPECT_EQ(empty.penetration(MatrixXd(0, 0), VectorXd(0), cert), Status::solved);
  EXPECT_EQ(empty.equilibrium(MatrixXd(0, 0), MatrixXd(0, 0), VectorXd(0), VectorXd(0), cert), Status::solved);
}

TEST(StepCertificate, BadInput) {
  StepCertifier cert_lp(2, 2);
  StepCertificate cert;
  EXPECT_EQ(cert_lp.penetration(MatrixXd::Zero(2, 1), VectorXd::Zero(3), cert), Status::bad_input);
  EXPECT_EQ(cert_lp.penetration(MatrixXd::Zero(3, 1), VectorXd::Zero(3), cert), Status::bad_input);  // capacity
  EXPECT_EQ(cert_lp.penetration(MatrixXd::Zero(1, 3), VectorXd::Zero(1), cert), Status::bad_input);  // capacity
  EXPECT_EQ(cert_lp.penetration(rows(1, 1, {NAN}), vec({0}), cert), Status::bad_input);
  const MatrixXd J = rows(1, 2, {0, 1});
  EXPECT_EQ(cert_lp.equilibrium(J, J, vec({-0.1}), vec({0, -1}), cert), Status::bad_input);  // mu < 0
  EXPECT_EQ(cert_lp.equilibrium(J, J, vec({0.5}), vec({0, -1, 0}), cert), Status::bad_input);
  EXPECT_EQ(cert_lp.equilibrium(J, MatrixXd::Zero(2, 2), vec({0.5}), vec({0, -1}), cert), Status::bad_input);
  EXPECT_EQ(cert_lp.equilibrium(J, J, vec({0.5}), vec({0, INFINITY}), cert), Status::bad_input);
  EXPECT_EQ(cert.kind, Kind::none);
}

// ---- a real step: the gripper squeezing the cylinder (Pang & Tedrake 2018 command 29) ---------------

TEST(StepCertificate, GripperSqueezeStepIsProvenToPenetrate) {
  // The squeeze of tests/core/trinkle_lcp_test.cpp: command (29) keeps both fingers closing
  // at 0.1 m/s after they touch the resting cylinder at step 20. Step 21 drives each finger
  // 1 mm into it from either side; the cylinder (free in x, y) cannot make room for both.
  std::string text;
  {
    std::ifstream in(std::string(QUASISTEP_SOURCE_DIR) + "/examples/pang_tedrake_gripper.json");
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  for (const auto& [from, to] : {std::pair<std::string, std::string>{
                                     R"("x_l": {"velocity": {"breaks": [0.2], "values": [0.1, 0.0]}})",
                                     R"("x_l": {"velocity": 0.1})"},
                                 {R"("x_r": {"velocity": {"breaks": [0.2], "values": [-0.1, 0.0]}})",
                                  R"("x_r": {"velocity": -0.1})"}}) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  }
  const Scene scene = parse_scene(text);
  const Model& m = *scene.model;
  State s = initial_state(m);
  TrinkleLcp stepper(m);
  for (int l = 1; l <= 20; ++l) ASSERT_EQ(stepper.step(m, s), Status::solved) << l;
  State probe = s;
  ASSERT_NE(stepper.step(m, probe), Status::solved);  // Lemke gives up: no proof yet

  // The data of step 21 as core/formulations/trinkle_lcp/trinkle_lcp.cpp poses it: active slots, J^u, offsets, h tau_u.
  const double h = m.step.h, t_mid = s.t + 0.5 * h;
  ContactWorkspace ws(m);
  ws.evaluate(m, s.q.data());
  VectorXd dqa(m.n_a), tau(m.n_q());
  for (const Joint& j : m.joints)
    if (j.control == Control::velocity) dqa[j.dof - m.n_u] = h * j.command(t_mid);
  generalized_external_force(m, WorldParams(m), ws.body_pose.data(), ws.joint_frame.data(), t_mid, tau.data());
  std::vector<int> slot;
  std::vector<std::string> names;
  for (int i = 0; i < m.n_slots(); ++i)
    if (ws.active(m, i)) {
      slot.push_back(i);
      names.push_back(m.pair_name(m.slots[i].pair));
    }
  const int nc = static_cast<int>(slot.size());
  ASSERT_EQ(nc, 3);  // left finger, right finger, ground (slot order)
  MatrixXd Jn(nc, m.n_u), Jt(nc, m.n_u);
  VectorXd offset(nc), mu(nc);
  for (int c = 0; c < nc; ++c) {
    const int i = slot[c];
    Jn.row(c) = ws.J_n_u(m).row(i);
    Jt.row(c) = ws.J_t_u(m).row(i);
    offset[c] = ws.frame[i].phi + ws.J_n_a(m).row(i).dot(dqa);
    mu[c] = m.pairs[m.slots[i].pair].friction;
  }
  EXPECT_NEAR(offset[0], -0.001, 1e-12);
  EXPECT_NEAR(offset[1], -0.001, 1e-12);
  EXPECT_NEAR(offset[2], 0.0, 1e-12);

  StepCertifier cert_lp(m.n_slots(), m.n_u);
  StepCertificate cert;
  ASSERT_EQ(cert_lp.penetration(Jn, offset, cert), Status::infeasible);
  // J'y = 0 on (x_c, y_c): the fingers' equal and opposite x rows, the ground's y row unused.
  EXPECT_NEAR(cert.y[0], 0.5, kTol);
  EXPECT_NEAR(cert.y[1], 0.5, kTol);
  EXPECT_EQ(cert.y[2], 0.0);
  EXPECT_NEAR(cert.gap, 0.001, 1e-12);
  EXPECT_EQ(cert.describe(names),
            "no displacement of the free DOFs keeps contacts {left_finger/cylinder, right_finger/cylinder} "
            "non-penetrating: one of them penetrates at least 0.001 m whatever the free DOFs do (Farkas multipliers "
            "0.5, 0.5)");
  // The other condition holds: the ground alone carries the cylinder's weight.
  EXPECT_EQ(cert_lp.equilibrium(Jn, Jt, mu, h * tau.head(m.n_u), cert), Status::solved);
  EXPECT_EQ(cert.kind, Kind::none);
}

}  // namespace
}  // namespace qs::step_certificate_test

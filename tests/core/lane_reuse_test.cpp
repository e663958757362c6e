// The geometry, kinematics and contact templates must serve a lane type (several worlds
// in one value) with the same operations in the same order as the scalar path: here a
// minimal two-lane type instantiates them, and each lane must equal the double result
// bitwise. The batch engine's real lane type supplies the same set of functions.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/contacts.hpp"
#include "core/scene.hpp"

namespace qs {
namespace {

struct Mask2 {
  bool v[2];
};

struct Lane2 {
  double v[2];
  Lane2() : v{0, 0} {}
  Lane2(double x) : v{x, x} {}  // NOLINT: broadcast, as T(double) in the templates
  Lane2(double a, double b) : v{a, b} {}
};

#define QS_LANE2_BINARY(op)                                                                \
  inline Lane2 operator op(const Lane2& a, const Lane2& b) { return {a.v[0] op b.v[0], a.v[1] op b.v[1]}; }
QS_LANE2_BINARY(+)
QS_LANE2_BINARY(-)
QS_LANE2_BINARY(*)
QS_LANE2_BINARY(/)
#undef QS_LANE2_BINARY
inline Lane2 operator-(const Lane2& a) { return {-a.v[0], -a.v[1]}; }
inline Mask2 operator<=(const Lane2& a, const Lane2& b) { return {{a.v[0] <= b.v[0], a.v[1] <= b.v[1]}}; }
inline Mask2 operator<(const Lane2& a, const Lane2& b) { return {{a.v[0] < b.v[0], a.v[1] < b.v[1]}}; }
inline Mask2 operator>(const Lane2& a, const Lane2& b) { return {{a.v[0] > b.v[0], a.v[1] > b.v[1]}}; }
inline Lane2 select(const Mask2& m, const Lane2& a, const Lane2& b) {
  return {m.v[0] ? a.v[0] : b.v[0], m.v[1] ? a.v[1] : b.v[1]};
}
// Per lane, exactly the scalar functions of core/scalar_math.hpp.
inline Lane2 sqrt(const Lane2& a) { return {qs::sqrt(a.v[0]), qs::sqrt(a.v[1])}; }
inline Lane2 sin(const Lane2& a) { return {qs::sin(a.v[0]), qs::sin(a.v[1])}; }
inline Lane2 cos(const Lane2& a) { return {qs::cos(a.v[0]), qs::cos(a.v[1])}; }
inline Lane2 atan2(const Lane2& y, const Lane2& x) { return {qs::atan2(y.v[0], x.v[0]), qs::atan2(y.v[1], x.v[1])}; }
inline Lane2 min(const Lane2& a, const Lane2& b) { return {qs::min(a.v[0], b.v[0]), qs::min(a.v[1], b.v[1])}; }
inline Lane2 max(const Lane2& a, const Lane2& b) { return {qs::max(a.v[0], b.v[0]), qs::max(a.v[1], b.v[1])}; }
inline Lane2 clamp(const Lane2& x, const Lane2& lo, const Lane2& hi) { return min(max(x, lo), hi); }

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(LaneReuse, ContactFramesAndJacobiansPerLaneEqualTheScalarPathBitwise) {
  for (const char* rel : {"examples/pang_tedrake_gripper.json", "tests/scenes/peg_in_slot.json",
                          "tests/scenes/two_link_arms.json", "tests/scenes/two_finger_push.json"}) {
    const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/" + rel);
    const Model& m = *scene.model;
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-0.05, 0.05);
    const Eigen::VectorXd q0 = initial_state(m).q;
    Eigen::VectorXd qa = q0, qb = q0;
    for (int k = 0; k < m.n_q(); ++k) {
      qa[k] += u(rng);
      qb[k] += u(rng);
    }
    std::vector<Lane2> q(m.n_q());
    for (int k = 0; k < m.n_q(); ++k) q[k] = Lane2(qa[k], qb[k]);

    std::vector<Pose2<Lane2>> body(m.bodies.size()), joint(m.joints.size());
    forward_kinematics(m, q.data(), body.data(), joint.data());
    std::vector<Lane2> jn(m.n_q()), jt(m.n_q());
    ContactWorkspace wa(m), wb(m);
    wa.evaluate(m, qa.data());
    wb.evaluate(m, qb.data());
    for (int i = 0; i < m.n_slots(); ++i) {
      const ContactFrame<Lane2> f = contact_frame(m, i, body.data());
      contact_jacobian_rows(m, i, f, body.data(), joint.data(), jn.data(), jt.data());
      for (int lane = 0; lane < 2; ++lane) {
        const ContactWorkspace& w = lane == 0 ? wa : wb;
        const ContactFrame<double>& s = w.frame[i];
        EXPECT_TRUE(same_bits(f.phi.v[lane], s.phi)) << rel << " slot " << i << " lane " << lane;
        EXPECT_TRUE(same_bits(f.normal.x.v[lane], s.normal.x) && same_bits(f.normal.y.v[lane], s.normal.y));
        EXPECT_TRUE(same_bits(f.point_a.x.v[lane], s.point_a.x) && same_bits(f.point_b.y.v[lane], s.point_b.y));
        for (int k = 0; k < m.n_q(); ++k) {
          EXPECT_TRUE(same_bits(jn[k].v[lane], w.J_n(i, k))) << rel << " slot " << i << " dof " << k;
          EXPECT_TRUE(same_bits(jt[k].v[lane], w.J_t(i, k))) << rel << " slot " << i << " dof " << k;
        }
      }
    }
  }
}

}  // namespace
}  // namespace qs

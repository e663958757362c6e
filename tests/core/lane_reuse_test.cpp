// The geometry, kinematics and contact templates must serve the batch engine's lane type
// (quasistep/kernels/lane.hpp: kLaneWidth worlds in one value) with the same operations in the same
// order as the scalar path: each lane must equal the double result bitwise.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "quasistep/kernels/lane.hpp"
#include "quasistep/core/contacts.hpp"
#include "quasistep/core/scene.hpp"
#include "tests/support/bitwise.hpp"

namespace qs::lane_reuse_test {
namespace {

using test::same_bits;

TEST(LaneReuse, ContactFramesAndJacobiansPerLaneEqualTheScalarPathBitwise) {
  for (const char* rel : {"examples/pang_tedrake_gripper.json", "tests/scenes/peg_in_slot.json",
                          "tests/scenes/two_link_arms.json", "tests/scenes/two_finger_push.json"}) {
    const Scene scene = load_scene_file(std::string(QUASISTEP_SOURCE_DIR) + "/" + rel);
    const Model& m = *scene.model;
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-0.05, 0.05);
    const Eigen::VectorXd q0 = initial_state(m).q;
    // A different configuration in every lane.
    std::vector<Eigen::VectorXd> ql(kLaneWidth, q0);
    std::vector<Lane> q(m.n_q());
    for (int lane = 0; lane < kLaneWidth; ++lane)
      for (int k = 0; k < m.n_q(); ++k) {
        ql[lane][k] += u(rng);
        q[k].set(lane, ql[lane][k]);
      }
    std::vector<Pose2<Lane>> body(m.bodies.size()), joint(m.joints.size());
    forward_kinematics(m, q.data(), body.data(), joint.data());
    std::vector<Lane> jn(m.n_q()), jt(m.n_q());
    std::vector<ContactWorkspace> ws;
    for (int lane = 0; lane < kLaneWidth; ++lane) {
      ws.emplace_back(m);
      ws.back().evaluate(m, ql[lane].data());
    }
    for (int i = 0; i < m.n_slots(); ++i) {
      const ContactFrame<Lane> f = contact_frame(m, i, body.data());
      contact_jacobian_rows(m, i, f, body.data(), joint.data(), jn.data(), jt.data());
      for (int lane = 0; lane < kLaneWidth; ++lane) {
        const ContactWorkspace& w = ws[lane];
        const ContactFrame<double>& s = w.frame[i];
        EXPECT_TRUE(same_bits(f.phi[lane], s.phi)) << rel << " slot " << i << " lane " << lane;
        EXPECT_TRUE(same_bits(f.normal.x[lane], s.normal.x) && same_bits(f.normal.y[lane], s.normal.y));
        EXPECT_TRUE(same_bits(f.point_a.x[lane], s.point_a.x) && same_bits(f.point_b.y[lane], s.point_b.y));
        for (int k = 0; k < m.n_q(); ++k) {
          EXPECT_TRUE(same_bits(jn[k][lane], w.J_n(i, k))) << rel << " slot " << i << " dof " << k;
          EXPECT_TRUE(same_bits(jt[k][lane], w.J_t(i, k))) << rel << " slot " << i << " dof " << k;
        }
      }
    }
  }
}

}  // namespace
}  // namespace qs::lane_reuse_test

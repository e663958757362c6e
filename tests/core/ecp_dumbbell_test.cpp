// Xie & Chakraborty 2021, sec. 5.3 (Fig. 7): the dumbbell of examples/ecp_dumbbell.json, whose hull is a
// cylinder. Every step solves its MNCP to 1e-9 in contact with no penetration; the contact
// mode, read from the axis' tilt, goes from surface contact (standing on an end) through
// point contact (on that end's rim) to line contact (lying on its side) and stays there; lying,
// the CM height stays at R (the paper: constant after t = 0.35 s) and the ECP lies on the
// contact line, away from the CM's projection while the dumbbell turns about the vertical.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp"
#include "quasistep/core/scene.hpp"
#include "tests/support/ecp_step_checks.hpp"

namespace qs::ecp_dumbbell_test {
namespace {

using json = nlohmann::json;
constexpr double kR = 0.1, kL = 0.3;  // sec. 5.3

enum class Mode { surface, point, line };

struct StepRecord {
  double t = 0;
  Mode mode = Mode::point;
  Eigen::Vector3d cm, axis, ecp, w;  // world frame: CM, body x (the axis), ECP, angular velocity
};

std::vector<StepRecord> run_dumbbell() {
  std::ifstream in(std::string(QUASISTEP_SOURCE_DIR) + "/examples/ecp_dumbbell.json");
  const Scene sc = parse_scene(json::parse(in).dump(), "test");
  const Model& m = *sc.model;
  EXPECT_TRUE(m.body3->cylinder);
  EcpNcp ecp(m);
  State s = initial_state(m);
  std::vector<StepRecord> out;
  for (int l = 1; l <= m.step.steps; ++l) {
    const Status st = ecp.step(m, s);
    EXPECT_EQ(st, Status::solved) << "step " << l << ": " << ecp.report().detail;
    if (st != Status::solved) break;
    test::expect_valid_ecp_step(ecp, l, true);  // in contact throughout
    EXPECT_EQ(ecp.substeps(), 1) << "step " << l;
    StepRecord r;
    r.t = s.t;
    r.cm = s.q.head<3>();
    const Eigen::Vector4d q = s.q.segment<4>(3);
    r.axis = ecp_rotation(q / q.norm()).col(0);
    r.ecp = ecp.ecp();
    r.w = s.q.segment<3>(10);
    const double az = std::abs(r.axis[2]);
    r.mode = az > 1 - 1e-9 ? Mode::surface : az < 1e-9 ? Mode::line : Mode::point;
    out.push_back(r);
  }
  return out;
}

TEST(EcpDumbbell, ToppleFromSurfaceThroughPointToLineContactThenStaysLying) {
  const std::vector<StepRecord> rs = run_dumbbell();
  ASSERT_EQ(rs.size(), 250u);
  // Before the first step it stands on an end; the impulse tips it at once onto the rim.
  EXPECT_EQ(rs.front().mode, Mode::point);
  int first_line = -1;
  for (size_t i = 0; i < rs.size(); ++i)
    if (rs[i].mode == Mode::line) {
      first_line = static_cast<int>(i);
      break;
    }
  ASSERT_GE(first_line, 0);
  EXPECT_LE(rs[first_line].t, 0.35 + 1e-9);  // lying by t = 0.35 s, as in the paper
  for (int i = 0; i < first_line; ++i) EXPECT_EQ(rs[i].mode, Mode::point) << "t = " << rs[i].t;
  for (size_t i = first_line; i < rs.size(); ++i) EXPECT_EQ(rs[i].mode, Mode::line) << "t = " << rs[i].t;
}

TEST(EcpDumbbell, WhileToppingTheEcpIsOnTheLowerEndsRim) {
  for (const StepRecord& r : run_dumbbell()) {
    if (r.mode != Mode::point) continue;
    // The lower end's centre: the end whose centre is lower.
    const Eigen::Vector3d e0 = r.cm - 0.5 * kL * r.axis, e1 = r.cm + 0.5 * kL * r.axis;
    const Eigen::Vector3d centre = e0[2] < e1[2] ? e0 : e1;
    EXPECT_NEAR((r.ecp - centre).norm(), kR, 1e-9) << "t = " << r.t;
    EXPECT_NEAR((r.ecp - centre).dot(r.axis), 0, 1e-9) << "t = " << r.t;
  }
}

TEST(EcpDumbbell, LyingItRollsAndTurnsWithItsCentreAtTheRadiusAndTheEcpOnTheContactLine) {
  double worst_height = 0, largest_offset = 0, yaw = 0, largest_roll_rate = 0;
  for (const StepRecord& r : run_dumbbell()) {
    if (r.mode != Mode::line) continue;
    worst_height = std::max(worst_height, std::abs(r.cm[2] - kR));
    // The contact line is under the axis: the ECP's offset from the CM's projection is along
    // the axis, within the hull's length (the convex hull of the two bells' segments).
    const Eigen::Vector3d d = r.ecp - Eigen::Vector3d(r.cm[0], r.cm[1], 0);
    const double along = d.dot(r.axis);
    EXPECT_LE((d - along * r.axis).norm(), 1e-9) << "t = " << r.t;
    EXPECT_LE(std::abs(along), 0.5 * kL + 1e-9) << "t = " << r.t;
    largest_offset = std::max(largest_offset, std::abs(along));
    if (r.t > 0.4) yaw += 0.01 * r.w[2];
    largest_roll_rate = std::max(largest_roll_rate, std::abs(r.w.dot(r.axis)));
  }
  EXPECT_LE(worst_height, 1e-9);     // Fig. 7d: q_z constant while it rolls
  EXPECT_GT(largest_offset, 1e-3);   // Fig. 7b: the ECP is not the CM's projection
  EXPECT_GT(yaw, 3.0);               // it turns about the vertical (rad)...
  EXPECT_GT(largest_roll_rate, 0.1); // ...and rolls about its own axis (rad/s)
}

}  // namespace
}  // namespace qs::ecp_dumbbell_test

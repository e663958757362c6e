// Contact frames and Jacobians: the Pang & Tedrake 2018 gripper's matrices (eqs. 24-27), frame
// invariants, and every Jacobian row against finite differences for every shape pair and
// joint type the examples use.
#include "quasistep/core/contacts.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "quasistep/core/scene.hpp"

namespace qs::contacts_test {
namespace {

std::string source_path(const std::string& rel) { return std::string(QUASISTEP_SOURCE_DIR) + "/" + rel; }

// ---- Pang & Tedrake 2018, sec. V.A ---------------------------------------------------------------------

TEST(ContactsGripper, ReproducesSeed000Equations24To27) {
  const Scene scene = load_scene_file(source_path("examples/pang_tedrake_gripper.json"));
  const Model& m = *scene.model;
  ASSERT_EQ(m.n_u, 2);
  ASSERT_EQ(m.n_a, 3);
  ASSERT_EQ(m.n_slots(), 3);
  // A configuration in contact-free general position: x_c, y_c, x_l, x_r, y_g.
  Eigen::VectorXd q(5);
  q << 0.003, 0.051, -0.061, 0.058, 0.012;
  ContactWorkspace ws(m);
  ws.evaluate(m, q.data());
  const double r = 0.05;
  // eq. (24)
  EXPECT_NEAR(ws.frame[0].phi, q[0] - q[2] - r, 1e-15);
  EXPECT_NEAR(ws.frame[1].phi, q[3] - q[0] - r, 1e-15);
  EXPECT_NEAR(ws.frame[2].phi, q[1] - r, 1e-15);
  // eq. (26): J_n = [J_n^qu | J_n^qa]
  Eigen::Matrix<double, 3, 5> Jn;
  Jn << 1, 0, -1, 0, 0,  //
      -1, 0, 0, 1, 0,    //
      0, 1, 0, 0, 0;
  EXPECT_LT((ws.J_n - Jn).cwiseAbs().maxCoeff(), 1e-15);
  EXPECT_EQ(ws.J_n_u(m).cols(), 2);
  EXPECT_EQ(ws.J_n_a(m).cols(), 3);
  // eq. (27): rows 2i and 2i+1 of the paper's J_f are {d, -d} for contact i; our J_t row is
  // one of the two (the balanced basis {t, -t} of eq. 4).
  Eigen::Matrix<double, 6, 5> Jf;
  Jf << 0, 1, 0, 0, -1,  //
      0, -1, 0, 0, 1,    //
      0, 1, 0, 0, -1,    //
      0, -1, 0, 0, 1,    //
      1, 0, 0, 0, 0,     //
      -1, 0, 0, 0, 0;
  for (int i = 0; i < 3; ++i) {
    const Eigen::RowVectorXd t = ws.J_t.row(i);
    const double plus = (t - Jf.row(2 * i)).cwiseAbs().maxCoeff();
    const double minus = (t - Jf.row(2 * i + 1)).cwiseAbs().maxCoeff();
    EXPECT_LT(std::min(plus, minus), 1e-15) << "contact " << i;
  }
}

// ---- finite differences --------------------------------------------------------------------

Vec2<double> material_point(const Pose2<double>& at, const Pose2<double>& moved, const Vec2<double>& p) {
  // The body-fixed point that sits at p under pose `at`, carried to pose `moved`.
  const Vec2<double> d = p - at.translation;
  const Vec2<double> local{at.c * d.x + at.s * d.y, -at.s * d.x + at.c * d.y};
  return moved.apply(local);
}

/// Checks at q: frame invariants; J_n against d(phi)/dq; J_n and J_t against the motion
/// of the witness points' material points, all by central differences.
void check_jacobians(const Model& m, const Eigen::VectorXd& q, const std::string& label) {
  const double eps = 1e-6, tol = 2e-7;
  ContactWorkspace ws(m), plus(m), minus(m);
  ws.evaluate(m, q.data());
  for (int i = 0; i < m.n_slots(); ++i) {
    const ContactFrame<double>& f = ws.frame[i];
    EXPECT_NEAR(norm(f.normal), 1.0, 1e-12) << label << " slot " << i;
    EXPECT_NEAR(dot(f.normal, f.tangent), 0.0, 1e-15);
    EXPECT_NEAR(cross(f.normal, f.tangent), 1.0, 1e-12);  // n x t = +z
    const Vec2<double> gap = f.point_b - f.point_a;
    EXPECT_NEAR(gap.x, f.phi * f.normal.x, 1e-12) << label << " slot " << i;
    EXPECT_NEAR(gap.y, f.phi * f.normal.y, 1e-12) << label << " slot " << i;
  }
  for (int k = 0; k < m.n_q(); ++k) {
    Eigen::VectorXd qp = q, qm = q;
    qp[k] += eps;
    qm[k] -= eps;
    plus.evaluate(m, qp.data());
    minus.evaluate(m, qm.data());
    for (int i = 0; i < m.n_slots(); ++i) {
      const ContactPair& pair = m.pairs[m.slots[i].pair];
      const ContactFrame<double>& f = ws.frame[i];
      const double dphi = (plus.frame[i].phi - minus.frame[i].phi) / (2 * eps);
      EXPECT_NEAR(ws.J_n(i, k), dphi, tol) << label << " slot " << i << " dof " << m.dofs[k].name << " (phi)";
      auto velocity = [&](int body, const Vec2<double>& p) {
        const Vec2<double> a = material_point(ws.body_pose[body], plus.body_pose[body], p);
        const Vec2<double> b = material_point(ws.body_pose[body], minus.body_pose[body], p);
        return Vec2<double>{(a.x - b.x) / (2 * eps), (a.y - b.y) / (2 * eps)};
      };
      const Vec2<double> rel = velocity(pair.body_b, f.point_b) - velocity(pair.body_a, f.point_a);
      EXPECT_NEAR(ws.J_n(i, k), dot(f.normal, rel), tol) << label << " slot " << i << " dof " << m.dofs[k].name;
      EXPECT_NEAR(ws.J_t(i, k), dot(f.tangent, rel), tol) << label << " slot " << i << " dof " << m.dofs[k].name;
    }
  }
}

/// Random configurations around the initial state (fixed seed: deterministic).
void check_scene_jacobians(const Scene& scene, double spread, int samples, const std::string& label) {
  const Model& m = *scene.model;
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-spread, spread);
  const Eigen::VectorXd q0 = initial_state(m).q;
  for (int s = 0; s < samples; ++s) {
    Eigen::VectorXd q = q0;
    for (int k = 0; k < q.size(); ++k) q[k] += u(rng);
    check_jacobians(m, q, label + " sample " + std::to_string(s));
  }
}

class ContactsFixtureScenes : public ::testing::TestWithParam<std::string> {};

TEST_P(ContactsFixtureScenes, JacobiansMatchFiniteDifferences) {
  const Scene scene = load_scene_file(source_path(GetParam()));
  check_scene_jacobians(scene, 0.05, 20, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Examples, ContactsFixtureScenes,
                         ::testing::Values("examples/pang_tedrake_gripper.json", "tests/scenes/two_finger_push.json",
                                           "tests/scenes/two_link_arms.json", "tests/scenes/peg_in_slot.json"));

// Every shape type on a free body with x, y and theta, against every other and a
// half-plane: auto pairs give every shape pair the format allows.
constexpr const char* kAllShapes = R"({
  "format": 1,
  "world": {"type": "vertical"},
  "model": {"formulation": "trinkle_lcp"},
  "bodies": [
    {"name": "floor", "kind": "fixed", "pose": [0, -1, 0.1], "shapes": [{"type": "half_plane", "normal": [0, 1]}]},
    {"name": "disk", "kind": "free", "mass": 1, "pose": [0.1, 0.2, 0.3], "shapes": [{"type": "disk", "radius": 0.3, "pose": [0.05, 0, 0]}]},
    {"name": "point", "kind": "free", "mass": 1, "pose": [-0.7, 0.1, 0], "shapes": [{"type": "point", "pose": [0.02, 0.01, 0]}]},
    {"name": "segment", "kind": "free", "mass": 1, "pose": [0.9, -0.3, 0.4], "shapes": [{"type": "segment", "a": [-0.3, 0], "b": [0.3, 0.1]}]},
    {"name": "capsule", "kind": "free", "mass": 1, "pose": [-0.4, -0.6, -0.2], "shapes": [{"type": "capsule", "a": [-0.2, 0], "b": [0.2, 0], "radius": 0.1}]},
    {"name": "box", "kind": "free", "mass": 1, "pose": [0.6, 0.8, 0.7], "shapes": [{"type": "box", "size": [0.4, 0.2], "pose": [0.1, 0, 0.2]}]},
    {"name": "tri", "kind": "free", "mass": 1, "pose": [-0.9, 0.9, -0.5], "shapes": [{"type": "polygon", "vertices": [[0, 0], [0.3, 0], [0.1, 0.25]]}]}
  ],
  "contacts": {"friction": 0.5}
})";

TEST(ContactsAllShapePairs, JacobiansMatchFiniteDifferences) {
  const Scene scene = parse_scene(kAllShapes);
  const Model& m = *scene.model;
  EXPECT_EQ(m.pairs.size(), 6u + 15u);  // floor with each of 6, and C(6, 2) between them
  check_scene_jacobians(scene, 0.2, 30, "all shapes");
}

TEST(ContactsAllShapePairs, SlotCountsFollowTheFeatureRule) {
  const Scene scene = parse_scene(kAllShapes);
  const Model& m = *scene.model;
  auto slots = [&](const char* a, const char* b) {
    for (size_t p = 0; p < m.pairs.size(); ++p) {
      const std::string name = m.pair_name(static_cast<int>(p));
      if (name == std::string(a) + "/" + b || name == std::string(b) + "/" + a) return m.pairs[p].slot_count;
    }
    return -1;
  };
  EXPECT_EQ(slots("floor", "disk"), 1);
  EXPECT_EQ(slots("floor", "segment"), 2);
  EXPECT_EQ(slots("floor", "box"), 4);
  EXPECT_EQ(slots("floor", "tri"), 3);
  EXPECT_EQ(slots("disk", "point"), 1);
  EXPECT_EQ(slots("disk", "box"), 1);
  EXPECT_EQ(slots("segment", "capsule"), 4);
  EXPECT_EQ(slots("segment", "box"), 6);
  EXPECT_EQ(slots("box", "tri"), 7);
  // Orientation: fixed before free, so the floor is A and normals point up from it.
  for (const ContactPair& p : m.pairs) {
    if (m.bodies[p.body_a].name == "floor" || m.bodies[p.body_b].name == "floor") {
      EXPECT_EQ(m.bodies[p.body_a].name, "floor");
    }
  }
}

TEST(ContactsAllShapePairs, DiskOnTiltedFloorHandComputed) {
  const Scene scene = parse_scene(kAllShapes);
  const Model& m = *scene.model;
  ContactWorkspace ws(m);
  const Eigen::VectorXd q = initial_state(m).q;
  ws.evaluate(m, q.data());
  // The floor passes through (0, -1) with normal (-sin 0.1, cos 0.1); the disk center is at
  // body pose (0.1, 0.2, 0.3) plus the offset (0.05, 0) rotated by 0.3.
  const double cx = 0.1 + 0.05 * std::cos(0.3), cy = 0.2 + 0.05 * std::sin(0.3);
  const double nx = -std::sin(0.1), ny = std::cos(0.1);
  const double expected = nx * (cx - 0) + ny * (cy + 1) - 0.3;
  const int pair = [&] {
    for (size_t p = 0; p < m.pairs.size(); ++p)
      if (m.pair_name(static_cast<int>(p)) == "floor/disk") return static_cast<int>(p);
    return -1;
  }();
  ASSERT_GE(pair, 0);
  const ContactFrame<double>& f = ws.frame[m.pairs[pair].first_slot];
  EXPECT_NEAR(f.phi, expected, 1e-14);
  EXPECT_NEAR(f.normal.x, nx, 1e-15);
  EXPECT_NEAR(f.normal.y, ny, 1e-15);
  EXPECT_NEAR(f.point_b.x, cx - 0.3 * nx, 1e-14);  // the disk's lowest point along -n
}

TEST(ContactsMargin, SlotsBeyondTheMarginAreInactiveNotAbsent) {
  std::string text = kAllShapes;
  text.replace(text.find(R"("friction": 0.5})"), 17, R"("friction": 0.5, "margin": 0.05})");
  const Scene scene = parse_scene(text);
  const Model& m = *scene.model;
  ContactWorkspace ws(m);
  Eigen::VectorXd q = initial_state(m).q;
  ws.evaluate(m, q.data());
  const int before = m.n_slots();
  int active = 0;
  for (int i = 0; i < m.n_slots(); ++i) {
    active += ws.active(m, i);
    EXPECT_EQ(ws.active(m, i), ws.frame[i].phi <= 0.05);
  }
  EXPECT_LT(active, before);
  EXPECT_EQ(m.n_slots(), before);  // the slot set is fixed by the Model
}

TEST(ContactsPenetration, BoxSunkIntoFloorHasNegativePhiAtItsLowVertices) {
  const Scene scene = parse_scene(R"({
    "format": 1, "world": {"type": "vertical"}, "model": {"formulation": "trinkle_lcp"},
    "bodies": [
      {"name": "floor", "kind": "fixed", "shapes": [{"type": "half_plane", "normal": [0, 1]}]},
      {"name": "box", "kind": "free", "mass": 1, "pose": [0, 0.45, 0], "shapes": [{"type": "box", "size": [2, 1]}]}],
    "contacts": {"friction": 0.5}})");
  const Model& m = *scene.model;
  ContactWorkspace ws(m);
  const Eigen::VectorXd q = initial_state(m).q;
  ws.evaluate(m, q.data());
  ASSERT_EQ(m.n_slots(), 4);
  int sunk = 0;
  for (int i = 0; i < 4; ++i) {
    if (ws.frame[i].phi < 0) {
      ++sunk;
      EXPECT_NEAR(ws.frame[i].phi, -0.05, 1e-15);
    } else {
      EXPECT_NEAR(ws.frame[i].phi, 0.95, 1e-15);
    }
  }
  EXPECT_EQ(sunk, 2);
}

}  // namespace
}  // namespace qs::contacts_test

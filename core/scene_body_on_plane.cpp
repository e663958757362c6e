#include "quasistep/core/scene_body_on_plane.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "quasistep/core/geometry3.hpp"

namespace qs {

using geometry3::Mat3;
using geometry3::Quat;
using geometry3::Vec3;

namespace {

Vec3 read_vec3(const json_input::Node& n) {
  const auto a = n.fixed_vector<3>();
  return Vec3(a[0], a[1], a[2]);
}

}  // namespace

void read_body_on_plane(const json_input::Node& root, Model& m,
                         const std::function<Schedule(const json_input::Node&)>& read_schedule) {
  for (const char* key : {"joints", "commands"})
    if (auto j = root.get(key))
      j->fail("a body_on_plane world has no joints: its one body moves under gravity, contact and loads");
  if (auto c = root.get("contacts"))
    c->fail("a body_on_plane world has one implicit contact, the body on the plane z = 0; its friction is "
            "world.support_friction");
  const json_input::Node list = root.at("bodies");
  if (list.array(1) != 1) list.fail("a body_on_plane world holds exactly one body (the plane z = 0 is implicit)");
  const json_input::Node n = list.item(0);
  n.expect_object({"name", "kind", "mass", "inertia", "pose3", "velocity", "angular_velocity", "hull"});
  Body b;
  const json_input::Node name = n.at("name");
  b.name = name.identifier();
  if (b.name == "world" || b.name == "note") name.fail("\"" + b.name + "\" is reserved");
  b.kind = n.at("kind").choice<BodyKind>({{"free", BodyKind::free}});
  b.mass = n.at("mass").positive();
  Body3 body;
  body.body = 0;
  // Inertia about the CM in the body frame: principal moments [Ixx, Iyy, Izz] or a full
  // symmetric positive definite 3 x 3 matrix.
  const json_input::Node in = n.at("inertia");
  if (in.raw().is_array() && in.raw().size() == 3 && in.raw()[0].is_number()) {
    const Vec3 d = read_vec3(in);
    if (!(d.minCoeff() > 0)) in.fail("principal moments must be > 0");
    // A rigid body's principal moments satisfy the triangle inequality.
    if (d[0] + d[1] < d[2] || d[1] + d[2] < d[0] || d[0] + d[2] < d[1])
      in.fail("principal moments must satisfy the triangle inequality (Ixx + Iyy >= Izz, ...)");
    body.inertia = d.asDiagonal();
  } else {
    const Eigen::MatrixXd a = in.matrix(3, 3);
    if ((a - a.transpose()).cwiseAbs().maxCoeff() > 1e-12 * (1 + a.cwiseAbs().maxCoeff())) in.fail("must be symmetric");
    Eigen::LLT<Eigen::MatrixXd> llt(a);
    if (llt.info() != Eigen::Success) in.fail("must be positive definite");
    body.inertia = a;
  }
  std::array<double, 7> pose{0, 0, 0, 1, 0, 0, 0};
  if (auto p = n.get("pose3")) {
    pose = p->fixed_vector<7>();
    const double len = std::sqrt(pose[3] * pose[3] + pose[4] * pose[4] + pose[5] * pose[5] + pose[6] * pose[6]);
    // Rounding in a written quaternion is normalised away; anything more is a mistake.
    if (std::abs(len - 1) > 1e-6)
      p->fail("the quaternion [qw, qx, qy, qz] has length " + std::to_string(len) + "; it must be a unit quaternion");
    for (int i = 3; i < 7; ++i) pose[i] /= len;
  }
  Vec3 vel = Vec3::Zero(), omega = Vec3::Zero();
  if (auto v = n.get("velocity")) vel = read_vec3(*v);
  if (auto w = n.get("angular_velocity")) omega = read_vec3(*w);
  for (int i = 0; i < 7; ++i) body.initial[i] = pose[i];
  for (int i = 0; i < 3; ++i) body.initial[7 + i] = vel[i], body.initial[10 + i] = omega[i];

  // The hull: a point list (its convex hull is computed), or a cylinder.
  const json_input::Node hull = n.at("hull");
  hull.expect_object({"vertices", "cylinder"});
  if (hull.has("vertices") == hull.has("cylinder"))
    hull.fail("give either \"vertices\" (a point list) or \"cylinder\" (radius, length, axis, center)");
  if (auto cyl = hull.get("cylinder")) {
    cyl->expect_object({"radius", "length", "axis", "center"});
    HullCylinder cy;
    cy.radius = cyl->at("radius").positive();
    cy.half_length = 0.5 * cyl->at("length").positive();
    if (auto a = cyl->get("axis")) {
      cy.axis = read_vec3(*a);
      // As for quaternions: rounding is normalised away, anything more is a mistake.
      if (std::abs(cy.axis.norm() - 1) > 1e-6)
        a->fail("the axis has length " + std::to_string(cy.axis.norm()) + "; it must be a unit vector");
      cy.axis.normalize();
    }
    if (auto c = cyl->get("center")) cy.center = read_vec3(*c);
    // Its caps are the planes +-axis' (x - center) <= half_length; its side is the last face.
    body.hull_normals = {cy.axis, -cy.axis};
    body.hull_offsets = {cy.axis.dot(cy.center) + cy.half_length, -cy.axis.dot(cy.center) + cy.half_length};
    body.cylinder = cy;
  } else {
    const json_input::Node verts = hull.at("vertices");
    const size_t count = verts.array(4);
    if (count > static_cast<size_t>(kEcpMaxHullPoints))
      verts.fail("at most " + std::to_string(kEcpMaxHullPoints) + " points");
    std::vector<Vec3> pts;
    for (size_t i = 0; i < count; ++i) pts.push_back(read_vec3(verts.item(i)));
    Hull3 h;
    std::string why;
    if (!convex_hull_3d(pts, h, why)) verts.fail(why);
    if (static_cast<int>(h.normals.size()) > kEcpMaxHullFaces)
      verts.fail("the hull has " + std::to_string(h.normals.size()) + " faces; the ECP stepper takes at most " +
                 std::to_string(kEcpMaxHullFaces));
    body.hull_vertices = h.vertices;
    body.hull_normals = h.normals;
    body.hull_offsets = h.offsets;
    body.given_points = static_cast<int>(count);
    body.given_vertices = pts;
    body.dropped_points = h.dropped;
  }
  // The body may start on or above the plane, never below it: touching to rounding, which
  // grows with the body's size (1e-9 of its extent, so that the same scene in other length
  // units is judged alike; a resting body's lowest point is at about -3e-17 m in metres).
  const Mat3 R = ecp_rotation(Quat(pose[3], pose[4], pose[5], pose[6]));
  const double z_min = hull_lowest(body, R, Vec3(pose[0], pose[1], pose[2]), 0.0);
  if (z_min < -1e-9 * hull_extent(body)) {
    const json_input::Node where = n.has("pose3") ? n.child("pose3") : n.at("hull");
    where.fail("the body starts below the plane z = 0: its lowest hull point is at z = " + std::to_string(z_min) +
               " m");
  }
  m.bodies.push_back(b);
  m.bodies.back().dof = {-1, -1, -1};

  if (auto l = root.get("loads")) {
    const size_t k = l->array();
    for (size_t i = 0; i < k; ++i) {
      const json_input::Node ln = l->item(i);
      ln.expect_object({"body", "force", "torque", "point", "frame"});
      const json_input::Node bn = ln.at("body");
      if (bn.string() != b.name) bn.fail("no body named " + json_input::json_quote(bn.string()));
      Load3 load;
      auto read3 = [&](const char* key, std::array<Schedule, 3>& into) {
        if (auto f = ln.get(key)) {
          if (f->array() != 3) f->fail("must have 3 components (x, y, z), each a number or a schedule");
          for (size_t c = 0; c < 3; ++c) into[c] = read_schedule(f->item(c));
        }
      };
      read3("force", load.force);
      read3("torque", load.torque);
      if (auto p = ln.get("point")) load.point = read_vec3(*p);
      if (auto fr = ln.get("frame")) load.body_frame = fr->choice<bool>({{"world", false}, {"body", true}});
      body.loads.push_back(std::move(load));
    }
  }
  static constexpr const char* kNames[13] = {"x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"};
  for (int c = 0; c < 13; ++c) m.dofs.push_back({b.name + "." + kNames[c], DofKind::body3, c, false});
  m.n_u = 13;
  m.n_a = 0;
  m.body_order = {0};
  m.body3 = std::move(body);
}

}  // namespace qs

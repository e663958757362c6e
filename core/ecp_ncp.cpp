#include "core/ecp_ncp.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace qs {
namespace {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Quat = Eigen::Vector4d;  // [w, x, y, z]

Quat qmul(const Quat& a, const Quat& b) {
  const Vec3 av = a.tail<3>(), bv = b.tail<3>();
  Quat r;
  r[0] = a[0] * b[0] - av.dot(bv);
  r.tail<3>() = a[0] * bv + b[0] * av + av.cross(bv);
  return r;
}

Quat pure(const Vec3& w) { return Quat(0, w[0], w[1], w[2]); }
Quat conj(const Quat& q) { return Quat(q[0], -q[1], -q[2], -q[3]); }

Mat3 skew(const Vec3& a) {
  Mat3 s;
  s << 0, -a[2], a[1], a[2], 0, -a[0], -a[1], a[0], 0;
  return s;
}

// Seed 003 eq. (7) in the quaternion chart, then the projection onto unit quaternions.
// Returns the unnormalised Q (its norm is needed for the derivative).
Quat advance_quaternion(const Quat& q0, const Vec3& w, double h) { return q0 + 0.5 * h * qmul(pure(w), q0); }

/// d theta / d w for the update above: a change dw of w rotates the end pose by the spatial
/// angle Jth dw, i.e. R(w + dw) = (I + [Jth dw]x) R(w) to first order.
Mat3 rotation_jacobian(const Quat& q0, const Quat& Q, double h) {
  const double qn = Q.norm();
  const Quat qh = Q / qn;
  Mat3 Jth;
  for (int j = 0; j < 3; ++j) {
    const Quat dQ = 0.5 * h * qmul(pure(Vec3::Unit(j)), q0);
    const Quat dqh = (dQ - qh * qh.dot(dQ)) / qn;
    Jth.col(j) = 2.0 * qmul(dqh, conj(qh)).tail<3>();
  }
  return Jth;
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

Vec3 state_position(const Eigen::Ref<const Eigen::VectorXd>& q) { return q.segment<3>(0); }
Quat state_quaternion(const Eigen::Ref<const Eigen::VectorXd>& q) {
  Quat Q = q.segment<4>(3);
  return Q / Q.norm();
}

}  // namespace

Mat3 ecp_rotation(const Quat& q) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  Mat3 R;
  R << 1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),  //
      2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),   //
      2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y);
  return R;
}

// ---- the hull's geometry ----------------------------------------------------------------

int hull_face_count(const Body3& b) { return static_cast<int>(b.hull_normals.size()) + (b.cylinder ? 1 : 0); }

double hull_face_value(const Body3& b, int i, const Vec3& x) {
  if (i < static_cast<int>(b.hull_normals.size())) return b.hull_normals[i].dot(x) - b.hull_offsets[i];
  const HullCylinder& cy = *b.cylinder;
  const Vec3 y = x - cy.center;
  const Vec3 py = y - y.dot(cy.axis) * cy.axis;
  return (py.squaredNorm() - cy.radius * cy.radius) / (2 * cy.radius);
}

Vec3 hull_face_normal(const Body3& b, int i, const Mat3& R, const Vec3& c, const Vec3& p) {
  if (i < static_cast<int>(b.hull_normals.size())) return R * b.hull_normals[i];
  const HullCylinder& cy = *b.cylinder;
  const Vec3 y = R.transpose() * (p - c) - cy.center;
  const Vec3 py = y - y.dot(cy.axis) * cy.axis;
  const double n = py.norm();
  return n > 0 ? Vec3(R * py / n) : Vec3(-Vec3::UnitZ());  // on the axis: any radial direction; say down
}

double hull_lowest(const Body3& b, const Mat3& R, const Vec3& c, double tol, Vec3* centroid) {
  if (!b.cylinder) {
    double z = std::numeric_limits<double>::infinity();
    for (const Vec3& v : b.hull_vertices) z = std::min(z, c[2] + R.row(2).dot(v));
    if (centroid) {
      Vec3 sum = Vec3::Zero();
      int count = 0;
      for (const Vec3& v : b.hull_vertices) {
        const Vec3 p = c + R * v;
        if (p[2] <= z + tol) sum += p, ++count;
      }
      *centroid = sum / count;
    }
    return z;
  }
  // A cylinder's lowest points lie on its caps' rims, at the rim point below each cap's
  // centre along d, the downward direction perpendicular to the axis; with the axis vertical
  // the lower cap is the lowest face (its centre is its centroid).
  const HullCylinder& cy = *b.cylinder;
  const Vec3 a = R * cy.axis;
  const Vec3 d = -Vec3::UnitZ() + a[2] * a;  // -(e_z - (e_z' a) a)
  const double dn = d.norm();
  Vec3 rim[2];
  for (int e = 0; e < 2; ++e) {
    const Vec3 centre = c + R * (cy.center + (e == 0 ? -cy.half_length : cy.half_length) * cy.axis);
    rim[e] = dn > 1e-12 ? Vec3(centre + cy.radius * d / dn) : centre;
  }
  const double z = std::min(rim[0][2], rim[1][2]);
  if (centroid) {
    Vec3 sum = Vec3::Zero();
    int count = 0;
    for (const Vec3& p : rim)
      if (p[2] <= z + tol) sum += p, ++count;
    *centroid = sum / count;
  }
  return z;
}

double hull_extent(const Body3& b) {
  if (b.cylinder) return b.cylinder->center.norm() + std::hypot(b.cylinder->half_length, b.cylinder->radius);
  double r = 0;
  for (const Vec3& v : b.hull_vertices) r = std::max(r, v.norm());
  return r;
}

// ---- hull -----------------------------------------------------------------------------

bool convex_hull_3d(const std::vector<Vec3>& p, Hull3& out, std::string& why) {
  out = Hull3{};
  const int n = static_cast<int>(p.size());
  if (n < 4) {
    why = "needs at least 4 points (a solid)";
    return false;
  }
  if (n > kEcpMaxHullPoints) {
    why = "at most " + std::to_string(kEcpMaxHullPoints) + " points";
    return false;
  }
  double scale = 0;
  for (const Vec3& a : p)
    for (const Vec3& b : p) scale = std::max(scale, (a - b).norm());
  if (!(scale > 0)) {
    why = "the points all coincide";
    return false;
  }
  const double tol = 1e-9 * scale;
  // A solid: the points' spread has three non-negligible principal directions.
  Vec3 mean = Vec3::Zero();
  for (const Vec3& a : p) mean += a;
  mean /= n;
  Mat3 spread = Mat3::Zero();
  for (const Vec3& a : p) spread += (a - mean) * (a - mean).transpose();
  Eigen::SelfAdjointEigenSolver<Mat3> solid(spread, Eigen::EigenvaluesOnly);
  if (!(solid.eigenvalues()[0] > 1e-12 * scale * scale)) {
    why = "the points are coplanar (no solid hull)";
    return false;
  }
  // A facet plane passes through three points with every point on one side of it.
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      for (int k = j + 1; k < n; ++k) {
        Vec3 nrm = (p[j] - p[i]).cross(p[k] - p[i]);
        const double len = nrm.norm();
        if (!(len > 1e-9 * scale * scale)) continue;  // (nearly) collinear triple
        nrm /= len;
        double lo = 0, hi = 0;
        for (const Vec3& x : p) {
          const double s = nrm.dot(x - p[i]);
          lo = std::min(lo, s);
          hi = std::max(hi, s);
        }
        if (hi > tol && lo < -tol) continue;  // points on both sides: not a facet
        if (hi > tol) nrm = -nrm;             // outward: every point on the inner side
        const double off = nrm.dot(p[i]);
        bool seen = false;
        for (size_t f = 0; f < out.normals.size() && !seen; ++f)
          seen = (out.normals[f] - nrm).norm() < 1e-9 && std::abs(out.offsets[f] - off) < tol;
        if (!seen) {
          out.normals.push_back(nrm);
          out.offsets.push_back(off);
        }
      }
    }
  }
  if (out.normals.empty()) {
    why = "the points are coplanar (no solid hull)";
    return false;
  }
  // An extreme point lies on three facet planes with independent normals; a point on an
  // edge or face (or inside, or repeated) is dropped.
  for (int i = 0; i < n; ++i) {
    Mat3 gram = Mat3::Zero();
    for (size_t f = 0; f < out.normals.size(); ++f)
      if (std::abs(out.normals[f].dot(p[i]) - out.offsets[f]) <= tol) gram += out.normals[f] * out.normals[f].transpose();
    bool repeated = false;
    for (const Vec3& v : out.vertices) repeated = repeated || (v - p[i]).norm() <= tol;
    Eigen::SelfAdjointEigenSolver<Mat3> es(gram, Eigen::EigenvaluesOnly);
    if (!repeated && es.eigenvalues()[0] > 1e-6) out.vertices.push_back(p[i]);
    else ++out.dropped;
  }
  return true;
}

// ---- scene ----------------------------------------------------------------------------

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
    body.dropped_points = h.dropped;
  }
  // The body may start on or above the plane, never below it.
  const Mat3 R = ecp_rotation(Quat(pose[3], pose[4], pose[5], pose[6]));
  const double z_min = hull_lowest(body, R, Vec3(pose[0], pose[1], pose[2]), 0.0);
  if (z_min < -1e-9) {
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

// ---- the applied impulse --------------------------------------------------------------

Eigen::Matrix<double, 6, 1> ecp_external_impulse(const Model& m, const Eigen::Ref<const Eigen::VectorXd>& q, double t,
                                                 double h) {
  const Body3& b = *m.body3;
  const Mat3 R = ecp_rotation(state_quaternion(q));
  const Vec3 w = q.segment<3>(10);
  const double t_mid = t + 0.5 * h;  // docs/scene-format.md, "Sampling convention"
  Vec3 f(0, 0, -m.bodies[b.body].mass * m.world.gravity), tau = Vec3::Zero();
  for (const Load3& l : b.loads) {
    Vec3 fl(l.force[0](t_mid), l.force[1](t_mid), l.force[2](t_mid));
    Vec3 tl(l.torque[0](t_mid), l.torque[1](t_mid), l.torque[2](t_mid));
    if (l.body_frame) {
      fl = R * fl;
      tl = R * tl;
    }
    f += fl;
    tau += tl + (R * l.point).cross(fl);
  }
  // Seed 003 eq. (6): p_vp, the gyroscopic impulse of Euler's equations in the world frame.
  const Mat3 Iw = R * b.inertia * R.transpose();
  Eigen::Matrix<double, 6, 1> p;
  p.head<3>() = h * f;
  p.tail<3>() = h * tau - h * w.cross(Iw * w);
  return p;
}

// ---- the step's MNCP ------------------------------------------------------------------

void EcpStepProblem::setup(const Model& m, const Eigen::Ref<const Eigen::VectorXd>& q, double t, int k, double h) {
  body_ = &*m.body3;
  planes_ = static_cast<int>(body_->hull_normals.size());
  side_ = body_->cylinder.has_value();
  faces_ = planes_ + (side_ ? 1 : 0);
  if (side_) {
    axis_ = body_->cylinder->axis;
    center_ = body_->cylinder->center;
    radius_ = body_->cylinder->radius;
  }
  k_ = k;
  h_ = h;
  mass_ = m.bodies[body_->body].mass;
  mu_ = m.world.support_friction;
  et_ = m.params.ellipsoid_e_t;
  eo_ = m.params.ellipsoid_e_o;
  er_ = m.params.ellipsoid_e_r;
  c0_ = state_position(q);
  q0_ = state_quaternion(q);
  v0_ = q.segment<3>(7);
  w0_ = q.segment<3>(10);
  const Mat3 R0 = ecp_rotation(q0_);
  // Seed 003 eq. (18) uses M^u: the world inertia at the start of the step.
  Iw_ = R0 * body_->inertia * R0.transpose();
  p_ext_ = ecp_external_impulse(m, q, t, h_);
  for (int i = 0; i < planes_; ++i) {
    nb_[i] = body_->hull_normals[i];
    d_[i] = body_->hull_offsets[i];
  }
}

void EcpStepProblem::end_pose(const Eigen::Ref<const Eigen::VectorXd>& x, Vec3& c, Quat& q) const {
  c = c0_ + h_ * x.segment<3>(kV);
  q = advance_quaternion(q0_, x.segment<3>(kW), h_);
  q /= q.norm();
}

double EcpStepProblem::face_value(const Eigen::Ref<const Eigen::VectorXd>& x, int i, const Vec3& p) const {
  Vec3 c;
  Quat q;
  end_pose(x, c, q);
  return hull_face_value(*body_, i, ecp_rotation(q).transpose() * (p - c));
}

void EcpStepProblem::cold_start(Eigen::Ref<Eigen::VectorXd> x) const {
  x.setZero();
  x.segment<3>(kV) = v0_;
  x.segment<3>(kW) = w0_;
  // The ECP guess: the centroid of the lowest hull vertices at the pose the body would reach
  // without contact (the free flight of this step): the lowest face's centre when it rests
  // on a face, the vertex or edge it is about to land on otherwise (an impact moves the ECP
  // across the body within one step). A corner would put several complementarity pairs of
  // eq. (19) at (0, 0), where the FB function has its kink.
  const Vec3 v_free = v0_ + p_ext_.head<3>() / mass_;
  const Vec3 w_free = w0_ + Iw_.ldlt().solve(Vec3(p_ext_.tail<3>()));
  const Vec3 c_free = c0_ + h_ * v_free;
  Quat q_free = advance_quaternion(q0_, w_free, h_);
  const Mat3 R1 = ecp_rotation(q_free / q_free.norm());
  Vec3 low;
  hull_lowest(*body_, R1, c_free, 1e-6, &low);
  const Vec3 low_free = low;
  low[2] = std::max(low[2], 0.0);
  x.segment<3>(kA1) = low;
  x.segment<3>(kA2) = Vec3(low[0], low[1], 0);
  const double nkz = hull_face_normal(*body_, k_, ecp_rotation(q0_), c0_, low_free)[2];
  // Eq. (14) with only face k: n_k + l_2 e_z = 0 in its vertical part.
  x[l2()] = std::max(-nkz, 1e-3);
  // Eq. (13) when separated: a1 - a2 = l_k l_2 e_z (vertically).
  x[l1(k_)] = std::max(low[2], 0.0) / x[l2()];
  if (low[2] > 1e-9) return;
  // Touching: the weight's impulse, and the friction of eq. (8) for the sliding velocity at
  // the guessed ECP, which in closed form is p_j = -e_j^2 mu p_n s_j / sigma with
  // sigma = sqrt(sum e_j^2 s_j^2) (zeta = 0).
  const double p_n = std::max(-p_ext_[2], 0.0);
  x[pn()] = p_n;
  const Vec3 u = v0_ + w0_.cross(low - c0_);
  const Vec3 e(et_, eo_, er_), sv(u[0], u[1], w0_[2]);
  const double sig = std::sqrt((e.array() * sv.array()).square().sum());
  if (sig > 1e-12) {
    x[sigma()] = sig;
    for (int j = 0; j < 3; ++j) x[kPt + j] = -e[j] * e[j] * mu_ * p_n * sv[j] / sig;
  }
}

bool EcpStepProblem::operator()(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> F,
                                Eigen::Ref<Eigen::MatrixXd> J) const {
  J.setZero();
  const Vec3 v = x.segment<3>(kV), w = x.segment<3>(kW), a1 = x.segment<3>(kA1), a2 = x.segment<3>(kA2);
  const double pt = x[kPt], po = x[kPo], pr = x[kPr], lam2 = x[l2()], p_n = x[pn()], sig = x[sigma()];
  const double lk = x[l1(k_)];
  const Vec3 c = c0_ + h_ * v;
  const Quat Q = advance_quaternion(q0_, w, h_);
  const double qn = Q.norm();
  if (!(qn > 1e-12) || !std::isfinite(qn)) return false;
  const Mat3 R = ecp_rotation(Q / qn);
  const Mat3 Jth = rotation_jacobian(q0_, Q, h_);
  const Vec3 r = a1 - c;
  // Each face's gradient at a1 (world frame): a plane's normal R n_i; the cylinder side's
  // g = R P (R'r - center) / radius (unit on the side), whose derivative in a1 is
  // H = R P R' / radius and which also turns with the body. f_i(a1) for eq. (19).
  std::array<Vec3, kEcpMaxHullFaces> grad;
  std::array<double, kEcpMaxHullFaces> fval;
  for (int i = 0; i < planes_; ++i) {
    grad[i] = R * nb_[i];
    fval[i] = grad[i].dot(r) - d_[i];
  }
  Mat3 H = Mat3::Zero();
  if (side_) {
    const Vec3 y = R.transpose() * r - center_;
    const Vec3 py = y - y.dot(axis_) * axis_;
    grad[planes_] = R * py / radius_;
    fval[planes_] = (py.squaredNorm() - radius_ * radius_) / (2 * radius_);
    const Vec3 aw = R * axis_;
    H = (Mat3::Identity() - aw * aw.transpose()) / radius_;
  }
  // grad C(F, a1) of eqs. (13)-(14): grad f_k + sum_{i != k} l_i grad f_i.
  Vec3 gradC = grad[k_];
  for (int i = 0; i < faces_; ++i)
    if (i != k_) gradC += x[l1(i)] * grad[i];
  // The weight of the side's gradient in grad C (1 when it is face k): its share of the
  // a1-, v- and w-derivatives beyond the rigid turn of every gradient.
  const double side_weight = !side_ ? 0.0 : k_ == planes_ ? 1.0 : x[l1(planes_)];
  const Vec3 Fc(pt, po, p_n);  // contact impulse in the world frame: t = e_x, o = e_y, n = e_z
  const Mat3 I3 = Mat3::Identity();

  // Seed 003 eq. (18), first block (Newton-Euler, eq. (6) with M^u).
  F.segment<3>(0) = -mass_ * (v - v0_) + Fc + p_ext_.head<3>();
  J.block<3, 3>(0, kV) = -mass_ * I3;
  J(0, kPt) = 1;
  J(1, kPo) = 1;
  J(2, pn()) = 1;
  F.segment<3>(3) = -Iw_ * (w - w0_) + r.cross(Fc) + Vec3(0, 0, pr) + p_ext_.tail<3>();
  J.block<3, 3>(3, kW) = -Iw_;
  J.block<3, 3>(3, kA1) = -skew(Fc);
  J.block<3, 3>(3, kV) = h_ * skew(Fc);
  J.block<3, 1>(3, kPt) = Vec3(0, r[2], -r[1]);
  J.block<3, 1>(3, kPo) = Vec3(-r[2], 0, r[0]);
  J.block<3, 1>(3, pn()) = Vec3(r[1], -r[0], 0);
  J(5, kPr) = 1;

  // d grad C: every gradient turns with the body (-[grad C]x Jth); the side's also moves with
  // a1 relative to the body (H, and through r = a1 - c also with v and the turn).
  const Mat3 dgradC_da1 = side_weight * H;
  const Mat3 dgradC_dv = -h_ * dgradC_da1;
  const Mat3 dgradC_dw = (-skew(gradC) + dgradC_da1 * skew(r)) * Jth;

  // Eq. (13): a1 - a2 + l_k grad C = 0.
  F.segment<3>(6) = a1 - a2 + lk * gradC;
  J.block<3, 3>(6, kA1) = I3 + lk * dgradC_da1;
  J.block<3, 3>(6, kA2) = -I3;
  J.block<3, 3>(6, kV) = lk * dgradC_dv;
  J.block<3, 1>(6, l1(k_)) = gradC;
  for (int i = 0; i < faces_; ++i)
    if (i != k_) J.block<3, 1>(6, l1(i)) = lk * grad[i];
  J.block<3, 3>(6, kW) = lk * dgradC_dw;

  // Eq. (14): grad C + l_2 grad g(a2) = 0, grad g = e_z.
  F.segment<3>(9) = gradC + Vec3(0, 0, lam2);
  for (int i = 0; i < faces_; ++i)
    if (i != k_) J.block<3, 1>(9, l1(i)) = grad[i];
  J(11, l2()) = 1;
  J.block<3, 3>(9, kA1) = dgradC_da1;
  J.block<3, 3>(9, kV) = dgradC_dv;
  J.block<3, 3>(9, kW) = dgradC_dw;

  // Eq. (8): e^2 mu p_n W'v + p sigma = 0, W'v the ECP's velocity u = v + w x r (t, o
  // components) and w_z (the spin about the normal).
  const Vec3 u = v + w.cross(r);
  const Mat3 du_dv = I3 - h_ * skew(w), du_dw = -skew(r), du_da1 = skew(w);
  const double ct = et_ * et_ * mu_, co = eo_ * eo_ * mu_, cr = er_ * er_ * mu_;
  for (int row = 0; row < 2; ++row) {
    const int e = 12 + row;
    const double cc = row == 0 ? ct : co;
    const double p = row == 0 ? pt : po;
    const int pcol = row == 0 ? kPt : kPo;
    F[e] = cc * p_n * u[row] + p * sig;
    J.block<1, 3>(e, kV) = cc * p_n * du_dv.row(row);
    J.block<1, 3>(e, kW) = cc * p_n * du_dw.row(row);
    J.block<1, 3>(e, kA1) = cc * p_n * du_da1.row(row);
    J(e, pn()) = cc * u[row];
    J(e, pcol) = sig;
    J(e, sigma()) = p;
  }
  F[14] = cr * p_n * w[2] + pr * sig;
  J(14, kW + 2) = cr * p_n;
  J(14, pn()) = cr * w[2];
  J(14, kPr) = sig;
  J(14, sigma()) = pr;

  // Eq. (19): 0 <= l_i _|_ -f_i(a1) >= 0 (f_k(a1) = 0 for face k). For a plane and for the
  // side alike, df_i = grad_i' (da1 - h dv) + (grad_i x r)' Jth dw.
  for (int i = 0; i < faces_; ++i) {
    const int e = l1(i);
    F[e] = -fval[i];
    J.block<1, 3>(e, kA1) = -grad[i].transpose();
    J.block<1, 3>(e, kV) = h_ * grad[i].transpose();
    J.block<1, 3>(e, kW) = -(grad[i].cross(r)).transpose() * Jth;
  }
  // 0 <= l_2 _|_ -g(a2) >= 0.
  F[l2()] = -a2[2];
  J(l2(), kA2 + 2) = -1;
  // 0 <= p_n _|_ l_k >= 0 in place of eq. (19)'s max_i f_i(a2) (see the header): with
  // f_k(a1) = 0 and grad C in the normal cone at a1, l_k l_2 = a1_z - a2_z is the gap.
  F[pn()] = lk;
  J(pn(), kLk) = 1;
  // 0 <= sigma _|_ zeta >= 0, the friction ellipsoid of eq. (5) in impulses.
  F[sigma()] = (mu_ * p_n) * (mu_ * p_n) - (pt / et_) * (pt / et_) - (po / eo_) * (po / eo_) - (pr / er_) * (pr / er_);
  J(sigma(), pn()) = 2 * mu_ * mu_ * p_n;
  J(sigma(), kPt) = -2 * pt / (et_ * et_);
  J(sigma(), kPo) = -2 * po / (eo_ * eo_);
  J(sigma(), kPr) = -2 * pr / (er_ * er_);
  return F.allFinite();
}

// ---- the stepper ----------------------------------------------------------------------

EcpNcp::EcpNcp(const Model& m) : Stepper(m) {}

std::vector<std::string> EcpNcp::extra_columns() const { return {"ecp_x", "ecp_y", "ecp_z", "p_n"}; }

void EcpNcp::extra_values(std::vector<double>& out) const {
  out.insert(out.end(), {a1_[0], a1_[1], a1_[2], pn_});
}

Status EcpNcp::step(const Model& m, State& s) {
  report_ = StepReport{};
  attempts_ = 0;
  substeps_ = 1;
  if (!m.body3 || m.world.type != WorldType::body_on_plane || s.q.size() != 13)
    return fail(Status::bad_input, "the ECP stepper needs a body_on_plane world (one 3D body, a 13-entry state)");
  const Body3& b = *m.body3;
  const int faces = hull_face_count(b);
  if (faces < 1 || faces > kEcpMaxHullFaces || !(m.step.h > 0) || !(m.params.ellipsoid_e_r > 0))
    return fail(Status::bad_input, "the body's hull, step.h or model.e_r is out of range");
  if (!s.q.allFinite()) return fail(Status::bad_input, "the state is not finite");

  const double h = m.step.h, t0 = s.t;
  start_q_ = s.q;
  // The warm start travels with the State (State::memory: [valid, k, x]), so a world stepped
  // by any stepper object (a batch's thread) continues exactly as alone. A State without it
  // (sized otherwise) starts cold.
  const int n = EcpStepProblem::kFree + faces + 2;
  const bool has_memory = s.memory.size() == 2 + n;
  have_prev_ = has_memory && s.memory[0] == 1.0;
  if (have_prev_) {
    prev_k_ = static_cast<int>(s.memory[1]);
    prev_.resize(n);
    prev_ = s.memory.segment(2, n);
  }
  auto accept = [&] {
    s.t += h;
    s.step += 1;
    if (has_memory) {
      s.memory[0] = 1.0;
      s.memory[1] = prev_k_;
      s.memory.segment(2, n) = prev_;
    }
    return report_.status = Status::solved;
  };
  Status st = solve_step(m, s.q, t0, h);
  if (st == Status::solved) return accept();
  // Fallback: the same step as 2, 4, then 8 equal substeps (each a full solve_step from the
  // previous substep's end), when no face k gave an accepted solution for the whole step.
  // Seen at hard landings of a rocking body (a T-bar rotating through flat within one step,
  // docs/ecp.md "Substeps"): the one-step MNCP's Newton stalls, the halves solve.
  const Status whole_status = st;
  const std::string whole_detail = report_.detail;
  int pivots = report_.pivots, attempts = attempts_;
  for (int parts = 2; parts <= kEcpMaxSubsteps; parts *= 2) {
    s.q = start_q_;
    have_prev_ = false;  // the whole step's candidates changed nothing; restart cleanly
    double pn_sum = 0;
    st = Status::solved;
    for (int p = 0; p < parts && st == Status::solved; ++p) {
      st = solve_step(m, s.q, t0 + h * p / parts, h / parts);
      pivots += report_.pivots;
      attempts += attempts_;
      pn_sum += pn_;
    }
    if (st == Status::solved) {
      pn_ = pn_sum;  // the normal impulse over the whole step
      substeps_ = parts;
      report_.substeps = parts;
      report_.pivots = pivots;
      attempts_ = attempts;
      report_.contacts = pn_ > 0 ? 1 : 0;
      return accept();
    }
  }
  s.q = start_q_;
  have_prev_ = false;
  attempts_ = attempts;
  report_ = StepReport{};
  report_.pivots = pivots;
  return fail(whole_status, whole_detail + "; nor as 2, 4 or " + std::to_string(kEcpMaxSubsteps) + " substeps");
}

Status EcpNcp::solve_step(const Model& m, Eigen::VectorXd& q_state, double t, double h) {
  report_ = StepReport{};
  attempts_ = 0;
  const Body3& b = *m.body3;
  const int faces = hull_face_count(b);
  // Candidates for k (see the class comment): faces touching the lowest point at the start
  // of the step, then the other downward faces; each group most downward first (a face's
  // normal taken at that point: for a cylinder's side, the radial direction there).
  const Mat3 R0 = ecp_rotation(state_quaternion(q_state));
  const Vec3 c0 = state_position(q_state);
  Vec3 low;
  hull_lowest(b, R0, c0, 0.0, &low);
  const Vec3 low_body = R0.transpose() * (low - c0);
  const double scale = hull_extent(b);
  int count = 0;
  std::array<double, kEcpMaxHullFaces> key{};
  for (int i = 0; i < faces; ++i) {
    const double nz = hull_face_normal(b, i, R0, c0, low)[2];
    if (!(nz < -1e-12)) continue;
    const bool touches = std::abs(hull_face_value(b, i, low_body)) <= 1e-9 * (1 + scale);
    key[i] = (touches ? -2.0 : 0.0) + nz;
    order_[count++] = i;
  }
  std::stable_sort(order_.begin(), order_.begin() + count, [&](int a, int c) { return key[a] < key[c]; });
  // The previous step's k first, when it is still a candidate.
  for (int j = 0; j < count; ++j)
    if (order_[j] == prev_k_) std::rotate(order_.begin(), order_.begin() + j, order_.begin() + j + 1);
  if (count == 0) return fail(Status::numerical_failure, "no face of the hull faces the plane");

  NcpNewtonOptions opt;
  opt.tolerance = 1e-10;
  opt.max_iterations = 60;
  Status first_status = Status::not_run;
  double first_residual = 0;
  std::string rejected;
  std::array<char, kEcpMaxHullFaces> tried{};
  for (int pos = 0; pos < count; ++pos) {
    const int k = order_[pos];
    if (tried[k]) continue;
    tried[k] = 1;
    bool accepted = false;
    // From the previous step's solution (State::memory),
    // then from the cold start.
    for (int start_kind = 0; start_kind < 2 && !accepted; ++start_kind) {
      if (start_kind == 0 && !have_prev_) continue;
      prob_.setup(m, q_state, t, k, h);
      const int n = prob_.size();
      x0_.resize(n);
      if (start_kind == 0) {
        x0_ = prev_;
        if (prev_k_ != k) {
          // l_k is a distance and the other l_i weights only for a given k: restart them.
          Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, kCapacity, 1> cold(n);
          prob_.cold_start(cold);
          for (int i = 0; i < prob_.faces(); ++i) x0_[prob_.l1(i)] = cold[prob_.l1(i)];
          x0_[prob_.l2()] = cold[prob_.l2()];
        }
      } else {
        prob_.cold_start(x0_);
      }
      ++attempts_;
      const Status st = newton_.solve(n, EcpStepProblem::kFree, prob_, x0_, res_, opt);
      report_.pivots += res_.stats.iterations;
      if (attempts_ == 1) {
        first_status = st;
        first_residual = res_.stats.residual;
      }
      // Newton aims at 1e-10; where its merit stalls (not_found) on rounding just above that,
      // the point is accepted up to kEcpAcceptedResidual, the bar every step must meet.
      if (st != Status::solved && !(st == Status::not_found && res_.stats.residual <= kEcpAcceptedResidual)) continue;
      // Defensive (Proposition 2 excludes it): no hull vertex below the plane at the new pose.
      Vec3 c;
      Quat q;
      prob_.end_pose(res_.x, c, q);
      const double z_min = hull_lowest(b, ecp_rotation(q), c, 0.0);
      if (z_min >= -1e-9) {
        accepted = true;
        z_min_ = z_min;
      } else if (rejected.empty()) {
        rejected = "k = " + std::to_string(k) + " gave a solution whose lowest vertex is at z = " + sci(z_min);
      }
    }
    if (!accepted) continue;
    const int n = prob_.size();
    const Vec3 a1 = res_.x.segment<3>(EcpStepProblem::kA1);
    Vec3 c;
    Quat q;
    prob_.end_pose(res_.x, c, q);
    const double z_min = z_min_;
    // Accepted: write the new state.
    prev_ = res_.x;
    have_prev_ = true;
    prev_k_ = k;
    k_ = k;
    a1_ = a1;
    a2_ = res_.x.segment<3>(EcpStepProblem::kA2);
    pt_ = res_.x[EcpStepProblem::kPt];
    po_ = res_.x[EcpStepProblem::kPo];
    pr_ = res_.x[EcpStepProblem::kPr];
    pn_ = res_.x[prob_.pn()];
    sigma_ = res_.x[prob_.sigma()];
    z_min_ = z_min;
    q_state.segment<3>(0) = c;
    q_state.segment<4>(3) = q;
    q_state.segment<3>(7) = res_.x.segment<3>(EcpStepProblem::kV);
    q_state.segment<3>(10) = res_.x.segment<3>(EcpStepProblem::kW);
    report_.status = Status::solved;
    report_.contacts = pn_ > 0 ? 1 : 0;
    report_.problem_size = n;
    report_.complementarity_residual = res_.stats.residual;
    report_.linearised_penetration = std::min(0.0, z_min);  // the exact gap: the model is geometrically implicit
    return Status::solved;
  }
  std::string why = "no choice of the active face k of Xie & Chakraborty, eq. (13), gave an accepted solution (" +
                    std::to_string(attempts_) + " tried); the first ended " + std::string(to_string(first_status)) +
                    " with natural residual " + sci(first_residual);
  if (!rejected.empty()) why += "; " + rejected;
  return fail(first_status == Status::solved ? Status::not_found : first_status, why);
}

// ---- the planar-sliding reference -----------------------------------------------------

PlanarSlidingReference::PlanarSlidingReference(const Model&) {}

bool PlanarSlidingReference::setup(const Model& m, const Eigen::Ref<const Eigen::VectorXd>& q, double t) {
  const Body3& b = *m.body3;
  const Quat Q = state_quaternion(q);
  v0_ = q.segment<3>(7);
  w0_ = q.segment<3>(10);
  // Flat: a rotation about z only, no vertical or tilting velocity.
  if (std::abs(Q[1]) > 1e-12 || std::abs(Q[2]) > 1e-12 || std::abs(v0_[2]) > 1e-12 || std::abs(w0_[0]) > 1e-12 ||
      std::abs(w0_[1]) > 1e-12) {
    detail_ = "the planar-sliding reference needs a flat body (rotation about z only, v_z = w_x = w_y = 0)";
    return false;
  }
  h_ = m.step.h;
  mass_ = m.bodies[b.body].mass;
  mu_ = m.world.support_friction;
  et_ = m.params.ellipsoid_e_t;
  eo_ = m.params.ellipsoid_e_o;
  er_ = m.params.ellipsoid_e_r;
  const Mat3 R = ecp_rotation(Q);
  Iw_ = R * b.inertia * R.transpose();
  p_ext_ = ecp_external_impulse(m, q, t, h_);
  // Vertical balance with v_z = 0 before and after (seed 003 eq. (6), z row).
  pn_ = -p_ext_[2];
  rz_ = -q[2];  // the ECP is on the plane, the CM at height q_z
  if (!(pn_ > 0)) {
    detail_ = "the body would lift off (the applied loads carry its weight): no sliding contact";
    return false;
  }
  return true;
}

bool PlanarSlidingReference::operator()(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> F,
                                        Eigen::Ref<Eigen::MatrixXd> J) const {
  J.setZero();
  const double vx = x[0], vy = x[1], wz = x[2], pt = x[3], po = x[4], pr = x[5], sig = x[6];
  const double dw = wz - w0_[2];
  // The moment balance about x and y (the rows of eq. (6) whose angular velocities stay 0)
  // places the ECP: r_x = (r_z p_t + A_y) / p_n, r_y = (r_z p_o - A_x) / p_n.
  const double Ax = p_ext_[3] - Iw_(0, 2) * dw, Ay = p_ext_[4] - Iw_(1, 2) * dw;
  const double rx = (rz_ * pt + Ay) / pn_, ry = (rz_ * po - Ax) / pn_;
  const double drx_dpt = rz_ / pn_, drx_dwz = -Iw_(1, 2) / pn_;
  const double dry_dpo = rz_ / pn_, dry_dwz = Iw_(0, 2) / pn_;
  F[0] = -mass_ * (vx - v0_[0]) + pt + p_ext_[0];
  J(0, 0) = -mass_;
  J(0, 3) = 1;
  F[1] = -mass_ * (vy - v0_[1]) + po + p_ext_[1];
  J(1, 1) = -mass_;
  J(1, 4) = 1;
  F[2] = -Iw_(2, 2) * dw + rx * po - ry * pt + pr + p_ext_[5];
  J(2, 2) = -Iw_(2, 2) + po * drx_dwz - pt * dry_dwz;
  J(2, 3) = po * drx_dpt - ry;
  J(2, 4) = rx - pt * dry_dpo;
  J(2, 5) = 1;
  // Eq. (8) at the ECP: u = v + w x r, so u_x = v_x - w_z r_y, u_y = v_y + w_z r_x.
  const double ct = et_ * et_ * mu_ * pn_, co = eo_ * eo_ * mu_ * pn_, cr = er_ * er_ * mu_ * pn_;
  F[3] = ct * (vx - wz * ry) + pt * sig;
  J(3, 0) = ct;
  J(3, 2) = ct * (-ry - wz * dry_dwz);
  J(3, 4) = ct * (-wz * dry_dpo);
  J(3, 3) = sig;
  J(3, 6) = pt;
  F[4] = co * (vy + wz * rx) + po * sig;
  J(4, 1) = co;
  J(4, 2) = co * (rx + wz * drx_dwz);
  J(4, 3) = co * (wz * drx_dpt);
  J(4, 4) = sig;
  J(4, 6) = po;
  F[5] = cr * wz + pr * sig;
  J(5, 2) = cr;
  J(5, 5) = sig;
  J(5, 6) = pr;
  F[6] = (mu_ * pn_) * (mu_ * pn_) - (pt / et_) * (pt / et_) - (po / eo_) * (po / eo_) - (pr / er_) * (pr / er_);
  J(6, 3) = -2 * pt / (et_ * et_);
  J(6, 4) = -2 * po / (eo_ * eo_);
  J(6, 5) = -2 * pr / (er_ * er_);
  return F.allFinite();
}

Status PlanarSlidingReference::step(const Model& m, State& s) {
  detail_.clear();
  if (!m.body3 || s.q.size() != 13 || !(m.step.h > 0) || !(m.params.ellipsoid_e_r > 0)) {
    detail_ = "the sliding reference needs a body_on_plane model";
    return Status::bad_input;
  }
  if (!setup(m, s.q, s.t)) return Status::bad_input;
  if (!have_prev_) {
    x0_.setZero();
    x0_.head<2>() = v0_.head<2>();
    x0_[2] = w0_[2];
  }
  NcpNewtonOptions opt;
  opt.tolerance = 1e-10;
  opt.max_iterations = 60;
  const Status st = newton_.solve(7, 6, *this, x0_, res_, opt);
  if (st != Status::solved) {
    detail_ = "Newton ended " + std::string(to_string(st)) + " with natural residual " + sci(res_.stats.residual);
    return st;
  }
  x0_ = res_.x;
  have_prev_ = true;
  const double vx = res_.x[0], vy = res_.x[1], wz = res_.x[2], pt = res_.x[3], po = res_.x[4];
  const double dw = wz - w0_[2];
  const double Ax = p_ext_[3] - Iw_(0, 2) * dw, Ay = p_ext_[4] - Iw_(1, 2) * dw;
  // The same kinematic map as the ECP stepper (eq. (7), then normalisation).
  const Vec3 v(vx, vy, 0), w(0, 0, wz);
  s.q.segment<3>(0) += h_ * v;
  // r is measured from the CM at the end of the step, as r = a1 - q^{u+1} in eq. (2).
  ecp_ = Vec3(s.q[0] + (rz_ * pt + Ay) / pn_, s.q[1] + (rz_ * po - Ax) / pn_, 0.0);
  Quat Q = advance_quaternion(state_quaternion(s.q), w, h_);
  s.q.segment<4>(3) = Q / Q.norm();
  s.q.segment<3>(7) = v;
  s.q.segment<3>(10) = w;
  s.t += h_;
  s.step += 1;
  return Status::solved;
}

}  // namespace qs

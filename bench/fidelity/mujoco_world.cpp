#include "mujoco_world.hpp"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp_params.hpp"

namespace fidelity {
namespace {

using qs::Vec2;

[[noreturn]] void refuse(const std::string& what) { throw std::runtime_error(what); }

std::string num(double x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

// A name with a number appended ("s" + std::to_string(i) trips GCC 12's -Wrestrict at -O3).
std::string numbered(const char* prefix, std::size_t i) {
  std::string s = prefix;
  s += std::to_string(i);
  return s;
}

// The MuJoCo geom of scene shape i.
std::string shape_geom(int i) { return numbered("s", static_cast<std::size_t>(i)); }

// Where the scene's plane lies in MuJoCo. Vertical worlds: the plane (x, y) is MuJoCo's x-z
// plane (gravity -z) and a planar angle turns about -y. Tabletop worlds: the plane is MuJoCo's
// x-y plane, the table its z = 0 plane (gravity -z), every shape stands kDepth above it, and
// a planar angle turns about +z.
struct Plane {
  bool tabletop = false;

  // A point of a body: its geoms sit kDepth above the table in a tabletop world.
  std::string point(Vec2<double> p) const {
    return tabletop ? num(p.x) + " " + num(p.y) + " " + num(kDepth) : num(p.x) + " 0 " + num(p.y);
  }
  // A direction, or a body frame's offset from its parent (no height added).
  std::string dir(Vec2<double> v) const {
    return tabletop ? num(v.x) + " " + num(v.y) + " 0" : num(v.x) + " 0 " + num(v.y);
  }
  // The axis of a planar angle, and a rotation by theta (counter-clockwise in the scene) about it.
  const char* hinge_axis() const { return tabletop ? "0 0 1" : "0 -1 0"; }
  std::string turn(double theta) const { return std::string(hinge_axis()) + " " + num(theta); }
  // The half sizes of a box whose in-plane half sides are a and b.
  std::string box_size(double a, double b) const {
    return tabletop ? num(a) + " " + num(b) + " " + num(kDepth) : num(a) + " " + num(kDepth) + " " + num(b);
  }
};

Vec2<double> rotate(Vec2<double> p, double theta) {
  const double c = std::cos(theta), s = std::sin(theta);
  return {c * p.x - s * p.y, s * p.x + c * p.y};
}

// The geom of one shape, its points in its body's frame turned by `theta` first (a free
// body's angle that is not a DOF).
std::string geom(const Plane& pl, const qs::Model& m, int shape, double theta) {
  const qs::Shape& s = m.shapes[shape];
  std::vector<Vec2<double>> pts;
  for (const auto& p : s.points) pts.push_back(rotate(p, theta));
  const std::string name = "name=\"" + shape_geom(shape) + "\" ";
  const std::string where = "shape " + std::to_string(shape) + " of body " + m.bodies[s.body].name;
  switch (s.type) {
    case qs::ShapeType::disk:
      return "<geom " + name + "type=\"sphere\" pos=\"" + pl.point(pts[0]) + "\" size=\"" + num(s.radius) + "\"/>";
    case qs::ShapeType::segment:
    case qs::ShapeType::capsule: {
      const double r = s.type == qs::ShapeType::segment ? kSegmentRadius : s.radius;
      return "<geom " + name + "type=\"capsule\" fromto=\"" + pl.point(pts[0]) + " " + pl.point(pts[1]) + "\" size=\"" + num(r) + "\"/>";
    }
    case qs::ShapeType::box:
    case qs::ShapeType::polygon: {
      if (pts.size() != 4) refuse(where + ": only rectangles are translated to MuJoCo");
      const Vec2<double> e1 = pts[1] - pts[0], e2 = pts[2] - pts[1];
      const double l1 = std::hypot(e1.x, e1.y), l2 = std::hypot(e2.x, e2.y);
      if (std::abs(e1.x * e2.x + e1.y * e2.y) > 1e-9 * l1 * l2) refuse(where + ": only rectangles are translated to MuJoCo");
      const Vec2<double> c{(pts[0].x + pts[2].x) / 2, (pts[0].y + pts[2].y) / 2};
      return "<geom " + name + "type=\"box\" pos=\"" + pl.point(c) + "\" axisangle=\"" + pl.turn(std::atan2(e1.y, e1.x)) +
             "\" size=\"" + pl.box_size(l1 / 2, l2 / 2) + "\"/>";
    }
    case qs::ShapeType::half_plane: {
      const Vec2<double> n = rotate(s.normal, theta);
      return "<geom " + name + "type=\"plane\" pos=\"" + pl.point(pts[0]) + "\" zaxis=\"" + pl.dir(n) + "\" size=\"10 10 0.1\"/>";
    }
    case qs::ShapeType::point: break;
  }
  refuse(where + ": a point shape (radius 0) has no MuJoCo geom");
}

}  // namespace

double inertia_of(const qs::Model& m, const qs::Body& b, double mass) {
  if (b.inertia) return *b.inertia;
  if (!b.shapes.empty()) {
    const qs::Shape& s = m.shapes[b.shapes[0]];
    if (s.type == qs::ShapeType::disk) return mass * s.radius * s.radius / 2;
    if ((s.type == qs::ShapeType::box || s.type == qs::ShapeType::polygon) && s.points.size() == 4) {
      const Vec2<double> e1 = s.points[1] - s.points[0], e2 = s.points[2] - s.points[1];
      return mass * (e1.x * e1.x + e1.y * e1.y + e2.x * e2.x + e2.y * e2.y) / 12;
    }
  }
  return mass * 1e-4;
}

namespace {

// The points a tabletop object stands on: the centers of a kSupportGrid x kSupportGrid grid
// over its first disk or rectangle (those inside the disk), in its body frame. Equal points
// under a rigid body carry about equal loads: roughly the uniform pressure from which the
// scene's limit surface is computed (docs/scene-format.md).
std::vector<Vec2<double>> support_points(const qs::Model& m, const qs::Body& b) {
  for (int si : b.shapes) {
    const qs::Shape& s = m.shapes[si];
    std::vector<Vec2<double>> out;
    const double n = kSupportGrid;
    if (s.type == qs::ShapeType::disk) {
      for (int i = 0; i < kSupportGrid; ++i)
        for (int k = 0; k < kSupportGrid; ++k) {
          const Vec2<double> r{(2 * (i + 0.5) / n - 1) * s.radius, (2 * (k + 0.5) / n - 1) * s.radius};
          if (r.x * r.x + r.y * r.y <= s.radius * s.radius) out.push_back(s.points[0] + r);
        }
      return out;
    }
    if ((s.type == qs::ShapeType::box || s.type == qs::ShapeType::polygon) && s.points.size() == 4) {
      const Vec2<double> e1 = s.points[1] - s.points[0], e2 = s.points[2] - s.points[1];
      for (int i = 0; i < kSupportGrid; ++i)
        for (int k = 0; k < kSupportGrid; ++k) out.push_back(s.points[0] + ((i + 0.5) / n) * e1 + ((k + 0.5) / n) * e2);
      return out;
    }
  }
  refuse("tabletop object " + b.name + " needs a disk or a rectangle to stand on in MuJoCo");
}

std::string inertial(const Plane& pl, Vec2<double> com, double mass, double inertia) {
  return "<inertial pos=\"" + pl.point(com) + "\" mass=\"" + num(mass) + "\" diaginertia=\"" + num(inertia) + " " +
         num(inertia) + " " + num(inertia) + "\"/>";
}

// MuJoCo reports warnings through this hook (by default it appends them to MUJOCO_LOG.TXT in
// the working directory); run() turns the one that matters, an unstable simulation, into an
// error.
void keep_quiet(const char*) {}

}  // namespace

std::string mujoco_version() {
  const int v = mj_version();
  return std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." + std::to_string(v % 10);
}

MujocoWorld::MujocoWorld(const qs::Model& m, const qs::WorldParams& p, const MujocoOptions& o)
    : model_(m), params_(p), options_(o) {
  const Plane pl{m.world.type == qs::WorldType::tabletop};
  if (m.world.type != qs::WorldType::vertical && !pl.tabletop)
    refuse("only vertical and tabletop worlds are translated to MuJoCo");
  if (!m.loads.empty()) refuse("external loads are not translated to MuJoCo");
  if (m.formulation == qs::Formulation::perfect_velocity_lcp)
    refuse("perfect velocity control has no finite-gain servo to simulate: use halm_posa_lcp");
  const int nq = m.n_q();
  qpos_of_dof_.assign(nq, -1);
  dof_of_dof_.assign(nq, -1);

  std::ostringstream x;
  x << "<mujoco model=\"" << m.name << "\">\n<compiler angle=\"radian\"/>\n"
    << "<option timestep=\"" << num(o.dt) << "\" gravity=\"0 0 " << num(-m.world.gravity)
    << "\" cone=\"elliptic\" impratio=\"" << num(o.impratio) << "\" noslip_iterations=\"" << o.noslip_iterations
    << "\"/>\n<default><geom contype=\"0\" conaffinity=\"0\"/></default>\n<worldbody>\n";
  if (pl.tabletop) x << "<geom name=\"table\" type=\"plane\" size=\"10 10 0.1\"/>\n";

  // Bodies hang from the world, a fixed body or a linked body through their joint; free bodies
  // are their own trees.
  std::vector<std::vector<int>> children(m.bodies.size() + 1);  // [0]: the world frame
  for (const qs::Joint& j : m.joints) children[j.parent + 1].push_back(static_cast<int>(&j - m.joints.data()));

  auto emit_tree = [&](auto&& self, int parent) -> void {
    for (int ji : children[parent + 1]) {
      const qs::Joint& j = m.joints[ji];
      const qs::Body& b = m.bodies[j.child];
      const double theta = std::atan2(j.origin.s, j.origin.c);
      x << "<body name=\"" << b.name << "\" pos=\"" << pl.dir(j.origin.translation) << "\" axisangle=\""
        << pl.turn(theta) << "\">\n";
      if (j.type == qs::JointType::prismatic)
        x << "<joint name=\"" << j.name << "\" type=\"slide\" axis=\"" << pl.dir(j.axis) << "\"/>\n";
      else
        x << "<joint name=\"" << j.name << "\" type=\"hinge\" axis=\"" << pl.hinge_axis() << "\"/>\n";
      const double mass = p.body_mass[j.child] > 0 ? p.body_mass[j.child] : kLinkMass;
      x << inertial(pl, b.com, mass, inertia_of(m, b, mass)) << "\n";
      for (int s : b.shapes) x << geom(pl, m, s, 0.0) << "\n";
      self(self, j.child);
      x << "</body>\n";
    }
  };

  std::vector<std::string> support_geoms;  // tabletop: the object's support points
  for (size_t bi = 0; bi < m.bodies.size(); ++bi) {
    const qs::Body& b = m.bodies[bi];
    const int i = static_cast<int>(bi);
    if (b.kind == qs::BodyKind::fixed) {
      const auto& pose = p.body_pose[bi];
      x << "<body name=\"" << b.name << "\" pos=\"" << pl.dir({pose[0], pose[1]}) << "\" axisangle=\""
        << pl.turn(pose[2]) << "\">\n";
      for (int s : b.shapes) x << geom(pl, m, s, 0.0) << "\n";
      emit_tree(emit_tree, i);
      x << "</body>\n";
    } else if (b.kind == qs::BodyKind::free) {
      // Translation-only body frame: a non-DOF angle turns the geoms instead, so that the
      // slide joints stay along the scene's x and y.
      const auto& pose = p.body_pose[bi];
      const Vec2<double> fixed_xy{b.dof[0] < 0 ? pose[0] : 0.0, b.dof[1] < 0 ? pose[1] : 0.0};
      const double fixed_theta = b.dof[2] < 0 ? pose[2] : 0.0;
      x << "<body name=\"" << b.name << "\" pos=\"" << pl.dir(fixed_xy) << "\">\n";
      if (b.dof[0] >= 0) x << "<joint name=\"" << b.name << ".x\" type=\"slide\" axis=\"" << pl.dir({1, 0}) << "\"/>\n";
      if (b.dof[1] >= 0) x << "<joint name=\"" << b.name << ".y\" type=\"slide\" axis=\"" << pl.dir({0, 1}) << "\"/>\n";
      // On a table the object also moves up and down, so that gravity presses it on its
      // support points and their friction is mu_s m g in all.
      if (pl.tabletop) x << "<joint name=\"" << b.name << ".z\" type=\"slide\" axis=\"0 0 1\"/>\n";
      if (b.dof[2] >= 0)
        x << "<joint name=\"" << b.name << ".theta\" type=\"hinge\" axis=\"" << pl.hinge_axis() << "\"/>\n";
      const double mass = p.body_mass[bi];
      if (!(mass > 0)) refuse("free body " + b.name + " needs a mass > 0 for full dynamics");
      x << inertial(pl, rotate(b.com, fixed_theta), mass, inertia_of(m, b, mass)) << "\n";
      for (int s : b.shapes) x << geom(pl, m, s, fixed_theta) << "\n";
      if (pl.tabletop) {
        for (const Vec2<double>& r : support_points(m, b)) {
          const Vec2<double> rr = rotate(r, fixed_theta);
          support_geoms.push_back(numbered("support", support_geoms.size()));
          x << "<geom name=\"" << support_geoms.back() << "\" type=\"sphere\" pos=\"" << num(rr.x) << " " << num(rr.y)
            << " " << num(kSupportRadius) << "\" size=\"" << num(kSupportRadius) << "\"/>\n";
        }
      }
      x << "</body>\n";
    }
  }
  emit_tree(emit_tree, -1);
  x << "</worldbody>\n<contact>\n";
  auto pair = [&](const std::string& g1, const std::string& g2, double mu) {
    x << "<pair geom1=\"" << g1 << "\" geom2=\"" << g2 << "\" condim=\"3\" friction=\"" << num(mu) << " " << num(mu)
      << " 0.005 0.0001 0.0001\" solref=\"" << num(kContactTimeConstant) << " 1\"/>\n";
  };
  for (size_t k = 0; k < m.pairs.size(); ++k)
    pair(shape_geom(m.pairs[k].shape_a), shape_geom(m.pairs[k].shape_b), p.pair_friction[k]);
  for (const std::string& g : support_geoms) pair(g, "table", m.world.support_friction);
  x << "</contact>\n</mujoco>\n";
  xml_ = x.str();

  mju_user_warning = keep_quiet;
  // Load from memory through MuJoCo's virtual file system.
  auto vfs = std::make_unique<mjVFS>();
  mj_defaultVFS(vfs.get());
  const char* file = "scene.xml";
  if (mj_makeEmptyFileVFS(vfs.get(), file, static_cast<int>(xml_.size())) != 0) refuse("MuJoCo's VFS is full");
  const int f = mj_findFileVFS(vfs.get(), file);
  std::memcpy(vfs->filedata[f], xml_.data(), xml_.size());
  char error[1000] = "";
  m_ = mj_loadXML(file, vfs.get(), error, sizeof error);
  mj_deleteVFS(vfs.get());
  if (!m_) refuse(std::string("MuJoCo did not load the translated scene: ") + error);
  d_ = mj_makeData(m_);

  // The scene's DOFs in MuJoCo: joints by name.
  for (int i = 0; i < nq; ++i) {
    const qs::Dof& dof = m.dofs[i];
    const int id = mj_name2id(m_, mjOBJ_JOINT, dof.name.c_str());
    if (id < 0) refuse("DOF " + dof.name + " has no MuJoCo joint");
    qpos_of_dof_[i] = m_->jnt_qposadr[id];
    dof_of_dof_[i] = m_->jnt_dofadr[id];
  }
  if (m.formulation == qs::Formulation::halm_posa_lcp) {
    // Halm & Posa 2018, eq. (33): the arm's displacement leaves its command by c B J_m' Lambda,
    // a velocity feedback whose mobility is B; the servo that has it is the torque
    // D (u - qdot) on the actuated joints, D = servo_gain B^-1 (the scale c has no physical
    // counterpart: the fidelity study sweeps it).
    const std::optional<Eigen::MatrixXd>& gain_B = qs::formulation_params<qs::HalmPosaParams>(m).gain_B;
    const Eigen::MatrixXd B = gain_B ? *gain_B : Eigen::MatrixXd::Identity(m.n_a, m.n_a);
    servo_damping_ = o.servo_gain * B.inverse();
  } else {
    // Critical damping of each velocity-commanded joint's spring, with its own inertia.
    damping_.assign(nq, 0.0);
    for (const qs::Joint& j : m.joints) {
      if (j.control != qs::Control::velocity) continue;
      const double K = params_.joint_gain.empty() ? 0.0 : params_.joint_gain[j.dof - m.n_u];
      if (!(K > 0)) refuse("joint " + j.name + ": the MuJoCo servo needs the scene's stiffness K_a > 0 (anitescu_qp)");
      damping_[j.dof] = 2 * std::sqrt(K * m_->dof_M0[dof_of_dof_[j.dof]]);
    }
  }
}

MujocoWorld::~MujocoWorld() {
  if (d_) mj_deleteData(d_);
  if (m_) mj_deleteModel(m_);
}

void MujocoWorld::reset() {
  mj_resetData(m_, d_);
  const qs::State s = qs::initial_state(model_);
  for (int i = 0; i < model_.n_q(); ++i) d_->qpos[qpos_of_dof_[i]] = s.q[i];
  mj_forward(m_, d_);
}

std::optional<qs::Vec2<double>> MujocoWorld::initial_center(int shape) {
  const qs::ShapeType type = model_.shapes[shape].type;
  if (type != qs::ShapeType::disk && type != qs::ShapeType::box && type != qs::ShapeType::polygon) return std::nullopt;
  const int id = mj_name2id(m_, mjOBJ_GEOM, shape_geom(shape).c_str());
  if (id < 0) return std::nullopt;
  reset();
  const double* p = d_->geom_xpos + 3 * id;
  return model_.world.type == qs::WorldType::tabletop ? qs::Vec2<double>{p[0], p[1]} : qs::Vec2<double>{p[0], p[2]};
}

void MujocoWorld::read_q(std::vector<double>& q) const {
  q.resize(model_.n_q());
  for (int i = 0; i < model_.n_q(); ++i) q[i] = d_->qpos[qpos_of_dof_[i]];
}

std::vector<Sample> MujocoWorld::run(double t_end, int sample_every) {
  reset();
  max_penetration_ = 0;
  const qs::Model& m = model_;
  const double dt = m_->opt.timestep;
  const int steps = static_cast<int>(std::lround(t_end / dt));
  std::vector<double> reference(m.n_q());
  for (const qs::Joint& j : m.joints) reference[j.dof] = j.initial_position;
  Eigen::VectorXd velocity_error = Eigen::VectorXd::Zero(m.n_a);  // halm_posa_lcp: u - qdot per actuated joint
  std::vector<Sample> out;
  auto sample = [&] {
    Sample s;
    s.t = d_->time;
    read_q(s.q);
    out.push_back(std::move(s));
  };
  sample();
  for (int k = 1; k <= steps; ++k) {
    mj_step1(m_, d_);  // positions, velocities and bias forces of this state
    mju_zero(d_->qfrc_applied, m_->nv);
    const double t_mid = d_->time + dt / 2;
    for (const qs::Joint& j : m.joints) {
      const int v = dof_of_dof_[j.dof];
      double force = d_->qfrc_bias[v];  // the controller compensates gravity (and the robot's own bias forces)
      if (j.control == qs::Control::velocity) {
        const double u = params_.velocity(m, j, t_mid);
        if (servo_damping_.size() > 0) {
          velocity_error[j.dof - m.n_u] = u - d_->qvel[v];
        } else {
          // The reference moves as the Anitescu step's does: q̄' = q̄ + dt u(t + dt/2).
          reference[j.dof] += dt * u;
          const double K = params_.joint_gain[j.dof - m.n_u];
          force += K * (reference[j.dof] - d_->qpos[qpos_of_dof_[j.dof]]) + damping_[j.dof] * (u - d_->qvel[v]);
        }
      } else {
        force += j.command(t_mid);
      }
      d_->qfrc_applied[v] = force;
    }
    if (servo_damping_.size() > 0) {
      const Eigen::VectorXd torque = servo_damping_ * velocity_error;
      for (const qs::Joint& j : m.joints)
        if (j.control == qs::Control::velocity) d_->qfrc_applied[dof_of_dof_[j.dof]] += torque[j.dof - m.n_u];
    }
    mj_step2(m_, d_);
    for (int c = 0; c < d_->ncon; ++c) max_penetration_ = std::max(max_penetration_, -d_->contact[c].dist);
    if (d_->warning[mjWARN_BADQACC].number > 0)
      refuse("MuJoCo's simulation of " + m.name + " became unstable at t = " + num(d_->time) + " s (try a smaller --dt)");
    if (k % sample_every == 0 || k == steps) sample();
  }
  return out;
}

}  // namespace fidelity

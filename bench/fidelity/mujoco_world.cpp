#include "mujoco_world.hpp"

#include <mujoco/mujoco.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

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

// A point of the scene's plane in MuJoCo's x-z plane.
std::string at(Vec2<double> p) { return num(p.x) + " 0 " + num(p.y); }

// A planar rotation by theta (counter-clockwise in the scene) about MuJoCo's -y axis.
std::string turn(double theta) { return "0 -1 0 " + num(theta); }

Vec2<double> rotate(Vec2<double> p, double theta) {
  const double c = std::cos(theta), s = std::sin(theta);
  return {c * p.x - s * p.y, s * p.x + c * p.y};
}

// The geom of one shape, its points in its body's frame turned by `theta` first (a free
// body's angle that is not a DOF).
std::string geom(const qs::Model& m, int shape, double theta) {
  const qs::Shape& s = m.shapes[shape];
  std::vector<Vec2<double>> pts;
  for (const auto& p : s.points) pts.push_back(rotate(p, theta));
  const std::string name = "name=\"s" + std::to_string(shape) + "\" ";
  const std::string where = "shape " + std::to_string(shape) + " of body " + m.bodies[s.body].name;
  switch (s.type) {
    case qs::ShapeType::disk:
      return "<geom " + name + "type=\"sphere\" pos=\"" + at(pts[0]) + "\" size=\"" + num(s.radius) + "\"/>";
    case qs::ShapeType::segment:
    case qs::ShapeType::capsule: {
      const double r = s.type == qs::ShapeType::segment ? kSegmentRadius : s.radius;
      return "<geom " + name + "type=\"capsule\" fromto=\"" + at(pts[0]) + " " + at(pts[1]) + "\" size=\"" + num(r) + "\"/>";
    }
    case qs::ShapeType::box:
    case qs::ShapeType::polygon: {
      if (pts.size() != 4) refuse(where + ": only rectangles are translated to MuJoCo");
      const Vec2<double> e1 = pts[1] - pts[0], e2 = pts[2] - pts[1];
      const double l1 = std::hypot(e1.x, e1.y), l2 = std::hypot(e2.x, e2.y);
      if (std::abs(e1.x * e2.x + e1.y * e2.y) > 1e-9 * l1 * l2) refuse(where + ": only rectangles are translated to MuJoCo");
      const Vec2<double> c{(pts[0].x + pts[2].x) / 2, (pts[0].y + pts[2].y) / 2};
      return "<geom " + name + "type=\"box\" pos=\"" + at(c) + "\" axisangle=\"" + turn(std::atan2(e1.y, e1.x)) +
             "\" size=\"" + num(l1 / 2) + " " + num(kDepth) + " " + num(l2 / 2) + "\"/>";
    }
    case qs::ShapeType::half_plane: {
      const Vec2<double> n = rotate(s.normal, theta);
      return "<geom " + name + "type=\"plane\" pos=\"" + at(pts[0]) + "\" zaxis=\"" + at(n) + "\" size=\"10 10 0.1\"/>";
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

std::string inertial(Vec2<double> com, double mass, double inertia) {
  return "<inertial pos=\"" + at(com) + "\" mass=\"" + num(mass) + "\" diaginertia=\"" + num(inertia) + " " +
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
  if (m.world.type != qs::WorldType::vertical) refuse("only vertical worlds are translated to MuJoCo");
  if (!m.loads.empty()) refuse("external loads are not translated to MuJoCo");
  const int nq = m.n_q();
  qpos_of_dof_.assign(nq, -1);
  dof_of_dof_.assign(nq, -1);
  damping_.assign(nq, 0.0);

  std::ostringstream x;
  x << "<mujoco model=\"" << m.name << "\">\n<compiler angle=\"radian\"/>\n"
    << "<option timestep=\"" << num(o.dt) << "\" gravity=\"0 0 " << num(-m.world.gravity)
    << "\" cone=\"elliptic\" impratio=\"" << num(o.impratio) << "\" noslip_iterations=\"" << o.noslip_iterations
    << "\"/>\n<default><geom contype=\"0\" conaffinity=\"0\"/></default>\n<worldbody>\n";

  // Bodies hang from the world, a fixed body or a linked body through their joint; free bodies
  // are their own trees.
  std::vector<std::vector<int>> children(m.bodies.size() + 1);  // [0]: the world frame
  for (const qs::Joint& j : m.joints) children[j.parent + 1].push_back(static_cast<int>(&j - m.joints.data()));

  auto emit_tree = [&](auto&& self, int parent) -> void {
    for (int ji : children[parent + 1]) {
      const qs::Joint& j = m.joints[ji];
      const qs::Body& b = m.bodies[j.child];
      const double theta = std::atan2(j.origin.s, j.origin.c);
      x << "<body name=\"" << b.name << "\" pos=\"" << at(j.origin.translation) << "\" axisangle=\"" << turn(theta)
        << "\">\n";
      if (j.type == qs::JointType::prismatic)
        x << "<joint name=\"" << j.name << "\" type=\"slide\" axis=\"" << at(j.axis) << "\"/>\n";
      else
        x << "<joint name=\"" << j.name << "\" type=\"hinge\" axis=\"0 -1 0\"/>\n";
      const double mass = p.body_mass[j.child] > 0 ? p.body_mass[j.child] : kLinkMass;
      x << inertial(b.com, mass, inertia_of(m, b, mass)) << "\n";
      for (int s : b.shapes) x << geom(m, s, 0.0) << "\n";
      self(self, j.child);
      x << "</body>\n";
    }
  };

  for (size_t bi = 0; bi < m.bodies.size(); ++bi) {
    const qs::Body& b = m.bodies[bi];
    const int i = static_cast<int>(bi);
    if (b.kind == qs::BodyKind::fixed) {
      const auto& pose = p.body_pose[bi];
      x << "<body name=\"" << b.name << "\" pos=\"" << at({pose[0], pose[1]}) << "\" axisangle=\"" << turn(pose[2])
        << "\">\n";
      for (int s : b.shapes) x << geom(m, s, 0.0) << "\n";
      emit_tree(emit_tree, i);
      x << "</body>\n";
    } else if (b.kind == qs::BodyKind::free) {
      // Translation-only body frame: a non-DOF angle turns the geoms instead, so that the
      // slide joints stay along the scene's x and y.
      const auto& pose = p.body_pose[bi];
      const Vec2<double> fixed_xy{b.dof[0] < 0 ? pose[0] : 0.0, b.dof[1] < 0 ? pose[1] : 0.0};
      const double fixed_theta = b.dof[2] < 0 ? pose[2] : 0.0;
      x << "<body name=\"" << b.name << "\" pos=\"" << at(fixed_xy) << "\">\n";
      if (b.dof[0] >= 0) x << "<joint name=\"" << b.name << ".x\" type=\"slide\" axis=\"1 0 0\"/>\n";
      if (b.dof[1] >= 0) x << "<joint name=\"" << b.name << ".y\" type=\"slide\" axis=\"0 0 1\"/>\n";
      if (b.dof[2] >= 0) x << "<joint name=\"" << b.name << ".theta\" type=\"hinge\" axis=\"0 -1 0\"/>\n";
      const double mass = p.body_mass[bi];
      if (!(mass > 0)) refuse("free body " + b.name + " needs a mass > 0 for full dynamics");
      x << inertial(rotate(b.com, fixed_theta), mass, inertia_of(m, b, mass)) << "\n";
      for (int s : b.shapes) x << geom(m, s, fixed_theta) << "\n";
      x << "</body>\n";
    }
  }
  emit_tree(emit_tree, -1);
  x << "</worldbody>\n<contact>\n";
  for (size_t k = 0; k < m.pairs.size(); ++k) {
    const qs::ContactPair& c = m.pairs[k];
    const double mu = p.pair_friction[k];
    x << "<pair geom1=\"s" << c.shape_a << "\" geom2=\"s" << c.shape_b << "\" condim=\"3\" friction=\"" << num(mu) << " "
      << num(mu) << " 0.005 0.0001 0.0001\" solref=\"" << num(kContactTimeConstant) << " 1\"/>\n";
  }
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
  // Critical damping of each velocity-commanded joint's spring, with its own inertia.
  for (const qs::Joint& j : m.joints) {
    if (j.control != qs::Control::velocity) continue;
    const double K = params_.joint_stiffness.empty() ? 0.0 : params_.joint_stiffness[j.dof - m.n_u];
    if (!(K > 0)) refuse("joint " + j.name + ": the MuJoCo servo needs the scene's stiffness K_a > 0 (anitescu_qp)");
    damping_[j.dof] = 2 * std::sqrt(K * m_->dof_M0[dof_of_dof_[j.dof]]);
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

void MujocoWorld::read_q(std::vector<double>& q) const {
  q.resize(model_.n_q());
  for (int i = 0; i < model_.n_q(); ++i) q[i] = d_->qpos[qpos_of_dof_[i]];
}

std::vector<Sample> MujocoWorld::run(double t_end, int sample_every) {
  reset();
  const qs::Model& m = model_;
  const double dt = m_->opt.timestep;
  const int steps = static_cast<int>(std::lround(t_end / dt));
  std::vector<double> reference(m.n_q());
  for (const qs::Joint& j : m.joints) reference[j.dof] = j.initial_position;
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
        // The reference moves as the Anitescu step's does: q̄' = q̄ + dt u(t + dt/2).
        const double u = params_.velocity(m, j, t_mid);
        reference[j.dof] += dt * u;
        const double K = params_.joint_stiffness[j.dof - m.n_u];
        force += K * (reference[j.dof] - d_->qpos[qpos_of_dof_[j.dof]]) + damping_[j.dof] * (u - d_->qvel[v]);
      } else {
        force += j.command(t_mid);
      }
      d_->qfrc_applied[v] = force;
    }
    mj_step2(m_, d_);
    if (d_->warning[mjWARN_BADQACC].number > 0)
      refuse("MuJoCo's simulation of " + m.name + " became unstable at t = " + num(d_->time) + " s (try a smaller --dt)");
    if (k % sample_every == 0 || k == steps) sample();
  }
  return out;
}

}  // namespace fidelity

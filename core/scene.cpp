#include "quasistep/core/scene.hpp"

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/formulations/formulation_table.hpp"
#include "quasistep/core/scene_body_on_plane.hpp"
#include "quasistep/core/scene_reading.hpp"
#include "quasistep/core/json_node.hpp"
#include "quasistep/core/kinematics.hpp"
#include "quasistep/core/number_text.hpp"
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <nlohmann/json.hpp>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <unordered_map>

namespace qs {
namespace {

using json_input::json;
using json_input::Node;
using json_input::json_quote;

// ---- pieces ------------------------------------------------------------------------------

Schedule read_schedule(const Node& n) {
  if (n.raw().is_number()) return Schedule::constant(n.number());
  n.expect_object({"breaks", "values", "terms"});
  std::vector<double> breaks, values;
  if (auto b = n.get("breaks")) {
    const size_t k = b->array();
    for (size_t i = 0; i < k; ++i) {
      breaks.push_back(b->item(i).number());
      if (i > 0 && !(breaks[i] > breaks[i - 1])) b->item(i).fail("breaks must be strictly increasing");
    }
  }
  if (auto v = n.get("values")) {
    const size_t k = v->array(1);
    for (size_t i = 0; i < k; ++i) values.push_back(v->item(i).number());
    if (values.size() != breaks.size() + 1)
      v->fail("must have one more entry than breaks (" + std::to_string(breaks.size() + 1) + "), has " +
              std::to_string(values.size()));
  } else {
    if (!breaks.empty()) n.at("values");  // throws "missing"
    values = {0.0};
  }
  std::vector<Schedule::Term> terms;
  if (auto t = n.get("terms")) {
    const size_t k = t->array();
    for (size_t i = 0; i < k; ++i) {
      const Node term = t->item(i);
      term.expect_object({"wave", "amplitude", "frequency", "phase"});
      Schedule::Term s;
      s.wave = term.at("wave").choice<Schedule::Wave>({{"sin", Schedule::Wave::sin}, {"cos", Schedule::Wave::cos}});
      s.amplitude = term.at("amplitude").number();
      s.frequency = term.at("frequency").number();
      if (auto p = term.get("phase")) s.phase = p->number();
      terms.push_back(s);
    }
  }
  return Schedule(std::move(breaks), std::move(values), std::move(terms));
}

Pose2<double> read_pose(const Node& n) {
  const auto p = n.fixed_vector<3>();
  return Pose2<double>::from_xytheta(p[0], p[1], p[2]);
}

/// Convex polygon vertices in counter-clockwise order (either orientation accepted).
std::vector<Vec2<double>> read_convex_polygon(const Node& n) {
  const size_t k = n.array(3);
  if (k > static_cast<size_t>(kMaxPolygonVertices))
    n.fail("at most " + std::to_string(kMaxPolygonVertices) + " vertices (split larger shapes into convex pieces)");
  std::vector<Vec2<double>> v;
  for (size_t i = 0; i < k; ++i) v.push_back(n.item(i).vec2());
  double area2 = 0, scale = 0;
  for (size_t i = 0; i < k; ++i) {
    area2 += cross(v[i], v[(i + 1) % k]);
    scale = std::max(scale, norm(v[i] - v[(i + 1) % k]));
  }
  if (area2 < 0) std::reverse(v.begin(), v.end());
  // Strictly convex: every turn is to the left, and the turns add up to one full turn (a
  // star polygon turns left at every vertex too, but winds twice).
  const char* why = "vertices must form a strictly convex polygon (collinear, repeated, reflex or crossing "
                    "vertices found; describe a non-convex body as several convex shapes)";
  double turning = 0;
  for (size_t i = 0; i < k; ++i) {
    const Vec2<double> e1 = v[(i + 1) % k] - v[i];
    const Vec2<double> e2 = v[(i + 2) % k] - v[(i + 1) % k];
    if (!(cross(e1, e2) > 1e-12 * scale * scale)) n.fail(why);
    turning += std::atan2(cross(e1, e2), dot(e1, e2));
  }
  if (std::abs(turning - 2 * M_PI) > 1e-6) n.fail(why);
  return v;
}

Shape read_shape(const Node& n, int body, BodyKind kind) {
  if (!n.raw().is_object()) n.fail("must be an object");
  Shape s;
  s.body = body;
  s.type = n.at("type").choice<ShapeType>({{"point", ShapeType::point},
                                           {"disk", ShapeType::disk},
                                           {"segment", ShapeType::segment},
                                           {"capsule", ShapeType::capsule},
                                           {"box", ShapeType::box},
                                           {"polygon", ShapeType::polygon},
                                           {"half_plane", ShapeType::half_plane}});
  std::vector<Vec2<double>> local;  // core geometry in the shape frame
  switch (s.type) {
    case ShapeType::point:
      n.expect_object({"type", "pose"});
      s.core = ShapeCore::point;
      local = {{0, 0}};
      break;
    case ShapeType::disk:
      n.expect_object({"type", "pose", "radius"});
      s.core = ShapeCore::point;
      s.radius = n.at("radius").positive();
      local = {{0, 0}};
      break;
    case ShapeType::segment:
    case ShapeType::capsule: {
      if (s.type == ShapeType::segment) {
        n.expect_object({"type", "pose", "a", "b"});
      } else {
        n.expect_object({"type", "pose", "a", "b", "radius"});
        s.radius = n.at("radius").positive();
      }
      s.core = ShapeCore::segment;
      local = {n.at("a").vec2(), n.at("b").vec2()};
      if (!(norm(local[1] - local[0]) > 0)) n.child("b").fail("must differ from a");
      break;
    }
    case ShapeType::box: {
      n.expect_object({"type", "pose", "size"});
      s.core = ShapeCore::polygon;
      const Node size = n.at("size");
      const auto wh = size.fixed_vector<2>();
      if (!(wh[0] > 0 && wh[1] > 0)) size.fail("both entries must be > 0");
      const double hx = wh[0] / 2, hy = wh[1] / 2;
      local = {{-hx, -hy}, {hx, -hy}, {hx, hy}, {-hx, hy}};
      break;
    }
    case ShapeType::polygon:
      n.expect_object({"type", "pose", "vertices"});
      s.core = ShapeCore::polygon;
      local = read_convex_polygon(n.at("vertices"));
      break;
    case ShapeType::half_plane: {
      n.expect_object({"type", "pose", "normal"});
      if (kind != BodyKind::fixed) n.child("type").fail("a half_plane is only allowed on a fixed body");
      s.core = ShapeCore::half_plane;
      const Node nn = n.at("normal");
      const Vec2<double> v = nn.vec2();
      const double len = norm(v);
      if (!(len > 0)) nn.fail("must be a non-zero vector");
      s.normal = {v.x / len, v.y / len};
      local = {{0, 0}};
      break;
    }
  }
  const Pose2<double> offset = n.has("pose") ? read_pose(n.child("pose")) : Pose2<double>{};
  for (const Vec2<double>& p : local) s.points.push_back(offset.apply(p));
  s.normal = offset.rotate(s.normal);
  return s;
}

World read_world(const Node& n) {
  n.expect_object({"type", "gravity", "support_friction"});
  World w;
  w.type = n.at("type").choice<WorldType>({{"vertical", WorldType::vertical},
                                           {"tabletop", WorldType::tabletop},
                                           {"body_on_plane", WorldType::body_on_plane}});
  if (auto g = n.get("gravity")) w.gravity = g->nonnegative();
  if (auto mu = n.get("support_friction")) {
    // body_on_plane (Xie & Chakraborty 2021): mu of the body on the plane z = 0.
    if (w.type == WorldType::vertical) mu->fail("only a tabletop or body_on_plane world has a support");
    w.support_friction = mu->nonnegative();
  }
  return w;
}

// ---- the compiler ----------------------------------------------------------------------

class Compiler {
 public:
  explicit Compiler(const json& doc) : root_(doc, "") {}

  Scene run() {
    check_format();
    root_.expect_object({"format", "name", "description", "world", "model", "step", "bodies", "joints", "contacts",
                         "loads", "commands", "overrides", "uncertainty", "success", "plan"});
    if (auto n = root_.get("name")) m_.name = n->string();
    if (auto d = root_.get("description")) description_ = d->string();
    m_.world = read_world(root_.at("world"));
    // ---- body_on_plane (Xie & Chakraborty 2021, core/scene_body_on_plane.cpp): one 3D body on the plane z = 0 ----
    if (m_.world.type == WorldType::body_on_plane) {
      read_body_on_plane(root_, m_, read_schedule);
      read_model(root_.at("model"));
      if (auto s = root_.get("step")) read_step(*s);
      for (const char* key : {"overrides", "uncertainty", "success", "plan"})
        if (auto o = root_.get(key)) o->fail("not supported in a body_on_plane world yet");
      Scene scene;
      scene.model = std::make_shared<Model>(std::move(m_));
      scene.description = std::move(description_);
      return scene;
    }
    // ---- end body_on_plane ----
    read_bodies(root_.at("bodies"));
    if (auto j = root_.get("joints")) read_joints(*j);
    check_linked_bodies();
    number_dofs();
    order_bodies();
    read_model(root_.at("model"));
    if (auto s = root_.get("step")) read_step(*s);
    read_contacts(root_.get("contacts"));
    if (auto l = root_.get("loads")) read_loads(*l);
    if (auto c = root_.get("commands")) read_commands(*c);

    Scene scene;
    auto model = std::make_shared<Model>(std::move(m_));
    if (auto o = root_.get("overrides")) scene.overrides = read_overrides(*model, *o);
    if (auto u = root_.get("uncertainty")) scene.uncertainty = read_uncertainty(*model, *u);
    if (auto s = root_.get("success")) scene.success = read_success(*model, *s);
    if (auto p = root_.get("plan")) scene.plan = read_plan(*model, *p);
    scene.model = std::move(model);
    scene.description = std::move(description_);
    return scene;
  }

 private:
  void check_format() {
    if (!root_.raw().is_object()) root_.fail("a scene must be a JSON object");
    const Node f = root_.at("format");
    if (!f.raw().is_number_integer()) f.fail("must be the integer " + std::to_string(kSceneFormatVersion));
    if (f.raw() != kSceneFormatVersion)
      f.fail("format version " + f.raw().dump() + " is not known to this reader (it reads format " +
             std::to_string(kSceneFormatVersion) + ")");
  }

  // Names are looked up in hash maps: Model::find_body scans, which made reading a scene of
  // many bodies quadratic.
  int find_body(const std::string& name) const {
    const auto it = body_by_name_.find(name);
    return it == body_by_name_.end() ? -1 : it->second;
  }

  int body_index(const Node& n, bool allow_world) const {
    const std::string name = n.string();
    if (allow_world && name == "world") return -1;
    const int b = find_body(name);
    if (b < 0) n.fail("no body named " + json_quote(name));
    return b;
  }

  void read_bodies(const Node& list) {
    const size_t k = list.array(1);
    for (size_t i = 0; i < k; ++i) {
      const Node n = list.item(i);
      if (!n.raw().is_object()) n.fail("must be an object");
      if (n.has("pose3"))
        n.child("pose3").fail("reserved for 3D bodies ([x, y, z, qw, qx, qy, qz], position and unit quaternion): "
                              "only the body of a body_on_plane world has one");
      Body b;
      b.kind = n.at("kind").choice<BodyKind>(
          {{"fixed", BodyKind::fixed}, {"free", BodyKind::free}, {"linked", BodyKind::linked}});
      switch (b.kind) {
        case BodyKind::fixed: n.expect_object({"name", "kind", "pose", "shapes"}); break;
        case BodyKind::free: n.expect_object({"name", "kind", "pose", "shapes", "dofs", "mass", "inertia", "com"}); break;
        case BodyKind::linked: n.expect_object({"name", "kind", "shapes", "mass", "inertia", "com"}); break;
      }
      const Node name = n.at("name");
      b.name = name.identifier();
      if (b.name == "world") name.fail("\"world\" is reserved for the fixed world frame");
      if (b.name == "note") name.fail("\"note\" is reserved for comments");
      const int index = static_cast<int>(m_.bodies.size());
      if (!body_by_name_.emplace(b.name, index).second) name.fail("duplicate body name \"" + b.name + "\"");
      if (auto p = n.get("pose")) b.pose = p->fixed_vector<3>();
      if (b.kind == BodyKind::free) {
        b.mass = n.at("mass").positive();
        std::array<bool, 3> on{true, true, true};
        if (auto d = n.get("dofs")) {
          on = {false, false, false};
          const size_t nd = d->array(1);
          for (size_t j = 0; j < nd; ++j) {
            const int c = d->item(j).choice<int>({{"x", 0}, {"y", 1}, {"theta", 2}});
            if (on[c]) d->item(j).fail("repeated DOF");
            on[c] = true;
          }
        }
        for (int c = 0; c < 3; ++c) b.dof[c] = on[c] ? 0 : -1;  // numbered in number_dofs()
      } else if (b.kind == BodyKind::linked) {
        if (auto mass = n.get("mass")) b.mass = mass->nonnegative();
      }
      if (auto in = n.get("inertia")) b.inertia = in->positive();
      if (auto com = n.get("com")) b.com = com->vec2();
      if (auto s = n.get("shapes")) {
        const size_t ns = s->array();
        for (size_t j = 0; j < ns; ++j) {
          b.shapes.push_back(static_cast<int>(m_.shapes.size()));
          m_.shapes.push_back(read_shape(s->item(j), index, b.kind));
        }
      }
      m_.bodies.push_back(std::move(b));
    }
  }

  void read_joints(const Node& list) {
    const size_t k = list.array();
    for (size_t i = 0; i < k; ++i) {
      const Node n = list.item(i);
      n.expect_object({"name", "type", "parent", "child", "origin", "axis", "position", "control"});
      Joint j;
      const Node name = n.at("name");
      j.name = name.identifier();
      if (j.name == "note") name.fail("\"note\" is reserved for comments (commands are keyed by joint name)");
      if (!joint_by_name_.emplace(j.name, static_cast<int>(m_.joints.size())).second)
        name.fail("duplicate joint name \"" + j.name + "\"");
      j.type = n.at("type").choice<JointType>({{"prismatic", JointType::prismatic}, {"revolute", JointType::revolute}});
      const Node parent = n.at("parent");
      j.parent = body_index(parent, true);
      if (j.parent >= 0 && m_.bodies[j.parent].kind == BodyKind::free)
        parent.fail("a joint cannot hang from a free body (parent must be \"world\", a fixed or a linked body)");
      const Node child = n.at("child");
      j.child = body_index(child, false);
      Body& c = m_.bodies[j.child];
      if (c.kind != BodyKind::linked)
        child.fail("body \"" + c.name + "\" is " + std::string(to_string(c.kind)) + "; a joint's child must be linked");
      if (c.parent_joint >= 0)
        child.fail("body \"" + c.name + "\" is already the child of joint \"" + m_.joints[c.parent_joint].name + "\"");
      if (j.parent == j.child) parent.fail("a joint cannot connect a body to itself");
      if (auto o = n.get("origin")) j.origin = read_pose(*o);
      if (auto a = n.get("axis")) {
        if (j.type != JointType::prismatic) a->fail("only a prismatic joint has an axis");
        const Vec2<double> v = a->vec2();
        const double len = norm(v);
        if (!(len > 0)) a->fail("must be a non-zero vector");
        j.axis = {v.x / len, v.y / len};
      }
      if (auto p = n.get("position")) j.initial_position = p->number();
      if (auto ctl = n.get("control"))
        j.control = ctl->choice<Control>({{"velocity", Control::velocity}, {"effort", Control::effort}});
      c.parent_joint = static_cast<int>(m_.joints.size());
      m_.joints.push_back(std::move(j));
    }
    // A cycle shows as a chain of parents longer than the number of joints. Bodies whose
    // chain is known to end are marked, so a long chain is walked once, not once per joint.
    std::vector<char> ends(m_.bodies.size(), 0);
    std::vector<int> walked;
    for (size_t i = 0; i < m_.joints.size(); ++i) {
      walked.clear();
      int body = m_.joints[i].parent;
      for (size_t steps = 0; body >= 0 && m_.bodies[body].kind == BodyKind::linked && !ends[body]; ++steps) {
        if (steps > m_.joints.size())
          list.item(i).child("parent").fail("the joints form a cycle through joint \"" + m_.joints[i].name + "\"");
        walked.push_back(body);
        const int pj = m_.bodies[body].parent_joint;
        if (pj < 0) break;  // reported by check_linked_bodies
        body = m_.joints[pj].parent;
      }
      for (int b : walked) ends[b] = 1;
    }
  }

  void check_linked_bodies() {
    for (size_t i = 0; i < m_.bodies.size(); ++i)
      if (m_.bodies[i].kind == BodyKind::linked && m_.bodies[i].parent_joint < 0)
        throw SceneError("bodies[" + std::to_string(i) + "]",
                         "linked body \"" + m_.bodies[i].name + "\" is not the child of any joint");
  }

  void number_dofs() {
    auto add = [&](std::string name, DofKind kind, int index, bool actuated) {
      m_.dofs.push_back({std::move(name), kind, index, actuated});
      return static_cast<int>(m_.dofs.size()) - 1;
    };
    static constexpr const char* kAxis[3] = {"x", "y", "theta"};
    static constexpr DofKind kKind[3] = {DofKind::body_x, DofKind::body_y, DofKind::body_theta};
    for (size_t b = 0; b < m_.bodies.size(); ++b) {
      Body& body = m_.bodies[b];
      if (body.kind != BodyKind::free) continue;
      for (int c = 0; c < 3; ++c)
        if (body.dof[c] >= 0) body.dof[c] = add(body.name + "." + kAxis[c], kKind[c], static_cast<int>(b), false);
    }
    for (size_t j = 0; j < m_.joints.size(); ++j)
      if (m_.joints[j].control == Control::effort) m_.joints[j].dof = add(m_.joints[j].name, DofKind::joint, static_cast<int>(j), false);
    m_.n_u = static_cast<int>(m_.dofs.size());
    for (size_t j = 0; j < m_.joints.size(); ++j)
      if (m_.joints[j].control == Control::velocity) m_.joints[j].dof = add(m_.joints[j].name, DofKind::joint, static_cast<int>(j), true);
    m_.n_a = static_cast<int>(m_.dofs.size()) - m_.n_u;
  }

  void order_bodies() {
    // Each body after its parent chain, in the order of a depth-first walk up the parents;
    // iterative, as a recursion as deep as a long joint chain overflows the stack.
    std::vector<char> placed(m_.bodies.size(), 0);
    std::vector<int> chain;
    for (size_t b0 = 0; b0 < m_.bodies.size(); ++b0) {
      chain.clear();
      for (int b = static_cast<int>(b0); b >= 0 && !placed[b];
           b = m_.bodies[b].kind == BodyKind::linked ? m_.joints[m_.bodies[b].parent_joint].parent : -1)
        chain.push_back(b);
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        placed[*it] = 1;
        m_.body_order.push_back(*it);
      }
    }
  }

  void read_model(const Node& n) {
    if (!n.raw().is_object()) n.fail("must be an object");
    const Node f = n.at("formulation");
    {
      const std::string name = f.string();
      std::string known;
      const FormulationInfo* chosen = nullptr;
      for (const FormulationInfo& info : formulation_table()) {
        if (name == info.name) chosen = &info;
        known += (known.empty() ? "" : ", ") + std::string(info.name);
      }
      if (!chosen) f.fail(json_input::json_quote(name) + " is not one of: " + known);
      m_.formulation = chosen->id;
    }
    if (!formulation_applies(m_.formulation, m_.world.type))
      f.fail("\"" + std::string(to_string(m_.formulation)) + "\" does not apply in a " +
             std::string(to_string(m_.world.type)) + " world");
    // Each formulation reads its own parameters (core/formulations/formulation_table.hpp).
    formulation_info(m_.formulation).read_params(n, m_);
  }

  void read_step(const Node& n) {
    n.expect_object({"h", "steps"});
    m_.step.h = n.at("h").positive();
    m_.step.steps = n.at("steps").integer(0);
  }

  /// Rank for the default orientation of a pair: the normal points from the environment
  /// and the manipulator toward the object (Pang & Tedrake 2018, Fig. 4b, Pang, Trinkle & Lo 1996, sec. 2).
  static int rank(BodyKind k) { return k == BodyKind::fixed ? 0 : k == BodyKind::linked ? 1 : 2; }

  bool adjacent(int a, int b) const {
    auto parent_of = [&](int x) {
      return m_.bodies[x].kind == BodyKind::linked ? m_.joints[m_.bodies[x].parent_joint].parent : -2;
    };
    return parent_of(a) == b || parent_of(b) == a;
  }

  void check_pair(int a, int b, const Node& where) const {
    if (m_.bodies[a].kind == BodyKind::fixed && m_.bodies[b].kind == BodyKind::fixed)
      where.fail("bodies \"" + m_.bodies[a].name + "\" and \"" + m_.bodies[b].name + "\" are both fixed");
    for (int x : {a, b})
      if (m_.bodies[x].shapes.empty()) where.fail("body \"" + m_.bodies[x].name + "\" has no shapes to touch with");
  }

  void add_pair(int a, int b, double friction) {
    for (int sa : m_.bodies[a].shapes) {
      for (int sb : m_.bodies[b].shapes) {
        const Shape& A = m_.shapes[sa];
        const Shape& B = m_.shapes[sb];
        if (A.core == ShapeCore::half_plane && B.core == ShapeCore::half_plane) continue;
        ContactPair p;
        p.body_a = a;
        p.body_b = b;
        p.shape_a = sa;
        p.shape_b = sb;
        p.friction = friction;
        p.first_slot = m_.n_slots();
        const int pair = static_cast<int>(m_.pairs.size());
        auto features = [&](int feature_shape, int other_shape, bool on_b) {
          for (int i = 0; i < m_.shapes[feature_shape].feature_count(); ++i)
            m_.slots.push_back({pair, feature_shape, i, other_shape, on_b});
        };
        // One slot for a round feature; otherwise each shape's feature points against the
        // other's core (a half-plane has no feature points). See contacts.hpp.
        if (B.core == ShapeCore::point) features(sb, sa, true);
        else if (A.core == ShapeCore::point) features(sa, sb, false);
        else {
          features(sa, sb, false);
          features(sb, sa, true);
        }
        p.slot_count = m_.n_slots() - p.first_slot;
        m_.pairs.push_back(p);
      }
    }
  }

  // ---- the model's size, checked before any pair is built -------------------------------
  //
  // The dense buffers of a world grow with slots x DOFs (the contact Jacobians) or slots^2
  // (anitescu_qp's LCP matrix), and "auto" pairs grow with bodies^2: a scene of 1,000 disks
  // would need tens of GiB. The counts are added up first, without allocating, and a scene
  // beyond kMaxWorldBytes is refused with the buffer that dominates.

  /// A body's shapes by the slots they give in add_pair.
  struct ShapeCounts {
    std::int64_t point = 0, half_plane = 0, other = 0;  // other: segment and polygon cores
    std::int64_t features = 0;                          // feature points of the `other` shapes
  };
  ShapeCounts shape_counts(int b) const {
    ShapeCounts c;
    for (int s : m_.bodies[b].shapes) {
      const Shape& sh = m_.shapes[s];
      if (sh.core == ShapeCore::point) ++c.point;
      else if (sh.core == ShapeCore::half_plane) ++c.half_plane;
      else {
        ++c.other;
        c.features += sh.feature_count();
      }
    }
    return c;
  }
  /// The shape pairs and slots add_pair(a, b) makes: a point core meets any shape in one
  /// slot; otherwise every feature point of either shape is one slot (a half-plane has none,
  /// and two half-planes are no pair).
  void count_pair(int a, int b) {
    const ShapeCounts& x = shape_counts_[a];
    const ShapeCounts& y = shape_counts_[b];
    const std::int64_t all_x = x.point + x.half_plane + x.other, all_y = y.point + y.half_plane + y.other;
    count_pairs_ += all_x * all_y - x.half_plane * y.half_plane;
    count_slots_ += x.point * all_y + all_x * y.point - x.point * y.point +
                    x.features * (y.half_plane + y.other) + (x.half_plane + x.other) * y.features;
  }

  struct Footprint {
    double total = 0;    // bytes
    double largest = 0;  // bytes of the largest buffer
    std::string what;    // that buffer
  };
  /// The dense buffers one world of this model holds, as the steppers size them
  /// (ContactWorkspace, AnitescuStepWorkspace, the MIQP's step memory), for `slots` slots.
  Footprint footprint(double pairs, double slots) const {
    const double nq = m_.n_q(), nu = m_.n_u, d = sizeof(double);
    Footprint f;
    auto add = [&](double bytes, std::string what) {
      f.total += bytes;
      if (bytes > f.largest) {
        f.largest = bytes;
        f.what = std::move(what);
      }
    };
    add(pairs * sizeof(ContactPair) + slots * (sizeof(ContactSlot) + sizeof(ContactFrame<double>) + 4 * d),
        "the contact slots and their per-step results");
    double jacobians = 2 * slots * nq * d;  // J_n, J_t of every stepper's ContactWorkspace
    if (m_.formulation == Formulation::anitescu_qp) {
      jacobians += 2 * slots * nq * d + 2 * (2 * slots) * nq * d;  // its own J_n, J_t; A and Q^-1 A'
      add((2 * slots) * (2 * slots) * d, "anitescu_qp's LCP matrix ((2 x slots)^2 doubles)");
      add((nq * nq + 2 * nu * nu) * d, "anitescu_qp's mass matrices (DOFs^2 doubles)");
    }
    if (m_.formulation == Formulation::pang_tedrake_miqp) {
      const double k = std::min(slots, static_cast<double>(PangTedrakeMiqp::kMaxContacts));
      add((5 * slots + 2 * k * (nq + 4) + 3 * nq) * d, "pang_tedrake_miqp's step memory");
    }
    add(jacobians, "the contact Jacobians (" + std::string(m_.formulation == Formulation::anitescu_qp ? "8" : "2") +
                       " x slots x DOFs doubles)");
    return f;
  }

  /// Refuses (at `where`) a model whose counted pairs and slots need more than the limit.
  void check_size(const Node& where, bool at_least) const {
    const Footprint f = footprint(static_cast<double>(count_pairs_), static_cast<double>(count_slots_));
    if (f.total <= static_cast<double>(kMaxWorldBytes)) return;
    const char* more = at_least ? "at least " : "";
    const std::string all = gib_text(f.total) == gib_text(f.largest) ? "" : " (" + (more + gib_text(f.total)) + " in all)";
    where.fail(std::to_string(m_.bodies.size()) + " bodies give " + more + std::to_string(count_slots_) +
               " contact slots with " + std::to_string(m_.n_q()) + " DOFs: " + f.what + " would need " + more +
               gib_text(f.largest) + all + ", more than the limit of " + gib_text(static_cast<double>(kMaxWorldBytes)) +
               " per world; list fewer contact pairs");
  }

  void read_contacts(const std::optional<Node>& n) {
    std::optional<double> default_friction;
    std::optional<Node> pairs, exclude;
    if (n) {
      n->expect_object({"margin", "friction", "pairs", "exclude"});
      if (auto m = n->get("margin")) m_.contact_margin = m->nonnegative();
      if (auto f = n->get("friction")) default_friction = f->nonnegative();
      pairs = n->get("pairs");
      exclude = n->get("exclude");
    }
    static const json kEmptyObject = json::object();
    const Node where = n ? *n : Node(kEmptyObject, "contacts");
    auto friction_or_default = [&](const Node& at) {
      if (!default_friction) at.fail("missing friction (give it here or as contacts.friction)");
      return *default_friction;
    };
    std::set<std::pair<int, int>> seen;
    auto key = [](int a, int b) { return std::make_pair(std::min(a, b), std::max(a, b)); };
    shape_counts_.clear();
    for (size_t b = 0; b < m_.bodies.size(); ++b) shape_counts_.push_back(shape_counts(static_cast<int>(b)));
    count_pairs_ = count_slots_ = 0;

    if (pairs && !(pairs->raw().is_string() && pairs->raw() == "auto")) {
      if (exclude) exclude->fail("only with \"pairs\": \"auto\"");
      struct Listed {
        int a, b;
        double mu;
      };
      std::vector<Listed> listed;
      const size_t k = pairs->array();
      for (size_t i = 0; i < k; ++i) {
        const Node p = pairs->item(i);
        p.expect_object({"bodies", "friction"});
        const Node bodies = p.at("bodies");
        if (bodies.array() != 2) bodies.fail("must name exactly two bodies");
        const int a = body_index(bodies.item(0), false);
        const int b = body_index(bodies.item(1), false);
        if (a == b) bodies.fail("a body cannot touch itself");
        if (!seen.insert(key(a, b)).second) bodies.fail("pair listed twice");
        const double mu = p.has("friction") ? p.child("friction").nonnegative() : friction_or_default(p);
        check_pair(a, b, bodies);
        count_pair(a, b);
        listed.push_back({a, b, mu});
      }
      check_size(*pairs, false);
      for (const Listed& l : listed) add_pair(l.a, l.b, l.mu);
      check_counted();
      return;
    }
    // "auto" (the default): every shape pair of bodies that can move relative to each other,
    // except a joint's parent and child and the excluded pairs.
    if (exclude) {
      const size_t k = exclude->array();
      for (size_t i = 0; i < k; ++i) {
        const Node e = exclude->item(i);
        if (e.array() != 2) e.fail("must name exactly two bodies");
        const int a = body_index(e.item(0), false), b = body_index(e.item(1), false);
        if (a == b) e.fail("must name two different bodies");
        seen.insert(key(a, b));
      }
    }
    // Bodies with shapes, and those of them that move: a fixed body pairs only with these,
    // so the loops visit (about) the pairs they make, not every pair of bodies.
    std::vector<int> shaped, moving;
    for (size_t b = 0; b < m_.bodies.size(); ++b) {
      if (m_.bodies[b].shapes.empty()) continue;
      shaped.push_back(static_cast<int>(b));
      if (m_.bodies[b].kind != BodyKind::fixed) moving.push_back(static_cast<int>(b));
    }
    // Every pair (i, j), i < j, in that order (the slot numbering follows it); stops early
    // when visit returns false.
    auto for_each_auto_pair = [&](auto&& visit) {
      for (int i : shaped) {
        const std::vector<int>& partners = m_.bodies[i].kind == BodyKind::fixed ? moving : shaped;
        for (auto it = std::upper_bound(partners.begin(), partners.end(), i); it != partners.end(); ++it) {
          int a = i, b = *it;
          if (seen.count(key(a, b)) || adjacent(a, b)) continue;
          if (rank(m_.bodies[b].kind) < rank(m_.bodies[a].kind)) std::swap(a, b);
          if (!visit(a, b)) return;
        }
      }
    };
    // Counting stops once the size is hopeless (1,024 times the limit), so that even a
    // scene of a million bodies is refused at once; the message then says "at least".
    bool stopped = false;
    std::int64_t visits = 0;
    for_each_auto_pair([&](int a, int b) {
      friction_or_default(where);
      count_pair(a, b);
      if ((++visits & 0xffff) == 0 &&
          footprint(static_cast<double>(count_pairs_), static_cast<double>(count_slots_)).total >
              static_cast<double>(kMaxWorldBytes) * 1024.0) {
        stopped = true;
        return false;
      }
      return true;
    });
    check_size(where, stopped);
    for_each_auto_pair([&](int a, int b) {
      add_pair(a, b, *default_friction);
      return true;
    });
    check_counted();
  }

  /// The size check is only as good as the count: every scene read checks it.
  void check_counted() const {
    if (count_pairs_ != static_cast<std::int64_t>(m_.pairs.size()) || count_slots_ != m_.n_slots())
      throw std::logic_error("scene reader: counted " + std::to_string(count_pairs_) + " pairs and " +
                             std::to_string(count_slots_) + " slots, built " + std::to_string(m_.pairs.size()) +
                             " and " + std::to_string(m_.n_slots()));
  }

  void read_loads(const Node& list) {
    const size_t k = list.array();
    if (k > 0 && m_.world.type == WorldType::tabletop)
      list.fail("the tabletop models take no loads: their contact impulses are scaled by the unknown k of Halm & Posa 2018, "
                "eq. (10)");
    for (size_t i = 0; i < k; ++i) {
      const Node n = list.item(i);
      n.expect_object({"body", "force", "torque", "point", "frame"});
      Load l;
      const Node body = n.at("body");
      l.body = body_index(body, false);
      if (m_.bodies[l.body].kind == BodyKind::fixed) body.fail("a load on a fixed body has no effect");
      l.point = m_.bodies[l.body].com;
      if (auto f = n.get("force")) {
        if (f->array() != 2) f->fail("must have 2 components (x, y), each a number or a schedule");
        l.force = {read_schedule(f->item(0)), read_schedule(f->item(1))};
      }
      if (auto t = n.get("torque")) l.torque = read_schedule(*t);
      if (auto p = n.get("point")) l.point = p->vec2();
      if (auto fr = n.get("frame")) l.body_frame = fr->choice<bool>({{"world", false}, {"body", true}});
      m_.loads.push_back(std::move(l));
    }
  }

  void read_commands(const Node& n) {
    if (!n.raw().is_object()) n.fail("must be an object mapping joint names to commands");
    for (const auto& item : n.raw().items()) {
      const Node c = n.child(item.key());
      if (item.key() == "note") {
        c.string();
        continue;
      }
      const auto found = joint_by_name_.find(item.key());
      const int j = found == joint_by_name_.end() ? -1 : found->second;
      if (j < 0) {
        for (const Dof& d : m_.dofs)
          if (d.name == item.key()) c.fail("not an actuated joint (an unactuated DOF of a free body cannot be commanded)");
        // "body.theta" of a free body without that DOF, or a body's own name: a locked DOF
        // or a body moves only through its DOFs, never by command.
        const std::string& key = item.key();
        const size_t dot = key.rfind('.');
        const int body = find_body(dot == std::string::npos ? key : key.substr(0, dot));
        if (body >= 0 && dot != std::string::npos && m_.bodies[body].kind == BodyKind::free)
          c.fail(json_quote(key.substr(dot + 1)) + " is a locked DOF of free body \"" + m_.bodies[body].name +
                 "\" (not in its \"dofs\"): it cannot move, so it cannot be commanded");
        if (body >= 0)
          c.fail("names a body, not a joint: only velocity- or effort-controlled joints take commands");
        c.fail("no joint named " + json_quote(key));
      }
      Joint& joint = m_.joints[j];
      c.expect_object({"velocity", "effort"});
      const char* want = joint.control == Control::velocity ? "velocity" : "effort";
      const char* other = joint.control == Control::velocity ? "effort" : "velocity";
      if (c.has(other))
        c.child(other).fail("joint \"" + joint.name + "\" is " + want + "-controlled; give \"" + want + "\"");
      joint.command = read_schedule(c.at(want));
    }
  }

  /// The range a parameter's values must lie in, as the scene reader checks it elsewhere:
  /// masses of free bodies and scales > 0, masses of linked bodies and friction >= 0.
  enum class Range { any, nonnegative, positive };
  static Range range_of(const Model& m, const ParameterRef& p) {
    switch (p.kind) {
      case ParameterRef::Kind::body_mass:
        return m.bodies[p.index].kind == BodyKind::free ? Range::positive : Range::nonnegative;
      case ParameterRef::Kind::body_scale:
      case ParameterRef::Kind::joint_stiffness:
      case ParameterRef::Kind::model_stiffness:
      case ParameterRef::Kind::model_c: return Range::positive;
      case ParameterRef::Kind::pair_friction: return Range::nonnegative;
      default: return Range::any;
    }
  }
  static double check_value(const Model& m, const ParameterRef& p, const Node& n) {
    switch (range_of(m, p)) {
      case Range::positive: return n.positive();
      case Range::nonnegative: return n.nonnegative();
      default: return n.number();
    }
  }

  std::vector<std::vector<std::pair<ParameterRef, double>>> read_overrides(const Model& m, const Node& n) {
    n.expect_object({"worlds"});
    const Node worlds = n.at("worlds");
    const size_t k = worlds.array(1);
    std::vector<std::vector<std::pair<ParameterRef, double>>> out(k);
    for (size_t i = 0; i < k; ++i) {
      const Node w = worlds.item(i);
      if (!w.raw().is_object()) w.fail("must be an object mapping parameter paths to values");
      for (const auto& item : w.raw().items()) {
        const Node v = w.child(item.key());
        if (item.key() == "note") {
          v.string();
          continue;
        }
        const ParameterRef p = resolve_parameter(m, item.key(), v.path());
        for (const auto& [earlier, value] : out[i])
          if (earlier.same_as(p)) v.fail("names the same parameter as \"" + earlier.path + "\"");
        out[i].emplace_back(p, check_value(m, p, v));
      }
    }
    return out;
  }

  std::vector<UncertainParameter> read_uncertainty(const Model& m, const Node& n) {
    n.expect_object({"parameters"});
    const Node list = n.at("parameters");
    const size_t k = list.array(1);
    std::vector<UncertainParameter> out;
    for (size_t i = 0; i < k; ++i) {
      const Node u = list.item(i);
      if (!u.raw().is_object()) u.fail("must be an object");
      const Node dist = u.at("distribution");
      UncertainParameter up;
      up.distribution.kind = dist.choice<Distribution::Kind>({{"uniform", Distribution::Kind::uniform},
                                                              {"normal", Distribution::Kind::normal},
                                                              {"truncated_normal", Distribution::Kind::truncated_normal}});
      Distribution& d = up.distribution;
      switch (d.kind) {
        case Distribution::Kind::uniform: u.expect_object({"parameter", "distribution", "low", "high"}); break;
        case Distribution::Kind::normal: u.expect_object({"parameter", "distribution", "mean", "stddev"}); break;
        case Distribution::Kind::truncated_normal:
          u.expect_object({"parameter", "distribution", "mean", "stddev", "low", "high"});
          break;
      }
      const Node param = u.at("parameter");
      up.parameter = resolve_parameter(m, param.string(), param.path());
      for (const UncertainParameter& earlier : out)
        if (earlier.parameter.same_as(up.parameter))
          param.fail("names the same parameter as \"" + earlier.parameter.path + "\" (listed twice)");
      if (d.kind != Distribution::Kind::uniform) {
        d.mean = u.at("mean").number();
        d.stddev = u.at("stddev").positive();
      }
      if (d.kind != Distribution::Kind::normal) {
        d.low = u.at("low").number();
        d.high = u.at("high").number();
        if (!(d.high > d.low)) u.child("high").fail("must be > low");
      }
      // Every sample must be a value the parameter may take.
      const Range range = range_of(m, up.parameter);
      if (range != Range::any) {
        const char* bound = range == Range::positive ? "> 0" : ">= 0";
        if (d.kind == Distribution::Kind::normal)
          u.child("distribution").fail("a normal distribution can reach any value, but this parameter must be " +
                                       std::string(bound) + "; use truncated_normal");
        const bool ok = range == Range::positive ? d.low > 0 : d.low >= 0;
        if (!ok) u.child("low").fail(std::string("must be ") + bound + " for this parameter");
      }
      out.push_back(up);
    }
    return out;
  }

  SuccessCriterion read_success(const Model& m, const Node& n) {
    if (!n.raw().is_object()) n.fail("must be an object");
    SuccessCriterion s;
    s.kind = n.at("type").choice<SuccessCriterion::Kind>(
        {{"lifted", SuccessCriterion::Kind::lifted}, {"goal_region", SuccessCriterion::Kind::goal_region}});
    if (s.kind == SuccessCriterion::Kind::lifted) n.expect_object({"type", "body", "height", "hold_until"});
    else n.expect_object({"type", "body", "center", "tolerance"});
    const Node body = n.at("body");
    s.body = m.find_body(body.string());
    if (s.body < 0) body.fail("no body named " + json_quote(body.string()));
    if (m.bodies[s.body].kind != BodyKind::free) body.fail("must be a free body (the object)");
    if (s.kind == SuccessCriterion::Kind::lifted) {
      if (m.world.type != WorldType::vertical) n.child("type").fail("\"lifted\" needs a vertical world");
      s.height = n.at("height").positive();
      s.hold_until = n.at("hold_until").nonnegative();
    } else {
      s.center = n.at("center").fixed_vector<3>();
      const Node tol = n.at("tolerance");
      s.tolerance = tol.fixed_vector<3>();
      for (double t : s.tolerance)
        if (!(t > 0)) tol.fail("every entry must be > 0");
    }
    return s;
  }

  // `plan` (docs/scene-format.md, "plan"): bounds per DOF, control bounds per commanded joint,
  // the goal region and keep-out boxes; the initial state must be a valid start.
  PlanSpec read_plan(const Model& m, const Node& n) {
    n.expect_object({"bounds", "control_bounds", "control_steps", "other_weight", "goal", "keep_out"});
    PlanSpec plan;
    const auto read_range = [](const Node& r) {
      const std::array<double, 2> v = r.fixed_vector<2>();
      if (!(v[0] < v[1])) r.fail("must be [low, high] with low < high");
      return v;
    };
    // Every object key must name something: a misspelt DOF would otherwise go unbounded.
    const auto read_named_ranges = [&](const Node& obj, const std::vector<std::string>& names,
                                       std::vector<std::array<double, 2>>& out, const char* what) {
      if (!obj.raw().is_object()) obj.fail("must be an object of " + std::string(what) + " name -> [low, high]");
      std::vector<char> seen(names.size(), 0);
      for (const auto& item : obj.raw().items()) {
        if (item.key() == "note") continue;
        const Node r = obj.child(item.key());
        const auto it = std::find(names.begin(), names.end(), item.key());
        if (it == names.end()) {
          std::string known;
          for (const std::string& k : names) known += (known.empty() ? "" : ", ") + k;
          r.fail(std::string("no ") + what + " of this name (expected one of: " + known + ")");
        }
        const auto i = static_cast<std::size_t>(it - names.begin());
        out[i] = read_range(r);
        seen[i] = 1;
      }
      return seen;
    };

    std::vector<std::string> dof_names;
    for (const Dof& d : m.dofs) dof_names.push_back(d.name);
    const double inf = std::numeric_limits<double>::infinity();
    plan.bounds.assign(m.dofs.size(), {-inf, inf});
    const Node bounds = n.at("bounds");
    const std::vector<char> bounded = read_named_ranges(bounds, dof_names, plan.bounds, "DOF");
    for (std::size_t i = 0; i < m.dofs.size(); ++i)
      if (!bounded[i] && m.dofs[i].kind != DofKind::body_theta)
        bounds.fail("missing " + json_quote(m.dofs[i].name) +
                    " (every DOF needs bounds, except a free body's theta, which may turn freely)");
    const State start = initial_state(m);
    for (std::size_t i = 0; i < m.dofs.size(); ++i) {
      const double q = start.q[static_cast<Eigen::Index>(i)];
      if (q < plan.bounds[i][0] || q > plan.bounds[i][1])
        bounds.child(m.dofs[i].name)
            .fail("the initial value " + shortest_text(q) + " lies outside [" + shortest_text(plan.bounds[i][0]) + ", " +
                  shortest_text(plan.bounds[i][1]) + "]");
    }

    const std::vector<std::string> commands = command_names(m);
    if (commands.empty()) n.fail("the scene has no velocity-controlled joint to plan with");
    plan.control_bounds.assign(commands.size(), {0.0, 0.0});
    const Node controls = n.at("control_bounds");
    const std::vector<char> given = read_named_ranges(controls, commands, plan.control_bounds, "velocity-controlled joint");
    for (std::size_t i = 0; i < commands.size(); ++i)
      if (!given[i]) controls.fail("missing " + json_quote(commands[i]) + " (every velocity-controlled joint needs bounds)");

    if (auto c = n.get("control_steps")) {
      if (c->array() != 2) c->fail("must be [min, max]: the steps a sampled control is held");
      plan.min_control_steps = c->item(0).integer(1);
      plan.max_control_steps = c->item(1).integer(1);
      if (plan.max_control_steps < plan.min_control_steps) c->fail("must be [min, max] with min <= max");
      if (plan.max_control_steps > 10000) c->item(1).fail("must be <= 10000");
    }

    if (auto w = n.get("other_weight")) {
      plan.other_weight = w->positive();
      if (plan.other_weight > 1000) w->fail("must be <= 1000");
    }

    const Node goal = n.at("goal");
    goal.expect_object({"body", "center", "tolerance"});
    const Node body = goal.at("body");
    plan.goal_body = m.find_body(body.string());
    if (plan.goal_body < 0) body.fail("no body named " + json_quote(body.string()));
    if (m.bodies[plan.goal_body].kind != BodyKind::free) body.fail("must be a free body (the object)");
    plan.goal_center = goal.at("center").fixed_vector<3>();
    const Node tol = goal.at("tolerance");
    plan.goal_tolerance = tol.fixed_vector<3>();
    for (double t : plan.goal_tolerance)
      if (!(t > 0)) tol.fail("every entry must be > 0");
    // A goal the bounds exclude cannot be reached: say so now, not after a long search.
    const Body& gb = m.bodies[plan.goal_body];
    for (int k = 0; k < 2; ++k) {
      const int d = gb.dof[k];
      const double lo = d >= 0 ? plan.bounds[d][0] : gb.pose[k], hi = d >= 0 ? plan.bounds[d][1] : gb.pose[k];
      if (plan.goal_center[k] + plan.goal_tolerance[k] < lo || plan.goal_center[k] - plan.goal_tolerance[k] > hi)
        goal.child("center").fail(std::string("the goal's ") + (k == 0 ? "x" : "y") + " range lies outside " +
                                  (d >= 0 ? "plan.bounds" : "the body's fixed pose"));
    }

    if (auto ko = n.get("keep_out")) {
      const std::size_t count = ko->array(1);
      std::vector<Pose2<double>> pose(m.bodies.size()), frame(m.joints.size());
      forward_kinematics(m, start.q.data(), pose.data(), frame.data());
      for (std::size_t i = 0; i < count; ++i) {
        const Node e = ko->item(i);
        e.expect_object({"body", "box", "margin"});
        PlanSpec::KeepOut k;
        const Node b = e.at("body");
        k.body = m.find_body(b.string());
        if (k.body < 0) b.fail("no body named " + json_quote(b.string()));
        if (m.bodies[k.body].kind == BodyKind::fixed) b.fail("must be a body that moves (free or linked)");
        const Node box = e.at("box");
        k.box = box.fixed_vector<4>();
        if (!(k.box[0] < k.box[2] && k.box[1] < k.box[3])) box.fail("must be [x_min, y_min, x_max, y_max] with min < max");
        if (auto mg = e.get("margin")) k.margin = mg->nonnegative();
        const Vec2<double> o = pose[k.body].translation;
        if (plan_keep_out_hit(k, o.x, o.y))
          e.fail("the body " + json_quote(m.bodies[k.body].name) + " starts inside this region");
        plan.keep_out.push_back(k);
      }
    }
    return plan;
  }

  Node root_;
  Model m_;
  std::string description_;  // the scene's "description", for the Scene
  std::unordered_map<std::string, int> body_by_name_, joint_by_name_;
  // read_contacts: shapes per body, and the pairs and slots counted so far.
  std::vector<ShapeCounts> shape_counts_;
  std::int64_t count_pairs_ = 0, count_slots_ = 0;
};

/// The per-world gains the formulation table lists, for an error message: the model gains
/// as "c (halm_posa_lcp) or stiffness (pang_tedrake_miqp)", or the formulations with a joint gain.
std::string gain_owners(bool joint) {
  std::string out;
  for (const FormulationInfo& f : formulation_table()) {
    const std::string_view gain = joint ? f.joint_gain : f.model_gain;
    if (gain.empty()) continue;
    if (!out.empty()) out += " or ";
    out += joint ? std::string(f.name) : std::string(gain) + " (" + std::string(f.name) + ")";
  }
  return out;
}

}  // namespace

ParameterRef resolve_parameter(const Model& m, std::string_view path, const std::string& where) {
  using K = ParameterRef::Kind;
  auto fail = [&](const std::string& why) -> ParameterRef {
    throw SceneError(where, "parameter " + json_quote(path) + ": " + why);
  };
  std::vector<std::string> parts;
  {
    std::string cur;
    for (char c : path) {
      if (c == '.') {
        parts.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    parts.push_back(cur);
  }
  ParameterRef ref;
  ref.path = std::string(path);
  if (parts.size() >= 3 && parts[0] == "bodies") {
    const int b = m.find_body(parts[1]);
    if (b < 0) return fail("no body named " + json_quote(parts[1]));
    const Body& body = m.bodies[b];
    ref.index = b;
    if (parts.size() == 3 && parts[2] == "mass") {
      if (body.kind == BodyKind::fixed) return fail("a fixed body has no mass");
      ref.kind = K::body_mass;
      return ref;
    }
    if (parts.size() == 3 && parts[2] == "scale") {
      if (body.shapes.empty()) return fail("the body has no shapes to scale");
      ref.kind = K::body_scale;
      return ref;
    }
    if (parts.size() == 4 && parts[2] == "pose") {
      if (body.kind == BodyKind::linked) return fail("a linked body's pose follows its joint; vary the joint position");
      if (parts[3] == "x") ref.kind = K::body_pose_x;
      else if (parts[3] == "y") ref.kind = K::body_pose_y;
      else if (parts[3] == "theta") ref.kind = K::body_pose_theta;
      else return fail("pose has components x, y and theta");
      return ref;
    }
    return fail("a body parameter is mass, scale, or pose.x|y|theta");
  }
  if (parts.size() == 3 && parts[0] == "joints") {
    ref.index = m.find_joint(parts[1]);
    if (ref.index < 0) return fail("no joint named " + json_quote(parts[1]));
    const FormulationInfo& f = formulation_info(m.formulation);
    if (parts[2] == "stiffness") {
      // the Anitescu slides' (Pang & Tedrake) impedance: one K_a entry per velocity-controlled joint.
      if (f.joint_gain != "stiffness") return fail("a joint's stiffness is a parameter of " + gain_owners(true) + " only");
      const Joint& j = m.joints[ref.index];
      if (j.control != Control::velocity) return fail("the joint is effort-controlled: it has no impedance stiffness");
      ref.kind = K::joint_stiffness;
      ref.index = j.dof - m.n_u;
      return ref;
    }
    if (parts[2] != "position") return fail("a joint parameter is position or stiffness");
    ref.kind = K::joint_position;
    return ref;
  }
  if (parts.size() == 2 && parts[0] == "model") {
    const FormulationInfo& f = formulation_info(m.formulation);
    if (!f.model_gain.empty() && parts[1] == f.model_gain) {
      ref.kind = f.model_gain_kind;
      return ref;
    }
    return fail("a model parameter is " + gain_owners(false) + "; per joint: joints.NAME.stiffness of " +
                gain_owners(true));
  }
  if (parts.size() == 2 && parts[0] == "world" && parts[1] == "support_friction") {
    // Halm & Posa 2018: the support friction enters only the limit surface A, computed once when the
    // model is built (not at all when A is given): a per-world value would change nothing.
    if (m.formulation == Formulation::halm_posa_lcp || m.formulation == Formulation::perfect_velocity_lcp)
      return fail(m.params.limit_surface_A && !m.params.limit_surface_computed
                      ? "the model's limit surface A is given, so the support friction is never used"
                      : "the support friction only sets the limit surface A, computed once when the model is "
                        "built: one value per study");
    return fail("the support friction cannot vary per world (only a tabletop or body_on_plane world has one, "
                "and neither varies it per world yet)");
  }
  if (parts.size() == 3 && parts[0] == "pairs") {
    const auto slash = parts[1].find('/');
    if (slash == std::string::npos) return fail("a pair is named \"A/B\" after its two bodies");
    const std::string name_a = parts[1].substr(0, slash), name_b = parts[1].substr(slash + 1);
    const int a = m.find_body(name_a);
    const int b = m.find_body(name_b);
    if (a < 0) return fail("no body named " + json_quote(name_a));
    if (b < 0) return fail("no body named " + json_quote(name_b));
    for (size_t k = 0; k < m.pairs.size(); ++k) {
      const ContactPair& p = m.pairs[k];
      if ((p.body_a == a && p.body_b == b) || (p.body_a == b && p.body_b == a)) {
        if (ref.pairs.empty()) {
          ref.index = p.body_a;
          ref.other = p.body_b;
        }
        ref.pairs.push_back(static_cast<int>(k));
      }
    }
    if (ref.pairs.empty()) return fail("no contact pair between those bodies");
    if (parts[2] != "friction") return fail("a pair parameter is friction");
    ref.kind = K::pair_friction;
    return ref;
  }
  return fail("unknown parameter (expected bodies.NAME.mass|scale|pose.x|pose.y|pose.theta, "
              "joints.NAME.position|stiffness, pairs.A/B.friction, model.stiffness or model.c)");
}

std::string fnv1a_hex(std::string_view bytes) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis 0xcbf29ce484222325
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[i] = digits[h & 15];
  return out;
}

Scene parse_scene(std::string_view text, const std::string& source) {
  const json doc = json_input::parse_document(text);
  Scene scene;
  try {
    scene = Compiler(doc).run();
  } catch (const std::bad_alloc&) {
    // Sizes that scale with bodies and slots are checked before allocating; this is the
    // last line of defence (e.g. a machine with less free memory than the limit).
    throw SceneError("", "out of memory while compiling the scene");
  } catch (const std::length_error&) {
    throw SceneError("", "the scene is too large to hold in memory");
  }
  scene.source = source;
  scene.hash = fnv1a_hex(text);
  return scene;
}

Scene load_scene_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw SceneError("", "cannot read scene file " + json_quote(path) + " (it is a directory)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SceneError("", "cannot read scene file " + json_quote(path));
  std::string text;
  try {
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::bad_alloc&) {
    text = std::string();  // free what was read before the message is made
    throw SceneError("", "cannot read scene file " + json_quote(path) + ": out of memory");
  }
  if (in.bad()) throw SceneError("", "error while reading scene file " + json_quote(path));
  return parse_scene(text, path);
}

// ---- helpers shared with the formulations' parameter readers (core/scene_reading.hpp) ----

Eigen::MatrixXd read_spd(const json_input::Node& n, int size) {
  Eigen::MatrixXd a = n.matrix(size, size);
  if (!a.isApprox(a.transpose(), 1e-12) && (a - a.transpose()).norm() > 1e-12 * (1 + a.norm()))
    n.fail("must be symmetric");
  Eigen::LLT<Eigen::MatrixXd> llt(a);
  if (llt.info() != Eigen::Success) n.fail("must be positive definite");
  return a;
}

std::string gib_text(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

}  // namespace qs

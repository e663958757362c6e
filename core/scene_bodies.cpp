// The scene reader's bodies, shapes and joints: what each body is and carries, the joints
// that link bodies, the DOFs they give and the order in which bodies are placed.

#include "scene_compiler.hpp"

#include "quasistep/core/json_node.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace qs {

using json_input::json_quote;
using json_input::Node;

namespace {

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

}  // namespace

// Names are looked up in hash maps: Model::find_body scans, which made reading a scene of
// many bodies quadratic.
int SceneCompiler::find_body(const std::string& name) const {
  const auto it = body_by_name_.find(name);
  return it == body_by_name_.end() ? -1 : it->second;
}

int SceneCompiler::body_index(const Node& n, bool allow_world) const {
  const std::string name = n.string();
  if (allow_world && name == "world") return -1;
  const int b = find_body(name);
  if (b < 0) n.fail("no body named " + json_quote(name));
  return b;
}

void SceneCompiler::read_bodies(const Node& list) {
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

void SceneCompiler::read_joints(const Node& list) {
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

void SceneCompiler::check_linked_bodies() {
  for (size_t i = 0; i < m_.bodies.size(); ++i)
    if (m_.bodies[i].kind == BodyKind::linked && m_.bodies[i].parent_joint < 0)
      throw SceneError("bodies[" + std::to_string(i) + "]",
                       "linked body \"" + m_.bodies[i].name + "\" is not the child of any joint");
}

void SceneCompiler::number_dofs() {
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

void SceneCompiler::order_bodies() {
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

}  // namespace qs

#include "tools/report/replay.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <limits>
#include <numbers>
#include <ostream>
#include <set>
#include <sstream>
#include <utility>

#include <Eigen/Geometry>
#include <nlohmann/json.hpp>

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/kinematics.hpp"
#include "tools/report/replay_assets.hpp"
#include "quasistep/core/csv_cells.hpp"
#include "quasistep/core/output_file.hpp"

namespace qs::io {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// A gap below this is marked as a penetration (a hair below zero is rounding, not overlap).
constexpr double kPenetrationMark = -1e-9;  // m

[[noreturn]] void fail(const std::string& name, long line, const std::string& what) {
  throw ReplayError(name + ": line " + std::to_string(line) + ": " + what);
}

/// Text of the file that the page's JSON carries (the stopped line, the column names) must
/// be UTF-8: refused here with its file and line, not later by the JSON writer without them.
void expect_utf8(const std::string& text, const std::string& name, long line) {
  try {
    (void)nlohmann::json(text).dump();
  } catch (const nlohmann::json::type_error&) {
    fail(name, line, "is not UTF-8 text");
  }
}


std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.pop_back();
  std::size_t a = 0;
  while (a < s.size() && s[a] == ' ') ++a;
  return s.substr(a);
}

// A number cell: finite, the whole cell, within float range (the page stores float32);
// empty is NaN when allowed.
double number(const std::string& cell, bool empty_ok, const std::string& name, long line, const std::string& column) {
  if (cell.empty()) {
    if (empty_ok) return kNaN;
    fail(name, line, column + " is empty");
  }
  double v = 0;
  if (!parse_finite(cell, v)) fail(name, line, column + " \"" + printable(cell) + "\" is not a finite number");
  if (std::abs(v) > std::numeric_limits<float>::max())
    fail(name, line, column + " " + printable(cell) + " is beyond the range a replay draws (|v| <= 3.4e38)");
  return v;
}

long integer(const std::string& cell, const std::string& name, long line, const std::string& column) {
  long v = 0;
  if (!parse_integer(cell, v)) fail(name, line, column + " \"" + printable(cell) + "\" is not an integer");
  return v;
}

// The scene_hash of a provenance line ("# quasistep ... scene_hash=H ..."), or "".
std::string scene_hash_of(const std::string& line) {
  const std::size_t at = line.find(" scene_hash=");
  if (line.rfind("# quasistep ", 0) != 0 || at == std::string::npos) return "";
  const std::size_t from = at + 12, to = line.find(' ', from);
  return line.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

// A file written for another scene (its provenance names another scene hash) is refused.
void check_scene(const std::string& line, const std::string& name, long n, const Scene& scene) {
  const std::string hash = scene_hash_of(line);
  if (!hash.empty() && hash != scene.hash)
    fail(name, n, "written for another scene (scene_hash " + printable(hash) + "; this scene's is " + scene.hash + ")");
}

// Reads one line into `line` (without its end), counting; false at the end of the input.
bool next_line(std::istream& in, std::string& line, long& number_of_line) {
  if (!std::getline(in, line)) return false;
  ++number_of_line;
  if (number_of_line == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a BOM
  line = trimmed(line);
  return true;
}

std::string base64(const void* data, std::size_t bytes) {
  static const char* const k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((bytes + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes; i += 3) {
    const std::uint32_t v = (std::uint32_t{p[i]} << 16) | (std::uint32_t{p[i + 1]} << 8) | p[i + 2];
    out += k[v >> 18];
    out += k[(v >> 12) & 63];
    out += k[(v >> 6) & 63];
    out += k[v & 63];
  }
  if (i < bytes) {
    std::uint32_t v = std::uint32_t{p[i]} << 16;
    if (i + 1 < bytes) v |= std::uint32_t{p[i + 1]} << 8;
    out += k[v >> 18];
    out += k[(v >> 12) & 63];
    out += i + 1 < bytes ? k[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string floats(const std::vector<float>& v) { return base64(v.data(), v.size() * sizeof(float)); }
std::string ints(const std::vector<std::int32_t>& v) { return base64(v.data(), v.size() * sizeof(std::int32_t)); }


nlohmann::ordered_json xy(const Vec2<double>& p) { return nlohmann::ordered_json::array({p.x, p.y}); }

// A body's shapes for the page, in its frame, at its size (`scale`: 1 as the scene gives it).
nlohmann::ordered_json shapes_json(const Model& m, const Body& b, double scale) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (int si : b.shapes) {
    const Shape& s = m.shapes[static_cast<std::size_t>(si)];
    nlohmann::ordered_json j;
    switch (s.core) {
      case ShapeCore::point: j["type"] = s.radius > 0 ? "disk" : "point"; break;
      case ShapeCore::segment: j["type"] = s.radius > 0 ? "capsule" : "segment"; break;
      case ShapeCore::polygon: j["type"] = "polygon"; break;
      case ShapeCore::half_plane: j["type"] = "half_plane"; break;
    }
    j["radius"] = scale * s.radius;
    j["points"] = nlohmann::ordered_json::array();
    for (const Vec2<double>& p : s.points) j["points"].push_back(xy(scale * p));
    if (s.core == ShapeCore::half_plane) j["normal"] = xy(s.normal);
    out.push_back(j);
  }
  return out;
}

// Grows box [x0, x1, y0, y1] by a point.
void grow(std::array<double, 4>& box, double x, double y) {
  box[0] = std::min(box[0], x);
  box[1] = std::max(box[1], x);
  box[2] = std::min(box[2], y);
  box[3] = std::max(box[3], y);
}

// The box with a margin, at least `least` wide and high, around its centre.
nlohmann::ordered_json padded(std::array<double, 4> box, double least) {
  if (!(box[0] <= box[1])) box = {-0.1, 0.1, -0.1, 0.1};
  const double cx = 0.5 * (box[0] + box[1]), cy = 0.5 * (box[2] + box[3]);
  const double w = std::max(least, 1.2 * (box[1] - box[0])), h = std::max(least, 1.2 * (box[3] - box[2]));
  return nlohmann::ordered_json::array({cx - 0.5 * w, cx + 0.5 * w, cy - 0.5 * h, cy + 0.5 * h});
}

void planar_data(const Scene& scene, const ReplayInput& r, nlohmann::ordered_json& d) {
  const Model& m = *scene.model;
  const int rows = r.rows(), nb = static_cast<int>(m.bodies.size()), nj = static_cast<int>(m.joints.size());
  const int nq = m.n_q();
  // A world's own values (a sample's), or the scene's.
  const WorldParams params = r.params ? *r.params : WorldParams(m);
  const auto scale = [&](int b) { return params.scaled ? params.body_scale[static_cast<std::size_t>(b)] : 1.0; };
  d["bodies"] = nlohmann::ordered_json::array();
  for (int b = 0; b < nb; ++b) {
    const Body& body = m.bodies[static_cast<std::size_t>(b)];
    d["bodies"].push_back(
        {{"name", body.name}, {"kind", std::string(to_string(body.kind))}, {"shapes", shapes_json(m, body, scale(b))}});
  }
  if (m.n_slots() > 65535) throw ReplayError("a replay draws at most 65535 contact slots; the scene has " + std::to_string(m.n_slots()));
  d["slots"] = nlohmann::ordered_json::array();
  for (const ContactSlot& s : m.slots)
    d["slots"].push_back({{"pair", m.pair_name(s.pair)}, {"mu", params.pair_friction[static_cast<std::size_t>(s.pair)]}});

  // Poses of the bodies that move (a fixed body's pose is stored once), at every row; the
  // box every shape covers; each joint's range over the rows (its rail).
  std::vector<int> moving;
  for (int b = 0; b < nb; ++b)
    if (m.bodies[static_cast<std::size_t>(b)].kind != BodyKind::fixed) moving.push_back(b);
  const int nm = static_cast<int>(moving.size());
  std::vector<float> poses(static_cast<std::size_t>(rows) * nm * 3);
  std::vector<Pose2<double>> body_pose(static_cast<std::size_t>(nb)), joint_frame(static_cast<std::size_t>(nj));
  std::array<double, 4> box{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  std::vector<std::array<double, 2>> range(static_cast<std::size_t>(nj), {0.0, 0.0});
  for (int k = 0; k < rows; ++k) {
    const double* q = r.q.data() + static_cast<std::size_t>(k) * nq;
    forward_kinematics(m, params, q, body_pose.data(), joint_frame.data());
    for (int b = 0; b < nb; ++b) {
      const Pose2<double>& p = body_pose[static_cast<std::size_t>(b)];
      grow(box, p.translation.x, p.translation.y);
      for (int si : m.bodies[static_cast<std::size_t>(b)].shapes) {
        const Shape& s = m.shapes[static_cast<std::size_t>(si)];
        if (s.core == ShapeCore::half_plane) continue;
        const double k = scale(b);
        for (const Vec2<double>& v : s.points) {
          const Vec2<double> w = p.apply(k * v);
          grow(box, w.x - k * s.radius, w.y - k * s.radius);
          grow(box, w.x + k * s.radius, w.y + k * s.radius);
        }
      }
      if (k == 0) d["bodies"][static_cast<std::size_t>(b)]["pose"] = {p.translation.x, p.translation.y, p.angle()};
    }
    for (int i = 0; i < nm; ++i) {
      const Pose2<double>& p = body_pose[static_cast<std::size_t>(moving[static_cast<std::size_t>(i)])];
      const std::size_t o = (static_cast<std::size_t>(k) * nm + i) * 3;
      poses[o] = static_cast<float>(p.translation.x);
      poses[o + 1] = static_cast<float>(p.translation.y);
      poses[o + 2] = static_cast<float>(p.angle());
    }
    for (int j = 0; j < nj; ++j) {
      const double v = q[m.joints[static_cast<std::size_t>(j)].dof];
      auto& rg = range[static_cast<std::size_t>(j)];
      rg = {k ? std::min(rg[0], v) : v, k ? std::max(rg[1], v) : v};
    }
  }
  grow(box, 0.0, 0.0);  // the world frame is always in view
  // The plan section's regions (docs/scene-format.md, "plan"): each keep-out box at its size
  // with its margin (the page draws both), the goal region of the goal body's x and y; in view.
  if (scene.plan) {
    const PlanSpec& plan = *scene.plan;
    nlohmann::ordered_json regions = nlohmann::ordered_json::array();
    for (const PlanSpec::KeepOut& k : plan.keep_out)
      regions.push_back({{"kind", "keep_out"},
                         {"body", m.bodies[static_cast<std::size_t>(k.body)].name},
                         {"box", {k.box[0], k.box[1], k.box[2], k.box[3]}},
                         {"margin", k.margin}});
    const std::array<double, 3>& c = plan.goal_center;
    const std::array<double, 3>& t = plan.goal_tolerance;
    regions.push_back({{"kind", "goal"},
                       {"body", m.bodies[static_cast<std::size_t>(plan.goal_body)].name},
                       {"box", {c[0] - t[0], c[1] - t[1], c[0] + t[0], c[1] + t[1]}},
                       {"margin", 0.0}});
    for (const auto& g : regions) {
      const double e = g["margin"].get<double>();
      grow(box, g["box"][0].get<double>() - e, g["box"][1].get<double>() - e);
      grow(box, g["box"][2].get<double>() + e, g["box"][3].get<double>() + e);
    }
    d["regions"] = regions;
  }
  const double extent = std::max(box[1] - box[0], box[3] - box[2]);
  d["bounds"] = padded(box, std::max(0.05, 0.3 * extent));
  d["moving"] = moving;
  d["poses"] = floats(poses);
  // A joint's frame is its parent's pose composed with its origin (the page composes them).
  d["joints"] = nlohmann::ordered_json::array();
  for (int j = 0; j < nj; ++j) {
    const Joint& jt = m.joints[static_cast<std::size_t>(j)];
    const auto& rg = range[static_cast<std::size_t>(j)];
    const double pad = 0.1 * std::max(rg[1] - rg[0], 0.02);
    d["joints"].push_back({{"name", jt.name},
                           {"type", std::string(to_string(jt.type))},
                           {"parent", jt.parent},
                           {"origin", {jt.origin.translation.x, jt.origin.translation.y, jt.origin.angle()}},
                           {"axis", xy(jt.axis)},
                           {"range", {rg[0] - pad, rg[1] + pad}}});
  }

  // Contacts of each step at its linearisation point (the row before it), from the
  // forces file; gaps below zero of each row.
  ContactWorkspace ws(m);
  std::vector<std::int32_t> c_offsets(static_cast<std::size_t>(rows) + 1, 0), p_offsets(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<float> contacts, penetrations;  // [x, y, normal angle, p_n, p_t] and [x, y, phi]
  std::vector<std::uint16_t> contact_slot;
  std::vector<ReplayInput::Impulse> impulses = r.impulses;
  std::stable_sort(impulses.begin(), impulses.end(),
                   [](const ReplayInput::Impulse& a, const ReplayInput::Impulse& b) { return a.step < b.step; });
  double biggest = 0;
  std::size_t next = 0;
  for (int k = 0; k < rows; ++k) {
    c_offsets[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(contact_slot.size());
    p_offsets[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(penetrations.size() / 3);
    if (m.n_slots() == 0) continue;
    ws.evaluate(m, params, r.q.data() + static_cast<std::size_t>(k) * nq);
    for (int i = 0; i < m.n_slots(); ++i) {
      const ContactFrame<double>& f = ws.frame[static_cast<std::size_t>(i)];
      if (f.phi < kPenetrationMark) {
        const Vec2<double> c = 0.5 * (f.point_a + f.point_b);
        penetrations.insert(penetrations.end(), {static_cast<float>(c.x), static_cast<float>(c.y), static_cast<float>(f.phi)});
      }
    }
    if (k == 0) continue;
    // Step k's impulses, drawn at row k - 1's frames (where the step was linearised).
    ws.evaluate(m, params, r.q.data() + static_cast<std::size_t>(k - 1) * nq);
    for (; next < impulses.size() && impulses[next].step <= k; ++next) {
      const ReplayInput::Impulse& im = impulses[next];
      if (im.step != k || !std::isfinite(im.normal) || !std::isfinite(im.tangent)) continue;
      const ContactFrame<double>& f = ws.frame[static_cast<std::size_t>(im.slot)];
      const Vec2<double> c = f.point_a;  // the witness point on A, where the slot's feature is queried
      contact_slot.push_back(static_cast<std::uint16_t>(im.slot));
      contacts.insert(contacts.end(), {static_cast<float>(c.x), static_cast<float>(c.y),
                                       static_cast<float>(std::atan2(f.normal.y, f.normal.x)),
                                       static_cast<float>(im.normal), static_cast<float>(im.tangent)});
      biggest = std::max(biggest, std::hypot(im.normal, im.tangent));
    }
  }
  c_offsets[static_cast<std::size_t>(rows)] = static_cast<std::int32_t>(contact_slot.size());
  p_offsets[static_cast<std::size_t>(rows)] = static_cast<std::int32_t>(penetrations.size() / 3);
  d["contacts"] = {{"offsets", ints(c_offsets)},
                   {"slot", base64(contact_slot.data(), contact_slot.size() * sizeof(std::uint16_t))},
                   {"data", floats(contacts)}};
  d["penetrations"] = {{"offsets", ints(p_offsets)}, {"data", floats(penetrations)}};
  d["impulse_scale"] = biggest;
  d["impulse_unit"] = r.scaled_by_k ? "N s (times k, Halm & Posa 2018, eq. (10))" : "N s";
}

// The listed points of a body on a plane as a right prism whose cross-section is a non-convex
// polygon with axis-parallel edges (the T-bar: two boxes), as its two end caps in the body
// frame, vertex i of one above vertex i of the other; empty for anything else. The stepper uses
// the points' convex hull; the page draws this prism so that the body's true shape is seen.
// Points alone do not fix a polygon in general, but an orthogonal one through all of them as
// vertices is unique when it exists (O'Rourke 1988, "Uniqueness of orthogonal
// connect-the-dots"): pair the points along each line in order, then follow the pairs.
nlohmann::ordered_json orthogonal_prism(const std::vector<Eigen::Vector3d>& pts) {
  const nlohmann::ordered_json none = nlohmann::ordered_json::array();
  if (pts.size() < 8) return none;
  double extent = 0;
  for (const Eigen::Vector3d& p : pts) extent = std::max(extent, p.cwiseAbs().maxCoeff());
  const double tol = 1e-9 * std::max(extent, 1e-300);
  const auto same = [tol](double a, double b) { return std::abs(a - b) <= tol; };
  for (int k = 0; k < 3; ++k) {
    const int a = (k + 1) % 3, b = (k + 2) % 3;
    // Two levels along axis k, each with the same cross-section points.
    double lo = pts[0][k], hi = pts[0][k];
    for (const Eigen::Vector3d& p : pts) lo = std::min(lo, p[k]), hi = std::max(hi, p[k]);
    if (same(lo, hi)) continue;
    std::vector<std::array<double, 2>> layer[2];
    bool two_levels = true;
    for (const Eigen::Vector3d& p : pts) {
      if (!same(p[k], lo) && !same(p[k], hi)) two_levels = false;
      auto& l = layer[same(p[k], lo) ? 0 : 1];
      const std::array<double, 2> q{p[a], p[b]};
      if (std::none_of(l.begin(), l.end(), [&](const auto& o) { return same(o[0], q[0]) && same(o[1], q[1]); }))
        l.push_back(q);
    }
    if (!two_levels || layer[0].size() != layer[1].size() || layer[0].size() < 4) continue;
    const auto in_top = [&](const std::array<double, 2>& q) {
      return std::any_of(layer[1].begin(), layer[1].end(), [&](const auto& o) { return same(o[0], q[0]) && same(o[1], q[1]); });
    };
    if (!std::all_of(layer[0].begin(), layer[0].end(), in_top)) continue;
    const std::vector<std::array<double, 2>>& v = layer[0];
    const std::size_t n = v.size();
    // Along each line x = c (then y = c), the points in order pair up into edges.
    std::vector<std::size_t> partner[2];
    bool paired = true;
    for (int dir = 0; dir < 2 && paired; ++dir) {
      partner[dir].assign(n, n);
      std::vector<std::size_t> order(n);
      for (std::size_t i = 0; i < n; ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return v[i][dir] < v[j][dir]; });
      for (std::size_t s = 0; s < n;) {
        std::size_t e = s + 1;  // the points of one line are order[s, e), then in order along it
        while (e < n && same(v[order[e]][dir], v[order[s]][dir])) ++e;
        std::sort(order.begin() + static_cast<std::ptrdiff_t>(s), order.begin() + static_cast<std::ptrdiff_t>(e),
                  [&](std::size_t i, std::size_t j) { return v[i][1 - dir] < v[j][1 - dir]; });
        if ((e - s) % 2 != 0) paired = false;  // a line with an odd number of points cannot pair
        for (std::size_t i = s; i + 1 < e; i += 2) {
          partner[dir][order[i]] = order[i + 1];
          partner[dir][order[i + 1]] = order[i];
        }
        s = e;
      }
    }
    if (!paired) continue;
    // Follow the edges, vertical then horizontal: one cycle through every point.
    std::vector<std::size_t> cycle{0};
    for (int dir = 0; cycle.size() <= n; dir ^= 1) {
      const std::size_t next = partner[dir][cycle.back()];
      if (next == cycle[0]) break;
      cycle.push_back(next);
    }
    if (cycle.size() != n) continue;
    // Simple: no edge crosses another; and not convex (a box is drawn as its hull already).
    bool simple = true, reflex = false;
    double area = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const auto& p = v[cycle[i]];
      const auto& q = v[cycle[(i + 1) % n]];
      area += p[0] * q[1] - q[0] * p[1];
    }
    for (std::size_t i = 0; i < n && simple; ++i) {
      const auto& p0 = v[cycle[i]];
      const auto& p1 = v[cycle[(i + 1) % n]];
      const auto& p2 = v[cycle[(i + 2) % n]];
      const double turn = (p1[0] - p0[0]) * (p2[1] - p1[1]) - (p1[1] - p0[1]) * (p2[0] - p1[0]);
      if (turn * area < 0) reflex = true;
      for (std::size_t j = i + 2; j < n; ++j) {
        if ((j + 1) % n == i) continue;
        const auto& q0 = v[cycle[j]];
        const auto& q1 = v[cycle[(j + 1) % n]];
        const auto between = [tol](double x, double u, double w) { return x > std::min(u, w) + tol && x < std::max(u, w) - tol; };
        // Axis-parallel edges cross when each one's fixed coordinate lies inside the other's span.
        const bool pv = same(p0[0], p1[0]), qv = same(q0[0], q1[0]);
        if (pv != qv && (pv ? between(p0[0], q0[0], q1[0]) && between(q0[1], p0[1], p1[1])
                            : between(q0[0], p0[0], p1[0]) && between(p0[1], q0[1], q1[1])))
          simple = false;
      }
    }
    if (!simple || !reflex) continue;
    nlohmann::ordered_json caps = nlohmann::ordered_json::array();
    for (const double level : {lo, hi}) {
      nlohmann::ordered_json cap = nlohmann::ordered_json::array();
      for (const std::size_t i : cycle) {
        Eigen::Vector3d p;
        p[k] = level;
        p[a] = v[i][0];
        p[b] = v[i][1];
        cap.push_back({p.x(), p.y(), p.z()});
      }
      caps.push_back(cap);
    }
    return caps;
  }
  return none;
}

void body_on_plane_data(const Model& m, const ReplayInput& r, nlohmann::ordered_json& d) {
  const Body3& b3 = *m.body3;
  const int rows = r.rows(), nq = m.n_q();
  d["body3_name"] = m.bodies[static_cast<std::size_t>(b3.body)].name;
  // The hull's points in the body frame; a cylinder as two rings of 32.
  std::vector<Eigen::Vector3d> v = b3.hull_vertices;
  if (b3.cylinder) {
    const HullCylinder& c = *b3.cylinder;
    const Eigen::Vector3d a = c.axis.normalized();
    const Eigen::Vector3d u = a.unitOrthogonal(), w = a.cross(u);
    for (int end : {-1, 1})
      for (int k = 0; k < 32; ++k) {
        const double phi = 2 * std::numbers::pi * k / 32;
        v.push_back(c.center + end * c.half_length * a + c.radius * (std::cos(phi) * u + std::sin(phi) * w));
      }
  }
  d["vertices"] = nlohmann::ordered_json::array();
  for (const Eigen::Vector3d& p : v) d["vertices"].push_back({p.x(), p.y(), p.z()});
  d["prism"] = orthogonal_prism(b3.given_vertices);
  // The pose [x, y, z, qw, qx, qy, qz] of every row: DOFs 0..6 of the body's 13.
  std::vector<float> poses(static_cast<std::size_t>(rows) * 7);
  std::array<double, 4> top{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  std::array<double, 4> side = top;
  for (int k = 0; k < rows; ++k) {
    const double* q = r.q.data() + static_cast<std::size_t>(k) * nq;
    for (int i = 0; i < 7; ++i) poses[static_cast<std::size_t>(k) * 7 + i] = static_cast<float>(q[i]);
    const Eigen::Quaterniond rot(q[3], q[4], q[5], q[6]);
    const Eigen::Matrix3d R = rot.normalized().toRotationMatrix();
    for (const Eigen::Vector3d& p : v) {
      const Eigen::Vector3d w = Eigen::Vector3d(q[0], q[1], q[2]) + R * p;
      grow(top, w.x(), w.y());
      grow(side, w.x(), w.z());
    }
  }
  grow(top, 0, 0);
  grow(side, 0, 0);
  const double extent = std::max({top[1] - top[0], top[3] - top[2], side[3] - side[2]});
  d["bounds_top"] = padded(top, std::max(0.05, 0.3 * extent));
  d["bounds_side"] = padded(side, std::max(0.05, 0.3 * extent));
  d["poses3"] = floats(poses);
  // The equivalent contact point and its normal impulse, from the stepper's extra columns.
  std::array<int, 4> col{-1, -1, -1, -1};
  const char* names[] = {"ecp_x", "ecp_y", "ecp_z", "p_n"};
  for (int c = 0; c < 4; ++c)
    for (std::size_t e = 0; e < r.extra_names.size(); ++e)
      if (r.extra_names[e] == names[c]) col[static_cast<std::size_t>(c)] = static_cast<int>(e);
  const bool has = std::all_of(col.begin(), col.end(), [](int c) { return c >= 0; });
  std::vector<float> ecp;
  double biggest = 0;
  if (has) {
    const std::size_t ne = r.extra_names.size();
    ecp.resize(static_cast<std::size_t>(rows) * 4);
    for (int k = 0; k < rows; ++k)
      for (int c = 0; c < 4; ++c) {
        const double val = r.extra[static_cast<std::size_t>(k) * ne + static_cast<std::size_t>(col[static_cast<std::size_t>(c)])];
        ecp[static_cast<std::size_t>(k) * 4 + c] = static_cast<float>(val);
        if (c == 3 && std::isfinite(val)) biggest = std::max(biggest, std::abs(val));
      }
  }
  d["has_ecp"] = has;
  d["ecp"] = floats(ecp);
  d["force_scale"] = biggest;
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

void add_row(ReplayInput& replay, const State& state) {
  replay.t.push_back(state.t);
  replay.q.insert(replay.q.end(), state.q.data(), state.q.data() + state.q.size());
}

void add_impulses(ReplayInput& replay, const Model& m, const Stepper& stepper, int step) {
  for (int i = 0; i < m.n_slots(); ++i)
    if (stepper.active()[i]) replay.impulses.push_back({step, i, stepper.normal_impulse()[i], stepper.tangent_impulse()[i]});
}

ReplayInput initial_replay(const Model& m) {
  ReplayInput r;
  const State s = initial_state(m);
  r.t.push_back(s.t);
  r.q.assign(s.q.data(), s.q.data() + s.q.size());
  r.frames_from = "the initial state";
  return r;
}

ReplayInput read_trajectory_csv(std::istream& in, const std::string& name, const Scene& scene) {
  const Model& m = *scene.model;
  ReplayInput r;
  r.frames_from = name;
  std::string line;
  long n = 0;
  std::vector<std::string> header;
  const int nq = m.n_q();
  while (next_line(in, line, n)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (line.rfind("# stopped: ", 0) == 0) {
        r.stopped = line.substr(11);
        expect_utf8(r.stopped, name, n);
      }
      check_scene(line, name, n, scene);
      continue;
    }
    if (header.empty()) {
      expect_utf8(line, name, n);
      header = split_fields(line);
      if (header.size() < 2 || header[0] != "step" || header[1] != "t")
        fail(name, n, "the header must start with step,t (a trajectory CSV of quasistep run --out)");
      for (int i = 0; i < nq; ++i) {
        const std::string& want = m.dofs[static_cast<std::size_t>(i)].name;
        if (static_cast<int>(header.size()) < 2 + i + 1 || header[static_cast<std::size_t>(2 + i)] != want)
          fail(name, n, "column " + std::to_string(3 + i) + " must be the scene's DOF " + want +
                            (static_cast<int>(header.size()) > 2 + i
                                 ? " (it is " + printable(header[static_cast<std::size_t>(2 + i)]) + "): a trajectory of another scene?"
                                 : " (missing)"));
      }
      r.extra_names.assign(header.begin() + 2 + nq, header.end());
      continue;
    }
    const std::vector<std::string> cells = split_fields(line);
    if (cells.size() != header.size())
      fail(name, n, "has " + std::to_string(cells.size()) + " cells; the header has " + std::to_string(header.size()));
    const long step = integer(cells[0], name, n, "step");
    if (step != r.rows())
      fail(name, n, "step " + std::to_string(step) + " where step " + std::to_string(r.rows()) + " was due (rows are consecutive steps from 0)");
    if (static_cast<long>(r.rows() + 1) * static_cast<long>(std::max<std::size_t>(m.bodies.size(), 1)) > kMaxReplayBodyRows)
      fail(name, n, "too many rows for one replay (at most " + std::to_string(kMaxReplayBodyRows) + " rows x bodies)");
    r.t.push_back(number(cells[1], false, name, n, "t"));
    for (int i = 0; i < nq; ++i) r.q.push_back(number(cells[static_cast<std::size_t>(2 + i)], false, name, n, header[static_cast<std::size_t>(2 + i)]));
    for (std::size_t e = 2 + static_cast<std::size_t>(nq); e < cells.size(); ++e)
      r.extra.push_back(number(cells[e], true, name, n, header[e]));
  }
  if (header.empty()) throw ReplayError(name + ": no header (an empty file, or not a trajectory CSV)");
  if (r.rows() == 0) throw ReplayError(name + ": no rows");
  return r;
}

void read_forces_csv(std::istream& in, const std::string& name, const Scene& scene, ReplayInput& r) {
  const Model& m = *scene.model;
  std::string line;
  long n = 0;
  bool header = false;
  r.has_forces = true;
  std::set<std::pair<long, long>> seen;  // (step, slot): each once
  while (next_line(in, line, n)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      check_scene(line, name, n, scene);
      continue;
    }
    const std::vector<std::string> cells = split_fields(line);
    if (!header) {
      const std::string plain = "step,t,slot,pair,phi,normal_impulse,tangent_impulse,status";
      const std::string k = "step,t,slot,pair,phi,normal_impulse_times_k,tangent_impulse_times_k,status";
      if (line != plain && line != k) fail(name, n, "the header must be " + plain + " (a forces CSV of quasistep run --forces)");
      r.scaled_by_k = line == k;
      header = true;
      continue;
    }
    if (cells.size() != 8) fail(name, n, "has " + std::to_string(cells.size()) + " cells; the header has 8");
    ReplayInput::Impulse im;
    const long step = integer(cells[0], name, n, "step");
    // The failed step of a run that stopped (its rows have no impulses) is not drawn.
    if (cells[7] != "solved" && step == r.rows() && !r.stopped.empty()) continue;
    if (step < 1 || step >= r.rows())
      fail(name, n, "step " + std::to_string(step) + " is not a step of the trajectory (1.." + std::to_string(r.rows() - 1) +
                        "): the forces of another run?");
    const long slot = integer(cells[2], name, n, "slot");
    if (slot < 0 || slot >= m.n_slots())
      fail(name, n, "slot " + std::to_string(slot) + " is not a slot of the scene (it has " + std::to_string(m.n_slots()) + ")");
    if (cells[3] != m.pair_name(m.slots[static_cast<std::size_t>(slot)].pair))
      fail(name, n, "slot " + std::to_string(slot) + " belongs to pair " + m.pair_name(m.slots[static_cast<std::size_t>(slot)].pair) +
                        ", not " + printable(cells[3]) + ": the forces of another scene?");
    if (!seen.insert({step, slot}).second)
      fail(name, n, "step " + std::to_string(step) + ", slot " + std::to_string(slot) + " appears twice");
    if (cells[7] != "solved") continue;  // a failed step's slots carry no impulse
    im.step = static_cast<int>(step);
    im.slot = static_cast<int>(slot);
    im.normal = number(cells[5], true, name, n, "normal impulse");
    im.tangent = number(cells[6], true, name, n, "tangent impulse");
    r.impulses.push_back(im);
  }
  if (!header) throw ReplayError(name + ": no header (an empty file, or not a forces CSV)");
}

std::string replay_data_json(const Scene& scene, const ReplayInput& r) {
  const Model& m = *scene.model;
  nlohmann::ordered_json d;
  d["world"] = std::string(to_string(m.world.type));
  d["gravity"] = m.world.gravity;
  d["frames"] = r.rows();
  // Rows a step apart (every run) give their times as t0 + k h; others store each.
  const double h = r.rows() > 1 ? (r.t.back() - r.t.front()) / (r.rows() - 1) : 0.0;
  bool uniform = true;
  for (int k = 0; k < r.rows() && uniform; ++k)
    uniform = std::abs(r.t[static_cast<std::size_t>(k)] - (r.t.front() + k * h)) <= 1e-9 * std::max(1.0, std::abs(r.t.back()));
  d["t0"] = r.t.front();
  d["h"] = h;
  if (!uniform) {
    std::vector<float> t(r.t.begin(), r.t.end());
    d["t"] = floats(t);
  }
  d["stopped"] = r.stopped;
  d["has_forces"] = r.has_forces;
  if (m.world.type == WorldType::body_on_plane) body_on_plane_data(m, r, d);
  else planar_data(scene, r, d);
  // Inside a <script> element "</script" would end it and "<!--" would start a comment
  // that swallows the page: no '<' at all (it occurs only inside JSON strings).
  const std::string json = d.dump();
  std::string data;
  data.reserve(json.size());
  for (const char c : json) {
    if (c == '<') data += "\\u003c";
    else data += c;
  }
  return data;
}

void write_replay_style_and_script(std::ostream& out) {
  out << "<style>\n" << kReplayStyle << "</style>\n<script>\n" << kReplayScript << "</script>\n";
}

void write_replay_html(const Scene& scene, const ReplayInput& r, const std::string& provenance, std::ostream& out) {
  const Model& m = *scene.model;
  const std::string title = (m.name.empty() ? scene.source : m.name) + " \u2014 quasistep replay";
  out << "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << html_escape(title) << "</title>\n"
      << "<!-- A replay page of quasistep (`quasistep render`, `quasistep run --html`): self-contained, it loads "
         "nothing from the network or from other files. -->\n"
      << "<style>\nbody { font: 14px/1.4 system-ui, sans-serif; margin: 16px; color: #222; background: #fff; }\n"
      << "h1 { font-size: 18px; margin: 0 0 4px; }\n"
      << ".meta { color: #555; font-size: 12px; margin: 0 0 8px; overflow-wrap: anywhere; }\n</style>\n";
  write_replay_style_and_script(out);
  out << "</head>\n<body>\n<h1>" << html_escape(title) << "</h1>\n<p class=\"meta\">" << html_escape(provenance)
      << (scene.description.empty() ? std::string() : "  \u00b7  " + html_escape(scene.description))
      << "  \u00b7  frames: " << html_escape(r.frames_from) << "</p>\n"
      << "<div id=\"replay\"></div>\n<pre id=\"qs-selftest\" hidden></pre>\n"
      << "<script id=\"qs-data\" type=\"application/json\">" << replay_data_json(scene, r) << "</script>\n"
      << "<script>\n\"use strict\";\n(function () {\n"
      << "  var errors = [];\n"
      << "  window.addEventListener(\"error\", function (e) { errors.push(String(e.message || e)); });\n"
      << "  var D = JSON.parse(document.getElementById(\"qs-data\").textContent);\n"
      << "  // #frame=N opens the page at row N (a link to a moment of the run).\n"
      << "  var at = /^#frame=(\\d+)$/.exec(location.hash);\n"
      << "  var replay = qsReplay(document.getElementById(\"replay\"), D, { frame: at ? Number(at[1]) : 0 });\n"
      << "  // The test suite opens the page with #selftest and reads the report from the DOM.\n"
      << "  if (location.hash === \"#selftest\") {\n"
      << "    var report = replay.selftest();\n"
      << "    report.errors = errors;\n"
      << "    var meta = getComputedStyle(document.querySelector(\".meta\"));\n"
      << "    report.meta_wrap = { word_break: meta.wordBreak, overflow_wrap: meta.overflowWrap };\n"
      << "    document.getElementById(\"qs-selftest\").textContent = JSON.stringify(report);\n"
      << "  }\n})();\n</script>\n</body>\n</html>\n";
}

}  // namespace qs::io

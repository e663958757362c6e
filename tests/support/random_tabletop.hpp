// Random tabletop worlds of the kind Halm & Posa 2018 cover (secs. 3-4, 6): one free object
// (a disk, a box or a convex polygon) at a random pose, pushed or squeezed by 2-5 fingers:
// point fingers on an x-y carriage (sec. 6.1) or two-link arms with a round tip (sec. 6.3),
// each touching the object at a random boundary point with a random gap phi >= 0, a random
// friction coefficient and a random velocity command u; sometimes a fixed wall near the
// object (Fig. 4). The limit surface Ã (eq. (11)) and the relative gain B (eq. (15)) are
// random symmetric positive definite matrices, as Theorems 1-3 assume (A > 0, B > 0).
//
// Neither earlier generator covers this: qs::halm_posa_disk_lcp (random_problems.hpp) builds
// the LCP of a disk with A = I and B = I directly, and test::random_state
// (derivative_samples.hpp) perturbs an example's trajectory. This one writes a scene, so a
// test steps it through the scene reader, the contact geometry and the stepper.
// Deterministic in the seed on every platform (its own uniform draw, not <random>'s
// distributions, whose algorithms the standards leave to the implementation).
#pragma once

#include <Eigen/Core>
#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace qs::test {

/// Uniform draws from a 64-bit Mersenne twister (its output is fixed by the standard).
class Draw {
 public:
  explicit Draw(std::uint64_t seed) : rng_(seed) {}
  double unit() { return static_cast<double>(rng_() >> 11) * 0x1p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit(); }
  double log_uniform(double lo, double hi) { return lo * std::pow(hi / lo, unit()); }
  int integer(int lo, int hi) { return lo + static_cast<int>(unit() * (hi - lo + 1)); }  // [lo, hi]
  bool chance(double p) { return unit() < p; }

 private:
  std::mt19937_64 rng_;
};

/// A random symmetric positive definite n x n matrix Q diag(e) Q' with eigenvalues e
/// log-uniform in [lo, hi] and Q orthogonal (QR of a random matrix); exactly symmetric.
inline Eigen::MatrixXd random_spd(Draw& d, int n, double lo, double hi) {
  Eigen::MatrixXd G(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) G(i, j) = d.uniform(-1, 1);
  const Eigen::MatrixXd Q = Eigen::HouseholderQR<Eigen::MatrixXd>(G).householderQ();
  Eigen::VectorXd e(n);
  for (int i = 0; i < n; ++i) e[i] = d.log_uniform(lo, hi);
  Eigen::MatrixXd S = Q * e.asDiagonal() * Q.transpose();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j) S(i, j) = S(j, i);
  return S;
}

struct RandomTabletop {
  nlohmann::json scene;
  Eigen::Matrix3d A_body;  // Ã, body frame (the scene's model.A)
  Eigen::MatrixXd B;       // n_a x n_a (the scene's model.B)
  Eigen::VectorXd u;       // (n_a) the joints' velocity commands, in joint order
  double h = 0;
  double c = 0;
  std::vector<double> gap;  // the gap each finger (then the wall) was placed at, in pair order
  int points = 0, arms = 0;
  bool wall = false;
  std::string object;  // "disk", "box" or "polygon"
};

namespace random_tabletop_detail {

using Vec = Eigen::Vector2d;
inline Vec perp(const Vec& v) { return {-v.y(), v.x()}; }
inline Vec rotate(const Vec& v, double a) { return {std::cos(a) * v.x() - std::sin(a) * v.y(), std::sin(a) * v.x() + std::cos(a) * v.y()}; }
inline nlohmann::json rows(const Eigen::MatrixXd& M) {
  nlohmann::json r = nlohmann::json::array();
  for (Eigen::Index i = 0; i < M.rows(); ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (Eigen::Index j = 0; j < M.cols(); ++j) row.push_back(M(i, j));
    r.push_back(row);
  }
  return r;
}

}  // namespace random_tabletop_detail

/// One random world (see the file comment); `c` log-uniform in [1e-3, 10], h in [0.01, 0.1] s.
/// The contacts have no margin (every slot is in every step's LCP or left out as out of
/// reach, with impulse 0).
inline RandomTabletop random_tabletop(std::uint64_t seed) {
  using namespace random_tabletop_detail;
  using nlohmann::json;
  Draw d(seed);
  RandomTabletop t;
  t.h = d.uniform(0.01, 0.1);
  t.c = d.log_uniform(1e-3, 10);
  // The object, in its body frame: a disk, or a convex polygon (a box is one) by its vertices.
  const int kind = d.integer(0, 2);
  double radius = 0;
  std::vector<Vec> vertices;  // counter-clockwise
  json shape;
  if (kind == 0) {
    t.object = "disk";
    radius = d.uniform(0.3, 1.2);
    shape = {{"type", "disk"}, {"radius", radius}};
  } else if (kind == 1) {
    t.object = "box";
    const double w = d.uniform(0.4, 1.6), hh = d.uniform(0.4, 1.6);
    vertices = {{-w / 2, -hh / 2}, {w / 2, -hh / 2}, {w / 2, hh / 2}, {-w / 2, hh / 2}};
    shape = {{"type", "box"}, {"size", {w, hh}}};
  } else {
    t.object = "polygon";
    // On one circle at jittered, increasing angles: strictly convex, the origin inside.
    const int n = d.integer(3, 8);
    const double r = d.uniform(0.4, 1.0), pi = 3.14159265358979323846;
    json v = json::array();
    for (int i = 0; i < n; ++i) {
      const double a = 2 * pi * (i + d.uniform(-0.3, 0.3)) / n;
      vertices.push_back({r * std::cos(a), r * std::sin(a)});
      v.push_back({vertices.back().x(), vertices.back().y()});
    }
    shape = {{"type", "polygon"}, {"vertices", v}};
  }
  const Vec center(d.uniform(-1, 1), d.uniform(-1, 1));
  const double theta = d.uniform(-3.14159265358979323846, 3.14159265358979323846);
  auto world = [&](const Vec& b) -> Vec { return center + rotate(b, theta); };
  // A boundary point and its outward normal, in the world frame.
  auto boundary = [&](Vec& p, Vec& n) {
    if (kind == 0) {
      const double a = d.uniform(0, 2 * 3.14159265358979323846);
      n = rotate(Vec(std::cos(a), std::sin(a)), theta);
      p = center + radius * n;
      return;
    }
    const int e = d.integer(0, static_cast<int>(vertices.size()) - 1);
    const Vec& a = vertices[e];
    const Vec& b = vertices[(e + 1) % vertices.size()];
    const Vec edge = b - a;
    p = world(a + d.uniform(0.1, 0.9) * edge);
    n = rotate(Vec(edge.y(), -edge.x()).normalized(), theta);  // outward: the edge turned clockwise
  };

  t.A_body = random_spd(d, 3, 0.1, 10);
  json bodies = json::array({{{"name", "object"}, {"kind", "free"}, {"dofs", {"x", "y", "theta"}}, {"mass", 1.0},
                              {"pose", {center.x(), center.y(), theta}}, {"shapes", {shape}}}});
  json joints = json::array(), pairs = json::array(), commands = json::object();
  std::vector<double> u;
  const bool inward = d.chance(0.5);  // every finger driven into the object (squeezes), or anywhere
  const int fingers = d.integer(2, 5);
  for (int f = 0; f < fingers; ++f) {
    Vec p, n;
    boundary(p, n);
    const double gap = d.uniform(0, 0.03);
    t.gap.push_back(gap);
    // The tip's velocity when driven inward: into the object, with a tangential part.
    const Vec inward_v = d.uniform(0.1, 1.0) * -n + d.uniform(-0.5, 0.5) * perp(n);
    std::string name = "f";
    name += std::to_string(f);
    if (d.chance(0.65)) {
      // A point finger on an x-y carriage (Halm & Posa 2018, sec. 6.1).
      ++t.points;
      const Vec tip = p + gap * n;
      bodies.push_back({{"name", name + "_carriage"}, {"kind", "linked"}});
      bodies.push_back({{"name", name}, {"kind", "linked"}, {"shapes", {{{"type", "point"}}}}});
      joints.push_back({{"name", name + "_x"}, {"type", "prismatic"}, {"parent", "world"}, {"child", name + "_carriage"},
                        {"axis", {1, 0}}, {"position", tip.x()}});
      joints.push_back({{"name", name + "_y"}, {"type", "prismatic"}, {"parent", name + "_carriage"}, {"child", name},
                        {"axis", {0, 1}}, {"position", tip.y()}});
      const Vec v = inward ? inward_v : Vec(d.uniform(-1, 1), d.uniform(-1, 1));
      u.push_back(v.x());
      u.push_back(v.y());
      commands[name + "_x"] = {{"velocity", v.x()}};
      commands[name + "_y"] = {{"velocity", v.y()}};
    } else {
      // A two-link arm with a round tip (sec. 6.3): links L1, L2, the tip's disk (radius
      // r_tip) centred at the end of the second link; shoulder placed at a reachable distance,
      // away from the object, elbow bent either way.
      ++t.arms;
      const double L1 = d.uniform(0.5, 1.2), L2 = d.uniform(0.5, 1.2), r_tip = d.uniform(0.02, 0.1);
      const Vec tip = p + (gap + r_tip) * n;
      const double reach = d.uniform(std::abs(L1 - L2) + 0.1, L1 + L2 - 0.05);
      const Vec base = tip + reach * rotate(n, d.uniform(-1, 1));
      const double cos_elbow = (reach * reach - L1 * L1 - L2 * L2) / (2 * L1 * L2);
      const double elbow = (d.chance(0.5) ? 1 : -1) * std::acos(std::clamp(cos_elbow, -1.0, 1.0));
      const Vec to_tip = tip - base;
      const double shoulder = std::atan2(to_tip.y(), to_tip.x()) -
                              std::atan2(L2 * std::sin(elbow), L1 + L2 * std::cos(elbow));
      bodies.push_back({{"name", name + "_upper"}, {"kind", "linked"}});
      bodies.push_back({{"name", name}, {"kind", "linked"},
                        {"shapes", {{{"type", "disk"}, {"radius", r_tip}, {"pose", {L2, 0, 0}}}}}});
      joints.push_back({{"name", name + "_shoulder"}, {"type", "revolute"}, {"parent", "world"},
                        {"child", name + "_upper"}, {"origin", {base.x(), base.y(), 0}}, {"position", shoulder}});
      joints.push_back({{"name", name + "_elbow"}, {"type", "revolute"}, {"parent", name + "_upper"}, {"child", name},
                        {"origin", {L1, 0, 0}}, {"position", elbow}});
      double w1, w2;
      if (inward) {
        // Joint rates that move the tip at inward_v: d tip / d q1 = perp(tip - base),
        // d tip / d q2 = perp(tip - elbow joint).
        const Vec elbow_at = base + L1 * Vec(std::cos(shoulder), std::sin(shoulder));
        Eigen::Matrix2d J;
        J.col(0) = perp(tip - base);
        J.col(1) = perp(tip - elbow_at);
        const Eigen::Vector2d w = J.colPivHouseholderQr().solve(inward_v);
        w1 = w.x();
        w2 = w.y();
      } else {
        w1 = d.uniform(-1, 1);
        w2 = d.uniform(-1, 1);
      }
      u.push_back(w1);
      u.push_back(w2);
      commands[name + "_shoulder"] = {{"velocity", w1}};
      commands[name + "_elbow"] = {{"velocity", w2}};
    }
    pairs.push_back({{"bodies", {name, "object"}}, {"friction", d.chance(0.1) ? 0.0 : d.uniform(0.1, 1.5)}});
  }
  if (d.chance(0.3)) {
    // A fixed wall (Fig. 4): a half-plane with outward normal n_w, its boundary a gap g_w
    // from the object's nearest point.
    t.wall = true;
    const double a = d.uniform(0, 2 * 3.14159265358979323846);
    const Vec nw(std::cos(a), std::sin(a));
    double support = 0;  // min over the object of nw . x
    if (kind == 0) {
      support = nw.dot(center) - radius;
    } else {
      support = nw.dot(world(vertices[0]));
      for (const Vec& v : vertices) support = std::min(support, nw.dot(world(v)));
    }
    const double gap = d.uniform(0, 0.03);
    t.gap.push_back(gap);
    const Vec origin = (support - gap) * nw;
    bodies.push_back({{"name", "wall"}, {"kind", "fixed"}, {"pose", {origin.x(), origin.y(), 0}},
                      {"shapes", {{{"type", "half_plane"}, {"normal", {nw.x(), nw.y()}}}}}});
    pairs.push_back({{"bodies", {"wall", "object"}}, {"friction", d.chance(0.1) ? 0.0 : d.uniform(0.1, 1.5)}});
  }
  const int na = static_cast<int>(u.size());
  t.u = Eigen::Map<const Eigen::VectorXd>(u.data(), na);
  t.B = random_spd(d, na, 0.05, 20);
  t.scene = {{"format", 1},
             {"name", "random_tabletop"},
             {"world", {{"type", "tabletop"}, {"gravity", 9.81}}},
             {"model", {{"formulation", "halm_posa_lcp"}, {"A", rows(t.A_body)}, {"B", rows(t.B)}, {"c", t.c}}},
             {"step", {{"h", t.h}, {"steps", 1}}},
             {"bodies", bodies},
             {"joints", joints},
             {"contacts", {{"pairs", pairs}}},
             {"commands", commands}};
  return t;
}

}  // namespace qs::test

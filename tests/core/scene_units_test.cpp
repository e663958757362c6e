// A scene written in other units takes the same steps: every length times 2^a, every mass
// times 2^b and (optionally) the time unit times 2^c, each quantity of the scene scaled by
// its own dimension L^i M^j T^k (docs/steppers.md, "Length and mass units"). The steps'
// configurations, scaled back, must equal the original's: bit for bit where the step's
// problem scales as a whole by powers of two, and to a measured rounding where its rows
// hold quantities of different units (each case below says which rows and why).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quasistep/core/model.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/ecp_step_checks.hpp"
#include "tests/support/example_json.hpp"
#include "tests/support/halm_posa_checks.hpp"

namespace qs::scene_units_test {
namespace {

/// The dimension L^l M^m T^t of a scene quantity.
struct Dim {
  int l = 0, m = 0, t = 0;
};
constexpr Dim kNumber{};  // angles, friction coefficients, directions, counts, gains
constexpr Dim kLength{1, 0, 0};
constexpr Dim kMass{0, 1, 0};
constexpr Dim kTime{0, 0, 1};
constexpr Dim kRate{0, 0, -1};            // rad/s, and a schedule's frequency
constexpr Dim kSpeed{1, 0, -1};           // m/s
constexpr Dim kAcceleration{1, 0, -2};    // gravity
constexpr Dim kForce{1, 1, -2};           // N
constexpr Dim kTorque{2, 1, -2};          // N m
constexpr Dim kInertia{2, 1, 0};          // kg m^2
constexpr Dim kLinearStiffness{0, 1, -2};  // N/m
constexpr Dim kAngularStiffness{2, 1, -2};  // N m/rad

/// Powers of two of the new units: lengths times 2^a, masses times 2^b, times times 2^c.
struct Units {
  int a = 0, b = 0, c = 0;
};

/// One step of a path into the scene's JSON: an object's key or an array's index.
struct PathStep {
  std::string key;
  int index = -1;
};
using Path = std::vector<PathStep>;

std::string path_text(const Path& p) {
  std::string s;
  for (const PathStep& x : p) s += x.index >= 0 ? "[" + std::to_string(x.index) + "]" : (s.empty() ? "" : ".") + x.key;
  return s;
}

/// The scene `scene` in the units `u`. Every numeric leaf of the JSON is classified by its
/// path (docs/scene-format.md's unit column, and the readers core/scene*.cpp and
/// core/formulations/*/ *_params.cpp); a leaf the rules below do not know is listed in
/// `unknown`, so that a new field cannot escape the change of units unseen.
///
/// Halm & Posa's A and B: only their ratio reaches the step (the LCP's M(cB) holds
/// J_o A J_o' + J_m cB J_m', and a common factor of A and B goes into the unknown k of their
/// eq. (10) that scales Lambda), so B must be in A's units, entry by entry: a unit common
/// to A and B times 1/m for each of the entry's two indices that is a rotation (theta, or
/// a revolute joint), where the generalized force is a torque, N m. A given A chooses the
/// common unit itself (with k), and it is kept: the step's LCP is then the same matrix in
/// any units. A computed A is in 1/N^2 (docs/scene-format.md), and B follows it (the
/// stepper takes the common unit out: HalmPosaTakesTheSameStepsAtAnyCommonScaleOfAAndB
/// below). A number B (b I) is written out as a matrix when the joints mix
/// prismatic and revolute ones (its diagonal then scales differently); likewise a number
/// `stiffness` of anitescu_qp (N/m on a prismatic joint, N m/rad on a revolute one).
class InUnits {
 public:
  InUnits(const nlohmann::json& scene, Units u) : u_(u), out_(scene) {
    read_context();
    expand_uniform_numbers();
    Path p;
    walk(out_, p);
  }
  const nlohmann::json& scene() const { return out_; }
  const std::vector<std::string>& unknown() const { return unknown_; }

 private:
  void read_context() {
    if (out_.contains("model") && out_["model"].is_object()) {
      formulation_ = out_["model"].value("formulation", std::string());
      computed_A_ = !out_["model"].contains("A");
    }
    if (out_.contains("joints") && out_["joints"].is_array())
      for (const nlohmann::json& j : out_["joints"]) {
        const std::string name = j.value("name", std::string());
        const bool revolute = j.value("type", std::string()) == "revolute";
        joint_revolute_[name] = revolute;
        joint_revolute_by_index_.push_back(revolute);
        if (j.value("control", std::string("velocity")) == "velocity") velocity_revolute_.push_back(revolute);
      }
  }

  bool mixed_velocity_joints() const {
    return std::any_of(velocity_revolute_.begin(), velocity_revolute_.end(), [](bool r) { return r; }) &&
           std::any_of(velocity_revolute_.begin(), velocity_revolute_.end(), [](bool r) { return !r; });
  }

  void expand_uniform_numbers() {
    if (!out_.contains("model") || !mixed_velocity_joints()) return;
    nlohmann::json& model = out_["model"];
    const size_t n = velocity_revolute_.size();
    if (formulation_ == "halm_posa_lcp" && model.contains("B") && model["B"].is_number()) {
      const double b = model["B"];
      nlohmann::json rows = nlohmann::json::array();
      for (size_t i = 0; i < n; ++i) {
        nlohmann::json row = nlohmann::json::array();
        for (size_t k = 0; k < n; ++k) row.push_back(i == k ? b : 0.0);
        rows.push_back(row);
      }
      model["B"] = rows;
    }
    if (formulation_ == "anitescu_qp" && model.contains("stiffness") && model["stiffness"].is_number())
      model["stiffness"] = std::vector<double>(n, model["stiffness"].get<double>());
  }

  void walk(nlohmann::json& node, Path& p) {
    if (node.is_object()) {
      for (auto it = node.begin(); it != node.end(); ++it) {
        p.push_back({it.key(), -1});
        walk(it.value(), p);
        p.pop_back();
      }
    } else if (node.is_array()) {
      for (size_t i = 0; i < node.size(); ++i) {
        p.push_back({"", static_cast<int>(i)});
        walk(node[i], p);
        p.pop_back();
      }
    } else if (node.is_number()) {
      const std::optional<Dim> d = dim_of(p);
      if (!d) {
        unknown_.push_back(path_text(p));
        return;
      }
      const int e = u_.a * d->l + u_.b * d->m + u_.c * d->t;
      if (e != 0) node = std::ldexp(node.get<double>(), e);
    }
  }

  static const std::string& key(const Path& p, size_t i) {
    static const std::string none;
    return i < p.size() ? p[i].key : none;
  }
  static int index(const Path& p, size_t i) { return i < p.size() ? p[i].index : -1; }

  /// A pose [x, y, theta] or a point [x, y] (or [x, y, z, ...] of pose3): lengths first.
  static std::optional<Dim> pose_entry(const Path& p, size_t i, int lengths = 2) {
    if (p.size() != i + 1 || index(p, i) < 0) return std::nullopt;
    return index(p, i) < lengths ? kLength : kNumber;
  }

  /// Every entry of an array of lengths, nested to any depth (sizes, vertices, a box).
  static std::optional<Dim> all_entries(const Path& p, size_t i, Dim d) {
    if (p.size() <= i) return std::nullopt;
    for (size_t k = i; k < p.size(); ++k)
      if (index(p, k) < 0) return std::nullopt;
    return d;
  }

  /// A schedule of quantity q (a number, or breaks, values, terms).
  static std::optional<Dim> schedule(const Path& p, size_t i, Dim q) {
    if (p.size() == i) return q;
    const std::string& k = key(p, i);
    if (k == "breaks" && p.size() == i + 2) return kTime;
    if (k == "values" && p.size() == i + 2) return q;
    if (k == "terms" && p.size() == i + 3) {
      const std::string& f = key(p, i + 2);
      if (f == "amplitude") return q;
      if (f == "frequency") return kRate;
      if (f == "phase") return kNumber;
    }
    return std::nullopt;
  }

  std::optional<bool> revolute(const std::string& joint) const {
    const auto j = joint_revolute_.find(joint);
    if (j == joint_revolute_.end()) return std::nullopt;
    return j->second;
  }

  /// A DOF by name: a joint's (m or rad), or a free body's BODY.x, .y (m) or .theta (rad).
  std::optional<Dim> dof_dim(const std::string& name) const {
    if (auto r = revolute(name)) return *r ? kNumber : kLength;
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos) return std::nullopt;
    const std::string c = name.substr(dot + 1);
    if (c == "x" || c == "y") return kLength;
    if (c == "theta") return kNumber;
    return std::nullopt;
  }

  /// An entry of Halm & Posa's A or B: 1/m per rotational index, times the unit common to
  /// A and B: none for a given A (the scene's choice of k), 1/N^2 for a computed one.
  Dim gain_entry(bool rotation_i, bool rotation_k) const {
    const int rotations = static_cast<int>(rotation_i) + static_cast<int>(rotation_k);
    return computed_A_ ? Dim{-2 - rotations, -2, 4} : Dim{-rotations, 0, 0};
  }

  /// The unit of a parameter path (overrides, uncertainty; docs/scene-format.md).
  std::optional<Dim> parameter_dim(const std::string& path) const {
    const auto ends = [&](const std::string& s) {
      return path.size() > s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
    };
    if (path.rfind("bodies.", 0) == 0) {
      if (ends(".mass")) return kMass;
      if (ends(".scale")) return kNumber;
      if (ends(".pose.x") || ends(".pose.y")) return kLength;
      if (ends(".pose.theta")) return kNumber;
      return std::nullopt;
    }
    if (path.rfind("joints.", 0) == 0) {
      const size_t dot = path.rfind('.');
      const std::optional<bool> r = revolute(path.substr(7, dot - 7));
      if (!r) return std::nullopt;
      if (ends(".position")) return *r ? kNumber : kLength;
      if (ends(".stiffness")) return *r ? kAngularStiffness : kLinearStiffness;
      return std::nullopt;
    }
    if (path.rfind("pairs.", 0) == 0 && ends(".friction")) return kNumber;
    if (path == "model.stiffness") return kLinearStiffness;
    if (path == "model.c") return kNumber;
    return std::nullopt;
  }

  std::optional<Dim> dim_of(const Path& p) const {
    const std::string& top = key(p, 0);
    const std::string& k1 = key(p, 1);
    if (top == "format" && p.size() == 1) return kNumber;
    if (top == "world" && p.size() == 2) {
      if (k1 == "gravity") return kAcceleration;
      if (k1 == "support_friction") return kNumber;
    }
    if (top == "step" && p.size() == 2) {
      if (k1 == "h") return kTime;
      if (k1 == "steps") return kNumber;
    }
    if (top == "model") return model_dim(p);
    if (top == "bodies" && index(p, 1) >= 0) return body_dim(p);
    if (top == "joints" && index(p, 1) >= 0 && p.size() >= 3) {
      const std::string& f = key(p, 2);
      if (f == "origin") return pose_entry(p, 3);
      if (f == "axis") return all_entries(p, 3, kNumber);
      if (f == "position" && p.size() == 3) {
        const size_t j = static_cast<size_t>(index(p, 1));
        if (j < joint_revolute_by_index_.size()) return joint_revolute_by_index_[j] ? kNumber : kLength;
      }
      return std::nullopt;
    }
    if (top == "contacts") {
      if (k1 == "margin" && p.size() == 2) return kLength;
      if (k1 == "friction" && p.size() == 2) return kNumber;
      if (k1 == "pairs" && key(p, 3) == "friction" && p.size() == 4) return kNumber;
      return std::nullopt;
    }
    if (top == "loads" && index(p, 1) >= 0 && p.size() >= 3) {
      const std::string& f = key(p, 2);
      if (f == "force" && index(p, 3) >= 0) return schedule(p, 4, kForce);
      // A planar load's torque is one schedule; a body_on_plane load's is three.
      if (f == "torque") return index(p, 3) >= 0 ? schedule(p, 4, kTorque) : schedule(p, 3, kTorque);
      if (f == "point") return all_entries(p, 3, kLength);
      return std::nullopt;
    }
    if (top == "commands" && p.size() >= 3) {
      const std::optional<bool> r = revolute(k1);
      if (!r) return std::nullopt;
      if (key(p, 2) == "velocity") return schedule(p, 3, *r ? kRate : kSpeed);
      if (key(p, 2) == "effort") return schedule(p, 3, *r ? kTorque : kForce);
      return std::nullopt;
    }
    if (top == "overrides" && k1 == "worlds" && p.size() == 4) return parameter_dim(key(p, 3));
    if (top == "uncertainty" && k1 == "parameters" && p.size() == 4) {
      const std::string& f = key(p, 3);
      if (f != "low" && f != "high" && f != "mean" && f != "stddev") return std::nullopt;
      const nlohmann::json& entry = out_["uncertainty"]["parameters"][static_cast<size_t>(index(p, 2))];
      return parameter_dim(entry.value("parameter", std::string()));
    }
    if (top == "success") {
      if (k1 == "height" && p.size() == 2) return kLength;
      if (k1 == "hold_until" && p.size() == 2) return kTime;
      if (k1 == "center" || k1 == "tolerance") return pose_entry(p, 2);
      return std::nullopt;
    }
    if (top == "plan") return plan_dim(p);
    return std::nullopt;
  }

  std::optional<Dim> model_dim(const Path& p) const {
    const std::string& f = key(p, 1);
    if (f == "A" && p.size() == 4 && index(p, 2) >= 0 && index(p, 3) >= 0)
      return gain_entry(index(p, 2) == 2, index(p, 3) == 2);  // rows and columns x, y, theta
    if (f == "B" && formulation_ == "halm_posa_lcp") {
      if (p.size() == 2) {
        // b I: one unit for every joint (expand_uniform_numbers wrote out a mixed one).
        const bool r = !velocity_revolute_.empty() && velocity_revolute_[0];
        return gain_entry(r, r);
      }
      if (p.size() == 4 && index(p, 2) >= 0 && index(p, 3) >= 0) {
        const size_t i = static_cast<size_t>(index(p, 2)), k = static_cast<size_t>(index(p, 3));
        if (i >= velocity_revolute_.size() || k >= velocity_revolute_.size()) return std::nullopt;
        return gain_entry(velocity_revolute_[i], velocity_revolute_[k]);
      }
      return std::nullopt;
    }
    if (f == "support") {  // the exact limit surface's pressure distribution
      const std::string& g = p.size() >= 3 ? key(p, 2) : f;
      if ((g == "radius" && p.size() == 3) || (g == "center" && p.size() == 4)) return kLength;
      if (g == "points" && p.size() == 3) return kNumber;  // a ring's count
      if (g == "points" && p.size() == 5) return kLength;  // [x, y] of a support point
      if ((g == "weights" && p.size() == 4) || ((g == "subdivisions" || g == "max_programs") && p.size() == 3))
        return kNumber;  // relative weights, counts
      return std::nullopt;
    }
    if (f == "c" && p.size() == 2) return kNumber;  // Halm & Posa's feedback scale
    if ((f == "relinearize" || f == "round_width") && p.size() == 2) return kNumber;  // counts
    if (f == "stiffness") {
      if (formulation_ == "pang_tedrake_miqp" && p.size() == 2) return kLinearStiffness;  // K, N/m
      if (formulation_ == "anitescu_qp") {
        // K_a per velocity-controlled joint: N/m or N m/rad.
        // A number is one unit for every joint (expand_uniform_numbers wrote out a mixed one).
        if (p.size() == 2)
          return !velocity_revolute_.empty() && velocity_revolute_[0] ? kAngularStiffness : kLinearStiffness;
        const size_t i = static_cast<size_t>(index(p, 2));
        if (p.size() != 3 || index(p, 2) < 0 || i >= velocity_revolute_.size()) return std::nullopt;
        return velocity_revolute_[i] ? kAngularStiffness : kLinearStiffness;
      }
      return std::nullopt;
    }
    if (formulation_ == "ecp_ncp" && p.size() == 2) {
      if (f == "e_t" || f == "e_o") return kNumber;  // semi-axes of a dimensionless ellipsoid
      if (f == "e_r") return kLength;               // the friction moment is e_r mu p_n
    }
    return std::nullopt;
  }

  std::optional<Dim> body_dim(const Path& p) const {
    const std::string& f = key(p, 2);
    if (f == "pose") return pose_entry(p, 3);
    if (f == "mass" && p.size() == 3) return kMass;
    if (f == "inertia") return p.size() == 3 ? std::optional<Dim>(kInertia) : all_entries(p, 3, kInertia);
    if (f == "com") return all_entries(p, 3, kLength);
    if (f == "pose3") return pose_entry(p, 3, 3);
    if (f == "velocity") return all_entries(p, 3, kSpeed);
    if (f == "angular_velocity") return all_entries(p, 3, kRate);
    if (f == "hull") {
      if (key(p, 3) == "vertices") return all_entries(p, 4, kLength);
      if (key(p, 3) == "cylinder") {
        const std::string& c = key(p, 4);
        if ((c == "radius" || c == "length") && p.size() == 5) return kLength;
        if (c == "center") return all_entries(p, 5, kLength);
        if (c == "axis") return all_entries(p, 5, kNumber);
      }
      return std::nullopt;
    }
    if (f == "shapes" && index(p, 3) >= 0 && p.size() >= 5) {
      const std::string& s = key(p, 4);
      if (s == "pose") return pose_entry(p, 5);
      if (s == "radius" && p.size() == 5) return kLength;
      if (s == "a" || s == "b" || s == "size" || s == "vertices") return all_entries(p, 5, kLength);
      if (s == "normal") return all_entries(p, 5, kNumber);  // a direction
    }
    return std::nullopt;
  }

  std::optional<Dim> plan_dim(const Path& p) const {
    const std::string& f = key(p, 1);
    if (f == "bounds" && p.size() == 4 && index(p, 3) >= 0) return dof_dim(key(p, 2));
    if (f == "control_bounds" && p.size() == 4 && index(p, 3) >= 0) {
      const std::optional<bool> r = revolute(key(p, 2));
      if (!r) return std::nullopt;
      return *r ? kRate : kSpeed;
    }
    if (f == "control_steps") return all_entries(p, 2, kNumber);  // counts of steps
    // The planner's weight of the other DOFs in its distances (which add metres and
    // radians: the planner's search is not unit-free, only the steps it takes are).
    if (f == "other_weight" && p.size() == 2) return kNumber;
    if (f == "goal" && (key(p, 2) == "center" || key(p, 2) == "tolerance")) return pose_entry(p, 3);
    if (f == "keep_out" && index(p, 2) >= 0) {
      if (key(p, 3) == "box") return all_entries(p, 4, kLength);
      if (key(p, 3) == "margin" && p.size() == 4) return kLength;
    }
    return std::nullopt;
  }

  Units u_;
  nlohmann::json out_;
  std::string formulation_;
  bool computed_A_ = false;  // a tabletop scene without model.A: A is computed in 1/N^2
  std::map<std::string, bool> joint_revolute_;
  std::vector<bool> joint_revolute_by_index_;
  std::vector<bool> velocity_revolute_;  // the velocity-controlled joints, in joint order
  std::vector<std::string> unknown_;
};

/// The scene in units u; fails the test for a numeric leaf of unknown unit.
nlohmann::json in_units(const nlohmann::json& scene, Units u) {
  InUnits r(scene, u);
  EXPECT_TRUE(r.unknown().empty()) << "numeric fields of unknown unit: " << ::testing::PrintToString(r.unknown());
  return r.scene();
}

struct Comparison {
  double worst = 0;   // the largest difference of a configuration entry, in the original units
  int first = 0;      // the first step with a difference (0: none)
  int solved = 0;     // steps both took
  int differs_at = 0;  // the first step whose status differs (0: none)
  Status scaled_status = Status::solved;  // the scaled scene's status there
  std::string detail;                      // and its report
};

/// Steps `scene_json` and the same scene in units u with the scenes' own schedules for
/// `steps` steps or until either fails, and compares the configurations after every step:
/// lengths (free bodies' x and y, prismatic joints) scaled back by 2^-a, angles as they are.
Comparison compare_in_units(const nlohmann::json& scene_json, Units u, int steps) {
  Comparison out;
  const Scene scene = parse_scene(scene_json.dump());
  const Scene scaled = parse_scene(in_units(scene_json, u).dump());
  const Model& m = *scene.model;
  const Model& n = *scaled.model;
  auto x = make_stepper(m), y = make_stepper(n);
  EXPECT_TRUE(x && y);
  if (!x || !y) return out;
  State sx = initial_state(m), sy = initial_state(n);
  std::vector<int> length_exponent(static_cast<size_t>(m.n_q()), 0);
  for (int i = 0; i < m.n_q(); ++i) {
    const Dof& d = m.dofs[static_cast<size_t>(i)];
    const bool length = d.kind == DofKind::body_x || d.kind == DofKind::body_y ||
                        (d.kind == DofKind::joint && m.joints[static_cast<size_t>(d.index)].type == JointType::prismatic);
    length_exponent[static_cast<size_t>(i)] = length ? -u.a : 0;
  }
  for (int l = 1; l <= steps; ++l) {
    const Status a = x->step(m, sx), b = y->step(n, sy);
    if (a != b) {
      out.differs_at = l;
      out.scaled_status = b;
      out.detail = std::string(to_string(a)) + " (" + x->report().detail + "), in the new units " +
                   std::string(to_string(b)) + " (" + y->report().detail + ")";
      return out;
    }
    if (a != Status::solved) break;
    ++out.solved;
    for (int i = 0; i < m.n_q(); ++i) {
      const double d = std::abs(std::ldexp(sy.q[i], length_exponent[static_cast<size_t>(i)]) - sx.q[i]);
      if (d > 0 && out.first == 0) out.first = l;
      out.worst = std::max(out.worst, d);
    }
  }
  return out;
}

std::string units_text(Units u) {
  return "lengths 2^" + std::to_string(u.a) + ", masses 2^" + std::to_string(u.b) + ", times 2^" + std::to_string(u.c);
}

/// Every step of `scene_json` is taken in units u too, and the configurations agree to
/// `tolerance` (0: bit for bit).
void expect_same_steps(const std::string& name, const nlohmann::json& scene_json, int steps, Units u,
                       double tolerance) {
  const Comparison r = compare_in_units(scene_json, u, steps);
  EXPECT_EQ(r.differs_at, 0) << name << " in " << units_text(u) << ": step " << r.differs_at << ": " << r.detail;
  EXPECT_EQ(r.solved, steps) << name << " in " << units_text(u);
  EXPECT_LE(r.worst, tolerance) << name << " in " << units_text(u) << " (first difference at step " << r.first << ")";
}

// ---- the helper itself --------------------------------------------------------------------

TEST(SceneUnits, EveryNumberOfEveryExampleHasAKnownUnit) {
  // Every planar example (and the plan, overrides, uncertainty and success sections they
  // carry) converts with no field left unclassified, and still reads as a scene.
  int examples = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(QUASISTEP_SOURCE_DIR) + "/examples")) {
    if (entry.path().extension() != ".json") continue;
    const std::string file = entry.path().filename().string();
    const nlohmann::json j = test::example_json(file);
    ++examples;
    for (Units u : {Units{5, -3, 0}, Units{-20, 20, 3}}) {
      InUnits r(j, u);
      EXPECT_TRUE(r.unknown().empty()) << file << ": " << ::testing::PrintToString(r.unknown());
      EXPECT_NO_THROW(parse_scene(r.scene().dump())) << file;
    }
  }
  EXPECT_GE(examples, 20);
}

TEST(SceneUnits, AFieldOfUnknownUnitIsReported) {
  // A field the helper has no rule for must fail the tests, not pass through unscaled
  // (the reader would refuse these, but a new field added to the reader would not be).
  nlohmann::json j = test::example_json("anitescu_box_push.json");
  j["contacts"]["touch_distance"] = 1e-3;
  j["model"]["damping"] = {1.0, 2.0};
  j["bodies"][1]["shapes"][0]["skin"] = 0.001;
  InUnits r(j, {1, 1, 1});
  EXPECT_EQ(r.unknown(), (std::vector<std::string>{"bodies[1].shapes[0].skin", "contacts.touch_distance",
                                                   "model.damping[0]", "model.damping[1]"}));
}

TEST(SceneUnits, EachQuantityScalesByItsOwnDimension) {
  nlohmann::json j = test::example_json("halm_posa_peg.json");
  const nlohmann::json s = in_units(j, {3, 2, 1});  // lengths x 8, masses x 4, times x 2
  EXPECT_EQ(s["bodies"][2]["pose"], nlohmann::json({-40.0, 56.0, -0.3}));   // m, m, rad
  EXPECT_EQ(s["bodies"][2]["mass"], 4.0);                                     // kg
  EXPECT_EQ(s["step"]["h"], 0.1);                                             // s
  EXPECT_EQ(s["world"]["gravity"], 9.81 * 8 / 4);                             // m/s^2
  EXPECT_EQ(s["joints"][2]["position"], -0.3);                                // revolute: rad
  EXPECT_EQ(s["joints"][0]["position"], -6.329089 * 8);                       // prismatic: m
  EXPECT_EQ(s["contacts"]["margin"], 0.13 * 8);
  // A given: its unit is the scene's choice (with k); 1/m per rotational index. B = 1 over six
  // joints, x, y, theta per finger: written out, scaled like A.
  EXPECT_EQ(s["model"]["A"][0][0], 1.0);
  EXPECT_EQ(s["model"]["A"][2][2], 1.0 / 64);
  EXPECT_EQ(s["model"]["B"][0][0], 1.0);
  EXPECT_EQ(s["model"]["B"][2][2], 1.0 / 64);
  EXPECT_EQ(s["model"]["B"][0][2], 0.0);
  EXPECT_EQ(s["model"]["c"], 0.01);
  // A command schedule: breaks in s, values in m/s or rad/s.
  const nlohmann::json& cmd = j["commands"]["finger1_theta"]["velocity"];
  const nlohmann::json& scaled = s["commands"]["finger1_theta"]["velocity"];
  ASSERT_TRUE(cmd.is_object());
  EXPECT_EQ(scaled["breaks"][0], 2 * cmd["breaks"][0].get<double>());
  EXPECT_EQ(scaled["values"][5], cmd["values"][5].get<double>() / 2);
  // A computed from the support is in 1/N^2 (N = kg m/s^2: x 4 x 8 / 4 = 8), so B follows.
  nlohmann::json push = test::example_json("halm_posa_push.json");
  push["model"].erase("A");
  push["world"]["support_friction"] = 0.5;
  EXPECT_EQ(in_units(push, {3, 2, 1})["model"]["B"], 1.0 / 64);
  const nlohmann::json g = in_units(test::example_json("anitescu_grasp.json"), {3, 2, 1});
  EXPECT_EQ(g["model"]["stiffness"][0], 2000.0 * 4 / 4);  // N/m = kg/s^2
  EXPECT_EQ(g["bodies"][1]["inertia"], 0.00125 * 4 * 64);  // kg m^2
}


// ---- the steps in other units ---------------------------------------------------------------

/// Units in which every formulation below is checked: each unit alone at 2^-20, 2^-3, 2^5,
/// 2^20, and some together.
std::vector<Units> units_alone_and_together() {
  std::vector<Units> out;
  for (int e : {-20, -3, 5, 20}) {
    out.push_back({e, 0, 0});
    out.push_back({0, e, 0});
    out.push_back({0, 0, e});
  }
  for (Units u : {Units{5, -3, 0}, Units{-3, 5, 0}, Units{20, -20, 0}, Units{5, -3, 20}, Units{-20, 5, -3}})
    out.push_back(u);
  return out;
}

TEST(SceneUnits, HalmPosaTakesTheSameStepsBitForBitInAnyUnits) {
  // With A given, the step's LCP is the same matrix in any units (J_o A J_o' and J_m cB J_m'
  // keep their values: a torque's lever arm scales as A's and B's rotational entries fall),
  // and q holds displacements alone, times 2^a: Lemke's power-of-two scaling makes that the
  // same problem. Masses and times do not enter (A given, mass unused; h u is a length).
  std::vector<std::pair<std::string, nlohmann::json>> scenes;
  for (const char* f : {"halm_posa_push.json", "halm_posa_wall.json", "halm_posa_peg.json"})
    scenes.emplace_back(f, test::example_json(f));
  scenes.emplace_back("halm_posa_push.json (perfect velocity)",
                      test::perfect_velocity(test::example_json("halm_posa_push.json")));
  std::vector<Units> units = units_alone_and_together();
  for (Units u : {Units{-40, 0, 0}, Units{40, 0, 0}, Units{0, -40, 0}, Units{0, 40, 0}, Units{-40, 40, 40}})
    units.push_back(u);
  for (const auto& [name, j] : scenes)
    for (Units u : units) expect_same_steps(name, j, 20, u, 0.0);
}

/// Steps `scene_json` with A and B as given and again with both times 2^k, for 20 steps.
Comparison with_gains_scaled(const nlohmann::json& scene_json, int k) {
  nlohmann::json g = scene_json;
  for (nlohmann::json& row : g["model"]["A"])
    for (nlohmann::json& x : row) x = std::ldexp(x.get<double>(), k);
  if (g["model"].contains("B")) g["model"]["B"] = std::ldexp(g["model"]["B"].get<double>(), k);
  Comparison out;
  const Scene s0 = parse_scene(scene_json.dump()), s1 = parse_scene(g.dump());
  const Model &m0 = *s0.model, &m1 = *s1.model;
  auto x = make_stepper(m0), y = make_stepper(m1);
  State a = initial_state(m0), b = initial_state(m1);
  for (int l = 1; l <= 20; ++l) {
    const Status sa = x->step(m0, a), sb = y->step(m1, b);
    if (sa != sb) {
      out.differs_at = l;
      out.scaled_status = sb;
      out.detail = y->report().detail;
      return out;
    }
    if (sa != Status::solved) break;
    ++out.solved;
    const double d = (a.q - b.q).cwiseAbs().maxCoeff();
    if (d > 0 && out.first == 0) out.first = l;
    out.worst = std::max(out.worst, d);
  }
  return out;
}

TEST(SceneUnits, HalmPosaTakesTheSameStepsAtAnyCommonScaleOfAAndB) {
  // Only the ratio of A and cB is physical: a common factor goes into the unknown k of Halm &
  // Posa's eq. (10), the Lambda come out divided by it, and the motion is the same. The
  // stepper holds both in the LCP's own unit (halm_posa_lcp_unit), so its LCP is the same
  // matrix at any common scale: the same steps bit for bit. (Before, the friction rows
  // [mu, -E'] stayed of size 1 while J A J' scaled: at 2^20 and 2^40 a step was `solved`
  // with a tangential impulse and no normal one, the disk moving 2.45 mm with nothing
  // touching it; at 2^-40 the first contact step was refused, at 2^-80 called `infeasible`.)
  for (const char* f : {"halm_posa_push.json", "halm_posa_wall.json", "halm_posa_peg.json"})
    for (int k : {-80, -40, -20, -10, -5, 5, 10, 20, 40}) {
      const Comparison r = with_gains_scaled(test::example_json(f), k);
      EXPECT_EQ(r.differs_at, 0) << f << " 2^" << k << ": " << r.detail;
      EXPECT_EQ(r.solved, 20) << f << " 2^" << k;
      EXPECT_EQ(r.worst, 0.0) << f << " 2^" << k;
    }
}

TEST(SceneUnits, HalmPosaWithAComputedLimitSurfaceTakesTheSameStepsInAnyUnits) {
  // A computed from the support (mu_s m g, in 1/N^2) changes with the units by
  // 2^-2(a + b - 2c), and B with it (in A's units): the same ratio, so the same motion. The
  // LCP's own unit takes the common factor out (the test above), so the steps are the same
  // bit for bit. (Before: to 3.2e-9 m within A times 2^+-20, and with A times 2^40 the push
  // took a wrong step of 2.2 mm and the wall's step 3 was refused.)
  for (const char* f : {"halm_posa_push.json", "halm_posa_wall.json"}) {
    nlohmann::json j = test::example_json(f);
    j["model"].erase("A");
    j["world"]["support_friction"] = 0.5;
    std::vector<Units> units = units_alone_and_together();
    for (Units u : {Units{5, -5, 0}, Units{10, -10, 0}, Units{-20, 20, 0}, Units{2, 0, 1}, Units{-4, 2, -1},
                    Units{-20, -20, 0}, Units{20, 20, 0}, Units{-40, 0, 0}, Units{40, 0, 0}, Units{0, -40, 0},
                    Units{0, 40, 0}, Units{0, 0, 20}})
      units.push_back(u);
    for (Units u : units) expect_same_steps(f, j, 20, u, 0.0);
  }
}

TEST(SceneUnits, TrinkleTakesTheSameStepsBitForBitInAnyLengthUnit) {
  // Trinkle's mixed LCP holds impulses (M L T^-1) in its force-balance and friction rows and
  // displacements (L) in its gap and sliding rows: a length unit scales them all by 2^a
  // (the gripper's cylinder does not rotate, so no column holds a lever arm), and Lemke's
  // power-of-two scaling makes that the same problem. A mass or time unit scales the
  // impulse rows alone, Lemke's scaling is one factor for the whole problem, so its pivots
  // round differently, and the steps agree only to rounding: measured over 30 steps
  // (squeeze and lift) 1.0e-14 m at most (lengths 2^-20, masses 2^5, times 2^-3), where
  // the step's answers are solved again in the step's units (before that: 3.3e-11 m at
  // masses 2^20 or times 2^-20).
  const nlohmann::json j = test::example_json("pang_tedrake_gripper.json");
  for (int a : {-40, -20, -3, 5, 20, 40}) expect_same_steps("pang_tedrake_gripper.json", j, 30, {a, 0, 0}, 0.0);
  for (Units u : units_alone_and_together())
    if (u.b != 0 || u.c != 0) expect_same_steps("pang_tedrake_gripper.json", j, 30, u, 2e-14);
  // Masses far from the scene's: each class of the LCP's rows is judged at its own scale and
  // an answer not exact there solved again with the impulses in the step's units (before,
  // with masses 2^40, impulses of 1e11 beside gaps of 1e-2, a `solved` step slid the
  // cylinder 19 mm with nothing pushing it; at 2^34 it was lifted 1 mm).
  for (int b : {-40, 34, 40}) expect_same_steps("pang_tedrake_gripper.json", j, 30, {0, b, 0}, 1e-15);
}

TEST(SceneUnits, TheMiqpTakesTheSameStepsInOtherUnits) {
  // The MIQP's QPs hold lengths (the elastic penetration rows, divided by h K), impulses
  // (the force balance) and costs (m^2), scaled apart by the units. Measured over 30 steps
  // (squeeze, grip, lift): bit for bit at 2^-3 and 2^5 of each unit and together; at 2^+-20
  // (and lengths 2^20) the same steps up to the cylinder's x, which stays at rounding noise
  // around 0 (3.1e-33 m; 4.3e-19 m at times 2^-3).
  const nlohmann::json j = test::example_json("pang_tedrake_grasp.json");
  for (Units u : units_alone_and_together()) {
    if (u.a == -20) continue;  // below
    const bool extreme = std::abs(u.a) == 20 || std::abs(u.b) == 20 || std::abs(u.c) == 20;
    expect_same_steps("pang_tedrake_grasp.json", j, 30, u, extreme || u.c == -3 ? 1e-18 : 0.0);
  }
  // Lengths 2^-19 ... 2^-1: bit for bit.
  for (int a : {-19, -15, -11, -8, -6, -4, -2, -1}) expect_same_steps("pang_tedrake_grasp.json", j, 30, {a, 0, 0}, 0.0);
  // Lengths 2^-20: step 21 (the first grip) is refused. There the original's fingers stop
  // on the cylinder (x_l = -0.05, P_n = 0.1 N s each) and lift it 1 mm; in the new units the
  // search's QPs, whose tolerances have a floor of 1 length unit (kernels/dense_qp.cpp,
  // DenseQp::primal_scale_at), end at the fingers 1 mm inside it (x_l = -0.049) with no
  // impulse: the elastic bound broken by 9.5e-10 length units, which the absolute pair
  // check (Problem::pair_violation, to 1e-9) passed, so the step was `solved`. The pairs
  // judged in the step's own units (Problem::unit_complementarity: rows against their terms
  // plus the shape size, impulses against the weight's) refuse it.
  for (Units u : {Units{-20, 0, 0}, Units{-20, 5, -3}}) {
    const Comparison r = compare_in_units(j, u, 30);
    EXPECT_EQ(r.differs_at, 21) << units_text(u) << ": " << r.detail;
    EXPECT_EQ(r.scaled_status, Status::numerical_failure) << units_text(u) << ": " << r.detail;
    EXPECT_NE(r.detail.find("own units"), std::string::npos) << r.detail;
    EXPECT_LE(r.worst, 1e-18) << units_text(u) << ": steps 1-20 are the same";
  }
}

TEST(SceneUnits, TorquesAreJudgedAsImpulsesThroughTheLargestShape) {
  // The box push: a 0.1 m box (diagonal 0.1 sqrt 2), a finger of radius 0.01, the ground a
  // half-plane (no size). Its DOFs: box x, y (lengths), theta (an angle), two prismatic
  // joints (lengths). In lengths 2^-20 the size is 2^-20 times as large, exactly.
  const nlohmann::json box = test::example_json("anitescu_box_push.json");
  for (int a : {0, -20}) {
    const Scene scene = parse_scene(in_units(box, {a, 0, 0}).dump());
    const Model& m = *scene.model;
    const double size = std::ldexp(0.1 * std::sqrt(2.0), a);
    EXPECT_NEAR(largest_shape_size(m), size, 1e-15 * size);
    const std::vector<double> lengths = balance_row_lengths(m);
    ASSERT_EQ(static_cast<int>(lengths.size()), m.n_q());
    for (int e = 0; e < m.n_q(); ++e) {
      const bool angle = m.dofs[static_cast<size_t>(e)].kind == DofKind::body_theta;
      EXPECT_EQ(dof_is_length(m, e), !angle) << m.dofs[static_cast<size_t>(e)].name;
      EXPECT_EQ(lengths[static_cast<size_t>(e)], angle ? largest_shape_size(m) : 1.0) << m.dofs[static_cast<size_t>(e)].name;
    }
  }
}

TEST(SceneUnits, AnitescusQuasistaticStepTakesTheSameStepsToRounding) {
  // The quasistatic QP (Pang & Tedrake's Anitescu slides) holds the impedances (N/m) and
  // loads beside the contact rows (unitless Jacobians, lever arms in m): the units scale its
  // rows apart, and its active-set factorizations round differently. Its kernel's
  // tolerances are absolute (floors of 1, kernels/dense_qp.cpp): in far units they pass
  // answers that are wrong in the step's own units, which the step's checks refuse
  // (force balance with torques divided by the shape size, balance_row_lengths), and the
  // step then solves the QP again with velocities and impulses in units of their own
  // (AnitescuQp::solve_equilibrated). Before that, in lengths 2^-13 and below the pushed
  // pivot slid where it must tip (theta 0 against -0.0094 at step 9: its torque unbalanced
  // by 3.7e-11 with a KKT residual of 3.7e-11, both passed); in lengths 2^-20 the box push's
  // torque rows were unbalanced by 17% of their terms on every step in contact (the same
  // positions, other impulses) and step 14 failed; masses 2^-20 (pivot, step 19) and
  // lengths 2^5, masses 2^-3, times 2^20 (box push, step 15) were refused.
  // Measured over 20 steps (contact from step 5): every step solved in every unit below;
  // bit for bit in times 2^-20 ... 2^20 alone (and masses 2^20, 2^40); otherwise the box push
  // within 1.6e-15 m except 3.1e-10 m at lengths 2^-12 and 1.5e-9 m at lengths 2^5, masses
  // 2^-3, times 2^20; the pivot within 4.8e-17 m except 4.2e-9 m where the tipping step 12
  // amplifies the rounding (times 2^20, lengths 2^-12, lengths 2^-20 with masses 2^20).
  const nlohmann::json box = test::example_json("anitescu_box_push.json");
  nlohmann::json pivot = test::example_json("plan_pivot.json");
  // The planning example has no commands: here the finger pushes near the box's top (0.08 m,
  // above the 0.0625 m where pushing tips rather than slides it) and tips it.
  pivot["joints"][0]["position"] = 0.08;
  pivot["commands"] = {{"finger_x", {{"velocity", 0.1}}}};
  std::vector<Units> units = units_alone_and_together();
  for (Units u : {Units{-12, 0, 0}, Units{-13, 0, 0}, Units{-40, 0, 0}, Units{40, 0, 0}, Units{0, -40, 0},
                  Units{0, 40, 0}, Units{0, 0, -40}, Units{0, 0, 40}, Units{-20, 20, 0}, Units{40, -40, 0},
                  Units{-40, 40, 0}})
    units.push_back(u);
  const auto same = [](Units u, Units v) { return u.a == v.a && u.b == v.b && u.c == v.c; };
  for (Units u : units) {
    const bool times_alone = u.a == 0 && u.b == 0 && std::abs(u.c) <= 20;
    const bool box_amplified = same(u, {-12, 0, 0}) || same(u, {5, -3, 20});
    expect_same_steps("anitescu_box_push.json", box, 20, u, times_alone ? 0.0 : box_amplified ? 2e-9 : 2e-15);
    const bool tipping_amplified = u.c == 20 || same(u, {-12, 0, 0}) || same(u, {-20, 20, 0});
    expect_same_steps("plan_pivot.json (pushed)", pivot, 20, u,
                      times_alone && u.c < 20 ? 0.0 : tipping_amplified ? 1e-8 : 1e-16);
  }
  // The tipping itself, in lengths 2^-13 (where the box once slid): the same angle.
  const Comparison tip = compare_in_units(pivot, {-13, 0, 0}, 20);
  EXPECT_EQ(tip.solved, 20) << tip.detail;
  EXPECT_LE(tip.worst, 1e-16);
}

TEST(SceneUnits, TheEcpTakesEveryStepInOtherUnitsAndNeverAWrongOne) {
  // The ECP examples (Xie & Chakraborty 2021's model) in 24 other unit systems, 2^-40 to
  // 2^40, the first 40 steps of each: every step is solved, balances its impulses in its own units, and
  // puts no hull point below the plane beyond rounding. The ECP's semismooth Newton is not
  // unit-invariant (its merit mixes impulses, lengths and velocities), so a step that finds
  // no solution in the scene's units is solved again in the body's own units, which are
  // tried first where they are far from the scene's (EcpNcp::body_units_of); before, in
  // lengths 2^-20 and 2^20 every example's first step was refused (82 of these 120 runs
  // ended in a refusal). And every scene parses: the check that the body starts on or above
  // the plane is relative to its size; at 1e-9 m it refused the dumbbell in lengths 2^40,
  // whose rounding puts it 3.1e-5 units below.
  std::vector<Units> units = units_alone_and_together();
  for (Units u : {Units{-40, 0, 0}, Units{40, 0, 0}, Units{0, -40, 0}, Units{0, 40, 0}, Units{0, 0, -40},
                  Units{0, 0, 40}, Units{-40, 40, 40}})
    units.push_back(u);
  for (const char* f : {"ecp_box_tip.json", "ecp_desk.json", "ecp_dumbbell.json", "ecp_tbar.json", "ecp_tbar_rocking.json"})
    for (Units u : units) {
      // Units 2^20 and beyond are far from every example body's (EcpNcp::far_from_body_units).
      const bool far = std::abs(u.a) >= 20 || std::abs(u.b) >= 20 || std::abs(u.c) >= 20;
      const Scene scene = parse_scene(in_units(test::example_json(f), u).dump());
      const Model& m = *scene.model;
      EcpNcp ecp(m);
      State s = initial_state(m);
      const double size = hull_extent(*m.body3);
      for (int l = 1; l <= 40; ++l) {
        const Eigen::VectorXd q0 = s.q;
        const double t0 = s.t;
        ASSERT_EQ(ecp.step(m, s), Status::solved) << f << " in " << units_text(u) << " step " << l << ": "
                                                  << ecp.report().detail;
        EXPECT_TRUE(!far || ecp.body_units()) << f << " in " << units_text(u) << " step " << l;
        EXPECT_LE(test::ecp_balance_violation(m, ecp, q0, s.q, t0, m.step.h), kForceBalanceTolerance)
            << f << " in " << units_text(u) << " step " << l;
        EXPECT_GE(ecp.lowest_vertex(), -1e-9 * size) << f << " in " << units_text(u) << " step " << l;
      }
    }
}

/// The 13-vector of a body_on_plane State in units u scaled back to the scene's own units:
/// positions by 2^-a, the quaternion as it is, velocities by 2^(c - a), angular velocities
/// by 2^c (exact).
Eigen::VectorXd ecp_state_in_scene_units(const Eigen::VectorXd& q, Units u) {
  Eigen::VectorXd out = q;
  for (int i = 0; i < 13; ++i) out[i] = std::ldexp(q[i], i < 3 ? -u.a : i < 7 ? 0 : i < 10 ? u.c - u.a : u.c);
  return out;
}

TEST(SceneUnits, TheEcpInUnitsFarFromTheBodysTakesTheSameStepsBitForBit) {
  // Where the body's own units are far from the scene's (lengths, masses or the body's fall
  // time beyond a factor 2^4; EcpNcp::far_from_body_units), the ECP's Newton works in the
  // body's units from the start (EcpNcp::body_units_of): the same body in any such units
  // poses it the same numbers, so every example takes the same steps, bit for bit, over its
  // whole run in lengths 2^20, 2^-20 and 2^40, masses 2^20, times 2^20 and all of them at
  // 2^+-40. (Measured once against the scene in SI units, whose steps Newton solves in the
  // scene's units: the box 9.0e-13 m apart, the desk 1.5e-8 m, the dumbbell 6.7e-10 m, the
  // T-bar 7.0e-8 m, the rocking T-bar 9.4e-5 m, its landings amplifying it.)
  for (const char* f : {"ecp_box_tip.json", "ecp_desk.json", "ecp_dumbbell.json", "ecp_tbar.json", "ecp_tbar_rocking.json"}) {
    const nlohmann::json j = test::example_json(f);
    const Units first{20, 0, 0};
    const Scene a = parse_scene(in_units(j, first).dump());
    EcpNcp x(*a.model);
    std::vector<Eigen::VectorXd> reference;
    State sx = initial_state(*a.model);
    const int steps = a.model->step.steps;
    for (int l = 1; l <= steps; ++l) {
      ASSERT_EQ(x.step(*a.model, sx), Status::solved) << f << " step " << l;
      EXPECT_TRUE(x.body_units()) << f << " step " << l;
      reference.push_back(ecp_state_in_scene_units(sx.q, first));
    }
    for (Units u : {Units{-20, 0, 0}, Units{40, 0, 0}, Units{0, 20, 0}, Units{0, 0, 20}, Units{40, 40, 40},
                    Units{-40, -40, -40}}) {
      const Scene b = parse_scene(in_units(j, u).dump());
      EcpNcp y(*b.model);
      State sy = initial_state(*b.model);
      for (int l = 1; l <= steps; ++l) {
        ASSERT_EQ(y.step(*b.model, sy), Status::solved) << f << " in " << units_text(u) << " step " << l;
        ASSERT_TRUE((ecp_state_in_scene_units(sy.q, u).array() == reference[static_cast<size_t>(l - 1)].array()).all())
            << f << " in " << units_text(u) << " step " << l;
      }
    }
  }
}

TEST(SceneUnits, AnitescusQuasiDynamicStepTakesTheSameStepsInOtherUnits) {
  // A change of units is a change of all three at once, so the quasi-dynamic step (inertia,
  // gravity, h) is invariant too. Measured over 30 steps: the box drop bit for bit in every
  // unit here; the grasp bit for bit but masses 2^-3 and 2^5 (alone or with lengths,
  // 6.9e-18 m from step 20, where the fingers grip).
  const nlohmann::json drop = test::example_json("anitescu_drop.json");
  const nlohmann::json grasp = test::example_json("anitescu_grasp.json");
  for (Units u : units_alone_and_together()) {
    expect_same_steps("anitescu_drop.json", drop, 30, u, 0.0);
    expect_same_steps("anitescu_grasp.json", grasp, 30, u, u.b == -3 || u.b == 5 ? 1e-17 : 0.0);
  }
  // The mass matrix's Cholesky pivots are judged against their own diagonal entries (an
  // inertia against an inertia): a body whose radius of gyration is 2^-40 length units
  // still steps. (Against the largest entry, a mass, the drop in lengths 2^-20 was refused.)
  expect_same_steps("anitescu_drop.json", drop, 30, {-40, 0, 0}, 0.0);
}

}  // namespace
}  // namespace qs::scene_units_test

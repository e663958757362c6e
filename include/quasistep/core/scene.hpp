// Scene file format v1 (docs/scene-format.md): read, validate and compile into a Model.
//
// Every error names the JSON path of the offending field and the cause in one line, e.g.
// `bodies[2].shapes[0].radius: must be > 0`. Unknown fields are errors. Exceptions
// (SceneError) are used here only, where user input enters; kernels never throw.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quasistep/core/json_node.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/world_params.hpp"

namespace qs {

constexpr int kSceneFormatVersion = 1;

/// The most memory the dense buffers of one world of a scene may need (its contact
/// Jacobians, anitescu_qp's LCP matrix, ...; docs/scene-format.md, "Size limit"). The reader
/// counts slots before building them and refuses a larger scene, so that no step or command
/// later dies of std::bad_alloc.
inline constexpr std::int64_t kMaxWorldBytes = std::int64_t{4} << 30;

/// A scene input error: what() is "path: cause" (see quasistep/core/json_node.hpp).
using SceneError = JsonInputError;

/// Resolve a parameter path against a Model; throws SceneError (at `where`) when the path
/// names nothing, or something that cannot vary.
ParameterRef resolve_parameter(const Model& m, std::string_view path, const std::string& where);

struct Distribution {
  enum class Kind { uniform, normal, truncated_normal };
  Kind kind = Kind::uniform;
  double low = 0, high = 0;      // uniform and truncated_normal bounds
  double mean = 0, stddev = 0;   // normal and truncated_normal
};

struct UncertainParameter {
  ParameterRef parameter;
  Distribution distribution;
};

struct SuccessCriterion {
  enum class Kind { lifted, goal_region };
  Kind kind = Kind::lifted;
  int body = -1;
  double height = 0.0;       // lifted: rise of the body's y above its initial y (m)
  double hold_until = 0.0;   // lifted: ... held from when it is first reached until this time (s)
  std::array<double, 3> center{};     // goal_region: x, y, theta
  std::array<double, 3> tolerance{};  // goal_region: half-widths, > 0
};

/// The scene's `plan` section (docs/scene-format.md, "plan"): the problem `quasistep plan` and
/// the OMPL adapter (planning/, docs/planning.md) solve. Checked when the scene is read: the
/// initial state lies within the bounds and outside every keep-out box.
struct PlanSpec {
  /// Per DOF (n_q, DOF order): the lowest and highest value a planned state may take. A free
  /// body's theta without bounds in the file is unbounded (-inf, +inf): the planner treats it
  /// as an angle.
  std::vector<std::array<double, 2>> bounds;
  /// Per velocity-commanded joint (command_names order): the velocities a control may take.
  std::vector<std::array<double, 2>> control_bounds;
  int min_control_steps = 1;   // steps a sampled control is held, at least
  int max_control_steps = 10;  // ... and at most
  /// The weight, in the planner's distances, of every component but the goal body's pose
  /// (which weighs 1): low, so that a tree spreads over where the object goes.
  double other_weight = 0.3;
  /// The goal region: a free body's pose within `tolerance` of `center` (theta modulo 2 pi),
  /// the test of a goal_region success criterion (in_goal_region).
  int goal_body = -1;
  std::array<double, 3> goal_center{};     // x, y, theta
  std::array<double, 3> goal_tolerance{};  // half-widths, > 0
  /// A region a body's origin may not enter: the box [x_min, x_max] x [y_min, y_max] grown by
  /// `margin` on every side (a disk of radius r keeps its whole shape out with margin r).
  struct KeepOut {
    int body = -1;
    std::array<double, 4> box{};  // x_min, y_min, x_max, y_max (m)
    double margin = 0.0;          // m
  };
  std::vector<KeepOut> keep_out;
};

/// Whether a body origin at (x, y) lies in a keep-out region (its box grown by its margin).
inline bool plan_keep_out_hit(const PlanSpec::KeepOut& k, double x, double y) {
  return x >= k.box[0] - k.margin && x <= k.box[2] + k.margin && y >= k.box[1] - k.margin && y <= k.box[3] + k.margin;
}

/// A parsed scene: the Model and the study sections that later layers use.
struct Scene {
  std::shared_ptr<const Model> model;
  std::string source;  // file path, or the name given to parse_scene
  std::string hash;    // FNV-1a 64 of the file's bytes, 16 hex digits (output provenance)
  std::string description;  // the scene's "description" (what it shows, for people); may be empty
  /// overrides.worlds: one list of (parameter, value) per world.
  std::vector<std::vector<std::pair<ParameterRef, double>>> overrides;
  std::vector<UncertainParameter> uncertainty;
  std::optional<SuccessCriterion> success;
  std::optional<PlanSpec> plan;
};

/// Parse and compile a scene from text; `source` names it in messages.
Scene parse_scene(std::string_view text, const std::string& source = "<string>");
/// Read a file and parse it; a file that cannot be read is a SceneError naming it.
Scene load_scene_file(const std::string& path);

/// FNV-1a 64-bit hash as 16 lowercase hex digits.
std::string fnv1a_hex(std::string_view bytes);

}  // namespace qs

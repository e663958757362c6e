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

/// A scene input error: what() is "path: cause" (see core/json_node.hpp).
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
};

/// Parse and compile a scene from text; `source` names it in messages.
Scene parse_scene(std::string_view text, const std::string& source = "<string>");
/// Read a file and parse it; a file that cannot be read is a SceneError naming it.
Scene load_scene_file(const std::string& path);

/// FNV-1a 64-bit hash as 16 lowercase hex digits.
std::string fnv1a_hex(std::string_view bytes);

}  // namespace qs

// The scene reader behind parse_scene (quasistep/core/scene.hpp): one SceneCompiler reads one JSON
// document into a Scene, section by section, and fails at the first error with the path of
// the offending value. Internal to core. Its parts live in files named after what they read:
//   scene.cpp           the order of the sections, the format and the world
//   scene_bodies.cpp    bodies, shapes and joints, the DOFs and the order of bodies
//   scene_model.cpp     the formulation and its parameters, the step, loads and commands
//   scene_contacts.cpp  contact pairs, and the model's size checked before they are built
//   scene_study.cpp     overrides, uncertainty, success, and the parameter paths they name
//   scene_plan.cpp      the plan section
#pragma once

#include "quasistep/core/json_node.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/scene.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace qs {

class SceneCompiler {
 public:
  explicit SceneCompiler(const json_input::json& doc);
  Scene run();

  /// A value that may change over time: a number, or breaks, values and terms (scene_model.cpp).
  static Schedule read_schedule(const json_input::Node& n);

 private:
  using Node = json_input::Node;

  // scene.cpp
  void check_format();
  static World read_world(const Node& n);

  // scene_bodies.cpp
  int find_body(const std::string& name) const;
  int body_index(const Node& n, bool allow_world) const;
  void read_bodies(const Node& list);
  void read_joints(const Node& list);
  void check_linked_bodies();
  void number_dofs();
  void order_bodies();

  // scene_model.cpp
  void read_model(const Node& n);
  void read_step(const Node& n);
  void read_loads(const Node& list);
  void read_commands(const Node& n);

  // scene_contacts.cpp
  static int rank(BodyKind k);
  bool adjacent(int a, int b) const;
  void check_pair(int a, int b, const Node& where) const;
  void add_pair(int a, int b, double friction);
  /// A body's shapes by the slots they give in add_pair.
  struct ShapeCounts {
    std::int64_t point = 0, half_plane = 0, other = 0;  // other: segment and polygon cores
    std::int64_t features = 0;                          // feature points of the `other` shapes
  };
  ShapeCounts shape_counts(int b) const;
  void count_pair(int a, int b);
  struct Footprint {
    double total = 0;    // bytes
    double largest = 0;  // bytes of the largest buffer
    std::string what;    // that buffer
  };
  Footprint footprint(double pairs, double slots) const;
  void check_size(const Node& where, bool at_least) const;
  void read_contacts(const std::optional<Node>& n);
  void check_counted() const;

  // scene_study.cpp
  /// The range a parameter's values must lie in, as the scene reader checks it elsewhere:
  /// masses of free bodies and scales > 0, masses of linked bodies and friction >= 0.
  enum class Range { any, nonnegative, positive };
  static Range range_of(const Model& m, const ParameterRef& p);
  static double check_value(const Model& m, const ParameterRef& p, const Node& n);
  std::vector<std::vector<std::pair<ParameterRef, double>>> read_overrides(const Model& m, const Node& n);
  std::vector<UncertainParameter> read_uncertainty(const Model& m, const Node& n);
  SuccessCriterion read_success(const Model& m, const Node& n);

  // scene_plan.cpp
  PlanSpec read_plan(const Model& m, const Node& n);

  Node root_;
  Model m_;
  std::string description_;  // the scene's "description", for the Scene
  std::unordered_map<std::string, int> body_by_name_, joint_by_name_;
  // read_contacts: shapes per body, and the pairs and slots counted so far.
  std::vector<ShapeCounts> shape_counts_;
  std::int64_t count_pairs_ = 0, count_slots_ = 0;
};

}  // namespace qs

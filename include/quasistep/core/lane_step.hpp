// A formulation's step for a lane group of worlds: the batch engine's lane path
// (docs/batch.md). The batch gathers kLaneWidth worlds' rows into a LaneGroup, the
// formulation's LaneStep steps them at once (its step written on T = Lane, the same code
// as its stepper's first path at T = double, so a world's numbers are bitwise the same
// alone or in a lane), and the batch scatters the lanes the step accepted; it finishes the
// others one world at a time with the stepper's fallback. The batch names no formulation:
// a formulation's row (quasistep/core/formulation_table.hpp) carries its
// LaneEntry. Lane-typed, so as wide as the build's vectors: it lives behind the batch's
// pointers (docs/architecture.md, "Layouts that do not depend on the instruction set").
#pragma once

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "quasistep/core/model.hpp"
#include "quasistep/core/world_params.hpp"
#include "quasistep/kernels/lane.hpp"

namespace qs {

struct StepperOptions;

/// One lane group: what the batch gathers (each lane a world; a lane whose world is not
/// stepped holds a copy of a stepped one) and what the step hands back.
struct LaneGroup {
  explicit LaneGroup(const Model& m)
      : q(m.n_q()), memory(std::max(step_memory_size(m), 1)), mu(std::max<std::size_t>(m.pairs.size(), 1)),
        u(std::max(m.n_a, 1)),
        mass(std::max<std::size_t>(m.bodies.size(), 1)),
        scale(std::max<std::size_t>(m.bodies.size(), 1)),
        joint_gain(std::max(m.n_a, 1)) {}
  double t = 0;              // in: the group's time (the same in every lane)
  std::vector<Lane> q;       // (n_q) in: the start configuration; out: the end one where ok
  std::vector<Lane> memory;  // (State::memory rows) in: the start's; out: the end's where ok
  std::vector<Lane> mu;      // (pairs) in: each lane's friction of every pair
  std::vector<Lane> u;       // (n_a) in, when commanded: each lane's velocity commands
  bool commanded = false;    // false: the scene's schedules (WorldParams::velocity at t + h/2)
  Lane gain{};               // in, when gain_varies: each lane's model gain (WorldParams::model_gain)
  bool gain_varies = false;  // false: the shared WorldParams' value
  /// (bodies) in, when mass_varies: each lane's mass of every body (kg; the shared value
  /// where a body's mass is not varied). A lane group never mixes a zero and a nonzero mass
  /// of one body (the batch steps such a group one world at a time).
  std::vector<Lane> mass;
  bool mass_varies = false;  // false: the shared WorldParams' masses
  std::vector<Lane> scale;    // (bodies) in, when scale_varies: each lane's size factor of every body
  bool scale_varies = false;  // false: the shared WorldParams' sizes
  std::vector<Lane> joint_gain;    // (n_a) in, when joint_gain_varies: each lane's gain of every velocity-controlled joint
  bool joint_gain_varies = false;  // false: the shared WorldParams' joint gains
  // Out, per lane: the step accepted (q and memory are the step's), the solver's
  // iterations, and the residual of the accepted answer.
  std::array<bool, kLaneWidth> ok{};
  std::array<long, kLaneWidth> pivots{};
  Lane residual{};
};

/// A formulation's lane step: built once per batch thread for a Model, it steps the
/// LaneGroup it holds with the values every lane shares (`shared`: h, and the scene's
/// values where a lane carries none of its own).
class LaneStep {
 public:
  explicit LaneStep(const Model& m) : group(m) {}
  virtual ~LaneStep() = default;
  LaneStep(const LaneStep&) = delete;
  LaneStep& operator=(const LaneStep&) = delete;
  virtual void step(const Model& m, const WorldParams& shared) = 0;
  LaneGroup group;
};

/// A formulation row's lane entry (FormulationInfo::lanes): when its worlds can step in
/// lanes, and its LaneStep.
struct LaneEntry {
  /// Why this model's mode has no lane step (empty when it has one): asked before anything
  /// else, so that a batch says so whatever its options.
  std::string (*mode_refusal)(const Model& m) = nullptr;
  /// Why this model's worlds cannot step in lanes (capacity, input the stepper refuses and
  /// then reports world by world), or empty.
  std::string (*input_refusal)(const Model& m) = nullptr;
  /// The path of the model gain when it travels in the lanes (LaneGroup::gain), as in
  /// messages ("model.c"); empty: no gain does.
  std::string_view gain_path{};
  /// Its lane step reads LaneGroup::mass: a body's mass may vary per world in the lanes.
  bool carries_mass = false;
  /// Its lane step reads LaneGroup::scale: a body's size may vary per world in the lanes.
  bool carries_scale = false;
  /// Its lane step reads LaneGroup::joint_gain: the formulation's gain of a velocity-controlled
  /// joint (`joints.NAME.<FormulationInfo::joint_gain>`) may vary per world in the lanes.
  bool carries_joint_gains = false;
  /// The batch's description of its lanes (BatchStepper::path): what steps them and what
  /// travels in a lane, after "lanes of W worlds (".
  std::string (*describe)(const Model& m) = nullptr;
  std::unique_ptr<LaneStep> (*make)(const Model& m, const StepperOptions& options) = nullptr;
};

}  // namespace qs

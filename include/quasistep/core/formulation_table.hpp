// The formulation table: one descriptor per formulation, the one place that says what a
// formulation is to the rest of the library: its name in scene files, the world it applies
// in, the paper it implements, what its State carries from one step to the next, its step
// for a lane group of worlds (LaneEntry), which gains a batch may vary per world, how to
// build its stepper and read its parameters, and what the scene reader, the batch, Monte
// Carlo and `quasistep info` ask of it. The scene reader (name, parameters, parameter
// paths, size limit), initial_state, make_stepper, WorldParams (the gains), Monte Carlo,
// the batch engine and the CLI read this table, and name no formulation. The library's own
// formulations are its first rows, listed in core/formulations/formulation_table.cpp; a
// program adds its own formulation with register_formulation (docs/architecture.md,
// "Where to add things").
#pragma once

#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quasistep/core/model.hpp"
#include "quasistep/core/world_params.hpp"

namespace qs {

class Stepper;
struct StepperOptions;
struct LaneEntry;
namespace json_input {
class Node;
}

/// One dense buffer of a stepper: its bytes and what it holds.
struct StepperBuffer {
  double bytes = 0;
  std::string what;
};

struct FormulationInfo {
  /// Set by the table: the library's own rows have their Formulation value, a registered
  /// row the value register_formulation returns.
  Formulation id{};
  /// Its value of "model.formulation" in a scene file, and its name in every output.
  std::string_view name{};
  /// The world it applies in (docs/scene-format.md).
  WorldType world = WorldType::vertical;
  /// The model's source, authors and year (the references are in README.md).
  std::string_view reference{};
  /// false for an instantaneous problem (no time step): it has no stepper, and neither
  /// `quasistep run` nor the batch engine can step it.
  bool time_stepping = true;
  /// State::memory, what the stepper carries between steps: its size for a Model (0 when
  /// it carries nothing), and its start for a world starting at configuration q (writes
  /// memory_size(m) values). The layout is documented by the functions each formulation
  /// points to. (register_formulation: null for none.)
  int (*memory_size)(const Model& m) = nullptr;
  void (*start_memory)(const Model& m, const double* q, double* memory) = nullptr;
  /// The leading entries of State::memory that are state for the step's derivatives
  /// (quasistep/core/derivatives.hpp), by name (their count is the number): anitescu_qp's
  /// impedance reference, pang_tedrake_miqp's phi_bar under elastic_bound = previous. Null:
  /// none (the rest of the memory is a solver's warm start or cache, which does not change
  /// the step's answer).
  std::vector<std::string> (*derivative_memory)(const Model& m) = nullptr;
  /// Its stepper returns the step's derivatives (Stepper::step with a StepDerivatives;
  /// quasistep/core/derivatives.hpp); otherwise they are refused with a reason.
  bool has_derivatives = false;
  /// Its step for a lane group of worlds in the batch engine (quasistep/core/lane_step.hpp),
  /// or null: the batch steps its worlds one at a time.
  const LaneEntry* lanes = nullptr;
  /// The names of its gains that a batch may vary per world: `model.<model_gain>`
  /// (WorldParams::model_gain, ParameterRef::Kind::model_gain) and, per velocity-controlled
  /// joint, `joints.NAME.<joint_gain>` (WorldParams::joint_gain, Kind::joint_gain); empty
  /// when it has none.
  std::string_view model_gain{};
  std::string_view joint_gain{};
  /// The scene's values of its gains, written into a WorldParams: the model gain (also when
  /// it has no name, if its stepper reads one) and one joint gain per velocity-controlled
  /// joint (or none); allocation-free when joint_gain is already sized, and never throwing
  /// (WorldParams(m) runs it, inside steppers too: read formulation_params_or_default).
  /// Null: no gains. A gain's values are > 0 (the scene reader and the batch refuse others).
  void (*scene_gains)(const Model& m, double& model_gain, std::vector<double>& joint_gain) = nullptr;
  /// Builds its stepper for a Model (null when time_stepping is false).
  std::unique_ptr<Stepper> (*make_stepper)(const Model& m, const StepperOptions& options) = nullptr;
  /// Reads its parameters from the scene's "model" object into m.params, refusing keys it
  /// does not know (core/scene_model.cpp calls it once the world, the bodies and the joints are
  /// read); throws SceneError naming the field. (register_formulation: null for a
  /// formulation without parameters, whose "model" holds only "formulation".)
  void (*read_params)(const json_input::Node& model, Model& m) = nullptr;

  // What the rest of the library asks of a formulation beyond stepping (each optional:
  // null or the default says "nothing particular").

  /// Its stepper's dense buffers beyond every stepper's contact slots, for a model with
  /// `slots` contact slots: each buffer's bytes and a name for the scene reader's message
  /// when one world of the model would not fit in memory (core/scene_contacts.cpp).
  void (*stepper_buffers)(const Model& m, double slots, std::vector<StepperBuffer>& out) = nullptr;
  /// The contact Jacobians its stepper holds, in doubles per slot and DOF (J_n and J_t: 2).
  int jacobian_doubles = 2;
  /// Why a Monte Carlo parameter of this kind (ParameterRef) cannot change this
  /// formulation's motion, or empty (batch/monte_carlo.cpp warns about such a parameter).
  std::string (*inert_parameter)(const Model& m, const ParameterRef& r) = nullptr;
  /// Why the world parameter at `path` ("world.support_friction") cannot vary per world
  /// under this formulation, or empty (the scene reader refuses it with the reason).
  std::string (*fixed_world_parameter)(const Model& m, std::string_view path) = nullptr;
  /// Why a batch cannot vary parameter r per world under this formulation (a value it uses
  /// only when the model is built), or empty (the batch refuses it with the reason).
  std::string (*batch_fixed_parameter)(const Model& m, const ParameterRef& r) = nullptr;
  /// Lines of its own for `quasistep info` (what its parameters say about this model),
  /// each "  <label>  <text>\n" as the CLI's; null or nothing written: none.
  void (*describe)(const Model& m, std::ostream& out) = nullptr;
};

/// Every formulation: the library's own, in the order of the Formulation enumeration, then
/// the registered ones in the order they were registered.
std::span<const FormulationInfo> formulation_table();
/// The row of f.
const FormulationInfo& formulation_info(Formulation f);

/// How many rows the table holds at most (the library's own included).
inline constexpr int kMaxFormulations = 64;

/// Adds a formulation to the table, so that scenes name it in "model.formulation" and
/// make_stepper, initial_state, the batch engine (one world at a time) and the CLI step it
/// like the library's own: `row` needs a new name, its world, its reference and (when it is
/// time-stepping) make_stepper; null memory functions mean it carries nothing between
/// steps, a null read_params that "model" holds only "formulation"; a row naming a gain
/// needs scene_gains (and a joint gain may not be named "position"). Lane steps are the
/// library's own formulations' for now (a LaneGroup is as wide as the library's build,
/// which a program's own code need not be): a row with one is refused. Returns the id its
/// Models carry. Register before a scene names it (from main, or a static
/// FormulationRegistration in a file linked into the program); safe from several threads.
/// The row's name and reference must outlive the program (string literals do). Throws
/// std::invalid_argument naming what is wrong.
Formulation register_formulation(FormulationInfo row);

/// Registers `row` when the program starts: `static const qs::FormulationRegistration
/// kMine{{.name = "my_lcp", ...}};` in a file linked into the program (not in a static
/// library nothing else references: the linker would leave the file out).
struct FormulationRegistration {
  explicit FormulationRegistration(const FormulationInfo& row) : id(register_formulation(row)) {}
  Formulation id;
};

}  // namespace qs

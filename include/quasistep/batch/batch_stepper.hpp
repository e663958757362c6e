// Steps every world of a WorldBatch, in parallel over lane groups (tbb::parallel_for with a
// reused affinity partitioner and per-thread workspaces).
//
// The per-world path: each thread owns a stepper built on the shared, read-only Model
// (quasistep/core/stepper.hpp) and a WorldParams (quasistep/core/world_params.hpp); for each world of its lane
// groups it writes the world's varied parameters and command into the WorldParams, loads the
// world's State, takes the step and stores the result. A world's numbers therefore come from exactly the code `quasistep run` uses,
// whatever thread or group ran it: the trajectory is bitwise identical alone, in any batch
// split and at any thread count. A world whose step fails is marked (status, step, reason)
// and is never stepped again; the rest go on.
//
// The lane path: one lane group of kLaneWidth worlds steps at once through the
// formulation's lane step (the LaneEntry of its row, quasistep/core/lane_step.hpp: the batch
// gathers and scatters rows and names no formulation), a template step with T = Lane, the
// code the scalar stepper runs with T = double, so a world's numbers are again those of
// `quasistep run`:
// - anitescu_qp, quasi-dynamic mode: quasistep/core/formulations/anitescu_qp/anitescu_lanes.hpp (PGS); its fallback is
//   Stepper::step_fallback (AnitescuQp: Lemke, then the dense QP);
// - halm_posa_lcp and perfect_velocity_lcp with at most 16 contact slots:
//   quasistep/core/formulations/halm_posa_lcp/halm_posa_lanes.hpp (fixed slot layout, quasistep/kernels/lemke_lanes.hpp); its fallback is
//   Stepper::step_fallback (HalmPosaLcp: the compacted LCP, the certificate, the exact
//   enumeration).
// Only lanes that are real, not failed and accepted are stored; a lane whose template answer
// is not accepted is finished by the fallback for that world alone (the same fallback the
// scalar stepper takes). Per-world friction, commands, start poses (and Halm-Posa's c) run
// in lanes; a batch that varies another parameter (mass, scale, a fixed body's pose, a
// stiffness) uses the per-world path, as does BatchOptions::scalar. path() says which ran.
//
// What a stepper carries from one step to the next (the Anitescu PGS warm start, the MIQP's
// elastic bound, the ECP stepper's last solution) lives in State::memory, a row per value in
// the batch, so a world continues the same whichever thread's stepper takes its next step.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "quasistep/batch/world_batch.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/kernels/pgs.hpp"

namespace qs {

/// One command per world, for planners that give each world its own action: the velocity
/// of actuated joint a (in actuated-DOF order, q_a) of world w is velocity[a * stride + w]
/// (stride = the batch's padded_size()). Null: every world follows the scene's schedules.
struct BatchCommands {
  const double* velocity = nullptr;
  int stride = 0;
};

struct BatchOptions {
  int threads = 0;  // worker threads; 0 = all this process may use
  bool scalar = false;  // the per-world path even where a lane kernel exists (same numbers)
  /// The PGS settings of both paths of a formulation that solves by PGS (anitescu_qp's
  /// quasi-dynamic mode), or its own when null (StepperOptions::pgs; tests force fallbacks
  /// with a tiny max_iterations, and a single-world comparison sets the same on its stepper).
  std::optional<PgsSettings> pgs{};
};

/// Formulations the per-world path can step, or the reason it cannot (empty when it can).
std::string batch_unsupported_reason(const Model& m);

class BatchStepper {
 public:
  /// Throws BatchError when the batch cannot step this Model (see batch_unsupported_reason).
  explicit BatchStepper(const WorldBatch& batch, BatchOptions options = {});
  ~BatchStepper();
  BatchStepper(const BatchStepper&) = delete;
  BatchStepper& operator=(const BatchStepper&) = delete;

  /// One step of h = batch.step_size() (the scene's step.h unless set) for every world that
  /// has not failed.
  void step(WorldBatch& batch, const BatchCommands& commands = {});
  /// The same step; then `after(begin, end)` is called for each range of worlds [begin, end)
  /// (real worlds only, whole lane groups) by the thread that stepped it, right after, while
  /// the worlds are in its cache: concurrently for disjoint ranges, each world once. A Monte
  /// Carlo study judges its worlds this way, in parallel, with no shared state.
  using AfterStep = std::function<void(int begin, int end)>;
  void step(WorldBatch& batch, const BatchCommands& commands, const AfterStep& after);
  /// `steps` steps (the model's step count by default, when steps < 0).
  void run(WorldBatch& batch, int steps = -1, const BatchCommands& commands = {});
  /// Which path steps the worlds, and why, one line (the throughput report's "path").
  const std::string& path() const;
  bool lanes() const;
  /// Lane path: worlds' steps finished by the scalar fallback since construction.
  long fallback_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace qs

// Steps every world of a WorldBatch, in parallel over lane groups (tbb::parallel_for with a
// reused affinity partitioner and per-thread workspaces).
//
// The per-world path: each thread owns a private copy of the Model and a stepper built on
// it (core/stepper.hpp); for each world of its lane groups it writes the world's varied
// parameters and command into the copy, loads the world's State, takes the step and stores
// the result. A world's numbers therefore come from exactly the code `quasistep run` uses,
// whatever thread or group ran it: the trajectory is bitwise identical alone, in any batch
// split and at any thread count. A world whose step fails is marked (status, step, reason)
// and is never stepped again; the rest go on.
//
// Steppers that remember the previous step (the MIQP's elastic bound and warm start, the
// ECP's previous solution) would carry one world's memory into the next world stepped on
// the same thread, so their formulations are refused here until that memory lives in the
// batch.
#pragma once

#include <memory>
#include <string>

#include "batch/world_batch.hpp"
#include "core/model.hpp"

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

  /// One step of h = model.step.h for every world that has not failed.
  void step(WorldBatch& batch, const BatchCommands& commands = {});
  /// `steps` steps (the model's step count by default, when steps < 0).
  void run(WorldBatch& batch, int steps = -1, const BatchCommands& commands = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace qs

// The rollout API for planners (docs/batch.md, "Rollouts"): step a batch of (state, action
// sequence) pairs of one Model with the batch engine and hand back the next states, a
// contact summary and a status per pair. Sampling MPC, MPPI and kinodynamic RRT call it with
// hundreds or thousands of candidate action sequences from one or many states.
//
// An action is one velocity per actuated DOF (q_a order, as BatchCommands) per step: pair i's
// velocity of DOF a at step l is actions[(i * steps + l) * n_a + a], so one pair's sequence
// is contiguous. Each pair's trajectory is bitwise the one `quasistep run` would take from
// that State with those commands, whatever the batch size, thread count or the pair's place
// in the batch (it runs on the batch engine's paths).
//
// Memory: the batch, the command rows and the results are kept between calls and reused
// while the number of pairs stays the same (no allocation per call after the first; a test
// proves it); a call with a different number rebuilds them.
// Thread safety: calls on one Rollout from several threads are serialised by a mutex (each
// call already uses every worker thread); give each planner thread its own Rollout to run
// calls concurrently.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "quasistep/batch/batch_stepper.hpp"
#include "quasistep/batch/world_batch.hpp"
#include "quasistep/core/model.hpp"

namespace qs {

/// Contacts of one pair after its last step (or at its failure).
struct ContactSummary {
  int touching = 0;             // slots with signed distance <= kRolloutTouchDistance
  double min_distance = 0.0;    // smallest signed distance over all slots (m); +inf without slots
};

/// Signed distance (m) at or below which a slot counts as touching in a ContactSummary.
inline constexpr double kRolloutTouchDistance = 1e-6;

struct RolloutResult {
  std::vector<State> next;              // the state after `steps` steps (or before the failed step)
  std::vector<ContactSummary> contacts;
  std::vector<Status> status;           // solved, or the failure
  std::vector<int> failed_step;         // the step that failed, counted from 1 (-1 when none)
  int size() const { return static_cast<int>(status.size()); }
};

class Rollout {
 public:
  /// Throws BatchError when the batch engine cannot step this Model (as BatchStepper).
  explicit Rollout(std::shared_ptr<const Model> model, BatchOptions options = {});
  ~Rollout();
  Rollout(const Rollout&) = delete;
  Rollout& operator=(const Rollout&) = delete;

  /// Steps every pair `steps` times with time step h (> 0; used instead of the Model's step.h)
  /// from states[i] under its action sequence. actions has states.size() * steps * n_a
  /// entries. Throws BatchError (one line) for a size mismatch, h <= 0 or not finite, steps
  /// < 0, or a State of the wrong size; a pair whose step fails (including a non-finite
  /// action) is reported in its status, and the others go on.
  const RolloutResult& propagate(std::span<const State> states, std::span<const double> actions, double h,
                                 int steps);

  const Model& model() const { return *model_; }
  /// The batch engine's path of the last propagate (BatchStepper::path); empty before it.
  const std::string& path() const;

 private:
  std::shared_ptr<const Model> model_;
  BatchOptions options_;
  std::mutex mutex_;
  std::unique_ptr<WorldBatch> batch_;
  std::unique_ptr<BatchStepper> stepper_;
  std::vector<double> command_;  // (n_a x padded) one step's velocities
  RolloutResult result_;
  std::vector<Pose2<double>> pose_, frame_;
};

}  // namespace qs

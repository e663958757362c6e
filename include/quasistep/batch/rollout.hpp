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
// while the number of pairs stays the same: a call of the same pairs, steps and
// RolloutRecord as an earlier one allocates nothing (a test proves it); a call with a
// different number of pairs, or other parameter paths, rebuilds them.
// Thread safety: calls on one Rollout from several threads are serialised by a mutex (each
// call already uses every worker thread), but the result a call returns is the Rollout's own
// and the next call overwrites it: read it before calling again, or give each planner thread
// its own Rollout (which also runs the calls concurrently).
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

/// What a propagate call keeps besides each pair's last state.
enum class RolloutRecord {
  final_state,  // next, contacts, status, failed_step
  every_step,   // also every state and every step's status (RolloutResult::trajectory, step_status)
  /// every_step, and also every step's contact slots: gaps and impulses as `quasistep run
  /// --forces` writes them (RolloutResult::contact_phi, normal_impulse, tangent_impulse).
  /// The impulses live in the single-world stepper only, so each pair is stepped on its own
  /// (Stepper, the pairs spread over the threads): the same states, bitwise, at the speed
  /// of the per-world path.
  every_step_and_contacts,
};

/// Whether a propagate call also returns every step's derivatives (quasistep/core/derivatives.hpp):
/// A = dx+/dx and B = dx+/du of each pair's every step (RolloutResult::A, B). They come from
/// the single-world stepper, so each pair is then stepped on its own (as for the contacts
/// record): the same states, bitwise, at the speed of the per-world path.
enum class RolloutDerivatives { none, every_step };

/// Per-pair values of one scene parameter for a propagate call: `path` as in
/// docs/scene-format.md, "Parameter paths" (`pairs.finger/cylinder.friction`,
/// `bodies.cylinder.mass`, `model.c`, ...), values[i] pair i's value. Start parameters
/// (joint positions, a free body's pose) are refused: a rollout starts from its States.
struct RolloutParameter {
  std::string path;
  std::span<const double> values;
};

struct RolloutResult {
  std::vector<State> next;              // the state after `steps` steps (or before the failed step)
  std::vector<ContactSummary> contacts;
  std::vector<Status> status;           // solved, or the failure
  std::vector<int> failed_step;         // the step that failed, counted from 1 (-1 when none)
  /// With RolloutRecord::every_step (else empty): every state, pairs x (steps + 1) x n_q,
  /// row-major: pair i's state after l steps (l = 0 the start) at (i * (steps + 1) + l) * n_q.
  /// A pair's rows after its failed step are NaN.
  std::vector<double> trajectory;
  /// With RolloutRecord::every_step (else empty): pairs x steps, pair i's step l (from 1) at
  /// i * steps + l - 1: solved, the failure at the failed step, not_run after it.
  std::vector<Status> step_status;
  /// With RolloutRecord::every_step_and_contacts (else empty): pairs x steps x n_slots, pair
  /// i's step l (from 1), slot k at (i * steps + l - 1) * n_slots + k. contact_phi: the
  /// slot's gap (m) at the configuration its step was linearised about, for each slot active
  /// in that step's problem (solved or failed); normal_impulse, tangent_impulse: its
  /// impulses (N s; times Halm & Posa's unknown k when impulses_scaled_by_k) when the step
  /// was solved. NaN elsewhere: a slot not active, a step not solved or not run.
  std::vector<double> contact_phi, normal_impulse, tangent_impulse;
  bool impulses_scaled_by_k = false;
  /// With RolloutDerivatives::every_step (else empty): pairs x steps matrices, pair i's step
  /// l (from 1) at (i * steps + l - 1) * n_x * n_x (A, n_x x n_x row-major) and
  /// (i * steps + l - 1) * n_x * n_a (B, n_x x n_a row-major); x = [q; the memory that is
  /// state] (derivative_state_names). NaN where the step was not solved or has no derivative.
  /// one_sided (pairs x steps): 1 where the step sat at a contact switch and the derivative
  /// is one-sided (StepDerivatives::degenerate), else 0.
  std::vector<double> A, B;
  std::vector<char> one_sided;
  int n_x = 0;
  int steps = 0;  // of the last call
  int n_q = 0;
  int n_slots = 0;
  int size() const { return static_cast<int>(status.size()); }
  /// Pair i's state after l steps (every_step only; empty after a final_state call).
  std::span<const double> state(int i, int l) const {
    if (trajectory.empty()) return {};
    return std::span<const double>(trajectory).subspan(
        (static_cast<std::size_t>(i) * static_cast<std::size_t>(steps + 1) + static_cast<std::size_t>(l)) *
            static_cast<std::size_t>(n_q),
        static_cast<std::size_t>(n_q));
  }
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
  /// action) is reported in its status, and the others go on. RolloutRecord::every_step also
  /// keeps every state and every step's status (RolloutResult::trajectory, step_status).
  /// `trajectory_out` (every_step only; states.size() x (steps + 1) x n_q doubles, laid out as
  /// RolloutResult::trajectory) receives every state instead of RolloutResult::trajectory,
  /// which then stays empty: a caller that keeps the states in its own buffer (a numpy
  /// array) needs no copy, and the Rollout holds no buffer of that size between calls.
  /// `parameters` vary scene parameters per pair (RolloutParameter; BatchError for an
  /// unknown path, a start parameter, a path given twice, a value count other than the
  /// pairs' or a value out of range, naming the path and the pair); the others keep the
  /// scene's values. Which of them the lanes carry: docs/performance.md.
  /// `derivatives` (with RolloutRecord::every_step or every_step_and_contacts; BatchError
  /// otherwise, or for a formulation without derivatives): also every step's A and B
  /// (RolloutResult::A, B, one_sided).
  const RolloutResult& propagate(std::span<const State> states, std::span<const double> actions, double h,
                                 int steps, RolloutRecord record = RolloutRecord::final_state,
                                 std::span<double> trajectory_out = {},
                                 std::span<const RolloutParameter> parameters = {},
                                 RolloutDerivatives derivatives = RolloutDerivatives::none);

  const Model& model() const { return *model_; }
  /// The batch engine's path of the last propagate (BatchStepper::path); empty before it.
  const std::string& path() const;

 private:
  struct OneByOne;  // the contacts record and the derivatives: a Stepper per thread
  void set_parameters(int n, double h, std::span<const RolloutParameter> parameters);
  void step_one_by_one(std::span<const double> actions, int steps, double* trajectory, bool contacts,
                       bool derivatives);

  std::shared_ptr<const Model> model_;
  BatchOptions options_;
  std::vector<std::string> parameter_paths_;  // the batch's varied parameters, as given
  std::unique_ptr<OneByOne> one_by_one_;
  std::mutex mutex_;
  std::unique_ptr<WorldBatch> batch_;
  std::unique_ptr<BatchStepper> stepper_;
  std::vector<double> command_;  // (n_a x padded) one step's velocities
  RolloutResult result_;
  std::vector<Pose2<double>> pose_, frame_;
  WorldParams summary_params_;  // a pair's values, for its ContactSummary
};

}  // namespace qs

// quasistep inside OMPL's kinodynamic planners (docs/planning.md): the pieces an OMPL program
// needs to plan through a scene's quasistatic contact model, built from the scene's `plan`
// section (docs/scene-format.md, "plan").
//
// - PlanningSpace: the OMPL state space of a scene. The planner sees an SE2 component per free
//   planar body (x, y, theta), an SO2 per free rotation of a body that is not fully free, and
//   one real vector of every other DOF, bounded by plan.bounds; distances and sampling use
//   those. A last component, weighted 0 and never sampled, holds the exact quasistep State
//   (q with unwrapped angles, the stepper's memory, t, step, the last step's status), so that
//   every propagation continues exactly where the previous one stopped and a replay with
//   `quasistep run --commands` is bitwise the planner's.
// - StepPropagator: an ompl::control::StatePropagator that takes one quasistep step per OMPL
//   propagation step (the scene's h): the control is the velocity of every velocity-controlled
//   joint. A step the solver cannot solve leaves a state the validity checker rejects, so
//   OMPL's propagateWhileValid ends the motion before it; it never passes silently.
// - PlanValidityChecker: the last step solved, q finite and within plan.bounds, and no body
//   origin inside a plan.keep_out box. OMPL checks it after every step of a motion.
// - PlanGoal: the plan.goal region (the test of a goal_region success criterion), sampleable
//   for goal bias.
// - BatchedDirectedControlSampler: proposes K controls, propagates them together in the batch
//   engine's lanes (quasistep/batch/rollout.hpp) and keeps the one that ends closest to the target.
//
// Determinism: the samplers (state, control, goal) and the planner draw from RNGs this file
// seeds from PlanningSpace's seed, so a plan with a propagation limit is the same for the same
// seed. OMPL's nearest-neighbour structures (GNAT) pick pivots from OMPL's process-wide seed
// (ompl::RNG::setSeed, which `quasistep plan` sets); their searches are exact, so that matters
// only where two distances tie exactly.
// Lifetime: the PlanningSpace owns its SpaceInformation, whose propagator, validity checker,
// projection and sampler allocators point back to it: keep the PlanningSpace (its shared_ptr)
// alive while they are in use.
// Threads: a PlanningSpace and what it allocates serve one planner thread (the propagator owns
// a stepper); the batched sampler's batch engine uses `threads` worker threads itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ompl/base/Planner.h>
#include <ompl/base/StateSpace.h>
#include <ompl/base/StateValidityChecker.h>
#include <ompl/base/goals/GoalSampleableRegion.h>
#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/control/DirectedControlSampler.h>
#include <ompl/control/SpaceInformation.h>
#include <ompl/control/StatePropagator.h>

#include "quasistep/batch/rollout.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "quasistep/core/world_params.hpp"

namespace qs::planning {

/// A scene the adapter cannot plan in (no `plan` section, no stepper, an unsupported world):
/// what() is one line.
class PlanningError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The hidden component: the exact quasistep State, weight 0 in distances, never sampled.
class ExactStateSpace : public ompl::base::RealVectorStateSpace {
 public:
  explicit ExactStateSpace(unsigned int dimension);
  double distance(const ompl::base::State*, const ompl::base::State*) const override { return 0.0; }
  // Positive for OMPL's set-up (a segment length); the component weighs 0 in the compound.
  double getMaximumExtent() const override { return 1.0; }
  bool satisfiesBounds(const ompl::base::State*) const override { return true; }
  void enforceBounds(ompl::base::State*) const override {}
  void interpolate(const ompl::base::State* from, const ompl::base::State* to, double t,
                   ompl::base::State* state) const override;
};

/// The OMPL view of a scene (see the file comment) and conversions between quasistep States
/// and OMPL states. Build it, then space_information() for a ready control::SpaceInformation.
class PlanningSpace : public std::enable_shared_from_this<PlanningSpace> {
 public:
  /// Throws PlanningError when the scene has no plan section or cannot be stepped.
  static std::shared_ptr<PlanningSpace> create(const Scene& scene, std::uint64_t seed);

  const Scene& scene() const { return scene_; }
  const Model& model() const { return *scene_.model; }
  const PlanSpec& spec() const { return *scene_.plan; }
  const ompl::base::StateSpacePtr& state_space() const { return space_; }
  /// The control::SpaceInformation with this space, the scene's commanded joints as a bounded
  /// real-vector control space, StepPropagator, PlanValidityChecker, h as the propagation step
  /// and plan.control_steps as the control durations; set up.
  const ompl::control::SpaceInformationPtr& space_information() const { return si_; }

  /// Writes a quasistep State (and the status of the step that produced it) into an OMPL state.
  /// Throws PlanningError when the State's q or memory does not have this scene's size.
  void to_ompl(const State& s, Status status, ompl::base::State* out) const;
  /// Writes one DOF's value into the planner's view of an OMPL state (angles wrapped to
  /// [-pi, pi]); the exact component is left alone.
  void set_view(ompl::base::State* out, int dof, double q) const;
  /// Reads the exact State back (q, memory, t, step).
  void from_ompl(const ompl::base::State* in, State& s) const;
  Status status_of(const ompl::base::State* in) const;
  /// The exact q of an OMPL state (n_q values).
  const double* q_of(const ompl::base::State* in) const;
  /// Whether a q (exact, n_q) lies within plan.bounds and outside every keep-out box.
  bool admissible(const double* q) const;
  /// The goal body's pose (x, y, theta unwrapped) at q.
  std::array<double, 3> goal_pose(const double* q) const;

  /// A new seed for the next RNG this planning problem creates: the same sequence for the
  /// same construction seed.
  std::uint32_t next_seed();
  /// Steps counted by the propagator and the batched sampler (each world's step once).
  std::atomic<long>& propagations() { return propagations_; }

 private:
  PlanningSpace(const Scene& scene, std::uint64_t seed);
  void build();

  Scene scene_;
  std::uint64_t seed_;
  std::uint64_t seeds_drawn_ = 0;
  std::atomic<long> propagations_{0};
  ompl::base::StateSpacePtr space_;
  ompl::control::SpaceInformationPtr si_;
  // Where each DOF appears in the planner's view: component, and index within it (SE2: 0 x,
  // 1 y, 2 yaw; SO2: 0; real vector: its index). The exact component is the last.
  struct ViewSlot {
    enum class Kind { se2, so2, real };  // SE2 and SO2 angles are written wrapped to [-pi, pi]
    int component = -1;
    int index = 0;
    Kind kind = Kind::real;
  };
  std::vector<ViewSlot> view_;
  int exact_component_ = -1;
  int memory_size_ = 0;
  // forward kinematics buffers (admissible is called from one planner thread).
  mutable std::vector<Pose2<double>> pose_, frame_;
};

/// One quasistep step per call, of duration h (a multiple of h takes that many steps).
class StepPropagator : public ompl::control::StatePropagator {
 public:
  /// `space` owns the SpaceInformation that owns this propagator: a plain pointer, no cycle.
  StepPropagator(ompl::control::SpaceInformation* si, PlanningSpace* space);
  void propagate(const ompl::base::State* state, const ompl::control::Control* control, double duration,
                 ompl::base::State* result) const override;
  bool canPropagateBackward() const override { return false; }

 private:
  PlanningSpace* space_;
  std::unique_ptr<Stepper> stepper_;
  mutable WorldParams params_;
  mutable State state_;
};

class PlanValidityChecker : public ompl::base::StateValidityChecker {
 public:
  PlanValidityChecker(ompl::base::SpaceInformation* si, const PlanningSpace* space);
  bool isValid(const ompl::base::State* state) const override;

 private:
  const PlanningSpace* space_;
};

class PlanGoal : public ompl::base::GoalSampleableRegion {
 public:
  explicit PlanGoal(const std::shared_ptr<PlanningSpace>& space);
  /// Exactly in_goal_region of the goal body's pose.
  bool isSatisfied(const ompl::base::State* st) const override;
  bool isSatisfied(const ompl::base::State* st, double* distance) const override;
  /// How far outside the region: max over x, y, theta of |error| / tolerance - 1, at least 0.
  double distanceGoal(const ompl::base::State* st) const override;
  /// A state with the goal body's pose uniform in the region (within the bounds) and every
  /// other DOF uniform within its bounds: a target for goal bias, never stepped from.
  void sampleGoal(ompl::base::State* st) const override;
  unsigned int maxSampleCount() const override { return std::numeric_limits<unsigned int>::max(); }

 private:
  std::shared_ptr<PlanningSpace> space_;
  ompl::base::StateSamplerPtr sampler_;
  mutable ompl::RNG rng_;
};

/// Proposes `controls` controls (from the control space's sampler), holds them for one duration
/// drawn as OMPL's sampler draws it (uniform in the control durations), propagates them
/// together with a Rollout and keeps the one whose last valid state is closest to the target.
/// Each candidate's motion is checked step by step as propagateWhileValid checks it, and ends
/// at its last valid state.
class BatchedDirectedControlSampler : public ompl::control::DirectedControlSampler {
 public:
  BatchedDirectedControlSampler(const ompl::control::SpaceInformation* si, std::shared_ptr<PlanningSpace> space,
                                int controls, int threads);
  ~BatchedDirectedControlSampler() override;
  unsigned int sampleTo(ompl::control::Control* control, const ompl::base::State* source,
                        ompl::base::State* dest) override;
  unsigned int sampleTo(ompl::control::Control* control, const ompl::control::Control* previous,
                        const ompl::base::State* source, ompl::base::State* dest) override;

 private:
  unsigned int best(ompl::control::Control* control, const ompl::control::Control* previous,
                    const ompl::base::State* source, ompl::base::State* dest);

  std::shared_ptr<PlanningSpace> space_;
  int controls_;
  ompl::control::ControlSamplerPtr sampler_;
  Rollout rollout_;
  std::unique_ptr<Stepper> stepper_;  // re-steps a candidate that ended early (its memory)
  std::vector<ompl::control::Control*> candidates_;
  ompl::base::State* scratch_ = nullptr;
  std::vector<State> starts_;
  std::vector<double> actions_;
  State state_;
  WorldParams params_;
};

enum class PlannerKind { rrt, sst, kpiece };
enum class ControlSampling { single, batched };

struct PlanOptions {
  PlannerKind planner = PlannerKind::rrt;
  double time_limit = 10.0;          // s of wall time
  long max_propagations = 0;         // > 0: stop after this many steps (deterministic)
  std::uint64_t seed = 1;
  ControlSampling sampling = ControlSampling::batched;  // RRT's directed control sampler
  int batch_controls = 32;           // K of the batched sampler
  int threads = 0;                   // of the batched sampler's batch engine (0: all cores)
  double goal_bias = 0.05;
};

struct PlanResult {
  bool solved = false;               // an exact solution: the last state is in the goal region
  double goal_distance = 0.0;        // PlanGoal::distanceGoal of the best state found
  int controls = 0;                  // piecewise-constant controls of the solution
  int steps = 0;                     // steps of the solution
  std::vector<double> commands;      // steps x n_a velocities (command_names order)
  State final_state;                 // the planner's last state of the solution
  long propagations = 0;             // steps taken while planning
  double seconds = 0.0;              // wall time of the search
  std::string planner;               // OMPL's planner name
};

/// The planner of that kind on si, with its own RNG seeded from `space`.
ompl::base::PlannerPtr make_planner(PlannerKind kind, const ompl::control::SpaceInformationPtr& si,
                                    PlanningSpace& space, double goal_bias);

/// Plans from the scene's initial state to plan.goal. Throws PlanningError for a scene it
/// cannot plan in; a search that finds nothing returns solved = false.
PlanResult plan(const Scene& scene, const PlanOptions& options);

}  // namespace qs::planning

#include "batch/batch_stepper.hpp"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>

#include "core/stepper.hpp"

namespace qs {

std::string batch_unsupported_reason(const Model& m) {
  switch (m.formulation) {
    case Formulation::trinkle_lcp:
    case Formulation::perfect_velocity_lcp:
    case Formulation::halm_posa_lcp:
    case Formulation::anitescu_qp: return {};
    case Formulation::pang_tedrake_miqp:
      return "the pang_tedrake_miqp stepper keeps the previous step's bound and warm start, which the batch "
             "does not store per world yet";
    case Formulation::ecp_ncp:
      return "the ecp_ncp stepper warm-starts from the previous step's solution, which the batch does not store "
             "per world yet";
    case Formulation::ucp: return "ucp is an instantaneous problem, not a time-stepping model";
  }
  return "unknown formulation";
}

namespace {

/// What one thread needs to step any world of the batch: nothing in it survives from one
/// world to the next but buffers (the stepper's per-step results are overwritten).
struct Workspace {
  Model model;  // the thread's private copy; varied parameters and commands written per world
  std::unique_ptr<Stepper> stepper;
  State state;
  bool commands_overwritten = false;  // the joints' schedules hold a BatchCommands value
  explicit Workspace(const Model& base) : model(base), stepper(make_stepper(model)) {
    state = initial_state(model);
  }
};

}  // namespace

struct BatchStepper::Impl {
  std::shared_ptr<const Model> base;
  BatchOptions options;
  tbb::task_arena arena;
  tbb::affinity_partitioner partitioner;  // reused: a group tends to stay on the thread whose cache holds it
  // Held by pointer: a stepper may keep references into the Model copy it was built on.
  tbb::enumerable_thread_specific<std::unique_ptr<Workspace>> workspaces;
  std::vector<int> commanded_joint;  // (n_a) the joint of each actuated DOF
  std::vector<int> model_parameters; // varied parameters that change the Model (not only the start)

  Impl(const WorldBatch& b, BatchOptions o)
      : base(b.model_ptr()),
        options(o),
        arena(o.threads > 0 ? o.threads : tbb::task_arena::automatic),
        workspaces([m = b.model_ptr()] { return std::make_unique<Workspace>(*m); }) {
    const Model& m = *base;
    for (int a = 0; a < m.n_a; ++a) commanded_joint.push_back(m.dofs[m.n_u + a].index);
    for (int k = 0; k < b.varied_count(); ++k) {
      const ParameterRef& r = b.varied(k);
      const bool start_only = r.kind == ParameterRef::Kind::joint_position ||
                              (r.kind != ParameterRef::Kind::body_mass && r.kind != ParameterRef::Kind::body_scale &&
                               r.kind != ParameterRef::Kind::pair_friction && m.bodies[r.index].kind == BodyKind::free);
      if (!start_only) model_parameters.push_back(k);
    }
  }

  void step_world(WorldBatch& b, Workspace& ws, int w, const BatchCommands& c) {
    if (b.failed(w)) return;
    for (int k : model_parameters) apply_parameter(ws.model, *base, b.varied(k), b.param_value(k)[w]);
    if (c.velocity) {
      for (size_t a = 0; a < commanded_joint.size(); ++a) {
        const double u = c.velocity[a * static_cast<size_t>(c.stride) + w];
        if (!std::isfinite(u)) {
          b.set_failure(w, Status::bad_input, b.world_step()[w],
                        "the command for joint \"" + base->joints[commanded_joint[a]].name + "\" is not finite");
          return;
        }
        ws.model.joints[commanded_joint[a]].command.set_constant(u);
      }
      ws.commands_overwritten = true;
    } else if (ws.commands_overwritten) {  // back to the scene's schedules (allocates, once)
      for (int j : commanded_joint) ws.model.joints[j].command = base->joints[j].command;
      ws.commands_overwritten = false;
    }
    b.load_state(w, ws.state);
    const int step = ws.state.step;
    const Status st = ws.stepper->step(ws.model, ws.state);
    const StepReport& r = ws.stepper->report();
    if (st != Status::solved) {
      b.set_failure(w, st, step, r.detail);
      return;
    }
    b.store_state(w, ws.state);
    b.world_status()[w] = Status::solved;
    b.world_pivots()[w] += r.pivots;
    b.world_max_residual()[w] = std::max(b.world_max_residual()[w], r.complementarity_residual);
  }
};

BatchStepper::BatchStepper(const WorldBatch& batch, BatchOptions options) {
  if (const std::string why = batch_unsupported_reason(batch.model()); !why.empty())
    throw BatchError("batch: cannot step formulation " + std::string(to_string(batch.model().formulation)) + ": " + why);
  if (options.threads < 0) throw BatchError("batch: threads must be >= 0 (0 = all)");
  {
    // make_stepper returns null for a formulation this build has no stepper for.
    Workspace probe(batch.model());
    if (!probe.stepper)
      throw BatchError("batch: this build has no stepper for " + std::string(to_string(batch.model().formulation)));
  }
  impl_ = std::make_unique<Impl>(batch, options);
}

BatchStepper::~BatchStepper() = default;

void BatchStepper::step(WorldBatch& b, const BatchCommands& commands) {
  if (b.model_ptr() != impl_->base) throw BatchError("batch: the stepper was built for another model");
  if (commands.velocity && commands.stride < b.size())
    throw BatchError("batch: commands stride " + std::to_string(commands.stride) + " is less than the " +
                     std::to_string(b.size()) + " worlds");
  const int width = b.lane_width();
  const int real = b.size();
  Impl& im = *impl_;
  im.arena.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<int>(0, b.group_count()),
        [&](const tbb::blocked_range<int>& groups) {
          Workspace& ws = *im.workspaces.local();
          for (int g = groups.begin(); g != groups.end(); ++g) {
            // Padding worlds exist for the lane kernels; the per-world path skips them.
            const int end = std::min((g + 1) * width, real);
            for (int w = g * width; w < end; ++w) im.step_world(b, ws, w, commands);
          }
        },
        im.partitioner);
  });
}

void BatchStepper::run(WorldBatch& b, int steps, const BatchCommands& commands) {
  if (steps < 0) steps = b.model().step.steps;
  for (int k = 0; k < steps; ++k) step(b, commands);
}

}  // namespace qs

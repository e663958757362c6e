#include "quasistep/batch/batch_stepper.hpp"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/lane_step.hpp"
#include "quasistep/core/stepper.hpp"
#include "quasistep/kernels/lane.hpp"

namespace qs {

// Every time-stepping formulation runs in a batch: the MIQP's branch-and-bound runs its
// parallel rounds inside this_task_arena::isolate (quasistep/kernels/branch_and_bound.hpp), so a thread
// waiting there never starts another world on the same stepper, and what a stepper carries
// between steps (the MIQP's and the ECP stepper's warm starts) is in State::memory.
std::string batch_unsupported_reason(const Model& m) {
  const FormulationInfo& f = formulation_info(m.formulation);
  if (!f.time_stepping) return std::string(f.name) + " is an instantaneous problem, not a time-stepping model";
  return {};
}

namespace {

/// What one thread needs to step any world of the batch: nothing in it survives from one
/// world to the next but buffers (the stepper's per-step results are overwritten). The
/// Model is shared and read-only; a world's varied values and commands go into `params`.
struct Workspace {
  std::unique_ptr<Stepper> stepper;
  WorldParams params;  // the world being stepped: the batch's shared values, its varied ones written over them
  State state;
  std::unique_ptr<LaneStep> lanes;  // the lane path only: the formulation's lane step and its group
  Workspace(const Model& m, const StepperOptions& o, bool lane_path) : stepper(make_stepper(m, o)), params(m) {
    state = initial_state(m);
    if (lane_path) lanes = formulation_info(m.formulation).lanes->make(m, o);
  }
};

/// Why the lane path cannot step this batch (empty when it can).
std::string lane_path_reason(const WorldBatch& b, const BatchOptions& o) {
  const Model& m = b.model();
  const LaneEntry* lanes = formulation_info(m.formulation).lanes;
  if (!lanes) return "no lane kernel for this formulation yet";
  if (lanes->mode_refusal)
    if (std::string why = lanes->mode_refusal(m); !why.empty()) return why;
  if (o.scalar) return "--scalar";
  if (lanes->input_refusal)
    if (std::string why = lanes->input_refusal(m); !why.empty()) return why;
  const bool gain = !lanes->gain_path.empty();
  for (int k = 0; k < b.varied_count(); ++k) {
    const ParameterRef& r = b.varied(k);
    const bool in_lanes = r.kind == ParameterRef::Kind::pair_friction || is_start_parameter(m, r) ||
                          (gain && r.kind == ParameterRef::Kind::model_gain) ||
                          (lanes->carries_mass && r.kind == ParameterRef::Kind::body_mass) ||
                          (lanes->carries_scale && r.kind == ParameterRef::Kind::body_scale) ||
                          (lanes->carries_joint_gains && r.kind == ParameterRef::Kind::joint_gain);
    if (!in_lanes)
      return "parameter \"" + r.path + "\" varies per world and only friction, " +
             (gain ? std::string(lanes->gain_path) + ", " : std::string()) +
             (lanes->carries_mass ? "masses, " : "") + (lanes->carries_scale ? "sizes, " : "") +
             (lanes->carries_joint_gains ? "joint " + std::string(formulation_info(m.formulation).joint_gain) + ", " : "") +
             "and start poses run in lanes";
  }
  return {};
}

}  // namespace

struct BatchStepper::Impl {
  std::shared_ptr<const Model> base;
  BatchOptions options;
  tbb::task_arena arena;
  tbb::affinity_partitioner partitioner;  // reused: a group tends to stay on the thread whose cache holds it
  // Held by pointer: a stepper may keep references into its own buffers.
  tbb::enumerable_thread_specific<std::unique_ptr<Workspace>> workspaces;
  std::vector<int> commanded_joint;  // (n_a) the joint of each actuated DOF
  std::vector<int> model_parameters; // varied parameters that are WorldParams values (not only the start)
  bool lane_path = false;
  std::string path;
  // Every stepper is built for the Model and stepped with a world's WorldParams.
  std::vector<int> pair_param;  // lane path: the varied parameter of each pair's friction, or -1
  int gain_param = -1;          // lane path: the varied parameter of the lanes' gain (the model gain), or -1
  /// Lane path: a value per body or actuated DOF that the lanes carry when it varies (a
  /// body's mass or size, a joint's gain): the varied parameter of each index, or -1.
  struct Carried {
    std::vector<int> param;
    bool varies = false;
    void find(const WorldBatch& b, ParameterRef::Kind kind, std::size_t size, bool carried) {
      param.assign(size, -1);
      if (!carried) return;
      for (int k = 0; k < b.varied_count(); ++k)
        if (b.varied(k).kind == kind) {
          param[static_cast<std::size_t>(b.varied(k).index)] = k;  // a body, or (joint_gain) an actuated DOF
          varies = true;
        }
    }
  };
  Carried mass, scale, joint_gain;
  std::atomic<long> fallbacks{0};

  Impl(const WorldBatch& b, BatchOptions o)
      : base(b.model_ptr()),
        options(o),
        arena(o.threads > 0 ? o.threads : tbb::task_arena::automatic),
        workspaces([m = b.model_ptr(), o, lp = lane_path_reason(b, o).empty()] {
          return std::make_unique<Workspace>(*m, StepperOptions{o.pgs}, lp);
        }) {
    const Model& m = *base;
    const std::string why = lane_path_reason(b, o);
    lane_path = why.empty();
    const LaneEntry* lanes = formulation_info(m.formulation).lanes;
    // One sentence for the CLI's summaries (`throughput`, `mc`).
    path = !lane_path ? "per-world: one world at a time on each thread (" + why + ")"
                      : "lanes of " + std::to_string(kLaneWidth) + " worlds (" + lanes->describe(m);
    pair_param.assign(m.pairs.size(), -1);
    for (int k = 0; k < b.varied_count(); ++k) {
      const ParameterRef& r = b.varied(k);
      if (r.kind != ParameterRef::Kind::pair_friction) continue;
      for (int p : r.pairs) pair_param[p] = k;  // as WorldParams::set in order: the last one naming the pair wins
    }
    if (lane_path && !lanes->gain_path.empty())
      for (int k = 0; k < b.varied_count(); ++k)
        if (b.varied(k).kind == ParameterRef::Kind::model_gain) gain_param = k;
    mass.find(b, ParameterRef::Kind::body_mass, m.bodies.size(), lane_path && lanes->carries_mass);
    scale.find(b, ParameterRef::Kind::body_scale, m.bodies.size(), lane_path && lanes->carries_scale);
    joint_gain.find(b, ParameterRef::Kind::joint_gain, static_cast<std::size_t>(m.n_a),
                    lane_path && lanes->carries_joint_gains);
    for (int a = 0; a < m.n_a; ++a) commanded_joint.push_back(m.dofs[m.n_u + a].index);
    for (int k = 0; k < b.varied_count(); ++k) {
      const ParameterRef& r = b.varied(k);
      if (!is_start_parameter(m, r)) model_parameters.push_back(k);
    }
  }

  /// One world on the per-world path; fallback_only: the stepper's step_fallback instead of
  /// step() (a lane whose template step was not accepted).
  void step_world(WorldBatch& b, Workspace& ws, int w, const BatchCommands& c, bool fallback_only = false) {
    if (b.failed(w)) return;
    WorldParams& p = ws.params;  // starts from the batch's shared values (step's range body)
    for (int k : model_parameters) p.set(*base, b.varied(k), b.param_value(k)[w]);
    p.commanded = c.velocity != nullptr;
    if (c.velocity) {
      for (size_t a = 0; a < commanded_joint.size(); ++a) {
        const double u = c.velocity[a * static_cast<size_t>(c.stride) + w];
        if (!std::isfinite(u)) {
          b.set_failure(w, Status::bad_input, b.world_step()[w],
                        "the command for joint \"" + base->joints[commanded_joint[a]].name + "\" is not finite");
          return;
        }
        p.command[a] = u;
      }
    }
    b.load_state(w, ws.state);
    const int step = ws.state.step;
    const Status st =
        fallback_only ? ws.stepper->step_fallback(*base, p, ws.state) : ws.stepper->step(*base, p, ws.state);
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

  /// Lane group g on the lane path. Lanes that are padding or failed compute a copy of the
  /// first live lane (so they never hold the group's PGS longer) and are never stored.
  void step_group(WorldBatch& b, Workspace& ws, int g, const BatchCommands& c) {
    constexpr int W = kLaneWidth;
    const Model& m = *base;
    const int first_world = g * W, real = b.size();
    bool live[W];
    int first = -1;
    for (int l = 0; l < W; ++l) {
      const int w = first_world + l;
      live[l] = w < real && !b.failed(w);
      if (live[l] && first < 0) first = l;
    }
    if (first < 0) return;
    // One time per group: the schedules are evaluated in double at t + h/2. Worlds at
    // different times (only if a caller set them so) take the per-world path.
    const double t = b.world_time()[first_world + first];
    bool same_time = true;
    for (int l = 0; l < W; ++l) same_time = same_time && (!live[l] || b.world_time()[first_world + l] == t);
    if (!same_time) {
      for (int l = 0; l < W; ++l)
        if (live[l]) step_world(b, ws, first_world + l, c);
      return;
    }
    // A body's mass zero in some lanes and not in others: the scalar step skips a massless
    // body, which one lane group cannot do lane by lane; such a group goes world by world.
    if (mass.varies)
      for (std::size_t body = 0; body < mass.param.size(); ++body) {
        if (mass.param[body] < 0) continue;
        const double* v = b.param_value(mass.param[body]);
        bool zero = false, nonzero = false;
        for (int l = 0; l < W; ++l) {
          if (!live[l]) continue;
          (v[first_world + l] == 0.0 ? zero : nonzero) = true;
        }
        if (zero && nonzero) {
          for (int l = 0; l < W; ++l)
            if (live[l]) step_world(b, ws, first_world + l, c);
          return;
        }
      }
    // A world stepped alone before this group (a fallback, a mixed-mass group) left its own
    // varied values in ws.params; the lanes carry every varied value, but what they share
    // must be the batch's.
    if (!model_parameters.empty()) ws.params = b.shared_params();  // same sizes: no allocation
    LaneGroup& L = ws.lanes->group;
    const int na = m.n_a;
    // What every lane shares: the batch's shared values (a varied friction or gain, and the
    // commands, travel in the lanes), checked as Stepper::step checks one world's (stage 0).
    ws.params.commanded = false;
    if (!step_input_valid(m, ws.params)) {
      const std::string why = step_input_refusal(m, ws.params);
      for (int l = 0; l < W; ++l)
        if (live[l]) b.set_failure(first_world + l, Status::bad_input, b.world_step()[first_world + l], why);
      return;
    }
    if (c.velocity) {
      for (int l = 0; l < W; ++l) {
        if (!live[l]) continue;
        const int w = first_world + l;
        for (int a = 0; a < na; ++a)
          if (!std::isfinite(c.velocity[a * static_cast<size_t>(c.stride) + w])) {
            b.set_failure(w, Status::bad_input, b.world_step()[w],
                          "the command for joint \"" + m.joints[commanded_joint[a]].name + "\" is not finite");
            live[l] = false;
            break;
          }
      }
      first = -1;
      for (int l = 0; l < W && first < 0; ++l)
        if (live[l]) first = l;
      if (first < 0) return;
    }
    // Gather: a lane that is not live takes the first live lane's world.
    int src[W];
    for (int l = 0; l < W; ++l) src[l] = first_world + (live[l] ? l : first);
    auto gather = [&](const double* row, Lane& out) {
      out = Lane::load(row + first_world);
      for (int l = 0; l < W; ++l)
        if (!live[l]) out.set(l, row[src[l]]);
    };
    L.t = t;
    for (int i = 0; i < m.n_q(); ++i) gather(b.world_q(i), L.q[i]);
    for (int r = 0; r < b.memory_rows(); ++r) gather(b.world_memory(r), L.memory[r]);
    for (size_t p = 0; p < m.pairs.size(); ++p) {
      if (pair_param[p] >= 0) {
        gather(b.param_value(pair_param[p]), L.mu[p]);
      } else {
        L.mu[p] = Lane(b.shared_params().pair_friction[p]);
      }
    }
    L.commanded = c.velocity != nullptr;
    if (c.velocity)
      for (int a = 0; a < na; ++a)
        for (int l = 0; l < W; ++l) L.u[a].set(l, c.velocity[a * static_cast<size_t>(c.stride) + src[l]]);
    // Each index's own values where its parameter varies, the shared value elsewhere (a size
    // factor of 1 where a body's size does not vary, as WorldParams::body_scale).
    const auto carry = [&](const Carried& carried, const std::vector<double>& shared, std::vector<Lane>& out) {
      for (std::size_t i = 0; i < carried.param.size(); ++i) {
        if (carried.param[i] >= 0) gather(b.param_value(carried.param[i]), out[i]);
        else out[i] = Lane(shared[i]);
      }
    };
    L.mass_varies = mass.varies;
    L.scale_varies = scale.varies;
    L.joint_gain_varies = joint_gain.varies;
    if (mass.varies) carry(mass, b.shared_params().body_mass, L.mass);
    if (scale.varies) carry(scale, b.shared_params().body_scale, L.scale);
    if (joint_gain.varies) carry(joint_gain, b.shared_params().joint_gain, L.joint_gain);
    L.gain_varies = gain_param >= 0;
    if (L.gain_varies)
      for (int l = 0; l < W; ++l) L.gain.set(l, b.param_value(gain_param)[src[l]]);
    ws.lanes->step(m, ws.params);
    // Stage 5's range check (kStateRange), as Stepper::step's: a lane that left it is not
    // accepted, and its world's per-world step refuses it.
    Mask in_range(true);
    for (int i = 0; i < m.n_q(); ++i) in_range = in_range && abs(L.q[i]) <= Lane(kStateRange);
    if (!all(in_range))
      for (int l = 0; l < W; ++l) L.ok[l] = L.ok[l] && in_range[l];
    const double h = ws.params.h;
    // The common case, every lane a live world and accepted: whole-row vector stores, the
    // same values (and bits) as the per-lane loop below.
    bool all_ok = true;
    for (int l = 0; l < W; ++l) all_ok = all_ok && live[l] && L.ok[l];
    if (all_ok) {
      for (int i = 0; i < m.n_q(); ++i) L.q[i].store(b.world_q(i) + first_world);
      for (int r = 0; r < b.memory_rows(); ++r) L.memory[r].store(b.world_memory(r) + first_world);
      time_after_step(Lane::load(b.world_time() + first_world), h).store(b.world_time() + first_world);
      const Lane res = Lane::load(b.world_max_residual() + first_world);
      select(res < L.residual, L.residual, res).store(b.world_max_residual() + first_world);  // std::max
      for (int l = 0; l < W; ++l) {
        const int w = first_world + l;
        ++b.world_step()[w];
        b.world_status()[w] = Status::solved;
        b.world_pivots()[w] += L.pivots[l];
      }
      return;
    }
    // Scatter the accepted lanes; the others are finished one by one by the fallback.
    for (int l = 0; l < W; ++l) {
      if (!live[l]) continue;
      const int w = first_world + l;
      if (!L.ok[l]) {
        fallbacks.fetch_add(1, std::memory_order_relaxed);
        step_world(b, ws, w, c, true);
        continue;
      }
      for (int i = 0; i < m.n_q(); ++i) b.world_q(i)[w] = L.q[i][l];
      for (int r = 0; r < b.memory_rows(); ++r) b.world_memory(r)[w] = L.memory[r][l];
      b.world_time()[w] = time_after_step(b.world_time()[w], h);
      ++b.world_step()[w];
      b.world_status()[w] = Status::solved;
      b.world_pivots()[w] += L.pivots[l];
      b.world_max_residual()[w] = std::max(b.world_max_residual()[w], L.residual[l]);
    }
  }
};

BatchStepper::BatchStepper(const WorldBatch& batch, BatchOptions options) {
  if (const std::string why = batch_unsupported_reason(batch.model()); !why.empty())
    throw BatchError("batch: cannot step formulation " + std::string(to_string(batch.model().formulation)) + ": " + why);
  if (options.threads < 0) throw BatchError("batch: threads must be >= 0 (0 = all)");
  {
    // make_stepper returns null for a formulation this build has no stepper for.
    Workspace probe(batch.model(), StepperOptions{options.pgs}, false);
    if (!probe.stepper)
      throw BatchError("batch: this build has no stepper for " + std::string(to_string(batch.model().formulation)));
  }
  impl_ = std::make_unique<Impl>(batch, options);
}

BatchStepper::~BatchStepper() = default;

void BatchStepper::step(WorldBatch& b, const BatchCommands& commands) { step(b, commands, AfterStep{}); }

void BatchStepper::step(WorldBatch& b, const BatchCommands& commands, const AfterStep& after) {
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
          ws.params = b.shared_params();  // same sizes: no allocation
          for (int g = groups.begin(); g != groups.end(); ++g) {
            if (im.lane_path) {
              im.step_group(b, ws, g, commands);
            } else {
              // Padding worlds exist for the lane kernels; the per-world path skips them.
              const int end = std::min((g + 1) * width, real);
              for (int w = g * width; w < end; ++w) im.step_world(b, ws, w, commands);
            }
          }
          if (after) after(groups.begin() * width, std::min(groups.end() * width, real));
        },
        im.partitioner);
  });
}

const std::string& BatchStepper::path() const { return impl_->path; }
bool BatchStepper::lanes() const { return impl_->lane_path; }
long BatchStepper::fallback_count() const { return impl_->fallbacks.load(); }

void BatchStepper::run(WorldBatch& b, int steps, const BatchCommands& commands) {
  if (steps < 0) steps = b.model().step.steps;
  for (int k = 0; k < steps; ++k) step(b, commands);
}

}  // namespace qs

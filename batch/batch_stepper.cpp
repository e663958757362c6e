#include "quasistep/batch/batch_stepper.hpp"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "quasistep/kernels/lane.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lanes.hpp"
#include "quasistep/core/formulations/formulation_table.hpp"
#include "quasistep/core/stepper.hpp"

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

/// The lane path's buffers for one lane group: the template step of the batch's formulation
/// (anitescu_qp quasi-dynamic, or halm_posa_lcp / perfect_velocity_lcp) and its inputs.
struct LaneWorkspace {
  std::unique_ptr<AnitescuStepWorkspace<Lane>> anitescu;
  std::unique_ptr<HalmPosaStepWorkspace<Lane>> halm_posa;
  std::vector<Lane> q, mu, u, memory;  // (n_q), (pairs), (n_a), (State::memory rows)
  Lane c;                              // halm_posa: the gain scale c where it varies per world
  explicit LaneWorkspace(const Model& m)
      : q(m.n_q()), mu(std::max<size_t>(m.pairs.size(), 1)), u(std::max(m.n_a, 1)),
        memory(std::max(step_memory_size(m), 1)) {
    switch (formulation_info(m.formulation).lane_kernel) {
      case LaneKernel::anitescu_quasi_dynamic: anitescu = std::make_unique<AnitescuStepWorkspace<Lane>>(m); break;
      case LaneKernel::halm_posa: halm_posa = std::make_unique<HalmPosaStepWorkspace<Lane>>(m); break;
      case LaneKernel::none: break;
    }
  }
};

/// What one thread needs to step any world of the batch: nothing in it survives from one
/// world to the next but buffers (the stepper's per-step results are overwritten). The
/// Model is shared and read-only; a world's varied values and commands go into `params`.
struct Workspace {
  std::unique_ptr<Stepper> stepper;
  WorldParams params;  // the world being stepped: the scene's values, its varied ones written over them
  State state;
  std::unique_ptr<LaneWorkspace> lanes;  // the lane path only
  Workspace(const Model& m, const PgsSettings& pgs, bool lane_path) : stepper(make_stepper(m)), params(m) {
    state = initial_state(m);
    if (auto* a = dynamic_cast<AnitescuQp*>(stepper.get())) a->set_pgs_settings(pgs);
    if (lane_path) lanes = std::make_unique<LaneWorkspace>(m);
  }
};

/// Why the lane path cannot step this batch (empty when it can).
std::string lane_path_reason(const WorldBatch& b, const BatchOptions& o) {
  const Model& m = b.model();
  const LaneKernel kernel = formulation_info(m.formulation).lane_kernel;
  const bool halm_posa = kernel == LaneKernel::halm_posa;
  if (kernel == LaneKernel::none) return "no lane kernel for this formulation yet";
  if (kernel == LaneKernel::anitescu_quasi_dynamic && !m.params.quasi_dynamic)
    return "no lane kernel for anitescu_qp's quasistatic mode yet";
  if (o.scalar) return "--scalar";
  if (!(b.step_size() > 0) || !std::isfinite(b.step_size())) return "the scalar stepper reports this batch's bad h";
  if (halm_posa) {
    if (4 * m.n_slots() > kHalmPosaTemplateCapacity)
      return std::to_string(m.n_slots()) + " contact slots, more than the lane template's " +
             std::to_string(kHalmPosaTemplateCapacity / 4);
    if (!halm_posa_template_applies(m)) return "the scalar stepper reports this model's bad input";
  } else {
    const int na = m.n_a;
    if (m.world.type != WorldType::vertical || m.n_q() == 0 ||
        (na > 0 && (!m.params.stiffness_Ka || m.params.stiffness_Ka->size() != na ||
                    !(m.params.stiffness_Ka->minCoeff() > 0))))
      return "the scalar stepper reports this model's bad input";
  }
  for (int k = 0; k < b.varied_count(); ++k) {
    const ParameterRef& r = b.varied(k);
    const bool in_lanes = r.kind == ParameterRef::Kind::pair_friction || is_start_parameter(m, r) ||
                          (halm_posa && r.kind == ParameterRef::Kind::model_c);
    if (!in_lanes)
      return "parameter \"" + r.path + "\" varies per world and only friction, " +
             (halm_posa ? "model.c " : "") + "and start poses run in lanes";
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
  int c_param = -1;             // lane path (halm_posa): the varied parameter model.c, or -1
  std::atomic<long> fallbacks{0};

  Impl(const WorldBatch& b, BatchOptions o)
      : base(b.model_ptr()),
        options(o),
        arena(o.threads > 0 ? o.threads : tbb::task_arena::automatic),
        workspaces([m = b.model_ptr(), o, lp = lane_path_reason(b, o).empty()] {
          return std::make_unique<Workspace>(*m, o.anitescu_pgs, lp);
        }) {
    const Model& m = *base;
    const std::string why = lane_path_reason(b, o);
    lane_path = why.empty();
    const bool anitescu = formulation_info(m.formulation).lane_kernel == LaneKernel::anitescu_quasi_dynamic;
    // One sentence for the CLI's summaries (`throughput`, `mc`).
    const std::string width = std::to_string(kLaneWidth);
    path = !lane_path ? "per-world: one world at a time on each thread (" + why + ")"
           : anitescu ? "lanes of " + width +
                            " worlds (the anitescu_qp quasi-dynamic step by PGS, each world's friction and commands "
                            "in its lane); steps a lane cannot settle fall back to the scalar path"
                      : "lanes of " + width + " worlds (the " + std::string(to_string(m.formulation)) +
                            " step by Lemke, each world's friction, c and commands in its lane); steps a lane "
                            "cannot solve fall back to the scalar path";
    pair_param.assign(m.pairs.size(), -1);
    for (int k = 0; k < b.varied_count(); ++k) {
      const ParameterRef& r = b.varied(k);
      if (r.kind != ParameterRef::Kind::pair_friction) continue;
      for (int p : r.pairs) pair_param[p] = k;  // as WorldParams::set in order: the last one naming the pair wins
    }
    for (int k = 0; k < b.varied_count(); ++k)
      if (b.varied(k).kind == ParameterRef::Kind::model_c) c_param = k;
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
    WorldParams& p = ws.params;
    p.h = b.step_size();
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
    LaneWorkspace& L = *ws.lanes;
    const int na = m.n_a;
    // What every lane shares: the batch's h, the scene's values (a varied friction or c, and
    // the commands, travel in the lanes).
    ws.params.h = b.step_size();
    ws.params.commanded = false;
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
    for (int i = 0; i < m.n_q(); ++i) gather(b.world_q(i), L.q[i]);
    for (int r = 0; r < b.memory_rows(); ++r) gather(b.world_memory(r), L.memory[r]);
    for (size_t p = 0; p < m.pairs.size(); ++p) {
      if (pair_param[p] >= 0) {
        gather(b.param_value(pair_param[p]), L.mu[p]);
      } else {
        L.mu[p] = Lane(m.pairs[p].friction);
      }
    }
    if (c.velocity)
      for (int a = 0; a < na; ++a)
        for (int l = 0; l < W; ++l) L.u[a].set(l, c.velocity[a * static_cast<size_t>(c.stride) + src[l]]);
    if (L.halm_posa) {
      step_halm_posa_group(b, ws, first_world, live, c, t);
      return;
    }
    AnitescuStepWorkspace<Lane>& S = *L.anitescu;
    // State::memory of anitescu_qp: the reference q̄_a, then the PGS warm start (AnitescuQp::memory_size).
    const int ref = AnitescuQp::kMemoryReference, warm = AnitescuQp::memory_warm_start(m), warm_rows = 2 * m.n_slots();
    anitescu_quasi_dynamic_step<Lane>(m, ws.params, S, L.q.data(), L.memory.data() + ref, L.mu.data(),
                                      c.velocity ? L.u.data() : nullptr, L.memory.data() + warm, t,
                                      options.anitescu_pgs);
    const double h = ws.params.h;
    // The common case, every lane a live world and accepted: whole-row vector stores, the
    // same values (and bits) as the per-lane loop below.
    bool all_ok = true;
    for (int l = 0; l < W; ++l) all_ok = all_ok && live[l] && S.ok[l];
    if (all_ok) {
      for (int i = 0; i < m.n_q(); ++i) S.q_out[i].store(b.world_q(i) + first_world);
      for (int a = 0; a < na; ++a) S.qbar[a].store(b.world_memory(ref + a) + first_world);
      for (int r = 0; r < warm_rows; ++r) S.z[r].store(b.world_memory(warm + r) + first_world);
      (Lane::load(b.world_time() + first_world) + Lane(h)).store(b.world_time() + first_world);  // s.t += h
      const Lane res = Lane::load(b.world_max_residual() + first_world);
      select(res < S.kkt, S.kkt, res).store(b.world_max_residual() + first_world);  // std::max(res, kkt)
      for (int l = 0; l < W; ++l) {
        const int w = first_world + l;
        ++b.world_step()[w];
        b.world_status()[w] = Status::solved;
        b.world_pivots()[w] += S.pgs_result.iterations[l];
      }
      return;
    }
    // Scatter the accepted lanes; the others are finished one by one by the fallback.
    for (int l = 0; l < W; ++l) {
      if (!live[l]) continue;
      const int w = first_world + l;
      if (!S.ok[l]) {
        fallbacks.fetch_add(1, std::memory_order_relaxed);
        step_world(b, ws, w, c, true);
        continue;
      }
      for (int i = 0; i < m.n_q(); ++i) b.world_q(i)[w] = S.q_out[i][l];
      for (int a = 0; a < na; ++a) b.world_memory(ref + a)[w] = S.qbar[a][l];
      for (int r = 0; r < warm_rows; ++r) b.world_memory(warm + r)[w] = S.z[r][l];
      b.world_time()[w] += h;  // s.t += h
      ++b.world_step()[w];
      b.world_status()[w] = Status::solved;
      b.world_pivots()[w] += S.pgs_result.iterations[l];
      b.world_max_residual()[w] = std::max(b.world_max_residual()[w], S.kkt[l]);
    }
  }

  /// The Halm-Posa template step of a gathered lane group (step_group's inputs in ws.lanes),
  /// stored as HalmPosaLcp::step stores a world: q, t += h, step, pivots, the residual.
  void step_halm_posa_group(WorldBatch& b, Workspace& ws, int first_world, const bool* live, const BatchCommands& c,
                            double t) {
    constexpr int W = kLaneWidth;
    const Model& m = *base;
    LaneWorkspace& L = *ws.lanes;
    HalmPosaStepWorkspace<Lane>& H = *L.halm_posa;
    const Lane* c_scale = nullptr;
    if (c_param >= 0) {
      const double* row = b.param_value(c_param);
      int first = 0;
      while (!live[first]) ++first;
      for (int l = 0; l < W; ++l) L.c.set(l, row[first_world + (live[l] ? l : first)]);
      c_scale = &L.c;
    }
    halm_posa_template_step<Lane>(m, ws.params, H, L.q.data(), L.mu.data(), c_scale,
                                  c.velocity ? L.u.data() : nullptr, t);
    const double h = ws.params.h;
    bool all_ok = true;
    for (int l = 0; l < W; ++l) all_ok = all_ok && live[l] && H.ok[l];
    if (all_ok) {
      for (int i = 0; i < m.n_q(); ++i) H.q_end[i].store(b.world_q(i) + first_world);
      (Lane::load(b.world_time() + first_world) + Lane(h)).store(b.world_time() + first_world);  // s.t += h
    }
    for (int l = 0; l < W; ++l) {
      if (!live[l]) continue;
      const int w = first_world + l;
      if (!H.ok[l]) {
        fallbacks.fetch_add(1, std::memory_order_relaxed);
        step_world(b, ws, w, c, true);
        continue;
      }
      if (!all_ok) {
        for (int i = 0; i < m.n_q(); ++i) b.world_q(i)[w] = H.q_end[i][l];
        b.world_time()[w] += h;  // s.t += h
      }
      ++b.world_step()[w];
      b.world_status()[w] = Status::solved;
      b.world_pivots()[w] += H.pivots[l];
      b.world_max_residual()[w] = std::max(b.world_max_residual()[w], H.residual[l]);
    }
  }
};

BatchStepper::BatchStepper(const WorldBatch& batch, BatchOptions options) {
  if (const std::string why = batch_unsupported_reason(batch.model()); !why.empty())
    throw BatchError("batch: cannot step formulation " + std::string(to_string(batch.model().formulation)) + ": " + why);
  if (options.threads < 0) throw BatchError("batch: threads must be >= 0 (0 = all)");
  {
    // make_stepper returns null for a formulation this build has no stepper for.
    Workspace probe(batch.model(), options.anitescu_pgs, false);
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

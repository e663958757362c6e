#include "quasistep/batch/world_batch.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "quasistep/core/formulation_table.hpp"
#include "quasistep/kernels/lane.hpp"

namespace qs {

void detail::AlignedFree::operator()(void* p) const { std::free(p); }

namespace {

std::size_t round_up(std::size_t x, std::size_t to) { return (x + to - 1) / to * to; }

/// Whole lane groups, and whole 64-byte rows (8 doubles) so that every row stays aligned
/// whatever the lane width.
std::size_t padded_worlds(int worlds) {
  constexpr std::size_t row_multiple = std::max<std::size_t>(kLaneWidth, kLaneAlignment / sizeof(double));
  return round_up(static_cast<std::size_t>(worlds), row_multiple);
}

/// A row's length in doubles: the padded worlds, one 64-byte line more when they make an
/// even number of lines. One world's values lie a row apart (its State::memory alone is 142
/// rows for the gripper's MIQP): rows of 2^k lines put them all in one cache set, where they
/// evict each other (the MIQP Monte Carlo study ran 8-10% slower with 2048 or 4096 worlds
/// than with 2000 or 4000); an odd number of lines spreads them over every set.
std::size_t stride_for(std::size_t padded) {
  constexpr std::size_t line = kLaneAlignment / sizeof(double);
  return (padded / line) % 2 == 0 ? padded + line : padded;
}

/// Rows of doubles (and of 4- or 8-byte integers, counted as one double row each: a row of
/// ints or statuses is padded to a whole row of doubles so every row starts aligned).
std::size_t rows_needed(const Model& m, int varied) {
  return static_cast<std::size_t>(m.n_q())                      // q
         + static_cast<std::size_t>(step_memory_size(m))       // State::memory
         + 2                                                    // time, max residual
         + 4                                                    // step, failed step, pivots, status
         + static_cast<std::size_t>(varied);
}

std::size_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;  // unknown: no limit but the allocator's
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
}

std::string gib(std::size_t bytes) {
  std::ostringstream s;
  s.precision(3);
  s << static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0) << " GiB";
  return s.str();
}


/// Why a batch cannot vary r in model m, or empty.
std::string cannot_vary(const Model& m, const ParameterRef& r) {
  if (m.world.type == WorldType::body_on_plane) return "the body_on_plane world has no per-world parameters in the batch yet";
  if (const auto fixed = formulation_info(m.formulation).batch_fixed_parameter) return fixed(m, r);
  return {};
}

}  // namespace

std::size_t WorldBatch::bytes_needed(const Model& m, int worlds, int varied) {
  if (worlds < 1) return 0;
  return rows_needed(m, varied) * stride_for(padded_worlds(worlds)) * sizeof(double);
}

double* WorldBatch::carve_doubles(std::size_t rows) {
  double* p = reinterpret_cast<double*>(storage_.get() + used_);
  used_ += rows * static_cast<std::size_t>(stride_) * sizeof(double);
  return p;
}

WorldBatch::WorldBatch(std::shared_ptr<const Model> m, int worlds, std::vector<ParameterRef> varied)
    : model_(std::move(m)), worlds_(worlds), lane_width_(kLaneWidth), varied_(std::move(varied)) {
  if (!model_) throw BatchError("batch: no model");
  if (worlds < 1) throw BatchError("batch: the number of worlds must be at least 1 (got " + std::to_string(worlds) + ")");
  const Model& mo = *model_;
  shared_.reset(mo);  // the scene's values, h = step.h
  for (size_t k = 0; k < varied_.size(); ++k) {
    for (size_t j = 0; j < k; ++j)
      if (varied_[j].same_as(varied_[k]))
        throw BatchError("batch: parameter \"" + varied_[k].path + "\" is varied twice");
    if (const std::string why = cannot_vary(mo, varied_[k]); !why.empty())
      throw BatchError("batch: parameter \"" + varied_[k].path + "\" cannot vary per world: " + why);
  }
  const std::size_t bytes = bytes_needed(mo, worlds, varied_count());
  const std::size_t memory = physical_memory_bytes();
  if (memory > 0 && bytes > memory / 10 * 9)
    throw BatchError("batch: " + std::to_string(worlds) + " worlds need " + gib(bytes) +
                     " of storage, more than 90% of this machine's " + gib(memory));
  padded_ = static_cast<int>(padded_worlds(worlds));
  stride_ = static_cast<int>(stride_for(static_cast<std::size_t>(padded_)));
  memory_rows_ = step_memory_size(mo);
  capacity_ = round_up(bytes, kLaneAlignment);
  storage_.reset(static_cast<unsigned char*>(std::aligned_alloc(kLaneAlignment, capacity_)));
  if (!storage_) throw BatchError("batch: could not allocate " + gib(capacity_) + " for " + std::to_string(worlds) + " worlds");
  // Every row is stride_ doubles long, a multiple of 8 doubles = 64 bytes: rows stay aligned.
  q_ = carve_doubles(mo.n_q());
  memory_ = carve_doubles(static_cast<std::size_t>(memory_rows_));
  time_ = carve_doubles(1);
  max_residual_ = carve_doubles(1);
  step_ = reinterpret_cast<int*>(carve_doubles(1));
  failed_step_ = reinterpret_cast<int*>(carve_doubles(1));
  pivots_ = reinterpret_cast<long*>(carve_doubles(1));
  status_ = reinterpret_cast<Status*>(carve_doubles(1));
  params_ = carve_doubles(varied_.size());
  for (int k = 0; k < varied_count(); ++k) {
    const double v = scene_value(mo, varied_[k]);
    for (int w = 0; w < padded_; ++w) param_value(k)[w] = v;
  }
  detail_.resize(static_cast<std::size_t>(worlds_));
  reset();
}

WorldBatch WorldBatch::from_scene(const Scene& scene, int worlds) {
  std::vector<ParameterRef> varied;
  for (const auto& entry : scene.overrides)
    for (const auto& [ref, value] : entry) {
      bool seen = false;
      for (const ParameterRef& r : varied) seen = seen || r.same_as(ref);
      if (!seen) varied.push_back(ref);
    }
  WorldBatch b(scene.model, worlds, varied);
  if (!scene.overrides.empty()) {
    const int k_entries = static_cast<int>(scene.overrides.size());
    for (int w = 0; w < worlds; ++w)
      for (const auto& [ref, value] : scene.overrides[w % k_entries])
        for (int k = 0; k < b.varied_count(); ++k)
          if (b.varied(k).same_as(ref)) b.set_parameter(k, w, value);
    b.reset();
  }
  return b;
}

void WorldBatch::set_parameter(int k, int world, double value) {
  using K = ParameterRef::Kind;
  const ParameterRef& r = varied_.at(static_cast<std::size_t>(k));
  auto bad = [&](const char* why) {
    throw BatchError("batch: world " + std::to_string(world) + ", parameter \"" + r.path + "\": " + why);
  };
  if (world < 0 || world >= worlds_) bad("no such world");
  if (!std::isfinite(value)) bad("not a finite number");
  switch (r.kind) {
    case K::body_mass:
      if (model_->bodies[r.index].kind == BodyKind::free ? !(value > 0) : !(value >= 0))
        bad(model_->bodies[r.index].kind == BodyKind::free ? "a free body's mass must be > 0" : "must be >= 0");
      break;
    case K::body_scale:
    case K::model_gain:
    case K::joint_gain:
      if (!(value > 0)) bad("must be > 0");
      break;
    case K::pair_friction:
      if (!(value >= 0)) bad("must be >= 0");
      break;
    default: break;
  }
  param_value(k)[world] = value;
  if (world == 0) fill_padding();
}

void WorldBatch::fill_padding() {
  for (int k = 0; k < varied_count(); ++k)
    for (int w = worlds_; w < padded_; ++w) param_value(k)[w] = param_value(k)[0];
}

void WorldBatch::reset() {
  const Model& m = *model_;
  State s0 = initial_state(m);
  State s = s0;
  for (int w = 0; w < padded_; ++w) {
    const int src = w < worlds_ ? w : 0;  // padding copies world 0
    s.q = s0.q;
    for (int k = 0; k < varied_count(); ++k) {
      const ParameterRef& r = varied_[k];
      if (!is_start_parameter(m, r)) continue;
      const double v = param_value(k)[src];
      using K = ParameterRef::Kind;
      int dof = -1;
      switch (r.kind) {
        case K::joint_position: dof = m.joints[r.index].dof; break;
        case K::body_pose_x: dof = m.bodies[r.index].dof[0]; break;
        case K::body_pose_y: dof = m.bodies[r.index].dof[1]; break;
        case K::body_pose_theta: dof = m.bodies[r.index].dof[2]; break;
        default: break;
      }
      if (dof >= 0) s.q[dof] = v;
    }
    // The memory's start follows the world's start (anitescu_qp: q̄_a(0) = q_a(0)).
    formulation_info(m.formulation).start_memory(m, s.q.data(), s.memory.data());
    store_state(w, s);
  }
  clear_outcomes();
}

void WorldBatch::clear_outcomes() {
  for (int w = 0; w < padded_; ++w) {
    status_[w] = Status::not_run;
    failed_step_[w] = -1;
    pivots_[w] = 0;
    max_residual_[w] = 0.0;
  }
  for (std::string& d : detail_) d.clear();  // keeps the capacity: no allocation
}

void WorldBatch::load_state(int world, State& s) const {
  const Model& m = *model_;
  if (s.q.size() != m.n_q()) s.q.resize(m.n_q());
  for (int i = 0; i < m.n_q(); ++i) s.q[i] = world_q(i)[world];
  if (memory_rows_ > 0) {
    if (s.memory.size() != memory_rows_) s.memory.resize(memory_rows_);
    for (int r = 0; r < memory_rows_; ++r) s.memory[r] = world_memory(r)[world];
  }
  s.t = time_[world];
  s.step = step_[world];
}

void WorldBatch::store_state(int world, const State& s) {
  const Model& m = *model_;
  for (int i = 0; i < m.n_q(); ++i) world_q(i)[world] = s.q[i];
  if (s.memory.size() == memory_rows_) {
    for (int r = 0; r < memory_rows_; ++r) world_memory(r)[world] = s.memory[r];
  } else if (memory_rows_ > 0) {
    // A State without its memory (a caller's own): the start's for its q, initial_state's
    // (a local buffer, so that worlds may still be stored from several threads).
    std::vector<double> start(static_cast<std::size_t>(memory_rows_));
    formulation_info(m.formulation).start_memory(m, s.q.data(), start.data());
    for (int r = 0; r < memory_rows_; ++r) world_memory(r)[world] = start[r];
  }
  time_[world] = s.t;
  step_[world] = s.step;
}

void WorldBatch::set_failure(int world, Status st, int step, const std::string& detail) {
  status_[world] = st;
  failed_step_[world] = step;
  if (world < worlds_) detail_[world] = detail;
}

int WorldBatch::failed_count() const {
  int n = 0;
  for (int w = 0; w < worlds_; ++w) n += failed_step_[w] >= 0;
  return n;
}

std::uint64_t WorldBatch::hash() const {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  auto mix = [&h](const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) {
      h ^= b[i];
      h *= 1099511628211ull;
    }
  };
  const Model& m = *model_;
  for (int w = 0; w < worlds_; ++w) {
    for (int i = 0; i < m.n_q(); ++i) mix(&world_q(i)[w], sizeof(double));
    for (int r = 0; r < memory_rows_; ++r) mix(&world_memory(r)[w], sizeof(double));
    mix(&time_[w], sizeof(double));
    mix(&step_[w], sizeof(int));
    mix(&status_[w], sizeof(Status));
    mix(&failed_step_[w], sizeof(int));
  }
  return h;
}

void WorldBatch::set_step_size(double h) {
  if (!(h > 0) || !std::isfinite(h)) throw BatchError("batch: h must be a finite number > 0");
  shared_.h = h;
}

}  // namespace qs

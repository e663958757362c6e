// N worlds that share one Model, stored structure-of-arrays.
//
// Every per-world quantity is an array over worlds (as MuJoCo's mjData names them,
// `entity_field`, with the dimension in a comment), padded to a whole number of lane
// groups (quasistep/kernels/lane.hpp) and 64-byte aligned, so that a lane group's values of one
// quantity are one aligned vector load. Padding worlds copy world 0's start and parameters:
// a lane group always runs full (docs/batch.md: leftovers are padded, not sent down another
// path); they are never counted, hashed or reported.
//
// Per-world parameters (the scene's overrides, or Monte Carlo samples) are the Model's
// varied parameters (quasistep/core/world_params.hpp ParameterRef): each has an array over worlds,
// from which a stepper's WorldParams is filled (the Model itself never changes). Nothing
// is allocated after construction except a failed world's one-line reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "quasistep/core/model.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

/// Bad batch input (size, parameters): a one-line message naming the cause.
class BatchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
struct AlignedFree {
  void operator()(void* p) const;
};
}  // namespace detail

class WorldBatch {
 public:
  /// `worlds` worlds of model m at its initial state, every parameter at the Model's value.
  /// `varied` lists the parameters that may differ between worlds (at most once each).
  /// Throws BatchError when worlds < 1, when the storage would exceed the memory this
  /// machine has (the estimate is in the message), or for a parameter a batch cannot vary.
  WorldBatch(std::shared_ptr<const Model> m, int worlds, std::vector<ParameterRef> varied = {});

  /// A batch of a scene: its overrides become varied parameters; world i takes
  /// overrides.worlds[i mod K] (K entries), a parameter an entry does not name keeps the
  /// Model's value.
  static WorldBatch from_scene(const Scene& scene, int worlds);

  /// Bytes the storage of `worlds` worlds with `varied` parameters takes (the estimate the
  /// constructor checks against memory).
  static std::size_t bytes_needed(const Model& m, int worlds, int varied);

  const Model& model() const { return *model_; }
  const std::shared_ptr<const Model>& model_ptr() const { return model_; }
  int size() const { return worlds_; }           // real worlds
  int padded_size() const { return padded_; }    // worlds including padding: whole lane groups and 64-byte rows
  int group_count() const { return padded_ / lane_width_; }
  /// Doubles from one row of a per-world quantity to the next: padded_size(), or one 64-byte
  /// line more, so that a row is an odd number of lines (one world's rows then fall into
  /// different cache sets; world_batch.cpp).
  int row_stride() const { return stride_; }
  int lane_width() const { return lane_width_; }

  /// The values every world of the batch shares (WorldParams: the scene's, with the batch's
  /// step size); a stepper starts each world from them and writes its varied values over.
  const WorldParams& shared_params() const { return shared_; }
  /// The step size h (s) every world of the batch is stepped with (shared_params().h): the
  /// scene's step.h unless set. BatchError unless a finite number > 0.
  double step_size() const { return shared_.h; }
  void set_step_size(double h);

  // ---- state, one row per component, padded_size() entries each (rows row_stride() apart)
  double* world_q(int dof) { return q_ + static_cast<std::size_t>(dof) * stride_; }              // (n_q x padded)
  const double* world_q(int dof) const { return q_ + static_cast<std::size_t>(dof) * stride_; }
  double* world_memory(int r) { return memory_ + static_cast<std::size_t>(r) * stride_; }  // (memory_rows x padded), State::memory
  const double* world_memory(int r) const { return memory_ + static_cast<std::size_t>(r) * stride_; }
  int memory_rows() const { return memory_rows_; }
  double* world_time() { return time_; }         // (padded) s
  const double* world_time() const { return time_; }
  int* world_step() { return step_; }            // (padded) steps taken
  const int* world_step() const { return step_; }

  // ---- outcome and statistics, per world ----------------------------------------------
  Status* world_status() { return status_; }     // (padded) not_run until stepped, solved while all is well,
                                                 // else the failure, after which the world stops
  const Status* world_status() const { return status_; }
  int* world_failed_step() { return failed_step_; }  // (padded) the step that failed, -1 when none
  const int* world_failed_step() const { return failed_step_; }
  long* world_pivots() { return pivots_; }       // (padded) solver iterations summed over steps
  const long* world_pivots() const { return pivots_; }
  double* world_max_residual() { return max_residual_; }  // (padded) the largest scaled residual of a solved step
  const double* world_max_residual() const { return max_residual_; }
  const std::string& failure_detail(int world) const { return detail_[world]; }
  void set_failure(int world, Status st, int step, const std::string& detail);
  bool failed(int world) const { return failed_step_[world] >= 0; }
  int failed_count() const;

  // ---- varied parameters ---------------------------------------------------------------
  int varied_count() const { return static_cast<int>(varied_.size()); }
  const ParameterRef& varied(int k) const { return varied_[k]; }
  double* param_value(int k) { return params_ + static_cast<std::size_t>(k) * stride_; }  // (varied x padded)
  const double* param_value(int k) const { return params_ + static_cast<std::size_t>(k) * stride_; }
  /// Sets world w's value of varied parameter k (checked against the parameter's range:
  /// BatchError naming the path and world). Call reset() after changing initial poses.
  void set_parameter(int k, int world, double value);

  /// Every world back to its initial state (initial-pose and joint-position parameters
  /// applied), statistics cleared.
  void reset();
  /// Every world's status, failure and statistics cleared (not_run), states untouched: for
  /// callers that store their own states (quasistep/batch/rollout.hpp). Allocates nothing.
  void clear_outcomes();

  /// World w's State (q, t, step and State::memory), into s without
  /// allocating when s is already sized; and back.
  void load_state(int world, State& s) const;
  void store_state(int world, const State& s);

  /// FNV-1a 64 over every real world's q, State::memory, time, step, status and failed step, in
  /// world order: the same worlds give the same hash however they were run.
  std::uint64_t hash() const;

 private:
  double* carve_doubles(std::size_t rows);
  void fill_padding();

  std::shared_ptr<const Model> model_;
  int worlds_ = 0, padded_ = 0, stride_ = 0, lane_width_ = 1;
  WorldParams shared_;
  int memory_rows_ = 0;
  std::vector<ParameterRef> varied_;
  std::unique_ptr<unsigned char, detail::AlignedFree> storage_;
  std::size_t used_ = 0, capacity_ = 0;
  double *q_ = nullptr, *memory_ = nullptr, *time_ = nullptr, *max_residual_ = nullptr, *params_ = nullptr;
  int *step_ = nullptr, *failed_step_ = nullptr;
  long* pivots_ = nullptr;
  Status* status_ = nullptr;
  std::vector<std::string> detail_;
};


}  // namespace qs

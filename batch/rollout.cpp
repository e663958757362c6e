#include "quasistep/batch/rollout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/contacts.hpp"
#include "quasistep/core/kinematics.hpp"

namespace qs {

Rollout::Rollout(std::shared_ptr<const Model> model, BatchOptions options)
    : model_(std::move(model)), options_(options) {
  if (!model_) throw BatchError("rollout: no model");
  if (const std::string why = batch_unsupported_reason(*model_); !why.empty())
    throw BatchError("rollout: cannot step formulation " + std::string(to_string(model_->formulation)) + ": " + why);
  pose_.resize(model_->bodies.size());
  frame_.resize(std::max<std::size_t>(model_->joints.size(), 1));
}

Rollout::~Rollout() = default;

const std::string& Rollout::path() const {
  static const std::string none;
  return stepper_ ? stepper_->path() : none;
}

const RolloutResult& Rollout::propagate(std::span<const State> states, std::span<const double> actions, double h,
                                        int steps, RolloutRecord record, std::span<double> trajectory_out) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Model& base = *model_;
  const int n = static_cast<int>(states.size()), na = base.n_a;
  if (n < 1) throw BatchError("rollout: no states to propagate");
  if (!(h > 0) || !std::isfinite(h)) throw BatchError("rollout: h must be a finite number > 0");
  if (steps < 0) throw BatchError("rollout: steps must be >= 0 (got " + std::to_string(steps) + ")");
  if (steps == std::numeric_limits<int>::max())  // steps + 1 rows must be an int
    throw BatchError("rollout: steps must be < " + std::to_string(std::numeric_limits<int>::max()));
  const std::size_t expected = static_cast<std::size_t>(n) * static_cast<std::size_t>(steps) * static_cast<std::size_t>(na);
  if (actions.size() != expected)
    throw BatchError("rollout: actions has " + std::to_string(actions.size()) + " entries, expected states x steps x n_a = " +
                     std::to_string(n) + " x " + std::to_string(steps) + " x " + std::to_string(na));
  for (int i = 0; i < n; ++i) {
    const State& s = states[static_cast<std::size_t>(i)];
    if (s.q.size() != base.n_q() || (s.memory.size() != 0 && s.memory.size() != step_memory_size(base)))
      throw BatchError("rollout: state " + std::to_string(i) + " does not fit the model (q has " +
                       std::to_string(s.q.size()) + " entries and memory " + std::to_string(s.memory.size()) +
                       ", the model " + std::to_string(base.n_q()) + " and " + std::to_string(step_memory_size(base)) +
                       " or none; start from initial_state)");
  }

  // A new batch only when the pair count changes (the only allocations of a call); h is the
  // batch's step size, the Model stays as it is.
  if (!batch_ || batch_->size() != n) {
    stepper_.reset();
    batch_ = std::make_unique<WorldBatch>(model_, n);
    batch_->set_step_size(h);  // a scene may have no step.h
    stepper_ = std::make_unique<BatchStepper>(*batch_, options_);
    command_.assign(static_cast<std::size_t>(std::max(na, 1)) * static_cast<std::size_t>(batch_->row_stride()), 0.0);
    result_.next.assign(static_cast<std::size_t>(n), State{});
    for (State& s : result_.next) s = initial_state(*model_);  // sized once
    result_.contacts.assign(static_cast<std::size_t>(n), ContactSummary{});
    result_.status.assign(static_cast<std::size_t>(n), Status::not_run);
    result_.failed_step.assign(static_cast<std::size_t>(n), -1);
  }
  WorldBatch& b = *batch_;
  b.set_step_size(h);
  b.clear_outcomes();
  for (int i = 0; i < n; ++i) b.store_state(i, states[static_cast<std::size_t>(i)]);
  const int stride = b.row_stride();  // the batch's own rows' spacing (no cache-set aliasing)
  const int nq = base.n_q();
  result_.steps = steps;
  result_.n_q = nq;
  const bool every_step = record == RolloutRecord::every_step;
  const std::size_t trajectory_size =
      every_step ? static_cast<std::size_t>(n) * static_cast<std::size_t>(steps + 1) * static_cast<std::size_t>(nq) : 0;
  if (!trajectory_out.empty() && trajectory_out.size() != trajectory_size)
    throw BatchError("rollout: trajectory_out has " + std::to_string(trajectory_out.size()) +
                     " entries, expected states x (steps + 1) x n_q = " + std::to_string(trajectory_size) +
                     (every_step ? std::string() : " (it is for RolloutRecord::every_step)"));
  // Sized per call: assign() reuses the capacity of an earlier call of the same shape.
  result_.trajectory.assign(trajectory_out.empty() ? trajectory_size : 0, std::numeric_limits<double>::quiet_NaN());
  double* const trajectory = trajectory_out.empty() ? result_.trajectory.data() : trajectory_out.data();
  std::fill(trajectory_out.begin(), trajectory_out.end(), std::numeric_limits<double>::quiet_NaN());
  result_.step_status.assign(every_step ? static_cast<std::size_t>(n) * static_cast<std::size_t>(steps) : 0,
                             Status::not_run);
  // Row l of every pair that has not failed (a failed pair's rows stay NaN).
  const auto keep_states = [&](int l) {
    for (int i = 0; i < n; ++i) {
      if (b.failed(i)) continue;
      double* row = trajectory +
                    (static_cast<std::size_t>(i) * static_cast<std::size_t>(steps + 1) + static_cast<std::size_t>(l)) * nq;
      for (int d = 0; d < nq; ++d) row[d] = b.world_q(d)[i];
    }
  };
  if (every_step) keep_states(0);
  for (int l = 0; l < steps; ++l) {
    // Padding worlds keep velocity 0: they are never stored or reported.
    for (int i = 0; i < n; ++i)
      for (int a = 0; a < na; ++a)
        command_[static_cast<std::size_t>(a) * stride + i] =
            actions[(static_cast<std::size_t>(i) * steps + l) * na + a];
    stepper_->step(b, BatchCommands{command_.data(), stride});
    if (every_step) {
      keep_states(l + 1);
      for (int i = 0; i < n; ++i) {
        const int failed = b.world_failed_step()[i];  // 0-based, -1 while none
        Status& st = result_.step_status[static_cast<std::size_t>(i) * steps + l];
        st = failed < 0 || failed > l ? Status::solved : failed == l ? b.world_status()[i] : Status::not_run;
      }
    }
  }

  const Model& m = *model_;
  for (int i = 0; i < n; ++i) {
    const auto u = static_cast<std::size_t>(i);
    State& s = result_.next[u];
    b.load_state(i, s);
    result_.status[u] = b.failed(i) ? b.world_status()[i] : Status::solved;
    result_.failed_step[u] = b.failed(i) ? b.world_failed_step()[i] + 1 : -1;
    forward_kinematics(m, s.q.data(), pose_.data(), frame_.data());
    ContactSummary c;
    c.min_distance = std::numeric_limits<double>::infinity();
    for (int k = 0; k < m.n_slots(); ++k) {
      const double phi = contact_frame(m, k, pose_.data()).phi;
      c.min_distance = std::min(c.min_distance, phi);
      c.touching += phi <= kRolloutTouchDistance ? 1 : 0;
    }
    result_.contacts[u] = c;
  }
  return result_;
}

}  // namespace qs

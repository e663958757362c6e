#include "quasistep/batch/rollout.hpp"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/contacts.hpp"
#include "quasistep/core/kinematics.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"

#include "thread_stepper.hpp"

namespace qs {

/// One Stepper, its WorldParams and a State per thread (made at a thread's first pair), with
/// the batch's PGS settings, as the batch engine's per-world path makes its steppers.
struct Rollout::OneByOne {
  using Worker = ThreadStepper;
  OneByOne(std::shared_ptr<const Model> m, const BatchOptions& o)
      : arena(o.threads > 0 ? o.threads : tbb::task_arena::automatic),
        workers([m, so = StepperOptions{o.pgs}] { return std::make_unique<Worker>(*m, so); }),
        impulses_scaled_by_k(make_stepper(*m, StepperOptions{o.pgs})->impulses_scaled_by_k()) {}
  tbb::task_arena arena;
  tbb::enumerable_thread_specific<std::unique_ptr<Worker>> workers;
  bool impulses_scaled_by_k;  // asked once: a later call's calling thread need own no Worker
};

Rollout::Rollout(std::shared_ptr<const Model> model, BatchOptions options)
    : model_(std::move(model)), options_(options) {
  if (!model_) throw BatchError("rollout: no model");
  if (options_.threads < 0) throw BatchError("rollout: threads must be >= 0 (0 = all)");
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

namespace {
/// A batch's message as the rollout's: "batch: " becomes "rollout: ", and "world i" (the
/// batch's word) "pair i".
BatchError as_rollout_error(const BatchError& e) {
  std::string what = e.what();
  if (what.rfind("batch: world ", 0) == 0) return BatchError("rollout: pair " + what.substr(13));
  if (what.rfind("batch: ", 0) == 0) return BatchError("rollout: " + what.substr(7));
  return e;
}
}  // namespace

/// Makes the batch for n pairs with these parameters varied (a new one only when n or the
/// paths change), sets its step size and stores every pair's values.
void Rollout::set_parameters(int n, double h, std::span<const RolloutParameter> parameters) {
  const Model& m = *model_;
  bool same = batch_ && stepper_ && batch_->size() == n && parameter_paths_.size() == parameters.size();
  for (std::size_t k = 0; same && k < parameters.size(); ++k) same = parameter_paths_[k] == parameters[k].path;
  if (!same) {
    std::vector<ParameterRef> refs;
    for (const RolloutParameter& p : parameters) {
      ParameterRef r;
      try {
        r = resolve_parameter(m, p.path, "parameters");  // what() names the path
      } catch (const SceneError& e) {
        throw BatchError(std::string("rollout: ") + e.what());
      }
      if (is_start_parameter(m, r))
        throw BatchError("rollout: parameter \"" + p.path +
                         "\" sets a world's start, and a rollout starts from the States given: set it in them");
      for (const ParameterRef& o : refs)
        if (o.same_as(r))
          throw BatchError("rollout: parameters \"" + o.path + "\" and \"" + p.path + "\" name the same value");
      refs.push_back(std::move(r));
    }
    // Built aside and kept only when all of it succeeds: after a throw the Rollout holds no
    // batch, and the next call builds one.
    stepper_.reset();
    batch_.reset();
    parameter_paths_.clear();
    std::unique_ptr<WorldBatch> batch;
    try {
      batch = std::make_unique<WorldBatch>(model_, n, std::move(refs));
    } catch (const BatchError& e) {  // a parameter this formulation cannot vary per world
      throw as_rollout_error(e);
    }
    batch->set_step_size(h);  // a scene may have no step.h
    auto stepper = std::make_unique<BatchStepper>(*batch, options_);
    command_.assign(static_cast<std::size_t>(std::max(m.n_a, 1)) * static_cast<std::size_t>(batch->row_stride()), 0.0);
    result_.next.assign(static_cast<std::size_t>(n), State{});
    for (State& s : result_.next) s = initial_state(m);  // sized once
    result_.contacts.assign(static_cast<std::size_t>(n), ContactSummary{});
    result_.status.assign(static_cast<std::size_t>(n), Status::not_run);
    result_.failed_step.assign(static_cast<std::size_t>(n), -1);
    batch_ = std::move(batch);
    stepper_ = std::move(stepper);
    for (const RolloutParameter& p : parameters) parameter_paths_.push_back(p.path);
  }
  batch_->set_step_size(h);
  for (std::size_t k = 0; k < parameters.size(); ++k) {
    const std::span<const double> v = parameters[k].values;
    if (v.size() != static_cast<std::size_t>(n))
      throw BatchError("rollout: parameter \"" + parameters[k].path + "\" has " + std::to_string(v.size()) +
                       " values for " + std::to_string(n) + " pairs");
    for (int i = 0; i < n; ++i) {
      try {
        batch_->set_parameter(static_cast<int>(k), i, v[static_cast<std::size_t>(i)]);
      } catch (const BatchError& e) {
        throw as_rollout_error(e);
      }
    }
  }
}

/// RolloutRecord::every_step_and_contacts: each pair on its own Stepper (what `quasistep
/// run` steps), recording what `run --forces` writes.
void Rollout::step_one_by_one(std::span<const double> actions, int steps, double* trajectory, bool contacts,
                              bool derivatives) {
  const Model& m = *model_;
  WorldBatch& b = *batch_;
  const int n = b.size(), na = m.n_a, nq = m.n_q(), ns = contacts ? m.n_slots() : 0, nx = result_.n_x;
  if (!one_by_one_) one_by_one_ = std::make_unique<OneByOne>(model_, options_);
  const std::size_t per_pair = static_cast<std::size_t>(steps) * static_cast<std::size_t>(ns);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  result_.contact_phi.assign(static_cast<std::size_t>(n) * per_pair, nan);
  result_.normal_impulse.assign(static_cast<std::size_t>(n) * per_pair, nan);
  result_.tangent_impulse.assign(static_cast<std::size_t>(n) * per_pair, nan);
  const std::size_t pair_steps = derivatives ? static_cast<std::size_t>(n) * static_cast<std::size_t>(steps) : 0;
  const auto a_size = static_cast<std::size_t>(nx) * static_cast<std::size_t>(nx);
  const auto b_size = static_cast<std::size_t>(nx) * static_cast<std::size_t>(na);
  result_.A.assign(pair_steps * a_size, nan);
  result_.B.assign(pair_steps * b_size, nan);
  result_.one_sided.assign(pair_steps, 0);
  const auto one_pair = [&](int i) {
    OneByOne::Worker& w = *one_by_one_->workers.local();
    WorldParams& p = w.params;
    p = b.shared_params();  // the batch's h; the same sizes, so no allocation after the first
    for (int k = 0; k < b.varied_count(); ++k) p.set(m, b.varied(k), b.param_value(k)[i]);  // none is a start
    p.commanded = true;
    p.command.resize(static_cast<std::size_t>(na));
    State& s = w.state;
    b.load_state(i, s);  // as the batch engine starts it (the memory started when the State had none)
    const auto u = static_cast<std::size_t>(i);
    const auto keep = [&](int l) {
      double* row = trajectory + (u * static_cast<std::size_t>(steps + 1) + static_cast<std::size_t>(l)) * nq;
      for (int d = 0; d < nq; ++d) row[d] = s.q[d];
    };
    keep(0);
    result_.status[u] = Status::solved;
    result_.failed_step[u] = -1;
    for (int l = 0; l < steps; ++l) {
      bool finite = true;
      for (int a = 0; a < na; ++a) {
        const double v = actions[(u * static_cast<std::size_t>(steps) + static_cast<std::size_t>(l)) * na + a];
        p.command[static_cast<std::size_t>(a)] = v;
        finite = finite && std::isfinite(v);
      }
      // A non-finite command fails the step before any solve, as on the batch engine.
      const Status st = !finite     ? Status::bad_input
                        : derivatives ? w.stepper->step(m, p, s, w.derivatives)
                                      : w.stepper->step(m, p, s);
      const std::size_t at_step = u * static_cast<std::size_t>(steps) + static_cast<std::size_t>(l);
      result_.step_status[at_step] = st;
      if (derivatives && st == Status::solved && w.derivatives.status == Status::solved) {
        // Row-major, as numpy reads them (Eigen's matrices are column-major).
        for (int r = 0; r < nx; ++r) {
          for (int c = 0; c < nx; ++c) result_.A[at_step * a_size + static_cast<std::size_t>(r * nx + c)] = w.derivatives.A(r, c);
          for (int c = 0; c < na; ++c) result_.B[at_step * b_size + static_cast<std::size_t>(r * na + c)] = w.derivatives.B(r, c);
        }
        result_.one_sided[at_step] = w.derivatives.degenerate ? 1 : 0;
      }
      if (finite && contacts) {
        const std::size_t at = u * per_pair + static_cast<std::size_t>(l) * ns;
        for (int k = 0; k < ns; ++k) {
          if (!w.stepper->active()[k]) continue;
          result_.contact_phi[at + k] = w.stepper->phi()[k];
          if (st != Status::solved) continue;
          result_.normal_impulse[at + k] = w.stepper->normal_impulse()[k];
          result_.tangent_impulse[at + k] = w.stepper->tangent_impulse()[k];
        }
      }
      if (st != Status::solved) {
        result_.status[u] = st;
        result_.failed_step[u] = l + 1;
        break;
      }
      keep(l + 1);
    }
    result_.next[u] = s;  // sized alike: no allocation
  };
  one_by_one_->arena.execute([&] { tbb::parallel_for(0, n, [&](int i) { one_pair(i); }); });
  result_.impulses_scaled_by_k = one_by_one_->impulses_scaled_by_k;
}

const RolloutResult& Rollout::propagate(std::span<const State> states, std::span<const double> actions, double h,
                                        int steps, RolloutRecord record, std::span<double> trajectory_out,
                                        std::span<const RolloutParameter> parameters, RolloutDerivatives derivatives) {
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

  const bool with_derivatives = derivatives == RolloutDerivatives::every_step;
  if (with_derivatives && record == RolloutRecord::final_state)
    throw BatchError("rollout: derivatives are kept per step: they need RolloutRecord::every_step (or "
                     "every_step_and_contacts)");
  if (with_derivatives && !formulation_info(base.formulation).has_derivatives)
    throw BatchError("rollout: " + std::string(to_string(base.formulation)) + " has no step derivatives");

  // A new batch only when the pair count or the parameter paths change (the only
  // allocations of a call); h is the batch's step size, the Model stays as it is.
  set_parameters(n, h, parameters);
  WorldBatch& b = *batch_;
  b.clear_outcomes();
  for (int i = 0; i < n; ++i) b.store_state(i, states[static_cast<std::size_t>(i)]);
  const int stride = b.row_stride();  // the batch's own rows' spacing (no cache-set aliasing)
  const int nq = base.n_q();
  result_.steps = steps;
  result_.n_q = nq;
  const bool contacts = record == RolloutRecord::every_step_and_contacts;
  const bool every_step = record == RolloutRecord::every_step || contacts;
  const bool one_by_one = contacts || with_derivatives;  // the single-world steppers' outputs
  result_.n_x = with_derivatives ? derivative_state_size(base) : 0;
  const std::size_t trajectory_size =
      every_step ? static_cast<std::size_t>(n) * static_cast<std::size_t>(steps + 1) * static_cast<std::size_t>(nq) : 0;
  if (!trajectory_out.empty() && trajectory_out.size() != trajectory_size)
    throw BatchError("rollout: trajectory_out has " + std::to_string(trajectory_out.size()) +
                     " entries, expected states x (steps + 1) x n_q = " + std::to_string(trajectory_size) +
                     (every_step ? std::string() : " (it is for RolloutRecord::every_step and every_step_and_contacts)"));
  // Sized per call: assign() reuses the capacity of an earlier call of the same shape.
  result_.trajectory.assign(trajectory_out.empty() ? trajectory_size : 0, std::numeric_limits<double>::quiet_NaN());
  double* const trajectory = trajectory_out.empty() ? result_.trajectory.data() : trajectory_out.data();
  std::fill(trajectory_out.begin(), trajectory_out.end(), std::numeric_limits<double>::quiet_NaN());
  result_.step_status.assign(every_step ? static_cast<std::size_t>(n) * static_cast<std::size_t>(steps) : 0,
                             Status::not_run);
  result_.n_slots = base.n_slots();
  result_.impulses_scaled_by_k = false;
  if (one_by_one) {
    step_one_by_one(actions, steps, trajectory, contacts, with_derivatives);
  } else {
    result_.contact_phi.clear();
    result_.normal_impulse.clear();
    result_.tangent_impulse.clear();
    result_.A.clear();
    result_.B.clear();
    result_.one_sided.clear();
  }
  // Row l of every pair that has not failed (a failed pair's rows stay NaN).
  const auto keep_states = [&](int l) {
    for (int i = 0; i < n; ++i) {
      if (b.failed(i)) continue;
      double* row = trajectory +
                    (static_cast<std::size_t>(i) * static_cast<std::size_t>(steps + 1) + static_cast<std::size_t>(l)) * nq;
      for (int d = 0; d < nq; ++d) row[d] = b.world_q(d)[i];
    }
  };
  if (every_step && !one_by_one) keep_states(0);
  for (int l = 0; l < steps && !one_by_one; ++l) {
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
    if (!one_by_one) {
      b.load_state(i, s);
      result_.status[u] = b.failed(i) ? b.world_status()[i] : Status::solved;
      result_.failed_step[u] = b.failed(i) ? b.world_failed_step()[i] + 1 : -1;
    }
    // The pair's own sizes and fixed poses where parameters vary them.
    WorldParams& p = summary_params_;
    p = b.shared_params();  // the same sizes after the first call: no allocation
    for (int k = 0; k < b.varied_count(); ++k) p.set(m, b.varied(k), b.param_value(k)[i]);
    forward_kinematics(m, p, s.q.data(), pose_.data(), frame_.data());
    ContactSummary c;
    c.min_distance = std::numeric_limits<double>::infinity();
    for (int k = 0; k < m.n_slots(); ++k) {
      const double phi = contact_frame(m, k, pose_.data(), p.scales()).phi;
      c.min_distance = std::min(c.min_distance, phi);
      c.touching += phi <= kRolloutTouchDistance ? 1 : 0;
    }
    result_.contacts[u] = c;
  }
  return result_;
}

}  // namespace qs

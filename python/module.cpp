// The compiled half of the Python package `quasistep` (python/quasistep/__init__.py holds the
// public names and their docstrings; docs/python.md). It is a thin layer: scenes, steps,
// rollouts and studies are the library's (docs/api.md), so every number is bitwise the one
// the CLI prints for the same world. Arrays cross the boundary as one block copy or none
// (float64 C-ordered input is read in place); the GIL is released while the library works;
// input errors raise ValueError with the CLI's one-line message.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "quasistep/batch/default_study.hpp"
#include "quasistep/batch/mc_summary.hpp"
#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/lcp_problem_file.hpp"
#include "quasistep/core/ucp_problem_file.hpp"
#include "quasistep/kernels/lane.hpp"
#include "quasistep/quasistep.hpp"
#include "tools/report/replay.hpp"

namespace py = pybind11;

namespace {

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

// quasistep.Status (an IntEnum defined in __init__.py), set once at import.
py::object g_status_type;

py::object status_object(qs::Status s) {
  return g_status_type ? g_status_type(static_cast<int>(s)) : py::int_(static_cast<int>(s));
}

[[noreturn]] void fail(const std::string& message) { throw py::value_error(message); }

std::string shape_text(const py::array& a) {
  std::ostringstream o;
  o << "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) o << (d ? ", " : "") << a.shape(d);
  o << (a.ndim() == 1 ? ",)" : ")");
  return o.str();
}

// The first non-finite entry of a block, or -1.
long first_non_finite(const double* v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i])) return static_cast<long>(i);
  return -1;
}

// Like the CLI's --threads: 0 is every core; more threads than 4x the cores (at least 64)
// never help and are capped. The limit holds while the returned control lives.
struct ThreadLimit {
  int threads = 0;  // capped; 0: every core
  std::optional<tbb::global_control> control;
};

int capped_threads(long threads) {
  if (threads < 0) fail("threads must be >= 0 (0: all cores), got " + std::to_string(threads));
  const long most = std::max(64L, 4L * static_cast<long>(std::thread::hardware_concurrency()));
  return static_cast<int>(std::min(threads, most));
}

void limit_threads(ThreadLimit& limit, int threads) {
  limit.threads = threads;
  if (threads > 0) limit.control.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
}

// ---- scenes and states ------------------------------------------------------------------------

// A loaded scene with the stepper and the rollout engine it lends its calls: each is used by
// one call at a time (a mutex each), so Python threads may share a Scene.
class PyScene {
 public:
  explicit PyScene(qs::Scene scene) : scene_(std::move(scene)) {}

  const qs::Scene& scene() const { return scene_; }
  const qs::Model& model() const { return *scene_.model; }

  // A State at q (the scene's start when q is None): t = 0, step 0, and the stepper's memory
  // started for that q (as initial_state does for the scene's own start).
  qs::State state_at(const std::optional<Array>& q) const {
    qs::State s = qs::initial_state(model());
    if (!q) return s;
    const int nq = model().n_q();
    if (q->ndim() != 1 || q->shape(0) != nq)
      fail("state has shape " + shape_text(*q) + "; the scene has nq = " + std::to_string(nq) + " DOFs (dof_names)");
    const long bad = first_non_finite(q->data(), static_cast<std::size_t>(nq));
    if (bad >= 0) fail("state[" + std::to_string(bad) + "] (" + model().dofs[bad].name + ") is not finite");
    std::memcpy(s.q.data(), q->data(), sizeof(double) * static_cast<std::size_t>(nq));
    qs::formulation_info(model().formulation).start_memory(model(), s.q.data(), s.memory.data());
    return s;
  }

  qs::State to_state(const py::object& obj) const {
    if (py::isinstance<qs::State>(obj)) {
      const qs::State& s = obj.cast<const qs::State&>();
      if (s.q.size() != model().n_q() || s.memory.size() != qs::step_memory_size(model()))
        fail("this State does not fit the scene (q has " + std::to_string(s.q.size()) + " entries and memory " +
             std::to_string(s.memory.size()) + "; the scene's " + std::to_string(model().n_q()) + " and " +
             std::to_string(qs::step_memory_size(model())) + "): a State of another scene?");
      return s;
    }
    return state_at(obj.cast<Array>());
  }

  py::tuple step(const py::object& state, const std::optional<Array>& command, std::optional<double> h,
                 bool derivatives) {
    const qs::Model& m = model();
    if (!qs::formulation_info(m.formulation).time_stepping)
      fail(scene_.source + ": model.formulation " + std::string(qs::formulation_info(m.formulation).name) +
           " is an instantaneous problem without a time step (solve it with solve_ucp)");
    if (derivatives && !qs::formulation_info(m.formulation).has_derivatives)
      fail(scene_.source + ": " + std::string(qs::formulation_info(m.formulation).name) + " has no step derivatives");
    qs::State s = to_state(state);
    std::vector<double> velocities;
    if (command) {
      if (command->ndim() != 1 || command->shape(0) != m.n_a)
        fail("command has shape " + shape_text(*command) + "; the scene has " + std::to_string(m.n_a) +
             " velocity-controlled joints (command_names)");
      velocities.assign(command->data(), command->data() + m.n_a);
      const long bad = first_non_finite(velocities.data(), velocities.size());
      if (bad >= 0) fail("command[" + std::to_string(bad) + "] (" + qs::command_names(m)[bad] + ") is not finite");
    }
    if (h && (!(*h > 0) || !std::isfinite(*h))) fail("h must be a finite number > 0");
    if (!h && !(m.step.h > 0)) fail(scene_.source + ": the scene has no step.h: pass h");
    qs::Status status;
    const int nx = qs::derivative_state_size(m), na = m.n_a;
    Array A(std::vector<py::ssize_t>{nx, nx}), B(std::vector<py::ssize_t>{nx, na});
    bool one_sided = false;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(step_mutex_);
      if (!stepper_) {  // both made before either is kept
        auto params = std::make_unique<qs::WorldParams>(m);
        auto stepper = qs::make_stepper(m);
        params_ = std::move(params);
        stepper_ = std::move(stepper);
      }
      params_->reset(m);
      if (h) params_->h = *h;
      params_->commanded = command.has_value();
      params_->command = velocities;
      status = derivatives ? stepper_->step(m, *params_, s, derivatives_) : stepper_->step(m, *params_, s);
      last_detail_ = stepper_->report().detail;
      if (derivatives) {
        // Row-major as numpy holds them; NaN where the step has none (last_step_detail says why).
        const bool have = status == qs::Status::solved && derivatives_.status == qs::Status::solved;
        const double nan = std::numeric_limits<double>::quiet_NaN();
        double* a = A.mutable_data();
        double* b = B.mutable_data();
        for (int r = 0; r < nx; ++r) {
          for (int c = 0; c < nx; ++c) a[r * nx + c] = have ? derivatives_.A(r, c) : nan;
          for (int c = 0; c < na; ++c) b[r * na + c] = have ? derivatives_.B(r, c) : nan;
        }
        one_sided = have && derivatives_.degenerate;
        if (status == qs::Status::solved && !have) last_detail_ = derivatives_.detail;
      }
    }
    if (!derivatives) return py::make_tuple(std::move(s), status_object(status));
    return py::make_tuple(std::move(s), status_object(status), A, B, one_sided);
  }

  /// Bundled (randomized) derivatives at (state, command): quasistep/batch/bundled.hpp.
  py::dict bundled(const py::object& state, const std::optional<Array>& command, long samples, double sigma,
                   std::uint64_t seed, long threads_arg) {
    const qs::Model& m = model();
    if (!qs::formulation_info(m.formulation).has_derivatives)
      fail(scene_.source + ": " + std::string(qs::formulation_info(m.formulation).name) + " has no step derivatives");
    if (samples < 1 || samples > std::numeric_limits<int>::max()) fail("samples must be a positive int");
    const int threads = capped_threads(threads_arg);
    qs::State s = to_state(state);
    qs::WorldParams p(m);
    if (command) {
      if (command->ndim() != 1 || command->shape(0) != m.n_a)
        fail("command has shape " + shape_text(*command) + "; the scene has " + std::to_string(m.n_a) +
             " velocity-controlled joints (command_names)");
      p.commanded = true;
      p.command.assign(command->data(), command->data() + m.n_a);
      const long bad = first_non_finite(p.command.data(), p.command.size());
      if (bad >= 0) fail("command[" + std::to_string(bad) + "] (" + qs::command_names(m)[bad] + ") is not finite");
    }
    if (!(m.step.h > 0)) fail(scene_.source + ": the scene has no step.h");
    qs::BundledDerivatives r;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(bundled_mutex_);
      if (!bundled_ || bundled_threads_ != threads) {
        bundled_ = std::make_unique<qs::BundledStep>(scene_.model, qs::BatchOptions{.threads = threads});
        bundled_threads_ = threads;
      }
      r = bundled_->compute(s, p, {.samples = static_cast<int>(samples), .sigma = sigma, .seed = seed});
    }
    if (r.status == qs::Status::bad_input) fail(r.detail);
    const auto matrix = [](const Eigen::MatrixXd& a) {
      Array out(std::vector<py::ssize_t>{a.rows(), a.cols()});
      for (Eigen::Index i = 0; i < a.rows(); ++i)
        for (Eigen::Index j = 0; j < a.cols(); ++j) out.mutable_data()[i * a.cols() + j] = a(i, j);
      return out;
    };
    py::dict d;
    d["status"] = status_object(r.status);
    d["detail"] = r.detail;
    d["used"] = r.used;
    d["failed"] = r.failed;
    if (r.status == qs::Status::solved) {
      d["A1"] = matrix(r.A1);
      d["A1_error"] = matrix(r.A1_error);
      d["B1"] = matrix(r.B1);
      d["B1_error"] = matrix(r.B1_error);
      d["B0"] = matrix(r.B0);
      d["B0_error"] = matrix(r.B0_error);
      d["next"] = Array(r.next.size(), r.next.data());
    }
    return d;
  }

  std::string last_detail() {
    py::gil_scoped_release release;  // another thread's step may hold the mutex
    std::lock_guard<std::mutex> lock(step_mutex_);
    return last_detail_;
  }

  py::tuple rollout(const py::object& starts, const std::optional<Array>& commands, std::optional<long> steps,
                    std::optional<double> h, long threads, bool trajectory, bool return_states, const py::dict& params,
                    bool forces, bool derivatives);

 private:
  qs::Scene scene_;
  std::mutex step_mutex_, rollout_mutex_;
  std::unique_ptr<qs::Stepper> stepper_;
  std::unique_ptr<qs::WorldParams> params_;
  qs::StepDerivatives derivatives_;
  std::string last_detail_;
  std::mutex bundled_mutex_;
  std::unique_ptr<qs::BundledStep> bundled_;
  int bundled_threads_ = -1;
  std::unique_ptr<qs::Rollout> rollout_;
};

std::unique_ptr<PyScene> load(const std::string& text_or_path, std::optional<double> log_barrier_weight) {
  // A JSON document starts with '{' (after blanks); anything else is a path.
  const auto first = text_or_path.find_first_not_of(" \t\r\n");
  const bool document = first != std::string::npos && text_or_path[first] == '{';
  qs::Scene scene;
  try {
    scene = document ? qs::parse_scene(text_or_path, "<string>") : qs::load_scene_file(text_or_path);
    // The smoothed step (docs/anitescu.md) without editing the file.
    if (log_barrier_weight) scene.model = qs::with_log_barrier_weight(*scene.model, *log_barrier_weight);
  } catch (const qs::SceneError& e) {
    fail((document ? std::string() : text_or_path + ": ") + e.what());  // as the CLI names the file
  }
  return std::make_unique<PyScene>(std::move(scene));
}

// The scene's velocity commands for `steps` steps of size h from t0, as its steppers
// evaluate them: each joint's schedule at the step's midpoint, the clock advanced by
// repeated addition as State::t is (core/stepper.cpp).
std::vector<double> scheduled_commands(const qs::Model& m, double h, int steps, double t0) {
  std::vector<double> out(static_cast<std::size_t>(steps) * static_cast<std::size_t>(m.n_a));
  double t = t0;
  for (int l = 0; l < steps; ++l) {
    const double t_mid = t + 0.5 * h;
    for (const qs::Joint& j : m.joints)
      if (j.control == qs::Control::velocity)
        out[static_cast<std::size_t>(l) * m.n_a + static_cast<std::size_t>(j.dof - m.n_u)] = j.command(t_mid);
    t += h;
  }
  return out;
}

// Per-world parameter values {path: (N,) array or one number for every world} for N worlds,
// as the library's RolloutParameters (the arrays kept alive in `keep`).
std::vector<qs::RolloutParameter> rollout_parameters(const py::dict& params, long n, std::vector<Array>& keep) {
  std::vector<qs::RolloutParameter> out;
  for (const auto& [key, value] : params) {
    if (!py::isinstance<py::str>(key)) fail("params: keys are parameter paths (str), got " + py::repr(key).cast<std::string>());
    const std::string path = key.cast<std::string>();
    Array a;
    try {
      a = value.cast<Array>();
    } catch (const py::cast_error&) {
      fail("params[\"" + path + "\"] must be a number or an array of numbers");
    }
    if (a.ndim() == 0) {  // one value for every world
      Array all(n);
      std::fill(all.mutable_data(), all.mutable_data() + n, *a.data());
      a = all;
    }
    if (a.ndim() != 1 || a.shape(0) != n)
      fail("params[\"" + path + "\"] has shape " + shape_text(a) + "; expected one value per world, (" + std::to_string(n) +
           ",)");
    keep.push_back(a);
    out.push_back({path, std::span<const double>(a.data(), static_cast<std::size_t>(n))});
  }
  return out;
}

// RolloutResult's contact arrays as the CLI's `run --forces` columns: a dict of (N, T,
// n_slots) arrays (phi, normal and tangent impulse, active) and each slot's pair name.
py::dict forces_dict(const qs::Model& m, const qs::RolloutResult& r, long n) {
  const std::vector<py::ssize_t> shape = {n, r.steps, r.n_slots};
  const auto array = [&](const std::vector<double>& v) {
    Array a(shape);
    std::copy(v.begin(), v.end(), a.mutable_data());
    return a;
  };
  py::array_t<bool> active(shape);
  std::transform(r.contact_phi.begin(), r.contact_phi.end(), active.mutable_data(),
                 [](double phi) { return !std::isnan(phi); });
  const std::string k = r.impulses_scaled_by_k ? "_times_k" : "";
  std::vector<std::string> pair;
  for (int i = 0; i < m.n_slots(); ++i) pair.push_back(m.pair_name(m.slots[i].pair));
  py::dict d;
  d["phi"] = array(r.contact_phi);
  d[py::str("normal_impulse" + k)] = array(r.normal_impulse);
  d[py::str("tangent_impulse" + k)] = array(r.tangent_impulse);
  d["active"] = active;
  d["pair"] = pair;
  return d;
}

py::tuple PyScene::rollout(const py::object& starts_arg, const std::optional<Array>& commands,
                           std::optional<long> steps, std::optional<double> h_arg, long threads_arg, bool trajectory,
                           bool return_states, const py::dict& params, bool forces, bool derivatives) {
  const qs::Model& m = model();
  if (derivatives && !qs::formulation_info(m.formulation).has_derivatives)
    fail(scene_.source + ": " + std::string(qs::formulation_info(m.formulation).name) + " has no step derivatives");
  const int nq = m.n_q(), na = m.n_a;
  constexpr long kMostSteps = std::numeric_limits<int>::max() - 1;  // steps + 1 rows must be an int
  const double h = h_arg.value_or(m.step.h);
  if (!(h > 0) || !std::isfinite(h))
    fail(h_arg ? "h must be a finite number > 0" : scene_.source + ": the scene has no step.h: pass h");
  if (steps && (*steps < 0 || *steps > kMostSteps))
    fail("steps must be in 0.." + std::to_string(kMostSteps) + ", got " + std::to_string(*steps));
  const int threads = capped_threads(threads_arg);

  // The worlds' starts: States (their q, t and memory), or configurations (N, nq) / (nq,)
  // started afresh, or the scene's start. One start is shared by every commanded world.
  std::vector<qs::State> starts;
  if (py::isinstance<py::list>(starts_arg) || py::isinstance<py::tuple>(starts_arg) ||
      py::isinstance<qs::State>(starts_arg)) {
    const py::list items = py::isinstance<qs::State>(starts_arg) ? py::list() : py::list(starts_arg);
    if (py::isinstance<qs::State>(starts_arg)) starts.push_back(to_state(starts_arg));
    for (const py::handle item : items) {
      if (!py::isinstance<qs::State>(item)) fail("q0: a list must hold States (Scene.state, Scene.step), or pass an array");
      starts.push_back(to_state(py::reinterpret_borrow<py::object>(item)));
    }
    if (starts.empty()) fail("q0 is an empty list: no world to roll out");
  } else if (!starts_arg.is_none()) {
    const Array q0 = starts_arg.cast<Array>();
    long n = -1;
    if (q0.ndim() == 1) n = 1;
    else if (q0.ndim() == 2) n = static_cast<long>(q0.shape(0));
    if (n < 1 || q0.shape(q0.ndim() - 1) != nq)
      fail("q0 has shape " + shape_text(q0) + "; expected (N, nq) with N >= 1 and nq = " + std::to_string(nq));
    const long bad = first_non_finite(q0.data(), static_cast<std::size_t>(n) * nq);
    if (bad >= 0)
      fail("q0[" + std::to_string(bad / nq) + ", " + std::to_string(bad % nq) + "] (" + m.dofs[bad % nq].name +
           ") is not finite");
    const qs::State start = qs::initial_state(m);
    starts.assign(static_cast<std::size_t>(n), start);
    for (long i = 0; i < n; ++i) {
      qs::State& st = starts[static_cast<std::size_t>(i)];
      std::memcpy(st.q.data(), q0.data() + i * nq, sizeof(double) * static_cast<std::size_t>(nq));
      qs::formulation_info(m.formulation).start_memory(m, st.q.data(), st.memory.data());
    }
  }
  const bool one_start = starts.size() <= 1;
  // Without a world count from q0 or commands, per-world parameters give it (one start is
  // then every world's, as it is for per-world commands).
  long params_n = -1;
  for (const auto& item : params) {
    const py::array a = py::array::ensure(item.second);
    if (a && a.ndim() == 1 && params_n < 0) params_n = static_cast<long>(a.shape(0));
  }

  // The commands: (N, T, n_a) per world, (T, n_a) for every world, or the scene's schedules.
  long n = starts.empty() ? -1 : static_cast<long>(starts.size());
  if (one_start && params_n > 1 && !(commands && commands->ndim() == 3)) n = params_n;
  int t_steps = 0;
  const double* actions = nullptr;
  std::vector<double> own;  // commands expanded or evaluated here
  if (commands) {
    const py::ssize_t nd = commands->ndim();
    if ((nd != 2 && nd != 3) || commands->shape(nd - 1) != na)
      fail("commands has shape " + shape_text(*commands) + "; expected (N, T, n_commands) or (T, n_commands) with "
           "n_commands = " + std::to_string(na) + " (command_names)");
    if (commands->shape(nd - 2) > kMostSteps)
      fail("commands holds " + std::to_string(commands->shape(nd - 2)) + " steps; at most " + std::to_string(kMostSteps));
    t_steps = static_cast<int>(commands->shape(nd - 2));
    if (steps && *steps != t_steps)
      fail("commands holds " + std::to_string(t_steps) + " steps and steps = " + std::to_string(*steps));
    if (nd == 3) {
      const long nc = static_cast<long>(commands->shape(0));
      if (nc < 1) fail("commands has shape " + shape_text(*commands) + ": no world");
      if (n < 0 || (one_start && nc > 1)) n = nc;  // one start for every commanded world
      if (nc != n) fail("commands has " + std::to_string(nc) + " worlds and q0 " + std::to_string(n));
    }
    if (n < 0) n = params_n > 0 ? params_n : 1;
    const std::size_t per_world = static_cast<std::size_t>(t_steps) * static_cast<std::size_t>(na);
    const long bad = first_non_finite(commands->data(), (nd == 3 ? static_cast<std::size_t>(n) : 1) * per_world);
    if (bad >= 0) {
      const long world = nd == 3 ? bad / static_cast<long>(per_world) : 0, rest = bad % static_cast<long>(per_world);
      fail("commands[" + (nd == 3 ? std::to_string(world) + ", " : std::string()) + std::to_string(rest / na) + ", " +
           std::to_string(rest % na) + "] is not finite");
    }
    if (nd == 3) {
      actions = commands->data();  // read in place
    } else {
      own.resize(static_cast<std::size_t>(n) * per_world);
      for (long i = 0; i < n; ++i) std::memcpy(own.data() + i * per_world, commands->data(), sizeof(double) * per_world);
      actions = own.data();
    }
  } else {
    if (n < 0) n = params_n > 0 ? params_n : 1;
    if (!steps && m.step.steps <= 0) fail(scene_.source + ": the scene has no step.steps: pass steps or commands");
    t_steps = static_cast<int>(steps.value_or(m.step.steps));
  }
  if (starts.empty()) starts.push_back(qs::initial_state(m));
  if (one_start && n > 1) starts.assign(static_cast<std::size_t>(n), qs::State(starts[0]));
  if (!commands) {
    // Each world's schedules from its own time (a State may start later than t = 0).
    const std::size_t per_world = static_cast<std::size_t>(t_steps) * static_cast<std::size_t>(na);
    own.resize(static_cast<std::size_t>(n) * per_world);
    for (long i = 0; i < n; ++i) {
      const double t0 = starts[static_cast<std::size_t>(i)].t;
      if (i > 0 && t0 == starts[static_cast<std::size_t>(i - 1)].t) {
        std::copy_n(own.begin() + static_cast<std::ptrdiff_t>((i - 1) * per_world), per_world,
                    own.begin() + static_cast<std::ptrdiff_t>(i * per_world));
      } else {
        const std::vector<double> one = scheduled_commands(m, h, t_steps, t0);
        std::copy(one.begin(), one.end(), own.begin() + static_cast<std::ptrdiff_t>(i * per_world));
      }
    }
    actions = own.data();
  }

  std::vector<Array> kept;
  const std::vector<qs::RolloutParameter> parameters = rollout_parameters(params, n, kept);

  // The engine writes every state straight into the result array (with forces every state
  // is recorded, and the last ones taken from them without trajectory).
  Array states(trajectory ? std::vector<py::ssize_t>{n, t_steps + 1, nq} : std::vector<py::ssize_t>{n, nq});
  py::array_t<std::int8_t> status(n);
  py::array_t<std::int32_t> failed(n);
  double* out = states.mutable_data();
  std::int8_t* st = status.mutable_data();
  std::int32_t* fs = failed.mutable_data();
  const std::size_t out_size = static_cast<std::size_t>(states.size());
  // With return_states, each world's State after the rollout (or before its failed step):
  // q, t, step and the stepper's memory, so that a next rollout continues it exactly.
  std::vector<qs::State> finals;
  py::object contacts = py::none();
  // With derivatives, every step's A (N, T, nx, nx), B (N, T, nx, n_a) and one-sided flags.
  const int nx = derivatives ? qs::derivative_state_size(m) : 0;
  Array A(std::vector<py::ssize_t>{derivatives ? n : 0, t_steps, nx, nx});
  Array B(std::vector<py::ssize_t>{derivatives ? n : 0, t_steps, nx, na});
  py::array_t<bool> one_sided(std::vector<py::ssize_t>{derivatives ? n : 0, t_steps});
  {
    py::gil_scoped_release release;
    ThreadLimit limit;
    limit_threads(limit, threads);
    std::lock_guard<std::mutex> lock(rollout_mutex_);
    if (!rollout_) rollout_ = std::make_unique<qs::Rollout>(scene_.model);
    const qs::RolloutRecord record = forces                      ? qs::RolloutRecord::every_step_and_contacts
                                     : trajectory || derivatives ? qs::RolloutRecord::every_step
                                                                 : qs::RolloutRecord::final_state;
    const qs::RolloutResult* result = nullptr;
    try {
      result = &rollout_->propagate(
          starts, std::span<const double>(actions, static_cast<std::size_t>(n) * t_steps * na), h, t_steps, record,
          trajectory ? std::span<double>(out, out_size) : std::span<double>(), parameters,
          derivatives ? qs::RolloutDerivatives::every_step : qs::RolloutDerivatives::none);
    } catch (const qs::BatchError& e) {
      // The library's rollout numbers its pairs; here they are the worlds.
      std::string what = e.what();
      const std::string pair = "rollout: pair ";
      if (what.rfind(pair, 0) == 0) what = "rollout: world " + what.substr(pair.size());
      throw qs::BatchError(what);
    }
    const qs::RolloutResult& r = *result;
    if (!trajectory) {
      for (long i = 0; i < n; ++i) {
        // A failed world's state after the whole rollout does not exist: NaN, as its
        // trajectory's rows after the failed step.
        const bool ok = r.status[static_cast<std::size_t>(i)] == qs::Status::solved;
        for (int k = 0; k < nq; ++k)
          out[i * nq + k] = ok ? r.next[static_cast<std::size_t>(i)].q[k] : std::numeric_limits<double>::quiet_NaN();
      }
    }
    for (long i = 0; i < n; ++i) {
      st[i] = static_cast<std::int8_t>(r.status[static_cast<std::size_t>(i)]);
      fs[i] = r.failed_step[static_cast<std::size_t>(i)];
    }
    if (return_states) finals.assign(r.next.begin(), r.next.end());
    if (derivatives) {  // laid out as the arrays: one copy each
      std::copy(r.A.begin(), r.A.end(), A.mutable_data());
      std::copy(r.B.begin(), r.B.end(), B.mutable_data());
      std::copy(r.one_sided.begin(), r.one_sided.end(), one_sided.mutable_data());
    }
    if (forces) {
      py::gil_scoped_acquire acquire;  // numpy arrays are made with the GIL held
      contacts = forces_dict(m, r, n);
    }
  }
  py::object final_states = py::none();
  if (return_states) {
    py::list l;
    for (qs::State& s : finals) l.append(py::cast(std::move(s)));
    final_states = l;
  }
  if (!derivatives) return py::make_tuple(states, status, failed, final_states, contacts, py::none());
  return py::make_tuple(states, status, failed, final_states, contacts, py::make_tuple(A, B, one_sided));
}

// The replay page of one world's rows (quasistep run --html's page): q (rows, nq) at times t
// (rows,), each step's impulses from the forces arrays (steps, n_slots) or none, the world's
// parameter values, the "stopped" line. Returns the page.
std::string render(const PyScene& sc, const Array& q, const Array& t, const std::optional<Array>& normal,
                   const std::optional<Array>& tangent, bool scaled_by_k, const py::dict& params,
                   const std::string& stopped, const std::string& frames_from) {
  const qs::Model& m = sc.model();
  const int nq = m.n_q(), ns = m.n_slots();
  if (q.ndim() != 2 || q.shape(1) != nq || q.shape(0) < 1)
    fail("states has shape " + shape_text(q) + "; expected (rows, nq) with rows >= 1 and nq = " + std::to_string(nq));
  const long rows = static_cast<long>(q.shape(0));
  if (t.ndim() != 1 || t.shape(0) != rows) fail("times do not match the states' rows");
  const long bad = first_non_finite(q.data(), static_cast<std::size_t>(rows) * nq);
  if (bad >= 0)
    fail("states[" + std::to_string(bad / nq) + ", " + std::to_string(bad % nq) + "] (" + m.dofs[bad % nq].name +
         ") is not finite");
  if (static_cast<double>(rows) * static_cast<double>(std::max<std::size_t>(m.bodies.size(), 1)) >
      static_cast<double>(qs::io::kMaxReplayBodyRows))
    fail(std::to_string(rows) + " rows of " + std::to_string(m.bodies.size()) +
         " bodies is more than one replay draws (rows x bodies <= " + std::to_string(qs::io::kMaxReplayBodyRows) + ")");
  qs::io::ReplayInput r;
  r.frames_from = frames_from;
  r.stopped = stopped;
  r.t.assign(t.data(), t.data() + rows);
  r.q.assign(q.data(), q.data() + static_cast<std::size_t>(rows) * nq);
  if (normal && tangent) {
    for (const Array* a : {&*normal, &*tangent})
      if (a->ndim() != 2 || a->shape(1) != ns || a->shape(0) < rows - 1)
        fail("forces arrays have shape " + shape_text(*a) + "; expected (steps, n_slots) with steps >= " +
             std::to_string(rows - 1) + " and n_slots = " + std::to_string(ns));
    r.has_forces = true;
    r.scaled_by_k = scaled_by_k;
    // Steps 1 .. rows - 1 moved the rows drawn; a step with no impulses (NaN) was not solved
    // or the slot not active, as the forces CSV has no row for it.
    for (long l = 1; l < rows; ++l)
      for (int k = 0; k < ns; ++k) {
        const double pn = normal->data()[(l - 1) * ns + k], pt = tangent->data()[(l - 1) * ns + k];
        if (std::isnan(pn)) continue;
        r.impulses.push_back({static_cast<int>(l), k, pn, pt});
      }
  }
  if (params.size() > 0) {
    // Checked as a rollout checks them (one world of a batch), then drawn.
    std::vector<qs::ParameterRef> refs;
    std::vector<double> values;
    for (const auto& [key, value] : params) {
      const std::string path = key.cast<std::string>();
      refs.push_back(qs::resolve_parameter(m, path, "params"));
      values.push_back(value.cast<double>());
    }
    qs::WorldBatch one(sc.scene().model, 1, refs);
    qs::WorldParams p(m);
    for (std::size_t k = 0; k < refs.size(); ++k) {
      try {
        one.set_parameter(static_cast<int>(k), 0, values[k]);
      } catch (const qs::BatchError& e) {
        std::string what = e.what();  // "batch: world 0, parameter ...": one world here
        const std::string prefix = "batch: world 0, ";
        fail("params: " + (what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what));
      }
      p.set(m, refs[k], values[k]);
    }
    r.params = std::move(p);
  }
  std::ostringstream page;
  qs::io::write_replay_html(sc.scene(), r, qs::io::provenance_line(sc.scene()), page);
  return page.str();
}

// ---- Monte Carlo -------------------------------------------------------------------------------

struct PyMc {
  qs::McRun run;
  qs::McSummary summary;
  std::string scene_source, description;
  py::object samples;  // the per-sample arrays, made at the first access

  std::string text() const {
    std::ostringstream o;
    qs::print_mc_summary(run.study, summary, o);
    return o.str();
  }
};

PyMc mc(const PyScene* scene, long samples, std::uint64_t seed, long threads_arg, int trajectories) {
  const int threads = capped_threads(threads_arg);
  if (samples < 1) fail("samples " + std::to_string(samples) + ": a study needs at least 1 sample");
  if (trajectories < 0) fail("trajectories must be >= 0");
  std::optional<PyScene> built_in;
  if (!scene) {
    built_in.emplace(qs::parse_scene(qs::kDefaultStudy, std::string("built-in ") + qs::kDefaultStudyName));
    scene = &*built_in;
  }
  const qs::Scene& sc = scene->scene();
  const std::string why = qs::mc_unsupported_reason(sc);
  if (!why.empty()) fail(sc.source + ": " + why);
  PyMc r;
  r.scene_source = sc.source;
  r.description = sc.description;
  {
    py::gil_scoped_release release;
    ThreadLimit limit;
    limit_threads(limit, threads);
    qs::McOptions o;
    o.samples = samples;
    o.seed = seed;
    o.threads = threads;
    o.trajectories = trajectories;
    try {
      r.run = qs::run_monte_carlo(sc, o);
    } catch (const qs::BatchError& e) {
      throw py::value_error(sc.source + ": " + e.what());  // as the CLI words it
    }
    r.summary = qs::summarize(r.run.study, r.run.records);
  }
  return r;
}

py::object mc_samples(PyMc& r) {
  if (r.samples) return r.samples;
  const qs::McRecords& rec = r.run.records;
  const long n = rec.size();
  const int np = rec.parameter_count;
  py::dict d;
  py::array_t<std::int64_t> sample(n);
  std::copy(rec.sample.begin(), rec.sample.end(), sample.mutable_data());
  d["sample"] = sample;
  for (int p = 0; p < np; ++p) {
    py::array_t<double> v(n);
    double* out = v.mutable_data();
    for (long i = 0; i < n; ++i) out[i] = rec.values[static_cast<std::size_t>(i * np + p)];
    d[py::str(r.run.study.parameters[static_cast<std::size_t>(p)])] = v;
  }
  // Words as the CSV writes them, in numpy string arrays (compare with ==).
  std::vector<std::string> outcome(static_cast<std::size_t>(n)), status(static_cast<std::size_t>(n));
  for (long i = 0; i < n; ++i) {
    outcome[static_cast<std::size_t>(i)] = std::string(qs::to_string(rec.outcome[static_cast<std::size_t>(i)]));
    status[static_cast<std::size_t>(i)] = std::string(qs::to_string(rec.status[static_cast<std::size_t>(i)]));
  }
  const py::module_ np_ = py::module_::import("numpy");
  d["outcome"] = np_.attr("array")(outcome, "U");
  const char* pose[] = {"x", "y", "theta"};
  for (int k = 0; k < 3; ++k) {
    py::array_t<double> v(n);
    double* out = v.mutable_data();
    for (long i = 0; i < n; ++i) out[i] = rec.final_pose[static_cast<std::size_t>(i)][static_cast<std::size_t>(k)];
    d[pose[k]] = v;
  }
  py::array_t<std::int32_t> failed(n);
  std::copy(rec.failed_step.begin(), rec.failed_step.end(), failed.mutable_data());
  d["failed_step"] = failed;
  d["status"] = np_.attr("array")(status, "U");
  r.samples = d;
  return d;
}

// ---- single problems ------------------------------------------------------------------------------

qs::LcpProblem lcp_problem(const Array& M, const Array& q, int free);

py::tuple solve_lcp(const Array& M, const Array& q, int free) {
  const qs::LcpProblem p = lcp_problem(M, q, free);
  const py::ssize_t n = q.shape(0);
  qs::LcpSolution s;
  {
    py::gil_scoped_release release;
    s = qs::solve_lcp(p);
  }
  if (s.status != qs::Status::solved) return py::make_tuple(status_object(s.status), py::none(), py::none());
  Array z(n), w(n);
  std::memcpy(z.mutable_data(), s.z.data(), sizeof(double) * static_cast<std::size_t>(n));
  std::memcpy(w.mutable_data(), s.w.data(), sizeof(double) * static_cast<std::size_t>(n));
  return py::make_tuple(status_object(s.status), z, w);
}

/// `quasistep lcp --method exact|auto`'s JSON line for arrays.
std::string solve_lcp_json(const Array& M, const Array& q, int free, const std::string& method, long node_limit) {
  if (method != "exact" && method != "auto") fail("method must be lemke, exact or auto, got " + method);
  if (node_limit < 1) fail("node_limit must be >= 1, got " + std::to_string(node_limit));
  const qs::LcpProblem p = lcp_problem(M, q, free);
  qs::LcpSolveOptions o;
  o.method = method;
  o.node_limit = node_limit;
  py::gil_scoped_release release;
  return qs::solve_lcp_to_json(p, o);
}

/// The checked problem (the one-line errors of the CLI's reader).
qs::LcpProblem lcp_problem(const Array& M, const Array& q, int free) {
  if (q.ndim() != 1 || q.shape(0) < 1) fail("q has shape " + shape_text(q) + "; expected (n,) with n >= 1");
  const py::ssize_t n = q.shape(0);
  if (n > qs::kLcpCapacity)
    fail("q has " + std::to_string(n) + " entries; this build solves LCPs up to n = " + std::to_string(qs::kLcpCapacity));
  if (M.ndim() != 2 || M.shape(0) != n || M.shape(1) != n)
    fail("M has shape " + shape_text(M) + "; expected (" + std::to_string(n) + ", " + std::to_string(n) + ") for q's n");
  if (free < 0 || free > n) fail("free must be in 0.." + std::to_string(n) + ", got " + std::to_string(free));
  const long bad_q = first_non_finite(q.data(), static_cast<std::size_t>(n));
  if (bad_q >= 0) fail("q[" + std::to_string(bad_q) + "] is not finite");
  const long bad_m = first_non_finite(M.data(), static_cast<std::size_t>(n * n));
  if (bad_m >= 0) fail("M[" + std::to_string(bad_m / n) + ", " + std::to_string(bad_m % n) + "] is not finite");
  qs::LcpProblem p;
  p.M = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(M.data(), n, n);
  p.q = Eigen::Map<const Eigen::VectorXd>(q.data(), n);
  p.free = free;
  return p;
}

std::string solve_ucp_json(const std::string& problem_json, const std::string& method, bool all, long node_limit) {
  if (method != "bilinear" && method != "exact" && method != "auto")
    fail("method must be bilinear, exact or auto, got " + method);
  if (node_limit < 1) fail("node_limit must be >= 1");
  qs::UcpSolveOptions o;
  o.method = method;
  o.all = all;
  o.node_limit = node_limit;
  const qs::UcpData data = qs::read_ucp_problem(problem_json);
  py::gil_scoped_release release;
  return qs::solve_ucp_to_json(data, o);
}

}  // namespace

PYBIND11_MODULE(_quasistep, m) {
  m.doc() = "The compiled core of the quasistep package; use `import quasistep`.";

  // Input errors: the library's one-line messages, as ValueError.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const qs::JsonInputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const qs::BatchError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  m.attr("version") = std::string(qs::kVersion);
  m.attr("lane_width") = qs::kLaneWidth;
  std::vector<std::string> names;
  for (int s = 0; s <= static_cast<int>(qs::Status::not_run); ++s) names.emplace_back(qs::to_string(static_cast<qs::Status>(s)));
  m.attr("status_names") = names;
  m.def("_set_status_type", [](py::object t) { g_status_type = std::move(t); });
  // The IntEnum is released before the interpreter ends.
  m.add_object("_cleanup", py::capsule([] { g_status_type = py::object(); }));

  py::class_<qs::State>(m, "State", R"doc(One world's state: q (the DOFs in Scene.dof_names order), t, step, and the
stepper's memory carried from one step to the next. A value: Scene.step returns a new one.
Make one at a configuration with Scene.state(q).)doc")
      .def_property_readonly(
          "q", [](const qs::State& s) { return Array(s.q.size(), s.q.data()); },
          "the configuration, a copy (nq,); Scene.state(q) makes a State at another q")
      .def_readonly("t", &qs::State::t, "time, s")
      .def_readonly("step", &qs::State::step, "steps taken")
      .def_property_readonly(
          "memory", [](const qs::State& s) { return Array(s.memory.size(), s.memory.data()); },
          "what the stepper carries between steps (a copy; empty for most formulations)")
      .def("copy", [](const qs::State& s) { return s; })
      .def("__copy__", [](const qs::State& s) { return s; })
      .def("__deepcopy__", [](const qs::State& s, py::dict) { return s; }, py::arg("memo"))
      .def("__eq__", [](const qs::State& a, const qs::State& b) {
        const auto same = [](const Eigen::VectorXd& x, const Eigen::VectorXd& y) {
          return x.size() == y.size() && std::equal(x.data(), x.data() + x.size(), y.data(), [](double u, double v) {
                   return u == v || (std::isnan(u) && std::isnan(v));
                 });
        };
        return a.t == b.t && a.step == b.step && same(a.q, b.q) && same(a.memory, b.memory);
      })
      .def("__array__",
           [](const qs::State& s, py::object dtype, py::object) {
             py::object a = Array(s.q.size(), s.q.data());
             return dtype.is_none() ? a : a.attr("astype")(dtype);
           },
           py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def(py::pickle(
          [](const qs::State& s) {
            return py::make_tuple(s.t, s.step, Array(s.q.size(), s.q.data()), Array(s.memory.size(), s.memory.data()));
          },
          [](const py::tuple& t) {
            if (t.size() != 4) fail("not a pickled quasistep.State");
            qs::State s;
            s.t = t[0].cast<double>();
            s.step = t[1].cast<int>();
            const Array q = t[2].cast<Array>(), mem = t[3].cast<Array>();
            s.q = Eigen::Map<const Eigen::VectorXd>(q.data(), q.size());
            s.memory = Eigen::Map<const Eigen::VectorXd>(mem.data(), mem.size());
            return s;
          }))
      .def("__repr__", [](const qs::State& s) {
        std::ostringstream o;
        o.precision(6);
        o << "State(step=" << s.step << ", t=" << s.t << ", q=[";
        for (Eigen::Index i = 0; i < s.q.size(); ++i) o << (i ? ", " : "") << s.q[i];
        o << "])";
        return o.str();
      });

  py::class_<PyScene>(m, "Scene", R"doc(A loaded scene (quasistep.load): its DOFs and commands, its start, and one-world
steps. Its step() calls, and its rollouts, each run one at a time.)doc")
      .def_property_readonly("nq", [](const PyScene& s) { return s.model().n_q(); })
      .def_property_readonly("dof_names",
                             [](const PyScene& s) {
                               std::vector<std::string> v;
                               for (const qs::Dof& d : s.model().dofs) v.push_back(d.name);
                               return v;
                             })
      .def_property_readonly("command_names", [](const PyScene& s) { return qs::command_names(s.model()); })
      .def_property_readonly("h", [](const PyScene& s) -> py::object {
        return s.model().step.h > 0 ? py::object(py::float_(s.model().step.h)) : py::none();
      })
      .def_property_readonly("steps", [](const PyScene& s) { return s.model().step.steps; })
      .def_property_readonly("description", [](const PyScene& s) { return s.scene().description; })
      .def_property_readonly("name", [](const PyScene& s) { return s.model().name; })
      .def_property_readonly("source", [](const PyScene& s) { return s.scene().source; })
      .def_property_readonly("hash", [](const PyScene& s) { return s.scene().hash; })
      .def_property_readonly("formulation",
                             [](const PyScene& s) { return std::string(qs::formulation_info(s.model().formulation).name); })
      .def_property_readonly("is_study", [](const PyScene& s) { return qs::mc_unsupported_reason(s.scene()).empty(); })
      .def("initial_state",
           [](const PyScene& s) {
             const qs::State st = qs::initial_state(s.model());
             return Array(st.q.size(), st.q.data());
           })
      .def("_state", &PyScene::state_at, py::arg("q") = py::none())
      .def("_step", &PyScene::step, py::arg("state"), py::arg("command") = py::none(), py::arg("h") = py::none(),
           py::arg("derivatives") = false)
      .def_property_readonly("state_names",
                             [](const PyScene& s) { return qs::derivative_state_names(s.model()); })
      .def("_bundled", &PyScene::bundled, py::arg("state"), py::arg("command"), py::arg("samples"), py::arg("sigma"),
           py::arg("seed"), py::arg("threads"))
      .def("last_step_detail", &PyScene::last_detail)
      .def("__repr__", [](const PyScene& s) {
        return "<quasistep.Scene " + s.scene().source + ": " + std::string(qs::formulation_info(s.model().formulation).name) +
               ", nq " + std::to_string(s.model().n_q()) + ">";
      });

  m.def("load", &load, py::arg("path_or_json"), py::arg("log_barrier_weight") = py::none());
  m.def(
      "rollout",
      [](PyScene& s, const py::object& q0, const std::optional<Array>& commands, std::optional<long> steps,
         std::optional<double> h, long threads, bool trajectory, bool return_states, const py::dict& params,
         bool forces, bool derivatives) {
        return s.rollout(q0, commands, steps, h, threads, trajectory, return_states, params, forces, derivatives);
      },
      py::arg("scene"), py::arg("q0") = py::none(), py::arg("commands") = py::none(), py::arg("steps") = py::none(),
      py::arg("h") = py::none(), py::arg("threads") = 0, py::arg("trajectory") = true,
      py::arg("return_states") = false, py::arg("params") = py::dict(), py::arg("forces") = false,
      py::arg("derivatives") = false);
  m.def("render", &render, py::arg("scene"), py::arg("q"), py::arg("t"), py::arg("normal"), py::arg("tangent"),
        py::arg("scaled_by_k"), py::arg("params"), py::arg("stopped"), py::arg("frames_from"));

  py::class_<PyMc>(m, "McResult", R"doc(A Monte Carlo study's result (quasistep.mc): rate, low, high (Wilson 95%),
outcomes, samples (dict of numpy arrays, the CSV's columns), bins, trajectories; str() is
the summary `quasistep mc` prints.)doc")
      .def_property_readonly("rate", [](const PyMc& r) { return r.summary.rate; })
      .def_property_readonly("low", [](const PyMc& r) { return r.summary.wilson_low; })
      .def_property_readonly("high", [](const PyMc& r) { return r.summary.wilson_high; })
      .def_property_readonly("successes", [](const PyMc& r) { return r.summary.successes; })
      .def_property_readonly("n", [](const PyMc& r) { return r.summary.samples; })
      .def_property_readonly("success", [](const PyMc& r) { return r.run.study.success; })
      .def_property_readonly("parameters", [](const PyMc& r) { return r.run.study.parameters; })
      .def_property_readonly("seed", [](const PyMc& r) { return r.run.study.seed; })
      .def_property_readonly("scene_hash", [](const PyMc& r) { return r.run.study.scene_hash; })
      .def_property_readonly("scene_source", [](const PyMc& r) { return r.scene_source; })
      .def_property_readonly("description", [](const PyMc& r) { return r.description; })
      .def_property_readonly("seconds", [](const PyMc& r) { return r.run.seconds; })
      .def_property_readonly("path", [](const PyMc& r) { return r.run.path; })
      .def_property_readonly("outcomes",
                             [](const PyMc& r) {
                               py::dict d;
                               for (qs::Outcome o : qs::outcomes_of(r.run.study.success_kind))
                                 d[py::str(std::string(qs::to_string(o)))] = r.summary.outcome_count[static_cast<int>(o)];
                               return d;
                             })
      .def_property_readonly("bins",
                             [](const PyMc& r) {
                               py::list out;
                               for (const qs::ParameterBins& b : r.summary.bins) {
                                 py::dict d;
                                 d["parameter"] = b.path;
                                 d["low"] = b.low;
                                 d["high"] = b.high;
                                 d["count"] = py::array_t<long>(static_cast<py::ssize_t>(b.count.size()), b.count.data());
                                 d["successes"] =
                                     py::array_t<long>(static_cast<py::ssize_t>(b.successes.size()), b.successes.data());
                                 out.append(d);
                               }
                               return out;
                             })
      .def_property_readonly("samples", &mc_samples)
      .def_property_readonly("trajectories",
                             [](const PyMc& r) {
                               py::dict d;
                               for (const qs::McTrajectory& t : r.run.trajectories) {
                                 Array a(std::vector<py::ssize_t>{static_cast<py::ssize_t>(t.pose.size()), 3});
                                 for (std::size_t k = 0; k < t.pose.size(); ++k)
                                   std::copy(t.pose[k].begin(), t.pose[k].end(), a.mutable_data() + 3 * k);
                                 d[py::int_(t.sample)] = a;
                               }
                               return d;
                             })
      .def("summary", &PyMc::text)
      .def("__str__", &PyMc::text);

  m.def(
      "mc",
      [](const PyScene* scene, long samples, std::uint64_t seed, long threads, int trajectories) {
        return mc(scene, samples, seed, threads, trajectories);
      },
      py::arg("scene") = py::none(), py::arg("samples") = 10000, py::arg("seed") = 0, py::arg("threads") = 0,
      py::arg("trajectories") = 8);
  m.def("solve_lcp", &solve_lcp, py::arg("M"), py::arg("q"), py::arg("free") = 0);
  m.def("solve_lcp_json", &solve_lcp_json, py::arg("M"), py::arg("q"), py::arg("free"), py::arg("method"),
        py::arg("node_limit"));
  m.def("solve_ucp_json", &solve_ucp_json, py::arg("problem_json"), py::arg("method"), py::arg("all"),
        py::arg("node_limit"));
}

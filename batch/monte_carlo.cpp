#include "quasistep/batch/monte_carlo.hpp"

#include <tbb/enumerable_thread_specific.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <numbers>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "quasistep/batch/batch_stepper.hpp"
#include "quasistep/batch/sampling.hpp"
#include "quasistep/batch/world_batch.hpp"
#include "quasistep/core/contacts.hpp"
#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/kinematics.hpp"

namespace qs {

std::string_view to_string(Outcome o) {
  switch (o) {
    case Outcome::held: return "held";
    case Outcome::slipped: return "slipped";
    case Outcome::in_goal: return "in_goal";
    case Outcome::missed: return "missed";
    case Outcome::never_touched: return "never_touched";
    case Outcome::solver_failed: return "solver_failed";
  }
  return "unknown";
}

Outcome outcome_from_string(std::string_view word) {
  for (int k = 0; k < kOutcomeCount; ++k)
    if (to_string(static_cast<Outcome>(k)) == word) return static_cast<Outcome>(k);
  throw std::invalid_argument("unknown outcome \"" + std::string(word) + "\"");
}

std::array<Outcome, 4> outcomes_of(SuccessCriterion::Kind k) {
  if (k == SuccessCriterion::Kind::lifted)
    return {Outcome::held, Outcome::slipped, Outcome::never_touched, Outcome::solver_failed};
  return {Outcome::in_goal, Outcome::missed, Outcome::never_touched, Outcome::solver_failed};
}

std::pair<long, long> shard_range(long n, int k, int m) {
  // 128-bit products: K N / M exactly for any N a long can hold.
  const auto at = [&](long j) { return static_cast<long>(static_cast<__int128>(n) * j / m); };
  return {at(k), at(k + 1L)};
}

void McRecords::reserve(long n) {
  const auto u = static_cast<std::size_t>(n);
  sample.reserve(u);
  values.reserve(u * static_cast<std::size_t>(parameter_count));
  outcome.reserve(u);
  final_pose.reserve(u);
  failed_step.reserve(u);
  status.reserve(u);
}

void McRecords::clear() {
  sample.clear();
  values.clear();
  outcome.clear();
  final_pose.clear();
  failed_step.clear();
  status.clear();
}

namespace {

std::string number(double v) {
  std::ostringstream o;
  o.precision(6);
  o << v;
  return o.str();
}

/// The shortest text that reads back as v: the criterion's numbers in the sample CSV's
/// header are exact, so mc-merge can judge each row by them.
std::string exact(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

/// Why the model ignores a varied parameter, or where it only rescales forces ("" when the
/// parameter can change a trajectory).
std::string ignored_reason(const Model& m, const ParameterRef& r) {
  using K = ParameterRef::Kind;
  const auto in_a_pair = [&](int body) {
    return std::any_of(m.pairs.begin(), m.pairs.end(), [&](const ContactPair& p) {
      return (p.body_a == body || p.body_b == body) && p.slot_count > 0;
    });
  };
  // Whether a body moves with an unactuated DOF (its own, as a free body, or an
  // effort-controlled joint's up its chain): only then do its mass and gravity reach the
  // motion (the velocity-controlled robot follows its commands; anitescu_qp's impedances
  // cancel their own gravity).
  const auto moves_unactuated = [&](int body) {
    for (int i = body; i >= 0;) {
      const Body& b = m.bodies[static_cast<std::size_t>(i)];
      if (b.kind == BodyKind::free) return true;
      if (b.kind != BodyKind::linked) return false;
      const Joint& j = m.joints[static_cast<std::size_t>(b.parent_joint)];
      if (j.control == Control::effort) return true;
      i = j.parent;
    }
    return false;
  };
  switch (r.kind) {
    case K::body_mass:
      if (!moves_unactuated(r.index))
        return "the body moves only with velocity-controlled joints, which follow their commands whatever it "
               "weighs: its mass never reaches the motion";
      // The formulation may take the motion from elsewhere (its row says why).
      if (const auto inert = formulation_info(m.formulation).inert_parameter) return inert(m, r);
      return {};
    case K::body_scale:
      if (!in_a_pair(r.index)) return "the body is in no contact pair, so its size never matters";
      return {};
    case K::body_pose_x:
    case K::body_pose_y:
    case K::body_pose_theta: {
      const Body& b = m.bodies[r.index];
      const bool dof = is_start_parameter(m, r);  // a free body's DOF: only its start
      // A disk turned about its center is the same disk: theta of a body whose shapes are
      // all disks centered on its origin, and which has no theta DOF, changes nothing.
      if (r.kind == K::body_pose_theta && !dof) {
        bool all_centered_disks = true;
        for (int s : b.shapes) {
          const Shape& sh = m.shapes[s];
          all_centered_disks = all_centered_disks && sh.core == ShapeCore::point && sh.points.size() == 1 &&
                               sh.points[0].x == 0.0 && sh.points[0].y == 0.0;
        }
        if (all_centered_disks) return "the body is a disk about its origin without a theta DOF: turning it changes nothing";
      }
      // A half-plane slid along its own boundary is the same half-plane: x or y of a body
      // whose shapes are all half-planes with boundaries along that axis (the ground).
      if ((r.kind == K::body_pose_x || r.kind == K::body_pose_y) && !dof && !b.shapes.empty()) {
        bool along_boundary = true;
        for (int s : b.shapes) {
          const Shape& sh = m.shapes[s];
          const Vec2<double> n = Pose2<double>::from_xytheta(b.pose[0], b.pose[1], b.pose[2]).rotate(sh.normal);
          along_boundary = along_boundary && sh.core == ShapeCore::half_plane &&
                           (r.kind == K::body_pose_x ? n.x == 0.0 : n.y == 0.0);
        }
        if (along_boundary)
          return "the body's half-planes have their boundaries along that axis: sliding them along it changes "
                 "nothing";
      }
      if (!dof && !in_a_pair(r.index)) return "the body is in no contact pair and its pose is not a DOF";
      return {};
    }
    case K::joint_position:
    case K::model_gain:
    case K::joint_gain: return {};
    case K::pair_friction: {
      for (int p : r.pairs)
        if (m.pairs[p].slot_count > 0) return {};
      return "the pair has no contact slot, so its friction is never used";
    }
  }
  return {};
}

std::string describe(const SuccessCriterion& s, const Model& m) {
  const std::string body = m.bodies[s.body].name;
  if (s.kind == SuccessCriterion::Kind::lifted)
    return "lifted " + body + " >= " + exact(s.height) + " m until " + exact(s.hold_until) + " s";
  return "goal_region " + body + " at [" + exact(s.center[0]) + ", " + exact(s.center[1]) + ", " +
         exact(s.center[2]) + "] +- [" + exact(s.tolerance[0]) + ", " + exact(s.tolerance[1]) + ", " +
         exact(s.tolerance[2]) + "]";
}

/// The object's world pose from a world's q and parameters (the pose components that are
/// not DOFs).
std::array<double, 3> object_pose(const Model& m, const WorldParams& wp, int body, const double* q) {
  const Body& b = m.bodies[body];
  std::array<double, 3> p = wp.body_pose[body];
  for (int k = 0; k < 3; ++k)
    if (b.dof[k] >= 0) p[k] = q[b.dof[k]];
  return p;
}

/// Per-world progress of the success judgement.
struct Tracker {
  double y0 = 0.0;         // lifted: the object's initial y
  int reached_step = -1;   // lifted: the first step that reached the height (0: the start)
  bool dropped = false;    // lifted: below the height again at a step up to hold_until
  bool touched = false;
  std::array<double, 3> last_pose{};  // the object's pose in the last state reached
};

/// One thread's scratch for judging worlds: a world's parameters (its varied values over
/// the scene's), and the kinematics buffers.
struct JudgeWorkspace {
  WorldParams params;
  std::vector<double> q;
  std::vector<Pose2<double>> pose;
  std::vector<Pose2<double>> frame;
  explicit JudgeWorkspace(const Model& base)
      : params(base), q(static_cast<std::size_t>(std::max(base.n_q(), 1))), pose(base.bodies.size()),
        frame(std::max<std::size_t>(base.joints.size(), 1)) {}
};

}  // namespace

std::string mc_unsupported_reason(const Scene& scene) {
  const Model& m = *scene.model;
  if (scene.uncertainty.empty()) return "uncertainty: the scene has no uncertain parameters to sample";
  if (!scene.success) return "success: the scene has no success criterion to judge samples by";
  if (!scene.overrides.empty()) return "overrides: a Monte Carlo study samples its worlds; remove the overrides";
  if (const std::string r = batch_unsupported_reason(m); !r.empty()) return "model.formulation: " + r;
  if (!(m.step.h > 0) || m.step.steps < 1) return "step: a Monte Carlo study needs step.h and step.steps";
  for (const UncertainParameter& u : scene.uncertainty)
    if (const std::string r = ignored_reason(m, u.parameter); !r.empty())
      return "uncertainty: parameter \"" + u.parameter.path + "\": " + r;
  const SuccessCriterion& s = *scene.success;
  const double end = m.step.h * m.step.steps;
  if (s.kind == SuccessCriterion::Kind::lifted && s.hold_until > end * (1 + 1e-12))
    return "success.hold_until: " + number(s.hold_until) + " s is after the last step (" + std::to_string(m.step.steps) +
           " steps of " + number(m.step.h) + " s end at " + number(end) + " s)";
  if (s.kind == SuccessCriterion::Kind::lifted && m.bodies[s.body].dof[1] < 0)
    return "success.body: \"" + m.bodies[s.body].name + "\" has no y DOF, so it can never be lifted";
  return {};
}

McStudy make_study(const Scene& scene, const McOptions& o) {
  const Model& m = *scene.model;
  McStudy st;
  st.scene_hash = scene.hash;
  st.model = std::string(to_string(m.formulation));
  st.seed = o.seed;
  st.samples = o.samples;
  st.shards = o.shards;
  if (scene.success) {
    st.success = describe(*scene.success, m);
    st.success_kind = scene.success->kind;
    st.object = m.bodies[scene.success->body].name;
  }
  for (const UncertainParameter& u : scene.uncertainty) {
    st.parameters.push_back(u.parameter.path);
    st.distributions.push_back(u.distribution);
  }
  return st;
}

McRun run_monte_carlo(const Scene& scene, const McOptions& o) {
  if (o.samples < 1) throw BatchError("mc: the number of samples must be >= 1 (got " + std::to_string(o.samples) + ")");
  if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards)
    throw BatchError("mc: shard " + std::to_string(o.shard) + "/" + std::to_string(o.shards) +
                     " must satisfy 0 <= K < M");
  if (o.chunk < 1) throw BatchError("mc: chunk must be >= 1");
  if (o.threads < 0) throw BatchError("mc: threads must be >= 0");
  if (const std::string r = mc_unsupported_reason(scene); !r.empty()) throw BatchError(r);

  const Model& m = *scene.model;
  const SuccessCriterion& crit = *scene.success;
  const int object = crit.body;
  const int n_params = static_cast<int>(scene.uncertainty.size());
  const bool lifted = crit.kind == SuccessCriterion::Kind::lifted;
  const int steps = m.step.steps;
  const double h = m.step.h;

  McRun run;
  run.study = make_study(scene, o);
  run.shard = o.shard;
  std::tie(run.first, run.count) = shard_range(o.samples, o.shard, o.shards);
  run.count -= run.first;
  run.records.parameter_count = n_params;
  // Streamed, the records hold one chunk at a time; kept, all of the run (checked against
  // memory first: a count that cannot be held is refused, not an abort).
  const long held = o.records_sink ? std::min<long>(o.chunk, run.count) : run.count;
  const double bytes = static_cast<double>(held) * (sizeof(long) + sizeof(Outcome) + 3 * sizeof(double) +
                                                    sizeof(int) + sizeof(Status) + n_params * sizeof(double));
  if (bytes > kMaxKeptRecordBytes)
    throw BatchError("mc: keeping " + std::to_string(run.count) + " samples' records needs " +
                     std::to_string(static_cast<long>(bytes / (1 << 30))) +
                     " GiB; stream them (McOptions::records_sink) or split the study into shards");
  run.records.reserve(held);

  // Slots between the object and a linked (robot) body: the "touched" test.
  std::vector<int> robot_slots;
  for (int s = 0; s < m.n_slots(); ++s) {
    const ContactPair& p = m.pairs[m.slots[s].pair];
    const int other = p.body_a == object ? p.body_b : p.body_b == object ? p.body_a : -1;
    if (other >= 0 && m.bodies[other].kind == BodyKind::linked) robot_slots.push_back(s);
  }

  const long keep = std::min<long>(std::max(o.trajectories, 0), run.count);
  if (static_cast<double>(keep) * (steps + 1.0) * sizeof(std::array<double, 3>) > kMaxKeptRecordBytes)
    throw BatchError("mc: keeping " + std::to_string(keep) + " paths of " + std::to_string(steps) +
                     " steps needs more than 4 GiB; keep fewer (--trajectories)");
  run.trajectories.resize(static_cast<std::size_t>(keep));
  for (long i = 0; i < keep; ++i) {
    run.trajectories[i].sample = run.first + i;
    run.trajectories[i].pose.resize(static_cast<std::size_t>(steps) + 1);
  }

  // Each thread's scratch for judging, made once per thread at its first use.
  tbb::enumerable_thread_specific<JudgeWorkspace> judge_ws([&m] { return JudgeWorkspace(m); });
  std::vector<Tracker> trackers;
  const auto t0 = std::chrono::steady_clock::now();

  std::optional<WorldBatch> batch;
  std::optional<BatchStepper> stepper;
  std::vector<int> model_params;
  for (long done = 0; done < run.count;) {
    const int count = static_cast<int>(std::min<long>(o.chunk, run.count - done));
    const long first = run.first + done;
    if (!batch || batch->size() != count) {
      stepper.reset();
      batch.emplace(sample_batch(scene, o.seed, first, count));
      stepper.emplace(*batch, BatchOptions{.threads = o.threads});
      run.path = stepper->path();
      // Judging needs only the parameters that move or size a body (the object's pose
      // components that are not DOFs, the touch test's kinematics): not friction, masses
      // or gains, which would be set for every world after every step for nothing.
      model_params.clear();
      for (int k = 0; k < batch->varied_count(); ++k) {
        const ParameterRef& r = batch->varied(k);
        const bool geometry = r.kind == ParameterRef::Kind::body_scale || r.kind == ParameterRef::Kind::body_pose_x ||
                              r.kind == ParameterRef::Kind::body_pose_y || r.kind == ParameterRef::Kind::body_pose_theta;
        if (geometry && !is_start_parameter(m, r)) model_params.push_back(k);
      }
    } else {
      fill_samples(*batch, scene, o.seed, first);
    }
    trackers.assign(static_cast<std::size_t>(count), Tracker{});
    WorldBatch& b = *batch;

    // Judges world w after `step` steps (0: the start) on the thread that stepped it, right
    // after its step (BatchStepper::step's AfterStep): worlds are judged in parallel, each
    // by one thread, writing only its own tracker and path.
    const auto judge = [&](JudgeWorkspace& ws, int w, int step) {
      Tracker& tr = trackers[static_cast<std::size_t>(w)];
      // world_failed_step is the steps the world completed: later states were never reached.
      if (b.failed(w) && step > b.world_failed_step()[w]) return;
      for (int k : model_params) ws.params.set(m, b.varied(k), b.param_value(k)[w]);
      for (int i = 0; i < m.n_q(); ++i) ws.q[static_cast<std::size_t>(i)] = b.world_q(i)[w];
      const std::array<double, 3> p = object_pose(m, ws.params, object, ws.q.data());
      tr.last_pose = p;
      const long idx = done + w;
      if (idx < keep) run.trajectories[static_cast<std::size_t>(idx)].pose[static_cast<std::size_t>(step)] = p;
      if (!tr.touched && !robot_slots.empty()) {
        forward_kinematics(m, ws.params, ws.q.data(), ws.pose.data(), ws.frame.data());
        for (int s : robot_slots)
          if (contact_frame(m, s, ws.pose.data(), ws.params.scales()).phi <= kTouchDistance) {
            tr.touched = true;
            break;
          }
      }
      if (lifted) {
        if (step == 0) tr.y0 = p[1];
        // Steps up to hold_until (with a rounding allowance on l h).
        if (step * h <= crit.hold_until + 1e-9 * h) {
          const bool up = p[1] - tr.y0 >= crit.height;
          if (up && tr.reached_step < 0) tr.reached_step = step;
          else if (!up && tr.reached_step >= 0) tr.dropped = true;
        }
      }
    };
    const auto judge_all = [&](int step) {
      JudgeWorkspace& ws = judge_ws.local();
      for (int w = 0; w < count; ++w) judge(ws, w, step);
    };

    judge_all(0);
    for (int l = 1; l <= steps; ++l) {
      stepper->step(b, {}, [&](int begin, int end) {
        JudgeWorkspace& ws = judge_ws.local();  // one look-up per range, not per world
        for (int w = begin; w < end; ++w) judge(ws, w, l);
      });
      // Within a chunk, progress counts steps (a slow model's chunk can take minutes).
      if (o.progress && l < steps) o.progress(done + static_cast<long>(count) * l / steps, run.count);
    }

    for (int w = 0; w < count; ++w) {
      const Tracker& tr = trackers[static_cast<std::size_t>(w)];
      McRecords& rec = run.records;
      rec.sample.push_back(first + w);
      for (int k = 0; k < n_params; ++k) rec.values.push_back(b.param_value(k)[w]);
      const std::array<double, 3>& p = tr.last_pose;
      Outcome out;
      if (b.failed(w)) out = Outcome::solver_failed;
      else if (!tr.touched) out = Outcome::never_touched;
      else if (lifted) out = tr.reached_step >= 0 && !tr.dropped ? Outcome::held : Outcome::slipped;
      else out = in_goal_region(p, crit.center, crit.tolerance) ? Outcome::in_goal : Outcome::missed;
      rec.outcome.push_back(out);
      rec.final_pose.push_back(p);
      rec.failed_step.push_back(b.failed(w) ? b.world_failed_step()[w] + 1 : -1);  // counted from 1, as `run`
      rec.status.push_back(b.failed(w) ? b.world_status()[w] : Status::solved);
      if (done + w < keep) {
        McTrajectory& t = run.trajectories[static_cast<std::size_t>(done + w)];
        t.outcome = out;
        // A failed world stops: its path ends at the last state it reached.
        if (b.failed(w)) t.pose.resize(static_cast<std::size_t>(b.world_failed_step()[w]) + 1);
      }
    }
    done += count;
    if (o.records_sink) {
      o.records_sink(run.records);
      run.records.clear();
    }
    if (o.progress) o.progress(done, run.count);
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

bool in_goal_region(const std::array<double, 3>& p, const std::array<double, 3>& center,
                    const std::array<double, 3>& tolerance) {
  bool inside = true;
  for (int k = 0; k < 3; ++k) {
    double d = p[k] - center[k];
    if (k == 2) d = std::remainder(d, 2 * std::numbers::pi);  // theta modulo 2 pi
    inside = inside && std::abs(d) <= tolerance[k];
  }
  return inside;
}

std::pair<double, double> wilson_interval(long k, long n, double z) {
  if (n <= 0) return {0.0, 1.0};
  const double nn = static_cast<double>(n), p = static_cast<double>(k) / nn, z2 = z * z;
  const double center = (p + z2 / (2 * nn)) / (1 + z2 / nn);
  const double half = z / (1 + z2 / nn) * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
  // All or no successes: the interval reaches the end exactly (not by rounding).
  return {k == 0 ? 0.0 : std::max(0.0, center - half), k == n ? 1.0 : std::min(1.0, center + half)};
}

McSummary summarize(const McStudy& study, const McRecords& r) {
  McSummary s = empty_summary(study, r.parameter_count);
  add_to_summary(s, r);
  finish_summary(s);
  return s;
}

McSummary empty_summary(const McStudy& study, int np) {
  McSummary s;
  if (study.parameters.size() != static_cast<std::size_t>(np) || study.distributions.size() != static_cast<std::size_t>(np))
    throw std::invalid_argument("summarize: the study names " + std::to_string(study.parameters.size()) +
                                " parameters, the records hold " + std::to_string(np));
  for (int p = 0; p < np; ++p) {
    ParameterBins b;
    b.path = study.parameters[static_cast<std::size_t>(p)];
    const Distribution& d = study.distributions[static_cast<std::size_t>(p)];
    if (d.kind == Distribution::Kind::normal) {
      b.low = d.mean - 3 * d.stddev;
      b.high = d.mean + 3 * d.stddev;
    } else {
      b.low = d.low;
      b.high = d.high;
    }
    b.count.assign(kParameterBins, 0);
    b.successes.assign(kParameterBins, 0);
    s.bins.push_back(std::move(b));
  }
  return s;
}

void add_to_summary(McSummary& s, const McRecords& r) {
  const int np = r.parameter_count;
  if (s.bins.size() != static_cast<std::size_t>(np))
    throw std::invalid_argument("summarize: the summary has " + std::to_string(s.bins.size()) +
                                " parameters, the records hold " + std::to_string(np));
  s.samples += r.size();
  for (long i = 0; i < r.size(); ++i) {
    const bool ok = is_success(r.outcome[static_cast<std::size_t>(i)]);
    s.successes += ok ? 1 : 0;
    ++s.outcome_count[static_cast<int>(r.outcome[static_cast<std::size_t>(i)])];
    for (int p = 0; p < np; ++p) {
      ParameterBins& b = s.bins[static_cast<std::size_t>(p)];
      const double v = r.values[static_cast<std::size_t>(i) * np + p];
      // An empty range (not from a valid scene) puts everything in bin 0 instead of 0/0.
      const double f = b.high > b.low ? (v - b.low) / (b.high - b.low) * kParameterBins : 0.0;
      const int k = !(f >= 0) ? 0 : f >= kParameterBins ? kParameterBins - 1 : static_cast<int>(f);
      ++b.count[k];
      b.successes[k] += ok ? 1 : 0;
    }
  }
}

void finish_summary(McSummary& s) {
  s.rate = s.samples > 0 ? static_cast<double>(s.successes) / static_cast<double>(s.samples) : 0.0;
  std::tie(s.wilson_low, s.wilson_high) = wilson_interval(s.successes, s.samples);
}

}  // namespace qs

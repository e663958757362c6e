// The step derivatives' NaN/Inf campaign (docs/derivatives.md, "How they are verified"): steps,
// with derivatives, random states of every example of the five formulations that have them
// (anitescu_qp in both modes and smoothed, halm_posa_lcp, perfect_velocity_lcp, trinkle_lcp,
// pang_tedrake_miqp), sampled as tests/core/derivatives_test.cpp samples them (a trajectory
// state moved by up to 2 cm and 0.2 rad: apart, touching and interpenetrating; references and
// commands moved too), and, where the scene allows, deliberately jammed states (fingers
// squeezing an object into the ground, a wall or the other fingers; the peg wedged in its slot).
// Every solved derivative must be finite; a refused derivative or a failed step is counted
// with its reason, not a failure. Sample i of scene k takes its randomness from the Monte
// Carlo studies' counter-based stream (quasistep/batch/sampling.hpp) at (seed, k, i) alone,
// so the counts are the same at any thread count.
//
//   derivative_campaign [--samples N] [--seed S] [--threads T] [--scene SUBSTRING]
//
// Exit status 1 when a solved derivative (or a solved step's configuration) is not finite.
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "quasistep/batch/sampling.hpp"
#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/derivative_samples.hpp"

namespace {

using nlohmann::json;
using namespace qs;
using Clock = std::chrono::steady_clock;

/// Sample i's randomness in scene k: draw j is the counter-based stream's parameter
/// k * kDraws + j of sample i (Philox4x64 keyed by the seed and the parameter, counted by the
/// sample), so it depends on (seed, k, i, j) alone, never on which thread steps the sample.
class Stream {
 public:
  static constexpr int kDraws = 1 << 12;  // draws a sample may take: more than any scene's x and u need
  Stream(std::uint64_t seed, int scene, long sample) : seed_(seed), first_(scene * kDraws), sample_(sample) {}
  /// Uniform in [low, high).
  double uniform(double low, double high) {
    if (next_ == kDraws) throw std::logic_error("a sample took more than Stream::kDraws draws");
    return draw(Distribution{Distribution::Kind::uniform, low, high}, seed_, sample_, first_ + next_++);
  }
  double unit() { return uniform(-1, 1); }
  std::size_t index(std::size_t n) { return std::min(n - 1, static_cast<std::size_t>(uniform(0, 1) * n)); }

 private:
  std::uint64_t seed_;
  int first_;
  long sample_;
  int next_ = 0;
};

int dof(const Model& m, std::string_view name) {
  for (int e = 0; e < m.n_q(); ++e)
    if (m.dofs[e].name == name) return e;
  throw std::runtime_error("no DOF " + std::string(name));
}
void command(const Model& m, WorldParams& p, std::string_view joint, double value) {
  p.command[static_cast<std::size_t>(dof(m, joint) - m.n_u)] = value;
}
/// A contact's depth: exactly touching a quarter of the time (the switch itself), else
/// interpenetrating by up to 1 mm.
double depth(Stream& r) {
  const double w = r.uniform(0, 1);
  return w < 0.25 ? 0.0 : 1e-3 * (w - 0.25) / 0.75;
}
/// Anitescu's impedance references (the memory that is state) ahead of their joints, by up to
/// 2 cm in the direction of the joint's command: the fingers keep squeezing.
void references_ahead(const Model& m, State& s, const WorldParams& p, Stream& r) {
  if (m.formulation != Formulation::anitescu_qp) return;
  for (int a = 0; a < m.n_a; ++a)
    s.memory[a] = s.q[m.n_u + a] + std::copysign(0.02 * r.uniform(0, 1), p.command[static_cast<std::size_t>(a)]);
}

/// A jammed state of the scene, from its trajectory's rows and the sample's stream.
using Jam = std::function<test::RandomState(const Model&, const std::vector<State>&, Stream&)>;

/// Pang & Tedrake's gripper (and the Anitescu grasps of its geometry): the cylinder (r = 5 cm)
/// on the ground, both fingers on it below its centre, each touching or pressed in by up to
/// 1 mm, commanded inward at 0.05 to 0.5 m/s while the carriage moves either way. Velocity
/// commands followed exactly (Trinkle) cannot squeeze a rigid cylinder: no solution.
test::RandomState gripper_jam(const Model& m, const std::vector<State>& rows, Stream& r) {
  State s = rows[r.index(rows.size())];
  const double xc = 0.01 * r.unit();
  s.q[dof(m, "cylinder.x")] = xc;
  s.q[dof(m, "cylinder.y")] = 0.05 - depth(r);
  s.q[dof(m, "x_l")] = xc - 0.05 + depth(r);
  s.q[dof(m, "x_r")] = xc + 0.05 - depth(r);
  s.q[dof(m, "y_g")] = r.uniform(0, 0.045);
  WorldParams p = test::commanded_params(m, s);
  command(m, p, "x_l", r.uniform(0.05, 0.5));
  command(m, p, "x_r", -r.uniform(0.05, 0.5));
  command(m, p, "y_g", 0.5 * r.unit());
  references_ahead(m, s, p, r);
  return {std::move(s), std::move(p)};
}

/// Halm & Posa's wall (Fig. 4 top): the disk (r = 1 m) touching or pressed into the wall at
/// y = 0, both point fingers on its lower half, commanded up into it (and sideways): a jam,
/// which finite gains resolve and perfect velocity cannot.
test::RandomState wall_jam(const Model& m, const std::vector<State>& rows, Stream& r) {
  State s = rows[r.index(rows.size())];
  const double x = 0.5 * r.unit(), y = -1 + depth(r);
  s.q[dof(m, "disk.x")] = x;
  s.q[dof(m, "disk.y")] = y;
  s.q[dof(m, "disk.theta")] = 0.2 * r.unit();
  WorldParams p = test::commanded_params(m, s);
  for (const char* f : {"finger1", "finger2"}) {
    const double angle = f[6] == '1' ? r.uniform(-0.9, -0.1) : r.uniform(0.1, 0.9), reach = 1 - depth(r);
    s.q[dof(m, std::string(f) + "_x")] = x + reach * std::sin(angle);
    s.q[dof(m, std::string(f) + "_y")] = y - reach * std::cos(angle);
    command(m, p, std::string(f) + "_x", 0.1 * r.unit());
    command(m, p, std::string(f) + "_y", r.uniform(0.05, 0.5));
  }
  return {std::move(s), std::move(p)};
}

/// Halm & Posa's Fig. 2 square (side 1 m, turned by up to 0.05 rad): each point finger on the
/// middle part of its face, touching or pressed in by up to 1 mm, commanded into the face at
/// 1 mm/s to 0.5 m/s and along it by up to 0.2 m/s (the squeeze; the graze nudged inward).
test::RandomState square_jam(const Model& m, const std::vector<State>& rows, Stream& r) {
  State s = rows[r.index(rows.size())];
  const double x = 0.05 * r.unit(), y = 0.05 * r.unit(), theta = 0.05 * r.unit();
  s.q[dof(m, "square.x")] = x;
  s.q[dof(m, "square.y")] = y;
  s.q[dof(m, "square.theta")] = theta;
  const double c = std::cos(theta), sn = std::sin(theta);
  WorldParams p = test::commanded_params(m, s);
  struct Face {
    const char* finger;
    double nx, ny;  // the face's inward normal in the square's frame
  };
  for (const Face& f : {Face{"left", 1, 0}, Face{"right", -1, 0}, Face{"bottom", 0, 1}, Face{"top", 0, -1}}) {
    const std::string name = f.finger;
    if (std::none_of(m.dofs.begin(), m.dofs.end(), [&](const Dof& d) { return d.name == name + "_x"; })) continue;
    const double along = 0.4 * r.unit(), in = -0.5 + depth(r);  // along the face; depth from the centre
    const double lx = in * f.nx - along * f.ny, ly = in * f.ny + along * f.nx;  // n in + t along, t = (-n_y, n_x)
    s.q[dof(m, name + "_x")] = x + c * lx - sn * ly;
    s.q[dof(m, name + "_y")] = y + sn * lx + c * ly;
    const double push = r.uniform(1e-3, 0.5), slide = 0.2 * r.unit();
    const double vx = push * f.nx - slide * f.ny, vy = push * f.ny + slide * f.nx;
    command(m, p, name + "_x", c * vx - sn * vy);
    command(m, p, name + "_y", sn * vx + c * vy);
  }
  return {std::move(s), std::move(p)};
}

/// Halm & Posa's peg (Fig. 4 bottom): the trajectory's first insertion attempt, wedged on the
/// slot's right corner (steps 81-85), moved by up to 1 mm and 0.3 mrad, its commands scaled by
/// 0.5 to 2 and moved by up to 2 cm/s.
test::RandomState peg_jam(const Model& m, const std::vector<State>& rows, Stream& r) {
  constexpr std::size_t kFirst = 80, kRows = 6;  // the states before steps 81 .. 86
  if (rows.size() < kFirst + kRows) throw std::runtime_error("the peg's trajectory stops before its jam");
  State s = rows[kFirst + r.index(kRows)];
  for (int e = 0; e < m.n_q(); ++e) s.q[e] += (m.dofs[e].name.ends_with(".theta") ? 3e-4 : 1e-3) * r.unit();
  WorldParams p = test::commanded_params(m, s);
  for (double& u : p.command) u = u * r.uniform(0.5, 2) + 0.02 * r.unit();
  return {std::move(s), std::move(p)};
}

struct Entry {
  std::string name;
  json scene;
  Jam jam;  // empty: the scene has no jam
  /// The scene whose trajectory the states are sampled around, when not the scene's own: a
  /// variant that stops early (perfect velocity at its jam; the quasistatic drop, whose box
  /// nothing holds up) is sampled around the run it varies (the box resting on the table).
  json rows_from = nullptr;
};

std::vector<Entry> entries() {
  using namespace qs::test;
  const auto quasi_dynamic = [](json scene, double inertia) {
    scene = in_mode(std::move(scene), "quasi_dynamic");
    scene["bodies"][1]["inertia"] = inertia;
    return scene;
  };
  const double box_inertia = 0.5 * (0.01 + 0.01) / 12;  // 0.5 kg, 0.1 m x 0.1 m
  return {
      {"anitescu_box_push (quasistatic)", example("anitescu_box_push"), {}},
      {"anitescu_box_push (quasi-dynamic)", box_push_quasi_dynamic(), {}},
      {"plan_pivot pushed (quasistatic)", pivot_push(), {}},
      {"plan_pivot pushed (quasi-dynamic)", quasi_dynamic(pivot_push(), box_inertia), {}},
      {"anitescu_drop (quasi-dynamic)", example("anitescu_drop"), {}},
      {"anitescu_drop (quasistatic)", in_mode(example("anitescu_drop"), "quasistatic"), {}, example("anitescu_drop")},
      {"anitescu_grasp (quasi-dynamic)", example("anitescu_grasp"), gripper_jam},
      {"anitescu_grasp (quasistatic)", in_mode(example("anitescu_grasp"), "quasistatic"), gripper_jam},
      {"anitescu_grasp (smoothed, kappa 1e4)", with_model(example("anitescu_grasp"), "log_barrier_weight", 1e4),
       gripper_jam},
      {"anitescu_planar_push (quasi-dynamic)", example("anitescu_planar_push"), {}},
      {"anitescu_planar_push (smoothed, kappa 1e5)",
       with_model(example("anitescu_planar_push"), "log_barrier_weight", 1e5), {}},
      {"mc_grasp (quasi-dynamic)", example("mc_grasp"), gripper_jam},
      {"mc_grasp (quasistatic)", in_mode(example("mc_grasp"), "quasistatic"), gripper_jam},
      {"halm_posa_push", example("halm_posa_push"), {}},
      {"halm_posa_push_asymmetric", example("halm_posa_push_asymmetric"), {}},
      {"halm_posa_push_semicircular", example("halm_posa_push_semicircular"), {}},
      {"halm_posa_wall", example("halm_posa_wall"), wall_jam},
      {"halm_posa_wall (re-linearised twice)", with_model(example("halm_posa_wall"), "relinearize", 2), wall_jam},
      {"halm_posa_peg", example("halm_posa_peg"), peg_jam},
      {"halm_posa_fig2_squeeze", example("halm_posa_fig2_squeeze"), square_jam},
      {"halm_posa_fig2_graze", example("halm_posa_fig2_graze"), square_jam},
      {"mpc_push", example("mpc_push"), {}},
      {"mc_push", example("mc_push"), {}},
      {"plan_push", example("plan_push"), {}},
      {"halm_posa_push (perfect velocity)", push_perfect_velocity(), {}},
      {"halm_posa_wall (perfect velocity)", without_feedback(example("halm_posa_wall")), wall_jam,
       example("halm_posa_wall")},
      {"halm_posa_fig2_squeeze (perfect velocity)", without_feedback(example("halm_posa_fig2_squeeze")), square_jam,
       example("halm_posa_fig2_squeeze")},
      {"halm_posa_fig2_graze (perfect velocity)", without_feedback(example("halm_posa_fig2_graze")), square_jam,
       example("halm_posa_fig2_graze")},
      {"pang_tedrake_gripper (trinkle)", example("pang_tedrake_gripper"), gripper_jam},
      {"pang_tedrake_grasp (miqp)", example("pang_tedrake_grasp"), gripper_jam},
      {"mc_grasp_miqp (miqp)", example("mc_grasp_miqp"), gripper_jam},
      {"pang_tedrake_box_36 (miqp)", example("pang_tedrake_box_36"), {}},
      {"pang_tedrake_box_72 (miqp)", example("pang_tedrake_box_72"), {}},
  };
}

/// Every fourth sample of a scene with a jam is jammed.
bool jammed(const Entry& e, long i) { return e.jam && i % 4 == 3; }

struct Tally {
  long samples = 0, jammed = 0, steps = 0, derivatives = 0, refused = 0, nonfinite = 0, degenerate = 0, bad_state = 0;
  struct Refusals {
    long count = 0;
    long first = std::numeric_limits<long>::max();  // the first sample refused so
  };
  std::map<std::string, Refusals> reasons;  // by the refusal's reason
  std::map<Status, long> failed;
  /// The first sample's failure reason, of each status but infeasible (a jam's, expected).
  std::map<Status, std::pair<long, std::string>> example;
  void note(Status status, long i, const std::string& why) {
    auto [at, fresh] = example.try_emplace(status, i, why);
    if (!fresh && i < at->second.first) at->second = {i, why};
  }
  long first_bad = std::numeric_limits<long>::max();  // the first sample with a non-finite entry
  double slowest = 0;                                 // s, one sample
  void add(const Tally& o) {
    samples += o.samples, jammed += o.jammed, steps += o.steps, derivatives += o.derivatives, refused += o.refused;
    nonfinite += o.nonfinite, degenerate += o.degenerate, bad_state += o.bad_state;
    for (const auto& [k, v] : o.reasons) {
      reasons[k].count += v.count;
      reasons[k].first = std::min(reasons[k].first, v.first);
    }
    for (const auto& [k, v] : o.failed) failed[k] += v;
    for (const auto& [k, v] : o.example) note(k, v.first, v.second);
    first_bad = std::min(first_bad, o.first_bad);
    slowest = std::max(slowest, o.slowest);
  }
};

test::RandomState sample(const Entry& e, const Model& m, const std::vector<State>& rows, std::uint64_t seed, int k,
                         long i) {
  Stream r(seed, k, i);
  if (jammed(e, i)) return e.jam(m, rows, r);
  return test::random_state(m, rows, [&](std::size_t n) { return r.index(n); }, [&] { return r.unit(); });
}

struct Worker {
  std::unique_ptr<Stepper> stepper;
  StepDerivatives d;
  Tally tally;
};

Tally run_scene(const Entry& e, int k, long samples, std::uint64_t seed, tbb::task_arena& arena) {
  const Scene scene = parse_scene(e.scene.dump());
  const Model& m = *scene.model;
  std::vector<State> rows = test::trajectory(m);
  if (!e.rows_from.is_null()) {  // the other run's configurations, as states of this model
    const std::vector<State> other = test::trajectory(*parse_scene(e.rows_from.dump()).model);
    rows.assign(other.size(), initial_state(m));
    for (std::size_t r = 0; r < other.size(); ++r) {
      rows[r].q = other[r].q;
      rows[r].t = other[r].t;
      rows[r].step = other[r].step;
    }
  }
  tbb::enumerable_thread_specific<Worker> workers([&] { return Worker{make_stepper(m), {}, {}}; });
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<long>(0, samples, 16), [&](const tbb::blocked_range<long>& range) {
      Worker& w = workers.local();
      Tally& t = w.tally;
      for (long i = range.begin(); i != range.end(); ++i) {
        const auto start = Clock::now();
        auto [s, p] = sample(e, m, rows, seed, k, i);
        ++t.samples;
        t.jammed += jammed(e, i);
        const Status status = w.stepper->step(m, p, s, w.d);
        t.slowest = std::max(t.slowest, std::chrono::duration<double>(Clock::now() - start).count());
        if (status != Status::solved) {
          ++t.failed[status];
          if (status != Status::infeasible) t.note(status, i, w.d.detail);
          continue;
        }
        ++t.steps;
        if (!s.q.allFinite()) {
          ++t.bad_state;
          t.first_bad = std::min(t.first_bad, i);
        }
        if (w.d.status != Status::solved) {
          ++t.refused;
          Tally::Refusals& r = t.reasons[w.d.detail];
          ++r.count;
          r.first = std::min(r.first, i);
          continue;
        }
        ++t.derivatives;
        t.degenerate += w.d.degenerate;
        if (!w.d.A.allFinite() || !w.d.B.allFinite()) {
          ++t.nonfinite;
          t.first_bad = std::min(t.first_bad, i);
        }
      }
    });
  });
  Tally total;
  for (const Worker& w : workers) total.add(w.tally);
  if (total.first_bad != std::numeric_limits<long>::max()) {  // the sample again, to reproduce it
    auto [s, p] = sample(e, m, rows, seed, k, total.first_bad);
    std::printf("  first non-finite: sample %ld (jammed: %d) at t = %.17g\n    q = [", total.first_bad,
                jammed(e, total.first_bad), s.t);
    for (int j = 0; j < m.n_q(); ++j) std::printf(" %.17g", s.q[j]);
    std::printf(" ]\n    memory = [");
    for (int j = 0; j < derivative_memory_size(m); ++j) std::printf(" %.17g", s.memory[j]);
    std::printf(" ]\n    u = [");
    for (double u : p.command) std::printf(" %.17g", u);
    std::printf(" ]\n");
  }
  return total;
}

std::string failures(const std::map<Status, long>& failed) {
  std::string out;
  for (const auto& [status, n] : failed) out += (out.empty() ? "" : ", ") + std::string(to_string(status)) + " " + std::to_string(n);
  return out.empty() ? "-" : out;
}

int campaign(long samples, std::uint64_t seed, int threads, const std::string& only) {
  std::vector<Entry> list = entries();
  std::vector<int> chosen;
  for (int k = 0; k < static_cast<int>(list.size()); ++k)
    if (list[k].name.find(only) != std::string::npos) chosen.push_back(k);
  if (chosen.empty()) {
    std::fprintf(stderr, "derivative_campaign: no scene matches '%s'\n", only.c_str());
    return 2;
  }
  tbb::task_arena arena(threads);
  const long per = samples / static_cast<long>(chosen.size()), extra = samples % static_cast<long>(chosen.size());
  std::printf("derivative_campaign: %ld samples over %zu scenes, seed %llu, %d thread%s\n\n", samples, chosen.size(),
              static_cast<unsigned long long>(seed), threads, threads == 1 ? "" : "s");
  std::printf("%-42s %8s %7s %8s %8s %7s %7s %7s %9s %9s %8s\n", "scene", "samples", "jammed", "steps", "derivs",
              "refused", "failed", "NaN/Inf", "one-sided", "slowest", "wall");
  Tally all;
  const auto begin = Clock::now();
  for (std::size_t c = 0; c < chosen.size(); ++c) {
    const Entry& e = list[static_cast<std::size_t>(chosen[c])];
    const long n = per + (static_cast<long>(c) < extra ? 1 : 0);
    const auto start = Clock::now();
    // The scene's index in the full list keys its stream, so --scene reproduces the full run's samples.
    const Tally t = run_scene(e, chosen[c], n, seed, arena);
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    long failed = 0;
    for (const auto& [status, count] : t.failed) failed += count;
    std::printf("%-42s %8ld %7ld %8ld %8ld %7ld %7ld %7ld %9ld %7.1fms %7.1fs\n", e.name.c_str(), t.samples, t.jammed,
                t.steps, t.derivatives, t.refused, failed, t.nonfinite, t.degenerate, 1e3 * t.slowest, wall);
    if (failed) std::printf("    steps failed: %s\n", failures(t.failed).c_str());
    for (const auto& [status, first] : t.example)
      std::printf("    %s, first (sample %ld): %.200s\n", std::string(to_string(status)).c_str(), first.first,
                  first.second.c_str());
    for (const auto& [reason, r] : t.reasons)
      std::printf("    refused %ld (first: sample %ld): %s\n", r.count, r.first, reason.c_str());
    if (t.bad_state) std::printf("    %ld solved steps with a non-finite configuration\n", t.bad_state);
    std::fflush(stdout);
    all.add(t);
  }
  const double wall = std::chrono::duration<double>(Clock::now() - begin).count();
  long failed = 0;
  for (const auto& [status, count] : all.failed) failed += count;
  std::printf("%-42s %8ld %7ld %8ld %8ld %7ld %7ld %7ld %9ld %7.1fms %7.1fs\n", "total", all.samples, all.jammed,
              all.steps, all.derivatives, all.refused, failed, all.nonfinite, all.degenerate, 1e3 * all.slowest, wall);
  std::printf("    steps failed: %s\n", failures(all.failed).c_str());
  const bool ok = all.nonfinite == 0 && all.bad_state == 0;
  std::printf("\n%s\n", ok ? "every solved derivative is finite" : "NON-FINITE ENTRIES FOUND");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Parsed by hand: the bench programs build without the command line's CLI11.
  long samples = 1'000'000;
  std::uint64_t seed = 1;
  int threads = 1;
  std::string only;
  const char* usage = "usage: derivative_campaign [--samples N] [--seed S] [--threads T] [--scene SUBSTRING]\n";
  for (int a = 1; a < argc; ++a) {
    const std::string_view flag = argv[a];
    if (flag == "--help" || flag == "-h") {
      std::printf("%s", usage);
      return 0;
    }
    if (flag != "--samples" && flag != "--seed" && flag != "--threads" && flag != "--scene") {
      std::fprintf(stderr, "derivative_campaign: unknown option %s\n%s", argv[a], usage);
      return 2;
    }
    if (a + 1 == argc) {
      std::fprintf(stderr, "%s", usage);
      return 2;
    }
    const std::string value = argv[++a];
    try {
      std::size_t used = 0;
      if (flag == "--samples") samples = std::stol(value, &used);
      else if (flag == "--seed") seed = std::stoull(value, &used);
      else if (flag == "--threads") threads = std::stoi(value, &used);
      else if (flag == "--scene") only = value, used = value.size();
      if (used != value.size() || samples < 1 || threads < 1) throw std::invalid_argument(value);
    } catch (const std::exception&) {
      std::fprintf(stderr, "derivative_campaign: bad %s %s\n%s", argv[a - 1], value.c_str(), usage);
      return 2;
    }
  }

  try {
    return campaign(samples, seed, threads, only);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "derivative_campaign: %s\n", e.what());
    return 2;
  }
}

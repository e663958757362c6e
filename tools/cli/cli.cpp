#include "tools/cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <tbb/global_control.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "quasistep/batch/batch_stepper.hpp"
#include "quasistep/batch/default_study.hpp"
#include "quasistep/batch/mc_csv.hpp"
#include "quasistep/batch/world_batch.hpp"
#include "quasistep/core/contacts.hpp"
#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/formulations/ucp/ucp_scene.hpp"
#include "quasistep/core/lcp_problem_file.hpp"
#include "quasistep/core/output_file.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "quasistep/core/ucp_problem_file.hpp"
#include "quasistep/kernels/lane.hpp"
#include "quasistep/version.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/cli/mc_command.hpp"
#include "tools/cli/miqp_export.hpp"
#include "tools/cli/mpi_session.hpp"
#include "tools/cli/plan_command.hpp"
#include "tools/cli/run_command.hpp"
#include "tools/cli/throughput_command.hpp"
#include "tools/report/replay.hpp"
#ifdef QUASISTEP_HAVE_MPI
#include "tools/cli/mc_mpi.hpp"
#endif

namespace qs::cli {
namespace {

/// Sign checks on a number option with a message a user can read (CLI11's own
/// NonNegativeNumber and PositiveNumber print the whole double range); the number must be
/// finite too (an infinite big-M or time limit would write `inf` into a file or never
/// end). The option's own parse still rejects what is not a number.
CLI::Validator sign_check(bool allow_zero) {
  return CLI::Validator(
      [allow_zero](std::string& text) -> std::string {
        double v = 0.0;
        try {
          std::size_t used = 0;
          v = std::stod(text, &used);
          if (used != text.size()) return "";  // not a number: the option's own parse says so
        } catch (const std::out_of_range&) {
          // 1e400 would be read as inf, 1e-400 as 0 (strtod with ERANGE).
          return "must be a finite number within the range of a double (got " + text + ")";
        } catch (const std::exception&) {
          return "";
        }
        if (!std::isfinite(v)) return "must be a finite number (got " + text + ")";
        if (allow_zero ? v >= 0.0 : v > 0.0) return "";
        return std::string("must be ") + (allow_zero ? ">= 0" : "> 0") + " (got " + text + ")";
      },
      allow_zero ? "NONNEGATIVE" : "POSITIVE");
}
const CLI::Validator kNonNegative = sign_check(true);
const CLI::Validator kPositive = sign_check(false);

/// An integer option's text must fit its type: CLI11 would clamp "99999999999999999999999"
/// to the largest value without a word. Text that is not an integer is left to the option's
/// own parse (and to the sign checks).
template <class T>
CLI::Validator fits() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const char* first = text.data();
        const char* last = first + text.size();
        if (first != last && *first == '+') ++first;
        if (first == last || !(std::isdigit(static_cast<unsigned char>(*first)) || *first == '-')) return "";
        T value{};
        const auto [end, ec] = std::from_chars(first, last, value);
        if (ec == std::errc::result_out_of_range)
          return "out of range (got " + text + ", at most " + std::to_string(std::numeric_limits<T>::max()) + ")";
        (void)end;
        return "";
      },
      "INT");
}

struct CommonOptions {
  int threads = 0;  // 0: all cores
};

void add_common(CLI::App& app, CommonOptions& o) {
  app.add_option("--threads", o.threads, "Worker threads (0: all cores)")->check(fits<int>())->check(kNonNegative);
}

std::string dof_list(const Model& m, int begin, int end) {
  std::string s = "[";
  for (int i = begin; i < end; ++i) s += (i > begin ? ", " : "") + m.dofs[i].name;
  return s + "]";
}

void print_summary(const Scene& scene, std::ostream& out) {
  const Model& m = *scene.model;
  int kinds[3] = {0, 0, 0};
  for (const Body& b : m.bodies) ++kinds[static_cast<int>(b.kind)];
  out << "  scene     " << (m.name.empty() ? "(unnamed)" : m.name) << " (format " << kSceneFormatVersion << ", hash "
      << scene.hash << ")\n";
  out << "  world     " << to_string(m.world.type) << " (gravity " << format_number(m.world.gravity) << " m/s^2";
  if (m.world.type == WorldType::tabletop) out << ", support friction " << format_number(m.world.support_friction);
  out << ")\n";
  out << "  model     " << to_string(m.formulation) << "\n";
  if (const auto describe = formulation_info(m.formulation).describe) describe(m, out);
  out << "  bodies    " << m.bodies.size() << " (" << kinds[0] << " fixed, " << kinds[1] << " free, " << kinds[2]
      << " linked), " << m.joints.size() << " joints, " << m.shapes.size() << " shapes\n";
  out << "  dofs      " << m.n_q() << ": u = " << dof_list(m, 0, m.n_u) << ", a = " << dof_list(m, m.n_u, m.n_q())
      << "\n";
  // The header of a command file for `run --commands` (docs/scene-format.md, "Command layout").
  out << "  commands  step";
  for (const std::string& name : command_names(m)) out << "," << name;
  out << " (a command file's header)\n";
  // Which gain went to which joint (a list of gains is in command order: easy to misplace).
  const FormulationInfo& info = formulation_info(m.formulation);
  if (!info.joint_gain.empty() && m.n_a > 0) {
    const WorldParams p(m);
    out << "  gains     " << info.joint_gain << ":";
    for (int a = 0; a < m.n_a && a < static_cast<int>(p.joint_gain.size()); ++a) {
      const Joint& j = m.joints[static_cast<std::size_t>(m.dofs[m.n_u + a].index)];
      out << (a ? ", " : " ") << j.name << " " << format_number(p.joint_gain[static_cast<std::size_t>(a)])
          << (j.type == JointType::revolute ? " N m/rad" : " N/m");
    }
    out << " (model." << info.joint_gain << ", in command order)\n";
  }
  out << "  contacts  " << m.pairs.size() << " pairs, " << m.n_slots() << " slots, margin "
      << format_number(m.contact_margin) << " m\n";
  if (m.body3) {
    const Body3& b = *m.body3;
    if (b.cylinder) {
      out << "  hull      cylinder, radius " << format_number(b.cylinder->radius) << " m, length "
          << format_number(2 * b.cylinder->half_length) << " m (3 faces: 2 caps and the side)\n";
    } else {
      out << "  hull      " << b.hull_normals.size() << " faces, " << b.hull_vertices.size() << " vertices from "
          << b.given_points << " points";
      if (b.dropped_points) out << " (" << b.dropped_points << " not extreme: inside the hull or on a face or edge, dropped)";
      out << "\n";
    }
  }
  if (m.step.h > 0) out << "  step      h = " << format_number(m.step.h) << " s, " << m.step.steps << " steps\n";
  else out << "  step      (none given)\n";
  if (!scene.overrides.empty()) out << "  overrides " << scene.overrides.size() << " worlds\n";
  if (!scene.uncertainty.empty()) out << "  uncertain " << scene.uncertainty.size() << " parameters\n";
  if (scene.success) out << "  success   " << (scene.success->kind == SuccessCriterion::Kind::lifted ? "lifted" : "goal_region") << "\n";
  if (scene.plan) {
    // The planning problem of `quasistep plan` (docs/planning.md).
    const PlanSpec& p = *scene.plan;
    const std::array<double, 3>& c = p.goal_center;
    out << "  plan      goal: " << m.bodies[static_cast<std::size_t>(p.goal_body)].name << " within ("
        << format_number(p.goal_tolerance[0]) << ", " << format_number(p.goal_tolerance[1]) << ", "
        << format_number(p.goal_tolerance[2]) << ") of (" << format_number(c[0]) << ", " << format_number(c[1]) << ", "
        << format_number(c[2]) << "); controls held " << p.min_control_steps << " to " << p.max_control_steps
        << " steps; " << p.keep_out.size() << " keep-out " << (p.keep_out.size() == 1 ? "region" : "regions") << "\n";
  }
}

/// The contact slots at the initial state, one line each.
void print_contacts(const Model& m, const State& s, std::ostream& out) {
  ContactWorkspace ws(m);
  ws.evaluate(m, s.q.data());
  out << "  slot  pair                         feature        phi (m)       normal            active\n";
  // Each shape's place among its body's shapes, found once (a search per slot made the
  // listing quadratic in the shapes of one body).
  std::vector<std::size_t> place_in_body(m.shapes.size(), 0);
  for (const Body& b : m.bodies)
    for (std::size_t k = 0; k < b.shapes.size(); ++k) place_in_body[static_cast<std::size_t>(b.shapes[k])] = k;
  for (int i = 0; i < m.n_slots(); ++i) {
    const ContactSlot& cs = m.slots[i];
    const ContactFrame<double>& f = ws.frame[i];
    std::ostringstream feature;
    // body:shape#feature, the shape counted within its body
    const Shape& fs = m.shapes[cs.feature_shape];
    feature << m.bodies[fs.body].name << ":" << place_in_body[static_cast<std::size_t>(cs.feature_shape)] << "#"
            << cs.feature_index;
    out << "  " << std::setw(4) << i << "  " << std::left << std::setw(28) << m.pair_name(cs.pair) << " "
        << std::setw(14) << feature.str() << std::right << std::setw(12) << format_number(f.phi) << "   ("
        << std::setw(6) << format_number(f.normal.x) << ", " << std::setw(6) << format_number(f.normal.y) << ")   "
        << (ws.active(m, i) ? "yes" : "no") << "\n";
  }
}

int cmd_lcp(const std::string& path, const LcpSolveOptions& o, bool node_limit_given, std::ostream& out) {
  if (node_limit_given && o.method == "lemke")
    throw InputError("--node-limit " + std::to_string(o.node_limit) + ": needs --method exact or auto (Lemke has no nodes)");
  LcpProblem problem;
  try {
    problem = load_lcp_problem(path);
  } catch (const JsonInputError& e) {
    throw InputError(path + ": " + e.what());
  }
  // Exit 0 whenever the solver ran, whatever it concluded (see cli.hpp): infeasible and the
  // node limit are answers, as for `ucp`.
  out << solve_lcp_to_json(problem, o) << "\n";
  return kOk;
}

int cmd_ucp(const std::string& path, bool scene, const UcpSolveOptions& o, std::ostream& out) {
  if (scene) {
    // The scene's UCP at its initial state (quasistep/core/formulations/ucp/ucp_scene.hpp).
    const Scene sc = load_scene_or_fail(path);
    try {
      out << solve_scene_ucp_to_json(*sc.model, o) << "\n";
    } catch (const std::invalid_argument& e) {
      throw InputError(path + ": " + e.what());
    }
    return kOk;
  }
  try {
    out << solve_ucp_to_json(load_ucp_problem(path), o) << "\n";  // exit 0: infeasible is an answer
  } catch (const JsonInputError& e) {
    throw InputError(path + ": " + e.what());
  }
  return kOk;
}

/// A gap below this at the start is an overlap worth a warning (as `run`'s summary line).
constexpr double kStartOverlap = 1e-9;

/// What `validate` accepts but a user has probably not meant, or will pay for: one line
/// each on err ("validate: warning: ..."); the scene stays valid (exit 0).
void print_warnings(const Scene& scene, std::ostream& err) {
  const Model& m = *scene.model;
  // Bodies that overlap at the start: `run` starts from there and the first step pushes
  // them apart (often a placement mistake; `--contacts` shows each slot's gap).
  if (m.n_slots() > 0) {
    ContactWorkspace ws(m);
    ws.evaluate(m, initial_state(m).q.data());
    int worst = -1, overlapping = 0;
    for (int i = 0; i < m.n_slots(); ++i) {
      if (!(ws.frame[i].phi < -kStartOverlap)) continue;
      ++overlapping;
      if (worst < 0 || ws.frame[i].phi < ws.frame[worst].phi) worst = i;
    }
    if (worst >= 0)
      err << "validate: warning: the bodies overlap at the start: slot " << worst << " (" << m.pair_name(m.slots[worst].pair)
          << ") has a gap of " << format_number(ws.frame[worst].phi) << " m"
          << (overlapping > 1 ? " (" + std::to_string(overlapping) + " slots overlap)" : std::string())
          << "; check the initial poses and joint positions (validate --contacts lists every slot's gap)\n";
  }
  // A study or overrides whose parameters take the worlds out of the batch engine's SIMD
  // lanes: mc (and throughput) then step one world at a time per thread.
  std::vector<ParameterRef> varied;
  const auto add = [&](const ParameterRef& r) {
    for (const ParameterRef& o : varied)
      if (o.same_as(r)) return;
    varied.push_back(r);
  };
  for (const UncertainParameter& u : scene.uncertainty) add(u.parameter);
  for (const auto& world : scene.overrides)
    for (const auto& [r, value] : world) add(r);
  if (varied.empty() || !formulation_info(m.formulation).time_stepping || !batch_unsupported_reason(m).empty()) return;
  try {
    WorldBatch plain(scene.model, 1);
    plain.set_step_size(m.step.h > 0 ? m.step.h : 1.0);
    if (!BatchStepper(plain, {.threads = 1}).lanes()) return;  // the model never runs in lanes
    WorldBatch study(scene.model, 1, varied);
    study.set_step_size(m.step.h > 0 ? m.step.h : 1.0);
    const BatchStepper stepper(study, {.threads = 1});
    if (stepper.lanes()) return;
    // path(): "per-world: one world at a time on each thread (WHY)".
    const std::string& path = stepper.path();
    const std::size_t open = path.find('(');
    const std::string why = open == std::string::npos ? path : path.substr(open + 1, path.size() - open - 2);
    err << "validate: warning: " << why << ": the " << (scene.uncertainty.empty() ? "overrides' worlds" : "study's samples")
        << " step one world at a time per thread, typically 2 to 5 times slower than in the lanes "
           "(docs/performance.md)\n";
  } catch (const BatchError&) {
    // mc and throughput say why they cannot run this scene.
  }
}

int cmd_validate(const std::string& path, bool contacts, std::ostream& out, std::ostream& err) {
  const Scene scene = load_scene_or_fail(path);
  out << "ok: " << path << "\n";
  print_summary(scene, out);
  if (contacts) print_contacts(*scene.model, initial_state(*scene.model), out);
  print_warnings(scene, err);
  return kOk;
}

// `quasistep --version`: the version, the batch engine's lane width (it follows the
// instruction set the library was compiled for) and which optional parts this build has.
std::string version_text() {
#if defined(__AVX512F__)
  const char* isa = "AVX-512";
#elif defined(__AVX2__)
  const char* isa = "AVX2";
#elif defined(__AVX__)
  const char* isa = "AVX";
#else
  const char* isa = "SSE2";
#endif
  std::string text = std::string("quasistep ") + kVersion + "\nlanes: " + std::to_string(kLaneWidth) +
                     " worlds per lane group (" + isa + ")\noptional parts:";
  // "Python module no, OMPL planner no, ..." (tools/cli/CMakeLists.txt).
  return text + " " + QUASISTEP_OPTIONAL_PARTS;
}

}  // namespace

Scene load_scene_or_fail(const std::string& path) {
  try {
    return load_scene_file(path);
  } catch (const SceneError& e) {
    throw InputError(path + ": " + e.what());
  }
}

/// The provenance comment of every output file written for this scene (no seed: one world).
std::string provenance(const Scene& scene) { return io::provenance_line(scene); }

std::string format_number(double v) {
  std::ostringstream o;
  o << std::setprecision(6) << v;
  return o.str();
}

/// `mc` under an MPI launcher with several ranks: rank 0 runs its chunks, gathers the others'
/// and writes every output; the other ranks only run their chunks (tools/cli/mc_mpi.hpp).
int run_mc_over_ranks(const Scene& scene, McCommandOptions o, std::ostream& out, std::ostream& err) {
#ifdef QUASISTEP_HAVE_MPI
  o.progress = false;
  if (mpi_rank() == 0) return run_mc(scene, o, out, err, run_monte_carlo_over_ranks);
  McOptions mo = mc_options(o);
  if (mo.shards != 1) return kOk;  // rank 0 refuses it and ends the run
  run_monte_carlo_chunks_for_rank0(scene, mo);
  return kOk;
#else
  return run_mc(scene, o, out, err);
#endif
}

int main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"quasistep: batched planar quasistatic contact simulation"};
  app.set_version_flag("--version", version_text());
  app.require_subcommand(1);
  CommonOptions common;

  bool contacts = false;
  std::string validate_path;
  CLI::App* validate = app.add_subcommand("validate", "Check a scene file and summarise the compiled model");
  validate->add_option("scene", validate_path, "Scene file (JSON, format 1)")->required();
  validate->add_flag("--contacts", contacts, "Also list every contact slot at the initial state");
  add_common(*validate, common);

  std::string lcp_path;
  LcpSolveOptions lcp_opt;
  CLI::App* lcp = app.add_subcommand("lcp", "Solve one LCP {\"M\", \"q\", \"free\"} by Lemke or exactly; prints JSON");
  lcp->add_option("problem", lcp_path, "Problem file (JSON)")->required();
  lcp->add_option("--method", lcp_opt.method,
                  "lemke | exact | auto (default: lemke; exact: the enumeration, with a certificate when none exists; "
                  "auto: Lemke, then exact if it ends on a ray or its limit)")
      ->check(CLI::IsMember({"lemke", "exact", "auto"}));
  CLI::Option* lcp_nodes = lcp->add_option("--node-limit", lcp_opt.node_limit, "Nodes of the enumeration (default 10000)")
                               ->check(CLI::Range(1L, 1000000L));
  add_common(*lcp, common);

  std::string ucp_path;
  UcpSolveOptions ucp_opt;
  CLI::App* ucp = app.add_subcommand("ucp", "Solve one uncoupled complementarity problem (Pang, Trinkle & Lo 1996); prints JSON");
  bool ucp_scene = false;
  ucp->add_option("problem", ucp_path, "Problem file (JSON, docs/ucp.md), or a scene with --scene")->required();
  ucp->add_flag("--scene", ucp_scene, "The file is a scene: its UCP at the initial state (one free body, vertical world)");
  ucp->add_option("--method", ucp_opt.method, "bilinear | exact | auto (default: bilinear, then exact if it stalls)")
      ->check(CLI::IsMember({"bilinear", "exact", "auto"}));
  ucp->add_flag("--all", ucp_opt.all, "List every contact mode combination with a solution (small problems)");
  ucp->add_option("--node-limit", ucp_opt.node_limit, "Nodes of the exact method / the enumeration (default 10000)")
      ->check(CLI::Range(1L, 1000000L));
  add_common(*ucp, common);

  RunOptions run_opt;
  CLI::App* run = app.add_subcommand("run", "Step one world and write its trajectory");
  run->add_option("scene", run_opt.scene, "Scene file (JSON, format 1)")->required();
  run->add_option("--steps", run_opt.steps, "Number of steps (default: the scene's step.steps)")
      ->check(fits<int>())
      ->check(kNonNegative);
  run->add_option("--out", run_opt.out, "Trajectory CSV: row 0 is the initial state, row l the state after l steps");
  run->add_option("--forces", run_opt.forces, "Contact CSV: one row per step and active slot");
  run->add_option("--html", run_opt.html,
                  "Replay page (self-contained HTML): the bodies at every step, with each step's contacts and impulses");
  run->add_option("--log-barrier-weight", run_opt.log_barrier_weight,
                  "anitescu_qp: smooth every step with this log-barrier weight kappa (1/J; model.log_barrier_weight, "
                  "docs/anitescu.md)");
  run->add_option("--derivatives", run_opt.derivatives,
                  "Derivatives CSV: one row per step, A = dx+/dx and B = dx+/du of the step (docs/derivatives.md)");
  run->add_option("--commands", run_opt.commands,
                  "Command CSV (step,<joint names>): each step's joint velocities instead of the scene's schedules; "
                  "its rows set the number of steps");
  add_common(*run, common);

  RenderOptions render_opt;
  CLI::App* render = app.add_subcommand(
      "render", "Write a replay page (self-contained HTML) of a trajectory, or a picture of the scene");
  render->add_option("scene", render_opt.scene, "Scene file (JSON, format 1)")->required();
  render->add_option("--traj", render_opt.traj, "Trajectory CSV of this scene (quasistep run --out); default: the initial state");
  render->add_option("--forces", render_opt.forces, "Contact CSV of the same run (quasistep run --forces): impulses drawn");
  render->add_option("--out", render_opt.out, "The page (HTML; - for standard output)")->required();
  add_common(*render, common);

  ThroughputOptions tp_opt;
  CLI::App* throughput =
      app.add_subcommand("throughput", "Step N copies of a scene's world with the batch engine; prints world-steps/s");
  throughput->add_option("scene", tp_opt.scene, "Scene file (JSON, format 1); its overrides are cycled over the worlds")
      ->required();
  throughput->add_option("--worlds", tp_opt.worlds, "Number of worlds (default 1024)")->check(fits<int>())->check(kPositive);
  throughput->add_option("--steps", tp_opt.steps, "Steps per world (default: the scene's step.steps)")
      ->check(fits<int>())
      ->check(kNonNegative);
  throughput->add_flag("--scalar", tp_opt.scalar, "Run the scalar reference path (T = double, world by world) instead of the lanes; same numbers");
  throughput->add_flag("--hash", tp_opt.hash, "Print a hash of the final state of every world");
  add_common(*throughput, common);

  ExportOptions export_opt;
  CLI::App* export_miqp =
      app.add_subcommand("export-miqp", "Write one step's big-M MIQP (Pang & Tedrake 2018, eq. (23)) as a CPLEX LP file");
  export_miqp->add_option("scene", export_opt.scene, "Scene file with model.formulation pang_tedrake_miqp")->required();
  export_miqp->add_option("--step", export_opt.step, "The step to export (counted from 1; the earlier ones are solved)")
      ->check(fits<int>())
      ->check(kPositive);
  export_miqp->add_option("--out", export_opt.out, "LP file (default, or -: standard output)");
  export_miqp->add_option("--big-m", export_opt.big_m, "M of the big-M constraints (default 10)")
      ->check(kPositive);
  add_common(*export_miqp, common);

  McCommandOptions mc_opt;
  CLI::App* mc = app.add_subcommand(
      "mc", "Monte Carlo study: sample the scene's uncertainty, judge each sample by its success section");
  mc->add_option("scene", mc_opt.scene,
                 "Scene file with uncertainty and success sections (default: the built-in study, " +
                     std::string(kDefaultStudyName) + ")");
  mc->add_option("--samples", mc_opt.samples, "Number of samples N of the whole study (default 10000)")
      ->check(fits<long>());
  mc->add_option("--seed", mc_opt.seed, "Seed of the random stream (default 0)")
      ->check(fits<std::uint64_t>())
      ->check(kNonNegative);  // "-1" would otherwise wrap to 2^64 - 1
  mc->add_option("--out", mc_opt.out, "Sample CSV: the study's provenance, then one row per sample");
  mc->add_option("--report", mc_opt.report,
                 "Self-contained HTML report: the scene, replays of samples, plots of the outcomes");
  mc->add_option("--report-axes", mc_opt.report_axes,
                 "The report's scatter plot: two uncertain parameters A,B (paths or 1-based numbers; default 1,2)");
  mc->add_option("--shard", mc_opt.shard, "Run the K-th of M disjoint slices of the samples, K/M with 0 <= K < M");
  mc->add_option("--trajectories", mc_opt.trajectories, "Object paths kept for the report (default 8)")
      ->check(CLI::Range(0, 1000));
  add_common(*mc, common);

  PlanCommandOptions plan_opt;
  CLI::App* plan = app.add_subcommand(
      "plan", "Plan to the scene's plan.goal with an OMPL planner; writes the controls as a command file");
  plan->add_option("scene", plan_opt.scene, "Scene file with a plan section")->required();
  plan->add_option("--out", plan_opt.out, "Command CSV of the plan (quasistep run SCENE --commands replays it); - for standard output")
      ->required();
  plan->add_option("--planner", plan_opt.planner, "rrt | sst | kpiece (default rrt)")
      ->check(CLI::IsMember({"rrt", "sst", "kpiece"}));
  plan->add_option("--time", plan_opt.time, "Wall-time limit of the search in seconds (default 10)")
      ->check(kPositive)
      ->check(CLI::Range(0.0, 1e6));
  plan->add_option("--max-propagations", plan_opt.max_propagations,
                   "Stop after this many steps have been stepped (deterministic for a seed; default: no limit)")
      ->check(fits<long>())
      ->check(kPositive);
  plan->add_option("--seed", plan_opt.seed, "Seed of the planner's random numbers (default 1)")
      ->check(fits<std::uint64_t>())
      ->check(kNonNegative);
  plan->add_option("--sampler", plan_opt.sampler,
                   "RRT's control sampling: batched (K controls stepped together, the closest kept; default) or "
                   "single (OMPL's, one control)")
      ->check(CLI::IsMember({"batched", "single"}));
  plan->add_option("--controls", plan_opt.controls, "K of the batched sampler (default 32)")->check(CLI::Range(1, 4096));
  add_common(*plan, common);

  std::vector<std::string> merge_files;
  std::string merge_report;
  CLI::App* mc_merge =
      app.add_subcommand("mc-merge", "Merge the sample CSVs of a sharded study; prints the summary of the whole study");
  mc_merge->add_option("files", merge_files, "Sample CSVs written by quasistep mc --shard K/M --out")->required();
  mc_merge->add_option("--report", merge_report, "Self-contained HTML report of the merged study");
  std::string merge_scene, merge_axes;
  mc_merge->add_option("--scene", merge_scene,
                       "The study's scene: the report draws it and replays samples (they are run again)");
  mc_merge->add_option("--report-axes", merge_axes, "The report's scatter plot: two uncertain parameters A,B");
  add_common(*mc_merge, common);

  // The command as typed, for the provenance of reports.
  std::string command_line = "quasistep";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool plain = !a.empty() && a.find_first_of(" \t'\"\\$`") == std::string::npos;
    std::string quoted = "'";
    for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    command_line += " " + (plain ? a : quoted + "'");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    err << "quasistep: " << io::printable(e.what()) << " (see --help)\n";
    return kInputError;
  }

  try {
    // More threads than cores never speeds a study up, and thousands of them can fail to be
    // created (an abort inside the scheduler): cap, and say so. Results do not depend on it.
    const int max_threads = std::max(64, 4 * static_cast<int>(std::thread::hardware_concurrency()));
    if (common.threads > max_threads) {
      err << "quasistep: note: --threads " << common.threads << " capped at " << max_threads << "\n";
      common.threads = max_threads;
    }
    std::optional<tbb::global_control> threads;
    if (common.threads > 0) threads.emplace(tbb::global_control::max_allowed_parallelism, common.threads);
    if (*validate) return cmd_validate(validate_path, contacts, out, err);
    if (*run) return cmd_run(run_opt, out, err);
    if (*render) return cmd_render(render_opt, out, err);
    if (*lcp) return cmd_lcp(lcp_path, lcp_opt, lcp_nodes->count() > 0, out);
    if (*ucp) return cmd_ucp(ucp_path, ucp_scene, ucp_opt, out);
    if (*export_miqp) return cmd_export_miqp(export_opt, out, err);
    if (*mc) {
      mc_opt.threads = common.threads;
      mc_opt.command_line = command_line;
      if (!mc_opt.report_axes.empty() && mc_opt.report.empty())
        throw InputError("--report-axes " + mc_opt.report_axes + ": needs --report");
      // The progress bar only on a terminal: a log file gets the summary, not carriage returns.
      mc_opt.progress = &err == &std::cerr && isatty(STDERR_FILENO);
      if (mc_opt.samples < 1)
        throw InputError("--samples " + std::to_string(mc_opt.samples) + ": a study needs at least 1 sample");
      // No scene: the built-in study, the same bytes as the example (and so the same hash).
      const Scene scene = mc_opt.scene.empty() ? parse_scene(kDefaultStudy, std::string("built-in ") + kDefaultStudyName)
                                               : load_scene_or_fail(mc_opt.scene);
      if (mc_opt.scene.empty()) mc_opt.scene = scene.source;
      try {
        if (mpi_size() > 1) return run_mc_over_ranks(scene, mc_opt, out, err);
        return run_mc(scene, mc_opt, out, err);
      } catch (const BatchError& e) {
        throw InputError(mc_opt.scene + ": " + e.what());
      } catch (const std::runtime_error& e) {
        throw InputError(e.what());
      }
    }
    if (*mc_merge) {
      try {
        if ((!merge_axes.empty() || !merge_scene.empty()) && merge_report.empty())
          throw InputError(std::string(merge_axes.empty() ? "--scene" : "--report-axes") + ": needs --report");
        std::optional<Scene> scene;
        if (!merge_scene.empty()) scene.emplace(load_scene_or_fail(merge_scene));
        return run_mc_merge(merge_files, merge_report, scene ? &*scene : nullptr, merge_axes, command_line, out, err);
      } catch (const std::runtime_error& e) {
        throw InputError(e.what());
      }
    }
    if (*plan) {
      const Scene scene = load_scene_or_fail(plan_opt.scene);
#ifdef QUASISTEP_HAVE_OMPL
      plan_opt.threads = common.threads;
      try {
        return run_plan(scene, plan_opt, out, err);
      } catch (const BatchError& e) {
        throw InputError(plan_opt.scene + ": " + e.what());
      } catch (const std::runtime_error& e) {
        throw InputError(e.what());
      }
#else
      throw InputError("plan: this build has no OMPL planner (install Debian's libompl-dev, then configure and build again)");
#endif
    }
    if (*throughput) {
      tp_opt.threads = common.threads;
      const Scene scene = load_scene_or_fail(tp_opt.scene);
      try {
        return run_throughput(scene, tp_opt, out);
      } catch (const BatchError& e) {
        throw InputError(e.what());
      }
    }
  } catch (const InputError& e) {
    // Every message is one line whatever a path, key or name in it holds.
    err << "quasistep: " << io::printable(e.what()) << "\n";
    return kInputError;
  } catch (const io::OutputError& e) {
    err << "quasistep: " << io::printable(e.what()) << "\n";
    return kInputError;
  } catch (const std::bad_alloc&) {
    // Sizes are checked against memory before the big allocations; this is the last line.
    err << "quasistep: out of memory (reduce the number of worlds, samples, steps or bodies)\n";
    return kInputError;
  } catch (const std::system_error& e) {
    err << "quasistep: " << io::printable(e.what()) << "\n";  // e.g. a thread could not be created
    return kInputError;
  } catch (const std::exception& e) {
    err << "quasistep: " << io::printable(e.what()) << "\n";
    return kInputError;
  }
  return kInputError;
}

}  // namespace qs::cli

#include "tools/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <tbb/global_control.h>

#include "core/contacts.hpp"
#include "core/scene.hpp"
#include "core/version.hpp"
#include "tools/lcp_command.hpp"
#include "tools/output_file.hpp"

namespace qs::cli {
namespace {

/// A user-facing failure: one line on stderr, exit code 1.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CommonOptions {
  int threads = 0;  // 0: all cores
};

void add_common(CLI::App& app, CommonOptions& o) {
  app.add_option("--threads", o.threads, "Worker threads (0: all cores)")->check(CLI::NonNegativeNumber);
}

std::string dof_list(const Model& m, int begin, int end) {
  std::string s = "[";
  for (int i = begin; i < end; ++i) s += (i > begin ? ", " : "") + m.dofs[i].name;
  return s + "]";
}

std::string format_number(double v) {
  std::ostringstream o;
  o << std::setprecision(6) << v;
  return o.str();
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
  out << "  bodies    " << m.bodies.size() << " (" << kinds[0] << " fixed, " << kinds[1] << " free, " << kinds[2]
      << " linked), " << m.joints.size() << " joints, " << m.shapes.size() << " shapes\n";
  out << "  dofs      " << m.n_q() << ": u = " << dof_list(m, 0, m.n_u) << ", a = " << dof_list(m, m.n_u, m.n_q())
      << "\n";
  out << "  contacts  " << m.pairs.size() << " pairs, " << m.n_slots() << " slots, margin "
      << format_number(m.contact_margin) << " m\n";
  if (m.step.h > 0) out << "  step      h = " << format_number(m.step.h) << " s, " << m.step.steps << " steps\n";
  else out << "  step      (none given)\n";
  if (!scene.overrides.empty()) out << "  overrides " << scene.overrides.size() << " worlds\n";
  if (!scene.uncertainty.empty()) out << "  uncertain " << scene.uncertainty.size() << " parameters\n";
  if (scene.success) out << "  success   " << (scene.success->kind == SuccessCriterion::Kind::lifted ? "lifted" : "goal_region") << "\n";
}

/// The contact slots at the initial state, one line each.
void print_contacts(const Model& m, const State& s, std::ostream& out) {
  ContactWorkspace ws(m);
  ws.evaluate(m, s.q.data());
  out << "  slot  pair                         feature        phi (m)       normal            active\n";
  for (int i = 0; i < m.n_slots(); ++i) {
    const ContactSlot& cs = m.slots[i];
    const ContactFrame<double>& f = ws.frame[i];
    std::ostringstream feature;
    // body:shape#feature, the shape counted within its body
    const Shape& fs = m.shapes[cs.feature_shape];
    const std::vector<int>& own = m.bodies[fs.body].shapes;
    feature << m.bodies[fs.body].name << ":" << (std::find(own.begin(), own.end(), cs.feature_shape) - own.begin()) << "#"
            << cs.feature_index;
    out << "  " << std::setw(4) << i << "  " << std::left << std::setw(28) << m.pair_name(cs.pair) << " "
        << std::setw(14) << feature.str() << std::right << std::setw(12) << format_number(f.phi) << "   ("
        << std::setw(6) << format_number(f.normal.x) << ", " << std::setw(6) << format_number(f.normal.y) << ")   "
        << (ws.active(m, i) ? "yes" : "no") << "\n";
  }
}

Scene load(const std::string& path) {
  try {
    return load_scene_file(path);
  } catch (const SceneError& e) {
    throw InputError(path + ": " + e.what());
  }
}

int cmd_lcp(const std::string& path, std::ostream& out) {
  LcpProblem problem;
  try {
    problem = load_lcp_problem(path);
  } catch (const JsonInputError& e) {
    throw InputError(path + ": " + e.what());
  }
  // Exit 0 whenever the solver ran, whatever it concluded (see cli.hpp).
  out << solve_lcp_to_json(problem) << "\n";
  return kOk;
}

int cmd_validate(const std::string& path, bool contacts, std::ostream& out) {
  const Scene scene = load(path);
  out << "ok: " << path << "\n";
  print_summary(scene, out);
  if (contacts) print_contacts(*scene.model, initial_state(*scene.model), out);
  return kOk;
}

struct RunOptions {
  std::string scene;
  std::optional<int> steps;
  std::string out;
  std::string forces;
};

/// The provenance comment of every output file written for this scene (no seed: one world).
std::string provenance(const Scene& scene) {
  const Model& m = *scene.model;
  return io::provenance_line(scene.source, scene.hash, "none", std::string(to_string(m.world.type)),
                             std::string(to_string(m.formulation)));
}

void write_trajectory_header(const Scene& scene, std::ostream& o) {
  const Model& m = *scene.model;
  o << provenance(scene) << "\n";
  o << "step,t";
  for (const Dof& d : m.dofs) o << "," << d.name;
  o << "\n";
}

void write_trajectory_row(const State& s, std::ostream& o) {
  o << s.step << "," << s.t;
  for (Eigen::Index i = 0; i < s.q.size(); ++i) o << "," << s.q[i];
  o << "\n";
}

int cmd_run(const RunOptions& opt, std::ostream& err) {
  const Scene scene = load(opt.scene);
  const Model& m = *scene.model;
  const int steps = opt.steps.value_or(m.step.steps);
  if (steps > 0 && !(m.step.h > 0)) throw InputError(opt.scene + ": step.h: missing (required to take steps)");
  if (steps > 0) {
    // Honest refusal until the formulation's stepper exists (LCP steppers, MIQP, UCP,
    // Anitescu and ECP issues); the plumbing below already writes the outputs.
    throw InputError(opt.scene + ": model.formulation: \"" + std::string(to_string(m.formulation)) +
                     "\" has no stepper in this build yet; --steps 0 writes the initial state");
  }
  const State s = initial_state(m);
  std::unique_ptr<io::OutputFile> traj, forces;
  try {
    if (!opt.out.empty()) traj = std::make_unique<io::OutputFile>(opt.out);
    if (!opt.forces.empty()) forces = std::make_unique<io::OutputFile>(opt.forces);
  } catch (const std::runtime_error& e) {
    throw InputError(e.what());
  }
  if (traj) {
    write_trajectory_header(scene, traj->stream());
    write_trajectory_row(s, traj->stream());
  }
  if (forces) {
    forces->stream() << provenance(scene) << "\nstep,t,slot,pair,phi,normal_impulse,tangent_impulse,status\n";
  }
  ContactWorkspace ws(m);
  ws.evaluate(m, s.q.data());
  int active = 0;
  double min_phi = std::numeric_limits<double>::infinity();
  for (int i = 0; i < m.n_slots(); ++i) {
    active += ws.active(m, i);
    min_phi = std::min(min_phi, ws.frame[i].phi);
  }
  try {
    if (traj) traj->commit();
    if (forces) forces->commit();
  } catch (const std::runtime_error& e) {
    throw InputError(e.what());
  }
  err << "run: " << steps << " steps of " << to_string(m.formulation) << "; " << m.n_slots() << " contact slots, "
      << active << " active, min phi " << format_number(min_phi) << " m"
      << (traj ? "; trajectory in " + opt.out : std::string()) << "\n";
  return kOk;
}

}  // namespace

int main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"quasistep: batched planar quasistatic contact simulation"};
  app.set_version_flag("--version", std::string("quasistep ") + kVersion);
  app.require_subcommand(1);
  CommonOptions common;

  bool contacts = false;
  std::string validate_path;
  CLI::App* validate = app.add_subcommand("validate", "Check a scene file and summarise the compiled model");
  validate->add_option("scene", validate_path, "Scene file (JSON, format 1)")->required();
  validate->add_flag("--contacts", contacts, "Also list every contact slot at the initial state");
  add_common(*validate, common);

  std::string lcp_path;
  CLI::App* lcp = app.add_subcommand("lcp", "Solve one LCP {\"M\", \"q\", \"free\"} by Lemke; prints JSON");
  lcp->add_option("problem", lcp_path, "Problem file (JSON)")->required();
  add_common(*lcp, common);

  RunOptions run_opt;
  CLI::App* run = app.add_subcommand("run", "Step one world and write its trajectory");
  run->add_option("scene", run_opt.scene, "Scene file (JSON, format 1)")->required();
  run->add_option("--steps", run_opt.steps, "Number of steps (default: the scene's step.steps)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--out", run_opt.out, "Trajectory CSV: row 0 is the initial state, row l the state after l steps");
  run->add_option("--forces", run_opt.forces, "Contact CSV: one row per step and active slot");
  add_common(*run, common);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    err << "quasistep: " << e.what() << " (see --help)\n";
    return kInputError;
  }

  try {
    std::optional<tbb::global_control> threads;
    if (common.threads > 0) threads.emplace(tbb::global_control::max_allowed_parallelism, common.threads);
    if (*validate) return cmd_validate(validate_path, contacts, out);
    if (*run) return cmd_run(run_opt, err);
    if (*lcp) return cmd_lcp(lcp_path, out);
  } catch (const InputError& e) {
    err << "quasistep: " << e.what() << "\n";
    return kInputError;
  }
  return kInputError;
}

}  // namespace qs::cli

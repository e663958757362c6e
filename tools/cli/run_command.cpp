#include "tools/cli/run_command.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iomanip>
#include <limits>
#include <memory>
#include <ostream>
#include <sstream>
#include <vector>

#include "quasistep/core/commands_csv.hpp"
#include "quasistep/core/contacts.hpp"
#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/formulation_table.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp"
#include "quasistep/core/output_file.hpp"
#include "quasistep/core/stepper.hpp"
#include "tools/cli/cli.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/report/replay.hpp"

namespace qs::cli {
namespace {

/// The header: the provenance line (with the command file, if any), then step, t, one
/// column per DOF, then the stepper's extra columns (Stepper::extra_columns(); none for most
/// steppers).
void write_trajectory_header(const Scene& scene, const std::vector<std::string>& extra, const std::string& commands,
                             const std::string& smoothing, std::ostream& o) {
  const Model& m = *scene.model;
  // A run under a command file (or smoothed) says so: its trajectory is not the scene's own.
  o << provenance(scene) << (commands.empty() ? std::string() : " commands=" + io::printable(commands)) << smoothing
    << "\n";
  o << "step,t";
  for (const Dof& d : m.dofs) o << "," << d.name;
  for (const std::string& c : extra) o << "," << c;
  o << "\n";
}

/// One row: the State, then n_extra cells holding `extra` (the stepper's values for the step
/// that produced the row); cells past extra.size() are left empty, as for row 0, which no
/// step produced.
void write_trajectory_row(const State& s, const std::vector<double>& extra, std::size_t n_extra, std::ostream& o) {
  o << s.step << "," << s.t;
  for (Eigen::Index i = 0; i < s.q.size(); ++i) o << "," << s.q[i];
  for (std::size_t i = 0; i < n_extra; ++i) {
    o << ",";
    if (i < extra.size()) o << extra[i];
  }
  o << "\n";
}

/// The derivatives CSV's header: provenance, then step, t, every entry of A by rows
/// (`d<x_i>+/d<x_j>`), every entry of B by rows (`d<x_i>+/du_<joint>`), then degenerate,
/// margin and status. x's entries are named by derivative_state_names, u's by command_names.
void write_derivatives_header(const Scene& scene, const std::string& provenance_line, std::ostream& o) {
  const Model& m = *scene.model;
  const std::vector<std::string> x = derivative_state_names(m), u = command_names(m);
  o << provenance_line << "\nstep,t";
  for (const std::string& row : x)
    for (const std::string& col : x) o << ",d" << row << "+/d" << col;
  for (const std::string& row : x)
    for (const std::string& col : u) o << ",d" << row << "+/du_" << col;
  o << ",degenerate,margin,status\n";
}

/// One row: the step's A and B (empty cells when the step has none), and why not.
void write_derivatives_row(int step, double t, const StepDerivatives& d, int nx, int na, std::ostream& o) {
  o << step << "," << t;
  const bool have = d.status == Status::solved;
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < nx; ++j) {
      o << ",";
      if (have) o << d.A(i, j);
    }
  for (int i = 0; i < nx; ++i)
    for (int a = 0; a < na; ++a) {
      o << ",";
      if (have) o << d.B(i, a);
    }
  o << "," << (have ? (d.degenerate ? "1" : "0") : "") << ",";
  if (have) o << d.margin;
  o << "," << to_string(d.status) << "\n";
}

/// The worst (most negative) gap of any slot at configuration q, in m; +inf without slots.
double min_phi(const Model& m, ContactWorkspace& ws, const Eigen::VectorXd& q) {
  ws.evaluate(m, q.data());
  double v = std::numeric_limits<double>::infinity();
  for (int i = 0; i < m.n_slots(); ++i) v = std::min(v, ws.frame[i].phi);
  return v;
}

/// One forces-CSV row per active slot of the step just taken (or failed: impulses empty).
void write_force_rows(const Model& m, const Stepper& st, int step, double t, Status status, std::ostream& o) {
  for (int i = 0; i < m.n_slots(); ++i) {
    if (!st.active()[i]) continue;
    o << step << "," << t << "," << i << "," << m.pair_name(m.slots[i].pair) << "," << st.phi()[i] << ",";
    if (status == Status::solved) o << st.normal_impulse()[i] << "," << st.tangent_impulse()[i];
    else o << ",";
    o << "," << to_string(status) << "\n";
  }
}

}  // namespace

/// `render`: the replay page of a trajectory (and its forces), or of the initial state.
int cmd_render(const RenderOptions& opt, std::ostream& out, std::ostream& err) {
  const Scene scene = load_scene_or_fail(opt.scene);
  const Model& m = *scene.model;
  if (!opt.forces.empty() && opt.traj.empty())
    throw InputError("--forces needs --traj: the impulses are drawn on the trajectory's states");
  const auto open = [](const std::string& path) {
    if (path == "-") throw InputError("render reads --traj and --forces from files, not standard input");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path + ": cannot open for reading");
    return in;
  };
  io::ReplayInput replay;
  try {
    if (opt.traj.empty()) {
      replay = io::initial_replay(m);
    } else {
      std::ifstream in = open(opt.traj);
      replay = io::read_trajectory_csv(in, opt.traj, scene);
    }
    if (!opt.forces.empty()) {
      std::ifstream in = open(opt.forces);
      io::read_forces_csv(in, opt.forces, scene, replay);
    }
  } catch (const io::ReplayError& e) {
    throw InputError(e.what());
  }
  std::vector<std::string> inputs = {opt.scene};
  for (const std::string& f : {opt.traj, opt.forces})
    if (!f.empty()) inputs.push_back(f);
  io::OutputSet outputs(out, inputs);
  io::Output* page = outputs.add("--out", opt.out);
  outputs.open();
  io::write_replay_html(scene, replay, provenance(scene), page->stream());
  outputs.commit();
  if (page->kind() != io::OutputKind::standard_output)
    err << "render: " << replay.rows() << (replay.rows() == 1 ? " frame" : " frames")
        << (replay.has_forces ? " with contact impulses" : "") << "; replay in " << io::printable(opt.out) << "\n";
  return kOk;
}

int cmd_run(const RunOptions& opt, std::ostream& out, std::ostream& err) {
  Scene scene = load_scene_or_fail(opt.scene);
  // --log-barrier-weight: the scene's model with its steps smoothed; the outputs say so.
  std::string smoothing;
  if (opt.log_barrier_weight) {
    try {
      scene.model = with_log_barrier_weight(*scene.model, *opt.log_barrier_weight);
    } catch (const SceneError& e) {
      throw InputError(std::string("--log-barrier-weight: ") + e.what());
    }
    // The shortest text that reads back as the same double (0.1, not 0.10000000000000001).
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, *opt.log_barrier_weight).ptr;
    smoothing = " log_barrier_weight=" + std::string(text, end);
  }
  const Model& m = *scene.model;
  // A command file replaces the velocity schedules; its rows say how many steps to take.
  std::optional<io::CommandSequence> commands;
  if (!opt.commands.empty()) {
    try {
      commands = io::read_commands_csv_file(opt.commands, command_names(m));
    } catch (const io::CommandsCsvError& e) {
      throw InputError(std::string("--commands: ") + e.what());
    }
    if (opt.steps && *opt.steps != commands->steps)
      throw InputError("--commands: " + opt.commands + " holds " + std::to_string(commands->steps) +
                       " steps; --steps asks for " + std::to_string(*opt.steps));
  }
  const int steps = commands ? commands->steps : opt.steps.value_or(m.step.steps);
  if (steps > 0 && !(m.step.h > 0)) throw InputError(opt.scene + ": step.h: missing (required to take steps)");
  std::unique_ptr<Stepper> stepper = make_stepper(m);
  if (steps > 0 && !stepper)
    throw InputError(opt.scene + ": model.formulation: \"" + std::string(to_string(m.formulation)) +
                     "\" has no stepper in this build yet; --steps 0 writes the initial state");
  State s = initial_state(m);
  // The command file is an input too: an output option naming it is refused.
  std::vector<std::string> inputs = {opt.scene};
  if (!opt.commands.empty() && opt.commands != "-") inputs.push_back(opt.commands);
  io::OutputSet outputs(out, inputs);
  io::Output* traj = outputs.add("--out", opt.out);
  io::Output* forces = outputs.add("--forces", opt.forces);
  io::Output* html = outputs.add("--html", opt.html);
  io::Output* derivatives = outputs.add("--derivatives", opt.derivatives);
  if (derivatives && !formulation_info(m.formulation).has_derivatives)
    throw InputError("--derivatives: " + std::string(to_string(m.formulation)) +
                     " has no step derivatives (docs/derivatives.md lists the formulations that have them)");
  if (html && (static_cast<double>(steps) + 1) * static_cast<double>(std::max<std::size_t>(m.bodies.size(), 1)) >
                  static_cast<double>(io::kMaxReplayBodyRows))
    throw InputError("--html: " + std::to_string(steps) + " steps of " + std::to_string(m.bodies.size()) +
                     " bodies is more than one replay draws (steps x bodies <= " + std::to_string(io::kMaxReplayBodyRows) +
                     "); replay part of the run with render --traj");
  outputs.open();
  // The replay page is written at the end from the rows and impulses kept here.
  std::optional<io::ReplayInput> replay;
  if (html) {
    replay.emplace();
    replay->frames_from = "this run";
    replay->has_forces = true;
    replay->scaled_by_k = stepper && stepper->impulses_scaled_by_k();
  }
  const auto keep_row = [&](const State& st, const std::vector<double>& values, std::size_t n_extra) {
    if (!replay) return;
    io::add_row(*replay, st);
    replay->extra_names = stepper ? stepper->extra_columns() : std::vector<std::string>{};
    for (std::size_t i = 0; i < n_extra; ++i)
      replay->extra.push_back(i < values.size() ? values[i] : std::numeric_limits<double>::quiet_NaN());
  };
  // The stepper's per-step outputs (Stepper::extra_columns()), appended to every row.
  const std::vector<std::string> extra_columns = stepper ? stepper->extra_columns() : std::vector<std::string>{};
  std::vector<double> extra;
  extra.reserve(extra_columns.size());
  if (traj) {
    write_trajectory_header(scene, extra_columns, opt.commands, smoothing, traj->stream());
    write_trajectory_row(s, extra, extra_columns.size(), traj->stream());  // row 0: no step, empty cells
  }
  keep_row(s, extra, extra_columns.size());
  if (forces) {
    // Halm-Posa's impulses are known up to the factor k of Halm & Posa 2018, eq. (10): say so in
    // the column names.
    const bool k = stepper && stepper->impulses_scaled_by_k();
    forces->stream() << provenance(scene) << smoothing << "\nstep,t,slot,pair,phi,"
                     << (k ? "normal_impulse_times_k,tangent_impulse_times_k" : "normal_impulse,tangent_impulse")
                     << ",status\n";
  }

  if (derivatives)
    write_derivatives_header(
        scene,
        provenance(scene) + (opt.commands.empty() ? std::string() : " commands=" + io::printable(opt.commands)) + smoothing,
        derivatives->stream());
  StepDerivatives step_derivatives;
  const int nx = derivatives ? derivative_state_size(m) : 0;
  int one_sided = 0, without = 0;  // steps whose derivative is one-sided, or none
  std::string first_without;

  // Worst values over the run: the kernel residual, the true (nonlinear) gap of every row's
  // state, the linearised gap and force balance of every step.
  ContactWorkspace ws(m);
  double worst_residual = 0, worst_lin = 0, worst_balance = 0;
  int by_enumeration = 0;  // steps Lemke could not solve and the exact enumeration did
  int open_contacts = 0;   // steps Lemke could not solve, every contact staying open
  int by_substeps = 0;     // ecp_ncp steps taken as substeps (their whole step found no solution)
  int in_body_units = 0;   // ecp_ncp steps solved in the body's own units (EcpNcp::body_units)
  const auto* ecp = dynamic_cast<const EcpNcp*>(stepper.get());
  double worst_phi = min_phi(m, ws, s.q);
  const double initial_phi = worst_phi;
  int failed_step = 0;
  Status failure = Status::solved;
  std::string failure_detail;
  WorldParams params(m);  // the scene's own values, and the command file's velocities
  params.commanded = commands.has_value();
  for (int l = 1; l <= steps; ++l) {
    if (commands) params.command.assign(commands->step(l).begin(), commands->step(l).end());
    const double t0 = s.t;
    const Status st = derivatives ? stepper->step(m, params, s, step_derivatives) : stepper->step(m, params, s);
    const StepReport& rep = stepper->report();
    if (derivatives && st == Status::solved) {
      write_derivatives_row(l, t0 + m.step.h, step_derivatives, nx, m.n_a, derivatives->stream());
      one_sided += step_derivatives.status == Status::solved && step_derivatives.degenerate;
      if (step_derivatives.status != Status::solved && without++ == 0)
        first_without = "step " + std::to_string(l) + ": " + step_derivatives.detail;
    }
    if (forces) write_force_rows(m, *stepper, l, t0 + m.step.h, st, forces->stream());
    if (replay && st == Status::solved) io::add_impulses(*replay, m, *stepper, l);
    if (st != Status::solved) {
      failed_step = l;
      failure = st;
      failure_detail = rep.detail;
      break;
    }
    worst_residual = std::max(worst_residual, rep.complementarity_residual);
    by_enumeration += rep.by_enumeration;
    open_contacts += rep.open_contacts;
    by_substeps += rep.substeps > 1;
    in_body_units += ecp && ecp->body_units();
    worst_lin = std::min(worst_lin, rep.linearised_penetration);
    worst_balance = std::max(worst_balance, rep.force_balance_residual);
    worst_phi = std::min(worst_phi, min_phi(m, ws, s.q));
    if (traj || replay) {
      extra.clear();
      stepper->extra_values(extra);
    }
    if (traj) write_trajectory_row(s, extra, extra_columns.size(), traj->stream());
    keep_row(s, extra, extra_columns.size());
  }
  const int taken = failed_step ? failed_step - 1 : steps;
  std::string failure_line;
  if (failed_step) {
    std::ostringstream f;
    f << "step " << failed_step << " (t = " << format_number(s.t) << " to " << format_number(s.t + m.step.h)
      << " s): " << to_string(failure) << (failure_detail.empty() ? "" : ": " + failure_detail);
    failure_line = f.str();
    // The rows written are valid; the file says where and why it stops.
    if (traj) traj->stream() << "# stopped: " << failure_line << "\n";
    if (forces) forces->stream() << "# stopped: " << failure_line << "\n";
    if (derivatives) derivatives->stream() << "# stopped: " << failure_line << "\n";
    if (replay) replay->stopped = failure_line;
  }
  if (html)
    io::write_replay_html(
        scene, *replay,
        provenance(scene) + (opt.commands.empty() ? std::string() : " commands=" + io::printable(opt.commands)) + smoothing,
        html->stream());
  outputs.commit();
  const double penetration = std::max(0.0, -worst_phi);
  err << "run: " << taken << " of " << steps << " steps of " << to_string(m.formulation) << "; worst residual "
      << format_number(worst_residual) << ", worst penetration " << format_number(penetration) << " m (linearised "
      << format_number(std::max(0.0, -worst_lin)) << " m)";
  if (m.world.type == WorldType::vertical) err << ", worst force balance " << format_number(worst_balance) << " N s";
  // A scene that starts in overlap is usually a placement mistake: say so.
  if (initial_phi < -1e-9) err << " (the initial state already overlaps by " << format_number(-initial_phi) << " m)";
  // A point list that is not a hull is accepted; the run says what the stepper used.
  if (m.body3 && m.body3->dropped_points)
    err << ", hull of " << m.body3->given_points << " points (" << m.body3->dropped_points << " not extreme, dropped)";
  if (by_enumeration) err << ", " << by_enumeration << " solved by enumeration after Lemke's ray";
  if (open_contacts) err << ", " << open_contacts << " with every contact open after Lemke failed";
  if (in_body_units)
    err << ", " << in_body_units << " solved in the body's own units (instead of the scene's)";
  if (by_substeps) err << ", " << by_substeps << " taken as substeps (no solution for the whole step)";
  const auto where = [](const io::Output* o) {
    return o->kind() == io::OutputKind::standard_output ? std::string("standard output") : io::printable(o->path());
  };
  err << ", " << (failed_step ? 1 : 0) << " failed" << (traj ? "; trajectory in " + where(traj) : std::string())
      << (forces ? "; forces in " + where(forces) : std::string()) << (html ? "; replay in " + where(html) : std::string());
  if (derivatives) {
    err << "; derivatives in " << where(derivatives);
    if (one_sided) err << " (" << one_sided << " one-sided at a switch)";
    if (without) err << " (" << without << " without: " << io::printable(first_without) << (without > 1 ? ", ..." : "") << ")";
  }
  err << "\n";
  // Without a trajectory file the run still shows where it ended (unless stdout carries
  // another CSV or the page): one line per DOF, six significant digits; --out writes every state exactly.
  const auto on_stdout = [](const io::Output* o) { return o && o->kind() == io::OutputKind::standard_output; };
  if (!traj && !on_stdout(forces) && !on_stdout(html) && !on_stdout(derivatives)) {
    out << "final state (step " << s.step << ", t = " << format_number(s.t) << " s):\n";
    std::size_t width = 0;
    for (const Dof& d : m.dofs) width = std::max(width, d.name.size());
    for (std::size_t i = 0; i < m.dofs.size(); ++i)
      out << "  " << std::left << std::setw(static_cast<int>(width)) << m.dofs[i].name << std::right << "  "
          << format_number(s.q[static_cast<Eigen::Index>(i)]) << "\n";
  }
  if (failed_step) {
    err << "quasistep: " << io::printable(opt.scene + ": " + failure_line) << "\n";
    return kStepFailed;
  }
  return kOk;
}

}  // namespace qs::cli

#include "tools/cli/plan_command.hpp"

#include <ompl/util/Console.h>
#include <ompl/util/RandomNumbers.h>

#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "quasistep/core/stepper.hpp"
#include "quasistep/planning/ompl_adapter.hpp"
#include "tools/cli/cli.hpp"
#include "quasistep/core/commands_csv.hpp"
#include "quasistep/core/output_file.hpp"

namespace qs::cli {

namespace {

// Four significant digits: the plan summary's times, distances and positions.
std::string number4(double v) {
  std::ostringstream s;
  s.precision(4);
  s << v;
  return s.str();
}

}  // namespace

int run_plan(const Scene& scene, const PlanCommandOptions& o, std::ostream& out, std::ostream& err) {
  if (!scene.plan) throw std::runtime_error(o.scene + ": no plan section (docs/scene-format.md, \"plan\")");
  planning::PlanOptions po;
  if (o.planner == "rrt") po.planner = planning::PlannerKind::rrt;
  else if (o.planner == "sst") po.planner = planning::PlannerKind::sst;
  else po.planner = planning::PlannerKind::kpiece;
  po.sampling = o.sampler == "single" ? planning::ControlSampling::single : planning::ControlSampling::batched;
  po.time_limit = o.time;
  po.max_propagations = o.max_propagations;
  po.seed = o.seed;
  po.batch_controls = o.controls;
  po.threads = o.threads;
  // OMPL's messages would interleave with ours; the command reports what matters itself. Its
  // process-wide seed covers the RNGs the adapter does not seed (the nearest-neighbour
  // structure's pivots).
  ompl::msg::setLogLevel(ompl::msg::LOG_NONE);
  ompl::RNG::setSeed(static_cast<std::uint32_t>(o.seed % 4294967291u) + 1u);

  // The output is checked (and its temporary file made) before the search, which can be long.
  io::OutputSet outputs(out, {o.scene});
  io::Output* file = outputs.add("--out", o.out);
  outputs.open();
  const planning::PlanResult r = planning::plan(scene, po);
  const Model& m = *scene.model;
  const std::string search = number4(r.seconds) + " s, " + std::to_string(r.propagations) + " steps stepped";
  if (!r.solved) {
    err << "plan: no plan reached the goal (" << r.planner << ", seed " << o.seed << ", " << search
        << "); the closest state found is " << (std::isfinite(r.goal_distance) ? number4(r.goal_distance) : "inf")
        << " tolerances outside the goal region; allow more --time or --max-propagations\n";
    return kNoPlan;
  }
  // The replay `run --commands` takes is stepped here once more: it must end where the planner did.
  std::unique_ptr<Stepper> stepper = make_stepper(m);
  State s = initial_state(m);
  WorldParams params(m);
  params.commanded = true;
  for (int l = 0; l < r.steps; ++l) {
    params.command.assign(r.commands.begin() + static_cast<std::ptrdiff_t>(l) * m.n_a,
                          r.commands.begin() + static_cast<std::ptrdiff_t>(l + 1) * m.n_a);
    if (stepper->step(m, params, s) != Status::solved)
      throw std::runtime_error("internal error: the plan's replay failed at step " + std::to_string(l + 1));
  }
  const auto same = [](const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    return a.size() == b.size() &&
           std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
  };
  if (!same(s.q, r.final_state.q) || !same(s.memory, r.final_state.memory))
    throw std::runtime_error("internal error: the plan's replay does not end where the planner's search did");

  io::CommandSequence commands;
  commands.names = command_names(m);
  commands.steps = r.steps;
  commands.values = r.commands;
  const std::string provenance =
      io::provenance_line(scene, std::to_string(o.seed)) +
      "\n# plan: planner=" + o.planner +
      // The sampler is RRT's: SST and KPIECE1 draw single controls whatever it says.
      (o.planner != "rrt" ? std::string()
                          : " sampler=" + o.sampler +
                                (o.sampler == "batched" ? " controls=" + std::to_string(o.controls) : std::string())) +
      " controls_in_plan=" + std::to_string(r.controls) + " steps=" + std::to_string(r.steps);
  io::write_commands_csv(commands, provenance, file->stream());
  outputs.commit();
  const std::array<double, 3> p = [&] {
    const Body& b = m.bodies[scene.plan->goal_body];
    std::array<double, 3> v{};
    for (int k = 0; k < 3; ++k) v[k] = b.dof[k] >= 0 ? s.q[b.dof[k]] : b.pose[k];
    return v;
  }();
  err << "plan: " << r.planner << " found a plan of " << r.steps << " steps (" << r.controls << " controls, "
      << number4(r.steps * m.step.h) << " s) in " << search << "; " << m.bodies[scene.plan->goal_body].name << " ends at ("
      << number4(p[0]) << ", " << number4(p[1]) << ", " << number4(p[2]) << ")";
  if (file->kind() != io::OutputKind::standard_output) err << "; commands in " << io::printable(o.out);
  err << "\n";
  return kOk;
}

}  // namespace qs::cli

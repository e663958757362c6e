// fidelity: quasistep's quasistatic and quasi-dynamic steps against full dynamics (MuJoCo).
//
// Prints one JSON document (tools/fidelity-report turns it into docs/fidelity.md):
//  - step_size: the Anitescu box push and grasp (Pang & Tedrake's slides), each in quasistatic
//    and quasi-dynamic mode at step sizes 0.1 ... 0.001 s, against MuJoCo at 1e-4 s: the
//    object's mean and final position error and each run's wall time;
//  - friction_map: the gripper of Pang & Tedrake (2018) over finger friction and cylinder
//    mass: does the cylinder rise with the fingers (lift) or stay (slip), under their MIQP
//    step, the Anitescu quasi-dynamic step and MuJoCo; where they disagree;
//  - pinch: Halm & Posa's finite-gain LCP (their sec. 6.3: four two-link arms pinch a square)
//    against MuJoCo with their velocity-feedback servo: error against c and against h.
// --quick runs a small subset (the CI smoke test); --check exits 1 with a one-line reason when
// the models disagree where they must agree (see check()).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "mujoco_world.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_qp_params.hpp"
#include "quasistep/core/kinematics.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string source(const std::string& rel) { return std::string(QUASISTEP_SOURCE_DIR) + "/" + rel; }

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The DOFs of the scene's one free body (its x, y and, when a DOF, theta).
struct Object {
  int x = -1, y = -1, theta = -1;
};

Object object_of(const qs::Model& m) {
  for (const qs::Body& b : m.bodies)
    if (b.kind == qs::BodyKind::free) return {b.dof[0], b.dof[1], b.dof[2]};
  throw std::runtime_error(m.name + ": no free body");
}

// A quasistep run: samples at every step, or the failed step.
struct QsRun {
  std::vector<fidelity::Sample> samples;
  std::string failure;
  double wall = 0;
};

QsRun run_quasistep(const qs::Model& m, const qs::WorldParams& p, double t_end) {
  QsRun r;
  const auto stepper = qs::make_stepper(m);
  qs::State s = qs::initial_state(m);
  const int steps = static_cast<int>(std::lround(t_end / p.h));
  auto keep = [&] { r.samples.push_back({s.t, std::vector<double>(s.q.data(), s.q.data() + s.q.size())}); };
  r.samples.reserve(steps + 1);
  const auto t0 = Clock::now();
  keep();
  for (int k = 1; k <= steps; ++k) {
    const qs::Status st = stepper->step(m, p, s);
    if (st != qs::Status::solved) {
      r.failure = "step " + std::to_string(k) + ": " + std::string(qs::to_string(st)) + ": " + stepper->report().detail;
      break;
    }
    keep();
  }
  r.wall = seconds_since(t0);
  return r;
}

// The largest distance between where quasistep's forward kinematics and MuJoCo put a shape's
// center (disks and boxes) at the scene's initial state: the translation's check (0 up to
// rounding when the two models are the same scene).
double translation_error(const qs::Model& m, const qs::WorldParams& p, fidelity::MujocoWorld& mj) {
  const qs::State s = qs::initial_state(m);
  std::vector<qs::Pose2<double>> body(m.bodies.size());
  std::vector<qs::Pose2<double>> joint(m.joints.size());
  qs::forward_kinematics(m, p, s.q.data(), body.data(), joint.data());
  double worst = 0;
  for (size_t k = 0; k < m.shapes.size(); ++k) {
    const std::optional<qs::Vec2<double>> there = mj.initial_center(static_cast<int>(k));
    if (!there) continue;
    const qs::Shape& sh = m.shapes[k];
    const qs::Vec2<double> local = sh.type == qs::ShapeType::disk
                                       ? sh.points[0]
                                       : qs::Vec2<double>{(sh.points[0].x + sh.points[2].x) / 2, (sh.points[0].y + sh.points[2].y) / 2};
    const qs::Vec2<double> here = body[sh.body].apply(local);
    worst = std::max(worst, std::hypot(here.x - there->x, here.y - there->y));
  }
  return worst;
}

// Linear interpolation of DOF i of `run` at time t (clamped to its ends).
double at_time(const std::vector<fidelity::Sample>& run, int i, double t) {
  if (t <= run.front().t) return run.front().q[i];
  if (t >= run.back().t) return run.back().q[i];
  const auto hi = std::lower_bound(run.begin(), run.end(), t, [](const fidelity::Sample& s, double v) { return s.t < v; });
  const auto lo = hi - 1;
  const double w = (t - lo->t) / (hi->t - lo->t);
  return lo->q[i] + w * (hi->q[i] - lo->q[i]);
}

// Errors of a quasistep run against the reference, over the reference's samples: the time
// mean of the object's position error (trapezoid rule), its final value, and the same for theta.
json errors(const std::vector<fidelity::Sample>& qs_run, const std::vector<fidelity::Sample>& ref, Object o) {
  double area = 0, area_theta = 0, prev = 0, prev_theta = 0, final_pos = 0, final_theta = 0;
  for (size_t k = 0; k < ref.size(); ++k) {
    const double t = ref[k].t;
    const double dx = at_time(qs_run, o.x, t) - ref[k].q[o.x];
    const double dy = o.y >= 0 ? at_time(qs_run, o.y, t) - ref[k].q[o.y] : 0.0;
    const double e = std::hypot(dx, dy);
    const double et = o.theta >= 0 ? std::abs(at_time(qs_run, o.theta, t) - ref[k].q[o.theta]) : 0.0;
    if (k > 0) {
      const double dt = t - ref[k - 1].t;
      area += dt * (e + prev) / 2;
      area_theta += dt * (et + prev_theta) / 2;
    }
    prev = e, prev_theta = et, final_pos = e, final_theta = et;
  }
  const double T = ref.back().t - ref.front().t;
  json j = {{"mean_position_error_m", area / T}, {"final_position_error_m", final_pos}};
  if (o.theta >= 0) j["mean_theta_error_rad"] = area_theta / T, j["final_theta_error_rad"] = final_theta;
  return j;
}

// The object's trajectory for plotting: t and its DOFs, every `every`-th sample and the last.
json trajectory(const std::vector<fidelity::Sample>& run, Object o, size_t every) {
  json rows = json::array();
  for (size_t k = 0; k < run.size(); ++k) {
    if (k % every != 0 && k + 1 != run.size()) continue;
    json row = {run[k].t, run[k].q[o.x], o.y >= 0 ? run[k].q[o.y] : 0.0};
    if (o.theta >= 0) row.push_back(run[k].q[o.theta]);
    rows.push_back(row);
  }
  return rows;
}

// Wall times are the fastest of this many runs (the runs are short: one is noisy).
constexpr int kRepeats = 3;

// A MuJoCo run to t_end sampled every ms, kRepeats times: its samples and its fastest wall time.
struct TimedRun {
  std::vector<fidelity::Sample> samples;
  double wall = 1e300;
};
TimedRun fastest_run(fidelity::MujocoWorld& world, double dt, double t_end) {
  const int every = std::max(1, static_cast<int>(std::lround(1e-3 / dt)));  // a sample per ms
  TimedRun r;
  for (int rep = 0; rep < kRepeats; ++rep) {
    const auto t0 = Clock::now();
    r.samples = world.run(t_end, every);
    r.wall = std::min(r.wall, seconds_since(t0));
  }
  return r;
}

// The scene of Halm & Posa's pinch (sec. 6.3), with every parameter the paper leaves open.
constexpr const char* kPinchScene = "bench/fidelity/scenes/halm_posa_pinch.json";

struct StudyScene {
  std::string name, file;
  double t_end;
};

json step_size_study(bool quick, const fidelity::MujocoOptions& mo) {
  const std::vector<StudyScene> scenes = {{"anitescu_box_push", "examples/anitescu_box_push.json", 1.0},
                                          {"anitescu_grasp", "examples/anitescu_grasp.json", 0.8}};
  const std::vector<double> hs = quick ? std::vector<double>{0.1, 0.01}
                                       : std::vector<double>{0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001};
  json out = json::array();
  for (const StudyScene& sc : scenes) {
    const qs::Scene scene = qs::load_scene_file(source(sc.file));
    const qs::Model& base = *scene.model;
    const Object o = object_of(base);
    const qs::WorldParams scene_params(base);
    fidelity::MujocoWorld mj(base, scene_params, mo);
    const double translated = translation_error(base, scene_params, mj);
    const TimedRun reference = fastest_run(mj, mo.dt, sc.t_end);
    const std::vector<fidelity::Sample>& ref = reference.samples;
    const double mj_wall = reference.wall;
    // MuJoCo at a ten times larger step against its own reference: what full dynamics costs
    // at the largest step that still tracks the reference (the cost comparison of the page).
    fidelity::MujocoOptions coarse_options = mo;
    coarse_options.dt = 10 * mo.dt;
    json coarse_json = {{"dt", coarse_options.dt}};
    try {
      fidelity::MujocoWorld coarse(base, scene_params, coarse_options);
      const TimedRun run = fastest_run(coarse, coarse_options.dt, sc.t_end);
      coarse_json["wall_s"] = run.wall;
      coarse_json["errors"] = errors(run.samples, ref, o);
    } catch (const std::exception& e) {  // unstable at the larger step: the page says so
      coarse_json["failure"] = e.what();
    }
    json js = {{"scene", sc.name}, {"t_end", sc.t_end}, {"translation_error_m", translated},
               {"mujoco", {{"dt", mo.dt}, {"wall_s", mj_wall}, {"trajectory", trajectory(ref, o, 5)}}},
               {"mujoco_coarse", coarse_json}, {"runs", json::array()}};
    for (const bool quasi_dynamic : {false, true}) {
      qs::Model m = base;
      qs::formulation_params<qs::AnitescuQpParams>(m).quasi_dynamic = quasi_dynamic;
      // The quasi-dynamic step needs the inertia of a free angle; the scene's quasistatic box
      // has none: the one MuJoCo gets.
      for (qs::Body& b : m.bodies)
        if (b.kind == qs::BodyKind::free && b.dof[2] >= 0 && !b.inertia) b.inertia = fidelity::inertia_of(m, b, b.mass);
      for (const double h : hs) {
        qs::WorldParams p(m);
        p.h = h;
        QsRun r = run_quasistep(m, p, sc.t_end);
        for (int rep = 1; rep < kRepeats; ++rep) r.wall = std::min(r.wall, run_quasistep(m, p, sc.t_end).wall);
        json run = {{"mode", quasi_dynamic ? "quasi_dynamic" : "quasistatic"}, {"h", h},
                    {"steps", static_cast<int>(r.samples.size()) - 1}, {"wall_s", r.wall}};
        if (!r.failure.empty()) {
          run["failure"] = r.failure;
        } else {
          run["errors"] = errors(r.samples, ref, o);
          if (h >= 0.01 - 1e-12) run["trajectory"] = trajectory(r.samples, o, 1);
        }
        js["runs"].push_back(run);
      }
    }
    out.push_back(js);
  }
  return out;
}

// Halm & Posa 2018, sec. 6.3 (Fig. 5): four two-link arms with different velocity-feedback
// gains pinch a square on a table. Their finite-gain LCP at c = 1000 ... 0.001 (at the scene's
// h) and at h = 0.1 ... 0.0025 s (at the scene's c) against MuJoCo with the servo the model
// describes (MujocoWorld: torques D (u - qdot), D = servo_gain B^-1), at two servo gains: the
// stiffer servo makes the support's friction a smaller part of the forces (closer to the
// model's c -> 0), at the price of deeper soft contacts.
json pinch_study(bool quick, const fidelity::MujocoOptions& mo) {
  const qs::Scene scene = qs::load_scene_file(source(kPinchScene));
  const qs::Model& m = *scene.model;
  const Object o = object_of(m);
  const qs::WorldParams scene_params(m);
  const double t_end = scene_params.h * m.step.steps;
  const int every = std::max(1, static_cast<int>(std::lround(1e-3 / mo.dt)));  // a sample per ms
  json out = {{"scene", m.name}, {"file", kPinchScene}, {"t_end", t_end}, {"h", scene_params.h},
              {"c", scene_params.model_gain}, {"mujoco", json::array()},
              {"c_runs", json::array()}, {"h_runs", json::array()}};
  std::vector<std::vector<fidelity::Sample>> refs;
  const std::vector<double> gains = quick ? std::vector<double>{mo.servo_gain}
                                          : std::vector<double>{mo.servo_gain, 4 * mo.servo_gain};
  for (const double gain : gains) {
    fidelity::MujocoOptions o_gain = mo;
    o_gain.servo_gain = gain;
    fidelity::MujocoWorld mj(m, scene_params, o_gain);
    if (refs.empty()) out["translation_error_m"] = translation_error(m, scene_params, mj);
    double wall = 1e300;
    for (int rep = 0; rep < kRepeats; ++rep) {
      const auto t0 = Clock::now();
      auto ref = mj.run(t_end, every);
      wall = std::min(wall, seconds_since(t0));
      if (rep == 0) refs.push_back(std::move(ref));
    }
    const std::vector<double>& end = refs.back().back().q;
    out["mujoco"].push_back({{"servo_gain", gain}, {"dt", mo.dt}, {"wall_s", wall},
                             {"final", {end[o.x], end[o.y], end[o.theta]}},
                             {"max_penetration_m", mj.max_penetration()},
                             {"trajectory", trajectory(refs.back(), o, 5)}});
  }
  {  // MuJoCo at a ten times larger step, first servo gain, against its reference: whether full
     // dynamics could be run more cheaply on this scene (the page's cost comparison).
    fidelity::MujocoOptions coarse_options = mo;
    coarse_options.dt = 10 * mo.dt;
    coarse_options.servo_gain = gains.front();
    json coarse_json = {{"servo_gain", gains.front()}, {"dt", coarse_options.dt}};
    try {
      fidelity::MujocoWorld coarse(m, scene_params, coarse_options);
      const TimedRun run = fastest_run(coarse, coarse_options.dt, t_end);
      const std::vector<double>& end = run.samples.back().q;
      coarse_json["wall_s"] = run.wall;
      coarse_json["final"] = {end[o.x], end[o.y], end[o.theta]};
      coarse_json["errors"] = errors(run.samples, refs.front(), o);
    } catch (const std::exception& e) {
      coarse_json["failure"] = e.what();
    }
    out["mujoco_coarse"] = coarse_json;
  }
  auto one = [&](double c, double h) {
    qs::WorldParams p(m);
    p.model_gain = c;
    p.h = h;
    QsRun r = run_quasistep(m, p, t_end);
    for (int rep = 1; rep < kRepeats; ++rep) r.wall = std::min(r.wall, run_quasistep(m, p, t_end).wall);
    json run = {{"c", c}, {"h", h}, {"steps", static_cast<int>(r.samples.size()) - 1}, {"wall_s", r.wall}};
    if (!r.failure.empty()) {
      run["failure"] = r.failure;
    } else {
      run["errors"] = json::array();  // against each MuJoCo run, in order
      for (const auto& ref : refs) run["errors"].push_back(errors(r.samples, ref, o));
      if (h >= 0.01 - 1e-12) run["trajectory"] = trajectory(r.samples, o, 1);
    }
    return run;
  };
  const std::vector<double> cs = quick ? std::vector<double>{scene_params.model_gain}
                                       : std::vector<double>{1e3, 1e2, 10, 1, 0.1, 0.01, 1e-3};
  for (const double c : cs) out["c_runs"].push_back(one(c, scene_params.h));
  if (!quick)
    for (const double h : {0.1, 0.05, 0.025, 0.01, 0.005, 0.0025}) out["h_runs"].push_back(one(scene_params.model_gain, h));
  return out;
}

// The pairs between a finger and the cylinder (their friction is the map's axis).
std::vector<int> finger_pairs(const qs::Model& m) {
  std::vector<int> out;
  for (size_t k = 0; k < m.pairs.size(); ++k) {
    const std::string& a = m.bodies[m.pairs[k].body_a].name;
    const std::string& b = m.bodies[m.pairs[k].body_b].name;
    if (a.find("finger") != std::string::npos || b.find("finger") != std::string::npos) out.push_back(static_cast<int>(k));
  }
  if (out.size() != 2) throw std::runtime_error(m.name + ": expected two finger-cylinder pairs");
  return out;
}

int body_index(const qs::Model& m, const std::string& name) {
  for (size_t b = 0; b < m.bodies.size(); ++b)
    if (m.bodies[b].name == name) return static_cast<int>(b);
  throw std::runtime_error(m.name + ": no body " + name);
}

// The gripper's lift ends at t = 0.39 s (Pang & Tedrake 2018, command (29)); the carriage has
// then risen 39 mm. "lift": the cylinder has risen at least kLiftThreshold with it.
constexpr double kLiftTime = 0.39;
constexpr double kLiftThreshold = 0.01;  // m

json friction_map_study(bool quick, const fidelity::MujocoOptions& mo) {
  const std::vector<double> mus = quick ? std::vector<double>{0.05, 0.5}
                                        : std::vector<double>{0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.8};
  const std::vector<double> masses = quick ? std::vector<double>{1.0} : std::vector<double>{0.5, 1.0, 2.0, 4.0};
  const qs::Scene anitescu = qs::load_scene_file(source("examples/anitescu_grasp.json"));
  const qs::Scene miqp = qs::load_scene_file(source("examples/pang_tedrake_grasp.json"));
  struct Entry {
    std::string name;
    const qs::Model* model;
  };
  const std::vector<Entry> models = {{"pang_tedrake_miqp", miqp.model.get()}, {"anitescu_quasi_dynamic", anitescu.model.get()}};
  json cells = json::array();
  for (const double mass : masses) {
    for (const double mu : mus) {
      json cell = {{"mu", mu}, {"mass", mass}};
      auto params_for = [&](const qs::Model& m) {
        qs::WorldParams p(m);
        for (int k : finger_pairs(m)) p.pair_friction[k] = mu;
        p.body_mass[body_index(m, "cylinder")] = mass;
        return p;
      };
      for (const Entry& e : models) {
        const qs::WorldParams p = params_for(*e.model);
        const QsRun r = run_quasistep(*e.model, p, kLiftTime);
        const Object o = object_of(*e.model);
        if (!r.failure.empty()) {
          cell[e.name] = {{"failure", r.failure}};
        } else {
          const double rise = r.samples.back().q[o.y] - r.samples.front().q[o.y];
          cell[e.name] = {{"rise_m", rise}, {"lift", rise >= kLiftThreshold}};
        }
      }
      const qs::WorldParams p = params_for(*anitescu.model);
      fidelity::MujocoWorld mj(*anitescu.model, p, mo);
      const auto ref = mj.run(kLiftTime, 100);
      const Object o = object_of(*anitescu.model);
      const double rise = ref.back().q[o.y] - ref.front().q[o.y];
      cell["mujoco"] = {{"rise_m", rise}, {"lift", rise >= kLiftThreshold}};
      cells.push_back(cell);
    }
  }
  return {{"lift_time_s", kLiftTime}, {"lift_threshold_m", kLiftThreshold}, {"cells", cells}};
}

// What must hold for the comparison to mean anything (the CI smoke test): every disk and box
// of the translated scenes starts where quasistep puts it; the box push ends where MuJoCo's
// ends to within 5 mm at h = 0.01 s; all three grasp models lift at mu = 0.5 and slip at
// mu = 0.05 (m = 1 kg); Halm & Posa's pinch at the scene's c and h ends within 10% of
// MuJoCo's displacement and turn of the square from MuJoCo's (the first servo gain).
std::string check(const json& doc) {
  // The MuJoCo model puts every disk and box where quasistep does (1 nm: rounding).
  std::vector<const json*> scenes = {&doc["pinch"]};
  for (const json& sc : doc["step_size"]) scenes.push_back(&sc);
  for (const json* sc : scenes)
    if (!((*sc)["translation_error_m"].get<double>() <= 1e-9))
      return (*sc)["scene"].get<std::string>() + ": MuJoCo places a shape " +
             std::to_string((*sc)["translation_error_m"].get<double>()) + " m from where quasistep does";
  const json& pinch = doc["pinch"];
  const json& mj = pinch["mujoco"][0];
  for (const json& r : pinch["c_runs"]) {
    if (r["c"] != pinch["c"]) continue;
    if (r.contains("failure")) return "pinch: " + r["failure"].get<std::string>();
    const double moved = std::hypot(mj["final"][0].get<double>(), mj["final"][1].get<double>());
    const double turned = std::abs(mj["final"][2].get<double>());
    const double e = r["errors"][0]["final_position_error_m"], et = r["errors"][0]["final_theta_error_rad"];
    if (!(e <= 0.1 * moved) || !(et <= 0.1 * turned))
      return "pinch: the square ends " + std::to_string(e * 1000) + " mm and " + std::to_string(et) +
             " rad from MuJoCo's (it moved " + std::to_string(moved * 1000) + " mm and turned " + std::to_string(turned) +
             " rad there)";
  }
  for (const json& sc : doc["step_size"]) {
    if (sc["scene"] != "anitescu_box_push") continue;
    for (const json& r : sc["runs"]) {
      if (r["mode"] != "quasistatic" || std::abs(r["h"].get<double>() - 0.01) > 1e-12) continue;
      if (r.contains("failure")) return "box push, h = 0.01: " + r["failure"].get<std::string>();
      const double e = r["errors"]["final_position_error_m"];
      if (e > 0.005) return "box push, h = 0.01: the box ends " + std::to_string(e * 1000) + " mm from MuJoCo's (> 5 mm)";
    }
  }
  for (const json& c : doc["friction_map"]["cells"]) {
    const double mu = c["mu"], mass = c["mass"];
    if (mass != 1.0 || (mu != 0.5 && mu != 0.05)) continue;
    for (const char* k : {"pang_tedrake_miqp", "anitescu_quasi_dynamic", "mujoco"}) {
      if (c[k].contains("failure")) return std::string(k) + " at mu = " + std::to_string(mu) + ": " + c[k]["failure"].get<std::string>();
      if (c[k]["lift"].get<bool>() != (mu == 0.5))
        return std::string(k) + " at mu = " + std::to_string(mu) + (mu == 0.5 ? " does not lift" : " lifts");
    }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"quasistep's quasistatic and quasi-dynamic steps against MuJoCo's full dynamics (docs/fidelity.md)"};
  bool quick = false, check_only = false;
  std::string mjcf_scene;
  fidelity::MujocoOptions mo;
  app.add_flag("--quick", quick, "a small subset (seconds)");
  app.add_flag("--check", check_only, "exit 1 with the reason when the models disagree where they must agree");
  app.add_option("--mjcf", mjcf_scene, "print the MuJoCo model of a scene file and exit")->check(CLI::ExistingFile);
  app.add_option("--dt", mo.dt, "MuJoCo's time step (s)")->check(CLI::PositiveNumber);
  app.add_option("--servo-gain", mo.servo_gain, "Halm & Posa scenes: MuJoCo's servo torques are servo_gain B^-1 (u - qdot)")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    if (!mjcf_scene.empty()) {
      const qs::Scene s = qs::load_scene_file(mjcf_scene);
      std::cout << fidelity::MujocoWorld(*s.model, qs::WorldParams(*s.model), mo).mjcf();
      return 0;
    }
    json doc = {{"mujoco_version", fidelity::mujoco_version()}, {"quick", quick}};
    doc["step_size"] = step_size_study(quick, mo);
    doc["friction_map"] = friction_map_study(quick, mo);
    doc["pinch"] = pinch_study(quick, mo);
    if (check_only) {
      const std::string why = check(doc);
      if (!why.empty()) {
        std::fprintf(stderr, "fidelity: %s\n", why.c_str());
        return 1;
      }
    }
    std::cout << doc.dump(1) << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fidelity: %s\n", e.what());
    return 1;
  }
  return 0;
}

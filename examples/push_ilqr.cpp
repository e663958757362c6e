// Gradient-based MPC pushing a puck to a goal (examples/push_ilqr.hpp), and its comparison
// with the sampling MPC of examples/push_mpc.hpp.
//   build/examples/push_ilqr [SCENE.json] [--derivatives exact|bundled|smoothed] [--kappa K]
//                            [--start K [--seed S]]
//   build/examples/push_ilqr --compare N [--seed S] [--kappa K]
// One run (from the scene's start, or from the comparison's start K) prints one line per
// replan and the result; exit 0 when the puck reached the goal,
// 2 when the controller gave up, 1 on bad input. --compare runs every controller on both
// worlds (examples/mpc_push.json, examples/anitescu_planar_push.json) from the same N random
// starts and prints a Markdown table (docs/derivatives.md, "Trajectory optimisation").
//
// The starts (chosen here): the puck at the origin, turned by an angle uniform in [-pi, pi);
// the pusher's center at a bearing uniform in [-pi, pi) from the puck's and 1 to 6 cm
// beyond contact, so that in about half the starts it must go around the puck. Start k
// draws from std::mt19937_64(seed * 1000003 + k): every controller sees the same starts.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "examples/push_ilqr.hpp"
#include "examples/push_mpc.hpp"
#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/scene.hpp"

namespace {

using qs::examples::PushIlqrSettings;

qs::State random_start(const qs::Model& m, double contact_distance, std::uint64_t seed, int k) {
  std::mt19937_64 rng(seed * 1000003 + static_cast<std::uint64_t>(k));
  std::uniform_real_distribution<double> angle(-std::numbers::pi, std::numbers::pi), gap(0.01, 0.06);
  qs::State s = qs::initial_state(m);
  s.q[2] = angle(rng);
  const double bearing = angle(rng), distance = contact_distance + gap(rng);
  s.q[3] = distance * std::cos(bearing);
  s.q[4] = distance * std::sin(bearing);
  // The Anitescu step's impedance references start where the pusher is.
  for (int a = 0; a < qs::derivative_memory_size(m); ++a) s.memory[a] = s.q[3 + a];
  return s;
}

struct Row {
  std::string world, controller;
  int reached = 0, runs = 0;
  double cost = 0, time_to_goal = 0, wall = 0, replans = 0;
};

void print(const Row& r) {
  std::printf("| %s | %s | %d / %d | %.4f | %.2f | %.1f | %.2f |\n", r.world.c_str(), r.controller.c_str(), r.reached,
              r.runs, r.cost / r.runs, r.reached ? r.time_to_goal / r.reached : 0.0, r.wall / r.runs * 1e3,
              r.wall / std::max(r.replans, 1.0) * 1e3);
  std::fflush(stdout);
}

int compare(int n, std::uint64_t seed, double kappa) {
  std::printf("| world | controller | reached | cost (m s) | time to goal (s) | wall time per run (ms) | per replan (ms) |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const char* name : {"mpc_push", "anitescu_planar_push"}) {
    const qs::Scene scene = qs::load_scene_file(std::string("examples/") + name + ".json");
    const bool anitescu = scene.model->formulation == qs::Formulation::anitescu_qp;
    PushIlqrSettings base;
    base.contact_distance = anitescu ? 0.06 : 0.05;
    const double dt = base.execute * scene.model->step.h;
    struct Variant {
      std::string label;
      bool sampling;
      qs::IlqrDerivatives derivatives;
    };
    std::vector<Variant> variants{{"sampling MPC (128 x 12 steps)", true, qs::IlqrDerivatives::exact},
                                  {"iLQR, exact derivatives", false, qs::IlqrDerivatives::exact}};
    if (anitescu)
      variants.push_back({"iLQR, smoothed (kappa " + std::to_string(static_cast<long long>(kappa)) + ")", false,
                          qs::IlqrDerivatives::smoothed});
    else
      variants.push_back({"iLQR, bundled (N 32, sigma 0.02)", false, qs::IlqrDerivatives::bundled});
    for (const Variant& v : variants) {
      Row row{name, v.label};
      for (int k = 0; k < n; ++k) {
        const qs::State start = random_start(*scene.model, base.contact_distance, seed, k);
        const auto t0 = std::chrono::steady_clock::now();
        bool reached;
        int replans;
        double cost;
        if (v.sampling) {
          qs::examples::PushMpcSettings s;
          s.seed = seed * 1000003 + static_cast<std::uint64_t>(k);
          const auto out = qs::examples::push_to_goal(scene.model, s, &start);
          reached = out.reached;
          replans = out.replans;
          cost = 0;
          for (const auto& p : out.puck_path)  // as PushIlqrResult::distance_time
            if (const double e = std::hypot(p[0] - s.goal[0], p[1] - s.goal[1]); e > s.tolerance) cost += e * dt;
        } else {
          PushIlqrSettings s = base;
          s.derivatives = v.derivatives;
          s.log_barrier_weight = kappa;
          const auto out = qs::examples::push_to_goal_ilqr(scene.model, s, &start);
          reached = out.reached;
          replans = out.replans;
          cost = out.distance_time;
        }
        row.wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ++row.runs;
        row.replans += replans;
        row.cost += cost;
        if (reached) {
          ++row.reached;
          row.time_to_goal += replans * dt;
        }
      }
      print(row);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = "examples/mpc_push.json";
  PushIlqrSettings settings;
  int runs = 0, start_index = -1;
  std::uint64_t seed = 1;
  try {
    // A whole argument as a number, or a one-line error naming the option.
    const auto number = [](const char* option, const char* text) {
      char* end = nullptr;
      const double v = std::strtod(text, &end);
      if (end == text || *end != '\0' || !std::isfinite(v))
        throw std::invalid_argument(std::string(option) + " needs a number (got '" + text + "')");
      return v;
    };
    // A whole number in [low, high].
    const auto whole = [&](const char* option, const char* text, double low, double high) {
      const double v = number(option, text);
      if (v != std::floor(v) || v < low || v > high)
        throw std::invalid_argument(std::string(option) + " needs a whole number from " + std::to_string(static_cast<long long>(low)) +
                                    " to " + std::to_string(static_cast<long long>(high)) + " (got '" + text + "')");
      return v;
    };
    for (int i = 1; i < argc; ++i) {
      const bool has_value = i + 1 < argc;
      if (std::strcmp(argv[i], "--derivatives") == 0 && has_value) {
        const std::string d = argv[++i];
        if (d == "exact") settings.derivatives = qs::IlqrDerivatives::exact;
        else if (d == "bundled") settings.derivatives = qs::IlqrDerivatives::bundled;
        else if (d == "smoothed") settings.derivatives = qs::IlqrDerivatives::smoothed;
        else throw std::invalid_argument("--derivatives must be exact, bundled or smoothed (got " + d + ")");
      } else if (std::strcmp(argv[i], "--kappa") == 0 && has_value) {
        settings.log_barrier_weight = number("--kappa", argv[++i]);
        if (!(settings.log_barrier_weight > 0)) throw std::invalid_argument("--kappa must be > 0");
      } else if (std::strcmp(argv[i], "--compare") == 0 && has_value) {
        runs = static_cast<int>(whole("--compare", argv[++i], 1, 1e6));
      } else if (std::strcmp(argv[i], "--start") == 0 && has_value) {
        start_index = static_cast<int>(whole("--start", argv[++i], 0, 1e9));
      } else if (std::strcmp(argv[i], "--seed") == 0 && has_value) {
        seed = static_cast<std::uint64_t>(whole("--seed", argv[++i], 0, 1e15));
      } else if (argv[i][0] == '-') {
        throw std::invalid_argument(std::string("unknown option or missing value: ") + argv[i]);
      } else {
        path = argv[i];
      }
    }
    if (runs > 0) return compare(runs, seed, settings.log_barrier_weight);
    const qs::Scene scene = qs::load_scene_file(path);
    if (scene.model->formulation == qs::Formulation::anitescu_qp) settings.contact_distance = 0.06;
    qs::examples::check_push_layout(*scene.model);
    qs::State start = qs::initial_state(*scene.model);
    if (start_index >= 0) start = random_start(*scene.model, settings.contact_distance, seed, start_index);
    const auto r = qs::examples::push_to_goal_ilqr(scene.model, settings, &start);
    for (std::size_t k = 0; k < r.puck_path.size(); ++k)
      std::cout << "replan " << k << ": puck (" << r.puck_path[k][0] << ", " << r.puck_path[k][1] << "), pusher ("
                << r.pusher_path[k][0] << ", " << r.pusher_path[k][1] << ")\n";
    std::cout << (r.reached ? "reached" : "gave up") << " after " << r.replans << " replans; puck " << r.final_error
              << " m from the goal (" << settings.goal[0] << ", " << settings.goal[1] << ")"
              << (r.failure.empty() ? "" : "; " + r.failure) << "\n";
    return r.reached ? 0 : 2;
  } catch (const std::exception& e) {
    std::cerr << "push_ilqr: " << e.what() << "\n";
    return 1;
  }
}

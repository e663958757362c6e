// Sampling MPC pushing a puck to a goal with the rollout API (examples/push_mpc.hpp).
//   build/examples/push_mpc [SCENE.json] [--seed S]
// Prints one line per replan (puck and pusher positions) and the result; exit 0 when the
// puck reached the goal, 2 when the planner gave up, 1 on bad input.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "examples/push_mpc.hpp"
#include "quasistep/core/scene.hpp"

int main(int argc, char** argv) {
  std::string path = "examples/mpc_push.json";
  qs::examples::PushMpcSettings settings;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) settings.seed = std::strtoull(argv[++i], nullptr, 10);
    else path = argv[i];
  }
  try {
    const qs::Scene scene = qs::load_scene_file(path);
    const auto r = qs::examples::push_to_goal(scene.model, settings);
    for (std::size_t k = 0; k < r.puck_path.size(); ++k)
      std::cout << "replan " << k << ": puck (" << r.puck_path[k][0] << ", " << r.puck_path[k][1] << "), pusher ("
                << r.pusher_path[k][0] << ", " << r.pusher_path[k][1] << ")\n";
    std::cout << (r.reached ? "reached" : "gave up") << " after " << r.replans << " replans; puck "
              << r.final_error << " m from the goal (" << settings.goal[0] << ", " << settings.goal[1] << ")\n";
    return r.reached ? 0 : 2;
  } catch (const std::exception& e) {
    std::cerr << "push_mpc: " << e.what() << "\n";
    return 1;
  }
}

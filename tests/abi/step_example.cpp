// Steps an example scene alone (the scene's own parameters) and prints its final state in
// hexadecimal floating point. tests/CMakeLists.txt builds it twice against the same library:
// with the library's flags, and as a user's program without -march (the x86-64 baseline,
// none of the library's compile options). Both must print the same bits: the library's
// types have one layout whatever -march a program uses (quasistep/kernels/eigen.hpp).
#include <cstdio>
#include <exception>

#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SCENE\n", argv[0]);
    return 2;
  }
  try {
    const qs::Scene scene = qs::load_scene_file(argv[1]);
    const qs::Model& m = *scene.model;
    const auto stepper = qs::make_stepper(m);
    qs::State s = qs::initial_state(m);
    for (int k = 0; k < m.step.steps; ++k)
      if (stepper->step(m, s) != qs::Status::solved) {
        std::printf("step %d: %s\n", k, stepper->report().detail.c_str());
        return 0;
      }
    std::printf("t %a\n", s.t);
    for (int i = 0; i < s.q.size(); ++i) std::printf("q%d %a\n", i, s.q[i]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}

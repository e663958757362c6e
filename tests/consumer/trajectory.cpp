// A user's program built out of tree against an installed quasistep (tests/consumer/run.sh):
// it steps a scene alone and prints its trajectory as `quasistep run --out` writes it
// (header step,t,<DOF names>, then one row per state, 17 significant digits), so the test can
// compare the two byte for byte.
#include <quasistep/quasistep.hpp>

#include <exception>
#include <iostream>
#include <memory>

// The user's own header of the same relative name as one of quasistep's: quasistep's headers
// must keep finding theirs (they include "quasistep/core/model.hpp").
#include "core/model.hpp"

namespace {
// With QS_CONSUMER_SHARES_TEMPLATES: template code the library uses too (its LCP solver,
// Eigen's products), instantiated here with this program's flags. The linker keeps one copy
// of each such function for the whole program, maybe this one: the library's steps must
// come out the same (Eigen unvectorised and sums in one order: docs/api.md).
bool use_the_librarys_templates() {
#ifndef QS_CONSUMER_SHARES_TEMPLATES
  return true;
#else
  Eigen::MatrixXd M = Eigen::MatrixXd::Identity(3, 3) * 2.0;
  M(0, 1) = M(1, 0) = 1.0;
  const Eigen::MatrixXd MtM = M.transpose() * M;
  const Eigen::VectorXd q = -MtM.col(0);
  auto lemke = std::make_unique<qs::Lemke<64>>();  // the capacity of the LCP steppers
  auto result = std::make_unique<qs::Lemke<64>::Result>();
  return lemke->solve(MtM, q, *result) == qs::Status::solved;
#endif
}

void print_row(const qs::State& s) {
  std::cout << s.step << "," << s.t;
  for (Eigen::Index i = 0; i < s.q.size(); ++i) std::cout << "," << s.q[i];
  std::cout << "\n";
}
}  // namespace

int main(int argc, char** argv) {
  static_assert(consumer::kOwnModelHeader, "the consumer's own core/model.hpp was not the one included");
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " SCENE.json\n";
    return 2;
  }
  if (!use_the_librarys_templates()) {
    std::cerr << "Lemke<64> did not solve a positive definite LCP\n";
    return 1;
  }
  try {
    const qs::Scene scene = qs::load_scene_file(argv[1]);
    const qs::Model& m = *scene.model;
    const std::unique_ptr<qs::Stepper> stepper = qs::make_stepper(m);
    qs::State s = qs::initial_state(m);
    std::cout.precision(17);
    std::cout << "step,t";
    for (const qs::Dof& d : m.dofs) std::cout << "," << d.name;
    std::cout << "\n";
    print_row(s);
    for (int k = 0; k < m.step.steps; ++k) {
      const qs::Status status = stepper->step(m, s);
      if (status != qs::Status::solved) {
        std::cerr << "step " << k + 1 << ": " << qs::to_string(status) << ": " << stepper->report().detail << "\n";
        return 1;
      }
      print_row(s);
    }
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}

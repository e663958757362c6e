#include "quasistep/core/derivatives.hpp"

#include "quasistep/core/formulation_table.hpp"

namespace qs {

int derivative_memory_size(const Model& m) {
  const FormulationInfo& f = formulation_info(m.formulation);
  return f.derivative_memory ? static_cast<int>(f.derivative_memory(m).size()) : 0;
}

void derivative_state(const Model& m, const State& s, Eigen::VectorXd& x) {
  const int memory = derivative_memory_size(m);
  x.resize(m.n_q() + memory);
  x.head(m.n_q()) = s.q;
  x.tail(memory) = s.memory.head(memory);
}

std::vector<std::string> derivative_state_names(const Model& m) {
  std::vector<std::string> names;
  for (const Dof& d : m.dofs) names.push_back(d.name);
  const FormulationInfo& f = formulation_info(m.formulation);
  if (f.derivative_memory)
    for (std::string& name : f.derivative_memory(m)) names.push_back(std::move(name));
  return names;
}

}  // namespace qs

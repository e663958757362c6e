// HalmPosaLcp::differentiate's workspace (halm_posa_lcp_derivatives.cpp), sized once from the
// Model; private to the stepper (halm_posa_lcp.cpp destroys it).
#pragma once

#include <vector>

#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lanes.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/jet.hpp"

namespace qs {

struct HalmPosaLcp::DerivativeWork {
  explicit DerivativeWork(const Model& m)
      : problem(m),
        q0(static_cast<size_t>(m.n_q())),
        mu(std::max<size_t>(m.pairs.size(), 1)),
        q_end(static_cast<size_t>(m.n_q())),
        basis(static_cast<size_t>(4 * m.n_slots())),
        weak_rows(static_cast<size_t>(4 * m.n_slots())),
        M(static_cast<size_t>(16 * m.n_slots() * m.n_slots())),
        rhs(static_cast<size_t>(4 * m.n_slots())),
        values(static_cast<size_t>(16 * m.n_slots() * m.n_slots())),
        value_rhs(static_cast<size_t>(4 * m.n_slots())) {}
  HalmPosaProblem<Jet> problem;  // one linearisation's LCP with derivatives
  std::vector<Jet> q0, mu, q_end;
  std::vector<int> basis;        // the basic z of the linearisation's answer (fixed-layout rows)
  std::vector<int> weak_rows;    // rows whose z and w are both within kSwitchMargin of zero
  std::vector<Jet> M, rhs;       // the basis system M_bb z_b = -q_b
  std::vector<double> values, value_rhs;  // its values alone (is it singular?)
};

}  // namespace qs

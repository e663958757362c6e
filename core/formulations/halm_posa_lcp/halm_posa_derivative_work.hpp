// HalmPosaLcp::differentiate's workspace (halm_posa_lcp_derivatives.cpp), sized once from the
// Model; private to the stepper (halm_posa_lcp.cpp destroys it).
#pragma once

#include <array>
#include <vector>

#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lanes.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/jet.hpp"
#include "quasistep/kernels/eigen.hpp"

namespace qs {

struct HalmPosaLcp::DerivativeWork {
  explicit DerivativeWork(const Model& m)
      : problem(m),
        q0(static_cast<size_t>(m.n_q())),
        mu(std::max<size_t>(m.pairs.size(), 1)),
        basis(static_cast<size_t>(4 * m.n_slots())),
        weak_rows(static_cast<size_t>(4 * m.n_slots())),
        pivot(static_cast<size_t>(4 * m.n_slots())),
        values(static_cast<size_t>(16 * m.n_slots() * m.n_slots())),
        lu(static_cast<size_t>(16 * m.n_slots() * m.n_slots())),
        z(static_cast<size_t>(4 * m.n_slots())),
        dz(static_cast<size_t>(4 * m.n_slots())),
        lane_rhs(static_cast<size_t>(4 * m.n_slots())),
        q_end(static_cast<size_t>(m.n_q())),
        dq_end(Eigen::MatrixXd::Zero(m.n_q(), m.n_q() + m.n_a)),
        dq_other(dq_end) {}
  HalmPosaProblem<Jet> problem;  // one linearisation's LCP with derivatives
  std::vector<Jet> q0, mu;
  std::vector<int> basis;        // the basic z of the linearisation's answer (fixed-layout rows)
  std::vector<int> weak_rows;    // rows whose z and w are both within kSwitchMargin of zero
  std::vector<int> pivot;        // the basis matrix' row swaps (linear_solve.hpp)
  std::vector<double> values;    // the basis matrix' values (is it singular?)
  std::vector<double> lu;        // its LU factors
  std::vector<double> z, dz;     // z_b, and its change along one direction
  std::vector<std::array<double, kJetWidth>> lane_rhs;  // dM_bb z_b + dq_b along each Jet lane
  std::vector<double> q_end;     // the linearisation's end state (values)
  Eigen::MatrixXd dq_end;        // (n_q x (n_q + n_a)) its derivative along q, then u
  Eigen::MatrixXd dq_other;      // the same at another basis (a weak row's other side)
};

}  // namespace qs

// HalmPosaLcp::differentiate's workspace (halm_posa_lcp_derivatives.cpp), sized once from the
// Model; private to the stepper (halm_posa_lcp.cpp destroys it).
#pragma once

#include <array>
#include <cstdint>
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
        choices(static_cast<size_t>(formulation_params_or_default<HalmPosaParams>(m).relinearize_iterations + 1),
                Choice(4 * m.n_slots())),
        basis(static_cast<size_t>(4 * m.n_slots())),
        pivot(static_cast<size_t>(4 * m.n_slots())),
        slot_of(static_cast<size_t>(4 * m.n_slots())),
        block_of(static_cast<size_t>(4 * m.n_slots())),
        values(static_cast<size_t>(16 * m.n_slots() * m.n_slots())),
        lu(static_cast<size_t>(16 * m.n_slots() * m.n_slots())),
        z(static_cast<size_t>(4 * m.n_slots())),
        dz(static_cast<size_t>(4 * m.n_slots() * (m.n_q() + m.n_a))),
        columns(static_cast<size_t>(m.n_q() + m.n_a)),
        lane_rhs(static_cast<size_t>(4 * m.n_slots())),
        q_end(static_cast<size_t>(m.n_q())),
        dq_end(Eigen::MatrixXd::Zero(m.n_q(), m.n_q() + m.n_a)),
        dq_other(dq_end) {}
  HalmPosaProblem<Jet> problem;  // one linearisation's LCP with derivatives
  std::vector<Jet> q0, mu;
  /// One linearisation's basis: the rows whose z is basic at its answer, the weak ones (z and
  /// w both within kSwitchMargin of zero: bit i of a mask is weak row i), the weak rows
  /// taken basic, and the others whose basis is nonsingular too.
  struct Choice {
    explicit Choice(int rows) : basis(static_cast<size_t>(rows)), weak(static_cast<size_t>(rows)) {}
    std::vector<int> basis, weak;
    int n_basis = 0, n_weak = 0;
    std::uint64_t chosen = 0, others = 0;
  };
  std::vector<Choice> choices;   // (relinearize_iterations + 1), from a step's first pass
  std::vector<int> basis;        // a basis' rows (fixed layout)
  std::vector<int> pivot;        // the basis matrix' row swaps (linear_solve.hpp)
  std::vector<int> slot_of, block_of;  // each basic row's slot and block (row = block ns + slot)
  std::vector<double> values;    // the basis matrix' values (is it singular?)
  std::vector<double> lu;        // its LU factors
  std::vector<double> z, dz;     // z_b, and its change along each of a pass' directions
  std::vector<int> columns;      // a pass' directions (columns of dq_end)
  std::vector<std::array<double, kJetWidth>> lane_rhs;  // dM_bb z_b + dq_b along each Jet lane
  std::vector<double> q_end;     // the linearisation's end state (values)
  Eigen::MatrixXd dq_end;        // (n_q x (n_q + n_a)) its derivative along q, then u
  Eigen::MatrixXd dq_other;      // the same at another basis (a weak row's other side)
};

}  // namespace qs

// AnitescuQp::differentiate's workspace (anitescu_qp_derivatives.cpp), sized once from the
// Model; private to the stepper (anitescu_qp.cpp destroys it).
#pragma once

#include <vector>

#include "quasistep/core/formulations/anitescu_qp/anitescu_lanes.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/jet.hpp"
#include "quasistep/kernels/kkt_sensitivity.hpp"

namespace qs {

struct AnitescuQp::DerivativeWork {
  explicit DerivativeWork(const Model& m)
      : problem(m),
        q(static_cast<std::size_t>(m.n_q())),
        reference(static_cast<std::size_t>(std::max(m.n_a, 1))),
        mu(std::max<std::size_t>(m.pairs.size(), 1)),
        kkt(std::max(m.n_q(), 1), 2 * kMaxContacts),
        A_S(Eigen::MatrixXd::Zero(2 * kMaxContacts, std::max(m.n_q(), 1))),
        R1(Eigen::MatrixXd::Zero(std::max(m.n_q(), 1), m.n_q() + 2 * m.n_a)),
        R2(Eigen::MatrixXd::Zero(2 * kMaxContacts, m.n_q() + 2 * m.n_a)),
        dv(R1),
        active_rows(2 * kMaxContacts) {}
  AnitescuProblem<Jet> problem;    // the step's problem with derivatives along q
  std::vector<Jet> q, reference, mu;
  KktSensitivity kkt;
  Eigen::MatrixXd A_S;             // (active rows x n_q)
  Eigen::MatrixXd R1, R2, dv;      // (n_q x k), (active rows x k), (n_q x k); k = n_q + 2 n_a
  std::vector<int> active_rows;    // the compact rows (AnitescuQp::problem()) in A_S
};

}  // namespace qs

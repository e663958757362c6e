// TrinkleLcp::differentiate's workspace (trinkle_lcp_derivatives.cpp), sized once from the
// Model; private to the stepper (trinkle_lcp.cpp destroys it).
#pragma once

#include <algorithm>
#include <vector>

#include "quasistep/core/contact_step_data.hpp"
#include "quasistep/core/formulations/trinkle_lcp/trinkle_lcp.hpp"
#include "quasistep/core/jet.hpp"
#include "quasistep/kernels/partial_kkt_sensitivity.hpp"

#include "../contact_basis.hpp"

namespace qs {

struct TrinkleLcp::DerivativeWork {
  /// An active row of the basis system: LCP row `index` (w = M x + q = 0), or variable
  /// `index` = 0.
  struct Row {
    bool lcp = true;
    int index = 0;
  };
  static constexpr int kMaxRows = 2 * kCapacity;

  explicit DerivativeWork(const Model& m)
      : data(m),
        q(static_cast<std::size_t>(std::max(m.n_q(), 1))),
        dqa(static_cast<std::size_t>(std::max(m.n_a, 1))),
        kkt(kCapacity, kMaxRows),
        h(Eigen::VectorXd::Zero(kCapacity)),
        A_S(Eigen::MatrixXd::Zero(kMaxRows, kCapacity)),
        R1(Eigen::MatrixXd::Zero(kCapacity, m.n_q() + m.n_a)),
        R2(Eigen::MatrixXd::Zero(kMaxRows, m.n_q() + m.n_a)),
        dv(R1),
        x(Eigen::VectorXd::Zero(kCapacity)),
        w(x),
        rows(kMaxRows),
        pairs(kCapacity / 4),
        state(kCapacity / 4) {}
  ContactStepData<Jet> data;  // the step's data with derivatives along q and u
  std::vector<Jet> q, dqa;
  PartialKktSensitivity kkt;
  Eigen::VectorXd h;               // H = 0: the LCP's basis is a linear system
  Eigen::MatrixXd A_S;             // (active rows x n)
  Eigen::MatrixXd R1, R2, dv;      // (n x k), (active rows x k), (n x k); k = n_q + n_a
  Eigen::VectorXd x, w;            // the answer [dq_u; z] and w = M x + q
  std::vector<Row> rows;           // the active rows of A_S
  std::vector<ContactPairs> pairs; // (active contacts) their pairs at the answer
  std::vector<ContactState> state; // (active contacts) open, closed, weak, ...
};

}  // namespace qs

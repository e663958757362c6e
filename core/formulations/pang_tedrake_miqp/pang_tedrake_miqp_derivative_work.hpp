// PangTedrakeMiqp::differentiate's workspace (pang_tedrake_miqp_derivatives.cpp), sized once
// from the Model; private to the stepper (pang_tedrake_miqp.cpp destroys it).
#pragma once

#include <algorithm>
#include <vector>

#include "quasistep/core/contact_step_data.hpp"
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"
#include "quasistep/core/jet.hpp"
#include "quasistep/kernels/partial_kkt_sensitivity.hpp"

#include "../contact_basis.hpp"

namespace qs {

struct PangTedrakeMiqp::DerivativeWork {
  /// An active row of the step's QP at the answer: a force-balance row (A_eq), a row of
  /// A_in (a pair's left side or an elastic bound), or a variable = 0.
  enum class Kind { balance, inequality, variable };
  struct Row {
    Kind kind = Kind::balance;
    int index = 0;
  };

  explicit DerivativeWork(const Model& m)
      : max_nc(std::min(kMaxContacts, m.n_slots())),
        max_n(m.n_q() + 4 * max_nc),
        max_rows(m.n_u + 9 * max_nc),
        cols(m.n_q() + static_cast<int>(pang_tedrake_miqp_derivative_memory(m).size()) + m.n_a),
        data(m),
        q(static_cast<std::size_t>(std::max(m.n_q(), 1))),
        dqa(static_cast<std::size_t>(std::max(m.n_a, 1))),
        kkt(max_n, max_rows),
        h(Eigen::VectorXd::Zero(max_n)),
        A_S(Eigen::MatrixXd::Zero(std::max(max_rows, 1), max_n)),
        R1(Eigen::MatrixXd::Zero(max_n, cols)),
        R2(Eigen::MatrixXd::Zero(std::max(max_rows, 1), cols)),
        dv(R1),
        phi_bar(Eigen::MatrixXd::Zero(std::max(max_nc, 1), cols)),
        g(Eigen::VectorXd::Zero(max_n)),
        beta(Eigen::VectorXd::Zero(std::max(max_rows, 1))),
        rows(static_cast<std::size_t>(std::max(max_rows, 1))),
        pairs(static_cast<std::size_t>(std::max(max_nc, 1))),
        state(static_cast<std::size_t>(std::max(max_nc, 1))),
        elastic_active(static_cast<std::size_t>(std::max(max_nc, 1))) {}
  int max_nc, max_n, max_rows, cols;
  ContactStepData<Jet> data;       // the step's data with derivatives along q and u
  std::vector<Jet> q, dqa;
  PartialKktSensitivity kkt;
  Eigen::VectorXd h;               // H's diagonal: 2 on dq_a (stage 1), else 0
  Eigen::MatrixXd A_S;             // (active rows x n)
  Eigen::MatrixXd R1, R2, dv;      // (n x k), (active rows x k), (n x k); k = cols
  Eigen::MatrixXd phi_bar;         // (contacts x k) d phi_bar / d(q, u) with the answer held
  Eigen::VectorXd g, beta;         // H x + c, and stage 1's multipliers of the active rows
  std::vector<Row> rows;           // the active rows of A_S
  std::vector<ContactPairs> pairs; // (active contacts) their pairs at the answer
  std::vector<ContactState> state; // (active contacts) open, closed, weak, ...
  std::vector<char> elastic_active;  // (active contacts) the elastic bound (23f) holds with equality
};

}  // namespace qs

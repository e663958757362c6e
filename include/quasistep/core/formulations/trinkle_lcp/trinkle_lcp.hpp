// Trinkle's quasistatic time-stepping LCP (Pang & Tedrake 2018, sec. III-IV without the MIQP's
// objective): the unactuated coordinates move so that the bodies stay in force balance
// while the actuated ones follow their velocity commands exactly.
//
// Per step, over the active contact slots (phi <= margin), unknowns
//   dq_u free;   P_n, P_t+, P_t-, Gamma >= 0   (impulses; friction basis {t, -t}, eq. 4)
// with
//   J_n^u' P_n + J_t^u' (P_t+ - P_t-) + h tau_u = 0                     (23a: force balance)
//   0 <= phi + J_n^u dq_u + J_n^a dqa_bar        _|_ P_n   >= 0         (12-13)
//   0 <= Gamma + J_t^u dq_u + J_t^a dqa_bar      _|_ P_t+  >= 0         (14-16)
//   0 <= Gamma - J_t^u dq_u - J_t^a dqa_bar      _|_ P_t-  >= 0
//   0 <= mu P_n - P_t+ - P_t-                    _|_ Gamma >= 0         (17)
// where dqa_bar = h * command and tau_u is gravity, loads and joint efforts, both sampled
// at the middle of the step (docs/scene-format.md, "Sampling convention"). The free block
// of this mixed LCP is zero; Lemke's block pivot handles it (quasistep/kernels/lemke.hpp). Where the
// LCP has several solutions, the one returned is Lemke's (docs/kernels.md, "Which
// solution"); Pang & Tedrake's (2018) point is that the zero-grip one is among them. When Lemke finds no
// solution, two LPs may prove there is none: no motion of the objects avoids penetration
// (e.g. fingers driven into each other), or no admissible contact impulse balances the load
// (e.g. an object with nothing under it); the step is then `infeasible` with the verified
// certificate in report().detail. Otherwise the LCP is solved exactly by enumeration
// (quasistep/kernels/lcp_enumeration.hpp): a solution (report().by_enumeration), `infeasible` when
// every branch is empty, or `not_found` at its node limit. An answer is also checked with
// each class of rows (force balance, gaps and slides, friction cone) at its own scale; one
// not exact there is solved again with the impulses in the step's units, and one off by
// more than 2^-20 within a class is `numerical_failure` (docs/steppers.md, "Each class of
// rows at its own scale"); report().complementarity_residual is then the re-solved LCP's.
#pragma once

#include <memory>
#include <vector>

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/step_certificate.hpp"
#include "quasistep/core/stepper.hpp"
#include "quasistep/kernels/lcp_enumeration.hpp"
#include "quasistep/kernels/lemke.hpp"

namespace qs {

class TrinkleLcp final : public Stepper {
 public:
  /// The largest mixed LCP one step may pose: n_u + 4 * (active slots).
  static constexpr int kCapacity = 64;
  using Solver = Lemke<kCapacity>;

  /// Sizes every buffer from the Model; step() then allocates nothing.
  explicit TrinkleLcp(const Model& m);
  ~TrinkleLcp() override;

  /// The kernel's result of the last step.
  const Solver::MixedResult& result() const { return *result_; }
  /// The mixed LCP of the last step (first n_u variables free), for inspection and tests:
  /// layout [dq_u | P_n | P_t+ | P_t- | Gamma] over contacts_in_lcp() active slots, in slot
  /// order.
  Eigen::Ref<const Eigen::MatrixXd> lcp_matrix() const { return M_.topLeftCorner(size_, size_); }
  Eigen::Ref<const Eigen::VectorXd> lcp_vector() const { return q_.head(size_); }
  int contacts_in_lcp() const { return contacts_; }

 private:
  /// After Lemke failed: prove that the step has no solution (step_certificate.hpp), or
  /// solve it by enumeration. Returns solved when the enumeration found the solution.
  Status after_lemke_failed(const Model& m, const WorldParams& p, Status st);

 protected:
  /// One step of p.h (Stepper::step). On any status but `solved` the state is left
  /// unchanged. bad_input: a world other than vertical, or more active slots than the
  /// capacity holds.
  Status advance(const Model& m, const WorldParams& p, State& s) override;
  /// The step's derivatives (quasistep/core/derivatives.hpp), differentiating the mixed LCP at
  /// the answer's basis (trinkle_lcp_derivatives.cpp).
  Status differentiate(const Model& m, const WorldParams& p, StepDerivatives& d) override;

 private:
  struct DerivativeWork;  // differentiate()'s workspace, made on its first call
  std::unique_ptr<DerivativeWork> derivative_;
  std::unique_ptr<Solver> solver_;
  std::unique_ptr<Solver::MixedResult> result_;
  std::unique_ptr<Solver::MixedResult> retry_;  // the LCP solved again in the step's units
  std::unique_ptr<StepCertifier> certifier_;
  std::unique_ptr<LcpEnumeration> enumeration_;
  Eigen::MatrixXd M_;          // (kCapacity x kCapacity), the top-left block is used
  Eigen::VectorXd q_;          // (kCapacity)
  Eigen::VectorXd q_terms_;    // (kCapacity) the magnitudes each entry of q_ was summed from
  std::vector<double> tau_;    // (n_q) generalized external force
  std::vector<double> dqa_;    // (n_a) commanded displacement of the step
  int size_ = 0, contacts_ = 0;
};

}  // namespace qs

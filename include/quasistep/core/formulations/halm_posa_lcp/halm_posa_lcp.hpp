// Halm & Posa's quasistatic time-stepping LCP for one object pushed and grasped on a
// tabletop (Halm & Posa 2018, sec. 5), and its perfect-velocity special case (Zhou et al.'s model,
// Halm & Posa 2018, eqs. (13)-(14) in time-stepping form, i.e. B = 0).
//
// Per step, over the active contact slots, with J = [J_n; J_t] split into the object's
// columns J_o (x, y, theta) and the manipulator's J_m (the velocity-commanded joints):
//   z = [Lambda_N | Lambda_T+ | Lambda_T- | gamma]  (one each per contact; Halm & Posa 2018 groups
//       the two tangential directions per contact with E, eq. (1); we group by direction)
//   M(cB) = [ J_o A J_o' + J_m cB J_m'   E ]                          Halm & Posa 2018, eqs. (17), (37)
//           [ mu     -E'                 0 ]
//   w = [ phi + J_n,m h u ;  J_t,m h u ;  0 ]                         Halm & Posa 2018, eq. (38)
// (the tangential rows appear twice, +t and -t), and the step moves
//   dq_o = A J_o' Lambda               Halm & Posa 2018, eq. (32)
//   dq_m = cB J_m' Lambda + h u        Halm & Posa 2018, eq. (33), with cB as in eq. (37).
// A = R(theta) Ã R(theta)' is the limit surface rotated into the world frame (eq. (12)),
// Ã the scene's model.A (body frame) or the one computed from the support (limit_surface.hpp);
// u is the joints' velocity command at the middle of the step. The impulses Lambda are
// known only up to the positive factor k of eq. (10): impulses_scaled_by_k() is true.
//
// Halm-Posa (c > 0, B SPD): M(cB) is copositive and the step always has a solution (Theorem
// 1 with phi >= 0). M(cB) is not copositive-plus (z = [0; 0; 0; gamma] has z'Mz = 0 but
// (M + M')z != 0), so Lemke's method may still end on a ray, and does on degenerate contact
// sets (two flat faces: slots with identical rows). Perfect velocity (cB = 0): a command
// that squeezes or jams has no solution. So when Lemke ends on a ray the step (1) for
// perfect velocity, asks an LP whether any object displacement keeps every active contact
// non-penetrating (`infeasible` with the Farkas certificate when none does,
// quasistep/core/step_certificate.hpp); then, when no active contact closes under the command alone
// (every phi + J_n,m h u >= 0), takes the open-contact solution (no impulse,
// report().open_contacts); otherwise (2) solves the LCP exactly by enumeration
// (quasistep/kernels/lcp_enumeration.hpp): a solution, or `infeasible` when every branch is empty,
// or `not_found` at its node limit.
//
// Two solvers. When the Model fits quasistep/core/formulations/halm_posa_lcp/halm_posa_lanes.hpp's fixed slot layout
// (halm_posa_template_applies: at most 16 slots) step() first runs that template at
// T = double, the same code the batch engine runs in lanes, so `quasistep run` and a batch
// give a world bitwise the same trajectory. If it does not accept the step (Lemke's ray, pivot
// limit or residual), step_fallback() solves the compacted problem described above from the
// unchanged state; larger Models use step_fallback() only.
//
// Re-linearisation (Halm & Posa 2018, sec. 5, model.relinearize = r): after the first solve the
// problem is rebuilt about the predicted end state q^ and solved again, r times: phi^+ is
// linearised as phi(q^) + J(q^) (q^+ - q^), A is rotated by theta^.
//
// Exact limit surface (model.support, Halm & Posa 2018, sec. 3.4): the step above, with its
// re-linearisations, is one program; program j takes the body-frame Ã(F_{j-1}), the Hessian
// of the exact H (quasistep/core/limit_surface.hpp, limit_surface_at) at the previous program's
// wrench F = Ã^-1 V (eq. (11), V the object's body twist), the first the ellipsoid through
// the distribution's axis ends. Each program starts from the unchanged state. The sequence
// ends when Ã changes by less than HalmPosaParams::support_tolerance (relative, Frobenius)
// and the last program is solved with that Ã, or when the object does not move (eq. (10)
// with k = 0); a sequence that has not ended after support_max_programs programs is refused
// with Status::iteration_limit and the state unchanged. Allocation-free: limit_surface_at
// works on fixed-size matrices over the support's points.
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <iosfwd>
#include <memory>

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lanes.hpp"
#include "quasistep/core/limit_surface.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/step_certificate.hpp"
#include "quasistep/core/stepper.hpp"
#include "quasistep/kernels/lcp_enumeration.hpp"
#include "quasistep/kernels/lemke.hpp"

namespace qs {

class HalmPosaLcp final : public Stepper {
 public:
  static constexpr int kCapacity = 64;  // LCP variables: 4 per active contact
  static constexpr int kMaxContacts = kCapacity / 4;
  using Solver = Lemke<kCapacity>;

  /// Sizes every buffer from the Model (tabletop, one free object, A set: the scene reader
  /// guarantees it); step() then allocates nothing on the solved path.
  explicit HalmPosaLcp(const Model& m);
  ~HalmPosaLcp() override;
  /// differentiate()'s workspace (halm_posa_derivative_work.hpp, private to core/).
  struct DerivativeWork;

  /// The last step was accepted from the fixed-layout template (not step_fallback).
  bool by_template() const { return by_template_; }
  bool impulses_scaled_by_k() const override { return true; }

  /// The LCP of the last solve (of the last re-linearisation), layout as in the file comment
  /// over the active contacts (from the template: its rows of the active slots), in the LCP's
  /// unit: A and cB divided by lcp_unit(), so its Lambda are lcp_unit() times the reported
  /// impulses (normal_impulse(), tangent_impulse()).
  Eigen::Ref<const Eigen::MatrixXd> lcp_matrix() const { return M_.topLeftCorner(size_, size_); }
  Eigen::Ref<const Eigen::VectorXd> lcp_vector() const { return w_.head(size_); }
  const Solver::Result& result() const { return *result_; }
  /// halm_posa_lcp_unit of the Model: 1 for an A whose translational entries are in [1, 2).
  double lcp_unit() const { return lcp_unit_; }
  /// The object's displacement of the last step (world x, y, theta).
  const Eigen::Vector3d& object_displacement() const { return dq_o_; }
  /// model.support's sequence of LCPs in the last step (Halm & Posa 2018, sec. 3.4): the
  /// programs solved (1 without model.support), the body-frame Ã of the last one (scene units,
  /// 1/N^2 and 1/(N m)^2), its wrench F = Ã^-1 V (body frame, torque about the body origin,
  /// N s times k: the contact impulses' wrench on the object, R' J_o' Lambda) and the last
  /// relative change of Ã (0 when none was computed).
  int limit_surface_programs() const { return programs_; }
  Eigen::Matrix3d limit_surface_A() const { return A_body_ * lcp_unit_; }
  Eigen::Vector3d limit_surface_wrench() const { return F_body_ / lcp_unit_; }
  double limit_surface_change() const { return change_; }

 protected:
  /// One step of p.h (Stepper::step): the template, else advance_fallback.
  Status advance(const Model& m, const WorldParams& p, State& s) override;
  /// The compacted solve only (Lemke, the certificate, the exact enumeration): the batch
  /// engine's fallback for a lane the template did not accept (Stepper::step_fallback), and
  /// advance()'s.
  Status advance_fallback(const Model& m, const WorldParams& p, State& s) override;
  /// The last step's derivatives (quasistep/core/derivatives.hpp): every linearisation's LCP
  /// differentiated at the basis of its answer, the re-linearisations chained (each one's
  /// point is the previous one's end state), by replaying the step in Jets with the
  /// recorded bases (halm_posa_lcp_derivatives.cpp). No memory is state. The first call
  /// allocates its workspace.
  Status differentiate(const Model& m, const WorldParams& p, StepDerivatives& d) override;

 private:

  /// One linearisation: build the LCP about q_lin for a step starting at q0, solve it, and
  /// write the predicted end state into q_end.
  /// One linearisation; slots out of the step's reach (kHalmPosaUnreachable) are left out
  /// unless keep_unreached, and solved again with them when one was reached after all.
  Status solve_about(const Model& m, const WorldParams& p, const Eigen::VectorXd& q0, const Eigen::VectorXd& q_lin,
                     Eigen::VectorXd& q_end, bool keep_unreached = false);
  /// Report, outputs and the compacted LCP accessors from an accepted template step.
  void record_template_step(const Eigen::VectorXd& q0);

  /// The step with the current A_body_: the template, else fallback_once (advance without
  /// model.support).
  Status advance_once(const Model& m, const WorldParams& p, State& s);
  /// The compacted solve with the current A_body_ (advance_fallback without model.support).
  Status fallback_once(const Model& m, const WorldParams& p, State& s);
  /// model.support's sequence of programs, each advance_once (or fallback_once).
  Status advance_sequence(const Model& m, const WorldParams& p, State& s, bool fallback);

  bool perfect_;                 // perfect_velocity_lcp: cB = 0
  std::shared_ptr<const SupportPressure> support_;  // model.support, or null (the ellipsoid)
  Eigen::Matrix3d A_start_;      // the first program's Ã (lcp_unit_), the Model's
  double support_radius_ = 0;    // m_max / f_max of the support: a turn's length scale (m)
  Eigen::VectorXd q_start_;      // (n_q) the step's start, for each program
  Eigen::Vector3d F_body_ = Eigen::Vector3d::Zero();
  double lin_c_ = 1, lin_s_ = 0;  // cos, sin of the object's theta at the last linearisation
  double change_ = 0;
  int programs_ = 0;
  int object_ = -1;              // the free body
  int dof_o_[3] = {-1, -1, -1};  // its x, y, theta DOFs
  Eigen::Matrix3d A_body_;       // Ã (body frame) in units of lcp_unit_
  double lcp_unit_ = 1;          // halm_posa_lcp_unit: A and cB are held divided by it
  Eigen::MatrixXd cB_;           // (n_a x n_a) c B, zero for perfect velocity

  ContactWorkspace ws_;
  std::unique_ptr<HalmPosaStepWorkspace<double>> template_;  // null when the template does not apply
  bool by_template_ = false;
  std::unique_ptr<Solver> solver_;
  std::unique_ptr<Solver::Result> result_;
  std::unique_ptr<StepCertifier> certifier_;
  std::unique_ptr<LcpEnumeration> enumeration_;
  Eigen::MatrixXd M_;            // (kCapacity x kCapacity)
  Eigen::VectorXd w_;            // (kCapacity)
  Eigen::MatrixXd Jo_;           // (2 kMaxContacts x 3) rows n_1..n_k, t_1..t_k
  Eigen::MatrixXd Jm_;           // (2 kMaxContacts x n_a)
  Eigen::MatrixXd AJo_;          // (3 x 2 kMaxContacts) A J_o'
  Eigen::MatrixXd BJm_;          // (n_a x 2 kMaxContacts) cB J_m'
  Eigen::VectorXd u_h_;          // (n_a) h u
  Eigen::VectorXd q_lin_, q_end_;  // (n_q)
  Eigen::MatrixXd cert_J_;       // (kMaxContacts x 3) for the certificate
  Eigen::VectorXd cert_offset_;  // (kMaxContacts)
  Eigen::Vector3d dq_o_ = Eigen::Vector3d::Zero();
  std::vector<int> slot_;        // active slot of each LCP contact
  std::vector<double> gap_, slide_;  // (n_slots) linearised gap and J_t h u of each slot
  std::vector<char> unreached_;      // (n_slots) inside the margin, left out of the LCP
  /// Linearisation it's answer while the step is differentiated (Stepper::differentiating):
  /// the slots in its LCP, and z, w in the fixed layout (block b of slot i at b n_slots + i).
  struct Linearisation {
    std::vector<char> in_lcp;
    std::vector<double> z, w;
  };
  std::vector<Linearisation> linearisations_;  // (relinearize_iterations + 1)
  int linearisation_ = 0;                      // the one being solved
  /// Records the compacted solve's answer as linearisation linearisation_.
  void record_linearisation(int nc);
  std::unique_ptr<DerivativeWork> derivative_;
  int size_ = 0;
};

namespace json_input {
class Node;
}
/// Reads the "model" section of a scene whose formulation is halm_posa_lcp into m.params (a
/// HalmPosaParams; the world, bodies, joints and contacts are read); throws SceneError naming the field.
void read_halm_posa_lcp_params(const json_input::Node& model, Model& m);
/// The scene's gains of both tabletop formulations (the formulation table's scene_gains): c.
void halm_posa_scene_gains(const Model& m, double& model_gain, std::vector<double>& joint_gain);

struct LaneEntry;
/// The lane entry of both tabletop formulations (quasistep/core/lane_step.hpp): the
/// template step on lanes, with the gain scale c per lane (halm_posa_lane_step.cpp).
extern const LaneEntry kHalmPosaLanes;

/// The formulation table's inert_parameter, fixed_world_parameter, batch_fixed_parameter
/// and describe (the limit surface's line in `quasistep info`) for the tabletop
/// formulations (this one and perfect_velocity_lcp): the limit surface A is computed once,
/// when the model is built, from the object's mass and the support friction (or given).
std::string halm_posa_lcp_inert_parameter(const Model& m, const ParameterRef& r);
std::string perfect_velocity_lcp_inert_parameter(const Model& m, const ParameterRef& r);
std::string tabletop_fixed_world_parameter(const Model& m, std::string_view path);
std::string tabletop_batch_fixed_parameter(const Model& m, const ParameterRef& r);
void tabletop_describe(const Model& m, std::ostream& out);

}  // namespace qs

// Xie & Chakraborty 2021 (Xie & Chakraborty, "Modeling and prediction of rigid body motion with planar
// non-convex contact"): one rigid body in 3D on the plane z = 0, its contact patch replaced
// by the equivalent contact point (ECP), one mixed NCP per time step (eqs. (18)-(19)),
// solved by the semismooth Newton kernel (quasistep/kernels/ncp_newton.hpp). The world is
// `body_on_plane`, the formulation `ecp_ncp` (docs/ecp.md, docs/scene-format.md).
//
// Conventions (F = the body's convex hull Conv(F), G = the half-space z <= 0):
//   - contact frame n = e_z (onto the body), t = e_x, o = e_y: the plane is horizontal, so
//     the frame is constant; W_n, W_t, W_o, W_r of eq. (2) with r = a1 - q^{u+1};
//   - velocities in the world frame: v (CM), w (spatial angular velocity);
//   - the hull's faces f_i(x) = n_i' R'(x - c) - d_i <= 0 with body-frame unit normals n_i
//     (quasistep/core/model.hpp Body3), g(x) = x_z <= 0;
//   - eq. (7) for the quaternion, Q^{u+1} = Q^u + h/2 [0; w^{u+1}] (x) Q^u, followed by the
//     projection onto unit quaternions: the NCP's geometry is evaluated at exactly the pose
//     that is written to the State (R(Q)/|Q|^2 is the rotation of Q/|Q|).
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <array>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "quasistep/core/geometry3.hpp"
#include "quasistep/core/formulations/ecp_ncp/ecp_ncp_params.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/stepper.hpp"
#include "quasistep/kernels/ncp_newton.hpp"

namespace qs {

/// The natural residual a step's MNCP solution must meet (Newton aims at 1e-10 and accepts a
/// point where it stalls only when it is within this).
constexpr double kEcpAcceptedResidual = 1e-9;
/// How far an accepted step's contact impulse may lie outside the friction ellipsoid
/// (eq. (5)), relative to the step's largest linear impulse. The ellipsoid's row of the MNCP
/// is quadratic in the impulses: Newton's residual of 1e-10 on it, in units of the step's
/// impulse, leaves the impulse up to sqrt(1e-10) = 1e-5 of that unit outside the ellipsoid
/// (friction of 1e-5 of the weight's impulse on a contact that opens, for example).
constexpr double kEcpConeTolerance = 1e-4;
/// A step no face k solves is retried as 2, 4, ..., this many substeps (EcpNcp::step).
constexpr int kEcpMaxSubsteps = 8;
/// The applied impulse of step [t, t + h] on the body at state q (13-vector), as [linear;
/// angular about the CM] (N s, N m s): loads sampled at the middle of the step (the
/// sampling convention of docs/scene-format.md), their points and body-frame components
/// taken at the start of the step, gravity, and the gyroscopic term -h w x (I_w w) of
/// Xie & Chakraborty 2021, eq. (6) (p_vp). Shared by the ECP stepper and the sliding reference so both
/// see exactly the same load.
Eigen::Matrix<double, 6, 1> ecp_external_impulse(const Model& m, const Eigen::Ref<const Eigen::VectorXd>& q, double t,
                                                 double h);

/// One step's MNCP, Xie & Chakraborty 2021, eqs. (18)-(19). Unknowns (n = 18 + faces), the paper's z:
///   x = [v (3) | w (3) | a1 (3) | a2 (3) | p_t | p_o | p_r | l_k]       free (16)
///       [l_i, i != k (faces - 1) | l_2 | p_n | sigma]                      complementarity
/// Rows: Newton-Euler (6, eq. (6) with M^u as in (18)), eq. (13) (3), eq. (14) (3), the
/// friction conditions of eq. (8) (3), f_k(a1) = 0; then -f_i(a1) (i != k), -g(a2), l_k,
/// zeta (eq. (19)).
///
/// Two departures from eq. (19), both about its non-smooth parts:
///  1. Face k's pair 0 <= l_k _|_ -f_k(a1) >= 0 (eq. (15) for i = k) becomes the equation
///     f_k(a1) = 0 with l_k free: k is by definition active (sec. 4.1, "the index of any one
///     of the active constraints"). The pair alone lets l_k = 0 with f_k(a1) < 0, and then
///     eqs. (13)-(14) hold with grad C outside the normal cone at a1: Proposition 2's argument
///     fails, and so does the physics. Such spurious solutions are real: with eq. (19) as
///     written, Newton converged from the natural starting point to the desk falling 0.9 mm
///     through the plane with p_n = 0 and a2 = a1 on a side face (max_i f_i(a2) = 0).
///  2. The partner of p_n, max_i f_i(a2) in eq. (19), becomes l_k. With k active and
///     grad C = -l_2 e_z in the normal cone at a1 (l_i >= 0 on active faces), a1 is a lowest
///     point of Conv(F) and eq. (13) gives a1_z - a2_z = l_k l_2 with a2_z = 0 (l_2 > 0): l_k
///     is the gap divided by l_2, so 0 <= p_n _|_ l_k >= 0 is eq. (9) itself, smooth, and
///     excludes penetration by construction. Every solution of the paper's system that has k
///     active and no penetration solves this one, and conversely (p_n > 0 forces a1 = a2 in
///     both; l_k > 0 puts a2 strictly outside Conv(F) below a1, where max_i f_i(a2) > 0).
class EcpStepProblem {
 public:
  static constexpr int kV = 0, kW = 3, kA1 = 6, kA2 = 9, kPt = 12, kPo = 13, kPr = 14, kLk = 15, kFree = 16;

  /// Fixes the step's data: the state at the start (13-vector q), the step [t, t + h] and
  /// the index k of eq. (13).
  void setup(const Model& m, const Eigen::Ref<const Eigen::VectorXd>& q, double t, int k, double h);
  void setup(const Model& m, const Eigen::Ref<const Eigen::VectorXd>& q, double t, int k) { setup(m, q, t, k, m.step.h); }

  int faces() const { return faces_; }
  int size() const { return kFree + faces_ + 2; }
  /// The index of l_i in x (l_k is kLk).
  int l1(int i) const { return i == k_ ? kLk : kFree + (i < k_ ? i : i - 1); }
  int l2() const { return kFree + faces_ - 1; }
  int pn() const { return kFree + faces_; }
  int sigma() const { return kFree + faces_ + 1; }
  int k() const { return k_; }

  /// F(x) and its Jacobian (the callback of quasistep/kernels/ncp_newton.hpp). With units
  /// other than 1 (set_units) the unknowns are x~ = x over their units and the rows are in
  /// theirs (set_units lists both): the same problem, exactly.
  bool operator()(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> F,
                  Eigen::Ref<Eigen::MatrixXd> J) const;

  /// The units Newton works in (exact powers of two; all 1: the scene's own): impulse P,
  /// the sliding speed's V (sigma and eq. (8)), length L (positions and gaps), and the
  /// units of the unknowns v and w; the rows in the units their terms take (Newton-Euler's
  /// P and P L, eq. (13)'s and the gaps' L, eq. (8)'s P V and P L V, the ellipsoid's P^2).
  /// The kernel's natural residual is absolute: where the step's impulses and velocities
  /// are far below 1 (a small h), it is met by points whose impulses do not balance or
  /// leave the friction cone (at h = 1e-9 s a friction impulse 8 times mu p_n squares to
  /// 5e-15, inside the tolerance), and the friction rows of eq. (8), of size m g h times
  /// g h, cannot be resolved below it. In the step's own units the same tolerance is
  /// relative.
  void set_units(double impulse, double velocity, double length, double v_unit, double w_unit);
  /// x (physical units) in the units set (x -> x~), and back.
  void to_units(Eigen::Ref<Eigen::VectorXd> x) const;
  void to_physical(Eigen::Ref<Eigen::VectorXd> x) const;
  /// A power of two near the step's impulse scale: the largest linear component of the
  /// applied impulse (m g h and the loads) or of the contact impulse in x (physical units).
  double impulse_unit(const Eigen::Ref<const Eigen::VectorXd>& x) const;
  /// A power of two near the step's velocity scale: the largest component of the body's
  /// velocity in x, of sigma (the ECP's sliding speed, eq. (8)) and of the velocity the
  /// applied impulse gives the free body.
  double velocity_unit(const Eigen::Ref<const Eigen::VectorXd>& x) const;
  /// The friction impulses of x (physical units) shrunk onto the ellipsoid of eq. (5),
  /// |(p_t/e_t, p_o/e_o, p_r/e_r)| <= mu p_n (all zero when p_n <= 0); unchanged inside it.
  void project_onto_cone(Eigen::Ref<Eigen::VectorXd> x) const;
  /// The impulses of x (physical units) checked in the step's own units: Newton-Euler's
  /// balance (eq. (6) with M^u, the first six rows) as the largest row residual over the
  /// largest sum of a row's term magnitudes (RelativeBalance, quasistep/core/stepper.hpp),
  /// the angular rows divided by the hull's extent (hull_extent) so that all six are impulses,
  /// and the friction ellipsoid (eq. (5)) and p_n >= 0 against the largest linear impulse
  /// (multiplied by kForceBalanceTolerance / kEcpConeTolerance, so that one bound judges
  /// both). kForceBalanceTolerance or less for an accepted step.
  double impulse_violation(const Eigen::Ref<const Eigen::VectorXd>& x) const;

  /// The pose at the end of the step for unknowns x: CM position and unit quaternion.
  void end_pose(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Vector3d& c, Eigen::Vector4d& q) const;
  /// f_i(p) at the end-of-step pose of x (world point p).
  double face_value(const Eigen::Ref<const Eigen::VectorXd>& x, int i, const Eigen::Vector3d& p) const;
  /// A starting point when no previous solution fits: velocities kept, the ECP guess at the
  /// lowest hull vertex, p_n the weight's impulse when that vertex touches the plane.
  void cold_start(Eigen::Ref<Eigen::VectorXd> x) const;

 private:
  int faces_ = 0, planes_ = 0, k_ = 0;  // faces = planes + the cylinder's side, if any
  bool side_ = false;                   // face planes_ is a cylinder's curved side
  Eigen::Vector3d axis_ = Eigen::Vector3d::UnitX(), center_ = Eigen::Vector3d::Zero();
  double radius_ = 0;
  double h_ = 0, mass_ = 0, mu_ = 0, et_ = 1, eo_ = 1, er_ = 1;
  double size_ = 0;  // hull_extent of the body
  Eigen::Vector3d c0_, v0_, w0_;
  Eigen::Vector4d q0_;
  Eigen::Matrix3d Iw_;
  Eigen::Matrix<double, 6, 1> p_ext_;
  std::array<Eigen::Vector3d, kEcpMaxHullFaces> nb_;  // body-frame normals
  std::array<double, kEcpMaxHullFaces> d_{};
  const Body3* body_ = nullptr;
  bool unit_ = true;  // set_units: every unit 1
  std::array<double, 18 + kEcpMaxHullFaces> col_unit_{}, row_unit_{};

  bool evaluate(const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> F,
                Eigen::Ref<Eigen::MatrixXd> J) const;
};

/// The `ecp_ncp` stepper. State: the 13-vector of quasistep/core/model.hpp Body3.
///
/// The index k of eq. (13) must be a face that is active at the ECP at the END of the step,
/// which is not known beforehand (EcpStepProblem makes f_k(a1) = 0 an equation, so a wrong
/// k has no solution rather than a wrong one). Candidates are tried in this order, each a
/// full Newton solve: the previous step's k; the faces of the hull that touch its lowest
/// point at the start of the step, most downward-facing first; every other downward-facing
/// face, most downward first. Each candidate is solved from the previous step's solution
/// (carried in State::memory with its k), then, if that fails, from a cold start
/// at the lowest vertices of the contact-free pose (the face, edge or vertex about to carry
/// the contact, which an impact can move across the body within one step). A solution is
/// accepted when the kernel solved the MNCP (natural residual <= 1e-10; a Newton that
/// stalls or runs out of iterations within kEcpAcceptedResidual is accepted too), its
/// impulses balance and stay in the friction cone in the step's own units
/// (EcpStepProblem::impulse_violation <= 1e-6; where they do not, the same candidate is
/// solved once more, from that point with its friction shrunk into the cone, in units of
/// the step's own impulse and velocity, EcpStepProblem::set_units) and, defensively, no
/// hull vertex is below the plane by more than 1e-9 of the body's size at the new pose.
///
/// When no candidate gives an accepted solution, the step is taken as 2, then 4, then
/// kEcpMaxSubsteps equal substeps, each solved as above (the same model at a finer step for
/// that one step; substeps() says how many were used, p_n() is then the impulse summed over
/// them and ecp() the last substep's); if none is accepted, all of it once more with Newton
/// in the body's own units (body_units_of; tried first where they are far from the
/// scene's). Only if all of those fail does the step fail.
class EcpNcp : public Stepper {
 public:
  static constexpr int kCapacity = 64;
  /// State::memory of an ecp_ncp model: [1 when the rest is valid, the face k of the last
  /// step, that step's MNCP solution (18 + hull faces)], the next step's warm start; zeros at
  /// the start (a cold start).
  static int memory_size(const Model& m) { return m.body3 ? kMemorySolution + 18 + hull_face_count(*m.body3) : 0; }
  /// Its start: zeros (no valid warm start).
  static void start_memory(const Model& m, const double*, double* memory) {
    for (int i = 0; i < memory_size(m); ++i) memory[i] = 0.0;
  }
  /// Where the fields of State::memory lie.
  static constexpr int kMemoryValid = 0, kMemoryFace = 1, kMemorySolution = 2;
  explicit EcpNcp(const Model& m);

  // The last solved step (world frame): the ECP on the body a1 and on the plane a2 (m),
  // the contact impulses (N s, N m s for p_r), sigma of eq. (8), the k used.
  const Eigen::Vector3d& ecp() const { return a1_; }
  const Eigen::Vector3d& ecp_on_plane() const { return a2_; }
  double p_n() const { return pn_; }
  double p_t() const { return pt_; }
  double p_o() const { return po_; }
  double p_r() const { return pr_; }
  double sigma() const { return sigma_; }
  int face_k() const { return k_; }
  int newton_iterations() const { return report_.pivots; }
  // report().complementarity_residual is Newton's natural residual of the accepted point
  // in the units Newton last worked in (the scene's, the step's own after a re-solve, or
  // the body's: body_units()); each is <= kEcpAcceptedResidual in its units.
  /// Candidates for k tried in the last step (1 when the first one was accepted).
  int k_attempts() const { return attempts_; }
  /// The lowest hull vertex height at the new pose (m; >= -1e-9 of the body's size when solved).
  double lowest_vertex() const { return z_min_; }
  /// Substeps the last step was taken as: 1 normally, 2, 4 or kEcpMaxSubsteps after the
  /// whole step found no solution.
  int substeps() const { return substeps_; }
  /// Whether the last step was solved with Newton in the body's own units (body_units_of,
  /// EcpStepProblem::set_units): in a scene whose units are far from the body's (lengths
  /// 2^-20 or 2^20 of the examples') every step, else a step the scene's units gave no
  /// accepted solution for.
  bool body_units() const { return body_units_; }

  /// The trajectory CSV's extra columns: `ecp_x,ecp_y,ecp_z,p_n`, i.e. ecp() (world frame,
  /// m) and p_n() (N s) of the step that produced the row (docs/ecp.md, "Trajectory CSV").
  std::vector<std::string> extra_columns() const override;
  void extra_values(std::vector<double>& out) const override;


 protected:
  /// One step of p.h (Stepper::step); the body's mass and loads are the scene's (a
  /// body_on_plane batch varies no parameter).
  Status advance(const Model& m, const WorldParams& p, State& s) override;

 private:
  /// The body's own units (powers of two): length near its size (the hull's extent in
  /// [0.5, 1) of it), time near 128 steps (h in [1/128, 1/64) of it), mass near its mass.
  /// The examples' bodies, 0.1-0.6 m and 1-15 kg at h = 0.01 s, are of that size in SI
  /// units.
  struct BodyUnits {
    double length = 1, time = 1, mass = 1;
  };
  static BodyUnits body_units_of(const Model& m, double h);
  /// Whether the scene's units are far from the body's (a factor beyond 2^4 in length, mass
  /// or the time the body takes to fall its size): Newton then works in the body's units
  /// first.
  static bool far_from_body_units(const Model& m, double h);
  /// One solve of the step [t, t + h] from the 13-vector q_state (overwritten when solved):
  /// the candidates for k, each from the warm and the cold start.
  Status solve_step(const Model& m, Eigen::VectorXd& q_state, double t, double h, bool in_body_units);

  EcpStepProblem prob_;
  NcpNewton<kCapacity> newton_;
  NcpNewton<kCapacity>::Result res_;
  Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, kCapacity, 1> x0_, prev_, start_prev_;
  bool have_prev_ = false;  // prev_ and prev_k_ solved the step that ended in the state being stepped
  bool body_units_ = false;  // body_units()
  int prev_k_ = -1;
  std::array<int, kEcpMaxHullFaces> order_{};
  Eigen::Vector3d a1_ = Eigen::Vector3d::Zero(), a2_ = Eigen::Vector3d::Zero();
  double pn_ = 0, pt_ = 0, po_ = 0, pr_ = 0, sigma_ = 0, z_min_ = 0;
  int k_ = -1, attempts_ = 0, substeps_ = 1;
  Eigen::VectorXd start_q_ = Eigen::VectorXd::Zero(13);  // the state a failed whole step restarts from
};

namespace json_input {
class Node;
}
/// Reads the "model" section of a scene whose formulation is ecp_ncp into m.params (an
/// EcpNcpParams; the world, bodies, joints and contacts are read); throws SceneError naming the field.
void read_ecp_ncp_params(const json_input::Node& model, Model& m);

}  // namespace qs

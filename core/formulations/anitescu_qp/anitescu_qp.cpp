// Pang & Tedrake's Anitescu slides (Pang & Tedrake, "Fast simulation of rigid multibody quasistatic systems with
// convex optimization"): see anitescu_qp.hpp and docs/anitescu.md for the derivation.
#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>

#include "quasistep/core/kinematics.hpp"
#include "quasistep/core/number_text.hpp"
#include "quasistep/kernels/unit_scale.hpp"

#include "anitescu_qp_derivative_work.hpp"

namespace qs {

void anitescu_dual_lcp(const Eigen::Ref<const Eigen::MatrixXd>& A, const Eigen::Ref<const Eigen::VectorXd>& b,
                       const Eigen::Ref<const Eigen::MatrixXd>& Q_inv, const Eigen::Ref<const Eigen::VectorXd>& v_free,
                       Eigen::Ref<Eigen::MatrixXd> QinvAt, Eigen::Ref<Eigen::MatrixXd> M, Eigen::Ref<Eigen::VectorXd> q) {
  const Eigen::Index rows = A.rows(), n = A.cols();
  // Q^-1 A': column r is Q^-1 times row r of A.
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index i = 0; i < n; ++i) {
      double s = 0;
      for (Eigen::Index j = 0; j < n; ++j) s += Q_inv(i, j) * A(r, j);
      QinvAt(i, r) = s;
    }
  // M = A Q^-1 A' (Pang & Tedrake's Anitescu slides slide "Specializing ..., take 2": the Delassus matrix of the
  // Anitescu rows), filled symmetric from its lower triangle so that M = M' exactly.
  for (Eigen::Index s = 0; s < rows; ++s)
    for (Eigen::Index r = s; r < rows; ++r) {
      double v = 0;
      for (Eigen::Index i = 0; i < n; ++i) v += A(r, i) * QinvAt(i, s);
      M(r, s) = v;
      M(s, r) = v;
    }
  // q = A v_free - b: the rows' slack if no contact pushed.
  for (Eigen::Index r = 0; r < rows; ++r) {
    double v = -b[r];
    for (Eigen::Index i = 0; i < n; ++i) v += A(r, i) * v_free[i];
    q[r] = v;
  }
}

AnitescuQp::AnitescuQp(const Model& m)
    : Stepper(m),
      lemke_(std::make_unique<Solver>()),
      lcp_result_(std::make_unique<Solver::Result>()),
      nq_(m.n_q()),
      slot_(m.n_slots()),
      step_ws_(std::make_unique<AnitescuStepWorkspace<double>>(m)),
      pgs_(anitescu_pgs_settings()) {
  const int n = std::max(nq_, 1);
  const int cap_rows = 2 * std::min(kMaxContacts, m.n_slots());
  DenseQpCapacity cap;
  cap.vars = n;
  cap.eq_rows = 0;
  cap.in_rows = cap_rows;
  qp_ = std::make_unique<DenseQp>(cap);
  H_ = Eigen::MatrixXd::Zero(n, n);
  A_ = Eigen::MatrixXd::Zero(std::max(cap_rows, 1), n);
  A_eq_ = Eigen::MatrixXd::Zero(0, n);
  c_ = Eigen::VectorXd::Zero(n);
  Hs_ = H_;
  As_ = A_;
  cs_ = scale_ = c_;
  b_ = Eigen::VectorXd::Zero(std::max(cap_rows, 1));
  bs_ = b_;
  b_eq_ = Eigen::VectorXd::Zero(0);
  no_bounds_ = Eigen::VectorXd::Zero(0);
  y_ = Eigen::VectorXd::Zero(0);
  w_ = Eigen::VectorXd::Zero(n);
  Qinv_ = Eigen::MatrixXd::Zero(n, n);
  QinvAt_ = Eigen::MatrixXd::Zero(n, std::max(cap_rows, 1));
  M_lcp_ = Eigen::MatrixXd::Zero(std::max(cap_rows, 1), std::max(cap_rows, 1));
  Mu_ = Eigen::MatrixXd::Zero(std::max(m.n_u, 1), std::max(m.n_u, 1));
  L_ = Mu_;
  v_free_ = Eigen::VectorXd::Zero(n);
  q_lcp_ = Eigen::VectorXd::Zero(std::max(cap_rows, 1));
  jx_ = jy_ = jw_ = Eigen::VectorXd::Zero(n);
  tau_ = tau_grav_ = Eigen::VectorXd::Zero(n);
  qbar_ = Eigen::VectorXd::Zero(m.n_a);
  v_ = Eigen::VectorXd::Zero(nq_);
  beta_ = Eigen::VectorXd::Zero(std::max(cap_rows, 1));
  barrier_hessian_ = barrier_factor_ = Eigen::MatrixXd::Zero(n, n);
  interior_H_ = Eigen::MatrixXd::Identity(n, n);
  barrier_gradient_ = newton_step_ = interior_c_ = Eigen::VectorXd::Zero(n);
  slack_ = slack_rate_ = interior_b_ = Eigen::VectorXd::Zero(std::max(cap_rows, 1));
}

AnitescuQp::~AnitescuQp() = default;  // here: DerivativeWork is complete

DenseQpProblem AnitescuQp::problem() const {
  const int n = std::max(nq_, 1);
  return DenseQpProblem{H_,   c_,   A_eq_, b_eq_, A_.topLeftCorner(rows_, n), b_.head(rows_),
                        no_bounds_, no_bounds_};
}

std::string AnitescuQp::contact_label(const Model& m, int row) const {
  const int i = slot_[row / 2];
  return "slot " + std::to_string(i) + " (" + m.pair_name(m.slots[i].pair) + (row % 2 ? ", -t)" : ", +t)");
}

bool AnitescuQp::mass_matrix(const Model& m, const WorldParams& p) {
  const int nu = m.n_u, n = nq_;
  auto Mu = Mu_.topLeftCorner(nu, nu);
  Mu.setZero();
  // Pang & Tedrake's Anitescu slides, slide "Specializing to robotic manipulation, take 2": M_u v_u' = h tau_u + J_u' beta.
  // M(q) = sum_b m_b J_c,b' J_c,b + I_b J_w,b' J_w,b over the bodies (J_c the Jacobian of the
  // center of mass, J_w of the body angle), restricted to the unactuated block. The robots'
  // own inertia is not part of the model (Pang & Tedrake's Anitescu slides slide "take 2": M_a (v_a' - v_a) = 0).
  for (size_t b = 0; b < m.bodies.size(); ++b) {
    const Body& body = m.bodies[b];
    if (body.kind == BodyKind::fixed) continue;
    const double inertia = body.inertia.value_or(0.0), mass = p.body_mass[b];
    if (mass == 0.0 && inertia == 0.0) continue;
    jx_.head(n).setZero();
    jy_.head(n).setZero();
    jw_.head(n).setZero();
    const Vec2<double> com = record_.geometry.body_pose[b].apply(body.com);
    visit_point_jacobian(m, static_cast<int>(b), com, record_.geometry.body_pose.data(), record_.geometry.joint_frame.data(),
                         [&](int dof, const Vec2<double>& col) {
                           jx_[dof] += col.x;
                           jy_[dof] += col.y;
                         });
    add_angular_jacobian(m, static_cast<int>(b), 1.0, jw_.data());
    for (int i = 0; i < nu; ++i)
      for (int j = 0; j < nu; ++j)
        Mu(i, j) += mass * (jx_[i] * jx_[j] + jy_[i] * jy_[j]) + inertia * jw_[i] * jw_[j];
  }
  // Cholesky M_u = L L' (no pivoting: M_u is SPD or the step is refused), then M_u^-1.
  // Each pivot is judged against its own diagonal entry M_kk: the pivot is M_kk less what
  // the earlier DOFs explain of it, and their ratio is the same in any units (a DOF's unit
  // scales its row and column alike). Against the largest diagonal entry the test compared
  // an inertia (kg m^2) with a mass (kg), and refused a body whose radius of gyration was
  // below 1e-6 length units. The lane template (anitescu_lanes.hpp) makes the same test.
  auto L = L_.topLeftCorner(nu, nu);
  L = Mu;
  for (int k = 0; k < nu; ++k) {
    double d = L(k, k);
    for (int p = 0; p < k; ++p) d -= L(k, p) * L(k, p);
    if (!(d > kAnitescuMassPivotTolerance * Mu(k, k))) {
      fail(Status::bad_input, "quasi_dynamic: the mass matrix of the unactuated DOFs is singular at \"" + m.dofs[k].name +
                                  "\" (give the bodies it moves a mass and, if they rotate, an inertia)");
      return false;
    }
    d = std::sqrt(d);
    L(k, k) = d;
    for (int i = k + 1; i < nu; ++i) {
      double s = L(i, k);
      for (int p = 0; p < k; ++p) s -= L(i, p) * L(k, p);
      L(i, k) = s / d;
    }
  }
  // Q^-1 = diag(M_u^-1, 1 / (h^2 K_a)) (Pang & Tedrake's Anitescu slides slide "take 2": Q = diag(M_u, h^2 K_a)):
  // columns of M_u^-1 by forward and back substitution.
  Qinv_.topLeftCorner(n, n).setZero();
  for (int c = 0; c < nu; ++c) {
    for (int i = 0; i < nu; ++i) {
      double s = i == c ? 1.0 : 0.0;
      for (int p = 0; p < i; ++p) s -= L(i, p) * Qinv_(p, c);
      Qinv_(i, c) = s / L(i, i);
    }
    for (int i = nu - 1; i >= 0; --i) {
      double s = Qinv_(i, c);
      for (int p = i + 1; p < nu; ++p) s -= L(p, i) * Qinv_(p, c);
      Qinv_(i, c) = s / L(i, i);
    }
  }
  // Exactly symmetric.
  for (int i = 0; i < nu; ++i)
    for (int j = 0; j < i; ++j) Qinv_(i, j) = Qinv_(j, i) = 0.5 * (Qinv_(i, j) + Qinv_(j, i));
  return true;
}

void AnitescuQp::begin_step() {
  report_ = StepReport{};
  fallback_ = equilibrated_ = false;
  by_pgs_ = smoothed_ = false;
  newton_steps_ = 0;
  rows_ = 0;
  std::fill(p_n_.begin(), p_n_.end(), 0.0);  // a failed step reports no impulses
  std::fill(p_t_.begin(), p_t_.end(), 0.0);
}

Status AnitescuQp::check_input(const Model& m, const WorldParams& p, const State& s) {
  if (m.world.type != WorldType::vertical) return fail(Status::bad_input, "anitescu_qp steps a vertical world");
  const int na = m.n_a, n = nq_;
  if (s.q.size() != n || s.memory.size() != memory_size(m))
    return fail(Status::bad_input, "the State needs n_q = " + std::to_string(n) + " coordinates and its memory of " +
                                       std::to_string(memory_size(m)) + " values (the n_a = " + std::to_string(na) +
                                       " impedance references first; initial_state sets it)");
  bool stiff = static_cast<int>(p.joint_gain.size()) == na;
  for (int a = 0; stiff && a < na; ++a) stiff = p.joint_gain[a] > 0;
  if (!stiff)
    return fail(Status::bad_input, "anitescu_qp needs model.stiffness: n_a = " + std::to_string(na) + " positive entries");
  return Status::solved;
}

Status AnitescuQp::advance(const Model& m, const WorldParams& p, State& s) {
  // The smoothed step is solved by Newton's method on the general path, never by the PGS template.
  const AnitescuQpParams& params = formulation_params_or_default<AnitescuQpParams>(m);
  if (!params.quasi_dynamic || nq_ == 0 || params.log_barrier_weight) return advance_fallback(m, p, s);
  begin_step();
  if (check_input(m, p, s) != Status::solved) return report_.status;
  const int nu = m.n_u, na = m.n_a, n = nq_;
  const double h = p.h;
  // The template step (quasistep/core/formulations/anitescu_qp/anitescu_lanes.hpp), the same code the batch runs on lanes.
  AnitescuStepWorkspace<double>& w = *step_ws_;
  const int warm_rows = 2 * m.n_slots();
  double* const reference = s.memory.data() + kMemoryReference;
  double* const warm = s.memory.data() + memory_warm_start(m);
  anitescu_quasi_dynamic_step<double>(m, p, w, s.q.data(), reference, p.pair_friction.data(), nullptr, warm, s.t,
                                      pgs_);
  if (!w.ok) return advance_fallback(m, p, s);  // Lemke, then the dense QP, from the unchanged State
  by_pgs_ = true;
  int nc = 0;
  H_.setZero();
  for (int i = 0; i < nu; ++i)
    for (int j = 0; j < nu; ++j) H_(i, j) = Mu_(i, j) = w.Mu[i * nu + j];
  for (int a = 0; a < na; ++a) H_(nu + a, nu + a) = h * h * p.joint_gain[a];
  for (int e = 0; e < n; ++e) c_[e] = w.c[e];
  for (int i = 0; i < m.n_slots(); ++i) {
    active_[i] = w.active[i] > 0.0;
    phi_[i] = w.frame[i].phi;
    if (!active_[i]) continue;
    const double mu = p.slot_friction(m, i);
    slot_[nc] = i;
    for (int k = 0; k < 2; ++k) {
      for (int e = 0; e < n; ++e) A_(2 * nc + k, e) = w.A[(2 * i + k) * n + e];
      b_[2 * nc + k] = w.b[2 * i + k];
      beta_[2 * nc + k] = w.z[2 * i + k];
    }
    p_n_[i] = w.z[2 * i] + w.z[2 * i + 1];
    p_t_[i] = mu * (w.z[2 * i] - w.z[2 * i + 1]);
    ++nc;
  }
  rows_ = 2 * nc;
  for (int e = 0; e < n; ++e) v_[e] = w.v[e];
  report_.contacts = nc;
  report_.problem_size = w.rows;
  report_.pivots = w.pgs_result.iterations[0];
  report_.complementarity_residual = w.kkt;
  double lin = 0;
  for (int c = 0; c < nc; ++c) {
    const int i = slot_[c];
    double gap = w.frame[i].phi;
    for (int e = 0; e < n; ++e) gap += h * w.jn[i * n + e] * v_[e];
    lin = std::min(lin, gap);
  }
  report_.linearised_penetration = lin;
  double balance = 0;  // M_u v_u' - h tau_u - J_u' beta (c_u = -h tau_u)
  for (int e = 0; e < nu; ++e) {
    double r = c_[e];
    for (int f = 0; f < nu; ++f) r += Mu_(e, f) * v_[f];
    for (int k = 0; k < rows_; ++k) r -= A_(k, e) * beta_[k];
    balance = std::max(balance, std::abs(r));
  }
  report_.force_balance_residual = balance;
  for (int e = 0; e < n; ++e) s.q[e] = w.q_out[e];
  for (int a = 0; a < na; ++a) reference[a] = w.qbar[a];
  for (int r = 0; r < warm_rows; ++r) warm[r] = w.z[r];
  return report_.status = Status::solved;
}

Status AnitescuQp::advance_fallback(const Model& m, const WorldParams& p, State& s) {
  begin_step();
  if (check_input(m, p, s) != Status::solved) return report_.status;
  const int nu = m.n_u, na = m.n_a, n = nq_;
  const double h = p.h, t_mid = s.t + 0.5 * h;

  // 1-2: contacts and Jacobians at the start of the step (all active slots counted, so
  // that the report says how many).
  const ContactRecord& rec = contact_record(m, p, s);
  const ContactWorkspace& g = rec.geometry;
  const int nc = rec.count;
  report_.contacts = nc;
  if (nc > kMaxContacts)
    return fail(Status::bad_input, std::to_string(nc) + " active contacts in one step, more than " +
                                       std::to_string(kMaxContacts) + "; set contacts.margin to keep distant slots out");
  rows_ = 2 * nc;
  for (int c = 0; c < nc; ++c) slot_[c] = rec.slots[c];
  if (n == 0) return report_.status = Status::solved;  // nothing moves

  // Inputs at the middle of the step: tau (gravity, loads, efforts) and the robots' own
  // gravity, which their controllers compensate (Pang & Tedrake's Anitescu slides slide "Specializing to robotic
  // manipulation": tau_a = K_a (q̄_a' - (q_a + h v_a')) - tau_g).
  generalized_external_force(m, p, g.body_pose.data(), g.joint_frame.data(), t_mid, tau_.data());
  tau_grav_.head(n).setZero();
  for (size_t b = 0; b < m.bodies.size(); ++b) {
    const Body& body = m.bodies[b];
    const double mass = p.body_mass[b];
    if (body.kind != BodyKind::linked || mass == 0.0) continue;
    add_point_jacobian(m, static_cast<int>(b), g.body_pose[b].apply(body.com), Vec2<double>{0.0, -1.0},
                       mass * m.world.gravity, g.body_pose.data(), g.joint_frame.data(), tau_grav_.data());
  }
  // The reference at the end of the step: q̄_a' = q̄_a + h u(t + h/2).
  for (const Joint& j : m.joints)
    if (j.control == Control::velocity)
      qbar_[j.dof - nu] = s.memory[kMemoryReference + j.dof - nu] + h * p.velocity(m, j, t_mid);

  // 3: the QP. H = diag(Q_u, h^2 K_a); b = -h [tau_u; K_a (q̄_a' - q_a) + tau_a^ext - tau_g,a]
  // (Pang & Tedrake's Anitescu slides slide "Specializing to robotic manipulation", signs derived in docs/anitescu.md).
  H_.setZero();
  for (int e = 0; e < nu; ++e) c_[e] = -h * tau_[e];
  for (int a = 0; a < na; ++a) {
    const double K = p.joint_gain[a];
    H_(nu + a, nu + a) = h * h * K;
    c_[nu + a] = -h * (K * (qbar_[a] - s.q[nu + a]) + tau_[nu + a] - tau_grav_[nu + a]);
  }
  // Anitescu rows (Pang & Tedrake's Anitescu slides slide "Modeling Coulomb friction as a convex program":
  // phi_i / h + (J_n,i + mu_i J_d,ij) v' >= 0, d_i1 = +t, d_i2 = -t), as A v >= b.
  for (int c = 0; c < nc; ++c) {
    const int i = slot_[c];
    const double mu = p.slot_friction(m, i);
    for (int e = 0; e < n; ++e) {
      A_(2 * c, e) = g.J_n(i, e) + mu * g.J_t(i, e);
      A_(2 * c + 1, e) = g.J_n(i, e) - mu * g.J_t(i, e);
    }
    b_[2 * c] = b_[2 * c + 1] = -g.frame[i].phi / h;
  }

  // 4: solve, and check the answer (5), which fills the report's residuals: "" when
  // accepted, else why not.
  const bool quasi_dynamic = formulation_params_or_default<AnitescuQpParams>(m).quasi_dynamic;
  const std::optional<double> kappa = formulation_params_or_default<AnitescuQpParams>(m).log_barrier_weight;
  const auto refusal = [&]() -> std::string {
    // The smoothed answer has no complementarity to check (every row pushes 1/(kappa s)):
    // its Newton decrement is in complementarity_residual, and the balance below checks it.
    if (!kappa) {
      report_.complementarity_residual = qp_kkt_residual(problem(), v_, y_, beta_.head(rows_), w_.head(n));
      if (!(report_.complementarity_residual <= kKktTolerance)) {
        std::ostringstream d;
        d << "the QP's answer failed its KKT check (scaled residual " << report_.complementarity_residual << ")";
        return d.str();
      }
    }
    double lin = 0;
    for (int c = 0; c < nc; ++c) {
      const int i = slot_[c];
      const double mu = p.slot_friction(m, i);
      p_n_[i] = beta_[2 * c] + beta_[2 * c + 1];
      p_t_[i] = mu * (beta_[2 * c] - beta_[2 * c + 1]);
      double gap = g.frame[i].phi;
      for (int e = 0; e < n; ++e) gap += h * g.J_n(i, e) * v_[e];
      lin = std::min(lin, gap);
    }
    report_.linearised_penetration = lin;
    double balance = 0;
    RelativeBalance relative;
    for (int e = 0; e < nu; ++e) {
      // Quasistatic: h tau_u + J_u' beta = 0; quasi-dynamic: M_u v_u' - h tau_u - J_u' beta = 0.
      double r = -h * tau_[e], terms = std::abs(h * tau_[e]);
      if (quasi_dynamic)
        for (int f = 0; f < nu; ++f) {
          r += Mu_(e, f) * v_[f];
          terms += std::abs(Mu_(e, f) * v_[f]);
        }
      for (int k = 0; k < rows_; ++k) {
        r -= A_(k, e) * beta_[k];
        terms += std::abs(A_(k, e) * beta_[k]);
      }
      balance = std::max(balance, std::abs(r));
      add_balance_row(relative, e, r, terms);
    }
    report_.force_balance_residual = balance;
    // Each balance row against the rows' terms (quasistep/core/stepper.hpp), so that the
    // check means the same at any h and in any units: the QP's KKT check is in absolute
    // units, and at h = 1e-11 it passed an answer with no contact impulse while the load was
    // m g h.
    if (!relative.accepted())
      return "the answer failed its force-balance check (relative residual " + three_digits(relative.worst()) + ")";
    return "";
  };
  Status st = kappa           ? solve_smoothed(m, p, *kappa)
              : quasi_dynamic ? solve_quasi_dynamic(m, p)
                              : solve_quasistatic(m);
  if (st != Status::solved) return st;
  std::string why = refusal();
  // An answer the checks refuse, from the kernel on the problem as posed (its tolerances
  // are absolute, with floors of 1: in lengths 2^-13 the pushed box slid where it must tip,
  // its torque unbalanced by 3.7e-11, and the KKT check passed it), is solved once more in
  // scaled variables (solve_equilibrated), where those tolerances are relative.
  if (!why.empty() && !equilibrated_ && !kappa) {
    fallback_ = fallback_ || quasi_dynamic;
    st = solve_with_qp(m, quasi_dynamic ? "quasi-dynamic" : "quasistatic", true);
    if (st == Status::solved) {
      why = refusal();
    } else if (st != Status::numerical_failure) {
      return st;  // a verified infeasible or unbounded verdict
    }
  }
  if (!why.empty()) return fail(Status::numerical_failure, why);
  for (int e = 0; e < n; ++e) s.q[e] += h * v_[e];
  for (int a = 0; a < na; ++a) s.memory[kMemoryReference + a] = qbar_[a];
  if (quasi_dynamic) {
    // The next PGS warm-starts from this step's beta, in the fixed slot layout.
    double* const warm = s.memory.data() + memory_warm_start(m);
    std::fill(warm, warm + 2 * m.n_slots(), 0.0);
    for (int c = 0; c < nc; ++c)
      for (int k = 0; k < 2; ++k) warm[2 * slot_[c] + k] = beta_[2 * c + k];
  }
  return report_.status = Status::solved;
}

Status AnitescuQp::solve_quasistatic(const Model& m) {
  report_.problem_size = nq_;
  return solve_with_qp(m, "quasistatic", false);
}

Status AnitescuQp::solve_equilibrated() {
  // The QP's variables mix units (m/s beside rad/s, the rows' lever arms in m beside unitless
  // normals), and the kernel's tolerances are Euclidean: in lengths 2^-20 a box's rotation
  // moved its rows by 1e-7 of what a translation did, and the kernel took a curved direction
  // for a flat one (then found no ray it could verify). In the variables S v, with s_j the
  // power of two at the largest |A_ij| of DOF j (or at sqrt(H_jj), or 1), every column of
  // the rows is of size 1 in any units of the DOFs; powers of two keep the data exact.
  const int n = std::max(nq_, 1);
  for (int j = 0; j < n; ++j) {
    double a = 0.0;
    for (int r = 0; r < rows_; ++r) a = std::max(a, std::abs(A_(r, j)));
    scale_[j] = column_unit(a, H_(j, j));  // as the QP kernel's ray test (ray_column_scale)
  }
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j) Hs_(j, k) = H_(j, k) / (scale_[j] * scale_[k]);
  for (int j = 0; j < n; ++j) {
    cs_[j] = c_[j] / scale_[j];
    for (int r = 0; r < rows_; ++r) As_(r, j) = A_(r, j) / scale_[j];
  }
  // The kernel's tolerances are absolute too (floors of 1): in lengths 2^-20 a box's
  // impulses of 1e-6 N s were unbalanced by 4.6e-11 within them. So the velocities are also
  // taken in a unit V (the largest |b_k| = |phi_k| / h, or commanded velocity |c_j / H_jj|,
  // in the scaled variables) and the impulses in a unit P (the largest |c_j|, the load's and
  // the commands' impulses): u = S v / V, beta_u = beta / P, the QP
  // min 1/2 u' (V/P) Hs u + (cs/P)' u subject to As u >= b / V; powers of two, exact.
  double b_top = rows_ > 0 ? b_.head(rows_).cwiseAbs().maxCoeff() : 0.0, c_top = 0.0;
  for (int j = 0; j < n; ++j) {
    c_top = std::max(c_top, std::abs(cs_[j]));
    if (Hs_(j, j) > 0) b_top = std::max(b_top, std::abs(cs_[j] / Hs_(j, j)));
  }
  velocity_unit_ = b_top > 0 && std::isfinite(b_top) ? unit_power(b_top) : 1.0;
  impulse_unit_ = c_top > 0 && std::isfinite(c_top) ? unit_power(c_top) : 1.0;
  Hs_.topLeftCorner(n, n) *= velocity_unit_ / impulse_unit_;
  cs_.head(n) /= impulse_unit_;
  bs_.head(rows_) = b_.head(rows_) / velocity_unit_;
  const DenseQpProblem p{Hs_, cs_, A_eq_, b_eq_, As_.topLeftCorner(rows_, n), bs_.head(rows_), no_bounds_, no_bounds_};
  const Status st = qp_->solve(p);
  report_.pivots += qp_->phase1_pivots() + qp_->stats().iterations;
  return st;
}

Status AnitescuQp::solve_with_qp(const Model& m, const char* mode, bool equilibrated) {
  // A kernel that could not settle the problem as posed gets it again in scaled variables
  // (solve_equilibrated). Only after a failure (here, or of the answer's checks in advance):
  // a step the kernel solves as posed is unchanged. The answer is checked on the step's own
  // problem all the same (advance).
  Status st = Status::numerical_failure;
  if (!equilibrated) {
    st = qp_->solve(problem());
    report_.pivots += qp_->phase1_pivots() + qp_->stats().iterations;
  }
  const bool scaled = st == Status::numerical_failure;
  equilibrated_ = scaled;
  if (scaled) st = solve_equilibrated();
  if (st == Status::solved) {
    v_ = qp_->x();
    beta_.head(rows_) = qp_->z();
    if (scaled) {
      for (int e = 0; e < nq_; ++e) v_[e] *= velocity_unit_ / scale_[e];
      beta_.head(rows_) *= impulse_unit_;
    }
    return Status::solved;
  }
  std::ostringstream d;
  d << std::setprecision(3);
  if (st == Status::unbounded) {
    // The kernel's ray (verified): H d = 0, A d >= 0, c'd < 0. No beta >= 0 balances the
    // load (that would make c'd = beta'A d >= 0): the objects cannot be in force balance.
    d << mode << " QP unbounded: no contact impulse can balance the load; the objects would move without bound along";
    // In the DOFs' own units (d = S^-1 e when the scaled problem gave it).
    jx_.head(nq_) = qp_->ray();  // kinematic scratch, free here (w_ is the zero bound multipliers)
    if (scaled)
      for (int e = 0; e < nq_; ++e) jx_[e] /= scale_[e];
    const auto ray = jx_.head(nq_);
    const double top = ray.cwiseAbs().maxCoeff();
    const char* sep = " ";
    for (int e = 0; e < nq_; ++e)
      if (std::abs(ray[e]) > 1e-9 * top) {
        d << sep << m.dofs[e].name << ": " << ray[e] / top;
        sep = ", ";
      }
    d << " (verified ray)";
    return fail(Status::infeasible, d.str());
  }
  if (st == Status::infeasible) {
    d << mode << " QP infeasible: no velocity keeps every Anitescu row phi/h + J v' >= 0; Farkas multipliers";
    const auto u = qp_->farkas_in();
    const double top = u.size() ? u.cwiseAbs().maxCoeff() : 0.0;
    const char* sep = " ";
    for (int k = 0; k < rows_; ++k)
      if (u[k] > 1e-9 * top) {
        d << sep << contact_label(m, k) << ": " << u[k] / top;
        sep = ", ";
      }
    d << " (verified certificate)";
    return fail(Status::infeasible, d.str());
  }
  d << "the dense QP kernel ended " << to_string(st) << " on the " << mode << " QP";
  return fail(st, d.str());
}

Status AnitescuQp::solve_quasi_dynamic(const Model& m, const WorldParams& p) {
  const int nu = m.n_u, na = m.n_a, n = nq_;
  report_.problem_size = rows_;
  if (!mass_matrix(m, p)) return report_.status;
  // Q = diag(M_u, h^2 K_a): set H's object block (the robot block is already there).
  H_.topLeftCorner(nu, nu) = Mu_.topLeftCorner(nu, nu);
  for (int a = 0; a < na; ++a) Qinv_(nu + a, nu + a) = 1.0 / H_(nu + a, nu + a);
  // v_free = -Q^-1 b: the velocity without contact (box: h g; robot: to its reference);
  // then the dual LCP 0 <= beta _|_ J Q^-1 J' beta + phi/h + J v_free >= 0 (Pang & Tedrake's Anitescu slides slide
  // "take 2", KKT conditions of its QP; signs derived in docs/anitescu.md).
  for (int i = 0; i < n; ++i) {
    double v = 0;
    for (int j = 0; j < n; ++j) v -= Qinv_(i, j) * c_[j];
    v_free_[i] = v;
  }
  if (rows_ == 0) {
    v_ = v_free_.head(n);
    return Status::solved;
  }
  auto A = A_.topLeftCorner(rows_, n);
  anitescu_dual_lcp(A, b_.head(rows_), Qinv_.topLeftCorner(n, n), v_free_.head(n), QinvAt_.topLeftCorner(n, rows_),
                    M_lcp_.topLeftCorner(rows_, rows_), q_lcp_.head(rows_));
  // No warm start: the answer is a function of this step's LCP alone.
  const Status st = lemke_->solve(M_lcp_.topLeftCorner(rows_, rows_), q_lcp_.head(rows_), *lcp_result_);
  report_.pivots = lcp_result_->stats.iterations;
  if (st == Status::solved) {
    beta_.head(rows_) = lcp_result_->z.head(rows_);
    for (int i = 0; i < n; ++i) {
      double v = v_free_[i];
      for (int k = 0; k < rows_; ++k) v += QinvAt_(i, k) * beta_[k];
      v_[i] = v;
    }
    const double r = qp_kkt_residual(problem(), v_, y_, beta_.head(rows_), w_.head(n));
    if (r <= kKktTolerance) return Status::solved;
  }
  // Lemke ended on a ray (for this PSD matrix: the constraints have no feasible point), at
  // its limit, or with an answer that failed the QP's own check: the dense QP decides.
  fallback_ = true;
  return solve_with_qp(m, "quasi-dynamic", false);
}

}  // namespace qs

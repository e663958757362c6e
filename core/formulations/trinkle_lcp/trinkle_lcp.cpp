#include "quasistep/core/formulations/trinkle_lcp/trinkle_lcp.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "quasistep/core/number_text.hpp"
#include "quasistep/kernels/unit_scale.hpp"

#include "trinkle_lcp_derivative_work.hpp"

namespace qs {
namespace {

/// An answer whose rows are exact to this at their own scale is kept as Lemke gave it.
constexpr double kTrinkleRefineBelow = 0x1p-40;
/// A gap row's rounding floor, relative to the positions phi is computed from: 2^24 times
/// the machine epsilon, so that a gap of exactly zero (contacts touching, nothing moving) is
/// judged against its rounding, not against zero.
constexpr double kTrinkleGapRounding = 0x1p-28;

/// The step's LCP holds impulse rows (the force balance, Pang & Tedrake 2018, eq. (23a), and the
/// friction cone, (17)) beside displacement rows (gaps, (13), and slides, (15)-(16)). The LCP
/// rule judges every row against 2^-20 of max|q|, which with heavy objects is the impulses'
/// scale: the displacement rows then go unseen (with the gripper's cylinder 2^30 times
/// heavier a step was solved with a gap of -2e-8 m and the cylinder moved 1.2 mm with
/// nothing pushing it). Here each class of complementarity rows is judged against its own
/// scale, the largest sum of one of its rows' terms: the force balance (|w| = 0), the
/// displacement rows (w >= 0 and z w = 0, with z the paired impulse) and the cone rows
/// (paired with Gamma). Light objects are the mirror case: their force rows go unseen beside
/// the gaps. x = [u; z], w recomputed from M and q.
/// q_terms: the magnitudes q was summed from (a gap row's phi + J_n^a dqa_bar cancels to about
/// zero when the fingers touch the object: its rounding is that of its terms).
double class_violation(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                       const Eigen::Ref<const Eigen::VectorXd>& q_terms, int nu, int nc,
                       const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Ref<const Eigen::VectorXd>& z) {
  const int n = nu + 4 * nc;
  constexpr int N = TrinkleLcp::kCapacity;
  // Each row's w = M x + q and the sum of its terms' magnitudes, over x = [u; z]'s nonzero
  // entries (few: the contacts that carry something).
  std::array<double, N> x, w, terms;
  for (int r = 0; r < n; ++r) {
    w[r] = q[r];
    terms[r] = q_terms[r];
  }
  // Column by column (M is column-major), in increasing k for every row as a row sum would.
  for (int k = 0; k < n; ++k) {
    x[k] = k < nu ? u[k] : z[k - nu];
    if (x[k] == 0.0) continue;
    for (int r = 0; r < n; ++r) {
      const double a = M(r, k) * x[k];
      w[r] += a;
      terms[r] += std::abs(a);
    }
  }
  for (int r = 0; r < n; ++r)
    if (std::isnan(w[r]) || std::isnan(terms[r])) return std::numeric_limits<double>::infinity();
  double worst = 0;
  // Classes: the force balance (equalities, free u), the displacement rows, the cone rows.
  const int bounds[4] = {0, nu, nu + 3 * nc, n};
  for (int cls = 0; cls < 3; ++cls) {
    const int first = bounds[cls], last = bounds[cls + 1];
    double scale = 0, paired = 0;
    for (int r = first; r < last; ++r) {
      scale = std::max(scale, terms[r]);
      if (cls > 0) paired = std::max(paired, std::abs(x[r]));
    }
    if (!(scale > 0)) continue;
    for (int r = first; r < last; ++r) {
      if (cls == 0) {
        worst = std::max(worst, std::abs(w[r]) / scale);  // an equality
        continue;
      }
      const double product = paired > 0 ? std::abs(x[r] * w[r]) / paired : 0.0;
      worst = std::max({worst, -w[r] / scale, product / scale});
    }
  }
  return worst;
}

}  // namespace

TrinkleLcp::TrinkleLcp(const Model& m)
    : Stepper(m),
      solver_(std::make_unique<Solver>()),
      result_(std::make_unique<Solver::MixedResult>()),
      retry_(std::make_unique<Solver::MixedResult>()),
      certifier_(std::make_unique<StepCertifier>(kCapacity / 4, m.n_u)),
      enumeration_(std::make_unique<LcpEnumeration>(kCapacity)),
      M_(kCapacity, kCapacity),
      q_(kCapacity),
      q_terms_(kCapacity),
      tau_(m.n_q()),
      dqa_(m.n_a) {}

TrinkleLcp::~TrinkleLcp() = default;

Status TrinkleLcp::advance(const Model& m, const WorldParams& p, State& s) {
  *result_ = Solver::MixedResult{};
  report_ = StepReport{};
  std::fill(p_n_.begin(), p_n_.end(), 0.0);  // a failed step reports no impulses
  std::fill(p_t_.begin(), p_t_.end(), 0.0);
  if (m.world.type != WorldType::vertical) return fail(Status::bad_input, "trinkle_lcp steps a vertical world");
  const double h = p.h;
  const double t_mid = s.t + 0.5 * h;
  const int nu = m.n_u, na_dofs = m.n_a;

  // 1-2: contacts and Jacobians at the start of the step.
  const ContactRecord& rec = contact_record(m, p, s);
  const ContactWorkspace& g = rec.geometry;
  const int nc = rec.count;
  const int n = nu + 4 * nc;
  size_ = n;
  contacts_ = nc;
  report_.contacts = nc;
  report_.problem_size = n;
  if (n > kCapacity)
    return fail(Status::bad_input, "the step's LCP needs " + std::to_string(n) + " variables (" + std::to_string(nc) +
                                       " active contacts), more than the capacity " + std::to_string(kCapacity) +
                                       "; set contact_margin to keep distant slots out");

  // The step's inputs: tau_u and dqa_bar at the middle of the step.
  generalized_external_force(m, p, g.body_pose.data(), g.joint_frame.data(), t_mid, tau_.data());
  commanded_displacements(m, p, t_mid, dqa_.data());

  // 3: the mixed LCP, layout [dq_u (nu) | P_n | P_t+ | P_t- | Gamma] (nc each).
  auto M = M_.topLeftCorner(n, n);
  auto q = q_.head(n);
  M.setZero();
  q.setZero();
  const int pn = nu, pp = nu + nc, pm = nu + 2 * nc, pg = nu + 3 * nc;
  auto q_terms = q_terms_.head(n);
  q_terms.setZero();
  for (int e = 0; e < nu; ++e) q[e] = h * tau_[e];
  for (int e = 0; e < nu; ++e) q_terms[e] = std::abs(q[e]);
  for (int c = 0; c < nc; ++c) {
    const int i = rec.slots[c];
    const double mu = p.slot_friction(m, i);
    double jna_dqa = 0, jta_dqa = 0;
    for (int a = 0; a < na_dofs; ++a) {
      jna_dqa += g.J_n(i, nu + a) * dqa_[a];
      jta_dqa += g.J_t(i, nu + a) * dqa_[a];
    }
    for (int e = 0; e < nu; ++e) {
      const double jn = g.J_n(i, e), jt = g.J_t(i, e);
      M(e, pn + c) = jn;   // (23a)
      M(e, pp + c) = jt;
      M(e, pm + c) = -jt;
      M(pn + c, e) = jn;   // (13)
      M(pp + c, e) = jt;   // (15)
      M(pm + c, e) = -jt;
    }
    q[pn + c] = g.frame[i].phi + jna_dqa;
    q[pp + c] = jta_dqa;
    q[pm + c] = -jta_dqa;
    // phi rounds like the positions it is the difference of (kTrinkleGapRounding).
    const double position = std::max({std::abs(g.frame[i].point_a.x), std::abs(g.frame[i].point_a.y),
                                      std::abs(g.frame[i].point_b.x), std::abs(g.frame[i].point_b.y)});
    q_terms[pn + c] = std::abs(g.frame[i].phi) + std::abs(jna_dqa) + kTrinkleGapRounding * position;
    q_terms[pp + c] = q_terms[pm + c] = std::abs(jta_dqa);
    M(pp + c, pg + c) = 1.0;  // + Gamma (16)
    M(pm + c, pg + c) = 1.0;
    M(pg + c, pn + c) = mu;   // (17)
    M(pg + c, pp + c) = -1.0;
    M(pg + c, pm + c) = -1.0;
  }

  // 4: solve. The kernel checks complementarity and the equalities before `solved`.
  // Nothing to solve when no object moves and no contact is active.
  const Status st = n == 0 ? (result_->status = Status::solved) : solver_->solve_mixed(M, q, nu, *result_);
  report_.pivots = result_->stats.iterations;
  report_.complementarity_residual = result_->stats.residual;
  if (st != Status::solved && after_lemke_failed(m, p, st) != Status::solved) return report_.status;
  // Each class of rows at its own scale (class_violation). An answer not exact to well below
  // the rule's 2^-20 there is solved once more with the impulses in a unit that brings the
  // force rows' h tau to the size of the displacement rows (P = sigma P~: the force-balance
  // and cone rows divided by sigma, a power of two; M is unchanged, q's force rows become
  // h tau / sigma), and the better answer kept; one beyond 2^-20 is refused.
  const double first = n > 0 ? class_violation(M, q, q_terms_.head(n), nu, nc, result_->u, result_->z) : 0.0;
  if (first > kTrinkleRefineBelow) {
    double impulse = 0, displacement = 0;
    for (int e = 0; e < nu; ++e) impulse = std::max(impulse, std::abs(q[e]));
    for (int r = nu; r < n; ++r) displacement = std::max(displacement, std::abs(q[r]));
    const double sigma = impulse > 0 && displacement > 0 ? unit_power(impulse) / unit_power(displacement) : 1.0;
    for (int e = 0; e < nu; ++e) q[e] /= sigma;
    const Status again = solver_->solve_mixed(M, q, nu, *retry_);
    for (int e = 0; e < nu; ++e) q[e] *= sigma;
    report_.pivots += retry_->stats.iterations;
    double second = std::numeric_limits<double>::infinity();
    if (again == Status::solved) {
      retry_->z.head(3 * nc) *= sigma;  // P_n, P_t+, P_t-; Gamma is a displacement
      retry_->w.tail(nc) *= sigma;      // the cone rows
      second = class_violation(M, q, q_terms_.head(n), nu, nc, retry_->u, retry_->z);
    }
    if (second < first) {
      *result_ = *retry_;  // a copy (fixed capacity): result() stays the same object
      report_.by_enumeration = false;
    }
    const double best = std::min(first, second);
    if (!(best <= kLcpTolerance))
      return fail(Status::numerical_failure,
                  "the LCP's answer leaves its rows unsolved at their own scale (relative residual " +
                      three_digits(best) + "), also with the impulses in the step's units");
    report_.complementarity_residual = result_->stats.residual;
  }

  // What the step produced, per slot, and its own residuals.
  std::fill(p_n_.begin(), p_n_.end(), 0.0);
  std::fill(p_t_.begin(), p_t_.end(), 0.0);
  double penetration = 0;
  for (int c = 0; c < nc; ++c) {
    const int i = rec.slots[c];
    const auto& z = result_->z;  // [P_n | P_t+ | P_t- | Gamma]
    p_n_[i] = z[c];
    p_t_[i] = z[nc + c] - z[2 * nc + c];
    penetration = std::min(penetration, result_->w[c]);  // linearised phi^{l+1}
  }
  report_.linearised_penetration = penetration;
  double balance = 0;
  RelativeBalance relative;
  for (int e = 0; e < nu; ++e) {
    double r = h * tau_[e], terms = std::abs(h * tau_[e]);
    for (int c = 0; c < nc; ++c) {
      const int i = rec.slots[c];
      r += g.J_n(i, e) * p_n_[i] + g.J_t(i, e) * p_t_[i];
      terms += std::abs(g.J_n(i, e) * p_n_[i]) + std::abs(g.J_t(i, e) * p_t_[i]);
    }
    balance = std::max(balance, std::abs(r));
    add_balance_row(relative, e, r, terms);
  }
  report_.force_balance_residual = balance;
  // Each balance row against its own terms (quasistep/core/stepper.hpp): the LCP's check weighs its
  // rows against whole blocks of the solution, this one against the impulses of the row.
  if (!relative.accepted())
    return fail(Status::numerical_failure, "the answer failed its force-balance check (relative residual " +
                                               three_digits(relative.worst()) + ")");

  // 5: integrate.
  for (int e = 0; e < nu; ++e) s.q[e] += result_->u[e];
  for (int a = 0; a < na_dofs; ++a) s.q[nu + a] += dqa_[a];
  return report_.status = Status::solved;
}

Status TrinkleLcp::after_lemke_failed(const Model& m, const WorldParams& p, Status st) {
  if (st != Status::not_found && st != Status::iteration_limit && st != Status::numerical_failure)
    return fail(st, "");
  const int nu = m.n_u, nc = contacts_;
  // Rows of the active contacts: J_n^u, J_t^u, mu, and the known part of phi^{l+1}.
  Eigen::MatrixXd Jn(nc, nu), Jt(nc, nu);
  Eigen::VectorXd offset(nc), mu(nc), h_tau(nu);
  std::vector<std::string> labels;
  for (int c = 0; c < nc; ++c) {
    const int i = record_.slots[c];
    Jn.row(c) = record_.geometry.J_n.row(i).head(nu);
    Jt.row(c) = record_.geometry.J_t.row(i).head(nu);
    offset[c] = q_[nu + c];  // phi + J_n^a dqa_bar (the P_n rows of the LCP)
    mu[c] = p.slot_friction(m, i);
    labels.push_back("slot " + std::to_string(i) + " (" + m.pair_name(m.slots[i].pair) + ")");
  }
  for (int e = 0; e < nu; ++e) h_tau[e] = q_[e];
  std::vector<std::string> dofs;
  for (int e = 0; e < nu; ++e) dofs.push_back(m.dofs[e].name);
  StepCertificate cert;
  if (certifier_->penetration(Jn, offset, cert) == Status::infeasible) return fail(Status::infeasible, cert.describe(labels, dofs));
  if (certifier_->equilibrium(Jn, Jt, mu, h_tau, cert) == Status::infeasible)
    return fail(Status::infeasible, cert.describe(labels, dofs));
  const LcpEnumeration::Result& ex = enumeration_->solve(M_.topLeftCorner(size_, size_), q_.head(size_), nu);
  if (record_enumeration(ex) != Status::solved) return report_.status;
  result_->status = Status::solved;
  result_->u = ex.x.head(nu);
  result_->z = ex.x.tail(size_ - nu);
  result_->w = ex.w.tail(size_ - nu);
  result_->stats.residual = ex.residual;
  return Status::solved;
}

}  // namespace qs

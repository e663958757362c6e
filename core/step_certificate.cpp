#include "quasistep/core/step_certificate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "quasistep/core/number_text.hpp"

namespace qs {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// After normalisation, certificate entries below this are rounding noise from the LP's
// basis inverse; they are set to zero (the result is verified afterwards, so this is safe).
constexpr double kSnap = 1e-12;

std::string label(std::span<const std::string> labels, Eigen::Index i) {
  return i < static_cast<Eigen::Index>(labels.size()) ? labels[i] : std::to_string(i);
}

/// y >= 0 scaled to sum 1, with entries below kSnap set to zero; false when y has no
/// positive entry.
bool normalise_multipliers(Eigen::Ref<Eigen::VectorXd> y) {
  for (Eigen::Index i = 0; i < y.size(); ++i) y[i] = std::max(y[i], 0.0);
  for (int pass = 0; pass < 2; ++pass) {
    const double s = y.sum();
    if (!(s > 0) || !std::isfinite(s)) return false;
    y /= s;
    if (pass == 0)
      for (Eigen::Index i = 0; i < y.size(); ++i)
        if (y[i] < kSnap) y[i] = 0;
  }
  return true;
}

/// v scaled to |v|_2 = 1, with entries below kSnap set to zero; false when v is zero.
bool normalise_direction(Eigen::Ref<Eigen::VectorXd> v) {
  for (int pass = 0; pass < 2; ++pass) {
    const double s = v.norm();
    if (!(s > 0) || !std::isfinite(s)) return false;
    v /= s;
    if (pass == 0)
      for (Eigen::Index i = 0; i < v.size(); ++i)
        if (std::abs(v[i]) < kSnap) v[i] = 0;
  }
  return true;
}

}  // namespace

// ---- checks on the original data ----------------------------------------------------------

bool verify_penetration_certificate(Eigen::Ref<const Eigen::MatrixXd> J, Eigen::Ref<const Eigen::VectorXd> offset,
                                    Eigen::Ref<const Eigen::VectorXd> y_in, double tol) {
  const Eigen::Index nc = J.rows(), nu = J.cols();
  if (offset.size() != nc || y_in.size() != nc || nc == 0) return false;
  if (!J.allFinite() || !offset.allFinite() || !y_in.allFinite() || (y_in.array() < 0).any()) return false;
  const double sum = y_in.sum();
  if (!(sum > 0)) return false;
  // Schrijver cor. 7.1e: y >= 0, J'y = 0, offset'y < 0 (on y / sum y).
  for (Eigen::Index j = 0; j < nu; ++j) {
    double r = 0, mag = 0;
    for (Eigen::Index c = 0; c < nc; ++c) {
      const double yc = y_in[c] / sum;
      r += J(c, j) * yc;
      mag += std::abs(J(c, j)) * yc;
    }
    if (std::abs(r) > tol * mag) return false;
  }
  double gap = 0, mag = 0;
  for (Eigen::Index c = 0; c < nc; ++c) {
    const double yc = y_in[c] / sum;
    gap -= offset[c] * yc;
    mag += std::abs(offset[c]) * yc;
  }
  return gap > tol * mag;
}

bool verify_equilibrium_certificate(Eigen::Ref<const Eigen::MatrixXd> Jn_u, Eigen::Ref<const Eigen::MatrixXd> Jt_u,
                                    Eigen::Ref<const Eigen::VectorXd> mu, Eigen::Ref<const Eigen::VectorXd> h_tau_u,
                                    Eigen::Ref<const Eigen::VectorXd> v_in, double tol) {
  const Eigen::Index nc = Jn_u.rows(), nu = Jn_u.cols();
  if (Jt_u.rows() != nc || Jt_u.cols() != nu || mu.size() != nc || h_tau_u.size() != nu || v_in.size() != nu ||
      nu == 0)
    return false;
  if (!Jn_u.allFinite() || !Jt_u.allFinite() || !mu.allFinite() || !h_tau_u.allFinite() || !v_in.allFinite() ||
      (mu.array() < 0).any())
    return false;
  const double norm = v_in.norm();
  if (!(norm > 0)) return false;
  // Schrijver cor. 7.1d: every contact opens at least mu times as fast as it slides along v...
  for (Eigen::Index c = 0; c < nc; ++c) {
    double vn = 0, vt = 0, mag_n = 0, mag_t = 0;
    for (Eigen::Index j = 0; j < nu; ++j) {
      const double vj = v_in[j] / norm;
      vn += Jn_u(c, j) * vj;
      vt += Jt_u(c, j) * vj;
      mag_n += std::abs(Jn_u(c, j) * vj);
      mag_t += std::abs(Jt_u(c, j) * vj);
    }
    if (vn - mu[c] * std::abs(vt) < -tol * (mag_n + mu[c] * mag_t)) return false;
  }
  // ... and the load does positive work along v.
  double work = 0, mag = 0;
  for (Eigen::Index j = 0; j < nu; ++j) {
    const double vj = v_in[j] / norm;
    work += h_tau_u[j] * vj;
    mag += std::abs(h_tau_u[j] * vj);
  }
  return work > tol * mag;
}

// ---- the certifier --------------------------------------------------------------------------

StepCertifier::StepCertifier(int max_contacts, int max_free, double tol)
    : max_contacts_(std::max(max_contacts, 0)),
      max_free_(std::max(max_free, 0)),
      tol_(tol),
      // Penetration: n_c rows, n_u + n_c columns; equilibrium: n_u + n_c rows, 4 n_c + n_u
      // columns (with slacks). No adjacency walks: the smallest vertex storage.
      lp_(DenseLpCapacity{max_free_ + max_contacts_, max_free_ + 4 * max_contacts_, 1, 0}) {
  const int rows = max_free_ + max_contacts_, cols = max_free_ + 4 * max_contacts_;
  const int cols_in = std::max(max_free_, 3 * max_contacts_);
  a_in_.setZero(rows, 3 * max_contacts_);
  row_lo_.setZero(rows);
  row_hi_.setZero(rows);
  c_in_.setZero(cols_in);
  lo_in_.setZero(cols_in);
  hi_in_.setZero(cols_in);
  a_.setZero(rows, cols);
  b_.setZero(rows);
  c_.setZero(cols);
  lo_.setZero(cols);
  hi_.setZero(cols);
}

Status StepCertifier::penetration(Eigen::Ref<const Eigen::MatrixXd> J, Eigen::Ref<const Eigen::VectorXd> offset,
                                  StepCertificate& cert) {
  cert.kind = StepCertificate::Kind::none;
  cert.gap = 0;
  const int nc = static_cast<int>(J.rows()), nu = static_cast<int>(J.cols());
  if (offset.size() != nc || nc > max_contacts_ || nu > max_free_) return Status::bad_input;
  if (!J.allFinite() || !offset.allFinite()) return Status::bad_input;
  cert.y.resize(nc);
  if (nc == 0) return Status::solved;  // nothing can penetrate

  // Rows  -offset <= J dq_u <= +inf  over free dq_u.
  const int m = nc, n = nu + nc;
  row_lo_.head(m) = -offset;
  row_hi_.head(m).setConstant(kInf);
  c_in_.head(nu).setZero();
  lo_in_.head(nu).setConstant(-kInf);
  hi_in_.head(nu).setConstant(kInf);
  Status st = row_bounds_to_standard_form(J, row_lo_.head(m), row_hi_.head(m), c_in_.head(nu), lo_in_.head(nu),
                                          hi_in_.head(nu), a_.topLeftCorner(m, n), b_.head(m), c_.head(n),
                                          lo_.head(n), hi_.head(n));
  if (st != Status::solved) return st;
  st = lp_.solve(DenseLpProblem{a_.topLeftCorner(m, n), b_.head(m), c_.head(n), lo_.head(n), hi_.head(n)});
  if (st != Status::infeasible) return st == Status::unbounded ? Status::numerical_failure : st;

  // The LP's Farkas vector is y itself: on the slack of row c (bounds [-offset_c, inf)) it
  // forces y_c >= 0, on the free dq_u columns J'y = 0, and its gap is -offset'y.
  cert.y = lp_.farkas();
  if (!normalise_multipliers(cert.y) || !verify_penetration_certificate(J, offset, cert.y, tol_))
    return Status::numerical_failure;
  cert.gap = -offset.dot(cert.y);
  cert.kind = StepCertificate::Kind::penetration;
  return Status::infeasible;
}

Status StepCertifier::equilibrium(Eigen::Ref<const Eigen::MatrixXd> Jn_u, Eigen::Ref<const Eigen::MatrixXd> Jt_u,
                                  Eigen::Ref<const Eigen::VectorXd> mu, Eigen::Ref<const Eigen::VectorXd> h_tau_u,
                                  StepCertificate& cert) {
  cert.kind = StepCertificate::Kind::none;
  cert.gap = 0;
  const int nc = static_cast<int>(Jn_u.rows()), nu = static_cast<int>(Jn_u.cols());
  if (Jt_u.rows() != nc || Jt_u.cols() != nu || mu.size() != nc || h_tau_u.size() != nu || nc > max_contacts_ ||
      nu > max_free_)
    return Status::bad_input;
  if (!Jn_u.allFinite() || !Jt_u.allFinite() || !mu.allFinite() || !h_tau_u.allFinite() || (mu.array() < 0).any())
    return Status::bad_input;
  cert.y.resize(nu);
  if (nu == 0) return Status::solved;  // no free DOF, nothing to balance (P = 0)

  auto accept = [&](Status fail) {
    if (!normalise_direction(cert.y) || !verify_equilibrium_certificate(Jn_u, Jt_u, mu, h_tau_u, cert.y, tol_))
      return fail;
    cert.gap = h_tau_u.dot(cert.y);
    cert.kind = StepCertificate::Kind::equilibrium;
    return Status::infeasible;
  };
  if (nc == 0) {  // no contact: balanced iff there is no load, else v = the load's direction
    if ((h_tau_u.array() == 0).all()) return Status::solved;
    cert.y = h_tau_u;
    return accept(Status::numerical_failure);
  }

  // Columns [P_n | P_t+ | P_t-] >= 0; rows: force balance (23a) as equalities, then the
  // friction cones (17) as  0 <= mu P_n - P_t+ - P_t- <= inf.
  const int m = nu + nc, n_in = 3 * nc, n = n_in + m;
  auto A_in = a_in_.topLeftCorner(m, n_in);
  A_in.setZero();
  A_in.topLeftCorner(nu, nc) = Jn_u.transpose();
  A_in.block(0, nc, nu, nc) = Jt_u.transpose();
  A_in.block(0, 2 * nc, nu, nc) = -Jt_u.transpose();
  A_in.block(nu, 0, nc, nc).diagonal() = mu;
  A_in.block(nu, nc, nc, nc).diagonal().setConstant(-1.0);
  A_in.block(nu, 2 * nc, nc, nc).diagonal().setConstant(-1.0);
  row_lo_.head(nu) = -h_tau_u;
  row_hi_.head(nu) = -h_tau_u;
  row_lo_.segment(nu, nc).setZero();
  row_hi_.segment(nu, nc).setConstant(kInf);
  c_in_.head(n_in).setZero();
  lo_in_.head(n_in).setZero();
  hi_in_.head(n_in).setConstant(kInf);
  Status st = row_bounds_to_standard_form(A_in, row_lo_.head(m), row_hi_.head(m), c_in_.head(n_in),
                                          lo_in_.head(n_in), hi_in_.head(n_in), a_.topLeftCorner(m, n), b_.head(m),
                                          c_.head(n), lo_.head(n), hi_.head(n));
  if (st != Status::solved) return st;
  st = lp_.solve(DenseLpProblem{a_.topLeftCorner(m, n), b_.head(m), c_.head(n), lo_.head(n), hi_.head(n)});
  if (st != Status::infeasible) return st == Status::unbounded ? Status::numerical_failure : st;

  // The Farkas vector is [d; w] over [balance rows; cone rows]. Its gap is finite only if
  // w >= 0, J_n d + mu w <= 0 and |J_t d| <= w; the gap is -h tau_u' d. So v = -d.
  cert.y = -lp_.farkas().head(nu);
  return accept(Status::numerical_failure);
}

// ---- the message ----------------------------------------------------------------------------

std::string StepCertificate::describe(std::span<const std::string> contact_labels,
                                      std::span<const std::string> dof_labels) const {
  switch (kind) {
    case Kind::none:
      return "no certificate: the step's necessary conditions (non-penetration, force balance) can hold";
    case Kind::penetration: {
      std::string who, weights;
      for (Eigen::Index c = 0; c < y.size(); ++c) {
        if (!(y[c] > 0)) continue;
        who += (who.empty() ? "" : ", ") + label(contact_labels, c);
        weights += (weights.empty() ? "" : ", ") + three_digits(y[c]);
      }
      return "no displacement of the free DOFs keeps contacts {" + who +
             "} non-penetrating: one of them penetrates at least " + three_digits(gap) +
             " m whatever the free DOFs do (Farkas multipliers " + weights + ")";
    }
    case Kind::equilibrium: {
      std::string dir;
      for (Eigen::Index j = 0; j < y.size(); ++j) {
        if (y[j] == 0) continue;
        const std::string name =
            j < static_cast<Eigen::Index>(dof_labels.size()) ? dof_labels[j] : "dq_u[" + std::to_string(j) + "]";
        dir += (dir.empty() ? "" : ", ") + name + ": " + three_digits(y[j]);
      }
      return "no contact impulse in the friction cones balances the load: along the virtual displacement (" + dir +
             ") every contact opens at least mu times as fast as it slides, so cannot resist, and the load does "
             "positive work; unbalanced impulse at least " +
             three_digits(gap) + " N s";
    }
  }
  return {};
}

}  // namespace qs

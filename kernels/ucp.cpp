// The UCP (Pang, Trinkle & Lo 1996): the problem built and checked here; its solvers in
// ucp_bilinear.cpp (the bilinear algorithm), ucp_exact.cpp (the exact method) and
// ucp_enumeration.cpp (enumeration of the contact modes).
#include "quasistep/kernels/ucp.hpp"

#include <Eigen/QR>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "ucp_internal.hpp"
#include "quasistep/kernels/unit_scale.hpp"

namespace qs {

using ucp_internal::kInf;

namespace {

// Rank decision of P's pivoted QR, relative to its largest pivot: the paper's data carry
// three or four digits, so anything far below that is rounding.
constexpr double kRankThreshold = 1e-10;
// P's J_abar block must repeat [J_n; J_t]'s abar columns to this relative accuracy.
constexpr double kBlockTol = 1e-9;
// Entries of Z (orthonormal rows) this small are rounding of zeros.
constexpr double kZeroZ = 64 * std::numeric_limits<double>::epsilon();

template <class D>
double max_abs(const Eigen::MatrixBase<D>& v) {
  return v.size() == 0 ? 0.0 : v.cwiseAbs().maxCoeff();
}

double ratio(double r, double scale) {
  if (scale > 0) return r / scale;
  return r > 0 ? kInf : 0.0;
}

std::string indexed(const char* name, Eigen::Index i) {
  std::string s(name);
  s += '[';
  s += std::to_string(i);
  s += ']';
  return s;
}

// Eigen 3.4's MatrixBase::applyHouseholderOnTheLeft, u <- (I - tau [1; e] [1; e]') u, for a
// vector u, operation for operation (so the same numbers). On the dynamic-width blocks that
// HouseholderSequence::applyThisOnTheLeft passes it, Eigen's version heap-allocates tau e.
template <class E, class U>
void householder_on_the_left(const E& e, double tau, U&& u) {
  const Eigen::Index len = u.size();
  if (len == 1) {
    u[0] *= 1.0 - tau;
  } else if (tau != 0.0) {
    double t = 0.0;
    t += 1.0 * e.dot(u.tail(len - 1));  // Eigen's 1 x 1 gemv: zero, then += alpha e'u
    t += u[0];
    u[0] -= tau * t;
    for (Eigen::Index i = 1; i < len; ++i) u[i] -= t * (tau * e[i - 1]);
  }
}

}  // namespace

struct Ucp::Factor {
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod;
};

// ---- construction -------------------------------------------------------------------------

bool Ucp::fail(std::string field, std::string message) {
  error_field_ = std::move(field);
  error_message_ = std::move(message);
  return false;
}

Status Ucp::build(const UcpData& in) {
  error_field_.clear();
  error_message_.clear();
  factor_.reset();  // after bad_input the object holds no problem
  n_c_ = n_q_ = n_theta_ = rank_ = 0;
  const auto bad = [&](std::string field, std::string message) {
    fail(std::move(field), std::move(message));
    return Status::bad_input;
  };
  const auto finite = [&](const Eigen::MatrixXd& m, const char* name, bool vector) -> bool {
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j)
        if (!std::isfinite(m(i, j))) {
          std::string f = vector ? indexed(name, i + j) : indexed(name, i) + "[" + std::to_string(j) + "]";
          return fail(std::move(f), "must be a finite number");
        }
    return true;
  };

  // Sizes: n_c from P, n_theta from J_n.
  if (in.P.rows() == 0 || in.P.rows() % 2 != 0)
    return bad("P", "must have 2 n_c rows (normal rows, then tangential), an even number > 0");
  const int nc = static_cast<int>(in.P.rows() / 2);
  const std::string nc_s = std::to_string(nc);
  if (in.J_n.rows() != nc) return bad("J_n", "must be n_c x n_theta with n_c = " + nc_s + " (from P)");
  const int nth = static_cast<int>(in.J_n.cols());
  const std::string shape = nc_s + " x " + std::to_string(nth);
  if (in.J_t.rows() != nc || in.J_t.cols() != nth) return bad("J_t", "must be " + shape + " like J_n");
  if (in.theta_dot.size() != nth) return bad("theta_dot", "must have n_theta = " + std::to_string(nth) + " entries");
  if (in.mu.size() != nc) return bad("mu", "must have n_c = " + nc_s + " entries");
  if (!finite(in.P, "P", false) || !finite(in.J_n, "J_n", false) || !finite(in.J_t, "J_t", false) ||
      !finite(in.theta_dot, "theta_dot", true) || !finite(in.mu, "mu", true))
    return Status::bad_input;
  for (int i = 0; i < nc; ++i)
    if (in.mu[i] < 0) return bad(indexed("mu", i), "must be >= 0 (a friction coefficient)");

  // alpha: distinct joints that exist; abar its complement, in increasing order.
  std::vector<char> in_alpha(static_cast<size_t>(nth), in.alpha ? 0 : 1);
  if (in.alpha) {
    for (size_t k = 0; k < in.alpha->size(); ++k) {
      const int j = (*in.alpha)[k];
      if (j < 0 || j >= nth)
        return bad(indexed("alpha", static_cast<Eigen::Index>(k)),
                   "joint " + std::to_string(j) + " does not exist (joints are 0.." + std::to_string(nth - 1) + ")");
      if (in_alpha[static_cast<size_t>(j)])
        return bad(indexed("alpha", static_cast<Eigen::Index>(k)), "joint " + std::to_string(j) + " is listed twice");
      in_alpha[static_cast<size_t>(j)] = 1;
    }
  }
  alpha_.clear();
  abar_.clear();
  for (int j = 0; j < nth; ++j) (in_alpha[static_cast<size_t>(j)] ? alpha_ : abar_).push_back(j);
  const int na = static_cast<int>(abar_.size());
  const int nq = static_cast<int>(in.P.cols()) - na;
  if (nq < 1)
    return bad("P", "has " + std::to_string(in.P.cols()) + " columns; P = [W' J_abar] needs n_q >= 1 plus |abar| = " +
                        std::to_string(na));

  // P's last |abar| columns are J_abar (sec. 2): a mismatch means inconsistent data.
  Eigen::MatrixXd J(2 * nc, nth);
  J << in.J_n, in.J_t;
  const double jscale = std::max(1.0, max_abs(J));
  for (int k = 0; k < na; ++k) {
    const double diff = max_abs(in.P.col(nq + k) - J.col(abar_[static_cast<size_t>(k)]));
    if (diff > kBlockTol * jscale)
      return bad("P", "column " + std::to_string(nq + k) + " must equal column " +
                          std::to_string(abar_[static_cast<size_t>(k)]) +
                          " of [J_n; J_t] (that joint is effort-controlled: P = [W' J_abar])");
  }

  // Loads: d, or g_obj / g_man / tau.
  const int nd = nc + nq + na;
  Eigen::VectorXd d(nd), g_man = Eigen::VectorXd::Zero(nth), tau_given = Eigen::VectorXd::Zero(nth);
  if (in.d) {
    if (in.g_obj.size() || in.g_man.size() || in.tau.size())
      return bad("d", "give either d or g_obj (with g_man, tau), not both");
    if (in.d->size() != nd)
      return bad("d", "must have n_c + n_q + |abar| = " + std::to_string(nd) + " entries ([0; g_obj; (g_man - tau)_abar])");
    if (!finite(*in.d, "d", true)) return Status::bad_input;
    for (int i = 0; i < nc; ++i)
      if ((*in.d)[i] != 0) return bad(indexed("d", i), "must be 0 (the friction rows 2 U c_n - s_t+ - s_t- = 0)");
    d = *in.d;
    // tau - g_man on abar is all d says: report tau as tau - g_man (g_man taken as 0).
    for (int k = 0; k < na; ++k) tau_given[abar_[static_cast<size_t>(k)]] = -d[nc + nq + k];
  } else {
    if (in.g_obj.size() == 0) return bad("g_obj", "missing: give d, or g_obj (with g_man and tau)");
    if (in.g_obj.size() != nq) return bad("g_obj", "must have n_q = " + std::to_string(nq) + " entries");
    if (in.g_man.size() != 0 && in.g_man.size() != nth)
      return bad("g_man", "must have n_theta = " + std::to_string(nth) + " entries");
    if (in.tau.size() != 0 && in.tau.size() != nth)
      return bad("tau", "must have n_theta = " + std::to_string(nth) + " entries");
    if (!finite(in.g_obj, "g_obj", true) || !finite(in.g_man, "g_man", true) || !finite(in.tau, "tau", true))
      return Status::bad_input;
    if (in.g_man.size()) g_man = in.g_man;
    if (in.tau.size()) tau_given = in.tau;
    d.head(nc).setZero();
    d.segment(nc, nq) = in.g_obj;
    for (int k = 0; k < na; ++k) {
      const int j = abar_[static_cast<size_t>(k)];
      d[nc + nq + k] = g_man[j] - tau_given[j];
    }
    for (int j : alpha_) tau_given[j] = 0;  // unknown there (recovered)
  }

  n_c_ = nc;
  n_q_ = nq;
  n_theta_ = nth;
  P_ = in.P;
  J_n_ = in.J_n;
  J_t_ = in.J_t;
  mu_ = in.mu;
  d_ = d;
  g_man_ = g_man;
  effort_ = tau_given;
  theta_alpha_full_ = Eigen::VectorXd::Zero(nth);
  for (int j : alpha_) theta_alpha_full_[j] = in.theta_dot[j];
  rhs_v_ = J * theta_alpha_full_;  // J_alpha theta_alpha

  // Z: the rows of Q (P Pi = Q R) beyond P's rank span col(P)^perp, so Z a = 0 iff a is in
  // col(P) (Pang, Trinkle & Lo 1996, sec. 2, "rank-retaining factorizations").
  auto f = std::make_shared<Factor>();
  f->cod.setThreshold(kRankThreshold);
  f->cod.compute(P_);
  rank_ = static_cast<int>(f->cod.rank());
  const Eigen::MatrixXd Q = f->cod.householderQ();
  Z_ = Q.rightCols(2 * nc - rank_).transpose();
  // Z's rows are orthonormal: entries at rounding level are exact zeros (a contact row that
  // lies in col(P), e.g. one an effort-controlled joint moves freely). Left at 1e-16, the
  // LP's column equilibration would blow such a column up by 2^52.
  Z_ = Z_.unaryExpr([](double z) { return std::abs(z) <= kZeroZ ? 0.0 : z; });
  factor_ = std::move(f);

  // X (sec. 2): Z_n v_n + Z_t (v_t+ - v_t-) = -Z J_alpha theta_alpha.
  const int rz = 2 * nc - rank_;
  A_x_.resize(rz, 3 * nc);
  A_x_ << Z_.leftCols(nc), Z_.rightCols(nc), -Z_.rightCols(nc);
  b_x_ = -(Z_ * rhs_v_);
  // Y (sec. 2): C y + d = 0, C = [2U -I -I; P_n' - P_t' U  P_t'  0].
  const int m = nq + na;
  A_y_.setZero(nc + m, 3 * nc);
  for (int i = 0; i < nc; ++i) {
    A_y_(i, i) = 2 * mu_[i];
    A_y_(i, nc + i) = -1;
    A_y_(i, 2 * nc + i) = -1;
  }
  const Eigen::MatrixXd Pn_t = P_.topRows(nc).transpose(), Pt_t = P_.bottomRows(nc).transpose();
  A_y_.block(nc, 0, m, nc) = Pn_t - Pt_t * mu_.asDiagonal();
  A_y_.block(nc, nc, m, nc) = Pt_t;
  b_y_ = -d_;
  x_scale_ = max_abs(b_x_);
  y_scale_ = max_abs(d_);
  // X and Y are each scaled by their right-hand side (a cone section: b -> s b maps the
  // points x -> s x), so the LPs may work at unit scale; A_x and A_y stay as they are.
  x_exp_ = unit_exponent(x_scale_);
  y_exp_ = unit_exponent(max_abs(b_y_));
  b_x_lp_ = b_x_;
  b_y_lp_ = b_y_;
  for (Eigen::Index i = 0; i < b_x_lp_.size(); ++i) b_x_lp_[i] = std::ldexp(b_x_lp_[i], x_exp_);
  for (Eigen::Index i = 0; i < b_y_lp_.size(); ++i) b_y_lp_[i] = std::ldexp(b_y_lp_[i], y_exp_);
  return Status::solved;
}

// ---- recovery and the check ---------------------------------------------------------------

UcpMotion Ucp::make_motion() const {
  UcpMotion m;
  m.q_dot.setZero(n_q_);
  m.theta_dot.setZero(n_theta_);
  m.c_n.setZero(n_c_);
  m.c_t.setZero(n_c_);
  m.tau.setZero(n_theta_);
  m.v_n.setZero(n_c_);
  m.v_t.setZero(n_c_);
  return m;
}

UcpWorkspace Ucp::make_workspace() const {
  const Eigen::Index cols = P_.cols();
  UcpWorkspace w;
  w.rhs.setZero(2 * n_c_);
  w.sol.setZero(cols);
  w.sol_perm.setZero(cols);
  w.z_temp.setZero(std::max<Eigen::Index>(cols, 1));
  w.jc.setZero(n_theta_);
  w.c.setZero(2 * n_c_);
  w.e2.setZero(n_q_);
  w.e3.setZero(n_theta_);
  w.e3_t.setZero(n_theta_);
  w.vn.setZero(n_c_);
  w.vt.setZero(n_c_);
  return w;
}

bool Ucp::fits(const UcpWorkspace& w) const {
  return w.rhs.size() == 2 * n_c_ && w.sol.size() == P_.cols() && w.sol_perm.size() == P_.cols() &&
         w.z_temp.size() >= P_.cols() && w.jc.size() == n_theta_ && w.c.size() == 2 * n_c_ && w.e2.size() == n_q_ &&
         w.e3.size() == n_theta_ && w.e3_t.size() == n_theta_ && w.vn.size() == n_c_ && w.vt.size() == n_c_;
}

void Ucp::from_lp_units(Eigen::Ref<Eigen::VectorXd> x, Eigen::Ref<Eigen::VectorXd> y) const {
  if (x_exp_ != 0)
    for (Eigen::Index i = 0; i < x.size(); ++i) x[i] = std::ldexp(x[i], -x_exp_);
  if (y_exp_ != 0)
    for (Eigen::Index i = 0; i < y.size(); ++i) y[i] = std::ldexp(y[i], -y_exp_);
}

void Ucp::recover(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                  UcpMotion& out) const {
  UcpWorkspace ws = make_workspace();
  recover(x, y, out, ws);
}

void Ucp::recover(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                  UcpMotion& out, UcpWorkspace& ws) const {
  const int nc = n_c_;
  if (out.q_dot.size() != n_q_) out = make_motion();
  if (!fits(ws)) ws = make_workspace();
  // Proposition 1: v_t = v_t+ - v_t-, c_t = s_t+ - U c_n.
  out.v_n = x.head(nc);
  out.v_t = x.segment(nc, nc) - x.tail(nc);
  out.c_n = y.head(nc);
  out.c_t = y.segment(nc, nc) - mu_.cwiseProduct(out.c_n);
  // P [q_dot; -theta_abar] = v + J_alpha theta_alpha (eqs. (4)-(5)); minimum norm if P is
  // rank deficient. Eigen 3.4's CompleteOrthogonalDecomposition::_solve_impl step by step
  // (the same operations, so the same numbers) on ws: cod.solve() allocates temporaries.
  const auto& cod = factor_->cod;
  const Eigen::Index rank = cod.rank(), cols = cod.cols();
  ws.rhs.head(nc) = out.v_n + rhs_v_.head(nc);
  ws.rhs.tail(nc) = out.v_t + rhs_v_.tail(nc);
  Eigen::VectorXd& b = ws.sol_perm;
  if (rank == 0) {
    b.setZero();
  } else {
    // Q' rhs: HouseholderSequence::applyThisOnTheLeft of matrixQ().setLength(rank).adjoint().
    const auto Q = cod.householderQ();
    for (Eigen::Index k = 0; k < rank; ++k)
      householder_on_the_left(Q.essentialVector(k), cod.hCoeffs()(k), ws.rhs.tail(ws.rhs.size() - k));
    ws.sol.topRows(rank) =
        cod.matrixT().topLeftCorner(rank, rank).triangularView<Eigen::Upper>().solve(ws.rhs.topRows(rank));
    if (rank < cols) {  // Z' [z; 0] (applyZAdjointOnTheLeftInPlace, with ws.z_temp)
      ws.sol.bottomRows(cols - rank).setZero();
      for (Eigen::Index k = 0; k < rank; ++k) {
        if (k != rank - 1) std::swap(ws.sol[k], ws.sol[rank - 1]);
        ws.sol.middleRows(rank - 1, cols - rank + 1)
            .applyHouseholderOnTheLeft(cod.matrixQTZ().row(k).tail(cols - rank).adjoint(), cod.zCoeffs()(k),
                                       ws.z_temp.data());
        if (k != rank - 1) std::swap(ws.sol[k], ws.sol[rank - 1]);
      }
    }
    b.noalias() = cod.colsPermutation() * ws.sol;  // not in place: that allocates a mask
  }
  out.q_dot = b.head(n_q_);
  out.theta_dot = theta_alpha_full_;
  for (size_t k = 0; k < abar_.size(); ++k) out.theta_dot[abar_[k]] = -b[n_q_ + static_cast<Eigen::Index>(k)];
  // Eq. (3): tau = J_n' c_n + J_t' c_t + g_man where tau is unknown (alpha). (Eigen
  // evaluates `VectorXd jc = P1 + P2` as jc = P1; jc += P2: so do we, without the vector.)
  out.tau = effort_;
  ws.jc.noalias() = J_n_.transpose() * out.c_n;
  ws.jc.noalias() += J_t_.transpose() * out.c_t;
  for (int j : alpha_) out.tau[j] = ws.jc[j] + g_man_[j];
}

UcpCheck Ucp::check(const UcpMotion& mo) const {
  UcpWorkspace ws = make_workspace();
  return check(mo, ws);
}

UcpCheck Ucp::check(const UcpMotion& mo, UcpWorkspace& ws) const {
  const int nc = n_c_;
  if (!fits(ws)) ws = make_workspace();
  UcpCheck r;
  const auto note = [&](double v, int eq, int index) {
    if (v > r.worst || std::isnan(v)) {
      r.worst = std::isnan(v) ? kInf : v;
      r.equation = eq;
      r.index = index;
    }
  };
  const double c_max = std::max(max_abs(mo.c_n), max_abs(mo.c_t));
  const double p_max = max_abs(P_), j_max = std::max(max_abs(J_n_), max_abs(J_t_));
  const double sF = std::max({max_abs(d_), p_max * c_max, j_max * c_max});
  const double sV = std::max({max_abs(rhs_v_), p_max * max_abs(mo.q_dot), j_max * max_abs(mo.theta_dot),
                              max_abs(mo.v_n), max_abs(mo.v_t)});
  const auto WT = P_.leftCols(n_q_);  // W' (2 n_c x n_q)
  // Each product goes into ws with .noalias(), in the order Eigen evaluated the expressions
  // in the comments into new vectors (so the same numbers): `P1 + x` and `P1 + P2 + ...`
  // evaluate each product into a temporary first; `P1 - P2` is dst = P1, dst -= P2.
  ws.c << mo.c_n, mo.c_t;
  // (2) W c + g_obj = 0
  ws.e2.noalias() = WT.transpose() * ws.c;
  ws.e2 += d_.segment(nc, n_q_);
  for (int i = 0; i < n_q_; ++i) note(ratio(std::abs(ws.e2[i]), sF), 2, i);
  // (3) J_n' c_n + J_t' c_t = tau - g_man (every joint: on alpha tau was recovered from it)
  ws.e3.noalias() = J_n_.transpose() * mo.c_n;
  ws.e3_t.noalias() = J_t_.transpose() * mo.c_t;
  ws.e3 = ws.e3 + ws.e3_t + g_man_ - mo.tau;
  for (int j = 0; j < n_theta_; ++j) note(ratio(std::abs(ws.e3[j]), sF), 3, j);
  // (4), (5) v = W' q_dot - J theta_dot
  ws.vn.noalias() = WT.topRows(nc) * mo.q_dot;
  ws.vn.noalias() -= J_n_ * mo.theta_dot;
  ws.vt.noalias() = WT.bottomRows(nc) * mo.q_dot;
  ws.vt.noalias() -= J_t_ * mo.theta_dot;
  const Eigen::VectorXd &vn = ws.vn, &vt = ws.vt;
  for (int i = 0; i < nc; ++i) {
    note(ratio(std::abs(mo.v_n[i] - vn[i]), sV), 4, i);
    note(ratio(std::abs(mo.v_t[i] - vt[i]), sV), 5, i);
    note(ratio(std::max(0.0, -mo.v_n[i]), sV), 6, i);                                          // (6)
    note(ratio(std::max({0.0, std::abs(mo.c_t[i]) - mu_[i] * mo.c_n[i], -mo.c_n[i]}), sF), 7, i);  // (7)
    // (8)-(9): c_n > 0 => v_n = 0 and v_n > 0 => c_n = 0
    note(std::min(ratio(std::abs(mo.c_n[i]), sF), ratio(std::abs(mo.v_n[i]), sV)), 8, i);
    // (10): sliding opposes the friction force, at the cone's edge
    note(std::min(ratio(std::max(0.0, mo.v_t[i]), sV), ratio(std::abs(mo.c_t[i] + mu_[i] * mo.c_n[i]), sF)), 10, i);
    note(std::min(ratio(std::max(0.0, -mo.v_t[i]), sV), ratio(std::abs(mo.c_t[i] - mu_[i] * mo.c_n[i]), sF)), 10, i);
  }
  return r;
}

bool Ucp::certifies_empty(char side, const Eigen::Ref<const Eigen::VectorXd>& upper,
                          const Eigen::Ref<const Eigen::VectorXd>& f) const {
  return side == 'X' ? farkas_certifies_empty(A_x_, b_x_lp_, upper, f) : farkas_certifies_empty(A_y_, b_y_lp_, upper, f);
}

bool farkas_certifies_empty(const Eigen::Ref<const Eigen::MatrixXd>& A, const Eigen::Ref<const Eigen::VectorXd>& b,
                            const Eigen::Ref<const Eigen::VectorXd>& upper, const Eigen::Ref<const Eigen::VectorXd>& f) {
  const Eigen::Index m = A.rows(), n = A.cols();
  if (f.size() != m || b.size() != m || upper.size() != n || m == 0 || !f.allFinite() || !A.allFinite() ||
      !b.allFinite())
    return false;
  // Each sum of m products is within (m + 2) u_ld of the sum of its terms' magnitudes (the
  // products of doubles rounded once in long double, then m additions), doubled for safety.
  using Real = long double;
  const Real u = std::numeric_limits<Real>::epsilon() / 2;
  const Real rounding = 2 * (static_cast<Real>(m) + 2) * u;
  Real beta = 0, beta_mag = 0;
  for (Eigen::Index i = 0; i < m; ++i) {
    const Real t = static_cast<Real>(f[i]) * static_cast<Real>(b[i]);
    beta += t;
    beta_mag += std::fabs(t);
  }
  const Real beta_low = beta - rounding * beta_mag;
  if (!(beta_low > 0)) return false;
  // With zeta_j = |A_j|_inf z_j (each variable in units of its column's effect on the rows),
  // every point has beta = sum_j g_j z_j <= G |zeta|_1, G = max_j g_j / |A_j|_inf certified
  // upwards over the free columns, and |b|_inf = |A z|_inf <= |zeta|_1. Both are the same
  // whatever the units of each column.
  Real g_max = 0;
  for (Eigen::Index j = 0; j < n; ++j) {
    if (upper[j] == 0) continue;  // fixed at 0: its g_j takes no part
    Real g = 0, g_mag = 0, a_col = 0;
    for (Eigen::Index i = 0; i < m; ++i) {
      const Real t = static_cast<Real>(f[i]) * static_cast<Real>(A(i, j));
      g += t;
      g_mag += std::fabs(t);
      a_col = std::max(a_col, static_cast<Real>(std::abs(A(i, j))));
    }
    if (a_col == 0) continue;  // a zero column: its variable moves no row
    g_max = std::max(g_max, (g + rounding * g_mag) / a_col);
  }
  if (g_max <= 0) return true;  // beta > 0 >= sum_j g_j z_j: empty outright
  return beta_low / g_max >= static_cast<Real>(kUcpCertifiedRadius) * static_cast<Real>(max_abs(b));
}

bool Ucp::complementary(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                        double tol) {
  return x.dot(y) <= tol * std::max(1.0, max_abs(x) * max_abs(y));
}
}  // namespace qs

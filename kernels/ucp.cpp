#include "quasistep/kernels/ucp.hpp"

#include <Eigen/QR>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "quasistep/kernels/splitmix64.hpp"
#include "quasistep/kernels/unit_scale.hpp"

namespace qs {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
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

double elapsed(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
  x_exp_ = unit_scale_exponent(x_scale_);
  y_exp_ = unit_scale_exponent(max_abs(b_y_));
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

bool Ucp::complementary(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                        double tol) {
  return x.dot(y) <= tol * std::max(1.0, max_abs(x) * max_abs(y));
}

// ---- the bilinear algorithm ---------------------------------------------------------------

struct UcpBilinear::Impl {
  const Ucp& u;
  UcpBilinearOptions opt;
  int n;
  DenseLp lp_x, lp_y;
  Eigen::VectorXd lo, hi, zero, x, y, best_x, best_y;
  LpBasis bx, by;
  // Step 3's adjacent extreme points E(x), E(y), with their bases (capacity of the kernel).
  Eigen::MatrixXd ex, ey;
  std::vector<LpBasis> bex, bey;
  int nex = 0, ney = 0;
  UcpMotion motion;  // the solution's, for the check
  UcpWorkspace ws;

  static DenseLpCapacity capacity(int rows, int cols) {
    DenseLpCapacity c;
    c.rows = std::max(rows, 1);
    c.cols = cols;
    return c;
  }
  Impl(const Ucp& ucp, const UcpBilinearOptions& o)
      : u(ucp), opt(o), n(ucp.n()),
        lp_x(capacity(static_cast<int>(ucp.A_x().rows()), ucp.n())),
        lp_y(capacity(static_cast<int>(ucp.A_y().rows()), ucp.n())) {
    lo.setZero(n);
    hi.setConstant(n, kInf);
    zero.setZero(n);
    x.setZero(n);
    y.setZero(n);
    best_x.setZero(n);
    best_y.setZero(n);
    bx = lp_x.basis();
    by = lp_y.basis();
    const int kx = lp_x.capacity().vertex_neighbours, ky = lp_y.capacity().vertex_neighbours;
    ex.setZero(n, kx);
    ey.setZero(n, ky);
    bex.assign(static_cast<size_t>(kx), lp_x.basis());
    bey.assign(static_cast<size_t>(ky), lp_y.basis());
    motion = ucp.make_motion();
    ws = ucp.make_workspace();
  }

  DenseLpProblem px(const Eigen::VectorXd& c) const { return {u.A_x(), u.b_x_lp(), c, lo, hi}; }
  DenseLpProblem py(const Eigen::VectorXd& c) const { return {u.A_y(), u.b_y_lp(), c, lo, hi}; }

  /// The distinct bounded neighbours of a vertex (rays carry no pair to evaluate).
  Status neighbours(DenseLp& lp, const DenseLpProblem& p, const LpBasis& b, Eigen::MatrixXd& pts,
                    std::vector<LpBasis>& bases, int& count) {
    count = 0;
    const auto keep = [&](const LpNeighbour& nb) {
      if (nb.unbounded || nb.degenerate || count >= static_cast<int>(bases.size())) return true;
      pts.col(count) = nb.point;
      bases[static_cast<size_t>(count)] = nb.basis;
      ++count;
      return true;
    };
    const Status s = opt.full_adjacency ? lp.for_each_adjacent_vertex(p, b, keep) : lp.for_each_adjacent_basis(p, b, keep);
    return s == Status::iteration_limit ? Status::solved : s;  // a partial list is still genuine
  }
};

UcpBilinear::UcpBilinear(const Ucp& ucp, const UcpBilinearOptions& options)
    : impl_(std::make_unique<Impl>(ucp, options)) {
  result_.x.setZero(ucp.n());
  result_.y.setZero(ucp.n());
  // The initial pair, then up to max_pairs + 1 (a Step 3 pair may follow the Step 1 pair
  // that reached max_pairs): visit() then never reallocates.
  result_.products.reserve(static_cast<size_t>(std::max(0, options.max_pairs)) + 2);
}

UcpBilinear::~UcpBilinear() = default;

const UcpBilinearResult& UcpBilinear::solve() {
  const auto start = std::chrono::steady_clock::now();
  Impl& s = *impl_;
  UcpBilinearResult& r = result_;
  r.status = Status::not_run;
  r.empty_side = 0;
  r.pairs = r.lps = r.step3 = r.restarts = 0;
  r.products.clear();
  r.check = UcpCheck{};
  std::uint64_t rng = s.opt.seed;
  double best = kInf;
  const auto finish = [&](Status st) -> const UcpBilinearResult& {
    r.status = st;
    r.x = s.best_x;
    r.y = s.best_y;
    s.u.from_lp_units(r.x, r.y);
    r.product = std::ldexp(best, -(s.u.x_exponent() + s.u.y_exponent()));
    if (st == Status::solved) {
      s.u.recover(r.x, r.y, s.motion, s.ws);
      r.check = s.u.check(s.motion, s.ws);
      if (!(r.check.worst <= s.opt.check_tolerance)) r.status = Status::numerical_failure;
    }
    r.seconds = elapsed(start);
    return r;
  };
  const auto lp_failure = [](Status st) { return st == Status::unbounded ? Status::numerical_failure : st; };
  // Records the current pair; true when it is complementary.
  const auto visit = [&]() {
    const double p = s.x.dot(s.y);
    r.products.push_back(std::ldexp(p, -(s.u.x_exponent() + s.u.y_exponent())));  // X's and Y's units
    if (p < best) {
      best = p;
      s.best_x = s.x;
      s.best_y = s.y;
    }
    return Ucp::complementary(s.x, s.y, s.opt.tolerance);
  };

  // Step 0: a vertex of each polyhedron (the paper: two LPs with a zero objective).
  Status st = s.lp_x.solve(s.px(s.zero));
  ++r.lps;
  if (st == Status::infeasible) {
    r.empty_side = 'X';
    return finish(Status::infeasible);
  }
  if (st != Status::solved) return finish(lp_failure(st));
  s.x = s.lp_x.x();
  s.bx = s.lp_x.basis();
  st = s.lp_y.solve(s.py(s.zero));
  ++r.lps;
  if (st == Status::infeasible) {
    r.empty_side = 'Y';
    return finish(Status::infeasible);
  }
  if (st != Status::solved) return finish(lp_failure(st));
  s.y = s.lp_y.x();
  s.by = s.lp_y.basis();
  if (visit()) return finish(Status::solved);
  double current = s.x.dot(s.y);

  while (true) {
    if (r.pairs >= s.opt.max_pairs) return finish(Status::not_found);
    // Step 1: x <- argmin { x'y : x in X }, then y <- argmin { y'x : y in Y } (eqs. (14), (15)).
    st = s.lp_x.solve(s.px(s.y), s.bx);
    ++r.lps;
    if (st != Status::solved) return finish(lp_failure(st));
    s.x = s.lp_x.x();
    s.bx = s.lp_x.basis();
    st = s.lp_y.solve(s.py(s.x), s.by);
    ++r.lps;
    if (st != Status::solved) return finish(lp_failure(st));
    s.y = s.lp_y.x();
    s.by = s.lp_y.basis();
    ++r.pairs;
    // Step 2: complementary, a strict decrease (back to Step 1), or stationary (eq. (16)).
    if (visit()) return finish(Status::solved);
    const double p = s.x.dot(s.y);
    const double noise = s.opt.tolerance * std::max(1.0, s.x.cwiseAbs().maxCoeff() * s.y.cwiseAbs().maxCoeff());
    if (p < current - noise) {
      current = p;
      continue;
    }
    current = p;
    // Step 3: the best pair of adjacent extreme points E(x) x E(y).
    ++r.step3;
    st = s.neighbours(s.lp_x, s.px(s.zero), s.bx, s.ex, s.bex, s.nex);
    if (st != Status::solved) return finish(lp_failure(st));
    st = s.neighbours(s.lp_y, s.py(s.zero), s.by, s.ey, s.bey, s.ney);
    if (st != Status::solved) return finish(lp_failure(st));
    if (s.nex == 0 || s.ney == 0) return finish(Status::not_found);  // nowhere to go
    int bi = 0, bj = 0;
    double bp = kInf;
    for (int i = 0; i < s.nex; ++i)
      for (int j = 0; j < s.ney; ++j) {
        const double q = s.ex.col(i).dot(s.ey.col(j));
        if (q < bp) {
          bp = q;
          bi = i;
          bj = j;
        }
      }
    if (!(bp < current - noise)) {
      // Sec. 5's modification: no improving neighbour pair, so take a random one and go back
      // to Step 1 (rather than repeating Step 3), accepting an increase of x'y.
      if (r.restarts >= s.opt.max_restarts) return finish(Status::not_found);
      ++r.restarts;
      bi = static_cast<int>(splitmix64_next(rng) % static_cast<std::uint64_t>(s.nex));
      bj = static_cast<int>(splitmix64_next(rng) % static_cast<std::uint64_t>(s.ney));
    }
    s.x = s.ex.col(bi);
    s.y = s.ey.col(bj);
    s.bx = s.bex[static_cast<size_t>(bi)];
    s.by = s.bey[static_cast<size_t>(bj)];
    ++r.pairs;
    if (visit()) return finish(Status::solved);
    current = s.x.dot(s.y);
  }
}

// ---- the exact method ---------------------------------------------------------------------

// A node fixes pairs: "first" is x_i = 0, "second" is y_i = 0. Its relaxation is the two LPs
// { x in X, fixed x_i = 0 } and { y in Y, fixed y_i = 0 }: independent, so the node is empty
// exactly when one of them is (a Farkas certificate, verified by the LP kernel). Within a
// nonempty node a few bilinear steps (eqs. (14)-(15), restricted to the node) look for a
// complementary pair, starting from the parent's y; a node whose pair is complementary is a
// leaf. Every complementary pair of a node lies in one of its two children (x_i y_i = 0 means
// x_i = 0 or y_i = 0), so closing every node proves that none exists.
struct UcpExact::Relaxation {
  struct Workspace {
    std::unique_ptr<DenseLp> lx, ly;
    Eigen::VectorXd lo, hx, hy, c, x, y;
  };
  struct Warm {
    Eigen::VectorXd y;
    LpBasis bx, by;
    bool has = false;
  };
  using Solution = Eigen::VectorXd;  // [x; y]

  const Ucp* u = nullptr;
  int n = 0;
  double tolerance = 1e-10;
  int inner_steps = 4;
  DenseLpCapacity cap_x, cap_y;

  int disjunctions() const { return n; }
  Workspace make_workspace() const {
    Workspace w;
    w.lx = std::make_unique<DenseLp>(cap_x);
    w.ly = std::make_unique<DenseLp>(cap_y);
    w.lo.setZero(n);
    w.hx.setZero(n);
    w.hy.setZero(n);
    w.c.setZero(n);
    w.x.setZero(n);
    w.y.setZero(n);
    return w;
  }
  Warm make_warm() const {
    Warm w;
    w.y.setZero(n);
    w.bx = LpBasis(cap_x.rows, cap_x.cols);  // the kernel's own basis storage size
    w.by = LpBasis(cap_y.rows, cap_y.cols);
    return w;
  }
  Solution make_solution() const { return Eigen::VectorXd::Zero(2 * n); }

  static Status failure(Status st) { return st == Status::unbounded ? Status::numerical_failure : st; }

  BnbEvaluation evaluate(const Side* fix, const Warm* parent, Workspace& ws, Warm& warm_out, Solution& sol) const {
    for (int i = 0; i < n; ++i) {
      ws.hx[i] = fix[i] == Side::first ? 0.0 : kInf;
      ws.hy[i] = fix[i] == Side::second ? 0.0 : kInf;
    }
    const bool warm = parent && parent->has;
    const DenseLpProblem px{u->A_x(), u->b_x_lp(), ws.c, ws.lo, ws.hx};
    const DenseLpProblem py{u->A_y(), u->b_y_lp(), ws.c, ws.lo, ws.hy};
    // X, minimising x'y_parent (0 at the root).
    if (warm) ws.c = parent->y;
    else ws.c.setZero();
    Status st = warm ? ws.lx->solve(px, parent->bx) : ws.lx->solve(px);
    if (st == Status::infeasible) return {Status::infeasible, 0, -1};
    if (st != Status::solved) return {failure(st), 0, -1};
    ws.x = ws.lx->x();
    ws.c = ws.x;
    st = warm ? ws.ly->solve(py, parent->by) : ws.ly->solve(py);
    if (st == Status::infeasible) return {Status::infeasible, 0, -1};
    if (st != Status::solved) return {failure(st), 0, -1};
    ws.y = ws.ly->x();
    // A few bilinear steps inside the node while x'y decreases.
    for (int k = 0; k < inner_steps && !Ucp::complementary(ws.x, ws.y, tolerance); ++k) {
      const double p = ws.x.dot(ws.y);
      ws.c = ws.y;
      if (ws.lx->solve(px, ws.lx->basis()) != Status::solved) break;
      ws.c = ws.lx->x();
      if (ws.ly->solve(py, ws.ly->basis()) != Status::solved) break;
      const double q = ws.lx->x().dot(ws.ly->x());
      if (!(q < p)) break;
      ws.x = ws.lx->x();
      ws.y = ws.ly->x();
    }
    warm_out.y = ws.y;
    warm_out.bx = ws.lx->basis();
    warm_out.by = ws.ly->basis();
    warm_out.has = true;
    sol.head(n) = ws.x;
    sol.tail(n) = ws.y;
    if (Ucp::complementary(ws.x, ws.y, tolerance)) return {Status::solved, 0, -1};
    // Branch on the free pair with the largest product.
    int branch = -1;
    double worst = 0;
    for (int i = 0; i < n; ++i) {
      if (fix[i] != Side::free) continue;
      const double v = ws.x[i] * ws.y[i];
      if (v > worst) {
        worst = v;
        branch = i;
      }
    }
    return {Status::solved, 0, branch};  // branch -1: the product is rounding in fixed pairs
  }
};

UcpExact::UcpExact(const Ucp& ucp, const UcpExactOptions& options)
    : ucp_(&ucp), opt_(options), relax_(std::make_unique<Relaxation>()) {
  Relaxation& r = *relax_;
  r.u = &ucp;
  r.n = ucp.n();
  r.tolerance = options.tolerance;
  r.inner_steps = options.inner_steps;
  r.cap_x.rows = std::max(1, static_cast<int>(ucp.A_x().rows()));
  r.cap_x.cols = ucp.n();
  r.cap_y.rows = std::max(1, static_cast<int>(ucp.A_y().rows()));
  r.cap_y.cols = ucp.n();
  BnbOptions bo;
  bo.max_nodes = options.max_nodes;
  bo.round_width = options.round_width;
  bo.parallel = options.parallel;
  bo.stop_at_first_leaf = true;  // a feasibility problem: every leaf is an answer
  bnb_ = std::make_unique<BranchAndBound<Relaxation>>(r, bo, 1);
  root_x_ = std::make_unique<DenseLp>(r.cap_x);
  root_y_ = std::make_unique<DenseLp>(r.cap_y);
  zero_.setZero(ucp.n());
  inf_.setConstant(ucp.n(), kInf);
  result_.x.setZero(ucp.n());
  result_.y.setZero(ucp.n());
  motion_ = ucp.make_motion();
  ws_ = ucp.make_workspace();
}

UcpExact::~UcpExact() = default;

const UcpExactResult& UcpExact::solve() {
  UcpExactResult& r = result_;
  r.status = Status::not_run;
  r.empty_side = 0;
  r.check = UcpCheck{};
  const Ucp& u = *ucp_;
  // Which side is empty, when one is: the reason no motion exists at all.
  const Status sx = root_x_->solve(DenseLpProblem{u.A_x(), u.b_x_lp(), zero_, zero_, inf_});
  const Status sy = root_y_->solve(DenseLpProblem{u.A_y(), u.b_y_lp(), zero_, zero_, inf_});
  if (sx == Status::infeasible || sy == Status::infeasible) {
    r.empty_side = sx == Status::infeasible ? 'X' : 'Y';
    r.status = Status::infeasible;
    r.stats = BnbStats{};
    return r;
  }
  const auto& out = bnb_->solve(*relax_);
  r.stats = out.stats;
  r.status = out.status;
  if (out.status == Status::solved) {
    r.x = out.solution.head(u.n());
    r.y = out.solution.tail(u.n());
    u.from_lp_units(r.x, r.y);
    u.recover(r.x, r.y, motion_, ws_);
    r.check = u.check(motion_, ws_);
    if (!(r.check.worst <= opt_.check_tolerance)) r.status = Status::numerical_failure;
  }
  return r;
}

// ---- enumeration of the contact modes -----------------------------------------------------

const char* to_string(ContactMode m) {
  switch (m) {
    case ContactMode::breaking: return "breaking";
    case ContactMode::rolling: return "rolling";
    case ContactMode::sliding_positive: return "sliding+";
    case ContactMode::sliding_negative: return "sliding-";
  }
  return "unknown";
}

UcpEnumerationResult ucp_enumerate_modes(const Ucp& u, long max_nodes) {
  UcpEnumerationResult r;
  const int nc = u.n_c(), n = u.n();
  DenseLpCapacity cx, cy;
  cx.rows = std::max(1, static_cast<int>(u.A_x().rows()));
  cx.cols = n;
  cy.rows = std::max(1, static_cast<int>(u.A_y().rows()));
  cy.cols = n;
  DenseLp lx(cx), ly(cy);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
  // Per depth: the upper bounds after fixing contacts 0..depth-1, and a point of each side.
  std::vector<Eigen::VectorXd> hx(static_cast<size_t>(nc) + 1, Eigen::VectorXd::Constant(n, kInf)), hy = hx;
  std::vector<Eigen::VectorXd> xs(static_cast<size_t>(nc) + 1, zero), ys = xs;
  std::vector<ContactMode> modes(static_cast<size_t>(nc), ContactMode::breaking);
  std::vector<int> next(static_cast<size_t>(nc) + 1, 0);  // the next mode to try at each depth
  const auto solve_side = [&](DenseLp& lp, const Eigen::MatrixXd& A, const Eigen::VectorXd& b,
                              const Eigen::VectorXd& hi, Eigen::VectorXd& point) {
    ++r.lps;
    const Status st = lp.solve(DenseLpProblem{A, b, zero, zero, hi});
    if (st == Status::solved) point = lp.x();
    return st;
  };
  // The root: both sides must be nonempty.
  Status st = solve_side(lx, u.A_x(), u.b_x_lp(), hx[0], xs[0]);
  if (st == Status::solved) st = solve_side(ly, u.A_y(), u.b_y_lp(), hy[0], ys[0]);
  if (st == Status::infeasible) {
    r.status = Status::solved;  // complete: no solution
    return r;
  }
  if (st != Status::solved) {
    r.status = st == Status::unbounded ? Status::numerical_failure : st;
    return r;
  }
  int depth = 0;
  while (depth >= 0) {
    if (depth == nc) {
      r.solutions.push_back({modes, xs[static_cast<size_t>(nc)], ys[static_cast<size_t>(nc)]});
      u.from_lp_units(r.solutions.back().x, r.solutions.back().y);
      --depth;
      continue;
    }
    const size_t dk = static_cast<size_t>(depth);
    if (next[dk] == 4) {
      next[dk] = 0;
      --depth;
      continue;
    }
    if (r.nodes >= max_nodes) {
      r.status = Status::iteration_limit;
      return r;
    }
    ++r.nodes;
    const auto mode = static_cast<ContactMode>(next[dk]++);
    modes[dk] = mode;
    hx[dk + 1] = hx[dk];
    hy[dk + 1] = hy[dk];
    xs[dk + 1] = xs[dk];
    ys[dk + 1] = ys[dk];
    const int in = depth, ip = nc + depth, im = 2 * nc + depth;  // pairs n, t+, t-
    bool change_x = true, change_y = true;
    switch (mode) {
      case ContactMode::breaking:
        hy[dk + 1][in] = hy[dk + 1][ip] = hy[dk + 1][im] = 0;
        change_x = false;
        break;
      case ContactMode::rolling:
        hx[dk + 1][in] = hx[dk + 1][ip] = hx[dk + 1][im] = 0;
        change_y = false;
        break;
      case ContactMode::sliding_positive:
        hx[dk + 1][in] = hx[dk + 1][im] = 0;
        hy[dk + 1][ip] = 0;
        break;
      case ContactMode::sliding_negative:
        hx[dk + 1][in] = hx[dk + 1][ip] = 0;
        hy[dk + 1][im] = 0;
        break;
    }
    Status sx = Status::solved, sy = Status::solved;
    if (change_x) sx = solve_side(lx, u.A_x(), u.b_x_lp(), hx[dk + 1], xs[dk + 1]);
    if (sx == Status::solved && change_y) sy = solve_side(ly, u.A_y(), u.b_y_lp(), hy[dk + 1], ys[dk + 1]);
    if (sx == Status::infeasible || sy == Status::infeasible) continue;  // this mode is empty
    if (sx != Status::solved || sy != Status::solved) {
      const Status bad = sx != Status::solved ? sx : sy;
      r.status = bad == Status::unbounded ? Status::numerical_failure : bad;
      return r;
    }
    ++depth;
  }
  r.status = Status::solved;
  return r;
}

}  // namespace qs

// Fuzz target: the UCP methods' verdicts (Pang, Trinkle & Lo 1996), held to an exact oracle.
// The input bytes are a UCP with n_c <= 4 contacts, n_q <= 3 object DOFs and n_theta <= 8
// joints, each velocity- or effort-controlled; every number a multiple of 1/16 in [-8, 8)
// (friction a multiple of 1/128 in [0, 1]), so exact in doubles; and a power of two 2^k,
// k in [-40, 40], applied to the loads, to the commanded velocities or to both. The exact
// method, the bilinear algorithm and the enumeration of the contact modes solve the problem
// and its scaled copy:
//   - every `solved` answer and every listed mode solution, recovered as a motion, must meet
//     eqs. (2)-(10) to the methods' check tolerance with every residual and scale formed in
//     exact rational arithmetic (GMP): no wrong `solved`;
//   - no method may answer `infeasible` (nor the complete enumeration list nothing) where
//     another found such a verified solution: no false `infeasible`;
//   - the scaled copy must get the same status from each method and the same answer scaled
//     by the power of two, bit for bit.
// Anything else aborts.
#include <gmpxx.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "quasistep/kernels/ucp.hpp"

namespace {

using Q = mpq_class;

Q qabs(const Q& v) { return v < 0 ? Q(-v) : v; }

/// Ucp::check's measure of one residual: r over its scale (infinite when the scale is 0 and
/// r is not), as an exact rational compared with the tolerance: true when r <= tol * scale.
bool within(const Q& r, const Q& scale, const Q& tol) { return scale > 0 ? r <= tol * scale : r == 0; }

/// Pang, Trinkle & Lo 1996, eqs. (2)-(10) on the recovered motion, every residual and scale
/// formed exactly from the problem's own data (not from the Ucp's derived matrices), with the
/// scales of Ucp::check: forces over max(|d|, |P| |c|, |J| |c|), velocities over
/// max(|J_alpha theta_alpha|, |P| |q_dot|, |J| |theta_dot|, |v|); a complementarity condition
/// holds when either of its two sides is within the tolerance.
bool exactly_checked(const qs::UcpData& d, const qs::Ucp& u, const qs::UcpMotion& m, double tolerance) {
  const int nc = u.n_c(), nq = u.n_q(), nt = u.n_theta();
  for (const Eigen::VectorXd* v : {&m.q_dot, &m.theta_dot, &m.c_n, &m.c_t, &m.tau, &m.v_n, &m.v_t})
    if (!v->allFinite()) return false;
  const Q tol = tolerance;
  auto max_abs = [](const auto& v) {
    Q r = 0;
    for (Eigen::Index i = 0; i < v.size(); ++i) r = std::max(r, Q(std::abs(v(i))));
    return r;
  };
  const Q p_max = max_abs(d.P.reshaped());
  const Q j_max = std::max(max_abs(d.J_n.reshaped()), max_abs(d.J_t.reshaped()));
  const Q c_max = std::max(max_abs(m.c_n), max_abs(m.c_t));
  // The loads d = [0; g_obj; (g_man - tau)_abar], exactly.
  std::vector<char> in_alpha(static_cast<size_t>(nt), 0);
  for (int j : u.alpha()) in_alpha[static_cast<size_t>(j)] = 1;
  Q d_max = max_abs(d.g_obj);
  for (int j = 0; j < nt; ++j)
    if (!in_alpha[static_cast<size_t>(j)]) d_max = std::max(d_max, qabs(Q(d.g_man[j]) - Q(d.tau[j])));
  const Q sF = std::max({d_max, Q(p_max * c_max), Q(j_max * c_max)});
  // J_alpha theta_alpha (2 n_c).
  std::vector<Q> jv(static_cast<size_t>(2 * nc), 0);
  for (int i = 0; i < nc; ++i)
    for (int j = 0; j < nt; ++j)
      if (in_alpha[static_cast<size_t>(j)]) {
        jv[static_cast<size_t>(i)] += Q(d.J_n(i, j)) * Q(d.theta_dot[j]);
        jv[static_cast<size_t>(nc + i)] += Q(d.J_t(i, j)) * Q(d.theta_dot[j]);
      }
  Q jv_max = 0;
  for (const Q& v : jv) jv_max = std::max(jv_max, qabs(v));
  const Q sV = std::max({jv_max, Q(p_max * max_abs(m.q_dot)), Q(j_max * max_abs(m.theta_dot)), max_abs(m.v_n),
                         max_abs(m.v_t)});
  // (2) W c + g_obj = 0, W' = P's first n_q columns, c = [c_n; c_t].
  for (int k = 0; k < nq; ++k) {
    Q r = d.g_obj[k];
    for (int i = 0; i < nc; ++i) r += Q(d.P(i, k)) * Q(m.c_n[i]) + Q(d.P(nc + i, k)) * Q(m.c_t[i]);
    if (!within(qabs(r), sF, tol)) return false;
  }
  // (3) J_n' c_n + J_t' c_t + g_man - tau = 0 on every joint.
  for (int j = 0; j < nt; ++j) {
    Q r = Q(d.g_man[j]) - Q(m.tau[j]);
    for (int i = 0; i < nc; ++i) r += Q(d.J_n(i, j)) * Q(m.c_n[i]) + Q(d.J_t(i, j)) * Q(m.c_t[i]);
    if (!within(qabs(r), sF, tol)) return false;
  }
  for (int i = 0; i < nc; ++i) {
    // (4), (5) v = W' q_dot - J theta_dot.
    Q vn = 0, vt = 0;
    for (int k = 0; k < nq; ++k) {
      vn += Q(d.P(i, k)) * Q(m.q_dot[k]);
      vt += Q(d.P(nc + i, k)) * Q(m.q_dot[k]);
    }
    for (int j = 0; j < nt; ++j) {
      vn -= Q(d.J_n(i, j)) * Q(m.theta_dot[j]);
      vt -= Q(d.J_t(i, j)) * Q(m.theta_dot[j]);
    }
    if (!within(qabs(Q(m.v_n[i]) - vn), sV, tol) || !within(qabs(Q(m.v_t[i]) - vt), sV, tol)) return false;
    const Q cn = m.c_n[i], ct = m.c_t[i], mu = d.mu[i], v_n = m.v_n[i], v_t = m.v_t[i];
    if (!within(std::max(Q(0), Q(-v_n)), sV, tol)) return false;                                  // (6)
    if (!within(std::max({Q(0), Q(qabs(ct) - mu * cn), Q(-cn)}), sF, tol)) return false;          // (7)
    if (!within(qabs(cn), sF, tol) && !within(qabs(v_n), sV, tol)) return false;                  // (8)-(9)
    if (!within(std::max(Q(0), v_t), sV, tol) && !within(qabs(ct + mu * cn), sF, tol)) return false;  // (10)
    if (!within(std::max(Q(0), Q(-v_t)), sV, tol) && !within(qabs(ct - mu * cn), sF, tol)) return false;
  }
  return true;
}

/// v == 2^k w entry by entry, bit for bit.
bool scaled_bitwise(const Eigen::VectorXd& v, const Eigen::VectorXd& w, int k) {
  if (v.size() != w.size()) return false;
  for (Eigen::Index i = 0; i < v.size(); ++i)
    if (!(v[i] == std::ldexp(w[i], k))) return false;
  return true;
}

struct Run {
  qs::Status exact = qs::Status::not_run, bilinear = qs::Status::not_run, all = qs::Status::not_run;
  Eigen::VectorXd ex, ey, bx, by;
  std::vector<qs::UcpModeSolution> modes;
  bool verified_solution = false;  // some method's answer passed the exact check
};

/// Every method on d; aborts on a `solved` answer that fails the exact check.
Run solve(const qs::UcpData& d, const qs::Ucp& u) {
  // The methods' own check tolerance, doubled: the double-precision check's rounding on
  // residuals of order 1e-16 of their scale must not turn a right answer into an abort.
  const double tol = 2 * qs::kUcpEnumerationCheckTolerance;
  Run r;
  qs::UcpMotion m = u.make_motion();
  // A pair some method calls a solution: its motion must pass the exact check.
  const auto verify = [&](const Eigen::VectorXd& x, const Eigen::VectorXd& y) {
    u.recover(x, y, m);
    if (!exactly_checked(d, u, m, tol)) std::abort();  // a wrong `solved`
    r.verified_solution = true;
  };
  qs::UcpExactOptions eo;
  eo.parallel = false;
  eo.max_nodes = 2000;
  qs::UcpExact exact(u, eo);
  r.exact = exact.solve().status;
  if (r.exact == qs::Status::solved) {
    r.ex = exact.result().x;
    r.ey = exact.result().y;
    verify(r.ex, r.ey);
  }
  qs::UcpBilinear bilinear(u);
  r.bilinear = bilinear.solve().status;
  if (r.bilinear == qs::Status::solved) {
    r.bx = bilinear.result().x;
    r.by = bilinear.result().y;
    verify(r.bx, r.by);
  }
  const qs::UcpEnumerationResult e = qs::ucp_enumerate_modes(u, 20000);
  r.all = e.status;
  r.modes = e.solutions;
  for (const qs::UcpModeSolution& s : e.solutions) verify(s.x, s.y);
  // No false `infeasible`: a verified solution contradicts every proof of none.
  const bool enumeration_empty = e.status == qs::Status::solved && e.solutions.empty();
  if (r.verified_solution &&
      (r.exact == qs::Status::infeasible || r.bilinear == qs::Status::infeasible || enumeration_empty))
    std::abort();
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 6) return 0;
  const int nc = 1 + data[0] % 4;
  const int nq = 1 + data[1] % 3;
  const int nt = 1 + data[2] % (2 * nc);
  const unsigned alpha_bits = data[3];
  const int k = static_cast<int>(data[4] % 81) - 40;
  const int side = data[5] % 3;  // 0: loads and velocities, 1: loads only, 2: velocities only
  std::size_t at = 6;
  auto next = [&]() { return at < size ? static_cast<double>(static_cast<int8_t>(data[at++])) / 16.0 : 0.0; };
  qs::UcpData d;
  d.J_n.resize(nc, nt);
  d.J_t.resize(nc, nt);
  for (int j = 0; j < nt; ++j)
    for (int i = 0; i < nc; ++i) d.J_n(i, j) = next();
  for (int j = 0; j < nt; ++j)
    for (int i = 0; i < nc; ++i) d.J_t(i, j) = next();
  std::vector<int> alpha, abar;
  for (int j = 0; j < nt; ++j) ((alpha_bits >> j) & 1u ? alpha : abar).push_back(j);
  d.alpha = alpha;
  // P = [W' J_abar] (Pang, Trinkle & Lo 1996, sec. 2): W' free, J_abar the effort joints' columns.
  d.P.resize(2 * nc, nq + static_cast<Eigen::Index>(abar.size()));
  for (int c = 0; c < nq; ++c)
    for (int i = 0; i < 2 * nc; ++i) d.P(i, c) = next();
  for (size_t a = 0; a < abar.size(); ++a) {
    d.P.col(nq + static_cast<Eigen::Index>(a)).head(nc) = d.J_n.col(abar[a]);
    d.P.col(nq + static_cast<Eigen::Index>(a)).tail(nc) = d.J_t.col(abar[a]);
  }
  d.theta_dot.resize(nt);
  for (int j = 0; j < nt; ++j) d.theta_dot[j] = next();
  d.mu.resize(nc);
  for (int i = 0; i < nc; ++i) d.mu[i] = std::abs(next()) / 16.0 * 2;  // a multiple of 1/128 in [0, 1]
  d.g_obj.resize(nq);
  for (int c = 0; c < nq; ++c) d.g_obj[c] = next();
  d.g_man.resize(nt);
  d.tau.resize(nt);
  for (int j = 0; j < nt; ++j) d.g_man[j] = next();
  for (int j = 0; j < nt; ++j) d.tau[j] = next();

  qs::Ucp u;
  if (u.build(d) != qs::Status::solved) return 0;  // malformed data is the reader's concern
  const Run a = solve(d, u);

  const int ky = side != 2 ? k : 0, kx = side != 1 ? k : 0;
  qs::UcpData s = d;
  s.g_obj *= std::ldexp(1.0, ky);
  s.g_man *= std::ldexp(1.0, ky);
  s.tau *= std::ldexp(1.0, ky);
  s.theta_dot *= std::ldexp(1.0, kx);
  qs::Ucp us;
  if (us.build(s) != qs::Status::solved) std::abort();  // the same problem in other units
  const Run b = solve(s, us);
  // The same LPs bit for bit: the same verdicts, and the answers scaled exactly.
  if (a.exact != b.exact || a.bilinear != b.bilinear || a.all != b.all || a.modes.size() != b.modes.size())
    std::abort();
  if (a.exact == qs::Status::solved && !(scaled_bitwise(b.ex, a.ex, kx) && scaled_bitwise(b.ey, a.ey, ky)))
    std::abort();
  if (a.bilinear == qs::Status::solved && !(scaled_bitwise(b.bx, a.bx, kx) && scaled_bitwise(b.by, a.by, ky)))
    std::abort();
  for (size_t i = 0; i < a.modes.size(); ++i)
    if (a.modes[i].modes != b.modes[i].modes || !scaled_bitwise(b.modes[i].x, a.modes[i].x, kx) ||
        !scaled_bitwise(b.modes[i].y, a.modes[i].y, ky))
      std::abort();
  return 0;
}

// The quasi-dynamic Anitescu step (Pang & Tedrake's Anitescu slides, docs/anitescu.md) written once on a scalar type
// T: T = double is AnitescuQp's primary solver (core/formulations/anitescu_qp/anitescu_qp.cpp), T = Lane (quasistep/kernels/lane.hpp)
// steps a lane group of worlds in the batch engine. Same operations in the same order per
// world (only + - * / sqrt, select/min/max/abs; sin/cos/atan2 through quasistep/kernels/lane.hpp,
// -ffp-contract=off), so a world's step is bitwise the same alone or in any lane.
//
// Fixed slot layout (not the scalar path's active-contact compaction): rows 2i (+t) and
// 2i + 1 (-t) belong to slot i of the Model, so every lane poses a problem of one shape. An
// inactive slot (phi > contacts.margin, per lane) gets a zero row pair and LCP q = +1, which
// quasistep/kernels/pgs.hpp's zero-row rule answers with beta = 0.
//
// The step, with everything from the Model (stiffness, schedules at t + h/2, masses unless the
// batch varies them per lane) in double broadcast to T:
//   tau, tau_g,a at t + h/2;  q̄_a' = q̄_a + h u;  Q = diag(M_u(q), h^2 K_a);
//   c = -h [tau_u ; K_a (q̄_a' - q_a) + tau_a - tau_g,a];  v_free = -Q^-1 c;
//   rows A_i1,2 = J_n,i ± mu_i J_t,i,  b = -phi / h;
//   dual LCP  0 <= beta _|_ (A Q^-1 A') beta + (A v_free - b) >= 0   (projected Gauss-Seidel,
//   warm-started from the previous step's beta on the rows still active: State::memory,
//   a row per world in the batch);
//   v' = v_free + Q^-1 A' beta,  q^+ = q + h v'.
// Per lane the step is accepted (ok) when the mass matrix is nonsingular, at most
// kMaxActiveContacts slots are active, PGS reports solved and the QP's scaled KKT residual
// (the definition of quasistep/kernels/dense_qp.hpp's qp_kkt_residual, restricted to the active rows)
// is <= kKktTolerance. A lane that is not ok is finished by the scalar fallback
// (AnitescuQp::step_fallback: Lemke, then the dense QP), whichever path the world came from.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/kinematics.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/kernels/pgs.hpp"

namespace qs {

inline constexpr int kAnitescuMaxActiveContacts = 32;
inline constexpr double kAnitescuKktTolerance = 1e-9;
/// A Cholesky pivot of the mass matrix M_u must exceed this fraction of its own diagonal
/// entry M_kk, or M_u is singular there (the step is refused as bad_input).
inline constexpr double kAnitescuMassPivotTolerance = 1e-12;

/// PGS settings of the quasi-dynamic step (docs/anitescu.md, "Solver"). Plain Gauss-Seidel to
/// 1e-10 on PGS's scaled natural residual: the examples' worst KKT residual is then 1.4e-11,
/// 70x inside kAnitescuKktTolerance (1e-8 already lets grasp steps fail the KKT check). 500
/// sweeps: the examples need 20-35 on average, 76 at most but for two drop steps that
/// stagnate (one still fails at 10^4 sweeps); those go to the fallback instead of holding
/// their lane group for thousands of sweeps.
inline PgsSettings anitescu_pgs_settings() {
  PgsSettings s;
  s.omega = 1.0;
  s.max_iterations = 500;
  s.tolerance = 1e-10;
  s.check_every = 4;
  s.pair_blocks = true;  // rows 2i, 2i + 1 are slot i's +t and -t rows
  return s;
}

/// The Anitescu step's problem data for one world (T = double), a lane group (T = Lane), or
/// with derivatives along a configuration direction (T = Jet, quasistep/core/jet.hpp): what
/// anitescu_pose_problem fills.
template <class T>
struct AnitescuProblem {
  int nq = 0, nu = 0, na = 0, ns = 0, rows = 0;
  std::vector<Pose2<T>> body_pose, joint_frame;
  std::vector<ContactFrame<T>> frame;  // (ns)
  std::vector<T> jn, jt;               // (ns x nq) row-major
  std::vector<T> tau, tau_grav, c, jx, jy, jw;  // (nq)
  std::vector<T> qbar;                 // (na)
  std::vector<T> Mu;                   // (nu x nu)
  std::vector<T> A, b;                 // (rows x nq), (rows)
  std::vector<T> active;               // (ns) 1 where the slot is active, else 0
  T n_active{};                        // active slots
  std::vector<char> unposed;           // (ns) T = Jet: slots the caller does not read (not posed)

  explicit AnitescuProblem(const Model& m)
      : nq(m.n_q()),
        nu(m.n_u),
        na(m.n_a),
        ns(m.n_slots()),
        rows(2 * m.n_slots()),
        body_pose(m.bodies.size()),
        joint_frame(m.joints.size()),
        frame(static_cast<std::size_t>(ns)),
        jn(sz(ns * nq)),
        jt(sz(ns * nq)),
        tau(sz(nq)),
        tau_grav(sz(nq)),
        c(sz(nq)),
        jx(sz(nq)),
        jy(sz(nq)),
        jw(sz(nq)),
        qbar(sz(na)),
        Mu(sz(nu * nu)),
        A(sz(rows * nq)),
        b(sz(rows)),
        active(sz(ns)),
        unposed(sz(ns), 0) {}

 protected:
  static std::size_t sz(int n) { return static_cast<std::size_t>(std::max(n, 1)); }
};

template <class T>
struct AnitescuStepWorkspace : AnitescuProblem<T> {
  using MaskT = decltype(std::declval<const T&>() < std::declval<const T&>());
  using AnitescuProblem<T>::sz;
  std::vector<T> v_free, v, q_out;     // (nq)
  std::vector<T> L;                    // (nu x nu)
  std::vector<T> Qinv;                 // (nq x nq)
  std::vector<T> QinvAt;               // (nq x rows)
  std::vector<T> M, q_lcp, z;          // (rows x rows), (rows), (rows)
  Pgs<T> pgs;
  PgsResult<T> pgs_result;
  // Per lane outcome of the last step.
  T kkt{};           // scaled KKT residual of the accepted answer (+inf where not computed)
  MaskT singular{};  // M_u not positive definite
  MaskT ok{};        // accepted: q_out and qbar are the step

  explicit AnitescuStepWorkspace(const Model& m)
      : AnitescuProblem<T>(m),
        v_free(sz(this->nq)),
        v(sz(this->nq)),
        q_out(sz(this->nq)),
        L(sz(this->nu * this->nu)),
        Qinv(sz(this->nq * this->nq)),
        QinvAt(sz(this->nq * this->rows)),
        M(sz(this->rows * this->rows)),
        q_lcp(sz(this->rows)),
        z(sz(this->rows)),
        pgs(this->rows) {}
};

namespace anitescu_detail {

/// The bodies' masses of a step: each lane's own (`lanes`, one T per body, when the batch
/// varies a mass per world) or p's. A body is massless, and skipped as the scalar step skips
/// it, when its mass is zero in every lane; the batch never mixes zero and nonzero masses of
/// a body in one lane group (it steps such a group one world at a time).
template <class T>
struct BodyMasses {
  const WorldParams& p;
  const T* lanes;
  T of(std::size_t b) const { return lanes ? lanes[b] : T(p.body_mass[b]); }
  bool massless(std::size_t b) const {
    if constexpr (std::is_same_v<T, double>) {
      return (lanes ? lanes[b] : p.body_mass[b]) == 0.0;
    } else {
      return lanes ? all(lanes[b] == T(0.0)) : p.body_mass[b] == 0.0;
    }
  }
};

/// generalized_external_force (core/kinematics.cpp) on T: gravity, loads and efforts at time t.
/// A load's |f| = 0 is a per-lane select (for a body-frame force it depends on the pose).
template <class T>
void external_force(const Model& m, const BodyMasses<T>& masses, const Pose2<T>* body_pose,
                    const Pose2<T>* joint_frame, double t, T* out) {
  for (int k = 0; k < m.n_q(); ++k) out[k] = T(0.0);
  for (size_t b = 0; b < m.bodies.size(); ++b) {
    const Body& body = m.bodies[b];
    if (body.kind == BodyKind::fixed || masses.massless(b)) continue;
    const Vec2<T> com = body_pose[b].apply(Vec2<T>{T(body.com.x), T(body.com.y)});
    // m g as one product in double (the scalar path's bits) or per lane.
    add_point_jacobian(m, static_cast<int>(b), com, Vec2<T>{T(0.0), T(-1.0)}, masses.of(b) * T(m.world.gravity),
                       body_pose, joint_frame, out);
  }
  for (const Load& load : m.loads) {
    const Pose2<T>& pose = body_pose[load.body];
    Vec2<T> f{T(load.force[0](t)), T(load.force[1](t))};
    if (load.body_frame) f = pose.rotate(f);
    const T fn = norm(f);
    const auto pos = fn > T(0.0);
    const T safe = select(pos, fn, T(1.0));
    add_point_jacobian(m, load.body, pose.apply(Vec2<T>{T(load.point.x), T(load.point.y)}),
                       Vec2<T>{f.x / safe, f.y / safe}, select(pos, fn, T(0.0)), body_pose, joint_frame, out);
    const double torque = load.torque(t);
    if (torque != 0.0) add_angular_jacobian(m, load.body, T(torque), out);
  }
  for (const Joint& j : m.joints)
    if (j.control == Control::effort) out[j.dof] = out[j.dof] + T(j.command(t));
}

}  // namespace anitescu_detail

/// The step's problem of every lane of T from (q, q_a_ref = q̄_a) at time t (the same for
/// every lane): kinematics, contact frames and Jacobian rows, tau and tau_g,a at t + h/2, the
/// new reference q̄_a' = q̄_a + h u, M_u(q), c, and the Anitescu rows A v >= b in the fixed
/// slot layout (zero rows where a slot is inactive). The values every lane shares (h, poses,
/// and the masses, sizes and K_a without body_mass, body_scale and joint_gain) come from p.
/// mu_pair: per-pair friction (n_pairs values of T: p.pair_friction.data() for one world).
/// u: the velocity command of each actuated DOF (n_a values of T), or null for p's
/// (WorldParams::velocity at t + h/2). body_mass, body_scale: each body's mass and size
/// factor per lane (bodies.size() values of T), joint_gain each velocity-controlled joint's
/// K_a per lane (n_a values), where the batch varies them per world, or null for p's. At
/// T = Jet with q's derivative directions set, everything it fills carries its exact
/// derivative along them (the step's derivatives, quasistep/core/derivatives.hpp).
template <class T>
void anitescu_pose_problem(const Model& m, const WorldParams& p, AnitescuProblem<T>& ws, const T* q,
                           const T* q_a_ref, const T* mu_pair, const T* u, double t, const T* body_mass = nullptr,
                           const T* body_scale = nullptr, const T* joint_gain = nullptr) {
  using MaskT = decltype(std::declval<const T&>() < std::declval<const T&>());
  const anitescu_detail::BodyMasses<T> masses{p, body_mass};
  const auto gain = [&](int a) { return joint_gain ? joint_gain[a] : T(p.joint_gain[a]); };
  const int n = ws.nq, nu = ws.nu, na = ws.na, ns = ws.ns;
  const double h = p.h, t_mid = t + 0.5 * h;
  const T zero(0.0), one(1.0), hT(h);

  // At T = Jet (the step's derivatives, which read the rows of its active set alone) the
  // slots the caller marks ws.unposed are skipped: their frames, Jacobian rows and Anitescu
  // rows are not formed (nor their ws.active).
  const auto skipped = [&](int i) {
    if constexpr (carries_derivatives<T>) {
      return ws.unposed[i] != 0;
    } else {
      return false;
    }
  };

  // 1-2: kinematics, contact frames and Jacobian rows at the start of the step.
  forward_kinematics(m, p, q, ws.body_pose.data(), ws.joint_frame.data());
  for (int i = 0; i < ns; ++i) {
    if (skipped(i)) continue;
    ws.frame[i] = body_scale ? contact_frame(m, i, ws.body_pose.data(), body_scale)
                             : contact_frame(m, i, ws.body_pose.data(), p.scales());
    contact_jacobian_rows(m, i, ws.frame[i], ws.body_pose.data(), ws.joint_frame.data(), &ws.jn[i * n],
                          &ws.jt[i * n]);
  }

  // Inputs at t + h/2: tau, and the robots' own gravity their controllers cancel (Pang & Tedrake's Anitescu slides
  // slide "Specializing to robotic manipulation": tau_a = K_a (q̄_a' - (q_a + h v_a')) - tau_g).
  anitescu_detail::external_force(m, masses, ws.body_pose.data(), ws.joint_frame.data(), t_mid, ws.tau.data());
  for (int e = 0; e < n; ++e) ws.tau_grav[e] = zero;
  for (size_t bi = 0; bi < m.bodies.size(); ++bi) {
    const Body& body = m.bodies[bi];
    if (body.kind != BodyKind::linked || masses.massless(bi)) continue;
    add_point_jacobian(m, static_cast<int>(bi), ws.body_pose[bi].apply(Vec2<T>{T(body.com.x), T(body.com.y)}),
                       Vec2<T>{zero, T(-1.0)}, masses.of(bi) * T(m.world.gravity), ws.body_pose.data(),
                       ws.joint_frame.data(), ws.tau_grav.data());
  }
  // q̄_a' = q̄_a + h u(t + h/2).
  for (const Joint& j : m.joints)
    if (j.control == Control::velocity) {
      const int a = j.dof - nu;
      ws.qbar[a] = q_a_ref[a] + hT * (u ? u[a] : T(p.velocity(m, j, t_mid)));
    }

  // Q_u = M_u(q) (Pang & Tedrake's Anitescu slides slide "take 2"): sum_b m_b J_c' J_c + I_b J_w' J_w, unactuated block.
  for (int k = 0; k < nu * nu; ++k) ws.Mu[k] = zero;
  for (size_t bi = 0; bi < m.bodies.size(); ++bi) {
    const Body& body = m.bodies[bi];
    if (body.kind == BodyKind::fixed) continue;
    const double inertia = body.inertia.value_or(0.0);
    if (masses.massless(bi) && inertia == 0.0) continue;
    for (int e = 0; e < n; ++e) ws.jx[e] = ws.jy[e] = ws.jw[e] = zero;
    const Vec2<T> com = ws.body_pose[bi].apply(Vec2<T>{T(body.com.x), T(body.com.y)});
    visit_point_jacobian(m, static_cast<int>(bi), com, ws.body_pose.data(), ws.joint_frame.data(),
                         [&](int dof, const Vec2<T>& col) {
                           ws.jx[dof] = ws.jx[dof] + col.x;
                           ws.jy[dof] = ws.jy[dof] + col.y;
                         });
    add_angular_jacobian(m, static_cast<int>(bi), one, ws.jw.data());
    const T mass = masses.of(bi), I(inertia);
    for (int i = 0; i < nu; ++i)
      for (int j = 0; j < nu; ++j)
        ws.Mu[i * nu + j] =
            ws.Mu[i * nu + j] + (mass * (ws.jx[i] * ws.jx[j] + ws.jy[i] * ws.jy[j]) + I * ws.jw[i] * ws.jw[j]);
  }

  // c = -h [tau_u ; K_a (q̄_a' - q_a) + tau_a - tau_g,a] (signs derived in docs/anitescu.md).
  for (int e = 0; e < nu; ++e) ws.c[e] = T(-h) * ws.tau[e];
  for (int a = 0; a < na; ++a)
    ws.c[nu + a] = T(-h) * (gain(a) * (ws.qbar[a] - q[nu + a]) + ws.tau[nu + a] - ws.tau_grav[nu + a]);

  // Anitescu rows (Pang & Tedrake's Anitescu slides slide "Modeling Coulomb friction as a convex program"), fixed
  // layout: A_2i = J_n + mu J_t, A_2i+1 = J_n - mu J_t, zero where the slot is inactive.
  T n_active = zero;
  const T margin(m.contact_margin);
  for (int i = 0; i < ns; ++i) {
    if (skipped(i)) continue;
    const int pair = m.slots[i].pair;
    const T mu = mu_pair[pair];
    const MaskT act = ws.frame[i].phi <= margin;
    ws.active[i] = select(act, one, zero);
    n_active = n_active + ws.active[i];
    for (int e = 0; e < n; ++e) {
      const T jn = ws.jn[i * n + e], jt = ws.jt[i * n + e];
      ws.A[(2 * i) * n + e] = select(act, jn + mu * jt, zero);
      ws.A[(2 * i + 1) * n + e] = select(act, jn - mu * jt, zero);
    }
    ws.b[2 * i] = ws.b[2 * i + 1] = -ws.frame[i].phi / hT;
  }
  ws.n_active = n_active;
}

/// One quasi-dynamic step of p.h of every lane of T from (q, q_a_ref = q̄_a) at time t: the
/// problem (anitescu_pose_problem, whose arguments it takes), then its solution. z_warm: the
/// previous step's beta (2 per slot), or null for a cold start. Results in ws: ok, q_out
/// (n_q), qbar (the new reference q̄_a), v, z (beta, 2 per slot), pgs_result, kkt, active.
/// The caller stores only the lanes it wants (ok ones).
template <class T>
void anitescu_quasi_dynamic_step(const Model& m, const WorldParams& p, AnitescuStepWorkspace<T>& ws, const T* q,
                                 const T* q_a_ref, const T* mu_pair, const T* u, const T* z_warm, double t,
                                 const PgsSettings& settings, const T* body_mass = nullptr,
                                 const T* body_scale = nullptr, const T* joint_gain = nullptr) {
  using MaskT = typename AnitescuStepWorkspace<T>::MaskT;
  anitescu_pose_problem<T>(m, p, ws, q, q_a_ref, mu_pair, u, t, body_mass, body_scale, joint_gain);
  const auto gain = [&](int a) { return joint_gain ? joint_gain[a] : T(p.joint_gain[a]); };
  const int n = ws.nq, nu = ws.nu, na = ws.na, rows = ws.rows;
  const double h = p.h;
  const T zero(0.0), one(1.0), hT(h);

  // Cholesky M_u = L L' per lane; a lane whose pivot is not > kAnitescuMassPivotTolerance times its
  // own diagonal entry M_kk is singular (the same test as AnitescuQp::mass_matrix, free of
  // units: pivot and M_kk scale alike; its pivot replaced by 1 so the other lanes'
  // arithmetic stays finite).
  MaskT singular = zero != zero;
  for (int k = 0; k < nu * nu; ++k) ws.L[k] = ws.Mu[k];
  for (int k = 0; k < nu; ++k) {
    T d = ws.L[k * nu + k];
    for (int p = 0; p < k; ++p) d = d - ws.L[k * nu + p] * ws.L[k * nu + p];
    const MaskT bad = !(d > T(kAnitescuMassPivotTolerance) * ws.Mu[k * nu + k]);
    singular = singular || bad;
    d = sqrt(select(bad, one, d));
    ws.L[k * nu + k] = d;
    for (int i = k + 1; i < nu; ++i) {
      T s = ws.L[i * nu + k];
      for (int p = 0; p < k; ++p) s = s - ws.L[i * nu + p] * ws.L[k * nu + p];
      ws.L[i * nu + k] = s / d;
    }
  }
  // Q^-1 = diag(M_u^-1, 1 / (h^2 K_a)): columns of M_u^-1 by forward and back substitution.
  for (int k = 0; k < n * n; ++k) ws.Qinv[k] = zero;
  T* Qi = ws.Qinv.data();
  for (int col = 0; col < nu; ++col) {
    for (int i = 0; i < nu; ++i) {
      T s = i == col ? one : zero;
      for (int p = 0; p < i; ++p) s = s - ws.L[i * nu + p] * Qi[p * n + col];
      Qi[i * n + col] = s / ws.L[i * nu + i];
    }
    for (int i = nu - 1; i >= 0; --i) {
      T s = Qi[i * n + col];
      for (int p = i + 1; p < nu; ++p) s = s - ws.L[p * nu + i] * Qi[p * n + col];
      Qi[i * n + col] = s / ws.L[i * nu + i];
    }
  }
  for (int i = 0; i < nu; ++i)
    for (int j = 0; j < i; ++j) Qi[i * n + j] = Qi[j * n + i] = T(0.5) * (Qi[i * n + j] + Qi[j * n + i]);
  for (int a = 0; a < na; ++a) Qi[(nu + a) * n + nu + a] = T(1.0) / (T(h * h) * gain(a));
  // v_free = -Q^-1 c.
  for (int i = 0; i < n; ++i) {
    T s = zero;
    for (int j = 0; j < n; ++j) s = s - Qi[i * n + j] * ws.c[j];
    ws.v_free[i] = s;
  }

  // The dual LCP (anitescu_dual_lcp's loops): Q^-1 A', M = A Q^-1 A' (filled symmetric),
  // q = A v_free - b, and q = +1 on inactive rows.
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < n; ++i) {
      T s = zero;
      for (int j = 0; j < n; ++j) s = s + Qi[i * n + j] * ws.A[r * n + j];
      ws.QinvAt[i * rows + r] = s;
    }
  for (int s = 0; s < rows; ++s)
    for (int r = s; r < rows; ++r) {
      T v = zero;
      for (int i = 0; i < n; ++i) v = v + ws.A[r * n + i] * ws.QinvAt[i * rows + s];
      ws.M[r * rows + s] = v;
      ws.M[s * rows + r] = v;
    }
  for (int r = 0; r < rows; ++r) {
    T v = -ws.b[r];
    for (int i = 0; i < n; ++i) v = v + ws.A[r * n + i] * ws.v_free[i];
    ws.q_lcp[r] = select(ws.active[r / 2] > zero, v, one);
    // Warm start from the previous step's beta where the slot is active (State::memory).
    ws.z[r] = z_warm ? select(ws.active[r / 2] > zero, z_warm[r], zero) : zero;
  }
  ws.pgs.solve(rows, std::span<const T>(ws.M.data(), static_cast<std::size_t>(rows * rows)),
               std::span<const T>(ws.q_lcp.data(), static_cast<std::size_t>(rows)),
               std::span<T>(ws.z.data(), static_cast<std::size_t>(rows)), settings, ws.pgs_result);

  // v' = v_free + Q^-1 A' beta, q^+ = q + h v'.
  for (int i = 0; i < n; ++i) {
    T v = ws.v_free[i];
    for (int k = 0; k < rows; ++k) v = v + ws.QinvAt[i * rows + k] * ws.z[k];
    ws.v[i] = v;
    ws.q_out[i] = q[i] + hT * ws.v[i];
  }

  // The QP's scaled KKT residual (qp_kkt_residual's definition; H = Q, c, active rows
  // A v >= b, multipliers z), the acceptance test of the step.
  T max_a = zero, max_b = zero, max_x = zero, max_c = zero, max_h = zero, max_z = zero;
  for (int r = 0; r < rows; ++r) {
    const MaskT act = ws.active[r / 2] > zero;
    for (int e = 0; e < n; ++e) max_a = max(max_a, select(act, abs(ws.A[r * n + e]), zero));
    max_b = max(max_b, select(act, abs(ws.b[r]), zero));
    max_z = max(max_z, select(act, abs(ws.z[r]), zero));
  }
  for (int e = 0; e < n; ++e) {
    max_x = max(max_x, abs(ws.v[e]));
    max_c = max(max_c, abs(ws.c[e]));
  }
  // H = diag(M_u, h^2 K_a).
  for (int k = 0; k < nu * nu; ++k) max_h = max(max_h, abs(ws.Mu[k]));
  for (int a = 0; a < na; ++a) max_h = max(max_h, T(h * h) * gain(a));
  const T s_p = one + max_b + (one + max_a) * max_x;
  const T s_d = one + max_c + max_h * max_x + max_a * max_z;
  T primal = zero, stat = zero, sign = zero, comp = zero;
  for (int r = 0; r < rows; ++r) {
    const MaskT act = ws.active[r / 2] > zero;
    T sc = one + abs(ws.b[r]);
    T res = -ws.b[r];
    for (int e = 0; e < n; ++e) {
      res = res + ws.A[r * n + e] * ws.v[e];
      sc = sc + abs(ws.A[r * n + e] * ws.v[e]);
    }
    primal = max(primal, select(act, -res / sc, zero));
    sign = max(sign, select(act, -ws.z[r], zero));
    comp = max(comp, select(act && ws.z[r] != zero, abs(ws.z[r] * res), zero));
  }
  for (int j = 0; j < n; ++j) {
    T r = ws.c[j];
    for (int k = 0; k < n; ++k) {
      const T hjk = j < nu && k < nu ? ws.Mu[j * nu + k] : j == k ? T(h * h) * gain(j - nu) : zero;
      r = r + hjk * ws.v[k];
    }
    for (int i = 0; i < rows; ++i) r = r - ws.A[i * n + j] * ws.z[i];
    stat = max(stat, abs(r));
  }
  ws.kkt = max(max(primal, stat / s_d), max(sign / s_d, comp / (s_p * s_d)));
  ws.singular = singular;

  MaskT solved = zero != zero;
  for (int l = 0; l < lanes_of<T>; ++l) {
    if (ws.pgs_result.status[l] != Status::solved) continue;
    if constexpr (std::is_same_v<MaskT, bool>) {
      solved = true;
    } else {
      solved.set(l, true);
    }
  }
  ws.ok = solved && !singular && ws.n_active <= T(kAnitescuMaxActiveContacts) && ws.kkt <= T(kAnitescuKktTolerance);
}

}  // namespace qs

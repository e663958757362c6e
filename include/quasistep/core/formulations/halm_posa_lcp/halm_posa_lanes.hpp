// The Halm-Posa (and perfect-velocity) time step of quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp written once on a
// scalar type T: T = double is HalmPosaLcp's primary solver (what `quasistep run` steps with),
// T = Lane (quasistep/kernels/lane.hpp) steps a lane group of worlds in the batch engine. Same operations
// in the same order per world (only + - * /, select/min/max/abs; sin/cos through the pose of
// quasistep/core/kinematics.hpp; -ffp-contract=off), so a world's step is bitwise the same alone or in
// any lane.
//
// Fixed slot layout (not HalmPosaLcp's active-contact compaction): the LCP has 4 ns rows,
// [Lambda_N | Lambda_T+ | Lambda_T- | gamma] with one row of each block per slot of the Model
// (Halm & Posa 2018, eqs. (17), (35)-(38), as in halm_posa_lcp.hpp's file comment). An inactive slot
// (phi > contacts.margin, per lane) gets zero Jacobian rows, zero rows and columns in M and
// q = +1, and its four rows are excluded from quasistep/kernels/lemke_lanes.hpp's pivoting, so every
// lane poses a problem of one shape and each lane's answer is that of its active contacts.
// Applies when 4 ns <= kHalmPosaTemplateCapacity (halm_posa_template_applies); larger models
// step on the compacted scalar path only (the choice depends on the Model, never on a lane).
//
// Per lane the step is accepted (ok) when every linearisation's Lemke run is `solved` (its
// residual checked). A lane that is not ok is finished by HalmPosaLcp::step_fallback (the
// compacted problem: Lemke, the infeasibility certificate, the exact enumeration), from the
// unchanged state, whichever path the world came from.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp_params.hpp"
#include "quasistep/core/jet.hpp"
#include "quasistep/core/kinematics.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/kernels/lane.hpp"
#include "quasistep/kernels/lemke_lanes.hpp"

namespace qs {

inline constexpr int kHalmPosaTemplateCapacity = 64;  // LCP rows of the fixed layout: 4 per slot

/// The template step serves this Model (tabletop, one free object with x, y, theta, A set,
/// 4 n_slots <= kHalmPosaTemplateCapacity; h > 0 is the step pipeline's check). Otherwise HalmPosaLcp steps (or refuses)
/// on its scalar path.
inline bool halm_posa_template_applies(const Model& m) {
  if (m.formulation != Formulation::halm_posa_lcp && m.formulation != Formulation::perfect_velocity_lcp) return false;
  if (m.world.type != WorldType::tabletop || !formulation_params_or_default<HalmPosaParams>(m).limit_surface_A || m.n_u != 3)
    return false;
  if (4 * m.n_slots() > kHalmPosaTemplateCapacity) return false;
  int free_bodies = 0;
  for (const Body& b : m.bodies)
    if (b.kind == BodyKind::free) {
      ++free_bodies;
      if (b.dof[0] < 0 || b.dof[1] < 0 || b.dof[2] < 0) return false;
    }
  if (free_bodies != 1) return false;
  for (const Joint& j : m.joints)
    if (j.control != Control::velocity) return false;
  return true;
}

/// The Halm-Posa step's problem data for one world (T = double), a lane group (T = Lane), or
/// with derivatives along chosen directions (T = Jet, quasistep/core/jet.hpp): what
/// halm_posa_detail::pose_about and fill_lcp fill, and the answer z, w that finish_about reads.
template <class T>
struct HalmPosaProblem {
  using MaskT = decltype(std::declval<const T&>() < std::declval<const T&>());
  int nq = 0, nu = 0, na = 0, ns = 0, n = 0;
  int object = -1;
  int dof_o[3] = {-1, -1, -1};
  double lcp_unit = 1;                 // halm_posa_lcp_unit of the Model
  Eigen::Matrix3d A_body = Eigen::Matrix3d::Zero();  // Ã divided by lcp_unit (exact)
  std::vector<Pose2<T>> body_pose, joint_frame;
  std::vector<ContactFrame<T>> frame;  // (ns)
  std::vector<T> jn, jt;               // (ns x nq) row-major
  std::vector<T> Jo, Jm;               // (2 ns x 3), (2 ns x na) row-major: rows n_1..n_ns, t_1..t_ns
  std::vector<T> AJo, BJm;             // (3 x 2 ns), (na x 2 ns): A J_o', cB J_m'
  std::vector<T> cB, uh;               // (na x na), (na): c B and h u
  std::vector<T> q_lin, q_end;         // (nq)
  std::vector<T> M, q_lcp, z, w;       // (n x n) row-major, (n) each
  std::unique_ptr<MaskT[]> excluded;   // (n) rows of inactive slots
  std::unique_ptr<MaskT[]> active;     // (ns) of the last linearisation
  std::unique_ptr<MaskT[]> unreached;  // (ns) active but out of the step's reach: not in the LCP
  std::vector<T> gap, slide;           // (ns) linearised gap phi + J_n (q0 - q_lin) + J_n h u; J_t h u
  std::vector<char> unposed;           // (ns) T = Jet: slots the caller does not read (pose_about)
  MaskT reach_kept{};                  // every unreached slot's end gap >= 0 (checked)
  T n_active{};                        // active slots of the last linearisation
  T linearised_penetration{};          // min(0, most negative w of a normal row)

  explicit HalmPosaProblem(const Model& m)
      : nq(m.n_q()),
        nu(m.n_u),
        na(m.n_a),
        ns(m.n_slots()),
        n(4 * m.n_slots()),
        body_pose(m.bodies.size()),
        joint_frame(m.joints.size()),
        frame(static_cast<std::size_t>(ns)),
        jn(sz(ns * nq)),
        jt(sz(ns * nq)),
        Jo(sz(2 * ns * 3)),
        Jm(sz(2 * ns * na)),
        AJo(sz(3 * 2 * ns)),
        BJm(sz(na * 2 * ns)),
        cB(sz(na * na)),
        uh(sz(na)),
        q_lin(sz(nq)),
        q_end(sz(nq)),
        M(sz(n * n)),
        q_lcp(sz(n)),
        z(sz(n)),
        w(sz(n)),
        excluded(std::make_unique<MaskT[]>(sz(n))),
        active(std::make_unique<MaskT[]>(sz(ns))),
        unreached(std::make_unique<MaskT[]>(sz(ns))),
        gap(sz(ns)),
        slide(sz(ns)),
        unposed(sz(ns), 0) {
    for (std::size_t b = 0; b < m.bodies.size(); ++b)
      if (m.bodies[b].kind == BodyKind::free) object = static_cast<int>(b);
    if (object >= 0)
      for (int k = 0; k < 3; ++k) dof_o[k] = m.bodies[object].dof[k];
    const HalmPosaParams& hp = formulation_params_or_default<HalmPosaParams>(m);
    lcp_unit = halm_posa_lcp_unit(hp);
    if (hp.limit_surface_A) A_body = *hp.limit_surface_A / lcp_unit;
  }

 protected:
  static std::size_t sz(int k) { return static_cast<std::size_t>(std::max(k, 1)); }
};

template <class T>
struct HalmPosaStepWorkspace : HalmPosaProblem<T> {
  using MaskT = typename HalmPosaProblem<T>::MaskT;
  static constexpr int kLanes = lanes_of<T>;
  LemkeLanes<T> lemke;
  LemkeLanesResult<T> lemke_result;
  // Per lane outcome of the last step.
  MaskT ok{};                                 // accepted: q_end is the step
  std::array<Status, kLanes> status{};        // solved, or the first failing Lemke status
  std::array<int, kLanes> pivots{};           // summed over the linearisations
  std::array<double, kLanes> residual{};      // Lemke's residual of the last linearisation

  explicit HalmPosaStepWorkspace(const Model& m) : HalmPosaProblem<T>(m), lemke(this->n) {}
};

/// Slots out of the step's reach. An active slot whose linearised gap exceeds this many
/// times the largest displacement an active slot's rows ask for (|J_n h u| + |J_t h u| + its
/// overlap) is left out of the step's LCP (Halm & Posa 2018, eqs. (31)-(38)); its end gap
/// is checked after the solve. When that gap is >= 0 the LCP with the slot has the same
/// solution with the slot's Lambda = 0 (its gamma = |J_t dq| satisfies its rows), so
/// leaving it out changes nothing but the data's range: at h = 1e-11 s the rows of a
/// pushing finger are 1e-12 m while a slot inside the margin may be 1e-3 m open, and no
/// single scale of the data lets Lemke's residual judge both. 2^20: far beyond anything
/// the step moves, so at ordinary steps every slot inside the margin stays in.
inline constexpr double kHalmPosaUnreachable = 0x1p20;

namespace halm_posa_detail {

/// The geometry of one linearisation about q_lin of the step from q0 (HalmPosaLcp::solve_about
/// on the fixed layout): frames, Jacobian rows, each slot's linearised gap and slide, and
/// which slots are active and which out of the step's reach (ws.active, ws.unreached).
///
/// At T = Jet the slots the caller marks ws.unposed are skipped (neither posed nor judged):
/// the step's derivatives replay a linearisation whose LCP the step recorded, and set
/// ws.active and ws.unreached from that record, so a large model's derivatives pose its
/// contacts, not all its slots.
template <class T>
void pose_about(const Model& m, const WorldParams& p, HalmPosaProblem<T>& ws, const T* q0) {
  const int nq = ws.nq, nu = ws.nu, na = ws.na, ns = ws.ns;
  const T zero(0.0), one(1.0);
  const auto skipped = [&](int i) {
    if constexpr (carries_derivatives<T>) {
      return ws.unposed[i] != 0;
    } else {
      return false;
    }
  };
  bool any = !carries_derivatives<T>;  // a slot to pose (at T = Jet the kinematics serve nothing else)
  for (int i = 0; i < ns && !any; ++i) any = !skipped(i);
  if (any) forward_kinematics(m, p, ws.q_lin.data(), ws.body_pose.data(), ws.joint_frame.data());
  const T margin(m.contact_margin);
  T n_active = zero;
  for (int i = 0; i < ns; ++i) {
    if (skipped(i)) continue;
    ws.frame[i] = contact_frame(m, i, ws.body_pose.data(), p.scales());
    contact_jacobian_rows(m, i, ws.frame[i], ws.body_pose.data(), ws.joint_frame.data(), &ws.jn[i * nq],
                          &ws.jt[i * nq]);
    ws.active[i] = ws.frame[i].phi <= margin;
  }

  // The rows' data (Halm & Posa 2018, eq. (31), sec. 5 for the re-linearisation), and the slots out
  // of the step's reach (halm_posa_unreachable).
  T reach = zero;
  for (int i = 0; i < ns; ++i) {
    if (skipped(i)) continue;
    T jn_u = zero, jt_u = zero;  // J_m h u
    for (int a = 0; a < na; ++a) {
      jn_u = jn_u + ws.jn[i * nq + nu + a] * ws.uh[a];
      jt_u = jt_u + ws.jt[i * nq + nu + a] * ws.uh[a];
    }
    T back = zero;
    for (int e = 0; e < nq; ++e) back = back + ws.jn[i * nq + e] * (q0[e] - ws.q_lin[e]);
    ws.gap[i] = ws.frame[i].phi + back + jn_u;
    ws.slide[i] = jt_u;
    reach = max(reach, select(ws.active[i], abs(jn_u) + abs(jt_u) + max(zero, zero - ws.gap[i]), zero));
  }
  const T far = T(kHalmPosaUnreachable) * reach;
  for (int i = 0; i < ns; ++i) {
    if (skipped(i)) continue;
    ws.unreached[i] = ws.active[i] && ws.gap[i] > far;  // still active (reported), not in the LCP
    n_active = n_active + select(ws.active[i], one, zero);
  }
  ws.n_active = n_active;
}

/// The LCP of that linearisation over the slots in it (active and within reach, per
/// ws.active and ws.unreached): rows of inactive slots are zero, their q is +1 and they are
/// excluded from the pivoting.
template <class T>
void fill_lcp(const Model& m, HalmPosaProblem<T>& ws, const T* mu_pair) {
  using MaskT = typename HalmPosaProblem<T>::MaskT;
  const int nq = ws.nq, nu = ws.nu, na = ws.na, ns = ws.ns, n = ws.n, r = 2 * ns;
  const T zero(0.0), one(1.0);

  // A = R(theta) Ã R(theta)' at the linearisation point (Halm & Posa 2018, eq. (12)); R from the
  // object's pose (cos and sin of its theta, quasistep/core/kinematics.hpp). At T = Jet only
  // where a slot is in the LCP (it multiplies nothing else).
  bool any = true;
  if constexpr (carries_derivatives<T>) {
    any = false;
    for (int k = 0; k < ns && !any; ++k) any = ws.active[k] && !ws.unreached[k];
  }
  T A[3][3];
  if (any) {
    const Pose2<T>& pose = ws.body_pose[ws.object];
    const T R[3][3] = {{pose.c, -pose.s, zero}, {pose.s, pose.c, zero}, {zero, zero, one}};
    // Ã in the LCP's unit (halm_posa_lcp_unit; divided once, in the workspace).
    const Eigen::Matrix3d& Ab = ws.A_body;
    T RA[3][3];
    for (int e = 0; e < 3; ++e)
      for (int f = 0; f < 3; ++f)
        RA[e][f] = R[e][0] * T(Ab(0, f)) + R[e][1] * T(Ab(1, f)) + R[e][2] * T(Ab(2, f));
    for (int e = 0; e < 3; ++e)
      for (int f = 0; f < 3; ++f) A[e][f] = RA[e][0] * R[f][0] + RA[e][1] * R[f][1] + RA[e][2] * R[f][2];
  }

  // Rows of J split into object and manipulator columns, zero where the slot is inactive or
  // out of reach.
  // At T = Jet the rows and columns of the slots out of the LCP are neither reset nor
  // filled (here and in M below; finish_about skips them too): a large model's derivatives
  // then cost its contacts', not its slots' square.
  const auto skipped = [&](int j) {  // j < 2 ns: a normal or tangent row of slot j or j - ns
    if constexpr (carries_derivatives<T>) {
      const int k = j < ns ? j : j - ns;
      return !(ws.active[k] && !ws.unreached[k]);
    } else {
      return false;
    }
  };
  for (int i = 0; i < ns; ++i) {
    if (skipped(i)) continue;
    const MaskT act = ws.active[i] && !ws.unreached[i];
    for (int e = 0; e < 3; ++e) {
      ws.Jo[i * 3 + e] = select(act, ws.jn[i * nq + ws.dof_o[e]], zero);
      ws.Jo[(ns + i) * 3 + e] = select(act, ws.jt[i * nq + ws.dof_o[e]], zero);
    }
    for (int a = 0; a < na; ++a) {
      ws.Jm[i * na + a] = select(act, ws.jn[i * nq + nu + a], zero);
      ws.Jm[(ns + i) * na + a] = select(act, ws.jt[i * nq + nu + a], zero);
    }
  }
  for (int j = 0; j < r; ++j) {
    if (skipped(j)) continue;
    const T* jo = &ws.Jo[j * 3];
    for (int e = 0; e < 3; ++e) ws.AJo[e * r + j] = A[e][0] * jo[0] + A[e][1] * jo[1] + A[e][2] * jo[2];
    for (int a = 0; a < na; ++a) {
      T v = zero;
      for (int b = 0; b < na; ++b) v = v + ws.cB[a * na + b] * ws.Jm[j * na + b];
      ws.BJm[a * r + j] = v;
    }
  }

  // The LCP, layout [Lambda_N | Lambda_T+ | Lambda_T- | gamma] (ns rows each).
  T* M = ws.M.data();
  if constexpr (carries_derivatives<T>) {
    for (int a = 0; a < ns; ++a)
      for (int b = 0; b < ns && !skipped(a); ++b)
        if (!skipped(b))
          for (int row = a; row < n; row += ns)
            for (int col = b; col < n; col += ns) M[row * n + col] = zero;
  } else {
    for (int k = 0; k < n * n; ++k) M[k] = zero;
  }
  const int pn = 0, pp = ns, pm = 2 * ns, pg = 3 * ns;
  auto lcp_index = [&](int j) { return j < ns ? pn + j : pp + (j - ns); };
  for (int i = 0; i < r; ++i) {
    if (skipped(i)) continue;
    const T* jo = &ws.Jo[i * 3];
    for (int j = 0; j < r; ++j) {
      if (skipped(j)) continue;
      // Halm & Posa 2018, eq. (17): J_o A J_o' + J_m cB J_m'
      T g = jo[0] * ws.AJo[0 * r + j] + jo[1] * ws.AJo[1 * r + j] + jo[2] * ws.AJo[2 * r + j];
      for (int a = 0; a < na; ++a) g = g + ws.Jm[i * na + a] * ws.BJm[a * r + j];
      const int I = lcp_index(i), J = lcp_index(j);
      M[I * n + J] = g;
      if (i >= ns) M[(I + ns) * n + J] = -g;                 // -t row
      if (j >= ns) M[I * n + J + ns] = -g;                   // -t column
      if (i >= ns && j >= ns) M[(I + ns) * n + J + ns] = g;  // both negated
    }
  }
  for (int k = 0; k < ns; ++k) {
    if (skipped(k)) {  // at T = Jet: out of the LCP, its rows excluded (M's never read)
      for (int b : {pn, pp, pm, pg}) {
        ws.q_lcp[b + k] = one;
        ws.excluded[b + k] = true;
      }
      continue;
    }
    const MaskT act = ws.active[k] && !ws.unreached[k];
    ws.q_lcp[pn + k] = select(act, ws.gap[k], one);
    ws.q_lcp[pp + k] = select(act, ws.slide[k], one);
    ws.q_lcp[pm + k] = select(act, -ws.slide[k], one);
    ws.q_lcp[pg + k] = select(act, zero, one);
    const T mu = mu_pair[m.slots[k].pair];
    M[(pp + k) * n + pg + k] = select(act, one, zero);  // E gamma (eq. (35))
    M[(pm + k) * n + pg + k] = select(act, one, zero);
    M[(pg + k) * n + pn + k] = select(act, mu, zero);  // mu Lambda_N - E' Lambda_T (eq. (36))
    M[(pg + k) * n + pp + k] = select(act, -one, zero);
    M[(pg + k) * n + pm + k] = select(act, -one, zero);
    for (int b : {pn, pp, pm, pg}) ws.excluded[b + k] = !act;
  }
}

/// The step of that linearisation from its answer ws.z, ws.w: q_end, the linearised
/// penetration, and whether every slot left out stays open.
template <class T>
void finish_about(HalmPosaProblem<T>& ws, const T* q0) {
  using MaskT = typename HalmPosaProblem<T>::MaskT;
  const int nq = ws.nq, nu = ws.nu, na = ws.na, ns = ws.ns, r = 2 * ns;
  const int pn = 0, pp = ns, pm = 2 * ns;
  const T zero(0.0);

  // The step: dq_o = A J_o' Lambda (eq. (32)), dq_m = cB J_m' Lambda + h u (eq. (33)).
  T dq_o[3] = {zero, zero, zero};
  T lin_pen = zero;
  for (int e = 0; e < nq; ++e) ws.q_end[e] = q0[e];
  for (int k = 0; k < ns; ++k) {
    if constexpr (carries_derivatives<T>) {
      if (!(ws.active[k] && !ws.unreached[k])) continue;  // z = 0: as fill_lcp, not in T
    }
    const T ln = ws.z[pn + k], lt = ws.z[pp + k] - ws.z[pm + k];
    lin_pen = min(lin_pen, select(ws.active[k] && !ws.unreached[k], ws.w[pn + k], zero));
    for (int e = 0; e < 3; ++e) dq_o[e] = dq_o[e] + (ws.AJo[e * r + k] * ln + ws.AJo[e * r + ns + k] * lt);
    for (int a = 0; a < na; ++a)
      ws.q_end[nu + a] = ws.q_end[nu + a] + (ws.BJm[a * r + k] * ln + ws.BJm[a * r + ns + k] * lt);
  }
  for (int a = 0; a < na; ++a) ws.q_end[nu + a] = ws.q_end[nu + a] + ws.uh[a];
  for (int e = 0; e < 3; ++e) ws.q_end[ws.dof_o[e]] = ws.q_end[ws.dof_o[e]] + dq_o[e];
  ws.linearised_penetration = lin_pen;
  // A slot left out must stay open at the end of the step (its linearised gap
  // phi + J_n (q_end - q_lin)); then the LCP with it has this solution with its Lambda = 0.
  MaskT kept = zero == zero;
  if constexpr (carries_derivatives<T>) return;  // no slot was left out (pose_about)
  for (int i = 0; i < ns; ++i) {
    T end = ws.frame[i].phi;
    for (int e = 0; e < nq; ++e) end = end + ws.jn[i * nq + e] * (ws.q_end[e] - ws.q_lin[e]);
    kept = kept && (!ws.unreached[i] || end >= zero);
  }
  ws.reach_kept = kept;
}

/// One linearisation about q_lin of the step from q0 (HalmPosaLcp::solve_about on the fixed
/// layout): builds the LCP, solves it in ws.lemke, writes q_end.
template <class T>
void solve_about(const Model& m, const WorldParams& p, HalmPosaStepWorkspace<T>& ws, const T* q0, const T* mu_pair) {
  pose_about(m, p, ws, q0);
  fill_lcp(m, ws, mu_pair);
  const T zero(0.0);
  for (int k = 0; k < ws.n; ++k) ws.z[k] = ws.w[k] = zero;
  ws.lemke.solve(ws.n, ws.M.data(), ws.q_lcp.data(), ws.excluded.get(), ws.z.data(), ws.w.data(), LemkeOptions{},
                 ws.lemke_result);
  finish_about(ws, q0);
}

}  // namespace halm_posa_detail

/// One step of p.h of every lane of T from q at time t (the same for every lane); the Model
/// must satisfy halm_posa_template_applies. The values every lane shares come from p.
/// mu_pair: per-pair friction (n_pairs values of T: p.pair_friction.data() for one world); c_scale: the gain scale
/// c of M(cB) (one T) or null for p's (WorldParams::model_gain); u: the velocity command of each actuated DOF (n_a
/// values of T) or null for p's (WorldParams::velocity at t + h/2). Results in ws: ok, q_end, status, pivots, residual, and the last
/// linearisation's frames, active slots, z and w. The caller stores only the lanes it wants.
/// `after(it)` is called after linearisation it's solve (the stepper records each one's
/// answer for the step's derivatives, quasistep/core/derivatives.hpp).
struct NoLinearisationRecord {
  void operator()(int) const {}
};
template <class T, class After = NoLinearisationRecord>
void halm_posa_template_step(const Model& m, const WorldParams& p, HalmPosaStepWorkspace<T>& ws, const T* q,
                             const T* mu_pair, const T* c_scale, const T* u, double t, After after = {}) {
  using MaskT = typename HalmPosaStepWorkspace<T>::MaskT;
  constexpr int L = HalmPosaStepWorkspace<T>::kLanes;
  const int na = ws.na, nq = ws.nq;
  const double h = p.h, t_mid = t + 0.5 * h;
  const T zero(0.0), hT(h);
  // Halm & Posa 2018, eq. (37): cB = c B (zero for perfect velocity).
  const bool perfect = m.formulation == Formulation::perfect_velocity_lcp;
  const HalmPosaParams& params = formulation_params_or_default<HalmPosaParams>(m);
  // In the LCP's unit (halm_posa_lcp_unit), as A: c / unit exactly, as the scalar path.
  const T c = (c_scale ? *c_scale : T(p.model_gain)) / T(ws.lcp_unit);
  for (int a = 0; a < na; ++a)
    for (int b = 0; b < na; ++b) ws.cB[a * na + b] = !perfect && params.gain_B ? c * T((*params.gain_B)(a, b)) : zero;
  for (const Joint& j : m.joints) {
    const int a = j.dof - m.n_u;
    ws.uh[a] = hT * (u ? u[a] : T(p.velocity(m, j, t_mid)));
  }
  for (int e = 0; e < nq; ++e) ws.q_lin[e] = q[e];
  ws.status.fill(Status::solved);
  ws.pivots.fill(0);
  MaskT ok = zero == zero;
  for (int it = 0; it <= params.relinearize_iterations; ++it) {
    halm_posa_detail::solve_about(m, p, ws, q, mu_pair);
    after(it);
    for (int l = 0; l < L; ++l) {
      const Status st = ws.lemke_result.status[l];
      ws.pivots[l] += ws.lemke_result.pivots[l];
      ws.residual[l] = ws.lemke_result.residual[l];
      if (st != Status::solved && ws.status[l] == Status::solved) {
        ws.status[l] = st;
        set_lane(ok, l, false);
      }
      // A slot taken as out of reach was reached: the step is the scalar path's (which then
      // solves with every slot).
      if (!lane_of(ws.reach_kept, l) && ws.status[l] == Status::solved) {
        ws.status[l] = Status::numerical_failure;
        set_lane(ok, l, false);
      }
    }
    for (int e = 0; e < nq; ++e) ws.q_lin[e] = ws.q_end[e];
  }
  ws.ok = ok;
}

}  // namespace qs

// Random problem instances for tests and benchmarks, deterministic in their seed:
// - the Halm-Posa contact LCP of a disk touched by k point fingers (Halm & Posa 2018,
//   sec. 6.1: A = I3, B = I_2k), one time step of eqs. (31)-(38): LCP(M(cB), w(h u) + [phi; 0])
//   with M(cB) of eq. (17). M is copositive (Theorem 1), so Lemke must solve every instance;
// - the random UCPs of Pang, Trinkle & Lo 1996, sec. 5 (Table 1's settings).
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <cmath>
#include <cstdint>
#include <random>

#include "quasistep/kernels/ucp.hpp"

namespace qs {

// ---- Halm-Posa disk LCPs (Halm & Posa 2018, sec. 6.1) ---------------------------------------

struct LcpInstance {
  Eigen::MatrixXd M;
  Eigen::VectorXd q;
};

/// n = 4k: [Lambda_N (k); Lambda_T (2k, +t and -t per contact); gamma (k)].
/// Fingers sit at angles 2 pi i / k plus jitter, at gaps phi in [0, max_gap], and move with
/// random velocities in [-1, 1]^2 m/s for one step of h seconds.
inline LcpInstance halm_posa_disk_lcp(int k, std::uint64_t seed, double c = 1.0, double mu = 1.0, double h = 0.025,
                                      double max_gap = 0.01) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), gap(0.0, max_gap);
  const double pi = 3.14159265358979323846;
  Eigen::MatrixXd JNo(k, 3), JTo(2 * k, 3), JNm = Eigen::MatrixXd::Zero(k, 2 * k), JTm = Eigen::MatrixXd::Zero(2 * k, 2 * k);
  Eigen::VectorXd phi(k), u(2 * k);
  for (int i = 0; i < k; ++i) {
    const double a = 2 * pi * i / k + 0.3 * unit(rng) / k;
    phi[i] = gap(rng);
    const double px = std::cos(a), py = std::sin(a);  // contact point on the disk
    const double nx = -px, ny = -py;                  // normal from the finger (A) into the disk (B)
    const double tx = -ny, ty = nx;                   // t = perp(n)
    // Object columns [x, y, theta]: d(point)/d(theta) = perp(p) = (-py, px).
    JNo.row(i) << nx, ny, nx * -py + ny * px;
    JTo.row(2 * i) << tx, ty, tx * -py + ty * px;
    JTo.row(2 * i + 1) = -JTo.row(2 * i);
    // The finger is body A: its columns enter with a minus sign.
    JNm(i, 2 * i) = -nx;
    JNm(i, 2 * i + 1) = -ny;
    JTm(2 * i, 2 * i) = -tx;
    JTm(2 * i, 2 * i + 1) = -ty;
    JTm.row(2 * i + 1) = -JTm.row(2 * i);
    u[2 * i] = unit(rng);
    u[2 * i + 1] = unit(rng);
  }
  const int n = 4 * k;
  Eigen::MatrixXd Jo(3 * k, 3), Jm(3 * k, 2 * k);
  Jo << JNo, JTo;
  Jm << JNm, JTm;
  LcpInstance out;
  out.M = Eigen::MatrixXd::Zero(n, n);
  // Halm & Posa 2018, eq. (17) with A = I3, B = I: J_o A J_o^T + c J_m B J_m^T on the force block.
  out.M.topLeftCorner(3 * k, 3 * k) = Jo * Jo.transpose() + c * Jm * Jm.transpose();
  for (int i = 0; i < k; ++i) {
    out.M(k + 2 * i, 3 * k + i) = 1.0;      // E
    out.M(k + 2 * i + 1, 3 * k + i) = 1.0;
    out.M(3 * k + i, i) = mu;               // mu
    out.M(3 * k + i, k + 2 * i) = -1.0;     // -E^T
    out.M(3 * k + i, k + 2 * i + 1) = -1.0;
  }
  // Halm & Posa 2018, eq. (38): w(h u) + [phi; 0]
  out.q = Eigen::VectorXd::Zero(n);
  out.q.head(3 * k) = Jm * (h * u);
  out.q.head(k) += phi;
  return out;
}

// ---- random UCPs (Pang, Trinkle & Lo 1996, sec. 5) ------------------------------------------

/// Table 1's settings: n_c point fingers, mu_i uniform in (0, mu_max), |abar| joints
/// effort-controlled (n_theta = 2 n_c, n_q = 3, so |alpha| = 2 n_c - |abar|).
struct UcpRandomSpec {
  int n_c = 3;
  double mu_max = 1.0;
  int n_abar = 0;
};

/// Sec. 5's recipe: finger i touches an ellipse (semi-axes 1 and 0.6, centre of gravity at
/// the origin) at a random point, inward normal; its joints 2i and 2i+1 move it along the
/// normal and the tangent (J_n, J_t are selections, as in data sets 1-4). A random force in
/// each friction cone gives the loads through eqs. (2)-(3) (so Y is nonempty); a random
/// q_dot and v_n >= 0 give theta_dot through eq. (4) (so X is nonempty for any alpha); abar
/// is a random subset of the joints. Whether a complementary pair exists is not known.
/// Deterministic in (spec, seed).
UcpData ucp_random_problem(const UcpRandomSpec& spec, std::uint64_t seed);

}  // namespace qs

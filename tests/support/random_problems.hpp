// Random problem instances for tests and benchmarks, deterministic in their seed:
// - the Halm-Posa contact LCP of a disk touched by k point fingers (Halm & Posa 2018,
//   sec. 6.1: A = I3, B = I_2k), one time step of eqs. (31)-(38): LCP(M(cB), w(h u) + [phi; 0])
//   with M(cB) of eq. (17). M is copositive (Theorem 1), so Lemke must solve every instance;
// - the random UCPs of Pang, Trinkle & Lo 1996, sec. 5: Table 1's construction
//   (ucp_table1_problem) and the project's earlier variant (ucp_random_problem).
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

/// The project's first random UCPs (the tests' and the Random benchmarks' problems; kept as
/// they were so that their counts stay comparable): finger i touches an ellipse (semi-axes 1
/// and 0.6, centre of gravity at the origin) at a random point, inward normal; its joints 2i
/// and 2i+1 move it along the contact normal and tangent (J_n, J_t are selections, as in data
/// sets 1-4). A random force in each friction cone gives the loads through eqs. (2)-(3) (so Y
/// is nonempty); a random q_dot and v_n >= 0 give theta_dot through eq. (4) (so X is nonempty
/// for any alpha); abar is a random subset of the joints. With selection Jacobians an
/// effort-controlled tangential joint whose normal joint is velocity-controlled pins its
/// contact's normal velocity to 0, one linear equation on q_dot each: with |abar| ~ n_c / 2
/// these problems rarely have a solution. ucp_table1_problem is the paper's Table 1
/// construction. Deterministic in (spec, seed).
UcpData ucp_random_problem(const UcpRandomSpec& spec, std::uint64_t seed);

/// The layout of a point finger's two prismatic joints (the paper's generator, Sudarsky's
/// code, is not given).
enum class UcpFingerJoints : std::uint8_t {
  world_xy,       // joint 2i moves finger i along the world x axis, joint 2i+1 along y
  contact_frame,  // along its contact's normal and tangent (selection J_n, J_t, as data sets 1-4)
};

struct UcpTable1Spec {
  int n_c = 3;
  double mu_max = 1.0;
  int n_abar = 0;
  UcpFingerJoints joints = UcpFingerJoints::world_xy;
  /// Contacts 0 .. rolling-1 get v_n = v_t = 0 in the constructed motion (their draws are
  /// made and discarded, so the other contacts' draws do not change): the paper's "random
  /// nonnegative vector v_n" with zeros. 0, the default: every contact separates.
  int rolling = 0;
};

/// A problem of ucp_table1_problem with the motion and forces it was built from.
struct UcpTable1Instance {
  UcpData data;
  Eigen::VectorXd q_dot;        // n_q: the constructed object velocity
  Eigen::VectorXd c_n, c_t;     // n_c: the constructed contact forces (eq. (7) holds)
  Eigen::VectorXd v_n, v_t;     // n_c: the constructed contact velocities (v_n >= 0)
  Eigen::VectorXd x, y;         // 3 n_c: the witnesses, x in X and y in Y (not complementary)
};

/// Pang, Trinkle & Lo 1996, sec. 5's construction of Table 1's problems: forces in the
/// friction cones give g_obj and g_man through eqs. (2)-(3) (Y is nonempty), v_n >= 0 gives
/// q_dot and theta_dot through eq. (4) (X is nonempty). Every choice the paper leaves open
/// is listed in random_problems.cpp. `seed` draws the geometry, the motion, tau and alpha;
/// `load_seed` draws mu and the forces (so g_obj, g_man and mu), so two load seeds give two
/// problems with the same X and different Y, like the paper's three versions of its
/// n_c = 20 data set. Deterministic in (spec, seed, load_seed).
UcpTable1Instance ucp_table1_problem(const UcpTable1Spec& spec, std::uint64_t seed, std::uint64_t load_seed);
inline UcpTable1Instance ucp_table1_problem(const UcpTable1Spec& spec, std::uint64_t seed) {
  return ucp_table1_problem(spec, seed, seed);
}

}  // namespace qs

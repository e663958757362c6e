// Halm & Posa 2018, Theorems 2 and 3 as properties of the time-stepping LCP (sec. 5) on
// random tabletop worlds (tests/support/random_tabletop.hpp: random objects, fingers, arms,
// walls, friction, commands u, limit surfaces A > 0 and gains B > 0).
//
// The step's LCP is LCP(M(cB), w(h u) + [phi; 0]) (eqs. (37)-(38)); for a solution z the
// complementarity z'(Mz + w) = 0 reads, with F_o = J_o' Lambda and F_m = J_m' Lambda,
//   F_o'A F_o + c F_m'B F_m + gamma'mu Lambda_N + F_m'(h u) + Lambda_N'phi = 0,
// eq. (22) with h u for u and the extra Lambda_N'phi >= 0 when phi >= 0 (the hypothesis of
// sec. 5: a non-penetrating start). So the proofs go through unchanged:
//   Theorem 2, eq. (26):  c |F_m|_2 <= |h u|_2 / lambda_min(B);
//   Theorem 3, eqs. (27)-(28): (c F_o)'A (c F_o) <= c |h u|_2^2 / lambda_min(B), so
//     J_o'(c Lambda) -> 0 as c -> 0 like sqrt(c), and c Lambda tends to the internal forces
//     F~_0 = {Lambda : Lambda_N >= 0, |Lambda_T| <= mu Lambda_N, J_o'Lambda = 0} (a subset
//     of F_0; the proof shows convergence to F~_0, the stronger statement tested here).
// The impulses are the stepper's (in the scene's units, times k of eq. (10)); J_o, J_m are
// the contact Jacobians at the start state, A = R Ã R', B is the scene's.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "quasistep/core/contacts.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/kernels/dense_qp.hpp"
#include "quasistep/kernels/lcp_acceptance.hpp"
#include "tests/support/example_json.hpp"
#include "tests/support/halm_posa_checks.hpp"
#include "tests/support/instrumented.hpp"
#include "tests/support/random_tabletop.hpp"

namespace qs::halm_posa_theorems_test {
namespace {

/// A campaign's sample count: a fifth under the sanitizers.
constexpr int scaled(int n) { return test::kAddressSanitizer ? std::max(n / 5, 20) : n; }

double lambda_min(const Eigen::MatrixXd& S) { return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(S).eigenvalues()[0]; }

/// One random world, parsed, with its start-state contact Jacobians.
struct World {
  test::RandomTabletop t;
  Scene scene;
  const Model* m = nullptr;
  ContactWorkspace ws;
  Eigen::Matrix3d A;  // world frame, R Ã R' (eq. (12))
  double lmin_B = 0, hu = 0;  // lambda_min(B), |h u|_2

  explicit World(std::uint64_t seed) : World(test::random_tabletop(seed)) {}
  explicit World(test::RandomTabletop tabletop)
      : t(std::move(tabletop)), scene(parse_scene(t.scene.dump())), m(scene.model.get()), ws(*m) {
    const Eigen::VectorXd q0 = initial_state(*m).q;
    ws.evaluate(*m, q0.data());
    const double th = q0[2], c = std::cos(th), s = std::sin(th);
    Eigen::Matrix3d R;
    R << c, -s, 0, s, c, 0, 0, 0, 1;
    A = R * t.A_body * R.transpose();
    lmin_B = lambda_min(t.B);
    hu = (t.h * t.u).norm();
  }
};

/// One step of the world at gain scale c, read back as forces on the object and manipulator.
struct Step {
  Status status = Status::not_run;
  std::string detail;
  Eigen::VectorXd lambda;  // [Lambda_N (n_s); Lambda_T (n_s)], net tangential impulse per slot
  Eigen::VectorXd F_m;     // J_m' Lambda (n_a)
  Eigen::Vector3d F_o;     // J_o' Lambda
  double violation = 0;    // of the step's LCP (tests/support/lcp_check.hpp)
  double worst_phi = 0;    // the start state's smallest gap (the hypothesis phi >= 0)
};

Step step_at(const World& w, double c) {
  const Model& m = *w.m;
  HalmPosaLcp stepper(m);
  State s = initial_state(m);
  const Eigen::VectorXd q0 = s.q;
  WorldParams p(m);
  p.model_gain = c;
  Step r;
  r.status = stepper.step(m, p, s);
  r.detail = stepper.report().detail;
  if (r.status != Status::solved) return r;
  r.violation = test::lcp_violation(stepper);
  const int ns = m.n_slots(), nu = m.n_u, na = m.n_a;
  r.lambda.setZero(2 * ns);
  r.F_m.setZero(na);
  r.F_o.setZero();
  r.worst_phi = std::numeric_limits<double>::infinity();
  for (int i = 0; i < ns; ++i) {
    r.worst_phi = std::min(r.worst_phi, w.ws.frame[i].phi);
    const double ln = stepper.normal_impulse()[i], lt = stepper.tangent_impulse()[i];
    r.lambda[i] = ln;
    r.lambda[ns + i] = lt;
    for (int e = 0; e < 3; ++e) r.F_o[e] += w.ws.J_n(i, e) * ln + w.ws.J_t(i, e) * lt;
    for (int a = 0; a < na; ++a) r.F_m[a] += w.ws.J_n(i, nu + a) * ln + w.ws.J_t(i, nu + a) * lt;
  }
  // The forces read back are the ones the step moved by (eqs. (32)-(33)):
  // dq_o = A F_o, dq_m = h u + cB F_m.
  const Eigen::VectorXd dq = s.q - q0;
  const Eigen::VectorXd lag = c * (w.t.B * r.F_m), dq_m = dq.tail(na) - w.t.h * w.t.u;
  EXPECT_LE((dq_m - lag).norm(), 1e-9 * (w.hu + lag.norm())) << "dq_m != h u + cB F_m";
  const Eigen::Vector3d dq_o = w.A * r.F_o;
  EXPECT_LE((dq.head<3>() - dq_o).norm(), 1e-9 * (dq.head<3>().norm() + dq_o.norm()) + 1e-15) << "dq_o != A F_o";
  return r;
}

/// c |F_m|_2 over Theorem 2's bound |h u|_2 / lambda_min(B) (Halm & Posa 2018, eq. (26)).
double theorem2_ratio(const World& w, const Step& s, double c) { return c * s.F_m.norm() * w.lmin_B / w.hu; }

/// (c F_o)'A (c F_o) over its bound c |h u|^2 / lambda_min(B) (eqs. (27)-(28)).
double theorem3_defect_ratio(const World& w, const Step& s, double c) {
  const Eigen::Vector3d cF = c * s.F_o;
  return cF.dot(w.A * cF) * w.lmin_B / (c * w.hu * w.hu);
}

/// The internal forces F~_0 of the world's contacts (Theorem 3's proof), in the net
/// tangential impulse per slot: x = [x_N; x_T], x_N >= 0, mu x_N -+ x_T >= 0, J_o'x = 0.
/// Distances to it by the Euclidean projection, a convex QP solved by the library's dense
/// QP kernel (quasistep/kernels/dense_qp.hpp), which checks its KKT conditions.
class InternalForces {
 public:
  explicit InternalForces(const World& w)
      : ns_(w.m->n_slots()), qp_(DenseQpCapacity{2 * ns_, 3, 2 * ns_ + 1}), Aeq_(3, 2 * ns_), Ain_(2 * ns_, 2 * ns_),
        lower_(2 * ns_), upper_(Eigen::VectorXd::Constant(2 * ns_, std::numeric_limits<double>::infinity())) {
    const WorldParams p(*w.m);
    Ain_.setZero();
    for (int i = 0; i < ns_; ++i) {
      for (int e = 0; e < 3; ++e) {
        Aeq_(e, i) = w.ws.J_n(i, e);
        Aeq_(e, ns_ + i) = w.ws.J_t(i, e);
      }
      const double mu = p.slot_friction(*w.m, i);
      Ain_(2 * i, i) = Ain_(2 * i + 1, i) = mu;
      Ain_(2 * i, ns_ + i) = -1;
      Ain_(2 * i + 1, ns_ + i) = 1;
      lower_[i] = 0;
      lower_[ns_ + i] = -std::numeric_limits<double>::infinity();
    }
  }

  /// dist(y, F~_0); -1 when the QP is not solved. The cone is scaled out: y / |y|.
  double distance(const Eigen::VectorXd& y) {
    const double norm = y.norm();
    if (norm == 0) return 0;
    const Eigen::MatrixXd H = Eigen::MatrixXd::Identity(2 * ns_, 2 * ns_);
    const Eigen::VectorXd c = -y / norm, beq = Eigen::VectorXd::Zero(3), bin = Eigen::VectorXd::Zero(2 * ns_);
    if (qp_.solve({H, c, Aeq_, beq, Ain_, bin, lower_, upper_}) != Status::solved) return -1;
    return norm * (qp_.x() + c).norm();
  }

  /// Whether F~_0 has a non-zero member: max sum x_N over F~_0 with sum x_N <= 1 (an LP).
  bool nontrivial() {
    const Eigen::MatrixXd H = Eigen::MatrixXd::Zero(2 * ns_, 2 * ns_);
    Eigen::VectorXd c = Eigen::VectorXd::Zero(2 * ns_);
    c.head(ns_).setConstant(-1);
    Eigen::MatrixXd Ain = Eigen::MatrixXd::Zero(2 * ns_ + 1, 2 * ns_);
    Ain.topRows(2 * ns_) = Ain_;
    Ain.row(2 * ns_).head(ns_).setConstant(-1);  // -sum x_N >= -1
    const Eigen::VectorXd beq = Eigen::VectorXd::Zero(3);
    Eigen::VectorXd bin = Eigen::VectorXd::Zero(2 * ns_ + 1);
    bin[2 * ns_] = -1;
    EXPECT_EQ(qp_.solve({H, c, Aeq_, beq, Ain, bin, lower_, upper_}), Status::solved);
    return -qp_.objective() > 1e-6;
  }

 private:
  int ns_;
  DenseQp qp_;
  Eigen::MatrixXd Aeq_, Ain_;
  Eigen::VectorXd lower_, upper_;
};

// The accepted LCP answers are exact to kLcpTolerance = 2^-20 relative to max |w| (Lemke's
// acceptance rule, quasistep/kernels/lcp_acceptance.hpp); the theorems' inequalities follow
// from complementarity, so they hold to that order.
constexpr double kSlack = 1e-5;

// Theorem 3's distance tolerance in units of sqrt(c) |h u| / lambda_min(B) (see the test).
constexpr double kHoffman = 5;

TEST(HalmPosaTheorems, Theorem2BoundsTheFeedbackForceOnRandomScenes) {
  // Halm & Posa 2018, Theorem 2 with the proof's constant r(B) = 1 / lambda_min(B), eq. (26):
  // c |F_m|_2 <= |h u|_2 / lambda_min(B), every solution, every c > 0 (here each world's
  // random c, log-uniform in [1e-3, 10]).
  const int n = scaled(500);
  int touching = 0, walls = 0, arms = 0;
  double worst = 0;
  for (int k = 0; k < n; ++k) {
    const World w(1000 + k);
    SCOPED_TRACE("seed " + std::to_string(1000 + k) + " " + w.t.object);
    const Step s = step_at(w, w.t.c);
    ASSERT_EQ(s.status, Status::solved) << s.detail;  // Theorem 1: always solvable
    ASSERT_GE(s.worst_phi, 0.0);                      // the hypothesis phi >= 0
    EXPECT_LE(s.violation, kLcpTolerance);
    const double ratio = theorem2_ratio(w, s, w.t.c);
    EXPECT_LE(ratio, 1 + kSlack) << "c |F_m| = " << w.t.c * s.F_m.norm() << ", bound " << w.hu / w.lmin_B;
    worst = std::max(worst, ratio);
    touching += ratio > 1e-9;
    walls += w.t.wall;
    arms += w.t.arms > 0;
  }
  std::printf("Theorem 2: %d random worlds (%d with an impulse on the manipulator above 1e-9 of the bound, %d with a wall, %d with arms); "
              "largest c |F_m| lambda_min(B) / |h u| = %.6f\n",
              n, touching, walls, arms, worst);
  EXPECT_GT(touching, n / 2);
}

/// Two point fingers squeezing a disk head-on (radius 1, A = I, fingers touching at x = -1
/// and x = +1, phi = 0), both driven inward at v along x: the forces balance (F_o = 0), nothing
/// slides (gamma = 0), so eq. (22) leaves c F_m'B F_m = -F_m'(h u) with F_m antiparallel to u.
/// The x joints have B's smaller eigenvalue b_x: equality in eqs. (23)-(26).
test::RandomTabletop head_on_squeeze(double c) {
  const double v = 0.5, h = 0.05, bx = 0.5, by = 2.0;
  test::RandomTabletop t;
  t.h = h;
  t.c = c;
  t.A_body = Eigen::Matrix3d::Identity();
  t.B = Eigen::Vector4d(bx, by, bx, by).asDiagonal();
  t.u = Eigen::Vector4d(v, 0, -v, 0);
  t.points = 2;
  t.object = "disk";
  nlohmann::json bodies = nlohmann::json::array({{{"name", "object"}, {"kind", "free"}, {"dofs", {"x", "y", "theta"}},
                                                  {"mass", 1.0}, {"pose", {0, 0, 0}},
                                                  {"shapes", {{{"type", "disk"}, {"radius", 1.0}}}}}});
  nlohmann::json joints = nlohmann::json::array(), pairs = nlohmann::json::array();
  for (int f = 0; f < 2; ++f) {
    const std::string name = f == 0 ? "left" : "right";
    bodies.push_back({{"name", name + "_carriage"}, {"kind", "linked"}});
    bodies.push_back({{"name", name}, {"kind", "linked"}, {"shapes", {{{"type", "point"}}}}});
    joints.push_back({{"name", name + "_x"}, {"type", "prismatic"}, {"parent", "world"}, {"child", name + "_carriage"},
                      {"axis", {1, 0}}, {"position", f == 0 ? -1.0 : 1.0}});
    joints.push_back({{"name", name + "_y"}, {"type", "prismatic"}, {"parent", name + "_carriage"}, {"child", name},
                      {"axis", {0, 1}}, {"position", 0.0}});
    pairs.push_back({{"bodies", {name, "object"}}, {"friction", 0.5}});
  }
  t.scene = {{"format", 1},
             {"name", "head_on_squeeze"},
             {"world", {{"type", "tabletop"}, {"gravity", 9.81}}},
             {"model",
              {{"formulation", "halm_posa_lcp"},
               {"A", {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}},
               {"B", {{bx, 0, 0, 0}, {0, by, 0, 0}, {0, 0, bx, 0}, {0, 0, 0, by}}},
               {"c", c}}},
             {"step", {{"h", h}, {"steps", 1}}},
             {"bodies", bodies},
             {"joints", joints},
             {"contacts", {{"pairs", pairs}}},
             {"commands", {{"left_x", {{"velocity", v}}}, {"right_x", {{"velocity", -v}}}}}};
  return t;
}

TEST(HalmPosaTheorems, Theorem2BoundIsAttainedByAHeadOnSqueeze) {
  // The constant 1 / lambda_min(B) cannot be lowered: the head-on squeeze meets the bound at
  // every c (so a test with a smaller constant would fail here).
  for (double c : {1.0, 1e-2, 1e-4}) {
    const World w(head_on_squeeze(c));
    const Step s = step_at(w, c);
    ASSERT_EQ(s.status, Status::solved) << s.detail;
    EXPECT_LE(s.violation, kLcpTolerance);
    EXPECT_NEAR(theorem2_ratio(w, s, c), 1.0, 1e-9) << "c = " << c;
    EXPECT_LE(s.F_o.norm(), 1e-12 * s.F_m.norm()) << "c = " << c;
  }
}

TEST(HalmPosaTheorems, Theorem3ScaledImpulsesTendToTheInternalForces) {
  // Halm & Posa 2018, Theorem 3: for any solutions z_i at c_i -> 0, c_i Lambda_i tends to the
  // internal forces. Each world is stepped at c = 1e-1, 1e-2, 1e-3, 1e-4 (the same state and
  // command) and at each c:
  //  - the step solves (Theorem 1) and Theorem 2's bound holds;
  //  - the proof's rate, eqs. (27)-(28): (c F_o)'A (c F_o) <= c |h u|^2 / lambda_min(B), so the
  //    part of c Lambda that is not an internal force, J_o'(c Lambda), is O(sqrt(c));
  //  - the limit: dist(c Lambda, F~_0) <= K sqrt(c) |h u| / lambda_min(B), the distance
  //    (computed independently, as the projection onto F~_0) falling at least at the proof's
  //    sqrt(c) rate in units of Theorem 2's bound. The distance to a polyhedral cone is at most
  //    a constant of the cone (Hoffman's) times the violation of its equation J_o'x = 0,
  //    which the proof bounds by sqrt(c / (lambda_min(A) lambda_min(B))) |h u|; that constant
  //    has no closed form, so K = 5 is taken here: on 2000 worlds the largest ratio was 2.6
  //    (at c = 1e-2; 0.95 at c = 1e-4), and the claim that c Lambda -> 0 instead (distance to
  //    {0}) fails on 15 of these 200 worlds.
  // The distance need not fall monotonically: the LCP's solutions are not unique (sec. 7), and
  // Lemke's method may pick a squeezing one at one c and a sliding one at the next (seed 5099
  // here: |c Lambda| is 4.7e-2 of the bound at c = 1e-3 and 6.4e-3 at 1e-4; the distance rises
  // fourfold between them). The sweep stops at c = 1e-4: below it the library leaves some
  // steps unsolved (DISABLED_Theorem1StepsSolveAtSmallGainScales).
  const int n = scaled(200);
  const std::vector<double> cs = {1e-1, 1e-2, 1e-3, 1e-4};
  int with_internal = 0, squeezed = 0, hundredfold = 0;
  double worst_t2 = 0, worst_rate = 0, worst_dist = 0;
  for (int k = 0; k < n; ++k) {
    const World w(5000 + k);
    SCOPED_TRACE("seed " + std::to_string(5000 + k) + " " + w.t.object);
    InternalForces f0(w);
    const bool nontrivial = f0.nontrivial();
    with_internal += nontrivial;
    const double bound = w.hu / w.lmin_B;  // Theorem 2's bound on c |F_m|
    std::vector<double> dist;
    Eigen::VectorXd last;
    for (double c : cs) {
      const Step s = step_at(w, c);
      ASSERT_EQ(s.status, Status::solved) << "c = " << c << ": " << s.detail;
      ASSERT_GE(s.worst_phi, 0.0);
      EXPECT_LE(s.violation, kLcpTolerance) << "c = " << c;
      const double r2 = theorem2_ratio(w, s, c), r3 = theorem3_defect_ratio(w, s, c);
      EXPECT_LE(r2, 1 + kSlack) << "Theorem 2 at c = " << c;
      EXPECT_LE(r3, 1 + kSlack) << "eqs. (27)-(28) at c = " << c;
      last = c * s.lambda;
      const double d = f0.distance(last);
      ASSERT_GE(d, 0.0) << "the projection onto F~_0 did not solve, c = " << c;
      EXPECT_LE(d, kHoffman * std::sqrt(c) * bound) << "dist(c Lambda, F~_0) at c = " << c;
      worst_t2 = std::max(worst_t2, r2);
      worst_rate = std::max(worst_rate, r3);
      worst_dist = std::max(worst_dist, d / (std::sqrt(c) * bound));
      dist.push_back(d);
    }
    // Without internal forces (F~_0 = {0}) the limit is 0: c Lambda -> 0 (as in Theorem 4).
    if (!nontrivial) {
      EXPECT_LE(last.norm(), kHoffman * std::sqrt(cs.back()) * bound);
    }
    // A squeeze: c Lambda tends to a non-zero internal force.
    squeezed += last.norm() > 1e-3 * bound;
    hundredfold += dist.back() <= 1e-2 * *std::max_element(dist.begin(), dist.end());
  }
  std::printf("Theorem 3: %d random worlds at c = 1e-1 ... 1e-4 (%d with internal forces F~_0 != {0}; %d "
              "squeezed: |c Lambda| > 1e-3 of Theorem 2's bound at c = 1e-4); largest c |F_m| lambda_min(B) / |h u| = "
              "%.4f, largest (c F_o)'A (c F_o) lambda_min(B) / (c |h u|^2) = %.2e, largest dist(c Lambda, F~_0) / (sqrt(c) "
              "|h u| / lambda_min(B)) = %.3f (K = %g); the distance fell a hundredfold from its largest value in %d worlds\n",
              n, with_internal, squeezed, worst_t2, worst_rate, worst_dist, kHoffman, hundredfold);
  // The sample exercises the theorem's interesting case: squeezes whose limit is not zero.
  EXPECT_GT(squeezed, n / 10);
}

// Theorem 1 says every step has a solution for c > 0, B > 0 and phi >= 0, but at small c the
// library does not always find it: Lemke's method (double precision) ends on a ray and the
// exact enumeration stops with numerical_failure. The solutions exist: Lemke's method in
// exact rational arithmetic on the same LCPs (the matrices and vectors as the stepper built
// them) finds them, with impulses up to 1e5 times the LCP's data (Lambda ~ 1/c). The worlds of
// the random generator that fail, and tests/data/halm_posa_small_c.json, three fingers on a
// disk (A = I, B coupled, from seed 5102 by removing fingers, the wall and friction while the
// failure stayed), failing at c = 1e-7 (solved at 1e-6 and 1e-8). Disabled until the solver
// handles them; run with --gtest_also_run_disabled_tests.
TEST(HalmPosaTheorems, DISABLED_Theorem1StepsSolveAtSmallGainScales) {
  const std::vector<std::pair<std::uint64_t, double>> cases = {{5461, 1e-4}, {5102, 1e-5}, {5038, 1e-6}, {5066, 1e-6},
                                                                {5123, 1e-6}, {5129, 1e-6}, {5132, 1e-6}};
  for (const auto& [seed, c] : cases) {
    const World w(seed);
    const Step s = step_at(w, c);
    EXPECT_EQ(s.status, Status::solved) << "seed " << seed << ", c = " << c << ": " << s.detail;
  }
  const Scene scene = parse_scene(test::source_json("tests/data/halm_posa_small_c.json").dump());
  const Model& m = *scene.model;
  HalmPosaLcp stepper(m);
  State st = initial_state(m);
  WorldParams p(m);
  p.model_gain = 1e-7;
  EXPECT_EQ(stepper.step(m, p, st), Status::solved) << stepper.report().detail;
}

}  // namespace
}  // namespace qs::halm_posa_theorems_test

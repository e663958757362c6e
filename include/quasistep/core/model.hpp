// The immutable Model compiled from a scene file, and the per-world State.
//
// Following MuJoCo's mjModel/mjData split: everything that never changes while worlds are
// stepped lives in Model and is shared read-only by all worlds; what changes lives in
// State. Generalized coordinates are ordered q = [q_u; q_a] (Pang & Tedrake 2018, sec. III-A):
//   q_u  unactuated: free-body coordinates (x, y, theta per body, in body order), then
//        effort-controlled joints (their velocity is an unknown, Pang, Trinkle & Lo 1996, sec. 2);
//   q_a  actuated: velocity-commanded joints, in joint order.
// The Model also fixes the contact slots (candidate feature points per shape pair), so
// every world of a Model poses a problem of the same shape; see contacts.hpp.
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <any>
#include <array>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quasistep/core/schedule.hpp"
#include "quasistep/core/vec2.hpp"

namespace qs {

// ---- worlds and formulations ------------------------------------------------------------

enum class WorldType { vertical, tabletop, body_on_plane };
/// The library's formulations; a formulation a program registers
/// (quasistep/core/formulation_table.hpp) takes a value after them.
enum class Formulation : int {
  trinkle_lcp,           // Pang & Tedrake 2018, sec. III-IV without the objective (vertical)
  perfect_velocity_lcp,  // Halm & Posa 2018, eqs. (13)-(14) time-stepping, B = 0 (tabletop)
  halm_posa_lcp,         // Halm & Posa 2018, eqs. (31)-(38) (tabletop)
  pang_tedrake_miqp,     // Pang & Tedrake 2018, eq. (23) (vertical)
  anitescu_qp,           // Pang & Tedrake's Anitescu slides (vertical)
  ucp,                   // Pang, Trinkle & Lo 1996 (vertical, instantaneous)
  ecp_ncp,               // Xie & Chakraborty 2021 (body_on_plane)
};

std::string_view to_string(WorldType w);
std::string_view to_string(Formulation f);
/// Which formulation applies in which world (docs/architecture.md).
bool formulation_applies(Formulation f, WorldType w);

struct World {
  WorldType type = WorldType::vertical;
  double gravity = 9.81;           // m/s^2; vertical: acts along -y; tabletop: into the support
  double support_friction = 0.0;   // tabletop: object-support friction coefficient
};

// ---- bodies, shapes, joints -------------------------------------------------------------

/// Shape types as written in the scene. Each compiles to one of four cores, the set a
/// point query can be made against (geometry.hpp): disk and point are a point core with a
/// radius, segment and capsule a segment core, box and polygon a convex polygon.
enum class ShapeType { point, disk, segment, capsule, box, polygon, half_plane };
enum class ShapeCore { point, segment, polygon, half_plane };
std::string_view to_string(ShapeType t);

constexpr int kMaxPolygonVertices = 16;

struct Shape {
  ShapeType type = ShapeType::point;
  ShapeCore core = ShapeCore::point;
  int body = -1;
  double radius = 0.0;  // rounding of a point or segment core (disk, capsule); 0 otherwise
  /// Core geometry in the body frame (the shape's own offset already applied):
  /// point: {center}; segment: {a, b}; polygon: counter-clockwise vertices;
  /// half-plane: {a point on the boundary line}.
  std::vector<Vec2<double>> points;
  Vec2<double> normal{};  // half-plane: unit outward normal in the body frame

  /// Feature points that can touch another shape: the center of a point core, the two
  /// ends of a segment, the vertices of a polygon; a half-plane has none.
  int feature_count() const { return core == ShapeCore::half_plane ? 0 : static_cast<int>(points.size()); }
};

enum class BodyKind { fixed, free, linked };
std::string_view to_string(BodyKind k);

struct Body {
  std::string name;
  BodyKind kind = BodyKind::fixed;
  double mass = 0.0;                // kg
  std::optional<double> inertia;    // kg m^2 about the center of mass
  Vec2<double> com{};               // center of mass in the body frame
  /// fixed: the pose; free: the initial pose (components that are not DOFs stay at it).
  std::array<double, 3> pose{};     // x, y (m), theta (rad)
  std::array<int, 3> dof{-1, -1, -1};  // free: DOF index of x, y, theta; -1 when fixed
  int parent_joint = -1;            // linked: the joint that carries this body
  std::vector<int> shapes;
};

enum class JointType { prismatic, revolute };
enum class Control { velocity, effort };
std::string_view to_string(JointType t);
std::string_view to_string(Control c);

struct Joint {
  std::string name;
  JointType type = JointType::prismatic;
  Control control = Control::velocity;
  int parent = -1;           // body index; -1 is the world frame
  int child = -1;            // body index
  Pose2<double> origin{};    // joint frame in the parent frame
  Vec2<double> axis{1, 0};   // prismatic: unit axis in the joint frame
  double initial_position = 0.0;  // m or rad
  int dof = -1;
  /// Joint velocity (m/s or rad/s) for velocity control, effort (N or N m) for effort
  /// control, as a function of time. Zero when the scene gives no command.
  Schedule command;
};

/// body3: a component of the body_on_plane state (Dof::index is the component 0..12 of
/// [x, y, z, qw, qx, qy, qz, vx, vy, vz, wx, wy, wz], see Body3).
enum class DofKind { body_x, body_y, body_theta, joint, body3 };

struct Dof {
  std::string name;  // "body.x", "body.y", "body.theta" or the joint's name
  DofKind kind = DofKind::joint;
  int index = -1;    // the body (body_*) or joint (joint) it belongs to
  bool actuated = false;
};

// ---- contacts and loads -----------------------------------------------------------------

/// Two shapes that may touch. The contact normal points from A toward B (Pang & Tedrake 2018, sec.
/// III-B: n from alpha on A to beta on B) and phi's rate is n . (v_B - v_A).
struct ContactPair {
  int body_a = -1, body_b = -1;
  int shape_a = -1, shape_b = -1;
  double friction = 0.0;  // Coulomb coefficient mu
  int first_slot = 0;
  int slot_count = 0;
};

/// One fixed candidate contact: a feature point of one shape of the pair against the core
/// of the other. Beyond the margin a slot is inactive, never absent.
struct ContactSlot {
  int pair = -1;
  int feature_shape = -1;  // the shape that owns the feature point
  int feature_index = 0;   // which of its feature points
  int other_shape = -1;    // the shape whose core the point is queried against
  bool feature_on_b = false;
};

/// A constant or scheduled force and torque on a body (gravity is added separately, from
/// the world). The force acts at `point` (body frame).
struct Load {
  int body = -1;
  std::array<Schedule, 2> force;  // N, components in the world frame (or body frame)
  Schedule torque;                // N m
  Vec2<double> point{};
  bool body_frame = false;        // force components given in the body frame
};

// ---- body_on_plane (Xie & Chakraborty 2021; quasistep/core/geometry3.hpp, core/formulations/ecp_ncp/) -------------

/// A force and torque on the body of a body_on_plane world, three schedules each (N, N m);
/// the force acts at `point` (body frame, m, from the center of mass).
struct Load3 {
  std::array<Schedule, 3> force;
  std::array<Schedule, 3> torque;
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  bool body_frame = false;  // force and torque components given in the body frame
};

/// The one rigid body of a body_on_plane world, above the plane z = 0 (normal +z). Its frame
/// has its origin at the center of mass. Its State is the 13-vector
///   q = [x, y, z (m) | qw, qx, qy, qz (unit quaternion, body to world) |
///        vx, vy, vz (m/s, world) | wx, wy, wz (rad/s, world)],
/// a dynamic world carrying its velocity (n_u = 13, n_a = 0, no joints). The stepper uses the
/// convex hull of the given points (Xie & Chakraborty 2021, sec. 4, Conv(F)) as the planes
/// hull_normals[i]' x <= hull_offsets[i] in the body frame, or a cylinder: its two caps as
/// those planes and its curved side (HullCylinder) as one more, non-planar face.
struct HullCylinder {
  Eigen::Vector3d axis = Eigen::Vector3d::UnitX();     // unit, body frame
  Eigen::Vector3d center = Eigen::Vector3d::Zero();    // m, body frame
  double radius = 0, half_length = 0;                  // m
};

struct Body3 {
  int body = -1;  // its entry in Model::bodies (name, mass)
  Eigen::Matrix3d inertia = Eigen::Matrix3d::Identity();  // kg m^2, body frame, about the CM
  std::array<double, 13> initial{};                       // the initial State::q
  std::vector<Eigen::Vector3d> hull_vertices;  // extreme points of the hull (body frame)
  std::vector<Eigen::Vector3d> hull_normals;   // outward unit normals (body frame)
  std::vector<double> hull_offsets;            // m
  std::optional<HullCylinder> cylinder;        // a cylinder hull: hull_normals are its caps, its side is face
                                               // hull_normals.size(); hull_vertices is empty
  int given_points = 0;                        // points the scene listed
  std::vector<Eigen::Vector3d> given_vertices;  // those points as listed (body frame): the stepper
                                                // never reads them; replays draw a non-convex outline
  int dropped_points = 0;                      // of them, not extreme points of their hull
  std::vector<Load3> loads;
};

struct StepSettings {
  double h = 0.0;  // s
  int steps = 0;
};

// ---- the model --------------------------------------------------------------------------

struct Model {
  std::string name;
  World world;
  Formulation formulation{};  // the table's first row unless the scene says otherwise
  /// The formulation's own parameters (docs/scene-format.md, "model"), of the type its
  /// folder defines (e.g. HalmPosaParams in quasistep/core/formulations/halm_posa_lcp/),
  /// written by its scene reader; empty for a formulation without parameters. Read them
  /// with formulation_params<P>(m).
  std::any params;
  StepSettings step;

  std::vector<Body> bodies;
  std::vector<Shape> shapes;
  std::vector<Joint> joints;
  std::vector<Dof> dofs;        // (n_q) ordered [u | a]
  int n_u = 0;
  int n_a = 0;
  std::vector<int> body_order;  // bodies with parents before children (forward kinematics)

  std::vector<ContactPair> pairs;
  std::vector<ContactSlot> slots;
  double contact_margin = std::numeric_limits<double>::infinity();  // m; active iff phi <= margin

  std::vector<Load> loads;

  std::optional<Body3> body3;  // body_on_plane only

  int n_q() const { return n_u + n_a; }
  int n_slots() const { return static_cast<int>(slots.size()); }
  int find_body(std::string_view name) const;   // -1 when absent
  int find_joint(std::string_view name) const;  // -1 when absent
  /// "A/B", the name of a pair in outputs and parameter paths.
  std::string pair_name(int pair) const;
};

/// The largest size of a shape in m (m): over the shapes with a core, the largest distance
/// between two of its core points plus twice its rounding radius (a disk's diameter, a
/// capsule's or a polygon's length); 0 when m has none. A length of the scene's own, which
/// a change of the length unit scales with everything else: the unit an acceptance test
/// needs where the step's own lengths may all be zero.
double largest_shape_size(const Model& m);

/// Whether DOF e of m is a length (a free body's x or y, a prismatic joint); else an angle.
bool dof_is_length(const Model& m, int e);

/// Per DOF of m, the length that makes its row of a force balance an impulse: 1 for a
/// length DOF (the row is N s), largest_shape_size for an angle (the row is N m s; 1 when m
/// has no sized shape). Divided by these, the rows of RelativeBalance (quasistep/core/stepper.hpp)
/// are all in one unit, in any length unit of the scene.
std::vector<double> balance_row_lengths(const Model& m);

[[noreturn]] void throw_formulation_params_mismatch(const Model& m);

/// The parameters of type P that m's formulation holds (Model::params); throws
/// std::logic_error when they are of another type or absent (a formulation asking for
/// another's parameters is a bug).
template <class P>
const P& formulation_params(const Model& m) {
  if (const P* p = std::any_cast<P>(&m.params)) return *p;
  throw_formulation_params_mismatch(m);
}
template <class P>
P& formulation_params(Model& m) {
  if (P* p = std::any_cast<P>(&m.params)) return *p;
  throw_formulation_params_mismatch(m);
}

/// P's defaults (constant-initialised: reading them costs no initialisation guard).
template <class P>
inline constinit const P kDefaultFormulationParams{};

/// m's parameters of type P, or P's defaults when m's formulation holds none of that type:
/// what a stepper reads, so that one built for another formulation's model refuses its
/// input when it steps (as for a scene without them) instead of throwing.
template <class P>
const P& formulation_params_or_default(const Model& m) {
  const P* p = std::any_cast<P>(&m.params);
  return p ? *p : kDefaultFormulationParams<P>;
}

/// What changes while a world is stepped.
struct State {
  double t = 0.0;       // s
  int step = 0;         // steps taken; trajectory row `step` holds this state
  Eigen::VectorXd q;    // (n_q) [q_u; q_a]
  /// What a stepper carries from one step to the next besides q (step_memory_size(m)
  /// values; empty when it carries nothing), kept here so that a batch holds it per world:
  /// - anitescu_qp (AnitescuQp::memory_size): the impedance reference q̄_a of the actuated
  ///   joints (n_a, starting where they are), then in quasi-dynamic mode the previous step's
  ///   dual impulses beta in the fixed slot layout (2 n_slots,
  ///   quasistep/core/formulations/anitescu_qp/anitescu_lanes.hpp), the next PGS's warm start, zeros
  ///   at the start (a cold start);
  /// - pang_tedrake_miqp (PangTedrakeMiqp::memory_size): each slot's hypothetical
  ///   penetration phi_bar of the last solved step, the next step's elastic bound under
  ///   elastic_bound = previous (Pang & Tedrake 2018, sec. V.B), +inf where the slot was inactive; then
  ///   the last step's stage-1 answer, the next root's warm start; then the last solved
  ///   step's data and answer (a step with bitwise the same data reuses it); then the
  ///   sides of the last answer's pairs and whether its stage-2 polish settled the root;
  ///   all +inf at the start;
  /// - ecp_ncp (2 + 18 + hull faces): [1 when the rest is valid, the face k of the last step,
  ///   that step's MNCP solution], the next step's warm start; zeros at the start (cold).
  Eigen::VectorXd memory;
};

State initial_state(const Model& m);

/// The command layout every interface shares (`quasistep run --commands`, WorldParams::command,
/// Rollout's actions): one velocity per velocity-controlled joint, in the scene's `joints`
/// order, which is the order of q_a. These are those joints' names.
std::vector<std::string> command_names(const Model& m);
/// The size of State::memory for this model (0: the stepper carries nothing between steps).
int step_memory_size(const Model& m);

}  // namespace qs

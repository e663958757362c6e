// A quasistep scene as a full-dynamics MuJoCo model: the reference the quasistatic and
// quasi-dynamic steps are compared with (docs/fidelity.md).
//
// Vertical worlds: the scene's plane (x, y) is MuJoCo's x-z plane, gravity along -z; a planar
// angle theta (counter-clockwise in the scene) is a rotation about MuJoCo's -y axis.
// Tabletop worlds: the plane is MuJoCo's x-y plane over a table at z = 0, gravity along -z,
// angles about +z; the object stands on kSupportGrid^2 small spheres with the scene's support
// friction, and its shapes (and the robot's) stand kDepth above the table.
// A free body gets a slide joint per translational DOF and a hinge for theta (the planar
// joints of MuJoCo's own planar models; on a table also a vertical slide, so that gravity loads
// its support); a linked body hangs from its parent with its slide or hinge joint. Every
// contact pair of the scene is one explicit MuJoCo <pair> (nothing else collides), with the
// scene's friction. Shapes: disk -> sphere of the same radius (its section by the plane is
// the disk), box -> box, capsule -> capsule, segment -> capsule of radius kSegmentRadius,
// half-plane -> plane; other shapes are refused.
//
// The robot, which the quasistatic models treat as massless and gravity-compensated, gets
// the mass kLinkMass per linked body, gravity compensation (MuJoCo's own bias forces on the
// actuated joints) and, on every velocity-commanded joint, the impedance the Anitescu step
// models (Pang & Tedrake's slides): a spring of the scene's stiffness K_a to a reference
// integrated from the command as the step integrates it, with critical damping toward the
// reference velocity. Under Halm & Posa's model (halm_posa_lcp) the servo is their finite-gain
// velocity feedback instead: torques D (u - qdot), D = servo_gain B^-1. Effort-commanded
// joints get the scene's effort.
#pragma once

#include <Eigen/Dense>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "quasistep/core/model.hpp"
#include "quasistep/core/world_params.hpp"

struct mjModel_;
struct mjData_;

namespace fidelity {

/// Chosen for this reference, not from a paper (docs/fidelity.md lists them).
inline constexpr double kSegmentRadius = 0.001;  // m: a segment is a capsule this thin
inline constexpr double kLinkMass = 0.1;         // kg per linked body of the robot
inline constexpr double kDepth = 0.05;           // m: half the out-of-plane depth of a box
inline constexpr double kContactTimeConstant = 0.002;  // s: MuJoCo solref of every pair (default 0.02)
inline constexpr int kSupportGrid = 5;           // tabletop: support points per side of the object's grid
inline constexpr double kSupportRadius = 0.001;  // m: radius of each support sphere

struct MujocoOptions {
  double dt = 1e-4;        // s
  int noslip_iterations = 10;  // MuJoCo's post-solve that removes soft-contact creep in a grip
  double impratio = 10.0;      // friction-to-normal impedance ratio (elliptic cones)
  double servo_gain = 10.0;    // halm_posa_lcp: D = servo_gain B^-1 (N m s/rad for B = 1 on a revolute joint)
};

/// One sample of the trajectory: time and the scene's DOFs (q, in the scene's DOF order).
struct Sample {
  double t = 0;
  std::vector<double> q;
};

class MujocoWorld {
 public:
  /// Builds the MuJoCo model of scene model `m` with world parameters `p` (friction per pair,
  /// masses, K_a). Throws std::runtime_error with one line naming what cannot be translated.
  MujocoWorld(const qs::Model& m, const qs::WorldParams& p, const MujocoOptions& o = {});
  ~MujocoWorld();
  MujocoWorld(const MujocoWorld&) = delete;
  MujocoWorld& operator=(const MujocoWorld&) = delete;

  /// The generated MJCF (for inspection: `fidelity --mjcf SCENE`).
  const std::string& mjcf() const { return xml_; }

  /// Simulates from the scene's initial state to time t_end; returns the DOFs every
  /// `sample_every` steps (and at the end). Restarts from the initial state on each call.
  std::vector<Sample> run(double t_end, int sample_every);

  /// Where MuJoCo puts shape `shape`'s geom at the scene's initial state, in the scene's
  /// plane (its center: a disk's center, a box's middle); nothing for shapes without a
  /// center (points, segments, capsules, half-planes). For checking the translation.
  std::optional<qs::Vec2<double>> initial_center(int shape);

  /// The deepest overlap of any contact (MuJoCo's contacts are soft) during the last run (m).
  double max_penetration() const { return max_penetration_; }

 private:
  void reset();
  void read_q(std::vector<double>& q) const;

  const qs::Model& model_;
  qs::WorldParams params_;
  MujocoOptions options_;
  std::string xml_;
  mjModel_* m_ = nullptr;
  mjData_* d_ = nullptr;
  // Per scene DOF: its MuJoCo joint's qpos and dof addresses (MuJoCo's qpos is the DOF's value).
  std::vector<int> qpos_of_dof_, dof_of_dof_;
  std::vector<double> damping_;      // anitescu_qp: (n_q) critical damping of each velocity-commanded joint
  Eigen::MatrixXd servo_damping_;    // halm_posa_lcp: (n_a x n_a) D = servo_gain B^-1; empty otherwise
  double max_penetration_ = 0;       // of the last run
};

/// A body's rotational inertia about its center of mass (kg m^2): the scene's, else its first
/// shape's as a uniform plate (box m (w^2 + h^2) / 12, disk m r^2 / 2), else a 1 cm radius of
/// gyration. MuJoCo needs one for every moving body, the quasi-dynamic step for a free angle.
double inertia_of(const qs::Model& m, const qs::Body& b, double mass);

/// MuJoCo's version as "2.2.2".
std::string mujoco_version();

}  // namespace fidelity

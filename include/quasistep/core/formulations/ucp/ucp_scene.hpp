// The uncoupled complementarity problem of a scene (Pang, Trinkle & Lo 1996, sec. 2): the
// instantaneous quasistatic motion of the one free body of a `vertical` world, posed from
// the contact Jacobians at a configuration and solved by the kernels (quasistep/kernels/ucp.hpp).
#pragma once

#include <string>
#include <vector>

#include "quasistep/kernels/status.hpp"
#include "quasistep/kernels/ucp.hpp"

namespace qs {

struct Model;
struct State;

/// A scene's UCP and where its rows come from.
struct UcpScene {
  UcpData data;
  std::vector<int> slots;        // the model slot of each contact (n_c), in slot order
  std::vector<int> object_dofs;  // the q index of each object DOF (n_q): x, y, theta present
};

/// The UCP of a `vertical` scene with exactly one free body (the object) at state s: the
/// contacts are the slots touching the object (phi <= contact_tolerance, m), mu their pair's
/// friction; joints in model order, alpha the velocity-controlled ones with theta_dot =
/// their command at s.t, the others effort-controlled with tau = their command at s.t.
/// Rows come from the contact Jacobians (docs/contacts.md): W' is the object's columns and
/// J = -(the joints' columns), so that v = W' q_dot - J theta_dot is phi's rate along n and
/// t (n from A toward B is the paper's inward normal when the object is B; when it is A both
/// n and t flip, and so does the relative velocity: the rows are the same). g_obj is the
/// generalized external force on the object's DOFs (gravity at its centre of mass, the
/// scene's loads) and g_man = -(that on each joint, effort excluded), so that tau = J' c +
/// g_man is the effort that holds the joint (eq. (3)). bad_input with `why` when the world
/// is not vertical, the free body is missing or not unique, a touching slot does not involve
/// it, or nothing touches it.
Status ucp_from_scene(const Model& m, const State& s, UcpScene& out, std::string& why,
                      double contact_tolerance = 1e-6);

struct UcpSolveOptions;
/// `quasistep ucp --scene`: the UCP of a ucp scene at its initial state, solved and answered
/// as a problem file is (solve_ucp_to_json, quasistep/core/ucp_problem_file.hpp). Throws
/// std::invalid_argument with ucp_from_scene's reason when the state poses no UCP.
std::string solve_scene_ucp_to_json(const Model& m, const UcpSolveOptions& options);

}  // namespace qs

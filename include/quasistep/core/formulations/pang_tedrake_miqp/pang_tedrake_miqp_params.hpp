// The parameters of pang_tedrake_miqp (Pang & Tedrake 2018), read from a scene's "model" by
// core/formulations/pang_tedrake_miqp/pang_tedrake_miqp_params.cpp and held by the Model
// (Model::params, formulation_params).
#pragma once

namespace qs {

/// The widest search round a scene may ask for (a branch-and-bound holds one QP workspace per
/// node of a round).
inline constexpr int kMaxSearchRoundWidth = 64;

struct PangTedrakeMiqpParams {
  double stiffness_K = 0.0;             // Pang & Tedrake 2018, eq. (22), N/m, > 0 (the per-world model gain "stiffness")
  bool elastic_bound_previous = false;  // Pang & Tedrake 2018, sec. V.B: (23f) with the previous step's phi_bar
  /// Nodes per round of the branch-and-bound (BnbOptions::round_width, 1 ..
  /// kMaxSearchRoundWidth). It fixes the search, and with it the answer among tied optima,
  /// on any thread count; wider rounds let one world's search use more threads.
  int search_round_width = 8;
};

}  // namespace qs

// One MIQP step written in the CPLEX LP file format, with Pang & Tedrake's (2018) big-M encoding of
// each complementarity pair (eq. (20)/(23d)), so that any MIQP solver (Gurobi, CPLEX,
// SCIP, HiGHS) can cross-check quasistep's branch-and-bound on it.
#pragma once

#include <iosfwd>
#include <ostream>
#include <string>

#include "quasistep/core/model.hpp"
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"

namespace qs::io {

/// Writes the stage-1 problem of `v` (PangTedrakeMiqp::build) as an LP file. Variable
/// names: dq_<DOF name>, Pn_<slot>, Ptp_<slot>, Ptm_<slot>, Gamma_<slot>, z_<slot>_<t>
/// (t: 0 normal, 1 and 2 friction directions, 3 sliding; z = 1 lets the left side be
/// positive and forces the impulse to 0). The objective's constant |dqa_bar|^2 is stated in
/// a comment (not every reader accepts constants). big_m must exceed every left side and
/// impulse of every solution that matters; the caller chooses it.
void write_miqp_lp(const Model& m, const PangTedrakeMiqp::View& v, double big_m, const std::string& provenance,
                   std::ostream& out);

}  // namespace qs::io

namespace qs::cli {

/// `quasistep export-miqp`: a pang_tedrake_miqp scene's step N (after N - 1 solved steps) as
/// an LP file; the one command that exists for one formulation.
struct ExportOptions {
  std::string scene;
  int step = 1;
  std::string out;
  double big_m = 10.0;
};

/// Steps N - 1 MIQP steps, then writes step N's big-M MIQP (tools/cli/miqp_export.hpp).
int cmd_export_miqp(const ExportOptions& opt, std::ostream& out, std::ostream& err);

}  // namespace qs::cli

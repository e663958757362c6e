// One status vocabulary for every kernel (and every CLI output that reports a solve).
// Kernels never throw or print: they return a Status and fill a SolverStats.
#pragma once

#include <string_view>

namespace qs {

enum class Status {
  solved,             // a solution that passed the kernel's own residual check
  infeasible,         // proven to have no solution (with a certificate where the method has one)
  unbounded,          // an optimisation whose objective is proven unbounded (with a ray)
  not_found,          // the method stopped without a solution and without a proof (e.g. Lemke's
                      // secondary ray on a matrix class it does not cover, or cycling)
  iteration_limit,    // stopped at the iteration/pivot/node limit; see SolverStats::has_point
  numerical_failure,  // a pivot or factorisation went bad, or the residual check failed
  bad_input,          // the problem as given is malformed (sizes, NaN/Inf, capacity)
  not_run,            // nothing was attempted (the initial value of every result)
};

constexpr std::string_view to_string(Status s) {
  switch (s) {
    case Status::solved: return "solved";
    case Status::infeasible: return "infeasible";
    case Status::unbounded: return "unbounded";
    case Status::not_found: return "not_found";
    case Status::iteration_limit: return "iteration_limit";
    case Status::numerical_failure: return "numerical_failure";
    case Status::bad_input: return "bad_input";
    case Status::not_run: return "not_run";
  }
  return "unknown";
}

/// What a kernel did, alongside its Status.
struct SolverStats {
  int iterations = 0;       // pivots (Lemke, simplex), Newton steps, or branch-and-bound nodes
  double residual = 0.0;    // the kernel's scaled residual of the returned point (0 when none)
  double seconds = 0.0;     // wall time, when the caller asked for timing; else 0
  /// With iteration_limit: true when the returned point is feasible but not proven optimal
  /// (e.g. a branch-and-bound incumbent at its node limit).
  bool has_point = false;
};

}  // namespace qs

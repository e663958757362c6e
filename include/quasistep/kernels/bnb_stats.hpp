// What a branch-and-bound search (quasistep/kernels/branch_and_bound.hpp) did, in a header of its own
// so that the results that carry it (quasistep/kernels/lcp_enumeration.hpp, quasistep/kernels/ucp.hpp) do not
// bring the search and TBB into every file that includes them.
#pragma once

namespace qs {

struct BnbStats {
  long nodes = 0;        // relaxations evaluated
  long leaves = 0;       // nodes whose relaxation satisfied every disjunction
  long pruned = 0;       // open nodes dropped by bound (never evaluated)
  long dominated = 0;    // open nodes dropped as dominated by a candidate (never evaluated)
  long infeasible = 0;   // nodes whose relaxation was empty
  int max_depth = 0;     // most disjunctions fixed in an evaluated node
  int branched = 0;      // distinct disjunctions branched on (of K; the rest were never split)
  int rounds = 0;
  double seconds = 0;    // wall time
};

}  // namespace qs

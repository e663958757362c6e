// MPI for `quasistep mc` across processes (docs/cluster.md). MPI is started only when the
// program was launched by an MPI launcher (mpirun, mpiexec, srun --mpi): ordinary runs and
// the tests never start it. Without MPI in the build, or outside a launcher, this is one
// process of rank 0.
#pragma once

#include <string>

namespace qs::cli {

/// Whether the environment says an MPI launcher started this process.
bool started_by_mpi_launcher();

/// Starts MPI when launched by one (and the build has it); ends it at the end of main.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

/// This process's rank and the number of ranks (0 and 1 without MPI).
int mpi_rank();
int mpi_size();

/// The sum and the largest of a value over the ranks (the value itself without MPI).
double mpi_sum(double value);
double mpi_max(double value);

/// Ends every rank of the run with `code` (MPI_Abort), after a failure on this one: the
/// other ranks may be waiting for it. Returns without MPI (or with one rank).
void mpi_abort_all(int code);

}  // namespace qs::cli

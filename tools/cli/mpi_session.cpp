#include "tools/cli/mpi_session.hpp"

#include <cstdlib>

#ifdef QUASISTEP_HAVE_MPI
#include <mpi.h>
#endif

namespace qs::cli {
namespace {
[[maybe_unused]] bool g_started = false;  // read only when the build has MPI
int g_rank = 0, g_size = 1;
}  // namespace

bool started_by_mpi_launcher() {
  // Open MPI's mpirun, MPICH/Hydra and Slurm's PMI, PMIx (srun --mpi=pmix, Open MPI 5).
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

MpiSession::MpiSession([[maybe_unused]] int* argc, [[maybe_unused]] char*** argv) {
#ifdef QUASISTEP_HAVE_MPI
  if (!started_by_mpi_launcher()) return;
  MPI_Init(argc, argv);
  g_started = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
#endif
}

MpiSession::~MpiSession() {
#ifdef QUASISTEP_HAVE_MPI
  if (g_started) MPI_Finalize();
#endif
}

int mpi_rank() { return g_rank; }
int mpi_size() { return g_size; }

namespace {

// The value reduced over the ranks by `op` (the value itself without MPI or with one rank).
double reduce([[maybe_unused]] double value, [[maybe_unused]] bool sum) {
#ifdef QUASISTEP_HAVE_MPI
  if (g_started && g_size > 1) {
    double out = 0;
    MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, sum ? MPI_SUM : MPI_MAX, MPI_COMM_WORLD);
    return out;
  }
#endif
  return value;
}

}  // namespace

double mpi_sum(double value) { return reduce(value, true); }
double mpi_max(double value) { return reduce(value, false); }

void mpi_abort_all([[maybe_unused]] int code) {
#ifdef QUASISTEP_HAVE_MPI
  if (g_started && g_size > 1) MPI_Abort(MPI_COMM_WORLD, code);
#endif
}

}  // namespace qs::cli

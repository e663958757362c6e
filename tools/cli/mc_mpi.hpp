// `quasistep mc` over MPI ranks (docs/cluster.md). The study's samples are cut into chunks of
// McOptions::chunk samples; chunk c is run by rank c mod R with the same counter-based sample
// streams as one process, and rank 0 takes the chunks in sample order (its own, and the
// others' as messages), so its summary, sample CSV and report are bitwise those of a
// single-process run, in memory bounded by a chunk per rank.
#pragma once

#include "quasistep/batch/monte_carlo.hpp"
#include "quasistep/core/scene.hpp"

namespace qs::cli {

/// Rank 0's runner for run_mc: runs its chunks, receives the others', and hands every chunk's
/// records to o.records_sink in sample order. Returns the whole study's run (its first
/// samples' paths, the wall time).
McRun run_monte_carlo_over_ranks(const Scene& scene, const McOptions& o);

/// Every other rank: runs its chunks and sends their records to rank 0.
void run_monte_carlo_chunks_for_rank0(const Scene& scene, const McOptions& o);

}  // namespace qs::cli

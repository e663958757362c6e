#include "tools/cli/mc_mpi.hpp"

#include <mpi.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/cli/mpi_session.hpp"

namespace qs::cli {
namespace {

// A chunk's records as doubles, one row per sample: sample, each parameter, outcome, x, y,
// theta, failed_step, status (integers below 2^53, so exact).
std::vector<double> pack(const McRecords& r) {
  const int np = r.parameter_count;
  std::vector<double> buf;
  buf.reserve(static_cast<std::size_t>(r.size()) * static_cast<std::size_t>(np + 7));
  for (long i = 0; i < r.size(); ++i) {
    const auto u = static_cast<std::size_t>(i);
    buf.push_back(static_cast<double>(r.sample[u]));
    for (int p = 0; p < np; ++p) buf.push_back(r.values[u * static_cast<std::size_t>(np) + static_cast<std::size_t>(p)]);
    buf.push_back(static_cast<double>(static_cast<int>(r.outcome[u])));
    for (double v : r.final_pose[u]) buf.push_back(v);
    buf.push_back(static_cast<double>(r.failed_step[u]));
    buf.push_back(static_cast<double>(static_cast<int>(r.status[u])));
  }
  return buf;
}

McRecords unpack(const std::vector<double>& buf, int np) {
  McRecords r;
  r.parameter_count = np;
  const std::size_t row = static_cast<std::size_t>(np) + 7;
  if (buf.size() % row != 0) throw std::runtime_error("mc over MPI: a rank sent a chunk of the wrong size");
  for (std::size_t at = 0; at < buf.size(); at += row) {
    r.sample.push_back(static_cast<long>(buf[at]));
    for (int p = 0; p < np; ++p) r.values.push_back(buf[at + 1 + static_cast<std::size_t>(p)]);
    const std::size_t k = at + 1 + static_cast<std::size_t>(np);
    r.outcome.push_back(static_cast<Outcome>(static_cast<int>(buf[k])));
    r.final_pose.push_back({buf[k + 1], buf[k + 2], buf[k + 3]});
    r.failed_step.push_back(static_cast<int>(buf[k + 4]));
    r.status.push_back(static_cast<Status>(static_cast<int>(buf[k + 5])));
  }
  return r;
}

long chunk_count(const McOptions& o) { return (o.samples + o.chunk - 1) / o.chunk; }

// One tag for every chunk: a rank sends its chunks in sample order with MPI_Ssend, which
// returns only when rank 0 has taken the message, so each rank has at most one chunk in
// flight and rank 0's receive from that rank is always the chunk it expects (chunk numbers
// as tags could pass MPI_TAG_UB, only 32767 by the standard, in a long study).
constexpr int kChunkTag = 1;

// Chunk c of the study: shard c of as many shards as chunks (contiguous, in sample order).
McRun run_chunk(const Scene& scene, const McOptions& o, long c) {
  McOptions oc = o;
  oc.shard = static_cast<int>(c);
  oc.shards = static_cast<int>(chunk_count(o));
  oc.records_sink = {};
  oc.progress = {};
  oc.trajectories = c == 0 ? o.trajectories : 0;  // the first samples' paths
  return run_monte_carlo(scene, oc);
}

}  // namespace

McRun run_monte_carlo_over_ranks(const Scene& scene, const McOptions& o) {
  if (o.shards != 1) throw std::runtime_error("--shard: a study over MPI ranks splits its samples by itself; drop --shard");
  if (chunk_count(o) > 2147483647L) throw std::runtime_error("mc over MPI: more than 2^31 chunks of samples");
  const int ranks = mpi_size();
  const long chunks = chunk_count(o);
  const int np = static_cast<int>(scene.uncertainty.size());
  McRun run;
  run.study = make_study(scene, o);
  run.count = o.samples;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<double> buf;
  for (long c = 0; c < chunks; ++c) {
    const int owner = static_cast<int>(c % ranks);
    if (owner == 0) {
      McRun part = run_chunk(scene, o, c);
      if (c == 0) {
        run.trajectories = std::move(part.trajectories);
        run.path = part.path;
      }
      if (o.records_sink) o.records_sink(part.records);
    } else {
      MPI_Status st;
      MPI_Probe(owner, kChunkTag, MPI_COMM_WORLD, &st);
      int n = 0;
      MPI_Get_count(&st, MPI_DOUBLE, &n);
      buf.resize(static_cast<std::size_t>(n));
      MPI_Recv(buf.data(), n, MPI_DOUBLE, owner, kChunkTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (o.records_sink) o.records_sink(unpack(buf, np));
    }
    if (o.progress) o.progress(std::min(o.samples, (c + 1) * o.chunk), o.samples);
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.path += " (" + std::to_string(ranks) + " MPI ranks)";
  return run;
}

void run_monte_carlo_chunks_for_rank0(const Scene& scene, const McOptions& o) {
  const int rank = mpi_rank(), ranks = mpi_size();
  for (long c = rank; c < chunk_count(o); c += ranks) {
    const std::vector<double> buf = pack(run_chunk(scene, o, c).records);
    // Blocks until rank 0 takes it: each rank holds at most one chunk's records.
    MPI_Ssend(buf.data(), static_cast<int>(buf.size()), MPI_DOUBLE, 0, kChunkTag, MPI_COMM_WORLD);
  }
}

}  // namespace qs::cli

// The per-sample CSV of `quasistep mc` and its reader for `quasistep mc-merge`
// (docs/monte-carlo.md, "Sample CSV"). After the provenance line, "# format: mc-samples 1"
// and the header comments carry the study's identity
// (scene hash, model, seed, N, M, success criterion, each parameter and its distribution,
// numbers written to round-trip exactly) and the shard K/M; one row per sample:
//   sample, <each parameter>, outcome, x, y, theta, failed_step, status
#pragma once

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include "quasistep/batch/monte_carlo.hpp"

namespace qs::io {

/// A sample CSV that cannot be read or does not belong with the others: what() is one line
/// naming the file (and line) and the cause.
class McCsvError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Writes a run's CSV after the provenance line every output file starts with
/// (io::provenance_line); that line is informational (shards may load the scene from
/// different paths): the study's identity is in the "# key: value" lines after it.
void write_mc_csv(const McRun& run, const std::string& provenance, std::ostream& out);
/// The same file in pieces, for a streamed study: the header (everything before the first
/// row), then the rows of each chunk of records as they arrive.
void write_mc_csv_header(const McStudy& study, int shard, const std::string& provenance, std::ostream& out);
void write_mc_csv_rows(const McRecords& records, std::ostream& out);

struct McShard {
  std::string file;
  McStudy study;
  int shard = 0;
  McRecords records;
};

/// Reads one CSV; `name` names it in errors. Checks the header, every row (parameter
/// values finite, outcome and status words known) and that the rows are exactly the
/// samples of its shard, each once.
McShard read_mc_csv(std::istream& in, const std::string& name);

/// Merges the shards of one study: refuses files of different studies (naming the field
/// that differs), two files of one shard (overlap) and a missing shard. Records come out in
/// sample order.
McRecords merge_mc_shards(const std::vector<McShard>& shards, McStudy& study);

}  // namespace qs::io

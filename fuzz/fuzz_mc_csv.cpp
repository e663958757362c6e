// Fuzz target: the `quasistep mc-merge` sample-CSV reader, and the merge of the one shard it
// read. Any input must either be read or throw McCsvError; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "quasistep/batch/mc_csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    std::vector<qs::io::McShard> shards{qs::io::read_mc_csv(in, "fuzz.csv")};
    qs::McStudy study;
    const qs::McRecords records = qs::io::merge_mc_shards(shards, study);
    (void)records;
  } catch (const qs::io::McCsvError&) {
  }
  return 0;
}

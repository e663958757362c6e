#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "tools/cli/cli.hpp"
#include "tools/cli/mpi_session.hpp"
#include "quasistep/core/output_file.hpp"

int main(int argc, char** argv) {
  qs::io::install_interrupt_cleanup();
  // MPI only when an MPI launcher started the program (docs/cluster.md).
  qs::cli::MpiSession mpi(&argc, &argv);
  int code = 0;
  const bool all_ranks = argc > 1 && (std::strcmp(argv[1], "mc") == 0 || std::strcmp(argv[1], "throughput") == 0);
  if (qs::cli::mpi_rank() > 0 && !all_ranks) {
    code = 0;  // a command other than mc and throughput runs on rank 0 (its outputs are written once)
  } else {
    code = qs::cli::main(argc, argv, std::cout, std::cerr);
  }
  // A failure on one rank ends them all (the others may wait for it), with its message.
  if (code != 0) {
    std::cout.flush();
    std::cerr.flush();
    qs::cli::mpi_abort_all(code);
  }
  // What went to standard output is part of the answer: a write that failed (a full disk,
  // /dev/full, a closed pipe) fails the command rather than losing the answer silently.
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  std::cout.flush();
  if (!flushed || !std::cout || std::ferror(stdout)) {
    // A command that failed has said why (a failed `--out -` among them): one line, not two.
    if (code != 0) return code;
    std::fprintf(stderr, "quasistep: cannot write standard output: %s\n", errno ? std::strerror(errno) : "write error");
    return qs::cli::kInputError;
  }
  return code;
}

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "tools/cli.hpp"
#include "tools/output_file.hpp"

int main(int argc, char** argv) {
  qs::io::install_interrupt_cleanup();
  int code = qs::cli::main(argc, argv, std::cout, std::cerr);
  // What went to standard output is part of the answer: a write that failed (a full disk,
  // /dev/full, a closed pipe) fails the command rather than losing the answer silently.
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  std::cout.flush();
  if (!flushed || !std::cout || std::ferror(stdout)) {
    std::fprintf(stderr, "quasistep: cannot write standard output: %s\n", errno ? std::strerror(errno) : "write error");
    return qs::cli::kInputError;
  }
  return code;
}

#include <iostream>

#include "tools/cli.hpp"

int main(int argc, char** argv) { return qs::cli::main(argc, argv, std::cout, std::cerr); }

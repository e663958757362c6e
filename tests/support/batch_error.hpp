// The message of the BatchError a call throws, or "(no BatchError)": for the batch tests'
// bad-input cases.
#pragma once

#include <string>

#include "quasistep/batch/world_batch.hpp"

namespace qs::test {

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const BatchError& e) {
    return e.what();
  }
  return "(no BatchError)";
}

}  // namespace qs::test

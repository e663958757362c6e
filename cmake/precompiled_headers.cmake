# Precompiled headers: the third-party headers that nearly every file includes, parsed once
# per target instead of once per file. Parsing them (Eigen, <experimental/simd>,
# nlohmann/json, GoogleTest: about 280,000 lines after preprocessing) was three quarters of
# the compile time of a small file. Only headers from outside the project are precompiled,
# so an edit to a project header rebuilds what includes it and nothing more, and every file
# still has to include what it uses (the GCC 12 build, which has no precompiled headers,
# checks that). What the code computes is the same either way: a precompiled header
# changes how the compiler reads declarations.
#
# tools/build-times shows where the time goes now.
option(QUASISTEP_PRECOMPILE_HEADERS "Precompile the third-party headers of each target (faster builds)" ON)

# The kernels: Eigen as the project configures it (quasistep/kernels/eigen.hpp first), the lanes'
# <experimental/simd>, TBB's loops and the standard library.
set(QS_PCH_KERNELS
  [["quasistep/kernels/eigen.hpp"]] <Eigen/Dense> [["quasistep/kernels/simd.hpp"]]
  <algorithm> <array> <chrono> <cmath> <cstddef> <cstdint> <cstring> <functional> <limits>
  <memory> <numeric> <optional> <random> <span> <string> <string_view> <type_traits> <utility>
  <vector> <tbb/blocked_range.h> <tbb/parallel_for.h> <tbb/task_arena.h>)
# Everything above the kernels reads and writes JSON and files.
set(QS_PCH_LIBRARY ${QS_PCH_KERNELS}
  <nlohmann/json.hpp> <charconv> <filesystem> <fstream> <iomanip> <iostream> <map> <set> <sstream>
  <stdexcept>)
set(QS_PCH_TESTS ${QS_PCH_LIBRARY} <gtest/gtest.h>)

# GCC 12 forgets `#pragma GCC diagnostic` regions that a precompiled header holds (fixed in
# GCC 13), and the intrinsics prelude (CMakeLists.txt says why it is needed) is such a
# region: with the prelude precompiled, an AVX-512 build fails on thousands of false
# -Wmaybe-uninitialized reports inside the intrinsics. GCC 12 therefore compiles without
# precompiled headers; its test suite is still compiled in unity batches (tests/CMakeLists.txt).
set(QS_PCH_SUPPORTED ON)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  set(QS_PCH_SUPPORTED OFF)
endif()

# qs_precompile_headers(TARGET LIST): TARGET precompiles the headers of QS_PCH_<LIST>.
function(qs_precompile_headers target list)
  if(QUASISTEP_PRECOMPILE_HEADERS AND QS_PCH_SUPPORTED)
    target_precompile_headers(${target} PRIVATE ${QS_PCH_${list}})
  endif()
endfunction()

# qs_reuse_precompiled_headers(TARGET FROM): TARGET, compiled with the same flags as FROM,
# uses FROM's precompiled header rather than building its own.
function(qs_reuse_precompiled_headers target from)
  if(QUASISTEP_PRECOMPILE_HEADERS AND QS_PCH_SUPPORTED)
    target_precompile_headers(${target} REUSE_FROM ${from})
  endif()
endfunction()

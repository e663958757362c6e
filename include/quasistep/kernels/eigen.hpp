// Eigen, configured so that every type of the library has one layout on every x86
// instruction set.
//
// Eigen aligns a fixed-size object (and the fixed maximum storage of the kernels' matrices)
// to the widest vector register the compiler may use: 16 bytes with SSE2, 32 with AVX, 64
// with AVX-512. A program built without -march=native would then lay out the library's
// classes differently from the library itself, and crash. Fixing both bounds at 64 bytes
// gives every build the layout of an AVX-512 build; on narrower vectors 64-byte aligned
// data is also aligned for them, so Eigen takes the same code paths (and the same numbers)
// as with its own default. The build sets both (CMakeLists.txt, quasistep_flags); a
// program that includes Eigen before the first quasistep header with other values gets
// the static_assert below instead of a crash.
#pragma once

#ifndef EIGEN_MAX_ALIGN_BYTES
#define EIGEN_MAX_ALIGN_BYTES 64
#endif
#ifndef EIGEN_MAX_STATIC_ALIGN_BYTES
#define EIGEN_MAX_STATIC_ALIGN_BYTES 64
#endif

#include <Eigen/Core>

static_assert(EIGEN_MAX_ALIGN_BYTES == 64 && EIGEN_MAX_STATIC_ALIGN_BYTES == 64,
              "quasistep needs Eigen's alignment bounds at 64 bytes: define EIGEN_MAX_ALIGN_BYTES=64 and "
              "EIGEN_MAX_STATIC_ALIGN_BYTES=64, or include a quasistep header before any Eigen header");

// Eigen, configured so that every type of the library has one layout, and every sum one
// order, on every x86 instruction set.
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
//
// Eigen's own vectorisation is off (EIGEN_DONT_VECTORIZE): its vectorised sums (dot
// products, matrix-vector products, the factorizations' inner products) keep one partial
// sum per register lane, 2 with SSE2, 4 with AVX2, 8 with AVX-512, so the same product
// rounded differently on every instruction set, and a world's trajectory with it. Scalar,
// each sum adds its terms in one order everywhere. The kernels' hot loops are explicit
// vectors of their own (quasistep/kernels/lane.hpp: element-wise work at the register's
// width, sums in blocks of a fixed width). A program must not instantiate Eigen's templates
// vectorised beside the library's scalar ones: the linker keeps one copy of each, and the
// library would compute with the program's. Hence the #error below.
#pragma once

#ifndef EIGEN_DONT_VECTORIZE
#define EIGEN_DONT_VECTORIZE
#endif

#ifndef EIGEN_MAX_ALIGN_BYTES
#define EIGEN_MAX_ALIGN_BYTES 64
#endif
#ifndef EIGEN_MAX_STATIC_ALIGN_BYTES
#define EIGEN_MAX_STATIC_ALIGN_BYTES 64
#endif

// GCC 12 warns falsely inside Eigen's unvectorised condition estimate (rcond(): "v may be
// used uninitialized" for the vector it has just solved for; the estimate is a function of
// its own, not inlined into the caller, so only a region around Eigen's lines silences it).
// Only that warning, only for Eigen/Core's lines and the calls inlined through them.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>
#pragma GCC diagnostic pop
#else
#include <Eigen/Core>
#endif

static_assert(EIGEN_MAX_ALIGN_BYTES == 64 && EIGEN_MAX_STATIC_ALIGN_BYTES == 64,
              "quasistep needs Eigen's alignment bounds at 64 bytes: define EIGEN_MAX_ALIGN_BYTES=64 and "
              "EIGEN_MAX_STATIC_ALIGN_BYTES=64, or include a quasistep header before any Eigen header");
#ifdef EIGEN_VECTORIZE
#error "quasistep needs Eigen unvectorised (one order of every sum on every instruction set): define EIGEN_DONT_VECTORIZE, or include a quasistep header before any Eigen header"
#endif

#!/usr/bin/env bash
# The library as its users get it. Installs this build into a temporary prefix, then builds
# tests/consumer/trajectory.cpp out of tree twice: with find_package (CMake, no flags of its
# own: -O0 for the x86-64 baseline) and with pkg-config (-O2 -march=native, as a user tuning
# for the machine might, instantiating template code the library uses too: Lemke<64>, Eigen
# products). Both must print every example's trajectory exactly as `quasistep run --out`.
# Last, a parent project that includes quasistep with add_subdirectory is configured: its
# build type stays unset and its program's compile command carries none of quasistep's own
# flags (-march, -Werror).
# usage: run.sh BUILD_DIR SOURCE_DIR WORK_DIR CXX LIBDIR EXAMPLE.json...
#   LIBDIR: CMAKE_INSTALL_LIBDIR (lib, lib64 or lib/<multiarch>)
set -euo pipefail
build=$1 source=$2 work=$3 cxx=$4 libdir=$5
shift 5
command -v pkg-config >/dev/null || { echo "pkg-config is not installed (tools/bootstrap installs pkgconf)" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in include/quasistep/quasistep.hpp include/quasistep/version.hpp include/quasistep/core/model.hpp \
         bin/quasistep $libdir/cmake/quasistep/quasistep-config.cmake \
         $libdir/cmake/quasistep/quasistep-config-version.cmake $libdir/pkgconfig/quasistep.pc; do
  [ -e "$prefix/$f" ] || { echo "not installed: $f" >&2; exit 1; }
done

# 1. find_package: the package alone (no -march, no option of the user's), unoptimised (-O0).
cmake -S "$source/tests/consumer" -B "$work/cmake" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake.log"
cmake --build "$work/cmake" >>"$work/cmake.log"

# 2. pkg-config, tuned for this machine, sharing template code with the library.
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
[ "$(pkg-config --modversion quasistep)" = "$("$prefix/bin/quasistep" --version | head -1 | cut -d' ' -f2)" ] ||
  { echo "pkg-config's version is not the CLI's" >&2; exit 1; }
# shellcheck disable=SC2046  # pkg-config's output is a list of words
"$cxx" -std=c++20 -O2 -march=native -DQS_CONSUMER_SHARES_TEMPLATES -I "$source/tests/consumer" \
  "$source/tests/consumer/trajectory.cpp" \
  -o "$work/trajectory_pkgconfig" $(pkg-config --cflags --libs quasistep)

# Both programs against the installed CLI: the DOF columns of every row, byte for byte.
for scene in "$@"; do
  name=$(basename "$scene" .json)
  "$prefix/bin/quasistep" run "$scene" --out "$work/$name.cli.csv" 2>/dev/null
  for program in "$work/cmake/trajectory" "$work/trajectory_pkgconfig"; do
    "$program" "$scene" >"$work/$name.program.csv"
    columns=$(head -1 "$work/$name.program.csv" | tr ',' '\n' | wc -l)
    if ! grep -v '^#' "$work/$name.cli.csv" | cut -d, -f"1-$columns" | cmp -s - "$work/$name.program.csv"; then
      echo "$name: $program's trajectory differs from quasistep run's:" >&2
      grep -v '^#' "$work/$name.cli.csv" | cut -d, -f"1-$columns" | diff - "$work/$name.program.csv" | head -5 >&2
      exit 1
    fi
  done
  echo "$name: the find_package and pkg-config programs step it as quasistep run does"
done

# 3. add_subdirectory into a parent project that chose no build type (configure only).
cmake -S "$source/tests/consumer/subdirectory" -B "$work/subdirectory" -G Ninja \
  -DCMAKE_CXX_COMPILER="$cxx" -DQUASISTEP_SOURCE_DIR="$source" >"$work/subdirectory.log"
# compile_commands.json lists each entry's "directory", "command", then "file".
command=$(grep -B1 '"file": ".*/trajectory.cpp"' "$work/subdirectory/compile_commands.json" | head -1)
[ -n "$command" ] || { echo "no compile command for the parent's program" >&2; exit 1; }
case "$command" in
  *-march=* | *-Werror*) echo "quasistep's own flags reach the parent's program: $command" >&2; exit 1 ;;
esac
case "$command" in
  *EIGEN_MAX_ALIGN_BYTES=64*EIGEN_DONT_VECTORIZE* | *EIGEN_DONT_VECTORIZE*EIGEN_MAX_ALIGN_BYTES=64*) ;;
  *) echo "the parent's program misses quasistep's Eigen definitions: $command" >&2; exit 1 ;;
esac
echo "add_subdirectory: the parent's build type and flags are its own"

#!/bin/bash
# One example stepped by two builds of the CLI: the one built for this machine's
# instruction set (QUASISTEP_ARCH, normally native) and one built for the x86-64 baseline
# (SSE2: lanes of 2 worlds, 128-bit registers). Every number they print or write must be
# byte for byte the same: the `run` trajectory and contact forces, the lanes' `throughput
# --hash` over 64 worlds with the scene's overrides, for a Monte Carlo example the study's
# summary and sample CSV, and for a planning example (when both builds have OMPL) the plan
# `plan --max-propagations` finds. Timings (standard error) are not compared.
#
# usage: same_numbers.sh NATIVE_CLI BASELINE_CLI WORK_DIR SCENE
set -euo pipefail
native=$1
baseline=$2
work=$3
scene=$4
name=$(basename "$scene" .json)
if [ ! -x "$baseline" ]; then
  echo "$baseline not built (it is part of the full build: cmake --build build)"
  exit 77
fi
# The second build must be what it claims: SSE2, lanes of 2 (a -march from elsewhere would
# make it a second native build, and the comparison empty).
if ! "$baseline" --version | grep -q "lanes: 2 worlds per lane group (SSE2)"; then
  echo "$baseline is not a build for the x86-64 baseline: $("$baseline" --version | head -2 | tail -1)"
  exit 1
fi
rm -rf "${work:?}/$name"
for side in native baseline; do
  cli=${!side}
  mkdir -p "$work/$name/$side"
  cd "$work/$name/$side"
  # Relative output names: the CLI's messages name them, the same on both sides.
  "$cli" run "$scene" --out trajectory.csv --forces forces.csv >run.txt 2>&1  # its summary too
  "$cli" throughput "$scene" --worlds 64 --hash 2>/dev/null | grep '^  hash' >throughput_hash.txt
  if [[ $name == mc_* ]]; then
    "$cli" mc "$scene" --samples 256 --seed 1 --out samples.csv >mc.txt 2>/dev/null
  fi
  # The budgets of the plan tests (tests/planning/plan_cli_test.cpp): both find a plan.
  if [[ $name == plan_* ]] && "$native" --version | grep -q "OMPL planner yes" &&
     "$baseline" --version | grep -q "OMPL planner yes"; then
    budget=200000
    [[ $name == plan_push ]] && budget=3000000
    "$cli" plan "$scene" --out plan.csv --seed 1 --max-propagations "$budget" --time 600 --threads 1 2>/dev/null
  fi
done
cd "$work/$name"
status=0
for f in native/*; do
  f=${f#native/}
  if ! cmp -s "native/$f" "baseline/$f"; then
    echo "$name: $f differs between the native build and the x86-64 baseline build:"
    diff "native/$f" "baseline/$f" | head -6 || true
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "$name: every output bitwise the same ($(ls native | tr '\n' ' '))"
exit "$status"

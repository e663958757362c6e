#!/bin/bash
# One example stepped by two builds of the CLI: the one built for this machine's
# instruction set (QUASISTEP_ARCH, normally native) and one built for the x86-64 baseline
# (SSE2: lanes of 2 worlds, 128-bit registers). Every number they print or write must be
# byte for byte the same: the `run` trajectory and contact forces, the lanes' `throughput
# --hash` over 64 worlds with the scene's overrides, and for a Monte Carlo example the
# study's summary and sample CSV. Timings (standard error) are not compared.
#
# usage: same_numbers.sh NATIVE_CLI BASELINE_CLI WORK_DIR SCENE
set -euo pipefail
native=$1
baseline=$2
work=$3
scene=$4
name=$(basename "$scene" .json)
rm -rf "${work:?}/$name"
for side in native baseline; do
  cli=${!side}
  mkdir -p "$work/$name/$side"
  cd "$work/$name/$side"
  # Relative output names: the CLI's messages name them, the same on both sides.
  "$cli" run "$scene" --out trajectory.csv --forces forces.csv >run.txt 2>/dev/null
  "$cli" throughput "$scene" --worlds 64 --hash 2>/dev/null | grep '^  hash' >throughput_hash.txt
  if [[ $name == mc_* ]]; then
    "$cli" mc "$scene" --samples 256 --seed 1 --out samples.csv >mc.txt 2>/dev/null
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

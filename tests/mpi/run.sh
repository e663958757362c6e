#!/usr/bin/env bash
# `mpirun -np R quasistep mc` against one process (docs/cluster.md): for R = 1, 2 and 3 ranks
# (more ranks than this machine's cores: --oversubscribe) the summary on stdout and the sample
# CSV are bitwise those of a single-process run with the same seed; a bad output path ends
# every rank with a non-zero exit, the cause on stderr and no file; --shard is refused.
# usage: run.sh MPIRUN QUASISTEP SCENE WORK
set -euo pipefail
mpirun=$1 quasistep=$2 scene=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
cd "$work"
# CI runs as root, which Open MPI refuses unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
args=(mc "$scene" --samples 9000 --seed 11 --threads 1)
"$quasistep" "${args[@]}" --out one.csv >one.txt 2>one.err
for ranks in 1 2 3; do
  "$mpirun" --oversubscribe -np "$ranks" "$quasistep" "${args[@]}" --out "r$ranks.csv" >"r$ranks.txt" 2>"r$ranks.err"
  cmp one.txt "r$ranks.txt" || { echo "$ranks ranks: the summary differs from one process's" >&2; exit 1; }
  cmp one.csv "r$ranks.csv" || { echo "$ranks ranks: the sample CSV differs from one process's" >&2; exit 1; }
  grep -q "samples 0..8999" "r$ranks.err" || { echo "$ranks ranks: no timing line" >&2; exit 1; }
done
if "$mpirun" --oversubscribe -np 2 "$quasistep" "${args[@]}" --out missing/x.csv >bad.txt 2>bad.err; then
  echo "a bad output path did not fail the run" >&2
  exit 1
fi
grep -q 'folder "missing" does not exist' bad.err || { echo "no cause on stderr: $(cat bad.err)" >&2; exit 1; }
[ ! -s bad.txt ] || { echo "a failed run printed a summary" >&2; exit 1; }
if "$mpirun" --oversubscribe -np 2 "$quasistep" "${args[@]}" --shard 0/2 >shard.txt 2>shard.err; then
  echo "--shard under MPI was not refused" >&2
  exit 1
fi
grep -q "drop --shard" shard.err || { echo "no cause for --shard: $(cat shard.err)" >&2; exit 1; }
# throughput: every rank steps the worlds; rank 0 reports them summed, with the same hash.
tp=(throughput "$scene" --worlds 64 --steps 10 --threads 1 --hash)
"$quasistep" "${tp[@]}" >tp1.txt
"$mpirun" --oversubscribe -np 2 "$quasistep" "${tp[@]}" >tp2.txt
grep -q "world-steps   640 (" tp1.txt && grep -q "world-steps   1280 (" tp2.txt ||
  { echo "throughput over 2 ranks does not sum the world-steps: $(cat tp2.txt)" >&2; exit 1; }
[ "$(grep hash tp1.txt)" = "$(grep hash tp2.txt)" ] || { echo "throughput's hash differs over ranks" >&2; exit 1; }
[ "$(grep -c '^throughput:' tp2.txt)" = 1 ] || { echo "more than one rank reported" >&2; exit 1; }

# A rank killed by the system: the launcher ends the run with a non-zero exit and rank 0's
# output, still a temporary file, is removed (nothing is left looking complete).
slow=(mc "$(dirname "$scene")/mc_grasp_miqp.json" --samples 40000 --seed 987654321 --threads 1 --out killed.csv)
"$mpirun" --oversubscribe -np 2 "$quasistep" "${slow[@]}" >killed.txt 2>killed.err &
launcher=$!
sleep 3
pkill -9 -n -f "seed 987654321" || true
if wait "$launcher"; then
  echo "a killed rank did not fail the run" >&2
  exit 1
fi
if ls -a | grep -q "killed.csv"; then
  echo "a killed run left an output behind: $(ls -a | grep killed.csv)" >&2
  exit 1
fi
echo "mc over 1, 2 and 3 MPI ranks: bitwise the single-process summary and CSV; failures end every rank"

#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time:  run_fuzzer.sh FUZZER WORKDIR SEED_DIR...
# New inputs go to WORKDIR/corpus (emptied first, so every run starts from the same seeds
# with the same -seed); a failing input is written to WORKDIR/artifacts/. Any crash, input
# slower than 2 s, leak, out-of-memory or sanitizer report makes the exit status non-zero.
# QS_FUZZ_SECONDS overrides the 60 s budget.
set -euo pipefail
fuzzer="$1"
work="$2"
shift 2
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
status=0
"$fuzzer" -seed=1 -max_total_time="${QS_FUZZ_SECONDS:-60}" -timeout=2 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" "$@" || status=$?
if [ "$status" -ne 0 ]; then
  echo "run_fuzzer: $(basename "$fuzzer") failed (exit $status); the input is in $work/artifacts/;" \
    "keep it in fuzz/regressions/$(basename "$fuzzer" | sed 's/^fuzz_//')/ once fixed" >&2
fi
exit "$status"

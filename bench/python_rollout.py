#!/usr/bin/env python3
"""The Python package's overhead: quasistep.rollout from Python against Rollout::propagate
from C++ (bench_batch's `rollout` benchmark), on the same worlds, commands and threads:
1,024 worlds x 100 steps, every state kept. Prints one row per case with both medians and
their ratio (Python / C++).

usage: PYTHONPATH=build/python python3 bench/python_rollout.py [--build DIR] [--repetitions K]
                                                               [--json] [--smoke]
  --smoke  a few worlds and steps, one repetition: checks the script runs (the test suite's
           Python.BenchRolloutRuns); its times mean nothing.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import quasistep

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = [("mpc_push", 0), ("mpc_push", 1), ("anitescu_grasp", 0), ("anitescu_grasp", 1)]


def commands(worlds, steps, n_a):
    """bench_batch.cpp's rollout_command(i, l, a) = 0.05 sin(0.1 l + 0.7 a + 0.013 i)."""
    i = np.arange(worlds)[:, None, None]
    l = np.arange(steps)[None, :, None]
    a = np.arange(n_a)[None, None, :]
    return 0.05 * np.sin(0.1 * l + 0.7 * a + 0.013 * i)


def python_ms(example, worlds, steps, threads, repetitions):
    scene = quasistep.load(os.path.join(ROOT, "examples", example + ".json"))
    q0 = np.tile(scene.initial_state(), (worlds, 1))
    c = commands(worlds, steps, len(scene.command_names))
    quasistep.rollout(scene, q0, c, threads=threads)  # warm: the engine is built once per scene
    times = []
    for _ in range(repetitions):
        start = time.perf_counter()
        states, status = quasistep.rollout(scene, q0, c, threads=threads)
        times.append(1e3 * (time.perf_counter() - start))
    if (status != quasistep.Status.solved).any():
        sys.exit(f"python_rollout: {example}: {int((status != 0).sum())} worlds failed")
    return statistics.median(times)


def cpp_ms(build, example, worlds, steps, threads, repetitions):
    bench = os.path.join(build, "bench", "bench_batch")
    name = f"rollout/{example}/{worlds}/{steps}/{threads}/real_time"
    if not os.access(bench, os.X_OK):
        sys.exit(f"python_rollout: {bench} not found (build the benchmarks)")
    r = subprocess.run([bench, f"--benchmark_filter=^{name}$", "--benchmark_format=json",
                        f"--benchmark_repetitions={repetitions}"], capture_output=True, text=True, check=True)
    runs = [b for b in json.loads(r.stdout)["benchmarks"] if b["run_type"] == "iteration"]
    if not runs:
        sys.exit(f"python_rollout: bench_batch has no benchmark {name}")
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[runs[0]["time_unit"]]
    return statistics.median(b["real_time"] * scale for b in runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repetitions", type=int, default=9)
    ap.add_argument("--json", action="store_true", help="one JSON list instead of the table")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    rows = []
    if a.smoke:
        ms = python_ms("mpc_push", 8, 5, 1, 1)
        assert math.isfinite(ms) and ms > 0
        print(f"python_rollout: smoke run of 8 worlds x 5 steps took {ms:.3f} ms")
        return 0
    for example, threads in CASES:
        p = python_ms(example, 1024, 100, threads, a.repetitions)
        c = cpp_ms(a.build, example, 1024, 100, threads, a.repetitions)
        rows.append({"example": example, "threads": threads or os.cpu_count(), "python_ms": p, "cpp_ms": c,
                     "ratio": p / c})
    if a.json:
        print(json.dumps(rows))
        return 0
    print("| example | threads | C++ Rollout (ms) | Python rollout (ms) | Python / C++ |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| `{r['example']}` | {r['threads']} | {r['cpp_ms']:.1f} | {r['python_ms']:.1f} | {r['ratio']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The Python package's overhead: quasistep.rollout from Python against Rollout::propagate
from C++ (bench_batch's `rollout` benchmark), on the same worlds, commands and threads:
1,024 worlds x 100 steps, every state kept. Prints one row per case with both medians and
their ratio (Python / C++).

usage: PYTHONPATH=build/python python3 bench/python_rollout.py [--build DIR] [--repetitions K]
                                                               [--json] [--smoke]
Python and C++ take turns (K of each, default 5); each turn is the mean over 0.5 s of calls.
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


class PythonCase:
    """One example's rollout from Python, built once (scene, starts, commands) and warm."""

    def __init__(self, example, worlds, steps, threads):
        self.scene = quasistep.load(os.path.join(ROOT, "examples", example + ".json"))
        self.q0 = np.tile(self.scene.initial_state(), (worlds, 1))
        self.commands = commands(worlds, steps, len(self.scene.command_names))
        self.threads = threads
        self.call()  # warm: the engine is built at a scene's first rollout

    def call(self):
        return quasistep.rollout(self.scene, self.q0, self.commands, threads=self.threads)

    def mean_ms(self, min_seconds):
        """Mean time per call over calls lasting at least min_seconds (as Google Benchmark
        measures the C++ side)."""
        calls, start = 0, time.perf_counter()
        while True:
            states, status = self.call()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_seconds:
                break
        if (status != quasistep.Status.solved).any():
            sys.exit(f"python_rollout: {int((status != 0).sum())} worlds failed")
        return 1e3 * elapsed / calls


def cpp_mean_ms(build, example, worlds, steps, threads, min_seconds):
    bench = os.path.join(build, "bench", "bench_batch")
    name = f"rollout/{example}/{worlds}/{steps}/{threads}/real_time"
    if not os.access(bench, os.X_OK):
        sys.exit(f"python_rollout: {bench} not found (build the benchmarks)")
    r = subprocess.run([bench, f"--benchmark_filter=^{name}$", "--benchmark_format=json",
                        f"--benchmark_min_time={min_seconds}"], capture_output=True, text=True, check=True)
    runs = [b for b in json.loads(r.stdout)["benchmarks"] if b["run_type"] == "iteration"]
    if not runs:
        sys.exit(f"python_rollout: bench_batch has no benchmark {name}")
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[runs[0]["time_unit"]]
    return runs[0]["real_time"] * scale


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--json", action="store_true", help="one JSON list instead of the table")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    rows = []
    if a.smoke:
        case = PythonCase("mpc_push", 8, 5, 1)
        ms = case.mean_ms(0.01)
        assert math.isfinite(ms) and ms > 0
        print(f"python_rollout: smoke run of 8 worlds x 5 steps: {ms:.3f} ms a call")
        return 0
    # Python and C++ take turns, so that both see the same machine (a shared machine's load
    # drifts); each turn is a mean over 0.5 s of calls, the table the median of the turns.
    for example, threads in CASES:
        case = PythonCase(example, 1024, 100, threads)
        p, c = [], []
        for _ in range(a.repetitions):
            p.append(case.mean_ms(0.5))
            c.append(cpp_mean_ms(a.build, example, 1024, 100, threads, 0.5))
        p, c = statistics.median(p), statistics.median(c)
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

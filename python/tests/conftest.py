"""Shared helpers of the Python package's tests (run by ctest: Python.*).

The tests compare the package with the `quasistep` command line bitwise, so they need the
built CLI: ctest passes it in QUASISTEP_CLI (default: build/tools/quasistep).
"""
import math
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("QUASISTEP_CLI", os.path.join(ROOT, "build", "tools", "quasistep"))


def example(name):
    return os.path.join(ROOT, "examples", name + ".json")


def run_cli(*args, check=True):
    r = subprocess.run([CLI, *map(str, args)], cwd=ROOT, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"quasistep {' '.join(map(str, args))} exited {r.returncode}: {r.stderr}")
    return r


def read_csv(path):
    """(header, rows) of a CSV the CLI wrote; '#' lines skipped, numbers parsed exactly
    (the CLI writes 17 significant digits, which round-trip)."""
    header, rows = None, []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            cells = line.rstrip("\n").split(",")
            if header is None:
                header = cells
            else:
                rows.append(cells)
    return header, rows


def number(cell):
    return math.nan if cell == "" else float(cell)


@pytest.fixture
def tmp(tmp_path):
    return tmp_path

"""Shared helpers of the Python package's tests (run by ctest: Python.*).

The tests compare the package with the `quasistep` command line bitwise, so they need the
built CLI: ctest passes it in QUASISTEP_CLI (default: build/tools/quasistep).
"""
import math
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "tests", "support"))
from cli_helpers import CLI, ROOT, example, read_csv, run_cli  # noqa: E402,F401


def number(cell):
    return math.nan if cell == "" else float(cell)


@pytest.fixture
def tmp(tmp_path):
    return tmp_path

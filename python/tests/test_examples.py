"""examples/python/: each example runs against the built package and writes what it says
(small sample counts here; docs/python.md shows the full runs)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import quasistep
from conftest import ROOT

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run_example(script, *args, cwd):
    path = os.path.join(ROOT, "examples", "python", script)
    return subprocess.run([sys.executable, path, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_grasp_study_writes_its_heat_map_and_its_rates_are_the_studys(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "grasp.png"
    r = run_example("grasp_study.py", "--grid", "3", "--samples", "24", "--out", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == PNG_MAGIC
    lines = r.stdout.splitlines()
    mu = [float(v) for v in lines[1].split()]
    assert mu == pytest.approx([0.05, 0.325, 0.6])
    rates = np.array([[float(v) for v in line.split()[1:]] for line in lines[2:5]])
    assert ((rates >= 0) & (rates <= 1)).all()
    # More friction on both fingers holds at least as often.
    assert rates[2, 2] >= rates[0, 0]
    # A cell is the Monte Carlo study with both frictions fixed: the same rate as the study
    # run directly on such a scene (and so as `quasistep mc` on it).
    with open(os.path.join(ROOT, "examples", "mc_grasp.json")) as f:
        scene = json.load(f)
    scene["contacts"]["pairs"][0]["friction"] = 0.6
    scene["contacts"]["pairs"][1]["friction"] = 0.05
    scene["uncertainty"]["parameters"] = scene["uncertainty"]["parameters"][:1]
    direct = quasistep.mc(quasistep.load(json.dumps(scene)), samples=24, seed=1)
    assert rates[0, 2] == pytest.approx(direct.rate, abs=0.005)  # printed with two decimals
    assert "heat map and lift curves in" in lines[-1]


def test_grasp_study_refuses_a_grid_of_one(tmp_path):
    r = run_example("grasp_study.py", "--grid", "1", cwd=tmp_path)
    assert r.returncode != 0
    assert "--grid must be at least 2" in r.stderr


def test_push_mpc_reaches_the_goal_and_plots_its_path(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "push.png"
    r = run_example("push_mpc.py", "--seed", "1", "--plot", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("reached after ")
    assert out.read_bytes()[:8] == PNG_MAGIC
    # The same seed, the same path.
    again = run_example("push_mpc.py", "--seed", "1", cwd=tmp_path)
    assert again.stdout.splitlines()[0] == r.stdout.splitlines()[0]

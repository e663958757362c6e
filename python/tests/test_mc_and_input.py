"""mc's errors, and garbage input of every kind: a ValueError or TypeError, never a crash."""
import os
import sys

import numpy as np
import pytest

import quasistep
from conftest import example


def test_mc_refuses_what_the_cli_refuses():
    with pytest.raises(ValueError, match="uncertainty"):
        quasistep.mc(example("halm_posa_push"), samples=10)  # not a study
    with pytest.raises(ValueError, match="at least 1 sample"):
        quasistep.mc(samples=0)
    with pytest.raises(ValueError, match="seed"):
        quasistep.mc(samples=10, seed=-1)
    with pytest.raises(ValueError, match="samples must be an integer"):
        quasistep.mc(samples=1.5)
    with pytest.raises(ValueError, match="trajectories"):
        quasistep.mc(samples=10, trajectories=-1)


def test_mc_result_fields():
    r = quasistep.mc(example("mc_grasp"), samples=200, seed=9, trajectories=2)
    assert r.n == 200 and r.seed == 9 and len(r.trajectories) == 2
    assert r.parameters == [k for k in r.samples if k not in ("sample", "outcome", "x", "y", "theta", "failed_step", "status")]
    assert r.success.startswith("lifted cylinder")
    assert [b["parameter"] for b in r.bins] == r.parameters
    assert all(int(b["count"].sum()) == 200 for b in r.bins)
    assert int((r.samples["outcome"] == "held").sum()) == r.successes
    assert r.scene_source.endswith("mc_grasp.json") and r.description


GARBAGE = [None, 1, "x", [], [[]], {}, np.zeros((0,)), np.zeros((2, 0)), [1, "a"], np.array(["a", "b"]),
           np.zeros((3, 3, 3, 3)), float("nan"), object()]


def test_garbage_never_crashes():
    """Every call with every garbage value, in a child process (a crash names the call)."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, __file__, "garbage"], capture_output=True, text=True,
                       cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert r.returncode == 0, f"exit {r.returncode}; last call: {r.stdout.strip().splitlines()[-1:]}\n{r.stderr}"


def garbage(value):
    scene = quasistep.load(example("halm_posa_push"))
    calls = [
        lambda: quasistep.rollout(scene, q0=value),
        lambda: quasistep.rollout(scene, commands=value),
        lambda: quasistep.rollout(scene, steps=value),
        lambda: quasistep.rollout(scene, h=value),
        lambda: scene.step(value),
        lambda: scene.step(scene.state(), value),
        lambda: scene.step(scene.state(), h=value),
        lambda: quasistep.mc(samples=value),
        lambda: quasistep.mc(samples=5, threads=value),
        lambda: quasistep.solve_lcp([[1.0]], [1.0], value),
        lambda: quasistep.solve_ucp({"mu": value}),
        lambda: scene.state(value),
        lambda: quasistep.solve_lcp(value, value),
        lambda: quasistep.solve_ucp(value),
        lambda: quasistep.load(value),
        lambda: quasistep.mc(value, samples=5),
    ]
    for k, call in enumerate(calls):
        print(f"value {value!r}, call {k}", flush=True)
        try:
            call()
        except (ValueError, TypeError, AttributeError):
            pass


if __name__ == "__main__" and sys.argv[1:] == ["garbage"]:
    for value in GARBAGE:
        garbage(value)

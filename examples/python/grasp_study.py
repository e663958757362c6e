#!/usr/bin/env python3
"""Grasp success over a grid of the two fingers' friction coefficients, as a heat map.

The built-in Monte Carlo grasp study (examples/mc_grasp.json: the parallel gripper of
T. Pang and R. Tedrake, "A Robust Time-Stepping Scheme for Quasistatic Rigid Multibody
Systems", IROS 2018, squeezes a cylinder and lifts it 2 cm under the impedance step of
their slides "A convex quasistatic time-stepping scheme for rigid multibody systems with
contact and friction", Anitescu's convex relaxation), with the two
finger-cylinder friction coefficients set on a grid instead of drawn at random. At each
grid point the cylinder's start still varies as in the study (x from a normal of 5 mm
standard deviation, cut at 15 mm), and the share of samples that lift the cylinder 2 cm and
hold it until 0.6 s is one cell of the map. Beside the map: the cylinder's height over
time for one sample that held and one that slipped.

Chosen here (the paper has no such study): the grid spans the study's friction range,
0.05 to 0.6, with --grid points per finger (default 12); --samples per cell (default 100);
seed 1 for every cell, so that every cell sees the same cylinder starts. (The map comes out
nearly black and white: whether the grasp holds depends on the sum of the two coefficients,
hardly on the cylinder's start.)

usage (from the repository's top, after a build):
    PYTHONPATH=build/python /usr/bin/python3 examples/python/grasp_study.py [--grid K]
        [--samples N] [--out grasp_study.png]
"""
import argparse
import copy
import json
import pathlib
import sys

import numpy as np
import quasistep

ROOT = pathlib.Path(__file__).resolve().parents[2]
STUDY = ROOT / "examples" / "mc_grasp.json"
FRICTION_RANGE = (0.05, 0.6)  # the study's uniform range for each finger


def cell_scene(base, mu_left, mu_right):
    """The study with both fingers' friction fixed and only the cylinder's start uncertain."""
    scene = copy.deepcopy(base)
    pairs = scene["contacts"]["pairs"]
    pairs[0]["friction"] = mu_left   # left_finger / cylinder
    pairs[1]["friction"] = mu_right  # right_finger / cylinder
    scene["uncertainty"]["parameters"] = [
        p for p in scene["uncertainty"]["parameters"] if not p["parameter"].startswith("pairs.")]
    return quasistep.load(json.dumps(scene))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grid", type=int, default=12, help="friction values per finger (default 12)")
    ap.add_argument("--samples", type=int, default=100, help="samples per grid cell (default 100)")
    ap.add_argument("--out", default="grasp_study.png", help="the PNG to write (default grasp_study.png)")
    a = ap.parse_args()
    if a.grid < 2 or a.samples < 1:
        sys.exit("grasp_study: --grid must be at least 2 and --samples at least 1")

    import matplotlib
    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    with open(STUDY) as f:
        base = json.load(f)
    h = base["step"]["h"]
    mu = np.linspace(*FRICTION_RANGE, a.grid)
    rate = np.zeros((a.grid, a.grid))  # [right, left]: rows are the right finger
    held_curve = slipped_curve = None
    for i, mu_right in enumerate(mu):
        for j, mu_left in enumerate(mu):
            result = quasistep.mc(cell_scene(base, float(mu_left), float(mu_right)),
                                  samples=a.samples, seed=1, trajectories=min(a.samples, 16))
            rate[i, j] = result.rate
            # The first held and the first slipped sample whose trajectory was kept.
            outcome = result.samples["outcome"]
            for sample, pose in sorted(result.trajectories.items()):
                if held_curve is None and outcome[sample] == "held":
                    held_curve = (pose[:, 1], mu_left, mu_right)
                if slipped_curve is None and outcome[sample] == "slipped":
                    slipped_curve = (pose[:, 1], mu_left, mu_right)

    print("success rate (rows: right finger's friction, columns: left finger's)")
    print("        " + " ".join(f"{m:6.3f}" for m in mu))
    for i, mu_right in enumerate(mu):
        print(f"{mu_right:6.3f}  " + " ".join(f"{r:6.2f}" for r in rate[i]))

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    step = (mu[1] - mu[0]) / 2
    image = left.imshow(rate, origin="lower", vmin=0, vmax=1, cmap="viridis",
                        extent=(mu[0] - step, mu[-1] + step, mu[0] - step, mu[-1] + step))
    fig.colorbar(image, ax=left, label="success rate (lifted 2 cm, held until 0.6 s)")
    left.set_xlabel("left finger's friction coefficient")
    left.set_ylabel("right finger's friction coefficient")
    left.set_title(f"Grasp success, {a.samples} cylinder starts per cell")
    for curve, label, colour in [(held_curve, "held", "tab:green"), (slipped_curve, "slipped", "tab:red")]:
        if curve is None:
            continue
        y, mu_left, mu_right = curve
        t = np.arange(len(y)) * h
        right.plot(t, (y - y[0]) * 100, color=colour,
                   label=f"{label} (friction {mu_left:.2f} left, {mu_right:.2f} right)")
    right.axhline(2.0, color="grey", linestyle=":", label="success height, 2 cm")
    right.set_xlabel("time (s)")
    right.set_ylabel("cylinder height above its start (cm)")
    right.set_title("Two samples' lift")
    right.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=100)
    print(f"grasp_study: heat map and lift curves in {a.out}")


if __name__ == "__main__":
    main()

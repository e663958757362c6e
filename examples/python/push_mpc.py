#!/usr/bin/env python3
"""Sampling MPC from Python: a point pusher pushes a puck to a goal, planning with rollouts.

The world is examples/mpc_push.json: a puck on a table and a point pusher that moves in x
and y, under the finite-gain quasistatic model of M. Halm and M. Posa, "A Quasi-static
Model and Simulation Approach for Pushing, Grasping, and Jamming", WAFR 2018. At every
replanning step the planner propagates `--candidates` constant-velocity pusher actions
over a short horizon from the current State in one `quasistep.rollout` call, scores where
each leaves the puck and the pusher, and executes the best for a few steps with
`Scene.step`. It is the random-shooting planner of examples/push_mpc.cpp, written in
Python (numpy's random numbers, so its path differs from the C++ program's).

Chosen here (no paper gives them): goal (0.25, 0.10) m, tolerance 15 mm, 128 candidates, a
12-step horizon (0.3 s at 40 Hz), 3 executed steps per replan, at most 200 replans, pusher
speed 0.1 m/s; a quarter of the candidates aim at the point 7 cm behind the puck on the
line from the goal (so the pusher gets around the puck), a quarter at the goal, half in
uniformly random directions. Cost: the puck's distance to the goal plus 0.3 times the
pusher's distance to that point behind the puck.

usage (from the repository's top, after a build):
    PYTHONPATH=build/python /usr/bin/python3 examples/python/push_mpc.py [--seed S]
        [--plot push_mpc.png]
Exit status 0 when the puck reached the goal, 2 when the planner gave up.
"""
import argparse
import pathlib
import sys

import numpy as np
import quasistep

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOAL = np.array([0.25, 0.10])
TOLERANCE = 0.015
CANDIDATES, HORIZON, EXECUTE, MAX_REPLANS, SPEED = 128, 12, 3, 200, 0.1


def positions(q):
    """Puck (x, y) and pusher (x, y): the DOFs are puck x, y, theta, pusher_x, pusher_y."""
    q = np.asarray(q)
    return q[..., 0:2], q[..., 3:5]


def behind(puck):
    """The point 7 cm behind the puck's center on the line from the goal through the puck."""
    d = puck - GOAL
    return puck + 0.07 * d / np.maximum(np.linalg.norm(d, axis=-1, keepdims=True), 1e-9)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1, help="seed of the candidates' directions (default 1)")
    ap.add_argument("--plot", help="write the puck's and the pusher's paths to this PNG")
    a = ap.parse_args()
    scene = quasistep.load(str(ROOT / "examples" / "mpc_push.json"))
    rng = np.random.default_rng(a.seed)
    state = scene.state()
    puck_path, pusher_path = [], []
    for replan in range(MAX_REPLANS + 1):
        puck, pusher = positions(state.q)
        puck_path.append(puck)
        pusher_path.append(pusher)
        if np.linalg.norm(puck - GOAL) <= TOLERANCE or replan == MAX_REPLANS:
            break
        b = behind(puck)
        to_behind = np.arctan2(b[1] - pusher[1], b[0] - pusher[0])
        to_goal = np.arctan2(GOAL[1] - puck[1], GOAL[0] - puck[0])
        k = np.arange(CANDIDATES)
        angle = np.where(k < CANDIDATES // 4, to_behind + rng.normal(0.0, 0.3, CANDIDATES),
                         np.where(k < CANDIDATES // 2, to_goal + rng.normal(0.0, 0.3, CANDIDATES),
                                  rng.uniform(-np.pi, np.pi, CANDIDATES)))
        velocity = SPEED * np.stack([np.cos(angle), np.sin(angle)], axis=-1)  # (N, 2)
        commands = np.repeat(velocity[:, None, :], HORIZON, axis=1)           # (N, T, 2)
        # Every candidate starts from the current State (its q, t and the stepper's memory).
        ends, status = quasistep.rollout(scene, q0=state, commands=commands, trajectory=False)
        end_puck, end_pusher = positions(ends)
        cost = np.linalg.norm(end_puck - GOAL, axis=1) + 0.3 * np.linalg.norm(end_pusher - behind(end_puck), axis=1)
        cost[status != quasistep.Status.solved] = np.inf
        best = int(np.argmin(cost))
        if not np.isfinite(cost[best]):
            break  # every candidate failed: report where we are
        for _ in range(EXECUTE):
            state, st = scene.step(state, velocity[best])
            if st != quasistep.Status.solved:
                sys.exit(f"push_mpc: step {state.step + 1}: {st.name}: {scene.last_step_detail()}")
    error = float(np.linalg.norm(positions(state.q)[0] - GOAL))
    reached = error <= TOLERANCE
    print(f"{'reached' if reached else 'gave up'} after {len(puck_path) - 1} replans "
          f"({state.step} steps, {state.t:.3f} s); puck {error:.4f} m from the goal ({GOAL[0]}, {GOAL[1]})")
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        puck_path, pusher_path = np.array(puck_path), np.array(pusher_path)
        fig, ax = plt.subplots(figsize=(6, 4.5))
        ax.plot(puck_path[:, 0], puck_path[:, 1], "o-", ms=3, label="puck")
        ax.plot(pusher_path[:, 0], pusher_path[:, 1], ".-", ms=3, label="pusher")
        ax.add_patch(plt.Circle(GOAL, TOLERANCE, fill=False, color="tab:green", label="goal"))
        ax.set_aspect("equal")
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
        ax.set_title("Sampling MPC on Halm & Posa's push (one point per replan)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(a.plot, dpi=100)
        print(f"push_mpc: paths in {a.plot}")
    return 0 if reached else 2


if __name__ == "__main__":
    sys.exit(main())

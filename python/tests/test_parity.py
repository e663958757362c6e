"""Every number the package gives is bitwise the CLI's for the same world: one world stepped
by Scene.step, many worlds by rollout (the batch engine's lanes), with the scenes' own
commands and with commands from a file."""
import glob
import os

import numpy as np
import pytest

import quasistep
from conftest import ROOT, example, number, read_csv, run_cli

EXAMPLES = sorted(os.path.basename(f)[:-5] for f in glob.glob(os.path.join(ROOT, "examples", "*.json")))


def cli_trajectory(tmp, name, *extra):
    """The DOF columns of `quasistep run --out` (some formulations add columns after them)."""
    out = tmp / f"{name}.csv"
    run_cli("run", example(name), "--out", out, *extra)
    header, rows = read_csv(out)
    dofs = quasistep.load(example(name)).dof_names
    assert header[2:2 + len(dofs)] == dofs
    return np.array([[number(c) for c in r[2:2 + len(dofs)]] for r in rows]), [int(r[0]) for r in rows]


@pytest.mark.parametrize("name", EXAMPLES)
def test_rollout_and_step_are_bitwise_the_cli_run(tmp, name):
    scene = quasistep.load(example(name))
    expected, steps = cli_trajectory(tmp, name)
    assert steps == list(range(scene.steps + 1))
    states, status = quasistep.rollout(scene)
    assert status.tolist() == [quasistep.Status.solved]
    assert states.shape == (1, scene.steps + 1, scene.nq)
    np.testing.assert_array_equal(states[0], expected)  # exact: bitwise equal doubles
    # One world at a time, carrying the State (and so the stepper's memory) along.
    state = scene.state()
    for l in range(1, scene.steps + 1):
        state, st = scene.step(state)
        assert st == quasistep.Status.solved and state.step == l
        assert state.q.tolist() == expected[l].tolist(), f"step {l}"


@pytest.mark.parametrize("name", ["halm_posa_push", "anitescu_grasp", "pang_tedrake_grasp", "pang_tedrake_gripper"])
def test_own_commands_are_bitwise_run_with_a_commands_file(tmp, name):
    scene = quasistep.load(example(name))
    T, na = 30, len(scene.command_names)
    rng = np.random.default_rng(7)
    commands = rng.uniform(-0.02, 0.02, size=(T, na))
    path = tmp / "commands.csv"
    with open(path, "w") as f:
        f.write(",".join(["step"] + scene.command_names) + "\n")
        for l in range(T):
            f.write(",".join([str(l + 1)] + [repr(float(v)) for v in commands[l]]) + "\n")
    expected, _ = cli_trajectory(tmp, name, "--commands", path)
    # The same commands for three worlds: per world, and broadcast from (T, n_commands).
    per_world = np.broadcast_to(commands, (3, T, na)).copy()
    for c in (per_world, commands):
        states, status = quasistep.rollout(scene, q0=np.tile(scene.initial_state(), (3, 1)), commands=c)
        assert (status == quasistep.Status.solved).all()
        for i in range(3):
            np.testing.assert_array_equal(states[i], expected)
    state = scene.state()
    for l in range(T):
        state, st = scene.step(state, commands[l])
        assert st == quasistep.Status.solved
    assert state.q.tolist() == expected[-1].tolist()


def test_rollout_worlds_do_not_depend_on_threads_or_batch_size():
    scene = quasistep.load(example("mpc_push"))
    rng = np.random.default_rng(3)
    n, T = 37, 25
    q0 = np.tile(scene.initial_state(), (n, 1))
    q0[:, scene.dof_names.index("pusher_y")] += rng.uniform(-0.002, 0.002, n)
    commands = rng.uniform(-0.1, 0.1, size=(n, T, len(scene.command_names)))
    a, sa = quasistep.rollout(scene, q0, commands, threads=1)
    b, sb = quasistep.rollout(scene, q0, commands, threads=2)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(sa, sb)
    for i in [0, 17, 36]:  # alone in a batch of one
        c, _ = quasistep.rollout(scene, q0[i], commands[i:i + 1])
        np.testing.assert_array_equal(c[0], a[i])
    last, _ = quasistep.rollout(scene, q0, commands, trajectory=False)
    np.testing.assert_array_equal(last, a[:, -1])


def test_mc_is_bitwise_the_cli_study(tmp):
    out = tmp / "mc.csv"
    r = run_cli("mc", example("mc_push"), "--samples", "700", "--seed", "5", "--out", out, "--threads", "2")
    result = quasistep.mc(example("mc_push"), samples=700, seed=5, threads=1)
    assert str(result) == r.stdout
    header, rows = read_csv(out)
    assert list(result.samples) == header
    for k, column in enumerate(header):
        values = result.samples[column]
        assert len(values) == 700
        cells = [row[k] for row in rows]
        if column in ("outcome", "status"):
            assert values.tolist() == cells
        elif column in ("sample", "failed_step"):
            assert values.tolist() == [int(c) for c in cells]
        else:
            assert values.tolist() == [float(c) for c in cells], column
    assert sum(result.outcomes.values()) == 700
    assert result.successes == result.outcomes["in_goal"]
    assert result.low <= result.rate <= result.high


def test_mc_without_a_scene_is_the_built_in_study():
    r = run_cli("mc", "--samples", "300", "--seed", "2")
    result = quasistep.mc(samples=300, seed=2)
    assert str(result) == r.stdout
    assert result.outcomes["held"] == result.successes
    assert len(result.trajectories) == 8 and result.trajectories[0].shape == (61, 3)
